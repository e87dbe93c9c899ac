#!/usr/bin/env bash
# request-floor.sh: what a client with no cost of its own reaches with our request path's SQL.
#
# usage: scripts/request-floor.sh BENCH_BINARY URL [RUNS=5] [OPS=4000]
#
# Per run: `BENCH_BINARY --requests URL 10000 OPS 64 8` (commit identifiers off, then on; it leaves its schema
# `bench_requests` with 10,000 accounts), then pgbench (-M prepared), serially and with 8 clients on 2 threads:
#   ref        pgbench's own request as ../shared/bench/requests runs it (SELECT, BEGIN, upsert, COMMIT)
#   ours       the two statements our `update` sends, as the server's log shows them: the read by identifier
#              and the one-row UPDATE carrying its commit identifier's row (advisory lock, returned rows as
#              JSON); the identifier increases per client as ours are time-ordered
#   ours_off   the same read and the bare `UPDATE ... RETURNING` (COREVALUE_BENCH_COMMIT_IDS=off)
# Prints one line per measurement, then the best of RUNS for each with its ratio to pgbench's own request
# (BENCHMARKS.md, "eleventh round"). The statements
# below follow WriteStatements and CommitMarker; if those change, compare with the server's log
# (log_statement = all) and update them here.
set -euo pipefail
BIN=${1:?usage: request-floor.sh BENCH_BINARY URL [RUNS] [OPS]}; URL=${2:?URL}; RUNS=${3:-5}; OPS=${4:-4000}
PGBENCH=$(command -v pgbench || ls /usr/lib/postgresql/*/bin/pgbench 2>/dev/null | tail -1 || true)
[[ -x "$PGBENCH" ]] || { echo "request-floor: pgbench not found (apt-get install postgresql-client)" >&2; exit 1; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
READ='SELECT t."_pk", t."_version", t."id"::bigint, t."name"::text, t."balance"::bigint, t."updated"::timestamptz FROM "bench_requests"."Account" AS t WHERE t."id" = :k;'
UPDATE='UPDATE "bench_requests"."Account" AS t SET "id" = :k, "name" = '"'account'"', "balance" = 1, "updated" = now(), "_version" = t."_version" + 1 WHERE t."_pk" = :k RETURNING t."_pk", t."_version"'
cat >"$T/ref.sql" <<'EOF'
\set k random(1, 10000)
SELECT id, name, balance, updated FROM floor_ref.account WHERE id = :k;
BEGIN;
INSERT INTO floor_ref.account (id, name, balance, updated) VALUES (:k, 'account', 1, now()) ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, balance = floor_ref.account.balance + 1, updated = EXCLUDED.updated;
COMMIT;
EOF
printf '%s\n' '\set k random(1, 10000)' '\set seq :seq + 1' '\set lk random(1, 1000000000000)' "$READ" \
  "WITH w AS ($UPDATE), m AS (INSERT INTO \"bench_requests\".\"_corevalue_commits\" (id, at, result) SELECT (lpad(to_hex(:seq::bigint), 16, '0') || lpad(to_hex(:client_id::bigint), 16, '0'))::uuid, now(), (SELECT jsonb_build_array(to_jsonb(w)) FROM w) FROM pg_advisory_xact_lock(:lk)) SELECT * FROM w;" \
  >"$T/ours.sql"
printf '%s\n' '\set k random(1, 10000)' "$READ" "$UPDATE;" >"$T/ours_off.sql"
psql "$URL" -XqAt -c "SET client_min_messages TO warning" -c "DROP SCHEMA IF EXISTS floor_ref CASCADE" -c "CREATE SCHEMA floor_ref" \
  -c "CREATE TABLE floor_ref.account (id bigint PRIMARY KEY, name text NOT NULL, balance bigint NOT NULL, updated timestamptz NOT NULL)" \
  -c "INSERT INTO floor_ref.account SELECT i, 'account ' || i, 0, timestamptz '2020-09-13 12:26:40+00' FROM generate_series(1, 10000) i" \
  -c "VACUUM ANALYZE floor_ref.account" >/dev/null
{
for r in $(seq 1 "$RUNS"); do
  for ids in off on; do
    echo "run=$r client=corevalue commit_ids=$ids $(COREVALUE_BENCH_COMMIT_IDS=$ids "$BIN" --requests "$URL" 10000 "$OPS" 64 8 \
      | grep '^op=' | awk '{print $1, $4, $NF}' | tr '\n' ' ')"
  done
  for script in ref ours ours_off; do
    for clients in 1 8; do
      # A distinct starting sequence per run and client count keeps the commit identifiers unique.
      tps=$("$PGBENCH" -n -M prepared -c "$clients" -j $((clients > 1 ? 2 : 1)) -t $((OPS / clients)) \
        -D seq=$(((r * 10 + clients) * 1000000)) -f "$T/$script.sql" "$URL" | sed -nE 's/^tps = ([0-9.]+).*/\1/p')
      echo "run=$r client=pgbench script=$script clients=$clients ops_per_s=$tps"
    done
  done
done
psql "$URL" -XqAt -c "SET client_min_messages TO warning" -c "DROP SCHEMA IF EXISTS floor_ref CASCADE" >/dev/null
} | tee "$T/lines"
# Best of the runs, and each against pgbench's own request at the same concurrency.
awk '
  /client=pgbench/ { m = split($0, f, /[ =]/); for (i = 1; i < m; i += 2) v[f[i]] = f[i + 1]
    k = v["script"] " " v["clients"]; if (v["ops_per_s"] + 0 > best[k]) best[k] = v["ops_per_s"] + 0 }
  /client=corevalue/ { ids = ""; for (i = 1; i <= NF; i++) { if ($i ~ /^commit_ids=/) ids = substr($i, 12)
      if ($i == "op=update" || $i == "op=mixed") { op = substr($i, 4); split($(i + 1), o, "=")
        k = "corevalue_" ids " " (op == "update" ? 1 : 8); if (o[2] + 0 > best[k]) best[k] = o[2] + 0 } } }
  END { printf "%-22s %12s %8s %12s %8s\n", "best of runs", "serial", "ratio", "8 at once", "ratio"
    n = split("ref ours ours_off corevalue_on corevalue_off", names, " ")
    for (j = 1; j <= n; j++) { a = best[names[j] " 1"]; b = best[names[j] " 8"]
      printf "%-22s %12.0f %8.2f %12.0f %8.2f\n", names[j], a, a / best["ref 1"], b, b / best["ref 8"] } }
' "$T/lines"
