#!/bin/bash
# vm-timeout: 1500
# vm-target: none
# Cold reads from a file on a disk, on Debian 12's kernel: utgtd's vdisk_fileio with its
# io_uring engine, the same with the engine's thread pool (UTGT_NO_IO_URING=1), and Debian's
# tgtd (a pread per command from its thread pool), each serving the one file on the guest's
# virtio disk over iSCSI/TCP on loopback to utgt-bench.  The page cache is dropped before every
# job, so the file comes from the disk; `dd bs=1M` on the file is the floor a sequential reader
# gets.  Every job runs on each target in turn (the order rotates every round), ROUNDS rounds,
# medians with their spread:
#   1 MiB sequential read of the whole file at QD1 and QD8 (MB/s), 4 KiB random read QD16
#   for RUNTIME seconds (IOPS)
# Under TCG only ratios within one run mean something.  Table in /out/fileio-cold.txt.
# Arguments: quick (1 round), rounds=N (default 3), secs=N (default 5), mb=N (file size,
# default 192), build=DIR, base=DIR (a fourth target: DIR's utgtd with its default engine, to
# hold a change against).
. /src/tests/vm/lib/common.sh
. /src/tests/vm/lib/compare.sh
ROUNDS=$([ "$QUICK" = 1 ] && echo 1 || echo 3)
RUNTIME=5 MB=192 BUILD_DIR=build BASE_DIR=
for a in "$@"; do
	case $a in
	rounds=*) ROUNDS=${a#rounds=} ;;
	secs=*) RUNTIME=${a#secs=} ;;
	mb=*) MB=${a#mb=} ;;
	build=*) BUILD_DIR=${a#build=} ;;
	base=*) BASE_DIR=${a#base=} ;;
	esac
done
[ "$ROUNDS" -ge 1 ] && [ "$RUNTIME" -ge 1 ] && [ "$MB" -ge 8 ] || fail "rounds=$ROUNDS secs=$RUNTIME mb=$MB"
UTGTD=/src/$BUILD_DIR/utgtd BENCH=/src/$BUILD_DIR/utgt-bench
[ -x "$UTGTD" ] && [ -x "$BENCH" ] || fail "$UTGTD or $BENCH: not built"
FILE=/var/tmp/fileio-cold.img
OUT=/out/fileio-cold.txt
TG=(uring pool tgtd)
JOBS=(r1 r8 rr)
declare -A NAME=([uring]="utgtd, io_uring engine" [pool]="utgtd, thread pool engine"
	[tgtd]="tgtd (pread, thread pool)" [base]="base ($BASE_DIR), io_uring")
declare -A PORT=([uring]=3260 [pool]=3262 [tgtd]=3261 [base]=3263)
declare -A URL=([tgtd]=iscsi://127.0.0.1:3261/iqn.2026-12.org.tgt:cold/1)
declare -A BIN=([uring]=$UTGTD [pool]=$UTGTD)
if [ -n "$BASE_DIR" ]; then
	BIN[base]=/src/$BASE_DIR/utgtd
	[ -x "${BIN[base]}" ] || fail "${BIN[base]}: not built"
	TG+=(base)
fi
declare -A M DD
UPIDS=()
on_fail() { tail -20 /tmp/utgtd-*.log /tmp/tgtd.log 2>/dev/null; }
cleanup() {
	tgtadm --op delete --mode system --force >/dev/null 2>&1 || true
	for p in "${UPIDS[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	return 0
}
trap 'cleanup; jobs -p | xargs -r kill 2>/dev/null || true' EXIT

step "a ${MB} MiB file of random bytes on the guest's disk; utgtd twice and tgtd serve it"
dd if=/dev/urandom of=$FILE bs=1M count="$MB" status=none
sync
for k in "${!BIN[@]}"; do
	URL[$k]=iscsi://127.0.0.1:${PORT[$k]}/iqn.2026-12.org.utgt:cold/0
	cat >/tmp/utgtd-$k.conf <<EOF
HANDLER vdisk_fileio {
	DEVICE cold0 {
		filename $FILE
		read_only 1
	}
}
TARGET_DRIVER iscsi {
	listen 127.0.0.1:${PORT[$k]}
	TARGET iqn.2026-12.org.utgt:cold {
		enabled 1
		LUN 0 cold0
	}
}
EOF
	env $([ $k = pool ] && echo UTGT_NO_IO_URING=1) "${BIN[$k]}" -f -c /tmp/utgtd-$k.conf \
		--admin-socket /tmp/utgtd-$k.sock --state-dir /tmp/utgtd-$k.state >/tmp/utgtd-$k.log 2>&1 &
	UPIDS+=($!)
	wait_until 60 "utgtd ($k) to listen" grep -q "listening on" /tmp/utgtd-$k.log
done
mkdir -p /var/run/tgtd
tgtd -f --iscsi portal=127.0.0.1:${PORT[tgtd]} >/tmp/tgtd.log 2>&1 &
wait_until 60 "tgtd to start" tgtadm --op show --mode system
tgtadm --lld iscsi --op new --mode target --tid 1 -T iqn.2026-12.org.tgt:cold &&
	tgtadm --lld iscsi --op new --mode logicalunit --tid 1 --lun 1 -b $FILE &&
	tgtadm --lld iscsi --op bind --mode target --tid 1 -I ALL || fail "tgtd setup"

# bench TARGET JOB: one utgt-bench job from a cold page cache; prints MB/s or IOPS.
bench() {
	local a
	case $2 in
	r1) a=(--rw=read --bs=1m --iodepth=1 --size=100%) ;;
	r8) a=(--rw=read --bs=1m --iodepth=8 --size=100%) ;;
	rr) a=(--rw=randread --bs=4k --iodepth=16 --runtime="$RUNTIME" --time_based) ;;
	esac
	sync
	echo 3 >/proc/sys/vm/drop_caches
	"$BENCH" --name="$1-$2" --filename="${URL[$1]}" "${a[@]}" --output-format=json \
		--progress=never >/tmp/bench.json 2>/tmp/bench.err || { cat /tmp/bench.err; fail "$1 $2"; }
	python3 - "$2" <<'PY'
import json, sys
r = json.load(open("/tmp/bench.json"))["jobs"][0]["read"]
if not r["io_bytes"]:
    sys.exit(1)
print(f"{r['iops']:.0f}" if sys.argv[1] == "rr" else f"{r['bw_bytes'] / 1e6:.1f}")
PY
}

for k in "${TG[@]}"; do
	"$BENCH" --name=probe --filename="${URL[$k]}" --rw=read --bs=1m --size=4m \
		--output-format=terse --progress=never >/dev/null 2>&1 || fail "$k: first read"
done
for r in $(seq 1 "$ROUNDS"); do
	step "round $r of $ROUNDS"
	sync
	echo 3 >/proc/sys/vm/drop_caches
	v=$(dd if=$FILE of=/dev/null bs=1M 2>&1 | awk '/copied/ { printf "%.1f", $(NF - 1) * ($NF == "GB/s" ? 1000 : 1) }')
	DD[$r]=$v
	say "dd bs=1M: $v MB/s"
	for j in "${JOBS[@]}"; do
		for i in "${!TG[@]}"; do
			k=${TG[$(((i + r - 1) % ${#TG[@]}))]}
			v=$(bench "$k" "$j") || fail "$k $j: no figure"
			M[$k,$j]+="$v "
			say "$(printf '%-28s %-3s %8s' "${NAME[$k]}" "$j" "$v")"
		done
	done
done
all_measured M

{
	echo "Cold reads of a ${MB} MiB file on the guest's virtio disk, kernel $(uname -r)"
	echo "page cache dropped before every job; medians of $ROUNDS round(s) [min-max]"
	printf '%-28s | %-22s | %-22s | %-22s\n' target "1 MiB read QD1, MB/s" "1 MiB read QD8, MB/s" "4 KiB rand QD16, IOPS"
	for k in "${TG[@]}"; do
		printf '%-28s' "${NAME[$k]}"
		for j in "${JOBS[@]}"; do
			# shellcheck disable=SC2086
			printf ' | %-22s' "$(med M "$k" "$j") [$(spread ${M[$k,$j]})]"
		done
		echo
	done
	for k in "${TG[@]}"; do
		[ "$k" = tgtd ] && continue
		printf '%-28s' "${k} / tgtd"
		for j in "${JOBS[@]}"; do printf ' | %-22s' "$(ratio "$(med M $k "$j")" "$(med M tgtd "$j")")"; done
		echo
	done
	printf '%-28s' "uring / pool"
	for j in "${JOBS[@]}"; do printf ' | %-22s' "$(ratio "$(med M uring "$j")" "$(med M pool "$j")")"; done
	echo
	if [ -n "$BASE_DIR" ]; then
		printf '%-28s' "uring / base"
		for j in "${JOBS[@]}"; do printf ' | %-22s' "$(ratio "$(med M uring "$j")" "$(med M base "$j")")"; done
		echo
	fi
	# shellcheck disable=SC2046
	echo "dd bs=1M of the file (the disk's sequential floor): $(median $(printf '%s ' "${DD[@]}")) MB/s"
} | tee "$OUT"
ok "fileio_cold: table in $OUT"
