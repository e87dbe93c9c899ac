#!/usr/bin/env bash
# ha-ctl.sh: inspect and change the multi-server test setup of scripts/ha-up.sh (a primary, a synchronous
# streaming standby, pgbouncer in transaction mode, all on 127.0.0.1, under .db/ha); root-safe.
#
# usage: scripts/ha-ctl.sh <command>
#   status                   prints `primary=<port> standby=<port>` (standby empty if none is streaming)
#   failover [--no-rebuild]  stops the primary (immediate), promotes the standby, points pgbouncer at it,
#                            then rebuilds the old primary as a sync standby of the new one (pg_basebackup);
#                            with --no-rebuild it stops after the promote and the old node stays down
#   rebuild                  rebuilds the node that is not the primary as its sync standby
#   restart-standby          restarts the standby (fast) and waits until it streams in sync again
#   stop-standby             turns synchronous replication off on the primary, then stops the standby
#   start-standby            starts the standby, waits until it streams, turns synchronous replication on
#   pgbouncer-restart        stops and starts pgbouncer (its clients are disconnected)
#   up, down [--rm]          the work of scripts/ha-up.sh and scripts/ha-down.sh
#
# Every command waits on a condition (polled every 0.1 s, $CV_HA_TIMEOUT seconds at most, 60 by default)
# and fails with a message saying what it waited for. Commands take a lock (.db/ha/lock), so tests that
# run in parallel change the topology one at a time, and `status` waits for a change in progress.
# Progress goes to stderr; only `status` and `up` print on stdout.
#
# Layout: .db/ha/state (ports, which node is primary), .db/ha/node-{a,b}/{data,sock,server.log},
# .db/ha/pgbouncer/{pgbouncer.ini,userlist.txt,pgbouncer.log,pgbouncer.pid}, .db/ha/tls/{ca.crt,passfile,...}. Node-specific settings
# (port, socket directory, cluster_name) live in data/node.conf, rewritten before each start, since
# pg_basebackup copies the rest of the configuration from the primary. Synchronous replication is
# switched with ALTER SYSTEM (postgresql.auto.conf): on while a standby streams, off while there is none.
# TLS as on a managed database, beside the plain trust rules the other tests use: ssl = on with a server
# certificate for localhost and 127.0.0.1 from a throwaway authority (.db/ha/tls/ca.crt), kept in the data
# directory so that pg_basebackup copies it to the standby with pg_hba.conf; the role corevalue_tls logs in
# over TLS with a SCRAM-SHA-256 password only (its libpq passfile: .db/ha/tls/passfile).
# As root, server programs run as the `postgres` OS user ($CV_DB_RUN_AS), since they refuse root.
# scripts/patroni-ctl.sh takes the same commands for a setup where Patroni, not this script, fails over;
# what both need (waiting, queries, pgbouncer, TLS files) is in scripts/ha-lib.sh.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
HA="$ROOT/.db/ha"
STATE="$HA/state"
CMD=${1:-}
ME="ha-ctl"
case "$CMD" in up) ME="ha-up" ;; down) ME="ha-down" ;; esac
PORT_A="" PORT_B="" PORT_PGB="" PRIMARY=""
STATE_KEYS=(PORT_A PORT_B PORT_PGB PRIMARY)
SETUP="the HA setup" UP_HINT="scripts/ha-up.sh" DOWN_HINT="scripts/ha-down.sh --rm"
# shellcheck source=scripts/ha-lib.sh
source "$ROOT/scripts/ha-lib.sh"

# --- nodes ----------------------------------------------------------------------------------------------

write_node_conf() {
    local n=$1
    {
        echo "# written by scripts/ha-ctl.sh before each start: what differs between the nodes"
        echo "port = $(port_of "$n")"
        echo "unix_socket_directories = '$HA/node-$n/sock'"
        echo "cluster_name = 'node_$n'"
    } | as_owner tee "$(data_of "$n")/node.conf" >/dev/null
}

start_node() {
    local n=$1 port log
    port=$(port_of "$n")
    log="$HA/node-$n/server.log"
    node_running "$n" && return 0
    port_busy "$port" && die "port $port of node $n is taken by another program; run scripts/ha-down.sh --rm"
    as_owner mkdir -p "$HA/node-$n/sock"
    write_node_conf "$n"
    as_owner touch "$log"
    as_owner "$PG_BIN/pg_ctl" -D "$(data_of "$n")" -l "$log" -w -t "$TIMEOUT" start </dev/null >/dev/null 2>&1 9>&- \
        || { tail -n 30 "$log" >&2; die "node $n (port $port) did not start; log above"; }
    wait_for "node $n (port $port) to accept connections" accepts_connections "$port"
}

stop_node() {
    local n=$1 mode=${2:-fast}
    node_running "$n" || return 0
    as_owner "$PG_BIN/pg_ctl" -D "$(data_of "$n")" -m "$mode" -w -t "$TIMEOUT" stop >/dev/null 2>&1 9>&- \
        || die "node $n (port $(port_of "$n")) did not stop ($mode)"
}

# sync_rep port on|off: synchronous_standby_names = '*' or '' (ALTER SYSTEM + reload), waits until in force.
sync_rep() {
    local port=$1 v=""
    [[ $2 == on ]] && v="*"
    setting_is "$port" synchronous_standby_names "$v" && return 0
    q "$port" "alter system set synchronous_standby_names = '$v'" "select pg_reload_conf()" >/dev/null
    wait_for "synchronous_standby_names = '$v' on port $port" setting_is "$port" synchronous_standby_names "$v"
}

# wait_standby node: the node streams from the primary; then synchronous replication is turned on and the
# standby has flushed everything the primary wrote, so every acknowledged commit is on both nodes.
wait_standby() {
    local n=$1 pport lsn
    pport=$(port_of "$PRIMARY")
    wait_for "node $n (port $(port_of "$n")) to stream from port $pport" streams "$pport" "$n"
    sync_rep "$pport" on
    wait_for "node $n (port $(port_of "$n")) to be the synchronous standby" streams "$pport" "$n" sync
    lsn=$(q "$pport" "select pg_current_wal_lsn()")
    wait_for "node $n to flush WAL up to $lsn" caught_up "$pport" "$n" "$lsn"
}

slot_free() { [[ "$(q "$1" "select active from pg_replication_slots where slot_name = '$2'")" != t ]]; }

# rebuild_node node: a fresh pg_basebackup -R (with a physical slot) of the primary, started, in sync.
rebuild_node() {
    local n=$1 pport t0 d bblog
    pport=$(port_of "$PRIMARY")
    [[ $n != "$PRIMARY" ]] || die "cannot rebuild the primary"
    accepts_writes "$pport" || die "the primary (node $PRIMARY, port $pport) does not accept writes"
    t0=$(now)
    d=$(data_of "$n")
    bblog="$HA/node-$n/basebackup.log"
    stop_node "$n" fast
    wait_for "slot node_$n on port $pport to be released" slot_free "$pport" "node_$n"
    q "$pport" "select pg_drop_replication_slot(slot_name) from pg_replication_slots
                where slot_name = 'node_$n'" >/dev/null
    rm -rf -- "$d"
    as_owner mkdir -p "$HA/node-$n"
    as_owner "$PG_BIN/pg_basebackup" -D "$d" -d "host=127.0.0.1 port=$pport user=postgres" \
        -X stream -C -S "node_$n" -R -c fast -N >"$bblog" 2>&1 9>&- \
        || { cat "$bblog" >&2; die "pg_basebackup of node $n from port $pport failed"; }
    start_node "$n"
    wait_standby "$n"
    say "rebuilt node $n (port $(port_of "$n")) as the sync standby of port $pport in $(secs "$t0" "$(now)")s"
}

# --- TLS ------------------------------------------------------------------------------------------------

# tls_node_files data: the server certificate and key in a new primary's data directory, where the server
# finds them by default (ssl_cert_file, ssl_key_file) and pg_basebackup copies them to the standby; pg_hba.conf
# rules that let the TLS role in over TLS with its SCRAM password only, ahead of the trust rules.
tls_node_files() {
    local data=$1 hba
    as_owner tee "$data/server.crt" <"$TLS_DIR/server.crt" >/dev/null
    as_owner tee "$data/server.key" <"$TLS_DIR/server.key" >/dev/null
    as_owner chmod 600 "$data/server.key"
    hba=$(printf '%s\n' "# scripts/ha-ctl.sh: $TLS_USER logs in over TLS with a SCRAM password, never without TLS" \
        "hostssl all $TLS_USER 127.0.0.1/32 scram-sha-256" "host all $TLS_USER all reject"; cat "$data/pg_hba.conf")
    printf '%s\n' "$hba" | as_owner tee "$data/pg_hba.conf" >/dev/null
}

# tls_role port: creates the TLS role (a superuser, as the tests' other roles) with its password, hashed
# with SCRAM-SHA-256 (password_encryption); the password reaches psql on stdin, not in its arguments (ps).
tls_role() {
    local port=$1
    [[ -z "$(q "$port" "select 1 from pg_roles where rolname = '$TLS_USER'")" ]] || return 0
    sync_rep "$port" off
    printf "create role %s login superuser password '%s';\n" "$TLS_USER" "$(cat "$TLS_DIR/password")" \
        | PGCONNECT_TIMEOUT=3 "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U postgres \
            -d postgres -f - >/dev/null || die "could not create role $TLS_USER on port $port"
}

# --- commands -------------------------------------------------------------------------------------------

cmd_up() {
    local t0 a p s pport used=()
    t0=$(now)
    mkdir -p "$HA"
    if [[ $EUID -eq 0 ]]; then
        id "$RUN_AS" >/dev/null 2>&1 || useradd --system --no-create-home "$RUN_AS"
        chown "$RUN_AS": "$HA"
        # The server user must be able to reach the data directories through every parent.
        a="$HA"
        while [[ "$a" != "/" ]]; do chmod o+x "$a" 2>/dev/null || true; a=$(dirname "$a"); done
    fi
    lock
    local state=0
    load_state || state=$?
    ((state != 2)) || exit 1
    if ((state == 1)); then
        # Below the ephemeral range (32768 and up on Linux): a port there can be the local end of a client
        # connection still closing, which a server then cannot bind although nothing listens on it.
        p=${CV_HA_PORT:-25430}
        for a in A B PGB; do
            while port_in_use "$p" || [[ " ${used[*]} " == *" $p "* ]]; do p=$((p + 1)); done
            used+=("$p")
            printf -v "PORT_$a" '%s' "$p"
        done
        PRIMARY=a
        save_state
    fi
    s=$(other "$PRIMARY")
    pport=$(port_of "$PRIMARY")

    local pdata
    pdata=$(data_of "$PRIMARY")
    if [[ ! -f "$pdata/PG_VERSION" ]]; then
        [[ ! -f "$(data_of "$s")/PG_VERSION" ]] \
            || die "node $PRIMARY (the primary) has no data but node $s has; run scripts/ha-down.sh --rm"
        say "creating node $PRIMARY (primary, port $pport)"
        tls_files
        rm -rf -- "$pdata"
        as_owner mkdir -p "$pdata" "$HA/node-$PRIMARY/sock"
        chmod 700 "$pdata"
        as_owner "$PG_BIN/initdb" -D "$pdata" -U postgres -A trust -E UTF8 --locale=C.UTF-8 --no-sync \
            >"$HA/node-$PRIMARY/initdb.log" 2>&1 || { cat "$HA/node-$PRIMARY/initdb.log" >&2; exit 1; }
        {
            echo "# --- scripts/ha-up.sh: the same on every node (pg_basebackup copies it) ---"
            echo "listen_addresses = '127.0.0.1'"
            echo "max_connections = 300"
            echo "shared_buffers = 128MB"
            echo "wal_level = replica"
            echo "max_wal_senders = 10"
            echo "max_replication_slots = 10"
            echo "hot_standby = on"
            echo "wal_log_hints = on"
            echo "ssl = on"
            echo "password_encryption = 'scram-sha-256'"
            echo "fsync = off"
            echo "# remote_apply: a commit is acknowledged once the synchronous standby shows it (read-your-writes there)"
            echo "synchronous_commit = remote_apply"
            echo "# switched off (ALTER SYSTEM) by scripts/ha-ctl.sh while no standby streams"
            echo "synchronous_standby_names = '*'"
            echo "log_min_messages = warning"
            echo "include_if_exists = 'node.conf'"
        } | as_owner tee -a "$pdata/postgresql.conf" >/dev/null
        grep -Eq '^host[[:space:]]+replication[[:space:]]+all[[:space:]]+127\.0\.0\.1/32[[:space:]]+trust' \
            "$pdata/pg_hba.conf" \
            || echo "host replication all 127.0.0.1/32 trust" | as_owner tee -a "$pdata/pg_hba.conf" >/dev/null
        tls_node_files "$pdata"
        # No standby yet: commits must not wait for one.
        echo "synchronous_standby_names = ''" | as_owner tee -a "$pdata/postgresql.auto.conf" >/dev/null
    fi
    [[ ! -f "$pdata/standby.signal" ]] || die "node $PRIMARY should be the primary but is a standby"
    [[ -f "$pdata/server.crt" && -f "$TLS_DIR/passfile" ]] \
        || die "node $PRIMARY was made without TLS (an older setup); run scripts/ha-down.sh --rm"
    start_node "$PRIMARY"
    accepts_writes "$pport" || die "node $PRIMARY (port $pport) does not accept writes"

    # The application role and database (same names as db-up.sh and docker-compose.yml).
    if [[ -z "$(q "$pport" "select 1 from pg_roles where rolname = '$DB_USER'")" ]]; then
        sync_rep "$pport" off
        q "$pport" "create role \"$DB_USER\" login superuser password 'corevalue'" >/dev/null
    fi
    if [[ -z "$(q "$pport" "select 1 from pg_database where datname = '$DB_NAME'")" ]]; then
        sync_rep "$pport" off
        q "$pport" "create database \"$DB_NAME\" owner \"$DB_USER\"" >/dev/null
    fi
    tls_role "$pport"

    if [[ -f "$(data_of "$s")/PG_VERSION" && -f "$(data_of "$s")/standby.signal" ]]; then
        start_node "$s"
        wait_standby "$s"
    else
        say "creating node $s (standby, port $(port_of "$s"))"
        sync_rep "$pport" off
        rebuild_node "$s"
    fi
    start_pgbouncer
    local tls
    tls=$(tls_url)
    say "ready in $(secs "$t0" "$(now)")s"
    echo "HA_PRIMARY_URL=$(url "$pport")"
    echo "HA_STANDBY_URL=$(url "$(port_of "$s")")"
    local both="postgresql://$DB_USER@127.0.0.1:$PORT_A,127.0.0.1:$PORT_B/$DB_NAME"
    echo "HA_MULTI_URL=$both?target_session_attrs=read-write"
    echo "HA_STANDBY_PREFER_URL=$both?target_session_attrs=prefer-standby"
    echo "HA_PGBOUNCER_URL=$(url "$PORT_PGB")"
    echo "HA_TLS_MULTI_URL=$tls"
    echo "HA_CTL=$ROOT/scripts/ha-ctl.sh"
}

cmd_down() {
    local n
    [[ -d "$HA" ]] || { say "not running"; return 0; }
    lock
    # A damaged state file must not keep `down --rm` (its own remedy) from stopping and removing things.
    load_state || true
    [[ "${PRIMARY:-}" =~ ^[ab]$ ]] || PRIMARY=a
    if pgb_pid >/dev/null; then stop_pgbouncer && say "stopped pgbouncer"; fi
    # The primary first, so its last WAL reaches a running standby.
    for n in "${PRIMARY:-a}" "$(other "${PRIMARY:-a}")"; do
        if [[ -f "$(data_of "$n")/postmaster.pid" ]] && node_running "$n"; then
            stop_node "$n" fast && say "stopped node $n"
        fi
    done
    if [[ "${1:-}" == "--rm" ]]; then
        rm -rf -- "$HA"
        say "removed .db/ha"
    fi
}

# Promote the streaming standby; with $1 = rebuild, then rebuild the old primary as its standby.
cmd_failover() {
    local rebuild=$1 old new oport nport t0 t1
    probe
    [[ -n "$P_NODE" ]] || die "no primary is running"
    if [[ -z "$S_NODE" ]]; then
        local fix=rebuild
        [[ -f "$(data_of "$(other "$P_NODE")")/standby.signal" ]] && ! node_running "$(other "$P_NODE")" \
            && fix=start-standby
        die "no standby streams from the primary (port $(port_of "$P_NODE")); run: $0 $fix"
    fi
    old=$P_NODE new=$S_NODE
    oport=$(port_of "$old") nport=$(port_of "$new")
    # Every acknowledged commit must be on the standby: make sure it is the synchronous one, caught up.
    wait_standby "$new"
    # The promoted node has no standby at first: it must not wait for one. (A standby ignores the setting.)
    sync_rep "$nport" off
    t0=$(now)
    stop_node "$old" immediate
    as_owner "$PG_BIN/pg_ctl" -D "$(data_of "$new")" -w -t "$TIMEOUT" promote >/dev/null 2>&1 9>&- \
        || die "pg_ctl promote of node $new (port $nport) failed"
    wait_for "node $new (port $nport) to accept writes" accepts_writes "$nport"
    t1=$(now)
    PRIMARY=$new
    save_state
    say "failover: promoted $nport in $(secs "$t0" "$t1")s"
    q "$nport" "alter system reset primary_conninfo" "alter system reset primary_slot_name" >/dev/null
    start_pgbouncer
    if [[ $rebuild == rebuild ]]; then
        rebuild_node "$old"
        say "failover: done in $(secs "$t0" "$(now)")s" \
            "(node $new port $nport primary, node $old port $oport sync standby)"
    else
        say "failover: node $old (port $oport) stays down; run: $0 rebuild"
    fi
}

cmd_standby() {
    local what=$1 s pport
    probe
    [[ -n "$P_NODE" ]] || die "no primary is running"
    s=$(other "$P_NODE")
    pport=$(port_of "$P_NODE")
    [[ -f "$(data_of "$s")/standby.signal" ]] || die "node $s is not a standby; run: $0 rebuild"
    case "$what" in
        restart)
            node_running "$s" || die "the standby (node $s) is not running; run: $0 start-standby"
            as_owner "$PG_BIN/pg_ctl" -D "$(data_of "$s")" -l "$HA/node-$s/server.log" -m fast -w -t "$TIMEOUT" \
                restart </dev/null >/dev/null 2>&1 9>&- || die "pg_ctl restart of node $s failed"
            wait_for "node $s (port $(port_of "$s")) to accept connections" accepts_connections "$(port_of "$s")"
            wait_standby "$s"
            say "restarted the standby (port $(port_of "$s"))"
            ;;
        stop)
            sync_rep "$pport" off
            stop_node "$s" fast
            say "stopped the standby (port $(port_of "$s")); synchronous replication is off"
            ;;
        start)
            start_node "$s"
            wait_standby "$s"
            say "started the standby (port $(port_of "$s")); synchronous replication is on"
            ;;
    esac
}

case "$CMD" in
    up) cmd_up ;;
    down) shift; cmd_down "$@" ;;
    failover)
        locked_state
        case "${2:-}" in
            "") cmd_failover rebuild ;;
            --no-rebuild) cmd_failover no-rebuild ;;
            *) die "usage: $0 failover [--no-rebuild]" ;;
        esac
        ;;
    rebuild)
        locked_state
        probe
        [[ -n "$P_NODE" ]] || die "no primary is running"
        save_state
        sync_rep "$(port_of "$PRIMARY")" off
        rebuild_node "$(other "$PRIMARY")"
        ;;
    *) if is_common_command "$CMD"; then common_command "$CMD"; else usage; fi ;;
esac
