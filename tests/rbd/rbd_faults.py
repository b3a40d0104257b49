"""vdisk_rbd under changes made in the Ceph cluster, seen by an initiator:

L. GET LBA STATUS follows the image's objects (4 MiB): a fresh image is deallocated
   throughout; after a WRITE into object 2 exactly that object is mapped; after an UNMAP of
   the whole object everything is deallocated again.  READ CAPACITY(16) says LBPME and
   LBPRZ and VPD B2 LBPU, LBPWS, LBPRZ and provisioning type thin, as GET LBA STATUS assumes.
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

# L. GET LBA STATUS on the fresh image, before anything else writes to it
OBJ_BLOCKS = (4 << 20) // 512


def lba_status(c, lba):
    cdb = struct.pack(">BBQIxx", 0x9E, 0x12, lba, 4096)
    st, sense, data = c.scsi(cdb, read_len=4096)
    if st != 0:
        fail("GET LBA STATUS from %d: status %s sense %s" % (lba, st, sense_of(sense)))
    n = (struct.unpack(">I", data[:4])[0] - 4) // 16
    return [(struct.unpack(">Q", data[8 + 16 * i:16 + 16 * i])[0],
             struct.unpack(">I", data[16 + 16 * i:20 + 16 * i])[0],
             "mapped" if data[20 + 16 * i] & 0xF == 0 else "deallocated") for i in range(n)]


blocks = before // 512
st, sense, data = c.scsi(bytes([0x9E, 0x10]) + bytes(8) + struct.pack(">I", 32) + bytes(2),
                         read_len=32)
lbp = data[14] & 0xC0 if st == 0 else None
st, sense, b2 = c.scsi(bytes([0x12, 1, 0xB2, 0, 64, 0]), read_len=64)
if lbp != 0xC0 or st != 0 or b2[5] & 0xE4 != 0xE4 or b2[6] & 7 != 2:
    fail("provisioning bits: READ CAPACITY(16) LBPME/LBPRZ %s, VPD B2 byte 5 %#x type %d"
         % (lbp, b2[5] if st == 0 else -1, b2[6] & 7 if st == 0 else -1))
got = lba_status(c, 0)
if got != [(0, blocks, "deallocated")]:
    fail("GET LBA STATUS on a fresh image: %s" % got)
if c.write10(2 * OBJ_BLOCKS + 8, os.urandom(4096))[0] != 0:
    fail("WRITE(10) of 8 blocks into object 2 failed")
got = lba_status(c, 0)
want = [(0, 2 * OBJ_BLOCKS, "deallocated"), (2 * OBJ_BLOCKS, OBJ_BLOCKS, "mapped"),
        (3 * OBJ_BLOCKS, blocks - 3 * OBJ_BLOCKS, "deallocated")]
if got != want:
    fail("GET LBA STATUS after a WRITE into object 2: %s, expected %s" % (got, want))
got_mid = lba_status(c, 2 * OBJ_BLOCKS + 100)
if got_mid[0] != (2 * OBJ_BLOCKS + 100, OBJ_BLOCKS - 100, "mapped"):
    fail("GET LBA STATUS from inside object 2: %s" % got_mid[:2])
unmap = struct.pack(">HH4xQI4x", 22, 16, 2 * OBJ_BLOCKS, OBJ_BLOCKS)
st, sense, _ = c.scsi(struct.pack(">BB5xHx", 0x42, 0, len(unmap)), data=unmap)
if st != 0:
    fail("UNMAP of object 2: status %s sense %s" % (st, sense_of(sense)))
got = lba_status(c, 0)
if got != [(0, blocks, "deallocated")]:
    fail("GET LBA STATUS after an UNMAP of the whole object: %s" % got)
if c.read10(2 * OBJ_BLOCKS + 8, 8)[2] != bytes(4096):
    fail("the unmapped blocks do not read back as zeros (LBPRZ)")
print("ok: GET LBA STATUS follows the objects: fresh image deallocated, WRITE into object 2 -> "
      "blocks %d-%d mapped, UNMAP of it -> deallocated again and zeros; LBPME, LBPRZ, "
      "VPD B2 thin" % (2 * OBJ_BLOCKS, 3 * OBJ_BLOCKS - 1))

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
