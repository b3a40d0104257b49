#!/bin/bash
# vm-timeout: 1800
# vm-target: none
# vm-peer: 1
# Seed 001 over RDMA: SRP multipath scaling across two shaped soft-RoCE links.  Two guests
# (scripts/vm/run-guest.sh -p), each with rxe1 and rxe2 on two point-to-point links: utgtd's
# ib_srpt in the target guest, one TARGET per port GID (the seed's scst.conf, one RAM LU); in
# the initiator guest Linux ib_srp logs in over each link and dm-multipath makes one map,
# round-robin switching every request (rr_min_io_rq 1, the Linux counterpart of ESXi's
# VMW_PSP_RR iops=1).  Order: perftest per link and fio over one path unshaped (the machine's
# ceiling), then tbf on both ends of both links at a third of the lower fio figure, so the
# links and not the emulated CPUs are the bottleneck; perftest again per shaped link and on
# both at once (the ceilings); fio 1 MiB read and write at QD8 and 4 KiB random read at QD32
# on the map with 1 path, then 2; the same workloads through utgt-bench's srp engine
# (--rr-iops=1 --sweep-paths=1,2).  Prints the table (also /out/rdma_scaling.txt).
#
# Checks: every run ends without error; at 2 paths each path carries >= 30% of the commands;
# a crc32c-verified write run on the 2-path map; 1 MiB read and write over 2 paths reach
# min_speedup (1.3) x 1 path for both initiators (the aim, as in the seed, is 1.8-2.0; the
# bound only catches a map or engine that does not spread I/O, the machine being shared).
# Arguments: quick (short runs), rate=MBIT (skip the third-of-ceiling choice),
# runtime=SECONDS, min_speedup=X, build=DIR.
. /src/tests/vm/lib/common.sh
. /src/tests/vm/lib/srp.sh
. /src/tests/vm/lib/mpath.sh
. /src/tests/vm/lib/compare.sh
. /src/tests/vm/lib/peer.sh

RATE= MIN_SPEEDUP=1.3
RUNTIME=$([ "$QUICK" = 1 ] && echo 8 || echo 20)
for a in "$@"; do
	case $a in
	rate=*) RATE=${a#rate=} ;;
	runtime=*) RUNTIME=${a#runtime=} ;;
	min_speedup=*) MIN_SPEEDUP=${a#min_speedup=} ;;
	esac
done
BENCH=/src/$BUILD_DIR/utgt-bench
OUT=/out/rdma_scaling.txt

# ---- run in the target guest (through remote)

# tgt_start: utgtd serving one RAM LU through two TARGETs, one per link's port GID (seed 001's
# layout: rel_tgt_id 1 and 2); prints utgtd --show-srp-login.
tgt_start() {
	local g1 g2
	g1=$(cat /sys/class/infiniband/rxe1/ports/1/gids/0)
	g2=$(cat /sys/class/infiniband/rxe2/ports/1/gids/0)
	mkdir -p "$SRP_DIR"
	cat >"$SRP_CONF" <<EOF
HANDLER ramdisk {
	DEVICE dev-srp0 {
		size_mb $SRP_MB
		t10_vend_id UTGT
		prod_id SRPDISK0
		usn UTGTSRP000000001
	}
}

TARGET_DRIVER ib_srpt {
	enabled 1
	listen 0.0.0.0:$SRP_PORT
	TARGET $g1 {
		enabled 1
		rel_tgt_id 1
		LUN 0 dev-srp0
	}
	TARGET $g2 {
		enabled 1
		rel_tgt_id 2
		LUN 0 dev-srp0
	}
}
EOF
	cp "$SRP_CONF" /out/scst.conf
	: >"$SRP_LOG"
	utgtd_start >&2
	"$UTGTD" --show-srp-login -c "$SRP_CONF"
}

tgt_stop() {
	utgtd_stop
	echo "utgtd exit status $UTGTD_RC"
	[ "$UTGTD_RC" = 0 ] || fail "utgtd exited $UTGTD_RC"
	! grep -qE "AddressSanitizer|runtime error" "$SRP_LOG" || fail "sanitizer report in utgtd's log"
}

peer_start # the target guest serves from here on and never returns

# ---- the initiator guest
on_fail() {
	remote -t 30 "tail -30 $SRP_LOG" 2>/dev/null || true
	multipath -ll 2>/dev/null || true
	dmesg | grep -iE 'srp|rxe|scsi|device-mapper' | tail -30 || true
}
modprobe ib_srp ch_count=1
modprobe -a sd_mod sg dm_multipath dm_round_robin
: >"$OUT"
: >/out/perftest.log
log() { printf '%s\n' "$*" | tee -a "$OUT"; }

# perf_link TOOL L ITERS: perftest over link L, server here, client in the target guest:
# ib_write_bw moves data target -> initiator (what an SRP read does: RDMA WRITE), ib_read_bw
# initiator -> target (an SRP write: the target's RDMA READ).  Prints MB/s.
# perf_link TOOL both ITERS: the same on both links at once; prints "MB/s MB/s".  Every output
# goes to /out/perftest.log.  (Not -e: with it the server never listened on RDMA/CM here.)
perf_link() {
	local tool=$1 n=$3 l links port ports= cmd= mbs srv=() v=()
	links=$([ "$2" = both ] && echo "$LINKS" || echo "$2")
	for l in $links; do
		port=$(perf_port)
		timeout -k 5 150 "$tool" -d "rxe$l" -R -p "$port" -s 65536 -n "$n" -F \
			>"/tmp/perf-$port.srv" 2>&1 &
		srv+=($!)
		wait_until 60 "$tool server on rxe$l" listening "$port"
		cmd+="timeout -k 5 120 $tool -d rxe$l -R -p $port -s 65536 -n $n -F $(peer_ip "$l" initiator) >/tmp/perf-$port.cli 2>&1 & "
		ports+=" $port"
	done
	# In a subshell: its wait is for these clients only, not for utgtd.
	remote -t 200 "(${cmd}wait); for p in$ports; do echo \"== \$p\"; cat /tmp/perf-\$p.cli; done" \
		>/tmp/perf.out || { cat /tmp/perf.out; fail "$tool over link $2 failed"; }
	wait "${srv[@]}" || true
	{
		echo "==== $tool link $2, $n x 64 KiB"
		cat /tmp/perf.out
		for port in $ports; do
			echo "== $port server"
			cat "/tmp/perf-$port.srv"
		done
	} >>/out/perftest.log
	for port in $ports; do
		mbs=$(sed -n "/^== $port\$/,/^== /p" /tmp/perf.out | perf_mbs 65536) ||
			{ cat /tmp/perf.out; fail "$tool over link $2: no result"; }
		awk -v m="$mbs" 'BEGIN { exit !(m > 0) }' ||
			say "warning: $tool over link $2 printed $mbs MB/s (/out/perftest.log)" >&2
		v+=("$mbs")
	done
	echo "${v[*]}"
}

# fio_job NAME DEV KIND: one of the three workloads on DEV; prints "MB/s IOPS".
fio_job() {
	case $3 in
	sr) fio_bw "$1" "$2" --rw=read --bs=1M --iodepth=8 ;;
	sw) fio_bw "$1" "$2" --rw=write --bs=1M --iodepth=8 ;;
	rr) fio_bw "$1" "$2" --rw=randread --bs=4k --iodepth=32 ;;
	esac || fail "fio $1 on $2 failed"
}
declare -A WHAT=([sr]="1 MiB seq read QD8" [sw]="1 MiB seq write QD8" [rr]="4 KiB rand read QD32")
KINDS="sr sw rr"

# srp_login L EXT: ib_srp logs in over link L to that link's TARGET; prints the new disk.
srp_login() {
	local line h
	line=$(grep -v '^#' <<<"$LOGIN" | grep "dest=$(peer_ip "$1" target):$SRP_PORT\$" | head -1)
	[ -n "$line" ] || fail "--show-srp-login has no line for link $1"
	echo "$line,initiator_ext=$2,src=$(peer_ip "$1" initiator)" \
		>"/sys/class/infiniband_srp/srp-rxe$1-1/add_target"
	h=$(srp_hosts | tail -1)
	srp_disk "$h"
}

step "utgtd in the target guest, ib_srp over link 1"
LOGIN=$(remote tgt_start) || { echo "$LOGIN"; fail "utgtd did not start"; }
echo "$LOGIN"
sd1=$(srp_login 1 1)
d1=${sd1#/dev/}
say "path 1: $d1"

step "unshaped: perftest per link, fio over path 1 (the machine's ceiling)"
declare -A P
for l in $LINKS; do
	P[u$l,w]=$(perf_link ib_write_bw "$l" 300)
	P[u$l,r]=$(perf_link ib_read_bw "$l" 300)
	log "unshaped link $l: ib_write_bw ${P[u$l,w]} MB/s, ib_read_bw ${P[u$l,r]} MB/s"
done
RUNTIME_FULL=$RUNTIME
RUNTIME=$((RUNTIME < 8 ? RUNTIME : 8))
declare -A C
for k in sr sw; do
	v=$(fio_job "cal-$k" "$sd1" "$k")
	C[$k]=${v% *}
done
RUNTIME=$RUNTIME_FULL
log "unshaped fio over path 1: seq read ${C[sr]} MB/s, seq write ${C[sw]} MB/s"
UNSHAPED="perftest link 1 ${P[u1,w]} / ${P[u1,r]} MB/s, link 2 ${P[u2,w]} / ${P[u2,r]} MB/s (ib_write_bw / ib_read_bw); fio over path 1 seq read ${C[sr]} MB/s, seq write ${C[sw]} MB/s"
if [ -z "$RATE" ]; then
	RATE=$(awk -v a="${C[sr]}" -v b="${C[sw]}" 'BEGIN { m = a < b ? a : b; r = int(m * 8 / 3)
		print (r < 4 ? 4 : r) }')
	log "each link shaped to a third of the lower figure: ${RATE} mbit/s ($(awk -v r="$RATE" 'BEGIN { printf "%.2f", r / 8 }') MB/s)"
else
	log "each link shaped to ${RATE} mbit/s (rate= argument)"
fi

step "shaping both ends of both links to ${RATE}mbit"
for l in $LINKS; do
	peer_shape "$l" "${RATE}mbit"
	remote "peer_shape $l ${RATE}mbit" || fail "shaping the target's side of link $l failed"
done
ITERS=$((RATE * 12 > 100 ? RATE * 12 : 100)) # ~6 s of 64 KiB messages at the rate
for l in $LINKS; do
	P[s$l,w]=$(perf_link ib_write_bw "$l" "$ITERS")
	P[s$l,r]=$(perf_link ib_read_bw "$l" "$ITERS")
	log "shaped link $l: ib_write_bw ${P[s$l,w]} MB/s, ib_read_bw ${P[s$l,r]} MB/s"
done
read -r a b <<<"$(perf_link ib_write_bw both "$ITERS")"
P[sb,w]=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f", a + b }')
log "both shaped links at once: ib_write_bw $a + $b = ${P[sb,w]} MB/s"
read -r a b <<<"$(perf_link ib_read_bw both "$ITERS")"
P[sb,r]=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f", a + b }')
log "both shaped links at once: ib_read_bw $a + $b = ${P[sb,r]} MB/s"

step "dm-multipath over path 1 alone"
start_udev
mpath_conf UTGT SRPDISK0
one_path() { [ "$(multipathd show maps raw format "%n" | wc -l)" = 1 ] &&
	[ "$(path_state "$d1")" = "active ready" ]; }
wait_until 60 "a map over $d1" one_path
MAP=$(multipathd show maps raw format "%n")
MP=/dev/mapper/$MAP
declare -A R
for k in $KINDS; do
	v=$(fio_job "k1-$k" "$MP" "$k")
	R[k1,$k]=$v
	say "ib_srp 1 path, ${WHAT[$k]}: $v (MB/s IOPS)"
done

step "path 2 logged in over link 2: one round-robin map of both"
sd2=$(srp_login 2 2)
d2=${sd2#/dev/}
mpath_one_map "$d1" "$d2"
balance verify "$d1" "$d2" --bs=64k --size=16M
for k in $KINDS; do
	a1=$(blk_ios "$d1") a2=$(blk_ios "$d2")
	v=$(fio_job "k2-$k" "$MP" "$k")
	b1=$(($(blk_ios "$d1") - a1)) b2=$(($(blk_ios "$d2") - a2))
	R[k2,$k]=$v
	R[k2,$k,sh]=$(awk -v a="$b1" -v b="$b2" 'BEGIN { t = a + b; if (t) printf "%.0f/%.0f", 100 * a / t, 100 * b / t }')
	say "ib_srp 2 paths, ${WHAT[$k]}: $v (MB/s IOPS), requests $d1 $b1 / $d2 $b2"
	[ $((b1 * 10)) -ge $((3 * (b1 + b2))) ] && [ $((b2 * 10)) -ge $((3 * (b1 + b2))) ] ||
		fail "2 paths, ${WHAT[$k]}: requests not spread: $d1 $b1, $d2 $b2"
done

step "utgt-bench's srp engine: --paths over both links, --rr-iops=1 --sweep-paths=1,2"
path_of() { # L EXT: the engine's target string for link L
	local line
	line=$(grep -v '^#' <<<"$LOGIN" | grep "dest=$(peer_ip "$1" target):$SRP_PORT\$" | head -1)
	echo "srp:${line//,/;};initiator_ext=$2"
}
BP1=$(path_of 1 21) BP2=$(path_of 2 22)
for k in $KINDS; do
	case $k in
	sr) job=(--rw=read --bs=1m --iodepth=8) ;;
	sw) job=(--rw=write --bs=1m --iodepth=8) ;;
	rr) job=(--rw=randread --bs=4k --iodepth=32) ;;
	esac
	"$BENCH" --name="b-$k" --paths="$BP1" --paths="$BP2" --policy=rr --rr-iops=1 \
		--sweep-paths=1,2 --sweep-plot=/tmp/sweep-$k.png "${job[@]}" --size=256M \
		--time_based --runtime="$RUNTIME" --ramp_time=2 >"/tmp/bench-$k.txt" 2>&1 ||
		{ cat "/tmp/bench-$k.txt"; fail "utgt-bench ${WHAT[$k]} failed"; }
	grep '^sweep:' "/tmp/bench-$k.txt"
	for n in 1 2; do
		# "sweep: N path(s): X MiB/s, Y IOPS [(path shares: 0=A% 1=B%)]"
		v=$(awk -v n="$n" '$1 == "sweep:" && $2 == n {
			printf "%.1f %.0f", $4 * 1.048576, $6 }' "/tmp/bench-$k.txt")
		[ -n "$v" ] || { cat "/tmp/bench-$k.txt"; fail "utgt-bench printed no $n-path row"; }
		R[b$n,$k]=$v
	done
	sh=$(sed -n 's/^sweep: 2 paths:.*(path shares: 0=\([0-9.]*\)% 1=\([0-9.]*\)%).*/\1 \2/p' \
		"/tmp/bench-$k.txt")
	read -r s1 s2 <<<"$sh"
	awk -v a="${s1:-0}" -v b="${s2:-0}" 'BEGIN { exit !(a >= 30 && b >= 30) }' ||
		fail "utgt-bench 2 paths, ${WHAT[$k]}: commands not spread (shares '$sh')"
	R[b2,$k,sh]=$(awk -v a="$s1" -v b="$s2" 'BEGIN { printf "%.0f/%.0f", a, b }')
done

step "teardown"
multipath -F >/dev/null 2>&1 || true
for p in /sys/class/srp_remote_ports/port-*; do [ -e "$p" ] && echo 1 >"$p/delete"; done
remote tgt_stop || fail "utgtd did not stop cleanly"

step "table"
# speedup WHO KIND: 2 paths over 1 (of IOPS for 4 KiB random reads, of MB/s otherwise).
speedup() {
	local m1 i1 m2 i2
	read -r m1 i1 <<<"${R[${1}1,$2]}"
	read -r m2 i2 <<<"${R[${1}2,$2]}"
	if [ "$2" = rr ]; then ratio "$i2" "$i1"; else ratio "$m2" "$m1"; fi
}
# cell MB/s IOPS KIND: "MB/s (IOPS)", a 1 MiB command's IOPS with one decimal.
cell() {
	awk -v m="$1" -v i="$2" -v k="$3" 'BEGIN {
		if (k != "rr") i = sprintf("%.1f", m / 1.048576)
		printf "%s MB/s (%s)", m, i }'
}
{
	echo
	echo "SRP over two soft-RoCE links between two guests (TCG, one vCPU each), each link shaped"
	echo "to ${RATE} mbit/s by tbf on both ends.  MB/s = 10^6 bytes/s, IOPS in brackets; speedup"
	echo "= 2 paths / 1 path (of IOPS for 4 KiB random read); shares = commands per path at 2"
	echo "paths (%).  Ceiling = perftest on the shaped link(s), one link / both at once:"
	echo "ib_write_bw for reads (target -> initiator, like SRP's RDMA WRITE), ib_read_bw for"
	echo "writes (like SRP's RDMA READ)."
	echo
	echo "| initiator | workload | 1 path | 2 paths | speedup | shares | ceiling 1 / 2 links |"
	echo "|---|---|---:|---:|---:|---:|---:|"
	for who in k b; do
		name=$([ $who = k ] && echo "Linux ib_srp + dm-multipath" || echo "utgt-bench srp engine")
		for k in $KINDS; do
			c="-"
			if [ $k != rr ]; then
				t=$([ $k = sr ] && echo w || echo r)
				c="$(awk -v a="${P[s1,$t]}" -v b="${P[s2,$t]}" 'BEGIN { printf "%.1f", (a + b) / 2 }') / ${P[sb,$t]} MB/s"
			fi
			# shellcheck disable=SC2086 # "MB/s IOPS" split in two
			printf '| %s | %s | %s | %s | x%s | %s | %s |\n' "$name" "${WHAT[$k]}" \
				"$(cell ${R[${who}1,$k]} $k)" "$(cell ${R[${who}2,$k]} $k)" \
				"$(speedup $who $k)" "${R[${who}2,$k,sh]}" "$c"
		done
	done
	echo
	echo "Unshaped: ${UNSHAPED}."
} | tee -a "$OUT"

for who in k b; do
	for k in sr sw; do
		sp=$(speedup $who $k)
		awk -v s="$sp" -v m="$MIN_SPEEDUP" 'BEGIN { exit !(s + 0 >= m) }' ||
			fail "$([ $who = k ] && echo ib_srp || echo utgt-bench) ${WHAT[$k]}: 2 paths x$sp, below x$MIN_SPEEDUP"
	done
done
ok "1 MiB reads and writes over 2 paths reach x$MIN_SPEEDUP or more for both initiators"
say "PASS rdma_scaling"
