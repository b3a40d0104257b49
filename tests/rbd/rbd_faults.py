"""vdisk_rbd under changes made in the Ceph cluster, seen by an initiator:

0. COMPARE AND WRITE done by the cluster (rbd_aio_compare_and_write): a match writes, a
   miscompare reports MISCOMPARE 1D/00 with the offset of the first differing byte.
1. `rbd resize` of the served image: the LU's capacity follows, announced by a UNIT ATTENTION
   CAPACITY DATA HAS CHANGED (2A/09) on a session that was open before.
2. The OSD stopped (SIGSTOP) longer than the client's rados_osd_op_timeout: a write ends in
   ABORTED COMMAND, TIMEOUT ON LOGICAL UNIT (3E/02), which initiators retry; after SIGCONT
   writes are GOOD again.
3. The gateway's client blocklisted (fenced, as another gateway taking the image over would):
   writes end in CHECK CONDITION NOT READY, target port in unavailable state (04/0C), so a
   multipath initiator fails the path over; never GOOD, never a medium error.

usage: rbd_faults.py HOST PORT TARGET_IQN POOL/IMAGE OSD_PID
(CEPH_CONF in the environment; the LU's own ceph_conf sets rados_osd_op_timeout to a few s)
The blocklist is last: the gateway cannot write to the image afterwards.
"""
import json
import os
import signal
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integration"))
from iscsi_min import Conn, sense_of  # noqa: E402

host, port, iqn, spec, osd = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
CEPH = ["-c", os.environ["CEPH_CONF"]]


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def capacity(c):
    st, sense, data = c.scsi(bytes([0x9E, 0x10]) + bytes(8) + struct.pack(">I", 32) + bytes(2),
                             read_len=32)
    if st != 0:
        return None, sense_of(sense)
    last, bsz = struct.unpack(">QI", data[:12])
    return (last + 1) * bsz, None


def ceph(*args):
    return subprocess.run(list(args), check=True, capture_output=True, text=True).stdout


c = Conn(host, port)
c.login("iqn.2026-12.org.utgt:rbd-faults", iqn)
c.clear_ua()
before, _ = capacity(c)
if not before:
    fail("READ CAPACITY(16) failed")

# 0. COMPARE AND WRITE in the cluster
def caw(lba, cmp, new):
    cdb = struct.pack(">BBQ3xBBB", 0x89, 0, lba, 1, 0, 0)
    return c.scsi(cdb, data=cmp + new)


old, new = bytes(range(256)) * 2, b"\x5a" * 512
if c.write10(10, old)[0] != 0:
    fail("WRITE(10) of LBA 10 failed")
bad = bytearray(old)
bad[100] ^= 0xFF
st, sense, _ = caw(10, bytes(bad), new)
info = struct.unpack(">I", sense[3:7])[0] if len(sense) >= 7 and sense[0] & 0x80 else None
if st != 2 or sense_of(sense) != (0xE, 0x1D, 0x00) or info != 100:
    fail("miscompare at byte 100: status %s sense %s INFORMATION %s" % (st, sense_of(sense), info))
if c.read10(10, 1)[2] != old:
    fail("a miscompared COMPARE AND WRITE changed the block")
st, sense, _ = caw(10, old, new)
if st != 0 or c.read10(10, 1)[2] != new:
    fail("matching COMPARE AND WRITE: status %s sense %s" % (st, sense_of(sense)))
print("ok: COMPARE AND WRITE in the cluster: miscompare at byte 100 reported, match written")

# 1. resize in the cluster
after = before + (16 << 20)
ceph("rbd", *CEPH, "resize", "--size", "%dB" % after, spec)
deadline, seen_ua = time.time() + 30, False
while time.time() < deadline:
    st, sense, _ = c.tur()
    if st == 2 and sense_of(sense) == (6, 0x2A, 0x09):
        seen_ua = True
        break
    time.sleep(0.2)
if not seen_ua:
    fail("no UNIT ATTENTION CAPACITY DATA HAS CHANGED within 30 s of rbd resize")
now, s = capacity(c)
if now != after:
    fail("READ CAPACITY says %s bytes after the resize to %d (sense %s)" % (now, after, s))
print("ok: rbd resize %d -> %d bytes: UA 2A/09, READ CAPACITY follows" % (before, after))

# 2. the cluster does not answer
block = b"\xa5" * 512
t0 = time.time()
os.kill(osd, signal.SIGSTOP)
try:
    st, sense, _ = c.write10(3, block)
finally:
    os.kill(osd, signal.SIGCONT)
waited = time.time() - t0
if (st, sense_of(sense)) != (2, (0xB, 0x3E, 0x02)):
    fail("a write to a stopped OSD ended %s %s after %.1f s, expected ABORTED COMMAND 3E/02"
         % (st, sense_of(sense), waited))
deadline = time.time() + 60
while True:
    st, sense, _ = c.write10(3, block)
    if st == 0:
        break
    if time.time() > deadline:
        fail("writes still fail 60 s after SIGCONT: %s %s" % (st, sense_of(sense)))
    time.sleep(0.5)
print("ok: OSD stopped: a write ended ABORTED COMMAND 3E/02 after %.1f s; GOOD again after SIGCONT"
      % waited)

# 3. fence this gateway: blocklist its client (the image's watcher)
status = json.loads(ceph("rbd", *CEPH, "status", "--format", "json", spec))
addrs = [w["address"] for w in status.get("watchers", [])]
if len(addrs) != 1:
    fail("expected one watcher of %s (this gateway), found %s" % (spec, addrs))
ceph("ceph", *CEPH, "osd", "blocklist", "add", addrs[0])
deadline, result = time.time() + 60, None
while time.time() < deadline:
    st, sense, _ = c.write10(1, block)
    if st != 0:
        result = (st, sense_of(sense))
        break
    time.sleep(0.2)
if result is None:
    fail("writes still GOOD 60 s after the gateway's client %s was blocklisted" % addrs[0])
if result != (2, (2, 0x04, 0x0C)):
    fail("a fenced write ended %s, expected CHECK CONDITION NOT READY 04/0C" % (result,))
st, sense, _ = c.write10(2, block)
if (st, sense_of(sense)) != (2, (2, 0x04, 0x0C)):
    fail("the next write after fencing ended %s %s" % (st, sense_of(sense)))
print("ok: blocklisted client %s: writes end NOT READY 04/0C (path unusable)" % addrs[0])
c.close()
