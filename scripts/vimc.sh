#!/usr/bin/env bash
# vimc: the kernel's virtual media-controller camera (sensor -> debayer -> scaler -> capture, the
# shape of a laptop MIPI camera) for the rig. Debian's kernel does not build it
# (# CONFIG_VIDEO_VIMC is not set), so it is built out of tree from Debian's own
# linux-source-6.1 against the rig kernel's headers, and loaded unsigned (the kernel does not
# force module signatures).
#
#   scripts/vimc.sh build [KVER]   on the host: fetch (apt-get download, no install) linux-source-6.1,
#                                  linux-headers-KVER, its -common and linux-kbuild-6.1, build
#                                  vimc.ko and cache it in .rig/vimc/KVER/vimc.ko (KVER: the rig's
#                                  kernel, `scripts/rig.sh kernel-version`). Quick when cached. Prints
#                                  the path. The versions are the ones the archive serves today
#                                  (scripts/apt-versions.sh): the headers of KVER's ABI (the kernel
#                                  package's own version if still served), their -common at the
#                                  headers' version exactly, kbuild and source of the same 6.1.x
#                                  (the nearest served); it says which it took, and when nothing
#                                  fits, what to do.
#   scripts/vimc.sh plan [KVER]    print those packages as NAME=VERSION lines, fetching nothing.
#   scripts/vimc.sh load           in the guest: load vimc's dependencies and the cached vimc.ko,
#                                  and wait for its media device. Start systemd-udevd first when
#                                  libcamera is to see it (libcamera lists only devices udev has
#                                  initialised).
#   scripts/vimc.sh unload         in the guest: remove vimc.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
mode=${1:-}
me=vimc
. scripts/lib.sh

# plan KVER: the packages to fetch, NAME=VERSION a line, each version one the archive serves
# (scripts/apt-versions.sh says on stderr which stand in for the kernel's own).
plan() {
	local kver=$1 abi=${1%-amd64} series image headers common kbuild source
	[[ $kver =~ ^([0-9]+[.][0-9]+)[.][0-9]+-[0-9]+-amd64$ ]] ||
		{ echo "vimc: '$kver' is not a Debian amd64 kernel version (like 6.1.0-56-amd64)" >&2; return 2; }
	series=${BASH_REMATCH[1]}
	# The kernel package's own version: as the rig fetched it, else as the archive serves it now.
	image=$(cat "$repo/.rig/kernel/$kver/.deb-version" 2>/dev/null || scripts/apt-versions.sh served "linux-image-$kver" | sed -n 1p)
	[[ -n $image ]] || image=$(scripts/apt-versions.sh served "linux-headers-$kver" | sed -n 1p)
	[[ -n $image ]] || { echo "vimc: the archive serves neither linux-image-$kver nor its headers: run apt-get update; if it still serves none, the rig's kernel is gone from the archive: 'rm -rf .rig/kernel .rig/kernel-version' takes linux-image-amd64's current one" >&2; return 1; }
	# The headers must be of the kernel's ABI (the package's name) and -common of the same
	# version; kbuild's tools and the driver's source may be any nearby $series.x.
	headers=$(scripts/apt-versions.sh pick "linux-headers-$kver" "$image" package) || return 1
	common=$(scripts/apt-versions.sh pick "linux-headers-$abi-common" "$headers" exact) || return 1
	kbuild=$(scripts/apt-versions.sh pick "linux-kbuild-$series" "$headers" series) || return 1
	source=$(scripts/apt-versions.sh pick "linux-source-$series" "$headers" series) || return 1
	printf '%s\n' "linux-headers-$kver=$headers" "linux-headers-$abi-common=$common" \
		"linux-kbuild-$series=$kbuild" "linux-source-$series=$source"
}

# vimc_source WORK: vimc's folder, taken out of the kernel's source tarball unpacked in WORK/root.
vimc_source() {
	local tarball tree
	tarball=$(ls "$1"/root/usr/src/linux-source-*.tar.xz) || return 1
	tree=$(basename "$tarball" .tar.xz)
	tar -xJf "$tarball" -C "$1" "$tree/drivers/media/test-drivers/vimc" || return 1
	echo "$1/$tree/drivers/media/test-drivers/vimc"
}

case $mode in
build)
	kver=$(rig_kernel_version "${2:-}")
	# shellcheck disable=SC2317  # called by module_build
	planned() { plan "$kver"; }
	module_build vimc "$kver" planned vimc_source CONFIG_VIDEO_VIMC=m || exit 1
	;;
plan)
	plan "$(rig_kernel_version "${2:-}")"
	;;
load)
	kver=$(uname -r)
	module=$repo/.rig/vimc/$kver/vimc.ko
	[[ -f $module ]] || die "no $module: run 'scripts/vimc.sh build $kver' on the host first"
	for dependency in v4l2-tpg videobuf2-vmalloc videobuf2-dma-contig videobuf2-v4l2 mc videodev; do
		modprobe "$dependency" || die "modprobe $dependency failed"
	done
	grep -qw '^vimc' /proc/modules || insmod "$module" || die "insmod $module failed: $(dmesg | tail -n 3)"
	# shellcheck disable=SC2317  # called by wait_until
	vimc_listed() { grep -qsi vimc /sys/bus/media/devices/*/model 2>/dev/null; }
	wait_until 20 vimc_listed ||
		die "vimc loaded but no media device appeared within 20 s: $(ls /sys/bus/media/devices/ 2>&1) $(dmesg | tail -n 5)"
	;;
unload)
	grep -qw '^vimc' /proc/modules && rmmod vimc
	exit 0
	;;
*)
	echo "usage: scripts/vimc.sh build [KVER] | plan [KVER] | load | unload" >&2
	exit 2
	;;
esac
