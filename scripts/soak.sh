#!/usr/bin/env bash
# soak: the soak and fault-storm suite (Tests/DeviceTests/SoakTests.swift) at a large scale,
# by hand, inside the rig (scripts/rig.sh).
#
#   scripts/soak.sh [SCALE [MINUTES]]   SCALE defaults to 1000, MINUTES to 60
#
# SCALE sets MEDIADEVICES_SOAK_SCALE in the guest (scripts/rig.sh passes MEDIADEVICES_* through):
#   - SCALE initialize/start/stop/release cycles on vivid and on the emulated USB camera,
#   - SCALE format changes and device switches while running (vivid),
#   - SCALE/10 USB unplug/replug cycles (at least 5) at random moments (during start,
#     mid-stream, during stop, during a format change) with resumeWhenReconnected and a
#     DeviceMonitor running; each replug takes 1-3 s of enumeration under emulation,
#   - SCALE/20 vivid faults injected at random times (at least 12),
#   - SCALE audio start/stop cycles on snd-aloop, and SCALE on a real PulseAudio daemon with
#     SCALE/100 server restarts mid-stream (at least 2),
#   - SCALE/10 unplugs (at least 5) of the emulated USB microphone during start, mid-stream or
#     during stop,
#   - SCALE/10 display mode changes (at least 10) while a screen is grabbed (bochs),
#   - then camera + screen + audio together for MINUTES (SoakTogetherTests; 45 s in CI).
# Each part prints "figure: soak ..." lines: fds, mapped regions, threads and RSS first vs last,
# the unplug count and unplug-to-.disconnected latencies, the faults and their outcomes.
# Without the variables (scripts/test.sh, CI) the same classes run a short form (~5 minutes).
#
# The run is seeded: the seed is printed ("soak: seed N"); MEDIADEVICES_SOAK_SEED=N replays it.
# SOAK_SCRATCH_PATH picks the build folder (default .build); the rig's timeout grows with SCALE
# (600 s + 6 s per unit + 90 s per minute together).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/swift-environment.sh  # the toolchain on PATH, the same environment for SwiftPM in every script

scale=${1:-1000}
minutes=${2:-60}
[[ $scale =~ ^[1-9][0-9]*$ && $minutes =~ ^[1-9][0-9]*$ ]] ||
    { echo "usage: scripts/soak.sh [SCALE [MINUTES]]   (positive whole numbers, defaults 1000 and 60)" >&2; exit 2; }
scratch=${SOAK_SCRATCH_PATH:-.build}

echo "soak: building (debug, with tests) in $scratch"
swift build --build-tests --scratch-path "$scratch"
xctest=$(swift build --scratch-path "$scratch" --show-bin-path)/MediaDevicesPackageTests.xctest
[[ -x "$xctest" ]] || { echo "soak: $xctest was not built" >&2; exit 1; }

echo "soak: the soak classes at scale $scale, then $minutes minutes of everything together, in the rig"
export MEDIADEVICES_SOAK_SCALE=$scale MEDIADEVICES_SOAK_MINUTES=$minutes
exec scripts/rig.sh run --timeout $(( 600 + 6 * scale + 90 * minutes )) -- "$xctest" \
    DeviceTests.SoakTests,DeviceTests.SoakStormTests,DeviceTests.SoakTogetherTests
