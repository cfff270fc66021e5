#!/usr/bin/env bash
# product-builds: proves that each library product builds, links and starts on a Debian 12 (or 13)
# system that has only that product's packages. For each case below it makes a fresh Debian root
# (debootstrap --variant=minbase, cached in .build-products/base with the toolchain's own needs:
# libc, libstdc++, binutils, pkg-config, git), installs the case's -dev packages and nothing else,
# and builds a small application package there that depends on this checkout by path, on one
# product, with the case's traits; then runs it (it prints what discovery found and which
# backends the build has). The Swift toolchain (/opt/swift) and the Swift package copies
# (/opt/swift-packages) are bind-mounted read-only; the checkout too.
# The case `package` builds the whole package instead (the `mediadevices` CLI and every product,
# default traits) with the umbrella's packages and what the unit tests need, in a scratch path
# inside the root, starts the CLI, and runs the host unit tests (MediaDevicesTests; not the rig's
# DeviceTests) but the Wayland portal's (PortalScreenTests, PortalCLITests, PortalAllocationTests,
# WaylandSessionTests, UnprivilegedScreenshotTests: their desktop, `scripts/wayland-session.sh setup`, builds a patched
# xdg-desktop-portal-wlr from Debian 12's source, which this root does not have).
# `--release trixie` makes every case use Debian 13 (trixie) instead of Debian 12 (bookworm),
# with a base root of its own (.build-products/base-trixie); the case `trixie` is short for
# `--release trixie package`: what CI runs for Debian 13.
# `--prepare` stops after the network's part: the base root made (once) and the cases' packages
# downloaded into the archive cache, nothing built (scripts/test.sh runs it early, beside the std rig boot).
#   scripts/product-builds.sh [--release bookworm|trixie] [--prepare] [CASE...]
#       cases: audio video-minimal video umbrella package trixie (default: the first four)
# Needs root (chroot, mounts) and a Debian mirror. Each case prints "time: product CASE N s"
# (on trixie "time: product CASE@trixie N s"; the package case also the build's and the tests').
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
. scripts/swift-environment.sh  # the toolchain on PATH, the same environment for SwiftPM in every script
(( EUID == 0 )) || { echo "product-builds: run as root (it makes chroots)" >&2; exit 1; }
[[ -x /opt/swift/usr/bin/swift ]] || { echo "product-builds: no Swift toolchain in /opt/swift" >&2; exit 1; }
command -v debootstrap >/dev/null || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap; }

release=bookworm prepare=0
while [[ ${1:-} == --* ]]; do
    case $1 in
        --release) release=${2:-}; shift 2 || true ;;
        --prepare) prepare=1; shift ;;
        *) echo "product-builds: no option '$1' (--release bookworm|trixie, --prepare)" >&2; exit 2 ;;
    esac
done
for name in "$@"; do [[ $name != trixie ]] || release=trixie; done
work=$repo/.build-products
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
# What the Swift toolchain itself needs to compile and link (swift.org's list, less what only the
# REPL and lldb use): on Debian 12; on Debian 13 the same with its names (GCC 14, the 64-bit
# time_t libcurl); the swift driver needs libncurses6 on both.
case $release in
    bookworm)
        base=$work/base; suffix=""
        TOOLCHAIN=(binutils libc6-dev libgcc-12-dev libstdc++-12-dev pkg-config git ca-certificates libcurl4 libxml2
                   libsqlite3-0 libedit2 libncurses6 zlib1g-dev tzdata) ;;
    trixie)
        base=$work/base-trixie; suffix=@trixie
        TOOLCHAIN=(binutils libc6-dev libgcc-14-dev libstdc++-14-dev pkg-config git ca-certificates libcurl4t64 libxml2
                   libsqlite3-0 libedit2 libncurses6 zlib1g-dev tzdata) ;;
    *) echo "product-builds: no release '$release' (bookworm or trixie)" >&2; exit 2 ;;
esac

# Each case: product | traits for `.package(path:traits:)` | packages | what the application uses.
AUDIO=(libasound2-dev libpulse-dev libsoxr-dev libspeexdsp-dev)
VIDEO=(linux-libc-dev libv4l-dev libyuv-dev libturbojpeg0-dev libpng-dev libudev-dev libdrm-dev)
X11=(libxcb1-dev libxcb-shm0-dev libxcb-randr0-dev libxcb-damage0-dev libxcb-xfixes0-dev)
PIPEWIRE=(libpipewire-0.3-dev libsystemd-dev)
declare -A PRODUCT TRAITS PACKAGES PROGRAM
PRODUCT[audio]=MediaDevicesAudio; TRAITS[audio]='[]'; PACKAGES[audio]="${AUDIO[*]}"
PROGRAM[audio]='import MediaDevicesAudio
import MediaDevicesCore
let found = await AudioDevice.discover()
// Without the trait VoiceProcessing, voice processing is .notFound naming the trait.
// (An exhaustive catch: Swift 6.3.1 crashes on a non-exhaustive one of a typed throw here.)
do throws(MediaDevicesError) {
    _ = try VoiceProcessor(format: AudioFormat(sampleRate: 48000, channels: 1))
    fatalError("voice processing in a build without the trait VoiceProcessing")
} catch {
    precondition(error.code == .notFound && error.detail.contains("trait VoiceProcessing"), "\(error)")
}
print("audio devices: \(found.devices.count), problems: \(found.problems.count); voice processing: not built in, as asked")'
PRODUCT[video-minimal]=MediaDevicesVideo; TRAITS[video-minimal]='[]'; PACKAGES[video-minimal]="${VIDEO[*]}"
VIDEO_FOUND='import MediaDevicesVideo
import MediaDevicesCore
let cameras = await CaptureDevice.discover()
let screens = await ScreenSource.discover(backend: .kms)'
VIDEO_PRINT='print("cameras: \(cameras.devices.count), screens: \(screens.devices.count); built in: x11 \(ScreenBackend.x11.isBuiltIn), pipewire \(CaptureBackend.pipewire.isBuiltIn)")'
PROGRAM[video]="$VIDEO_FOUND
$VIDEO_PRINT"
# Without X11 and PipeWire: those backends are .notFound naming their trait.
# shellcheck disable=SC2016  # Swift source: its \( ) and $ are Swift's, not the shell's
PROGRAM[video-minimal]="$VIDEO_FOUND"'
precondition(!ScreenBackend.x11.isBuiltIn && !CaptureBackend.pipewire.isBuiltIn && ScreenBackend.kms.isBuiltIn)
do throws(MediaDevicesError) {
    _ = try ScreenSource.x11Screens()
    fatalError("X11 screens in a build without the trait X11")
} catch {
    precondition(error.code == .notFound && error.detail.contains("trait X11"), "\(error)")
}
let pipeWire = await CaptureDevice.discover(backends: [.pipewire])
precondition(pipeWire.problems.contains { $0.code == .notFound && $0.detail.contains("trait PipeWire") })
'"$VIDEO_PRINT"
PRODUCT[video]=MediaDevicesVideo; TRAITS[video]='["X11", "PipeWire"]'; PACKAGES[video]="${VIDEO[*]} ${X11[*]} ${PIPEWIRE[*]}"
PRODUCT[umbrella]=MediaDevices; TRAITS[umbrella]='[.defaults]'
PACKAGES[umbrella]="${AUDIO[*]} libwebrtc-audio-processing-dev ${VIDEO[*]} ${X11[*]} ${PIPEWIRE[*]}"
# The whole package (no application: the package itself is built, its CLI started and its unit
# tests run): the umbrella's packages and the unit tests' (espeak-ng: the voice-processing
# talkers; Xvfb and Xorg's dummy driver with xrandr: the X11 screen tests start their own servers;
# ffmpeg: the pixel converter and JPEG tests compare against it).
PRODUCT[package]="(the package: mediadevices and every product)"; TRAITS[package]='(defaults)'
PACKAGES[package]="${PACKAGES[umbrella]} libavformat-dev espeak-ng util-linux xvfb xserver-xorg-core xserver-xorg-video-dummy x11-xserver-utils ffmpeg"
PROGRAM[umbrella]='import MediaDevices
let cameras = await CaptureDevice.discover()
let audio = await AudioDevice.discover()
let monitor = try DeviceMonitor(kinds: [.camera, .sound])
monitor.stop()
print("cameras: \(cameras.devices.count), audio devices: \(audio.devices.count); built in: x11 \(ScreenBackend.x11.isBuiltIn), pipewire \(CaptureBackend.pipewire.isBuiltIn)")'

cases=()
for name in "$@"; do
    if [[ $name == trixie ]]; then cases+=(package); else cases+=("$name"); fi
done
(( ${#cases[@]} )) || cases=(audio video-minimal video umbrella)
for name in "${cases[@]}"; do
    [[ -n ${PRODUCT[$name]:-} ]] || { echo "product-builds: no case '$name' (cases: audio video-minimal video umbrella package trixie)" >&2; exit 2; }
done
# The unit-test classes the package case leaves out (see the top).
UNIT_SKIP='MediaDevicesTests\.(Portal(Screen|CLI|Allocation)Tests|WaylandSessionTests|UnprivilegedScreenshotTests)/'

# run_package ROOT LOG: the package case's build, CLI start and unit tests in ROOT (scratch path
# /build inside it); prints its "time:" lines.
run_package() {
    local root=$1 log=$2 started status
    started=$(date +%s)
    in_root "$root" sh -c 'cd /src/MediaDevices && swift build --build-tests --scratch-path /build 2>&1' >>"$log" || return 1
    echo "time: product package$suffix build $(( $(date +%s) - started )) s"
    in_root "$root" /build/debug/mediadevices --help >>"$log" 2>&1 || return 1
    started=$(date +%s)
    in_root "$root" sh -c "cd /src/MediaDevices && swift test --skip-build --scratch-path /build --filter MediaDevicesTests --skip '$UNIT_SKIP' 2>&1" >"$log.tests"
    status=$?
    cat "$log.tests" >>"$log"
    echo "time: product package$suffix unit tests $(( $(date +%s) - started )) s"
    # XCTest's closing line: "Executed N tests, with F failures (...)".
    echo "product-builds: package$suffix: unit tests: $(grep -E "^[[:space:]]*Executed [0-9]+ tests?, with" "$log.tests" | tail -n 1 | sed 's/^[[:space:]]*//')"
    (( status == 0 )) || { grep -E ": error: " "$log.tests" | head -n 20 >&2; return 1; }
}

in_root() {  # in_root ROOT COMMAND...: runs COMMAND in the chroot ROOT
    local root=$1; shift
    chroot "$root" /usr/bin/env -i PATH=/opt/swift/usr/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
        DEBIAN_FRONTEND=noninteractive "$@"
}
mounted=()
unmount_all() {
    local index
    for (( index = ${#mounted[@]} - 1; index >= 0; index-- )); do umount -l "${mounted[index]}" 2>/dev/null || true; done
    mounted=()
}
trap unmount_all EXIT
clear_root() {  # clear_root ROOT: unmounts whatever a killed run left mounted under ROOT, then deletes it
    local target
    # shellcheck disable=SC2013  # mount points in /proc/mounts have no blanks (they are escaped as \040)
    for target in $(awk -v root="$1/" 'index($2, root) == 1 { print $2 }' /proc/mounts | sort -r); do umount -l "$target"; done
    if awk -v root="$1/" 'index($2, root) == 1 { found = 1 } END { exit !found }' /proc/mounts; then
        echo "product-builds: $1 still has mounts; not deleting it" >&2; exit 1
    fi
    rm -rf "$1"
}
bind() {  # bind SOURCE TARGET [ro]
    mkdir -p "$2"
    mount --bind "$1" "$2"; mounted+=("$2")
    [[ ${3:-} != ro ]] || mount -o remount,bind,ro "$2"
}

began=$(date +%s)
if [[ ! -f $base/.ready ]]; then
    mkdir -p "$work"
    if [[ ! -f $base/.debootstrapped ]]; then
        clear_root "$base"
        echo "product-builds: making the Debian $release base root in $base (debootstrap, once)"
        debootstrap --variant=minbase "$release" "$base" "$mirror" >"$work/debootstrap$suffix.log" 2>&1 ||
            { tail -n 20 "$work/debootstrap$suffix.log" >&2; echo "product-builds: debootstrap failed (log above; is $mirror reachable?)" >&2; exit 1; }
        touch "$base/.debootstrapped"
    fi
    cp /etc/resolv.conf "$base/etc/resolv.conf"
    # These roots are thrown away after the build: dpkg need not fsync every file it unpacks
    # (its fsyncs made each install wait on the disk, and a product build beside Debian 13's
    # install took twice its time in the test suite).
    echo force-unsafe-io >"$base/etc/dpkg/dpkg.cfg.d/mediadevices-unsafe-io"
    bind /proc "$base/proc"
    in_root "$base" apt-get update -q >/dev/null
    in_root "$base" apt-get install -y -q --no-install-recommends "${TOOLCHAIN[@]}" >"$work/toolchain$suffix.log" 2>&1 ||
        { tail -n 20 "$work/toolchain$suffix.log" >&2; echo "product-builds: installing the toolchain's packages failed" >&2; exit 1; }
    unmount_all
    touch "$base/.ready"
    made_base=1
fi

if (( prepare )); then
    # --prepare: only what comes from the network, so a caller can run it early beside other work
    # (scripts/test.sh: beside the std rig boot) and the cases later need no download: the base root,
    # and the cases' packages downloaded into the archive cache (installed from it by the cases).
    wanted=()
    # shellcheck disable=SC2206
    for name in "${cases[@]}"; do wanted+=(${PACKAGES[$name]}); done
    bind /proc "$base/proc"
    mkdir -p "$work/apt-archives-$release/partial"
    bind "$work/apt-archives-$release" "$base/var/cache/apt/archives"
    # A base root kept from an earlier day: the versions the archive serves today.
    [[ -n ${made_base:-} ]] || { cp /etc/resolv.conf "$base/etc/resolv.conf"; in_root "$base" apt-get update -q >/dev/null; }
    in_root "$base" apt-get install -y -q --no-install-recommends --download-only "${wanted[@]}" >"$work/download-$release.log" 2>&1 ||
        { tail -n 20 "$work/download-$release.log" >&2; echo "product-builds: downloading the packages of ${cases[*]} failed" >&2; exit 1; }
    unmount_all
    echo "product-builds: prepared the Debian $release base root and the packages of ${cases[*]} (${#wanted[@]} asked for)"
    echo "time: product prepare$suffix $(( $(date +%s) - began )) s (the base root, made $( [[ -n ${made_base:-} ]] && echo now || echo before), and the downloads)"
    exit 0
fi

failed=()
for name in "${cases[@]}"; do
    started=$(date +%s)
    root=$work/$name$suffix
    clear_root "$root"
    echo "product-builds: $name$suffix: product ${PRODUCT[$name]}, traits ${TRAITS[$name]}, packages: ${PACKAGES[$name]}"
    cp -a "$base" "$root"
    bind /proc "$root/proc"
    bind /dev "$root/dev"
    # The packages' downloads, kept between runs (per release).
    mkdir -p "$work/apt-archives-$release/partial"
    bind "$work/apt-archives-$release" "$root/var/cache/apt/archives"
    [[ $name != package ]] || bind /sys "$root/sys" ro
    bind /opt/swift "$root/opt/swift" ro
    bind /opt/swift-packages "$root/opt/swift-packages" ro
    bind "$repo" "$root/src/MediaDevices" ro
    # The Swift package copies: the host's git settings send github.com addresses to /opt/swift-packages.
    [[ -f /etc/gitconfig ]] && cp /etc/gitconfig "$root/etc/gitconfig"
    [[ -f /root/.gitconfig ]] && cp /root/.gitconfig "$root/root/.gitconfig"
    log=$work/$name$suffix.log
    # shellcheck disable=SC2086
    if ! in_root "$root" apt-get install -y -q --no-install-recommends ${PACKAGES[$name]} >"$log" 2>&1; then
        tail -n 20 "$log" >&2; echo "product-builds: $name$suffix: apt-get install failed" >&2; failed+=("$name$suffix"); unmount_all; continue
    fi
    if [[ $name == package ]]; then
        if run_package "$root" "$log"; then
            echo "product-builds: package$suffix: built, started and passed its unit tests"
        else
            grep -E "error:" "$log" | grep -v "^/src/.*Tests.swift:[0-9]*: error:" | head -n 20 >&2 || true
            echo "product-builds: package$suffix: the package did not build, start or pass its unit tests (log: $log)" >&2
            failed+=("package$suffix")
        fi
        unmount_all
        clear_root "$root"
        echo "time: product package$suffix $(( $(date +%s) - started )) s"
        continue
    fi
    mkdir -p "$root/app/Sources/App"
    cat >"$root/app/Package.swift" <<EOF
// swift-tools-version:6.1
import PackageDescription
let package = Package(
    name: "App",
    dependencies: [.package(path: "/src/MediaDevices", traits: ${TRAITS[$name]})],
    targets: [.executableTarget(name: "App", dependencies: [.product(name: "${PRODUCT[$name]}", package: "MediaDevices")])]
)
EOF
    printf '%s\n' "${PROGRAM[$name]}" >"$root/app/Sources/App/main.swift"
    if in_root "$root" sh -c 'cd /app && swift build 2>&1' >>"$log" && in_root "$root" /app/.build/debug/App >>"$log" 2>&1; then
        echo "product-builds: $name$suffix: built and ran: $(tail -n 1 "$log")"
    else
        grep -E "error:|warning: .*(pkg-config|not found)" "$log" | head -n 20 >&2 || tail -n 20 "$log" >&2
        echo "product-builds: $name$suffix: the application did not build or run with only its packages (log: $log)" >&2
        failed+=("$name$suffix")
    fi
    unmount_all
    clear_root "$root"
    echo "time: product $name$suffix $(( $(date +%s) - started )) s"
done
if (( ${#failed[@]} )); then
    echo "product-builds: FAILED: ${failed[*]}" >&2
    exit 1
fi
echo "product-builds: every case built and ran with only its packages (Debian $release): ${cases[*]}"
