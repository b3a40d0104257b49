#!/usr/bin/env python3
"""Hostile clients against utgtd's bounds (docs/security.md).

usage: iscsi_hostile.py HOST PORT TARGET_IQN UTGTD_PID UTGTADM ADMIN_SOCKET [SECONDS]

The target is configured (iscsi_hostile.sh) with session_mem_limit 16M, mem_limit 96M,
max_sessions 4, max_connections 8 and NopInInterval 0.  Each attack runs on its own session
and never reads what the target sends; the test waits for a condition the daemon reaches and
then holds (every command taken was answered, refused or rejected; or input stopped for
backpressure), then checks the daemon's resident memory (VmRSS, and the peak VmHWM) against
the budget plus a margin, and the admin socket's figures.  A daemon that grows past the bound
fails fast while it grows.

With SECONDS (scripts/bench/soak.sh), the attacks repeat until that many seconds have passed,
beside other sessions (a verified utgt-bench run): only the sessions of these clients
(initiator names iqn.2026-12.org.utgt:hostile and :healthy) are waited for, and the session
and connection limits are checked counting the others' sessions (one connection each).
"""
import os
import socket
import struct
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import iscsi_min as im  # noqa: E402
import utgtd_probe as probe  # noqa: E402

HOST, PORT, IQN, PID, ADM, SOCK = (sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]),
                                   sys.argv[5], sys.argv[6])
SOAK_SECONDS = float(sys.argv[7]) if len(sys.argv) > 7 else 0
OURS = ("iqn.2026-12.org.utgt:hostile", "iqn.2026-12.org.utgt:healthy")
MiB = 1 << 20
SESSION_BUDGET = 16 * MiB
GLOBAL_BUDGET = 96 * MiB
MARGIN = 40 * MiB        # rx/tx buffers, a worker's buffer cache filling, allocator slack
BIG = 32 * MiB           # one READ(16): 65536 blocks of 512 bytes
check = probe.Checks()


def status_kb(field):
    return probe.status_bytes(PID, field)


def cpu_s():
    f = open("/proc/%d/stat" % PID).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def sessions():
    return probe.sessions(ADM, SOCK)


def our_sessions():
    return [s for s in sessions() if s.get("initiator") in OURS]


def session_of(isid):
    for s in our_sessions():
        if s.get("isid") == isid.hex():
            return s
    return None


def wait_for(what, cond, bound):
    """Poll cond() (bounded at 60 s: the bound only says how long a failure takes to show);
    fail at once when the daemon's memory passes `bound` on the way."""
    for _ in range(600):
        rss = status_kb("VmRSS")
        if rss > bound:
            check(False, "%s: RSS %d MiB passed the bound %d MiB while waiting"
                  % (what, rss // MiB, bound // MiB))
            return False
        if cond():
            return True
        time.sleep(0.1)
    check(False, "%s: condition not reached in 60 s" % what)
    return False


def login(isid, name="iqn.2026-12.org.utgt:hostile"):
    c = im.Conn(HOST, PORT)
    st = c.login(name, IQN, isid=isid, mrdsl=1 * MiB)
    if st:
        raise SystemExit("login: status %#x" % st)
    c.clear_ua()
    return c


def read16(c, itt, immediate, cmd_sn):
    cdb = struct.pack(">BBQIBB", 0x88, 0, 0, BIG // 512, 0, 0)
    bhs = bytearray(c.cmd_bhs(cdb, BIG, read=True, itt=itt, cmd_sn=cmd_sn))
    if immediate:
        bhs[0] |= 0x40
    return c.build(bytes(bhs))


def limits(s):
    return s.get("limits", {}) if s else {}


def answered(isid, sent, started0):
    """Every command sent was started (its pieces wait for the client to read them),
    refused for memory or rejected as one immediate command too many."""
    def cond():
        s = session_of(isid)
        if not s:
            return False
        lim = limits(s)
        done = lim.get("started", 0) - started0 + lim.get("refused_mem", 0) + \
            lim.get("rejected_immediate", 0)
        return done >= sent
    return cond


def quiet():
    """No session left from an earlier attack (its buffers are freed): the baseline."""
    wait_for("earlier sessions gone", lambda: len(our_sessions()) == 0, 1 << 62)
    return status_kb("VmRSS")


def read_flood(name, isid, n, immediate):
    """n READ(16) of 32 MiB that are never read back: immediate ones once escaped the CmdSN
    window, and windowed ones pinned ~1 GiB per session."""
    base = quiet()
    c = login(isid)
    started0 = limits(session_of(isid)).get("started", 0)  # the login's TEST UNIT READYs
    raw = b""
    for i in range(n):
        cmd_sn = c.cmd_sn if immediate else c.cmd_sn + i
        raw += read16(c, 0x1000 + i, immediate, cmd_sn)
    if not immediate:
        c.cmd_sn += n
    c.send_raw(raw)
    bound = base + SESSION_BUDGET + MARGIN
    # a non-immediate flood beyond the CmdSN window (32) is dropped by the window itself
    took = n if immediate else min(n, 32)
    if wait_for(name, answered(isid, took, started0), bound):
        s = session_of(isid)
        lim = limits(s)
        rss = status_kb("VmRSS")
        print("     %s: %d sent, %d started, %d refused (TASK SET FULL), %d rejected "
              "(immediate), %d MiB held; RSS %d -> %d MiB" %
              (name, n, lim.get("started", 0) - started0, lim.get("refused_mem", 0),
               lim.get("rejected_immediate", 0), lim.get("mem_bytes", 0) // MiB,
               base // MiB, rss // MiB), flush=True)
        check(lim.get("mem_bytes", 1 << 62) <= SESSION_BUDGET,
              "%s: the session holds %d MiB, within its 16 MiB budget"
              % (name, lim.get("mem_bytes", 0) // MiB))
        check(lim.get("refused_mem", 0) > 0, "%s: commands over the budget were refused" % name)
        check(rss - base <= SESSION_BUDGET + MARGIN,
              "%s: RSS grew %d MiB (budget 16 + margin 40)" % (name, (rss - base) // MiB))
    c.close()


def nop_flood():
    """NOP-Outs with 256 KiB of ping data each, sent by a client that never reads: the
    target must stop reading instead of queueing the echoes (~1.1 GiB per connection once)."""
    isid = b"\x80\x00\x00\x13\x00\x03"
    base = quiet()
    c = login(isid)
    data = bytes(256 * 1024)
    pdus = [c.build(struct.pack(">BB14xIIII16x", 0x40 | im.NOP_OUT, 0x80, 0x2000 + i, im.RSVD,
                                c.cmd_sn, c.exp_stat_sn), data) for i in range(8)]
    stop = threading.Event()

    def sender():
        # Short timeouts, never one blocking sendall: a thread blocked in send() keeps the
        # socket alive past close() (the kernel holds the file until the send returns), so
        # the reset below would not be sent while the target, backlogged, reads nothing.
        c.sock.settimeout(0.2)
        buf = memoryview(b"".join(pdus))
        try:
            for _ in range(1200 // 8):   # 300 MiB of pings
                off = 0
                while off < len(buf):
                    if stop.is_set():
                        return
                    try:
                        off += c.sock.send(buf[off:])
                    except (socket.timeout, TimeoutError):
                        pass
        except OSError:
            pass

    th = threading.Thread(target=sender, daemon=True)
    th.start()

    def throttled():
        s = session_of(isid)
        conns = s.get("connections", []) if s else []
        return bool(conns) and conns[0].get("tx_full") is True

    bound = base + 8 * MiB + MARGIN
    if wait_for("NOP-Out flood", throttled, bound):
        rss = status_kb("VmRSS")
        conn = session_of(isid)["connections"][0]
        print("     NOP-Out flood: input stopped %d time(s); RSS %d -> %d MiB"
              % (conn.get("rx_throttled", 0), base // MiB, rss // MiB), flush=True)
        check(rss - base <= 8 * MiB + MARGIN,
              "NOP-Out flood: RSS grew %d MiB (tx share 8 + margin 40)" % ((rss - base) // MiB))
    stop.set()
    th.join(30)
    check(not th.is_alive(), "NOP-Out flood: the sender stopped before the reset")
    # a reset, not a FIN: what a client that dies with unread data in its buffers sends
    c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    c.close()
    # the target notices although it stopped reading from it (it used to keep the session
    # until other traffic flushed the connection, its worker woken by the error every round)
    cpu0 = cpu_s()
    gone = wait_for("NOP-Out flood: session released after the reset",
                    lambda: session_of(isid) is None, 1 << 62)
    check(gone, "NOP-Out flood: the session goes when the client resets")
    if gone:
        used = cpu_s() - cpu0
        print("     NOP-Out flood: released, %.2f s of daemon CPU meanwhile" % used, flush=True)
        # what the flood left queued is bounded, so freeing it is quick (an unbounded queue
        # once kept a worker at 100 % CPU for ~25 s after the client went)
        check(used < 1.0, "NOP-Out flood: releasing it took %.2f s of CPU, under 1 s" % used)


def session_limits():
    """max_sessions 4: a fifth session is refused with Out of resources (0x0302);
    max_connections 8: past it, connections are closed at once."""
    conns = []
    others = len(sessions()) - len(our_sessions())
    for i in range(4 - others):
        conns.append(login(bytes([0x80, 0, 0, 0x20, 0, i + 1])))
    c = im.Conn(HOST, PORT)
    st = c.login("iqn.2026-12.org.utgt:hostile", IQN, isid=b"\x80\x00\x00\x20\x00\x09")
    check(st == 0x0302, "a fifth session is refused: status %#06x (want 0x0302)" % st)
    # the target closes a failed login's connection: wait for that, so the connection no
    # longer counts against max_connections when the next ones are counted
    c.closed()
    c.close()
    raw = []
    # 4 sessions hold 4 connections; 4 more fill max_connections 8
    for _ in range(4):
        raw.append(socket.create_connection((HOST, PORT), timeout=30))
    # the fifth of these is over the limit: the target closes it without a word
    extra = socket.create_connection((HOST, PORT), timeout=30)
    extra.settimeout(20)
    try:
        gone = extra.recv(1) == b""
    except (ConnectionResetError, socket.timeout, TimeoutError):
        gone = False
    check(gone, "a connection past max_connections is closed at once")
    extra.close()
    for s in raw:
        s.close()
    for c in conns:
        c.logout()
        c.close()


def healthy():
    c = login(b"\x80\x00\x00\x30\x00\x01", "iqn.2026-12.org.utgt:healthy")
    st, _, din = c.read10(0, 2048)   # 1 MiB
    check(st == 0 and len(din) == MiB, "a well-behaved session still reads 1 MiB")
    c.logout()
    c.close()


def main():
    healthy()   # warm-up: buffers and threads exist before the baseline
    end = time.monotonic() + SOAK_SECONDS
    rounds = 0
    while True:
        read_flood("immediate READ flood", b"\x80\x00\x00\x13\x00\x01", 40, True)
        read_flood("windowed READ flood", b"\x80\x00\x00\x13\x00\x02", 32, False)
        nop_flood()
        quiet()
        hwm = status_kb("VmHWM")
        print("     peak RSS (VmHWM) %d MiB" % (hwm // MiB), flush=True)
        session_limits()
        healthy()
        rounds += 1
        if time.monotonic() >= end:
            break
    if SOAK_SECONDS:
        print("     %d round(s) of attacks, %d check(s) failed" % (rounds, check.fails), flush=True)
    return 1 if check.fails else 0


if __name__ == "__main__":
    sys.exit(main())
