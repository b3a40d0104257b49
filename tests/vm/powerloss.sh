#!/bin/bash
# vm-run: host
# vm-timeout: 1500
# Power loss, not kill -9: utgtd serves a vdisk_fileio LU from inside the qemu guest, its
# backing file on a virtio disk attached with cache=none (guest flushes reach the host file);
# the initiator runs on the host (tests/vm/lib/powerloss_io.py through a user-net port forward)
# with up to 8 commands in flight and records which writes the target acknowledged as durable
# (FUA, or completed before a SYNCHRONIZE CACHE with IMMED=0 that completed; one with IMMED=1
# promises nothing, SBC).  With commands in flight the host SIGKILLs qemu: the guest's RAM,
# its page cache included, is gone.  The guest boots again on the same disk, utgtd serves the LU again, and
# the host reads it back: every block under a durable promise holds its last durable write or
# a later one, and no block holds anything but a write of the run or its old content.
#
# One crash per setting, each checked on the next boot (which serves the next setting):
#   default        FUA and SYNCHRONIZE CACHE promises hold; unflushed writes may be lost
#   write_through  every acknowledged write holds (O_DSYNC); WCE reads 0
#   nv_cache       FUA and SYNCHRONIZE CACHE are no-ops: the test expects durable-acked writes
#                  to be LOST (nv_cache declares the cache non-volatile; this one is not)
#   o_direct       FUA/SYNC promises hold, and acknowledged writes are past the page cache, so
#                  none is lost to a crash of the server (a device's own volatile cache is
#                  not modelled: the host under qemu does not lose power)
#   wce0           the default setting, the initiator clears WCE (MODE SELECT): every
#                  acknowledged write holds
# docs/durability.md says what each setting promises and what this test can and cannot see.
#
#   make vmtest T=powerloss                    (waits for any other guest run on the machine)
#   bash tests/vm/powerloss.sh OUTDIR [rounds=N] [seed=N] [ops=N]
# rounds=N repeats the five settings N times (N crashes each); seed= makes a run repeatable;
# only=S+S runs only the settings named (e.g. only=default+nv_cache); ops=N commands per run.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
cd "$SRC"
OUT=${1:-build/vm-logs/powerloss}
shift || true
rounds=1 seed=$(((RANDOM << 15) | RANDOM)) ops=2000 only=
for a in "$@"; do
	IFS=, read -r -a kvs <<<"$a"
	for kv in "${kvs[@]}"; do
		case $kv in
		rounds=*) rounds=${kv#rounds=} ;;
		seed=*) seed=${kv#seed=} ;;
		ops=*) ops=${kv#ops=} ;;
		only=*) only=${kv#only=} ;;
		quick) ;;
		*) echo "powerloss: unknown argument '$kv'" >&2; exit 2 ;;
		esac
	done
done
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
IO=tests/vm/lib/powerloss_io.py
IQN=iqn.2024-01.org.utgt:vm.powerloss
SIZE_MB=16
SIZE=$((SIZE_MB << 20))
T0=$SECONDS
say() { printf '[%4ds] %s\n' $((SECONDS - T0)) "$*"; }
fail() {
	say "FAIL: $*"
	exit 1
}

# setting:blocksize:promise:expect-lost:expect-acked-lost:expected-WCE
plan=()
for _ in $(seq 1 "$rounds"); do
	for p in default:4096:fua-sync:none:any:1 \
		write_through:4096:every-ack:none:none:0 \
		nv_cache:4096:fua-sync:some:any:1 \
		o_direct:512:fua-sync:none:none:1 \
		wce0:4096:every-ack:none:none:0; do
		[ -z "$only" ] || [[ "+$only+" == *"+${p%%:*}+"* ]] && plan+=("$p")
	done
done
[ ${#plan[@]} -gt 0 ] || fail "only=$only names no setting (default, write_through, nv_cache, o_direct, wce0)"

# One guest at a time on this machine, and this test's boots back to back: hold the lock
# run-guest.sh takes for the whole test.
. scripts/vm/guest-lock.sh
vm_guest_lock 7 powerloss || fail "lock wait timed out"

. tests/integration/lib/ports.sh
pick_port PORT
DISK=$OUT/pl-disk.img
rm -f "$DISK" "$OUT"/baseline.bin "$OUT"/boot*/ready "$OUT"/boot*/stop
truncate -s 64M "$DISK"
mke2fs -q -t ext4 -F "$DISK"

guest_pid=
qemu_pidfile=
stop_guest() {
	if [ -n "$qemu_pidfile" ] && [ -s "$qemu_pidfile" ]; then
		kill -KILL "$(cat "$qemu_pidfile")" 2>/dev/null || true
	fi
	if [ -n "$guest_pid" ]; then wait "$guest_pid" 2>/dev/null || true; fi
	guest_pid=
}
trap stop_guest EXIT
trap 'exit 143' TERM INT

# boot N SETTING BS: start guest N in the background, wait until its utgtd serves the LU.
boot() {
	local n=$1 setting=$2 bs=$3 dir=$OUT/boot$1 end
	mkdir -p "$dir"
	rm -f "$dir"/ready "$dir"/stop "$dir"/qemu.pid
	qemu_pidfile=$dir/qemu.pid
	scripts/vm/run-guest.sh -o "$dir" -t 900 -d "$DISK" -f "$PORT:3260" -P "$qemu_pidfile" \
		-a "setting=$setting,bs=$bs,size_mb=$SIZE_MB" tests/vm/lib/powerloss_guest.sh \
		>"$dir/run-guest.log" 2>&1 &
	guest_pid=$!
	end=$((SECONDS + 300))
	until [ -f "$dir/ready" ]; do
		if ! kill -0 "$guest_pid" 2>/dev/null; then
			tail -30 "$dir/console.log" | sed 's/^/  | /'
			fail "boot $n ended before its target was ready (console: $dir/console.log)"
		fi
		[ $SECONDS -lt $end ] || fail "boot $n: target not ready within 300s"
		sleep 0.5
	done
	say "boot $n: utgtd serves the LU ($setting, ${bs}-byte blocks) on 127.0.0.1:$PORT"
}

say "seed $seed, $rounds round(s), $ops commands per run, LU of $SIZE_MB MiB"
results=()
crashes=0 checked_total=0 failed=0
prev=
n=${#plan[@]}
for i in $(seq 0 "$n"); do
	if [ "$i" -lt "$n" ]; then
		IFS=: read -r setting bs _ _ _ wce <<<"${plan[$i]}"
	else
		setting=default bs=4096
	fi
	# wce0: the default setting, and the initiator clears WCE with MODE SELECT
	boot "$i" "${setting/wce0/default}" "$bs"
	if [ -n "$prev" ]; then
		IFS=: read -r p_setting p_bs p_promise p_lost p_acked_lost _ <<<"$prev"
		say "boot $i: reading back the LU written with $p_setting before the power cut"
		set +e
		python3 "$IO" check --port "$PORT" --iqn "$IQN" --bs "$p_bs" --size "$SIZE" \
			--log "$OUT/boot$((i - 1))/writes.log" --baseline "$OUT/baseline.bin" \
			--promise "$p_promise" --expect-lost "$p_lost" \
			--expect-acked-lost "$p_acked_lost" | tee "$OUT/boot$((i - 1))/check.txt"
		rc=${PIPESTATUS[0]}
		set -e
		summary=$(grep '^checked:' "$OUT/boot$((i - 1))/check.txt" || true)
		promised=$(sed -n 's/.* \([0-9]*\) promised durable.*/\1/p' <<<"$summary")
		checked_total=$((checked_total + ${promised:-0}))
		if [ "$rc" = 0 ]; then
			results+=("PASS $p_setting (bs $p_bs, expects durable-acked lost: $p_lost): ${summary#checked: }")
		else
			results+=("FAIL $p_setting (bs $p_bs): ${summary#checked: } (logs in $OUT/boot$((i - 1))/)")
			failed=$((failed + 1))
		fi
	fi
	if [ "$i" -lt "$n" ]; then
		s=$((seed + i))
		say "boot $i: writing with $setting (seed $s) until the power cut"
		more=()
		[ "$setting" = wce0 ] && more=(--set-wce 0)
		python3 "$IO" write --port "$PORT" --iqn "$IQN" --bs "$bs" --size "$SIZE" \
			--log "$OUT/boot$i/writes.log" --seed "$s" --ops "$ops" \
			--kill-pid-file "$qemu_pidfile" --expect-wce "$wce" "${more[@]}" ||
			fail "boot $i: the writer failed"
		wait "$guest_pid" && rc=0 || rc=$?
		guest_pid=
		[ "$rc" = 125 ] || fail "boot $i: expected qemu to die without an exit marker, run-guest said $rc"
		crashes=$((crashes + 1))
		prev=${plan[$i]}
	else
		touch "$OUT/boot$i/stop"
		wait "$guest_pid" && rc=0 || rc=$?
		guest_pid=
		[ "$rc" = 0 ] || fail "boot $i: the last boot did not end cleanly (exit $rc)"
	fi
done
echo
printf '%s\n' "${results[@]}"
[ "$failed" = 0 ] || fail "$failed of $crashes power cuts broke a promise (disk image kept: $DISK)"
rm -f "$DISK"
say "PASS powerloss: $crashes power cuts, $checked_total writes acknowledged as durable checked"
