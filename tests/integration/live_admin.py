#!/usr/bin/env python3
"""A long-lived iSCSI session driven line by line, to watch what live administration does to
a logged-in initiator (tests/integration/live_admin.sh).

usage: live_admin.py HOST PORT TARGET_IQN INITIATOR_IQN [ISID_LAST_BYTE]

Logs in (printing one JSON line with the login status), then reads commands on stdin and
answers each with one JSON line:

  tur LUN            {"status": S, "sense": "KEY/ASC/ASCQ" (hex) or ""}
  luns               {"status": S, "luns": [N, ...]}              REPORT LUNS
  vendor LUN         {"status": S, "sense": ..., "vendor": "..."} INQUIRY
  blocks LUN         {"status": S, "sense": ..., "blocks": N}     READ CAPACITY(16)
  read LUN LBA       {"status": S, "sense": ..., "bytes": N, "first": "hex of 16 bytes"}
  write LUN LBA BYTE {"status": S, "sense": ...}                  one 512-byte block of BYTE
  closed             {"closed": true|false}   whether the target closed the connection
                     (waits up to 60 s for it: a bound, not a delay)
  logout             {"response": R}
"""
import json
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import iscsi_min as im  # noqa: E402

HOST, PORT, IQN, INAME = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
ISID = b"\x80\x00\x00\x42\x00" + bytes([int(sys.argv[5]) if len(sys.argv) > 5 else 7])


def sense_of(sense):
    k = im.sense_of(sense)
    return "%x/%02x/%02x" % k if k else ""


def out(d):
    print(json.dumps(d), flush=True)


c = im.Conn(HOST, PORT)
try:
    out({"login": c.login(INAME, IQN, isid=ISID)})
except Exception as e:  # noqa: BLE001 - the test reads the reason
    out({"login": -1, "why": str(e)})
    sys.exit(0)

for line in sys.stdin:
    w = line.split()
    if not w:
        continue
    try:
        if w[0] == "tur":
            st, sense, _ = c.scsi(b"\0" * 6, lun=int(w[1]))
            out({"status": st, "sense": sense_of(sense)})
        elif w[0] == "luns":
            st, sense, d = c.scsi(struct.pack(">BBxxxxIxx", 0xA0, 0, 4096), read_len=4096)
            n = struct.unpack(">I", d[:4])[0] // 8
            luns = [struct.unpack(">H", d[8 + 8 * i:10 + 8 * i])[0] & 0x3FFF for i in range(n)]
            out({"status": st, "sense": sense_of(sense), "luns": luns})
        elif w[0] == "vendor":
            st, sense, d = c.scsi(struct.pack(">BBBHB", 0x12, 0, 0, 96, 0), read_len=96,
                                  lun=int(w[1]))
            out({"status": st, "sense": sense_of(sense),
                 "vendor": d[8:16].decode(errors="replace").strip() if st == 0 else ""})
        elif w[0] == "blocks":
            st, sense, d = c.scsi(struct.pack(">BBQIBB", 0x9E, 0x10, 0, 32, 0, 0),
                                  read_len=32, lun=int(w[1]))
            out({"status": st, "sense": sense_of(sense),
                 "blocks": struct.unpack(">Q", d[:8])[0] + 1 if st == 0 else 0})
        elif w[0] == "read":
            st, sense, d = c.scsi(struct.pack(">BBIBHB", 0x28, 0, int(w[2]), 0, 1, 0),
                                  read_len=512, lun=int(w[1]))
            out({"status": st, "sense": sense_of(sense), "bytes": len(d) if st == 0 else 0,
                 "first": d[:16].hex() if st == 0 else ""})
        elif w[0] == "write":
            st, sense, _ = c.scsi(struct.pack(">BBIBHB", 0x2A, 0, int(w[2]), 0, 1, 0),
                                  data=bytes([int(w[3])]) * 512, lun=int(w[1]))
            out({"status": st, "sense": sense_of(sense)})
        elif w[0] == "closed":
            out({"closed": c.closed(timeout=60.0)})
        elif w[0] == "logout":
            out({"response": c.logout()})
            break
        else:
            out({"error": "unknown command " + w[0]})
    except (im.Closed, OSError) as e:
        out({"status": -1, "closed": True, "why": str(e)})
