#!/usr/bin/env bash
# camera-session: a PipeWire camera session as a desktop runs one, for the device tests and for
# trying things by hand inside the rig (root, no systemd): a D-Bus session bus, pipewire and
# wireplumber with its V4L2 and libcamera monitors on (ALSA and Bluetooth off), so that every
# camera the kernel offers becomes a PipeWire node (media.class Video/Source, media.role Camera).
#
#   scripts/camera-session.sh start DIR [--portal] [--wait DEVICE]...
#       Starts the session in DIR (created afresh: its HOME, XDG_RUNTIME_DIR and logs) and
#       returns once WirePlumber made a node for every DEVICE (a V4L2 path such as /dev/video0,
#       matched against api.v4l2.path, or a libcamera id such as "platform/vimc.0 Sensor B",
#       matched against api.libcamera.path). Prints
#         remote DIR/pipewire-0     (for PIPEWIRE_REMOTE)
#         pid NAME PID              per process started
#         node DEVICE ID SERIAL     per --wait, the node's global id and object.serial
#         seconds S                 from start until the last node appeared
#       and exits 0. With --portal it also starts the Camera portal headless: scripts/portal-access.py
#       (a test Access backend answering each dialog with the number in DIR/access-response, 0
#       granted; its calls in DIR/access.log) and xdg-desktop-portal using it (the permission
#       store is D-Bus activated, kept in DIR/.local/share/flatpak/db), and prints
#         bus ADDRESS               (for DBUS_SESSION_BUS_ADDRESS)
#       On failure it prints the logs' tails to standard error, kills what it
#       started and exits 1.
#   scripts/camera-session.sh stop DIR
#       Kills what `start` started in DIR (SIGTERM, then SIGKILL after 2 s) and waits for it.
#   scripts/camera-session.sh wireplumber DIR [--wait DEVICE]...
#       Starts wireplumber again in DIR's running session (after a test killed it: its nodes go
#       and come back) and waits for the nodes as `start` does, printing `node` lines.
#   scripts/camera-session.sh run DIR [--wait DEVICE]... -- COMMAND [ARGS...]
#       start, then COMMAND with PIPEWIRE_REMOTE, XDG_RUNTIME_DIR and DBUS_SESSION_BUS_ADDRESS
#       pointing at the session; stop on every exit (COMMAND's end, a failure, a signal).
#       Exits with COMMAND's status.
#
# The V4L2 monitor (SPA's v4l2 udev enumeration) only makes nodes for single-planar video
# capture devices it can open read-write, so root or the `video` group. Devices that appear
# after start (hotplug) are seen only through udev's events: systemd-udevd must be running.
set -u
repo=$(cd "$(dirname "$0")/.." && pwd)
me=camera-session
# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"

usage() { echo "usage: camera-session start DIR [--wait DEVICE]... | stop DIR | wireplumber DIR [--wait DEVICE]... | run DIR [--wait DEVICE]... -- COMMAND..." >&2; exit 2; }

# stop_session DIR: SIGTERM to every pid in DIR/started (last first), SIGKILL to what is left
# after 2 s.
stop_session() {
	local dir=$1 pids=() pid
	[ -f "$dir/started" ] || return 0
	while read -r _ _ pid; do pids=("$pid" "${pids[@]}"); done <"$dir/started"
	for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
	for _ in $(seq 1 40); do
		for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && break; pid=; done
		[ -z "$pid" ] && break
		sleep 0.05
	done
	for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null; done
	rm -f "$dir/started"
}

# node_of DEVICE: "ID SERIAL" of the camera node wrapping DEVICE, or nothing.
node_of() {
	# Bounded, as every client call here: a daemon that takes the connection and never answers
	# would otherwise hold the test that started this script for ever (it reads our output to EOF).
	timeout 10 pw-dump 2>/dev/null | jq -r --arg d "$1" '.[] | select(.type == "PipeWire:Interface:Node")
		| .info.props | select(."media.class" == "Video/Source")
		| select(."api.v4l2.path" == $d or ."api.libcamera.path" == $d)
		| "\(.["object.id"]) \(.["object.serial"])"' 2>/dev/null | head -n 1
}

# start_wireplumber: wireplumber in the current directory's session, recorded in ./started.
# Its informational messages too (WIREPLUMBER_DEBUG=3: which target policy-node.lua linked each
# stream to, and whether it moved one: a stalled stream's test prints those lines).
start_wireplumber() {
	WIREPLUMBER_DEBUG=3 wireplumber </dev/null >>wireplumber.log 2>&1 &
	echo "pid wireplumber $!" >>started
}

# wait_nodes DEVICE...: prints "node DEVICE ID SERIAL" per DEVICE once each has a node; on
# a device without one within 30 s prints that device alone and returns 1.
wait_nodes() {
	local device node
	for device in "$@"; do
		node=
		for _ in $(seq 1 300); do
			node=$(node_of "$device")
			[ -n "$node" ] && break
			sleep 0.1
		done
		[ -n "$node" ] || { echo "$device"; return 1; }
		echo "node $device $node"
	done
}

start_session() {
	local dir=$1
	shift
	local waits=() portal=
	while [ $# -gt 0 ]; do
		case $1 in
		--wait) [ $# -ge 2 ] || usage; waits+=("$2"); shift 2 ;;
		--portal) portal=1; shift ;;
		*) usage ;;
		esac
	done
	# The daemons keep the descriptors they inherit (a test's pipes held open by a daemon leave
	# the test waiting for ever): close everything above 2.
	# shellcheck disable=SC2045  # the names in /proc/PID/fd are numbers
	for fd in $(ls /proc/$$/fd); do [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done
	rm -rf "$dir" && mkdir -p "$dir" && chmod 700 "$dir" || exit 1
	cd "$dir" || exit 1
	export HOME="$dir" XDG_RUNTIME_DIR="$dir" PIPEWIRE_REMOTE="$dir/pipewire-0"
	local started
	started=$(date +%s.%N)
	: >started
	fail() {
		echo "camera-session: $1" >&2
		tail -n 8 ./*.log >&2 2>/dev/null
		stop_session "$dir"
		exit 1
	}
	dbus-daemon --session --fork --nopidfile --print-address=3 --print-pid=4 3>bus 4>dbus.pid </dev/null >dbus.log 2>&1 \
		|| fail "dbus-daemon did not start"
	echo "pid dbus-daemon $(cat dbus.pid)" >>started
	DBUS_SESSION_BUS_ADDRESS=$(cat bus)
	export DBUS_SESSION_BUS_ADDRESS
	pipewire </dev/null >pipewire.log 2>&1 &
	echo "pid pipewire $!" >>started
	wait_until 20 timeout 5 pw-cli info 0 >/dev/null 2>&1 || fail "pipewire did not answer within 20 s"
	# WirePlumber with the camera monitors only: ALSA's would take the rig's sound cards, and
	# the Bluetooth monitor needs systemd-logind (wireplumber exits without it).
	mkdir -p .config/wireplumber/main.lua.d .config/wireplumber/bluetooth.lua.d
	cat >.config/wireplumber/main.lua.d/90-enable-all.lua <<'EOF'
-- MediaDevices' camera session: the V4L2 and libcamera monitors, no ALSA.
load_module("metadata")
default_access.enable()
v4l2_monitor.enable()
libcamera_monitor.enable()
device_defaults.enable()
stream_defaults.enable()
load_script("intended-roles.lua")
load_script("suspend-node.lua")
EOF
	echo '-- off: its logind monitor needs systemd-logind' >.config/wireplumber/bluetooth.lua.d/90-enable-all.lua
	start_wireplumber
	local nodes
	nodes=$(wait_nodes "${waits[@]}") || fail "no PipeWire node for ${nodes##*$'\n'} within 30 s (is it a single-planar capture device, or a libcamera camera? wireplumber.log says what its monitors saw)"
	if [ -n "$portal" ]; then
		# After wireplumber (the portal counts PipeWire's camera nodes, and PipeWire's
		# module-portal must see the portal's name appear on the bus).
		ACCESS_RESPONSE_FILE="$dir/access-response" "$repo/scripts/portal-access.py" </dev/null >access.log 2>&1 &
		echo "pid portal-access $!" >>started
		wait_until 10 grep -q ready access.log || fail "scripts/portal-access.py did not start (python3-dbus, python3-gi?)"
		/usr/libexec/xdg-permission-store --replace </dev/null >permission-store.log 2>&1 &
		echo "pid xdg-permission-store $!" >>started
		mkdir -p portals
		printf '[portal]\nDBusName=org.freedesktop.impl.portal.desktop.mediadevicestest\nInterfaces=org.freedesktop.impl.portal.Access;\nUseIn=mediadevicestest\n' >portals/mediadevicestest.portal
		XDG_DESKTOP_PORTAL_DIR="$dir/portals" XDG_CURRENT_DESKTOP=mediadevicestest /usr/libexec/xdg-desktop-portal -v </dev/null >portal.log 2>&1 &
		echo "pid xdg-desktop-portal $!" >>started
		wait_until 10 grep -q "org.freedesktop.portal.Desktop acquired" portal.log
		grep -q "providing portal org.freedesktop.portal.Camera" portal.log || fail "xdg-desktop-portal offers no Camera portal"
		echo "bus $DBUS_SESSION_BUS_ADDRESS"
	fi
	echo "remote $PIPEWIRE_REMOTE"
	cat started
	[ -n "$nodes" ] && echo "$nodes"
	echo "seconds $(awk "BEGIN { print $(date +%s.%N) - $started }")"
}

command=${1:-}
[ $# -ge 2 ] || usage
dir=$2
shift 2
case $command in
start) start_session "$dir" "$@" ;;
stop) stop_session "$dir" ;;
wireplumber)
	waits=()
	while [ $# -gt 0 ]; do
		case $1 in
		--wait) [ $# -ge 2 ] || usage; waits+=("$2"); shift 2 ;;
		*) usage ;;
		esac
	done
	cd "$dir" || exit 1
	# shellcheck disable=SC2045  # the names in /proc/PID/fd are numbers
	for fd in $(ls /proc/$$/fd); do [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done
	DBUS_SESSION_BUS_ADDRESS=$(cat bus)
	export HOME="$dir" XDG_RUNTIME_DIR="$dir" PIPEWIRE_REMOTE="$dir/pipewire-0" DBUS_SESSION_BUS_ADDRESS
	start_wireplumber
	wait_nodes "${waits[@]}" || { echo "camera-session: no PipeWire node within 30 s" >&2; exit 1; }
	;;
run)
	args=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do args+=("$1"); shift; done
	[ $# -ge 2 ] || usage
	shift
	trap 'stop_session "$dir"' EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	(start_session "$dir" "${args[@]}") || exit 1
	DBUS_SESSION_BUS_ADDRESS=$(cat "$dir/bus")
	export HOME="$dir" XDG_RUNTIME_DIR="$dir" PIPEWIRE_REMOTE="$dir/pipewire-0" DBUS_SESSION_BUS_ADDRESS
	"$@"
	;;
*) usage ;;
esac
