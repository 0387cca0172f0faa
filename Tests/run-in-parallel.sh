#!/usr/bin/env bash
# Runs the built test suite as several `swift test` processes at once, one per argument (each
# a quoted list of swift test options, such as "--filter CameraRecordingTests"), and fails if
# any fails. An argument may hold several lists separated by " ; ": they run one after the
# other in that place (a short part, then another that fills the time the longer ones take).
# A list that starts "nice N: " runs at that niceness. Swift Testing runs as many tests at once as the machine has cores, and a test that
# waits for a child process (a real-time recording) holds its place while the CPU idles: two
# processes let the long serialized camera suite wait beside the rest instead of in its turn.
# Each process's output is kept in a file and printed whole once it ends, so the log of one
# never interleaves with another's.
# --ignore-lock: the build is done; without it each swift test waits for the others to end.
set -u
cd "$(dirname "$0")/.."
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
pids=()
for index in $(seq 1 $#); do
  lane=${!index}
  (
    status=0
    while [ -n "$lane" ]; do
      options=${lane%% ; *}
      [ "$options" = "$lane" ] && lane="" || lane=${lane#* ; }
      # "nice N: options": at a lower priority, so that it takes what the real-time parts
      # leave of the cores rather than a share of what they need.
      niceness=0
      if [[ $options =~ ^nice\ ([0-9]+):\ (.*)$ ]]; then niceness=${BASH_REMATCH[1]}; options=${BASH_REMATCH[2]}; fi
      echo "--- swift test $options (nice $niceness)"
      # shellcheck disable=SC2086 # the options are words, split on purpose
      nice -n "$niceness" swift test --skip-build --ignore-lock $options || status=1
    done
    exit $status
  ) >"$logs/$index.log" 2>&1 &
  pids+=("$!")
  # The next starts once this one runs its tests: two SwiftPMs opening the build database at
  # the same moment make one fail ("database is locked") and then find no tests at all.
  for _ in $(seq 1 600); do
    grep -q "Test Suite\|Test run started" "$logs/$index.log" 2>/dev/null && break
    kill -0 "$!" 2>/dev/null || break
    sleep 0.2
  done
done
status=0
for index in $(seq 1 $#); do
  wait "${pids[$((index - 1))]}" || status=1
  echo "=== swift test ${!index}"
  cat "$logs/$index.log"
done
if [ $status -ne 0 ]; then echo "=== a part of the test suite failed (above)"; fi
exit $status
