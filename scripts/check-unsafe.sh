#!/usr/bin/env bash
# Fails when unsafe code sits outside its room (STYLE.md: "Unsafe code lives in one room"). The library's rooms:
#   Sources/CoreValue/Unsafe/             reflection and raw reads at field offsets (StructFields), per-thread
#                                         slots (ThreadSlot), process-wide tables under a lock (LockedTable),
#                                         and the few unchecked operations the rest calls (Unchecked)
#   Sources/CoreValuePostgres/Driver/     the bytes of binds, results and arrays on the wire
#   Sources/LibPQ/                        the C boundary: all of it wraps libpq's pointers
#   Sources/CoreValueTesting/Subprocess.swift  the test product's one C call that Swift cannot name safely
#                                         (posix_spawn's addclosefrom, looked up at run time)
# Anywhere else in the library: no unsafe pointers or buffers, no Unmanaged, no unchecked casts, no
# nonisolated(unsafe), no reflection SPI. Two marks stay where their types are, each with its own check:
# @exclusivity(unchecked) (listed, with the checked build as fallback: scripts/check-exclusivity.sh) and
# @unchecked Sendable, which must say why on one of the three lines after it (`// @unchecked: ...`).
#
# Usage: scripts/check-unsafe.sh (from the package root; instant).
set -euo pipefail
cd "$(dirname "$0")/.."

pattern='Unsafe[A-Z]|withUnsafe|unsafeDowncast|unsafeBitCast|Unmanaged|nonisolated\(unsafe\)|_spi\(Reflection\)'
pattern+='|_forEachField|assumingMemoryBound|fromByteOffset|pthread_(getspecific|setspecific|key_)|withUTF8|baseAddress|memcmp'
status=0
outside="$(grep -rnE "$pattern" Sources/CoreValue Sources/CoreValuePostgres Sources/CoreValueTesting --include='*.swift' |
    grep -vE '^Sources/(CoreValue/Unsafe|CoreValuePostgres/Driver)/|^Sources/CoreValueTesting/Subprocess\.swift:' || true)"
if [[ -n "$outside" ]]; then
    echo "unsafe code outside its room (move it behind a type in Sources/CoreValue/Unsafe or Driver/):"
    echo "$outside"
    status=1
fi

unexplained="$(grep -rnE -A3 '@unchecked Sendable' Sources --include='*.swift' | awk '
    /@unchecked Sendable/ && match($0, /^[^:]+:[0-9]+:/) { if (open != "") print open; open = substr($0, 1, RLENGTH - 1); next }
    /\/\/ @unchecked:/ { open = "" }
    /^--$/ { if (open != "") print open; open = "" }
    END { if (open != "") print open }')"
if [[ -n "$unexplained" ]]; then
    echo "@unchecked Sendable without a reason (\`// @unchecked: ...\` on one of the three lines after it):"
    echo "$unexplained"
    status=1
fi

[[ $status -eq 0 ]] && echo "unsafe: none outside Sources/CoreValue/Unsafe, CoreValuePostgres/Driver, LibPQ and" \
    "CoreValueTesting/Subprocess.swift;" \
    "every @unchecked Sendable says why"
exit $status
