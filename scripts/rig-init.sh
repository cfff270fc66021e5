#!/bin/busybox sh
# shellcheck shell=dash  # busybox's ash, checked as dash, the nearest shell shellcheck knows
# rig-init.sh: /init of the rig's guest initramfs (see scripts/rig.sh).
#
# Runs as PID 1 inside the QEMU guest, with only a static busybox and a few
# kernel modules in the initramfs. It:
#   1. loads the virtio/9p modules listed (in dependency order) in /modules/order,
#   2. mounts the per-run results share ("rigout", writable) and reads
#      rig-boot.env from it (written by scripts/rig.sh on the host),
#   3. mounts the HOST's root filesystem ("hostroot", read-only 9p) on /newroot,
#      plus proc/sys/dev/devpts/shm/run/tmp, the checkout ("checkout", read-only
#      9p) at its host path, the guest kernel's modules on /lib/modules and the
#      results share at its host path,
#   4. chroots into it and runs rig-command.sh (the user's command),
#   5. writes the exit status into the results share, syncs and powers off.
#
# Serial ports (QEMU connects them on the host):
#   ttyS0: the command's stdout+stderr       -> the host's stdout
#   ttyS1: kernel console, this script's own -> rig-console.log
#   ttyS2: progress ("stage" lines)          -> rig-stage.log
# so the host's stdout carries nothing but the command's output, and the host
# can tell which step failed.

PATH=/bin
export PATH

/bin/busybox mkdir -p /proc /sys /dev
/bin/busybox mount -t devtmpfs devtmpfs /dev
# The initramfs has no /dev/console node, so the kernel could not give us
# stdin/stdout/stderr: take them from devtmpfs now.
exec </dev/console >/dev/console 2>&1
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys

# stage NAME...: record progress for the host (rig-stage.log), and in the
# kernel log (timestamped in rig-dmesg.txt).
stage() {
	echo "$*" >/dev/ttyS2
	echo "rig: stage $*" >/dev/kmsg
}

# fail MESSAGE: report a failed step and power off (the host sees no exit
# status, reads the stage log and exits non-zero).
fail() {
	echo "rig: guest: $*" >&2
	stage "FAILED $*"
	sync
	poweroff -f
	echo o >/proc/sysrq-trigger
	sleep 5
	exit 1 # PID 1 exiting panics the kernel; panic=-1 + -no-reboot ends QEMU.
}

# 9p mount options. msize: bigger messages, far fewer round trips.
P9OPTS=trans=virtio,version=9p2000.L,msize=512000

stage init
hostname rig 2>/dev/null
ip link set lo up 2>/dev/null

# --- 1. kernel modules (virtio_pci, 9pnet_virtio, 9p and their deps) ---
stage modules
while read -r ko; do
	[ -n "$ko" ] || continue
	insmod "/modules/$ko" || fail "loading kernel module $ko failed"
done </modules/order

# --- 2. the results share, and the run's boot parameters ---
stage mount-results
mkdir -p /rigout /newroot
mount -t 9p -o "$P9OPTS,cache=mmap" rigout /rigout ||
	fail "mounting the results share (9p tag rigout) failed"
[ -r /rigout/rig-boot.env ] || fail "rig-boot.env missing from the results share"
# rig-boot.env sets (all physical paths, resolved on the host, whose root is
# ours): RIG_CHECKOUT (the repository), RIG_RUN_DIR (the results dir), RIG_MODULES_DIR (the guest kernel's
# lib/modules), RIG_LIB_MODULES (/lib/modules), RIG_VAR_TMP (/var/tmp, or
# empty if missing).
# shellcheck source=/dev/null
. /rigout/rig-boot.env

# --- 3. the host's root filesystem and the mounts inside it ---
stage mount-root
mount -t 9p -o "ro,$P9OPTS,cache=loose" hostroot /newroot ||
	fail "mounting the host root filesystem (9p tag hostroot) failed"
[ -x /newroot/bin/sh ] || fail "host root mounted but /bin/sh is missing in it"

stage mount-chroot
R=/newroot
mount -t proc proc $R/proc || fail "mounting proc in the chroot failed"
mount -t sysfs sysfs $R/sys || fail "mounting sysfs in the chroot failed"
mount -t devtmpfs devtmpfs $R/dev || fail "mounting devtmpfs in the chroot failed"
mkdir -p $R/dev/pts $R/dev/shm
# What udev would add: /dev/fd (bash's <(...)), /dev/stdin, /dev/stdout, ...
ln -sf /proc/self/fd $R/dev/fd
ln -sf /proc/self/fd/0 $R/dev/stdin
ln -sf /proc/self/fd/1 $R/dev/stdout
ln -sf /proc/self/fd/2 $R/dev/stderr
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts $R/dev/pts || fail "mounting devpts failed"
mount -t tmpfs -o mode=1777 tmpfs $R/dev/shm || fail "mounting /dev/shm failed"
mount -t tmpfs -o mode=755 tmpfs $R/run || fail "mounting tmpfs on /run failed"
mount -t tmpfs -o mode=1777 tmpfs $R/tmp || fail "mounting tmpfs on /tmp failed"
[ -n "$RIG_VAR_TMP" ] && mount -t tmpfs -o mode=1777 tmpfs "$R$RIG_VAR_TMP"
mkdir -p $R/run/lock $R/run/user $R/tmp/home

# The checkout, shared on its own ("checkout", read-only) at its host path: it is visible even
# where the host root's view is hidden by the fresh mounts above (a clone under /tmp).
mkdir -p "$R$RIG_CHECKOUT" 2>/dev/null
mount -t 9p -o "ro,$P9OPTS,cache=loose" checkout "$R$RIG_CHECKOUT" ||
	fail "mounting the checkout $RIG_CHECKOUT (9p tag checkout) failed"

[ -d "$R$RIG_LIB_MODULES" ] || fail "/lib/modules does not exist on the host (run 'scripts/rig.sh setup' as root to create it)"
[ -d "$R$RIG_MODULES_DIR" ] || fail "guest kernel modules not found at $RIG_MODULES_DIR"
mount --bind "$R$RIG_MODULES_DIR" "$R$RIG_LIB_MODULES" ||
	fail "bind-mounting the guest kernel modules on /lib/modules failed"

# Move the results share to its host path, so the command sees it there.
[ -d "$R$RIG_RUN_DIR" ] || fail "results dir $RIG_RUN_DIR not visible in the host root"
mount --move /rigout "$R$RIG_RUN_DIR" || fail "moving the results share to $RIG_RUN_DIR failed"

# --- 4. the command ---
# Plain "\n" line ends on the output port (no "\r\n"), as from a pipe.
stty -F /dev/ttyS0 -onlcr 2>/dev/null
stage command
chroot $R /bin/sh "$RIG_RUN_DIR/rig-command.sh" </dev/null >/dev/ttyS0 2>&1
rc=$?
stage "exit $rc"

# --- 5. results, then power off ---
echo "$rc" >"$R$RIG_RUN_DIR/rig-exit-status"
dmesg >"$R$RIG_RUN_DIR/rig-dmesg.txt" 2>/dev/null
sync
poweroff -f
echo o >/proc/sysrq-trigger
sleep 5
exit "$rc"
