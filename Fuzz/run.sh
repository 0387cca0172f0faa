#!/usr/bin/env bash
# Runs each libFuzzer target of Fuzz/ for FUZZ_SECONDS (default 120), one after the other,
# and prints one line per target: inputs tried, corpus size, crashes. Exits 1 when any target
# crashed, hung or leaked; the inputs are in Fuzz/artifacts/. `make fuzz` builds and calls it.
#
#   Fuzz/run.sh [TARGET…]          (default: every target)
#   FUZZ_SECONDS=3600 Fuzz/run.sh FuzzSPS
set -uo pipefail
cd "$(dirname "$0")/.."

seconds="${FUZZ_SECONDS:-120}"
bin="${FUZZ_BIN:-.build-fuzz/release}"
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(FuzzAnnexB FuzzAVCC FuzzSPS FuzzPPS FuzzAVCDecoderConfiguration FuzzInspect FuzzAccessUnits FuzzContainers FuzzY4M FuzzPreset)

mkdir -p Fuzz/artifacts Fuzz/logs
# Swift's crash backtracer reads the dying process's memory in ways AddressSanitizer reports
# as a crash of its own, hiding the precondition message that says what broke.
export SWIFT_BACKTRACE=enable=no
export LSAN_OPTIONS="suppressions=$PWD/Tests/Sanitizers/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
failed=0
printf '%-30s %12s %8s %8s\n' target inputs corpus crashes
for target in "${targets[@]}"; do
    corpus="Fuzz/corpus/$target"
    mkdir -p "$corpus"
    extra=()
    # More seeds, read but never written to: the shipped presets.
    [ "$target" = FuzzPreset ] && extra+=(presets)
    dict=()
    [ -f "Fuzz/dictionaries/$target.dict" ] && dict=(-dict="Fuzz/dictionaries/$target.dict")
    # TOMLKit leaks on every document (see Tests/Sanitizers/lsan.supp), which would make
    # libFuzzer scan for leaks after nearly every input; leaks are still checked at exit.
    leaks=()
    [ "$target" = FuzzPreset ] && leaks=(-detect_leaks=0)
    log="Fuzz/logs/$target.log"
    before=$(find Fuzz/artifacts -name "$target-*" | wc -l)
    # -timeout: an input that runs 10 s is a hang; -rss_limit_mb: the Y4M reader may be told
    # to allocate a 16384x16384 picture, which is allowed, but not much more.
    "$bin/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
        -artifact_prefix="Fuzz/artifacts/$target-" "${dict[@]}" "${leaks[@]}" "$corpus" "${extra[@]}" >"$log" 2>&1
    status=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    after=$(find Fuzz/artifacts -name "$target-*" | wc -l)
    printf '%-30s %12s %8s %8s\n' "$target" "${runs:-?}" "$(find "$corpus" -type f | wc -l)" "$((after - before))"
    if [ $status -ne 0 ]; then
        failed=1
        echo "  $target exited $status; see $log:"
        grep -E 'ERROR|Fatal error|failed:|SUMMARY|Test unit written' "$log" | head -5 | sed 's/^/    /'
    fi
done
exit $failed
