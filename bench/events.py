"""Event clips: what the pre-roll costs in memory, and how soon a clip is on disk.

Memory. The fake camera (a ring of noisy pictures, as the live family uses it) gives 720p30
YUYV; x264 codes it at --speed ultrafast in CBR at 8 Mbit/s with x264's HRD filler, so the
stream carries 8 Mbit/s whatever the pictures; the test sound adds 128 kb/s AAC. Each run
records the same camera twice, side by side in time, the order turned around every run: once
to an MPEG-TS file alone, once to the same file with --events and a 30 s pre-roll (no event
comes, so the pre-roll is full and nothing else differs). The cost is the difference of the
two processes' peak resident memory (VmHWM, from wait4's rusage), against the bytes the
pre-roll held at its peak (held_bytes_peak in the summary). Goal: ≤ 1.1 × the bytes held +
5 MiB.

Trigger to disk. The same recording with --events alone (MP4 clips) and the 30 s pre-roll is
sent SIGUSR1 once the pre-roll is full; from that moment the clip file is read every 2 ms.
Measured: the first byte on disk, the moment the complete fragments on disk hold the whole
pre-roll (the video samples of every moof whose mdat is complete, against the pre-roll the
summary reports), and the moment ffprobe first decodes the clip's first picture. Goal: the pre-roll on
disk within 200 ms of the trigger.
"""

import json
import os
import signal
import struct
import subprocess
import time
from pathlib import Path

from common import ToolFailed, finish, median, note, spawn
from live import DEVICE, build_fake_camera, camera_environment

WIDTH, HEIGHT, RATE = 1280, 720, 30
PRE_ROLL = 30
BITRATE = "8M"
# Seconds after the pre-roll is full before the trigger, and after it before the end.
SETTLE, AFTER = 5, 8
POLL = 0.002


def command(knobs, recording, summary, extra, seconds):
    return [knobs.vtrecord, "--device", DEVICE, "--size", f"{WIDTH}x{HEIGHT}", "--fps", RATE, "--format", "yuyv",
            "--encoder", "x264", "--speed", "ultrafast", "--rate-control", "cbr", "--bitrate", BITRATE,
            "--keyint", "1s", "--realtime", "drop", "--audio", "test", "--duration", f"{seconds}s",
            *(["-o", recording] if recording else []), *extra,
            "--overwrite", "--quiet", "--json-summary", summary]


def memory_run(knobs, env, events, index, pre_roll):
    tag = f"events-memory-{'with' if events else 'without'}-{index}"
    recording = knobs.work / f"{tag}.ts"
    summary = knobs.work / f"{tag}.json"
    extra = ["--events", str(knobs.work / f"{tag}-{{n}}.mp4"), "--pre-roll", f"{pre_roll}s"] if events else []
    argv = command(knobs, recording, summary, extra, pre_roll + SETTLE)
    started = time.monotonic()
    usage = finish(spawn(argv, knobs.work / f"{tag}.log", env=env), argv, knobs.work / f"{tag}.log", started)
    facts = json.loads(summary.read_text())
    recording.unlink(missing_ok=True)
    return usage, facts


def memory(knobs, env, pre_roll):
    costs, held, rates, drops = [], [], [], 0
    for index in range(knobs.runs):
        order = (False, True) if index % 2 == 0 else (True, False)
        peaks = {}
        for events in order:
            note(f"events: memory, 720p30 8 Mbit/s with sound, {'with' if events else 'without'} a {pre_roll} s "
                 f"pre-roll, run {index + 1} of {knobs.runs}")
            usage, facts = memory_run(knobs, env, events, index, pre_roll)
            peaks[events] = usage.max_rss_kib * 1024
            drops += facts["dropped_queue"] + facts["dropped_driver"]
            if events:
                held.append(facts["events"]["held_bytes_peak"])
                rates.append(facts["bitrate"])
                if facts["events"]["clips"]:
                    raise ToolFailed("events: a clip was made with no event")
        costs.append(peaks[True] - peaks[False])
    cost, bytes_held = median(costs), median(held)
    return {
        "size": "720p", "fps": RATE, "bitrate": BITRATE, "sound": "AAC 48 kHz stereo (--audio test)",
        "pre_roll_seconds": pre_roll, "runs": knobs.runs, "video_bitrate_measured": median(rates),
        "held_bytes_peak": bytes_held, "rss_cost_bytes": cost,
        "rss_cost_runs": costs, "cost_per_byte_held": cost / bytes_held if bytes_held else None,
        "goal_bytes": 1.1 * bytes_held + 5 * 1024 * 1024, "dropped_frames": drops,
    }


def complete_video_samples(path):
    """Video samples (track 1) of the fragments whose mdat is wholly on disk."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        return 0
    offset, samples, pending = 0, 0, 0
    while offset + 8 <= len(data):
        size, kind = struct.unpack(">I4s", data[offset:offset + 8])
        if size == 1 and offset + 16 <= len(data):
            size = struct.unpack(">Q", data[offset + 8:offset + 16])[0]
        if size < 8 or offset + size > len(data):
            break
        if kind == b"moof":
            pending = video_samples_in_moof(data[offset + 8:offset + size])
        elif kind == b"mdat":
            samples += pending
            pending = 0
        offset += size
    return samples


def video_samples_in_moof(body):
    count, offset = 0, 0
    while offset + 8 <= len(body):
        size, kind = struct.unpack(">I4s", body[offset:offset + 8])
        if size < 8:
            break
        if kind == b"traf":
            traf = body[offset + 8:offset + size]
            track, inner = None, 0
            runs = 0
            while inner + 8 <= len(traf):
                box_size, box = struct.unpack(">I4s", traf[inner:inner + 8])
                if box_size < 8:
                    break
                if box == b"tfhd":
                    track = struct.unpack(">I", traf[inner + 12:inner + 16])[0]
                elif box == b"trun":
                    runs += struct.unpack(">I", traf[inner + 12:inner + 16])[0]
                inner += box_size
            if track == 1:
                count += runs
        offset += size
    return count


def decodes(path):
    """Whether a player can start the clip: ffprobe decodes its first picture (only that)."""
    result = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-read_intervals", "%+#1",
                             "-count_frames", "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", str(path)],
                            capture_output=True, text=True, timeout=30)
    digits = [line for line in result.stdout.split() if line.isdigit()]
    return bool(digits) and int(digits[0]) > 0


def trigger_run(knobs, env, index, pre_roll):
    tag = f"events-trigger-{index}"
    summary = knobs.work / f"{tag}.json"
    clip = knobs.work / f"{tag}-0.mp4"
    clip.unlink(missing_ok=True)
    argv = command(knobs, None, summary, ["--events", str(knobs.work / f"{tag}-{{n}}.mp4"),
                                          "--pre-roll", f"{pre_roll}s", "--post-roll", "2s"],
                   pre_roll + SETTLE + AFTER)
    log = knobs.work / f"{tag}.log"
    started = time.monotonic()
    pid = spawn(argv, log, env=env)
    time.sleep(pre_roll + SETTLE)
    sent = time.monotonic()
    os.kill(pid, signal.SIGUSR1)
    first_byte = complete = playable = None
    needed = None
    samples_log = []
    while time.monotonic() - sent < AFTER - 2:
        now = time.monotonic() - sent
        size = clip.stat().st_size if clip.exists() else 0
        if first_byte is None and size > 0:
            first_byte = now
        if first_byte is not None and complete is None:
            samples = complete_video_samples(clip)
            samples_log.append((round(now, 4), samples))
            # The pre-roll in pictures: the whole seconds held before the trigger, less a frame.
            if samples >= pre_roll * RATE - 1:
                complete = now
        if complete is not None and playable is None and decodes(clip):
            playable = time.monotonic() - sent
        if complete is not None and playable is not None:
            break
        time.sleep(POLL)
    finish(pid, argv, log, started)
    facts = json.loads(summary.read_text())
    clips = facts["events"]["clips"]
    if len(clips) != 1 or clips[0]["state"] != "finished":
        raise ToolFailed(f"events: expected one finished clip, got {clips}")
    if complete is None:
        raise ToolFailed(f"events: the pre-roll never reached the disk: {samples_log[-5:]}")
    return {"first_byte_ms": 1000 * first_byte, "pre_roll_on_disk_ms": 1000 * complete,
            "playable_ms": None if playable is None else 1000 * playable,
            "pre_roll_kept_seconds": clips[0]["pre_roll"], "clip_frames": clips[0]["frames"]}


def trigger(knobs, env, pre_roll):
    runs = []
    for index in range(knobs.runs):
        note(f"events: trigger → clip on disk, {pre_roll} s pre-roll, run {index + 1} of {knobs.runs}")
        runs.append(trigger_run(knobs, env, index, pre_roll))
    return {
        "size": "720p", "fps": RATE, "bitrate": BITRATE, "pre_roll_seconds": pre_roll, "runs": runs,
        "first_byte_ms": median([r["first_byte_ms"] for r in runs]),
        "pre_roll_on_disk_ms": median([r["pre_roll_on_disk_ms"] for r in runs]),
        "pre_roll_on_disk_ms_max": max(r["pre_roll_on_disk_ms"] for r in runs),
        "playable_ms": median([r["playable_ms"] for r in runs if r["playable_ms"] is not None] or [float("nan")]),
    }


def bench(knobs):
    if Path(DEVICE).exists():
        raise SystemExit(f"{DEVICE} exists: the fake camera needs a path that is not on disk")
    library = build_fake_camera(knobs.work)
    env = camera_environment(library, knobs.work / "events-camera-report.txt", knobs.noise)
    pre_roll = 5 if knobs.quick else PRE_ROLL
    return {"memory": memory(knobs, env, pre_roll), "trigger": trigger(knobs, env, pre_roll)}
