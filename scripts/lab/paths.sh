#!/usr/bin/env bash
# The multipath lab's wiring: an initiator namespace and a target namespace joined by N veth
# pairs, each pair its own subnet and each shaped on both directions (htb rate R plus a fixed
# delay D), so that one path is the bottleneck the way one HCA or one PCIe slot was in seed 001.
#
#   paths.sh up N [--rate R] [--delay D]   build (replaces a lab of the same name)
#   paths.sh shape [--rate R] [--delay D]  reshape every path of the running lab
#   paths.sh link I down|up                take path I (1..N) down or bring it back
#   paths.sh down                          remove everything `up` made (idempotent)
#   paths.sh status                        print namespaces, addresses, qdiscs, delay helpers
#   paths.sh env                           print shell assignments (LAB_INI= LAB_TGT= ...)
#
# R is a tc rate (200mbit, 1gbit); D a delay (0, 500us, 1ms, 1.5ms).  Path i joins
# 10.77.i.1/24 (initiator side, device labi) to 10.77.i.2/24 (target side, device labi); the
# addresses exist only inside the two namespaces, nothing is added to the host's namespace.
#
# The delay is netem's when the kernel has sch_netem.  Otherwise (this machine's kernel is
# built without it) iptables queues every packet leaving a lab link to NFQUEUE and lab-delay
# (scripts/lab/lab_delay.c) holds it for D; `status` and the campaign report say which is used.
#
# Environment: LAB_NAME (utgt-lab; must start with utgt-lab) names the namespaces
# $LAB_NAME-ini and $LAB_NAME-tgt; LAB_DELAY_BIN (build/lab-delay); LAB_DELAY_MODE
# (auto|netem|nfqueue); LAB_STATE (/run/utgt-lab) holds the lab's state and helper logs;
# LAB_DELAY_STATS_DIR (the state directory) receives each delay helper's statistics at its exit.
set -euo pipefail

LAB_NAME=${LAB_NAME:-utgt-lab}
case "$LAB_NAME" in
utgt-lab*) ;;
*) echo "paths.sh: LAB_NAME must start with utgt-lab (got '$LAB_NAME')" >&2; exit 2 ;;
esac
[[ "$LAB_NAME" =~ ^[A-Za-z0-9_.-]+$ ]] || { echo "paths.sh: bad LAB_NAME" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
LAB_DELAY_BIN=${LAB_DELAY_BIN:-$ROOT/build/lab-delay}
LAB_DELAY_MODE=${LAB_DELAY_MODE:-auto}
LAB_STATE=${LAB_STATE:-/run/utgt-lab}
INI=$LAB_NAME-ini
TGT=$LAB_NAME-tgt
STATE=$LAB_STATE/$LAB_NAME
MAXPATHS=16

die() { echo "paths.sh: $*" >&2; exit 1; }
ns_exists() { ip netns list | awk '{print $1}' | grep -qx "$1"; }

# Delay text -> microseconds ("0", "250us", "1ms", "1.5ms", "0.001s").
delay_us() {
	awk -v d="$1" 'BEGIN {
		if (d ~ /^[0-9]+(\.[0-9]+)?us$/) { v = d; sub(/us$/, "", v); printf "%d", v + 0.5; exit 0 }
		if (d ~ /^[0-9]+(\.[0-9]+)?ms$/) { v = d; sub(/ms$/, "", v); printf "%d", v * 1000 + 0.5; exit 0 }
		if (d ~ /^[0-9]+(\.[0-9]+)?s$/)  { v = d; sub(/s$/, "", v);  printf "%d", v * 1e6 + 0.5; exit 0 }
		if (d ~ /^0+$/) { printf "0"; exit 0 }
		exit 1 }'
}

check_rate() {
	[[ "$1" =~ ^[0-9]+(\.[0-9]+)?([kKmMgG])?bit$ ]] || die "rate '$1' is not a tc rate like 200mbit"
}

# The helpers run inside the namespaces, so a namespace outlives `ip netns del` while one is
# alive: stop every process in our two namespaces (they are all ours: only the lab starts
# processes there), politely first.
stop_ns_procs() {
	local ns=$1 pids
	ns_exists "$ns" || return 0
	pids=$(ip netns pids "$ns" 2>/dev/null || true)
	[ -n "$pids" ] || return 0
	# shellcheck disable=SC2086
	kill -TERM $pids 2>/dev/null || true
	for _ in $(seq 50); do
		pids=$(ip netns pids "$ns" 2>/dev/null || true)
		[ -z "$pids" ] && return 0
		sleep 0.1
	done
	# shellcheck disable=SC2086
	kill -KILL $pids 2>/dev/null || true
}

cmd_down() {
	local ns
	for ns in "$INI" "$TGT"; do
		stop_ns_procs "$ns"
		if ns_exists "$ns"; then
			ip netns del "$ns" || die "cannot delete namespace $ns"
		fi
	done
	rm -rf "$STATE"
}

# Which delay mechanism this kernel offers (probed once per lab, on a scratch qdisc).
pick_delay_mode() {
	case "$LAB_DELAY_MODE" in
	netem | nfqueue) echo "$LAB_DELAY_MODE"; return ;;
	auto) ;;
	*) die "LAB_DELAY_MODE must be auto, netem or nfqueue" ;;
	esac
	if tc -n "$INI" qdisc add dev lab1 root handle 9: netem delay 1ms 2>/dev/null; then
		tc -n "$INI" qdisc del dev lab1 root
		echo netem
	else
		echo nfqueue
	fi
}

# htb at rate R on the device's egress, with the delay below it when netem does the delay.
shape_dev() {
	local ns=$1 dev=$2 rate=$3 us=$4 mode=$5
	tc -n "$ns" qdisc del dev "$dev" root 2>/dev/null || true
	tc -n "$ns" qdisc add dev "$dev" root handle 1: htb default 1
	# quantum/burst sized for 64 KiB GSO packets (veth keeps TSO on), so a big packet never
	# stalls the class and the average rate is what htb enforces.
	tc -n "$ns" class add dev "$dev" parent 1: classid 1:1 htb rate "$rate" ceil "$rate" \
		burst 128k cburst 128k quantum 65536
	if [ "$mode" = netem ] && [ "$us" -gt 0 ]; then
		tc -n "$ns" qdisc add dev "$dev" parent 1:1 handle 10: netem delay "${us}us" limit 100000
	else
		tc -n "$ns" qdisc add dev "$dev" parent 1:1 handle 10: pfifo limit 10000
	fi
}

start_delay_helper() {
	local ns=$1 us=$2
	[ -x "$LAB_DELAY_BIN" ] || die "$LAB_DELAY_BIN not built (make $LAB_DELAY_BIN)"
	ip netns exec "$ns" iptables -w -t mangle -A POSTROUTING -o 'lab+' -j NFQUEUE --queue-num 0
	# own session: a Ctrl-C meant for the campaign must not take the links' delay away
	# while the campaign is still logging out of its targets
	setsid ip netns exec "$ns" "$LAB_DELAY_BIN" --queue 0 --delay-us "$us" \
		--stats "${LAB_DELAY_STATS_DIR:-$STATE}/delay-$ns.stats" >"$STATE/delay-$ns.log" 2>&1 &
	echo $! >"$STATE/delay-$ns.pid"
	# bound: it binds the queue in well under a second; a failure ends the process
	for _ in $(seq 50); do
		grep -q "lab-delay: queue" "$STATE/delay-$ns.log" 2>/dev/null && return 0
		kill -0 "$(cat "$STATE/delay-$ns.pid")" 2>/dev/null || break
		sleep 0.1
	done
	die "delay helper in $ns did not start: $(cat "$STATE/delay-$ns.log")"
}

stop_delay_helpers() {
	local ns pid
	for ns in "$INI" "$TGT"; do
		if [ -f "$STATE/delay-$ns.pid" ]; then
			pid=$(cat "$STATE/delay-$ns.pid")
			kill -TERM "$pid" 2>/dev/null || true
			for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
			kill -KILL "$pid" 2>/dev/null || true
			rm -f "$STATE/delay-$ns.pid"
		fi
		if ns_exists "$ns"; then
			ip netns exec "$ns" iptables -w -t mangle -F POSTROUTING 2>/dev/null || true
		fi
	done
}

apply_shape() {
	local n=$1 rate=$2 delay=$3 us mode i
	check_rate "$rate"
	us=$(delay_us "$delay") || die "delay '$delay' is not like 0, 500us, 1ms"
	mode=$(cat "$STATE/delay_mode" 2>/dev/null || true)
	[ -n "$mode" ] || { mode=$(pick_delay_mode); echo "$mode" >"$STATE/delay_mode"; }
	stop_delay_helpers
	for i in $(seq 1 "$n"); do
		shape_dev "$INI" "lab$i" "$rate" "$us" "$mode"
		shape_dev "$TGT" "lab$i" "$rate" "$us" "$mode"
	done
	if [ "$mode" = nfqueue ] && [ "$us" -gt 0 ]; then
		start_delay_helper "$INI" "$us"
		start_delay_helper "$TGT" "$us"
	fi
	echo "$rate" >"$STATE/rate"
	echo "$delay" >"$STATE/delay"
}

cmd_up() {
	local n=$1 rate=$2 delay=$3 i
	if ! [[ "$n" =~ ^[0-9]+$ ]] || [ "$n" -lt 1 ] || [ "$n" -gt $MAXPATHS ]; then
		die "up: N must be 1..$MAXPATHS"
	fi
	check_rate "$rate"
	delay_us "$delay" >/dev/null || die "delay '$delay' is not like 0, 500us, 1ms"
	cmd_down
	# A half-built lab is torn down again, whatever stops us.
	trap 'cmd_down' EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	mkdir -p "$STATE"
	ip netns add "$INI"
	ip netns add "$TGT"
	for ns in "$INI" "$TGT"; do
		ip -n "$ns" link set lo up
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.disable_ipv6=1
	done
	for i in $(seq 1 "$n"); do
		ip link add "lab$i" netns "$INI" type veth peer name "lab$i" netns "$TGT"
		ip -n "$INI" addr add "10.77.$i.1/24" dev "lab$i"
		ip -n "$TGT" addr add "10.77.$i.2/24" dev "lab$i"
		ip -n "$INI" link set "lab$i" up
		ip -n "$TGT" link set "lab$i" up
	done
	echo "$n" >"$STATE/paths"
	apply_shape "$n" "$rate" "$delay"
	# every path answers before we say it is up: a TCP connect to a closed port is refused
	# by the far end, which proves the route both ways (no ping on minimal systems)
	for i in $(seq 1 "$n"); do
		reachable "10.77.$i.2" || die "path $i: 10.77.$i.2 does not answer"
	done
	trap - EXIT INT TERM
	echo "paths.sh: $n path(s) $INI <-> $TGT, $rate, delay $delay ($(cat "$STATE/delay_mode"))"
}

reachable() {
	local out
	out=$(ip netns exec "$INI" timeout 3 bash -c "exec 3<>/dev/tcp/$1/9" 2>&1) && return 0
	case "$out" in *refused*) return 0 ;; esac
	return 1
}

need_lab() {
	if ! [ -f "$STATE/paths" ] || ! ns_exists "$INI" || ! ns_exists "$TGT"; then
		die "no lab named $LAB_NAME is up (paths.sh up N first)"
	fi
}

cmd_shape() {
	need_lab
	apply_shape "$(cat "$STATE/paths")" "$1" "$2"
	echo "paths.sh: reshaped to $1, delay $2 ($(cat "$STATE/delay_mode"))"
}

cmd_link() {
	local i=$1 how=$2 n
	need_lab
	n=$(cat "$STATE/paths")
	if ! [[ "$i" =~ ^[0-9]+$ ]] || [ "$i" -lt 1 ] || [ "$i" -gt "$n" ]; then
		die "link: path 1..$n"
	fi
	case "$how" in
	down | up) ip -n "$INI" link set "lab$i" "$how" ;;
	*) die "link I down|up" ;;
	esac
}

cmd_env() {
	need_lab
	echo "LAB_INI=$INI"
	echo "LAB_TGT=$TGT"
	echo "LAB_PATHS=$(cat "$STATE/paths")"
	echo "LAB_RATE=$(cat "$STATE/rate")"
	echo "LAB_DELAY=$(cat "$STATE/delay")"
	echo "LAB_DELAY_MECH=$(cat "$STATE/delay_mode")"
}

cmd_status() {
	local ns
	if ! [ -f "$STATE/paths" ]; then
		echo "no lab named $LAB_NAME"
		return 0
	fi
	cmd_env
	for ns in "$INI" "$TGT"; do
		echo "== $ns"
		ip -n "$ns" -br addr show | grep '^lab' || true
		tc -n "$ns" qdisc show | grep -v 'noqueue' || true
		if [ -f "$STATE/delay-$ns.pid" ]; then
			echo "delay helper pid $(cat "$STATE/delay-$ns.pid")"
		fi
	done
}

usage() {
	sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
}

[ $# -ge 1 ] || usage
[ "$(id -u)" -eq 0 ] || die "needs root (network namespaces)"
cmd=$1
shift
rate=200mbit
delay=0
parse_shape() {
	while [ $# -gt 0 ]; do
		case "$1" in
		--rate) rate=${2:?--rate needs a value}; shift 2 ;;
		--rate=*) rate=${1#--rate=}; shift ;;
		--delay) delay=${2:?--delay needs a value}; shift 2 ;;
		--delay=*) delay=${1#--delay=}; shift ;;
		*) die "unknown argument '$1'" ;;
		esac
	done
}
case "$cmd" in
up)
	[ $# -ge 1 ] || usage
	n=$1
	shift
	parse_shape "$@"
	cmd_up "$n" "$rate" "$delay"
	;;
shape)
	# what is not given stays as it is
	rate=$(cat "$STATE/rate" 2>/dev/null || echo "$rate")
	delay=$(cat "$STATE/delay" 2>/dev/null || echo "$delay")
	parse_shape "$@"
	cmd_shape "$rate" "$delay"
	;;
link) [ $# -eq 2 ] || usage; cmd_link "$1" "$2" ;;
down) cmd_down ;;
status) cmd_status ;;
env) cmd_env ;;
*) usage ;;
esac
