#!/usr/bin/env python3
"""A TCP forwarder used as a killable path: utgt-bench reaches the target through it, and a
test kills it (SIGKILL) to drop that path's connections mid-run, or restarts it to let the
path come back.  Usage: tcp_proxy.py LISTEN_PORT TARGET_HOST TARGET_PORT [READY_FILE]
Only ever binds 127.0.0.1."""
import os
import socket
import sys
import threading


def pump(src, dst):
    try:
        while True:
            data = src.recv(1 << 16)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def main():
    lport, thost, tport = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", lport))
    ls.listen(64)
    if len(sys.argv) > 4:
        with open(sys.argv[4], "w") as f:
            f.write(str(os.getpid()))
    while True:
        c, _ = ls.accept()
        try:
            t = socket.create_connection((thost, tport))
        except OSError:
            c.close()
            continue
        for s in (c, t):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=pump, args=(c, t), daemon=True).start()
        threading.Thread(target=pump, args=(t, c), daemon=True).start()


if __name__ == "__main__":
    main()
