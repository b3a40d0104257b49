# Free loopback ports for test daemons (sourced, not run): different per test process, so
# tests running at once do not collide.  Every test script picks its ports here.
#
# The ports stay below the kernel's ephemeral range (ip_local_port_range, 32768 and up on
# Debian): a port there can be taken as the source port of any outgoing connection (another
# test's client, a Ceph daemon) between the check and the daemon's bind, and the daemon
# then fails with "Address already in use".

port_listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

_ports_lo=20000
_ports_hi=$(($(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768) - 1))
[ "$_ports_hi" -gt "$_ports_lo" ] 2>/dev/null || _ports_hi=32767
_ports_span=$((_ports_hi - _ports_lo + 1))
_next_port=$((_ports_lo + ($$ * 10) % _ports_span))

# pick_port VAR: a free port into VAR, different per test process and per call (not run in a
# subshell, so the counter advances).  Free: nothing listens there and no socket of any state
# has it as its local port.
pick_port() {
	local tries=0
	while port_listening "$_next_port" || ss -Htan "sport = :$_next_port" | grep -q .; do
		_next_port=$((_ports_lo + (_next_port + 1 - _ports_lo) % _ports_span))
		tries=$((tries + 1))
		if [ "$tries" -ge "$_ports_span" ]; then
			echo "pick_port: no free port in $_ports_lo-$_ports_hi" >&2
			return 1
		fi
	done
	printf -v "$1" %s "$_next_port"
	_next_port=$((_ports_lo + (_next_port + 1 - _ports_lo) % _ports_span))
}
