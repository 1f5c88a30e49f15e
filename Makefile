# hubd — README's two commands are `make run` and `make test`; both find or start PostgreSQL
# (.ci/ensure-db: DATABASE_URL, else 127.0.0.1:5432, else a private cluster in .pgdata/).
GO        ?= go
BIN       := bin/hubd
ENSURE_DB := .ci/ensure-db
# Generators run at the versions go.mod pins (see tools.go), never whatever is installed.
OAPI_CODEGEN := $(GO) run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen
SQLC         := $(GO) run github.com/sqlc-dev/sqlc/cmd/sqlc
TEST_FLAGS   ?= -race -count=1 -timeout 20m
FUZZTIME     ?= 30s
TS_DIR       := internal/clienttest/ts
TS_TOOLCHAIN := $(TS_DIR)/node_modules/.package-lock.json

.PHONY: run test build generate check-generated lint fuzz bench loadtest

build:
	$(GO) build -o $(BIN) ./cmd/hubd

run: build
	url=$$($(ENSURE_DB) hubd) && DATABASE_URL="$$url" ./$(BIN) serve

test: $(TS_TOOLCHAIN)
	url=$$($(ENSURE_DB)) && DATABASE_URL="$$url" $(GO) test $(TEST_FLAGS) ./...

# The npm toolchain: the TypeScript client scenario's (openapi-typescript, openapi-fetch, tsc) and Redocly's
# linter of the document (make lint), pinned by internal/clienttest/ts/package-lock.json and installed from
# the npm registry; Debian's nodejs and npm are installed when missing (as root).
$(TS_TOOLCHAIN): $(TS_DIR)/package.json $(TS_DIR)/package-lock.json
	@command -v npm >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null; } || \
		{ echo "npm is needed for the TypeScript client test: install Node.js 20 or later" >&2; exit 1; }
	cd $(TS_DIR) && npm ci --no-audit --no-fund --loglevel=error

generate:
	$(GO) run ./internal/build/oasbundle openapi gen/oas bin/openapi-codegen.json
	$(OAPI_CODEGEN) -config openapi/config/oapi-codegen.yaml bin/openapi-codegen.json
	$(OAPI_CODEGEN) -config openapi/config/oapi-codegen-client.yaml gen/oas/openapi.json
	$(SQLC) generate -f sql/sqlc.yaml
	$(GO) run ./internal/build/visitgen gen/oas/openapi.json internal/httpapi/visit.gen.go

# Regenerates and fails when gen/ (or internal/httpapi/visit.gen.go) differs from what is committed;
# generated code is never edited by hand.
check-generated: generate
	@git diff --exit-code -- gen/ internal/httpapi/visit.gen.go || { echo "generated code is stale: run 'make generate' and commit the result" >&2; exit 1; }
	@test -z "$$(git status --porcelain -- gen/ internal/httpapi/visit.gen.go)" || { git status --porcelain -- gen/ >&2; echo "gen/ has untracked generated files: run 'make generate' and commit them" >&2; exit 1; }

# Benchmarks (figures in docs/performance.md).
bench:
	url=$$($(ENSURE_DB)) && DATABASE_URL="$$url" $(GO) test -run '^$$' -bench . -benchtime 200x ./internal/httpapi/

# The load benchmark: hubd through its API beside raw SQL over pgx and etcd, in one run (figures in
# docs/performance.md). etcd comes from Debian's etcd-server where it can be installed; without it the
# etcd column is left out. LOADTEST_FLAGS passes flags, e.g. LOADTEST_FLAGS='-d 5s -c 32'.
LOADTEST_FLAGS ?=
loadtest: build
	@command -v etcd >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq etcd-server >/dev/null 2>&1; } || \
		echo "etcd is not installed and could not be: the etcd column is left out" >&2
	url=$$($(ENSURE_DB)) && DATABASE_URL="$$url" $(GO) run ./cmd/hubd-loadtest -hubd $(BIN) $(LOADTEST_FLAGS)

# Fuzzes the where parser and compiler for FUZZTIME (the seed corpus also runs in every `make test`).
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzWhere$$' -fuzztime $(FUZZTIME) ./internal/listquery/

lint: $(TS_TOOLCHAIN)
	$(GO) vet ./...
	$(TS_DIR)/node_modules/.bin/redocly lint gen/oas/openapi.json --config redocly.yaml --format=summary
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go') >&2; echo "gofmt: the files above need formatting" >&2; exit 1; }
