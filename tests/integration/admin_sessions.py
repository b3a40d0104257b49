#!/usr/bin/env python3
"""Two iSCSI sessions with a known workload, held open for utgtadm to look at.

usage: admin_sessions.py HOST PORT TARGET_IQN

Session "alpha" writes 1 MiB (16 x 64 KiB WRITE(10)), reads 256 KiB (4 x 64 KiB READ(10)),
runs one READ(10) past the end of the LU (CHECK CONDITION, no data) and one ABORT TASK for a
task that does not exist.  Session "beta" reads 512 KiB (8 x 64 KiB).  Each first clears its
UNIT ATTENTIONs with TEST UNIT READY, and every command and its status is counted here.
Then one JSON line with the expected counters of each session goes to stdout, and the
sessions stay logged in until a line arrives on stdin; then both log out.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import iscsi_min as im  # noqa: E402

HOST, PORT, IQN = sys.argv[1], int(sys.argv[2]), sys.argv[3]
CHUNK = 64 * 1024


class Counted:
    def __init__(self, iname, isid):
        self.iname, self.isid = iname, isid
        self.c = im.Conn(HOST, PORT)
        st = self.c.login(iname, IQN, isid=isid)
        if st:
            sys.exit("login %s: status %#x" % (iname, st))
        self.exp = {"initiator": iname, "isid": isid.hex(), "commands": 0, "bytes_read": 0,
                    "bytes_written": 0, "errors": 0, "task_mgmt": 0}

    def run(self, st, _sense, din, rd=0, wr=0):
        self.exp["commands"] += 1
        if st == 2:
            self.exp["errors"] += 1
        elif st == 0:
            self.exp["bytes_read"] += rd
            self.exp["bytes_written"] += wr
        else:
            sys.exit("%s: status %r" % (self.iname, st))
        return st

    def clear_ua(self):
        for _ in range(8):
            st, sense, din = self.c.tur()
            self.run(st, sense, din)
            if st == 0:
                return
        sys.exit("UNIT ATTENTIONs do not clear")

    def write(self, lba, n):
        data = bytes([0x5A]) * CHUNK
        for i in range(n):
            if self.run(*self.c.write10(lba + i * (CHUNK // 512), data), wr=CHUNK) != 0:
                sys.exit("write failed")

    def read(self, lba, n):
        for i in range(n):
            if self.run(*self.c.read10(lba + i * (CHUNK // 512), CHUNK // 512), rd=CHUNK) != 0:
                sys.exit("read failed")

    def abort_nothing(self):
        self.c.tmf(1, ref_itt=0x7777)  # ABORT TASK of a task that does not exist
        self.exp["task_mgmt"] += 1


a = Counted("iqn.2026-12.org.utgt:admin-alpha", b"\x80\x00\x00\x11\x00\x01")
b = Counted("iqn.2026-12.org.utgt:admin-beta", b"\x80\x00\x00\x22\x00\x02")
a.clear_ua()
b.clear_ua()
a.write(0, 16)
a.read(0, 4)
st, sense, _ = a.c.read10(0xFFFFFF00, 1)  # past the end of a 32 MiB LU
a.run(st, sense, b"")
if st != 2:
    sys.exit("READ past the end: status %r" % st)
a.abort_nothing()
b.read(0, 8)
print(json.dumps({"alpha": a.exp, "beta": b.exp}), flush=True)
sys.stdin.readline()
for s in (a, b):
    s.c.logout()
    s.c.close()
