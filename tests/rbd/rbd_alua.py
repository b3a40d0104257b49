"""One SCSI question to one gateway of a shared RBD LU, for tests/rbd/gateways.sh:

  rbd_alua.py HOST PORT IQN rtpg         -> "1:active 2:nonoptimized" (group:state, by id)
  rbd_alua.py HOST PORT IQN tpgs         -> the INQUIRY TPGS field (3: implicit and explicit)
  rbd_alua.py HOST PORT IQN write LBA    -> "good", or "sense K/ASC/ASCQ"
  rbd_alua.py HOST PORT IQN stpg GROUP   -> SET TARGET PORT GROUPS: GROUP active/optimized;
                                            "good" or "sense K/ASC/ASCQ"
  rbd_alua.py HOST PORT IQN ua-after GROUP SECONDS
        opens a session, clears its UNIT ATTENTIONs, asks for GROUP active/optimized, then
        reads until ASYMMETRIC ACCESS STATE CHANGED (2A/06) arrives on that session: "2a/06"
        or "none" after SECONDS

UNIT ATTENTIONs pending on a fresh session (power on, state changed) are cleared first.
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
    else:
        sys.exit("unknown question " + what)


main()
