#!/usr/bin/env bash
# rig: run a command inside a throw-away QEMU VM that has virtual media devices.
#
# The host has no camera, sound card or screen, but Debian's stock kernel ships
# virtual drivers for all three: vivid (V4L2 test capture/output devices),
# snd-aloop (ALSA loopback sound card) and bochs / virtio-gpu (DRM display).
# The rig boots that stock kernel under QEMU (software emulation, TCG: KVM is
# not assumed) with a tiny busybox initramfs (scripts/rig-init.sh), which
#   - mounts the HOST's own root filesystem read-only over 9p and chroots into
#     it, so every binary of the host (test binaries built here, v4l2-ctl,
#     ffmpeg, gst-launch-1.0, the Swift runtime in /opt/swift) just works;
#   - bind-mounts the guest kernel's modules on /lib/modules, so a plain
#     `modprobe vivid` works inside;
#   - mounts a per-run writable 9p share (.rig/runs/<id>/) at its host path,
#     which carries the command in (rig-command.sh) and results out
#     ($MEDIADEVICES_RIG_OUT, the exit status, the guest's dmesg).
# The command's stdout/stderr stream live over a serial port (ttyS0) to the
# host's stdout; kernel messages go to another port (rig-console.log), so
# stdout carries nothing else. The command's exit status becomes the exit
# status of `rig run`. A trivial run takes about 5 s (QEMU boots the kernel's
# uncompressed vmlinux directly, see extract_vmlinux).
#
# Everything downloaded or built is cached in <repo>/.rig/:
#   kernel/<VERSION>/               the extracted linux-image package
#                                   (boot/vmlinuz-*, boot/vmlinux-*,
#                                   lib/modules/<VERSION> after depmod,
#                                   .deb-version: the package's version)
#   vimc/<VERSION>/                 scripts/vimc.sh's module for that kernel
#   kernel-version                  apt's answer for linux-image-amd64, memoized
#   initramfs-<VERSION>.cpio.gz     (+ .stamp: hash of its inputs)
#   runs/<id>/                      one directory per run (kept 3 days):
#       rig-command.sh, rig-boot.env    written by the host before boot
#       rig-exit-status, rig-dmesg.txt  written by the guest at the end
#       rig-console.log, rig-stage.log  kernel console, init's progress
#       rig-qemu.log                    QEMU's stderr
#       anything the command writes to $MEDIADEVICES_RIG_OUT
# The kernel is the one apt-cache names for linux-image-amd64, unless
# RIG_KERNEL_VERSION (e.g. 6.1.0-56-amd64) names one.
#
# Exit status of `rig run`: the command's own status; 124 on timeout;
# 125 when the rig itself failed (setup, QEMU, or the guest never reached
# the command); 2 on bad usage.
set -euo pipefail

# --- constants -----------------------------------------------------------------

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
REPO_ROOT=$(cd "$SCRIPT_DIR/.." && pwd -P)
RIG_DIR=$REPO_ROOT/.rig
INIT_SCRIPT=$SCRIPT_DIR/rig-init.sh

# Debian packages the rig needs on the host (the guest uses the host's root,
# so the tools used inside the guest are installed on the host too).
# (xz-utils: to unpack the kernel image for a faster PVH boot, see below; ustreamer: PiKVM's
# MJPEG streamer, the browser console's peer in `scripts/benchmark.sh console`; gstreamer1.0-alsa:
# alsasrc, GStreamer's side of the A/V sync figures, AVSyncTests.)
PACKAGES=(qemu-system-x86 busybox-static cpio kmod v4l-utils ffmpeg
	gstreamer1.0-tools gstreamer1.0-alsa alsa-utils xz-utils
	udev pulseaudio pulseaudio-utils jq ustreamer)
# The PipeWire session the audio tests start (dbus-daemon, pipewire, wireplumber,
# pipewire-pulse), without its recommends: pipewire-alsa would route ALSA's
# `default` through PipeWire, and dbus-user-session would pull in systemd.
# The camera session (scripts/camera-session.sh) adds PipeWire's libcamera SPA (libcamera nodes)
# with its image processing algorithms (libcamera-ipa: vimc needs ipa_vimc.so) and GStreamer's
# pipewiresrc (the second reader of the sharing tests); jq reads pw-dump.
# The Camera portal tests (camera-session --portal) add xdg-desktop-portal (the portal and its
# permission store) and python3-dbus/python3-gi (scripts/portal-access.py, the test's Access backend).
PACKAGES_NO_RECOMMENDS=(dbus-daemon pipewire pipewire-pulse wireplumber pipewire-libcamera libcamera-ipa gstreamer1.0-pipewire
	xdg-desktop-portal python3-dbus python3-gi)

# Modules the initramfs loads (with their dependencies, resolved at build time).
# Everything else (vivid, snd-aloop, bochs, ...) is loaded later from the chroot.
INITRAMFS_MODULES=(virtio_pci 9pnet_virtio 9p)

# PATH for the command inside the guest.
GUEST_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/opt/swift/usr/bin

DEFAULT_TIMEOUT=900
# Serial numbers of the USB devices `--usb` plugs in (their by-id names contain them).
USB_CAMERA_SERIAL=MD-CAM-RIG
USB_MICROPHONE_SERIAL=MD-MIC-RIG
DEFAULT_MEM=2048
DEFAULT_DISPLAY=std
RUNS_KEEP_DAYS=3

# --- helpers -------------------------------------------------------------------

usage() {
	cat <<'EOF'
Usage:
  scripts/rig.sh setup
      Install the needed Debian packages, fetch and cache Debian's stock
      kernel (linux-image-amd64) and build the initramfs. Idempotent; quick
      when everything is cached in <repo>/.rig/.

  scripts/rig.sh run [OPTIONS] -- COMMAND [ARGS...]
      Boot a QEMU VM (runs setup first) and run COMMAND as root inside a
      chroot of this host's root filesystem (read-only), in the current
      directory, with stdin from /dev/null. Its stdout and stderr stream
      live to stdout; the exit status is COMMAND's.
      Options:
        --timeout SECONDS    kill the VM after this long, exit 124 (default 900)
        --display std|virtio|none
                             std: -vga std (bochs DRM driver: modprobe bochs);
                             virtio: virtio-gpu-pci (modprobe virtio-gpu);
                             none: no display device (default: std)
        --mem MB             guest memory (default 2048)
        --cpus N             virtual CPUs (default 2; the benchmarks use 1: one
                             emulator thread, no vCPU migrations, steadier figures)
        --kmsg               show kernel messages on the console (debugging)
        --icount             time counts instructions: guest time advances 1 ns
                             per guest instruction (QEMU -icount shift=0,sleep=on,
                             one emulator thread). The CPU time of work done on
                             one thread then repeats from boot to boot (to 0.1 us
                             on a quiet host, 0.4 us on a very busy one; work
                             handed between threads still varies) and measures
                             the guest's instructions, not the emulator's own
                             costs; the benchmarks' instruction-timed tables use it
        --usb camera|microphone|camera,microphone
                             plug the project's emulated USB devices in before
                             the command (a UVC webcam bound by uvcvideo, a UAC1
                             microphone bound by snd-usb-audio; docs/rig.md "USB
                             devices"), with systemd-udevd giving them their
                             /dev/v4l/by-id names; unplugged after the command
        --forward HOSTPORT:GUESTPORT
                             (repeatable) a network for the guest (QEMU user
                             networking, restrict=on: no route out) with TCP
                             127.0.0.1:HOSTPORT on the host forwarded to
                             GUESTPORT in the guest, whose interface is up as
                             10.0.2.15/24 before the command: a browser on the
                             host reaches a server in the guest

      Inside the guest: `modprobe vivid`, `modprobe snd-aloop`, `modprobe
      bochs` (--display std), `modprobe virtio-gpu` (--display virtio) work;
      /tmp, /run, /var/tmp, /dev/shm are fresh tmpfs; HOME=/tmp/home;
      MEDIADEVICES_RIG=1; MEDIADEVICES_RIG_OUT is a writable directory whose
      contents show up on the host in .rig/runs/<id>/ (path printed on stderr
      at the end). Host variables named MEDIADEVICES_* and RIG_PASS_* are
      passed through.
      Exit status: COMMAND's; 124 on timeout; 125 if the rig failed (the
      message says which step); 130/143 if interrupted.
      Environment: RIG_KERNEL_VERSION pins the guest kernel version;
      RIG_QEMU_CPU sets QEMU's -cpu (default max,-fma: see qemu_command).

  scripts/rig.sh kernel-version
      Print the guest kernel's version (e.g. 6.1.0-56-amd64): RIG_KERNEL_VERSION,
      else the one apt-cache names for linux-image-amd64 today, else the newest
      cached. scripts/vimc.sh builds its module for it.

  scripts/rig.sh clean
      Remove the per-run result directories (.rig/runs/).

  scripts/rig.sh --help
      This text.
EOF
}

# log MESSAGE: a rig message on stderr.
log() { echo "rig: $*" >&2; }

# die STATUS MESSAGE...: print an error (one line per argument) and exit.
die() {
	local status=$1
	shift
	local line
	for line in "$@"; do echo "rig: $line" >&2; done
	exit "$status"
}

# as_root COMMAND...: run COMMAND as root (directly, or through sudo).
as_root() {
	if [[ $EUID -eq 0 ]]; then
		"$@"
	elif command -v sudo >/dev/null; then
		sudo "$@"
	else
		die 125 "step '$1' needs root: run scripts/rig.sh as root (or install sudo)"
	fi
}

# quote STRING: STRING as one POSIX shell word (single quotes, for /bin/sh).
quote() { printf "'%s'" "${1//\'/\'\\\'\'}"; }

# The set-up (packages, kernel, initramfs) and the devices (USB/IP, network), by concern.
# shellcheck source=scripts/rig-setup.sh
. "$SCRIPT_DIR/rig-setup.sh"
# shellcheck source=scripts/rig-devices.sh
. "$SCRIPT_DIR/rig-devices.sh"

# --- run -----------------------------------------------------------------------

# new_run_dir: create .rig/runs/<id>/ (sets RUN_DIR), pruning old runs.
new_run_dir() {
	mkdir -p "$RIG_DIR/runs"
	find "$RIG_DIR/runs" -mindepth 1 -maxdepth 1 -type d -mtime +"$RUNS_KEEP_DAYS" \
		-exec rm -rf {} + 2>/dev/null || true
	RUN_DIR=$(mktemp -d "$RIG_DIR/runs/$(date +%Y%m%d-%H%M%S)-XXXXXX")
	chmod 755 "$RUN_DIR"
}

# write_guest_files CWD COMMAND...: write rig-boot.env (read by the guest init)
# and rig-command.sh (run with /bin/sh in the chroot) into RUN_DIR.
write_guest_files() {
	local cwd=$1
	shift
	# Paths for the guest init, resolved here (the guest's root is ours): in
	# the initramfs, absolute symlinks of the host root would resolve wrongly.
	local var_tmp=
	[[ -d /var/tmp ]] && var_tmp=$(readlink -f /var/tmp)
	cat >"$RUN_DIR/rig-boot.env" <<EOF
RIG_CHECKOUT=$(quote "$REPO_ROOT")
RIG_RUN_DIR=$(quote "$RUN_DIR")
RIG_MODULES_DIR=$(quote "$KDIR/lib/modules")
RIG_LIB_MODULES=$(quote "$(readlink -f /lib/modules)")
RIG_VAR_TMP=$(quote "$var_tmp")
EOF
	{
		echo "# Generated by scripts/rig.sh: runs inside the guest's chroot."
		echo "export PATH=$(quote "$GUEST_PATH")"
		local name
		# Pass-through of MEDIADEVICES_* and RIG_PASS_* from the host.
		for name in $(compgen -e); do
			case $name in
			MEDIADEVICES_* | RIG_PASS_*) echo "export $name=$(quote "${!name}")" ;;
			esac
		done
		echo "export HOME=/tmp/home"
		echo "export GST_REGISTRY=/tmp/gst-registry.bin"
		echo "export MEDIADEVICES_RIG=1"
		echo "export MEDIADEVICES_RIG_OUT=$(quote "$RUN_DIR")"
		echo "export TERM=dumb"
		echo "export LANG=C.UTF-8"
		echo "mkdir -p \"\$HOME\""
		echo "cd $(quote "$cwd") || { echo \"rig: cannot cd to $(quote "$cwd") in the guest\" >&2; exit 125; }"
		local arg
		[[ ${#FORWARDS[@]} -eq 0 ]] || network_prologue
		if [[ -n $USB_DEVICES ]]; then
			usb_prologue "$USB_DEVICES"
			for arg in "$@"; do printf '%s ' "$(quote "$arg")"; done
			printf '\n'
			# shellcheck disable=SC2016  # a line of the guest's script: the guest expands it
			echo 'rig_status=$?'
			# shellcheck disable=SC2016  # a line of the guest's script: the guest expands it
			echo 'kill $rig_emulator $rig_udevd 2>/dev/null; wait $rig_emulator $rig_udevd 2>/dev/null'
			# shellcheck disable=SC2016  # a line of the guest's script: the guest expands it
			echo 'exit $rig_status'
		else
			printf 'exec'
			for arg in "$@"; do printf ' %s' "$(quote "$arg")"; done
			printf '\n'
		fi
	} >"$RUN_DIR/rig-command.sh"
}

# qemu_command DISPLAY MEM KMSG CPUS ICOUNT: sets QEMU_CMD, the QEMU command line.
qemu_command() {
	local display=$1 mem=$2 kmsg=$3 cpus=$4 icount=$5 append
	# The kernel console is ttyS1 (rig-console.log), away from the command's
	# output on ttyS0, unless --kmsg asks for both on stdout. The whole dmesg
	# is saved to rig-dmesg.txt anyway. panic=-1 + -no-reboot: a kernel panic
	# ends QEMU; oops=panic: so does a driver crash (rather than a hang);
	# hung_task_panic=1: so does a task stuck in an uninterruptible wait for
	# more than 120 s (seen once: a VIDIOC_STREAMOFF that never returned, after
	# which no USB device enumerated again and every later USB test waited out
	# its 90 s). Killable waits (9p's) are not counted, so a slow host is not one.
	append="panic=-1 oops=panic hung_task_panic=1"
	if [[ $kmsg == 1 ]]; then
		append+=" console=ttyS0 loglevel=7"
	else
		append+=" console=ttyS1 quiet loglevel=3"
	fi
	append+=" i8042.noaux i8042.nokbd" # no PS/2 probing (saves boot time)
	# Extra kernel parameters, e.g. RIG_KERNEL_APPEND="video=Virtual-1:1920x1080" for the
	# console's mode once a DRM driver is loaded (the screen benchmark uses it).
	append+=${RIG_KERNEL_APPEND:+" $RIG_KERNEL_APPEND"}
	# The guest's CPU: TCG's "max" less FMA. QEMU 7.2's emulated FMA computes wrong on some hosts
	# (seen on an AVX-512 Xeon, 2026-11-28): PipeWire's resampler, which takes its FMA path
	# where the CPU has it, turned a 997 Hz tone at 44.1 kHz into noise (pacat too), while the
	# same guest without FMA (or without XSAVE) played it right. RIG_QEMU_CPU sets another model.
	local cpu_model=${RIG_QEMU_CPU:-max,-fma}
	# shellcheck disable=SC2054 # (the commas are QEMU's)
	QEMU_CMD=(qemu-system-x86_64
		-nodefaults -no-user-config -no-reboot
		-machine pc -cpu "$cpu_model" -smp "$cpus" -m "$mem"
		-kernel "$KERNEL_IMAGE" -initrd "$INITRAMFS" -append "$append"
		-display none -monitor none
		# ttyS0: the command's output, to stdout; ttyS1: kernel console and
		# init's messages; ttyS2: init's progress (see rig-init.sh).
		-chardev stdio,id=out,signal=off -serial chardev:out
		-serial "file:$RUN_DIR/rig-console.log"
		-serial "file:$RUN_DIR/rig-stage.log"
		# The host root (read-only) and the results share (writable).
		-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap
		-virtfs "local,path=$RUN_DIR,mount_tag=rigout,security_model=none"
		# The checkout on its own, so a clone under /tmp (fresh in the guest) works too.
		-virtfs "local,path=$REPO_ROOT,mount_tag=checkout,security_model=none,readonly=on,multidevs=remap"
	)
	# Without --icount, guest time is host time: a CPU figure is what emulating the code cost,
	# which swings from boot to boot and with host load, and weighs on scattered code (every
	# context switch empties the emulated TLB) far more than hardware does. With it, the
	# clock counts guest instructions (1 ns each; idle time skipped, sleep=on), which needs
	# the single-threaded emulator.
	if [[ $icount == 1 ]]; then
		# shellcheck disable=SC2054  # QEMU's option syntax: the commas belong to one argument
		QEMU_CMD+=(-accel tcg,thread=single -icount shift=0,sleep=on)
	else
		# shellcheck disable=SC2054  # QEMU's option syntax: the commas belong to one argument
		QEMU_CMD+=(-accel tcg,thread=multi)
	fi
	if [[ ${#FORWARDS[@]} -gt 0 ]]; then
		local forward netdev="user,id=net0,restrict=on"
		for forward in "${FORWARDS[@]}"; do netdev+=",hostfwd=tcp:127.0.0.1:${forward%%:*}-:${forward#*:}"; done
		# shellcheck disable=SC2054  # QEMU's option syntax: the commas belong to one argument
		QEMU_CMD+=(-netdev "$netdev" -device virtio-net-pci,netdev=net0,romfile=)
	fi
	case $display in
	std) QEMU_CMD+=(-vga std) ;;
	virtio) QEMU_CMD+=(-vga none -device virtio-gpu-pci) ;;
	none) QEMU_CMD+=(-vga none) ;;
	esac
}

# report_failure: the guest exited without an exit status: say where it stopped.
report_failure() {
	local last
	last=$(tail -n1 "$RUN_DIR/rig-stage.log" 2>/dev/null | tr -d '\r' || true)
	case $last in
	"") log "the guest never started its init: kernel failed to boot (panic?) or QEMU failed" ;;
	"FAILED "*) log "guest setup failed: ${last#FAILED }" ;;
	command) log "the guest crashed or powered off while running the command (kernel panic/oops?)" ;;
	"exit "*) log "the command exited (${last#exit }) but its status could not be written to the results share" ;;
	*) log "the guest stopped during step '$last' (kernel panic?); retry with --kmsg to see kernel messages" ;;
	esac
	if [[ -s $RUN_DIR/rig-console.log ]]; then
		# A hung task's panic names the task and its stack before the panic's own lines.
		if grep -aq 'blocked for more than' "$RUN_DIR/rig-console.log"; then
			log "a task hung in the guest's kernel (hung_task_panic), its stack:"
			grep -a -m 1 -A 30 'blocked for more than' "$RUN_DIR/rig-console.log" | tr -d '\r' | sed 's/^/  /' >&2
		fi
		log "last lines of the guest console ($RUN_DIR/rig-console.log):"
		tail -n 25 "$RUN_DIR/rig-console.log" | tr -d '\r' | sed 's/^/  /' >&2
	fi
	if [[ -s $RUN_DIR/rig-qemu.log ]]; then
		log "QEMU said:"
		sed 's/^/  /' "$RUN_DIR/rig-qemu.log" >&2
	fi
}

# cmd_run ARGS...: parse `run` options, boot the VM, and exit with the status.
cmd_run() {
	local timeout=$DEFAULT_TIMEOUT mem=$DEFAULT_MEM display=$DEFAULT_DISPLAY kmsg=0 cpus=2 icount=0
	USB_DEVICES=
	FORWARDS=()
	while [[ $# -gt 0 ]]; do
		case $1 in
		--timeout) timeout=${2:-}; shift 2 || die 2 "--timeout needs a value" ;;
		--timeout=*) timeout=${1#*=}; shift ;;
		--display) display=${2:-}; shift 2 || die 2 "--display needs a value" ;;
		--display=*) display=${1#*=}; shift ;;
		--mem) mem=${2:-}; shift 2 || die 2 "--mem needs a value" ;;
		--mem=*) mem=${1#*=}; shift ;;
		--kmsg) kmsg=1; shift ;;
		--icount) icount=1; shift ;;
		--cpus) cpus=${2:-}; shift 2 || die 2 "--cpus needs a value" ;;
		--cpus=*) cpus=${1#*=}; shift ;;
		--usb) USB_DEVICES=${2:-}; shift 2 || die 2 "--usb needs a value" ;;
		--usb=*) USB_DEVICES=${1#*=}; shift ;;
		--forward) FORWARDS+=("${2:-}"); shift 2 || die 2 "--forward needs HOSTPORT:GUESTPORT" ;;
		--forward=*) FORWARDS+=("${1#*=}"); shift ;;
		--) shift; break ;;
		-h | --help) usage; exit 0 ;;
		-*) die 2 "run: unknown option '$1' (the command goes after --; see scripts/rig.sh --help)" ;;
		*) break ;; # the command, without a '--' before it
		esac
	done
	[[ $# -gt 0 ]] || die 2 "run: no command given (usage: scripts/rig.sh run [OPTIONS] -- COMMAND [ARGS...])"
	[[ $timeout =~ ^[0-9]+$ && $timeout -gt 0 ]] || die 2 "--timeout must be a positive number of seconds"
	[[ $mem =~ ^[0-9]+$ && $mem -ge 256 ]] || die 2 "--mem must be a number of MB (>= 256)"
	[[ $cpus =~ ^[1-8]$ ]] || die 2 "--cpus must be a number from 1 to 8"
	local forward
	for forward in "${FORWARDS[@]}"; do
		[[ $forward =~ ^[0-9]+:[0-9]+$ ]] || die 2 "--forward takes HOSTPORT:GUESTPORT (got '$forward')"
	done
	case $display in std | virtio | none) ;; *) die 2 "--display must be std, virtio or none" ;; esac

	# The guest sees the host's root, except that these are fresh in the guest; the checkout
	# is shared on its own, so anywhere inside it works.
	local cwd
	cwd=$(pwd -P)
	case $cwd/ in
	"$REPO_ROOT"/*) ;;
	/tmp/* | /run/* | /var/tmp/* | /dev/* | /proc/* | /sys/*)
		die 2 "run: the current directory $cwd is hidden inside the guest (fresh /tmp, /run, ...); cd into the checkout ($REPO_ROOT) or elsewhere" ;;
	esac

	setup
	command -v qemu-system-x86_64 >/dev/null ||
		die 125 "qemu-system-x86_64 not found (remedy: apt-get install qemu-system-x86)"
	[[ -z $USB_DEVICES ]] || usb_emulator
	new_run_dir
	write_guest_files "$cwd" "$@"
	qemu_command "$display" "$mem" "$kmsg" "$cpus" "$icount"

	# QEMU in the background under timeout(1), so that Ctrl-C / TERM on the rig
	# can stop it. Its stderr goes to a log, shown only if something failed.
	local qpid status=0 interrupted=
	timeout -k 5 "$timeout" "${QEMU_CMD[@]}" </dev/null 2>"$RUN_DIR/rig-qemu.log" &
	qpid=$!
	trap 'interrupted=130; kill -TERM $qpid 2>/dev/null' INT
	trap 'interrupted=143; kill -TERM $qpid 2>/dev/null' TERM
	trap 'interrupted=129; kill -TERM $qpid 2>/dev/null' HUP
	while :; do
		wait "$qpid" && status=0 || status=$?
		kill -0 "$qpid" 2>/dev/null || break # else: wait was interrupted by a signal
	done
	trap - INT TERM HUP

	local rc
	if [[ -n $interrupted ]]; then
		echo >&2
		log "interrupted; stopped the VM running: $*"
		rc=$interrupted
	elif [[ $status == 124 || $status == 137 ]]; then
		echo >&2
		log "timed out after $timeout s running: $*"
		rc=124
	elif [[ -f $RUN_DIR/rig-exit-status ]]; then
		rc=$(<"$RUN_DIR/rig-exit-status")
	else
		report_failure
		rc=125
	fi
	log "results in $RUN_DIR"
	exit "$rc"
}

# --- main ----------------------------------------------------------------------

main() {
	case ${1:-} in
	setup)
		setup
		log "ready: kernel $KVER, $INITRAMFS"
		;;
	run) shift; cmd_run "$@" ;;
	kernel-version)
		mkdir -p "$RIG_DIR"
		resolve_kernel_version
		echo "$KVER"
		;;
	clean) rm -rf "$RIG_DIR/runs" ;; # (old kernel/<VERSION> dirs: remove by hand)
	-h | --help | help) usage ;;
	"") usage >&2; exit 2 ;;
	*) usage >&2; die 2 "unknown subcommand '$1'" ;;
	esac
}

main "$@"
