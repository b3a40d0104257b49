# Shared setup for utgt-bench integration tests (sourced, not run).  Starts build/utgtd with
# RAM LUs on free loopback ports, gives helpers to run utgt-bench and read its JSON, and
# cleans everything up on exit.  UB_TARGET=tgtd runs the same tests against Debian's tgtd.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
UTGTD=${UTGTD:-$BUILD/utgtd}
BENCH=${BENCH:-$BUILD/utgt-bench}
UB_TARGET=${UB_TARGET:-utgtd}
TMPD=$(mktemp -d /tmp/utgt-bench-it.XXXXXX)
IQN=iqn.2026-12.org.utgt:bench
PIDS=()
KILL_NOW=()
fails=0

# alive PID: running (a child that exited but was not waited for yet is a zombie: not alive)
alive() {
	local s
	s=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
	[[ $s != Z* ]]
}

ub_cleanup() {
	local p
	for p in "${KILL_NOW[@]}"; do
		kill -KILL "$p" 2>/dev/null
	done
	for p in "${PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	for p in "${PIDS[@]}"; do
		for _ in $(seq 300); do alive "$p" || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	rm -rf "$TMPD"
}
trap ub_cleanup EXIT

ok() { echo "  ok   $*"; }
bad() { echo "  FAIL $*"; fails=$((fails + 1)); }
check() { # check DESCRIPTION CMD... : ok when CMD succeeds
	local d=$1
	shift
	if "$@"; then ok "$d"; else bad "$d"; fi
}
finish() {
	[ "$fails" -eq 0 ] && { echo "  all checks passed"; exit 0; }
	echo "  $fails check(s) failed"
	exit 1
}

. tests/integration/lib/ports.sh
# wait_for CMD...: poll CMD every 0.1 s until it succeeds, for up to 60 s.  A wait for a
# condition, not a delay: a quiet machine passes in milliseconds, and the bound only decides
# how long a real failure takes to report, so it is generous (a loaded 2-core machine can
# take seconds to start a daemon).
wait_for() {
	for _ in $(seq 600); do "$@" && return 0; sleep 0.1; done
	return 1
}

# start_target NLUS PORT... : one target $IQN with LUNs 0..NLUS-1 (32 MiB RAM each), reachable
# on every port.  Sets URL[i] for each port (LUN 0); lun_url builds others.  TARGET_EXTRA is
# one more line for the TARGET block (utgtd only), e.g. an IncomingUser.
start_target() {
	local nlus=$1
	shift
	local ports=("$@") i
	URL=()
	for i in "${!ports[@]}"; do
		URL[i]="iscsi://127.0.0.1:${ports[i]}/$IQN/0"
	done
	if [ "$UB_TARGET" = tgtd ]; then
		local cport=$((${ports[0]} % 10000 + 1000))
		tgtd -f -C "$cport" --iscsi "portal=127.0.0.1:${ports[0]}" >"$TMPD/tgtd.log" 2>&1 &
		PIDS+=($!)
		KILL_NOW+=($!) # tgtd -f ignores SIGTERM
		wait_for port_listening "${ports[0]}" || { echo "tgtd did not start"; exit 1; }
		tgtadm -C "$cport" --lld iscsi --op new --mode target --tid 1 -T "$IQN"
		for i in $(seq 0 $((nlus - 1))); do
			truncate -s 32M "$TMPD/lu$i.img"
			tgtadm -C "$cport" --lld iscsi --op new --mode logicalunit --tid 1 \
				--lun $((i + 1)) -b "$TMPD/lu$i.img"
		done
		tgtadm -C "$cport" --lld iscsi --op bind --mode target --tid 1 -I ALL
		for p in "${ports[@]:1}"; do
			tgtadm -C "$cport" --lld iscsi --op new --mode portal \
				--param "portal=127.0.0.1:$p"
		done
		for i in "${!ports[@]}"; do URL[i]="iscsi://127.0.0.1:${ports[i]}/$IQN/1"; done
		LUN_BASE=1
		return
	fi
	LUN_BASE=0
	{
		echo "HANDLER ramdisk {"
		for i in $(seq 0 $((nlus - 1))); do
			echo "	DEVICE ram$i {"
			echo "		size_mb 32"
			echo "		blocksize 512"
			echo "	}"
		done
		echo "}"
		echo "TARGET_DRIVER iscsi {"
		for p in "${ports[@]}"; do echo "	listen 127.0.0.1:$p"; done
		echo "	TARGET $IQN {"
		echo "		enabled 1"
		[ -n "${TARGET_EXTRA:-}" ] && echo "		$TARGET_EXTRA"
		for i in $(seq 0 $((nlus - 1))); do echo "		LUN $i ram$i"; done
		echo "	}"
		echo "}"
	} >"$TMPD/utgt.conf"
	start_utgtd_conf "$TMPD/utgt.conf" "${ports[@]}"
}

# start_utgtd_conf CONF PORT...: serve CONF, wait until every port listens.
start_utgtd_conf() {
	local conf=$1 p
	shift
	"$UTGTD" -f -c "$conf" --admin-socket "$TMPD/utgtd.sock" --state-dir "$TMPD/state" \
		>"$TMPD/utgtd.log" 2>&1 &
	PIDS+=($!)
	for p in "$@"; do
		wait_for port_listening "$p" || {
			echo "utgtd did not start:"
			cat "$TMPD/utgtd.log"
			exit 1
		}
	done
}

# forwarded_paths: one LU on ports p1 and p2, and a TCP forwarder on pp to p2 (pid in fwd;
# purl is LUN 0 through it), the path a test kills or silences.  The forwarder is killed
# outright at exit: a stopped one would ignore SIGTERM.
forwarded_paths() {
	pick_port p1
	pick_port p2
	pick_port pp
	start_target 1 "$p1" "$p2"
	python3 tests/integration/lib/tcp_proxy.py "$pp" 127.0.0.1 "$p2" &
	fwd=$!
	KILL_NOW+=("$fwd")
	wait_for port_listening "$pp" || { echo "forwarder did not start"; exit 1; }
	purl="iscsi://127.0.0.1:$pp/$IQN/$LUN_BASE"
}

# port_received PORT: bytes received so far on the established connections to PORT
port_received() {
	ss -Htin state established "( sport = :$1 )" |
		awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^bytes_received:/) { split($i, a, ":"); n += a[2] } }
		     END { print n + 0 }'
}
# received_more PORT BYTES: more than BYTES received on PORT (for wait_for)
received_more() { [ "$(port_received "$1")" -gt "$2" ]; }

# lun_url PORT LUN: URL of LUN (0-based) through PORT
lun_url() { echo "iscsi://127.0.0.1:$1/$IQN/$(($2 + LUN_BASE))"; }

# jq over a JSON report
jget() { jq -r "$2" "$1"; }
