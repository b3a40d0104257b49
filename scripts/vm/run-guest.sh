#!/usr/bin/env bash
# Boot the test guest once, run one script inside it, power off; exit with the script's status.
#
#   scripts/vm/run-guest.sh [-o OUTDIR] [-t SECONDS] [-x] [-a ARG,ARG] [-d DISK]
#                           [-f HOSTPORT:GUESTPORT] [-P PIDFILE] tests/vm/NAME.sh
#
# -d attaches DISK (a raw image on the host) as the guest's /dev/vdb with cache=none: unlike
# the root, it persists across boots, and the guest's cache flushes reach the host file
# (tests/vm/powerloss.sh).  -f forwards 127.0.0.1:HOSTPORT on the host to the guest's
# GUESTPORT (qemu user-net hostfwd), for a host-side initiator.  -P writes qemu's PID to
# PIDFILE, for a caller that kills the guest.
#
# Inside the guest the source tree is /src (read-only 9p: build/ binaries, tests/vm/) and
# OUTDIR is /out (writable 9p: fixture description, backing files, logs).  The serial console
# goes to OUTDIR/console.log and to stdout.  The guest prints "UTGT-VM-EXIT: N" before it
# powers itself off; that N is our exit status.  124 = timeout (guest or host side),
# 125 = the guest never printed its marker (boot failure, panic, qemu killed).
# Only one guest runs at a time on this machine (a lock shared by every checkout): two
# 2-vCPU TCG guests on 2 cores would each run at half speed and time out.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
CACHE=${UTGT_VM_CACHE:-/var/cache/utgt-vm}
MEM=${UTGT_VM_MEM:-2048}
SMP=${UTGT_VM_SMP:-2}
# tcg by default (no usable KVM on these machines); UTGT_VM_ACCEL=kvm where it works.
ACCEL=${UTGT_VM_ACCEL:-tcg,thread=multi}
LOCK=${UTGT_VM_LOCK:-/var/lock/utgt-vm-guest.lock}

outdir= timeout=600 trace=${UTGT_VM_TRACE:-0} args= disk= fwd= pidfile=
while getopts o:t:xa:d:f:P: opt; do
	case $opt in
	o) outdir=$OPTARG ;;
	t) timeout=$OPTARG ;;
	x) trace=1 ;;
	a) args=$OPTARG ;;
	d) disk=$OPTARG ;;
	f) fwd=$OPTARG ;;
	P) pidfile=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || {
	echo "usage: $0 [-o OUTDIR] [-t SEC] [-x] [-a ARGS] [-d DISK] [-f HPORT:GPORT] [-P PIDFILE]" \
		"tests/vm/NAME.sh" >&2
	exit 2
}
[ -z "$disk" ] || [ -f "$disk" ] || { echo "run-guest: no disk image $disk" >&2; exit 2; }
case $fwd in '' | [0-9]*:[0-9]*) ;; *) echo "run-guest: -f wants HOSTPORT:GUESTPORT" >&2; exit 2 ;; esac
test=$1
case $test in /*) test=$(realpath --relative-to="$SRC" "$test") ;; esac
[ -f "$SRC/$test" ] || { echo "run-guest: no $SRC/$test" >&2; exit 2; }
name=$(basename "$test" .sh)
outdir=${outdir:-$SRC/build/vm-logs/$name}
mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)
for f in "$CACHE/root.img" "$CACHE/initramfs.cpio.gz" "$CACHE/kver"; do
	[ -f "$f" ] || { echo "run-guest: $f missing: run 'make vm-image'" >&2; exit 2; }
done
vmlinux=$CACHE/kernel-$(cat "$CACHE/kver")/vmlinux
console=$outdir/console.log
: >"$console"
rm -f "$outdir/guest.log"

# UTGT_VM_LOCK_HELD=1: the caller holds the lock across several boots (tests/vm/powerloss.sh).
exec 8>"$LOCK"
if [ "${UTGT_VM_LOCK_HELD:-0}" != 1 ] && ! flock -n 8; then
	echo "run-guest: waiting for another guest on this machine to finish ($LOCK)"
	flock -w 3600 8 || { echo "run-guest: lock wait timed out" >&2; exit 125; }
fi

# The host-side limit covers boot and power-off as well as the script's own limit.
host_limit=$((timeout + 120))
# softlockup_panic: a real lockup panics with its trace instead of hanging until the timeout.
# watchdog_thresh=60 (soft lockup after 120 s, not 20): under TCG on a busy host a vCPU thread
# can be descheduled for tens of seconds, and the default threshold then panics a healthy guest.
cmdline="console=ttyS0 panic=-1 quiet loglevel=5 softlockup_panic=1 watchdog_thresh=60 utgt.test=$test utgt.timeout=$timeout utgt.trace=$trace"
[ -n "$args" ] && cmdline+=" utgt.args=$args"
extra=()
[ -n "$disk" ] && extra+=(-drive "file=$disk,format=raw,if=virtio,cache=none")
netdev=user,id=n0
[ -n "$fwd" ] && netdev+=",hostfwd=tcp:127.0.0.1:${fwd%%:*}-:${fwd#*:}"
[ -n "$pidfile" ] && extra+=(-pidfile "$pidfile")
start=$SECONDS
# --foreground: qemu keeps the terminal's signals; -k: a hung qemu is killed for sure.
timeout --foreground -k 10 "$host_limit" qemu-system-x86_64 \
	-accel "$ACCEL" -cpu max -smp "$SMP" -m "$MEM" \
	-nodefaults -display none -no-reboot -serial stdio -monitor none \
	-kernel "$vmlinux" -initrd "$CACHE/initramfs.cpio.gz" -append "$cmdline" \
	-drive "file=$CACHE/root.img,format=raw,if=virtio,snapshot=on" \
	-virtfs "local,path=$SRC,mount_tag=src,security_model=none,readonly=on,id=src" \
	-virtfs "local,path=$outdir,mount_tag=out,security_model=none,id=out" \
	-netdev "$netdev" -device virtio-net-pci,netdev=n0 "${extra[@]}" \
	</dev/null 2>&1 | tr -d '\r' | tee "$console"
qrc=${PIPESTATUS[0]}
elapsed=$((SECONDS - start))

rc=$(sed -n 's/^.*UTGT-VM-EXIT: \([0-9]\+\).*$/\1/p' "$console" | tail -1)
if [ -z "$rc" ]; then
	if [ "$qrc" = 137 ] && [ "$elapsed" -lt "$host_limit" ]; then
		echo "run-guest: $name: qemu killed (SIGKILL) before the guest ended"
		rc=125
	elif [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
		echo "run-guest: $name: host timeout after ${host_limit}s"
		rc=124
	else
		echo "run-guest: $name: no exit marker (qemu status $qrc)"
		rc=125
	fi
fi
echo "run-guest: $name: exit $rc in ${elapsed}s (console: $console)"
echo "$name $rc $elapsed" >"$outdir/result"
exit "$rc"
