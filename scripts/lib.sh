# shellcheck shell=bash
# lib.sh: what the lab's bash scripts share, sourced (never run) from the repository's root after
# the script's own `cd "$(dirname "$0")/.."`:
#   . scripts/lib.sh
# Each script sets `me` (its name, the prefix of its messages) before it uses these.
#
#   die MESSAGE...              MESSAGE on stderr as "me: MESSAGE", exit 1
#   say MESSAGE...              MESSAGE on stderr as "me: MESSAGE" (progress, kept off stdout)
#   on_exit COMMAND             runs COMMAND when the script exits, after those added before it
#                               (one EXIT trap for all: a second `trap … EXIT` would replace the first)
#   wait_until SECONDS COMMAND...
#                               runs COMMAND every 50 ms until it succeeds (status 0) or SECONDS
#                               pass (status 1)
#   rig_kernel_version [KVER]   KVER if given; in a rig guest the running kernel; else the rig's
#                               kernel (scripts/rig.sh kernel-version), or die saying how to name it
#   apt_download DIR PLAN       apt-get download (no install) the packages PLAN prints (a function
#                               or command: NAME=VERSION or NAME, one a line) into DIR; when that
#                               fails (apt's lists may name versions the archive has dropped),
#                               apt-get update once, PLAN again and retry; writes DIR/versions.txt
#                               (NAME=VERSION of each .deb fetched)
#   kernel_headers WORK KVER    unpacks WORK/*.deb into WORK/root and prints the path of the
#                               headers of KVER there, made usable where they are (their Makefile
#                               names the -common headers by the installed path)
#   module_build NAME KVER PLAN SOURCE [MAKE_ARGUMENT...]
#                               the out-of-tree module NAME.ko for the Debian kernel KVER, built
#                               once and cached in .rig/NAME/KVER/ (beside versions.txt: the
#                               packages it was built from); prints its path. PLAN prints the
#                               packages (apt_download: the kernel's headers among them); SOURCE
#                               WORK prints the module's source folder once they are unpacked in
#                               WORK/root

me=${me:-$(basename "$0")}

die() { echo "$me: $*" >&2; exit 1; }
say() { echo "$me: $*" >&2; }

lib_exit_commands=()
lib_run_exit_commands() {
	local command
	for command in "${lib_exit_commands[@]}"; do eval "$command" || true; done
}
on_exit() {
	lib_exit_commands+=("$1")
	trap lib_run_exit_commands EXIT
}

wait_until() {
	local seconds=$1 tries
	shift
	tries=$(( seconds * 20 ))
	while (( tries-- > 0 )); do
		"$@" && return 0
		sleep 0.05
	done
	return 1
}

rig_kernel_version() {
	if [[ -n ${1:-} ]]; then echo "$1"; return; fi
	if [[ -d /proc/sys && ${MEDIADEVICES_RIG:-} == 1 ]]; then uname -r; return; fi
	scripts/rig.sh kernel-version || die "the rig's kernel version is unknown (see above), name it: $0 build KVER"
}

apt_download() {
	local dir=$1 plan=$2 packages download=(apt-get download -q) deb
	# As root, apt hands downloads to its _apt user, which may not write to DIR.
	[[ $EUID -eq 0 ]] && download+=(-o APT::Sandbox::User=root)
	packages=$($plan) || return 1
	# shellcheck disable=SC2086  # $packages is a list of package names, one a word
	if ! (cd "$dir" && "${download[@]}" $packages >&2); then
		say "apt-get download failed; updating apt's lists and trying once more"
		apt-get update -q >&2 || true
		packages=$($plan) || return 1
		# shellcheck disable=SC2086  # $packages is a list of package names, one a word
		(cd "$dir" && "${download[@]}" $packages >&2) ||
			{ say "apt-get download $(paste -sd' ' <<<"$packages") failed: is a Debian mirror reachable? (run as root)"; return 1; }
	fi
	for deb in "$dir"/*.deb; do printf '%s=%s\n' "$(dpkg-deb -f "$deb" Package)" "$(dpkg-deb -f "$deb" Version)"; done >"$dir/versions.txt"
	say "fetched $(paste -sd' ' "$dir/versions.txt")"
}

kernel_headers() {
	local work=$1 kver=$2 deb headers
	for deb in "$work"/*.deb; do dpkg-deb -x "$deb" "$work/root"; done
	headers=$work/root/usr/src/linux-headers-$kver
	[[ -f $headers/Makefile ]] || { say "no linux-headers-$kver among the packages fetched"; return 1; }
	# The headers' Makefile includes the -common one by its installed path: point it at ours.
	sed -i "s|/usr/src/linux-headers-|$work/root/usr/src/linux-headers-|" "$headers/Makefile"
	echo "$headers"
}

module_build() {
	local name=$1 kver=$2 plan=$3 source=$4 out work headers tree
	shift 4
	out=${repo:-$PWD}/.rig/$name/$kver
	if [[ -f $out/$name.ko ]]; then echo "$out/$name.ko"; return 0; fi
	work=$(mktemp -d)
	on_exit "rm -rf '$work'"
	say "building $name.ko for $kver from Debian's packages (once; cached in $out)"
	apt_download "$work" "$plan" || return 1
	headers=$(kernel_headers "$work" "$kver") || return 1
	tree=$("$source" "$work") || return 1
	make -s -C "$headers" M="$tree" "$@" modules >&2 ||
		die "building $name.ko failed (is gcc-12, the kernel's compiler, installed?)"
	mkdir -p "$out"
	cp "$work/versions.txt" "$out/versions.txt"
	cp "$tree/$name.ko" "$out/$name.ko"
	echo "$out/$name.ko"
}
