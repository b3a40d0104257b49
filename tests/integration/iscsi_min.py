"""A minimal iSCSI initiator for utgt's integration tests, written from RFC 7143.

It speaks just enough to log in (optionally with digests), run SCSI commands with immediate
data, unsolicited Data-Out and R2T, and send hand-made (malformed) PDUs.  Blocking sockets
with timeouts; no error recovery: a test that needs a fresh session makes a new one.
"""
import socket
import struct

# ---------------------------------------------------------------- CRC32C (RFC 3720 B.4)
_T = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ (0x82F63B78 if _c & 1 else 0)
    _T.append(_c)


def crc32c(data, crc=0xFFFFFFFF):
    for b in data:
        crc = _T[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def digest(data):
    return struct.pack("<I", crc32c(data))


assert digest(bytes(32)) == bytes.fromhex("aa36918a")

def sense_of(sense):
    """(key, asc, ascq) of fixed or descriptor format sense data; None when there is none."""
    if len(sense) < 14:
        return None
    if sense[0] & 0x7F in (0x72, 0x73):
        return sense[1] & 0xF, sense[2], sense[3]
    return sense[2] & 0xF, sense[12], sense[13]


# ---------------------------------------------------------------- opcodes
NOP_OUT, SCSI_CMD, TMF_REQ, LOGIN_REQ, TEXT_REQ, DATA_OUT, LOGOUT_REQ = 0, 1, 2, 3, 4, 5, 6
NOP_IN, SCSI_RSP, TMF_RSP, LOGIN_RSP, TEXT_RSP, DATA_IN, LOGOUT_RSP = (
    0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26)
R2T, ASYNC, REJECT = 0x31, 0x32, 0x3F
RSVD = 0xFFFFFFFF


def pad4(n):
    return (4 - n % 4) % 4


def kv(d):
    return b"".join(b"%s=%s\0" % (k.encode(), str(v).encode()) for k, v in d)


def parse_kv(data):
    out = {}
    for item in data.split(b"\0"):
        if b"=" in item:
            k, v = item.split(b"=", 1)
            out[k.decode()] = v.decode(errors="replace")
    return out


class Closed(Exception):
    pass


class PDU:
    def __init__(self, bhs, data=b""):
        self.bhs = bhs
        self.data = data

    op = property(lambda s: s.bhs[0] & 0x3F)
    flags = property(lambda s: s.bhs[1])
    itt = property(lambda s: struct.unpack(">I", s.bhs[16:20])[0])

    def u32(self, off):
        return struct.unpack(">I", self.bhs[off:off + 4])[0]


# Waits for an answer or a close are bounded, not timed: the target answers in milliseconds,
# and the bounds (30 s, 20 s) only decide how long a real failure takes to show, generous
# for a loaded machine.  A test that checks for silence sets its own short timeout.
class Conn:
    def __init__(self, host, port, timeout=30.0):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.hd = self.dd = False
        self.itt = 1
        self.cmd_sn = 1
        self.exp_stat_sn = 0
        self.max_cmd_sn = 1
        self.tsih = 0
        self.mrdsl = 8192          # what the target accepts per PDU
        self.first_burst = 65536
        self.max_burst = 262144
        self.initial_r2t = True
        self.immediate = True

    # ------------------------------------------------------------ raw PDUs
    def send_raw(self, raw):
        self.sock.sendall(raw)

    def build(self, bhs, data=b"", hd=None, dd=None):
        hd = self.hd if hd is None else hd
        dd = self.dd if dd is None else dd
        bhs = bytearray(bhs)
        bhs[5:8] = len(data).to_bytes(3, "big")
        out = bytes(bhs)
        if hd:
            out += digest(bytes(bhs))
        if data:
            padded = data + bytes(pad4(len(data)))
            out += padded
            if dd:
                out += digest(padded)
        return out

    def send(self, bhs, data=b""):
        self.send_raw(self.build(bhs, data))

    def _read(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise Closed("connection closed by the target")
            buf += chunk
        return buf

    def recv(self):
        bhs = self._read(48)
        if self.hd:
            if self._read(4) != digest(bhs):
                raise Closed("bad header digest from the target")
        dsl = int.from_bytes(bhs[5:8], "big")
        data = b""
        if dsl:
            padded = self._read(dsl + pad4(dsl))
            if self.dd and self._read(4) != digest(padded):
                raise Closed("bad data digest from the target")
            data = padded[:dsl]
        p = PDU(bhs, data)
        if p.op not in (R2T,) and not (p.op == DATA_IN and not (p.flags & 1)):
            if not (p.op == NOP_IN and p.u32(20) != RSVD):
                self.exp_stat_sn = p.u32(24) + 1
        self.max_cmd_sn = p.u32(32)
        return p

    def closed(self, timeout=20.0):
        """True when the target closes the connection within timeout (data is drained)."""
        self.sock.settimeout(timeout)
        try:
            while True:
                if not self.sock.recv(65536):
                    return True
        except (socket.timeout, TimeoutError):
            return False
        except (ConnectionResetError, BrokenPipeError):
            return True

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def next_itt(self):
        self.itt += 1
        return self.itt

    # ------------------------------------------------------------ login
    def login_pdu(self, keys, csg, nsg, transit=True, isid=b"\x80\x00\x00\x42\x00\x01"):
        flags = (0x80 if transit else 0) | csg << 2 | (nsg if transit else 0)
        bhs = struct.pack(">BBBB4x6sHIHHII16x", 0x43, flags, 0, 0, isid, self.tsih,
                          self.itt, 0, 0, self.cmd_sn, self.exp_stat_sn)
        self.send_raw(self.build(bhs, keys, hd=False, dd=False))
        p = self.recv_login()
        return p

    def recv_login(self):
        save = self.hd, self.dd
        self.hd = self.dd = False
        try:
            return self.recv()
        finally:
            self.hd, self.dd = save

    def login(self, iname, tname=None, digests=False, op=None, isid=b"\x80\x00\x00\x42\x00\x01",
              mrdsl=262144):
        """Full login; returns the status (0 = success)."""
        sec = [("InitiatorName", iname)]
        sec += [("TargetName", tname), ("SessionType", "Normal")] if tname else \
            [("SessionType", "Discovery")]
        sec += [("AuthMethod", "None")]
        p = self.login_pdu(kv(sec), 0, 1, isid=isid)
        st = p.bhs[36] << 8 | p.bhs[37]
        if st:
            return st
        keys = op or [("HeaderDigest", "CRC32C" if digests else "None"),
                      ("DataDigest", "CRC32C" if digests else "None"),
                      ("InitialR2T", "No"), ("ImmediateData", "Yes"),
                      ("MaxBurstLength", 262144), ("FirstBurstLength", 65536),
                      ("MaxRecvDataSegmentLength", mrdsl), ("MaxOutstandingR2T", 1),
                      ("DefaultTime2Wait", 2), ("DefaultTime2Retain", 0),
                      ("ErrorRecoveryLevel", 0), ("MaxConnections", 1),
                      ("DataPDUInOrder", "Yes"), ("DataSequenceInOrder", "Yes")]
        p = self.login_pdu(kv(keys), 1, 3, isid=isid)
        st = p.bhs[36] << 8 | p.bhs[37]
        if st:
            return st
        got = parse_kv(p.data)
        self.mrdsl = int(got.get("MaxRecvDataSegmentLength", 8192))
        self.first_burst = int(got.get("FirstBurstLength", 65536))
        self.max_burst = int(got.get("MaxBurstLength", 262144))
        self.initial_r2t = got.get("InitialR2T", "Yes") == "Yes"
        self.immediate = got.get("ImmediateData", "Yes") == "Yes"
        if not (p.flags & 0x80 and p.flags & 3 == 3):
            return -1
        self.tsih = struct.unpack(">H", p.bhs[14:16])[0]
        self.hd = got.get("HeaderDigest") == "CRC32C"
        self.dd = got.get("DataDigest") == "CRC32C"
        return 0

    # ------------------------------------------------------------ full feature phase
    def nop(self, data=b""):
        itt = self.next_itt()
        bhs = struct.pack(">BB14xIIII16x", NOP_OUT, 0x80, itt, RSVD, self.cmd_sn,
                          self.exp_stat_sn)
        self.cmd_sn += 1
        self.send(bhs, data)
        while True:
            p = self.recv()
            if p.op == NOP_IN and p.itt == itt:
                return p

    def cmd_bhs(self, cdb, edtl, read=False, write=False, final=True, itt=None, cmd_sn=None,
                lun=0):
        flags = (0x80 if final else 0) | (0x40 if read else 0) | (0x20 if write else 0) | 1
        lunb = struct.pack(">Q", (lun & 0xFF) << 48)
        bhs = struct.pack(">BB6x8sIIII", SCSI_CMD, flags, lunb,
                          itt if itt is not None else self.next_itt(), edtl,
                          cmd_sn if cmd_sn is not None else self.cmd_sn, self.exp_stat_sn)
        return bhs + cdb.ljust(16, b"\0")

    def dataout(self, itt, ttt, buf, off, length, datasn_fn=None):
        sn = 0
        while length:
            n = min(length, self.mrdsl)
            dsn = datasn_fn(sn) if datasn_fn else sn
            bhs = struct.pack(">BB14xIIIIIII4x", DATA_OUT, 0x80 if n == length else 0, itt, ttt,
                              0, self.exp_stat_sn, 0, dsn, off)
            self.send(bhs, buf[off:off + n])
            sn += 1
            off += n
            length -= n

    def scsi(self, cdb, read_len=0, data=None, lun=0, datasn_fn=None):
        """Run one command.  Returns (status, sense, data_in)."""
        edtl = len(data) if data is not None else read_len
        write = data is not None and len(data) > 0
        imm = unsol = 0
        if write:
            if self.immediate:
                imm = min(edtl, self.first_burst, self.mrdsl)
            if not self.initial_r2t:
                unsol = min(edtl, self.first_burst) - imm
        bhs = bytearray(self.cmd_bhs(cdb, edtl, read=read_len > 0, write=write,
                                     final=unsol == 0, lun=lun))
        itt = struct.unpack(">I", bhs[16:20])[0]
        self.cmd_sn += 1
        self.send(bytes(bhs), data[:imm] if imm else b"")
        if unsol:
            self.dataout(itt, RSVD, data, imm, unsol, datasn_fn)
        din = bytearray(read_len)
        while True:
            p = self.recv()
            if p.op == R2T:
                self.dataout(itt, p.u32(20), data, p.u32(40), p.u32(44), datasn_fn)
            elif p.op == DATA_IN:
                off = p.u32(40)
                din[off:off + len(p.data)] = p.data
                if p.flags & 1:
                    return p.bhs[3], b"", bytes(din)
            elif p.op == SCSI_RSP:
                sense = b""
                if len(p.data) >= 2:
                    sl = struct.unpack(">H", p.data[:2])[0]
                    sense = p.data[2:2 + sl]
                return p.bhs[3], sense, bytes(din)
            elif p.op == REJECT:
                return -1, p.data, b""

    def read10(self, lba, blocks, bs=512):
        cdb = struct.pack(">BBIBHB", 0x28, 0, lba, 0, blocks, 0)
        return self.scsi(cdb, read_len=blocks * bs)

    def write10(self, lba, data, bs=512, datasn_fn=None):
        cdb = struct.pack(">BBIBHB", 0x2A, 0, lba, 0, len(data) // bs, 0)
        return self.scsi(cdb, data=data, datasn_fn=datasn_fn)

    def tur(self):
        return self.scsi(b"\0" * 6)

    def clear_ua(self):
        for _ in range(8):
            st, sense, _ = self.tur()
            if st == 0 or not sense or (sense[2] & 0xF) != 6:
                return

    def tmf(self, function, lun=0, ref_itt=RSVD):
        """A task management request, immediate (function 1 ABORT TASK, 5 LOGICAL UNIT
        RESET, ...); returns the response code (0: function complete)."""
        itt = self.next_itt()
        lunb = struct.pack(">Q", (lun & 0xFF) << 48)
        bhs = struct.pack(">BB2x4x8sIIIIII8x", 0x40 | TMF_REQ, 0x80 | function, lunb, itt,
                          ref_itt, self.cmd_sn, self.exp_stat_sn, self.cmd_sn, 0)
        self.send(bhs)
        while True:
            p = self.recv()
            if p.op == TMF_RSP and p.itt == itt:
                return p.bhs[2]

    def logout(self):
        bhs = struct.pack(">BB14xI4xII16x", 0x40 | LOGOUT_REQ, 0x80, self.next_itt(),
                          self.cmd_sn, self.exp_stat_sn)
        self.send(bhs)
        while True:
            p = self.recv()
            if p.op == LOGOUT_RSP:
                return p.bhs[2]
