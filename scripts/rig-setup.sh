# shellcheck shell=bash
# rig-setup.sh: the rig's set-up, sourced by scripts/rig.sh (its constants and helpers, log and die,
# are defined there): the host's packages, the guest kernel (resolved from apt, fetched once,
# cached in .rig/kernel/) and the initramfs (busybox, the 9p modules, scripts/rig-init.sh).
# `setup` runs all of it under a lock and sets KVER, KDIR, KERNEL_IMAGE and INITRAMFS.

# --- setup: packages -----------------------------------------------------------

# ensure_packages: apt-get install whichever of PACKAGES (and, without their
# recommends, PACKAGES_NO_RECOMMENDS) is missing.
ensure_packages() {
	local missing=() bare=() p
	for p in "${PACKAGES[@]}"; do
		[[ $(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null) == installed ]] || missing+=("$p")
	done
	for p in "${PACKAGES_NO_RECOMMENDS[@]}"; do
		[[ $(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null) == installed ]] || bare+=("$p")
	done
	[[ ${#missing[@]} -eq 0 && ${#bare[@]} -eq 0 ]] && return 0
	log "installing Debian packages: ${missing[*]} ${bare[*]}"
	as_root apt-get update -q ||
		die 125 "step 'install packages' failed: apt-get update failed (is a Debian mirror reachable?)"
	if [[ ${#missing[@]} -gt 0 ]]; then
		as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" ||
			die 125 "step 'install packages' failed: apt-get install ${missing[*]} failed" \
				"remedy: run 'apt-get update && apt-get install -y ${missing[*]}' by hand and read its errors"
	fi
	if [[ ${#bare[@]} -gt 0 ]]; then
		as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${bare[@]}" ||
			die 125 "step 'install packages' failed: apt-get install --no-install-recommends ${bare[*]} failed" \
				"remedy: run 'apt-get update && apt-get install -y --no-install-recommends ${bare[*]}' by hand and read its errors"
	fi
}

# ensure_modules_mountpoint: the guest bind-mounts its kernel's modules on
# /lib/modules, so that directory must exist on the host root (read-only in the
# guest). It does not on hosts whose own kernel has no modules installed; an
# empty directory is enough.
ensure_modules_mountpoint() {
	[[ -d /lib/modules ]] && return 0
	log "creating /lib/modules on the host (mount point for the guest's kernel modules)"
	as_root mkdir -p /lib/modules ||
		die 125 "step 'setup' failed: cannot create /lib/modules" \
			"remedy: run 'mkdir -p /lib/modules' as root"
}

# --- setup: kernel -------------------------------------------------------------

# kernel_version_from_apt: the VERSION in the linux-image-VERSION package that
# linux-image-amd64 depends on (empty if apt knows no such package).
kernel_version_from_apt() {
	apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: linux-image-\([0-9][^ ]*\)$/\1/p' | sed -n 1p || true
}

# newest_cached_kernel: the newest kernel version already in .rig/kernel/.
newest_cached_kernel() {
	local d
	for d in "$RIG_DIR"/kernel/*/; do
		[[ -f $d/.complete ]] && basename "$d"
	done | sort -V | tail -n1 || true
}

# apt_lists_key: changes whenever apt's package lists change (apt-get update).
apt_lists_key() {
	find /var/lib/apt/lists -maxdepth 1 -type f -printf '%f %s %T@\n' 2>/dev/null |
		sort | sha256sum | cut -c1-16 || true
}

# resolve_kernel_version: sets KVER. $RIG_KERNEL_VERSION pins it; otherwise ask
# apt (updating its lists once if needed); offline, fall back to the cache.
# apt-cache takes ~1 s, so its answer is remembered until apt's lists change.
resolve_kernel_version() {
	KVER=${RIG_KERNEL_VERSION:-}
	[[ -n $KVER ]] && return 0
	local key k v memo=$RIG_DIR/kernel-version
	key=$(apt_lists_key)
	if [[ -f $memo ]] && read -r k v <"$memo" && [[ $k == "$key" && -n $v ]]; then
		KVER=$v
		return 0
	fi
	KVER=$(kernel_version_from_apt)
	if [[ -z $KVER ]]; then
		as_root apt-get update -q >&2 || true
		KVER=$(kernel_version_from_apt)
	fi
	if [[ -z $KVER ]]; then
		KVER=$(newest_cached_kernel)
		[[ -n $KVER ]] ||
			die 125 "step 'resolve kernel version' failed: apt-cache names no linux-image-* for linux-image-amd64" \
				"remedy: run 'apt-get update' (needs a Debian mirror) or set RIG_KERNEL_VERSION"
		log "apt-cache names no kernel; using the cached $KVER"
		return 0
	fi
	echo "$(apt_lists_key) $KVER" >"$memo"
}

# ensure_kernel: download and extract linux-image-$KVER into .rig/kernel/$KVER
# (unless already there), and run depmod on it.
ensure_kernel() {
	KDIR=$RIG_DIR/kernel/$KVER
	[[ -f $KDIR/.complete ]] && return 0

	log "fetching kernel linux-image-$KVER (once; cached in $KDIR)"
	local tmp apt_download=(apt-get download -q)
	tmp=$(mktemp -d "$RIG_DIR/tmp.kernel.XXXXXX")
	# As root, apt would hand the download to its _apt user, which may not be
	# able to write here (and warns): download as root instead.
	[[ $EUID -eq 0 ]] && apt_download+=(-o APT::Sandbox::User=root)
	if ! (cd "$tmp" && "${apt_download[@]}" "linux-image-$KVER" >&2); then
		# The package lists may be stale (the mirror dropped that version).
		as_root apt-get update -q >&2 || true
		(cd "$tmp" && "${apt_download[@]}" "linux-image-$KVER" >&2) || {
			rm -rf "$tmp"
			die 125 "step 'download kernel' failed: apt-get download linux-image-$KVER failed" \
				"remedy: check the Debian mirror / run 'apt-get update'; or set RIG_KERNEL_VERSION to an available version"
		}
	fi
	local deb
	deb=$(ls "$tmp"/linux-image-"$KVER"_*.deb)
	mkdir "$tmp/root"
	dpkg-deb -x "$deb" "$tmp/root" ||
		{ rm -rf "$tmp"; die 125 "step 'extract kernel' failed: dpkg-deb -x $deb"; }
	[[ -f $tmp/root/boot/vmlinuz-$KVER && -d $tmp/root/lib/modules/$KVER ]] ||
		{ rm -rf "$tmp"; die 125 "step 'extract kernel' failed: no boot/vmlinuz-$KVER or lib/modules/$KVER in $deb"; }
	# The package's version (6.1.192-2): scripts/vimc.sh fetches the headers that match it.
	dpkg-deb -f "$deb" Version >"$tmp/root/.deb-version"
	depmod -b "$tmp/root" "$KVER" ||
		{ rm -rf "$tmp"; die 125 "step 'depmod' failed for $KVER (is kmod installed?)"; }
	extract_vmlinux "$tmp/root"
	touch "$tmp/root/.complete"
	rm -rf "$KDIR"
	mkdir -p "$RIG_DIR/kernel"
	mv "$tmp/root" "$KDIR"
	rm -rf "$tmp"
}

# extract_vmlinux ROOT: unpack ROOT/boot/vmlinuz-$KVER (a compressed bzImage)
# into ROOT/boot/vmlinux-$KVER, an uncompressed ELF kernel that QEMU boots
# directly through its PVH entry point. Under TCG that skips the BIOS boot path
# and the emulated in-guest decompression: about 4.5 s less per run. Optional:
# without it (unknown compression, no CONFIG_PVH) the bzImage is booted.
extract_vmlinux() {
	local root=$1 vmlinuz=$1/boot/vmlinuz-$KVER out=$1/boot/vmlinux-$KVER off
	grep -q '^CONFIG_PVH=y' "$root/boot/config-$KVER" 2>/dev/null || return 0
	grep -q '^CONFIG_KERNEL_XZ=y' "$root/boot/config-$KVER" || return 0
	# The xz stream starts at the first xz magic (FD 37 7A 58 5A 00).
	off=$(LC_ALL=C grep -m1 -obUaP '\xfd7zXZ\x00' "$vmlinuz" | cut -d: -f1 || true)
	[[ -n $off ]] || return 0
	# xz complains about the bzImage's trailing data; the output is complete.
	tail -c +"$((off + 1))" "$vmlinuz" | xz -dc >"$out.tmp" 2>/dev/null || true
	if [[ $(head -c4 "$out.tmp" | od -An -tx1 | tr -d ' ') == 7f454c46 ]]; then
		mv "$out.tmp" "$out"
	else
		rm -f "$out.tmp"
		log "note: could not unpack vmlinuz-$KVER; booting the bzImage (slower)"
	fi
}

# kernel_image: sets KERNEL_IMAGE, the kernel file QEMU boots.
kernel_image() {
	KERNEL_IMAGE=$KDIR/boot/vmlinux-$KVER
	[[ -f $KERNEL_IMAGE ]] || KERNEL_IMAGE=$KDIR/boot/vmlinuz-$KVER
}

# --- setup: initramfs ----------------------------------------------------------

# initramfs_modules: sets KO_FILES, the .ko files (absolute paths, dependencies
# first, no duplicates) needed to load INITRAMFS_MODULES, as resolved by the
# host's modprobe from the guest kernel's modules.dep/softdeps (9p needs netfs
# and fscache before it, 9pnet_virtio needs virtio_ring and virtio, ...).
# Modules built into the kernel show up as "builtin" and are skipped.
initramfs_modules() {
	local m deps line
	KO_FILES=()
	for m in "${INITRAMFS_MODULES[@]}"; do
		deps=$(modprobe -d "$KDIR" -S "$KVER" --show-depends "$m") ||
			die 125 "step 'build initramfs' failed: module $m not found for kernel $KVER"
		while read -r line; do
			[[ $line == insmod\ * ]] || continue
			line=${line#insmod }
			line=${line%% *} # drop module parameters, if any
			[[ " ${KO_FILES[*]} " == *" $line "* ]] || KO_FILES+=("$line")
		done <<<"$deps"
	done
}

# ensure_initramfs: build .rig/initramfs-$KVER.cpio.gz unless it is up to date
# (its .stamp holds a hash of all its inputs).
ensure_initramfs() {
	INITRAMFS=$RIG_DIR/initramfs-$KVER.cpio.gz
	[[ -f $INIT_SCRIPT ]] || die 125 "missing $INIT_SCRIPT (the guest init; part of the repo)"
	local busybox=/bin/busybox stamp
	# The stamp covers every input: init, busybox, kernel version, module
	# list and the code of the build functions themselves.
	stamp=$(cat "$INIT_SCRIPT" "$busybox" \
		<(echo "$KVER ${INITRAMFS_MODULES[*]}"; declare -f ensure_initramfs initramfs_modules) |
		sha256sum | cut -d' ' -f1)
	if [[ -f $INITRAMFS && $(cat "$INITRAMFS.stamp" 2>/dev/null) == "$stamp" ]]; then
		return 0
	fi
	# It must be the static busybox (from busybox-static): the initramfs has no libc.
	if ldd "$busybox" >/dev/null 2>&1; then
		die 125 "step 'build initramfs' failed: $busybox is dynamically linked" \
			"remedy: apt-get install busybox-static"
	fi

	log "building initramfs for $KVER"
	local tmp ko
	tmp=$(mktemp -d "$RIG_DIR/tmp.initramfs.XXXXXX")
	mkdir -p "$tmp"/{bin,dev,proc,sys,modules,newroot,rigout}
	cp "$busybox" "$tmp/bin/busybox"
	cp "$INIT_SCRIPT" "$tmp/init"
	chmod 755 "$tmp/init"
	initramfs_modules
	for ko in "${KO_FILES[@]}"; do
		cp "$ko" "$tmp/modules/"
		basename "$ko" >>"$tmp/modules/order"
	done
	(cd "$tmp" && find . -print0 | cpio --null -o -H newc -R 0:0 --quiet | gzip -1) \
		>"$INITRAMFS.tmp" || { rm -rf "$tmp"; die 125 "step 'build initramfs' failed (cpio/gzip)"; }
	mv "$INITRAMFS.tmp" "$INITRAMFS"
	echo "$stamp" >"$INITRAMFS.stamp"
	rm -rf "$tmp"
}

# setup: everything a run needs; concurrent runs serialize on a lock here.
# Sets KVER, KDIR, KERNEL_IMAGE, INITRAMFS.
setup() {
	mkdir -p "$RIG_DIR"
	# Physical paths only: the guest init uses them below /newroot from the
	# initramfs, where an absolute symlink (say .rig -> /elsewhere) on the
	# path would resolve against the initramfs instead of the host root.
	RIG_DIR=$(cd "$RIG_DIR" && pwd -P)
	local lockfd
	exec {lockfd}>"$RIG_DIR/setup.lock"
	flock "$lockfd"
	rm -rf "$RIG_DIR"/tmp.* # left over by an interrupted setup (we hold the lock)
	ensure_packages
	ensure_modules_mountpoint
	resolve_kernel_version
	ensure_kernel
	KDIR=$(cd "$KDIR" && pwd -P)
	kernel_image
	ensure_initramfs
	exec {lockfd}>&- # release (and do not leak the fd into QEMU)
}
