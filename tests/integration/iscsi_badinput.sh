#!/usr/bin/env bash
# Malformed PDUs (unknown opcode, oversized segment, bad digests, truncated header, garbage and
# duplicated login keys, CmdSN outside the window, DataSN gap, random bytes) against utgtd
# while another session does verified writes and reads; nothing may be lost and the daemon
# must stay up.  The client is tests/integration/iscsi_badinput.py.
set -u
cd "$(dirname "$0")/../.."
. tests/integration/iscsi_lib.sh
T=iqn.2026-12.org.utgt:badinput
start_utgtd_ramdisk "$T" 64
timeout --foreground 280 python3 tests/integration/iscsi_badinput.py 127.0.0.1 "$UT_PORT" "$T"
rc=$?
ilib_finish $rc
