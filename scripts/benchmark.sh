#!/usr/bin/env bash
# benchmark: the pixel pipeline's and the capture path's figures (issue 3), each a ratio against
# a reference measured in the same run. Not part of scripts/test.sh (CI): timings are not tests.
#
#   scripts/benchmark.sh [host|rig|icount|usb|pipewire|vcam|console|screen|testpattern|all] [--json]
#
# host: builds release, then `mediadevices-benchmark conversion`, `… mjpeg`, `… mjpeg-scaled` and
#       `… mjpeg-threads` (MJPEG on one thread against as many as the machine has cores) on this machine
#       (the benchmark tool; `capture` rows measure the `mediadevices` tool MEDIADEVICES_TOOL names).
# rig:  in ONE rig boot, on one vivid webcam stream (640x480 YUYV at 25 fps, start-of-exposure
#       timestamps as the device tests use): `mediadevices-benchmark capture` (CPU and wake-ups per frame
#       vs v4l2-ctl, ffmpeg, gst-launch-1.0; leased sequences vs the callback path), the same at
#       1280x720 10 fps, and `… latency` (capture delay, delivery latency); then the
#       icount and usb parts.
# icount: the same two capture tables, instruction-timed: a rig boot with `--icount`, where guest
#       time advances 1 ns per guest instruction. The figures of rows whose work runs on one
#       thread repeat from boot to boot (to 0.1 us on a quiet host, 0.4 us on a very busy one,
#       so one round is enough; rows that hand frames between threads still vary) and count
#       what the guest executes; the plain boot's figures are what emulating it cost, which swings 2x between
#       runs of one row in one boot and inflates short, scattered code paths far beyond
#       hardware (each guest context switch empties the emulated TLB). Neither counts memory
#       traffic as hardware would (icount charges an instruction, not its bytes).
# usb:  in a second rig boot with the emulated USB webcam (`scripts/rig.sh run --usb camera`, bound
#       by uvcvideo): `… capture --format MJPG --output-format I420` at 1280x720 and
#       1920x1080, 30 fps: CPU per frame decoded to I420 vs gst-launch-1.0 … jpegdec and ffmpeg
#       (both decoding; ours and jpegdec with libjpeg's fast IDCT, each one's default), as a
#       100-frame run less a 20-frame run (under emulation no decoder keeps up with 30 fps, so
#       frames delivered are not wall time × rate). libjpeg-turbo is held to SSE2
#       (JSIMD_FORCESSE2=1, for ours and GStreamer's jpegdec alike): the rig's `-cpu max`
#       advertises AVX2, whose emulation under TCG makes libjpeg-turbo's AVX2 accurate IDCT 1.8x
#       slower than its SSE2 one (the fast IDCT has no AVX2 version).
#       Then the same decoded at the size asked for (issue 39): 1920x1080 to 640x360 and 1280x720
#       to 320x180 I420 (`--output-size`), ours decoding at 1/2 or 1/4 in libjpeg-turbo's IDCT,
#       against gst-launch-1.0 … jpegdec ! videoscale, ffmpeg -vf scale and our own whole decode
#       then scale (`whole decode only`).
# pipewire: in an instruction-timed rig boot (--icount), vivid (YUYV 640x480, 25 fps) as
#       WirePlumber's camera node in a camera session (scripts/camera-session.sh): `… pipewire`,
#       CPU per delivered frame of ours through the node vs `gst-launch-1.0 pipewiresrc ! <the
#       node's caps> ! fakesink` (goal <= 0.7x) and vs our direct V4L2 path (goal <= 1.2x), and our
#       frames() sequence read on the capture executor vs our callback (goal <= 1.1x), 3 rounds
#       (issues 34 and 52; DeviceTests.PipeWireCameraBenchmarkTests runs the same in CI, unjudged; the
#       session's own lines, `remote …`, `pid …`, are filtered out of the figures).
# vcam: in an instruction-timed rig boot (--icount), vivid (YUYV 640x480, 25 fps) served on a
#       v4l2loopback device (scripts/v4l2loopback.sh, exclusive_caps=1) to 1 and to 3 readers
#       (v4l2-ctl --stream-mmap): `… vcam`, the producer's CPU per frame, `mediadevices publish
#       --v4l2loopback` against gst-launch-1.0 v4l2src ! v4l2sink and ffmpeg -f v4l2 writing the
#       same frames to the same device (issue 54, goal <= 0.7x the better of them), 2 rounds.
# console: in an instruction-timed rig boot (--icount) with vivid (YUYV 640x480, 25 fps) and the emulated USB webcam (1920x1080
#       MJPEG, 30 fps): the browser console (Examples/Console, release) against ustreamer (PiKVM's
#       streamer, Debian's package), each alone on the camera serving multipart MJPEG to 1 and to
#       4 curl clients: the server's CPU per frame served, vivid's YUYV encoded to JPEG and the USB
#       camera's own JPEGs passed through (issue 37; goal <= 1.0x ustreamer for both), and for the
#       latter glass-to-client latency: the emulated camera logs when it made each frame
#       (MEDIADEVICES_USB_FRAME_LOG), the client finds the frame's counter in each part.
# screen: `… screen` on every backend at 1920x1080: KMS in two instruction-timed rig boots (--icount;
#       bochs with --display std, virtio-gpu with --display virtio; grab and conversion against
#       memcpy of the framebuffer and ffmpeg -f kmsgrab, so only the ratios mean something), X11
#       on an Xvfb here (client CPU against ffmpeg -f x11grab), the portal in a headless sway
#       here (scripts/wayland-session.sh, a moving picture: client CPU against gst-launch-1.0
#       pipewiresrc on its own portal session). On each backend, then: the frames() sequence read
#       on the capture executor against a consumer callback in the same process (goal <= 1.1x),
#       CPU and wake-ups per frame (KMS: mapped, and exporting DMA-BUF where the driver exports;
#       X11 and the portal in native time here; X11 also instruction-timed as KMS is: an Xvfb
#       inside a rig boot with --icount, the process's CPU, kernel included).
# testpattern: `… testpattern`: the test pattern (YUYV 640x480, 30 fps) read by its frames()
#       sequence on the capture executor against a consumer callback (goal <= 1.1x, issue 52),
#       CPU and wake-ups per frame in one process, here (native time) and in a one-vCPU rig boot
#       with --icount.
# Both rig boots have one vCPU (`scripts/rig.sh run --cpus 1`): one emulator thread, so no vCPU
# migrations and no second emulator thread for the host to schedule. In one pair of boots the
# callback row gave 286-339 µs a frame across 4 runs with one vCPU against 432-559 µs with two.
# Figures go to stdout and to out/benchmark-*.txt (or .json with --json); with text output each
# part's tables then go into docs/benchmarks.md (its current figures) and are appended to
# docs/benchmarks-history.md (scripts/benchmark-report.py).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/swift-environment.sh  # the toolchain on PATH, the same environment for SwiftPM in every script

part=${1:-all}
format=txt
json=()
if [[ ${2:-} == --json || ${1:-} == --json ]]; then json=(--json); format=json; [[ $part == --json ]] && part=all; fi
case $part in host|rig|icount|usb|pipewire|vcam|console|screen|testpattern|all) ;; *) echo "usage: scripts/benchmark.sh [host|rig|icount|usb|pipewire|vcam|console|screen|testpattern|all] [--json]" >&2; exit 2 ;; esac

# The benchmark tool, and the command-line tool whose `capture` it measures (MEDIADEVICES_TOOL).
swift build -c release --product mediadevices
swift build -c release --product mediadevices-benchmark
bin="$(swift build -c release --show-bin-path)"
export MEDIADEVICES_TOOL="$bin/mediadevices"
tool="env MEDIADEVICES_TOOL=$MEDIADEVICES_TOOL $bin/mediadevices-benchmark"
mkdir -p out
# report PART FILE…: the part's text tables into docs/benchmarks.md and its history (JSON runs write none).
report() {
    [[ $format == txt ]] || return 0
    local part=$1; shift
    scripts/benchmark-report.py "$part" "${@/%/.txt}"
}
# The rig parts' first commands in the guest: a writable HOME and the usual PATH.
# shellcheck disable=SC2016  # expanded in the guest
guest_home='export HOME=/tmp/benchmark-home PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin; mkdir -p $HOME'
# guest_vivid OPTION…: the guest's commands that load vivid with OPTIONs and wait (5 s at most) for /dev/video0.
guest_vivid() {
    # shellcheck disable=SC2016  # expanded in the guest
    printf 'modprobe vivid %s; for i in $(seq 50); do [ -e /dev/video0 ] && break; sleep 0.1; done' "$*"
}
# newest NAME: the newest benchmark-NAME.$format a guest wrote into its run folder (.rig/runs/*/), if any.
newest() {
    # shellcheck disable=SC2012  # ls -t: the newest by time; the names are the rig's run folders and ours
    ls -t .rig/runs/*/"benchmark-$1.$format" 2>/dev/null | head -n 1
}
# bring_out NAME…: each NAME's newest file into out/ (benchmark-NAME.$format).
bring_out() {
    local name file
    for name; do
        file=$(newest "$name")
        if [[ -n $file ]]; then cp "$file" "out/benchmark-$name.$format"; fi
    done
}

if [[ $part == host || $part == all ]]; then
    echo "benchmark: conversion and MJPEG on the host ($(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs))"
    "$bin/mediadevices-benchmark" conversion "${json[@]}" | tee "out/benchmark-conversion.$format"
    "$bin/mediadevices-benchmark" mjpeg --rounds 21 "${json[@]}" | tee "out/benchmark-mjpeg.$format"
    "$bin/mediadevices-benchmark" mjpeg-scaled --rounds 21 "${json[@]}" | tee "out/benchmark-mjpeg-scaled.$format"
    "$bin/mediadevices-benchmark" mjpeg-threads --threads "$(nproc)" "${json[@]}" | tee "out/benchmark-mjpeg-threads.$format"
    report host out/benchmark-conversion out/benchmark-mjpeg out/benchmark-mjpeg-scaled out/benchmark-mjpeg-threads
fi

if [[ $part == rig || $part == all ]]; then
    echo "benchmark: capture CPU and latency in the rig (QEMU, TCG emulation)"
    scripts/rig.sh run --cpus 1 --timeout 2700 -- sh -c "
        set -e
        $guest_home
        $(guest_vivid n_devs=1)
        v4l2-ctl -d /dev/video0 -c timestamp_source=1
        $tool capture --device /dev/video0 --repeats 3 ${json[*]} | tee \"\$MEDIADEVICES_RIG_OUT/benchmark-capture.$format\"
        $tool capture --device /dev/video0 --size 1280x720 --fps 10 --frames 200 --repeats 3 ${json[*]} \
            | tee \"\$MEDIADEVICES_RIG_OUT/benchmark-capture-720p.$format\"
        $tool latency --device /dev/video0 ${json[*]} | tee \"\$MEDIADEVICES_RIG_OUT/benchmark-latency.$format\"
    "
    bring_out capture capture-720p latency
    report rig out/benchmark-capture out/benchmark-capture-720p out/benchmark-latency
fi

if [[ $part == rig || $part == icount || $part == all ]]; then
    echo "benchmark: capture CPU in the rig, instruction-timed (QEMU -icount: 1 ns per guest instruction)"
    title="Instruction-timed (scripts/rig.sh run --icount: guest time advances 1 ns per guest instruction; one round: rows working on one thread repeat to 0.1 us on a quiet host, rows handing frames between threads vary)"
    scripts/rig.sh run --cpus 1 --icount --timeout 2700 -- sh -c "
        set -e
        $guest_home
        $(guest_vivid n_devs=1)
        v4l2-ctl -d /dev/video0 -c timestamp_source=1
        for size in 640x480 1280x720; do
            if [ \$size = 640x480 ]; then name=capture-icount; rate='--fps 25'; else name=capture-720p-icount; rate='--fps 10 --frames 200'; fi
            out=\"\$MEDIADEVICES_RIG_OUT/benchmark-\$name.$format\"
            [ $format = json ] || echo '$title' | tee \"\$out\"
            $tool capture --device /dev/video0 --size \$size \$rate --repeats 1 ${json[*]} | tee -a \"\$out\"
        done
    "
    bring_out capture-icount capture-720p-icount
    report icount out/benchmark-capture-icount out/benchmark-capture-720p-icount
fi

if [[ $part == rig || $part == usb || $part == all ]]; then
    echo "benchmark: MJPEG capture CPU on the emulated USB camera in the rig (QEMU, TCG emulation)"
    sizes=(1280x720 1920x1080)
    stamp=$(mktemp)
    trap 'rm -f "$stamp"' EXIT
    scripts/rig.sh run --cpus 1 --usb camera --timeout 3600 -- sh -c "
        set -e
        $guest_home
        export JSIMD_FORCESSE2=1
        camera=\$(readlink -f /dev/v4l/by-id/*MD-CAM-RIG-video-index0)
        for size in ${sizes[*]}; do
            $tool capture --device \$camera --format MJPG --size \$size --fps 30 --output-format I420 \\
                --frames 100 --baseline-frames 20 --repeats 3 ${json[*]} | tee \"\$MEDIADEVICES_RIG_OUT/benchmark-usb-mjpeg-\$size.$format\"
        done
        for scaled in 1920x1080:640x360 1280x720:320x180; do
            size=\${scaled%:*} output=\${scaled#*:}
            $tool capture --device \$camera --format MJPG --size \$size --fps 30 --output-format I420 --output-size \$output \\
                --frames 100 --baseline-frames 20 --repeats 3 ${json[*]} | tee \"\$MEDIADEVICES_RIG_OUT/benchmark-usb-mjpeg-\$size-\$output.$format\"
        done
    "
    # One file for both sizes (a JSON object keyed by size with --json).
    newest=$(newest "usb-mjpeg-${sizes[-1]}")
    [[ -n $newest && $newest -nt $stamp && -s $newest ]] || { echo "benchmark: the USB camera part wrote no figures" >&2; exit 1; }
    run=$(dirname "$newest")
    if [[ $format == json ]]; then
        { printf '{'; sep=; for size in "${sizes[@]}"; do printf '%s"%s": ' "$sep" "$size"; cat "$run/benchmark-usb-mjpeg-$size.json"; sep=', '; done; printf '}\n'; } \
            >"out/benchmark-usb-mjpeg.json"
        { printf '{'; sep=; for file in "$run"/benchmark-usb-mjpeg-*-*x*.json; do name=${file##*benchmark-usb-mjpeg-}; printf '%s"%s": ' "$sep" "${name%.json}"; cat "$file"; sep=', '; done; printf '}\n'; } \
            >"out/benchmark-usb-mjpeg-scaled.json"
    else
        for size in "${sizes[@]}"; do cat "$run/benchmark-usb-mjpeg-$size.txt"; done >"out/benchmark-usb-mjpeg.txt"
        cat "$run"/benchmark-usb-mjpeg-*-*x*.txt >"out/benchmark-usb-mjpeg-scaled.txt" 2>/dev/null || true
    fi
    report usb out/benchmark-usb-mjpeg out/benchmark-usb-mjpeg-scaled
fi

if [[ $part == pipewire || $part == all ]]; then
    echo "benchmark: camera CPU per frame through PipeWire in the rig, instruction-timed (QEMU -icount)"
    scripts/rig.sh run --cpus 1 --icount --timeout 1800 -- sh -c "
        set -e
        $guest_home
        $(guest_vivid n_devs=1 node_types=1)
        scripts/camera-session.sh run /tmp/benchmark-session --wait /dev/video0 -- \\
            $tool pipewire --device /dev/video0 --rounds 3 ${json[*]} \\
            | grep -v -E '^(remote|pid|node|seconds|bus) ' | tee \"\$MEDIADEVICES_RIG_OUT/benchmark-pipewire-icount.$format\"
    "
    bring_out pipewire-icount
    report pipewire out/benchmark-pipewire-icount
fi

if [[ $part == vcam || $part == all ]]; then
    echo "benchmark: serving a camera on a v4l2loopback device in the rig, instruction-timed (QEMU -icount)"
    scripts/v4l2loopback.sh build >/dev/null
    scripts/rig.sh run --cpus 1 --icount --timeout 1800 -- sh -c "
        set -e
        $guest_home
        $(guest_vivid n_devs=1 node_types=1)
        scripts/v4l2loopback.sh load >/dev/null
        $tool vcam --device /dev/video0 --loopback /dev/video10 \\
            --reset 'scripts/v4l2loopback.sh unload && scripts/v4l2loopback.sh load >/dev/null' ${json[*]} | tee \"\$MEDIADEVICES_RIG_OUT/benchmark-vcam-icount.$format\"
    "
    bring_out vcam-icount
    report vcam out/benchmark-vcam-icount
fi

if [[ $part == console || $part == all ]]; then
    echo "benchmark: the browser console's MJPEG serving against ustreamer in the rig, instruction-timed (QEMU -icount)"
    command -v ustreamer >/dev/null || { echo "benchmark: ustreamer is not installed (scripts/install.sh adds Debian's package)" >&2; exit 1; }
    apps=(--package-path Examples/Console --scratch-path "$PWD/.build-apps" -c release)
    swift build "${apps[@]}" --product media-console
    console="$(swift build "${apps[@]}" --show-bin-path)/media-console"
    stamp=$(mktemp)
    trap 'rm -f "$stamp"' EXIT
    # The emulated camera logs when it made each frame: the glass end of the MJPEG rows' latency.
    MEDIADEVICES_USB_FRAME_LOG=/tmp/usb-frames.log scripts/rig.sh run --cpus 1 --icount --usb camera --timeout 3600 -- sh -c "
        set -e
        $guest_home
        modprobe vivid n_devs=1 node_types=1 input_types=0
        vivid=
        for i in \$(seq 100); do
            for node in /sys/class/video4linux/video*; do grep -q '^vivid-000-vid-cap' \$node/name 2>/dev/null && vivid=/dev/\${node##*/}; done
            [ -n \"\$vivid\" ] && break; sleep 0.1
        done
        [ -n \"\$vivid\" ] || { echo 'benchmark: vivid did not appear' >&2; exit 1; }
        camera=\$(readlink -f /dev/v4l/by-id/*MD-CAM-RIG-video-index0)
        out=\"\$MEDIADEVICES_RIG_OUT/benchmark-console.$format\"
        $tool console --console $console --device \$vivid --format YUYV --size 640x480 --fps 25 ${json[*]} | tee \"\$out\"
        $tool console --console $console --device \$camera --format MJPG --size 1920x1080 --fps 30 --frame-log /tmp/usb-frames.log ${json[*]} \\
            | tee -a \"\$out\"
    "
    newest=$(newest console)
    [[ -n $newest && $newest -nt $stamp && -s $newest ]] || { echo "benchmark: the console part wrote no figures" >&2; exit 1; }
    cp "$newest" "out/benchmark-console.$format"
    report console out/benchmark-console
fi

if [[ $part == screen || $part == all ]]; then
    echo "benchmark: screens: KMS in the rig (bochs, virtio-gpu), X11 on Xvfb and the portal in a headless sway on this machine"
    for display in std virtio; do
        driver=bochs; [[ $display == virtio ]] && driver=virtio-gpu
        # Instruction-timed (--icount): the sequence-vs-callback rows are judged on it.
        RIG_KERNEL_APPEND="video=Virtual-1:1920x1080" scripts/rig.sh run --cpus 1 --icount --display $display --timeout 1800 -- \
            sh -c "modprobe $driver && MEDIADEVICES_TIMING='instruction-timed: rig --icount, 1 ns a guest instruction' $bin/mediadevices-benchmark screen ${json[*]}" \
            | tee "out/benchmark-screen-kms-$display.$format"
    done
    # Xvfb names its display on the descriptor -displayfd gives it.
    fifo=$(mktemp -u); mkfifo "$fifo"
    Xvfb -displayfd 3 -noreset -nolisten tcp -screen 0 1920x1080x24 +extension RANDR 3>"$fifo" 2>/dev/null &
    xvfb=$!
    read -r -t 30 number <"$fifo" || { kill $xvfb; echo "benchmark: Xvfb did not start" >&2; exit 1; }
    rm -f "$fifo"
    DISPLAY=":$number" "$bin/mediadevices-benchmark" screen --frames 100 "${json[@]}" | tee "out/benchmark-screen-x11.$format"
    kill $xvfb; wait $xvfb 2>/dev/null || true
    scripts/wayland-session.sh run --size=1920x1080 -- sh -c \
        "scripts/wayland-session.sh animate \"\$WAYLAND_SESSION_DIR\" 30 && $bin/mediadevices-benchmark screen --backend portal --frames 100 ${json[*]}" \
        | tee "out/benchmark-screen-portal.$format"
    # X11 instruction-timed as KMS is: an Xvfb inside a one-vCPU --icount boot (no ffmpeg peer
    # there: its rows are the native run's above). The portal's headless desktop did not finish
    # starting in such a boot within 40 min, so its sequence row stays native (and callgrind's).
    scripts/rig.sh run --cpus 1 --icount --timeout 1800 -- sh -c "
        set -e; export HOME=/tmp/benchmark-home; mkdir -p \$HOME; fifo=/tmp/xvfb-display; mkfifo \$fifo
        Xvfb -displayfd 3 -noreset -nolisten tcp -screen 0 1920x1080x24 +extension RANDR 3>\$fifo 2>/dev/null &
        read -r number <\$fifo
        DISPLAY=:\$number MEDIADEVICES_TIMING='instruction-timed: rig --icount, 1 ns a guest instruction' \\
            $bin/mediadevices-benchmark screen --frames 100 --no-ffmpeg ${json[*]}" \
        | tee "out/benchmark-screen-x11-icount.$format"
    report screen out/benchmark-screen-kms-std out/benchmark-screen-kms-virtio out/benchmark-screen-x11 out/benchmark-screen-portal \
        out/benchmark-screen-x11-icount
fi

if [[ $part == testpattern || $part == all ]]; then
    echo "benchmark: the test pattern's sequence on its capture executor against its callback, natively and instruction-timed"
    "$bin/mediadevices-benchmark" testpattern "${json[@]}" | tee "out/benchmark-testpattern.$format"
    scripts/rig.sh run --cpus 1 --icount --timeout 900 -- \
        env MEDIADEVICES_TIMING='instruction-timed: rig --icount, 1 ns a guest instruction' "$bin/mediadevices-benchmark" testpattern "${json[@]}" \
        | tee "out/benchmark-testpattern-icount.$format"
    report testpattern out/benchmark-testpattern out/benchmark-testpattern-icount
fi
