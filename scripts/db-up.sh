#!/usr/bin/env bash
# db-up.sh: start (creating it if needed) the project's throwaway PostgreSQL cluster; root-safe.
#
# usage: scripts/db-up.sh        prints one line on stdout: the connection URL (TCP on 127.0.0.1)
#
# The cluster lives in .db/cluster (git-ignored), listens on 127.0.0.1 on a free port (from 54320 up,
# or $CV_DB_PORT), trusts local connections, sorts text in C order (--locale=C.UTF-8) and runs with
# throwaway settings (fsync off). If it is already running, its URL is printed again.
# As root, initdb and pg_ctl run as the `postgres` OS user ($CV_DB_RUN_AS), since they refuse root.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DB_DIR="$ROOT/.db"
DATA="$DB_DIR/cluster"
SOCK="$DB_DIR/sock"
LOG="$DB_DIR/server.log"

"$ROOT/scripts/install-deps.sh"

# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"
[[ -x "$PG_BIN/initdb" ]] || { echo "db-up: initdb not found" >&2; exit 1; }

url() { echo "postgresql://$DB_USER@127.0.0.1:$1/$DB_NAME"; }

mkdir -p "$DB_DIR"
if [[ $EUID -eq 0 ]]; then
    id "$RUN_AS" >/dev/null 2>&1 || useradd --system --no-create-home "$RUN_AS"
    chown "$RUN_AS": "$DB_DIR"
    # The server user must be able to reach the data directory through every parent.
    d="$DB_DIR"
    while [[ "$d" != "/" ]]; do chmod o+x "$d" 2>/dev/null || true; d=$(dirname "$d"); done
fi

# Already running? Print its URL.
if [[ -f "$DATA/postmaster.pid" ]] && as_owner "$PG_BIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; then
    port=$(sed -n '4p' "$DATA/postmaster.pid")
    url "$port"
    exit 0
fi

port=${CV_DB_PORT:-54320}
while port_in_use "$port"; do port=$((port + 1)); done

start=$(date +%s.%N)
if [[ ! -f "$DATA/PG_VERSION" ]]; then
    rm -rf "$DATA"
    as_owner mkdir -p "$DATA" "$SOCK"
    chmod 700 "$DATA"
    init_cluster "$PG_BIN" "$DATA" "$DB_DIR"
    {
        echo "# --- scripts/db-up.sh ---"
        echo "listen_addresses = '127.0.0.1'"
        echo "unix_socket_directories = '$SOCK'"
        echo "max_connections = 300"
        echo "shared_buffers = 256MB"
        echo "fsync = off"
        echo "synchronous_commit = off"
        echo "full_page_writes = off"
        echo "log_min_messages = warning"
    } | as_owner tee -a "$DATA/postgresql.conf" >/dev/null
fi
as_owner mkdir -p "$SOCK"
: >"$LOG"
[[ $EUID -eq 0 ]] && chown "$RUN_AS": "$LOG"
start_cluster db-up "$PG_BIN" "$DATA" "$LOG" "$port"
port=$STARTED_PORT
"$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$port" -t 30 \
    || { echo "db-up: server not ready; log:" >&2; cat "$LOG" >&2; exit 1; }

# The application role and database (same names as docker-compose.yml).
psql=("$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U postgres -d postgres)
if [[ -z "$("${psql[@]}" -tAc "select 1 from pg_roles where rolname = '$DB_USER'")" ]]; then
    "${psql[@]}" -c "create role \"$DB_USER\" login superuser password 'corevalue'"
fi
if [[ -z "$("${psql[@]}" -tAc "select 1 from pg_database where datname = '$DB_NAME'")" ]]; then
    "${psql[@]}" -c "create database \"$DB_NAME\" owner \"$DB_USER\""
fi
awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "db-up: ready in %.2fs\n", b - a }' >&2
url "$port"
