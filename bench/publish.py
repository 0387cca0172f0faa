"""Publishing beside the recording: what each extra output costs, against ffmpeg -f tee doing the
same job, and the delay publishing adds to a picture.

CPU per extra output. The fake camera (as the live family uses it: a ring of noisy pictures)
gives 1080p30 YUYV; x264 codes it at --speed ultrafast (so the encode leaves room on two cores
and does not drown the figure) in CBR at 8 Mbit/s: with x264's HRD filler every stream carries
exactly 8 Mbit/s whichever program codes it, and what an output costs grows with the bytes it
sends, so both programs publish the same load (it is also how one streams to SRT and UDP
receivers, which size their buffers for a steady rate). Each program runs with the recording
alone (an MPEG-TS file) and with the recording and N = 3 network outputs: SRT to a loopback
srt-live-transmit listener, MPEG-TS over UDP to a loopback receiver (receiver.py), and RTMP to
nginx with its RTMP module (configured and started by the bench). ffmpeg captures the same
camera through its v4l2 input, codes with libx264 at the same settings (preset, CBR with
nal-hrd, keyint, thread count) and writes through -f tee with onfail=ignore on every output but
the recording; its SRT output gets the 1 s linger vtrecord's has by default, and both send
1316-byte UDP datagrams. Per program, an output's cost is (CPU with the outputs − CPU without)
÷ N, as a share of one core: the process's own CPU seconds (rusage) over the seconds of video
recorded. The machine's figures swing by about 10 %, so the runs come in pairs, each program's
pair side by side, the order turned around every run, RUNS times; reported are the median and
the range of the per-pair figures, and the ratio of the medians (vtrecord ÷ ffmpeg, goal ≤ 1).
A cross-check with little noise, for vtrecord alone: the CPU time of its output threads
(vtrecord-out1…) and of libsrt's threads, read from /proc while it runs (ffmpeg muxes on the
thread that also captures and converts, so it has no such figure). The receivers run in
processes of their own, not counted. Every output is checked: vtrecord's summary must show
bytes, no packet dropped and no reconnect for each (or the bench stops), and every receiver's
file is decoded (ffprobe -count_frames) for both programs: one with no picture stops the bench;
the pictures decoded and the decoder's complaints are kept, and a target asks for every
picture, with no complaint, at every receiver.

The delay publishing adds is measured by publish_delay.py.
"""

import json
import os
import re
import subprocess
import time
from pathlib import Path

from common import ToolFailed, finish, median, note, spawn, tail
from live import DEVICE, RING, build_fake_camera, camera_environment
from receivers import Nginx, free_port, remove, srt_listener, udp_receiver

WIDTH, HEIGHT, RATE = 1920, 1080, 30
FORMAT = "yuyv"
SPEED = "ultrafast"
RATE_CONTROL = "cbr"
BITRATE = "8M"
KEYINT = 60
OUTPUTS = ("srt", "udp", "rtmp")
# x264's own automatic count (1.5 frame threads a core), given to both programs explicitly.
THREADS = max(1, (os.cpu_count() or 1) * 3 // 2)
# /proc is read this often for the output threads' CPU time.
SAMPLE_SECONDS = 0.25
# Time for the last packets to reach the receivers after the sender ends (SRT lingers 1 s).
DRAIN_SECONDS = 1.5


def x264_arguments():
    return ["--speed", SPEED, "--rate-control", RATE_CONTROL, "--bitrate", BITRATE, "--keyint", KEYINT]


def vtrecord_command(knobs, recording, urls, summary, threads=THREADS, extra=()):
    return [knobs.vtrecord, "--device", DEVICE, "--size", f"{WIDTH}x{HEIGHT}", "--fps", RATE, "--format", FORMAT,
            "--encoder", "x264", *x264_arguments(), *(["--threads", threads] if threads else []),
            "--realtime", "drop", *extra,
            "--duration", f"{knobs.live_seconds}s", "-o", recording, *[a for url in urls for a in ("-o", url)],
            "--overwrite", "--quiet", "--json-summary", summary]


def ffmpeg_command(knobs, recording, urls):
    """ffmpeg capturing the camera and publishing through -f tee: the recording is the first
    slave and must work; every other is onfail=ignore. Global headers make libx264 put SPS/PPS
    in the extradata, which the FLV slave needs; the MPEG-TS slaves put them before every
    keyframe from there."""
    slaves = [f"[f=mpegts]{recording}"]
    for url in urls:
        kind = "flv" if url.startswith("rtmp://") else "mpegts"
        slaves.append(f"[f={kind}:onfail=ignore]{url}")
    return ["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "warning", "-y",
            "-f", "v4l2", "-input_format", "yuyv422", "-video_size", f"{WIDTH}x{HEIGHT}", "-framerate", RATE,
            "-i", DEVICE, "-t", knobs.live_seconds, "-map", "0:v", "-c:v", "libx264", "-preset", SPEED,
            "-pix_fmt", "yuv420p", "-b:v", BITRATE, "-maxrate", BITRATE, "-bufsize", BITRATE, "-nal-hrd", "cbr",
            "-g", KEYINT, "-threads", THREADS, "-flags", "+global_header", "-f", "tee", "|".join(slaves)]


def thread_cpu(pid, seen):
    """Adds the CPU time (ns, schedstat) of the process's output and libsrt threads to `seen`,
    keeping each thread's latest reading."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return
    for tid in tasks:
        try:
            name = Path(f"/proc/{pid}/task/{tid}/comm").read_text().strip()
            if name.startswith("vtrecord-out") or name.startswith("SRT:"):
                seen[tid] = (name, int(Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()[0]))
        except (FileNotFoundError, ProcessLookupError, ValueError, IndexError):
            continue


def decoded(path):
    """Pictures ffprobe decodes from a received file, and the decoder's complaints (none for a
    whole stream)."""
    if not Path(path).exists() or Path(path).stat().st_size == 0:
        return 0, ["nothing received"]
    result = subprocess.run(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0",
                             "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", str(path)],
                            capture_output=True, text=True, timeout=600)
    lines = [line for line in result.stdout.split() if line.strip().isdigit()]
    return (int(lines[0]) if lines else 0), result.stderr.strip().splitlines()


class Receivers:
    """One run's receivers: SRT, UDP and an RTMP stream name on the family's nginx."""

    def __init__(self, work, nginx, tag):
        self.files = {"srt": work / f"{tag}-srt.ts", "udp": work / f"{tag}-udp.ts", "rtmp": nginx.recording(tag)}
        remove(*self.files.values())
        srt_port, udp_port = free_port("udp"), free_port("udp")
        self.started = [srt_listener(srt_port, self.files["srt"], work / f"{tag}-srt.log")]
        try:
            self.started.append(udp_receiver(udp_port, self.files["udp"], work / f"{tag}-udp.log"))
        except ToolFailed:
            self.stop()
            raise
        self.urls = {"srt": f"srt://127.0.0.1:{srt_port}", "udp": f"udp://127.0.0.1:{udp_port}",
                     "rtmp": nginx.url(tag)}

    def ffmpeg_urls(self):
        """The same outputs as ffmpeg's protocols take them: vtrecord's defaults made explicit
        (SRT's 1 s linger, UDP datagrams of seven TS packets)."""
        return [self.urls["srt"] + "?linger=1", self.urls["udp"] + "?pkt_size=1316", self.urls["rtmp"]]

    def stop(self):
        for receiver in self.started:
            receiver.stop()

    def check(self, frames_sent):
        """What each receiver got; a receiver that got nothing stops the bench."""
        got = {}
        for name, path in self.files.items():
            pictures, complaints = decoded(path)
            if pictures == 0:
                raise ToolFailed(f"the {name} receiver got no picture ({path}): {' '.join(complaints[:3])}")
            got[name] = {"bytes": path.stat().st_size, "pictures_decoded": pictures,
                         "decoder_errors": len(complaints), "of_sent": frames_sent,
                         "whole": not complaints and pictures >= frames_sent}
            path.unlink()
        return got


def cpu_run(knobs, env, nginx, program, with_outputs, tag):
    """One measured run: the program's CPU seconds per second of video, and what it published."""
    work = knobs.work
    recording = work / f"{tag}.ts"
    summary = work / f"{tag}.json"
    receivers = Receivers(work, nginx, tag) if with_outputs else None
    try:
        urls = list(receivers.urls.values()) if with_outputs else []
        if program == "vtrecord":
            argv = vtrecord_command(knobs, recording, urls, summary)
        else:
            argv = ffmpeg_command(knobs, recording, receivers.ffmpeg_urls() if with_outputs else [])
        log = work / f"{tag}.log"
        started = time.monotonic()
        pid = spawn(argv, log, env=env)
        threads = {}
        usage = None
        while usage is None:
            time.sleep(SAMPLE_SECONDS)
            if program == "vtrecord":
                thread_cpu(pid, threads)
            usage = finish(pid, argv, log, started, block=False)
        if with_outputs:
            time.sleep(DRAIN_SECONDS)
    finally:
        if receivers:
            receivers.stop()
    pictures, complaints = decoded(recording)
    if pictures == 0:
        raise ToolFailed(f"{program} recorded nothing: {' '.join(complaints[:3])}\n{tail(log)}")
    result = {"cpu_share": usage.cpu / knobs.live_seconds, "pictures": pictures,
              "recording_bitrate": recording.stat().st_size * 8 / knobs.live_seconds}
    if program == "vtrecord":
        facts = json.loads(summary.read_text())
        if facts.get("stop_reason") != "duration":
            raise ToolFailed(f"vtrecord stopped by {facts.get('stop_reason')}: {facts.get('error')}")
        result["dropped"] = facts["dropped_queue"] + facts["dropped_driver"]
        for output in facts["outputs"][1:]:
            if output["bytes"] <= 0 or output["packets_dropped"] != 0 or output["reconnects"] != 0 \
                    or output["state"] != "finished":
                raise ToolFailed(f"vtrecord's output {output['name']} did not keep up: {output}")
        # Named by scheme: the ports and the work directory change from run to run.
        result["outputs"] = [{"output": o["name"].split("://")[0] if "://" in o["name"] else "recording",
                              **{k: o[k] for k in ("state", "bytes", "packets_written", "packets_dropped",
                                                   "reconnects", "queue_peak_bytes")}} for o in facts["outputs"]]
        result["output_threads_cpu_share"] = sum(ns for _, ns in threads.values()) / 1e9 / knobs.live_seconds
        summary.unlink()
    if with_outputs:
        result["received"] = receivers.check(pictures)
    result["x264_options"] = recorded_x264_options(recording, work / f"{tag}.h264")
    recording.unlink()
    return result


def recorded_x264_options(recording, scratch):
    """x264's option string from a recording's SEI (the first picture, copied out of the TS)."""
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", str(recording), "-c", "copy",
                    "-frames:v", "1", "-f", "h264", str(scratch)], capture_output=True, timeout=120)
    if not scratch.exists():
        return {}
    found = re.search(rb"options: ([ -~]+)", scratch.read_bytes()[:65536])
    scratch.unlink()
    if not found:
        return {}
    return dict(item.split("=", 1) for item in found.group(1).decode().split() if "=" in item)


def spread(values):
    return {"median": median(values), "min": min(values), "max": max(values), "runs": values}


def cpu_bench(knobs, env, nginx):
    per_output = {"vtrecord": [], "ffmpeg": []}
    shares = {(p, w): [] for p in per_output for w in (False, True)}
    threads, received, published, options = [], {}, None, {}
    for index in range(knobs.runs):
        programs = ("vtrecord", "ffmpeg") if index % 2 == 0 else ("ffmpeg", "vtrecord")
        cases = (False, True) if index % 2 == 0 else (True, False)
        for program in programs:
            pair = {}
            for with_outputs in cases:
                note(f"publish: {program}, 1080p{RATE} {FORMAT} {SPEED} {RATE_CONTROL} {BITRATE}, "
                     f"{'recording + ' + ', '.join(OUTPUTS) if with_outputs else 'recording alone'}, "
                     f"{knobs.live_seconds} s, run {index + 1} of {knobs.runs}")
                tag = f"{program}-{index}-{'with' if with_outputs else 'alone'}"
                pair[with_outputs] = cpu_run(knobs, env, nginx, program, with_outputs, tag)
                shares[(program, with_outputs)].append(pair[with_outputs]["cpu_share"])
            per_output[program].append((pair[True]["cpu_share"] - pair[False]["cpu_share"]) / len(OUTPUTS))
            received.setdefault(program, []).append(pair[True]["received"])
            options.setdefault(program, pair[True]["x264_options"])
            if program == "vtrecord":
                threads.append(pair[True]["output_threads_cpu_share"] / len(OUTPUTS))
                published = pair[True]["outputs"]
    percent = lambda values: [round(100 * v, 3) for v in values]
    programs = {}
    for program in per_output:
        programs[program] = {
            "cpu_percent_alone": 100 * median(shares[(program, False)]),
            "cpu_percent_with_outputs": 100 * median(shares[(program, True)]),
            "per_output_percent": {k: (100 * v if k != "runs" else percent(v))
                                   for k, v in spread(per_output[program]).items()},
            "received": received[program],
        }
    programs["vtrecord"]["output_threads_percent_per_output"] = {
        k: (100 * v if k != "runs" else percent(v)) for k, v in spread(threads).items()}
    programs["vtrecord"]["outputs_last_run"] = published
    vt, ff = median(per_output["vtrecord"]), median(per_output["ffmpeg"])
    # None when a recording had no option string to compare.
    differing = {k: (options["vtrecord"].get(k), options["ffmpeg"].get(k))
                 for k in sorted(set(options["vtrecord"]) | set(options["ffmpeg"]))
                 if options["vtrecord"].get(k) != options["ffmpeg"].get(k)} \
        if options["vtrecord"] and options["ffmpeg"] else None
    return {
        "size": "1080p", "fps": RATE, "format": FORMAT, "speed": SPEED, "rate_control": RATE_CONTROL,
        "bitrate": BITRATE, "keyint": KEYINT, "threads": THREADS, "seconds": knobs.live_seconds,
        "runs": knobs.runs, "camera_noise": knobs.noise, "camera_picture_ring": RING, "outputs": len(OUTPUTS),
        "receivers": {"srt": "srt-live-transmit listener → file", "udp": "receiver.py → file",
                      "rtmp": "nginx + libnginx-mod-rtmp, record all → FLV"},
        "programs": programs,
        # Only a positive ffmpeg figure makes a ratio; at or below 0 it is inside the noise.
        "ratio_vs_ffmpeg": vt / ff if ff > 0 else None,
        "x264_options_differing": differing,
    }


def bench(knobs):
    if Path(DEVICE).exists():
        raise SystemExit(f"{DEVICE} exists: the fake camera needs a path that is not on disk")
    library = build_fake_camera(knobs.work)
    env = camera_environment(library, knobs.work / "publish-camera-report.txt", knobs.noise)
    nginx = Nginx(knobs.work / "rtmp")
    try:
        return cpu_bench(knobs, env, nginx)
    finally:
        nginx.stop()
