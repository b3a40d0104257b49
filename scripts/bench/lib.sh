# Helpers the scripts/bench/ measurements share (sourced, not run).

# Free loopback ports: the tests' picker (pick_port VAR), below the kernel's ephemeral range,
# so a port found free cannot become some client's source port before the daemon binds it.
. tests/integration/lib/ports.sh

# Wait until the utgtd writing LOG listens (TRIES tenths of a second, default 300: valgrind
# needs more); print the log and exit if it never does.
bench_wait_listening() { # log [tries]
	for _ in $(seq "${2:-300}"); do grep -q "listening on" "$1" && return 0; sleep 0.1; done
	echo "utgtd did not start"
	cat "$1"
	exit 1
}
