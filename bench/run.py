#!/usr/bin/python3
"""make bench: vtrecord's speed against the tools people would use instead, with numbers from
one run. Prints a table and writes results.json and results.png (under bench/ by default).

Families (FAMILIES=encode,overhead,conversion,live,finalize,decode,thumbnail,sound,publish,events,motion,http,copy
picks some):
  encode      file input, identical x264 settings: vtrecord, x264 CLI, ffmpeg, GStreamer (encode.py)
  overhead    instructions outside libx264, callgrind (overhead.py)
  conversion  YUYV→I420 vs memcpy and MJPEG decode per 1080p picture (conversion.py)
  live        the fake camera at 720p30 and 1080p30, YUYV and MJPEG; --realtime adaptive against
              fixed speeds at 1080p30 (live.py)
  finalize    MP4 finalization of a 10 s and a 60 min recording: bytes written, time (finalize.py)
  decode      vtrecord verify vs ffmpeg -f null on camera-like recordings (decode.py)
  thumbnail   vtrecord thumbnail vs ffmpeg -ss T -frames:v 1 in the middle of an hour (thumbnail.py)
  sound       1080p30 from the fake camera with and without 48 kHz stereo AAC: what sound costs (sound.py)
  publish     1080p30 from the fake camera, ultrafast CBR 8 Mbit/s, recording alone and with SRT, UDP
              and RTMP outputs to loopback receivers: CPU per extra output against ffmpeg -f tee
              (publish.py); capture → arrival at an SRT receiver with --tune zerolatency and SRT
              latency=0, against the encoder's own capture → written (publish_delay.py)
  events      event clips: the memory a 30 s pre-roll at 8 Mbit/s with sound costs against the bytes
              it holds, and the time from SIGUSR1 to the pre-roll on disk and to a clip that plays
              (events.py)
  motion      --motion's detector at 720p30 and 1080p30 against Motion watching the same camera with
              the same threshold, as a share of a core (motion.py)
  http        --http: glass-to-glass delay in Chromium (MSE, the live view's own encode, MJPEG) and
              through ffmpeg (LL-HLS), against ustreamer for MJPEG; CPU per MJPEG viewer against
              ustreamer and per H.264 viewer at 1080p30 8 Mbit/s (httpview.py)
  copy        --encoder copy of a 1080p30 MJPEG camera against ffmpeg -c copy: CPU, with the fake
              camera's own share measured apart (camera_copy.py)

Knobs (environment; make passes its variables): QUICK=1 (1 run, 30 frames, 5 s live, results to
bench/quick-results.*), RUNS (5), FRAMES (300), DURATION (live seconds, 60), NOISE (camera-like
noise strength, 8), OUT (path without extension), KEEP=1 (keep bench/tmp), BIN, BENCH_BIN,
UPDATE=1 (the families run replace theirs in the existing results, the rest are kept; the
results then list each such update with its date, commit and load).
"""

import datetime
import json
import os
import platform
import shutil
import subprocess
import sys

import camera_copy
import conversion
import decode
import encode
import events
import finalize
import httpview
import live
import media
import motion
import overhead
import publish
import publish_delay
import report
import sound
import thumbnail
from common import ROOT, Knobs, ToolFailed, note, run


def first_line(argv):
    try:
        return run(argv).strip().splitlines()[0]
    except (ToolFailed, OSError, IndexError):
        return None


def machine_facts(knobs):
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
               platform.processor())
    memory = next((int(line.split()[1]) // 1024 for line in open("/proc/meminfo") if line.startswith("MemTotal")), None)
    commit = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"], capture_output=True, text=True)
    return {
        "nproc": os.cpu_count(),
        "cpu_model": cpu,
        "memory_mib": memory,
        "kernel": platform.release(),
        "os": first_line(["sh", "-c", ". /etc/os-release && echo \"$PRETTY_NAME\""]),
        "load_average_at_start": os.getloadavg(),
        "versions": {
            "vtrecord": f"{first_line([knobs.vtrecord, '--version'])} ({commit.stdout.strip() or 'no git'})",
            "x264": first_line(["x264", "--version"]),
            "ffmpeg": first_line(["ffmpeg", "-version"]),
            "gstreamer": first_line(["gst-launch-1.0", "--version"]),
            "x264enc": next((line.split(None, 1)[1] for line in run(["gst-inspect-1.0", "x264enc"]).splitlines()
                             if line.strip().startswith("Version")), None),
            "valgrind": first_line(["valgrind", "--version"]),
            "python": platform.python_version(),
        },
    }


def check_tools(knobs):
    for path in (knobs.vtrecord, knobs.bench_tool):
        if not path.exists():
            raise SystemExit(f"{path} is missing: run make bench (it builds both)")
    missing = [tool for tool in ("ffmpeg", "x264", "gst-launch-1.0", "gst-inspect-1.0", "valgrind",
                                 "callgrind_annotate", "objcopy", "v4l2-ctl", "cc", "pkg-config", "strace")
               if shutil.which(tool) is None]
    if "publish" in knobs.families:
        missing += [tool for tool in ("srt-live-transmit", "nginx", "ffprobe") if shutil.which(tool) is None]
    if "motion" in knobs.families and shutil.which("motion") is None:
        missing.append("motion")
    if "http" in knobs.families:
        missing += [tool for tool in ("ustreamer", "chromium", "wrk", "curl") if shutil.which(tool) is None]
    if missing:
        raise SystemExit(f"missing: {', '.join(missing)} (make bench-deps installs them)")


# The keys of results.json each family writes.
FAMILY_KEYS = {"encode": ("encode", "content_cost", "settings_not_identical"), "overhead": ("overhead",),
               "conversion": ("conversion",), "live": ("live", "live_adaptive"), "finalize": ("finalize",),
               "decode": ("decode",), "thumbnail": ("thumbnail",), "sound": ("sound",),
               "publish": ("publish", "publish_delay"), "events": ("events",), "motion": ("motion",),
               "http": ("http",), "copy": ("copy",)}


def updated(earlier, fresh, families):
    """The earlier results with the families just run replaced, and the update recorded."""
    for family in families:
        for key in FAMILY_KEYS[family]:
            if key in fresh:
                earlier[key] = fresh[key]
    earlier.setdefault("updates", []).append({
        "families": list(families), "generated": fresh["generated"], "knobs": fresh["knobs"],
        "vtrecord": fresh["machine"]["versions"]["vtrecord"],
        "load_average_at_start": fresh["machine"]["load_average_at_start"],
        "load_average_at_end": fresh["machine"]["load_average_at_end"],
    })
    return earlier


def main():
    knobs = Knobs.from_environment()
    check_tools(knobs)
    knobs.work.mkdir(parents=True, exist_ok=True)
    results = {
        "schema": 1,
        "generated": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "knobs": {"quick": knobs.quick, "runs": knobs.runs, "frames": knobs.frames,
                  "live_seconds": knobs.live_seconds, "noise": knobs.noise, "families": list(knobs.families)},
        "machine": machine_facts(knobs),
        "inputs": {"how_made": media.describe(knobs.noise),
                   "graphs": {f"{content} {size}": media.graph(content, *media.SIZES[size], knobs.noise)
                              for content in ("synthetic", "camera-like") for size in media.SIZES}},
    }
    contents = ("synthetic", "camera-like")
    try:
        if "encode" in knobs.families or "decode" in knobs.families:
            clips = {(content, size): media.make_clip(content, size, knobs.frames, knobs.noise, knobs.work)
                     for content in contents for size in media.SIZES
                     if "encode" in knobs.families or content == "camera-like"}
        if "encode" in knobs.families:
            results["encode"] = encode.bench(knobs, clips)
            results["content_cost"] = encode.content_cost(results["encode"])
            results["settings_not_identical"] = encode.known_differences()
        if "overhead" in knobs.families:
            results["overhead"] = overhead.bench(knobs)
        if "conversion" in knobs.families:
            pictures = {content: media.make_picture(content, "1080p", knobs.noise, knobs.work) for content in contents}
            results["conversion"] = conversion.bench(knobs, pictures)
        if "live" in knobs.families:
            results["live"] = live.bench(knobs)
            results["live_adaptive"] = live.adaptive_bench(knobs)
        if "finalize" in knobs.families:
            results["finalize"] = finalize.bench(knobs)
        if "decode" in knobs.families:
            results["decode"] = decode.bench(knobs, clips)
        if "thumbnail" in knobs.families:
            results["thumbnail"] = thumbnail.bench(knobs)
        if "sound" in knobs.families:
            results["sound"] = sound.bench(knobs)
        if "publish" in knobs.families:
            results["publish"] = publish.bench(knobs)
            results["publish_delay"] = publish_delay.bench(knobs)
        if "events" in knobs.families:
            results["events"] = events.bench(knobs)
        if "motion" in knobs.families:
            results["motion"] = motion.bench(knobs)
        if "http" in knobs.families:
            results["http"] = httpview.bench(knobs)
        if "copy" in knobs.families:
            results["copy"] = camera_copy.bench(knobs)
    except ToolFailed as failure:
        print(f"bench: {failure}", file=sys.stderr)
        return 1
    finally:
        if not knobs.keep:
            shutil.rmtree(knobs.work, ignore_errors=True)

    results["machine"]["load_average_at_end"] = os.getloadavg()
    knobs.out.parent.mkdir(parents=True, exist_ok=True)
    json_path = knobs.out.with_suffix(".json")
    if knobs.update and json_path.exists():
        results = updated(json.loads(json_path.read_text()), results, knobs.families)
    results["targets"] = report.targets(results)
    json_path.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    png_path = knobs.out.with_suffix(".png")
    report.print_tables(results)
    if report.chart(results, png_path):
        note(f"wrote {json_path.relative_to(ROOT)} and {png_path.relative_to(ROOT)}")
    else:
        note(f"wrote {json_path.relative_to(ROOT)} (no encode results, no chart)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
