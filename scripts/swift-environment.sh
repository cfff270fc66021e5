# shellcheck shell=bash  # sourced by bash scripts, never run
# swift-environment: sourced by the scripts that run swift, from the repository root (`. scripts/swift-environment.sh`).
# SwiftPM rebuilds every module when its environment changes, so every script gives it the same
# one: PATH gets the toolchain once (each script prepending it again changed PATH per nesting
# level), and the variables a nested script changes (SHLVL, OLDPWD) are left out. Then a script
# finds the build another script left as it was (measured by hand: 0.2 s instead of ~80 s).
[[ ":$PATH:" == *":/opt/swift/usr/bin:"* ]] || export PATH="/opt/swift/usr/bin:$PATH"
unset SHLVL OLDPWD
# The suite's build (scripts/test.sh, the API's symbol graphs, the DocC documentation): release,
# whole-module optimised, with testing enabled so the test bundle's `@testable import`s build.
# One build serves the rig, the unit tests and the release check; in the rig, where every guest
# instruction is emulated, optimised code ran the CPU-bound classes in half the time of a debug
# build (ConversionTests, CLITests, CaptureTests, LeasedFrameTests, SteadyStateTests in one boot:
# 163 s against 302 s wall, 141 against 270 CPU seconds). Debian 13's tier builds debug.
# shellcheck disable=SC2034  # read by the scripts that source this file
suite_build=(-c release -Xswiftc -enable-testing)
