#!/usr/bin/env bash
# Encode speed of vtrecord against the x264 CLI on the same 1080p Y4M with the same settings,
# measured in one run. Prints frames per second (median of RUNS) and the ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.build/release/vtrecord}
FRAMES=${FRAMES:-300}
RUNS=${RUNS:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
input="$work/in-1080p.y4m"
ffmpeg -v error -f lavfi -i "testsrc2=size=1920x1080:rate=30" -frames:v "$FRAMES" -pix_fmt yuv420p "$input"

seconds() { # command… → wall seconds
    local start end
    start=$(date +%s.%N)
    "$@" >/dev/null 2>&1
    end=$(date +%s.%N)
    echo "$end - $start" | bc -l
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

printf '%-34s %10s %10s %7s\n' "settings (1080p, $FRAMES frames)" "vtrecord" "x264 CLI" "ratio"
for speed in ultrafast veryfast medium; do
    # Alternate the two programs so a burst of load elsewhere falls on both alike.
    : >"$work/ours"; : >"$work/theirs"
    for _ in $(seq "$RUNS"); do
        seconds "$BIN" --input "$input" -o /dev/null --quiet --speed "$speed" --keyint 60 >>"$work/ours"
        seconds x264 --quiet --preset "$speed" --keyint 60 -o /dev/null "$input" >>"$work/theirs"
    done
    ours=$(median <"$work/ours")
    theirs=$(median <"$work/theirs")
    printf '%-34s %8.1f/s %8.1f/s %6.3fx\n' "--speed $speed" \
        "$(echo "$FRAMES / $ours" | bc -l)" "$(echo "$FRAMES / $theirs" | bc -l)" "$(echo "$theirs / $ours" | bc -l)"
done
