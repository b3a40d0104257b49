#!/bin/bash
# vm-timeout: 1500
# vm-target: none
# utgtd's iSCSI/TCP target against the kernel's LIO iSCSI target, in one guest, on loopback,
# with Linux's own initiator (open-iscsi with Debian's defaults: it offers MaxBurstLength
# 16 MiB, FirstBurstLength 256 KiB, ImmediateData Yes, InitialR2T No, MaxRecvDataSegmentLength
# 256 KiB) and one RAM LU each (utgtd ramdisk, LIO rd_mcp), each target with its own defaults
# (the negotiated values are printed); iperf3's one stream on the same loopback is the floor
# that 1 MiB transfers are held against.  Both targets are logged in at once; every job runs
# on each in turn (the order flips every round), ROUNDS rounds, medians with their spread:
#   1 MiB sequential write and read at QD1 and QD8 (MB/s), 4 KiB random read QD16 (IOPS) and
#   QD1 (mean completion latency, µs)
# plus the guest's CPU per I/O and its context switches per I/O in each run.  This is the
# initiator utgt-bench's libiscsi cannot be: libiscsi offers MaxBurstLength 256 KiB and one
# outstanding R2T, so over it a 1 MiB WRITE at QD1 waits for three R2T round trips
# (docs/performance.md); open-iscsi asks for at most one.  Under TCG the guest is CPU bound:
# only ratios within one run mean something.  Table in /out/iscsi-compare.txt.
# Arguments: quick (2 rounds), rounds=N (default 5), secs=N (default 6), build=DIR,
# jobs=A+B (of w1 w8 r1 r8 rr lat), opt=KEY:VALUE (repeatable: an attribute in utgtd's TARGET
# block, e.g. opt=FirstBurstLength:262144), lio_opt=KEY:VALUE (repeatable: a parameter of LIO's
# TPG, tpgt_1/param/KEY: UTGT_VM_ARGS=lio_opt=InitialR2T:No,lio_opt=MaxBurstLength:1048576
# gives LIO utgtd's negotiated values).
. /src/tests/vm/lib/common.sh
. /src/tests/vm/lib/compare.sh
. /src/tests/vm/lib/cpustat.sh
ROUNDS=$([ "$QUICK" = 1 ] && echo 2 || echo 5)
RUNTIME=6
BUILD_DIR=build ONLY_JOBS= OPT= LIO_OPT=
for a in "$@"; do
	case $a in
	rounds=*) ROUNDS=${a#rounds=} ;;
	secs=*) RUNTIME=${a#secs=} ;;
	build=*) BUILD_DIR=${a#build=} ;;
	jobs=*) ONLY_JOBS=${a#jobs=} ;;
	opt=*) OPT+="${a#opt=} " ;;
	lio_opt=*) LIO_OPT+="${a#lio_opt=} " ;;
	esac
done
[ "$ROUNDS" -ge 1 ] && [ "$RUNTIME" -ge 1 ] || fail "rounds=$ROUNDS secs=$RUNTIME"
UTGTD=/src/$BUILD_DIR/utgtd
[ -x "$UTGTD" ] || fail "$UTGTD: not built"
RAMP=1
KEEP_CACHE=1
LU_MB=256
DIR=/tmp/iscsi-compare
OUT=/out/iscsi-compare.txt
TGT_HOST=127.0.0.1 # the common.sh iscsiadm helpers' portal address
IQN_U=iqn.2026-12.org.utgt:compare
IQN_L=iqn.2026-12.org.linux-iscsi:compare
declare -A PORT=([utgtd]=3260 [lio]=3261) IQN=([utgtd]=$IQN_U [lio]=$IQN_L) DEV=()
declare -A NAME=([utgtd]="utgtd iSCSI (ramdisk)" [lio]="LIO iSCSI (rd_mcp)")
TG=(utgtd lio)
LIO=/sys/kernel/config/target
UTGTD_PID= IPERF_PID=
cleanup() {
	iscsiadm -m node --logoutall=all >/dev/null 2>&1 || true
	[ -n "$UTGTD_PID" ] && kill -KILL "$UTGTD_PID" 2>/dev/null
	[ -n "$IPERF_PID" ] && kill -KILL "$IPERF_PID" 2>/dev/null
	return 0
}
trap cleanup EXIT
mkdir -p "$DIR"

step "utgtd (build $BUILD_DIR): a ramdisk LU on $TGT_HOST:${PORT[utgtd]}"
extra=""
for o in $OPT; do extra+="		${o%%:*} ${o#*:}"$'\n'; done
cat >"$DIR/scst.conf" <<EOF
HANDLER ramdisk {
	DEVICE ram0 {
		size_mb $LU_MB
	}
}

TARGET_DRIVER iscsi {
	enabled 1
	listen $TGT_HOST:${PORT[utgtd]}
	TARGET $IQN_U {
		enabled 1
		rel_tgt_id 1
${extra}		LUN 0 ram0
	}
}
EOF
cp "$DIR/scst.conf" /out/scst.conf
"$UTGTD" --check -c "$DIR/scst.conf" >/dev/null || fail "utgtd --check refused $DIR/scst.conf"
mkdir -p "$DIR/state"
"$UTGTD" -f -c "$DIR/scst.conf" --state-dir "$DIR/state" >/out/utgtd.log 2>&1 &
UTGTD_PID=$!
wait_until 30 "utgtd listening on ${PORT[utgtd]}" eval "ss -Hltn 'sport = :${PORT[utgtd]}' | grep -q LISTEN"

step "LIO: an rd_mcp LU on $TGT_HOST:${PORT[lio]}"
modprobe configfs
mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config
modprobe -a target_core_mod iscsi_target_mod
mkdir -p $LIO/core/rd_mcp_0/rd0
echo "rd_pages=$((LU_MB * 256))" >$LIO/core/rd_mcp_0/rd0/control
echo 1 >$LIO/core/rd_mcp_0/rd0/enable
tpg=$LIO/iscsi/$IQN_L/tpgt_1
mkdir -p "$tpg/lun/lun_0"
# configfs resolves a symlink's target from the current directory
(cd "$tpg/lun/lun_0" && ln -s ../../../../../core/rd_mcp_0/rd0 .)
mkdir "$tpg/np/$TGT_HOST:${PORT[lio]}"
echo 1 >"$tpg/attrib/generate_node_acls"
echo 1 >"$tpg/attrib/cache_dynamic_acls"
echo 0 >"$tpg/attrib/demo_mode_write_protect"
echo 0 >"$tpg/attrib/authentication"
for o in $LIO_OPT; do
	echo "${o#*:}" >"$tpg/param/${o%%:*}" || fail "LIO: param ${o%%:*} = ${o#*:} refused"
done
echo 1 >"$tpg/enable"

step "open-iscsi logs in to both"
start_iscsid
for t in "${TG[@]}"; do
	iscsi_node_new "${IQN[$t]}" "${PORT[$t]}"
	iscsi_login "${IQN[$t]}" "${PORT[$t]}" >/dev/null || fail "$t: login"
	DEV[$t]=$(session_disk "${IQN[$t]}" "${PORT[$t]}" 0)
	s=$(session_of "${IQN[$t]}" "${PORT[$t]}")
	c=/sys/class/iscsi_connection/connection${s#session}:0
	say "$t: ${DEV[$t]}; negotiated FirstBurstLength $(cat /sys/class/iscsi_session/"$s"/first_burst_len)," \
		"MaxBurstLength $(cat /sys/class/iscsi_session/"$s"/max_burst_len)," \
		"ImmediateData $(cat /sys/class/iscsi_session/"$s"/immediate_data)," \
		"InitialR2T $(cat /sys/class/iscsi_session/"$s"/initial_r2t)," \
		"MaxOutstandingR2T $(cat /sys/class/iscsi_session/"$s"/max_outstanding_r2t)," \
		"data segments out/in $(cat "$c/max_xmit_dlength")/$(cat "$c/max_recv_dlength")"
done
dd if=/dev/urandom of="$DIR/4m" bs=1M count=4 status=none
want=$(md5sum <"$DIR/4m")
for t in "${TG[@]}"; do
	dd if="$DIR/4m" of="${DEV[$t]}" bs=1M seek=17 oflag=direct status=none || fail "$t: write"
	expect_eq "$t: 4 MiB written and read back" \
		"$(dd if="${DEV[$t]}" bs=1M count=4 skip=17 iflag=direct status=none | md5sum)" "$want"
done
for t in "${TG[@]}"; do
	# every block written once: a RAM LU's first write of a page allocates it
	dd if=/dev/zero of="${DEV[$t]}" bs=1M count="$LU_MB" oflag=direct status=none || fail "$t: first write"
done

iperf3 -s -p 5201 >/dev/null 2>&1 &
IPERF_PID=$!
wait_until 20 "iperf3 server" eval "ss -Hltn 'sport = :5201' | grep -q LISTEN"
# iperf_mbs: one iperf3 stream on loopback for RUNTIME s, received MB/s
iperf_mbs() {
	iperf3 -c 127.0.0.1 -p 5201 -t "$RUNTIME" -J 2>/dev/null |
		python3 -c 'import json,sys; print("%.1f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 8e6))'
}

JOBS=(w1 w8 r1 r8 rr lat)
if [ -n "$ONLY_JOBS" ]; then read -ra JOBS <<<"${ONLY_JOBS//[,+]/ }"; fi
declare -A ARGS=(
	[w1]="--rw=write --bs=1M --iodepth=1"
	[w8]="--rw=write --bs=1M --iodepth=8"
	[r1]="--rw=read --bs=1M --iodepth=1"
	[r8]="--rw=read --bs=1M --iodepth=8"
	[rr]="--rw=randread --bs=4k --iodepth=16"
	[lat]="--rw=randread --bs=4k --iodepth=1"
) SIZE=([w1]=1048576 [w8]=1048576 [r1]=1048576 [r8]=1048576 [rr]=4096 [lat]=4096)
declare -A JN=([w1]="1M seq write QD1, MB/s" [w8]="1M seq write QD8, MB/s"
	[r1]="1M seq read QD1, MB/s" [r8]="1M seq read QD8, MB/s"
	[rr]="4k rand read QD16, IOPS" [lat]="4k rand read QD1, mean us")
for j in "${JOBS[@]}"; do [ -n "${ARGS[$j]:-}" ] || fail "jobs=: no job $j (w1 w8 r1 r8 rr lat)"; done
declare -A V=() CPU=() GCSW=() OWN=()
IPERF=()

step "$ROUNDS rounds of ${#JOBS[@]} jobs x 2 targets, ${RUNTIME}+${RAMP} s each, alternating; iperf3 each round"
t0=$SECONDS
for r in $(seq 1 "$ROUNDS"); do
	IPERF+=("$(iperf_mbs)")
	[ -n "${IPERF[-1]}" ] || fail "iperf3 gave no figure"
	for j in "${JOBS[@]}"; do
		for i in 0 1; do
			t=${TG[$((r % 2 ? i : 1 - i))]}
			read -r s0 _ < <(cpu_stat)
			g0=$(ctxt_count)
			[ "$t" = utgtd ] && read -r u0 _ < <(proc_sched "$UTGTD_PID")
			b0=$(blk_bytes "${DEV[$t]}")
			# shellcheck disable=SC2086
			v=$(fio_bw "$t-$j-$r" "${DEV[$t]}" --size="${LU_MB}M" ${ARGS[$j]}) || fail "$t $j"
			read -r s1 _ < <(cpu_stat)
			g1=$(ctxt_count)
			b=$(($(blk_bytes "${DEV[$t]}") - b0))
			case $j in
			rr) V[$t,$j]+="${v#* } " ;;
			lat) V[$t,$j]+="$(fio_lat_us "$t-$j-$r") " ;;
			*) V[$t,$j]+="${v% *} " ;;
			esac
			CPU[$t,$j]+="$(cpu_us_per $((s1 - s0)) "$b" "${SIZE[$j]}") "
			GCSW[$t,$j]+="$(per_io $((g1 - g0)) "$b" "${SIZE[$j]}") "
			if [ "$t" = utgtd ]; then
				read -r u1 _ < <(proc_sched "$UTGTD_PID")
				OWN[$t,$j]+="$(per_io $((u1 - u0)) "$b" "${SIZE[$j]}") "
			fi
		done
	done
	say "round $r: iperf3 ${IPERF[-1]} MB/s;$(for j in "${JOBS[@]}"; do
		printf ' %s %s/%s' "$j" "$(echo ${V[utgtd,$j]} | awk '{ print $NF }')" \
			"$(echo ${V[lio,$j]} | awk '{ print $NF }')"
	done) (utgtd/LIO)"
done
say "measured in $((SECONDS - t0)) s"

step "logout"
for t in "${TG[@]}"; do iscsi_logout "${IQN[$t]}" "${PORT[$t]}" >/dev/null || fail "$t: logout"; done
kill -TERM "$UTGTD_PID"
rc=0
wait "$UTGTD_PID" || rc=$?
UTGTD_PID=
expect_eq "utgtd exit status" "$rc" 0
echo 0 >"$tpg/enable"

step "table"
IP=$(median "${IPERF[@]}")
{
	echo "iSCSI/TCP on loopback, one guest ($(nproc) vCPU, TCG); initiator Linux $(uname -r)"
	echo "open-iscsi (Debian defaults); fio libaio direct, ${RUNTIME} s (+${RAMP} s ramp) per run;"
	echo "$ROUNDS rounds, targets alternating; medians, [min-max] over the rounds; ${LU_MB} MiB RAM LUs."
	echo "iperf3, one stream on the same loopback: $IP MB/s [$(spread "${IPERF[@]}")]"
	echo
	echo "| job | target | median | [min-max] | x iperf3 | guest CPU us/IO | guest switches/IO | utgtd us/IO |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|"
	for j in "${JOBS[@]}"; do
		for t in "${TG[@]}"; do
			x=-
			case $j in w* | r[18]) x=$(ratio "$(med V "$t" "$j")" "$IP") ;; esac
			# shellcheck disable=SC2086
			printf '| %s | %s | %s | [%s] | %s | %s | %s | %s |\n' "${JN[$j]}" "${NAME[$t]}" \
				"$(med V "$t" "$j")" "$(spread ${V[$t,$j]})" "$x" "$(med CPU "$t" "$j")" \
				"$(med GCSW "$t" "$j")" "$(med OWN "$t" "$j")"
		done
	done
	echo
	echo "utgtd against LIO (above 1.00: utgtd better; latency and CPU as LIO / utgtd):"
	for j in "${JOBS[@]}"; do
		u=$(med V utgtd "$j") l=$(med V lio "$j")
		if [ "$j" = lat ]; then x=$(ratio "$l" "$u"); else x=$(ratio "$u" "$l"); fi
		printf '  %-4s %s   guest CPU per I/O %s\n' "$j" "$x" \
			"$(ratio "$(med CPU lio "$j")" "$(med CPU utgtd "$j")")"
	done
	echo
	echo "Per round (iperf3: ${IPERF[*]}):"
	for t in "${TG[@]}"; do
		for j in "${JOBS[@]}"; do echo "  $t $j: ${V[$t,$j]}(guest CPU us/IO ${CPU[$t,$j]})"; done
	done
} | tee "$OUT"
all_measured V
say "PASS iscsi_compare"
