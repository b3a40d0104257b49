#!/usr/bin/env bash
# Output plumbing: JSON is one valid document, the per-second bandwidth log has one line per
# second in fio's format, no progress line when stdout is not a terminal (and one when asked
# for), --output writes the report to a file.
. "$(dirname "$0")/lib/bench_env.sh"
pick_port p
start_target 1 "$p"
echo "bench_output: $UB_TARGET on 127.0.0.1:$p"

"$BENCH" --name=j --filename="${URL[0]}" --rw=randrw --bs=4k --iodepth=4 --time_based \
	--runtime=2 --write_bw_log="$TMPD/bw" --output-format=json >"$TMPD/j.json" 2>&1
check "json parses" jq -e '.jobs[0].jobname == "j"' "$TMPD/j.json" >/dev/null
check "json has latency percentiles" jq -e '.jobs[0].read.clat_ns.percentile["99.000000"] > 0' \
	"$TMPD/j.json" >/dev/null
lines=$(wc -l <"$TMPD/bw_bw.1.log")
check "bw log: 2 seconds x 2 directions = $lines lines" test "$lines" = 4
check "bw log: fio format" grep -qE '^2000, [0-9]+, 1, 4096, 0$' "$TMPD/bw_bw.1.log"

"$BENCH" --name=t --filename="${URL[0]}" --rw=read --time_based --runtime=1200ms \
	>"$TMPD/plain.out" 2>&1
check "no progress line when not a terminal" sh -c "! grep -q 'Jobs:' '$TMPD/plain.out'"
# The progress line comes once a second from the runner's own loop, which must wake while the
# job runs: 3 s of run leave it 2 s past the first second (1.5 s left 0.5 s on a loaded machine).
"$BENCH" --name=t --filename="${URL[0]}" --rw=read --time_based --runtime=3s \
	--progress=always >"$TMPD/prog.out" 2>&1
if grep -qE 'Jobs: 1 \(f=1\): \[R\]\[[0-9.]+%\]\[r=[0-9.]+[KMG]?i?B/s,w=0B/s\]\[r=[0-9.]+k?,w=0 IOPS\]\[eta 00m:0[0-9]s\]' \
	"$TMPD/prog.out"; then
	ok "progress line on request"
else
	bad "progress line on request; the output was:"
	tr '\r' '\n' <"$TMPD/prog.out" | cat -v | head -20
fi
"$BENCH" --name=t --filename="${URL[0]}" --rw=read --size=1m --output="$TMPD/rep.txt" \
	>"$TMPD/stdout.txt" 2>&1
check "--output writes the report there" grep -q "Run status group 0" "$TMPD/rep.txt"
check "  and not to stdout" test ! -s "$TMPD/stdout.txt"
finish
