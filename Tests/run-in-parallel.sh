#!/usr/bin/env bash
# Runs the built test suite as several `swift test` processes at once, one per argument (each
# a quoted list of swift test options, such as "--filter CameraRecordingTests"), and fails if
# any fails. Swift Testing runs as many tests at once as the machine has cores, and a test that
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
  options=${!index}
  # shellcheck disable=SC2086 # the options are words, split on purpose
  swift test --skip-build --ignore-lock $options >"$logs/$index.log" 2>&1 &
  pids+=("$!")
done
status=0
for index in $(seq 1 $#); do
  wait "${pids[$((index - 1))]}" || status=1
  echo "=== swift test ${!index}"
  cat "$logs/$index.log"
done
if [ $status -ne 0 ]; then echo "=== a part of the test suite failed (above)"; fi
exit $status
