#!/usr/bin/env python3
"""Session reinstatement while the old session still has a write half received.

usage: iscsi_reinstate.py HOST PORT TARGET_IQN

Each case logs in with one ISID, leaves a WRITE unfinished on that connection, then logs in
again with the same InitiatorName and ISID and TSIH 0 (RFC 7143 6.3.5).  The target must close
the old connection, let go of the old session and answer the new login within a bounded time;
the new session must then run commands.  Cases:
  r2t-*: InitialR2T=Yes, the WRITE's R2T is never answered with Data-Out;
  partial-*: the WRITE's immediate data segment stops half way (the PDU is never complete);
  *-dropped: the old TCP connection is closed by the initiator first;
  *-silent: the old connection stays open and silent (a path cut by a firewall).
Prints one line per check; exit status 0 only if all passed.
"""
import os
import socket
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import iscsi_min as im  # noqa: E402

HOST, PORT, IQN = sys.argv[1], int(sys.argv[2]), sys.argv[3]
INAME = "iqn.2026-12.org.utgt:reinstate"
ANSWER_WITHIN = 30.0  # bound on the reinstating login (milliseconds when it works)
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def keys(initial_r2t, immediate):
    return [("HeaderDigest", "None"), ("DataDigest", "None"),
            ("InitialR2T", "Yes" if initial_r2t else "No"),
            ("ImmediateData", "Yes" if immediate else "No"),
            ("MaxBurstLength", 262144), ("FirstBurstLength", 65536),
            ("MaxRecvDataSegmentLength", 65536), ("MaxOutstandingR2T", 1),
            ("DefaultTime2Wait", 2), ("DefaultTime2Retain", 0),
            ("ErrorRecoveryLevel", 0), ("MaxConnections", 1),
            ("DataPDUInOrder", "Yes"), ("DataSequenceInOrder", "Yes")]


def write10_cdb(lba, blocks):
    return struct.pack(">BBIBHB", 0x2A, 0, lba, 0, blocks, 0)


def leave_r2t_unanswered(c, what):
    """WRITE of 64 KiB with no immediate data: the target asks with R2T; we never answer."""
    bhs = c.cmd_bhs(write10_cdb(0, 128), 65536, write=True)
    c.cmd_sn += 1
    c.send(bhs)
    p = c.recv()
    check(p.op == im.R2T and p.u32(44) == 65536, what + ": target sent R2T for 64 KiB")


def leave_data_segment_half(c, what):
    """WRITE whose 32 KiB immediate data segment is announced but only half sent."""
    bhs = bytearray(c.cmd_bhs(write10_cdb(0, 64), 32768, write=True))
    bhs[5:8] = (32768).to_bytes(3, "big")
    c.cmd_sn += 1
    c.send_raw(bytes(bhs) + bytes(16384))
    check(True, what + ": WRITE header and half its immediate data sent")


def run_case(name, initial_r2t, immediate, leave, drop):
    isid = b"\x80\x00" + os.urandom(4)
    old = im.Conn(HOST, PORT)
    st = old.login(INAME, IQN, op=keys(initial_r2t, immediate), isid=isid)
    check(st == 0, name + ": first login")
    if st:
        old.close()
        return
    old.clear_ua()
    old_tsih = old.tsih
    leave(old, name)
    if drop:
        old.close()

    new = im.Conn(HOST, PORT, timeout=ANSWER_WITHIN)
    try:
        st = new.login(INAME, IQN, op=keys(True, True), isid=isid)
        check(st == 0, name + ": reinstating login answered with success (status %#06x)" % st)
        check(new.tsih not in (0, old_tsih),
              name + ": new session has its own TSIH (%d, old %d)" % (new.tsih, old_tsih))
        if st == 0:
            new.clear_ua()
            status, _, _ = new.tur()
            check(status == 0, name + ": TEST UNIT READY on the new session")
            data = os.urandom(65536)
            status, _, _ = new.write10(8, data)
            rs, _, back = new.read10(8, 128)
            check(status == 0 and rs == 0 and back == data,
                  name + ": write and read back 64 KiB on the new session")
            check(new.logout() == 0, name + ": logout")
    except (socket.timeout, TimeoutError):
        check(False, name + ": no login response within %.0fs" % ANSWER_WITHIN)
    except im.Closed as e:
        check(False, name + ": %s" % e)
    if not drop:
        check(old.closed(ANSWER_WITHIN), name + ": target closed the old connection")
    old.close()
    new.close()


def main():
    for drop in (True, False):
        tail = "-dropped" if drop else "-silent"
        run_case("r2t" + tail, True, False, leave_r2t_unanswered, drop)
        run_case("partial" + tail, False, True, leave_data_segment_half, drop)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
