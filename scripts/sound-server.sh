#!/usr/bin/env bash
# sound-server: starts a real sound server with a null sink for the device tests and the audio
# benchmark, inside the rig (root, no systemd, no desktop), and returns once clients can use it.
#
#   scripts/sound-server.sh pulseaudio DIR    PulseAudio
#   scripts/sound-server.sh pipewire DIR      what Debian 12 desktops run: a D-Bus session bus,
#                                          pipewire, wireplumber and pipewire-pulse
#
# DIR (created afresh) is the server's HOME and XDG_RUNTIME_DIR and holds its logs. Either way
# the server speaks the PulseAudio protocol on DIR's socket and has a null sink `mdsink` (48 kHz
# stereo) whose monitor `mdsink.monitor` gives back what is played into it. Prints
#   server unix:SOCKET        (for PULSE_SERVER)
#   pid NAME PID              per process started; the last is the one clients talk to
#   seconds S                 from start until pactl answered
# and exits 0; on failure prints the logs' tails to standard error and exits 1 (what it
# started is killed). Stop the server by killing the printed pids.
#
# PulseAudio runs with shared memory off (--disable-shm): under load its memfd transport has
# crashed the daemon (PulseAudio 16's race "Importing ... non-registered memfd ID", then an
# assertion in memblock.c). Clients then send audio through the socket, as they do to
# pipewire-pulse. SOUND_SERVER_SHM=yes turns it back on (to measure what it costs).
set -u
me=sound-server
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
kind=${1:?usage: sound-server pulseaudio|pipewire DIR} dir=${2:?usage: sound-server pulseaudio|pipewire DIR}

# The servers keep the descriptors they inherit (pipewire and wireplumber do; a test's spawn
# pipes held open by a daemon leave the test waiting for ever): close everything above 2.
# shellcheck disable=SC2045  # the names in /proc/PID/fd are numbers
for fd in $(ls /proc/$$/fd); do [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done

rm -rf "$dir" && mkdir -p "$dir" && chmod 700 "$dir" && cd "$dir" || exit 1
export HOME="$dir" XDG_RUNTIME_DIR="$dir"
started=$(date +%s.%N)
pids=()

fail() {
	echo "sound-server: $kind: $1" >&2
	tail -n 5 ./*.log >&2 2>/dev/null
	for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null; done
	exit 1
}

# pactl on the server's socket.
server_pactl() { PULSE_SERVER="unix:$socket" pactl "$@"; }
# Whether it answers; the null sink's monitor is listed; mdsink is the default sink.
answers() { server_pactl info >/dev/null 2>&1; }
has_monitor() { server_pactl list short sources 2>/dev/null | grep -q mdsink.monitor; }
mdsink_is_default() { server_pactl info 2>/dev/null | grep -qx 'Default Sink: mdsink'; }

case "$kind" in
pulseaudio)
	socket="$dir/native"
	# Without its CPU limit: on a busy host the emulated daemon can use more than the limit's
	# share and would end itself ("Soft CPU time limit exhausted").
	case "${SOUND_SERVER_SHM:-no}" in
	yes) shm=no ;;
	no) shm=yes ;;
	*) fail "SOUND_SERVER_SHM is '${SOUND_SERVER_SHM}' (yes or no)" ;;
	esac
	# Realtime scheduling stays (the daemon must keep time under load) without its kill limit:
	# PulseAudio sets RLIMIT_RTTIME to 200 ms of CPU without blocking, and the kernel then
	# SIGKILLs the daemon without a word. In the emulated guest under load, mixing the null sink's
	# 2 s block (resampling a 44.1 kHz stream) can take that long: a running daemon vanished with an
	# empty log, and clients got "Connection refused".
	printf 'rlimit-rttime = -1\n' >daemon.conf
	PULSE_CONFIG="$PWD/daemon.conf" \
	pulseaudio -n --daemonize=no --exit-idle-time=-1 --disallow-exit --no-cpu-limit \
		--disable-shm=$shm --use-pid-file=no --log-target=stderr --log-level=error \
		-L "module-native-protocol-unix auth-anonymous=1 socket=$socket" \
		-L "module-null-sink sink_name=mdsink rate=48000 channels=2" </dev/null >pulseaudio.log 2>&1 &
	pids+=($!); echo "pid pulseaudio $!" >started
	wait_until 20 answers || fail "pulseaudio did not answer within 20 s"
	;;
pipewire)
	socket="$dir/pulse/native"
	dbus-daemon --session --fork --nopidfile --print-address=3 --print-pid=4 3>bus 4>dbus.pid </dev/null >dbus.log 2>&1 \
		|| fail "dbus-daemon did not start"
	pids+=("$(cat dbus.pid)"); echo "pid dbus-daemon $(cat dbus.pid)" >started
	DBUS_SESSION_BUS_ADDRESS=$(cat bus)
	export DBUS_SESSION_BUS_ADDRESS
	pipewire </dev/null >pipewire.log 2>&1 &
	pids+=($!); echo "pid pipewire $!" >>started
	# wireplumber's Bluetooth monitor needs systemd-logind, which the rig has not: without this
	# user configuration turning Bluetooth off, wireplumber exits.
	mkdir -p .config/wireplumber/bluetooth.lua.d
	echo '-- off: its logind monitor needs systemd-logind, and wireplumber exits without it' \
		>.config/wireplumber/bluetooth.lua.d/90-enable-all.lua
	wireplumber </dev/null >wireplumber.log 2>&1 &
	pids+=($!); echo "pid wireplumber $!" >>started
	pipewire-pulse </dev/null >pipewire-pulse.log 2>&1 &
	pids+=($!); echo "pid pipewire-pulse $!" >>started
	wait_until 20 answers || fail "pipewire-pulse did not answer within 20 s"
	server_pactl load-module module-null-sink sink_name=mdsink rate=48000 channels=2 >/dev/null \
		|| fail "pactl load-module module-null-sink failed"
	wait_until 5 has_monitor || fail "the null sink's monitor never appeared"
	# wireplumber links streams to sinks: until its policy has run, a stream is created and never
	# becomes ready. Choosing the new sink as the default is a sign that it runs.
	wait_until 20 mdsink_is_default || fail "wireplumber did not make mdsink the default sink within 20 s"
	;;
*)
	echo "sound-server: unknown server '$kind' (pulseaudio or pipewire)" >&2
	exit 2
	;;
esac
echo "server unix:$socket"
cat started
echo "seconds $(awk "BEGIN { print $(date +%s.%N) - $started }")"
