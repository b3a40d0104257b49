#!/usr/bin/env python3
"""Bad input against utgtd's iSCSI target while another session does verified I/O.

usage: iscsi_badinput.py HOST PORT TARGET_IQN

A writer/reader thread keeps a session busy with writes of known patterns read back and
compared.  Meanwhile each malformed case runs on its own connection and checks the target's
answer (Reject, login error, command failure, or closing that one connection).  At the end the
verifier must have lost nothing, its session must be intact, and the target must still accept
logins.  Prints one line per check; exit status 0 only if all passed.
"""
import os
import random
import socket
import struct
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import iscsi_min as im  # noqa: E402

HOST, PORT, IQN = sys.argv[1], int(sys.argv[2]), sys.argv[3]
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def session(name, digests=False, isid=None):
    c = im.Conn(HOST, PORT)
    isid = isid or b"\x80\x00" + os.urandom(4)
    st = c.login("iqn.2026-12.org.utgt:badinput-" + name, IQN, digests=digests, isid=isid)
    if st:
        raise RuntimeError("login of %s failed: %04x" % (name, st))
    c.clear_ua()
    return c


# ---------------------------------------------------------------- the verifier
class Verifier(threading.Thread):
    """Writes numbered patterns over a region and reads each back; any mismatch or error is
    data loss from the point of view of this test."""

    def __init__(self):
        super().__init__(daemon=True)
        self.stop = threading.Event()
        self.rounds = 0
        self.errors = []

    def run(self):
        try:
            c = session("verifier")
            rnd = random.Random(7)
            while not self.stop.is_set():
                lba = rnd.randrange(0, 4096) * 8
                blocks = rnd.choice([1, 8, 64, 256])
                data = bytes((self.rounds * 7 + i * 13) & 0xFF for i in range(blocks * 512))
                st, sense, _ = c.write10(lba, data)
                if st != 0:
                    self.errors.append("write status %r sense %s" % (st, sense.hex()))
                    break
                st, sense, back = c.read10(lba, blocks)
                if st != 0 or back != data:
                    self.errors.append("read back differs at lba %d (status %r)" % (lba, st))
                    break
                self.rounds += 1
            c.logout()
        except Exception as e:  # noqa: BLE001 - any exception is a failure of this session
            self.errors.append("verifier session: %r" % e)


# ---------------------------------------------------------------- malformed cases
def expect_reject(c, raw, reason, what):
    c.send_raw(raw)
    try:
        p = c.recv()
        check(p.op == im.REJECT and p.bhs[2] == reason,
              "%s -> Reject reason %#x (got op %#x reason %#x)" % (what, reason, p.op, p.bhs[2]))
    except im.Closed as e:
        check(False, "%s -> Reject (connection closed instead: %s)" % (what, e))


def alive(c, what):
    try:
        p = c.nop(b"ping")
        check(p.data == b"ping", what + ": session still answers")
    except Exception as e:  # noqa: BLE001
        check(False, what + ": session still answers (%r)" % e)


def case_unknown_opcode():
    c = session("unknown-op")
    bhs = bytearray(48)
    bhs[0] = 0x1C
    bhs[1] = 0x80
    expect_reject(c, c.build(bytes(bhs), b"junk"), 0x05, "unknown opcode 0x1c")
    alive(c, "unknown opcode")
    c.close()


def case_oversized_segment():
    c = session("oversize")
    bhs = struct.pack(">BB14xIIII16x", im.NOP_OUT, 0x80, 77, im.RSVD, c.cmd_sn, c.exp_stat_sn)
    big = bytes(2 * 1024 * 1024)  # twice our MaxRecvDataSegmentLength
    expect_reject(c, c.build(bhs, big), 0x04, "NOP-Out data segment over MaxRecvDataSegmentLength")
    alive(c, "oversized segment")
    c.close()


def case_bad_digests():
    c = session("digests", digests=True)
    check(c.hd and c.dd, "digests negotiated (CRC32C both)")
    bhs = struct.pack(">BB14xIIII16x", im.NOP_OUT, 0x80, 78, im.RSVD, c.cmd_sn, c.exp_stat_sn)
    raw = bytearray(c.build(bhs, b"12345678"))
    raw[-1] ^= 0xFF  # data digest
    expect_reject(c, bytes(raw), 0x02, "bad data digest")
    alive(c, "bad data digest")
    raw = bytearray(c.build(bhs, b""))
    raw[49] ^= 0xFF  # header digest: the length can no longer be trusted
    c.send_raw(bytes(raw))
    check(c.closed(), "bad header digest -> connection closed")
    c.close()


def case_truncated_header():
    c = session("truncated")
    c.send_raw(bytes(20))
    c.close()
    check(True, "truncated header then close (sent)")


def case_garbage_login():
    c = im.Conn(HOST, PORT)
    p = c.login_pdu(b"\xff\xfe\x00=\x01garbage\x00\x00novalue\x00", 0, 1)
    st = p.bhs[36] << 8 | p.bhs[37]
    check(p.op == im.LOGIN_RSP and st == 0x0200, "garbage login keys -> login status 0200 (%04x)" % st)
    check(c.closed(), "garbage login keys -> connection closed")
    c.close()
    c = im.Conn(HOST, PORT)
    keys = im.kv([("InitiatorName", "iqn.2026-12.org.utgt:dup"), ("TargetName", IQN),
                  ("AuthMethod", "None"), ("AuthMethod", "None")])
    p = c.login_pdu(keys, 0, 1)
    st = p.bhs[36] << 8 | p.bhs[37]
    check(st == 0x0200, "duplicated login key -> login status 0200 (%04x)" % st)
    c.close()
    c = im.Conn(HOST, PORT)
    keys = im.kv([("InitiatorName", "iqn.2026-12.org.utgt:x"), ("TargetName", "iqn.nope:none"),
                  ("AuthMethod", "None")])
    p = c.login_pdu(keys, 0, 1)
    st = p.bhs[36] << 8 | p.bhs[37]
    check(st == 0x0203, "unknown target -> login status 0203 (%04x)" % st)
    c.close()


def case_cmdsn_window():
    c = session("cmdsn")
    for sn, what in ((c.max_cmd_sn + 1, "above MaxCmdSN"), (c.cmd_sn - 1, "below ExpCmdSN")):
        bhs = c.cmd_bhs(b"\0" * 6, 0, cmd_sn=sn, itt=0x5000 + sn % 100)
        c.send(bhs)
        c.sock.settimeout(1.0)
        try:
            p = c.recv()
            check(False, "CmdSN %s -> ignored (got op %#x)" % (what, p.op))
        except (socket.timeout, TimeoutError):
            check(True, "CmdSN %s -> silently ignored" % what)
        c.sock.settimeout(30.0)  # back to iscsi_min.Conn's default
    st, _, _ = c.tur()
    check(st == 0, "in-window command after them is answered")
    c.close()


def case_datasn_gap():
    c = session("datasn")
    c.immediate = False  # all data in Data-Out PDUs
    old = c.mrdsl
    c.mrdsl = 512
    data = bytes(range(256)) * 16  # 8 blocks in 8 Data-Out PDUs
    st, sense, _ = c.write10(100000, data, datasn_fn=lambda sn: sn if sn < 3 else sn + 1)
    c.mrdsl = old
    check(st == 2 and len(sense) > 13 and sense[2] & 0xF == 0x0B and sense[12] == 0x4B,
          "DataSN gap -> CHECK CONDITION ABORTED COMMAND 4B/xx (status %r sense %s)"
          % (st, sense[:14].hex()))
    alive(c, "DataSN gap")
    c.close()


def case_random_garbage():
    rnd = random.Random(11)
    for i in range(20):
        c = session("garbage%d" % i)
        c.send_raw(bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 400))))
        c.close()
    check(True, "20 sessions sent random bytes after login")


def main():
    v = Verifier()
    v.start()
    time.sleep(0.5)
    for case in (case_unknown_opcode, case_oversized_segment, case_bad_digests,
                 case_truncated_header, case_garbage_login, case_cmdsn_window, case_datasn_gap,
                 case_random_garbage):
        try:
            case()
        except Exception as e:  # noqa: BLE001
            check(False, "%s raised %r" % (case.__name__, e))
    time.sleep(0.5)
    v.stop.set()
    v.join(60)
    check(not v.is_alive(), "verifier finished")
    check(not v.errors, "verified I/O lost nothing (%d write+read rounds) %s"
          % (v.rounds, "; ".join(v.errors)))
    check(v.rounds > 10, "verified I/O made progress (%d rounds)" % v.rounds)
    c = session("after")
    st, _, _ = c.tur()
    check(st == 0, "target still takes logins and commands")
    c.logout()
    print("%d check(s) failed" % len(failures) if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
