# shellcheck shell=bash disable=SC2034 # (the variables are for the scripts that source this file)
# ha-lib.sh: what the two multi-server setups share (sourced by scripts/ha-ctl.sh, the plain one whose
# script promotes, and scripts/patroni-ctl.sh, the one Patroni manages; never run). Both keep two nodes, a
# and b, whose application_name is node_a and node_b, and pgbouncer in transaction mode, under one
# directory. The sourcing script first sets:
#   ROOT, HA      the repository and the setup's directory (.db/ha, .db/patroni)
#   ME            the name its messages start with
#   PORT_A, PORT_B, PORT_PGB, PRIMARY   the nodes' and pgbouncer's ports, and which node is the primary
#                 (a or b) as far as pgbouncer is concerned
#   STATE, STATE_KEYS   the state file and the variables it keeps (PRIMARY among them)
#   SETUP, UP_HINT, DOWN_HINT   how messages name the setup and the commands that make and remove it
# and gets (after scripts/lib.sh, which this file sources):
#   load_state, save_state, locked_state [-s]: the state file, read and written (locked_state under the lock)
#   common_command cmd: the commands both run alike (status, the standby's, pgbouncer-restart), given the
#                 script's cmd_standby; is_common_command cmd tells them apart; usage prints the script's header
#   TIMEOUT ($CV_HA_TIMEOUT, 60 s), say, die, now, secs, wait_for "what" cmd..., q port sql...
#   lock [-s]     the setup's lock (HA/lock), so tests change the topology one at a time
#   other, port_of, data_of node; node_running, accepts_writes, accepts_connections, streams, caught_up,
#                 setting_is: the conditions commands wait on
#   start_pgbouncer, stop_pgbouncer, pgb_pid, pgb_admin: pgbouncer pointing at node $PRIMARY (HA/pgbouncer)
#   tls_files, tls_url: a throwaway authority and server certificate, the TLS role's passfile (HA/tls)
#   url port      the application's URL on a node

# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"

PGB_DIR="$HA/pgbouncer"
PGB_INI="$PGB_DIR/pgbouncer.ini"
PGB_PID="$PGB_DIR/pgbouncer.pid"
PGB_LOG="$PGB_DIR/pgbouncer.log"
TLS_DIR="$HA/tls"
TLS_USER=corevalue_tls
TIMEOUT=${CV_HA_TIMEOUT:-60}

# The environment of a test run must not redirect our own connections.
unset PGOPTIONS PGSERVICE PGTARGETSESSIONATTRS PGHOSTADDR

PGBOUNCER=${PGBOUNCER:-$(command -v pgbouncer 2>/dev/null || echo /usr/sbin/pgbouncer)}

# --- output, waiting, queries ---------------------------------------------------------------------------

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

# --- the setup's lock and nodes -------------------------------------------------------------------------

# lock [-s]: exclusive (shared with -s, for status) use of the setup; daemons started under it get 9>&-.
lock() {
    command -v flock >/dev/null 2>&1 || return 0
    exec 9>>"$HA/lock"
    flock "$@" -w $((2 * TIMEOUT)) 9 || die "another ha command held $HA/lock for $((2 * TIMEOUT))s"
}

other() { if [[ $1 == a ]]; then echo b; else echo a; fi; }
port_of() { if [[ $1 == a ]]; then echo "$PORT_A"; else echo "$PORT_B"; fi; }
data_of() { echo "$HA/node-$1/data"; }

node_running() {
    [[ -f "$(data_of "$1")/postmaster.pid" ]] && as_owner "$PG_BIN/pg_ctl" -D "$(data_of "$1")" status >/dev/null 2>&1
}

# accepts_writes port: the node answers and is not in recovery.
accepts_writes() { [[ "$(q "$1" "select not pg_is_in_recovery()" 2>/dev/null)" == t ]]; }
accepts_connections() { q "$1" "select 1" >/dev/null 2>&1; }

# streams primary_port node [sync]: pg_stat_replication on the primary shows the node streaming (in sync).
streams() {
    local s
    s=$(q "$1" "select sync_state from pg_stat_replication
                where application_name = 'node_$2' and state = 'streaming'" 2>/dev/null) || return 1
    [[ -n "$s" && ( -z "${3:-}" || "$s" == sync ) ]]
}

# probe: P_NODE, the node that accepts writes, and S_NODE, the node streaming from it (either may be empty),
# asked of the servers (a state file only says which node was last seen primary: it is asked first); PRIMARY
# follows P_NODE.
probe() {
    P_NODE="" S_NODE=""
    local n first=${PRIMARY:-a}
    for n in "$first" "$(other "$first")"; do
        if accepts_writes "$(port_of "$n")"; then P_NODE=$n; break; fi
    done
    [[ -n "$P_NODE" ]] || return 0
    PRIMARY=$P_NODE
    n=$(other "$P_NODE")
    if streams "$(port_of "$P_NODE")" "$n"; then S_NODE=$n; fi
}

# caught_up primary_port node lsn: the standby has flushed WAL up to lsn.
caught_up() {
    [[ "$(q "$1" "select coalesce(bool_or(flush_lsn >= '$3'), false) from pg_stat_replication
                  where application_name = 'node_$2' and state = 'streaming'" 2>/dev/null)" == t ]]
}

setting_is() { [[ "$(q "$1" "show $2" 2>/dev/null)" == "$3" ]]; }

# --- pgbouncer ------------------------------------------------------------------------------------------

# alive pid: the process exists and is not a zombie (in a container, PID 1 may never reap orphans).
alive() {
    local st
    read -r _ _ st _ 2>/dev/null <"/proc/$1/stat" && [[ $st != Z && $st != X ]]
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
;; written by scripts/ha-lib.sh: databases point at the current primary (node $PRIMARY)
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

# --- TLS  -----------------------------------------------------------------------------------------------

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

# tls_url: both nodes over TLS as a managed database takes it, as a key=value string (a URL would need `&`,
# which test-ha.sh does not take from these lines), quoted for the shell; the password comes from the passfile.
tls_url() {
    [[ "$TLS_DIR" != *[[:space:]\'\\]* ]] || die "the path $TLS_DIR holds a space, quote or backslash"
    printf "'%s'" "host=localhost,localhost hostaddr=127.0.0.1,127.0.0.1 port=$PORT_A,$PORT_B dbname=$DB_NAME \
user=$TLS_USER passfile=$TLS_DIR/passfile target_session_attrs=read-write sslmode=verify-full \
sslrootcert=$TLS_DIR/ca.crt channel_binding=require"
}

# --- URLs -----------------------------------------------------------------------------------------------

url() { echo "postgresql://$DB_USER@127.0.0.1:$1/$DB_NAME"; }

# --- state and the commands both setups run alike ---------------------------------------------------------

# load_state: reads the state file; returns 1 when there is none and 2 (with a message) when it is damaged.
load_state() {
    local k
    [[ -f "$STATE" ]] || return 1
    # shellcheck source=/dev/null
    source "$STATE" || true
    for k in "${STATE_KEYS[@]}"; do
        if [[ -z "${!k:-}" ]]; then
            echo "$ME: $STATE is damaged; run $DOWN_HINT" >&2
            return 2
        fi
    done
    if [[ ! "$PRIMARY" =~ ^[ab]$ ]]; then
        echo "$ME: $STATE is damaged (PRIMARY=$PRIMARY); run $DOWN_HINT" >&2
        return 2
    fi
}

save_state() {
    local k
    for k in "${STATE_KEYS[@]}"; do printf '%s=%s\n' "$k" "${!k}"; done >"$STATE.tmp"
    mv -f "$STATE.tmp" "$STATE"
}

# locked_state [-s]: takes the lock, then reads the state (as the previous holder left it).
locked_state() {
    [[ -d "$HA" ]] || die "$SETUP does not exist; run $UP_HINT"
    lock "$@"
    load_state || die "$SETUP does not exist; run $UP_HINT"
}

is_common_command() {
    case "$1" in
        status | restart-standby | stop-standby | start-standby | pgbouncer-restart) return 0 ;;
        *) return 1 ;;
    esac
}

# common_command cmd: one of is_common_command's, with the sourcing script's cmd_standby for the standby's.
common_command() {
    case "$1" in
        status)
            locked_state -s
            probe
            echo "primary=${P_NODE:+$(port_of "$P_NODE")} standby=${S_NODE:+$(port_of "$S_NODE")}"
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
    esac
}

# usage: the sourcing script's header comment, on stderr; exits 2.
usage() {
    sed -n '2,/^set -euo/p' "$0" | sed '$d' >&2
    exit 2
}
