# shellcheck shell=bash
# rig-devices.sh: the rig's devices beyond the kernel's own virtual drivers, sourced by scripts/rig.sh:
# the emulated USB camera, microphone and webcam (usb-device-emulator on the host, attached over
# USB/IP: the guest's prologue) and the guest's network for --forward.

# --- USB devices ---------------------------------------------------------------

# usb_emulator: sets USB_EMULATOR, the usb-device-emulator binary (Tests/USBDeviceEmulator),
# building it if needed. RIG_USB_EMULATOR names one explicitly.
usb_emulator() {
	USB_EMULATOR=${RIG_USB_EMULATOR:-}
	if [[ -z $USB_EMULATOR ]]; then
		local swift=swift bin
		command -v swift >/dev/null || swift=/opt/swift/usr/bin/swift
		bin=$(cd "$REPO_ROOT" && "$swift" build --show-bin-path 2>/dev/null) ||
			die 125 "step 'usb devices' failed: 'swift build --show-bin-path' failed (is Swift installed?)"
		USB_EMULATOR=$bin/usb-device-emulator
		if [[ ! -x $USB_EMULATOR ]]; then
			log "building usb-device-emulator"
			(cd "$REPO_ROOT" && "$swift" build --product usb-device-emulator >&2) ||
				die 125 "step 'usb devices' failed: 'swift build --product usb-device-emulator' failed"
		fi
	fi
	[[ -x $USB_EMULATOR ]] || die 125 "step 'usb devices' failed: $USB_EMULATOR is not an executable"
	USB_EMULATOR=$(readlink -f "$USB_EMULATOR")
}

# usb_prologue DEVICES: the guest shell lines that load vhci-hcd and the class drivers, start
# udevd (for /dev/v4l/by-id) and the emulator, and wait until the devices are bound (else exit
# 125 with the emulator's and the kernel's last words). The command then runs as a child, and
# the epilogue unplugs the devices.
usb_prologue() {
	local devices=$1 args="" video=0 sound=0 d
	local -a wanted
	IFS=, read -ra wanted <<<"$devices"
	for d in "${wanted[@]}"; do
		case $d in
		camera) args+=" --camera $USB_CAMERA_SERIAL"; video=1 ;;
		microphone) args+=" --microphone $USB_MICROPHONE_SERIAL"; sound=1 ;;
		*) die 2 "--usb takes camera, microphone or camera,microphone (got '$d')" ;;
		esac
	done
	cat <<GUEST
modprobe vhci-hcd && modprobe uvcvideo && modprobe snd-usb-audio ||
	{ echo "rig: loading vhci-hcd, uvcvideo or snd-usb-audio failed" >&2; exit 125; }
/lib/systemd/systemd-udevd </dev/null >/dev/null 2>&1 &
rig_udevd=\$!
$(quote "$USB_EMULATOR")$args </dev/null >/tmp/usb-device-emulator.log 2>&1 &
rig_emulator=\$!
rig_usb_ready() {
	[ $video = 0 ] || ls /dev/v4l/by-id/*$USB_CAMERA_SERIAL-video-index0 >/dev/null 2>&1 || return 1
	[ $sound = 0 ] || grep -qs 1209:0002 /proc/asound/card*/usbid || return 1
}
rig_i=0
until rig_usb_ready; do
	rig_i=\$((rig_i + 1))
	if [ \$rig_i -gt 600 ] || ! kill -0 \$rig_emulator 2>/dev/null; then
		echo "rig: the USB devices ($devices) did not appear within 60 s" >&2
		cat /tmp/usb-device-emulator.log >&2; dmesg | tail -n 20 >&2; exit 125
	fi
	sleep 0.1
done
GUEST
}

# network_prologue: the guest shell lines that bring its network interface up (--forward):
# virtio-net, the address QEMU's user networking expects (10.0.2.15/24), loopback.
network_prologue() {
	cat <<'GUEST'
modprobe virtio_net || { echo "rig: loading virtio_net failed" >&2; exit 125; }
rig_if=
for rig_i in $(seq 50); do
	for rig_path in /sys/class/net/*; do [ "${rig_path##*/}" = lo ] || rig_if=${rig_path##*/}; done
	[ -n "$rig_if" ] && break
	sleep 0.1
done
[ -n "$rig_if" ] || { echo "rig: --forward: the guest has no network interface" >&2; exit 125; }
ip link set lo up && ip link set "$rig_if" up && ip addr add 10.0.2.15/24 dev "$rig_if" ||
	{ echo "rig: --forward: could not bring $rig_if up" >&2; exit 125; }
GUEST
}
