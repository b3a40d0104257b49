#!/usr/bin/env bash
# `make demo`: serve one RAM-backed LUN from build/utgtd on a free loopback port (two portals),
# benchmark it with utgt-bench's CrystalDiskMark preset over both paths, print the table, and
# stop the daemon whatever happens.  DEMO_RUNTIME (default 1s per test) and DEMO_SIZE (64m)
# tune the run.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
UTGTD=$BUILD/utgtd
BENCH=$BUILD/utgt-bench
RUNTIME=${DEMO_RUNTIME:-1s}
SIZE=${DEMO_SIZE:-64m}
IQN=iqn.2026-12.org.utgt:demo
tmp=$(mktemp -d /tmp/utgt-demo.XXXXXX)
pid=""

# running, and not a zombie waiting to be reaped
alive() {
	local s
	s=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
	[[ $s != Z* ]]
}

cleanup() {
	if [ -n "$pid" ] && alive "$pid"; then
		kill -TERM "$pid"
		for _ in $(seq 50); do alive "$pid" || break; sleep 0.1; done
		kill -KILL "$pid" 2>/dev/null
	fi
	[ -n "$pid" ] && wait "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

for f in "$UTGTD" "$BENCH"; do
	[ -x "$f" ] || { echo "demo: $f not built (run make)"; exit 1; }
done
port=$((30000 + $$ % 20000))
while listening "$port" || listening $((port + 1)); do port=$((port + 2)); done

cat >"$tmp/demo.conf" <<CONF
HANDLER ramdisk {
	DEVICE ram0 {
		size_mb 256
		blocksize 512
	}
}

TARGET_DRIVER iscsi {
	listen 127.0.0.1:$port
	listen 127.0.0.1:$((port + 1))

	TARGET $IQN {
		enabled 1
		LUN 0 ram0
	}
}
CONF

echo "demo: utgtd serving a 256 MiB RAM LUN on 127.0.0.1:$port and :$((port + 1))"
"$UTGTD" -f -c "$tmp/demo.conf" --admin-socket "$tmp/utgtd.sock" --state-dir "$tmp/state" >"$tmp/utgtd.log" 2>&1 &
pid=$!
for _ in $(seq 100); do
	listening "$port" && listening $((port + 1)) && break
	alive "$pid" || break
	sleep 0.1
done
if ! listening "$port"; then
	echo "demo: utgtd is not serving iSCSI yet; its log:"
	sed 's/^/  /' "$tmp/utgtd.log"
	exit 1
fi

paths="iscsi://127.0.0.1:$port/$IQN/0,iscsi://127.0.0.1:$((port + 1))/$IQN/0"
echo "demo: utgt-bench --preset=cdm over 2 paths (round robin, iops=1), $RUNTIME per test"
echo
"$BENCH" --preset=cdm --paths="$paths" --policy=rr --rr-iops=1 --runtime="$RUNTIME" \
	--size="$SIZE"
rc=$?
[ $rc -eq 0 ] || { echo "demo: utgt-bench failed (exit $rc); utgtd log:"; sed 's/^/  /' "$tmp/utgtd.log"; }
exit $rc
