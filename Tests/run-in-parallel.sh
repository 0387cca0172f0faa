#!/usr/bin/env bash
# Runs the built test suite as `swift test` processes in lanes side by side, in stages.
#
#   run-in-parallel.sh LANE... [-- LANE...]...
#
# Each LANE is one quoted argument: a list of swift test options (such as "--filter
# CameraRecordingTests"), or several such lists separated by " ; ", run one after the other.
# A list may begin with "--nice N": that process (and every recording it starts) runs at that
# nice value, so it takes the cores only while the lanes at 0 do not want them. The lanes
# between two `--` run at once, and a stage starts when the one before it has ended. The
# script fails if any process fails, and ends with the list of what failed, so the last lines
# of a long log say which test to look at.
#
# Swift Testing runs as many tests at once as the machine has cores, and a test that waits for
# a child process (a real-time recording) holds its place while the CPU idles: lanes side by
# side let a long serialized suite wait beside the rest instead of in its turn. A stage of one
# lane has the machine to itself, for the tests that must.
# Each process's output is kept in a file and printed whole once its lane ends, so the log of
# one never interleaves with another's.
# --ignore-lock: the build is done; without it each swift test waits for the others to end.
# The lanes' runs start one at a time, each once the one before has begun its tests: each swift
# test opens the build's database to find the test bundle, and two opening it at once found it
# locked ("no tests found"), even 3 s apart.
set -u
cd "$(dirname "$0")/.."
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
status=0
failed=()
lane_count=0

# One lane: its option lists in turn. Writes each one's output to $logs/LANE.N.log and its
# exit code to $logs/LANE.N.code.
run_lane() {
  local lane=$1 text=$2 step=0 options nice code pid log
  exec 9>>"$logs/start.lock"
  while [ -n "$text" ]; do
    options=${text%% ; *}
    if [ "$options" = "$text" ]; then text=""; else text=${text#* ; }; fi
    step=$((step + 1))
    nice=0
    if [[ $options == --nice\ * ]]; then
      options=${options#--nice }
      nice=${options%% *}
      options=${options#* }
    fi
    log="$logs/$lane.$step.log"
    code=0
    for attempt in 1 2; do
      # One swift test at a time finds its tests: the next starts once this one's have begun.
      flock 9
      # shellcheck disable=SC2086 # the options are words, split on purpose
      nice -n "$nice" swift test --skip-build --ignore-lock $options >"$log" 2>&1 &
      pid=$!
      for _ in $(seq 1 900); do
        grep -qE "Test run started|^Test Suite '" "$log" && break
        kill -0 $pid 2>/dev/null || break
        sleep 0.2
      done
      flock -u 9
      code=0
      wait $pid || code=$?
      # Should the build database be locked all the same, the run found no test: once more.
      [ $code -ne 0 ] && grep -q "database is locked" "$log" && [ $attempt -eq 1 ] && continue
      break
    done
    echo "$nice $options" >"$logs/$lane.$step.name"
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
      echo "=== swift test ${name#* } (nice ${name%% *})"
      cat "$logs/$lane.$step.log"
      if [ "$code" -ne 0 ]; then
        status=1
        failed+=("swift test ${name#* } (exit $code):")
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

if [ $status -ne 0 ]; then
  echo "=== the test suite failed:"
  printf '%s\n' "${failed[@]}"
fi
exit $status
