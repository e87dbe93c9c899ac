#!/usr/bin/env bash
# patroni-ctl.sh: the multi-server test setup with a real HA manager: two PostgreSQL nodes that Patroni
# (Debian's patroni 3.0.2) manages, its Raft store (python3-pysyncobj, so no etcd) with a third voter
# (patroni_raft_controller), and pgbouncer in transaction mode that Patroni's on_role_change callback points
# at the new primary; all on 127.0.0.1, under .db/patroni; root-safe. Its commands are those of
# scripts/ha-ctl.sh, so a test that calls $HA_CTL runs unchanged on either setup.
#
# usage: scripts/patroni-ctl.sh <command>
#   up                       creates (if needed) and starts everything; prints the HA_* lines of
#                            scripts/ha-up.sh on stdout (HA_CTL naming this script), nothing else
#   down [--rm]              stops pgbouncer, Patroni and the Raft voter (SIGKILL: see kill_daemon), then both
#                            servers (pg_ctl stop, fast); --rm also deletes .db/patroni
#   status                   prints `primary=<port> standby=<port>` (standby empty if none is streaming)
#   failover [--machine]     SIGKILLs the primary's postmaster, as a crash would, and then only waits: for
#                            Patroni to promote the synchronous standby on its own, for its callback to point
#                            pgbouncer at it, and for Patroni to bring the old node back (pg_rewind) as the
#                            new primary's synchronous standby. With --machine the primary's whole machine
#                            goes away: its Patroni is SIGKILLed first, so the standby's Patroni promotes only
#                            once the leader key has expired (ttl, 20 s); the killed Patroni is started again
#                            after the promote, as when the machine comes back. CV_PATRONI_FAILOVER=machine
#                            makes that the default (for tests that call `failover` alone)
#   restart-standby          has Patroni restart the standby (patronictl restart), waits until it streams in
#                            sync again
#   stop-standby             the standby's machine goes away: SIGKILLs its Patroni and stops its server (fast),
#                            then waits until Patroni on the primary has turned synchronous replication off
#   start-standby            starts it again, waits until it streams in sync
#   pgbouncer-restart        stops and starts pgbouncer (its clients are disconnected)
#   callback <node> <action> <role> <scope>   Patroni's callback (not for people): on_role_change to the
#                            primary points pgbouncer at that node
#
# What Patroni is told (bootstrap.dcs, in .db/patroni/node-*/patroni.yml): synchronous_mode (a commit is
# acknowledged once the synchronous standby has applied it, synchronous_commit = remote_apply, and only that
# standby may be promoted, so no acknowledged commit is lost; while it is down Patroni turns synchronous
# replication off and writes go on), primary_start_timeout = 0 (a crashed primary is failed over at once
# rather than restarted), loop_wait = 1 s and ttl = 20 s (a lost node's leader key expires after 20 s),
# use_pg_rewind (the old primary rejoins without a new base backup), and the TLS and trust rules of
# scripts/ha-ctl.sh (the role corevalue_tls logs in over TLS with a SCRAM password only).
# Ports: eight free ones from 25460 up (or $CV_PATRONI_PORT): both nodes, pgbouncer, both REST APIs and three
# Raft voters, kept in .db/patroni/state. Logs: node-{a,b}/server.log (PostgreSQL, and Patroni's callback),
# node-{a,b}/patroni.log, raft/raft.log, pgbouncer/pgbouncer.log.
# Another suite runs on this setup as scripts/test-ha.sh does: servers=$(scripts/patroni-ctl.sh up), eval
# its HA_NAME=value lines (HA_MULTI_URL, HA_STANDBY_PREFER_URL, HA_PGBOUNCER_URL, HA_TLS_MULTI_URL,
# HA_PRIMARY_URL and HA_STANDBY_URL as they were at `up`, HA_CTL), call "$HA_CTL" failover (or another
# command) while it runs, and scripts/patroni-ctl.sh down --rm at the end, also on failure.
# Every command waits on a condition (polled every 0.1 s, $CV_HA_TIMEOUT seconds at most, 60 by default) and
# takes the setup's lock; progress goes to stderr. As root, every server program runs as the `postgres` OS
# user ($CV_DB_RUN_AS).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
HA="$ROOT/.db/patroni"
STATE="$HA/state"
SCOPE=corevalue
CMD=${1:-}
ME="patroni-ctl"
PORT_A="" PORT_B="" PORT_PGB="" PRIMARY=""
PORT_API_A="" PORT_API_B="" PORT_RAFT_A="" PORT_RAFT_B="" PORT_RAFT_C=""
# shellcheck source=scripts/ha-lib.sh
source "$ROOT/scripts/ha-lib.sh"

PATRONI=${PATRONI:-/usr/bin/patroni}
PATRONICTL=${PATRONICTL:-/usr/bin/patronictl}
RAFT_CONTROLLER=${RAFT_CONTROLLER:-/usr/bin/patroni_raft_controller}

STATE_KEYS=(PORT_A PORT_B PORT_PGB PORT_API_A PORT_API_B PORT_RAFT_A PORT_RAFT_B PORT_RAFT_C PRIMARY)
SETUP="the Patroni setup" UP_HINT="$0 up" DOWN_HINT="$0 down --rm"

api_port_of() { if [[ $1 == a ]]; then echo "$PORT_API_A"; else echo "$PORT_API_B"; fi; }

# --- processes ------------------------------------------------------------------------------------------

# daemon_pid name: the pid of a daemon this script started (its pid file under $HA/run), if it is alive.
daemon_pid() {
    local pid
    pid=$(cat "$HA/run/$1.pid" 2>/dev/null) || return 1
    [[ "$pid" =~ ^[0-9]+$ ]] && alive "$pid" && grep -qa patroni "/proc/$pid/cmdline" 2>/dev/null && echo "$pid"
}

# start_daemon name log program config: started as RUN_AS in a session of its own (setsid -f: no parent of
# ours stays behind), stdin closed, its output appended to log; its pid goes to $HA/run/name.pid.
start_daemon() {
    local name=$1 log=$2
    shift 2
    daemon_pid "$name" >/dev/null && return 0
    as_owner touch "$log"
    # shellcheck disable=SC2016 # (expanded by the inner shell)
    as_owner setsid -f bash -c 'echo $$ >"$1"; shift; exec "$@"' daemon "$HA/run/$name.pid" "$@" \
        </dev/null >>"$log" 2>&1 9>&-
    wait_for "$name to start" daemon_alive "$name"
}

# kill_daemon name: SIGKILL to its process group (setsid made it the leader: with it go what it was running,
# an initdb, pg_basebackup or pg_rewind, but not the postmaster, which Patroni starts in a session of its
# own), then waits until it is gone. Not SIGTERM: Patroni 3.0.2 exits on SIGTERM by raising SystemExit
# wherever its main thread is, and ignores every later SIGTERM; in two stops of a leader out of five here the
# exception was lost and Patroni ran on. What this script stops needs no decision of Patroni's (the
# standby's machine going away, the whole setup going down): a killed Patroni can neither restart nor
# promote a server, and the servers are then stopped by stop_server.
kill_daemon() {
    local name=$1 pid
    pid=$(daemon_pid "$name") || return 0
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
    wait_for "$name (pid $pid) to exit" dead "$pid"
}

# stop_server node mode: pg_ctl stop of a node's server that no Patroni stops (any more); fails if it did not.
stop_server() {
    node_running "$1" || return 0
    as_owner "$PG_BIN/pg_ctl" -D "$(data_of "$1")" -m "$2" -w -t "$TIMEOUT" stop >/dev/null 2>&1 9>&-
}

daemon_alive() { daemon_pid "$1" >/dev/null; }

postmaster_pid() { head -n 1 "$(data_of "$1")/postmaster.pid" 2>/dev/null; }

# --- configuration --------------------------------------------------------------------------------------

# raft_config self partners...: the raft section every daemon shares (pysyncobj needs a majority: 2 of 3).
raft_config() {
    local self=$1 p
    shift
    echo "raft:"
    echo "  data_dir: $HA/raft/$self"
    echo "  self_addr: 127.0.0.1:$self"
    echo "  partner_addrs:"
    for p in "$@"; do echo "  - 127.0.0.1:$p"; done
}

# write_configs: each node's patroni.yml, the Raft voter's raft.yml, and each node's TLS key and certificate
# (owned by the server's user, as it requires).
write_configs() {
    local n port api raft others d
    as_owner mkdir -p "$HA/raft/$PORT_RAFT_A" "$HA/raft/$PORT_RAFT_B" "$HA/raft/$PORT_RAFT_C"
    {
        echo "# written by scripts/patroni-ctl.sh: the third Raft voter, so that one node alone is not a majority"
        raft_config "$PORT_RAFT_C" "$PORT_RAFT_A" "$PORT_RAFT_B"
        echo "log: {dir: $HA/raft, level: WARNING}"
    } | as_owner tee "$HA/raft/raft.yml" >/dev/null
    for n in a b; do
        port=$(port_of "$n") api=$(api_port_of "$n") d="$HA/node-$n"
        if [[ $n == a ]]; then raft=$PORT_RAFT_A others=("$PORT_RAFT_B" "$PORT_RAFT_C")
        else raft=$PORT_RAFT_B others=("$PORT_RAFT_A" "$PORT_RAFT_C"); fi
        as_owner mkdir -p "$d/sock" "$d/tls"
        as_owner tee "$d/tls/server.crt" <"$TLS_DIR/server.crt" >/dev/null
        as_owner tee "$d/tls/server.key" <"$TLS_DIR/server.key" >/dev/null
        as_owner chmod 600 "$d/tls/server.key"
        cat <<EOF | as_owner tee "$d/patroni.yml" >/dev/null
# written by scripts/patroni-ctl.sh (see its header for why each setting)
scope: $SCOPE
name: node_$n
log: {dir: $d, level: INFO}
restapi:
  listen: 127.0.0.1:$api
  connect_address: 127.0.0.1:$api
$(raft_config "$raft" "${others[@]}")
watchdog: {mode: off}
bootstrap:
  dcs:
    ttl: 20
    loop_wait: 1
    retry_timeout: 5
    primary_start_timeout: 0
    synchronous_mode: true
    postgresql:
      use_pg_rewind: true
      use_slots: true
      remove_data_directory_on_rewind_failure: true
      remove_data_directory_on_diverged_timelines: true
      parameters:
        max_connections: 300
        max_wal_senders: 10
        max_replication_slots: 10
        wal_level: replica
        hot_standby: 'on'
        wal_log_hints: 'on'
        synchronous_commit: remote_apply
        password_encryption: scram-sha-256
        fsync: 'off'
  initdb: [{encoding: UTF8}, {locale: C.UTF-8}]
postgresql:
  listen: 127.0.0.1:$port
  connect_address: 127.0.0.1:$port
  data_dir: $d/data
  bin_dir: $PG_BIN
  pgpass: $d/pgpass
  authentication:
    superuser: {username: postgres}
    replication: {username: postgres}
    rewind: {username: postgres}
  basebackup: {checkpoint: fast}
  callbacks:
    on_role_change: $ROOT/scripts/patroni-ctl.sh callback $n
  parameters:
    unix_socket_directories: $d/sock
    shared_buffers: 128MB
    ssl: 'on'
    ssl_cert_file: $d/tls/server.crt
    ssl_key_file: $d/tls/server.key
    log_min_messages: warning
  pg_hba:
  - hostssl all $TLS_USER 127.0.0.1/32 scram-sha-256
  - host all $TLS_USER all reject
  - local all all trust
  - host all all 127.0.0.1/32 trust
  - host replication all 127.0.0.1/32 trust
EOF
    done
}

start_node() {
    start_daemon "patroni-$1" "$HA/node-$1/server.log" "$PATRONI" "$HA/node-$1/patroni.yml"
}

# --- what the servers say -------------------------------------------------------------------------------

# in_sync primary standby: the standby streams as the synchronous one, has flushed what the primary wrote,
# and Patroni's store names it the synchronous standby (its REST API's /sync answers 200). That last one
# matters: Patroni 3.0.2 sets synchronous_standby_names a loop before it records the standby in its store, and
# a standby that stops in between stays in synchronous_standby_names, so commits wait until it is back.
in_sync() {
    local pport lsn
    pport=$(port_of "$1")
    streams "$pport" "$2" sync || return 1
    lsn=$(q "$pport" "select pg_current_wal_lsn()" 2>/dev/null) || return 1
    caught_up "$pport" "$2" "$lsn" || return 1
    curl -sf -m 3 -o /dev/null "http://127.0.0.1:$(api_port_of "$2")/sync"
}

# pgb_points_at port: pgbouncer's application database is on that port.
pgb_points_at() {
    [[ "$(pgb_admin "show databases" 2>/dev/null | awk -F'|' -v d="$DB_NAME" '$1 == d { print $3 }')" == "$1" ]]
}

# --- commands -------------------------------------------------------------------------------------------

cmd_up() {
    local t0 a p used=()
    t0=$(now)
    [[ -x "$PATRONI" && -x "$RAFT_CONTROLLER" ]] || die "patroni not found; run scripts/install-deps.sh patroni"
    mkdir -p "$HA"
    if [[ $EUID -eq 0 ]]; then
        id "$RUN_AS" >/dev/null 2>&1 || useradd --system --no-create-home "$RUN_AS"
        chown "$RUN_AS": "$HA"
        # The server user must reach the data directories, and this script (the callback), through every parent.
        for a in "$HA" "$ROOT/scripts"; do
            while [[ "$a" != "/" ]]; do chmod o+x "$a" 2>/dev/null || true; a=$(dirname "$a"); done
        done
    fi
    lock
    local state=0
    load_state || state=$?
    ((state != 2)) || exit 1
    if ((state == 1)); then
        p=${CV_PATRONI_PORT:-25460}
        for a in A B PGB API_A API_B RAFT_A RAFT_B RAFT_C; do
            while port_in_use "$p" || [[ " ${used[*]} " == *" $p "* ]]; do p=$((p + 1)); done
            used+=("$p")
            printf -v "PORT_$a" '%s' "$p"
        done
        PRIMARY=a
        save_state
        tls_files
    fi
    as_owner mkdir -p "$HA/run"
    write_configs
    start_daemon raft "$HA/raft/raft.log" "$RAFT_CONTROLLER" "$HA/raft/raft.yml"
    # Node a first, alone, so that it is the one that bootstraps the cluster and the first primary.
    start_node "$PRIMARY"
    wait_for "node $PRIMARY (port $(port_of "$PRIMARY")) to accept writes" accepts_writes "$(port_of "$PRIMARY")"
    probe
    local pport
    pport=$(port_of "$P_NODE")
    # The application role and database (same names as db-up.sh), and the TLS role with its SCRAM password
    # (on stdin, not in psql's arguments).
    [[ -n "$(q "$pport" "select 1 from pg_roles where rolname = '$DB_USER'")" ]] \
        || q "$pport" "create role \"$DB_USER\" login superuser password 'corevalue'" >/dev/null
    [[ -n "$(q "$pport" "select 1 from pg_database where datname = '$DB_NAME'")" ]] \
        || q "$pport" "create database \"$DB_NAME\" owner \"$DB_USER\"" >/dev/null
    if [[ -z "$(q "$pport" "select 1 from pg_roles where rolname = '$TLS_USER'")" ]]; then
        printf "create role %s login superuser password '%s';\n" "$TLS_USER" "$(cat "$TLS_DIR/password")" \
            | PGCONNECT_TIMEOUT=3 "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$pport" -U postgres \
                -d postgres -f - >/dev/null || die "could not create role $TLS_USER on port $pport"
    fi
    start_node "$(other "$P_NODE")"
    wait_for "node $(other "$P_NODE") to stream in sync from node $P_NODE" in_sync "$P_NODE" "$(other "$P_NODE")"
    save_state
    start_pgbouncer
    wait_for "pgbouncer to point at port $pport" pgb_points_at "$pport"
    say "ready in $(secs "$t0" "$(now)")s (primary node $P_NODE port $pport)"
    echo "HA_PRIMARY_URL=$(url "$pport")"
    echo "HA_STANDBY_URL=$(url "$(port_of "$(other "$P_NODE")")")"
    local both="postgresql://$DB_USER@127.0.0.1:$PORT_A,127.0.0.1:$PORT_B/$DB_NAME"
    echo "HA_MULTI_URL=$both?target_session_attrs=read-write"
    echo "HA_STANDBY_PREFER_URL=$both?target_session_attrs=prefer-standby"
    echo "HA_PGBOUNCER_URL=$(url "$PORT_PGB")"
    echo "HA_TLS_MULTI_URL=$(tls_url)"
    echo "HA_CTL=$ROOT/scripts/patroni-ctl.sh"
}

cmd_down() {
    local n
    [[ -d "$HA" ]] || { say "not running"; return 0; }
    lock
    load_state || true
    if [[ -n "$PORT_PGB" ]] && pgb_pid >/dev/null; then stop_pgbouncer && say "stopped pgbouncer"; fi
    # The managers first, so that none restarts or promotes a server, then the servers (see kill_daemon).
    for n in a b; do
        if daemon_pid "patroni-$n" >/dev/null; then kill_daemon "patroni-$n" && say "stopped Patroni of node $n"; fi
    done
    if daemon_pid raft >/dev/null; then kill_daemon raft && say "stopped the Raft voter"; fi
    for n in a b; do
        if node_running "$n"; then
            stop_server "$n" fast || stop_server "$n" immediate || die "node $n (port $(port_of "$n")) did not stop"
            say "stopped node $n"
        fi
    done
    if [[ "${1:-}" == "--rm" ]]; then
        rm -rf -- "$HA"
        say "removed .db/patroni"
    fi
}

# cmd_failover crash|machine: the primary's server crashes (its Patroni sees it and lets go at once), or its
# whole machine goes away (its Patroni too: the standby's Patroni waits for the leader key to expire, and the
# machine's Patroni is started again once the standby is promoted, as when the machine comes back).
cmd_failover() {
    local what=$1 old new oport nport pid t0 t1 t2
    probe
    [[ -n "$P_NODE" ]] || die "no primary is running"
    [[ -n "$S_NODE" ]] || die "no standby streams from the primary (port $(port_of "$P_NODE")); run: $0 start-standby"
    old=$P_NODE new=$S_NODE
    oport=$(port_of "$old") nport=$(port_of "$new")
    # Only the synchronous standby may be promoted: make sure it is, and caught up, before the crash.
    wait_for "node $new to be the synchronous standby, caught up" in_sync "$old" "$new"
    pid=$(postmaster_pid "$old")
    [[ "$pid" =~ ^[0-9]+$ ]] || die "no postmaster.pid for node $old"
    t0=$(now)
    if [[ $what == machine ]]; then
        kill_daemon "patroni-$old"
        say "failover: killed Patroni of node $old"
    fi
    kill -KILL "$pid"
    say "failover: killed the postmaster of node $old (pid $pid, port $oport)"
    wait_for "Patroni to promote node $new (port $nport)" accepts_writes "$nport"
    t1=$(now)
    PRIMARY=$new
    save_state
    say "failover: Patroni promoted node $new (port $nport) $(secs "$t0" "$t1")s after the kill"
    [[ $what != machine ]] || start_node "$old"
    wait_for "Patroni's callback to point pgbouncer at port $nport" pgb_points_at "$nport"
    wait_for "node $old (port $oport) to stream in sync from node $new" in_sync "$new" "$old"
    t2=$(now)
    say "failover: done in $(secs "$t0" "$t2")s (node $new port $nport primary after $(secs "$t0" "$t1")s," \
        "node $old port $oport back as its sync standby after $(secs "$t0" "$t2")s)"
}

cmd_standby() {
    local what=$1 s pport
    probe
    [[ -n "$P_NODE" ]] || die "no primary is running"
    s=$(other "$P_NODE")
    pport=$(port_of "$P_NODE")
    case "$what" in
        restart)
            [[ "$S_NODE" == "$s" ]] || die "the standby (node $s) is not streaming; run: $0 start-standby"
            "$PATRONICTL" -c "$HA/node-$s/patroni.yml" restart "$SCOPE" "node_$s" --force >/dev/null 2>&1 9>&- \
                || die "patronictl restart of node $s failed"
            wait_for "node $s to stream in sync from node $P_NODE again" in_sync "$P_NODE" "$s"
            say "restarted the standby (port $(port_of "$s"))"
            ;;
        stop)
            # The standby's machine goes away: its Patroni is killed (as with the host, no goodbye to the
            # Raft store or the leader), and its server stopped.
            kill_daemon "patroni-$s"
            stop_server "$s" fast || die "node $s (port $(port_of "$s")) did not stop"
            # Patroni on the primary notices within its loop, and commits stop waiting for the standby.
            wait_for "Patroni to turn synchronous replication off on port $pport" \
                setting_is "$pport" synchronous_standby_names ""
            say "stopped the standby (port $(port_of "$s")); Patroni turned synchronous replication off"
            ;;
        start)
            start_node "$s"
            wait_for "node $s to stream in sync from node $P_NODE" in_sync "$P_NODE" "$s"
            say "started the standby (port $(port_of "$s")); Patroni turned synchronous replication on"
            ;;
    esac
}

# cmd_callback node action role: Patroni's on_role_change, run by Patroni as the server's user while a
# command of ours may hold the lock: it takes no lock, and only rewrites pgbouncer's configuration (atomically)
# and has it reload.
cmd_callback() {
    local n=$1 action=$2 role=$3 written=0
    [[ "$action" == on_role_change && ( "$role" == master || "$role" == primary ) ]] || return 0
    load_state || exit 1
    PRIMARY=$n
    write_pgb_ini || written=$?
    ((written <= 1)) || die "could not write $PGB_INI"
    if ((written == 0)) && pgb_pid >/dev/null; then
        pgb_admin "RELOAD" >/dev/null || die "pgbouncer did not reload $PGB_INI"
    fi
    say "callback: pgbouncer (port $PORT_PGB) points at node $n (port $(port_of "$n"))"
}

case "$CMD" in
    up) cmd_up ;;
    down) shift; cmd_down "$@" ;;
    failover)
        case "${2:-}" in
            "") what=${CV_PATRONI_FAILOVER:-crash} ;;
            --machine) what=machine ;;
            *) die "usage: $0 failover [--machine] (the old primary always comes back: Patroni rewinds it)" ;;
        esac
        [[ $what == crash || $what == machine ]] || die "CV_PATRONI_FAILOVER is crash or machine, not $what"
        locked_state
        cmd_failover "$what"
        ;;
    callback) shift; cmd_callback "$@" ;;
    *) if is_common_command "$CMD"; then common_command "$CMD"; else usage; fi ;;
esac
