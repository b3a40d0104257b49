#!/usr/bin/env python3
"""Record the TCP segments of one lab link for a few seconds and print the last write command's
exchange, so the tunables report can show *why* a setting costs or saves round trips.

usage: sniff.py DEV SECONDS   (run inside the initiator namespace; needs root)

Prints one line per segment of the last SCSI write seen: milliseconds since the command's
header left, direction (-> to the target, <- from it), payload bytes, and what a 48-byte
segment is (iSCSI opcode of a lone PDU header: libiscsi sends a PDU's header and its data as
separate writes).  Outgoing segments are stamped when they leave the device, after the lab's
delay; incoming ones when they arrive.
"""
import socket
import struct
import sys
import time

OPS = {0x01: "SCSI Command", 0x05: "Data-Out header", 0x21: "SCSI Response", 0x31: "R2T",
       0x25: "Data-In"}


def main():
    dev, secs = sys.argv[1], float(sys.argv[2])
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.ntohs(0x0003))
    s.bind((dev, 0))
    s.settimeout(0.1)
    print(f"sniff.py: listening on {dev}", file=sys.stderr, flush=True)
    segs = []
    end = time.monotonic() + secs
    while time.monotonic() < end:
        try:
            pkt, addr = s.recvfrom(70000)
        except socket.timeout:
            continue
        t = time.monotonic()
        if len(pkt) < 54 or pkt[12:14] != b"\x08\x00" or pkt[23] != 6:
            continue
        ihl = (pkt[14] & 15) * 4
        total = struct.unpack("!H", pkt[16:18])[0]
        tcp = 14 + ihl
        doff = (pkt[tcp + 12] >> 4) * 4
        plen = total - ihl - doff
        if plen <= 0:
            out = addr[2] == socket.PACKET_OUTGOING
            segs.append((t, out, 0, None))
            continue
        op = pkt[tcp + doff] & 0x3F if plen == 48 else None
        segs.append((t, addr[2] == socket.PACKET_OUTGOING, plen, op))
    # the last write: from the last command header out to the response that follows it
    starts = [i for i, g in enumerate(segs) if g[1] and g[3] == 0x01]
    for first in reversed(starts):
        resp = [i for i in range(first, len(segs)) if not segs[i][1] and segs[i][3] == 0x21]
        if resp:
            break
    else:
        print("no complete write command seen")
        return 1
    t0 = segs[first][0]
    for t, out, plen, op in segs[first:resp[0] + 1]:
        what = OPS.get(op, f"opcode {op:#x}") if op is not None else ("ACK" if not plen else "data")
        print(f"{(t - t0) * 1e3:8.2f} ms  {'->' if out else '<-'}  {plen:6d} B  {what}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
