#!/usr/bin/env bash
# utgt-bench against utgtd on loopback, every rw mode: each moves exactly the data it should
# (bytes per direction from the JSON report) with no error, through the iSCSI engine.
. "$(dirname "$0")/lib/bench_env.sh"
pick_port p
start_target 1 "$p"
echo "bench_rw_modes: $UB_TARGET on 127.0.0.1:$p"

for rw in read write randread randwrite rw randrw; do
	out=$TMPD/$rw.json
	"$BENCH" --name="$rw" --filename="${URL[0]}" --rw="$rw" --bs=16k --iodepth=8 --size=4m \
		--output-format=json >"$out" 2>"$TMPD/$rw.err"
	rc=$?
	r=$(jget "$out" '.jobs[0].read.io_bytes')
	w=$(jget "$out" '.jobs[0].write.io_bytes')
	case $rw in
	read | randread) want="$r == 4194304 && $w == 0" ;;
	write | randwrite) want="$r == 0 && $w == 4194304" ;;
	*) want="$r + $w == 4194304 && $r > 0 && $w > 0" ;;
	esac
	if [ $rc -eq 0 ] && [ "$(jget "$out" '.jobs[0].error')" = 0 ] && (($want)) &&
		[ "$(jget "$out" '.jobs[0].ioengine')" = iscsi ]; then
		ok "$rw: rc 0, read $r + write $w bytes"
	else
		bad "$rw: rc $rc, read $r write $w ($(cat "$TMPD/$rw.err"))"
	fi
done

# time based with ramp: the measured runtime is the runtime (1000 ms), not runtime + ramp
# (4000 ms).  The ramp is 3 s so that the I/O still finishing after the end, slow on a loaded
# machine, has 2 s before the check could mistake it for the ramp (it had 0.5 s).
"$BENCH" --name=t --filename="${URL[0]}" --rw=randread --bs=4k --iodepth=4 --time_based \
	--runtime=1 --ramp_time=3s --output-format=json >"$TMPD/t.json" 2>&1
rt=$(jget "$TMPD/t.json" '.jobs[0].job_runtime')
check "time_based runtime=1 ramp_time=3s measures ${rt}ms (1000..3000)" \
	test "$rt" -ge 1000 -a "$rt" -lt 3000
finish
