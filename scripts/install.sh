#!/usr/bin/env bash
# install: everything MediaDevices needs to build and test on Debian 12, from Debian's packages.
# Build: kernel uapi headers, libdrm, libasound, libpulse, libsoxr and speexdsp (resampling), webrtc-audio-processing (voice processing), libudev, libyuv, libjpeg-turbo,
# libv4lconvert, libpng, libxcb (shm, randr, damage, xfixes), pkg-config.
# Unit tests: Xvfb, Xorg with the dummy driver, and xrandr (the X11 screen tests start their own X servers);
# the headless Wayland desktop of the portal tests (sway, PipeWire, xdg-desktop-portal and a patched
# xdg-desktop-portal-wlr built from Debian's source), installed by `scripts/wayland-session.sh setup`.
# Tests and the main job: the rig's packages (QEMU, busybox, kmod) and the reference tools
# (v4l2-ctl, ffmpeg, gst-launch-1.0, aplay/arecord), installed by `scripts/rig.sh setup`; the rig's vimc
# module (scripts/vimc.sh build: Debian's kernel does not build it) and v4l2loopback module
# (scripts/v4l2loopback.sh build: Debian ships its source only). chromium: the console's page in a real browser.
# Lint: shellcheck (scripts/lint.sh checks the lab's own scripts).
# The Swift 6 toolchain is not a Debian package: it must be on PATH or in /opt/swift.
#
#   scripts/install.sh                    everything; any part that fails fails (scripts/test.sh needs all)
#   scripts/install.sh --without-browser  everything but chromium
#   scripts/install.sh --browser          chromium alone
#   scripts/install.sh --main             what the main job needs (scripts/main.sh): the build's packages
#                                      must install; the optional parts (chromium, the Wayland desktop,
#                                      the rig, vimc, v4l2loopback) are each tried, and one that fails is reported
#                                      and skipped ("install: skipped PART (WHAT): ..."), and listed
#                                      in the file $MEDIADEVICES_INSTALL_SKIPPED names, if any.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(pkg-config linux-libc-dev libdrm-dev libasound2-dev libpulse-dev libsoxr-dev libspeexdsp-dev libwebrtc-audio-processing-dev libudev-dev
          libyuv-dev libturbojpeg0-dev libv4l-dev libpng-dev util-linux espeak-ng
          libxcb1-dev libxcb-shm0-dev libxcb-randr0-dev libxcb-damage0-dev libxcb-xfixes0-dev
          libsystemd-dev libpipewire-0.3-dev  # sd-bus and PipeWire: the Wayland ScreenCast portal
          libavformat-dev  # the command-line tool's audio-and-video files (capture --audio … --output FILE.mkv)
          xvfb xserver-xorg-core xserver-xorg-video-dummy x11-xserver-utils
          debootstrap  # scripts/product-builds.sh: a Debian 12 root per product
          valgrind  # scripts/microbenchmarks.sh instructions: instructions counted without a hardware counter
          shellcheck)  # scripts/lint.sh: the lab's shell scripts
# scripts/console-check.sh --screenshot and scripts/docs.sh --check: pages in headless chromium (~300 MB:
# scripts/test.sh installs it beside the device tests, with --browser, after the rest with
# --without-browser).
BROWSER=(chromium)
mode=${1:-}
case $mode in
    "") PACKAGES+=("${BROWSER[@]}") ;;
    --without-browser | --main) ;;
    --browser) PACKAGES=("${BROWSER[@]}") ;;
    *) echo "usage: scripts/install.sh [--without-browser | --browser | --main]" >&2; exit 2 ;;
esac

# install_packages NAME...: apt-get install those not installed yet (apt-get update first).
install_packages() {
    local missing=() package
    for package in "$@"; do
        [[ $(dpkg-query -W -f='${db:Status-Status}' "$package" 2>/dev/null) == installed ]] || missing+=("$package")
    done
    (( ${#missing[@]} )) || return 0
    echo "install: installing Debian packages: ${missing[*]}" >&2
    apt-get update -q || { echo "install: apt-get update failed: is a Debian mirror reachable? (run as root)" >&2; return 1; }
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" ||
        { echo "install: apt-get install ${missing[*]} failed; run it by hand to read why" >&2; return 1; }
}

# optional PART WHAT COMMAND...: runs COMMAND; for scripts/main.sh (--main) a failure is reported and
# skipped, everywhere else it fails the install.
optional() {
    local part=$1 what=$2
    shift 2
    "$@" && return 0
    [[ $mode == --main ]] || exit 1
    echo "install: skipped $part ($what): '$*' failed (its message is above); the main job goes on without it, the test suite (scripts/test.sh) needs it" >&2
    [[ -z ${MEDIADEVICES_INSTALL_SKIPPED:-} ]] || echo "$part ($what): '$*' failed (its message is above)" >>"$MEDIADEVICES_INSTALL_SKIPPED"
}

install_packages "${PACKAGES[@]}" || exit 1

if ! command -v swift >/dev/null && [[ ! -x /opt/swift/usr/bin/swift ]]; then
    echo "install: no Swift toolchain: install Swift 6 (swift.org's Debian 12 tarball) into /opt/swift or put it on PATH" >&2
    exit 1
fi

[[ $mode == --browser ]] && exit 0
[[ $mode == --main ]] && optional browser "chromium, for the console's checks" install_packages "${BROWSER[@]}"
optional desktop "the headless Wayland desktop of the portal tests" scripts/wayland-session.sh setup
optional rig "the QEMU rig with Debian's kernel: vivid and the emulated USB camera" scripts/rig.sh setup
# vimc for the libcamera tests (PipeWireLibcameraTests), built against the rig kernel and cached in .rig/vimc/.
optional vimc "the media-controller camera of the libcamera tests" scripts/vimc.sh build >/dev/null
# v4l2loopback for the virtual-camera tests (VirtualCameraTests): Debian ships it as source only
# (v4l2loopback-dkms), built against the rig kernel and cached in .rig/v4l2loopback/.
optional v4l2loopback "the loopback video device of the virtual-camera tests" scripts/v4l2loopback.sh build >/dev/null
