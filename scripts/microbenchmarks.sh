#!/usr/bin/env bash
# microbenchmarks: runs the microbenchmarks of Benchmarks/ (their own package, on ordo-one's
# package-benchmark, through the library's public API) and checks them against the baselines
# checked in under Benchmarks/.benchmarkBaselines/MediaDevicesMicro.
#   scripts/microbenchmarks.sh              run, compare with baseline 'main'; exit 1 on a regression
#   scripts/microbenchmarks.sh allocations  allocations only, against baseline 'allocations' (CI)
#   scripts/microbenchmarks.sh update       run and record both baselines anew (commit them)
#   scripts/microbenchmarks.sh run          run and print the results, compare nothing
#   scripts/microbenchmarks.sh instructions [update]
#                                        count each workload's instructions under valgrind and
#                                        compare them with instructions.tsv (CI), or record it
# Thresholds (Benchmarks/Benchmarks/MediaDevicesMicro/MediaDevicesMicro.swift): 10 % more
# instructions at the median, or any allocation more than the baseline, fails; where the kernel
# gives no instruction counter (this project's machines) 35 % more wall clock at the 25th
# percentile fails instead (the same build moves 11-24 % between runs on a busy machine).
# 'instructions' counts them without a hardware counter: valgrind's cachegrind runs each workload
# (Benchmarks/Sources/MicroWorkloads, the same code the benchmarks run) with 0 and with 50
# iterations, and the difference over 50 is its instructions per iteration, the same from run to
# run on a busy machine; 10 % more than the recorded count fails.
# CI (scripts/test.sh) runs 'allocations' and 'instructions': both counts are exact on a busy
# machine, where wall clock is not. They are measured alone there (--metric mallocCountTotal), so against a
# baseline measured alone: with the time metrics on, package-benchmark's own 16 allocations a
# sample are counted too, and a run without them would hide up to 16 new ones.
# Builds the library in release mode into Benchmarks/.build.
set -euo pipefail
cd "$(dirname "$0")/../Benchmarks"
. ../scripts/swift-environment.sh  # the toolchain on PATH, the same environment for SwiftPM in every script
baseline=main
metrics=()
if [[ ${1:-} == instructions ]]; then exec ../scripts/instruction-counts.sh "${@:2}"; fi
if [[ ${1:-} == allocations ]]; then baseline=allocations; metrics=(--metric mallocCountTotal); set -- check; fi
case "${1:-check}" in
check)
    log=$(mktemp)
    trap 'rm -f "$log"' EXIT
    status=0
    swift package benchmark baseline check "$baseline" "${metrics[@]}" --no-progress 2>&1 | tee "$log" || status=$?
    # swift package exits 1 for any error the plugin throws; the plugin names which:
    # benchmarkThresholdRegression, or benchmarkThresholdImprovement (only improvements); its
    # message may land inside a line of the table (stderr beside stdout).
    if [ "$status" = 0 ] || grep -q 'error: benchmarkThresholdImprovement' "$log"; then
        echo "microbenchmarks: no regression against baseline '$baseline'"
    elif grep -q 'error: benchmarkThresholdRegression' "$log"; then
        echo "microbenchmarks: REGRESSION against baseline '$baseline' (see the tables above)" >&2; exit 1
    else
        echo "microbenchmarks: package-benchmark failed (exit $status)" >&2; exit 1
    fi ;;
update)
    swift package --allow-writing-to-package-directory benchmark baseline update "$baseline" --no-progress
    swift package --allow-writing-to-package-directory benchmark baseline update allocations --metric mallocCountTotal --no-progress
    echo "microbenchmarks: baselines '$baseline' and 'allocations' updated under Benchmarks/.benchmarkBaselines; commit them" ;;
run)
    swift package benchmark --no-progress ;;
*)
    sed -n '2,11p' "$0" >&2; exit 2 ;;
esac
