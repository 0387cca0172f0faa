"""MP4 finalization: what turning the fragmented file into a regular MP4 at the end of a
recording writes and how long it takes, for a 10-second and a 60-minute recording side by side
(the test pattern at 160x120, so the hour takes a minute to record).

Each recording runs under strace (write, pwrite64, fdatasync, with the first 16 bytes of every
buffer). Finalizing starts with the write whose buffer begins with a box size and 'moov' (the
complete movie; the fragmented one went out with 'ftyp' in the first write) and ends with the
16-byte pwrite64 that makes the first moov an mdat header. Bytes written while finalizing are
every byte written from that moov on, which should be the moov and the 16-byte header, and
nothing of the media; the time runs from the start of that write to the end of the pwrite64,
the fdatasync between them included. vtrecord starts the writeback of each fragment as it
writes it, so that wait covers little more than the last fragment.
"""

import re

from common import ToolFailed, note, run

LENGTHS = (("10 s", "10s"), ("60 min", "60m"))
QUICK_LENGTHS = (("10 s", "10s"), ("2 min", "2m"))
LINE = re.compile(r'^\d+\s+(\d+):(\d+):([\d.]+) (write|pwrite64|fdatasync)\((\d+)(?:, "((?:\\x[0-9a-f]{2})*)"(?:\.\.\.)?, (\d+)(?:, \d+)?)?\) = (-?\d+)(?: [A-Z]+ \(.*\))? <([\d.]+)>')


def top_level_boxes(path):
    boxes = []
    with open(path, "rb") as f:
        data_size = f.seek(0, 2)
        at = 0
        while at + 8 <= data_size:
            f.seek(at)
            header = f.read(16)
            size = int.from_bytes(header[:4], "big")
            if size == 1:
                size = int.from_bytes(header[8:16], "big")
            boxes.append((header[4:8].decode("latin-1"), at, size))
            if size < 8:
                break
            at += size
    return boxes


def finalization(trace_path):
    """(bytes written, seconds) from the complete moov's write to the end of the last pwrite64."""
    calls = []
    for line in open(trace_path):
        m = LINE.match(line)
        if not m:
            continue
        h, mi, s, name, fd, buffer, _, result, took = m.groups()
        start = int(h) * 3600 + int(mi) * 60 + float(s)
        head = bytes(int(x, 16) for x in re.findall(r"\\x([0-9a-f]{2})", buffer or ""))
        calls.append((name, int(fd), head, int(result), start, float(took)))
    movies = [i for i, c in enumerate(calls) if c[0] == "write" and c[2][4:8] == b"moov"]
    if not movies:
        raise ToolFailed(f"{trace_path}: no write of a complete moov")
    first = movies[-1]
    fd = calls[first][1]
    tail = [c for c in calls[first:] if c[1] == fd]
    written = sum(c[3] for c in tail if c[0] in ("write", "pwrite64") and c[3] > 0)
    last = [c for c in tail if c[0] == "pwrite64"]
    if not last:
        raise ToolFailed(f"{trace_path}: no pwrite64 after the moov")
    return written, last[-1][4] + last[-1][5] - calls[first][4]


def bench(knobs):
    rows = []
    for label, duration in (QUICK_LENGTHS if knobs.quick else LENGTHS):
        path = knobs.work / f"finalize-{duration}.mp4"
        trace = knobs.work / f"finalize-{duration}.trace"
        note(f"finalize: recording {label} of the test pattern under strace")
        run(["strace", "-f", "-tt", "-T", "-xx", "-s", "16", "-e", "trace=write,pwrite64,fdatasync",
             "-e", "signal=none", "-o", str(trace), str(knobs.vtrecord), "--test-pattern", "--size", "160x120",
             "--fps", "30", "--duration", duration, "--speed", "ultrafast", "--quiet", "--overwrite",
             "-o", str(path)], timeout=3600)
        boxes = top_level_boxes(path)
        if [b[0] for b in boxes] != ["ftyp", "mdat", "moov"]:
            raise ToolFailed(f"{path}: boxes {[b[0] for b in boxes]}, not a finalized MP4")
        written, seconds = finalization(trace)
        moov = boxes[-1][2]
        rows.append({"length": label, "file_bytes": path.stat().st_size, "moov_bytes": moov,
                     "finalize_bytes": written, "beyond_moov_bytes": written - moov,
                     "finalize_ms": round(seconds * 1000, 3)})
        note(f"finalize {label}: {written} bytes written ({moov} of them the moov) in {seconds * 1000:.2f} ms")
    return rows
