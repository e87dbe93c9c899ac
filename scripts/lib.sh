# shellcheck shell=bash disable=SC2034 # (the variables are for the scripts that source this file)
# lib.sh: what the cluster scripts share (sourced by db-up.sh, db-down.sh, tls-up.sh, pg18-up.sh and ha-ctl.sh,
# never run).
#   PG_BIN     the newest PostgreSQL server binaries (or $PG_BIN)
#   RUN_AS     the OS user server programs run as when started as root ($CV_DB_RUN_AS, default postgres)
#   DB_NAME, DB_USER   the application database and role ($CV_DB_NAME, $CV_DB_USER, default corevalue)
#   as_owner CMD...    runs CMD as RUN_AS when root (initdb, postgres and pgbouncer refuse root)
#   port_busy PORT     whether something accepts connections on 127.0.0.1:PORT
#   init_cluster BIN DATA LOGDIR   initdb of BIN into DATA as RUN_AS (trust, UTF8, C.UTF-8), its output in
#                      LOGDIR/initdb.log, shown and fatal on failure
#   start_cluster NAME BIN DATA LOG [PORT]   pg_ctl start (waiting up to 60 s), the log shown and fatal on
#                      failure; NAME prefixes the message

RUN_AS=${CV_DB_RUN_AS:-postgres}
DB_NAME=${CV_DB_NAME:-corevalue}
DB_USER=${CV_DB_USER:-corevalue}

PG_BIN=${PG_BIN:-}
if [[ -z "$PG_BIN" ]]; then
    # shellcheck disable=SC2012 # (the version directories have plain names)
    PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
    [[ -x "$PG_BIN/initdb" ]] || PG_BIN=$(dirname "$(command -v initdb 2>/dev/null || echo /usr/bin/initdb)")
fi

as_owner() {
    if [[ $EUID -eq 0 ]]; then runuser -u "$RUN_AS" -- "$@"; else "$@"; fi
}

port_busy() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

init_cluster() {
    local bin=$1 data=$2 logdir=$3
    as_owner "$bin/initdb" -D "$data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 --no-sync \
        >"$logdir/initdb.log" 2>&1 || { cat "$logdir/initdb.log" >&2; exit 1; }
}

start_cluster() {
    local name=$1 bin=$2 data=$3 log=$4 port=${5:-}
    local options=()
    [[ -z "$port" ]] || options=(-o "-p $port")
    as_owner "$bin/pg_ctl" -D "$data" -l "$log" "${options[@]}" -w -t 60 start >/dev/null \
        || { echo "$name: pg_ctl start failed; log:" >&2; cat "$log" >&2; exit 1; }
}
