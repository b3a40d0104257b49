# Shared by the iscsi_*.sh integration tests (sourced; not executable itself).
# Starts utgtd on a generated config with free ports, stops it on exit, and counts checks.
UTGTD=${UTGTD:-build/utgtd}
ILIB_PIDS=()
ILIB_DIRS=()
FAILS=0

ilib_cleanup() {
	for p in "${ILIB_PIDS[@]}"; do
		if kill -0 "$p" 2>/dev/null; then
			kill "$p"
			for _ in $(seq 300); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
			kill -9 "$p" 2>/dev/null
		fi
	done
	for d in "${ILIB_DIRS[@]}"; do [ "${KEEP:-0}" = 1 ] || rm -rf "$d"; done
}
# EXIT only: bash runs it on INT and TERM too and then stops; trapping those as well would let
# the test carry on after its daemons were stopped
trap ilib_cleanup EXIT

ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; FAILS=$((FAILS + 1)); }
# expect "description" command...: passes when the command succeeds
expect() { local d=$1; shift; if "$@" >/dev/null 2>&1; then ok "$d"; else bad "$d"; fi; }
expect_fail() { local d=$1; shift; if "$@" >/dev/null 2>&1; then bad "$d"; else ok "$d"; fi; }

. tests/integration/lib/ports.sh

# start_utgtd CONFIG_TEXT -> sets UT_DIR, UT_PID, UT_LOG, UT_SOCK, UT_STATE; @PORT@ in the text
# is replaced.  Each daemon has its own state dir (utgtd locks it: one daemon per state dir).
start_utgtd() {
	UT_DIR=$(mktemp -d /tmp/utgt-it.XXXXXX)
	ILIB_DIRS+=("$UT_DIR")
	pick_port UT_PORT
	printf '%s\n' "$1" | sed "s|@PORT@|$UT_PORT|g; s|@DIR@|$UT_DIR|g" >"$UT_DIR/utgtd.conf"
	UT_LOG=$UT_DIR/utgtd.log
	UT_SOCK=$UT_DIR/utgtd.sock # own admin socket: tests run side by side
	UT_STATE=$UT_DIR/state
	"$UTGTD" -f -c "$UT_DIR/utgtd.conf" --admin-socket "$UT_SOCK" --state-dir "$UT_STATE" \
		>"$UT_LOG" 2>&1 &
	UT_PID=$!
	ILIB_PIDS+=("$UT_PID")
	# "serving" is logged last, after the portals listen and the admin socket is up; a wait
	# for the condition, bounded at 60 s (a loaded machine is slow to start a daemon)
	for _ in $(seq 600); do
		grep -q "listening on 127.0.0.1:$UT_PORT" "$UT_LOG" 2>/dev/null &&
			grep -q "utgtd .* serving " "$UT_LOG" 2>/dev/null && return 0
		kill -0 "$UT_PID" 2>/dev/null || break
		sleep 0.1
	done
	echo "utgtd did not start:"; cat "$UT_LOG"; exit 1
}

# start_utgtd_ramdisk IQN SIZE_MB [DRIVER_LINES [TARGET_LINES]]: start_utgtd serving one ramdisk
# LU 0 (rd0) through target IQN on 127.0.0.1; the optional lines (newline-separated attribute
# lines) go into TARGET_DRIVER iscsi and into the TARGET.
start_utgtd_ramdisk() {
	local iqn=$1 mb=$2 drv=${3:-} tgt=${4:-}
	start_utgtd "
HANDLER ramdisk {
	DEVICE rd0 {
		size_mb $mb
	}
}
TARGET_DRIVER iscsi {
	listen 127.0.0.1:@PORT@
${drv:+$drv
}	TARGET $iqn {
		enabled 1
${tgt:+$tgt
}		LUN 0 rd0
	}
}"
}

# stop_utgtd: SIGTERM; true once utgtd has exited, false if it still runs after 30 s
stop_utgtd() {
	kill "$UT_PID" 2>/dev/null
	for _ in $(seq 300); do kill -0 "$UT_PID" 2>/dev/null || return 0; sleep 0.1; done
	return 1
}

# ilib_finish RC: the end of a test whose raw client exited with RC.  The daemon must still run
# and must stop on SIGTERM; on any failure the tail of its log is printed.  True only when the
# client, the daemon and every check passed.
ilib_finish() {
	local rc=$1
	if kill -0 "$UT_PID" 2>/dev/null; then ok "utgtd still running"; else bad "utgtd died"; rc=1; fi
	if stop_utgtd; then ok "utgtd stopped on SIGTERM"; else bad "utgtd did not stop"; rc=1; fi
	if [ "$rc" -ne 0 ] || [ $FAILS -ne 0 ]; then
		echo "---- utgtd log (last 30 lines)"
		tail -30 "$UT_LOG"
		return 1
	fi
}
