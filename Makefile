# Taskgraph — `make help` lists the targets.

SHELL     := /bin/bash
GO        ?= go
PG_URL    ?= postgres://postgres@127.0.0.1:5432/test?sslmode=disable
PKGS      := ./...
# The race detector leaves out the embedded SQLite engine and the C runtime
# it runs on (C translated to Go, whose memory the engine allocates outside
# Go's heap, where the detector does not look): instrumented, every SQLite
# test ran some 4x slower for nothing; the C runtime instrumented too cost an
# eighth to a quarter of the test process's CPU on end-to-end tests. Our code,
# database/sql and the driver's Go side (modernc.org/sqlite) stay instrumented.
RACE_GCFLAGS := -gcflags='modernc.org/sqlite/lib=-race=false' -gcflags='modernc.org/libc/...=-race=false' \
	-gcflags='modernc.org/memory=-race=false'
# bench-peer's npm packages (dev-only), installed again when a lock file changes.
PEER_NPM  := bench/peer/node_modules/.package-lock.json bench/peer/postgraphile4/node_modules/.package-lock.json

.PHONY: help run test test-short test-readme generate verify lint bench bench-capacity bench-peer build dashboard-png

help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "}; {printf "  %-12s %s\n", $$1, $$2}'

run: ## run the server on the embedded SQLite database (data/taskgraph.db)
	@test -x bin/taskgraph || echo "Building bin/taskgraph. The first build compiles the embedded SQLite (a large pure-Go package): a few minutes on 2 cores, seconds afterwards."
	$(GO) build -o bin/taskgraph ./cmd/taskgraph
	bin/taskgraph serve

build: ## build bin/taskgraph
	$(GO) build -o bin/taskgraph ./cmd/taskgraph

# make test does not vet (-vet=off): make verify and make lint run go vet with
# every analyzer (CI runs make verify first), and go test's own vet pass ran
# its analyzers again over every package and its dependencies, the embedded
# SQLite among them: about 90 s of CPU of a cold run on 2 cores.
#
# Four parallel tests per package (-parallel 4; go test's default is the
# number of CPUs): the end-to-end tests mostly wait on servers, timers and
# browsers, and with two at a time a cold run kept about one core busy.
# cmd/taskgraph alone took 452-458 s with two, 333 s with four; a cold
# make test 653 s with two, 609 s with four.
test: ## run every test with the race detector (PostgreSQL too when TASKGRAPH_TEST_DATABASE_URL is set); ends with what was skipped
	@set -o pipefail; $(GO) test -race $(RACE_GCFLAGS) -vet=off -count=1 -parallel 4 -timeout 25m -json $(PKGS) | $(GO) run ./internal/tools/testsummary

test-short: ## the edit loop: SQLite only, no race detector, no browser or Node suites (-short)
	@set -o pipefail; $(GO) test -short -count=1 -json $(PKGS) | $(GO) run ./internal/tools/testsummary

test-readme: ## the README's commands, as printed, on a fresh clone of the committed HEAD (make run, then each command; minutes)
	@set -o pipefail; TASKGRAPH_README_TEST=1 $(GO) test -count=1 -timeout 30m -json -run '^TestREADME' ./internal/readme/ | $(GO) run ./internal/tools/testsummary

generate: ## regenerate gqlgen code (graph/generated.go, graph/model/models_gen.go, graph/field_modes.go)
	$(GO) tool gqlgen generate
	$(GO) run ./internal/tools/execpass graph/generated.go
	$(GO) run ./internal/tools/fieldmodes graph/generated.go graph/field_modes.go

verify: generate ## check that generated code is committed, go.mod tidy, code gofmt'ed and vet-clean
	@git diff --exit-code -- graph/ || (echo "generated code is stale: run make generate and commit" && exit 1)
	@$(GO) mod tidy -diff || (echo "go.mod or go.sum is not tidy: run go mod tidy and commit" && exit 1)
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go') && echo "gofmt needed" && exit 1)
	$(GO) vet $(PKGS)
	$(GO) mod verify

lint: ## gofmt and go vet
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go') && exit 1)
	$(GO) vet $(PKGS)

bench: ## benchmarks on SQLite and PostgreSQL (set TASKGRAPH_TEST_DATABASE_URL, default $(PG_URL))
	TASKGRAPH_TEST_DATABASE_URL=$${TASKGRAPH_TEST_DATABASE_URL:-$(PG_URL)} $(GO) test -run '^$$' -bench . -benchmem -benchtime 3s $(PKGS)

bench-capacity: ## agents at 1 Hz heartbeat one server holds with p99 < 20ms (minutes; steps: TASKGRAPH_BENCH_CAPACITY_STEPS)
	TASKGRAPH_BENCH_CAPACITY=1 TASKGRAPH_TEST_DATABASE_URL=$${TASKGRAPH_TEST_DATABASE_URL:-$(PG_URL)} $(GO) test -run '^$$' -bench BenchmarkHeartbeatCapacity -benchtime 1x -timeout 30m -v ./cmd/taskgraph/

bench-peer: $(PEER_NPM) ## Taskgraph vs PostGraphile 4 and 5 and a Go floor on PostgreSQL: four read shapes, createTask, subscriptions (minutes; npm; PEER_FLAGS='-scenarios light')
	$(GO) run ./bench/peer $(PEER_FLAGS)

bench/peer/node_modules/.package-lock.json: bench/peer/package-lock.json
	@command -v npm >/dev/null || (echo "bench-peer needs npm (Node.js's package manager) to install PostGraphile" && exit 1)
	cd bench/peer && npm ci --no-audit --no-fund

bench/peer/postgraphile4/node_modules/.package-lock.json: bench/peer/postgraphile4/package-lock.json
	@command -v npm >/dev/null || (echo "bench-peer needs npm (Node.js's package manager) to install PostGraphile" && exit 1)
	cd bench/peer/postgraphile4 && npm ci --no-audit --no-fund

dashboard-png: ## rewrite docs/img/dashboard-run.png with the dashboard's browser test (needs chromium, npm ci in test/dashboard)
	TASKGRAPH_DASHBOARD_README_PNG=1 $(GO) test -count=1 -run 'TestDashboardBrowser/sqlite' ./cmd/taskgraph/
