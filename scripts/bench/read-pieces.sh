#!/usr/bin/env bash
# Long READs in pieces against a peer build side by side (docs/security.md): sequential READ
# throughput at 1, 4 and 16 MiB with utgt-bench over loopback (and utgtd's CPU time per GiB
# read, steadier on a shared machine), and utgtd's peak RSS under a
# flood of READs a client never reads back, for two utgtd binaries served the same way, runs
# alternating, medians of ROUNDS.
#
#   scripts/bench/read-pieces.sh PEER_UTGTD [ROUNDS] [SECONDS]
#
# PEER_UTGTD: another build's utgtd (e.g. a worktree of main); build/utgtd is "this".  Each
# run starts its own utgtd with a 256 MiB ramdisk LU (budgets as the flood row says) on a free
# loopback port and its own state dir.  The flood: one session, 32 READ(16) of 32 MiB inside
# the CmdSN window, never read, until the session holds what it will (5 s), then VmHWM.
set -u
cd "$(dirname "$0")/../.."
PEER=${1:?usage: read-pieces.sh PEER_UTGTD [ROUNDS] [SECONDS]}
ROUNDS=${2:-3}
SECS=${3:-5}
THIS=build/utgtd
BENCH=build/utgt-bench
IQN=iqn.2026-12.org.utgt:pieces
W=$(mktemp -d /tmp/utgt-pieces.XXXXXX)
UPID=
cleanup() {
	[ -n "$UPID" ] && kill "$UPID" 2>/dev/null && wait "$UPID" 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT
. tests/integration/lib/ports.sh

start() { # BINARY MEM_LIMIT SESSION_LIMIT
	pick_port PORT
	rm -rf "$W/state"
	cat >"$W/u.conf" <<EOF
HANDLER ramdisk {
	DEVICE rd0 {
		size_mb 256
	}
}
TARGET_DRIVER iscsi {
	listen 127.0.0.1:$PORT
	mem_limit $2
	TARGET $IQN {
		enabled 1
		session_mem_limit $3
		NopInInterval 0
		LUN 0 rd0
	}
}
EOF
	"$1" -f -c "$W/u.conf" --admin-socket none --state-dir "$W/state" >"$W/u.log" 2>&1 &
	UPID=$!
	for _ in $(seq 300); do
		port_listening "$PORT" && return 0
		sleep 0.1
	done
	echo "utgtd did not start: $(tail -3 "$W/u.log")" >&2
	exit 1
}

stop() {
	kill "$UPID" 2>/dev/null
	wait "$UPID" 2>/dev/null
	UPID=
}

cpu_ticks() { awk '{print $14 + $15}' "/proc/$UPID/stat"; }

mibs() { # BS -> "MiB/s CPU-ms-per-GiB" of a sequential read at depth 4 (utgtd's CPU time per
	# GiB moves less with the neighbours' load than the throughput does)
	local c0 c1
	c0=$(cpu_ticks)
	timeout $((SECS + 30)) "$BENCH" --name=r --filename="iscsi://127.0.0.1:$PORT/$IQN/0" \
		--rw=read --bs="$1" --iodepth=4 --size=256M --runtime="$SECS" --time_based \
		--output-format=json --progress=never 2>/dev/null >"$W/b.json"
	c1=$(cpu_ticks)
	python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["jobs"][0]["read"]
gib = r["io_bytes"] / (1 << 30)
print("%.0f %.0f" % (r["bw_bytes"] / 1048576, int(sys.argv[2]) * 1000 / int(sys.argv[3]) / gib))
' "$W/b.json" $((c1 - c0)) "$(getconf CLK_TCK)" 2>/dev/null || echo "0 0"
}

flood_hwm() { # -> peak RSS in MiB after 32 READs of 32 MiB never read
	python3 - "$PORT" "$IQN" "$UPID" <<'EOF'
import os, struct, sys, time
sys.path.insert(0, "tests/integration")
import iscsi_min as im
port, iqn, pid = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
c = im.Conn("127.0.0.1", port)
assert c.login("iqn.2026-12.org.utgt:pieces-flood", iqn, mrdsl=1 << 20) == 0
c.clear_ua()
raw = b""
for i in range(32):
    cdb = struct.pack(">BBQIBB", 0x88, 0, 0, 65536, 0, 0)
    raw += c.build(c.cmd_bhs(cdb, 32 << 20, read=True, itt=0x100 + i, cmd_sn=c.cmd_sn + i))
c.send_raw(raw)
time.sleep(5)  # a measurement window, not a test condition
for line in open("/proc/%d/status" % pid):
    if line.startswith("VmHWM:"):
        print(int(line.split()[1]) // 1024)
c.close()
EOF
}

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }

declare -A R
for r in $(seq "$ROUNDS"); do
	order="this peer"
	[ $((r % 2)) = 0 ] && order="peer this" # neither always first
	for who in $order; do
		bin=$THIS
		[ "$who" = peer ] && bin=$PEER
		start "$bin" 2G 256M
		for bs in 1M 4M 16M; do
			read -r m c <<<"$(mibs "$bs")"
			R[$who.$bs]+="$m "
			R[$who.cpu$bs]+="$c "
		done
		stop
		start "$bin" 2G 2G
		R[$who.flood]+="$(flood_hwm) "
		stop
	done
	echo "round $r done" >&2
done

row() { # LABEL KEY UNIT
	local t p
	t=$(tr ' ' '\n' <<<"${R[this.$2]}" | grep . | median)
	p=$(tr ' ' '\n' <<<"${R[peer.$2]}" | grep . | median)
	printf '| %s | %s %s | %s %s | %s |\n' "$1" "$t" "$3" "$p" "$3" \
		"$(awk -v a="$t" -v b="$p" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')"
}
echo "| measure (median of $ROUNDS, ${SECS} s runs) | this ($THIS) | peer ($PEER) | this / peer |"
echo "|---|---|---|---|"
row "sequential READ 1 MiB, depth 4" 1M MiB/s
row "sequential READ 4 MiB, depth 4" 4M MiB/s
row "sequential READ 16 MiB, depth 4" 16M MiB/s
row "utgtd CPU per GiB read, 1 MiB" cpu1M ms
row "utgtd CPU per GiB read, 4 MiB" cpu4M ms
row "utgtd CPU per GiB read, 16 MiB" cpu16M ms
row "peak RSS, 32 READs of 32 MiB not read (budgets 2G)" flood MiB
for k in this.1M peer.1M this.4M peer.4M this.16M peer.16M this.cpu1M peer.cpu1M this.cpu4M \
	peer.cpu4M this.cpu16M peer.cpu16M this.flood peer.flood; do
	echo "  $k: ${R[$k]}"
done
