#!/usr/bin/env bash
# suite-timeout: 120
# make install / make uninstall (docs/install.md): the staged file list, an administrator's
# scst.conf kept on reinstall and uninstall; the systemd unit passes `systemd-analyze verify`;
# every man page renders without a warning; the installed utgtd tells systemd READY=1 only once
# its portal listens and STOPPING=1 on SIGTERM (the sd_notify datagrams, read from a socket of
# our own as systemd would), then exits 0.
set -u
cd "$(dirname "$0")/../.."
. tests/integration/iscsi_lib.sh
for c in systemd-analyze man groff python3; do
	command -v $c >/dev/null || { echo "$c missing (scripts/deps.sh installs it)"; exit 1; }
done
W=$(mktemp -d /tmp/utgt-install.XXXXXX)
ILIB_DIRS+=("$W")
MAKE=${MAKE:-make}
mk() { $MAKE -s --no-print-directory "$@" >"$W/make.log" 2>&1 || { cat "$W/make.log"; return 1; }; }

echo "-- make install DESTDIR PREFIX=/usr: the file list"
D=$W/stage
mk install DESTDIR="$D" PREFIX=/usr || { bad "make install"; exit 1; }
(cd "$D" && find . -mindepth 1 -not -type d | sort) >"$W/files"
{
	printf '%s\n' ./etc/utgt/scst.conf ./usr/bin/utgt-bench ./usr/lib/systemd/system/utgtd.service \
		./usr/sbin/utgtadm ./usr/sbin/utgtd ./usr/share/man/man1/utgt-bench.1 \
		./usr/share/man/man5/utgt-scst.conf.5 ./usr/share/man/man8/utgtadm.8 \
		./usr/share/man/man8/utgtd.8 ./usr/share/doc/utgt/examples/README.md
	for f in conf/*.conf; do echo "./usr/share/doc/utgt/examples/${f#conf/}"; done
} | sort >"$W/want"
if diff "$W/want" "$W/files" >"$W/diff"; then ok "$(wc -l <"$W/files") files where they belong"; else bad "file list (want vs got):"; cat "$W/diff"; fi
[ "$(stat -c %a "$D/var/lib/utgt")" = 700 ] && ok "state dir /var/lib/utgt, mode 0700" || bad "state dir: $(stat -c %a "$D/var/lib/utgt" 2>&1)"
[ "$(stat -c %a "$D/usr/sbin/utgtd")" = 755 ] && [ "$(stat -c %a "$D/usr/lib/systemd/system/utgtd.service")" = 644 ] &&
	ok "modes: programs 0755, unit 0644" || bad "modes"
grep -q '^ExecStart=/usr/sbin/utgtd -f -c ${UTGTD_CONFIG} -s /var/lib/utgt$' "$D/usr/lib/systemd/system/utgtd.service" &&
	ok "unit runs /usr/sbin/utgtd -f" || bad "unit ExecStart: $(grep ExecStart "$D/usr/lib/systemd/system/utgtd.service")"
"$D/usr/sbin/utgtd" --check -c "$D/etc/utgt/scst.conf" >/dev/null 2>"$W/check" && ok "the installed scst.conf passes --check" ||
	{ bad "installed scst.conf: $(cat "$W/check")"; }

v=$("$D/usr/sbin/utgtd" -V | cut -d' ' -f2)
[ -n "$v" ] && [ "$("$D/usr/sbin/utgtadm" --version)" = "utgtadm $v" ] &&
	[ "$("$D/usr/bin/utgt-bench" --version)" = "utgt-bench-$v" ] &&
	ok "utgtd, utgtadm and utgt-bench print one version ($v)" ||
	bad "versions: utgtd '$v', $("$D/usr/sbin/utgtadm" --version), $("$D/usr/bin/utgt-bench" --version)"
dv=$(sed -n '1s/^utgt (\([^)]*\)).*/\1/p' debian/changelog)
[ "${dv%%-*}" = "$(cat VERSION)" ] && ok "debian/changelog's version $dv is VERSION's" ||
	bad "debian/changelog says $dv, VERSION $(cat VERSION)"

echo "-- reinstall and uninstall keep the administrator's scst.conf"
echo "# mine" >>"$D/etc/utgt/scst.conf"
mk install DESTDIR="$D" PREFIX=/usr && grep -q '^# mine$' "$D/etc/utgt/scst.conf" && ok "reinstall kept it" || bad "reinstall overwrote scst.conf"
mk uninstall DESTDIR="$D" PREFIX=/usr || bad "make uninstall"
left=$(cd "$D" && find . -mindepth 1 -not -type d | sort | tr '\n' ' ')
[ "$left" = "./etc/utgt/scst.conf " ] && [ -d "$D/var/lib/utgt" ] && ok "uninstall left only scst.conf and the state dir" || bad "after uninstall: $left"

echo "-- the unit: systemd-analyze verify (ExecStart must exist: installed under a prefix of its own)"
P=$W/prefix
mk install PREFIX="$P/usr" SYSCONFDIR="$P/etc" STATEDIR="$P/var/lib/utgt" || bad "make install PREFIX=$P"
if MANPATH=$P/usr/share/man systemd-analyze verify "$P/usr/lib/systemd/system/utgtd.service" >"$W/verify" 2>&1 && ! [ -s "$W/verify" ]; then
	ok "systemd-analyze verify: clean"
else
	bad "systemd-analyze verify:"; cat "$W/verify"
fi

echo "-- man pages render without warnings"
for m in "$D"/../prefix/usr/share/man/man*/*; do
	out=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$m" 2>&1 >/dev/null; groff -man -ww -z "$m" 2>&1)
	[ -z "$out" ] && ok "$(basename "$m")" || { bad "$(basename "$m"):"; echo "$out"; }
done

echo "-- sd_notify: READY=1 after the portal listens, STOPPING=1 on SIGTERM"
pick_port PORT
cat >"$W/n.conf" <<CONF
HANDLER ramdisk {
	DEVICE rd0 {
		size_mb 8
	}
}
TARGET_DRIVER iscsi {
	listen 127.0.0.1:$PORT
	TARGET iqn.2026-12.org.utgt:install {
		enabled 1
		LUN 0 rd0
	}
}
CONF
# systemd's side of the protocol: a datagram socket; each message appended to a file, and at
# READY=1 the daemon's log is copied, so the test sees what was logged before READY
python3 - "$W/notify.sock" "$W/notify.log" "$W/utgtd.log" "$W/log-at-ready" <<'PY' &
import socket, sys, shutil, os
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
open(sys.argv[2] + ".bound", "w").close()
while True:
    m = s.recv(4096).decode()
    if "READY=1" in m.split("\n"):
        shutil.copy(sys.argv[3], sys.argv[4])
    with open(sys.argv[2], "a") as f:
        f.write(m.replace("\n", " ") + "\n")
    if "STOPPING=1" in m:
        break
PY
py=$!
ILIB_PIDS+=("$py")
# waits below poll for their condition, bounded at 60 s (a loaded machine is slow, never this slow)
for _ in $(seq 600); do [ -e "$W/notify.log.bound" ] && break; sleep 0.1; done
NOTIFY_SOCKET=$W/notify.sock "$P/usr/sbin/utgtd" -f -c "$W/n.conf" -s "$W/state" >"$W/utgtd.log" 2>&1 &
UT_PID=$!
ILIB_PIDS+=("$UT_PID")
for _ in $(seq 600); do grep -q READY=1 "$W/notify.log" 2>/dev/null && break; kill -0 $UT_PID 2>/dev/null || break; sleep 0.1; done
grep -q "^READY=1 STATUS=serving$" "$W/notify.log" 2>/dev/null && ok "READY=1 received" || bad "no READY=1: $(cat "$W/notify.log" "$W/utgtd.log" 2>&1)"
grep -q "listening on 127.0.0.1:$PORT" "$W/log-at-ready" 2>/dev/null && ok "the portal listened before READY" || bad "READY before the portal: $(cat "$W/log-at-ready" 2>&1)"
python3 -c "import socket; socket.create_connection(('127.0.0.1', $PORT), 5).close()" && ok "portal accepts at READY" || bad "portal refuses"
kill -TERM $UT_PID
rc=1
for _ in $(seq 600); do kill -0 $UT_PID 2>/dev/null || { wait $UT_PID; rc=$?; break; }; sleep 0.1; done
[ $rc = 0 ] && ok "SIGTERM: exit 0" || bad "SIGTERM: exit $rc: $(tail -5 "$W/utgtd.log")"
grep -q "^STOPPING=1$" "$W/notify.log" && ok "STOPPING=1 received" || bad "no STOPPING=1: $(cat "$W/notify.log")"
wait $py 2>/dev/null

[ $FAILS = 0 ] && echo "install: all checks passed" || { echo "install: $FAILS check(s) failed"; exit 1; }
