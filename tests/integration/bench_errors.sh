#!/usr/bin/env bash
# What the user sees when things are wrong: an unreachable portal, a login the target rejects
# (unknown target, bad CHAP secret) with the iSCSI status class/detail, a bad job file line
# (file:line), a bad option.  Each exits non-zero without doing I/O.
. "$(dirname "$0")/lib/bench_env.sh"
pick_port p
pick_port closed
TARGET_EXTRA='IncomingUser "joe 12charsecret"'
start_target 1 "$p"
echo "bench_errors: $UB_TARGET on 127.0.0.1:$p (CHAP user joe)"
chap="iscsi://joe%12charsecret@127.0.0.1:$p/$IQN/$LUN_BASE"

"$BENCH" --name=ok --filename="$chap" --rw=read --size=1m >"$TMPD/ok.out" 2>&1
check "CHAP login with the right secret works (rc $?)" grep -q "io=1024KiB" "$TMPD/ok.out"

"$BENCH" --name=x --filename="iscsi://joe%wrongsecret1@127.0.0.1:$p/$IQN/$LUN_BASE" --rw=read \
	--size=1m >/dev/null 2>"$TMPD/chap.err"
rc=$?
check "wrong CHAP secret: rc $rc = 3" test $rc -eq 3
check "  says: $(cut -c1-150 "$TMPD/chap.err")" \
	grep -q "rejected: status class 0x02 (initiator error), detail 0x01: Authentication failure" \
	"$TMPD/chap.err"

"$BENCH" --name=x --filename="iscsi://joe%12charsecret@127.0.0.1:$p/iqn.2026-12.org.utgt:nope/0" \
	--rw=read --size=1m >/dev/null 2>"$TMPD/nf.err"
rc=$?
check "unknown target: rc $rc = 3, status 0x02/0x03 Target not found" \
	grep -q "status class 0x02 (initiator error), detail 0x03: Target not found" "$TMPD/nf.err"

"$BENCH" --name=x --filename="iscsi://127.0.0.1:$closed/$IQN/0" --rw=read --size=1m \
	>/dev/null 2>"$TMPD/unreach.err"
rc=$?
check "unreachable portal: rc $rc = 3" test $rc -eq 3
check "  says: $(cut -c1-120 "$TMPD/unreach.err")" \
	grep -q "cannot connect to 127.0.0.1:$closed .*[Cc]onnection refused" "$TMPD/unreach.err"

printf '[global]\nbs=4k\n\n[job]\nrw=randread\niodepth=lots\n' >"$TMPD/bad.fio"
"$BENCH" "$TMPD/bad.fio" --filename="$chap" >/dev/null 2>"$TMPD/bad.err"
rc=$?
check "bad job file line: rc $rc = 2" test $rc -eq 2
check "  says: $(head -1 "$TMPD/bad.err")" \
	grep -q "^$TMPD/bad.fio:6: error: iodepth: invalid number 'lots'" "$TMPD/bad.err"

"$BENCH" --filename="$chap" --rw=sideways >/dev/null 2>"$TMPD/opt.err"
rc=$?
check "bad option value: rc $rc = 2, names the command line" \
	grep -q "command line: error: --rw: rw: 'sideways' is not one of" "$TMPD/opt.err"

"$BENCH" --name=x --filename="$chap" --rw=read --bs=1000 --size=1m >/dev/null 2>"$TMPD/bs.err"
check "bs not a multiple of the LU block size is refused (rc $?)" \
	grep -q "not a multiple of the LU block size 512" "$TMPD/bs.err"
finish
