#!/usr/bin/env bash
# wayland-session: a headless Wayland desktop with a working ScreenCast portal, for the tests of
# the portal backend. Runs on the host, as root; the desktop runs as the unprivileged system
# user `mdsession` (sway refuses root), and root clients (the tests, `mediadevices`) use it.
#
#   scripts/wayland-session.sh setup
#       Installs Debian's sway, swaybg, grim, pipewire, wireplumber, dbus, xdg-desktop-portal,
#       and builds xdg-desktop-portal-wlr from Debian's source package with
#       scripts/patches/xdpw-*.patch (a cast without DMA-BUF), cached in /var/cache/mediadevices.
#   scripts/wayland-session.sh start DIR [--no-screencast] [--cancel] [--hang] [--size=WxH]
#       Starts the session in the background and returns once the portal answers. DIR (created)
#       gets: env (KEY=VALUE lines a client exports), background.png (the picture on the screen,
#       640x480 or --size, pixel-exact), startup (seconds from start until each component was ready, and total), pids, logs/.
#       --no-screencast: no xdg-desktop-portal-wlr, so the portal has no ScreenCast interface.
#       --cancel: every ScreenCast SelectSources is answered "cancelled by the user" (response 1).
#       --hang: every ScreenCast SelectSources waits for a chooser that never answers (a dialog
#       nobody answers), for tests that cancel the wait.
#       --owner=PID: the process the session belongs to (default: the caller, $PPID). A session
#       whose owner has ended (a test run killed before it could stop the session) is stopped by
#       the next start, or by `cleanup`.
#   scripts/wayland-session.sh stop DIR
#       Stops every process of the session and removes its runtime directory.
#   scripts/wayland-session.sh cleanup
#       Stops the sessions whose owner has ended (and those older than an hour that name no
#       owner, from before owners were kept): what killed test runs left running.
#   scripts/wayland-session.sh bg DIR COLOR|picture
#       Shows a solid colour ('#rrggbb') or the background picture again; returns once the
#       screen shows it (a grim capture equals it). Root may also drive sway directly, with
#       DIR/env exported: swaymsg output HEADLESS-1 bg '#00ff00' solid_color. Replacing the
#       background shows sway's grey (#3f3f3f) for a moment: a cast sees one such frame first.
#   scripts/wayland-session.sh animate DIR [FPS]
#       Plays ffplay's moving test pattern full screen (30 fps by default) until the session
#       stops: a screen that changes all the time, for the screen benchmark.
#   scripts/wayland-session.sh run [start options] -- CMD...
#       start in a temporary directory, CMD with DIR/env and WAYLAND_SESSION_DIR=DIR exported,
#       stop; CMD's exit status.
#
# The session: a private XDG_RUNTIME_DIR /run/mdsession-XXXXXX (0700, mdsession), a session
# dbus-daemon that lets root connect too, sway (headless, pixman, one output HEADLESS-1 at
# 640x480, no Xwayland, no input devices) showing background.png 1:1, pipewire, wireplumber
# (no device monitors), xdg-desktop-portal-wlr (chooser none, HEADLESS-1, restore tokens on)
# and /usr/libexec/xdg-desktop-portal. Failures name the component and print its log's tail.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
me="wayland-session"
user=mdsession
width=640 height=480
timeout=20   # seconds each component may take to become ready
cache=/var/cache/mediadevices

# shellcheck source=scripts/lib.sh
. "$here/lib.sh"
usage() { die "usage: wayland-session setup | start DIR [--no-screencast|--cancel|--hang] [--size=WxH] [--owner=PID] | stop DIR | cleanup | bg DIR COLOR|picture | animate DIR [FPS] | run [start options] -- CMD..."; }

# The patched xdpw's cache directory: Debian's version and the patch's hash name it, so a changed
# patch or a new Debian revision builds anew.
xdpw_binary() {
	local version sum
	version=$(apt-cache show --no-all-versions xdg-desktop-portal-wlr 2>/dev/null | sed -n 's/^Version: //p' | head -n 1)
	[[ -n $version ]] || version=unknown
	sum=$(cat "$here"/patches/xdpw-*.patch | sha256sum | cut -c 1-12)
	echo "$cache/xdpw-$version-$sum/xdg-desktop-portal-wlr"
}

# ---------------------------------------------------------------------------------------------
# setup

PACKAGES=(sway swaybg grim pipewire pipewire-bin wireplumber dbus dbus-daemon dbus-bin xdg-desktop-portal util-linux python3
          dpkg-dev meson ninja-build pkg-config gcc libc6-dev libdrm-dev libinih-dev libgbm-dev
          libpipewire-0.3-dev libwayland-dev wayland-protocols libsystemd-dev)

setup() {
	[[ $(id -u) == 0 ]] || die "setup: run as root (it installs Debian packages)"
	local started missing=() package
	started=$(date +%s.%N)
	for package in "${PACKAGES[@]}"; do
		[[ $(dpkg-query -W -f='${db:Status-Status}' "$package" 2>/dev/null) == installed ]] || missing+=("$package")
	done
	# Debian's source packages, for xdg-desktop-portal-wlr: same mirrors and suites as the
	# binary ones, in a file of our own.
	local sources=/etc/apt/sources.list.d/mediadevices-src.sources updated=no
	if [[ ! -e $sources ]]; then
		local binary=/etc/apt/sources.list.d/debian.sources
		[[ -r $binary ]] || die "setup: $binary is missing: this expects Debian 12's deb822 sources to copy for deb-src"
		{
			echo "# Written by MediaDevices' scripts/wayland-session.sh setup: Debian's source packages"
			echo "# (it builds xdg-desktop-portal-wlr from them). Same entries as $binary."
			sed 's/^Types: deb$/Types: deb-src/' "$binary"
		} >"$sources.tmp" && mv "$sources.tmp" "$sources"
		updated=pending   # apt-get update reads the new file
	fi
	local binary_path
	binary_path=$(xdpw_binary)
	if (( ${#missing[@]} )) || [[ $updated == pending ]] || [[ ! -x $binary_path ]]; then
		echo "$me: apt-get update" >&2
		apt-get update -q >/dev/null || die "setup: apt-get update failed: is a Debian mirror reachable?"
		binary_path=$(xdpw_binary)
	fi
	if (( ${#missing[@]} )); then
		echo "$me: installing Debian packages: ${missing[*]}" >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null ||
			die "setup: apt-get install ${missing[*]} failed; run it by hand to read why"
	fi
	if [[ ! -x $binary_path ]]; then
		build_xdpw "$binary_path"
	fi
	if ! id -u "$user" >/dev/null 2>&1; then
		useradd --system --user-group --home-dir /nonexistent --no-create-home --shell /usr/sbin/nologin "$user" ||
			die "setup: useradd $user failed"
	fi
	echo "$me: setup done in $(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $started }") s; xdg-desktop-portal-wlr is $binary_path" >&2
}

# Builds Debian's xdg-desktop-portal-wlr with the project's patch into $1 (and wlr.portal beside it).
build_xdpw() {
	local target=$1 work
	work=$(mktemp -d /tmp/mediadevices-xdpw.XXXXXX)
	chmod 0755 "$work"   # apt-get source downloads as _apt
	echo "$me: building xdg-desktop-portal-wlr from Debian's source package in $work" >&2
	(
		cd "$work"
		apt-get source -q xdg-desktop-portal-wlr >source.log 2>&1 ||
			{ tail -n 5 source.log >&2; exit 1; }
		cd xdg-desktop-portal-wlr-*/
		for patch in "$here"/patches/xdpw-*.patch; do
			patch -p1 --forward --quiet <"$patch" >>../build.log 2>&1 ||
				{ echo "$me: $patch does not apply to $(basename "$PWD")" >&2; tail -n 5 ../build.log >&2; exit 1; }
		done
		# As debian/rules builds it, without the systemd unit and the man pages.
		{ nice meson setup build --buildtype=release -Dsystemd=disabled -Dman-pages=disabled \
			-Dc_args=-Wno-error=implicit-function-declaration &&
		  nice ninja -C build -j 2; } >>../build.log 2>&1 ||
			{ echo "$me: the build failed (log: $work/build.log)" >&2; tail -n 15 ../build.log >&2; exit 1; }
		mkdir -p "$(dirname "$target")"
		install -m 0755 build/xdg-desktop-portal-wlr "$target.tmp"
		install -m 0644 wlr.portal "$(dirname "$target")/wlr.portal"
		mv "$target.tmp" "$target"
	) || die "setup: building xdg-desktop-portal-wlr failed"
	rm -rf "$work"
}

# ---------------------------------------------------------------------------------------------
# start

# Writes background.png (and background.ppm, grim's format, to compare with) into $1: four
# quadrants red, green, blue, grey (200,100,50) and a 32x32 one-pixel black/white checkerboard
# in the middle, which any scaling or filtering would blur.
write_background() {
	/usr/bin/python3 -S "$here/tools/background_image.py" picture "$1" "$width" "$height"
}

# Runs a command as the session user with the session's environment, without capabilities
# unless user_caps says otherwise.
user_caps=(--inh-caps=-all)
as_user() {
	( exec_as_user "$@" )
}
exec_as_user() {
	exec setpriv --reuid="$user" --regid="$user" --init-groups "${user_caps[@]}" \
		env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$rt/home" XDG_RUNTIME_DIR="$rt" \
		XDG_CONFIG_HOME="$rt/home/.config" XDG_CURRENT_DESKTOP=sway XDG_SESSION_TYPE=wayland \
		LANG=C.UTF-8 "${session_env[@]}" "$@"
}

# Starts $2... as the session user in the background, its output in logs/$1.log.
launch() {
	local name=$1; shift
	( exec_as_user "$@" ) </dev/null >"$dir/logs/$name.log" 2>&1 &
	echo "$name $!" >>"$dir/pids"
}

now() { date +%s.%N; }
since() { awk "BEGIN { printf \"%.2f\", $(now) - $1 }"; }

# fail COMPONENT MESSAGE: names it, prints its log's tail, stops what was started.
fail() {
	echo "$me: $1: $2" >&2
	if [[ -s $dir/logs/$1.log ]]; then
		echo "--- last lines of $dir/logs/$1.log:" >&2
		tail -n 15 "$dir/logs/$1.log" >&2
	fi
	stop_session "$dir" 2>/dev/null || true
	exit 1
}

# wait_for COMPONENT DESCRIPTION COMMAND...: polls COMMAND for up to $timeout s, records the time.
wait_for() {
	local name=$1 what=$2; shift 2
	local deadline=$(( $(date +%s) + timeout ))
	until "$@" >/dev/null 2>&1; do
		if [[ -n ${watch_pid:-} ]] && ! kill -0 "$watch_pid" 2>/dev/null; then
			fail "$name" "exited before $what"
		fi
		(( $(date +%s) < deadline )) || fail "$name" "not ready after ${timeout} s: $what"
		sleep 0.05
	done
	echo "$name $(since "$started")" >>"$dir/startup"
}

# A test's spawn pipes held open by a daemon leave the test waiting for ever: close everything
# above 2 (as scripts/sound-server.sh does) before launching one.
close_inherited() {
	local fd
	# shellcheck disable=SC2045,SC2015  # the names in /proc/PID/fd are numbers; || true is meant for a low fd and a failed close alike
	for fd in $(ls /proc/$$/fd); do (( fd > 2 )) && eval "exec $fd>&-" 2>/dev/null || true; done
}

pid_of() { awk -v n="$1" '$1 == n { print $2 }' "$dir/pids"; }

start() {
	dir=${1:-}; [[ -n $dir ]] || usage; shift
	local screencast=yes cancel=no hang=no owner=$PPID
	for option; do
		case $option in
		--owner=*)
			owner=${option#--owner=}
			[[ $owner =~ ^[0-9]+$ ]] || usage ;;
		--no-screencast) screencast=no ;;
		--cancel) cancel=yes ;;
		--hang) hang=yes ;;
		--size=*)
			[[ $option =~ ^--size=([0-9]+)x([0-9]+)$ ]] || usage
			width=${BASH_REMATCH[1]} height=${BASH_REMATCH[2]} ;;
		*) usage ;;
		esac
	done
	[[ $(id -u) == 0 ]] || die "start: run as root (the session runs as the user $user)"
	local missing=() tool
	for tool in sway swaybg swaymsg grim pipewire pw-cli wireplumber dbus-daemon dbus-send setpriv /usr/bin/python3 /usr/libexec/xdg-desktop-portal; do
		command -v "$tool" >/dev/null || missing+=("$tool")
	done
	id -u "$user" >/dev/null 2>&1 || missing+=("the user $user")
	local xdpw
	xdpw=$(xdpw_binary)
	[[ $screencast == no || -x $xdpw ]] || missing+=("$xdpw (the patched xdg-desktop-portal-wlr)")
	(( ${#missing[@]} == 0 )) || die "start: missing ${missing[*]}: run scripts/install.sh (or scripts/wayland-session.sh setup) as root"

	close_inherited
	cleanup_orphans

	mkdir -p "$dir" && dir=$(cd "$dir" && pwd)
	rm -rf "$dir/logs" "$dir/env" "$dir/startup" "$dir/pids"
	mkdir -p "$dir/logs"
	: >"$dir/pids"; : >"$dir/startup"
	started=$(now)

	rt=$(mktemp -d /run/mdsession-XXXXXX)
	# The owner, by PID and start time (a PID is reused): `cleanup_orphans` stops the session once it has ended.
	echo "$owner $(start_time "$owner")" >"$rt/owner"
	echo "runtime $rt" >"$dir/pids"
	echo "size ${width}x${height}" >>"$dir/pids"
	chown "$user:$user" "$rt" && chmod 0700 "$rt"
	session_env=()
	as_user mkdir -p "$rt/home/.config" "$rt/config" "$rt/portals"
	write_background "$dir"
	install -o "$user" -m 0644 "$dir/background.png" "$rt/config/background.png"

	# D-Bus: the session bus of the user, which root may use too (by default only the bus's
	# owner may connect).
	as_user tee "$rt/config/dbus.conf" >/dev/null <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <keep_umask/>
  <listen>unix:path=$rt/bus</listen>
  <auth>EXTERNAL</auth>
  <servicedir>$rt/services</servicedir>
  <policy context="default">
    <allow user="root"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
EOF
	# Only the permission store is activatable (the portal keeps restore tokens there).
	as_user mkdir -p "$rt/services"
	as_user tee "$rt/services/org.freedesktop.impl.portal.PermissionStore.service" >/dev/null <<EOF
[D-BUS Service]
Name=org.freedesktop.impl.portal.PermissionStore
Exec=/usr/libexec/xdg-permission-store
EOF
	launch dbus dbus-daemon --config-file="$rt/config/dbus.conf" --nofork --nopidfile
	watch_pid=$(pid_of dbus)
	session_env=(DBUS_SESSION_BUS_ADDRESS="unix:path=$rt/bus")
	wait_for dbus "its socket answered" as_user dbus-send --session --dest=org.freedesktop.DBus --print-reply \
		/org/freedesktop/DBus org.freedesktop.DBus.GetId

	# sway: headless, pixman, one output (640x480 or --size) showing the picture 1:1 (centred, same size).
	as_user tee "$rt/config/sway" >/dev/null <<EOF
xwayland disable
output HEADLESS-1 mode ${width}x${height} position 0 0 bg $rt/config/background.png center #000000
default_border none
EOF
	session_env+=(SWAYSOCK="$rt/sway.sock")
	launch sway env WLR_BACKENDS=headless WLR_LIBINPUT_NO_DEVICES=1 WLR_RENDERER=pixman WLR_HEADLESS_OUTPUTS=1 \
		sway --config "$rt/config/sway"
	watch_pid=$(pid_of sway)
	wait_for sway "its IPC socket answered" as_user swaymsg -t get_outputs
	local display
	# shellcheck disable=SC2010  # the first socket's name in $rt, a folder of our own files with plain names
	display=$(cd "$rt" && ls wayland-* 2>/dev/null | grep -v '\.lock$' | head -n 1) || true
	[[ -n $display ]] || fail sway "no wayland socket in $rt"
	session_env+=(WAYLAND_DISPLAY="$display")
	# The picture is on the screen, pixel for pixel (swaybg draws it a little after sway starts).
	wait_for background "grim -o HEADLESS-1 showed background.png exactly" \
		screen_equals "$dir/background.ppm"

	launch pipewire pipewire
	watch_pid=$(pid_of pipewire)
	wait_for pipewire "pw-cli answered" as_user pw-cli info 0

	# WirePlumber without its device monitors (ALSA, V4L2, libcamera, Bluetooth): this session
	# only links screencast streams.
	as_user mkdir -p "$rt/home/.config/wireplumber/main.lua.d" "$rt/home/.config/wireplumber/bluetooth.lua.d"
	as_user tee "$rt/home/.config/wireplumber/main.lua.d/90-enable-all.lua" >/dev/null <<'EOF'
-- MediaDevices' test session: no device monitors.
load_module("metadata")
default_access.enable()
device_defaults.enable()
stream_defaults.enable()
load_script("intended-roles.lua")
load_script("suspend-node.lua")
EOF
	echo '-- off: its logind monitor needs systemd-logind' | as_user tee "$rt/home/.config/wireplumber/bluetooth.lua.d/90-enable-all.lua" >/dev/null
	launch wireplumber wireplumber
	watch_pid=$(pid_of wireplumber)
	wait_for wireplumber "the default metadata appeared" has_default_metadata

	if [[ $screencast == yes ]]; then
		local chooser="chooser_type=none
output_name=HEADLESS-1"
		# --cancel: a chooser that chooses nothing; xdpw answers SelectSources with response 1.
		[[ $cancel == yes ]] && chooser="chooser_type=simple
chooser_cmd=true"
		# --hang: a chooser the user never answers (it sleeps); SelectSources waits for it.
		[[ $hang == yes ]] && chooser="chooser_type=simple
chooser_cmd=sleep 600"
		as_user tee "$rt/config/xdpw" >/dev/null <<EOF
[screencast]
$chooser
EOF
		install -o "$user" -m 0644 "$(dirname "$xdpw")/wlr.portal" "$rt/portals/wlr.portal"
		# XDPW_PERSIST_MODE: without it xdpw 0.7.0 drops every persist_mode to 0 (no restore token).
		launch xdg-desktop-portal-wlr env XDPW_PERSIST_MODE=permanent "$xdpw" -l INFO -c "$rt/config/xdpw"
		watch_pid=$(pid_of xdg-desktop-portal-wlr)
		wait_for xdg-desktop-portal-wlr "it owned org.freedesktop.impl.portal.desktop.wlr" \
			as_user dbus-send --session --dest=org.freedesktop.DBus --print-reply /org/freedesktop/DBus \
			org.freedesktop.DBus.GetNameOwner string:org.freedesktop.impl.portal.desktop.wlr
	fi

	# The portal finds out who calls it (a Flatpak? a Snap? the host) by opening
	# /proc/CALLER/root, and refuses the call when it cannot ("Portal operation not allowed:
	# Unable to open /proc/PID/root"). The session user may not open a root process's: the
	# portal alone keeps CAP_SYS_PTRACE (ambient), which lets it, so root clients are served.
	user_caps=(--inh-caps=+sys_ptrace --ambient-caps=+sys_ptrace)
	launch xdg-desktop-portal env XDG_DESKTOP_PORTAL_DIR="$rt/portals" GIO_USE_VFS=local GSETTINGS_BACKEND=memory \
		/usr/libexec/xdg-desktop-portal --replace
	user_caps=(--inh-caps=-all)
	watch_pid=$(pid_of xdg-desktop-portal)
	# Asked as root, as the tests ask.
	wait_for xdg-desktop-portal "it owned org.freedesktop.portal.Desktop (asked as root)" \
		env DBUS_SESSION_BUS_ADDRESS="unix:path=$rt/bus" dbus-send --session --dest=org.freedesktop.portal.Desktop \
		--print-reply /org/freedesktop/portal/desktop org.freedesktop.DBus.Peer.Ping
	if [[ $screencast == yes ]]; then
		wait_for screencast "ScreenCast's version was readable (asked as root)" \
			env DBUS_SESSION_BUS_ADDRESS="unix:path=$rt/bus" dbus-send --session --dest=org.freedesktop.portal.Desktop \
			--print-reply /org/freedesktop/portal/desktop org.freedesktop.DBus.Properties.Get \
			string:org.freedesktop.portal.ScreenCast string:version
	elif DBUS_SESSION_BUS_ADDRESS="unix:path=$rt/bus" dbus-send --session --dest=org.freedesktop.portal.Desktop \
		--print-reply /org/freedesktop/portal/desktop org.freedesktop.DBus.Properties.Get \
		string:org.freedesktop.portal.ScreenCast string:version >/dev/null 2>&1; then
		fail xdg-desktop-portal "--no-screencast, yet the portal has a ScreenCast interface (another backend?)"
	fi
	unset watch_pid
	echo "total $(since "$started")" >>"$dir/startup"

	{
		echo "DBUS_SESSION_BUS_ADDRESS=unix:path=$rt/bus"
		echo "XDG_RUNTIME_DIR=$rt"
		echo "WAYLAND_DISPLAY=$display"
		echo "SWAYSOCK=$rt/sway.sock"
		echo "PIPEWIRE_RUNTIME_DIR=$rt"
		echo "XDG_CURRENT_DESKTOP=sway"
		echo "XDG_SESSION_TYPE=wayland"
	} >"$dir/env.tmp" && mv "$dir/env.tmp" "$dir/env"
	rm -f "$dir/background.ppm"
}

# True when grim's picture of HEADLESS-1 is byte for byte the PPM $1.
screen_equals() {
	as_user grim -o HEADLESS-1 -t ppm - | cmp -s - "$1"
}

has_default_metadata() {
	as_user pw-cli ls Metadata | grep -q 'metadata.name = "default"'
}

# ---------------------------------------------------------------------------------------------
# stop

# Every process whose environment names the session's runtime directory (the daemons and what
# they started: swaybg, xdg-permission-store, choosers), then the directory.
session_pids() {
	local rt=$1 pid
	for pid in $(pgrep -u "$user" || true); do
		tr '\0' '\n' 2>/dev/null <"/proc/$pid/environ" | grep -qxF "XDG_RUNTIME_DIR=$rt" && echo "$pid"
	done
	return 0
}

stop_session() {
	local dir=$1 rt
	[[ -f $dir/pids ]] || die "stop: $dir/pids is missing: no session was started in $dir"
	rt=$(awk '$1 == "runtime" { print $2 }' "$dir/pids")
	[[ $rt == /run/mdsession-* ]] || die "stop: $dir/pids names no runtime directory"
	# The recorded pids first (launch's as_user chain ends in exec, so these are the daemons).
	awk '$1 != "runtime" && $1 != "size" { print $2 }' "$dir/pids" | xargs -r kill -TERM 2>/dev/null || true
	stop_runtime "$rt"
	rm -f "$dir/env"
}

# The start time of process $1 (/proc/PID/stat's 22nd field, in clock ticks since boot), or
# nothing when it has ended.
start_time() {
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
	stat=${stat##*) }   # the command name may hold spaces and parentheses
	awk '{ print $20 }' <<<"$stat"
}

# Stops the sessions a killed run left: those whose owner (PID and start time in the runtime
# directory's `owner`) has ended, and those with no owner file older than an hour.
cleanup_orphans() {
	local rt owner started
	for rt in /run/mdsession-*; do
		[[ -d $rt ]] || continue
		owner="" started=""
		if [[ -f $rt/owner ]]; then
			read -r owner started <"$rt/owner" || true
			[[ -n $owner && -n $started && $(start_time "$owner") == "$started" ]] && continue
		else
			[[ -n $(find "$rt" -maxdepth 0 -mmin +60) ]] || continue
		fi
		echo "$me: stopping $rt, a session whose owner (${owner:-unknown}) has ended: processes $(session_pids "$rt" | paste -sd ' ' -)" >&2
		stop_runtime "$rt"
	done
}

# Stops every process of the session whose runtime directory is $1 (TERM, then KILL after 5 s)
# and removes the directory.
stop_runtime() {
	local rt=$1 pids
	local deadline=$(( $(date +%s) + 5 ))
	while pids=$(session_pids "$rt"); [[ -n $pids ]]; do
		if (( $(date +%s) >= deadline )); then
			# shellcheck disable=SC2086  # $pids is a list of process ids, one a word
			kill -KILL $pids 2>/dev/null || true
			sleep 0.2
			pids=$(session_pids "$rt")
			[[ -z $pids ]] || die "stop: processes $pids of the session would not end"
			break
		fi
		# shellcheck disable=SC2086  # $pids is a list of process ids, one a word
		kill -TERM $pids 2>/dev/null || true
		sleep 0.1
	done
	rm -rf "$rt"
}

# ---------------------------------------------------------------------------------------------
# bg

background() {
	local dir=${1:-} what=${2:-}
	[[ -n $dir && -n $what ]] || usage
	[[ -f $dir/env ]] || die "bg: $dir/env is missing: start a session in $dir first"
	rt=$(awk '$1 == "runtime" { print $2 }' "$dir/pids")
	local size
	size=$(awk '$1 == "size" { print $2 }' "$dir/pids")
	[[ -n $size ]] && width=${size%x*} height=${size#*x}
	local display
	display=$(sed -n 's/^WAYLAND_DISPLAY=//p' "$dir/env")
	session_env=(DBUS_SESSION_BUS_ADDRESS="unix:path=$rt/bus" SWAYSOCK="$rt/sway.sock" WAYLAND_DISPLAY="$display")
	local scratch expected
	scratch=$(mktemp -d /tmp/mediadevices-bg.XXXXXX)
	expected=$scratch/background.ppm
	if [[ $what == picture ]]; then
		as_user swaymsg output HEADLESS-1 bg "$rt/config/background.png" center '#000000' >/dev/null ||
			die "bg: swaymsg failed"
		write_background "$scratch"
	else
		[[ $what =~ ^#[0-9a-fA-F]{6}$ ]] || die "bg: COLOR is '#rrggbb' or 'picture', not '$what'"
		as_user swaymsg output HEADLESS-1 bg "$what" solid_color >/dev/null || die "bg: swaymsg failed"
		/usr/bin/python3 -S "$here/tools/background_image.py" solid "$what" "$width" "$height" >"$expected"
	fi
	local deadline=$(( $(date +%s) + timeout ))
	until screen_equals "$expected"; do
		(( $(date +%s) < deadline )) || { rm -rf "$scratch"; die "bg: the screen did not show $what within $timeout s"; }
		sleep 0.05
	done
	rm -rf "$scratch"
}

# ---------------------------------------------------------------------------------------------
# animate

# A picture that changes all the time (the screen benchmark's load): ffplay's test source
# (moving colour bars, a counter) full screen at RATE fps, drawn by SDL in shared memory; it
# ends with the session.
animate() {
	dir=${1:-}; local rate=${2:-30}
	[[ -n $dir && $rate =~ ^[0-9]+$ ]] || usage
	[[ -f $dir/env ]] || die "animate: $dir/env is missing: start a session in $dir first"
	command -v ffplay >/dev/null || die "animate: ffplay is missing: apt-get install ffmpeg"
	rt=$(awk '$1 == "runtime" { print $2 }' "$dir/pids")
	local size display
	size=$(awk '$1 == "size" { print $2 }' "$dir/pids")
	display=$(sed -n 's/^WAYLAND_DISPLAY=//p' "$dir/env")
	session_env=(DBUS_SESSION_BUS_ADDRESS="unix:path=$rt/bus" WAYLAND_DISPLAY="$display" SDL_VIDEODRIVER=wayland)
	close_inherited
	launch animation ffplay -hide_banner -loglevel error -nostats -fs -f lavfi -i "testsrc=size=${size:-${width}x${height}}:rate=$rate"
	sleep 1
	kill -0 "$(pid_of animation)" 2>/dev/null || { tail -n 15 "$dir/logs/animation.log" >&2; die "animate: ffplay exited"; }
}

# ---------------------------------------------------------------------------------------------

case ${1:-} in
setup) setup ;;
start) shift; start "$@" ;;
stop) [[ -n ${2:-} ]] || usage; stop_session "$2" ;;
cleanup) cleanup_orphans ;;
bg) shift; background "$@" ;;
animate) shift; animate "$@" ;;
run)
	shift
	options=()
	while [[ ${1:-} == --* && $1 != -- ]]; do options+=("$1"); shift; done
	[[ ${1:-} == -- ]] || usage
	shift
	(( $# )) || usage
	run_dir=$(mktemp -d /tmp/mediadevices-wayland.XXXXXX)
	# The session is stopped on every way out: CMD's end, a failure, SIGINT, SIGTERM, SIGHUP.
	# (SIGKILL leaves it to the next start's cleanup: this shell is its owner.)
	# CMD runs in the background, waited for, so that a signal reaches the trap at once (bash
	# runs traps only between commands) and is passed on to CMD; it keeps this shell's stdin.
	child=""
	trap '"$0" stop "$run_dir" 2>/dev/null || true; rm -rf "$run_dir"' EXIT
	trap '[[ -n $child ]] && kill -INT $child 2>/dev/null; exit 130' INT
	trap '[[ -n $child ]] && kill -TERM $child 2>/dev/null; exit 143' TERM
	trap '[[ -n $child ]] && kill -HUP $child 2>/dev/null; exit 129' HUP
	"$0" start "$run_dir" "${options[@]}" --owner=$$ || exit 1
	status=0
	exec 3<&0
	# shellcheck disable=SC1091  # the session's environment, written by start at run time
	( set -a; . "$run_dir/env"; set +a; export WAYLAND_SESSION_DIR=$run_dir; exec "$@" <&3 3<&- ) &
	child=$!
	wait "$child" || status=$?
	child=""
	trap - EXIT
	"$0" stop "$run_dir" || status=1
	rm -rf "$run_dir"
	exit "$status"
	;;
*) usage ;;
esac
