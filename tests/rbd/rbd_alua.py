"""One SCSI question to one gateway of a shared RBD LU, for tests/rbd/suite_gateways.sh:

  rbd_alua.py HOST PORT IQN rtpg         -> "1:active 2:nonoptimized" (group:state, by id)
  rbd_alua.py HOST PORT IQN tpgs         -> the INQUIRY TPGS field (3: implicit and explicit)
  rbd_alua.py HOST PORT IQN write LBA    -> "good", or "sense K/ASC/ASCQ"
  rbd_alua.py HOST PORT IQN stpg GROUP   -> SET TARGET PORT GROUPS: GROUP active/optimized;
                                            "good" or "sense K/ASC/ASCQ"
  rbd_alua.py HOST PORT IQN ua-after GROUP SECONDS
        opens a session, clears its UNIT ATTENTIONs, asks for GROUP active/optimized, then
        reads until ASYMMETRIC ACCESS STATE CHANGED (2A/06) arrives on that session: "2a/06"
        or "none" after SECONDS

  rbd_alua.py HOST PORT IQN keys         -> PERSISTENT RESERVE IN, READ KEYS: "a1 b1" (hex, sorted)
  rbd_alua.py HOST PORT IQN register KEY -> REGISTER AND IGNORE EXISTING KEY (hex): "good"...
  rbd_alua.py HOST PORT IQN reserve-ea KEY  registers KEY, then RESERVE Exclusive Access
  rbd_alua.py HOST PORT IQN clear KEY    -> registers KEY, then CLEAR
  rbd_alua.py HOST PORT IQN read LBA     -> "good", "conflict" or "sense K/ASC/ASCQ"

Each call is a new session from a new initiator port, so a new I_T nexus.  UNIT ATTENTIONs
pending on a fresh session (power on, state changed) are cleared first.
"""
import os
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integration"))
from iscsi_min import Conn, sense_of  # noqa: E402

STATES = {0: "active", 1: "nonoptimized", 2: "standby", 3: "unavailable", 0xE: "offline",
          0xF: "transitioning"}



def verdict(st, sense):
    if st == 0:
        return "good"
    if st == 0x18:
        return "conflict"
    s = sense_of(sense)
    return "sense %x/%02x/%02x" % s if s else "status %d" % st


def rtpg(c):
    cdb = struct.pack(">BBxxxxIxx", 0xA3, 0x0A, 4096)
    st, sense, data = c.scsi(cdb, read_len=4096)
    if st != 0:
        return verdict(st, sense)
    n, off, groups = struct.unpack(">I", data[:4])[0] + 4, 4, {}
    while off + 8 <= n:
        state, gid, ports = data[off] & 0xF, struct.unpack(">H", data[off + 2:off + 4])[0], data[off + 7]
        groups[gid] = STATES.get(state, hex(state))
        off += 8 + 4 * ports
    return " ".join("%d:%s" % (g, groups[g]) for g in sorted(groups))


def stpg(c, group):
    param = bytes(4) + struct.pack(">BxH", 0, group)
    cdb = struct.pack(">BBxxxxIxx", 0xA4, 0x0A, len(param))
    st, sense, _ = c.scsi(cdb, data=param)
    return verdict(st, sense)


def prout(c, sa, rk, sark, typ=0):
    cdb = struct.pack(">BBB2xIB", 0x5F, sa, typ, 24, 0)
    st, sense, _ = c.scsi(cdb, data=struct.pack(">QQ4xB3x", rk, sark, 0))
    return verdict(st, sense)


def keys(c):
    st, sense, data = c.scsi(struct.pack(">BB5xHB", 0x5E, 0, 4096, 0), read_len=4096)
    if st != 0:
        return verdict(st, sense)
    n = struct.unpack(">I", data[4:8])[0] // 8
    return " ".join(sorted("%x" % struct.unpack(">Q", data[8 + 8 * i:16 + 8 * i])[0]
                           for i in range(n)))


def pr_question(c, what, arg):
    if what == "keys":
        return keys(c)
    if what == "read":
        st, sense, _ = c.scsi(struct.pack(">BBIBHB", 0x28, 0, int(arg), 0, 1, 0), read_len=512)
        return verdict(st, sense)
    key = int(arg, 16)
    r = prout(c, 6, 0, key)  # REGISTER AND IGNORE EXISTING KEY
    if r != "good" or what == "register":
        return r
    if what == "reserve-ea":
        return prout(c, 1, key, 0, 3)
    return prout(c, 3, key, 0)  # CLEAR


def main():
    host, port, iqn, what = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    c = Conn(host, port)
    c.login("iqn.2026-12.org.utgt:rbd-alua-%d" % os.getpid(), iqn)
    c.clear_ua()
    if what == "rtpg":
        print(rtpg(c))
    elif what == "tpgs":
        st, sense, data = c.scsi(bytes([0x12, 0, 0, 0, 36, 0]), read_len=36)
        print((data[5] >> 4) & 3 if st == 0 else verdict(st, sense))
    elif what == "write":
        print(verdict(*c.write10(int(sys.argv[5]), os.urandom(512))[:2]))
    elif what == "stpg":
        print(stpg(c, int(sys.argv[5])))
    elif what == "ua-after":
        r = stpg(c, int(sys.argv[5]))
        if r != "good":
            print("stpg: " + r)
            return
        end = time.monotonic() + float(sys.argv[6])
        while time.monotonic() < end:
            st, sense, _ = c.scsi(bytes([0x00] * 6))  # TEST UNIT READY
            if st == 2 and sense_of(sense) == (6, 0x2A, 0x06):
                print("2a/06")
                return
            time.sleep(0.1)
        print("none")
    elif what in ("keys", "register", "reserve-ea", "clear", "read"):
        print(pr_question(c, what, sys.argv[5] if len(sys.argv) > 5 else None))
    else:
        sys.exit("unknown question " + what)


main()
