#!/usr/bin/env bash
# test: the whole test suite, as CI runs it (.ci/run).
#   0. one build, release (whole-module optimised) with testing enabled (suite_build in
#      scripts/swift-environment.sh): the rig, the unit tests and the API check all use it, and it is
#      the release build's check (which has broken while debug builds passed); Debian 13 builds debug;
#   1. device tests (tier 2) inside the rig, against the real kernel drivers (vivid, snd-aloop,
#      bochs, the emulated USB camera and microphone), in four boots: most classes in one
#      `--display std` boot from the start; once the host's tiers below are done (the second
#      core is free then), one after the other beside it: the "virtio" boot (`--display virtio`,
#      virtio-gpu instead of bochs), the "late" boot and the "storm" boot (the USB microphone
#      unplug storm, alone); scripts/lanes.txt says which class runs
#      in which boot, and why; a boot whose guest kernel crashes runs its unfinished classes again once;
#   2. beside them on this machine, one after another, niced (so the emulator, whose audio classes
#      run first and judge real-time round trips, keeps the CPU it needs; the console in
#      chromium is not niced, below): the public API
#      compared with its record, api/<module>.txt (scripts/api.sh check); the lab's lint (scripts/lint.sh: the
#      shell scripts checked, the Python tools of scripts/tools and their tests); the products with the
#      fewest packages built alone in Debian 12 roots (scripts/product-builds.sh); the browser
#      console built and checked over HTTP and in headless chromium (scripts/console-check.sh
#      --screenshot); the Swift blocks of README.md and docs/ (scripts/quickstarts.sh, reusing the
#      console's build of the library); the DocC documentation built with warnings as errors, for a host that serves it under /MediaDevices/, and
#      read in headless chromium (scripts/docs.sh --no-build --hosting-base-path MediaDevices --check); the microbenchmarks' allocation counts
#      against their baseline (scripts/microbenchmarks.sh allocations: any new allocation fails);
#      the console in headless chromium against a rig boot of its own
#      (scripts/console-browser.py); then the three later boots of 1;
#   3. Debian 13 (trixie): the whole package built and its host unit tests run in a Debian 13
#      root (scripts/product-builds.sh trixie: webrtc-audio-processing 1.3's AEC3, PipeWire 1.4,
#      GCC 14's headers), in a lane of its own from the start, beside the std boot: what comes
#      from the network (debootstrap, the packages; scripts/product-builds.sh --prepare trixie,
#      niced), then the build and the tests at the lowest priority (nice 19); then, in the same
#      lane, once the std boot's audio classes are done, the unit tests here (tier 1, not niced),
#      and once 2. has built the microbenchmarks, their instructions under valgrind against
#      their record (scripts/microbenchmarks.sh instructions: 10 % more fails, niced);
# and a closing line "tests: N passed, N failed", with each step's time and CPU seconds before it
# ("time: ...").
# Fails if either tier did not run, or the release build, the lint, the quick starts, a product
# build, the Debian 13 build or its unit tests, or the microbenchmarks' allocation or instruction
# check fails.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/swift-environment.sh  # the toolchain on PATH, the same environment for SwiftPM in every script

# The whole run's deadline: CI stops a run after 5,400 s and then shows none of what the second
# lane's tiers and boots printed (once a run went past it and its log said nothing of where). Every
# rig boot and every tier below is given no more than the time left before it (`remaining`), so a
# hang or a machine slower than planned ends that step with its own "ran out" line and every
# result is still printed. Measured from here, the install included; 300 s left for the report.
budget=${TEST_BUDGET:-5100}
deadline=$(( $(date +%s) + budget ))
# remaining LIMIT: LIMIT seconds, or fewer if the deadline comes first (never under 60: a step
# that starts after the deadline ends at once with its "ran out" line).
remaining() {
    local left=$(( deadline - $(date +%s) ))
    (( left < 60 )) && left=60
    (( left < $1 )) && echo "$left" || echo "$1"
}

# Everything but the browser, which the console's check needs only late, beside the device tests.
scripts/install.sh --without-browser

# Seconds since the previous call of `lap`, for the step timings printed at the end.
times=() lap_start=$(date +%s)
lap() { local now; now=$(date +%s); times+=("$1 $(( now - lap_start )) s"); lap_start=$now; }
# CPU seconds (user + system) of this shell's finished children so far (bash's `times`): with the
# wall time, each step's CPU shows what it costs the two cores it shares with the other lane.
# `children_cpu VAR` sets VAR (`times` must run in this shell itself: a subshell has no children).
children_cpu() {
    local file="${TMPDIR:-/tmp}/scripts-test-times.$BASHPID"
    times >"$file"
    printf -v "$1" '%s' "$(awk 'NR == 2 { split($1, u, /[ms]/); split($2, k, /[ms]/); printf "%d", u[1] * 60 + u[2] + k[1] * 60 + k[2] }' "$file")"
    rm -f "$file"
}

# One build for every tier on this machine and in the rig: release with testing enabled
# (suite_build, scripts/swift-environment.sh), which is also the release build's check.
echo "test: building (release, whole-module optimised, with tests: swift build ${suite_build[*]} --build-tests)"
release_status=0
swift build "${suite_build[@]}" --build-tests || release_status=$?
lap "release build with tests"
# shellcheck disable=SC2154  # build_cpu is set by children_cpu (printf -v)
{ children_cpu build_cpu; times[-1]+=" (CPU $build_cpu s)"; }
(( release_status == 0 )) || { echo "test: the release build failed (swift build ${suite_build[*]} --build-tests, status $release_status): its errors are above" >&2; exit 1; }
bin=$(swift build "${suite_build[@]}" --show-bin-path)
xctest="$bin/MediaDevicesPackageTests.xctest"
[[ -x "$xctest" ]] || { echo "test: $xctest was not built" >&2; exit 1; }
# The rig's USB devices come from the emulator of this build (it would build a debug one).
export RIG_USB_EMULATOR="$bin/usb-device-emulator"

# XCTest on Linux takes a comma-separated list of Module.Class to run.
classes() { "$xctest" --list-tests | grep "^$1\." | cut -d/ -f1 | sort -u | paste -sd, -; }
count() { "$xctest" --list-tests | grep -c "^$1\." || true; }
# Device-test classes by the rig boot they run in (std, virtio, late): scripts/lanes.txt, one
# line a class with the reason it is where it is. A class of the bundle in no boot there (or a
# listed class the bundle lacks) stops the run before anything starts: it would never run.
lanes=scripts/lanes.txt
lane_classes() { awk -v boot="$1" '!/^#/ && NF >= 2 && (boot == "" || $2 == boot) { print "DeviceTests." $1 }' "$lanes" | sort; }
device_classes() {
    "$xctest" --list-tests | grep "^DeviceTests\." | cut -d/ -f1 | sort -u | grep -xF -f <(lane_classes "$1") | paste -sd, -
}
unlisted=$(comm -23 <("$xctest" --list-tests | grep "^DeviceTests\." | cut -d/ -f1 | sort -u) <(lane_classes "" | sort -u))
doubled=$(lane_classes "" | uniq -d)
stale=$(comm -13 <("$xctest" --list-tests | grep "^DeviceTests\." | cut -d/ -f1 | sort -u) <(lane_classes "" | sort -u))
if [[ -n "$unlisted$stale$doubled" ]]; then
    [[ -z "$doubled" ]] || echo "test: classes listed more than once in $lanes (keep one line each): $(paste -sd' ' <<<"$doubled")" >&2
    [[ -z "$unlisted" ]] || echo "test: device-test classes in no boot of $lanes (add a line: CLASS std|virtio|late|storm): $(paste -sd' ' <<<"$unlisted")" >&2
    [[ -z "$stale" ]] || echo "test: classes in $lanes that the test bundle does not have (remove or rename them): $(paste -sd' ' <<<"$stale")" >&2
    exit 1
fi
# The classes whose suite finished in an XCTest log ("Test Suite 'Class' passed|failed at").
finished_classes() { grep -E "^Test Suite '[A-Za-z0-9_]+' (passed|failed) at" "$1" | sed -E "s/^Test Suite '([^']+)'.*/\1/" || true; }
# "N F": tests (test cases, not assertions) run and failed by the classes that finished in an XCTest log.
finished_counts() { scripts/xctest-counts.sh "$1"; }
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT

set +e

# A crash of the guest's kernel (Debian's; seen in 3 of 16 CI runs, always during the USB
# microphone unplug storm under two busy loops: slab corruption found in snd_ctl_open, or a
# general protection fault in __kmem_cache_alloc_node from snd_usb_endpoint_set_params) ends
# the boot. It is reported loudly, and the classes of that boot that had not finished run again
# in one new boot; a second crash fails the run.
device_run=0 device_failed=0 device_status=0 crashes=()
# device_boot NAME DISPLAY TIMEOUT [quiet]: runs the "NAME" classes (device_classes) in one rig
# boot and writes "run failed status crashed seconds cpu-seconds" to $log/boot-NAME.result (added up by
# device_results); "quiet" keeps the boot's output in $log/device-NAME.txt (printed by
# device_results) for boots that run at the same time as another.
device_boot() {
    # shellcheck disable=SC2034  # timeout is read by rig_run's eval'd command
    local name=$1 display=$2 timeout=$3 quiet=${4:-} classes status out="$log/device-$1.txt" run failed crashed=0 started
    started=$(date +%s)
    classes=$(device_classes "$name")
    [[ -n "$classes" ]] || { echo "0 0 0 0 0 0" >"$log/boot-$name.result"; return 0; }
    # rig_run LOG CLASSES: one boot, its output live (or, quiet, only in LOG); the rig's status.
    # The boot's CPU seconds (the emulator's and the USB/IP emulator's) go to LOG.cpu, counted in
    # a subshell of its own: this shell's children also take in the other lane once it ends.
    rig_run() {
        # shellcheck disable=SC2016  # expanded by the eval in rig_run's subshell
        local boot='scripts/rig.sh run --cpus "$rig_cpus" --display "$display" --timeout "$(remaining "$timeout")" -- python3 -S scripts/tools/xctest_watchdog.py --limit "$test_limit" -- "$xctest" "$2"; rig_status=$?
                    children_cpu rig_cpu; echo "$rig_cpu" >"$1.cpu"; exit $rig_status'
        if [[ -n "$quiet" ]]; then
            ( eval "$boot" ) >"$1" 2>&1
        else
            ( eval "$boot" ) 2>&1 | tee "$1"
            return "${PIPESTATUS[0]}"
        fi
    }
    echo "test: device tests, $name boot (rig: QEMU with Debian's kernel and its virtual drivers, --display $display)${quiet:+, its output below when it ends}"
    rig_run "$out" "$classes"
    status=$?
    local hung
    hung=$(sed -n 's/^watchdog:0: error: \([A-Za-z0-9_]*\)\..*/\1/p' "$out" | tail -n 1)
    if (( status == 125 )) && grep -q '^rig: the guest crashed' "$out" || { (( status == 3 )) && [[ -n "$hung" ]]; }; then
        local finished left
        finished=$(finished_classes "$out")
        # shellcheck disable=SC2001  # a prefix on every line, which ${var//} does not do
        left=$(tr , '\n' <<<"$classes" | grep -vxF -f <(sed 's/^/DeviceTests./' <<<"$finished"; echo "DeviceTests.${hung:-none}") | paste -sd, - || true)
        if (( status == 3 )); then
            # The watchdog ended a test that ran past $test_limit s: that test fails (its class
            # does not run again), the classes after it run in a new boot.
            echo "test: A TEST HUNG in the $name boot: $(grep '^watchdog:0: error: ' "$out" | tail -n 1 | cut -c20-300); $(grep -c . <<<"$finished") classes had finished;" \
                 "the $(tr , '\n' <<<"$left" | grep -c .) after it run in a new boot (once): $left" | tee -a "$out" >&2
        else
            crashed=1
            echo "test: THE GUEST KERNEL CRASHED in the $name boot (its console is in its log); $(grep -c . <<<"$finished") classes had finished;" \
                 "the $(tr , '\n' <<<"$left" | grep -c .) left run again in a new boot (once): $left" | tee -a "$out" >&2
        fi
        read -r run failed <<<"$(finished_counts "$out")"
        (( status == 3 )) && failed=$(( failed + 1 )) run=$(( run + 1 ))
        status=0
        if [[ -n "$left" ]]; then
            local rerun_run rerun_failed
            rig_run "$out.rerun" "$left"
            status=$?
            read -r rerun_run rerun_failed <<<"$(finished_counts "$out.rerun")"
            run=$(( run + rerun_run )); failed=$(( failed + rerun_failed ))
        fi
    else
        read -r run failed <<<"$(finished_counts "$out")"
        if (( status == 124 )); then
            local running
            running=$(grep -E "^Test Case '[A-Za-z0-9_.]+' (started|passed|failed)" "$out" | tail -n 1)
            local why="its $timeout s"
            (( $(date +%s) + 30 < deadline )) || why="the run's time (TEST_BUDGET, $budget s from the start: scripts/test.sh)"
            echo "test: the $name boot ran out of $why; the last test line: ${running:-none}" | tee -a "$out" >&2
        fi
    fi
    echo "$run $failed $status $crashed $(( $(date +%s) - started )) $(cat "$out.cpu" "$out.rerun.cpu" 2>/dev/null | awk '{ s += $1 } END { print s + 0 }')" >"$log/boot-$name.result"
}
# device_results NAME...: adds each boot's result to device_run, device_failed, device_status and
# crashes (printing a quiet boot's output first), with its time among the laps.
device_results() {
    local name run failed status crashed seconds cpu
    for name in "$@"; do
        [[ -n "${quiet_boots[$name]:-}" ]] && { echo "test: the $name boot's output:"; cat "$log/device-$name.txt" "$log/device-$name.txt.rerun" 2>/dev/null; }
        read -r run failed status crashed seconds cpu <"$log/boot-$name.result" 2>/dev/null || { run=0 failed=0 status=1 crashed=0 seconds=0 cpu='?'; }
        device_run=$(( device_run + run )); device_failed=$(( device_failed + failed ))
        (( status == 0 )) || device_status=$status
        (( crashed == 0 )) || crashes+=("$name")
        times+=("rig boot $name $seconds s (CPU $cpu s: the emulators')")
    done
}
declare -A quiet_boots=()
# The longest a device test may run before scripts/tools/xctest_watchdog.py ends it, saying where
# it hung (every process, the test's threads' kernel stacks, the kernel log, Swift's backtraces):
# the longest test took 181 s beside two busy loops (the Chromium one). Before, a hung test waited
# out its boot's timeout (the std boot's 4200 s, in CI once: PipeWireCaptureTests) and the log
# said nothing of where.
# shellcheck disable=SC2034  # read by rig_run's eval'd command
test_limit=600
# Each boot's guest has two virtual CPUs (the rig's default). One is faster here: measured on
# this 2-core machine (ConversionTests + CaptureTests, then + AudioLoopbackTests) as fast idle (62
# vs 65 s), faster beside a niced release build (100 vs 134 s) or two busy loops (140 vs 166 s);
# a whole idle run took 1425 s instead of 1596. But with one CPU the Swift cooperative pool has
# one thread, and five device tests that blocked it while a task of theirs had to run failed (the
# Camera portal's cancel, the soak together's camera sequence, the hotplug monitors of the USB
# camera and of the unplug storm, the leased reader on the capture thread). Their waits no longer
# block; one CPU waits for a whole run, idle and loaded, that passes with it.
# shellcheck disable=SC2034  # read by rig_run's eval'd command
rig_cpus=2
# The std boot runs ~20 minutes on an idle 2-core machine (USB devices, the soak's short form; 40 with two busy loops);
# its timeout leaves room for a machine busy with other work (about 2.5x slower measured; with two
# busy loops and every host tier beside it, 3300 s ran out in USBCameraTests once: 4200 s).
# The host's own tiers run beside the device tests (niced), one after another: the public API
# check, the lint, the products built alone, the console, the documentation's Swift blocks, the
# DocC documentation, the microbenchmarks and the console in chromium. The
# guest spends much of its time waiting for devices paced in real time, so on an idle 2-core machine
# all of them finish before the rig's std boot does (they added ~190 s when run before it).
echo "test: beside the device tests: the public API check (scripts/api.sh check --no-build), the lab's lint (scripts/lint.sh), the products built alone (scripts/product-builds.sh audio video-minimal), the browser console (scripts/console-check.sh --screenshot), the documentation's Swift blocks (scripts/quickstarts.sh), the DocC documentation (scripts/docs.sh --no-build --hosting-base-path MediaDevices --check), the microbenchmarks' allocations (scripts/microbenchmarks.sh allocations), the console in chromium against the rig's cameras (scripts/console-browser.py); and in Debian 13's lane, after it, the unit tests (host) and the microbenchmarks' instructions (scripts/microbenchmarks.sh instructions)"
# host_tier NAME NICENESS COMMAND...: runs COMMAND at that niceness, its output in $log/NAME.txt, its
# exit status, wall seconds and CPU seconds (user + system, its children's included) in
# $log/NAME.status, NAME.seconds and NAME.cpu.
# A tier still running at the run's deadline is ended (its process group: chromium and the
# builds it started too) with status 124 and a last line saying so.
host_tier() {
    local name=$1 niceness=$2 started cpu now_cpu status limit; shift 2
    started=$(date +%s); children_cpu cpu; limit=$(remaining "$budget")
    timeout -k 20 "$limit" nice -n "$niceness" "$@" >"$log/$name.txt" 2>&1; status=$?
    (( status != 124 )) || echo "test: $name ran out of the run's time ($limit s left of TEST_BUDGET's $budget s: scripts/test.sh) and was ended" | tee -a "$log/$name.txt" >&2
    echo "$status" >"$log/$name.status"
    echo $(( $(date +%s) - started )) >"$log/$name.seconds"
    children_cpu now_cpu; echo $(( now_cpu - cpu )) >"$log/$name.cpu"
}
# The API check reads the modules the build above made (a second build would compile the
# umbrella module and its dependents again: scripts/symbol-graphs.sh).
( host_tier api 10 scripts/api.sh check --no-build
  # The lab's own code: shellcheck on every shell script, the Python tools compiled, started and
  # their tests run (scripts/lint.sh).
  host_tier lint 10 scripts/lint.sh
  # The two products with the fewest packages, each in a Debian 12 root with only its own: the
  # other cases (every trait on) are what the builds above already prove on this machine.
  host_tier products 10 scripts/product-builds.sh audio video-minimal
  # The browser console (Examples/Console, its own package on Hummingbird) built and checked over
  # HTTP and in headless chromium against the test pattern (scripts/console-check.sh).
  host_tier console 10 sh -c 'scripts/install.sh --browser && scripts/console-check.sh --screenshot'
  # The documentation's Swift blocks, after the console: they build in the console's folder,
  # .build-apps/, and reuse its library modules (in the other order the console's build recompiled
  # the library's video and audio modules).
  host_tier quickstarts 10 scripts/quickstarts.sh
  # The DocC documentation built with warnings as errors and read in headless chromium (scripts/docs.sh).
  host_tier docs 10 scripts/docs.sh --no-build --hosting-base-path MediaDevices --check   # as a host serves it under /MediaDevices/
  # The microbenchmarks (Benchmarks/, their own package, release-built) with allocations alone
  # judged: counts are exact on a busy machine, times are not (scripts/microbenchmarks.sh).
  host_tier microbenchmarks 10 scripts/microbenchmarks.sh allocations
  # (Their instructions under valgrind run in the third lane, once this build is done.)
  # The console in a real browser against real drivers: a rig boot of its own (vivid, the USB
  # camera plugged in mid-way) serving on a forwarded port, headless chromium here driving the
  # page (scripts/console-browser.py: the device list, the preview moving, a slider changing the
  # camera's control, a hotplug shown without a reload). After the microbenchmarks, when the std
  # boot's real-time audio classes are long done (~900 s in, idle), and so not niced, like the
  # unit tests: niced, its guest got next to no CPU beside two busy loops (a loaded run's
  # controls request went unanswered for 180 s). It takes the console console-check built and the
  # emulator the device tests' build made.
  host_tier browser 0 scripts/console-browser.py --console "$PWD/.build-apps/debug/media-console" --emulator "$bin/usb-device-emulator"
  # The second lane's boots, beside the std boot (idle, the host tiers end ~400 s before it would):
  # a QEMU each, one after the other, their output printed when the std boot is done.
  device_boot virtio virtio 900 quiet
  device_boot late std 1800 quiet
  # Last, alone: the USB microphone unplug storm has corrupted the guest kernel's slab, and the
  # next class's module load in that boot then crashed it (seen idle too, in the late boot of
  # 4dcf6be's run: its three unfinished classes ran again, ~200 s). In a boot of its own, a crash
  # there takes no other class with it.
  device_boot storm std 900 quiet ) &
release_pid=$!
# Debian 13 (trixie), in a lane of its own from the start, beside the std boot: its network part
# (debootstrap of a minbase root, its toolchain packages, the package case's -dev packages
# downloaded: ~700 MB unpacked, CI is a fresh clone, so every run; mostly waiting for the mirror,
# niced for its dpkg unpacking), then its build and unit tests at the lowest priority (nice 19),
# so that they take only the CPU the std boot's emulator (not niced) and the second lane's host
# tiers (nice 10) leave: the guests wait on real-time devices much of the time, and the idle run
# of 4dcf6be left ~460 of the two cores' CPU seconds unused beside the std boot, where this part
# needs ~205 (idle: the build 146 s, the tests 88 s). After the std boot instead, it added its
# whole time (207 s of that run's 1,403) to the critical path.
echo "test: Debian 13 (trixie): the package built and its unit tests run in a Debian 13 root (scripts/product-builds.sh trixie), beside the std boot (nice 19)"
( host_tier trixie-prepare 10 scripts/product-builds.sh --prepare trixie
  if [[ $(cat "$log/trixie-prepare.status" 2>/dev/null || echo 1) == 0 ]]; then
      host_tier trixie 19 scripts/product-builds.sh trixie
  else
      echo 1 >"$log/trixie.status"; echo 0 >"$log/trixie.seconds"; echo 0 >"$log/trixie.cpu"
      echo "test: Debian 13's root or packages could not be fetched (scripts/product-builds.sh --prepare trixie): not built" >"$log/trixie.txt"
  fi
  # Then the unit tests (tier 1) in this lane, not niced, once the std boot's audio classes,
  # which judge real-time round trips and run first, are done (its first other class has
  # started, or the boot has ended); the video classes hold under load. They wait on X
  # servers, timers and threads most of their ~110 s (~38 CPU-s), so here, beside the second
  # lane's builds, they take little of its time; at the end of that lane (the critical path
  # once Debian 13 left it) they added all of it.
  after_audio=$(device_classes std | tr , '\n' | grep -v '^DeviceTests\.Audio' | head -n 1 | sed 's/^DeviceTests\.//')
  until [[ -f $log/boot-std.result ]] || grep -qs "^Test Suite '${after_audio:-none}' started" "$log/device-std.txt" ||
        (( $(date +%s) >= deadline )); do sleep 5; done
  host_tier unit 0 "$xctest" "$(classes MediaDevicesTests)"
  # Last in this lane, once the second lane's microbenchmarks tier has built them: the same
  # workloads' instructions, counted under valgrind (no hardware counter here): 10 % more than
  # the record fails (scripts/microbenchmarks.sh instructions). Moved here from the end of the
  # second lane's host tiers, which is the critical path now.
  until [[ -f $log/microbenchmarks.status ]] || (( $(date +%s) >= deadline )); do sleep 5; done
  host_tier instructions 10 scripts/microbenchmarks.sh instructions ) &
trixie_pid=$!
device_boot std std 4200
lap_start=$(date +%s)  # its time is printed as "rig boot std"
echo "test: waiting for Debian 13 (trixie), the unit tests and the microbenchmarks' instructions after it"
wait "$trixie_pid"
grep -E "^(product-builds|time: product|test: Debian 13)" "$log/trixie-prepare.txt" "$log/trixie.txt" -h || tail -n 20 "$log/trixie-prepare.txt" "$log/trixie.txt"
grep -h -E ": error: [A-Za-z0-9_]+(Tests)?\.[A-Za-z0-9_]+ : " "$log/trixie.txt" | cut -c1-600 | head -n 20
trixie_status=$(cat "$log/trixie.status" 2>/dev/null || echo 1)
lap "the wait for the third lane (Debian 13, the unit tests, the instructions) after the std boot"
times[-1]+=" (its build and unit tests $(cat "$log/trixie.seconds" 2>/dev/null || echo '?') s, CPU $(cat "$log/trixie.cpu" 2>/dev/null || echo '?') s; its network part before them $(cat "$log/trixie-prepare.seconds" 2>/dev/null || echo '?') s, CPU $(cat "$log/trixie-prepare.cpu" 2>/dev/null || echo '?') s)"
echo "test: waiting for the host tiers and the second lane's rig boots (virtio, late, then storm)"
wait "$release_pid"
declare -A quiet_boots=([virtio]=1 [late]=1 [storm]=1)
device_results std virtio late storm
lap "the wait for the host tiers and the second lane's boots after the std boot"

# show_tier NAME TITLE LINES [LEAVE_OUT]: a host tier's log under "test: TITLE, run beside the
# device tests:" (its last LINES lines, "+1" for all, those matching the extended regex
# LEAVE_OUT left out), and its status as NAME_status (1 when it left none).
show_tier() {
    local name=$1 title=$2 lines=$3 leave_out=${4:-'x^'}
    echo "test: $title, run beside the device tests:"
    grep -v -E "$leave_out" "$log/$name.txt" | tail -n "$lines"
    printf -v "${name}_status" '%s' "$(cat "$log/$name.status" 2>/dev/null || echo 1)"
}
# Each host tier's status: 1 until show_tier reads the one it left.
console_status=1 browser_status=1 docs_status=1 microbenchmarks_status=1 instructions_status=1 unit_status=1 api_status=1 lint_status=1
show_tier console "the browser console (scripts/console-check.sh --screenshot)" 60 \
    "^\[[0-9]+/[0-9]+\]|^(Compiling|Building|Fetching|Cloning|Computing|Creating|Working copy)"
show_tier browser "the browser console in headless chromium against the rig's cameras (scripts/console-browser.py)" 40 \
    "^\[[0-9]+/[0-9]+\]|^(Compiling|Building)"
show_tier docs "the DocC documentation (scripts/docs.sh --no-build --hosting-base-path MediaDevices --check)" +1
show_tier microbenchmarks "the microbenchmarks' allocations (scripts/microbenchmarks.sh allocations)" 80 \
    "^\[[0-9]+/[0-9]+\]|^warning: prohibited flag|^(Compiling|Building|Fetching|Cloning|Computing|Creating|Working copy|Write|Wrapping|Linking)"
show_tier instructions "the microbenchmarks' instructions (scripts/microbenchmarks.sh instructions)" 30 \
    "^\[[0-9]+/[0-9]+\]|^warning: prohibited flag|^(Compiling|Building|Build of|Write|Linking)"
show_tier unit "unit tests (host)" +1
show_tier api "the public API against its record (scripts/api.sh check --no-build)" +1
show_tier lint "the lab's lint (scripts/lint.sh: shellcheck, the Python tools and their tests)" +1 "^ok "
tier_time() { echo "$(cat "$log/$1.seconds" 2>/dev/null || echo '?') s (CPU $(cat "$log/$1.cpu" 2>/dev/null || echo '?') s)"; }
times+=("host tiers (beside the std boot: the API check took $(tier_time api), the lint $(tier_time lint), the product builds $(tier_time products), the console $(tier_time console), the browser check $(tier_time browser), the quick starts $(tier_time quickstarts), the DocC documentation $(tier_time docs), the microbenchmarks $(tier_time microbenchmarks), their instructions $(tier_time instructions), the unit tests $(tier_time unit))")
quickstarts_status=$(cat "$log/quickstarts.status" 2>/dev/null || echo 1)
cat "$log/quickstarts.txt"
products_status=$(cat "$log/products.status" 2>/dev/null || echo 1)
grep -E "^(product-builds|time: product)" "$log/products.txt" || tail -n 20 "$log/products.txt"
set -e

read -r unit_run unit_failed <<<"$(finished_counts "$log/unit.txt" || true)"
# failed_when STATUS MESSAGE: when STATUS is not 0, MESSAGE on stderr ("test: MESSAGE") and the suite fails.
failed_when() {
    (( ${1:-1} == 0 )) && return 0
    echo "test: $2" >&2
    status=1
}
unit_expected=$(count MediaDevicesTests)
device_expected=$(count DeviceTests)
status=0
if [[ "${device_run:-0}" != "$device_expected" || "$device_expected" == 0 ]]; then
    echo "test: the device tests did not all run in the rig (ran ${device_run:-none} of $device_expected; rig exit $device_status)" >&2
    status=1
fi
if [[ "${unit_run:-0}" != "$unit_expected" || "$unit_expected" == 0 ]]; then
    echo "test: the unit tests did not all run (ran ${unit_run:-none} of $unit_expected)" >&2
    status=1
fi
failed_when "$quickstarts_status" "the documentation's Swift blocks do not compile against the library (scripts/quickstarts.sh, status $quickstarts_status): its errors are above"
failed_when "$console_status" "the browser console's check failed (scripts/console-check.sh --screenshot, status $console_status): see above"
failed_when "$browser_status" "the browser console failed in headless chromium against the rig's cameras (scripts/console-browser.py, status $browser_status): see above"
failed_when "$docs_status" "the DocC documentation failed to build without warnings or to show in chromium (scripts/docs.sh --no-build --hosting-base-path MediaDevices --check, status $docs_status): see above"
failed_when "$microbenchmarks_status" "the microbenchmarks allocate more than their baseline, or did not run (scripts/microbenchmarks.sh allocations, status $microbenchmarks_status): see above"
failed_when "$instructions_status" "a microbenchmark runs 10 % more instructions than its record, or the count did not run (scripts/microbenchmarks.sh instructions, status $instructions_status): see above"
failed_when "$products_status" "a product did not build with only its packages (scripts/product-builds.sh, status $products_status): see above"
if (( trixie_status != 0 )); then
    echo "test: DEBIAN 13 (trixie) FAILED: the package did not build, start or pass its unit tests in a Debian 13 root, or the root could not be made (scripts/product-builds.sh trixie, status $trixie_status): see its lines after the std boot above" >&2
    grep -E "^(product-builds: .*(FAILED|failed|did not)|.*: error: )" "$log/trixie-prepare.txt" "$log/trixie.txt" -h | cut -c1-600 | head -n 20 >&2
    status=1
fi
(( unit_status == 0 && device_status == 0 )) || status=1
failed_when "$api_status" "the public API differs from api/<module>.txt or lacks doc comments (see scripts/api.sh check above)"
failed_when "$lint_status" "the lab's lint found something (scripts/lint.sh above: a shellcheck finding, a Python tool that does not compile or start, or a failed tool test)"
passed=$(( ${unit_run:-0} - ${unit_failed:-0} + ${device_run:-0} - ${device_failed:-0} ))
failed=$(( ${unit_failed:-0} + ${device_failed:-0} ))
(( status == 0 )) || (( failed > 0 )) || failed=1
# Every failing assertion again, at the end where a reader of the log's tail finds it.
if (( failed > 0 )); then
    echo "failures (each failing assertion, from the unit and device logs):"
    grep -h -E ": error: [A-Za-z0-9_]+(Tests)?\.[A-Za-z0-9_]+ : " "$log"/unit.txt "$log"/device-*.txt* "$log"/trixie.txt 2>/dev/null | cut -c1-600 | head -n 40 || true
fi
for entry in "${times[@]}"; do echo "time: $entry"; done
echo "release build with tests: $( (( release_status == 0 )) && echo ok || echo FAILED); lint: $( (( lint_status == 0 )) && echo ok || echo FAILED); documentation Swift blocks: $( (( quickstarts_status == 0 )) && echo ok || echo FAILED); products built alone: $( (( products_status == 0 )) && echo ok || echo FAILED); browser console: $( (( console_status == 0 )) && echo ok || echo FAILED); console in chromium on the rig: $( (( browser_status == 0 )) && echo ok || echo FAILED); DocC: $( (( docs_status == 0 )) && echo ok || echo FAILED); microbenchmark allocations: $( (( microbenchmarks_status == 0 )) && echo ok || echo FAILED); microbenchmark instructions: $( (( instructions_status == 0 )) && echo ok || echo FAILED); Debian 13 build and unit tests: $( (( trixie_status == 0 )) && echo ok || echo FAILED)"
trixie_tests=$(sed -n 's/^product-builds: package@trixie: unit tests: //p' "$log/trixie.txt" 2>/dev/null | tail -n 1)
echo "trixie: ${trixie_tests:-the unit tests did not run} (Debian 13 root; its build and unit tests: $( (( trixie_status == 0 )) && echo ok || echo FAILED))"
echo "unit: $(( ${unit_run:-0} - ${unit_failed:-0} )) passed, ${unit_failed:-0} failed (host)"
echo "device: $(( device_run - device_failed )) passed, $device_failed failed (rig$( (( ${#crashes[@]} )) && echo "; THE GUEST KERNEL CRASHED in the ${crashes[*]} boot(s), whose unfinished classes ran again"))"
echo "tests: $passed passed, $failed failed"
exit $status
