# CoreValue for PostgreSQL. `make run` runs the demo, `make test` runs every test; both start their own
# throwaway PostgreSQL (scripts/db-up.sh) and work on a fresh machine.
SHELL := /bin/bash
SWIFT ?= swift
BENCH_N ?= 10000
DEMO_SCHEMA ?= corevalue_demo

.PHONY: all build deps run test bench db-up db-down db-url migrate status schema format docs clean

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
test: deps
	$(SWIFT) build --build-tests
	@status=0; \
	if [[ -n "$${TEST_DATABASE_URL:-}" ]]; then \
		DATABASE_URL="$$TEST_DATABASE_URL" $(SWIFT) test --skip-build || status=$$?; \
	else \
		url=$$(scripts/db-up.sh) || exit 1; \
		DATABASE_URL="$$url" $(SWIFT) test --skip-build || status=$$?; \
		scripts/db-down.sh; \
	fi; \
	exit $$status

# The benchmark (release build) at N=$(BENCH_N) against the local cluster or $DATABASE_URL.
bench: deps
	$(SWIFT) build -c release --product corevalue-bench
	@url="$${DATABASE_URL:-}"; \
	if [[ -z "$$url" ]]; then url=$$(scripts/db-up.sh) || exit 1; fi; \
	"$$($(SWIFT) build -c release --show-bin-path)/corevalue-bench" "$$url" $(BENCH_N)

db-up:
	@scripts/db-up.sh

db-down:
	@scripts/db-down.sh

migrate status schema: deps
	$(SWIFT) build --product corevalue
	@url="$${DATABASE_URL:-}"; \
	if [[ -z "$$url" ]]; then url=$$(scripts/db-up.sh) || exit 1; fi; \
	"$$($(SWIFT) build --show-bin-path)/corevalue" $@ --url "$$url"

format:
	$(SWIFT) format --in-place --recursive --configuration .swift-format Sources Tests Package.swift

docs:
	$(SWIFT) package --allow-writing-to-directory .build/docs generate-documentation --target CoreValue \
		--output-path .build/docs 2>/dev/null || \
	docc convert Sources/CoreValue/CoreValue.docc --output-path .build/docs

clean:
	$(SWIFT) package clean
