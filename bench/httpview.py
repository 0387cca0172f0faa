"""The live view over HTTP (--http): how late the picture is, and what a viewer costs.

Delay, glass to glass. The fake camera writes the moment its stream started
(FAKE_V4L2_STREAMON_FILE), so frame n came due at start + (n+1)/30 s on CLOCK_MONOTONIC; a
client that shows frame n (read from the frame code in the picture) at time t shows it
t − due late. Headless Chromium plays the stream while framecode.js reads the picture every
150 ms and stamps each read with the wall clock, which is turned into CLOCK_MONOTONIC here.
Cases, each 1280x720 at 30 fps, p50 and p95 over every read of every run:
  - mse_zerolatency: the page at / (Media Source Extensions on /live.mp4) with the recording
    itself at --speed ultrafast --tune zerolatency. Goal ≤ 400 ms.
  - mse_substream: the recording at --speed veryfast (x264's lookahead and B-frames) with the
    live view's own encode (--live-bitrate 2M, same size, so the frame code stays readable).
    Goal ≤ 400 ms. mse_recording_veryfast shows the same recording without it, for comparison.
  - mjpeg_camera: an MJPEG camera's /stream.mjpeg in an <img>. Goal ≤ 150 ms, as ustreamer;
    mjpeg_ustreamer is Debian's ustreamer (--encoder HW: the camera's JPEGs as they come) on
    the same fake camera, measured the same way.
  - llhls_ffmpeg: ffmpeg reading /live.m3u8 (-live_start_index -1: the newest segment; ffmpeg
    5.1 has no LL-HLS parts), its decoded pictures read as they come out of a pipe. Goal ≤ 2 s.

CPU per viewer. The server's CPU time over 10 s with no viewer and then with N viewers (curl
reading /stream.mjpeg or wrk reading /live.mp4), in one process, the difference divided by N
and by the seconds: a share of one core per viewer. For vtrecord the threads that serve HTTP
(SwiftNIO's event loops and Swift's concurrency pool) are counted, which leaves out the
encoder's noise; the whole process's difference is given beside it. ustreamer is one C
process; its whole CPU is counted.
  - mjpeg: 720p30 MJPEG camera, 10 viewers, vtrecord against ustreamer (ratio).
  - h264: 1080p30, CBR 8 Mbit/s, 20 viewers of /live.mp4. Goal < 0.5 % of a core per viewer.
"""

import json
import os
import re
import signal
import socket
import subprocess
import time
from pathlib import Path

from common import ROOT, ToolFailed, median, note, spawn, tail
from live import build_fake_camera

DEVICE = "/dev/video98"
RATE = 30
CDP = ROOT / "Tests/Browser/cdp.py"
FRAMECODE = ROOT / "Tests/Browser/framecode.js"
TICKS = os.sysconf("SC_CLK_TCK")
# Threads of vtrecord that serve HTTP: NIO's event loops and the Dispatch workers of Swift's
# concurrency pool.
SERVER_THREADS = re.compile(r"^NIO-|qos")


def environment(library, start_file):
    env = dict(os.environ)
    env["LD_PRELOAD"] = str(library)
    env["FAKE_V4L2_DEVICE"] = DEVICE
    env["FAKE_V4L2_STREAMON_FILE"] = str(start_file)
    return env


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, pid, seconds=20):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            if os.waitpid(pid, os.WNOHANG)[0] != 0:
                raise ToolFailed(f"the server on port {port} exited before it listened")
            time.sleep(0.1)
    raise ToolFailed(f"nothing listens on port {port}")


def stop(pid, log):
    try:
        os.kill(pid, signal.SIGINT)
    except ProcessLookupError:
        return
    for _ in range(100):
        if os.waitpid(pid, os.WNOHANG)[0] != 0:
            return
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    note(f"http: {log} had to be killed")


def vtrecord(knobs, env, tag, port, camera_format, size, extra):
    argv = [knobs.vtrecord, "--device", DEVICE, "--format", camera_format, "--size", size, "--fps", RATE,
            "--encoder", "x264", "--realtime", "drop", "--duration", "120s", "-o", knobs.work / f"{tag}.mp4",
            "--overwrite", "--http", f"127.0.0.1:{port}", *extra]
    log = knobs.work / f"{tag}.log"
    pid = spawn(argv, log, env=env)
    wait_for_port(port, pid)
    return pid, log


def ustreamer(knobs, env, tag, port, size):
    argv = ["ustreamer", "-d", DEVICE, "-r", size, "-m", "MJPEG", "-f", RATE, "-c", "HW", "-s", "127.0.0.1",
            "-p", port]
    log = knobs.work / f"{tag}.log"
    pid = spawn(argv, log, env=env)
    wait_for_port(port, pid)
    return pid, log


def stream_start(start_file, seconds=10):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            return int(start_file.read_text().strip()) / 1e9
        except (FileNotFoundError, ValueError):
            time.sleep(0.05)
    raise ToolFailed("the fake camera never started streaming")


def browser_delays(knobs, url, start_file, args):
    """Chromium at `url` running framecode.js: each read's delay in seconds."""
    result = subprocess.run(["/usr/bin/python3", CDP, url, FRAMECODE, "--timeout", "60", "--args", json.dumps(args)],
                            capture_output=True, text=True, timeout=90)
    if result.returncode != 0:
        raise ToolFailed(f"cdp.py {url}: {tail(result.stderr)}")
    offset = time.time() - time.monotonic()
    start = stream_start(start_file)
    samples = json.loads(result.stdout)
    delays = [(s["wall"] / 1000 - offset) - (start + (s["frame"] + 1) / RATE) for s in samples if s["frame"] is not None]
    if len(delays) < len(samples) * 0.8:
        raise ToolFailed(f"{url}: the frame code was read in {len(delays)} of {len(samples)} samples")
    return delays


def frame_number(rows, width):
    """FrameCode.read in Python: 16-pixel blocks from 320 wide, guards and check nibble."""
    block = 16 if width >= 320 else 8
    per_row = width // block
    bits = []
    for slot in range(40):
        x0 = (slot % per_row) * block + block // 4
        y0 = (slot // per_row) * block + block // 4
        side = block // 2
        total = sum(rows[(y0 + y) * width + x0 + x] for y in range(side) for x in range(side))
        mean = total / (side * side)
        if abs(mean - 128) < 40:
            return None
        bits.append(mean > 128)
    if not bits[0] or bits[1] or bits[38] or not bits[39]:
        return None
    gray = 0
    for bit in bits[2:34]:
        gray = (gray << 1) | bit
    check = 0
    for bit in bits[34:38]:
        check = (check << 1) | bit
    nibbles = 0
    for i in range(8):
        nibbles ^= (gray >> (4 * i)) & 0xF
    if check != nibbles:
        return None
    number, shift = gray, 1
    while shift < 32:
        number ^= number >> shift
        shift <<= 1
    return number


def ffmpeg_hls_delays(url, start_file, width, seconds):
    rows = 32
    argv = ["ffmpeg", "-v", "error", "-fflags", "nobuffer", "-flags", "low_delay", "-live_start_index", "-1",
            "-i", url, "-t", str(seconds), "-vf", f"crop={width}:{rows}:0:0", "-f", "rawvideo", "-pix_fmt", "gray", "-"]
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    size = width * rows
    delays = []
    start = None
    while True:
        picture = process.stdout.read(size)
        if len(picture) < size:
            break
        now = time.monotonic()
        start = start or stream_start(start_file)
        number = frame_number(picture, width)
        if number is not None:
            delays.append(now - (start + (number + 1) / RATE))
    process.wait(timeout=30)
    if process.returncode != 0 or not delays:
        raise ToolFailed(f"ffmpeg {url}: exit {process.returncode}: {tail(process.stderr.read().decode(errors='replace'))}")
    return delays


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


DELAY_CASES = {
    "mse_zerolatency": ("nv12", ["--speed", "ultrafast", "--tune", "zerolatency"], "page", 0.4),
    "mse_substream": ("nv12", ["--speed", "veryfast", "--live-bitrate", "2M"], "page", 0.4),
    "mse_recording_veryfast": ("nv12", ["--speed", "veryfast"], "page", None),
    "mjpeg_camera": ("mjpeg", ["--speed", "ultrafast"], "mjpeg", 0.15),
    "mjpeg_ustreamer": ("mjpeg", None, "ustreamer", 0.15),
    "llhls_ffmpeg": ("nv12", ["--speed", "ultrafast", "--tune", "zerolatency"], "hls", 2.0),
}


def delay_run(knobs, library, case, index):
    camera_format, extra, client, _ = DELAY_CASES[case]
    tag = f"http-delay-{case}-{index}"
    start_file = knobs.work / f"{tag}.start"
    start_file.unlink(missing_ok=True)
    env = environment(library, start_file)
    port = free_port()
    if extra is None:
        pid, log = ustreamer(knobs, env, tag, port, "1280x720")
    else:
        pid, log = vtrecord(knobs, env, tag, port, camera_format, "1280x720", extra)
    try:
        time.sleep(2)
        base = f"http://127.0.0.1:{port}/"
        samples = {"samples": 60, "seconds": 12, "period_ms": 150}
        if client == "page":
            return browser_delays(knobs, base, start_file, samples)
        if client == "mjpeg":
            return browser_delays(knobs, base + "status", start_file, {**samples, "insert_image": "stream.mjpeg"})
        if client == "ustreamer":
            return browser_delays(knobs, base + "state", start_file, {**samples, "insert_image": "stream"})
        return ffmpeg_hls_delays(base + "live.m3u8", start_file, 1280, 12)
    finally:
        stop(pid, log)


def delays(knobs, library):
    found = {}
    for case, (_, _, _, goal) in DELAY_CASES.items():
        values = []
        for index in range(knobs.runs):
            note(f"http: delay, {case}, run {index + 1} of {knobs.runs}")
            values += delay_run(knobs, library, case, index)
        found[case] = {"p50_ms": 1000 * percentile(values, 0.5), "p95_ms": 1000 * percentile(values, 0.95),
                       "reads": len(values), "goal_ms": None if goal is None else 1000 * goal}
    return found


def cpu_seconds(pid, threads=None):
    """The process's CPU seconds, or only its threads whose names match `threads`."""
    if threads is None:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICKS
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            name = (task / "comm").read_text().strip()
            if threads.search(name):
                fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
                total += int(fields[11]) + int(fields[12])
        except FileNotFoundError:
            continue
    return total / TICKS


def viewers(kind, url, count, seconds):
    if kind == "wrk":
        return [subprocess.Popen(["wrk", "-t1", f"-c{count}", f"-d{seconds}s", "--timeout", f"{seconds + 5}s", url],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    return [subprocess.Popen(["curl", "-s", "--max-time", str(seconds), "-o", "/dev/null", url],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(count)]


def viewer_cost(pid, url, kind, count, seconds, threads):
    """CPU share of a core per viewer: a window without viewers, then one with `count`."""
    time.sleep(2)
    first = (cpu_seconds(pid), cpu_seconds(pid, threads) if threads else None)
    time.sleep(seconds)
    second = (cpu_seconds(pid), cpu_seconds(pid, threads) if threads else None)
    clients = viewers(kind, url, count, seconds + 1)
    time.sleep(0.5)
    third = (cpu_seconds(pid), cpu_seconds(pid, threads) if threads else None)
    time.sleep(seconds)
    fourth = (cpu_seconds(pid), cpu_seconds(pid, threads) if threads else None)
    for client in clients:
        client.wait(timeout=30)
    idle = [second[i] - first[i] if first[i] is not None else None for i in range(2)]
    busy = [fourth[i] - third[i] if third[i] is not None else None for i in range(2)]
    per = [None if idle[i] is None else 100 * (busy[i] - idle[i]) / count / seconds for i in range(2)]
    return {"process_percent_per_viewer": per[0], "server_threads_percent_per_viewer": per[1],
            "process_idle_percent": 100 * idle[0] / seconds, "process_busy_percent": 100 * busy[0] / seconds}


def mjpeg_cost(knobs, library, seconds=10, count=10):
    runs = {"vtrecord": [], "ustreamer": []}
    for index in range(knobs.runs):
        order = ("vtrecord", "ustreamer") if index % 2 == 0 else ("ustreamer", "vtrecord")
        for server in order:
            note(f"http: CPU per MJPEG viewer, {server}, run {index + 1} of {knobs.runs}")
            tag = f"http-mjpeg-cost-{server}-{index}"
            start_file = knobs.work / f"{tag}.start"
            env = environment(library, start_file)
            port = free_port()
            if server == "vtrecord":
                pid, log = vtrecord(knobs, env, tag, port, "mjpeg", "1280x720", ["--speed", "ultrafast"])
                url, threads = f"http://127.0.0.1:{port}/stream.mjpeg", SERVER_THREADS
            else:
                pid, log = ustreamer(knobs, env, tag, port, "1280x720")
                url, threads = f"http://127.0.0.1:{port}/stream", None
            try:
                runs[server].append(viewer_cost(pid, url, "curl", count, seconds, threads))
            finally:
                stop(pid, log)
    ours = median([r["server_threads_percent_per_viewer"] for r in runs["vtrecord"]])
    ours_process = median([r["process_percent_per_viewer"] for r in runs["vtrecord"]])
    theirs = median([r["process_percent_per_viewer"] for r in runs["ustreamer"]])
    return {"size": "720p", "fps": RATE, "viewers": count, "seconds": seconds, "runs": runs,
            "vtrecord_percent_per_viewer": ours, "vtrecord_process_percent_per_viewer": ours_process,
            "ustreamer_percent_per_viewer": theirs,
            "ratio": ours_process / theirs if theirs > 0 else None}


def h264_cost(knobs, library, seconds=10, count=20):
    runs = []
    for index in range(knobs.runs):
        note(f"http: CPU per H.264 viewer, 1080p30 8 Mbit/s, run {index + 1} of {knobs.runs}")
        tag = f"http-h264-cost-{index}"
        env = environment(library, knobs.work / f"{tag}.start")
        port = free_port()
        pid, log = vtrecord(knobs, env, tag, port, "nv12", "1920x1080",
                            ["--speed", "ultrafast", "--rate-control", "cbr", "--bitrate", "8M", "--keyint", "1s"])
        try:
            runs.append(viewer_cost(pid, f"http://127.0.0.1:{port}/live.mp4", "wrk", count, seconds, SERVER_THREADS))
        finally:
            stop(pid, log)
    return {"size": "1080p", "fps": RATE, "bitrate": "8M", "viewers": count, "seconds": seconds, "runs": runs,
            "percent_per_viewer": median([r["server_threads_percent_per_viewer"] for r in runs]),
            "process_percent_per_viewer": median([r["process_percent_per_viewer"] for r in runs]),
            "goal_percent": 0.5}


def bench(knobs):
    library = build_fake_camera(knobs.work)
    return {"delay": delays(knobs, library), "mjpeg_viewer_cost": mjpeg_cost(knobs, library),
            "h264_viewer_cost": h264_cost(knobs, library)}
