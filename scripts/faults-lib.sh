# shellcheck shell=bash
# faults-lib.sh: what scripts/test-faults.sh does to servers, links and workload processes (sourced, never
# run). Every wait is on a condition, polled every 0.1 s for at most $FAULT_TIMEOUT seconds; the only sleeps
# are the lengths of a fault itself (how long a link stays cut or slow).
#
# The server of the single-server runs lives in a network namespace of the run's own (netns_up): a veth pair
# on a private /30 subnet (10.231.N.0/30, N free on this machine), the server listening on the namespace's
# end (.2) and reached from the host through it, so cutting or slowing that link (link_cut, link_slow) cuts
# or slows exactly the server's TCP traffic. Its Unix socket (a file, not bound to a namespace) stays reachable
# for setup. Only loopback and this namespace's link are ever touched; netns_down removes both.

FAULT_TIMEOUT=${FAULT_TIMEOUT:-90}
NS="" VETH_HOST="" VETH_NS="" NS_IP="" NS_SUBNET=""

fault_say() { echo "test-faults: $*" >&2; }
fault_die() { echo "test-faults: error: $*" >&2; exit 1; }

# wait_until "what" command...: polls the command until it succeeds; fails after $FAULT_TIMEOUT seconds.
wait_until() {
    local what=$1 deadline=$((SECONDS + FAULT_TIMEOUT))
    shift
    until "$@"; do
        ((SECONDS < deadline)) || fault_die "timed out after ${FAULT_TIMEOUT}s waiting for $what"
        sleep 0.1
    done
}

# --- the namespace and its link -------------------------------------------------------------------------

netns_up() {
    local n
    NS="cvfaults-$$" VETH_HOST="cvf$$h" VETH_NS="cvf$$n"
    # A /30 no interface of this machine uses yet (another run's namespace, say).
    for n in $(seq $(($$ % 200 + 20)) 250) $(seq 20 250); do
        ip -o addr show | grep -q " 10\.231\.$n\." || break
    done
    NS_SUBNET="10.231.$n" NS_IP="10.231.$n.2"
    ip netns add "$NS"
    ip link add "$VETH_HOST" type veth peer name "$VETH_NS" netns "$NS"
    ip addr add "$NS_SUBNET.1/30" dev "$VETH_HOST"
    ip link set "$VETH_HOST" up
    ip netns exec "$NS" ip addr add "$NS_IP/30" dev "$VETH_NS"
    ip netns exec "$NS" ip link set "$VETH_NS" up
    ip netns exec "$NS" ip link set lo up
    fault_say "namespace $NS: server address $NS_IP over $VETH_HOST"
}

netns_down() {
    [[ -n "$NS" ]] || return 0
    ip link del "$VETH_HOST" 2>/dev/null || true
    ip netns del "$NS" 2>/dev/null || true
    NS=""
}

# link_shape QDISC-ARGUMENTS...: the root qdisc of both ends of the link (tc qdisc replace).
link_shape() {
    tc qdisc replace dev "$VETH_HOST" root "$@" && ip netns exec "$NS" tc qdisc replace dev "$VETH_NS" root "$@"
}

# link_cut: every packet over the link is dropped, both ways (netem loss 100%). Where the kernel has no
# netem (sch_netem), a token bucket whose bucket is smaller than any packet drops every one just the same.
link_cut() {
    if link_shape netem loss 100% 2>/dev/null; then fault_say "link cut (netem loss 100%)"; return; fi
    link_shape tbf rate 1kbit burst 10 limit 10 || return 1
    fault_say "link cut (no netem in this kernel: tbf with a bucket smaller than a packet drops them all)"
}

# link_slow: every packet waits (netem delay 2s). Without netem, a token bucket of 16 kbit/s holds packets
# in its queue behind the ones before them: a congested link whose round trips take seconds under load.
link_slow() {
    if link_shape netem delay 2s 2>/dev/null; then fault_say "link delayed (netem delay 2s)"; return; fi
    link_shape tbf rate 16kbit burst 1600 latency 30s || return 1
    fault_say "link slowed (no netem in this kernel: tbf at 16 kbit/s, packets queue for seconds)"
}

link_heal() {
    tc qdisc del dev "$VETH_HOST" root 2>/dev/null || true
    ip netns exec "$NS" tc qdisc del dev "$VETH_NS" root 2>/dev/null || true
    fault_say "link healed"
}

# --- the server in the namespace ------------------------------------------------------------------------

# ns_server_init DIR: a cluster in DIR/data (as RUN_AS), listening on $NS_IP:5432 (the namespace has ports of
# its own) and on a socket in DIR/sock; the role and database of lib.sh. fsync is off (a killed process
# leaves its writes in the page cache, which is all a process kill tests), synchronous_commit stays on: a
# COMMIT is acknowledged only once its WAL was written.
ns_server_init() {
    local dir=$1
    SERVER_DIR=$dir
    mkdir -p "$dir"
    chown "$RUN_AS": "$dir"
    as_owner mkdir -p "$dir/data" "$dir/sock"
    chmod 700 "$dir/data"
    init_cluster "$PG_BIN" "$dir/data" "$dir"
    # The kernel's default server-side TCP keepalives (two hours), on purpose: a client that gave up on a
    # connection during a partition leaves its backend waiting for input with its transaction's row locks,
    # and the store must end that backend itself before it runs the transaction again (AbandonedAttempt),
    # or the partition run hangs.
    printf '%s\n' "listen_addresses = '$NS_IP'" "unix_socket_directories = '$dir/sock'" "max_connections = 100" \
        "fsync = off" "full_page_writes = off" "log_min_messages = warning" \
        | as_owner tee -a "$dir/data/postgresql.conf" >/dev/null
    echo "host all all $NS_SUBNET.0/30 trust" | as_owner tee -a "$dir/data/pg_hba.conf" >/dev/null
    ns_server_start
    "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir/sock" -p 5432 -U postgres -d postgres \
        -c "create role \"$DB_USER\" login superuser" -c "create database \"$DB_NAME\" owner \"$DB_USER\""
}

ns_server_start() {
    ip netns exec "$NS" runuser -u "$RUN_AS" -- "$PG_BIN/pg_ctl" -D "$SERVER_DIR/data" -l "$SERVER_DIR/server.log" \
        -o "-p 5432" -w -t 60 start >/dev/null || { tail -20 "$SERVER_DIR/server.log" >&2; fault_die "server start"; }
}

ns_server_stop() {
    [[ -n "${SERVER_DIR:-}" && -f "$SERVER_DIR/data/postmaster.pid" ]] || return 0
    as_owner "$PG_BIN/pg_ctl" -D "$SERVER_DIR/data" -m immediate -w -t 60 stop >/dev/null 2>&1 || true
}

# ns_server_kill: SIGKILL to the postmaster and every process it started (by process ID), then a restart,
# which runs crash recovery.
ns_server_kill() {
    local postmaster children
    postmaster=$(head -1 "$SERVER_DIR/data/postmaster.pid")
    children=$(ps -o pid= --ppid "$postmaster" | tr '\n' ' ')
    # shellcheck disable=SC2086 # (the children's IDs are words)
    kill -KILL "$postmaster" $children
    wait_until "the killed postmaster to be gone" eval "! kill -0 $postmaster 2>/dev/null"
    fault_say "server killed (SIGKILL to the postmaster and its $(wc -w <<<"$children") processes)"
    ns_server_start
    fault_say "server restarted after crash recovery"
}
