#!/usr/bin/env bash
# Fails when the optimizer checks an access to ManagedObject's or ManagedObjectContext's hot stored properties
# at run time. None of them is marked @exclusivity(unchecked): each is written so that no access overlaps
# another (see ManagedObject.attributes), and the whole-module optimizer then proves them exclusive and drops
# the run-time check. One new access that calls out or releases something inside it brings the check back on
# every access to that property, silently (BENCHMARKS.md, "Exclusivity checks back on public types"): this
# finds it.
#
# It also holds the one list of the properties whose run-time checks are switched off (@exclusivity(unchecked)),
# and fails when the sources mark any other: each is internal, used by one thread at a time or under a lock,
# and has the reason beside it. `scripts/checked-build.sh` (make check) builds the package with every one of
# them checked again and runs the behaviour suite on it, so an overlap the marks would hide still traps in CI.
#
# Usage: scripts/check-exclusivity.sh (from the package root; about a minute, one compiler process).
set -euo pipefail
cd "$(dirname "$0")/.."

# file:property, for every stored property marked @exclusivity(unchecked).
unchecked=(
    Sources/CoreValue/Boxing/BoxRecord.swift:attributeNames Sources/CoreValue/Boxing/BoxRecord.swift:attributes
    Sources/CoreValue/Boxing/BoxRecord.swift:attributesWritten Sources/CoreValue/Boxing/BoxRecord.swift:isNew
    Sources/CoreValue/Boxing/BoxRecord.swift:object Sources/CoreValue/Boxing/BoxRecord.swift:relationships
    Sources/CoreValue/Boxing/LayoutCache.swift:keyPathPlans Sources/CoreValue/Boxing/LayoutCache.swift:lastKeyPathPlan
    Sources/CoreValue/Boxing/LayoutCache.swift:reflection
    Sources/CoreValue/Context/ContextTables.swift:registry Sources/CoreValue/Context/ContextTables.swift:pendingInserts
    Sources/CoreValue/Context/ContextTables.swift:pendingChanges Sources/CoreValue/Context/ContextTables.swift:pendingDeletes
    Sources/CoreValue/Context/ContextTables.swift:missingIDs Sources/CoreValue/Context/ContextTables.swift:uniqueIndex
    Sources/CoreValue/Context/ContextTables.swift:unindexed Sources/CoreValue/Context/ContextTables.swift:uniques
    Sources/CoreValue/Context/ContextTables.swift:identifiedAttributes
    Sources/CoreValue/Context/ContextTables.swift:upsertAttributes Sources/CoreValue/Context/ContextTables.swift:upsertKey
    Sources/CoreValue/Context/ContextTables.swift:originalAttributes Sources/CoreValue/Context/ContextTables.swift:originalLinks
    Sources/CoreValue/Context/ContextTables.swift:identifiedRelationships Sources/CoreValue/Context/ContextTables.swift:layouts
    Sources/CoreValue/Context/ContextTables.swift:readVersions
    Sources/CoreValuePostgres/Pool/ConnectionPool.swift:closed Sources/CoreValuePostgres/Pool/ConnectionPool.swift:idle
    Sources/CoreValuePostgres/Pool/ConnectionPool.swift:open
    Sources/LibPQ/Connection/Connection+Pipeline.swift:statements
    Sources/LibPQ/Connection/Connection.swift:roundTrips Sources/LibPQ/Connection/Connection.swift:statementCache
    Sources/LibPQ/Connection/Connection.swift:statementsPrepared
)
marked="$(grep -rnE '^[[:space:]]*@exclusivity\(unchecked\)' Sources --include='*.swift' |
    sed -E 's/^([^:]+):[0-9]+:.*(var|let) ([A-Za-z_][A-Za-z0-9_]*).*/\1:\3/' | sort)"
listed="$(printf '%s\n' "${unchecked[@]}" | sort)"
if [[ "$marked" != "$listed" ]]; then
    echo "@exclusivity(unchecked) marks differ from the list in scripts/check-exclusivity.sh (< marked, > listed):"
    diff <(echo "$marked") <(echo "$listed") || true
    exit 1
fi

properties=(
    ManagedObject.attributes ManagedObject.storedID ManagedObject.nextReadHint ManagedObject.pending
    ManagedObject.version ManagedObject.isIdentifiedByValue ManagedObject.isInsertedFlag
    ManagedObject.isDeletedFlag ManagedObject.isListedAsChanged ManagedObject.isVersionFromOwnSave
    ManagedObjectContext.bulkInsert
)

sil="$(mktemp)"
trap 'rm -f "$sil"' EXIT
# As the release build compiles CoreValue (whole module, -O), as SIL instead of an object file.
find Sources/CoreValue -name '*.swift' -print0 | sort -z |
    xargs -0 swiftc -module-name CoreValue -parse-as-library -whole-module-optimization -O -swift-version 6 \
        -package-name corevalue -emit-sil -o "$sil"

# Each access names the address it reads or writes; the address names the property it projects.
found="$(awk -v wanted="${properties[*]}" '
    BEGIN { n = split(wanted, list, " "); for (i = 1; i <= n; i++) watched["#" list[i]] = 1 }
    /^sil / { match($0, /@[^ ]+/); function_name = substr($0, RSTART + 1, RLENGTH - 1); delete address; next }
    /= ref_element_addr / {
        for (i = 1; i <= NF; i++) if ($i ~ /^#/ && ($i in watched)) address[$1] = substr($i, 2)
        next
    }
    /= begin_access .*\[dynamic\]/ {
        cause = /no_nested_conflict/ ? "" : " (the cause: something inside this access)"
        sub(/\/\/.*/, "", $0)
        operand = $NF
        if (operand in address) print address[operand] " in " function_name cause
    }
' "$sil")"

if [[ -n "$found" ]]; then
    echo "Accesses checked at run time (each needs no call and no release inside it; see ManagedObject.attributes):"
    echo "$found" | sort | uniq -c | swift demangle --simplified
    exit 1
fi
echo "exclusivity: every access to ${#properties[@]} hot properties is proven exclusive at compile time;" \
    "${#unchecked[@]} internal properties unchecked, as listed"
