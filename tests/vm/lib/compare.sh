# Throughput helpers shared by the comparison guest tests (tests/vm/srp_compare.sh,
# tests/vm/iser_compare.sh): the same fio jobs on a block device for every target, perftest on
# the same soft-RoCE link as the ceiling, ratios and medians.  Source after common.sh and
# rdma.sh.  Under TCG only ratios measured in one guest mean anything.
#
# The caller sets RUNTIME (seconds per fio job) and reads the results from R[LABEL,sr] (1 MiB
# sequential read MB/s, QD8), R[LABEL,sw] (1 MiB sequential write MB/s, QD8) and R[LABEL,rr]
# (4 KiB random read IOPS, QD16).
declare -A R

# fio_bw NAME DEV ARGS...: one time-based job on DEV; prints "MB/s IOPS".  The page cache is
# dropped first unless KEEP_CACHE=1 (backing files kept warm on purpose); RAMP seconds of
# warm-up (default 2) are not counted.
fio_bw() {
	local name=$1 dev=$2
	shift 2
	[ "${KEEP_CACHE:-0}" = 1 ] || echo 3 >/proc/sys/vm/drop_caches
	fio --name="$name" --filename="$dev" --direct=1 --ioengine=libaio --time_based \
		--runtime="$RUNTIME" --ramp_time="${RAMP:-2}" --output-format=json \
		--output="/tmp/fio-$name.json" "$@" >/dev/null || fail "fio $name failed"
	python3 - "/tmp/fio-$name.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
if j["error"]:
    sys.exit(1)
d = j["read"] if j["read"]["io_bytes"] else j["write"]
print(f"{d['bw_bytes'] / 1e6:.1f} {d['iops']:.0f}")
PY
}

# fio_lat_us NAME: the mean completion latency in µs of fio_bw's job NAME (its JSON).
fio_lat_us() {
	python3 - "/tmp/fio-$1.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
d = j["read"] if j["read"]["io_bytes"] else j["write"]
print(f"{d['clat_ns']['mean'] / 1e3:.0f}")
PY
}

# measure LABEL DEV: the three jobs on DEV, into R[LABEL,sr|sw|rr].
measure() {
	local l=$1 dev=$2 v
	v=$(fio_bw "$l-sr" "$dev" --rw=read --bs=1M --iodepth=8) || fail "$l seq read"
	R[$l,sr]=${v% *}
	v=$(fio_bw "$l-sw" "$dev" --rw=write --bs=1M --iodepth=8) || fail "$l seq write"
	R[$l,sw]=${v% *}
	v=$(fio_bw "$l-rr" "$dev" --rw=randread --bs=4k --iodepth=16) || fail "$l rand read"
	R[$l,rr]=${v#* }
	say "$l: seq read ${R[$l,sr]} MB/s, seq write ${R[$l,sw]} MB/s, 4k rand read ${R[$l,rr]} IOPS"
}

# perf TOOL SIZE ITERS: perftest server and client on rxe0 over RDMA/CM (a distinct port per
# run, kept in a file since callers run it in $(...); a timeout around both ends); prints the
# average MB/s.
perf() {
	local tool=$1 out srv rc=0 port
	port=$(perf_port)
	timeout -k 5 120 "$tool" -d rxe0 -R -p "$port" -s "$2" -n "$3" -F >"/tmp/$tool.srv" 2>&1 &
	srv=$!
	wait_until 30 "$tool server" listening "$port"
	out=$(timeout -k 5 120 "$tool" -d rxe0 -R -p "$port" -s "$2" -n "$3" -F "$GUEST_IP" 2>&1) ||
		rc=$?
	wait $srv || true
	[ $rc = 0 ] || { echo "$out"; fail "$tool exited $rc"; }
	perf_mbs "$2" <<<"$out" || { echo "$out"; fail "$tool printed no result"; }
}

# perf_port: a TCP/RDMA-CM port no earlier perftest run of this boot used (kept in a file:
# callers run in $(...)).
perf_port() {
	local p
	p=$(($(cat /tmp/perf-port 2>/dev/null || echo 18600) + 1))
	echo "$p" >/tmp/perf-port
	echo "$p"
}

# perf_mbs SIZE: the average bandwidth in MB/s of perftest's result line for SIZE-byte messages
# on stdin (its columns: #bytes #iterations BW-peak BW-average MsgRate, in MiB/s); fails when
# there is none.
perf_mbs() {
	awk -v s="$1" '$1 == s && NF >= 5 { v = $4 } END {
		if (v == "") exit 1; printf "%.1f\n", v * 1.048576 }'
}

# ratio A B: A / B to two decimals, "-" when either is missing (not a number) or B is zero.
ratio() {
	awk -v a="${1:-}" -v b="${2:-}" 'BEGIN {
		num = "^[0-9]+([.][0-9]+)?$"
		if (a ~ num && b ~ num && b + 0 > 0) printf "%.2f", a / b; else print "-" }'
}

# median VALUES...: the middle value (the mean of the two middle ones for an even count).
median() {
	printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 }
		END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2];
		      else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# spread VALUES...: "min-max" ("-" for none).
spread() {
	printf '%s\n' "$@" | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 }
		END { if (NR == 0) print "-"; else print lo "-" hi }'
}

# per_io N BYTES SIZE: N per SIZE-byte I/O of BYTES moved, one decimal ("-" without I/O).
per_io() { awk -v n="$1" -v b="$2" -v s="$3" 'BEGIN { if (b > 0) printf "%.1f", n / (b / s); else print "-" }'; }

# med ARRAY TARGET JOB: the median of the space-separated list ARRAY[TARGET,JOB] ("-" if none).
med() {
	local -n a=$1
	# shellcheck disable=SC2086
	if [ -n "${a[$2,$3]:-}" ]; then median ${a[$2,$3]}; else echo -; fi
}

# all_measured ARRAY: fail unless ARRAY holds a figure for every target in TG and job in JOBS.
all_measured() {
	local t j
	for t in "${TG[@]}"; do
		for j in "${JOBS[@]}"; do
			[ "$(med "$1" "$t" "$j")" != - ] || fail "$t $j: no measurement"
		done
	done
}
