#!/usr/bin/env python3
"""Long READs sent in pieces (docs/security.md, "A long READ holds its room, not its length").

usage: iscsi_stream.py HOST PORT TARGET_IQN UTGTD_PID UTGTADM ADMIN_SOCKET

The target (iscsi_stream.sh) has budgets large enough (2 GiB) that only the pieces bound
what a READ holds.  Checks, on a 64 MiB ramdisk LU whose first 32 MiB hold a pattern:
1. 32 READ(16) of 32 MiB inside the CmdSN window from a client that reads nothing back: all
   are started, and the daemon's RSS grows by at most 32 rooms of 2 MiB plus a margin (a
   buffer of the whole length each would be 1 GiB);
2. then the client reads all of it: every READ's Data-In is in order (DataSN from 0, offsets
   contiguous, at most MaxRecvDataSegmentLength each, F at each MaxBurstLength), carries the
   pattern, and ends with the S bit and GOOD with no residual; the peak RSS stays in the bound;
3. the same with header and data digests;
4. ABORT TASK of a READ half sent: the TMF is answered "function complete", the READ gets no
   status, the session holds no buffer after it and still reads;
5. 32 WRITEs of 32 MiB whose data never comes: charged whole, RSS does not grow.
"""
import array
import os
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import iscsi_min as im  # noqa: E402
import utgtd_probe as probe  # noqa: E402

HOST, PORT, IQN, PID, ADM, SOCK = (sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]),
                                   sys.argv[5], sys.argv[6])
MiB = 1 << 20
BIG = 32 * MiB
N = 32
ROOM = 2 * MiB           # ISCSIT_DIN_ROOM
MARGIN = 40 * MiB        # socket buffers, the workers' buffer caches, allocator slack
MRDSL = 256 * 1024
check = probe.Checks()


def status_kb(field):
    return probe.status_bytes(PID, field)


def session(isid):
    for s in probe.sessions(ADM, SOCK):
        if s.get("isid") == isid.hex():
            return s
    return None


def make_pattern():
    """32 MiB in which each 4-byte word holds its own byte offset."""
    a = array.array("I", range(0, BIG, 4))
    if sys.byteorder == "little":
        a.byteswap()
    return a.tobytes()


PAT = make_pattern()


def pattern(off, n):
    return PAT[off:off + n]


def login(isid, digests=False):
    c = im.Conn(HOST, PORT)
    st = c.login("iqn.2026-12.org.utgt:stream", IQN, isid=isid, mrdsl=MRDSL, digests=digests)
    if st:
        raise SystemExit("login: status %#x" % st)
    c.clear_ua()
    return c


def read16_raw(c, itt, cmd_sn):
    cdb = struct.pack(">BBQIBB", 0x88, 0, 0, BIG // 512, 0, 0)
    return c.build(c.cmd_bhs(cdb, BIG, read=True, itt=itt, cmd_sn=cmd_sn))


def fill(c):
    chunk = 8 * MiB
    for off in range(0, BIG, chunk):
        cdb = struct.pack(">BBQIBB", 0x8A, 0, off // 512, chunk // 512, 0, 0)
        st, _, _ = c.scsi(cdb, data=pattern(off, chunk))
        if st != 0:
            raise SystemExit("fill: status %#x" % st)


class Stream:
    """The Data-In of one READ as it arrives, checked PDU by PDU."""

    def __init__(self, c):
        self.c = c
        self.off = 0
        self.sn = 0
        self.status = None
        self.bad = None
        self.sum = 0

    def take(self, p):
        c = self.c
        if p.op == im.SCSI_RSP:
            self.status = p.bhs[3]
            return
        off, sn, n = p.u32(40), p.u32(36), len(p.data)
        if self.bad is None:
            if off != self.off or sn != self.sn or n > c.mrdsl or n == 0:
                self.bad = "PDU %d: offset %d DataSN %d length %d" % (self.sn, off, sn, n)
            elif p.data != pattern(off, n):
                self.bad = "data at %d" % off
            elif bool(p.flags & 0x80) != ((off + n) % c.max_burst == 0 or off + n == BIG):
                self.bad = "F bit at %d" % (off + n)
        self.off = off + n
        self.sn += 1
        if p.flags & 1:
            self.status = p.bhs[3] if not (p.flags & 0x06) else -1  # residual: wrong here


def drain(c, streams, until):
    while not until():
        p = c.recv()
        if p.op in (im.DATA_IN, im.SCSI_RSP) and p.itt in streams:
            streams[p.itt].take(p)
        elif p.op == im.NOP_IN and p.u32(20) != im.RSVD:
            c.send(struct.pack(">BB14xIIII16x", 0x40 | im.NOP_OUT, 0x80, im.RSVD, p.u32(20),
                               c.cmd_sn, c.exp_stat_sn))


def flood_then_read():
    isid = b"\x80\x00\x00\x51\x00\x01"
    c = login(isid)
    fill(c)
    st, _, din = c.scsi(struct.pack(">BBQIBB", 0x88, 0, 0, BIG // 512, 0, 0), read_len=BIG)
    check(st == 0 and din == pattern(0, BIG), "one 32 MiB READ: GOOD, the pattern")
    base = status_kb("VmRSS")
    hwm0 = status_kb("VmHWM")
    bound = base + N * ROOM + MARGIN
    s0 = session(isid)["limits"]["started"]
    raw = b""
    itts = [0x5000 + i for i in range(N)]
    for i, itt in enumerate(itts):
        raw += read16_raw(c, itt, c.cmd_sn + i)
    c.cmd_sn += N
    c.send_raw(raw)
    started = 0
    for _ in range(600):
        rss = status_kb("VmRSS")
        if rss > bound:
            break
        s = session(isid)
        started = s["limits"]["started"] - s0 if s else 0
        if started >= N:
            break
        time.sleep(0.1)
    rss = status_kb("VmRSS")
    s = session(isid)
    held = s["limits"]["mem_bytes"] if s else -1
    print("     %d READs of 32 MiB started, not read back: session holds %d MiB; RSS %d -> %d MiB"
          % (started, held // MiB, base // MiB, rss // MiB), flush=True)
    check(started >= N, "all %d READs started (%d)" % (N, started))
    check(held <= N * ROOM, "the session holds %d MiB: a 2 MiB room per READ" % (held // MiB))
    check(rss - base <= N * ROOM + MARGIN,
          "RSS grew %d MiB: at most %d rooms of 2 MiB + %d MiB (whole buffers: %d MiB)"
          % ((rss - base) // MiB, N, MARGIN // MiB, N * BIG // MiB))
    streams = {itt: Stream(c) for itt in itts}
    drain(c, streams, lambda: all(x.status is not None for x in streams.values()))
    bad = [(hex(i), x.bad) for i, x in streams.items() if x.bad]
    check(not bad, "every READ's Data-In in order, within MRDSL, F at bursts, the pattern %s"
          % (bad[:2] if bad else ""))
    check(all(x.status == 0 and x.off == BIG for x in streams.values()),
          "every READ ended with the S bit and GOOD after 32 MiB")
    hwm = status_kb("VmHWM")
    check(hwm - max(base, hwm0) <= N * ROOM + MARGIN,
          "peak RSS %d MiB, in the bound %d MiB" % (hwm // MiB, bound // MiB))
    c.logout()
    c.close()


def digests():
    c = login(b"\x80\x00\x00\x51\x00\x02", digests=True)
    n = 2 * ROOM + 4096  # two pieces and a last one (the digests are computed in Python)
    cdb = struct.pack(">BBQIBB", 0x88, 0, 8, n // 512, 0, 0)
    st, _, din = c.scsi(cdb, read_len=n)
    check(c.hd and c.dd and st == 0 and din == pattern(8 * 512, n),
          "a %d-byte READ with header and data digests: GOOD, the pattern" % n)
    c.logout()
    c.close()


def abort_half_sent():
    isid = b"\x80\x00\x00\x51\x00\x03"
    c = login(isid)
    itt = 0x6000
    c.send_raw(read16_raw(c, itt, c.cmd_sn))
    ref_sn = c.cmd_sn
    c.cmd_sn += 1
    s = Stream(c)
    drain(c, {itt: s}, lambda: s.off >= 4 * MiB)
    tmf_itt = 0x6001
    c.send(struct.pack(">BB2x4x8sIIIIII8x", 0x40 | im.TMF_REQ, 0x80 | 1, bytes(8), tmf_itt, itt,
                       c.cmd_sn, c.exp_stat_sn, ref_sn, 0))
    resp = None
    while resp is None:
        p = c.recv()
        if p.op == im.TMF_RSP and p.itt == tmf_itt:
            resp = p.bhs[2]
        elif p.itt == itt:
            s.take(p)
    print("     ABORT TASK after %d MiB of a 32 MiB READ: response %d, %d MiB sent in all"
          % (4, resp, s.off // MiB), flush=True)
    check(resp == 0, "ABORT TASK of a READ half sent: function complete")
    check(s.status is None, "the aborted READ got no status")
    check(s.bad is None and s.off < BIG, "what was sent of it was in order and not all of it")
    st, _, din = c.read10(0, 2048)
    check(st == 0 and din == pattern(0, MiB), "the session still reads")
    sess = session(isid)
    check(sess and sess["limits"]["mem_bytes"] == 0, "no buffer held after the abort")
    c.logout()
    c.close()


def writes_without_data():
    """WRITEs whose data never comes: charged to the budget whole when they arrive (a WRITE is
    admitted all or nothing), but memory is only made resident as data lands in it."""
    isid = b"\x80\x00\x00\x51\x00\x04"
    c = login(isid)
    base = status_kb("VmRSS")
    raw = b""
    for i in range(N):
        cdb = struct.pack(">BBQIBB", 0x8A, 0, 0, BIG // 512, 0, 0)
        raw += c.build(c.cmd_bhs(cdb, BIG, write=True, itt=0x7000 + i, cmd_sn=c.cmd_sn + i))
    c.cmd_sn += N
    c.send_raw(raw)
    held = 0
    for _ in range(600):
        s = session(isid)
        held = s["limits"]["mem_bytes"] if s else 0
        if held >= N * BIG:
            break
        time.sleep(0.1)
    rss = status_kb("VmRSS")
    print("     %d WRITEs of 32 MiB without their data: %d MiB charged; RSS %d -> %d MiB"
          % (N, held // MiB, base // MiB, rss // MiB), flush=True)
    check(held == N * BIG, "every WRITE charged whole on arrival (%d MiB)" % (held // MiB))
    check(rss - base <= MARGIN, "RSS grew %d MiB: nothing resident before data lands"
          % ((rss - base) // MiB))
    c.close()


def main():
    flood_then_read()
    digests()
    abort_half_sent()
    writes_without_data()
    return 1 if check.fails else 0


if __name__ == "__main__":
    sys.exit(main())
