"""What every benchmark family shares: the knobs, running a tool and checking that it worked,
measuring a child's time and memory, and medians.

A tool that fails stops the bench with its command and the end of its output: a failed encode
must never be counted as a fast one.
"""

import dataclasses
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FAMILIES = ("encode", "overhead", "conversion", "live", "finalize", "decode", "thumbnail", "sound", "publish",
            "events", "motion", "http", "copy")


@dataclasses.dataclass(frozen=True)
class Knobs:
    """Settings from the environment (make bench passes its variables through)."""

    quick: bool
    runs: int
    frames: int
    live_seconds: int
    noise: int
    families: tuple
    vtrecord: Path
    bench_tool: Path
    work: Path
    out: Path
    keep: bool
    update: bool

    @staticmethod
    def from_environment():
        env = os.environ
        quick = env.get("QUICK", "") not in ("", "0")
        # A smoke run proves the harness end to end in a few minutes; its figures mean little.
        runs = int(env.get("RUNS") or (1 if quick else 5))
        frames = int(env.get("FRAMES") or (30 if quick else 300))
        live_seconds = int(env.get("DURATION") or (5 if quick else 60))
        families = tuple((env.get("FAMILIES") or ",".join(FAMILIES)).split(","))
        unknown = set(families) - set(FAMILIES)
        if unknown:
            raise SystemExit(f"FAMILIES: unknown {', '.join(sorted(unknown))}")
        if runs < 1 or frames < 10 or live_seconds < 3:
            raise SystemExit("RUNS must be at least 1, FRAMES at least 10, DURATION at least 3")
        # Smoke results go beside, not over, the figures committed from a full run.
        default_out = "bench/quick-results" if quick else "bench/results"
        return Knobs(
            quick=quick,
            runs=runs,
            frames=frames,
            live_seconds=live_seconds,
            noise=int(env.get("NOISE") or 8),
            families=families,
            vtrecord=ROOT / (env.get("BIN") or ".build/release/vtrecord"),
            bench_tool=ROOT / (env.get("BENCH_BIN") or ".build/release/vtrecord-bench"),
            work=ROOT / "bench/tmp",
            out=ROOT / (env.get("OUT") or default_out),
            keep=env.get("KEEP", "") not in ("", "0"),
            update=env.get("UPDATE", "") not in ("", "0"),
        )


class ToolFailed(Exception):
    """A program the bench ran did not do what it was asked."""


def tail(path_or_text, lines=15):
    text = path_or_text.read_text(errors="replace") if isinstance(path_or_text, Path) else path_or_text
    return "\n".join(text.rstrip().splitlines()[-lines:])


def run(argv, env=None, timeout=900):
    """Runs a helper (input maker, decoder, probe) to completion; its standard output as text.
    Any exit status but 0 stops the bench."""
    result = subprocess.run([str(a) for a in argv], stdin=subprocess.DEVNULL, capture_output=True,
                            env=env, timeout=timeout)
    if result.returncode != 0:
        raise ToolFailed(f"{' '.join(map(str, argv))}: exit {result.returncode}\n"
                         f"{tail(result.stderr.decode(errors='replace'))}")
    return result.stdout.decode(errors="replace")


@dataclasses.dataclass(frozen=True)
class Usage:
    """What one child process cost: wall seconds, CPU seconds and peak resident memory."""

    wall: float
    user: float
    system: float
    max_rss_kib: int

    @property
    def cpu(self):
        return self.user + self.system


def spawn(argv, log, env=None, stdout=os.devnull):
    """Starts a measured child with no input, standard output to `stdout` and standard error to
    `log`. posix_spawn and wait4 (not subprocess) so the child's own rusage is read directly,
    as GNU time reads it."""
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, str(stdout), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644),
        (os.POSIX_SPAWN_OPEN, 2, str(log), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644),
    ]
    argv = [str(a) for a in argv]
    return os.posix_spawnp(argv[0], argv, os.environ if env is None else env, file_actions=actions)


def finish(pid, argv, log, started, block=True):
    """Reaps a spawned child: its Usage, or None while it still runs (block=False). A non-zero
    exit or a signal stops the bench."""
    waited, status, rusage = os.wait4(pid, 0 if block else os.WNOHANG)
    if waited == 0:
        return None
    wall = time.monotonic() - started
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise ToolFailed(f"{' '.join(map(str, argv))}: exit {code}\n{tail(Path(log))}")
    return Usage(wall=wall, user=rusage.ru_utime, system=rusage.ru_stime, max_rss_kib=rusage.ru_maxrss)


def measure(argv, log, env=None, stdout=os.devnull):
    """Runs one measured child to completion."""
    started = time.monotonic()
    pid = spawn(argv, log, env=env, stdout=stdout)
    return finish(pid, argv, log, started)


def median(values):
    return statistics.median(values)


def geometric_mean(values):
    values = list(values)
    return math.exp(sum(math.log(v) for v in values) / len(values))


def note(text):
    """Progress on standard error, so the table on standard output stays clean."""
    print(text, file=sys.stderr, flush=True)
