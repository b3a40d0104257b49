#!/usr/bin/env python3
"""WRITEs whose iSCSI Expected Data Transfer Length differs from the CDB's transfer length.

usage: iscsi_write_edtl.py HOST PORT TARGET_IQN

LUN 0 has 512-byte blocks, LUN 1 4096-byte blocks.  An expected length that ends inside a
logical block must be refused before anything is written: CHECK CONDITION, ILLEGAL REQUEST,
INVALID FIELD IN COMMAND INFORMATION UNIT (0E/03), with the OVERFLOW residual (RFC 7143
11.4.5.2), and the blocks must read back unchanged.  An expected length of whole blocks
shorter than the CDB writes exactly those blocks (GOOD, OVERFLOW residual), and one longer
than the CDB writes only what the CDB asks for (GOOD, UNDERFLOW residual); those are what
libiscsi's Write10Residuals checks.  Prints one line per check; exit status 0 only if all
passed.
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import iscsi_min as im  # noqa: E402

HOST, PORT, IQN = sys.argv[1], int(sys.argv[2]), sys.argv[3]
failures = []
OVERFLOW, UNDERFLOW = 0x04, 0x02


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def command(c, cdb, edtl, data, lun):
    """One WRITE-class command with `data` (len == edtl) sent as immediate data, then
    Data-Out on R2T.  Returns (status, sense, residual flags, residual count)."""
    imm = min(edtl, c.first_burst, c.mrdsl) if c.immediate else 0
    bhs = c.cmd_bhs(cdb, edtl, write=edtl > 0, final=True, lun=lun)
    itt = struct.unpack(">I", bhs[16:20])[0]
    c.cmd_sn += 1
    c.send(bhs, data[:imm])
    while True:
        p = c.recv()
        if p.op == im.R2T:
            c.dataout(itt, p.u32(20), data, p.u32(40), p.u32(44))
        elif p.op == im.SCSI_RSP:
            sense = b""
            if len(p.data) >= 2:
                sl = struct.unpack(">H", p.data[:2])[0]
                sense = p.data[2:2 + sl]
            return p.bhs[3], sense, p.flags & (OVERFLOW | UNDERFLOW), p.u32(44)
        else:
            raise RuntimeError("unexpected PDU opcode %#x" % p.op)


def write10_cdb(lba, blocks):
    return struct.pack(">BBIBHB", 0x2A, 0, lba, 0, blocks, 0)


def fill(c, lun, bs, lba, blocks, byte):
    st, sense, _ = c.scsi(write10_cdb(lba, blocks), data=bytes([byte]) * (blocks * bs), lun=lun)
    if st != 0:
        raise RuntimeError("fill of lun %d failed: status %r sense %s" % (lun, st, sense.hex()))


def read(c, lun, bs, lba, blocks):
    cdb = struct.pack(">BBIBHB", 0x28, 0, lba, 0, blocks, 0)
    st, sense, data = c.scsi(cdb, read_len=blocks * bs, lun=lun)
    if st != 0:
        raise RuntimeError("read of lun %d failed: status %r sense %s" % (lun, st, sense.hex()))
    return data


def refused(c, name, lun, bs, cdb, blocks, edtl):
    """The command must be refused with 0E/03 and an OVERFLOW residual, writing nothing."""
    fill(c, lun, bs, 8, blocks, ord("a"))
    st, sense, rflags, resid = command(c, cdb, edtl, b"b" * edtl, lun)
    key = sense[2] & 0x0F if len(sense) > 13 else None
    asc = (sense[12], sense[13]) if len(sense) > 13 else None
    check(st == 0x02 and key == 0x05 and asc == (0x0E, 0x03),
          "%s: CHECK CONDITION, ILLEGAL REQUEST, INVALID FIELD IN COMMAND IU "
          "(status %#x, key %r, asc/ascq %r)" % (name, st, key, asc))
    want = blocks * bs - edtl
    check(rflags == OVERFLOW and resid == want,
          "%s: OVERFLOW residual %d (flags %#x, residual %d)" % (name, want, rflags, resid))
    back = read(c, lun, bs, 8, blocks)
    check(back == b"a" * (blocks * bs), "%s: the LU's data is unchanged" % name)


def main():
    c = im.Conn(HOST, PORT)
    st = c.login("iqn.2026-12.org.utgt:write-edtl", IQN)
    if st:
        print("FAIL login: %04x" % st)
        return 1
    for lun in (0, 1):  # the power-on UNIT ATTENTIONs of each LU
        for _ in range(8):
            st, sense, _ = c.scsi(b"\0" * 6, lun=lun)
            if st == 0:
                break

    # the 4096-byte LU, one block sent as 512 bytes (what libiscsi's ProutReserve.Access*
    # helpers send on any LU)
    refused(c, "4096-byte LU, WRITE(10) of 1 block, EDTL 512", 1, 4096, write10_cdb(8, 1), 1, 512)
    refused(c, "4096-byte LU, WRITE(10) of 2 blocks, EDTL 6144", 1, 4096, write10_cdb(8, 2), 2,
            6144)
    refused(c, "512-byte LU, WRITE(10) of 1 block, EDTL 200", 0, 512, write10_cdb(8, 1), 1, 200)
    refused(c, "512-byte LU, WRITE AND VERIFY(10) of 2 blocks, EDTL 700", 0, 512,
            struct.pack(">BBIBHB", 0x2E, 0, 8, 0, 2, 0), 2, 700)
    refused(c, "512-byte LU, ORWRITE(16) of 1 block, EDTL 100", 0, 512,
            struct.pack(">BBQIBB", 0x8B, 0, 8, 1, 0, 0), 1, 100)

    # whole blocks: GOOD, the blocks the expected length covers are written, no others
    fill(c, 1, 4096, 8, 2, ord("a"))
    st, sense, rflags, resid = command(c, write10_cdb(8, 2), 4096, b"b" * 4096, 1)
    check(st == 0 and rflags == OVERFLOW and resid == 4096,
          "4096-byte LU, 2 blocks with EDTL 4096: GOOD, OVERFLOW 4096 (status %#x, flags %#x, "
          "residual %d)" % (st, rflags, resid))
    check(read(c, 1, 4096, 8, 2) == b"b" * 4096 + b"a" * 4096,
          "4096-byte LU: the first block written, the second unchanged")
    fill(c, 0, 512, 8, 2, ord("a"))
    st, sense, rflags, resid = command(c, write10_cdb(8, 1), 1024, b"b" * 1024, 0)
    check(st == 0 and rflags == UNDERFLOW and resid == 512,
          "512-byte LU, 1 block with EDTL 1024: GOOD, UNDERFLOW 512 (status %#x, flags %#x, "
          "residual %d)" % (st, rflags, resid))
    check(read(c, 0, 512, 8, 2) == b"b" * 512 + b"a" * 512,
          "512-byte LU: only the CDB's block written")

    st, _, _ = c.tur()
    check(st == 0, "the session still works after the refusals")
    c.logout()
    print("%d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
