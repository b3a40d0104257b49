#!/usr/bin/env bash
# Boot the test guest once, run one script inside it, power off; exit with the script's status.
#
#   scripts/vm/run-guest.sh [-o OUTDIR] [-t SECONDS] [-x] [-a ARG,ARG] [-d DISK]
#                           [-f HOSTPORT:GUESTPORT] [-P PIDFILE] [-p] tests/vm/NAME.sh
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
#
# -p (a test's "# vm-peer: 1"): two guests of one vCPU each (UTGT_VM_PEER_SMP), the lock held
# across both, joined by two point-to-point Ethernet links (qemu socket netdevs over TCP on the
# host's loopback: no address outside, no root needed) besides each one's own user-net eth0.  The
# script runs in both: with the argument role=target in the first (its /out is OUTDIR/target,
# console OUTDIR/target/console.log) and role=initiator in the second (OUTDIR as usual).  Both
# mount OUTDIR/peer with `mount -t 9p peer DIR` to hand each other files.  Link L's NIC has the
# MAC 52:54:00:88:0L:01 in the target and 52:54:00:88:0L:02 in the initiator (1 Gb/s declared,
# which rxe reports as the port's speed; the links' real rate is what the host can move).  The exit
# status is the initiator's, or the target's when the initiator passed and the target did not.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
CACHE=${UTGT_VM_CACHE:-/var/cache/utgt-vm}
MEM=${UTGT_VM_MEM:-2048}
SMP=${UTGT_VM_SMP:-2}
# tcg by default (no usable KVM on these machines); UTGT_VM_ACCEL=kvm where it works.
ACCEL=${UTGT_VM_ACCEL:-tcg,thread=multi}

outdir= timeout=600 trace=${UTGT_VM_TRACE:-0} args= disk= fwd= pidfile= peer=0
while getopts o:t:xa:d:f:P:p opt; do
	case $opt in
	o) outdir=$OPTARG ;;
	t) timeout=$OPTARG ;;
	x) trace=1 ;;
	a) args=$OPTARG ;;
	d) disk=$OPTARG ;;
	f) fwd=$OPTARG ;;
	P) pidfile=$OPTARG ;;
	p) peer=1 ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || {
	echo "usage: $0 [-o OUTDIR] [-t SEC] [-x] [-a ARGS] [-d DISK] [-f HPORT:GPORT] [-P PIDFILE] [-p]" \
		"tests/vm/NAME.sh" >&2
	exit 2
}
[ -z "$disk" ] || [ -f "$disk" ] || { echo "run-guest: no disk image $disk" >&2; exit 2; }
[ "$peer" = 0 ] || [ -z "$disk$fwd$pidfile" ] ||
	{ echo "run-guest: -p does not combine with -d, -f or -P" >&2; exit 2; }
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

# One guest at a time (scripts/vm/guest-lock.sh); held already when vmtest.sh or a multi-boot test
# started this boot.
. "$HERE/guest-lock.sh"
vm_guest_lock 8 run-guest || exit 125

# The host-side limit covers boot and power-off as well as the script's own limit.
host_limit=$((timeout + 120))
# softlockup_panic: a real lockup panics with its trace instead of hanging until the timeout.
# watchdog_thresh=60 (soft lockup after 120 s, not 20): under TCG on a busy host a vCPU thread
# can be descheduled for tens of seconds, and the default threshold then panics a healthy guest.
cmdline="console=ttyS0 panic=-1 quiet loglevel=5 softlockup_panic=1 watchdog_thresh=60 utgt.test=$test utgt.timeout=$timeout utgt.trace=$trace"
extra=()
[ -n "$disk" ] && extra+=(-drive "file=$disk,format=raw,if=virtio,cache=none")
netdev=user,id=n0
[ -n "$fwd" ] && netdev+=",hostfwd=tcp:127.0.0.1:${fwd%%:*}-:${fwd#*:}"
[ -n "$pidfile" ] && extra+=(-pidfile "$pidfile")

# boot OUT ARGS SMP QEMU-ARGS...: one guest, /out = OUT, script arguments ARGS; console on stdout.
boot() {
	local out=$1 a=$2 smp=$3 cl=$cmdline
	shift 3
	[ -n "$a" ] && cl+=" utgt.args=$a"
	# --foreground: qemu keeps the terminal's signals; -k: a hung qemu is killed for sure.
	timeout --foreground -k 10 "$host_limit" qemu-system-x86_64 \
		-accel "$ACCEL" -cpu max -smp "$smp" -m "$MEM" \
		-nodefaults -display none -no-reboot -serial stdio -monitor none \
		-kernel "$vmlinux" -initrd "$CACHE/initramfs.cpio.gz" -append "$cl" \
		-drive "file=$CACHE/root.img,format=raw,if=virtio,snapshot=on" \
		-virtfs "local,path=$SRC,mount_tag=src,security_model=none,readonly=on,id=src" \
		-virtfs "local,path=$out,mount_tag=out,security_model=none,id=out" \
		-netdev "$netdev" -device virtio-net-pci,netdev=n0 "$@" </dev/null 2>&1 | tr -d '\r'
	return "${PIPESTATUS[0]}"
}

# marker_rc CONSOLE QEMU-STATUS ELAPSED: the script's exit status from the console's marker line
# (124: timeout, 125: no marker; what went wrong on stderr).
marker_rc() {
	local rc
	rc=$(sed -n 's/^.*UTGT-VM-EXIT: \([0-9]\+\).*$/\1/p' "$1" | tail -1)
	if [ -n "$rc" ]; then
		echo "$rc"
	elif [ "$2" = 137 ] && [ "$3" -lt "$host_limit" ]; then
		echo "run-guest: $name: qemu killed (SIGKILL) before the guest ended" >&2
		echo 125
	elif [ "$2" = 124 ] || [ "$2" = 137 ]; then
		echo "run-guest: $name: host timeout after ${host_limit}s" >&2
		echo 124
	else
		echo "run-guest: $name: no exit marker (qemu status $2)" >&2
		echo 125
	fi
}

# A TCP port on 127.0.0.1 nothing listens on, for one peer link.
free_tcp_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 30000))
		ss -Hltn "sport = :$p" | grep -q . || { echo "$p"; return 0; }
	done
}

start=$SECONDS
if [ "$peer" = 0 ]; then
	boot "$outdir" "$args" "$SMP" "${extra[@]}" | tee "$console"
	qrc=${PIPESTATUS[0]}
	elapsed=$((SECONDS - start))
	rc=$(marker_rc "$console" "$qrc" "$elapsed")
else
	smp=${UTGT_VM_PEER_SMP:-1}
	tout=$outdir/target
	rm -rf "$outdir/peer" "$tout"
	mkdir -p "$outdir/peer" "$tout"
	# TCP, not UDP: a guest that is not scheduled for a while (TCG on a busy host) makes its
	# peer's packets wait in the socket, where a UDP socket would drop them and soft-RoCE would
	# stall on retransmit timeouts.  The target's qemu listens, the initiator's connects.
	links_t=() links_i=() ports=()
	for l in 1 2; do
		p=$(free_tcp_port)
		ports+=("$p")
		links_t+=(-netdev "socket,id=l$l,listen=127.0.0.1:$p"
			-device "virtio-net-pci,netdev=l$l,mac=52:54:00:88:0$l:01,speed=1000,duplex=full")
		links_i+=(-netdev "socket,id=l$l,connect=127.0.0.1:$p"
			-device "virtio-net-pci,netdev=l$l,mac=52:54:00:88:0$l:02,speed=1000,duplex=full")
	done
	share=(-virtfs "local,path=$outdir/peer,mount_tag=peer,security_model=none,id=peer")
	tconsole=$tout/console.log
	boot "$tout" "role=target${args:+,$args}" "$smp" "${share[@]}" "${links_t[@]}" >"$tconsole" &
	tpid=$!
	for p in "${ports[@]}"; do
		for _ in $(seq 1 300); do
			ss -Hltn "sport = :$p" | grep -q . && break
			kill -0 "$tpid" 2>/dev/null || break
			sleep 0.2
		done
	done
	echo "run-guest: $name: target guest started (console: $tconsole)"
	boot "$outdir" "role=initiator${args:+,$args}" "$smp" "${share[@]}" "${links_i[@]}" |
		tee "$console"
	qrc=${PIPESTATUS[0]}
	rc=$(marker_rc "$console" "$qrc" $((SECONDS - start)))
	# The target's script stops once the initiator is done (or gone): bounded wait, then qemu
	# (our own child) is ended.
	for _ in $(seq 1 600); do
		kill -0 "$tpid" 2>/dev/null || break
		sleep 0.2
	done
	if kill -0 "$tpid" 2>/dev/null; then
		echo "run-guest: $name: target guest still running 120 s after the initiator: stopping it"
		pkill -TERM -P "$tpid" 2>/dev/null
		kill -TERM "$tpid" 2>/dev/null
	fi
	wait "$tpid"
	tqrc=$?
	trc=$(marker_rc "$tconsole" "$tqrc" $((SECONDS - start)))
	echo "run-guest: $name: target guest exit $trc"
	if [ "$trc" != 0 ]; then
		echo "---- target guest console (last 40 lines)"
		tail -40 "$tconsole"
		[ "$rc" = 0 ] && rc=$trc
	fi
fi
elapsed=$((SECONDS - start))
echo "run-guest: $name: exit $rc in ${elapsed}s (console: $console)"
echo "$name $rc $elapsed" >"$outdir/result"
exit "$rc"
