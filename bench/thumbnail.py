"""Thumbnails from the middle of a long recording: `vtrecord thumbnail --at T` (the keyframe at
or before T, one decoded frame) and `--exact` (the picture at T, decoded from the keyframe
before it) against `ffmpeg -ss T -i FILE -frames:v 1 out.jpg`, the command people use for it
(ffmpeg seeks to the keyframe before T through the index and decodes on to T, the work
--exact does).

The files: an hour of the test pattern recorded by vtrecord at 320x180 (x264 ultrafast,
2-second GOPs, so the hour takes about a minute to record), as MP4 and as Matroska; T is one
second past the middle, so the exact picture is 30 frames past a keyframe. Each run times the
three commands back to back, in a rotating order; ratios are ffmpeg's wall time ÷ vtrecord's
(above 1: vtrecord is faster), the median of the per-run ratios. Once per file, strace -y sums
the bytes each program reads from the recording, to show that a picture from the middle does
not read the half hour before it.
"""

import re

from common import ToolFailed, measure, median, note, run

CONTAINERS = ("mp4", "mkv")
LENGTH, QUICK_LENGTH = "60m", "2m"
READ = re.compile(r'^\d+\s+(?:read|pread64)\((\d+)<([^>]*)>, .*\) = (\d+)$')


def at_time(length):
    """One second past the middle, in seconds."""
    minutes = int(length.rstrip("m"))
    return minutes * 30 + 1


def bytes_read(argv, path, trace):
    """Bytes `argv` reads from `path` (strace -y names each descriptor's file)."""
    run(["strace", "-f", "-y", "-e", "trace=read,pread64", "-e", "signal=none", "-o", trace] + argv)
    total = 0
    for line in open(trace):
        m = READ.match(line)
        if m and m.group(2) == str(path):
            total += int(m.group(3))
    if total == 0:
        raise ToolFailed(f"{trace}: no read of {path} seen")
    return total


def bench(knobs):
    rows = []
    length = QUICK_LENGTH if knobs.quick else LENGTH
    at = at_time(length)
    for container in CONTAINERS:
        path = (knobs.work / f"thumbnail-{length}.{container}").resolve()
        note(f"thumbnail: recording {length} of the test pattern as {path.name}")
        run([knobs.vtrecord, "--test-pattern", "--size", "320x180", "--fps", "30", "--duration", length,
             "--speed", "ultrafast", "--keyint", "2s", "--quiet", "--overwrite", "-o", path], timeout=3600)
        outputs = {name: knobs.work / f"thumbnail-{name}.jpg" for name in ("keyframe", "exact", "ffmpeg")}
        commands = {
            "keyframe": [knobs.vtrecord, "thumbnail", path, "--at", str(at), "-o", outputs["keyframe"]],
            "exact": [knobs.vtrecord, "thumbnail", path, "--at", str(at), "--exact", "-o", outputs["exact"]],
            "ffmpeg": ["ffmpeg", "-nostdin", "-v", "error", "-y", "-ss", str(at), "-i", path, "-frames:v", "1",
                       outputs["ffmpeg"]],
        }
        usages = {name: [] for name in commands}
        keyframe_ratios, exact_ratios = [], []
        for index in range(knobs.runs):
            names = list(commands)
            order = names[index % 3:] + names[:index % 3]
            this_run = {name: measure(commands[name], knobs.work / f"thumbnail-{name}.log") for name in order}
            for name in names:
                usages[name].append(this_run[name])
            keyframe_ratios.append(this_run["ffmpeg"].wall / this_run["keyframe"].wall)
            exact_ratios.append(this_run["ffmpeg"].wall / this_run["exact"].wall)
            note(f"  {container} at {at} s: run {index + 1}/{knobs.runs}: keyframe "
                 f"{this_run['keyframe'].wall * 1000:.0f} ms, exact {this_run['exact'].wall * 1000:.0f} ms, "
                 f"ffmpeg {this_run['ffmpeg'].wall * 1000:.0f} ms")
        reads = {name: bytes_read([str(a) for a in argv], path, knobs.work / f"thumbnail-{name}.trace")
                 for name, argv in commands.items()}
        rows.append({
            "container": container, "length": length, "at_seconds": at, "file_bytes": path.stat().st_size,
            "runs": knobs.runs,
            "programs": {name: {"wall_ms": median([u.wall for u in usages[name]]) * 1000,
                                "cpu_seconds": median([u.cpu for u in usages[name]]),
                                "bytes_read": reads[name]}
                         for name in commands},
            "keyframe_speed_vs_ffmpeg": median(keyframe_ratios),
            "exact_speed_vs_ffmpeg": median(exact_ratios),
        })
    return rows
