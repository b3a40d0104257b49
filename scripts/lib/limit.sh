# run_limited LIMIT LOG CMD...: run CMD under `timeout` (LIMIT seconds, then KILL 15 s later),
# its output to our stdout and to LOG; returns CMD's status (124 or 137: the limit ran out).
# Sourced by scripts/run-tests.sh, run-suite.sh and run-unit.sh.
#
# timeout puts CMD in a process group of its own and signals the whole group when the limit
# runs out, so the daemons a test started go with it.  That group does not get the terminal's
# Ctrl-C, nor a TERM sent to us (an outer limit): both are passed on to it here.
_limited_pid=
_limited_fifo=
_limited_forward() {
	[ -n "$_limited_pid" ] && kill -"$1" "$_limited_pid" 2>/dev/null
	[ -n "$_limited_fifo" ] && rm -f "$_limited_fifo"
	exit $((128 + $2))
}
trap '_limited_forward INT 2' INT
trap '_limited_forward TERM 15' TERM

run_limited() {
	local limit=$1 log=$2 rc teepid fifo
	shift 2
	fifo=$(mktemp -u /tmp/utgt-limit.XXXXXX)
	_limited_fifo=$fifo
	mkfifo "$fifo"
	tee "$log" <"$fifo" &
	teepid=$!
	timeout -k 15 "$limit" "$@" >"$fifo" 2>&1 &
	_limited_pid=$!
	wait "$_limited_pid"
	rc=$?
	_limited_pid=
	# tee ends when the last writer is gone; a stray process still holding the pipe gets 30 s
	for _ in $(seq 300); do kill -0 "$teepid" 2>/dev/null || break; sleep 0.1; done
	kill "$teepid" 2>/dev/null
	wait "$teepid" 2>/dev/null
	rm -f "$fifo"
	_limited_fifo=
	return $rc
}
