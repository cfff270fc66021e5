#!/usr/bin/env bash
# main: the main job. Lists devices and captures from a real camera when this machine has one;
# otherwise captures the built-in test pattern here and, in the rig (a QEMU machine running
# Debian's kernel with its virtual camera, vivid, and the project's emulated USB webcam), those two.
# Files land in out/ (Y4M where the format allows it: play with ffplay or mpv).
#
# Capture is the job: a part that only serves the captures in the rig or the tests (the rig
# itself, the USB emulator, vimc, the Wayland desktop, chromium) and cannot be set up is said
# ("main: skipped ...") and left out; the exit status is 0 when the captures that could run did.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/swift-environment.sh  # the toolchain on PATH, the same environment for SwiftPM in every script

skipped=$(mktemp)
trap 'rm -f "$skipped"' EXIT
MEDIADEVICES_INSTALL_SKIPPED=$skipped scripts/install.sh --main
swift build --product mediadevices
tool="$(swift build --show-bin-path)/mediadevices"
mkdir -p out

if "$tool" list --json | grep -q '"path"'; then
    echo "main: capturing from this machine's first camera"
    "$tool" list
    "$tool" formats 0
    "$tool" capture 0 --frames 60 --output out/camera.raw
    exit 0
fi

echo "main: no camera here: the built-in test pattern, then a vivid camera and the emulated USB webcam in the rig"
"$tool" capture testpattern --format YU12 --size 640x480 --fps 30 --frames 60 --output out/testpattern.y4m
written=(out/testpattern.y4m)

# say_done: the files written, and what was skipped.
say_done() {
    echo "main: wrote ${written[*]} (play them with ffplay or mpv)"
    [[ -s $skipped ]] && sed 's/^/main: skipped /' "$skipped"
    return 0
}

if grep -q '^rig ' "$skipped"; then
    echo "the captures in the rig (vivid, the emulated USB camera): the rig could not be set up" >>"$skipped"
    say_done
    exit 0
fi

# The guest's part: vivid, then the USB camera (--usb camera: the project's emulated UVC webcam,
# bound by the real uvcvideo, udevd naming it) when it is plugged in. Each file is copied out
# as soon as it is written; the guest sees this machine's files read-only and writes into its
# run folder under .rig/runs.
guest="
    set -e
    modprobe vivid n_devs=1
    # Its capture node by its name (udevd, which makes /dev/v4l/by-path, runs only with --usb).
    vivid=
    for i in \$(seq 100); do
        for node in /sys/class/video4linux/video*; do if grep -qs '^vivid-000-vid-cap' \$node/name; then vivid=/dev/\${node##*/}; fi; done
        [ -n \"\$vivid\" ] && [ -e \"\$vivid\" ] && break; sleep 0.1
    done
    v4l2-ctl -d \$vivid -c test_pattern=1
    # vivid stamps frames at their end, ahead of delivery; start of exposure gives a real delay.
    v4l2-ctl -d \$vivid -c timestamp_source=1
    '$tool' list
    '$tool' capture \$vivid --format YU12 --size 640x480 --fps 25 --frames 50 --output /tmp/vivid.y4m
    cp /tmp/vivid.y4m \"\$MEDIADEVICES_RIG_OUT/vivid-$$.y4m\"
    usb=\$(ls /dev/v4l/by-id/*MD-CAM-RIG-video-index0 2>/dev/null || true)
    [ -n \"\$usb\" ] || exit 0
    '$tool' formats \$usb
    '$tool' capture \$usb --format MJPG --size 1280x720 --fps 30 --output-format YU12 --frames 60 --output /tmp/usb.y4m
    cp /tmp/usb.y4m \"\$MEDIADEVICES_RIG_OUT/usb-camera-$$.y4m\"
"
set +e
scripts/rig.sh run --usb camera -- sh -c "$guest"
status=$?
if (( status == 125 )) && ! find .rig/runs -name "vivid-$$.y4m" | grep -q .; then
    # The rig itself failed before the command: most likely the USB emulator (it is built and
    # plugged in first). vivid alone needs neither.
    echo "usb-camera (the emulated USB camera): the rig could not plug it in (its message is above)" >>"$skipped"
    scripts/rig.sh run -- sh -c "$guest"
    status=$?
fi
set -e
# The guest sees this machine's files read-only; it wrote into its run folder under .rig/runs.
find .rig/runs -name "vivid-$$.y4m" -exec mv {} out/vivid.y4m \;
find .rig/runs -name "usb-camera-$$.y4m" -exec mv {} out/usb-camera.y4m \;
[[ -f out/vivid.y4m && -n $(find out/vivid.y4m -newer "$skipped") ]] && written+=(out/vivid.y4m) ||
    echo "vivid-capture (the rig's vivid camera): its capture did not complete (rig status $status; its output is above)" >>"$skipped"
if [[ -f out/usb-camera.y4m && -n $(find out/usb-camera.y4m -newer "$skipped") ]]; then
    written+=(out/usb-camera.y4m)
elif ! grep -q '^usb-camera ' "$skipped"; then
    echo "usb-camera-capture (the emulated USB camera): its capture did not complete (rig status $status; its output is above)" >>"$skipped"
fi
say_done
# The main job failed only if the rig ran and vivid, which needs nothing optional, did not capture.
(( ${#written[@]} > 1 )) || [[ $status == 125 ]] || exit 1
