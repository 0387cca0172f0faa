"""Live from the fake camera (Tests/FakeV4L2, preloaded as the tests preload it) at 720p30 and
1080p30, YUYV and MJPEG, --speed veryfast with --realtime drop (the speed held), DURATION seconds
each: frames dropped, capture → write latency, CPU use, and resident memory shortly after the
start and at the end.

Then --realtime adaptive against fixed speeds (adaptive_bench): 1080p30 YUYV and MJPEG from
--speed medium and slow with adaptive, and each x264 preset from ultrafast to slow held fixed
(--realtime drop), all at the same average bit rate: frames dropped, the speeds adaptive went
through, and the file's quality against the camera's own pictures (SSIM and PSNR of luma, by
FFmpeg's ssim and psnr filters), for every run that dropped nothing (a run that dropped frames
has pictures missing, and its frozen moments are what it costs).

The fake camera paints its pictures (with sensor-like noise, so the encoder works as hard as
with a real camera) and, for MJPEG, compresses them, inside the recording process, on the
capture thread as it dequeues them: work a real camera does in its own hardware, which costs a
noisy 1080p MJPEG stream about 45 % of a core on top of the recorder's own, enough to make two
cores fall behind. So the camera makes a ring of RING pictures once, when the stream starts,
and hands them out in turn (FAKE_V4L2_PICTURE_RING): every frame is still a different
noisy picture from the one before it, decoded and encoded in full, and what the camera still
costs (the copy into the buffer) is measured on its own, by streaming the same format with
v4l2-ctl, and reported beside vtrecord's. The ring lives in the recording process, so its
memory (RING pictures) is inside the resident figures.
"""

import json
import os
import re
import subprocess
import time
from pathlib import Path

from common import ROOT, ToolFailed, finish, measure, note, run, spawn

CASES = (("720p", 1280, 720, "yuyv"), ("720p", 1280, 720, "mjpeg"),
         ("1080p", 1920, 1080, "yuyv"), ("1080p", 1920, 1080, "mjpeg"))
FOURCC = {"yuyv": "YUYV", "mjpeg": "MJPG"}
RATE = 30
SPEED = "veryfast"
# The node the fake answers at; it must not exist on disk, and v4l2-ctl wants a videoN name.
DEVICE = "/dev/video99"
# Resident memory "at the start" is read this long after launch, when buffers and encoder exist.
START_SAMPLE_SECONDS = 2.0
# Pictures in the fake camera's ring: a third of a second, more than x264's reference frames at
# --speed veryfast, made within the first half second.
RING = 10
# The fake camera's own cost is measured over this many seconds at most.
CAMERA_ALONE_SECONDS = 10


def build_fake_camera(work: Path):
    """Compiles the fake camera as VTTestSupport's FakeV4L2Library does (same sources and
    flags), into the bench's own directory so a test run building its copy is never disturbed."""
    library = work / "libfakev4l2.so"
    partial = work / "libfakev4l2.so.partial"
    sources = sorted(str(p) for p in (ROOT / "Tests/FakeV4L2").glob("*.c"))
    turbojpeg = run(["pkg-config", "--cflags", "--libs", "libturbojpeg"]).split()
    run(["cc", "-std=c11", "-shared", "-fPIC", "-O2", "-Wall", "-Wextra", "-o", partial,
         "-I", ROOT / "Tests/TestDoubles", *sources, *turbojpeg, "-ldl", "-lpthread", "-lm"])
    partial.rename(library)
    return library


def camera_environment(library, report: Path, noise):
    env = dict(os.environ)
    env["LD_PRELOAD"] = ":".join(filter(None, [str(library), env.get("LD_PRELOAD", "")]))
    env["FAKE_V4L2_DEVICE"] = DEVICE
    env["FAKE_V4L2_NOISE"] = str(noise)
    env["FAKE_V4L2_PICTURE_RING"] = str(RING)
    env["FAKE_V4L2_REPORT"] = str(report)
    return env


def resident_kib(pid):
    """VmRSS of a running process, or None once it has exited (a zombie has none)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except FileNotFoundError:
        pass
    return None


def record(knobs, library, size, width, height, pixel_format, speed=SPEED, realtime="drop", extra=(),
           output_name="live.h264", keep=False):
    output = knobs.work / output_name
    summary = knobs.work / "live-summary.json"
    log = knobs.work / "live.log"
    env = camera_environment(library, knobs.work / "live-camera-report.txt", knobs.noise)
    argv = [knobs.vtrecord, "--device", DEVICE, "--size", f"{width}x{height}", "--fps", RATE,
            "--format", pixel_format, "--speed", speed, "--realtime", realtime, "--encoder", "x264",
            "--duration", f"{knobs.live_seconds}s", *extra,
            "-o", output, "--overwrite", "--quiet", "--json-summary", summary]
    started = time.monotonic()
    pid = spawn(argv, log, env=env)
    rss_start = rss_end = None
    usage = None
    while usage is None:
        time.sleep(0.2)
        rss = resident_kib(pid)
        elapsed = time.monotonic() - started
        # "At the end" is the last sample still inside the recording's duration: later ones
        # catch the drain and teardown, when the encoder's memory is being freed.
        if rss is not None and elapsed <= knobs.live_seconds:
            rss_end = rss
            if rss_start is None and elapsed >= START_SAMPLE_SECONDS:
                rss_start = rss
        usage = finish(pid, argv, log, started, block=False)
    facts = json.loads(summary.read_text())
    if facts.get("stop_reason") != "duration" or facts.get("frames_encoded", 0) <= 0:
        raise ToolFailed(f"live {size} {pixel_format}: stopped by {facts.get('stop_reason')} "
                         f"after {facts.get('frames_encoded')} frames: {facts.get('error')}")
    if facts["format"]["pixel_format"] != pixel_format or facts["format"]["width"] != width:
        raise ToolFailed(f"live {size} {pixel_format}: the camera gave {facts['format']}")
    if rss_start is None or rss_end is None:
        raise ToolFailed(f"live {size} {pixel_format}: ended before {START_SAMPLE_SECONDS} s, no start RSS")
    if not keep:
        output.unlink()
    return facts, usage, rss_start, rss_end


def camera_alone(knobs, library, width, height, pixel_format):
    """CPU the fake camera spends per second delivering this format to a client that does
    nothing with the pictures (v4l2-ctl)."""
    seconds = min(knobs.live_seconds, CAMERA_ALONE_SECONDS)
    env = camera_environment(library, knobs.work / "alone-camera-report.txt", knobs.noise)
    usage = measure(["v4l2-ctl", "-d", DEVICE,
                     f"--set-fmt-video=width={width},height={height},pixelformat={FOURCC[pixel_format]}",
                     "--stream-mmap", f"--stream-count={seconds * RATE}", "--stream-to=/dev/null"],
                    knobs.work / "alone.log", env=env)
    return 100.0 * usage.cpu / usage.wall


def bench(knobs):
    if Path(DEVICE).exists():
        raise SystemExit(f"{DEVICE} exists: the fake camera needs a path that is not on disk")
    library = build_fake_camera(knobs.work)
    results = []
    for size, width, height, pixel_format in CASES:
        note(f"live: {size}{RATE} {pixel_format}, {SPEED}, {knobs.live_seconds} s")
        facts, usage, rss_start, rss_end = record(knobs, library, size, width, height, pixel_format)
        camera_cpu = camera_alone(knobs, library, width, height, pixel_format)
        cpu = 100.0 * usage.cpu / usage.wall
        results.append({
            "size": size, "fps": RATE, "format": pixel_format, "speed": SPEED, "seconds": knobs.live_seconds,
            "camera_noise": knobs.noise, "camera_picture_ring": RING,
            "threads": facts.get("settings", {}).get("threads"),
            "frames_captured": facts["frames_captured"], "frames_encoded": facts["frames_encoded"],
            "dropped_queue": facts["dropped_queue"], "dropped_driver": facts["dropped_driver"],
            "frames_duplicated": facts.get("frames_duplicated"),
            "latency_ms_p50": facts.get("latency_ms_p50"), "latency_ms_p99": facts.get("latency_ms_p99"),
            "cpu_seconds": usage.cpu, "wall_seconds": usage.wall,
            # Percent of one core; the machine has nproc of them.
            "cpu_percent": cpu, "fake_camera_cpu_percent": camera_cpu,
            "recorder_cpu_percent": cpu - camera_cpu,
            "rss_start_mib": rss_start / 1024, "rss_end_mib": rss_end / 1024,
            "peak_rss_mib": usage.max_rss_kib / 1024,
        })
    return results


# --realtime adaptive against fixed speeds.
ADAPTIVE_FORMATS = ("yuyv", "mjpeg")
ADAPTIVE_FROM = ("medium", "slow")
FIXED_SPEEDS = ("ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow")
# The same average for every run, so their quality compares at one bit rate.
BITRATE = "6M"


def camera_pictures(knobs, library, pixel_format):
    """The fake camera's RING pictures as the recorder receives them (YUYV, or MJPEG decoded),
    4:2:0, as a Y4M: every frame the camera gives is one of them in turn."""
    raw = knobs.work / f"ring.{pixel_format}"
    env = camera_environment(library, knobs.work / "ring-camera-report.txt", knobs.noise)
    run(["v4l2-ctl", "-d", DEVICE, f"--set-fmt-video=width=1920,height=1080,pixelformat={FOURCC[pixel_format]}",
         "--stream-mmap", f"--stream-count={RING}", f"--stream-to={raw}"], env=env)
    ring = knobs.work / f"ring-{pixel_format}.y4m"
    source = (["-f", "rawvideo", "-pix_fmt", "yuyv422", "-s", "1920x1080"] if pixel_format == "yuyv"
              else ["-f", "mjpeg"])
    run(["ffmpeg", "-v", "error", "-y", *source, "-r", str(RATE), "-i", raw, "-pix_fmt", "yuv420p",
         "-frames:v", str(RING), ring])
    raw.unlink()
    return ring


def quality(knobs, recording, ring, frames):
    """Luma SSIM and PSNR (dB) of `recording` against the camera's pictures, frame n against
    picture n mod RING."""
    graph = "[0:v]format=yuv420p,split[a][b];[1:v]split[c][d];[a][c]ssim;[b][d]psnr"
    result = subprocess_stderr(["ffmpeg", "-hide_banner", "-i", recording, "-stream_loop", "-1", "-i", ring,
                                "-lavfi", graph, "-frames:v", str(frames), "-f", "null", "-"])
    ssim = re.search(r"SSIM Y:([0-9.]+)", result)
    psnr = re.search(r"PSNR y:([0-9.]+|inf)", result)
    if not ssim or not psnr:
        raise ToolFailed(f"no SSIM/PSNR for {recording}:\n{result[-2000:]}")
    return float(ssim.group(1)), float(psnr.group(1))


def subprocess_stderr(argv):
    """Runs an FFmpeg whose findings are on standard error; that text."""
    result = subprocess.run([str(a) for a in argv], stdin=subprocess.DEVNULL, capture_output=True, timeout=1800)
    if result.returncode != 0:
        raise ToolFailed(f"{' '.join(map(str, argv))}: exit {result.returncode}\n{result.stderr.decode()[-2000:]}")
    return result.stderr.decode(errors="replace")


def adaptive_bench(knobs):
    if Path(DEVICE).exists():
        raise SystemExit(f"{DEVICE} exists: the fake camera needs a path that is not on disk")
    library = build_fake_camera(knobs.work)
    results = []
    for pixel_format in ADAPTIVE_FORMATS:
        ring = camera_pictures(knobs, library, pixel_format)
        cases = [("adaptive", speed) for speed in ADAPTIVE_FROM] + [("drop", speed) for speed in FIXED_SPEEDS]
        for realtime, speed in cases:
            note(f"live adaptive: 1080p{RATE} {pixel_format}, --speed {speed} --realtime {realtime}, "
                 f"{knobs.live_seconds} s")
            facts, usage, _, _ = record(knobs, library, "1080p", 1920, 1080, pixel_format, speed=speed,
                                        realtime=realtime, extra=("--bitrate", BITRATE),
                                        output_name="adaptive.mp4", keep=True)
            output = knobs.work / "adaptive.mp4"
            dropped = facts["dropped_queue"] + facts["dropped_driver"]
            ssim = psnr = None
            if dropped == 0:
                ssim, psnr = quality(knobs, output, ring, facts["frames_encoded"])
            output.unlink()
            speeds = facts.get("speed") or {}
            results.append({
                "format": pixel_format, "size": "1080p", "fps": RATE, "seconds": knobs.live_seconds,
                "camera_noise": knobs.noise, "camera_picture_ring": RING, "bitrate_asked": BITRATE,
                "realtime": realtime, "speed": speed,
                "frames_captured": facts["frames_captured"], "frames_encoded": facts["frames_encoded"],
                "dropped_queue": facts["dropped_queue"], "dropped_driver": facts["dropped_driver"],
                "bitrate": facts["bitrate"], "ssim_y": ssim, "psnr_y": psnr,
                "cpu_percent": 100.0 * usage.cpu / usage.wall,
                "latency_ms_p50": facts.get("latency_ms_p50"),
                "speed_changes": speeds.get("changes"), "speed_last": speeds.get("last"),
                "speed_seconds": {k: v for k, v in (speeds.get("seconds") or {}).items() if v > 0},
            })
        ring.unlink()
    return results
