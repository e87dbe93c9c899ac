#!/usr/bin/env bash
# test-ha.sh: the tests that need PostgreSQL as several servers (make test-ha); root-safe.
#
# usage: scripts/test-ha.sh      builds the tests if needed and runs them on two setups in turn, each started
#                                for the run and stopped and removed afterwards, also when a test fails:
#   the plain setup (scripts/ha-up.sh: a primary, a synchronous streaming standby, pgbouncer in transaction
#   mode; its failover is the script's own `pg_ctl promote`):
#   1. through pgbouncer: every store test (CoreValuePostgresTests, with the PostgresStore behaviour suite,
#      sync and async) except the few that need a session of their own;
#   2. the failover suites, on the primary and standby, one at a time: a writer across a failover (no
#      acknowledged write lost, no error), a listener across a failover (it listens again and reports the
#      gap), a read-only store across a standby restart (reads go on, and it returns to the standby); history
#      writer and reader processes across two failovers and a standby restart (every reader sees every
#      committed transaction once, one of them resuming from its token on the new primary); a writer across a
#      failover over TLS as a managed database takes it (HA_TLS_MULTI_URL: both nodes, sslmode=verify-full,
#      channel_binding=require, a SCRAM password from a passfile);
#   then the Patroni setup (scripts/patroni-ctl.sh: the same two nodes and pgbouncer, managed by Patroni with
#   its Raft store; its failover SIGKILLs the primary's postmaster and Patroni promotes the synchronous
#   standby on its own, repoints pgbouncer and brings the old primary back by pg_rewind):
#   3. the same failover suites, unchanged: HA_CTL names patroni-ctl.sh, whose commands are ha-ctl.sh's;
#   4. the writer across a failover once more, the primary's whole machine lost (CV_PATRONI_FAILOVER=machine:
#      its Patroni is killed too, and Patroni promotes once the leader key expires).
# CV_HA_SETUPS="plain patroni" (the default) chooses the setups and their order; CV_HA_KEEP=1 leaves the
# servers running (to look around after a failure; a setup already running is left running too).
# CI=true makes tests fail rather than skip when their servers are missing.
# Logs: .db/ha-logs/ (each step's `swift test` output, and the servers' logs, copied when they stop).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
SWIFT=${SWIFT:-swift}
export CI=${CI:-true}

"$SWIFT" build --build-tests

SETUPS=${CV_HA_SETUPS:-plain patroni}
for setup in $SETUPS; do
    [[ $setup == plain || $setup == patroni ]] || { echo "test-ha: unknown setup $setup in CV_HA_SETUPS" >&2; exit 2; }
done
scripts/install-deps.sh ha

LOG_DIR="$ROOT/.db/ha-logs"
mkdir -p "$LOG_DIR"

# Per setup: its control script, and the setups this run started (and so stops, logs saved first).
ctl_of() { if [[ $1 == plain ]]; then echo scripts/ha-ctl.sh; else echo scripts/patroni-ctl.sh; fi; }
started=()
# The servers' logs outlive them, for a failure to be looked into.
save_logs() {
    local setup=$1 log name
    if [[ $setup == plain ]]; then
        for log in "$ROOT"/.db/ha/node-*/server.log "$ROOT"/.db/ha/pgbouncer/pgbouncer.log; do
            if [[ -f "$log" ]]; then cp "$log" "$LOG_DIR/server-$(basename "$(dirname "$log")").log"; fi
        done
    else
        for log in "$ROOT"/.db/patroni/node-*/{server,patroni}.log \
            "$ROOT"/.db/patroni/{raft/raft,pgbouncer/pgbouncer}.log; do
            name=$(basename "$(dirname "$log")")-$(basename "$log")
            if [[ -f "$log" ]]; then cp "$log" "$LOG_DIR/patroni-$name"; fi
        done
    fi
}
stop_setup() {
    local setup=$1
    save_logs "$setup"
    [[ "${CV_HA_KEEP:-}" == 1 ]] || "$(ctl_of "$setup")" down --rm
}
cleanup() {
    local setup
    for setup in "${started[@]}"; do stop_setup "$setup" || true; done
}
trap cleanup EXIT

# start_setup setup: starts it (unless it is running already, which is then left running) and exports
# the HA_* variables its `up` prints: only the HA_NAME=value lines, whatever else reached stdout.
start_setup() {
    local setup=$1 servers
    # Running means a primary answers; a setup left on disk with its servers down is this run's to stop.
    if [[ "$("$(ctl_of "$setup")" status 2>/dev/null)" != primary=[0-9]* ]]; then started+=("$setup"); fi
    if [[ $setup == plain ]]; then servers=$(scripts/ha-up.sh); else servers=$(scripts/patroni-ctl.sh up); fi
    eval "$(grep -E '^HA_[A-Z_]+=[^;&|`$()]*$' <<<"$servers")"
    export HA_PRIMARY_URL HA_STANDBY_URL HA_MULTI_URL HA_STANDBY_PREFER_URL HA_PGBOUNCER_URL HA_TLS_MULTI_URL HA_CTL
}

# Stops a setup this run started, once its steps are done, so that the next one has the machine to itself.
finish_setup() {
    local setup=$1 rest=() s
    for s in "${started[@]}"; do if [[ $s == "$setup" ]]; then stop_setup "$s"; else rest+=("$s"); fi; done
    started=(${rest[@]+"${rest[@]}"})
}

# Runs `swift test` on a filter (minus `skip`) and fails when it fails, or when the log has no line matching `passed`
# (so that a filter matching nothing, or tests skipped for want of servers, cannot pass).
run() {
    local name=$1 url=$2 filter=$3 passed=$4 skip=$5
    local log="$LOG_DIR/$name.log"
    local start=$SECONDS status=0
    local arguments=(--skip-build --filter "$filter")
    [[ -z "$skip" ]] || arguments+=(--skip "$skip")
    echo "test-ha: $name" >&2
    DATABASE_URL="$url" "$SWIFT" test "${arguments[@]}" >"$log" 2>&1 || status=$?
    grep -E '^(✔|✘) (Suite|Test run)|✘' "$log" >&2 || true
    if (( status != 0 )) || ! grep -Eq "$passed" "$log"; then
        echo "test-ha: $name FAILED (log: $log)" >&2
        grep -E '✘|error' "$log" | head -40 >&2 || true
        return 1
    fi
    echo "test-ha: $name passed in $((SECONDS - start)) s" >&2
}

# The failover suites, on whichever setup HA_CTL controls; `prefix` names their logs.
failover_suites() {
    local prefix=$1 status=0
    run "${prefix}failover" "$HA_MULTI_URL" HighAvailabilityTests '✔ Suite HighAvailabilityTests passed' '' || status=1
    grep -h '^ha: ' "$LOG_DIR/${prefix}failover.log" >&2 || true
    run "${prefix}history-failover" "$HA_MULTI_URL" HistoryFailoverTests '✔ Suite HistoryFailoverTests passed' '' \
        || status=1
    grep -h '^history failover' "$LOG_DIR/${prefix}history-failover.log" >&2 || true
    run "${prefix}tls-failover" "$HA_TLS_MULTI_URL" TLSFailoverTests '✔ Suite TLSFailoverTests passed' '' || status=1
    grep -h '^ha tls: ' "$LOG_DIR/${prefix}tls-failover.log" >&2 || true
    return "$status"
}

# The plain setup: every store test through pgbouncer, then the failover suites.
steps_plain() {
    local status=0
    # Every store test, except those that need a session of their own by design: killing a given backend
    # (RetryTests, FailureRecoveryTests, the streamed save whose backend is killed, the stream that loses its
    # connection, the pool whose every backend is terminated: behind pgbouncer a backend serves other clients
    # too, and keeps the application_name of an earlier one, so those kills hit other tests) and LISTEN (ChangeNotificationTests; HighAvailabilityTests hears a
    # store behind pgbouncer through its direct listenConnection). The driver's own tests (LibPQTests) test
    # session features (LISTEN, COPY into temporary tables, cancel) and stay on direct connections. TLSTests
    # need the TLS-only server that `make test` starts for them, and LeastPrivilegeTests (with the behaviour and inheritance
    # suites run as an application role) log in as roles they create, which pgbouncer's user list does not know: both run in `make test`.
    # CommitResolutionTests cut a connection in a proxy of their own and keep its server side open, so the cut
    # transaction's backend stays idle in it: a direct connection's lookup knows that backend by process ID and
    # ends it, but pgbouncer's process IDs are its own, so behind it the save run again would wait on the cut
    # transaction's row locks for as long as the proxy holds them (a real client that dies closes its socket, and
    # pgbouncer then closes the server connection).
    # A transaction sandbox (TestSchema.withTransaction) holds one server connection for its whole test, which
    # transaction mode allows: its own tests run here, except aSandboxWhoseConnectionWasLostIsOver (it kills its
    # backend) and postgresStoreBehaviourInTransactionSandboxes, whose parallel cases hold a sandbox per store,
    # more than pgbouncer's pool of 40 at once, and wait on each other until pgbouncer's query_wait_timeout.
    # The failover suites (HighAvailabilityTests, HistoryFailoverTests, TLSFailoverTests) change the servers and
    # run in steps of their own below.
    # The example-model stores go without prepared statements (as Scaling.md advises for pgbouncer 1.18); the
    # behaviour suite's stores keep the default, whose connections turn their caches off by themselves.
    export CV_TEST_STATEMENT_CACHE=0
    run pgbouncer "$HA_PGBOUNCER_URL" CoreValuePostgresTests \
        '✔ Test postgresStoreBehaviour\(_:_:\) with [0-9]+ test cases passed' \
        'HighAvailabilityTests|HistoryFailoverTests|TLSFailoverTests|aHistoryListenerMissesNothing|RetryTests|FailureRecoveryTests|ChangeNotificationTests|aConnectionKilledMidStream|aStreamThatLosesItsConnectionAfterABatch|aFetchAfterEveryPooledBackendWasTerminated|TLSTests|LeastPrivilegeTests|historyWorksWithTheGrantsAlone|postgresStoreBehaviourAsApplicationRole|postgresStoreInheritanceAsApplicationRole|postgresStoreBehaviourInTransactionSandboxes|aSandboxWhoseConnectionWasLostIsOver|CommitResolutionTests' \
        || status=1
    unset CV_TEST_STATEMENT_CACHE
    failover_suites "" || status=1
    return "$status"
}

# The Patroni setup: the failover suites, the manager deciding the failovers; then the writer once more across
# the loss of the primary's whole machine (its Patroni too), which Patroni answers only once the leader key
# has expired (ttl, 20 s): within the writer's failover budget (30 s), so still no error.
steps_patroni() {
    local status=0
    failover_suites patroni- || status=1
    CV_PATRONI_FAILOVER=machine run patroni-machine-failover "$HA_MULTI_URL" \
        'HighAvailabilityTests/aWriterAcrossAFailoverLosesNoAcknowledgedWriteAndSeesNoError' \
        '✔ Test aWriterAcrossAFailoverLosesNoAcknowledgedWriteAndSeesNoError\(\) passed' '' || status=1
    grep -h '^ha: ' "$LOG_DIR/patroni-machine-failover.log" >&2 || true
    return "$status"
}

status=0
for setup in $SETUPS; do
    start=$SECONDS
    start_setup "$setup"
    "steps_$setup" || status=1
    finish_setup "$setup"
    echo "test-ha: the $setup setup took $((SECONDS - start)) s" >&2
done
exit $status
