#!/usr/bin/env python3
"""Host-side initiator of tests/vm/powerloss.sh: writes a verifiable pattern to an LU served
from inside the qemu guest, records which writes were acknowledged as durable, kills the guest
mid-run, and after the guest's next boot checks what the LU holds.

  powerloss_io.py write --port P --iqn IQN --bs BS --size BYTES --log FILE --seed N
                        --ops N --kill-pid PID [--set-wce 0|1] [--expect-wce 0|1]
  powerloss_io.py check --port P --iqn IQN --size BYTES --log FILE --baseline FILE
                        --promise fua-sync|every-ack [--expect-lost-acked none|some]

Every logical block written carries a header (magic, LBA, the write's sequence number, block
size) and filler derived from (LBA, sequence): any block read back names the one write it came
from, and a block that matches no write (nor the content before the run) is garbage.

Up to --depth commands are in flight at once (SIMPLE tasks; two writes in flight never
overlap, so the order in which the target applies them cannot matter).  The log is written
line by line and flushed before the next command goes out (the host does not crash, only the
guest): "S seq lba nblocks fua" before a WRITE is sent, "A seq" when it completed with GOOD,
"Y seq immed" before a SYNCHRONIZE CACHE is sent and "D seq" when it completed with GOOD.
A write is acknowledged as durable when it was acknowledged with FUA, or acknowledged before a
SYNCHRONIZE CACHE with IMMED=0 was sent that then completed with GOOD: the cache the flush
empties holds the writes completed by then, not those still in flight beside it.  A
SYNCHRONIZE CACHE with IMMED=1 returns GOOD "as soon as the CDB has been validated" (SBC-3
5.22): its GOOD promises nothing about the medium, so it makes no write durable here; the
check reports how the writes it alone covered fared, and holds them to nothing.

check reads the whole LU and sorts every block of the run into:
  durable  - holds the last durable write to it or a later one      (required)
  lost     - holds something older than its last durable write     (a broken promise)
  garbage  - matches no write to it and not the content before     (always a failure)
The content before the run is --baseline (a copy of the LU as the previous check read it, or
zeros); check rewrites it with what it read, for the next run.
"""
import argparse
import os
import random
import signal
import socket
import struct
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "../../integration"))
import iscsi_min  # noqa: E402

MAGIC = b"UTGTPWRL"
INITIATOR = "iqn.2024-01.org.utgt:powerloss-host"


def payload(lba, seq, bs):
    """The content of block lba as written by write seq."""
    head = struct.pack(">8sQQI", MAGIC, lba, seq, bs)
    return head + random.Random(seq * 1000003 + lba).randbytes(bs - len(head))


def connect(args):
    deadline = time.monotonic() + 60
    while True:
        try:
            c = iscsi_min.Conn("127.0.0.1", args.port, timeout=30.0)
            st = c.login(INITIATOR, args.iqn)
            if st != 0:
                sys.exit("login to %s refused: status 0x%04x" % (args.iqn, st))
            c.clear_ua()
            return c
        except (OSError, iscsi_min.Closed) as e:
            # The guest's target is up before we are called (it said so); a refused or reset
            # connection here is qemu's port forward not yet passing traffic.
            if time.monotonic() > deadline:
                sys.exit("cannot log in to 127.0.0.1:%d: %s" % (args.port, e))
            time.sleep(0.5)


def check_status(what, st, sense):
    if st != 0:
        sys.exit("%s: status 0x%02x sense %s" % (what, st & 0xFF, sense.hex()))


def read_capacity(c):
    st, sense, d = c.scsi(struct.pack(">BB8xIBB", 0x9E, 0x10, 32, 0, 0), read_len=32)
    check_status("READ CAPACITY (16)", st, sense)
    last, bs = struct.unpack(">QI", d[:12])
    return (last + 1) * bs, bs


def caching_page(c):
    """The caching mode page (MODE SENSE (10), page 08h, current values)."""
    st, sense, d = c.scsi(struct.pack(">BBBxxxxHB", 0x5A, 0x08, 0x08, 252, 0), read_len=252)
    check_status("MODE SENSE caching page", st, sense)
    bdl = struct.unpack(">H", d[6:8])[0]
    page = d[8 + bdl:]
    if page[0] & 0x3F != 0x08:
        sys.exit("MODE SENSE returned page 0x%02x, not the caching page" % page[0])
    return bytearray(page[:page[1] + 2])


def wce(c):
    return (caching_page(c)[2] >> 2) & 1


def set_wce(c, on):
    """MODE SELECT (10) of the caching page with WCE set or cleared."""
    page = caching_page(c)
    page[0] &= 0x3F  # PS is reserved in MODE SELECT
    page[2] = (page[2] & ~0x04) | (0x04 if on else 0)
    data = bytes(8) + bytes(page)
    st, sense, _ = c.scsi(struct.pack(">BBxxxxxHB", 0x55, 0x10, len(data), 0), data=data)
    check_status("MODE SELECT caching page (WCE=%d)" % on, st, sense)


class Log:
    def __init__(self, path):
        self.f = open(path, "w")

    def line(self, *items):
        self.f.write(" ".join(str(i) for i in items) + "\n")
        self.f.flush()


class Pipe:
    """Commands in flight on one connection: sent without waiting, answered as the target
    goes (R2Ts served, responses logged)."""

    def __init__(self, c, log):
        self.c = c
        self.log = log
        self.inflight = {}  # itt -> (kind "A" or "D", seq, data, lba, n)
        self.counts = {"writes": 0, "fua": 0, "syncs": 0, "immed": 0, "max_inflight": 0}

    def send(self, kind, seq, cdb, data=None, lba=0, n=0):
        c = self.c
        edtl = len(data) if data else 0
        imm = min(edtl, c.first_burst, c.mrdsl) if data and c.immediate else 0
        unsol = min(edtl, c.first_burst) - imm if data and not c.initial_r2t else 0
        bhs = bytearray(c.cmd_bhs(cdb, edtl, write=bool(data), final=unsol == 0))
        itt = struct.unpack(">I", bhs[16:20])[0]
        c.cmd_sn += 1
        self.inflight[itt] = (kind, seq, data, lba, n)
        self.counts["max_inflight"] = max(self.counts["max_inflight"], len(self.inflight))
        c.send(bytes(bhs), data[:imm] if imm else b"")
        if unsol:
            c.dataout(itt, iscsi_min.RSVD, data, imm, unsol)

    def overlaps(self, lba, n):
        return any(k == "A" and lba < l2 + n2 and l2 < lba + n
                   for k, _, _, l2, n2 in self.inflight.values())

    def one(self):
        """Serve one PDU from the target: an R2T, or a response (then True)."""
        c = self.c
        p = c.recv()
        if p.op == iscsi_min.R2T and p.itt in self.inflight:
            data = self.inflight[p.itt][2]
            c.dataout(p.itt, p.u32(20), data, p.u32(40), p.u32(44))
            return False
        if p.op == iscsi_min.NOP_IN and p.u32(20) != iscsi_min.RSVD:
            c.send(struct.pack(">BB14xIIII16x", 0x40 | iscsi_min.NOP_OUT, 0x80, iscsi_min.RSVD,
                               p.u32(20), c.cmd_sn, c.exp_stat_sn))
            return False
        if p.op != iscsi_min.SCSI_RSP or p.itt not in self.inflight:
            return False
        kind, seq, _, _, _ = self.inflight.pop(p.itt)
        if p.bhs[3] != 0:
            sense = p.data[2:] if len(p.data) > 2 else b""
            sys.exit("command %d: status 0x%02x sense %s" % (seq, p.bhs[3], sense.hex()))
        self.log.line(kind, seq)
        return True


def power_cut(args, pipe, delay):
    """With the last commands in flight, SIGKILL qemu delay seconds later; answers that arrive
    before the kill count, as any other."""
    answered = []

    def run():
        try:
            while pipe.inflight:
                if pipe.one():
                    answered.append(1)
        except (OSError, iscsi_min.Closed):
            return  # the guest is gone: no more answers

    pid = int(open(args.kill_pid_file).read()) if args.kill_pid_file else args.kill_pid
    n = len(pipe.inflight)
    t = threading.Thread(target=run, daemon=True)
    t.start()
    time.sleep(delay)
    os.kill(pid, signal.SIGKILL)
    t.join(60)
    print("killed qemu (pid %d) %.0f ms after the last of %d commands in flight went out "
          "(%d answered before)" % (pid, delay * 1000, n, len(answered)))


def do_write(args):
    rng = random.Random(args.seed)
    c = connect(args)
    size, bs = read_capacity(c)
    if bs != args.bs or size != args.size:
        sys.exit("LU is %d bytes of %d-byte blocks, expected %d of %d" %
                 (size, bs, args.size, args.bs))
    if args.set_wce is not None:
        set_wce(c, args.set_wce)
        print("MODE SELECT: caching page WCE=%d" % args.set_wce)
    if args.expect_wce is not None:
        got = wce(c)
        if got != args.expect_wce:
            sys.exit("caching mode page: WCE=%d, expected %d" % (got, args.expect_wce))
        print("caching mode page: WCE=%d as expected" % got)
    nblocks = size // bs
    maxn = max(1, 65536 // bs)
    log = Log(args.log)
    pipe = Pipe(c, log)
    counts = pipe.counts
    t0 = time.monotonic()
    c.sock.settimeout(30.0)
    try:
        for seq in range(1, args.ops + 1):
            # a random depth each time: the target sees 1 to --depth commands at once
            while len(pipe.inflight) >= rng.randint(1, args.depth):
                pipe.one()
            kind = rng.random()
            # The last 40 % of the run sends no SYNCHRONIZE CACHE: FUA alone (or
            # write_through) has to make those writes durable, and the plain ones stay in
            # the volatile cache.
            if kind < 0.12 and seq < args.ops * 0.6:
                immed = int(rng.random() < 0.4)
                log.line("Y", seq, immed)
                cdb = struct.pack(">BBIBHB", 0x35, immed << 1, 0, 0, 0, 0) \
                    if rng.random() < 0.5 else \
                    struct.pack(">BBQIBB", 0x91, immed << 1, 0, 0, 0, 0)
                pipe.send("D", seq, cdb)
                counts["syncs"] += 1
                counts["immed"] += immed
                continue
            n = rng.randint(1, maxn)
            lba = rng.randrange(0, nblocks - n + 1)
            while pipe.overlaps(lba, n):
                pipe.one()
            fua = kind < 0.45 and kind >= 0.12 or (kind < 0.12 and rng.random() < 0.5)
            data = b"".join(payload(lba + i, seq, bs) for i in range(n))
            log.line("S", seq, lba, n, int(fua))
            pipe.send("A", seq, struct.pack(">BBIBHB", 0x2A, 0x08 if fua else 0, lba, 0, n, 0),
                      data, lba, n)
            counts["writes"] += 1
            counts["fua"] += int(fua)
    except (OSError, iscsi_min.Closed) as e:
        sys.exit("a command failed before the power cut: %s" % e)
    # The power cut: qemu dies while the last commands are on their way or being served.
    power_cut(args, pipe, rng.choice([0, 0.001, 0.005, 0.02]))
    secs = time.monotonic() - t0
    print("wrote: %d commands in %.1f s (%d writes, %d of them FUA, %d SYNCHRONIZE CACHE, %d of "
          "them IMMED; up to %d in flight)" %
          (args.ops, secs, counts["writes"], counts["fua"], counts["syncs"], counts["immed"],
           counts["max_inflight"]))
    return 0


def parse_log(path):
    """Writes by sequence: [lba, n, fua, acked, durable, immed]; durable is "" or what made the
    write durable: "fua" or "sync"; immed: a SYNCHRONIZE CACHE with IMMED=1 was sent after it
    was acknowledged and completed (no promise: reported, not required)."""
    writes = {}
    acked = []       # acknowledged, not FUA, not yet covered by a completed sync
    covers = {}      # sync seq -> (immed, the writes acknowledged when it was sent)
    for line in open(path):
        f = line.split()
        if not f:
            continue
        if f[0] == "S":
            writes[int(f[1])] = [int(f[2]), int(f[3]), f[4] == "1", False, "", False]
        elif f[0] == "A":
            w = writes[int(f[1])]
            w[3] = True
            if w[2]:
                w[4] = "fua"
            else:
                acked.append(int(f[1]))
        elif f[0] == "Y":
            covers[int(f[1])] = (len(f) > 2 and f[2] == "1", list(acked))
        elif f[0] == "D":
            immed, ws = covers.pop(int(f[1]), (False, []))
            for s in ws:
                if immed:
                    writes[s][5] = True
                else:
                    writes[s][4] = "sync"
            if not immed:
                done = set(ws)
                acked = [s for s in acked if s not in done]
    return writes


def read_lu(c, size):
    out = bytearray()
    chunk = 256 * 1024
    size_bs = read_capacity(c)
    if size_bs[0] != size:
        sys.exit("LU is %d bytes after the reboot, expected %d" % (size_bs[0], size))
    bs = size_bs[1]
    for off in range(0, size, chunk):
        n = min(chunk, size - off) // bs
        st, sense, d = c.scsi(struct.pack(">BBIBHB", 0x28, 0, off // bs, 0, n, 0),
                              read_len=n * bs)
        check_status("READ at byte %d" % off, st, sense)
        out += d
    return bytes(out)


def do_check(args):
    writes = parse_log(args.log)
    bs = args.bs
    c = connect(args)
    img = read_lu(c, args.size)
    c.logout()
    base = open(args.baseline, "rb").read() if os.path.exists(args.baseline) \
        else bytes(args.size)
    # per block: every write that covered it, and the newest one promised durable
    cover = {}
    immed_only = set()  # blocks whose newest write only an IMMED sync followed
    for seq, (lba, n, fua, acked, durable, immed) in writes.items():
        promised = durable or ("ack" if args.promise == "every-ack" and acked else "")
        for b in range(lba, lba + n):
            cover.setdefault(b, []).append((seq, promised))
            if immed and not promised:
                immed_only.add((b, seq))
    stats = {"blocks": 0, "durable_blocks": 0, "held": 0, "lost": 0, "garbage": 0,
             "newer": 0, "old": 0}
    bad = []
    for b, ws in sorted(cover.items()):
        stats["blocks"] += 1
        got = img[b * bs:(b + 1) * bs]
        floor, why = max(((s, p) for s, p in ws if p), default=(0, ""))
        if floor:
            stats["durable_blocks"] += 1
        seqs = {s for s, _ in ws}
        hseq = None
        if got[:8] == MAGIC:
            mlba, mseq, mbs = struct.unpack(">QQI", got[8:28])
            if mlba == b and mbs == bs and mseq in seqs and got == payload(b, mseq, bs):
                hseq = mseq
        if hseq is None:
            if got == base[b * bs:(b + 1) * bs]:
                if floor:
                    stats["lost"] += 1
                    bad.append("block %d: content from before the run, but write %d to it "
                               "was acknowledged as durable" % (b, floor))
                else:
                    stats["old"] += 1
            else:
                stats["garbage"] += 1
                bad.append("block %d: garbage (no write of this run, not the old content)" % b)
        elif hseq < floor:
            stats["lost"] += 1
            bad.append("block %d: holds write %d, but write %d was acknowledged as durable" %
                       (b, hseq, floor))
        else:
            if floor:
                stats["held"] += 1
                stats["held_" + why] = stats.get("held_" + why, 0) + 1
            if hseq > floor and floor:
                stats["newer"] += 1
    # Blocks no write of the run touched keep their old content.
    for b in range(args.size // bs):
        if b not in cover and img[b * bs:(b + 1) * bs] != base[b * bs:(b + 1) * bs]:
            stats["garbage"] += 1
            bad.append("block %d: changed, but no write of the run touched it" % b)
    # How many acknowledged writes left no trace at all (a promise only under every-ack).
    acked_lost = 0
    for seq, (lba, n, fua, acked, durable, immed) in writes.items():
        if not acked:
            continue
        for b in range(lba, lba + n):
            got = img[b * bs:b * bs + 28]
            if got[:8] == MAGIC and struct.unpack(">QQI", got[8:28])[1] >= seq:
                continue
            acked_lost += 1
            break
    # Writes an IMMED sync alone followed: held or not, no promise either way.
    immed_held = immed_blocks = 0
    for b, seq in immed_only:
        if max(s for s, _ in cover[b]) != seq:
            continue
        immed_blocks += 1
        got = img[b * bs:b * bs + 28]
        immed_held += got[:8] == MAGIC and struct.unpack(">QQI", got[8:28])[1] >= seq
    nacked = sum(1 for w in writes.values() if w[3])
    ndurable = sum(1 for w in writes.values() if w[4] or (args.promise == "every-ack" and w[3]))
    open(args.baseline, "wb").write(img)
    print("checked: %d writes in the log, %d acknowledged, %d promised durable (%s); "
          "%d blocks written, %d under a durable promise: %d held (by FUA %d, by SYNCHRONIZE "
          "CACHE %d, by the ack alone %d), %d lost, %d garbage; %d blocks never made durable "
          "still old; %d acknowledged writes left no trace; %d blocks an IMMED sync alone "
          "followed (no promise): %d held" %
          (len(writes), nacked, ndurable, args.promise, stats["blocks"],
           stats["durable_blocks"], stats["held"], stats.get("held_fua", 0),
           stats.get("held_sync", 0), stats.get("held_ack", 0), stats["lost"],
           stats["garbage"], stats["old"], acked_lost, immed_blocks, immed_held))
    for line in bad[:10]:
        print("  " + line)
    if stats["garbage"]:
        print("FAIL: blocks hold garbage")
        return 1
    if args.expect_lost == "none" and stats["lost"]:
        print("FAIL: writes acknowledged as durable were lost")
        return 1
    if args.expect_lost == "some" and not stats["lost"]:
        print("FAIL: expected this setting to lose writes acknowledged as durable (it does "
              "not flush), but none were lost: the test did not reach the volatile cache")
        return 1
    if args.expect_acked_lost == "none" and acked_lost:
        print("FAIL: %d acknowledged writes were lost" % acked_lost)
        return 1
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("write", "check"):
        p = sub.add_parser(name)
        p.add_argument("--port", type=int, required=True)
        p.add_argument("--iqn", required=True)
        p.add_argument("--bs", type=int, required=True)
        p.add_argument("--size", type=int, required=True)
        p.add_argument("--log", required=True)
    w = sub.choices["write"]
    w.add_argument("--seed", type=int, required=True)
    w.add_argument("--ops", type=int, required=True)
    w.add_argument("--depth", type=int, default=8, help="most commands in flight at once")
    w.add_argument("--kill-pid", type=int)
    w.add_argument("--kill-pid-file")
    w.add_argument("--expect-wce", type=int, choices=(0, 1))
    w.add_argument("--set-wce", type=int, choices=(0, 1))
    k = sub.choices["check"]
    k.add_argument("--baseline", required=True)
    k.add_argument("--promise", choices=("fua-sync", "every-ack"), required=True)
    k.add_argument("--expect-lost", choices=("none", "some"), default="none")
    k.add_argument("--expect-acked-lost", choices=("none", "any"), default="any")
    args = ap.parse_args()
    if args.cmd == "write" and not (args.kill_pid or args.kill_pid_file):
        ap.error("write needs --kill-pid or --kill-pid-file")
    return do_write(args) if args.cmd == "write" else do_check(args)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except socket.timeout:
        sys.exit("timed out waiting for the target")
