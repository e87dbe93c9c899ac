# shellcheck shell=bash disable=SC2034 # (the variables are for the scripts that source this file)
# lib.sh: what the cluster scripts share (sourced by db-up.sh, db-down.sh, tls-up.sh, pg18-up.sh and ha-ctl.sh,
# never run).
#   PG_BIN     the newest PostgreSQL server binaries (or $PG_BIN)
#   RUN_AS     the OS user server programs run as when started as root ($CV_DB_RUN_AS, default postgres)
#   DB_NAME, DB_USER   the application database and role ($CV_DB_NAME, $CV_DB_USER, default corevalue)
#   as_owner CMD...    runs CMD as RUN_AS when root (initdb, postgres and pgbouncer refuse root)
#   port_busy PORT     whether something accepts connections on 127.0.0.1:PORT
#   port_in_use PORT   port_busy, or a socket that does not listen holds PORT (for choosing a free port)
#   init_cluster BIN DATA LOGDIR   initdb of BIN into DATA as RUN_AS (trust, UTF8, C.UTF-8), its output in
#                      LOGDIR/initdb.log, shown and fatal on failure
#   start_cluster NAME BIN DATA LOG [PORT]   pg_ctl start (waiting up to 60 s), the log shown and fatal on
#                      failure; NAME prefixes the message. With PORT, a port taken between the caller's check
#                      and the server's bind is passed over for the next free one (up to five tries); the
#                      port the server listens on is then in STARTED_PORT
#   make_certificates DIR [--other-ca]   a throwaway certificate authority and a server certificate it signed
#                      for localhost and 127.0.0.1, in DIR (see the function); with --other-ca, a second
#                      authority the server does not use, for the tests of an untrusted certificate

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

# A client's local port comes from the same range as ours (Linux hands out 32768-60999): a connection that
# happens to use PORT accepts nothing, yet a server's bind to PORT fails on it (seen once in CI: test-pg18's
# server could not start on 54360). Sockets closing in TIME_WAIT do not block a server's bind and are left out.
# Without `ss`, only port_busy's check.
port_in_use() {
    port_busy "$1" && return 0
    command -v ss >/dev/null 2>&1 || return 1
    [[ -n "$(ss -Htan exclude time-wait "( sport = :$1 )" 2>/dev/null)" ]]
}

init_cluster() {
    local bin=$1 data=$2 logdir=$3
    as_owner "$bin/initdb" -D "$data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 --no-sync \
        >"$logdir/initdb.log" 2>&1 || { cat "$logdir/initdb.log" >&2; exit 1; }
}

# A client's connection can take the port between port_in_use and the server's bind (see above: a check cannot
# close that window), so a start that failed only for its socket moves to the next free port.
start_cluster() {
    local name=$1 bin=$2 data=$3 log=$4 port=${5:-} tries=1
    while :; do
        local options=()
        [[ -z "$port" ]] || options=(-o "-p $port")
        if as_owner "$bin/pg_ctl" -D "$data" -l "$log" "${options[@]}" -w -t 60 start >/dev/null; then
            STARTED_PORT=$port
            return 0
        fi
        if [[ -z "$port" ]] || ((tries >= 5)) || ! grep -q "could not create any TCP/IP sockets" "$log"; then
            echo "$name: pg_ctl start failed; log:" >&2
            cat "$log" >&2
            exit 1
        fi
        tries=$((tries + 1))
        port=$((port + 1))
        while port_in_use "$port"; do port=$((port + 1)); done
        echo "$name: the port was taken as the server started; trying port $port" >&2
        : >"$log"
    done
}

# make_certificates DIR [--other-ca]: writes into DIR (which exists) ca.key and ca.crt (an authority, "CoreValue
# test CA"), server.key and server.crt (CN localhost, subjectAltName DNS:localhost and IP:127.0.0.1, signed by
# it), and with --other-ca other-ca.key and other-ca.crt ("Another CA"); all valid for two days, for test
# servers only. P-256 keys: each takes milliseconds to make where an RSA-2048 key takes a quarter of a second,
# and scripts/ha-up.sh makes them on every fresh start. openssl's output goes to DIR/openssl.log, shown and
# fatal on failure. The keys are left readable by their owner only (the server refuses a wider key file).
make_certificates() {
    local dir=$1 other=${2:-}
    local key=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
    command -v openssl >/dev/null || { echo "make_certificates: openssl not found (apt-get install openssl)" >&2; exit 1; }
    # One && chain: a function called from an || list runs without set -e.
    (
        cd "$dir" \
            && openssl req -x509 "${key[@]}" -days 2 -subj "/CN=CoreValue test CA" -keyout ca.key -out ca.crt \
            && if [[ "$other" == --other-ca ]]; then
                openssl req -x509 "${key[@]}" -days 2 -subj "/CN=Another CA" -keyout other-ca.key -out other-ca.crt
            fi \
            && openssl req "${key[@]}" -subj "/CN=localhost" -keyout server.key -out server.csr \
            && printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >server.ext \
            && openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
                -extfile server.ext -out server.crt \
            && chmod 600 ca.key server.key
    ) >"$dir/openssl.log" 2>&1 || { cat "$dir/openssl.log" >&2; echo "make_certificates: openssl failed in $dir" >&2; exit 1; }
}
