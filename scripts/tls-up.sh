#!/usr/bin/env bash
# tls-up.sh: start a throwaway PostgreSQL cluster that only accepts TLS with SCRAM-SHA-256 passwords, as a
# managed database does; root-safe. Used by `make test` for the TLS tests (Tests/.../TLSTests.swift).
#
# usage: scripts/tls-up.sh     prints one line: the directory holding the cluster, its certificates and
#                              `env` (COREVALUE_TLS_* variables for the tests; source it).
#
# In .db/tls (git-ignored): a throwaway certificate authority (ca.crt) and a second one the server does not
# use (other-ca.crt), a server certificate for localhost and 127.0.0.1 signed by the first, a cluster with
# ssl = on, password_encryption = scram-sha-256 and pg_hba.conf rules `hostssl ... scram-sha-256` only (no
# plain `host` line: a connection without TLS is refused), on a free port from 54340 up, fsync off (a test
# server). The role `corevalue_tls` (password in .db/tls/password) owns database `corevalue_tls`.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR="$ROOT/.db/tls"
DATA="$DIR/cluster"
LOG="$DIR/server.log"

"$ROOT/scripts/install-deps.sh"
# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"

mkdir -p "$DIR"
if [[ -f "$DATA/postmaster.pid" ]] && as_owner "$PG_BIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; then
    echo "$DIR"
    exit 0
fi
rm -rf "$DIR"
mkdir -p "$DIR"
if [[ $EUID -eq 0 ]]; then
    id "$RUN_AS" >/dev/null 2>&1 || useradd --system --no-create-home "$RUN_AS"
    d="$DIR"
    while [[ "$d" != "/" ]]; do chmod o+x "$d" 2>/dev/null || true; d=$(dirname "$d"); done
fi

# Certificates: two authorities, and the server's, valid for localhost and 127.0.0.1 (scripts/lib.sh).
make_certificates "$DIR" --other-ca
(umask 077 && openssl rand -hex 16 >"$DIR/password")
[[ $EUID -eq 0 ]] && chown "$RUN_AS": "$DIR" "$DIR/server.key" "$DIR/server.crt" "$DIR/ca.crt"

port=${CV_TLS_PORT:-54340}
while port_in_use "$port"; do port=$((port + 1)); done
as_owner mkdir -p "$DATA"
chmod 700 "$DATA"
init_cluster "$PG_BIN" "$DATA" "$DIR"
{
    echo "listen_addresses = '127.0.0.1'"
    echo "unix_socket_directories = '$DIR'"
    echo "ssl = on"
    echo "ssl_cert_file = '$DIR/server.crt'"
    echo "ssl_key_file = '$DIR/server.key'"
    echo "password_encryption = 'scram-sha-256'"
    echo "fsync = off"
    echo "synchronous_commit = off"
    echo "log_min_messages = warning"
} | as_owner tee -a "$DATA/postgresql.conf" >/dev/null
# The Unix socket (this script's own setup) is trusted; TCP takes TLS and SCRAM, nothing else.
printf 'local all all trust\nhostssl all all 127.0.0.1/32 scram-sha-256\n' | as_owner tee "$DATA/pg_hba.conf" >/dev/null
: >"$LOG"
[[ $EUID -eq 0 ]] && chown "$RUN_AS": "$LOG"
start_cluster tls-up "$PG_BIN" "$DATA" "$LOG" "$port"
port=$STARTED_PORT

psql=(as_owner "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$DIR" -p "$port" -U postgres -d postgres)
"${psql[@]}" -c "create role corevalue_tls login superuser password '$(cat "$DIR/password")'"
"${psql[@]}" -c "create database corevalue_tls owner corevalue_tls"
cat >"$DIR/env" <<ENV
export COREVALUE_TLS_URL='host=localhost hostaddr=127.0.0.1 port=$port dbname=corevalue_tls user=corevalue_tls password=$(cat "$DIR/password") sslmode=verify-full sslrootcert=$DIR/ca.crt channel_binding=require'
export COREVALUE_TLS_DIR='$DIR'
ENV
echo "tls-up: ready on port $port (TLS and SCRAM only)" >&2
echo "$DIR"
