#!/usr/bin/env bash
# db-down.sh: stop the project's throwaway cluster (scripts/db-up.sh). `--rm` also deletes its data.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DATA="$ROOT/.db/cluster"
# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"

if [[ -f "$DATA/postmaster.pid" ]]; then
    as_owner "$PG_BIN/pg_ctl" -D "$DATA" -m fast -w -t 60 stop >/dev/null && echo "db-down: stopped" >&2
else
    echo "db-down: not running" >&2
fi
if [[ "${1:-}" == "--rm" && -f "$DATA/PG_VERSION" ]]; then
    rm -rf -- "$ROOT/.db"
    echo "db-down: removed .db" >&2
fi
