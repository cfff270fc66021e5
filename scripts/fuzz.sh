#!/usr/bin/env bash
# fuzz: builds the libFuzzer harnesses in Fuzz/ (a separate package; the main build never sees
# them) with -sanitize=fuzzer,address and runs each for SECONDS (default 60) on its corpus.
#   scripts/fuzz.sh [SECONDS] [HARNESS...]     harnesses: fuzz-jpeg fuzz-wav fuzz-edid fuzz-format fuzz-parsing
# Seeds are Fuzz/Corpus/<harness> (committed); what libFuzzer finds grows .build-fuzz/corpus/<harness>;
# crashes land in .build-fuzz/crashes/<harness>/ (the run goes on after a crash until the time is up).
# Prints per harness: runs, cov (edges), ft (features), corpus size, crashes. Not run by CI.
# Replay one input: .build-fuzz/debug/<harness> FILE
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/swift-environment.sh  # the toolchain on PATH, the same environment for SwiftPM in every script
export SWIFT_BACKTRACE=enable=no   # the Swift backtracer hangs under libFuzzer's signal handler
seconds=${1:-60}
shift || true
harnesses=("$@")
(( ${#harnesses[@]} )) || harnesses=(fuzz-jpeg fuzz-wav fuzz-edid fuzz-format fuzz-parsing)
scratch=$PWD/.build-fuzz

echo "fuzz: building ${harnesses[*]} (debug, -sanitize=fuzzer,address)"
for harness in "${harnesses[@]}"; do
    swift build -c debug --package-path Fuzz --scratch-path "$scratch" --product "$harness" \
        -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library \
        -Xcc -fsanitize=fuzzer-no-link,address 2>&1 | grep -v "prohibited flag" | tail -n 3
done

summary=()
for harness in "${harnesses[@]}"; do
    corpus=$scratch/corpus/$harness crashes=$scratch/crashes/$harness
    mkdir -p "$corpus" "$crashes"
    log=$scratch/$harness.log
    : > "$log"
    echo "fuzz: $harness for ${seconds}s"
    start=$SECONDS runs=0
    while (( SECONDS - start < seconds )); do
        left=$(( seconds - (SECONDS - start) ))
        set +e
        # -rss_limit_mb/-malloc_limit_mb: a frame that makes the library allocate gigabytes is a finding.
        "$scratch/debug/$harness" "$corpus" "Fuzz/Corpus/$harness" -max_total_time="$left" \
            -artifact_prefix="$crashes/" -print_final_stats=1 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
            -timeout=10 -max_len=4096 >"$log.run" 2>&1
        status=$?
        set -e
        cat "$log.run" >>"$log"
        last_runs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+).*/\1/p' "$log.run" | tail -n 1)
        [[ -n $last_runs ]] || last_runs=$(sed -nE 's/^#([0-9]+).*/\1/p' "$log.run" | tail -n 1)
        runs=$(( runs + ${last_runs:-0} ))
        (( status == 0 )) && break
        grep -m1 -E "ERROR: (libFuzzer|AddressSanitizer)|Fatal error|deadly signal" "$log.run" | sed "s/^/fuzz: $harness: /" || true
    done
    rm -f "$log.run"
    last=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
    cov=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<<"$last")
    ft=$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<<"$last")
    corp=$(find "$corpus" -type f | wc -l)
    found=$(find "$crashes" -type f \( -name 'crash-*' -o -name 'oom-*' -o -name 'timeout-*' -o -name 'leak-*' \) | wc -l)
    summary+=("$(printf '%-13s runs %-9s cov %-5s ft %-6s corpus %-5s crashes %s' "$harness" "$runs" "${cov:-?}" "${ft:-?}" "$corp" "$found")")
done
echo "fuzz: ${seconds}s per harness"
printf '%s\n' "${summary[@]}"
