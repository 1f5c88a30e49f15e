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
# The browser test's Chromium: Debian's package, installed when missing (as root); CHROMIUM names another.
CHROMIUM         ?= /usr/bin/chromium
DOCSUI_DIR       := web/docsui
DOCSUI_TOOLCHAIN := $(DOCSUI_DIR)/node_modules/.package-lock.json
# The reference browser app (plain TypeScript compiled by tsc into web/app/dist, served as static files).
APP_DIR          := web/app
APP_TOOLCHAIN    := $(APP_DIR)/node_modules/.package-lock.json

.PHONY: run test test-short build app generate check-generated lint fuzz bench loadtest loadtest-fanout loadtest-soak test-tools

build:
	$(GO) build -o $(BIN) ./cmd/hubd

run: build
	url=$$($(ENSURE_DB) hubd) && DATABASE_URL="$$url" ./$(BIN) serve

test: $(TS_TOOLCHAIN) $(CHROMIUM) test-tools app
	url=$$($(ENSURE_DB)) && DATABASE_URL="$$url" CHROMIUM=$(CHROMIUM) $(GO) test $(TEST_FLAGS) ./...

# The fast loop: every test that needs no database (those that do skip under -short); make test is the
# full suite.
test-short:
	$(GO) test -short -count=1 ./...

# Installs Debian packages, refreshing the package lists once if they are stale.
apt_install = { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(1) >/dev/null 2>&1 || \
	{ apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(1) >/dev/null; }; }

# npm projects, each pinned by its package-lock.json and installed from the npm registry with npm ci;
# Debian's nodejs and npm are installed when missing (as root).
define npm_ci
	@command -v npm >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
		$(call apt_install,nodejs npm); } || \
		{ echo "npm is needed: install Node.js 20 or later" >&2; exit 1; }
	cd $(1) && npm ci --no-audit --no-fund --loglevel=error
endef

# The test toolchain: the TypeScript client scenario's (openapi-typescript, openapi-fetch, tsc), the browser
# test's (playwright-core) and Redocly's linter of the document (make lint).
$(TS_TOOLCHAIN): $(TS_DIR)/package.json $(TS_DIR)/package-lock.json
	$(call npm_ci,$(TS_DIR))

# The reference browser app: web/app/index.html, config.json and dist/ are what a static file server serves
# (the browser sign-in test builds it too, and serves it from its own origin).
$(APP_TOOLCHAIN): $(APP_DIR)/package.json $(APP_DIR)/package-lock.json
	$(call npm_ci,$(APP_DIR))

app: $(APP_TOOLCHAIN)
	cd $(APP_DIR) && node_modules/.bin/tsc -p .

# Programs the tests run, from Debian's packages when missing (as root): curl and jq for the variants
# walkthrough (examples/variants, a shell script), skopeo for the pull of a Release from the OCI registry.
test-tools:
	@command -v curl >/dev/null 2>&1 && command -v jq >/dev/null 2>&1 && command -v skopeo >/dev/null 2>&1 || \
		{ [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && $(call apt_install,curl jq skopeo); } || \
		{ echo "curl, jq and skopeo are needed by make test: install them" >&2; exit 1; }

$(CHROMIUM):
	@[ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && $(call apt_install,chromium) || \
		{ echo "Chromium is needed for the browser test: install it, or name it with CHROMIUM=<path>" >&2; exit 1; }

# The browsable reference's script (Redoc), which make generate copies into gen/docsui to embed it.
$(DOCSUI_TOOLCHAIN): $(DOCSUI_DIR)/package.json $(DOCSUI_DIR)/package-lock.json
	$(call npm_ci,$(DOCSUI_DIR))

generate: $(DOCSUI_TOOLCHAIN)
	$(GO) run ./internal/build/oasbundle openapi gen/oas bin/openapi-codegen.json
	$(GO) run ./internal/build/docsuigen $(DOCSUI_DIR)/node_modules/redoc gen/docsui
	$(OAPI_CODEGEN) -config openapi/config/oapi-codegen.yaml bin/openapi-codegen.json
	$(OAPI_CODEGEN) -config openapi/config/oapi-codegen-client.yaml gen/oas/openapi.json
	$(SQLC) generate -f sql/sqlc.yaml
	$(GO) run ./internal/build/visitgen gen/oas/openapi.json internal/httpapi/visit.gen.go
	$(GO) run ./internal/build/paramgen gen/oas/openapi.json internal/httpapi/params.gen.go
	$(GO) run ./internal/build/edgegen bin/openapi-codegen.json internal/httpapi

# Regenerates and fails when gen/ (or internal/httpapi/*.gen.go) differs from what is committed;
# generated code is never edited by hand.
GENERATED := gen/ 'internal/httpapi/*.gen.go'
check-generated: generate
	@git diff --exit-code -- $(GENERATED) || { echo "generated code is stale: run 'make generate' and commit the result" >&2; exit 1; }
	@test -z "$$(git status --porcelain -- $(GENERATED))" || { git status --porcelain -- $(GENERATED) >&2; echo "generated files are untracked: run 'make generate' and commit them" >&2; exit 1; }

# Benchmarks (figures in docs/performance.md).
bench:
	url=$$($(ENSURE_DB)) && DATABASE_URL="$$url" $(GO) test -run '^$$' -bench 'ListSpacesDepth|Units|GuestList|LongPoll' -benchtime 200x ./internal/httpapi/
	url=$$($(ENSURE_DB)) && DATABASE_URL="$$url" $(GO) test -run '^$$' -bench 'InvokeSetImage|LinkFanOut|UpgradeClones|ReleasePublishPull' -benchtime 10x ./internal/httpapi/
	url=$$($(ENSURE_DB)) && DATABASE_URL="$$url" $(GO) test -run '^$$' -bench 'WorkerApply' -benchtime 5x ./internal/worker/
	url=$$($(ENSURE_DB)) && DATABASE_URL="$$url" $(GO) test -run '^$$' -bench 'Promote$$' -benchtime 2x -timeout 60m ./internal/httpapi/

# The load benchmark: hubd through its API beside raw SQL over pgx and etcd, in one run (figures in
# docs/performance.md). etcd comes from Debian's etcd-server where it can be installed; without it the
# etcd column is left out. LOADTEST_FLAGS passes flags, e.g. LOADTEST_FLAGS='-d 5s -c 32'.
LOADTEST_FLAGS ?=
loadtest: build
	@command -v etcd >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
		$(call apt_install,etcd-server); } || \
		echo "etcd is not installed and could not be: the etcd column is left out" >&2
	url=$$($(ENSURE_DB)) && DATABASE_URL="$$url" $(GO) run ./cmd/hubd-loadtest -hubd $(BIN) $(LOADTEST_FLAGS)

# The event fan-out benchmark: one event delivered to one waiting poll, beside a bare LISTEN/NOTIFY round
# trip, then to FANOUT waiting polls (worker event cursors and Channels) on one hubd (figures in
# docs/performance.md).
FANOUT ?= 10000
loadtest-fanout: build
	url=$$($(ENSURE_DB)) && DATABASE_URL="$$url" $(GO) run ./cmd/hubd-loadtest -hubd $(BIN) -fanout $(FANOUT) -rounds 1000 $(LOADTEST_FLAGS)

# The soak: ordinary callers (data reads and writes, View lists, invokes; c=32, 60 s a phase) alone, then
# beside one caller of another organization sending the abusive requests hubd bounds.
loadtest-soak: build
	url=$$($(ENSURE_DB)) && DATABASE_URL="$$url" $(GO) run ./cmd/hubd-loadtest -hubd $(BIN) -soak -c 32 -d 60s -units 200 $(LOADTEST_FLAGS)

# Fuzzes the where parser and compiler for FUZZTIME (the seed corpus also runs in every `make test`).
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzWhere$$' -fuzztime $(FUZZTIME) ./internal/listquery/

lint: $(TS_TOOLCHAIN)
	$(GO) vet ./...
	$(TS_DIR)/node_modules/.bin/redocly lint gen/oas/openapi.json --config redocly.yaml --format=summary
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go') >&2; echo "gofmt: the files above need formatting" >&2; exit 1; }
