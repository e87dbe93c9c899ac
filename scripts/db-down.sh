#!/usr/bin/env bash
# db-down.sh: stop the project's throwaway cluster (scripts/db-up.sh). `--rm` also deletes its data.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DATA="$ROOT/.db/cluster"
RUN_AS=${CV_DB_RUN_AS:-postgres}
PG_BIN=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)}
[[ -x "$PG_BIN/pg_ctl" ]] || PG_BIN=$(dirname "$(command -v pg_ctl 2>/dev/null || echo /usr/bin/pg_ctl)")

as_owner() {
    if [[ $EUID -eq 0 ]]; then runuser -u "$RUN_AS" -- "$@"; else "$@"; fi
}

if [[ -f "$DATA/postmaster.pid" ]]; then
    as_owner "$PG_BIN/pg_ctl" -D "$DATA" -m fast -w -t 60 stop >/dev/null && echo "db-down: stopped" >&2
else
    echo "db-down: not running" >&2
fi
if [[ "${1:-}" == "--rm" && -f "$DATA/PG_VERSION" ]]; then
    rm -rf -- "$ROOT/.db"
    echo "db-down: removed .db" >&2
fi
