#!/usr/bin/env bash
# Runs the built test suite (the Swift Testing bundle SwiftPM builds) as processes in lanes
# side by side, in stages.
#
#   run-in-parallel.sh LANE... [-- LANE...]...
#
# Each LANE is one quoted argument: a list of the options `swift test` passes on (such as
# "--filter CameraRecordingTests"), or several such lists separated by " ; ", run one after
# the other. The lanes between two `--` run at once, and a stage starts when the one before it
# has ended. The script fails if any process fails, and ends with the list of what failed, so
# the last lines of a long log say which test to look at.
#
# Swift Testing runs as many tests at once as the machine has cores, and a test that waits for
# a child process (a real-time recording) holds its place while the CPU idles: lanes side by
# side let a long serialized suite wait beside the rest instead of in its turn. A stage of one
# lane has the machine to itself, for the tests that must.
# Each process's output is kept in a file and printed whole once its lane ends, so the log of
# one never interleaves with another's.
# The bundle is run as `swift test --skip-build` runs it, without SwiftPM in front: each swift
# test loads the package and opens the build's database first, seconds of work on a busy
# machine, and two opening the database at once found it locked and ran no test.
set -u
cd "$(dirname "$0")/.."
# TEST_BIN_PATH: the build's products folder (the Makefile's test build); else the debug build's.
bundle=${TEST_BIN_PATH:-$(swift build --show-bin-path)}/vtrecordPackageTests.xctest
[ -x "$bundle" ] || { echo "no test bundle at $bundle: build it first (make test does)"; exit 1; }
# Every test in exactly one lane step: a test in two would run beside itself (or beside what it
# must not run beside), and a test in none would never run.
/usr/bin/env python3 "$(dirname "$0")/lane-check.py" "$bundle" "$@" || {
  echo "the lanes above select a test twice or not at all: mend TEST_LANES in the Makefile"; exit 1; }
# TEST_LOGS_DIR keeps every process's log and event stream there (for a closer look at where
# the time went); by default they are removed at the end.
if [ -n "${TEST_LOGS_DIR:-}" ]; then
  logs=$TEST_LOGS_DIR; mkdir -p "$logs" && rm -f "$logs"/*.events "$logs"/*.log "$logs"/*.code "$logs"/*.name
else
  logs=$(mktemp -d)
  trap 'rm -rf "$logs"' EXIT
fi
status=0
failed=()
lane_count=0

# One lane: its option lists in turn. Writes each one's output to $logs/LANE.N.log and its
# exit code to $logs/LANE.N.code.
run_lane() {
  local lane=$1 text=$2 step=0 options code
  while [ -n "$text" ]; do
    options=${text%% ; *}
    if [ "$options" = "$text" ]; then text=""; else text=${text#* ; }; fi
    step=$((step + 1))
    code=0
    local began=$SECONDS
    # shellcheck disable=SC2086 # the options are words, split on purpose
    NO_COLOR=1 "$bundle" --testing-library swift-testing $options \
      --event-stream-output-path "$logs/$lane.$step.events" --event-stream-version 0 \
      >"$logs/$lane.$step.log" 2>&1 || code=$?
    echo "$options ($((SECONDS - began)) s)" >"$logs/$lane.$step.name"
    echo $code >"$logs/$lane.$step.code"
  done
}

run_stage() {
  local pids=() lanes=() lane text
  for text in "$@"; do
    lane_count=$((lane_count + 1))
    run_lane $lane_count "$text" &
    pids+=("$!")
    lanes+=($lane_count)
  done
  local at
  for at in "${!pids[@]}"; do
    wait "${pids[$at]}"
    lane=${lanes[$at]}
    local step=1
    while [ -f "$logs/$lane.$step.code" ]; do
      local name code
      name=$(cat "$logs/$lane.$step.name")
      code=$(cat "$logs/$lane.$step.code")
      echo "=== tests $name"
      cat "$logs/$lane.$step.log"
      if [ "$code" -ne 0 ]; then
        status=1
        failed+=("tests $name (exit $code):")
        local line
        while IFS= read -r line; do failed+=("  $line"); done < <(
          grep -E '^✘ Test .*(recorded an issue|failed after)|^error: |Fatal error|unexpected signal' \
            "$logs/$lane.$step.log" | cut -c1-400)
      fi
      step=$((step + 1))
    done
  done
}

stage=()
for argument in "$@"; do
  if [ "$argument" = "--" ]; then
    [ ${#stage[@]} -gt 0 ] && run_stage "${stage[@]}"
    stage=()
  else
    stage+=("$argument")
  fi
done
[ ${#stage[@]} -gt 0 ] && run_stage "${stage[@]}"

# The tests that took longest in their cases, from each process's event stream:
# the critical path of the next change to the lanes.
echo "=== the slowest tests (seconds in their cases, summed; lane.step)"
/usr/bin/env python3 "$(dirname "$0")/slowest-tests.py" "$logs" 15 || true

if [ $status -ne 0 ]; then
  echo "=== the test suite failed:"
  printf '%s\n' "${failed[@]}"
fi
exit $status
