#!/bin/bash
# vm-timeout: 2400
# vm-target: none
# Throughput in one guest, on one soft-RoCE link (rxe0 loopback), one initiator (open-iscsi +
# ib_iser), the same backing file, of:
#   utgtd's iSER target (vdisk_fileio)          RDMA CM port 3262
#   Debian's tgtd iser driver (rdwr)            RDMA CM port 3260 (tgtd cannot move it)
#   the kernel's LIO ib_isert (target_core_file) RDMA CM port 3261
#   perftest ib_write_bw / ib_read_bw, 1 MiB    the link itself, no SCSI
# All three targets run and are logged in at once; each round measures every target in turn
# (the order rotates per round), each figure is the median over the rounds.  fio: 1 MiB
# sequential read and write at QD8, 4 KiB random read at QD16, libaio direct.  Every target
# writes back through the page cache (LIO with fd_buffered_io=1).  The page cache is dropped
# before every job (reads from the virtio disk) unless `warm`: then the file is read once
# through every target first and stays cached, so the iSER and RDMA path is what is measured,
# as in srp_compare.  Under TCG only the ratios mean something.  Table in
# /out/iser-compare.txt.
# Arguments: quick (8 s per job), warm, rounds=N (default 3), targets=utgtd+tgtd+lio (the default;
# e.g. targets=tgtd+lio while utgtd has no iSER; '+' since run-guest.sh splits its arguments at
# commas), build=DIR, plus tests/vm/lib/iser.sh's.
. /src/tests/vm/lib/common.sh
. /src/tests/vm/lib/iser.sh
. /src/tests/vm/lib/compare.sh
on_fail() { iser_on_fail; }
trap iser_cleanup EXIT
[ "$ISER_TCP" = 0 ] || fail "iser_compare compares iSER targets: transport=tcp makes no sense here"
RUNTIME=$([ "$QUICK" = 1 ] && echo 8 || echo 15)
ROUNDS=3
KINDS=(utgtd tgtd lio)
for a in "$@"; do
	case $a in
	rounds=*) ROUNDS=${a#rounds=} ;;
	warm) KEEP_CACHE=1 ;;
	targets=*) IFS=+ read -r -a KINDS <<<"${a#targets=}" ;;
	esac
done
[ "$ROUNDS" -ge 1 ] || fail "rounds=$ROUNDS"
declare -A PORT=([tgtd]=3260 [lio]=3261 [utgtd]=3262) DEV=() NAME=(
	[utgtd]="utgtd iSER (userspace)" [tgtd]="tgtd iSER (userspace)" [lio]="LIO ib_isert (kernel)")
for k in "${KINDS[@]}"; do
	[ -n "${PORT[$k]:-}" ] || fail "targets=: unknown target '$k' (utgtd, tgtd, lio)"
done
OUT=/out/iser-compare.txt
: >"$ISER_LOG"

step "soft-RoCE, one backing file with data, targets: ${KINDS[*]}"
iser_env_up
LU0_FILE=/var/tmp/iser-cmp.img
dd if=/dev/urandom of="$LU0_FILE" bs=1M count="$LU0_MB" status=none # real data to read
sync
for k in "${KINDS[@]}"; do
	p=$GUEST_IP:${PORT[$k]}
	iser_start "$k" "$p"
	iser_node_new "$IQN_PLAIN" "$p"
	iser_login "$IQN_PLAIN" "$p" >/dev/null || fail "login to $k at $p failed"
	case $k in tgtd) lun=1 ;; *) lun=0 ;; esac
	DEV[$k]=$(iser_disk "$IQN_PLAIN" "$p" "$lun")
	iser_check_transport "$IQN_PLAIN" "$p"
	expect_eq "$k: size of ${DEV[$k]}" "$(blockdev --getsize64 "${DEV[$k]}")" "$LU0_BYTES"
done
# The same bytes through every target: the file is one.
sums=$(for k in "${KINDS[@]}"; do
	dd if="${DEV[$k]}" bs=1M count=4 skip=17 iflag=direct status=none | md5sum
done | sort -u | wc -l)
expect_eq "distinct checksums of MiB 17-20 across the targets" "$sums" 1
if [ "${KEEP_CACHE:-0}" = 1 ]; then
	for k in "${KINDS[@]}"; do
		dd if="${DEV[$k]}" of=/dev/null bs=1M iflag=direct status=none || fail "$k: first read"
	done
fi

n=${#KINDS[@]}
for r in $(seq 1 "$ROUNDS"); do
	step "round $r of $ROUNDS"
	for i in $(seq 0 $((n - 1))); do
		k=${KINDS[$(((i + r - 1) % n))]}
		measure "$k#$r" "${DEV[$k]}"
	done
done

step "perftest on the same link (1 MiB messages, $ROUNDS runs each)"
PERF_N=$([ "$QUICK" = 1 ] && echo 200 || echo 600)
pr=() pw=()
for r in $(seq 1 "$ROUNDS"); do
	pr+=("$(perf ib_read_bw 1048576 "$PERF_N")")
	pw+=("$(perf ib_write_bw 1048576 "$PERF_N")")
done
say "ib_read_bw ${pr[*]} MB/s; ib_write_bw ${pw[*]} MB/s"
# perftest now and then reports an average of 0 under TCG: not a measurement
nonzero() { local v; for v in "$@"; do awk -v v="$v" 'BEGIN { exit !(v > 0) }' && echo "$v"; done; }
mapfile -t prv < <(nonzero "${pr[@]}")
mapfile -t pwv < <(nonzero "${pw[@]}")
((${#prv[@]} && ${#pwv[@]})) || fail "perftest measured nothing: read ${pr[*]}, write ${pw[*]}"
R[perf,read]=$(median "${prv[@]}")
R[perf,write]=$(median "${pwv[@]}")

step "teardown"
for k in "${KINDS[@]}"; do
	iser_logout "$IQN_PLAIN" "$GUEST_IP:${PORT[$k]}" >/dev/null
	iser_stop "$k"
done

step "table"
for k in utgtd tgtd lio; do
	for m in sr sw rr; do
		vals=()
		for r in $(seq 1 "$ROUNDS"); do
			[ -n "${R[$k#$r,$m]:-}" ] && vals+=("${R[$k#$r,$m]}")
		done
		R[$k,$m]=$( ((${#vals[@]})) && median "${vals[@]}" || echo "-")
		R[$k,$m,all]="${vals[*]}"
	done
done
{
	echo "iSER over soft-RoCE (rxe0 loopback), one guest ($(nproc) vCPU, TCG), $RUNTIME s per job,"
	echo "median of $ROUNDS rounds (targets in turn, order rotating); initiator: Linux $(uname -r)"
	echo "open-iscsi + ib_iser; fio libaio direct; one backing file for all targets, page cache"
	echo "$([ "${KEEP_CACHE:-0}" = 1 ] && echo "kept warm (read once first)" || echo "dropped before every job")"
	echo
	printf '| %-26s | %15s | %16s | %17s |\n' "" "seq read 1M qd8" "seq write 1M qd8" "4k rand read qd16"
	printf '|%s|%s|%s|%s|\n' "----------------------------" "-----------------" "------------------" "-------------------"
	for k in utgtd tgtd lio; do
		printf '| %-26s | %10s MB/s | %11s MB/s | %12s IOPS |\n' "${NAME[$k]}" \
			"${R[$k,sr]}" "${R[$k,sw]}" "${R[$k,rr]}"
	done
	printf '| %-26s | %10s MB/s | %11s MB/s | %17s |\n' "perftest (link, 1 MiB)" \
		"${R[perf,write]}" "${R[perf,read]}" "-"
	printf '| %-26s | %15s | %16s | %17s |\n' "utgtd / tgtd" "$(ratio "${R[utgtd,sr]}" "${R[tgtd,sr]}")" \
		"$(ratio "${R[utgtd,sw]}" "${R[tgtd,sw]}")" "$(ratio "${R[utgtd,rr]}" "${R[tgtd,rr]}")"
	printf '| %-26s | %15s | %16s | %17s |\n' "utgtd / LIO" "$(ratio "${R[utgtd,sr]}" "${R[lio,sr]}")" \
		"$(ratio "${R[utgtd,sw]}" "${R[lio,sw]}")" "$(ratio "${R[utgtd,rr]}" "${R[lio,rr]}")"
	printf '| %-26s | %15s | %16s | %17s |\n' "tgtd / LIO" "$(ratio "${R[tgtd,sr]}" "${R[lio,sr]}")" \
		"$(ratio "${R[tgtd,sw]}" "${R[lio,sw]}")" "$(ratio "${R[tgtd,rr]}" "${R[lio,rr]}")"
	echo
	echo "perftest columns: a SCSI read moves data by RDMA WRITE (ib_write_bw), a write by RDMA"
	echo "READ (ib_read_bw).  Per round (MB/s, MB/s, IOPS):"
	for k in "${KINDS[@]}"; do
		echo "  $k: read ${R[$k,sr,all]}; write ${R[$k,sw,all]}; 4k ${R[$k,rr,all]}"
	done
	echo "  perftest: ib_write_bw ${pw[*]}; ib_read_bw ${pr[*]}"
} | tee "$OUT"
say "PASS iser_compare (${KINDS[*]})"
