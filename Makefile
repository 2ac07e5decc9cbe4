# cachekit — run `make help` for the targets.

SHELL := /bin/bash
GO ?= go
# Where go install puts tools: GOBIN (set in the environment or by go env
# -w), or else the bin directory of GOPATH's first entry (GOPATH may list
# several, separated by colons), as bench/compare.sh finds benchstat.
TOOLBIN := $(shell d=$$($(GO) env GOBIN); [ -n "$$d" ] || { d=$$($(GO) env GOPATH); d=$${d%%:*}/bin; }; echo "$$d")
# staticcheck 2026.2.2 is the module version v0.8.2.
STATICCHECK_VERSION := v0.8.2
STATICCHECK := $(TOOLBIN)/staticcheck
# Every module of the repository (the root and nested ones such as bench/).
MODULES := $(shell find . -name go.mod -not -path './.git/*' -printf '%h\n' | sort)
FUZZTIME ?= 60s
# How long the fuzzer minimises each new interesting input (go test's
# -fuzzminimizetime). Go's default, 60s, left FuzzModel's two workers
# minimising its long inputs most of the time: 18,676 executions in 90 s,
# none counted for 85 s of them (2026-11-28), against 105,081 in 45 s with
# 100x. A crash is reported with its model trace of operations either way.
FUZZMINIMIZE ?= 100x
# The previous minor Go release, which the go directive (1.25) promises to
# support; make setup fetches it through the module proxy.
PREV_GO := go1.25.4

.PHONY: help setup test vet lint unit deps-check test-32bit test-prev-go run demo fuzz bench fmt

help: ## Show this help.
	@grep -hE '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

# RUNS_386 succeeds if this machine executes 386 binaries. Some virtual
# machines run no 32-bit x86 code at all, and Debian 12's qemu-i386 (7.2)
# crashes on Go's 386 binaries: there, test-32bit runs GOARCH=arm under
# qemu-arm (Debian's qemu-user, which make setup installs).
RUNS_386 = GOWORK=off GOARCH=386 $(GO) test -count=1 -run '^$$' ./internal/mix >/dev/null 2>&1

# APT_INSTALL installs Debian packages quietly, through sudo unless root.
APT_INSTALL = SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
	$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq

setup: ## Install what a fresh machine with only Go lacks (redis-server, qemu-user if needed, staticcheck, benchstat, the previous Go release, modules).
	@if command -v redis-server >/dev/null; then echo "== redis-server: $$(command -v redis-server)"; \
	else echo "== installing redis-server (Debian package)"; \
	  $(APT_INSTALL) redis-server >/dev/null; \
	  command -v redis-server >/dev/null || { echo "redis-server could not be installed"; exit 1; }; fi
	@if $(RUNS_386); then echo "== this machine runs 386 binaries"; \
	elif command -v qemu-arm >/dev/null; then echo "== qemu-arm: $$(command -v qemu-arm)"; \
	else echo "== this machine runs no 386 binaries: installing qemu-user (Debian package) for test-32bit"; \
	  $(APT_INSTALL) --no-install-recommends qemu-user >/dev/null; \
	  command -v qemu-arm >/dev/null || { echo "qemu-user could not be installed"; exit 1; }; fi
	$(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	$(GO) install golang.org/x/perf/cmd/benchstat@$(BENCHSTAT_VERSION)
	GOTOOLCHAIN=$(PREV_GO) $(GO) version
	@for m in $(MODULES); do (cd $$m && $(GO) mod download) || exit 1; done

test: vet lint deps-check unit test-32bit test-prev-go ## The whole suite: vet, staticcheck, dependency check, tests under -race, 32-bit tests, previous Go.

vet: ## go vet every module.
	@for m in $(MODULES); do echo "== go vet $$m"; (cd $$m && $(GO) vet ./...) || exit 1; done

lint: ## staticcheck every module (installed by make setup).
	@test -x $(STATICCHECK) || { echo "staticcheck is missing: run make setup"; exit 1; }
	@for m in $(MODULES); do echo "== staticcheck $$m"; (cd $$m && $(STATICCHECK) ./...) || exit 1; done

unit: ## go test -race every module (tests that need redis-server fail if it cannot be started).
	@for m in $(MODULES); do echo "== go test -race $$m"; (cd $$m && CACHEKIT_REQUIRE_REDIS=1 $(GO) test -race -count=1 -timeout 30m ./...) || exit 1; done

deps-check: ## The root package must import only the standard library.
	@deps=$$($(GO) list -deps -f '{{if not .Standard}}{{.ImportPath}}{{end}}' .) || { echo "deps-check: go list failed"; exit 1; }; \
	bad=$$(echo "$$deps" | grep -v '^github.com/cachekit/cachekit\(/internal/.*\)\?$$' || true); \
	if [ -n "$$bad" ]; then echo "the root package imports non-standard packages:"; echo "$$bad"; exit 1; fi; \
	echo "== root package imports only the standard library"

test-32bit: ## The root module's tests on a 32-bit platform (atomics, alignment): GOARCH=386, or arm under qemu-arm.
	@if $(RUNS_386); then echo "== GOARCH=386 go test"; GOWORK=off GOARCH=386 $(GO) test -count=1 ./...; \
	else echo "== this machine runs no 386 binaries: GOARCH=arm go test under qemu-arm"; \
	  command -v qemu-arm >/dev/null || { echo "qemu-arm is missing: run make setup"; exit 1; }; \
	  GOWORK=off GOARCH=arm GOARM=7 CACHEKIT_TEST_EXEC=qemu-arm $(GO) test -exec qemu-arm -count=1 ./...; fi

test-prev-go: ## The root module's tests with the previous Go release (go1.25.4).
	GOWORK=off GOTOOLCHAIN=$(PREV_GO) $(GO) vet ./...
	GOWORK=off GOTOOLCHAIN=$(PREV_GO) $(GO) test -count=1 ./...

run: ## Start the cache service (cachekit serve on 127.0.0.1:8080; ARGS='--max-bytes 1GiB' adds flags).
	cd cmd/cachekit && $(GO) run . serve $(ARGS)

demo: ## A small demo of the cache.
	cd cmd/cachekit && $(GO) run . demo

fuzz: ## Fuzz the cache against its model for FUZZTIME (default 60s; FUZZMINIMIZE=100x).
	$(GO) test -run '^$$' -fuzz FuzzModel -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) .

# benchstat has no tagged releases: pinned by its pseudo-version.
BENCHSTAT_VERSION := v0.0.0-20260908200009-22c9c6c9d4da
# Phases of make bench (bench/run-all.sh lists them); all by default.
BENCH ?= all
comma := ,

bench: ## Regenerate docs/benchmarks/*.md (~1.8 h on 2 cores); BENCH=articles,gc selects phases, NOTE='…' annotates.
	bench/run-all.sh $(subst $(comma), ,$(BENCH))

.PHONY: bench-compare
bench-compare: ## The root package's micro-benchmarks at REV against the working tree, with benchstat (COUNT=10, BENCHFILTER=.).
	@test -n "$$REV" || { echo "usage: make bench-compare REV=<git revision>"; exit 2; }
	bench/compare.sh "$$REV"

fmt: ## gofmt every Go file (tracked or not, but for those git ignores).
	git ls-files -z --cached --others --exclude-standard -- '*.go' | \
	  while IFS= read -r -d '' f; do [ ! -e "$$f" ] || printf '%s\0' "$$f"; done | xargs -0 -r gofmt -w
