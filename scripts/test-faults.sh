#!/usr/bin/env bash
# test-faults.sh: the consistency workload under faults, each run checked (make test-faults); run as root.
#
# usage: scripts/test-faults.sh [RUN...]    (default: every run, in this order)
#   sigkill      the server is SIGKILLed (postmaster and backends) and restarted mid-run
#   client-kill  a workload process is SIGKILLed mid-run and another takes its place
#   partition    the server's link is cut (loss 100%) for a while, healed, delayed (2 s), healed
#   failover     the primary is stopped (-m immediate) and its synchronous standby promoted (ha-ctl failover)
#   pgbouncer    the workload goes through pgbouncer, which is restarted mid-run (ha-ctl pgbouncer-restart)
#   patroni      the primary's postmaster is SIGKILLed and Patroni promotes its synchronous standby on its
#                own (scripts/patroni-ctl.sh failover); the workload goes through pgbouncer, which Patroni's
#                callback points at the new primary
# The first three run against a server of this script's own in a network namespace of its own
# (scripts/faults-lib.sh), failover and pgbouncer against scripts/ha-up.sh's primary, standby and pgbouncer,
# patroni against scripts/patroni-ctl.sh's (the plain setup is taken down first: one setup at a time).
#
# A run: `corevalue-worker consistency-setup` in a schema of its own, $FAULT_PROCESSES workload processes
# (`consistency-run`, the struct API: list appends, unique and persistent registers; ConsistencyWorker.swift)
# each logging its history; the fault $FAULT_ROUNDS times (2), each once $FAULT_BEFORE (500) more operations were
# acknowledged; then $FAULT_AFTER (800) more acknowledged, a stop, one final read of every key, and the checker
# (scripts/consistency/check.py), whose verdict and counts end the run. The script fails when any run finds an
# anomaly or acknowledged too few operations, and first runs the checker's own tests. Histories and server
# logs stay in .db/faults/ for a failure to be looked into. CV_FAULTS_KEEP=1 keeps the HA servers running.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
SWIFT=${SWIFT:-swift}
PROCESSES=${FAULT_PROCESSES:-4}
KEYS=${FAULT_KEYS:-5}
BEFORE=${FAULT_BEFORE:-500}
AFTER=${FAULT_AFTER:-800}
ROUNDS=${FAULT_ROUNDS:-2}
RUNS=("$@")
[[ ${#RUNS[@]} -gt 0 ]] || RUNS=(sigkill client-kill partition failover pgbouncer patroni)
DIR="$ROOT/.db/faults"
# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"
# shellcheck source=scripts/faults-lib.sh
source "$ROOT/scripts/faults-lib.sh"

[[ $EUID -eq 0 ]] || fault_die "run as root: the runs make network namespaces and kill servers"
id "$RUN_AS" >/dev/null 2>&1 || useradd --system --no-create-home "$RUN_AS"
start=$SECONDS
scripts/install-deps.sh faults
"$SWIFT" build --product corevalue-worker
WORKER="$("$SWIFT" build --show-bin-path)/corevalue-worker"
python3 -m unittest discover -s scripts/consistency -p 'test_*.py' 2>&1 | tail -3 >&2

WORKERS=() HA_OWNED="" HA_SCRIPT=""
# ha_use plain|patroni: the HA setup a run needs (scripts/ha-ctl.sh's or scripts/patroni-ctl.sh's), started
# unless it runs already; the other one, if this script started it, is taken down first.
ha_use() {
    local script=scripts/ha-ctl.sh
    [[ $1 == plain ]] || script=scripts/patroni-ctl.sh
    [[ "$HA_SCRIPT" != "$script" ]] || return 0
    ha_release
    # A setup that was already running (someone's, kept to look around) is left running.
    "$script" status >/dev/null 2>&1 || HA_OWNED=1
    servers=$("$script" up)
    eval "$(grep -E '^HA_[A-Z_]+=[^;&|`$()]*$' <<<"$servers")"
    HA_SCRIPT=$script
}
ha_release() {
    if [[ -n "$HA_OWNED" && -z "${CV_FAULTS_KEEP:-}" ]]; then "$HA_SCRIPT" down --rm || true; fi
    HA_OWNED="" HA_SCRIPT=""
}
cleanup() {
    local pid
    for pid in "${WORKERS[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
    ns_server_stop
    # The server's data goes; its log, the histories and the verdicts stay.
    rm -rf "$DIR/srv/data"
    netns_down
    ha_release
}
trap cleanup EXIT
rm -rf "$DIR"
mkdir -p "$DIR"
d="$DIR"
while [[ "$d" != "/" ]]; do chmod o+x "$d" 2>/dev/null || true; d=$(dirname "$d"); done

acknowledged() { cat "$RUN_DIR"/p*.jsonl 2>/dev/null | grep -c '"type":"ok"' || true; }
# at_least N: N operations were acknowledged; fails the script at once when every workload process ended.
at_least() {
    (($(acknowledged) >= $1)) && return 0
    local pid
    for pid in "${WORKERS[@]}"; do kill -0 "$pid" 2>/dev/null && return 1; done
    tail -5 "$RUN_DIR"/p*.err >&2
    fault_die "every workload process ended before $1 operations were acknowledged"
}

# start_worker N: workload process pN of the current run, in the background.
start_worker() {
    "$WORKER" consistency-run "$URL" "$SCHEMA" "$1" "$((RANDOM + 1000 * $1))" 300 "$KEYS" "$RUN_DIR/p$1.jsonl" \
        2>>"$RUN_DIR/p$1.err" &
    WORKERS[$1]=$!
}

# workload NAME URL FAULT...: one run; FAULT (a command) runs ROUNDS times, each after BEFORE more operations were
# acknowledged.
workload() {
    local name=$1 status=0 n target round run_start=$SECONDS
    URL=$2 SCHEMA="faults_${1//-/_}" RUN_DIR="$DIR/$1"
    shift 2
    mkdir -p "$RUN_DIR"
    fault_say "$name: $PROCESSES processes on $URL"
    "$WORKER" consistency-setup "$URL" "$SCHEMA" "$KEYS" || fault_die "$name: the setup failed"
    WORKERS=()
    for n in $(seq 1 "$PROCESSES"); do start_worker "$n"; done
    for round in $(seq 1 "$ROUNDS"); do
        target=$(($(acknowledged) + BEFORE))
        wait_until "$BEFORE acknowledged operations before fault $round" at_least "$target"
        # Called from an || list, where set -e does not act: a fault that did not happen must fail the run.
        "$@" || fault_die "$name: fault $round ($*) failed"
    done
    target=$(($(acknowledged) + AFTER))
    wait_until "$AFTER more acknowledged operations after the fault" at_least "$target"
    for n in "${!WORKERS[@]}"; do touch "$RUN_DIR/p$n.jsonl.stop"; done
    for n in "${!WORKERS[@]}"; do wait "${WORKERS[$n]}" || status=$?; done
    WORKERS=()
    ((status == 0)) || { tail -5 "$RUN_DIR"/p*.err >&2; fault_die "$name: a workload process failed ($status)"; }
    "$WORKER" consistency-final "$URL" "$SCHEMA" "$KEYS" "$RUN_DIR/final.jsonl" || fault_die "$name: the final read"
    # The verdict: counts, anomalies (0 wanted), and a few examples of each anomaly found.
    python3 scripts/consistency/check.py --label "faults $name" --min-ok $((ROUNDS * BEFORE + AFTER)) "$RUN_DIR"/*.jsonl \
        >"$RUN_DIR/verdict.txt" || status=1
    cat "$RUN_DIR/verdict.txt" >&2
    fault_say "$name: $( ((status == 0)) && echo passed || echo FAILED) in $((SECONDS - run_start)) s"
    return $status
}

# tamper_check RUN: the checker must fail a copy of RUN's history with a lost append and a torn row planted in
# its final reads (scripts/consistency/tamper.py): a history format that drifted from the checker's, or a check
# that went blind, cannot pass unnoticed.
tamper_check() {
    local copy="$DIR/$1-tampered" out
    python3 scripts/consistency/tamper.py "$DIR/$1" "$copy" || fault_die "nothing to tamper with in $1's history"
    out=$(python3 scripts/consistency/check.py --label tampered "$copy"/*.jsonl) && fault_die "a tampered history passed"
    grep -q 'lost-append' <<<"$out" && grep -q 'torn-row' <<<"$out" \
        || { echo "$out" >&2; fault_die "the checker missed what was planted in a tampered history"; }
    fault_say "a tampered copy of $1's history fails the checker, with the lost append and the torn row planted"
}

# The faults.
kill_server() { ns_server_kill; }
kill_client() {
    local indices=("${!WORKERS[@]}")
    local victim=${indices[0]} replacement=$((${indices[-1]} + 1))
    kill -KILL "${WORKERS[$victim]}" || return 1
    wait "${WORKERS[$victim]}" 2>/dev/null || true
    unset "WORKERS[$victim]"
    fault_say "client p$victim killed (SIGKILL); p$replacement takes its place"
    start_worker "$replacement"
}
partition() {
    link_cut || return 1
    sleep "${FAULT_CUT_SECONDS:-5}"
    link_heal
    wait_until "operations acknowledged after the cut healed" at_least $(($(acknowledged) + 50))
    link_slow || return 1
    sleep "${FAULT_SLOW_SECONDS:-5}"
    link_heal
}
failover() { "$HA_CTL" failover; }
restart_pgbouncer() { "$HA_CTL" pgbouncer-restart; }

status=0
if [[ " ${RUNS[*]} " =~ \ (sigkill|client-kill|partition)\  ]]; then
    netns_up
    # A short directory: the server's Unix socket path must stay within 107 bytes wherever the clone is.
    ns_server_init "$DIR/srv"
    # Short network timeouts, so that a cut connection is given up in seconds and its commit looked up.
    ns_url="postgresql://$DB_USER@$NS_IP:5432/$DB_NAME?connect_timeout=3&tcp_user_timeout=5000"
    ns_url+="&keepalives_idle=2&keepalives_interval=1&keepalives_count=3"
fi
for run in "${RUNS[@]}"; do
    case "$run" in
        sigkill) workload sigkill "$ns_url" kill_server && tamper_check sigkill || status=1 ;;
        client-kill) workload client-kill "$ns_url" kill_client || status=1 ;;
        partition) workload partition "$ns_url" partition || status=1 ;;
        failover | pgbouncer)
            ha_use plain
            if [[ "$run" == failover ]]; then
                workload failover "$HA_MULTI_URL" failover || status=1
            else
                # pgbouncer 1.18 keeps no prepared statement between transactions.
                export CV_TEST_STATEMENT_CACHE=0
                workload pgbouncer "$HA_PGBOUNCER_URL" restart_pgbouncer || status=1
                unset CV_TEST_STATEMENT_CACHE
            fi
            ;;
        patroni)
            ha_use patroni
            export CV_TEST_STATEMENT_CACHE=0
            workload patroni "$HA_PGBOUNCER_URL" failover || status=1
            unset CV_TEST_STATEMENT_CACHE
            ;;
        *) fault_die "unknown run $run (sigkill, client-kill, partition, failover, pgbouncer, patroni)" ;;
    esac
done
fault_say "$( ((status == 0)) && echo passed || echo FAILED) in $((SECONDS - start)) s; histories in $DIR"
grep -h ': verdict ' "$DIR"/*/verdict.txt >&2 || true
exit $status
