#!/usr/bin/env bash
# request-instructions.sh: the request path's client work in instructions per operation, counted by callgrind.
# Unlike the time an op takes, the count barely moves from run to run, so a change of a few percent shows.
#
# usage: scripts/request-instructions.sh BENCH_BINARY URL
#
#   get, update  `BENCH_BINARY --requests-serial URL 1000 1000`, collected only inside the op's own function
#                (`Requests.read`, `Requests.increment(_:in:)`: context, query, unboxing, boxing, save), on the
#                calling thread
#   mixed        every thread of `BENCH_BINARY --requests URL 2000 OPS 64 8` for OPS 640 and 1920, the
#                difference divided by 1,280 (what one more operation of each op costs, setup cancelled out),
#                less get and update: mixed's own read-change-save through the async API, its handoffs to the
#                store's threads and back included
# Needs valgrind (apt-get install valgrind); several minutes (callgrind runs every thread on one core, ~50x
# slower). The binary's symbols name the functions collected; rename them here if those change.
# SWIFT_DETERMINISTIC_HASHING=1: a table's probe sequence is the same in every run. BENCHMARKS.md, twelfth round.
set -euo pipefail
BIN=${1:?usage: request-instructions.sh BENCH_BINARY URL}; URL=${2:?URL}
command -v valgrind >/dev/null || { echo "request-instructions: valgrind not found (apt-get install valgrind)" >&2; exit 1; }
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
export SWIFT_DETERMINISTIC_HASHING=1
grind() { local out=$1; shift; valgrind --tool=callgrind --callgrind-out-file="$T/$out" "$@" >"$T/$out.log" 2>&1 ||
  { echo "request-instructions: $* failed:" >&2; tail -5 "$T/$out.log" >&2; exit 1; }; }
# Instructions a callgrind output file collected (its `summary:` lines; one file per thread at most).
total() { awk '/^summary:/ { sum += $2 } END { print sum + 0 }' "$T/$1"; }
grind get --toggle-collect='*RequestsV4read*' "$BIN" --requests-serial "$URL" 1000 1000
grind update --toggle-collect='*RequestsV9increment_2in*' "$BIN" --requests-serial "$URL" 1000 1000
grind mixed640 "$BIN" --requests "$URL" 2000 640 64 8
grind mixed1920 "$BIN" --requests "$URL" 2000 1920 64 8
get=$(( $(total get) / 1050 ))   # 1,000 gets and the 50 warm-up reads
update=$(( $(total update) / 1000 ))
mixed=$(( ($(total mixed1920) - $(total mixed640)) / 1280 - get - update ))
printf 'op=get instructions_per_op=%d\nop=update instructions_per_op=%d\nop=mixed instructions_per_op=%d\n' \
  "$get" "$update" "$mixed"
