"""Conversion per 1080p picture, with the capture thread's own code (vtrecord-bench runs
FrameConverter): YUYV → I420 next to a memcpy of the same bytes in the same process, and a
4:2:2 JPEG (made from the same picture at quality 85, as a webcam sends it) decoded to I420.
Median of many repetitions with the data in cache: the steady state of a capture thread.
"""

import json

from common import ToolFailed, note, run

ITERATIONS = 200
QUICK_ITERATIONS = 50


def bench(knobs, pictures):
    """pictures maps a content name to its 1080p (yuyv, yuv422p) files."""
    results = []
    for content, (yuyv, planar) in pictures.items():
        note(f"conversion: {content} 1080p")
        text = run([knobs.bench_tool, "--width", 1920, "--height", 1080, "--yuyv", yuyv, "--yuv422p", planar,
                    "--iterations", QUICK_ITERATIONS if knobs.quick else ITERATIONS])
        try:
            result = json.loads(text)
        except json.JSONDecodeError as error:
            raise ToolFailed(f"vtrecord-bench printed no JSON ({error}): {text[:200]}")
        results.append({"content": content, "size": "1080p", **result})
    return results
