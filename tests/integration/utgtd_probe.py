"""What the integration clients read of a running utgtd, and how they report: its memory
from /proc, the admin socket's session listing, one ok/FAIL line per check."""
import json
import subprocess


class Checks:
    """check(cond, what) prints one line; .fails counts the ones that failed."""

    def __init__(self):
        self.fails = 0

    def __call__(self, cond, what):
        print(("ok   " if cond else "FAIL ") + what, flush=True)
        if not cond:
            self.fails += 1


def status_bytes(pid, field):
    """A size field of /proc/PID/status (VmRSS, VmHWM) in bytes; 0 when absent."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def sessions(utgtadm, sock):
    """`utgtadm show sessions --json`: the list of sessions."""
    out = subprocess.run([utgtadm, "-s", sock, "show", "sessions", "--json"],
                         capture_output=True, text=True, timeout=30).stdout
    doc = json.loads(out)
    return doc.get("sessions", doc) if isinstance(doc, dict) else doc
