#!/usr/bin/env bash
# Session reinstatement (RFC 7143 6.3.5) while the old session has a WRITE half received: an
# R2T never answered, or an immediate-data segment cut half way; old connection closed or left
# silent.  The reinstating login must be answered and the new session must work.  The client
# is tests/integration/iscsi_reinstate.py.
set -u
cd "$(dirname "$0")/../.."
. tests/integration/iscsi_lib.sh
T=iqn.2026-12.org.utgt:reinstate
start_utgtd_ramdisk "$T" 16
timeout --foreground 280 python3 tests/integration/iscsi_reinstate.py 127.0.0.1 "$UT_PORT" "$T"
rc=$?
ilib_finish $rc
