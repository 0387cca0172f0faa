"""Overhead outside x264: instructions executed outside libx264 as a share of all instructions,
counted by callgrind (repeatable on a noisy machine, unlike time), for vtrecord and, as the
yardstick, the x264 CLI on the same clip with the same settings.

The clip is short and runs with one thread to keep valgrind quick: 30 pictures of 720p at
ultrafast, where x264 does the least work per picture, so whatever vtrecord spends around it
(start-up, reading the input, writing the output) weighs the most. The same run at twice the
length gives, from the difference, the share per picture once the process is going.
"""

import re
import shutil
from collections import defaultdict

import media
from common import ToolFailed, measure, note, run

FRAMES = 30
SPEED = "ultrafast"
LIBX264 = re.compile(r"/libx264\.so")
# "ob=(7) /usr/lib/…/libx264.so.164" the first time a name is used, "ob=(7)" after that; the
# numbers are shared with cob= and cfn= (a call's callee), which may be where a name first appears.
NAMED = re.compile(r"^(c?)(ob|fn)=\((\d+)\)(?: (.*))?$")


def instructions_by_object(profile):
    """Self instructions (Ir) per ELF object, the total, and the costliest functions, read from
    callgrind's own output file: callgrind_annotate names the object of a function only where
    it lacks debug information, so its text cannot be summed by object reliably.

    In the file, `ob=` and `fn=` set the object and function the following cost lines belong
    to; the cost line right after a `calls=` line is the inclusive cost of that call, which
    belongs to the callee and is skipped."""
    names = {"ob": {}, "fn": {}}
    current = {"ob": "?", "fn": "?"}
    positions = 1
    total = None
    objects = defaultdict(int)
    functions = defaultdict(int)
    after_call = False
    with open(profile, encoding="utf-8", errors="replace") as lines:
        for line in lines:
            line = line.rstrip("\n")
            if line.startswith("positions:"):
                positions = len(line.split()) - 1
            elif line.startswith(("summary:", "totals:")) and total is None:
                total = int(line.split()[1])
            elif m := NAMED.match(line):
                callee, kind, number, name = m.groups()
                if name is not None:
                    names[kind][number] = name
                if not callee:
                    current[kind] = names[kind].get(number, f"({number})")
            elif line.startswith("calls="):
                after_call = True
            elif line[:1].isdigit() or line[:1] in "+-*":
                if after_call:
                    after_call = False
                    continue
                fields = line.split()
                count = int(fields[positions]) if len(fields) > positions else 0
                objects[current["ob"]] += count
                functions[(current["fn"], current["ob"])] += count
    if total is None:
        raise ToolFailed(f"{profile}: no summary line")
    counted = sum(objects.values())
    if counted != total:
        raise ToolFailed(f"{profile}: self costs add up to {counted}, the summary says {total}")
    ranked = sorted(((count, fn, ob) for (fn, ob), count in functions.items()), reverse=True)
    return total, dict(objects), ranked


def profile(knobs, name, argv):
    out = knobs.work / f"callgrind-{name}.out"
    log = knobs.work / f"callgrind-{name}.log"
    measure(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *argv], log)
    total, objects, functions = instructions_by_object(out)
    x264 = sum(count for obj, count in objects.items() if LIBX264.search(obj))
    if x264 == 0:
        raise ToolFailed(f"{name}: no instructions in libx264 (is x264 linked statically?)")
    outside = [f for f in functions if not LIBX264.search(f[2])]
    return {
        "instructions": total,
        "instructions_in_libx264": x264,
        "outside_libx264_percent": 100.0 * (total - x264) / total,
        "by_object": {obj: count for obj, count in sorted(objects.items(), key=lambda kv: -kv[1])},
        "top_outside_functions": [{"instructions": c, "function": f, "object": o} for c, f, o in outside[:10]],
    }


def marginal(short, long):
    """The share outside libx264 of the instructions the extra pictures of the longer run cost:
    vtrecord's steady state per picture, without the one-off cost of starting a process."""
    total = long["instructions"] - short["instructions"]
    x264 = long["instructions_in_libx264"] - short["instructions_in_libx264"]
    return 100.0 * (total - x264) / total


def commands(binary, clip, frames, output):
    vtrecord = [binary, "--input", clip, "--frames", frames, "-o", output, "--overwrite", "--quiet",
                "--encoder", "x264", "--speed", SPEED, "--threads", 1, "--keyint", 60]
    x264 = ["x264", "--quiet", "--preset", SPEED, "--threads", 1, "--keyint", 60, "--frames", frames,
            "-o", output, clip]
    return {"vtrecord": vtrecord, "x264_cli": x264}


def bench(knobs):
    # valgrind 3.19 gives up on the DWARF 5 debug information the Swift toolchain writes; a
    # copy without it keeps its symbols, and the instructions are the same.
    binary = knobs.work / "vtrecord-nodebug"
    shutil.copyfile(knobs.vtrecord, binary)
    run(["objcopy", "--strip-debug", binary])
    binary.chmod(0o755)
    output = knobs.work / "callgrind.h264"
    results = []
    for content in ("synthetic", "camera-like"):
        # Clips of their own, whatever FRAMES is: twice the length, for the steady-state share.
        clip = media.make_clip(content, "720p", 2 * FRAMES, knobs.noise, knobs.work)
        note(f"callgrind: {content} 720p, {FRAMES} and {2 * FRAMES} frames, {SPEED}, one thread")
        entry = {"content": content, "size": "720p", "frames": FRAMES, "speed": SPEED, "threads": 1}
        for program in ("vtrecord", "x264_cli"):
            short = profile(knobs, f"{program}-{content}-{FRAMES}", commands(binary, clip, FRAMES, output)[program])
            long = profile(knobs, f"{program}-{content}-{2 * FRAMES}",
                           commands(binary, clip, 2 * FRAMES, output)[program])
            entry[program] = {**short, "steady_state_outside_libx264_percent": marginal(short, long)}
        output.unlink()
        clip.unlink()
        results.append(entry)
    return results
