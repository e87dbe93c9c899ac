#!/usr/bin/env bash
# tls-down.sh: stop the TLS cluster of scripts/tls-up.sh and delete it with its certificates.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR="$ROOT/.db/tls"
# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"

if [[ -f "$DIR/cluster/postmaster.pid" ]]; then
    as_owner "$PG_BIN/pg_ctl" -D "$DIR/cluster" -m fast -w -t 60 stop >/dev/null && echo "tls-down: stopped" >&2
fi
rm -rf -- "$DIR"
