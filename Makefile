# Taskgraph — `make help` lists the targets.

GO        ?= go
PG_URL    ?= postgres://postgres@127.0.0.1:5432/test?sslmode=disable
PKGS      := ./...

.PHONY: help run test generate verify lint bench bench-capacity build dashboard-png

help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "}; {printf "  %-12s %s\n", $$1, $$2}'

run: ## run the server on the embedded SQLite database (data/taskgraph.db)
	$(GO) run ./cmd/taskgraph serve

build: ## build bin/taskgraph
	$(GO) build -o bin/taskgraph ./cmd/taskgraph

test: ## run every test with the race detector (PostgreSQL too when TASKGRAPH_TEST_DATABASE_URL is set)
	$(GO) test -race -count=1 -timeout 25m $(PKGS)

generate: ## regenerate gqlgen code (graph/generated.go, graph/model/models_gen.go)
	$(GO) tool gqlgen generate

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

dashboard-png: ## rewrite docs/img/dashboard-run.png with the dashboard's browser test (needs chromium, npm ci in test/dashboard)
	TASKGRAPH_DASHBOARD_README_PNG=1 $(GO) test -count=1 -run 'TestDashboardBrowser/sqlite' ./cmd/taskgraph/
