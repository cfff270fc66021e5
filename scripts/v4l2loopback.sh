#!/usr/bin/env bash
# v4l2loopback: the loopback video device of the virtual-camera tests (VirtualCameraTests), for the
# rig. Debian 12 ships it as source only (v4l2loopback-dkms, 0.12.7), so it is built out of tree
# against the rig kernel's headers, as scripts/vimc.sh builds vimc, and loaded unsigned.
#
#   scripts/v4l2loopback.sh build [KVER]   on the host: fetch (apt-get download, no install)
#                                          v4l2loopback-dkms (whatever version the archive serves) and
#                                          the headers scripts/vimc.sh plans for KVER (linux-headers-KVER,
#                                          its -common, linux-kbuild: not the kernel's source), build
#                                          v4l2loopback.ko and cache it in
#                                          .rig/v4l2loopback/KVER/v4l2loopback.ko (with versions.txt).
#                                          Quick when cached. Prints the path.
#   scripts/v4l2loopback.sh load [OPTIONS] in the guest: load its dependencies (mc, videodev) and the
#                                          cached module with OPTIONS (default: video_nr=10
#                                          exclusive_caps=1 card_label=MediaDevices-Loopback), and
#                                          wait for /dev/video10 (or the video_nr given).
#   scripts/v4l2loopback.sh unload         in the guest: remove it.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
mode=${1:-}
me=v4l2loopback
. scripts/lib.sh

# plan: the packages to fetch: the headers scripts/vimc.sh plans for $kver (not the kernel's source)
# and v4l2loopback-dkms, whatever version the archive serves.
plan() {
	if ! scripts/vimc.sh plan "$kver" | grep -v '^linux-source-'; then
		say "no headers for $kver (scripts/vimc.sh plan says why above)"
		return 1
	fi
	echo v4l2loopback-dkms
}

# dkms_source WORK: the module's source in v4l2loopback-dkms, unpacked in WORK/root.
dkms_source() {
	local source
	# shellcheck disable=SC2012  # the first match of the glob or nothing; the names are Debian's
	source=$(ls -d "$1"/root/usr/src/v4l2loopback-* 2>/dev/null | head -n 1)
	[[ -n $source ]] || die "v4l2loopback-dkms holds no usr/src/v4l2loopback-*: the package's layout changed"
	echo "$source"
}

case $mode in
build)
	kver=$(rig_kernel_version "${2:-}")
	module_build v4l2loopback "$kver" plan dkms_source || exit 1
	;;
load)
	shift
	kver=$(uname -r)
	module=$repo/.rig/v4l2loopback/$kver/v4l2loopback.ko
	[[ -f $module ]] || die "no $module: run 'scripts/v4l2loopback.sh build $kver' on the host first (scripts/install.sh does)"
	options=("$@")
	(( ${#options[@]} )) || options=(video_nr=10 exclusive_caps=1 card_label=MediaDevices-Loopback)
	number=10
	for option in "${options[@]}"; do [[ $option == video_nr=* ]] && number=${option#video_nr=}; done
	for dependency in mc videodev; do
		modprobe "$dependency" || die "modprobe $dependency failed (the kernel's modules are not on /lib/modules?)"
	done
	grep -qw '^v4l2loopback' /proc/modules || insmod "$module" "${options[@]}" ||
		die "insmod $module ${options[*]} failed: $(dmesg | tail -n 3)"
	wait_until 10 test -c "/dev/video$number" ||
		die "loaded but /dev/video$number did not appear within 10 s: $(ls /dev/video* 2>&1) $(dmesg | tail -n 5)"
	;;
unload)
	grep -qw '^v4l2loopback' /proc/modules && rmmod v4l2loopback
	exit 0
	;;
*)
	echo "usage: scripts/v4l2loopback.sh build [KVER] | load [OPTION=VALUE...] | unload" >&2
	exit 2
	;;
esac
