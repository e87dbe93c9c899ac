#!/usr/bin/env bash
# ha-down.sh: stop the multi-server test setup (scripts/ha-up.sh): pgbouncer, then both nodes (fast).
# usage: scripts/ha-down.sh [--rm]      --rm also deletes .db/ha
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
case "${1:-}" in
    "" | --rm) ;;
    *) echo "usage: $0 [--rm]" >&2; exit 2 ;;
esac
exec "$ROOT/scripts/ha-ctl.sh" down "$@"
