"""The pictures every benchmark uses, made in the run with ffmpeg's lavfi sources: there is no
network and no sample footage on the machine.

Synthetic content is `testsrc2`: flat colour areas and a few moving shapes, which x264 codes
far more cheaply than a camera's pictures and so flatters every ratio. Camera-like content is
the same pattern, seen through a camera that sways slowly by up to ±24 pixels (global motion,
so motion search has work everywhere), with temporal noise of strength NOISE on every plane,
new in every frame, as a sensor's is. It is still synthetic; the bench checks and reports that
it costs x264 two to three times the CPU of the plain pattern, as real camera content does.
"""

from pathlib import Path

from common import note, run

SIZES = {"720p": (1280, 720), "1080p": (1920, 1080)}
RATE = 30
# The margin the swaying view needs around the visible picture.
SWAY = 32


def graph(content, width, height, noise):
    """The lavfi filter graph for one input: what results.json states as its recipe."""
    if content == "synthetic":
        return f"testsrc2=size={width}x{height}:rate={RATE}"
    return (f"testsrc2=size={width + 2 * SWAY}x{height + 2 * SWAY}:rate={RATE},"
            f"crop={width}:{height}:'{SWAY}+24*sin(t*0.9)':'{SWAY}+24*cos(t*0.7)',"
            f"noise=alls={noise}:allf=t")


def make_clip(content, size, frames, noise, directory: Path):
    """A Y4M (4:2:0, 30 fps) of `frames` pictures; its path."""
    width, height = SIZES[size]
    path = directory / f"{content}-{size}-{frames}.y4m"
    note(f"making {path.name}")
    run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", graph(content, width, height, noise),
         "-frames:v", frames, "-pix_fmt", "yuv420p", path])
    expected = frames * width * height * 3 // 2
    if path.stat().st_size < expected:
        raise SystemExit(f"{path} is shorter than {frames} pictures")
    return path


def make_picture(content, size, noise, directory: Path):
    """One picture as a camera sends it raw (packed YUYV) and as planar 4:2:2 (from which the
    conversion bench makes the JPEG a camera would send); the two paths."""
    width, height = SIZES[size]
    paths = []
    for pixel_format in ("yuyv422", "yuv422p"):
        path = directory / f"{content}-{size}.{pixel_format}"
        # The tenth picture, so the sway and the noise are under way.
        run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", graph(content, width, height, noise),
             "-vf", "select=eq(n\\,9)", "-frames:v", 1, "-pix_fmt", pixel_format, "-f", "rawvideo", path])
        if path.stat().st_size != width * height * 2:
            raise SystemExit(f"{path} is not one {width}x{height} 4:2:2 picture")
        paths.append(path)
    return tuple(paths)


def describe(noise):
    return {
        "synthetic": "ffmpeg lavfi testsrc2, 30 fps, yuv420p",
        "camera-like": ("ffmpeg lavfi testsrc2, seen through a view swaying by up to ±24 px "
                        f"(crop with sin/cos of time) with temporal noise on every plane "
                        f"(noise=alls={noise}:allf=t), 30 fps, yuv420p: synthetic, made to cost "
                        "x264 what camera pictures cost"),
    }
