"""File input: vtrecord against the x264 CLI, ffmpeg's libx264 and GStreamer's x264enc, each
given the same Y4M and the same x264 settings.

Making the settings the same:
- preset and tune by name, CRF 23, keyint 60 (2 s at 30 fps), every other x264 field left at
  what preset and tune make it;
- the same explicit thread count for all four: the count the x264 CLI picks by itself for the
  setting (read from its output), because "auto" is resolved differently by each wrapper;
- frame rate from the Y4M header: vtrecord sets b_vfr_input = 0 as the x264 CLI does;
- x264enc has no plain CRF: pass=qual takes quantizer as the CRF but always adds a VBV cap of
  `bitrate` kbit/s. The largest cap and buffer x264 accepts (2,000,000 kbit/s each) can never
  bind, but x264 runs its VBV code all the same; results.json names it.
Each setting's first run is checked: every output decoded with ffmpeg and compared frame by
frame (framemd5) with the x264 CLI's, and x264's option string (an SEI in every stream) compared
key by key. vtrecord must match the x264 CLI exactly, or the bench fails.
"""

import re
from pathlib import Path

from common import ToolFailed, geometric_mean, measure, median, note, run

PROGRAMS = ("vtrecord", "x264", "ffmpeg", "gstreamer")
SPEEDS = ("ultrafast", "veryfast", "medium")
TUNES = (None, "zerolatency")
KEYINT = 60
CRF = 23
# x264enc's pass=qual always sets a VBV cap; these make it the loosest x264 allows (x264 clips
# the 10 s buffer they ask for to its 2,000,000 kbit maximum).
GST_BITRATE_KBIT = 2_000_000
GST_VBV_MS = 10_000


def command(program, knobs, source, output, speed, tune, threads):
    """The command line for one encode; outputs are raw H.264 (Annex B) files."""
    if program == "vtrecord":
        return [knobs.vtrecord, "--input", source, "-o", output, "--overwrite", "--quiet", "--encoder", "x264",
                "--speed", speed, *(["--tune", tune] if tune else []), "--keyint", KEYINT, "--crf", CRF,
                "--threads", threads]
    if program == "x264":
        return ["x264", "--quiet", "--preset", speed, *(["--tune", tune] if tune else []), "--keyint", KEYINT,
                "--crf", CRF, "--threads", threads, "-o", output, source]
    if program == "ffmpeg":
        return ["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", source, "-c:v", "libx264", "-preset", speed,
                *(["-tune", tune] if tune else []), "-crf", CRF, "-g", KEYINT, "-threads", threads,
                "-f", "h264", output]
    if program == "gstreamer":
        # One pipeline token per argument: gst-launch escapes each, so paths may hold spaces.
        encoder = ["x264enc", f"speed-preset={speed}", *([f"tune={tune}"] if tune else []), "pass=qual",
                   f"quantizer={CRF}", f"bitrate={GST_BITRATE_KBIT}", f"vbv-buf-capacity={GST_VBV_MS}",
                   f"key-int-max={KEYINT}", f"threads={threads}"]
        return ["gst-launch-1.0", "-q", "filesrc", f"location={source}", "!", "y4mdec", "!", *encoder, "!",
                "video/x-h264,stream-format=byte-stream", "!", "filesink", f"location={output}"]
    raise ValueError(program)


def x264_options(path):
    """x264's option string from the SEI it writes into every stream, as a dict."""
    data = Path(path).read_bytes()[:65536]
    found = re.search(rb"options: ([ -~]+)", data)
    if not found:
        return {}
    return dict(item.split("=", 1) for item in found.group(1).decode().split() if "=" in item)


def count_pictures(path):
    """Coded pictures in an Annex B stream: slices (NAL types 1 and 5) whose first_mb_in_slice
    is 0, i.e. whose first header bit is 1. Counted independently of every tool measured, so an
    encoder that stopped early cannot pass."""
    if not Path(path).exists():
        return 0
    data = Path(path).read_bytes()
    pictures = 0
    position = data.find(b"\x00\x00\x01")
    while position >= 0 and position + 4 < len(data):
        nal_type = data[position + 3] & 0x1F
        if nal_type in (1, 5) and data[position + 4] & 0x80:
            pictures += 1
        position = data.find(b"\x00\x00\x01", position + 3)
    return pictures


def frame_hashes(path):
    text = run(["ffmpeg", "-nostdin", "-v", "error", "-i", path, "-fps_mode", "passthrough", "-f", "framemd5", "-"])
    return [line.rsplit(",", 1)[1].strip() for line in text.splitlines() if line and not line.startswith("#")]


def auto_threads(source, speed, tune, work):
    """The thread count the x264 CLI picks by itself for this setting on this machine."""
    probe = work / "threads-probe.h264"
    run(["x264", "--quiet", "--preset", speed, *(["--tune", tune] if tune else []), "--frames", 3,
         "-o", probe, source])
    options = x264_options(probe)
    probe.unlink()
    if "threads" not in options:
        raise ToolFailed("the x264 CLI wrote no option string: cannot read its thread count")
    return int(options["threads"])


def compare(outputs, frames):
    """Decoded frames and option strings of each program's output against the x264 CLI's."""
    reference = frame_hashes(outputs["x264"])
    reference_options = x264_options(outputs["x264"])
    verdicts = {}
    for program in PROGRAMS:
        if program == "x264":
            continue
        hashes = frame_hashes(outputs[program])
        options = x264_options(outputs[program])
        first = next((i for i, (a, b) in enumerate(zip(hashes, reference)) if a != b), None)
        differing = sorted(key for key in reference_options.keys() | options.keys()
                           if reference_options.get(key) != options.get(key))
        verdicts[program] = {
            "frames_identical": hashes == reference and len(hashes) == frames,
            "first_differing_frame": first,
            "option_differences": {key: [reference_options.get(key), options.get(key)] for key in differing},
        }
    return verdicts


def summarise(usages, frames):
    """Medians of one program's runs."""
    return {
        "fps": median(frames / u.wall for u in usages),
        "cpu_seconds": median(u.cpu for u in usages),
        "peak_rss_mib": median(u.max_rss_kib / 1024 for u in usages),
        "runs": [{"wall": round(u.wall, 4), "user": u.user, "system": u.system, "max_rss_kib": u.max_rss_kib}
                 for u in usages],
    }


def bench_setting(knobs, content, size, source, speed, tune):
    threads = auto_threads(source, speed, tune, knobs.work)
    label = f"{content} {size} {speed}{' zerolatency' if tune else ''}"
    usages = {program: [] for program in PROGRAMS}
    verdicts = None
    for run_index in range(knobs.runs):
        # A different program goes first in each run, so a burst of load elsewhere falls on
        # all of them alike.
        order = PROGRAMS[run_index % len(PROGRAMS):] + PROGRAMS[:run_index % len(PROGRAMS)]
        outputs = {}
        for program in order:
            output = knobs.work / f"out-{program}.h264"
            log = knobs.work / f"out-{program}.log"
            argv = command(program, knobs, source, output, speed, tune, threads)
            usage = measure(argv, log)
            pictures = count_pictures(output)
            if pictures != knobs.frames:
                raise ToolFailed(f"{' '.join(map(str, argv))}: wrote {pictures} pictures, not {knobs.frames}")
            usages[program].append(usage)
            outputs[program] = output
        if verdicts is None:
            verdicts = compare(outputs, knobs.frames)
            if not verdicts["vtrecord"]["frames_identical"]:
                raise ToolFailed(f"{label}: vtrecord's decoded frames differ from the x264 CLI's "
                                 f"(first at frame {verdicts['vtrecord']['first_differing_frame']}, "
                                 f"option differences {verdicts['vtrecord']['option_differences']}): "
                                 "the comparison would not be of the same work")
        for output in outputs.values():
            output.unlink()
        note(f"  {label}: run {run_index + 1}/{knobs.runs}: "
             + ", ".join(f"{p} {knobs.frames / usages[p][-1].wall:.1f} fps" for p in PROGRAMS))

    ratios = {}
    for peer in ("x264", "ffmpeg", "gstreamer"):
        # Each run's vtrecord/peer fps ratio comes from encodes done back to back; the median of
        # those is steadier under outside load than a ratio of two medians.
        ratios[f"vs_{peer}"] = median(b.wall / a.wall for a, b in zip(usages["vtrecord"], usages[peer]))
    return {
        "content": content, "size": size, "speed": speed, "tune": tune or "none",
        "threads": threads, "keyint": KEYINT, "crf": CRF, "frames": knobs.frames, "runs": knobs.runs,
        "programs": {program: summarise(usages[program], knobs.frames) for program in PROGRAMS},
        "fps_ratio": ratios,
        "agreement": verdicts,
    }


def bench(knobs, clips):
    """Every content × size × speed × tune; clips maps (content, size) to a Y4M."""
    results = []
    for (content, size), source in clips.items():
        for tune in TUNES:
            for speed in SPEEDS:
                results.append(bench_setting(knobs, content, size, source, speed, tune))
    return results


def content_cost(results):
    """How much more CPU the x264 CLI spends on camera-like than on synthetic pictures, per
    size and setting: real camera content costs two to three times as much."""
    by_key = {(r["content"], r["size"], r["speed"], r["tune"]): r for r in results}
    rows = []
    for (content, size, speed, tune), r in by_key.items():
        if content != "camera-like" or ("synthetic", size, speed, tune) not in by_key:
            continue
        synthetic = by_key[("synthetic", size, speed, tune)]["programs"]["x264"]["cpu_seconds"]
        camera = r["programs"]["x264"]["cpu_seconds"]
        rows.append({"size": size, "speed": speed, "tune": tune, "synthetic_cpu_seconds": synthetic,
                     "camera_like_cpu_seconds": camera, "ratio": camera / synthetic})
    overall = geometric_mean(row["ratio"] for row in rows) if rows else None
    return {"rows": rows, "geometric_mean": overall,
            "in_range": overall is not None and 2.0 <= overall <= 3.0}


def known_differences():
    """What could not be made the same, for results.json."""
    return {
        "gstreamer": [
            "x264enc pass=qual (its CRF mode) always sets a VBV cap equal to its bitrate property; "
            f"the bench sets the largest x264 accepts ({GST_BITRATE_KBIT} kbit/s, {GST_VBV_MS} ms buffer), "
            "which never binds, but x264 then runs its VBV rate-control code: pictures differ from the "
            "CLI's where that code changes quantisers (without a lookahead: ultrafast, zerolatency), and "
            "with VBV frame threads read each other's size estimates; its option string differs only "
            "in the VBV keys and rc_lookahead, which x264 prints when VBV is on",
            "input through y4mdec, which copies each picture into a GStreamer buffer",
        ],
        "ffmpeg": ["input through ffmpeg's Y4M demuxer and rawvideo decoder, one copy per picture"],
    }
