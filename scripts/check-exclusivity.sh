#!/usr/bin/env bash
# Fails when the optimizer checks an access to ManagedObject's or ManagedObjectContext's hot stored properties
# at run time. None of them is marked @exclusivity(unchecked): each is written so that no access overlaps
# another (see ManagedObject.attributes), and the whole-module optimizer then proves them exclusive and drops
# the run-time check. One new access that calls out or releases something inside it brings the check back on
# every access to that property, silently (BENCHMARKS.md, "Exclusivity checks back on public types"): this
# finds it.
#
# Usage: scripts/check-exclusivity.sh (from the package root; about a minute, one compiler process).
set -euo pipefail
cd "$(dirname "$0")/.."

properties=(
    ManagedObject.attributes ManagedObject.storedID ManagedObject.nextReadHint ManagedObject.pending
    ManagedObject.version ManagedObject.isIdentifiedByValue ManagedObject.isInsertedFlag
    ManagedObject.isDeletedFlag ManagedObject.isListedAsChanged ManagedObjectContext.bulkInsert
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
echo "exclusivity: every access to ${#properties[@]} hot properties is proven exclusive at compile time"
