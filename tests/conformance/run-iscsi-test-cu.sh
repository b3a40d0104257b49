#!/usr/bin/env bash
# libiscsi's conformance suite (iscsi-test-cu) against utgtd's iSCSI target.
#
# Starts build/utgtd -f with a generated config on 127.0.0.1 (two portals on free ports) and
# seven targets of one LU each, so that every test finds a LU it applies to:
#   :thin       vdisk_fileio, thin provisioned, paced SANITIZE               -> ALL, --allow-sanitize
#   :ram        ramdisk                                                          -> ALL
#   :removable  ramdisk, removable (START STOP UNIT LOEJ, PREVENT ALLOW, no media) -> ALL
#   :thin4k     vdisk_fileio, thin provisioned, 4096-byte blocks                 -> ALL
#   :thick      vdisk_fileio, fully provisioned                                  -> ALL
#   :ro         vdisk_fileio, read_only                                          -> ReadOnly suite
#   :ramro      ramdisk, thin, exported through a read-only LUN                  -> ReadOnly suite
#   :ram through both portals (two I_T nexuses)                                   -> MultipathIO
# then merges the results: a test fails if it failed in any run, passes if it passed (not
# skipped) in at least one, and is skipped only if every run skipped it.  Any failure fails
# the script.  tests/conformance/README.md explains each skip.
#
# Environment: UTGTD (default build/utgtd), CU_TESTS (default ALL; e.g. SCSI.Read10 to narrow
# the five ALL runs), KEEP=1 keeps the work directory (logs, config).
set -u
cd "$(dirname "$0")/../.."
UTGTD=${UTGTD:-build/utgtd}
CU_TESTS=${CU_TESTS:-ALL}
IQN=iqn.2026-12.org.utgt:conformance

command -v iscsi-test-cu >/dev/null || { echo "iscsi-test-cu missing (apt install libiscsi-bin)"; exit 1; }
[ -x "$UTGTD" ] || { echo "$UTGTD not built"; exit 1; }

WORK=$(mktemp -d /tmp/utgt-conformance.XXXXXX)
PID=
cleanup() {
	if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then
		kill "$PID"
		for _ in $(seq 100); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$PID" 2>/dev/null
	fi
	if [ "${KEEP:-0}" = 1 ]; then echo "work directory kept: $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT INT TERM

# Two free TCP ports on 127.0.0.1, starting from a per-process offset.
free_port() {
	python3 - "$1" <<'EOF'
import socket, sys
start = int(sys.argv[1])
for p in range(start, 65000):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p))
    except OSError:
        continue
    finally:
        s.close()
    print(p)
    break
EOF
}
P1=$(free_port $((20000 + $$ % 20000)))
P2=$(free_port $((P1 + 1)))

truncate -s 16M "$WORK/ro.img"
# One target per LU, so the ALL runs can go in parallel: a TARGET COLD RESET (PreventAllow,
# Sanitize.Reset) only drops the sessions of its own target.  SANITIZE runs only against the
# thin LU, paced by sanitize_rate_mb (64 MiB at 10 MiB/s: 6.4 s) so that it is still running
# when Sanitize.Reset looks, 4 s after starting it; the other runs skip the Sanitize suite.
cat >"$WORK/utgtd.conf" <<EOF
HANDLER vdisk_fileio {
	DEVICE thin {
		filename $WORK/thin.img
		size_mb 64
		thin_provisioned 1
		sanitize_rate_mb 10
	}
	DEVICE ro {
		filename $WORK/ro.img
		read_only 1
		thin_provisioned 1
	}
	DEVICE thin4k {
		filename $WORK/thin4k.img
		size_mb 64
		blocksize 4096
		thin_provisioned 1
	}
	DEVICE thick {
		filename $WORK/thick.img
		size_mb 64
	}
}
HANDLER ramdisk {
	DEVICE ram {
		size_mb 64
	}
	DEVICE rem {
		size_mb 16
		removable 1
	}
	DEVICE ramro {
		size_mb 16
		thin_provisioned 1
	}
}
TARGET_DRIVER iscsi {
	listen 127.0.0.1:$P1
	listen 127.0.0.1:$P2
	TARGET $IQN:thin {
		enabled 1
		LUN 0 thin
	}
	TARGET $IQN:ram {
		enabled 1
		LUN 0 ram
	}
	TARGET $IQN:removable {
		enabled 1
		LUN 0 rem
	}
	TARGET $IQN:ro {
		enabled 1
		LUN 0 ro
	}
	TARGET $IQN:thin4k {
		enabled 1
		LUN 0 thin4k
	}
	TARGET $IQN:thick {
		enabled 1
		LUN 0 thick
	}
	TARGET $IQN:ramro {
		enabled 1
		LUN 0 ramro {
			read_only 1
		}
	}
}
EOF

"$UTGTD" -f -c "$WORK/utgtd.conf" --admin-socket "$WORK/utgtd.sock" >"$WORK/utgtd.log" 2>&1 &
PID=$!
for _ in $(seq 100); do
	grep -q "listening on 127.0.0.1:$P2" "$WORK/utgtd.log" 2>/dev/null && break
	kill -0 $PID 2>/dev/null || break
	sleep 0.1
done
if ! grep -q "listening on 127.0.0.1:$P2" "$WORK/utgtd.log"; then
	echo "utgtd did not start:"; cat "$WORK/utgtd.log"; exit 1
fi
echo "utgtd pid $PID on 127.0.0.1:$P1 and :$P2 ($WORK)"

url() { echo "iscsi://127.0.0.1:$1/$IQN:$2/0"; }

# One iscsi-test-cu run; results appended to $WORK/results as "name status".
# SANITIZE=1 in the environment of a run adds --allow-sanitize.
run_cu() {
	local tag=$1 tests=$2; shift 2
	local log="$WORK/cu-$tag.log" t0=$SECONDS san=
	[ "${SANITIZE:-0}" = 1 ] && san=--allow-sanitize
	printf '%s\n' $san "$@" >"$WORK/args.$tag" # for a retry of a single test
	timeout 900 iscsi-test-cu --dataloss $san --test="$tests" "$@" >"$log" 2>&1
	# "Suite: X" then "  Test: Y ...[output]passed|FAILED"; [SKIPPED] inside means skipped.
	awk -v tag="$tag" '
		/^Suite: /      { suite = $2 }
		/^  Test: /     { if (name != "") flush(); name = suite "." $2; skipped = 0; st = "" }
		/\[SKIPPED\]/   { skipped = 1 }
		# the verdict ends the Test line or starts a line of its own (output may follow it)
		/\.\.\.passed$|^passed/ { st = skipped ? "skipped" : "passed" }
		/\.\.\.FAILED$|^FAILED/ { st = "failed" }
		function flush() { if (st != "") print name, st, tag; name = "" }
		END { if (name != "") flush() }
	' "$log" >>"$WORK/results"
	printf '  %-10s %-28s %3ds  %s\n' "$tag" "$tests" $((SECONDS - t0)) \
		"$(grep -A2 'Run Summary' "$log" | awk '/tests/ {print "ran " $3 ", passed " $4 ", failed " $5}')"
}

: >"$WORK/results"
echo "iscsi-test-cu runs (the five ALL runs in parallel):"
SANITIZE=1 run_cu thin "$CU_TESTS" "$(url $P1 thin)" >"$WORK/sum.thin" &
J1=$!
run_cu ram "$CU_TESTS" "$(url $P1 ram)" >"$WORK/sum.ram" &
J2=$!
run_cu removable "$CU_TESTS" "$(url $P1 removable)" >"$WORK/sum.removable" &
J3=$!
run_cu thin4k "$CU_TESTS" "$(url $P2 thin4k)" >"$WORK/sum.thin4k" &
J4=$!
run_cu thick "$CU_TESTS" "$(url $P2 thick)" >"$WORK/sum.thick" &
J5=$!
wait $J1 $J2 $J3 $J4 $J5 # not a bare wait: utgtd is a child too
cat "$WORK"/sum.thin "$WORK"/sum.ram "$WORK"/sum.removable "$WORK"/sum.thin4k "$WORK"/sum.thick
run_cu readonly ALL.ReadOnly "$(url $P1 ro)"
run_cu readonly-lun ALL.ReadOnly "$(url $P1 ramro)"
run_cu multipath ALL.MultipathIO "$(url $P1 ram)" "$(url $P2 ram)"

if ! kill -0 $PID 2>/dev/null; then
	echo "FAIL: utgtd died during the runs"; tail -30 "$WORK/utgtd.log"; KEEP=1; exit 1
fi

# A failed test gets one more try alone, with the same LU and options.  Some tests race with
# the initiator itself (Sanitize.Reservations drops a connection without a logout, and the next
# test's SANITIZE can overtake the target's notice of that on another connection); a failure
# that repeats is a failure.  Retries are listed, never hidden.
: >"$WORK/retried"
awk '$2 == "failed" {print $1, $3}' "$WORK/results" | sort -u | while read -r name tag; do
	mapfile -t args <"$WORK/args.$tag"
	if timeout 300 iscsi-test-cu --dataloss --test="ALL.$name" "${args[@]}" >"$WORK/retry-$tag-$name.log" 2>&1 &&
		grep -q "passed" "$WORK/retry-$tag-$name.log" && ! grep -q "FAILED" "$WORK/retry-$tag-$name.log"; then
		echo "$name $tag" >>"$WORK/retried"
	fi
done

# Merge: failed anywhere > passed somewhere > skipped everywhere.
awk -v retried="$WORK/retried" '
	BEGIN { while ((getline l < retried) > 0) { split(l, a, " "); ok[a[1] " " a[2]] = 1 } }
	{ n = $1; seen[n] = 1
	  if ($2 == "failed" && !ok[n " " $3]) { f[n] = 1; where[n] = where[n] " " $3 }
	  else if ($2 == "failed") { p[n] = 1; r[n] = r[n] " " $3 }
	  else if ($2 == "passed") p[n] = 1 }
	END {
		for (n in seen) {
			if (f[n]) { nf++; print "FAILED " n " (" substr(where[n], 2) ")" > "/dev/stderr" }
			else if (p[n]) { np++; if (r[n] != "") print "passed on retry: " n " (" substr(r[n], 2) ")" }
			else { ns++; print n > "'"$WORK/skipped"'" }
		}
		printf "conformance: %d passed, %d failed, %d skipped of %d tests\n", np, nf, ns, np + nf + ns
		exit nf > 0
	}
' "$WORK/results"
rc=$?
if [ -s "$WORK/skipped" ]; then
	echo "skipped (see tests/conformance/README.md):"
	sort "$WORK/skipped" | sed 's/^/  /'
fi
# A skip is a test that checked nothing: only the ones README.md explains may happen (on a
# full run); a new skip fails like a failure.
ALLOWED_SKIPS="CompareAndWrite.InvalidDataOutSize WriteSame10.InvalidDataOutSize
WriteSame10.UnmapUnaligned WriteSame16.InvalidDataOutSize WriteSame16.UnmapUnaligned"
if [ "$CU_TESTS" = ALL ] && [ -s "$WORK/skipped" ]; then
	unexpected=$(sort "$WORK/skipped" | comm -23 - <(printf '%s\n' $ALLOWED_SKIPS | sort))
	if [ -n "$unexpected" ]; then
		echo "FAIL: skipped but not explained in tests/conformance/README.md:"
		printf '%s\n' "$unexpected" | sed 's/^/  /'
		rc=1
	fi
fi
[ $rc -eq 0 ] || { echo "logs: $WORK (kept)"; KEEP=1; }
exit $rc
