"""Decoding: `vtrecord verify` (which decodes every frame with libavcodec's H.264 decoder, threads
on, and checks what it finds) against `ffmpeg -v error -i FILE -f null -`, which decodes the same
file and throws the pictures away, on the same machine in the same run.

The files are recordings vtrecord makes of the camera-like clips (x264 veryfast, B-frames,
2-second GOPs), as MP4 and as a raw stream: what a user would verify. Each run times both
programs back to back, alternating which goes first; the ratio is ffmpeg's wall time ÷
vtrecord's (above 1: vtrecord is faster), the median of the per-run ratios.
"""

import json

from common import median, measure, note, run

FORMATS = ("mp4", "h264")


def bench(knobs, clips):
    rows = []
    for (content, size), clip in clips.items():
        if content != "camera-like":
            continue
        for container in FORMATS:
            path = knobs.work / f"decode-{content}-{size}.{container}"
            note(f"decode: recording {path.name}")
            run([knobs.vtrecord, "--input", clip, "--encoder", "x264", "--speed", "veryfast", "--keyint", "2s",
                 "--quiet", "--overwrite", "-o", path])
            report = json.loads(run([knobs.vtrecord, "verify", "--json", path]))
            if not report["clean"]:
                raise SystemExit(f"{path}: verify calls vtrecord's own recording damaged: {report}")
            frames = report["files"][0]["decoded_frames"]
            commands = {
                "vtrecord": [knobs.vtrecord, "verify", path],
                "ffmpeg": ["ffmpeg", "-nostdin", "-v", "error", "-i", path, "-f", "null", "-"],
            }
            usages = {name: [] for name in commands}
            ratios = []
            for index in range(knobs.runs):
                order = list(commands) if index % 2 == 0 else list(reversed(commands))
                this_run = {}
                for name in order:
                    this_run[name] = measure(commands[name], knobs.work / f"decode-{name}.log")
                    usages[name].append(this_run[name])
                ratios.append(this_run["ffmpeg"].wall / this_run["vtrecord"].wall)
                note(f"  {content} {size} {container}: run {index + 1}/{knobs.runs}: vtrecord verify "
                     f"{frames / this_run['vtrecord'].wall:.1f} fps, ffmpeg {frames / this_run['ffmpeg'].wall:.1f} fps")
            rows.append({
                "content": content, "size": size, "container": container, "frames": frames, "runs": knobs.runs,
                "programs": {name: {"fps": frames / median([u.wall for u in usages[name]]),
                                    "cpu_seconds": median([u.cpu for u in usages[name]]),
                                    "peak_rss_mib": max(u.max_rss_kib for u in usages[name]) / 1024}
                             for name in commands},
                "speed_vs_ffmpeg": median(ratios),
            })
    return rows
