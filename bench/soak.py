#!/usr/bin/python3
"""make soak: a long recording with everything on, and how its resident memory moves.

A fake MJPEG camera (Tests/FakeV4L2) is recorded to one-minute MP4 segments (at most three
kept), published over SRT to srt-live-transmit, analysed for motion, kept as event clips (at
most 20 MB of them) of a 2 s event asked on the control socket every 20 s, and watched over
HTTP: a viewer of /live.mp4 that reconnects every 30 s, the HLS playlist and /status polled
every few seconds. The camera's pictures are made once (its picture ring): a JPEG encoded for
every 1080p frame took the recording's process half a core, and with it this two-core machine
fell behind (784 frames dropped at the queue in 55 minutes) and stepped up 68 MiB part-way, as
the queue's picture pool grows toward its bound when it first must (docs/testing.md). (A lamp
blinking for motion to see no longer makes clips: a change of light is not motion.)
VmRSS is sampled every SAMPLE seconds; after WARMUP seconds the least-squares slope of the
samples is printed in MiB an hour (the goal: under 1), with the start and end figures.

Knobs (environment): SOAK_SECONDS (3600), SOAK_WARMUP (300), SOAK_SIZE (1920x1080),
SOAK_SAMPLE (10), SOAK_EVENT_EVERY (20 seconds between events), SOAK_DIR (a temporary
directory, removed at the end unless given), VTRECORD (the binary; a wrapper such as
heaptrack runs it as a child, and the memory sampled is then the wrapper's).
Exit status 1 when the slope is 1 MiB an hour or more, or when events were asked and no clip
was made.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT  # noqa: E402
from live import build_fake_camera, resident_kib  # noqa: E402

DEVICE = "/dev/video97"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def slope_per_hour(samples):
    """Least-squares slope of (seconds, KiB) samples, in MiB an hour."""
    n = len(samples)
    mean_t = sum(t for t, _ in samples) / n
    mean_m = sum(m for _, m in samples) / n
    num = sum((t - mean_t) * (m - mean_m) for t, m in samples)
    den = sum((t - mean_t) ** 2 for t, _ in samples)
    return (num / den) * 3600 / 1024 if den else 0.0


def fetch(url, limit=None, timeout=5):
    try:
        with urllib.request.urlopen(url, timeout=timeout) as answer:
            return answer.read(limit) if limit else answer.read()
    except Exception:
        return None


def ask(path, line):
    """Sends one control-socket command; 1 if it was taken, else 0."""
    try:
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(5)
            s.connect(str(path))
            s.sendall(line.encode() + b"\n")
            return 1 if b'"ok":true' in s.recv(4096) else 0
    except OSError:
        return 0


def read_json(path):
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def main():
    seconds = int(os.environ.get("SOAK_SECONDS", "3600"))
    warmup = int(os.environ.get("SOAK_WARMUP", "300"))
    sample = float(os.environ.get("SOAK_SAMPLE", "10"))
    event_every = float(os.environ.get("SOAK_EVENT_EVERY", "20"))
    size = os.environ.get("SOAK_SIZE", "1920x1080")
    given = os.environ.get("SOAK_DIR")
    work = Path(given or tempfile.mkdtemp(prefix="vtrecord-soak-"))
    work.mkdir(parents=True, exist_ok=True)
    vtrecord = Path(os.environ.get("VTRECORD", ROOT / ".build/release/vtrecord"))
    library = build_fake_camera(work)
    srt_port, http_port = free_port(), free_port()
    receiver = subprocess.Popen(["srt-live-transmit", "-q", f"srt://:{srt_port}", "file://con"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    env = dict(os.environ, LD_PRELOAD=str(library), FAKE_V4L2_DEVICE=DEVICE, FAKE_V4L2_PICTURE_RING="30")
    control = work / "control.sock"
    argv = [str(vtrecord), "--device", DEVICE, "--format", "mjpeg", "--size", size, "--fps", "30",
            "--speed", "veryfast", "--quiet",
            "-o", str(work / "rec-{n}.mp4"), "--segment-time", "1m", "--max-files", "3",
            "-o", f"srt://127.0.0.1:{srt_port}",
            "--events", str(work / "clip-{n}.mp4"), "--motion", "--pre-roll", "2s", "--post-roll", "2s",
            "--events-keep-size", "20M",
            "--http", f"127.0.0.1:{http_port}", "--control-socket", str(control), "--duration", f"{seconds}s",
            "--json-summary", str(work / "summary.json")]
    log = open(work / "vtrecord.log", "w")
    child = subprocess.Popen(argv, env=env, stderr=log)
    started = time.monotonic()
    samples, viewer, viewer_since, events_asked, events_since = [], None, 0.0, 0, 0.0
    base = f"http://127.0.0.1:{http_port}"
    try:
        while child.poll() is None:
            now = time.monotonic() - started
            if viewer is None or now - viewer_since > 30:
                if viewer:
                    viewer.kill()
                    viewer.wait()
                viewer = subprocess.Popen(["curl", "-s", "-o", "/dev/null", f"{base}/live.mp4"])
                viewer_since = now
            if now - events_since >= event_every:
                events_asked += ask(control, "event soak 2s")
                events_since = now
            fetch(f"{base}/status")
            fetch(f"{base}/live.m3u8")
            kib = resident_kib(child.pid)
            # The last seconds are the recording's end (files finished, memory let go): not counted.
            if kib is not None and warmup <= now <= seconds - 2 * sample:
                samples.append((now, kib))
            if kib is not None and int(now) % 60 < sample:
                print(f"soak: {now:6.0f} s  {kib / 1024:7.1f} MiB", flush=True)
            time.sleep(sample)
    finally:
        if viewer:
            viewer.kill()
        if child.poll() is None:
            child.send_signal(signal.SIGINT)
        child.wait()
        receiver.kill()
        log.close()
    status = child.returncode
    if status != 0:
        print(f"soak: vtrecord exited {status}: see {work / 'vtrecord.log'}")
        return 1
    if len(samples) < 3:
        print("soak: too few samples after the warm-up: give SOAK_SECONDS more than SOAK_WARMUP")
        return 1
    clips = len(((read_json(work / "summary.json") or {}).get("events") or {}).get("clips") or [])
    print(f"soak: {events_asked} events asked on the control socket, {clips} clips made")
    if events_asked > 0 and clips == 0:
        print(f"soak: no clip was made: see {work / 'vtrecord.log'}")
        return 1
    slope = slope_per_hour(samples)
    print(f"soak: {len(samples)} samples after {warmup} s: {samples[0][1] / 1024:.1f} → {samples[-1][1] / 1024:.1f} MiB, "
          f"slope {slope:+.2f} MiB an hour (goal: under 1)")
    if not given:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if slope < 1 else 1


if __name__ == "__main__":
    sys.exit(main())
