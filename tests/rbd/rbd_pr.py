"""Persistent reservations shared by two utgtd gateways serving one RBD image.

Gateway A (rel_tgt_id 1) and gateway B (rel_tgt_id 2), each its own utgtd on its own
loopback port, export the same image; the state lives in the RADOS object beside it
(scsi/backstore/bs_rbd_pr.c).  Initiator ports: H1 through A ("h1@A") and through B
("h1@B", another I_T nexus), H2 through B.

 1. REGISTER + RESERVE (Write Exclusive) through A are seen through B: READ KEYS, READ
    RESERVATION, READ FULL STATUS (the registration's relative target port is A's, 1, and
    its TransportID names h1's port); WRITE from H2 through B and from h1@B (not registered)
    is RESERVATION CONFLICT, from h1@A GOOD.
 2. PREEMPT through B (H2 takes the reservation from h1): through A READ RESERVATION names
    H2's key, h1@A gets UNIT ATTENTION 2A/05 REGISTRATIONS PREEMPTED (raised on A from B's
    change) and then RESERVATION CONFLICT for a WRITE.
 3. Concurrent REGISTERs: 8 initiator ports through A and 8 through B register at once;
    READ KEYS through either gateway then lists all 16 keys (and H2's).
 4. Figures: PERSISTENT RESERVE OUT (REGISTER, new key each time) through A on the shared
    LU and on an RBD LU only A serves (the difference is the notify round trip to B), the
    same on a vdisk_fileio LU for scale, PR IN through B; alternating, medians of N.
 5. Restarts.  Without APTPL: B restarted, the state is still there (the LU never lost
    power, one port went away).  Both stopped, then started: the state is gone (the LU's
    power on).  With APTPL: both stopped, both started: registrations and
    the reservation are back, REPORT CAPABILITIES says PTPL_A.  (Stopped cleanly: a killed
    gateway's watch stays until the OSD times it out, 30 s, and keeps even non-APTPL state
    until then; see docs/rbd.md.)
 6. SPC-2 and resets across the gateways (the same state object): RESERVE(6) through A makes
    B answer RESERVATION CONFLICT (WRITE, RESERVE(6), RESERVE(10)) and RELEASE through A
    frees B at once; the holder's logout from A frees B; a LOGICAL UNIT RESET through B
    raises 29/03 on A's nexus (and B's) and releases A's RESERVE; a persistent reservation
    survives it; RESERVE while a registration exists elsewhere is a conflict (SPC-4 5.13.3).
 7. libiscsi's iscsi-test-cu ALL.Pr* given both gateways' URLs: its second initiator logs
    in through B, so each two-initiator test (ProutReserve.Access*, .Ownership*, Preempt,
    Clear) has one initiator on each gateway.  An external oracle.  ALL.MultipathIO the
    same way (MultipathIO.Reset: a LU reset through one path, 29/xx on every path).
 8. B stopped (SIGSTOP) while a PR OUT goes through A: A waits the notify timeout (5 s) for
    B's acknowledgement, blocklists B's client and completes GOOD; B, continued, answers
    NOT READY 04/0C (fenced: it cannot act on the old state).

usage: rbd_pr.py UTGTD WORKDIR CEPH_CONF POOL/IMAGE PORT_A PORT_B
Prints "ok: ..." per check and "figure: ..." per measurement; exits 1 at the first failure.
"""
import os
import signal
import socket
import statistics
import struct
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integration"))
from iscsi_min import Conn, sense_of  # noqa: E402

utgtd, work, ceph_conf, spec, port_a, port_b = sys.argv[1:7]
pool, image = spec.split("/")
ports = {"A": int(port_a), "B": int(port_b)}
IQN = "iqn.2026-12.org.utgt:rbdpr"
INI = "iqn.2026-12.org.utgt:host"
N_FIG = int(os.environ.get("PR_FIG_N", "51"))
WE, SA_REG, SA_RES, SA_PREEMPT, SA_REG_IGN = 1, 0, 1, 4, 6
procs = {}
os.makedirs(work, exist_ok=True)


def fail(msg):
    print("FAIL: " + msg)
    for name in list(procs):
        log = os.path.join(work, "gw%s.log" % name)
        if os.path.exists(log):
            print("---- gateway %s log (tail) ----" % name)
            print("".join(open(log).readlines()[-15:]))
    for p in procs.values():
        p.kill()
    sys.exit(1)


# Gateway A also serves LUN 1, a vdisk_fileio LU, and LUN 2, an RBD image only it serves
# (the figures compare a PR OUT there with one on the shared LU, alternately).
# Both gateways call the DEVICE "r": the LU's identity (serial number, NAA designator) comes
# from the DEVICE name, and initiators (multipath, iscsi-test-cu) see one LU only when the
# gateways report the same one.
def conf(name, rtpi):
    solo = ""
    if name == "A":
        solo = ("HANDLER vdisk_fileio {\n\tDEVICE f {\n\t\tfilename %s/f.img\n"
                "\t\tsize_mb 8\n\t}\n}\n" % work)
    return ("HANDLER vdisk_rbd {\n\tDEVICE r {\n\t\tpool %s\n\t\timage %s\n"
            "\t\tceph_conf %s\n\t}\n%s}\n%sTARGET_DRIVER iscsi {\n\tlisten 127.0.0.1:%d\n"
            "\tTARGET %s {\n\t\tenabled 1\n\t\trel_tgt_id %d\n\t\tNopInInterval 0\n"
            "\t\tLUN 0 r\n%s\t}\n}\n"
            % (pool, image, ceph_conf,
               "\tDEVICE solo {\n\t\tpool %s\n\t\timage %s-solo\n\t\tceph_conf %s\n\t}\n"
               % (pool, image, ceph_conf) if solo else "",
               solo, ports[name], IQN, rtpi, "\t\tLUN 1 f\n\t\tLUN 2 solo\n" if solo else ""))


def listening(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def start(name):
    d = os.path.join(work, "gw" + name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "utgtd.conf"), "w") as f:
        f.write(conf(name, 1 if name == "A" else 2))
    log = open(os.path.join(work, "gw%s.log" % name), "a")
    procs[name] = subprocess.Popen(
        [utgtd, "-f", "-c", os.path.join(d, "utgtd.conf"), "--state-dir", d,
         "--admin-socket", os.path.join(d, "utgtd.sock")], stdout=log, stderr=log)
    deadline = time.time() + 60
    while not listening(ports[name]):
        if procs[name].poll() is not None:
            fail("gateway %s exited with %s at start" % (name, procs[name].returncode))
        if time.time() > deadline:
            fail("gateway %s not listening on %d after 60 s" % (name, ports[name]))
        time.sleep(0.1)


def stop(name, sig=signal.SIGTERM, clean=True):
    """Stop a gateway; with clean, SIGTERM must end in exit status 0."""
    p = procs.pop(name)
    p.send_signal(sig)
    try:
        rc = p.wait(60)
    except subprocess.TimeoutExpired:
        p.kill()
        fail("gateway %s did not stop within 60 s of signal %d" % (name, sig))
    if clean and sig == signal.SIGTERM and rc != 0:
        procs[name] = p  # for fail()'s log
        fail("gateway %s exited %d after SIGTERM" % (name, rc))


def restart_both():
    """Both stopped cleanly, then started: the LU's power on, which drops state without
    APTPL (a killed gateway's watch would linger 30 s and keep even that)."""
    stop("A")
    stop("B")
    start("A")
    start("B")


def session(gw, host, isid=1):
    c = Conn("127.0.0.1", ports[gw])
    st = c.login("%s%s" % (INI, host), IQN, isid=b"\x80\x00\x00\x42\x00" + bytes([isid]))
    if st != 0:
        fail("login of host%s through %s: status %#x" % (host, gw, st))
    c.clear_ua()
    return c


def prout(c, sa, rk, sark, typ=0, flags=0, lun=0):
    cdb = struct.pack(">BBB2xIB", 0x5F, sa, typ, 24, 0)
    return c.scsi(cdb, data=struct.pack(">QQ4xB3x", rk, sark, flags), lun=lun)


def prin(c, sa, alloc=4096):
    st, sense, data = c.scsi(struct.pack(">BB5xHB", 0x5E, sa, alloc, 0), read_len=alloc)
    if st != 0:
        fail("PERSISTENT RESERVE IN %d: status %#x sense %s" % (sa, st, sense_of(sense)))
    return data


def good(what, r):
    st, sense, _ = r
    if st != 0:
        fail("%s: status %#x sense %s" % (what, st, sense_of(sense)))


def keys(c):
    d = prin(c, 0)
    gen, n = struct.unpack(">II", d[:8])
    return gen, [struct.unpack(">Q", d[8 + 8 * i:16 + 8 * i])[0] for i in range(n // 8)]


def reservation(c):
    d = prin(c, 1)
    if struct.unpack(">I", d[4:8])[0] == 0:
        return None
    return struct.unpack(">Q", d[8:16])[0], d[21] & 0xF


def full_status(c):
    d = prin(c, 3)
    n, off, out = struct.unpack(">I", d[4:8])[0], 8, []
    while off < 8 + n:
        key = struct.unpack(">Q", d[off:off + 8])[0]
        rtpi = struct.unpack(">H", d[off + 18:off + 20])[0]
        tlen = struct.unpack(">I", d[off + 20:off + 24])[0]
        tid = d[off + 24:off + 24 + tlen]
        out.append((key, rtpi, bool(d[off + 12] & 1), tid[4:].split(b"\0")[0].decode()))
        off += 24 + tlen
    return out


def write(c, lba=0):
    st, sense, _ = c.write10(lba, bytes(512))
    return st


CONFLICT = 0x18
KA, KB = 0xA1A1, 0xB2B2

# ---------------------------------------------------------------- 1. seen and enforced
mk = subprocess.run(["rbd", "-c", ceph_conf, "create", "--size", "16M", "%s-solo" % spec],
                    capture_output=True, text=True)
if mk.returncode != 0 and "exists" not in mk.stderr:
    fail("rbd create %s-solo: %s" % (spec, mk.stderr.strip()))
start("A")
start("B")
a1, b1, b2 = session("A", 1), session("B", 1), session("B", 2)
good("REGISTER h1@A", prout(a1, SA_REG, 0, KA))
good("RESERVE h1@A", prout(a1, SA_RES, KA, 0, WE))
gen, ks = keys(b1)
if ks != [KA]:
    fail("READ KEYS through B: %s, expected [%#x]" % ([hex(k) for k in ks], KA))
if reservation(b1) != (KA, WE):
    fail("READ RESERVATION through B: %s" % (reservation(b1),))
fs = full_status(b2)
want = [(KA, 1, True, "%s1,i,0x800000420001" % INI)]
if fs != want:
    fail("READ FULL STATUS through B: %s, expected %s" % (fs, want))
print("ok: REGISTER + RESERVE through A seen through B (READ KEYS, READ RESERVATION, "
      "FULL STATUS: rel_tgt_id 1, TransportID %s)" % want[0][3])
if write(b2) != CONFLICT or write(b1) != CONFLICT:
    fail("WRITE through B from H2 / unregistered h1@B not RESERVATION CONFLICT")
if write(a1) != 0:
    fail("WRITE from the holder h1@A not GOOD")
print("ok: WRITE through B from an unregistered nexus: RESERVATION CONFLICT; holder through A: GOOD")

# ---------------------------------------------------------------- 2. PREEMPT through B
good("REGISTER H2@B", prout(b2, SA_REG, 0, KB))
good("PREEMPT H2@B", prout(b2, SA_PREEMPT, KB, KA, WE))
res = reservation(session("A", 3))
if res != (KB, WE):
    fail("READ RESERVATION through A after PREEMPT through B: %s" % (res,))
st, sense, _ = a1.tur()
if (st, sense_of(sense)) != (2, (6, 0x2A, 0x05)):
    fail("h1@A after being preempted through B: status %#x sense %s, expected UA 2A/05"
         % (st, sense_of(sense)))
if write(a1) != CONFLICT:
    fail("WRITE from preempted h1@A not RESERVATION CONFLICT")
print("ok: PREEMPT through B seen through A: reservation key %#x, UA 2A/05 on h1@A, "
      "then RESERVATION CONFLICT" % KB)

# ---------------------------------------------------------------- 3. concurrent REGISTERs
errors = []


def reg(gw, host, key):
    try:
        c = session(gw, host)
        st, sense, _ = prout(c, SA_REG, 0, key)
        if st != 0:
            errors.append("host%d@%s: %#x %s" % (host, gw, st, sense_of(sense)))
        c.close()
    except Exception as e:  # noqa: BLE001 - reported as a failure below
        errors.append("host%d@%s: %s" % (host, gw, e))


want = {KB}
threads = []
for i in range(16):
    gw, key = "AB"[i % 2], 0x1000 + i
    want.add(key)
    threads.append(threading.Thread(target=reg, args=(gw, 10 + i, key)))
t0 = time.time()
for t in threads:
    t.start()
for t in threads:
    t.join(120)
took = time.time() - t0
if errors:
    fail("concurrent REGISTERs: %s" % errors)
for gw, c in (("A", session("A", 4)), ("B", b1)):
    _, ks = keys(c)
    if set(ks) != want or len(ks) != len(want):
        fail("READ KEYS through %s after 16 concurrent REGISTERs: %d keys, missing %s"
             % (gw, len(ks), sorted(hex(k) for k in want - set(ks))))
print("ok: 16 concurrent REGISTERs (8 through A, 8 through B, %.2f s): all 17 keys seen "
      "through both gateways" % took)

# ---------------------------------------------------------------- 4. figures


def medians_ms(fns):
    """Median time of each fn, the fns run alternately N_FIG times (a noisy shared machine
    slows them alike)."""
    t = [[] for _ in fns]
    for i in range(N_FIG):
        for k, fn in enumerate(fns):
            t0 = time.perf_counter()
            fn(i)
            t[k].append((time.perf_counter() - t0) * 1000)
    return [statistics.median(x) for x in t]


fa = session("A", 5)
cur = {}
for lun in (0, 1, 2):
    for _ in range(3):  # POWER ON and the like, once per LU
        if fa.scsi(bytes(6), lun=lun)[0] == 0:
            break
    good("REGISTER fig@A on LUN %d" % lun, prout(fa, SA_REG, 0, 0x5000, lun=lun))
    cur[lun] = 0x5000


def rekey(c, lun):
    def step(i):
        new = cur[lun] + 1
        good("REGISTER (new key) on LUN %d" % lun, prout(c, SA_REG, cur[lun], new, lun=lun))
        cur[lun] = new
    return step


shared, solo, local, pin = medians_ms([rekey(fa, 0), rekey(fa, 2), rekey(fa, 1),
                                       lambda i: keys(b1)])
print("figure: PR OUT (REGISTER, new key) through A: RBD LU served by A and B %.2f ms, RBD LU "
      "served by A only %.2f ms (difference, the notify round trip to B: %.2f ms), "
      "vdisk_fileio LU %.2f ms; PR IN (READ KEYS) through B %.2f ms; medians of %d, alternating"
      % (shared, solo, shared - solo, local, pin, N_FIG))
fa.close()
b1.close()
b2.close()

# ---------------------------------------------------------------- 5. restarts
stop("B")
start("B")
b1 = session("B", 1)
_, ks = keys(b1)
if KB not in ks or reservation(b1) != (KB, WE):
    fail("after B restarted: keys %s reservation %s" % ([hex(k) for k in ks], reservation(b1)))
print("ok: without APTPL, B restarted: the registrations and the reservation are still there")
b1.close()
a1.close()
restart_both()
b1 = session("B", 1)
gen, ks = keys(b1)
if ks or reservation(b1) is not None or gen != 0:
    fail("without APTPL, after both gateways restarted: generation %d keys %s reservation %s"
         % (gen, [hex(k) for k in ks], reservation(b1)))
print("ok: without APTPL, both gateways stopped and started: no registrations, generation 0")
a1 = session("A", 1)
good("REGISTER AND IGNORE EXISTING KEY, APTPL, h1@A", prout(a1, SA_REG_IGN, 0, KA, flags=1))
good("RESERVE h1@A", prout(a1, SA_RES, KA, 0, WE))
good("REGISTER h1@B, APTPL", prout(b1, SA_REG, 0, KB, flags=1))
a1.close()
b1.close()
restart_both()
b1 = session("B", 2)
_, ks = keys(b1)
caps = prin(b1, 2)
if sorted(ks) != sorted([KA, KB]) or reservation(b1) != (KA, WE) or not caps[3] & 1:
    fail("with APTPL, after both gateways restarted: keys %s reservation %s "
         "PTPL_A %d" % ([hex(k) for k in ks], reservation(b1), caps[3] & 1))
if write(b1) != CONFLICT:
    fail("with APTPL, after both restarted: WRITE from unregistered H2 through B not "
         "RESERVATION CONFLICT")
print("ok: with APTPL, both gateways stopped and started: keys, reservation and PTPL_A back, "
      "enforced through B")

b1.close()
b1 = session("B", 1)
good("CLEAR through B", prout(b1, 3, KB, 0))
b1.close()

# ---------------------------------------------------------------- 6. SPC-2 and resets
RESERVE6, RELEASE6 = bytes([0x16, 0, 0, 0, 0, 0]), bytes([0x17, 0, 0, 0, 0, 0])
RESERVE10 = bytes([0x56, 0, 0, 0, 0, 0, 0, 0, 0, 0])


def cmd(c, cdb):
    st, sense, _ = c.scsi(cdb)
    return st, sense_of(sense)


def until(what, fn, timeout=30):
    deadline = time.time() + timeout
    while not fn():
        if time.time() > deadline:
            fail("%s: not within %d s" % (what, timeout))
        time.sleep(0.1)


def reset_ua(c, who):
    st, sense = cmd(c, bytes(6))
    if (st, sense) != (2, (6, 0x29, 0x03)):
        fail("%s after a LOGICAL UNIT RESET through B: status %#x sense %s, expected UA 29/03"
             % (who, st, sense))
    c.clear_ua()


h1a, h2b, h3b = session("A", 21), session("B", 22), session("B", 23)
good("RESERVE(6) h1@A", h1a.scsi(RESERVE6))
if write(h2b) != CONFLICT or cmd(h2b, RESERVE6)[0] != CONFLICT or \
        cmd(h3b, RESERVE10)[0] != CONFLICT or write(h1a) != 0:
    fail("RESERVE(6) through A not enforced through B (or refused the holder)")
good("RELEASE(6) h1@A", h1a.scsi(RELEASE6))
if write(h2b) != 0:
    fail("WRITE through B right after RELEASE(6) through A was GOOD: not GOOD")
print("ok: RESERVE(6) through A: WRITE, RESERVE(6), RESERVE(10) through B are RESERVATION "
      "CONFLICT, the holder writes; after RELEASE through A, B writes at once")
good("RESERVE(6) h1@A again", h1a.scsi(RESERVE6))
t0 = time.time()
h1a.logout()
h1a.close()
until("WRITE through B after the holder logged out of A", lambda: write(h2b) == 0)
print("ok: the holder's logout from A (I_T nexus loss) releases its RESERVE on B too "
      "(%.2f s)" % (time.time() - t0))
h1a = session("A", 21)
good("RESERVE(6) h1@A for the reset", h1a.scsi(RESERVE6))
resp = h2b.tmf(5)
if resp != 0:
    fail("LOGICAL UNIT RESET through B: response %d" % resp)
reset_ua(h1a, "h1@A (the RESERVE holder, on the other gateway)")
reset_ua(h3b, "h3@B")
reset_ua(h2b, "h2@B (the requester)")
if write(h2b) != 0:
    fail("WRITE through B after the LU reset: the RESERVE of h1@A was not released")
print("ok: LOGICAL UNIT RESET through B: UA 29/03 on h1@A (other gateway), h2@B and h3@B; "
      "A's RESERVE released")
good("REGISTER h1@A", prout(h1a, SA_REG, 0, KA))
good("RESERVE (PR) h1@A", prout(h1a, SA_RES, KA, 0, WE))
if h2b.tmf(5) != 0:
    fail("second LOGICAL UNIT RESET through B refused")
reset_ua(h1a, "h1@A")
h2b.clear_ua()
h3b.clear_ua()
if reservation(h2b) != (KA, WE) or write(h2b) != CONFLICT or write(h1a) != 0:
    fail("a persistent reservation through A after a LU reset through B: %s"
         % (reservation(h2b),))
if cmd(h3b, RESERVE6)[0] != CONFLICT:
    fail("RESERVE(6) through B by a non-registrant while A's registration exists: not a conflict")
good("CLEAR h1@A", prout(h1a, 3, KA, 0))
print("ok: a persistent reservation through A survives a LU reset through B (still enforced "
      "there); RESERVE(6) by a non-registrant through B is RESERVATION CONFLICT")
for c in (h1a, h2b, h3b):
    c.close()

# ---------------------------------------------------------------- 7. libiscsi's PR tests
# iscsi-test-cu given two URLs logs its second initiator in through the second one: every
# PERSISTENT RESERVE test with two initiators then has one on each gateway.


def cu_across(tests, log):
    """iscsi-test-cu TESTS with URL 1 through A and URL 2 through B: (passed, skipped), or
    fail() when a test failed or the run said nothing."""
    cu = subprocess.run(["iscsi-test-cu", "--dataloss", "--test=" + tests,
                         "iscsi://127.0.0.1:%d/%s/0" % (ports["A"], IQN),
                         "iscsi://127.0.0.1:%d/%s/0" % (ports["B"], IQN)],
                        capture_output=True, text=True, timeout=300)
    open(os.path.join(work, log), "w").write(cu.stdout + cu.stderr)
    summary = [ln.split() for ln in cu.stdout.splitlines() if ln.strip().startswith("tests ")]
    skipped = cu.stdout.count("[SKIPPED]")
    if not summary or summary[-1][4] != "0":
        fail("iscsi-test-cu %s across the gateways: %s (%d skipped)"
             % (tests, " ".join(summary[-1]) if summary else cu.stdout[-500:], skipped))
    return int(summary[-1][3]) - skipped, skipped  # libiscsi counts a skip as a pass


passed, skipped = cu_across("ALL.Pr*", "cu-pr.log")
if passed < 20:
    fail("iscsi-test-cu ALL.Pr* across the gateways: only %d passed" % passed)
print("ok: iscsi-test-cu ALL.Pr* with initiator 1 through A and initiator 2 through B: "
      "%d passed, 0 failed (%d skipped: PreventAllow needs a removable LU)" % (passed, skipped))
passed, skipped = cu_across("ALL.MultipathIO", "cu-mp.log")
if passed < 4 or skipped:
    fail("iscsi-test-cu ALL.MultipathIO across the gateways: %d passed, %d skipped"
         % (passed, skipped))
print("ok: iscsi-test-cu ALL.MultipathIO with path 1 through A and path 2 through B: %d passed, "
      "0 failed (MultipathIO.Reset among them)" % passed)

# ---------------------------------------------------------------- 8. a silent gateway is fenced
h9 = session("B", 9)
a7 = session("A", 7)
procs["B"].send_signal(signal.SIGSTOP)
t0 = time.time()
try:
    r = prout(a7, SA_REG, 0, 0x7777)
finally:
    procs["B"].send_signal(signal.SIGCONT)
took = time.time() - t0
good("REGISTER h7@A while B is stopped", r)
deadline, res = time.time() + 60, None
while time.time() < deadline:
    st, sense, _ = h9.scsi(struct.pack(">BBIBHB", 0x28, 0, 0, 0, 1, 0), read_len=512)
    if st != 0:
        res = (st, sense_of(sense))
        break
    time.sleep(0.2)
if took < 4 or res != (2, (2, 0x04, 0x0C)):
    fail("B stopped (SIGSTOP) during a PR OUT through A: the PR OUT took %.1f s, then B "
         "answered %s (expected about the 5 s notify timeout, then NOT READY 04/0C)"
         % (took, res))
print("ok: B silent during a PR OUT through A: GOOD after %.1f s (the notify timeout), B "
      "blocklisted: its commands end NOT READY 04/0C" % took)
h9.close()
a7.close()
stop("A")
stop("B", clean=False)  # fenced: its last flush fails, and utgtd says so in its status
