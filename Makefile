# afrates: operator commands. `make help` lists them.
SHELL := /bin/bash
NODE_BIN := node_modules/.bin
TSX := $(NODE_BIN)/tsx
STAMP := node_modules/.installed
# DEMO=1: the key commands, migrate and backfill act on make demo's state (var/demo) instead of make run's (var)
STATE := $(if $(DEMO),AFRATES_VAR_DIR=var/demo)
# Memory given back: what run and demo start uses jemalloc where the system has it (Debian's
# libjemalloc2, which the Docker image installs too; Fedora's and Arch's jemalloc): its background
# thread returns pages freed for a second, where glibc's malloc keeps what is freed below the top of
# its heaps (docs/operations.md, "Memory and the allocator"). Only those targets (and the
# benchmarks' service processes): npm, vite and Chromium keep their own (Chromium's sandboxed GPU
# process dies with jemalloc's thread). Looked for at Debian's multiarch paths, then Fedora's, Arch's.
JEMALLOC := $(firstword $(wildcard /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 /usr/lib/aarch64-linux-gnu/libjemalloc.so.2 /usr/lib64/libjemalloc.so.2 /usr/lib/libjemalloc.so.2))
JEMALLOC_CONF := background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0
ALLOCATOR := $(if $(JEMALLOC),LD_PRELOAD=$(JEMALLOC) MALLOC_CONF=$(JEMALLOC_CONF))
# Without jemalloc, glibc's malloc: it raises its mmap and trim thresholds each time a large block
# is freed (up to 32 and 64 MB), after which freed memory stays in the process. Fixed at glibc's
# own starting values, large blocks are mapped apart and given back when freed. jemalloc ignores
# them.
export MALLOC_MMAP_THRESHOLD_ := 131072
export MALLOC_TRIM_THRESHOLD_ := 131072

.DEFAULT_GOAL := help
.PHONY: help install web run demo sim test migrate key keys revoke rotate sql backfill bench typecheck

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

# A step that takes minutes and prints nothing of its own (npm ci, vite build) says it is still
# working every TICK_SECONDS (15): `$(TICKING) "what" command...`; the command's own exit status stands. All of
# it on stderr, so `KEY=$$(make -s key ...)` captures the key alone even when it installs first;
# the ticker takes its sleep with it when stopped, leaving nothing holding the terminal or a pipe.
TICK_SECONDS ?= 15
TICKING := bash -c 'what="$$1"; shift; \
  (trap "kill \$$z 2>/dev/null; exit 0" TERM; s=0; while :; do sleep $(TICK_SECONDS) & z=$$!; wait $$z; s=$$((s+$(TICK_SECONDS))); echo "$$what: still working ($$s s)" >&2; done) & t=$$!; \
  "$$@" >&2; rc=$$?; kill $$t 2>/dev/null; wait $$t; exit $$rc' ticking

# npm ci: exactly the lock file, which lists every platform's optional packages (rollup's), so the
# install never rewrites it and a fresh clone stays unchanged.
$(STAMP): package.json package-lock.json
	@echo "installing dependencies (npm ci)" >&2
	@$(TICKING) "installing dependencies" npm ci --no-audit --no-fund
	@touch $(STAMP)

install: $(STAMP) ## install dependencies at their locked versions

# The web front end (web/ -> web/dist, served by the API): rebuilt when a source file changes.
WEB_STAMP := web/dist/.built
WEB_SOURCES := $(shell find web -path web/dist -prune -o -type f -print) docs/methodology.md

$(WEB_STAMP): $(STAMP) $(WEB_SOURCES)
	@echo "building the web front end (vite build, web/ -> web/dist)" >&2
	@$(TICKING) "building the web front end" $(NODE_BIN)/vite build --config web/vite.config.ts
	@echo "web front end built" >&2
	@touch $(WEB_STAMP)

web: $(WEB_STAMP) ## build the web front end (make run, demo and test do it when web/ changed)

run: $(STAMP) $(WEB_STAMP) ## migrate and run the service (pipeline + API) against real venues; embedded DB unless DATABASE_URL
	$(ALLOCATOR) $(TSX) bin/serve.ts

demo: $(STAMP) $(WEB_STAMP) ## run everything against the simulated market (REPLAY=trades.jsonl plays a file)
	MARKET=simulated $(ALLOCATOR) $(TSX) bin/demo.ts $(if $(REPLAY),--replay $(REPLAY))

sim: $(STAMP) ## run the simulated market alone (SIM_PORT=4010, SEED=1, REPLAY=trades.jsonl); point SIM_URL at it
	$(TSX) sim/main.ts --port "$${SIM_PORT:-4010}" --seed "$${SEED:-1}" $(if $(REPLAY),--replay "$$REPLAY")

test: $(STAMP) $(WEB_STAMP) ## run every test (TEST_DATABASE_URL=postgres://... runs them on a real TimescaleDB)
	$(NODE_BIN)/tsc --noEmit
	$(NODE_BIN)/tsc --noEmit -p web
	@mkdir -p var
	$(NODE_BIN)/vitest run --reporter=default --reporter=json --outputFile.json=var/test-results.json
	@node -e 'const r=require("./var/test-results.json");console.log(`$${r.numPassedTests} passed, $${r.numFailedTests} failed, $${r.numPendingTests+r.numTodoTests} skipped`)'

# RESTATE and ROLLBACK are read from the environment ($$RESTATE), never pasted into the shell line.
migrate: $(STAMP) ## apply migrations and SQL objects (a no-op when up to date; RESTATE="reason" consents to restating settled candles, ROLLBACK=1 applies older SQL; docs/aggregates.md)
	$(STATE) $(TSX) bin/migrate.ts --restate="$$RESTATE" --rollback="$$ROLLBACK"

# The key commands read TIER, NAME, EMAIL and ID from the environment ($$NAME), never pasted into the
# shell line ($(NAME)): a name with a quote would break the command, and one with backticks run them.
key: $(STAMP) ## issue a key: make key TIER=builder NAME="Acme" EMAIL=ops@acme.test [DEMO=1 for make demo's]
	@$(STATE) $(TSX) bin/key.ts create --tier="$$TIER" --name="$$NAME" --email="$$EMAIL"

keys: $(STAMP) ## list keys (never the keys themselves)
	@$(STATE) $(TSX) bin/key.ts list

revoke: $(STAMP) ## revoke a key: make revoke ID=12
	@$(STATE) $(TSX) bin/key.ts revoke --id="$$ID"

rotate: $(STAMP) ## revoke a key and issue its replacement: make rotate ID=12
	@$(STATE) $(TSX) bin/key.ts rotate --id="$$ID"

# The embedded database admits one connection, which a running service holds: stop it first (the
# command says so otherwise). Q is read from the environment ($$Q), never pasted into the shell line.
sql: $(STAMP) ## SQL on the database (psql; the embedded one needs make run stopped): make sql [DEMO=1] [Q="SELECT ..."]
	@$(STATE) $(TSX) bin/sql.ts

# DEMO=1: make demo's database and its market, the simulated one (never the real venues)
backfill: $(STAMP) ## fetch history: make backfill [PAIR=BTCNGN] FROM=2026-01-01 TO=2026-01-31
	$(STATE) $(if $(DEMO),MARKET=simulated) $(TSX) bin/backfill.ts $(if $(PAIR),--pair="$$PAIR") --from="$$FROM" --to="$$TO"

# NAME and PARTS read from the environment ($$NAME), never pasted into the shell line, as the key
# commands do; a name that is no benchmark stops before anything runs, naming those there are.
bench: $(STAMP) ## run the benchmarks: make bench [NAME=api,streams] [PARTS="sse demo"] (all of bench/ by default)
	@if [ -n "$$NAME" ]; then files=; for n in $${NAME//,/ }; do \
	  [ -f "bench/$$n.bench.ts" ] || { echo "no benchmark named '$$n'; there are: $$(cd bench && ls *.bench.ts | sed 's/\.bench\.ts$$//' | tr '\n' ' ')" >&2; exit 2; }; \
	  files="$$files bench/$$n.bench.ts"; done; else files=$$(echo bench/*.bench.ts); fi; \
	for b in $$files; do echo "== $$b"; $(TSX) $$b $$PARTS || exit 1; done

.PHONY: openapi-examples
openapi-examples: $(STAMP) ## rewrite api/openapi-examples.json's examples whose real responses changed shape or wording
	$(TSX) test/support/openapi-examples.ts

# The fault suite (faults/run.sh; docs/operations.md, "The fault suite"): as root, with FAULTS_PG_BIN the
# bin directory of a PostgreSQL build with TimescaleDB; skipped, saying what is missing, without them.
.PHONY: faults
faults: $(STAMP) ## the fault suite: real programs on hosts of their own, faults from a schedule, a checker (root, FAULTS_PG_BIN)
	bash faults/run.sh

typecheck: $(STAMP) ## type-check without running tests
	$(NODE_BIN)/tsc --noEmit
