# weaver — make targets. CI calls these only (see .ci/run).
GO      ?= go
BIN     := bin
PKGS    := ./...
FUZZTIME ?= 60s
# FUZZPARALLEL sets the fuzz workers per target (go test -parallel); empty
# means Go's default, GOMAXPROCS. On a shared machine: make fuzz FUZZPARALLEL=1.
FUZZPARALLEL ?=
FUZZFLAGS = -fuzztime $(FUZZTIME) $(if $(FUZZPARALLEL),-parallel $(FUZZPARALLEL))

.PHONY: all build test test-race test-short lint fuzz bench profile-links demo demo-cluster golden cross clean tools ui map-png map-svg

all: build

build:
	$(GO) build -o $(BIN)/weaver ./cmd/weaver
	$(GO) build -o $(BIN)/fakeweb ./cmd/fakeweb

# The README's test command: every package but e2e with the race detector,
# and beside them the e2e package, which runs the weaver binary as a user
# does (see docs/development.md). Both runs go to the end; either failing
# fails. test-race runs the e2e tests on a race-built weaver too
# (WEAVER_E2E_RACE=1): the detector then watches every crawl, import,
# export and server they start, at 2.6 times the CPU.
test:
	@set -u; \
	$(GO) test -race -count=1 -timeout 45m $$($(GO) list $(PKGS) | grep -v '/e2e$$') & units=$$!; \
	$(GO) test -count=1 -timeout 45m ./e2e; e2e=$$?; \
	wait $$units; units=$$?; \
	echo "make test: unit packages exit $$units, e2e exit $$e2e"; \
	test $$units -eq 0 -a $$e2e -eq 0

test-race:
	@set -u; \
	$(GO) test -race -count=1 -timeout 45m $$($(GO) list $(PKGS) | grep -v '/e2e$$') & units=$$!; \
	WEAVER_E2E_RACE=1 $(GO) test -count=1 -timeout 45m ./e2e; e2e=$$?; \
	wait $$units; units=$$?; \
	echo "make test-race: unit packages exit $$units, e2e exit $$e2e"; \
	test $$units -eq 0 -a $$e2e -eq 0

test-short:
	$(GO) test -count=1 $(PKGS)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) tool staticcheck $(PKGS)

# Each fuzz target runs FUZZTIME; crashers land in testdata/fuzz as regression cases.
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzNormalizeHost$$' $(FUZZFLAGS) ./graph
	$(GO) test -run '^$$' -fuzz '^FuzzHistorySegment$$' $(FUZZFLAGS) ./graph
	$(GO) test -run '^$$' -fuzz '^FuzzPage$$' $(FUZZFLAGS) -fuzzminimizetime 5s ./crawl/extract
	$(GO) test -run '^$$' -fuzz '^FuzzScanner$$' $(FUZZFLAGS) -fuzzminimizetime 2s ./crawl/extract
	$(GO) test -run '^$$' -fuzz '^FuzzDecoded$$' $(FUZZFLAGS) -fuzzminimizetime 2s ./crawl/extract
	$(GO) test -run '^$$' -fuzz '^FuzzHref$$' $(FUZZFLAGS) -fuzzminimizetime 2s ./crawl/extract
	$(GO) test -run '^$$' -fuzz '^FuzzRobots$$' $(FUZZFLAGS) -fuzzminimizetime 5s ./crawl/robots
	$(GO) test -run '^$$' -fuzz '^FuzzConfig$$' $(FUZZFLAGS) ./crawl
	$(GO) test -run '^$$' -fuzz '^FuzzWellFormed$$' $(FUZZFLAGS) ./kv
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeRecords$$' $(FUZZFLAGS) -fuzzminimizetime 5s ./internal/storetest
	$(GO) test -run '^$$' -fuzz '^FuzzRecords_AsGowarc$$' $(FUZZFLAGS) ./warc

# weaver against the ideal and against Colly on fakeweb, one table, also
# written to bench/RESULTS.md. bench/ is its own module (it needs Colly; the
# product does not). BENCHFLAGS shortens it, e.g. BENCHFLAGS='--cpu-pairs 1'.
bench:
	$(MAKE) build
	cd bench && $(GO) run ./cmd/benchrun --root .. $(BENCHFLAGS)

# The page shape of issue 28 (30 KB home pages, 40 cross-host links, zero
# latency, 3 workers, robots off, fsync on): CPU per page and per stored
# link, bytes per edge bucket by bucket, and CPU profiles in /tmp/weaver-prof
# (docs/performance.md#the-cost-of-a-link). HOSTS=20000 WARC=1 PAGES_PER_HOST=10.
profile-links: build
	./scripts/profile-links.sh

# A real crawl, offline, of the bundled fake internet; then the exports,
# the map page (demo-out/map.html) among them.
demo: build
	./scripts/demo.sh

# A cluster crawl offline: a NATS JetStream server (the Go module's binary),
# the fake internet and three shards on this machine; then weaver status
# --cluster, weaver merge and the exports (demo-cluster-out/).
demo-cluster: build
	GO=$(GO) ./scripts/demo-cluster.sh

# The map page's script: ui/dist/ from ui/src/ and the exact packages of
# ui/package-lock.json (needs node and npm). dist/ is committed, so that
# building weaver needs neither.
ui:
	cd ui && npm ci --no-audit --no-fund && node build.mjs

# docs/map.png, the README's picture of the map, taken by the browser test.
map-png:
	$(GO) test ./e2e -run '^TestMap_ExportHTML$$' -count=1 -args -update-map-png

# docs/map.svg, the README's picture of the DOT export: the 60 biggest hosts
# of make demo's crawl as dot -Tsvg draws them; docs/demo-map.png, all of it.
map-svg: demo
	./bin/weaver export --db demo-out/weaver.bolt --crawled-only --top 60 --dot - | dot -Tsvg -o docs/map.svg
	./bin/weaver export --db demo-out/weaver.bolt --crawled-only --dot - | dot -Tpng -Gdpi=50 -o docs/demo-map.png

# Raspberry Pi / ARM Linux binaries with cgo (SQLite): bin/weaver-linux-arm64 and
# bin/weaver-linux-armv7. Needs gcc-aarch64-linux-gnu and gcc-arm-linux-gnueabihf.
cross:
	GO=$(GO) BIN=$(BIN) ./scripts/cross.sh

golden:
	$(GO) test ./export -update

clean:
	rm -rf $(BIN) demo-out demo-cluster-out
