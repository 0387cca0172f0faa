"""Conversion per 1080p picture, with the capture thread's own code (vtrecord-bench runs
FrameConverter): YUYV → I420 next to a memcpy of the same bytes in the same process, and a
4:2:2 JPEG (made from the same picture at quality 85, as a webcam sends it) decoded to I420.
Median of many repetitions with the data in cache: the steady state of a capture thread.

Yardsticks for the JPEG figure, on the same bytes: libturbojpeg's own decode to 4:2:2 planes
(what FrameConverter adds is the chroma scaling to 4:2:0), and FFmpeg's MJPEG decoder on one
thread, from the CPU time of decoding the picture many times less that of decoding it once.
"""

import json

from common import ToolFailed, measure, note, run

ITERATIONS = 200
QUICK_ITERATIONS = 50


def ffmpeg_decode_ms(knobs, jpeg, repetitions):
    """CPU milliseconds FFmpeg's MJPEG decoder (one thread) spends per decode of `jpeg`: the
    picture looped `repetitions` + 1 times less the picture once, so start-up cancels out."""
    def cpu(frames):
        argv = ["ffmpeg", "-nostdin", "-v", "error", "-threads", "1", "-f", "image2", "-loop", "1",
                "-framerate", "30", "-i", jpeg, "-frames:v", frames, "-threads", "1", "-f", "null", "-"]
        return min(measure(argv, knobs.work / "ffmpeg-mjpeg.log").cpu for _ in range(3))
    return 1000.0 * (cpu(repetitions + 1) - cpu(1)) / repetitions


def bench(knobs, pictures):
    """pictures maps a content name to its 1080p (yuyv, yuv422p) files."""
    results = []
    for content, (yuyv, planar) in pictures.items():
        note(f"conversion: {content} 1080p")
        iterations = QUICK_ITERATIONS if knobs.quick else ITERATIONS
        jpeg = knobs.work / f"{content}-1080p.jpg"
        text = run([knobs.bench_tool, "--width", 1920, "--height", 1080, "--yuyv", yuyv, "--yuv422p", planar,
                    "--iterations", iterations, "--jpeg-out", jpeg])
        try:
            result = json.loads(text)
        except json.JSONDecodeError as error:
            raise ToolFailed(f"vtrecord-bench printed no JSON ({error}): {text[:200]}")
        result["ffmpeg_mjpeg_decode_ms"] = ffmpeg_decode_ms(knobs, jpeg, iterations)
        results.append({"content": content, "size": "1080p", **result})
    return results
