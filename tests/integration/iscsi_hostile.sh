#!/usr/bin/env bash
# suite-timeout: 240
# Hostile clients against utgtd's bounds (docs/security.md): floods of big READs
# (immediate, and inside the CmdSN window) and of NOP-Outs from clients that never read, and
# the global session and connection limits.  RSS growth must stay under the memory budget
# plus a margin.  The client is tests/integration/iscsi_hostile.py.
set -u
cd "$(dirname "$0")/../.."
. tests/integration/iscsi_lib.sh
UTGTADM=${UTGTADM:-$(dirname "$UTGTD")/utgtadm}
T=iqn.2026-12.org.utgt:hostile
# NopInInterval 0: no NOP-In timer may close a silent hostile connection while it is measured
start_utgtd_ramdisk "$T" 64 "	mem_limit 96M
	max_sessions 4
	max_connections 8" \
	"		session_mem_limit 16M
		NopInInterval 0"
timeout --foreground 200 python3 tests/integration/iscsi_hostile.py 127.0.0.1 "$UT_PORT" "$T" \
	"$UT_PID" "$UTGTADM" "$UT_SOCK"
ilib_finish $?
