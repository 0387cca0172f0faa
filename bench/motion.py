"""Motion detection: what --motion costs at 720p30 and 1080p30, against Motion (the motion
daemon, Debian's `motion`) watching the same fake camera with the same threshold.

The fake camera gives YUYV at 30 fps from a ring of noisy pictures (as the live family uses
it). vtrecord records it at --speed ultrafast with --motion, and its summary reports the CPU
time the detector itself took (the encoder thread's own CPU clock around each analysis: the
downscale, the difference against the reference and the hysteresis), so the figure is the
detector's alone, free of the encoder's noise. A cross-check: the same recording without
--motion, the difference of the two processes' CPU time (rusage), noisy by the encoder's ±10 %.

Motion 4.5 runs with movie and picture output off, no web control or stream, and threshold set
to the same share of the picture as vtrecord's --motion-area (1 % by default), its noise level
and despeckle filter at their usual settings. Its cost is its process's CPU time less the fake
camera's own for the frames Motion took (v4l2-ctl streaming the same format measures that per
frame): what is left is Motion's capture handling, its YUYV conversion and its detection, all
of which vtrecord's pipeline does for the encoder anyway. At 1080p30 Motion cannot take every
frame on this machine; both programs' figures are therefore CPU per picture analysed × 30, a
share of a core at 30 pictures a second. Goal: vtrecord's detector ≤ 0.25 × Motion's cost, and
under 2 % of a core at 1080p30.
"""

import json
import os
import signal
import time
from pathlib import Path

from common import ToolFailed, finish, measure, median, note, spawn, tail
from live import DEVICE, FOURCC, build_fake_camera, camera_environment

RATE = 30
SIZES = {"720p": (1280, 720), "1080p": (1920, 1080)}
# --motion-area's default: the share of the picture that must change.
AREA = 0.01


def vtrecord_run(knobs, env, width, height, motion, tag):
    summary = knobs.work / f"{tag}.json"
    argv = [knobs.vtrecord, "--device", DEVICE, "--size", f"{width}x{height}", "--fps", RATE, "--format", "yuyv",
            "--encoder", "x264", "--speed", "ultrafast", "--realtime", "drop",
            "--duration", f"{knobs.live_seconds}s", *(["--motion"] if motion else []),
            "-o", knobs.work / f"{tag}.mkv", "--overwrite", "--quiet", "--json-summary", summary]
    usage = measure(argv, knobs.work / f"{tag}.log", env=env)
    facts = json.loads(summary.read_text())
    (knobs.work / f"{tag}.mkv").unlink(missing_ok=True)
    if motion and "motion" not in facts:
        raise ToolFailed(f"motion: no motion figures in {summary}")
    return usage, facts


def motion_daemon(knobs, env, width, height, tag):
    """Runs Motion for the live duration and returns its CPU seconds and the frames the camera
    handed it (fewer than the camera's rate when Motion cannot keep up)."""
    directory = knobs.work / f"{tag}-motion"
    directory.mkdir(exist_ok=True)
    configuration = directory / "motion.conf"
    configuration.write_text("\n".join([
        "daemon off", "setup_mode off", "log_level 4", f"video_device {DEVICE}", f"width {width}",
        f"height {height}", f"framerate {RATE}", f"threshold {int(width * height * AREA)}", "noise_level 32",
        "noise_tune on", "despeckle_filter EedDl", "picture_output off", "movie_output off",
        "webcontrol_port 0", "stream_port 0", f"target_dir {directory}", "",
    ]))
    report = knobs.work / f"{tag}-camera-report.txt"
    env = dict(env, FAKE_V4L2_REPORT=str(report))
    argv = ["motion", "-n", "-c", configuration]
    log = directory / "motion.log"
    started = time.monotonic()
    pid = spawn(argv, log, env=env)
    time.sleep(knobs.live_seconds)
    os.kill(pid, signal.SIGTERM)
    usage = finish(pid, argv, log, started)
    frames = next((int(line.split("=")[1]) for line in report.read_text().splitlines()
                   if line.startswith("frames_delivered=")), 0)
    if frames < knobs.live_seconds * RATE * 0.5:
        raise ToolFailed(f"motion: Motion took {frames} frames in {knobs.live_seconds} s\n{tail(log)}")
    return usage.cpu, frames


def camera_alone(knobs, env, width, height, seconds):
    """The fake camera's own CPU seconds for each frame it delivers."""
    usage = measure(["v4l2-ctl", "-d", DEVICE,
                     f"--set-fmt-video=width={width},height={height},pixelformat={FOURCC['yuyv']}",
                     "--stream-mmap", f"--stream-count={seconds * RATE}", "--stream-to=/dev/null"],
                    knobs.work / "motion-camera-alone.log", env=env)
    return usage.cpu / (seconds * RATE)


def bench(knobs):
    if Path(DEVICE).exists():
        raise SystemExit(f"{DEVICE} exists: the fake camera needs a path that is not on disk")
    library = build_fake_camera(knobs.work)
    env = camera_environment(library, knobs.work / "motion-camera-report.txt", knobs.noise)
    results = []
    for size, (width, height) in SIZES.items():
        detector, difference, peer, camera, taken = [], [], [], [], []
        for index in range(knobs.runs):
            note(f"motion: {size}{RATE} yuyv, vtrecord with and without --motion, Motion, the camera alone, "
                 f"run {index + 1} of {knobs.runs}")
            with_motion, facts = vtrecord_run(knobs, env, width, height, True, f"motion-{size}-{index}-on")
            without, _ = vtrecord_run(knobs, env, width, height, False, f"motion-{size}-{index}-off")
            # Shares of a core at 30 pictures a second: CPU per picture analysed × 30.
            detector.append(facts["motion"]["cpu_seconds"] / facts["motion"]["frames"] * RATE)
            difference.append(with_motion.cpu / with_motion.wall - without.cpu / without.wall)
            cpu, frames = motion_daemon(knobs, env, width, height, f"motion-{size}-{index}")
            per_frame = camera_alone(knobs, env, width, height, min(knobs.live_seconds, 10))
            peer.append((cpu - per_frame * frames) / frames * RATE)
            taken.append(frames / (knobs.live_seconds * RATE))
            camera.append(per_frame * RATE)
        results.append({
            "size": size, "fps": RATE, "seconds": knobs.live_seconds, "runs": knobs.runs, "area": AREA,
            "detector_percent": 100 * median(detector), "detector_percent_runs": [100 * d for d in detector],
            "process_difference_percent": 100 * median(difference),
            "motion_daemon_percent": 100 * median(peer), "motion_daemon_percent_runs": [100 * p for p in peer],
            "fake_camera_percent": 100 * median(camera),
            "motion_daemon_frames_taken": min(taken),
            "ratio_vs_motion": median(detector) / median(peer) if median(peer) > 0 else None,
        })
    return results
