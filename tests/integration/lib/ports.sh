# Free loopback ports for test daemons (sourced, not run): different per test process, so
# tests running at once do not collide.

port_listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# pick_port VAR: a free port into VAR, different per test process and per call (not run in a
# subshell, so the counter advances).
_next_port=$((20000 + ($$ % 2000) * 10))
pick_port() {
	while port_listening "$_next_port" || ss -Htan "sport = :$_next_port" | grep -q .; do
		_next_port=$((_next_port + 1))
	done
	printf -v "$1" %s "$_next_port"
	_next_port=$((_next_port + 1))
}
