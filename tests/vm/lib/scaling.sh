# Seed 001's multipath scaling experiment over two shaped soft-RoCE links, shared by
# tests/vm/rdma_scaling.sh (SRP) and tests/vm/rdma_scaling_iser.sh (iSER).  Source after
# common.sh, the protocol's lib (srp.sh or iser.sh), mpath.sh, compare.sh and peer.sh.
#
# The script defines the protocol's side and calls scaling_run:
#   path_login L        (initiator) a new kernel login over link L; prints its /dev/sdX
#   path_logout L DEV   (initiator) log that path out; return once DEV is gone
#   bench_path L        utgt-bench's path string for link L
#   teardown            (initiator) maps flushed, logged out, the target stopped and checked
# and the variables PROTO (name in the table), MP_VENDOR/MP_PRODUCT (the LU's inquiry data, for
# multipath.conf), KERNEL_NAME and BENCH_NAME (the two initiators' rows), BENCH_SEQ_BS (utgt-bench's
# sequential block size: 1m, or 256k where its engine can move no more), BENCH_EXTRA (more
# utgt-bench options).
#
# Shaping: unshaped, perftest on each link, fio 1 MiB read and write over
# path 1 and over both paths at once (one job, QD8, alternating between the two disks, as the
# map does).  The lower both-paths fio figure is the ceiling of what the two emulated CPUs move
# over two links; each link is then shaped to a third of it shared by the two links
# (rate = ceiling x 8 / 3 / 2 mbit/s, at least 8), so the two shaped links together need a
# third of what the CPUs can carry and the links, not the CPUs, are the bottleneck.
# rate=MBIT overrides.
#
# Arguments: quick (short runs), rate=MBIT, runtime=SECONDS, min_speedup=X, build=DIR.

RATE= MIN_SPEEDUP=1.3
RUNTIME=$([ "$QUICK" = 1 ] && echo 8 || echo 20)
for _a in "$@"; do
	case $_a in
	rate=*) RATE=${_a#rate=} ;;
	runtime=*) RUNTIME=${_a#runtime=} ;;
	min_speedup=*) MIN_SPEEDUP=${_a#min_speedup=} ;;
	esac
done
BENCH=/src/$BUILD_DIR/utgt-bench
OUT=/out/$(basename "$0" .sh).txt
declare -A P C

log() { printf '%s\n' "$*" | tee -a "$OUT"; }

# utgtd_exit_check LOG: (target, after utgtd_stop) it exited 0 with no sanitizer report in LOG.
utgtd_exit_check() {
	echo "utgtd exit status $UTGTD_RC"
	[ "$UTGTD_RC" = 0 ] || fail "utgtd exited $UTGTD_RC"
	! grep -qE "AddressSanitizer|runtime error" "$1" || fail "sanitizer report in utgtd's log"
}

# perf_link TOOL L ITERS: perftest over link L, server here, client in the target guest:
# ib_write_bw moves data target -> initiator (what a read does: RDMA WRITE), ib_read_bw
# initiator -> target (a write: the target's RDMA READ).  Prints MB/s.
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
	# perftest only stands beside the results: a run without a result (seen under heavy load:
	# ib_read_bw's client rejected by RDMA/CM, then a segfault) is "-", not a failure.
	for port in $ports; do
		mbs=$(sed -n "/^== $port\$/,/^== /p" /tmp/perf.out | perf_mbs 65536) || {
			say "warning: $tool over link $2 printed no result (/out/perftest.log)" >&2
			mbs=-
		}
		v+=("$mbs")
	done
	echo "${v[*]}"
}

# sum A B: A + B to one decimal ("-" when either is "-").
sum() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-") print "-"; else printf "%.1f", a + b }'; }

# perf_pair KEY ITERS LABEL [both]: perftest both ways on each link alone (and with "both", on
# both links at once), into P[KEYL,w|r] (and P[KEYb,w|r], the sum), each line logged.
perf_pair() {
	local k=$1 n=$2 l a b t v
	for l in $LINKS; do
		P[$k$l,w]=$(perf_link ib_write_bw "$l" "$n")
		P[$k$l,r]=$(perf_link ib_read_bw "$l" "$n")
		log "$3 link $l: ib_write_bw ${P[$k$l,w]} MB/s, ib_read_bw ${P[$k$l,r]} MB/s"
	done
	[ "${4:-}" = both ] || return 0
	for t in w r; do
		# (a failure in $(...) inside <<< would not stop the script; an assignment's does)
		v=$(perf_link "ib_$([ $t = w ] && echo write || echo read)_bw" both "$n")
		read -r a b <<<"$v"
		P[${k}b,$t]=$(sum "$a" "$b")
		log "$3 links both at once: ib_$([ $t = w ] && echo write || echo read)_bw $a + $b = ${P[${k}b,$t]} MB/s"
	done
}

# fio_job NAME DEV KIND: one of the three workloads on DEV (DEV1:DEV2: one job alternating
# between both); prints "MB/s IOPS".
fio_job() {
	case $3 in
	sr) fio_bw "$1" "$2" --rw=read --bs=1M --iodepth=8 ;;
	sw) fio_bw "$1" "$2" --rw=write --bs=1M --iodepth=8 ;;
	rr) fio_bw "$1" "$2" --rw=randread --bs=4k --iodepth=32 ;;
	esac || fail "fio $1 on $2 failed"
}
declare -A WHAT=([sr]="1 MiB seq read QD8" [sw]="1 MiB seq write QD8" [rr]="4 KiB rand read QD32")
KINDS="sr sw rr"

# calibrate DEV1 DEV2: unshaped ceilings (perftest per link, fio over one path and over both);
# sets CEILING (MB/s, the lower both-paths fio figure), UNSHAPED (a line for the table) and
# RATE (unless given).  Not perftest on both links at once here: its two polling processes
# starve each other and rxe on a one-vCPU guest when nothing limits them (2.3 + 2.5 MB/s
# against 7.4 on one link, and ib_read_bw then printed no result within 120 s); shaped, they
# run fine.
calibrate() {
	local k v runtime=$RUNTIME
	perf_pair u 300 unshaped
	RUNTIME=$((RUNTIME < 8 ? RUNTIME : 8))
	for k in sr sw; do
		v=$(fio_job "cal1-$k" "$1" "$k")
		C[1,$k]=${v% *}
		v=$(fio_job "cal2-$k" "$1:$2" "$k")
		C[2,$k]=${v% *}
	done
	RUNTIME=$runtime
	log "unshaped fio over path 1: seq read ${C[1,sr]} MB/s, seq write ${C[1,sw]} MB/s"
	log "unshaped fio over both paths at once: seq read ${C[2,sr]} MB/s, seq write ${C[2,sw]} MB/s"
	CEILING=$(awk -v a="${C[2,sr]}" -v b="${C[2,sw]}" 'BEGIN { print (a < b ? a : b) }')
	UNSHAPED="perftest link 1 ${P[u1,w]} / ${P[u1,r]} MB/s, link 2 ${P[u2,w]} / ${P[u2,r]} MB/s (ib_write_bw / ib_read_bw); fio over path 1 seq read ${C[1,sr]} / write ${C[1,sw]} MB/s, over both paths at once ${C[2,sr]} / ${C[2,sw]} MB/s"
	log "ceiling (CPU-bound, both links loaded): ${CEILING} MB/s (the lower both-paths fio figure)"
	if [ -z "$RATE" ]; then
		# not below 8 mbit/s: a slower link carries too few 1 MiB commands in a run to count
		RATE=$(awk -v c="$CEILING" 'BEGIN { r = int(c * 8 / 3 / 2); print (r < 8 ? 8 : r) }')
		log "each link shaped to ${RATE} mbit/s ($(awk -v r="$RATE" 'BEGIN { printf "%.2f", r / 8 }') MB/s on the wire): both links together a third of the ceiling"
	else
		log "each link shaped to ${RATE} mbit/s (rate= argument; ceiling/rate on the wire x$(awk -v c="$CEILING" -v r="$RATE" 'BEGIN { printf "%.1f", c / (2 * r / 8) }'))"
	fi
}

# shape: tbf at RATE on both ends of both links, then perftest on the shaped links.
shape() {
	local l
	for l in $LINKS; do
		peer_shape "$l" "${RATE}mbit"
		remote "peer_shape $l ${RATE}mbit" || fail "shaping the target's side of link $l failed"
	done
	# ~6 s of 64 KiB messages at the rate
	perf_pair s $((RATE * 12 > 100 ? RATE * 12 : 100)) shaped both
}

# map_one DEV: multipathd started, one map over DEV alone; sets MAP and MP.
map_one() {
	start_udev
	mpath_conf "$MP_VENDOR" "$MP_PRODUCT"
	one_path() { [ "$(multipathd show maps raw format "%n" | wc -l)" = 1 ] &&
		[ "$(path_state "$1")" = "active ready" ]; }
	wait_until 60 "a map over $1" one_path "$1"
	MAP=$(multipathd show maps raw format "%n")
	MP=/dev/mapper/$MAP
}

# cpu_stat: this guest's CPU time, busy (user, nice, system, irq, softirq) and total, in ticks.
cpu_stat() { awk '$1 == "cpu" { b = $2 + $3 + $4 + $7 + $8; print b, b + $5 + $6 }' /proc/stat; }
# cpu_mark: both guests' cpu_stat ("busy total busy total": initiator, then target).
cpu_mark() { echo "$(cpu_stat) $(remote cpu_stat)"; }
# cpu_pct MARK0 MARK1: "I/T", each guest's busy % between the two marks.
cpu_pct() {
	awk -v a="$1" -v b="$2" 'BEGIN { split(a, x); split(b, y)
		printf "%.0f/%.0f", 100 * (y[1] - x[1]) / (y[2] - x[2] + 1e-9),
			100 * (y[3] - x[3]) / (y[4] - x[4] + 1e-9) }'
}

# measure_map N D1 [D2]: the three workloads on the map with N paths, into R[kN,KIND]; with two,
# the requests each path completed (R[k2,KIND,sh]), and fail unless each carried >= 30%.
# R[kN,KIND,cpu]: how busy each guest's one vCPU was during the run (initiator %, target %).
measure_map() {
	local n=$1 d1=$2 d2=${3:-} k v a1 a2 b1 b2 c0
	for k in $KINDS; do
		a1=$(blk_ios "$d1") a2=$([ -n "$d2" ] && blk_ios "$d2" || echo 0)
		c0=$(cpu_mark)
		v=$(fio_job "k$n-$k" "$MP" "$k")
		R[k$n,$k,cpu]=$(cpu_pct "$c0" "$(cpu_mark)")
		R[k$n,$k]=$v
		if [ "$n" = 1 ]; then
			say "$KERNEL_NAME 1 path, ${WHAT[$k]}: $v (MB/s IOPS), CPU busy ${R[k1,$k,cpu]} % (initiator/target)"
			continue
		fi
		b1=$(($(blk_ios "$d1") - a1)) b2=$(($(blk_ios "$d2") - a2))
		R[k2,$k,sh]=$(awk -v a="$b1" -v b="$b2" 'BEGIN { t = a + b; if (t) printf "%.0f/%.0f", 100 * a / t, 100 * b / t }')
		say "$KERNEL_NAME 2 paths, ${WHAT[$k]}: $v (MB/s IOPS), requests $d1 $b1 / $d2 $b2, CPU busy ${R[k2,$k,cpu]} % (initiator/target)"
		[ $((b1 * 10)) -ge $((3 * (b1 + b2))) ] && [ $((b2 * 10)) -ge $((3 * (b1 + b2))) ] ||
			fail "2 paths, ${WHAT[$k]}: requests not spread: $d1 $b1, $d2 $b2"
	done
}

# bench_what KIND: utgt-bench's workload label (its sequential block size may differ).
bench_what() {
	case $1 in
	sr) echo "$BENCH_SEQ_BS seq read QD8" | sed 's/^1m /1 MiB /; s/^256k /256 KiB /' ;;
	sw) echo "$BENCH_SEQ_BS seq write QD8" | sed 's/^1m /1 MiB /; s/^256k /256 KiB /' ;;
	rr) echo "${WHAT[rr]}" ;;
	esac
}

# measure_bench: the workloads through utgt-bench over both links (--policy=rr --rr-iops=1
# --sweep-paths=1,2), into R[bN,KIND] and R[b2,KIND,sh]; fail unless each path carried >= 30%.
measure_bench() {
	local k n v sh s1 s2 job
	for k in $KINDS; do
		case $k in
		sr) job=(--rw=read --bs="$BENCH_SEQ_BS" --iodepth=8) ;;
		sw) job=(--rw=write --bs="$BENCH_SEQ_BS" --iodepth=8) ;;
		rr) job=(--rw=randread --bs=4k --iodepth=32) ;;
		esac
		# shellcheck disable=SC2086 # BENCH_EXTRA: options, split on purpose
		"$BENCH" $BENCH_EXTRA --name="b-$k" --paths="$(bench_path 1)" --paths="$(bench_path 2)" \
			--policy=rr --rr-iops=1 --sweep-paths=1,2 --sweep-plot=/tmp/sweep-$k.png \
			"${job[@]}" --size=256M --time_based --runtime="$RUNTIME" --ramp_time=2 \
			>"/tmp/bench-$k.txt" 2>&1 ||
			{ cat "/tmp/bench-$k.txt"; fail "utgt-bench $(bench_what $k) failed"; }
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
			fail "utgt-bench 2 paths, $(bench_what $k): commands not spread (shares '$sh')"
		R[b2,$k,sh]=$(awk -v a="$s1" -v b="$s2" 'BEGIN { printf "%.0f/%.0f", a, b }')
	done
}

# speedup WHO KIND: 2 paths over 1 (of IOPS for 4 KiB random reads, of MB/s otherwise).
speedup() {
	local m1 i1 m2 i2
	read -r m1 i1 <<<"${R[${1}1,$2]}"
	read -r m2 i2 <<<"${R[${1}2,$2]}"
	if [ "$2" = rr ]; then ratio "$i2" "$i1"; else ratio "$m2" "$m1"; fi
}

# cell MB/s IOPS [BYTES]: "MB/s (IOPS)"; with BYTES (a sequential command's size), the IOPS
# from MB/s with one decimal (fio rounds them to whole numbers).
cell() {
	awk -v m="$1" -v i="$2" -v b="${3:-}" 'BEGIN {
		if (b != "") i = sprintf("%.1f", m * 1e6 / b)
		printf "%s MB/s (%s)", m, i }'
}

# bytes SIZE: 1m, 256k... in bytes.
bytes() { numfmt --from=iec "${1^^}"; }

# table: the results (also into OUT), then fail unless sequential reads and writes over 2 paths
# reach MIN_SPEEDUP for both initiators.
table() {
	local who name k t c what sp b
	{
		echo
		echo "$PROTO over two soft-RoCE links between two guests (TCG, one vCPU each), each link"
		echo "shaped to ${RATE} mbit/s by tbf on both ends; ceiling with both links loaded, unshaped:"
		echo "${CEILING} MB/s.  MB/s = 10^6 bytes/s, IOPS in brackets; speedup = 2 paths / 1 path"
		echo "(of IOPS for 4 KiB random read); shares = commands per path at 2 paths (%).  perftest"
		echo "= the shaped link(s), one link / both at once: ib_write_bw for reads (target ->"
		echo "initiator, like the target's RDMA WRITE), ib_read_bw for writes (its RDMA READ)."
		echo "CPU = how busy each guest's one vCPU was (initiator/target %), 1 path -> 2 paths."
		echo
		echo "| initiator | workload | 1 path | 2 paths | speedup | shares | perftest 1 / 2 links | CPU |"
		echo "|---|---|---:|---:|---:|---:|---:|---:|"
		for who in k b; do
			name=$([ $who = k ] && echo "$KERNEL_NAME" || echo "$BENCH_NAME")
			for k in $KINDS; do
				c="-"
				if [ $k != rr ]; then
					t=$([ $k = sr ] && echo w || echo r)
					c="$(awk -v a="${P[s1,$t]}" -v b="${P[s2,$t]}" 'BEGIN {
						if (a == "-" || b == "-") print "-"; else printf "%.1f", (a + b) / 2 }') / ${P[sb,$t]} MB/s"
				fi
				what=$([ $who = k ] && echo "${WHAT[$k]}" || bench_what $k)
				b=
				[ $k = rr ] || b=$(bytes "$([ $who = k ] && echo 1m || echo "$BENCH_SEQ_BS")")
				# shellcheck disable=SC2086 # "MB/s IOPS" split in two
				printf '| %s | %s | %s | %s | x%s | %s | %s | %s |\n' "$name" "$what" \
					"$(cell ${R[${who}1,$k]} $b)" "$(cell ${R[${who}2,$k]} $b)" \
					"$(speedup $who $k)" "${R[${who}2,$k,sh]}" "$c" \
					"$([ $who = k ] && echo "${R[k1,$k,cpu]} -> ${R[k2,$k,cpu]}" || echo -)"
			done
		done
		echo
		echo "Unshaped: ${UNSHAPED}."
	} | tee -a "$OUT"
	for who in k b; do
		for k in sr sw; do
			sp=$(speedup $who $k)
			awk -v s="$sp" -v m="$MIN_SPEEDUP" 'BEGIN { exit !(s + 0 >= m) }' ||
				fail "$([ $who = k ] && echo "$KERNEL_NAME" || echo "$BENCH_NAME") $(bench_what $k): 2 paths x$sp, below x$MIN_SPEEDUP"
		done
	done
	ok "sequential reads and writes over 2 paths reach x$MIN_SPEEDUP or more for both initiators"
}

# scaling_run: (initiator, after peer_start and the target's start) the whole experiment.
scaling_run() {
	local sd1 sd2 d1 d2
	: >"$OUT"
	: >/out/perftest.log
	step "path 1 and path 2 logged in, unshaped: the ceilings"
	sd1=$(path_login 1)
	sd2=$(path_login 2)
	say "path 1: $sd1, path 2: $sd2"
	calibrate "$sd1" "$sd2"

	step "shaping both ends of both links to ${RATE}mbit"
	shape

	step "path 2 logged out; dm-multipath over path 1 alone"
	path_logout 2 "$sd2"
	d1=${sd1#/dev/}
	map_one "$d1"
	measure_map 1 "$d1"

	step "path 2 logged in again: one round-robin map of both"
	sd2=$(path_login 2)
	d2=${sd2#/dev/}
	mpath_one_map "$d1" "$d2"
	balance verify "$d1" "$d2" --bs=64k --size=16M
	measure_map 2 "$d1" "$d2"

	step "$BENCH_NAME: --paths over both links, --rr-iops=1 --sweep-paths=1,2"
	measure_bench

	step "teardown"
	teardown

	step "table"
	table
}
