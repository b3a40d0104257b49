#!/usr/bin/env bash
# suite-timeout: 180
# Long READs sent in pieces (docs/security.md): 32 READs of 32 MiB from a client that does
# not read hold a 2 MiB room each, not their length (RSS bound); then their data, DataSN, F
# and S bits, digests, and ABORT TASK of a READ half sent.  The budgets are set high so that
# only the pieces bound what a READ holds.  The client is tests/integration/iscsi_stream.py.
set -u
cd "$(dirname "$0")/../.."
. tests/integration/iscsi_lib.sh
UTGTADM=${UTGTADM:-$(dirname "$UTGTD")/utgtadm}
T=iqn.2026-12.org.utgt:stream
# NopInInterval 0: no NOP-In timer may close the silent client while it is measured
start_utgtd_ramdisk "$T" 64 "	mem_limit 2G" "		session_mem_limit 2G
		NopInInterval 0"
timeout --foreground 150 python3 tests/integration/iscsi_stream.py 127.0.0.1 "$UT_PORT" "$T" \
	"$UT_PID" "$UTGTADM" "$UT_SOCK"
ilib_finish $?
