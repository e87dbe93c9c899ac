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
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
HA="$ROOT/.db/ha"
STATE="$HA/state"
PGB_DIR="$HA/pgbouncer"
PGB_INI="$PGB_DIR/pgbouncer.ini"
PGB_PID="$PGB_DIR/pgbouncer.pid"
PGB_LOG="$PGB_DIR/pgbouncer.log"
TLS_DIR="$HA/tls"
TLS_USER=corevalue_tls
# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"
TIMEOUT=${CV_HA_TIMEOUT:-60}
CMD=${1:-}
ME="ha-ctl"
case "$CMD" in up) ME="ha-up" ;; down) ME="ha-down" ;; esac

# The environment of a test run must not redirect our own connections.
unset PGOPTIONS PGSERVICE PGTARGETSESSIONATTRS PGHOSTADDR

PGBOUNCER=${PGBOUNCER:-$(command -v pgbouncer 2>/dev/null || echo /usr/sbin/pgbouncer)}

say() { echo "$ME: $*" >&2; }
die() { echo "$ME: error: $*" >&2; exit 1; }

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# wait_for "what" command...: polls the command until it succeeds, or fails after $TIMEOUT seconds.
wait_for() {
    local what=$1 deadline
    shift
    deadline=$(($(date +%s) + TIMEOUT))
    until "$@"; do
        (($(date +%s) < deadline)) || die "timed out after ${TIMEOUT}s waiting for $what"
        sleep 0.1
    done
}

# q port sql...: runs each statement (its own -c, so ALTER SYSTEM is outside a transaction block) as the
# postgres superuser on the node listening on port; prints unaligned tuples.
q() {
    local port=$1 s a=()
    shift
    for s in "$@"; do a+=(-c "$s"); done
    PGCONNECT_TIMEOUT=3 "$PG_BIN/psql" -X -q -At -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U postgres \
        -d postgres "${a[@]}"
}

# --- state ----------------------------------------------------------------------------------------------

PORT_A="" PORT_B="" PORT_PGB="" PRIMARY=""

# load_state: reads the state file; returns 1 when there is none and 2 (with a message) when it is damaged.
load_state() {
    [[ -f "$STATE" ]] || return 1
    # shellcheck source=/dev/null
    source "$STATE" || true
    if [[ -z "${PORT_A:-}" || -z "${PORT_B:-}" || -z "${PORT_PGB:-}" || ! "${PRIMARY:-}" =~ ^[ab]$ ]]; then
        echo "$ME: $STATE is damaged; run scripts/ha-down.sh --rm" >&2
        return 2
    fi
}

save_state() {
    printf 'PORT_A=%s\nPORT_B=%s\nPORT_PGB=%s\nPRIMARY=%s\n' "$PORT_A" "$PORT_B" "$PORT_PGB" "$PRIMARY" \
        >"$STATE.tmp"
    mv -f "$STATE.tmp" "$STATE"
}

# lock [-s]: exclusive (shared with -s, for status) use of the setup; daemons started under it get 9>&-.
lock() {
    command -v flock >/dev/null 2>&1 || return 0
    exec 9>>"$HA/lock"
    flock "$@" -w $((2 * TIMEOUT)) 9 || die "another ha command held .db/ha/lock for $((2 * TIMEOUT))s"
}

# locked_state [-s]: takes the lock, then reads the state (as the previous holder left it).
locked_state() {
    [[ -d "$HA" ]] || die "the HA setup does not exist; run scripts/ha-up.sh"
    lock "$@"
    load_state || die "the HA setup does not exist; run scripts/ha-up.sh"
}

other() { if [[ $1 == a ]]; then echo b; else echo a; fi; }
port_of() { if [[ $1 == a ]]; then echo "$PORT_A"; else echo "$PORT_B"; fi; }
data_of() { echo "$HA/node-$1/data"; }

# --- nodes ----------------------------------------------------------------------------------------------

node_running() {
    [[ -f "$(data_of "$1")/postmaster.pid" ]] && as_owner "$PG_BIN/pg_ctl" -D "$(data_of "$1")" status >/dev/null 2>&1
}

# accepts_writes port: the node answers and is not in recovery.
accepts_writes() { [[ "$(q "$1" "select not pg_is_in_recovery()" 2>/dev/null)" == t ]]; }
accepts_connections() { q "$1" "select 1" >/dev/null 2>&1; }

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

# streams primary_port node [sync]: pg_stat_replication on the primary shows the node streaming (in sync).
streams() {
    local s
    s=$(q "$1" "select sync_state from pg_stat_replication
                where application_name = 'node_$2' and state = 'streaming'" 2>/dev/null) || return 1
    [[ -n "$s" && ( -z "${3:-}" || "$s" == sync ) ]]
}

# caught_up primary_port node lsn: the standby has flushed WAL up to lsn.
caught_up() {
    [[ "$(q "$1" "select coalesce(bool_or(flush_lsn >= '$3'), false) from pg_stat_replication
                  where application_name = 'node_$2' and state = 'streaming'" 2>/dev/null)" == t ]]
}

setting_is() { [[ "$(q "$1" "show $2" 2>/dev/null)" == "$3" ]]; }

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

# The current primary and standby, asked of the servers (the state file only says which node was last
# promoted). standby is empty unless that node streams from the primary.
probe() {
    P_NODE="" S_NODE=""
    local n
    for n in "$PRIMARY" "$(other "$PRIMARY")"; do
        if accepts_writes "$(port_of "$n")"; then P_NODE=$n; break; fi
    done
    [[ -n "$P_NODE" ]] || return 0
    PRIMARY=$P_NODE
    n=$(other "$P_NODE")
    if streams "$(port_of "$P_NODE")" "$n"; then S_NODE=$n; fi
}

# --- pgbouncer ------------------------------------------------------------------------------------------

# alive pid: the process exists and is not a zombie (in a container, PID 1 may never reap orphans).
alive() {
    local st
    read -r _ _ st _ <"/proc/$1/stat" 2>/dev/null && [[ $st != Z && $st != X ]]
}

dead() { ! alive "$1"; }

pgb_pid() {
    local pid
    [[ -f "$PGB_PID" ]] || return 1
    pid=$(cat "$PGB_PID" 2>/dev/null) || return 1
    [[ "$pid" =~ ^[0-9]+$ && "$(cat "/proc/$pid/comm" 2>/dev/null)" == pgbouncer ]] && alive "$pid" && echo "$pid"
}

pgb_admin() {
    PGCONNECT_TIMEOUT=3 "$PG_BIN/psql" -X -q -At -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PORT_PGB" -U postgres \
        -d pgbouncer -c "$1"
}

# write_pgb_ini: pgbouncer's configuration, pointing at the current primary; returns 1 if it was unchanged.
write_pgb_ini() {
    local pport new
    pport=$(port_of "$PRIMARY")
    as_owner mkdir -p "$PGB_DIR"
    new=$(cat <<EOF
;; written by scripts/ha-ctl.sh: databases point at the current primary (node $PRIMARY)
[databases]
$DB_NAME = host=127.0.0.1 port=$pport dbname=$DB_NAME
* = host=127.0.0.1 port=$pport

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $PORT_PGB
unix_socket_dir = $PGB_DIR
auth_type = trust
auth_file = $PGB_DIR/userlist.txt
admin_users = postgres
pool_mode = transaction
max_client_conn = 2000
default_pool_size = 40
ignore_startup_parameters = extra_float_digits
;; after a failover, retry a failed server login after 1 s rather than 15
server_login_retry = 1
logfile = $PGB_LOG
pidfile = $PGB_PID
EOF
)
    # corevalue_readonly: the tests' standby-like role (default_transaction_read_only, set by the tests).
    printf '"%s" "%s"\n"postgres" ""\n"corevalue_readonly" ""\n' "$DB_USER" "corevalue" \
        | as_owner tee "$PGB_DIR/userlist.txt" >/dev/null
    if [[ -f "$PGB_INI" && "$(cat "$PGB_INI")" == "$new" ]]; then return 1; fi
    printf '%s\n' "$new" | as_owner tee "$PGB_INI.tmp" >/dev/null || return 3
    mv -f "$PGB_INI.tmp" "$PGB_INI" || return 3
}

pgb_ready() { pgb_admin "show version" >/dev/null 2>&1; }

start_pgbouncer() {
    local changed=0 written=0
    # 0: written, 1: unchanged; anything else is a failure (set -e does not apply inside `||`).
    write_pgb_ini || written=$?
    ((written <= 1)) || die "could not write $PGB_INI"
    ((written == 1)) || changed=1
    if pgb_pid >/dev/null; then
        if ((changed)); then
            pgb_admin "RELOAD" >/dev/null || die "pgbouncer did not reload $PGB_INI"
            say "pgbouncer (port $PORT_PGB) now points at port $(port_of "$PRIMARY")"
        fi
        return 0
    fi
    [[ -x "$PGBOUNCER" ]] || die "pgbouncer not found; run scripts/install-deps.sh ha"
    port_busy "$PORT_PGB" && die "port $PORT_PGB of pgbouncer is taken by another program"
    as_owner touch "$PGB_LOG"
    local attempt
    # A second attempt when the first never listens (once, in CI, it did not within a minute, and its
    # log was gone with .db/ha): the log is printed either way.
    for attempt in 1 2; do
        # 2000 clients need more descriptors than the usual soft limit (runuser resets it): raise it to the
        # hard one.
        # shellcheck disable=SC2016 # (expanded by the inner shell)
        as_owner bash -c 'ulimit -n "$(ulimit -Hn)" 2>/dev/null || true; exec "$@"' pgbouncer \
            "$PGBOUNCER" -d -q "$PGB_INI" </dev/null >>"$PGB_LOG" 2>&1 9>&- \
            || { tail -n 20 "$PGB_LOG" >&2; die "pgbouncer did not start; log above"; }
        if pgb_ready_or_gone; then return 0; fi
        say "pgbouncer did not listen on port $PORT_PGB (attempt $attempt); its log:"
        tail -n 20 "$PGB_LOG" >&2
        stop_pgbouncer || true
        # A pid file of the one that died would end the next wait at once.
        as_owner rm -f "$PGB_PID"
    done
    die "pgbouncer did not listen on port $PORT_PGB (log: $PGB_LOG)"
}

# pgb_ready_or_gone: waits until pgbouncer answers (0), or until its process has gone or half the timeout
# passed (1).
pgb_ready_or_gone() {
    local deadline=$(($(date +%s) + TIMEOUT / 2))
    until pgb_ready; do
        # Once its pid file names a process that is gone, it is not coming up.
        if [[ -f "$PGB_PID" ]] && ! pgb_pid >/dev/null; then return 1; fi
        (($(date +%s) < deadline)) || return 1
        sleep 0.1
    done
}

stop_pgbouncer() {
    local pid
    pid=$(pgb_pid) || return 0
    kill -TERM "$pid" 2>/dev/null || true
    wait_for "pgbouncer (pid $pid) to exit" dead "$pid"
}

# --- TLS ------------------------------------------------------------------------------------------------

# tls_files: the authority, the server certificate and the TLS role's password and passfile, in $TLS_DIR,
# made afresh with a new primary's data (the certificates are valid for two days).
tls_files() {
    rm -rf -- "$TLS_DIR"
    mkdir -p "$TLS_DIR"
    make_certificates "$TLS_DIR"
    # Readable by the user who runs the tests only: libpq ignores a passfile that others can read.
    (umask 077 && openssl rand -hex 16 >"$TLS_DIR/password" \
        && printf '*:*:*:%s:%s\n' "$TLS_USER" "$(cat "$TLS_DIR/password")" >"$TLS_DIR/passfile.tmp" \
        && mv -f "$TLS_DIR/passfile.tmp" "$TLS_DIR/passfile") || die "could not write $TLS_DIR/passfile"
}

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

# tls_url: both nodes over TLS as a managed database takes it, as a key=value string (a URL would need `&`,
# which test-ha.sh does not take from these lines), quoted for the shell; the password comes from the passfile.
tls_url() {
    [[ "$TLS_DIR" != *[[:space:]\'\\]* ]] || die "the path $TLS_DIR holds a space, quote or backslash"
    printf "'%s'" "host=localhost,localhost hostaddr=127.0.0.1,127.0.0.1 port=$PORT_A,$PORT_B dbname=$DB_NAME \
user=$TLS_USER passfile=$TLS_DIR/passfile target_session_attrs=read-write sslmode=verify-full \
sslrootcert=$TLS_DIR/ca.crt channel_binding=require"
}

# --- commands -------------------------------------------------------------------------------------------

url() { echo "postgresql://$DB_USER@127.0.0.1:$1/$DB_NAME"; }

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
            while port_busy "$p" || [[ " ${used[*]} " == *" $p "* ]]; do p=$((p + 1)); done
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
    status)
        locked_state -s
        probe
        echo "primary=${P_NODE:+$(port_of "$P_NODE")} standby=${S_NODE:+$(port_of "$S_NODE")}"
        ;;
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
    restart-standby) locked_state; cmd_standby restart ;;
    stop-standby) locked_state; cmd_standby stop ;;
    start-standby) locked_state; cmd_standby start ;;
    pgbouncer-restart)
        locked_state
        probe
        stop_pgbouncer
        start_pgbouncer
        say "restarted pgbouncer (port $PORT_PGB)"
        ;;
    *)
        sed -n '2,/^set -euo/p' "$0" | sed '$d' >&2
        exit 2
        ;;
esac
