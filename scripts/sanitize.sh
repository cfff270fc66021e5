#!/usr/bin/env bash
# sanitize: the unit tests (MediaDevicesTests) under AddressSanitizer (with LeakSanitizer) and
# ThreadSanitizer, each in its own scratch path; with `thread-rig`, the device tests (the std
# boot's classes) under ThreadSanitizer inside the rig.
#   scripts/sanitize.sh [address|thread|all|thread-rig]      (default all)   Not run by CI.
# ThreadSanitizer does not see Swift's Synchronization.Mutex on Linux (its lock is not
# instrumented): accesses that Mutex.withLock orders are reported as races. A ten-line program
# (two threads incrementing a Mutex-guarded counter) gets the same reports. Read the reports
# with that in mind: those whose both sides are inside one Mutex's withLock are not races.
# The device tests that count allocations skip under a sanitizer; timing bounds meant for a
# loaded machine can fail under TSan's slowdown (the audio tone tests, the 3 s enumeration bound).
# Under a sanitizer the test binary does not interpose malloc (Tests/AllocationCounter), so the
# allocation-counting tests skip themselves and say why. Leaks whose stack goes through XCTest
# (its test-case lists and expectations, held until exit) are suppressed: scripts/sanitize.supp.
# Logs: .build-asan/sanitize.log, .build-tsan/sanitize.log. Fails on any sanitizer report or test failure.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/swift-environment.sh  # the toolchain on PATH, the same environment for SwiftPM in every script
which=${1:-all}
status=0

run() {  # run SANITIZER SCRATCH
    local sanitizer=$1 scratch=$2
    echo "sanitize: building the tests with --sanitize=$sanitizer ($scratch)"
    swift build --build-tests --sanitize="$sanitizer" --scratch-path "$scratch" 2>&1 | grep -v "prohibited flag" | tail -n 3
    local xctest=$scratch/debug/MediaDevicesPackageTests.xctest log=$scratch/sanitize.log
    local classes
    classes=$("$xctest" --list-tests | grep '^MediaDevicesTests\.' | cut -d/ -f1 | sort -u | paste -sd, -)
    echo "sanitize: MediaDevicesTests under $sanitizer (log: $log)"
    set +e
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
    LSAN_OPTIONS=suppressions=$PWD/scripts/sanitize.supp:print_suppressions=1 \
    TSAN_OPTIONS=halt_on_error=0:second_deadlock_stack=1 \
        "$xctest" "$classes" >"$log" 2>&1
    local code=$?
    set -e
    local reports
    reports=$(grep -cE '^(==[0-9]+==ERROR: AddressSanitizer|==[0-9]+==ERROR: LeakSanitizer|WARNING: ThreadSanitizer)' "$log" || true)
    grep -E '^(SUMMARY: (Address|Thread|Leak)Sanitizer)' "$log" | sort | uniq -c || true
    grep -E '^skip: ' "$log" | sort | uniq -c || true
    echo "sanitize: $sanitizer: $(grep -E 'Executed [0-9]+ tests?' "$log" | tail -n 1 | sed 's/^[[:space:]]*//'); $reports sanitizer report(s); exit $code"
    (( code == 0 && reports == 0 )) || status=1
}

# The device tests in the rig: the guest gets TSAN_OPTIONS from a wrapper in the scratch path
# (the rig passes only MEDIADEVICES_* variables). Log: .build-tsan/sanitize-rig.log.
rig() {
    local scratch=.build-tsan
    echo "sanitize: building the tests with --sanitize=thread ($scratch)"
    swift build --build-tests --sanitize=thread --scratch-path "$scratch" 2>&1 | grep -v "prohibited flag" | tail -n 3
    local xctest=$scratch/debug/MediaDevicesPackageTests.xctest log=$scratch/sanitize-rig.log wrapper=$scratch/tsan-in-rig.sh
    printf '#!/bin/sh\nexport TSAN_OPTIONS="halt_on_error=0:second_deadlock_stack=1"\nexec "$@"\n' >"$wrapper"
    chmod +x "$wrapper"
    local classes
    classes=$("$xctest" --list-tests | grep '^DeviceTests\.' | cut -d/ -f1 | sort -u | grep -v 'VirtioTests$' | paste -sd, -)
    echo "sanitize: DeviceTests under thread in the rig (log: $log)"
    set +e
    # TSan keeps shadow memory and access history: 2 GB of guest memory ran out 53 tests in.
    scripts/rig.sh run --mem 6144 --timeout 5400 -- "$wrapper" "$xctest" "$classes" >"$log" 2>&1
    local code=$?
    set -e
    local reports
    reports=$(grep -c 'WARNING: ThreadSanitizer' "$log" || true)
    grep -E '^SUMMARY: ThreadSanitizer' "$log" | sort | uniq -c || true
    echo "sanitize: thread-rig: $(grep -E 'Executed [0-9]+ tests?' "$log" | tail -n 1 | sed 's/^[[:space:]]*//'); $reports report(s); exit $code"
    (( code == 0 && reports == 0 )) || status=1
}

[[ $which == address || $which == all ]] && run address .build-asan
[[ $which == thread || $which == all ]] && run thread .build-tsan
[[ $which == thread-rig ]] && rig
exit $status
