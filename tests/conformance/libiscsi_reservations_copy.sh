#!/usr/bin/env bash
# libiscsi's iscsi-test-cu against utgtd for reservations and EXTENDED COPY: RESERVE(6),
# PERSISTENT RESERVE IN/OUT (two sessions, every type), EXTENDED COPY and RECEIVE COPY RESULTS,
# SANITIZE under reservations.  Fails if any test of these suites fails or is not run.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
UTGTD=$BUILD/utgtd
PORT=$((20000 + $$ % 20000))
IQN=iqn.2026-12.org.utgt:conformance-pr
DIR=$(mktemp -d /tmp/utgt-conf-pr.XXXXXX)
PID=

cleanup() {
	[ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
	rm -rf "$DIR"
}
trap cleanup EXIT

command -v iscsi-test-cu >/dev/null || { echo "iscsi-test-cu missing (libiscsi-bin)"; exit 1; }
[ -x "$UTGTD" ] || { echo "$UTGTD not built"; exit 1; }

cat >"$DIR/utgt.conf" <<EOF
HANDLER ramdisk {
	DEVICE prram {
		size_mb 64
		blocksize 512
	}
}
TARGET_DRIVER iscsi {
	listen 127.0.0.1:$PORT
	TARGET $IQN {
		enabled 1
		LUN 0 prram
	}
}
EOF

"$UTGTD" -f -c "$DIR/utgt.conf" >"$DIR/utgtd.log" 2>&1 &
PID=$!
for _ in $(seq 100); do # up to 10 s for the portal
	(exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
	kill -0 "$PID" 2>/dev/null || { echo "utgtd died:"; cat "$DIR/utgtd.log"; exit 1; }
	sleep 0.1
done

URL=iscsi://127.0.0.1:$PORT/$IQN/0
rc=0
for suite in Reserve6 PrinReadKeys PrinServiceactionRange PrinReportCapabilities ProutRegister \
	ProutReserve ProutClear ProutPreempt ExtendedCopy ReceiveCopyResults \
	Sanitize.Reservations Sanitize.OverwriteReserved; do
	out=$(timeout 300 iscsi-test-cu --dataloss --allow-sanitize --test="SCSI.$suite" "$URL" 2>&1)
	# "tests  <total> <ran> <passed> <failed> <inactive>"
	line=$(printf '%s\n' "$out" | awk '$1 == "tests" && NF >= 6 {print $2, $3, $4, $5}')
	read -r total ran passed failed <<<"${line:-0 0 0 1}"
	if [ "$total" -gt 0 ] && [ "$ran" = "$total" ] && [ "$passed" = "$total" ] && [ "$failed" = 0 ]; then
		echo "ok   SCSI.$suite ($passed/$total)"
	else
		echo "FAIL SCSI.$suite (total $total ran $ran passed $passed failed $failed)"
		printf '%s\n' "$out" | grep -E "FAIL|Assertion|failed" | head -20
		rc=1
	fi
done
exit $rc
