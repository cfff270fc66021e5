#!/usr/bin/env bash
# instruction-counts: the microbenchmarks' workloads (Benchmarks/Sources/MicroWorkloads) counted
# in instructions under valgrind, for machines without a hardware instruction counter (perf
# says "not supported" on this project's). Run through `scripts/microbenchmarks.sh instructions`.
#   scripts/instruction-counts.sh           count, compare with the record; exit 1 if one is 10 % more
#   scripts/instruction-counts.sh update    count and write the record (commit it)
# Each workload runs twice under cachegrind (no cache simulation): prepared and warmed, then 0 and
# then 50 iterations; the difference over 50 is its instructions per iteration, so the process's
# start and the preparation cancel out. Swift's hashing is made deterministic for the count.
# The record: Benchmarks/.benchmarkBaselines/MediaDevicesMicro/instructions.tsv (name, count),
# after a line naming the SIMD extensions the CPU offered: libyuv, libjpeg-turbo, soxr and WebRTC
# pick their code by them, so a count is only comparable on a CPU with the same ones (valgrind
# 3.19 offers at most AVX2 whatever the CPU has). On another, the check fails and says so.
set -euo pipefail
cd "$(dirname "$0")/../Benchmarks"
. ../scripts/swift-environment.sh  # the toolchain on PATH, the same environment for SwiftPM in every script
record=.benchmarkBaselines/MediaDevicesMicro/instructions.tsv
iterations=50 threshold=10
mode=${1:-check}
case "$mode" in check|update) ;; *) sed -n '2,6p' "$0" >&2; exit 2 ;; esac
command -v valgrind >/dev/null || { echo "instruction-counts: valgrind is missing (scripts/install.sh installs it)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if ! swift build -c release --product InstructionCounts >"$work/build.txt" 2>&1; then
    cat "$work/build.txt" >&2; echo "instruction-counts: InstructionCounts did not build" >&2; exit 1
fi
grep -v -E "^\[[0-9]+/[0-9]+\]|^warning: prohibited flag" "$work/build.txt" || true
binary="$(swift build -c release --show-bin-path)/InstructionCounts"
[ -x "$binary" ] || { echo "instruction-counts: the build made no $binary" >&2; exit 1; }
# Valgrind 3.19 cannot read the DWARF 5 Swift 6 writes ("Possibly corrupted debuginfo file"):
# it counts a copy without the debug sections.
strip --strip-debug -o "$work/InstructionCounts" "$binary"

# The SIMD extensions valgrind passes on to the program (it has none past AVX2).
features="# x86 features: $(grep -o -w -E 'ssse3|sse4_1|sse4_2|avx|avx2|fma|bmi2|f16c' /proc/cpuinfo | sort -u | tr '\n' ' ' | sed 's/ $//')"

# The instructions valgrind counted for one run of the workload $1 with $2 iterations.
count() {
    local out="$work/valgrind.txt"
    if ! SWIFT_DETERMINISTIC_HASHING=1 valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
            "$work/InstructionCounts" "$1" "$2" </dev/null >"$out" 2>&1; then
        echo "instruction-counts: '$1' failed under valgrind:" >&2; tail -n 20 "$out" >&2; return 1
    fi
    grep -E "I +refs:" "$out" | sed -E 's/.*I +refs: *//; s/,//g'
}

"$work/InstructionCounts" --list >"$work/names"
[ -s "$work/names" ] || { echo "instruction-counts: no workloads listed" >&2; exit 1; }
: >"$work/counts.tsv"
while IFS= read -r name; do
    base=$(count "$name" 0) && more=$(count "$name" "$iterations") || exit 1
    printf '%s\t%s\n' "$name" $(( (more - base) / iterations )) >>"$work/counts.tsv"
done <"$work/names"

if [ "$mode" = update ]; then
    { echo "$features"; cat "$work/counts.tsv"; } >"$record"
    column -t -s $'\t' "$work/counts.tsv"
    echo "instruction-counts: $record written; commit it"
    exit 0
fi
[ -f "$record" ] || { echo "instruction-counts: no record at Benchmarks/$record (scripts/microbenchmarks.sh instructions update)" >&2; exit 1; }
recorded_features=$(head -n 1 "$record")
if [ "$recorded_features" != "$features" ]; then
    echo "instruction-counts: the record was made on a CPU offering other SIMD extensions, so its counts are not this CPU's:" >&2
    echo "  recorded: ${recorded_features#\# }" >&2
    echo "  here:     ${features#\# }" >&2
    echo "  (on this kind of machine, record anew: scripts/microbenchmarks.sh instructions update)" >&2
    exit 1
fi
# name, recorded, now, now/recorded, verdict; a workload missing from either side fails too.
printf '%-58s %12s %12s %7s\n' "instructions per iteration" recorded now ratio
status=0
awk -F '\t' -v threshold="$threshold" '
    NR == FNR { recorded[$1] = $2; next }
    { seen[$1] = 1
      if (!($1 in recorded)) { printf "%-58s %12s %12d %7s  NOT RECORDED\n", $1, "-", $2, "-"; failed = 1; next }
      ratio = $2 / recorded[$1]
      verdict = ratio > 1 + threshold / 100 ? "REGRESSION" : (ratio < 1 - threshold / 100 ? "fewer: update the record" : "ok")
      if (verdict == "REGRESSION") failed = 1
      printf "%-58s %12d %12d %6.3fx  %s\n", $1, recorded[$1], $2, ratio, verdict }
    END { for (name in recorded) if (!(name in seen)) { printf "%-58s %12d %12s %7s  NO LONGER RUN\n", name, recorded[name], "-", "-"; failed = 1 }
          exit failed }
' <(tail -n +2 "$record") "$work/counts.tsv" || status=$?
if [ "$status" = 0 ]; then
    echo "instruction-counts: no workload more than $threshold % above its recorded count"
else
    echo "instruction-counts: REGRESSION: a workload is more than $threshold % above its recorded count, or is new or gone (the table above; after a change meant to cost more: scripts/microbenchmarks.sh instructions update)" >&2
    exit 1
fi
