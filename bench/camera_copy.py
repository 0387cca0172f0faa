"""--encoder copy: what storing a 1080p30 MJPEG camera's own JPEGs costs, against ffmpeg doing
the same (`ffmpeg -f v4l2 -input_format mjpeg -c copy -f matroska`) on the same fake camera.

The fake camera hands out a ring of JPEGs it compressed once (FAKE_V4L2_PICTURE_RING, as the
live family uses it), so what it still costs per frame (the copy into the driver's buffer) is
small, and measured on its own by streaming the same format with v4l2-ctl; each program's own
share is its process's CPU less that. Runs alternate vtrecord and ffmpeg, RUNS pairs of
DURATION seconds (at most 20), so the machine's drift falls on both. Goal: vtrecord ≤ 1.0 ×
ffmpeg, and under 3 % of a core of its own.
"""

import json

from common import measure, median, note, ToolFailed
from live import DEVICE, RATE, build_fake_camera, camera_alone, camera_environment

WIDTH, HEIGHT = 1920, 1080


def bench(knobs):
    library = build_fake_camera(knobs.work)
    seconds = min(knobs.live_seconds, 20)
    frames = seconds * RATE
    vtrecord, ffmpeg = [], []
    for index in range(knobs.runs):
        note(f"copy: 1080p30 MJPEG, {seconds} s, vtrecord --encoder copy and ffmpeg -c copy, pair {index + 1}")
        env = camera_environment(library, knobs.work / "copy-camera-report.txt", knobs.noise)
        summary = knobs.work / "copy-summary.json"
        usage = measure([knobs.vtrecord, "--device", DEVICE, "--encoder", "copy", "--size", f"{WIDTH}x{HEIGHT}",
                         "--fps", RATE, "--frames", frames, "-o", knobs.work / "copy.mkv", "--overwrite", "--quiet",
                         "--json-summary", summary], knobs.work / "copy.log", env=env)
        facts = json.loads(summary.read_text())
        if facts.get("frames_encoded") != frames or facts.get("dropped_queue") != 0:
            raise ToolFailed(f"copy: vtrecord wrote {facts.get('frames_encoded')} of {frames} frames, "
                             f"dropped {facts.get('dropped_queue')}")
        vtrecord.append(usage)
        ffmpeg.append(measure(["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "v4l2", "-input_format", "mjpeg",
                               "-video_size", f"{WIDTH}x{HEIGHT}", "-framerate", RATE, "-i", DEVICE,
                               "-frames:v", frames, "-c", "copy", "-f", "matroska", knobs.work / "ffmpeg-copy.mkv"],
                              knobs.work / "ffmpeg-copy.log", env=env))
    camera = camera_alone(knobs, library, WIDTH, HEIGHT, "mjpeg")
    ours = median(100.0 * u.cpu / u.wall for u in vtrecord)
    theirs = median(100.0 * u.cpu / u.wall for u in ffmpeg)
    return {"size": "1080p", "fps": RATE, "format": "mjpeg", "seconds": seconds, "runs": knobs.runs,
            "camera_picture_ring": True, "fake_camera_cpu_percent": camera,
            "vtrecord_cpu_percent": ours, "ffmpeg_cpu_percent": theirs,
            "vtrecord_own_percent": ours - camera, "ffmpeg_own_percent": theirs - camera,
            "ratio_vs_ffmpeg": ours / theirs if theirs > 0 else None,
            "own_ratio_vs_ffmpeg": (ours - camera) / (theirs - camera) if theirs > camera else None}
