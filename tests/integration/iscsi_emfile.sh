#!/usr/bin/env bash
# suite-timeout: 180
# Out of descriptors: utgtd runs with RLIMIT_NOFILE 64 and a client
# opens 100 idle connections.  accept() fails with EMFILE: utgtd must pause accepting (not
# spin), log it once per interval (not once per try), drop its oldest half-open logins, and
# still let a real initiator log in.
set -u
cd "$(dirname "$0")/../.."
. tests/integration/iscsi_lib.sh
REAL_UTGTD=$UTGTD
WRAP=$(mktemp /tmp/utgt-emfile.XXXXXX)
printf '#!/bin/sh\nexec prlimit --nofile=64:64 %s "$@"\n' "$(readlink -f "$REAL_UTGTD")" >"$WRAP"
chmod +x "$WRAP"
trap 'rm -f "$WRAP"; ilib_cleanup' EXIT
UTGTD=$WRAP
T=iqn.2026-12.org.utgt:emfile
start_utgtd_ramdisk "$T" 16 "" "		NopInInterval 0"
timeout --foreground 150 python3 - 127.0.0.1 "$UT_PORT" "$T" "$UT_PID" "$UT_LOG" <<'PY'
import os, socket, sys, time
sys.path.insert(0, "tests/integration")
import iscsi_min as im
host, port, iqn, pid, log = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5]
fails = 0
def check(c, what):
    global fails
    print(("ok   " if c else "FAIL ") + what, flush=True)
    fails += 0 if c else 1
def cpu():
    f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
def lines(word):
    return sum(1 for l in open(log, errors="replace") if word in l)
socks = [socket.create_connection((host, port), timeout=30) for _ in range(100)]
# wait for the condition: accept ran out of descriptors (bounded at 60 s)
for _ in range(600):
    if lines("accept on") >= 1:
        break
    time.sleep(0.1)
check(lines("Too many open files") >= 1, "EMFILE seen and logged")
# a 3 s window (several accept pauses of 0.5 s inside it): a spinning accept loop would burn
# about 3 s of CPU and log thousands of lines
c0, l0 = cpu(), lines("accept on")
time.sleep(3)
used, logged = cpu() - c0, lines("accept on") - l0
print("     in 3 s out of descriptors: %.2f s of CPU, %d accept log lines" % (used, logged))
check(used < 1.0, "accept does not spin (%.2f s CPU in 3 s)" % used)
check(logged <= 2, "the repeated accept error is rate-limited (%d lines)" % logged)
# a real initiator still gets in while the idle connections stay open (bounded at 60 s)
c = im.Conn(host, port, timeout=60)
st = c.login("iqn.2026-12.org.utgt:real", iqn)
check(st == 0, "a real initiator logs in while descriptors are short: status %#x" % st)
if st == 0:
    c.clear_ua()
    st, _, din = c.read10(0, 8)
    check(st == 0 and len(din) == 4096, "and reads")
    c.logout()
c.close()
check(lines("oldest login dropped") >= 1, "the oldest half-open logins were dropped")
for s in socks:
    s.close()
sys.exit(1 if fails else 0)
PY
rc=$?
ilib_finish $rc
