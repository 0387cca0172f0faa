"""The delay publishing adds to a picture: its capture time to its arrival at a loopback SRT
receiver, beside vtrecord's own capture → written figure (the encoder's latency).

vtrecord records the fake camera (1080p30 YUYV, --speed ultrafast, --tune zerolatency, CBR
8 Mbit/s) to a file and publishes to srt://…?latency=0 (SRT's latency is a whole number of
milliseconds; 0 is accepted on both sides and nothing is lost on loopback), received by
srt-live-transmit (latency=0), which relays each packet to receiver.py over loopback UDP. A
second output sends the same stream over UDP straight to another receiver.py, which tells
what SRT adds apart from what vtrecord's publishing adds. receiver.py notes for each picture
(PES) its PTS and when its last TS packet arrived, on CLOCK_MONOTONIC (time.monotonic_ns()),
the clock of V4L2 buffer timestamps.

A picture's PTS is its capture time less the first picture's (vtrecord's presentation time
for a camera), so its capture time is T0 + PTS. T0 comes from the camera, with nothing added
to vtrecord: with FAKE_V4L2_FLASH the fake camera starts its frame grid so that a frame falls
on every whole second of CLOCK_MONOTONIC, and paints those frames' lower half white. Decoding
a received stream gives the PTS of its white frames; each says that T0 + PTS is a whole
second, which fixes T0 but for a whole number of seconds (every white frame must agree to
the 90 kHz tick). The camera's trace (FAKE_V4L2_TRACE) settles which second: the first frame
is captured one frame interval after VIDIOC_STREAMON, whose trace line the bench stamps as it
reads it, so T0 lies within half a second of that stamp. A picture's delay is its arrival −
(T0 + PTS); reported are p50 and p99 over the pictures of RUNS runs (nearest rank), each
run's own, and vtrecord's latency_ms_p50/p99 from the same runs (the median over them), against
the goal "delay ≤ encoder latency + 50 ms".

The white frames are painted afresh (the ring holds the others), a few milliseconds more on
the capture thread once a second: they count in vtrecord's latency as in the delay.
"""

import csv
import json
import math
import re
import subprocess
import time

from common import ToolFailed, median, note
from live import build_fake_camera, camera_environment
from publish import BITRATE, FORMAT, RATE, RATE_CONTROL, SPEED, decoded, vtrecord_command
from receivers import free_port, remove, srt_listener, udp_receiver

# The goal: the delay at most the encoder's latency plus this.
ALLOWANCE_MS = 50
# A white frame's lower half against the picture's: far above any noisy picture's mean.
WHITE_LUMA = 200
# The white frames must agree on T0 to within this (90 kHz ticks are 11 µs; vtrecord counts µs).
AGREEMENT_NS = 100_000
DRAIN_SECONDS = 1.5


def nanoseconds(pts):
    return pts * 100_000 // 9


def percentile(values, share):
    """Nearest rank."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def run_traced(argv, env, log):
    """Runs vtrecord with the camera's trace on its standard error; the CLOCK_MONOTONIC time at
    which the VIDIOC_STREAMON line was read (ns)."""
    streamon = None
    with open(log, "wb") as out:
        process = subprocess.Popen([str(a) for a in argv], env=env, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for line in process.stderr:
            if streamon is None and b"VIDIOC_STREAMON" in line:
                streamon = time.monotonic_ns()
            out.write(line)
        code = process.wait()
    if code != 0:
        raise ToolFailed(f"{' '.join(map(str, argv))}: exit {code} (log: {log})")
    if streamon is None:
        raise ToolFailed(f"no VIDIOC_STREAMON in the camera's trace ({log})")
    return streamon


def white_frames(path):
    """PTS (90 kHz) of the pictures whose lower half is white, as a received stream decodes."""
    result = subprocess.run(["ffmpeg", "-nostdin", "-hide_banner", "-nostats", "-copyts", "-i", str(path),
                             "-vf", "crop=iw:ih/2:0:ih/2,signalstats,metadata=print:key=lavfi.signalstats.YAVG",
                             "-f", "null", "-"], capture_output=True, text=True, timeout=600)
    found, pts = [], None
    for line in result.stderr.splitlines():
        at = re.search(r" pts:(\d+)", line)
        if at:
            pts = int(at.group(1))
            continue
        luma = re.search(r"YAVG=([0-9.]+)", line)
        if luma and pts is not None and float(luma.group(1)) > WHITE_LUMA:
            found.append(pts)
    return found


def first_capture(streamon, whites, arrivals, name):
    """T0: the first picture's capture time (CLOCK_MONOTONIC ns)."""
    if not whites:
        raise ToolFailed(f"delay: no white frame in the {name} stream: cannot place its capture times")
    phases = [(-nanoseconds(pts)) % 1_000_000_000 for pts in whites]
    # Near a whole second phases wrap: measure them from the first.
    offsets = [((p - phases[0] + 500_000_000) % 1_000_000_000) - 500_000_000 for p in phases]
    if max(offsets) - min(offsets) > AGREEMENT_NS:
        raise ToolFailed(f"delay: the white frames of the {name} stream disagree on the first capture time "
                         f"by {(max(offsets) - min(offsets)) / 1e6:.3f} ms (PTS {whites})")
    phase = (phases[0] + int(median(offsets))) % 1_000_000_000
    t0 = phase + round((streamon - phase) / 1e9) * 1_000_000_000
    earliest = min(last - nanoseconds(pts) for pts, _, last in arrivals)
    if t0 > earliest:
        raise ToolFailed(f"delay: a picture of the {name} stream arrived {(t0 - earliest) / 1e6:.1f} ms "
                         "before it was captured: the capture times are misplaced")
    return t0


def read_arrivals(path):
    with open(path) as rows:
        return [(int(r["pts"]), int(r["first_ns"]), int(r["last_ns"])) for r in csv.DictReader(rows)]


def delay_run(knobs, library, index):
    work = knobs.work
    tag = f"delay-{index}"
    env = camera_environment(library, work / f"{tag}-camera-report.txt", knobs.noise)
    env["FAKE_V4L2_FLASH"] = "1"
    env["FAKE_V4L2_TRACE"] = "1"
    files = {name: (work / f"{tag}-{name}.ts", work / f"{tag}-{name}.csv") for name in ("srt", "udp")}
    remove(*(p for pair in files.values() for p in pair))
    relay, srt_port, udp_port = free_port("udp"), free_port("udp"), free_port("udp")
    receivers = []
    try:
        receivers.append(udp_receiver(relay, files["srt"][0], work / f"{tag}-relay.log", arrivals=files["srt"][1]))
        receivers.append(srt_listener(srt_port, f"udp://127.0.0.1:{relay}", work / f"{tag}-srt.log",
                                      options="&latency=0"))
        receivers.append(udp_receiver(udp_port, files["udp"][0], work / f"{tag}-udp.log", arrivals=files["udp"][1]))
        recording, summary = work / f"{tag}.ts", work / f"{tag}.json"
        argv = vtrecord_command(knobs, recording, [f"srt://127.0.0.1:{srt_port}?latency=0",
                                                   f"udp://127.0.0.1:{udp_port}"], summary,
                                threads=None, extra=("--tune", "zerolatency"))
        streamon = run_traced(argv, env, work / f"{tag}.log")
        time.sleep(DRAIN_SECONDS)
    finally:
        # The relay first, so that its last packets reach the receiver behind it.
        for receiver in (receivers[1:2] + receivers[:1] + receivers[2:]):
            receiver.stop()
    facts = json.loads(summary.read_text())
    if facts.get("stop_reason") != "duration":
        raise ToolFailed(f"delay: vtrecord stopped by {facts.get('stop_reason')}: {facts.get('error')}")
    for output in facts["outputs"][1:]:
        if output["bytes"] <= 0 or output["packets_dropped"] != 0 or output["state"] != "finished":
            raise ToolFailed(f"delay: vtrecord's output {output['name']} did not keep up: {output}")
    result = {"encoder_latency_ms_p50": facts["latency_ms_p50"], "encoder_latency_ms_p99": facts["latency_ms_p99"],
              "frames_encoded": facts["frames_encoded"],
              "dropped": facts["dropped_queue"] + facts["dropped_driver"], "streams": {}}
    for name, (stream, times) in files.items():
        pictures, complaints = decoded(stream)
        arrivals = read_arrivals(times)
        if not arrivals:
            raise ToolFailed(f"delay: the {name} receiver noted no picture")
        t0 = first_capture(streamon, white_frames(stream), arrivals, name)
        result["streams"][name] = {
            "delays_ms": [(last - t0 - nanoseconds(pts)) / 1e6 for pts, _, last in arrivals],
            "pictures_decoded": pictures, "decoder_errors": len(complaints),
            "first_capture_after_streamon_ms": (t0 - streamon) / 1e6,
        }
        remove(stream, times)
    remove(recording, summary)
    return result


def bench(knobs):
    library = build_fake_camera(knobs.work)
    runs = []
    for index in range(knobs.runs):
        note(f"publish delay: vtrecord 1080p{RATE} {FORMAT} {SPEED} zerolatency {RATE_CONTROL} {BITRATE} → "
             f"SRT latency=0 and UDP, {knobs.live_seconds} s, run {index + 1} of {knobs.runs}")
        runs.append(delay_run(knobs, library, index))
    streams = {}
    for name in ("srt", "udp"):
        pooled = [d for r in runs for d in r["streams"][name]["delays_ms"]]
        streams[name] = {
            "p50_ms": percentile(pooled, 0.50), "p99_ms": percentile(pooled, 0.99), "max_ms": max(pooled),
            "pictures": len(pooled),
            "per_run_p50_ms": [percentile(r["streams"][name]["delays_ms"], 0.50) for r in runs],
            "per_run_p99_ms": [percentile(r["streams"][name]["delays_ms"], 0.99) for r in runs],
            "pictures_decoded": [r["streams"][name]["pictures_decoded"] for r in runs],
            "decoder_errors": sum(r["streams"][name]["decoder_errors"] for r in runs),
            "first_capture_after_streamon_ms": [round(r["streams"][name]["first_capture_after_streamon_ms"], 3)
                                                for r in runs],
        }
    return {
        "size": "1080p", "fps": RATE, "format": FORMAT, "speed": SPEED, "tune": "zerolatency",
        "rate_control": RATE_CONTROL, "bitrate": BITRATE, "seconds": knobs.live_seconds, "runs": knobs.runs,
        "srt_latency_ms": 0, "allowance_ms": ALLOWANCE_MS,
        "receiver": "srt-live-transmit (listener, latency=0) → loopback UDP → receiver.py",
        "encoder_latency_ms_p50": median([r["encoder_latency_ms_p50"] for r in runs]),
        "encoder_latency_ms_p99": median([r["encoder_latency_ms_p99"] for r in runs]),
        "per_run_encoder_latency_ms": [[r["encoder_latency_ms_p50"], r["encoder_latency_ms_p99"]] for r in runs],
        "frames_encoded": [r["frames_encoded"] for r in runs], "dropped": sum(r["dropped"] for r in runs),
        "srt": streams["srt"], "udp_direct": streams["udp"],
    }
