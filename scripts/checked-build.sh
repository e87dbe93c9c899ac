#!/usr/bin/env bash
# The strict build (warnings are errors) of a copy of the package whose @exclusivity(unchecked) marks are
# removed, so that every access to those properties is checked at run time again; then the behaviour suite
# (both stores, sync and async) and the suites of the context's bookkeeping run on it. A mark that hides an
# overlapping access (a bug the marks would turn into memory corruption) traps here instead. The marks
# themselves are listed, with the reason for each, in scripts/check-exclusivity.sh.
#
# Usage: scripts/checked-build.sh (from the package root). Uses $DATABASE_URL, else starts the local cluster
# (scripts/db-up.sh) and stops it afterwards. The build lives in .build/checked (its own, so neither the test
# build nor the release build is redone).
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
SUITES='memoryStoreBehaviour|postgresStoreBehaviour|ConnectionPoolTests|StatementCacheTests|PipelineTests|RequestRoundTripTests|DeleteRuleTests|RelationshipTests|StreamedSaveTests|InheritanceMappingTests|FailedSaveTests'

copy=.build/checked/package
rm -rf "$copy"
mkdir -p "$copy"
# The working tree as it is (tests read files beside the sources: migrations, scripts, fixtures).
tar --exclude=./.build --exclude=./.git -cf - . | tar -C "$copy" -xf -
grep -rlE '@exclusivity\(unchecked\)' "$copy/Sources" | xargs sed -i -E 's/@exclusivity\(unchecked\) ?//'
if grep -rqE '@exclusivity\(unchecked\)' "$copy/Sources"; then
    echo "checked-build: a mark survived the copy" >&2
    exit 1
fi
"$SWIFT" build --package-path "$copy" --build-path .build/checked/build --build-tests -Xswiftc -warnings-as-errors

url=${DATABASE_URL:-}
started=false
if [[ -z "$url" ]]; then
    url=$(scripts/db-up.sh)
    started=true
fi
status=0
DATABASE_URL="$url" "$SWIFT" test --package-path "$copy" --build-path .build/checked/build --skip-build \
    --filter "$SUITES" || status=$?
if $started; then scripts/db-down.sh >/dev/null; fi
exit $status
