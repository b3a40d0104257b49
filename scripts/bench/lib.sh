# Helpers the scripts/bench/ measurements share (sourced, not run).

# A free loopback TCP port, from the kernel.
bench_free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Wait until the utgtd writing LOG listens (TRIES tenths of a second, default 300: valgrind
# needs more); print the log and exit if it never does.
bench_wait_listening() { # log [tries]
	for _ in $(seq "${2:-300}"); do grep -q "listening on" "$1" && return 0; sleep 0.1; done
	echo "utgtd did not start"
	cat "$1"
	exit 1
}
