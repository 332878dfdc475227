# Two commands for a fresh machine: `make run` and `make test`.
# Each installs what is missing (and only that), then does its job.

SHELL := /bin/bash
export PATH := $(HOME)/.cargo/bin:$(PATH)

CARGO_LEPTOS_VERSION := 0.3.11
WASM_BINDGEN_VERSION := 0.2.130
SUDO := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)
# The end-to-end suite gets its own port and its own database, so it never
# touches a running `make run` or its data.
E2E_ADDR ?= 127.0.0.1:3100
E2E_DB := $(CURDIR)/target/e2e/margin-e2e.db

.PHONY: run test deb package tools browser npm-deps e2e-deps lti-peer readers cargo-test cargo-test-postgres e2e bench bench-ui bench-islands bench-scale fuzz soak soak-hostile

# wasm-opt for release builds comes from npm (binaryen, pinned in
# end2end/package.json): Debian's binaryen 108 predates externref and breaks
# the module wasm-bindgen writes.
NODE_BIN := $(CURDIR)/end2end/node_modules/.bin

## Build a release and serve it on http://127.0.0.1:3000 (data under ./data).
run: tools npm-deps
	mkdir -p data
	PATH="$(NODE_BIN):$$PATH" cargo leptos serve --release --precompress --split

## All cargo tests, then the Playwright suite against a real server and Chromium.
test: tools e2e-deps lti-peer readers cargo-test e2e package

# The LMS built on a platform library no one here wrote (lti1p3platform from
# PyPI, tests/peers/lti_platform.py), in a Python of its own under target/.
PEER_PYTHON := $(CURDIR)/target/peers/venv/bin/python
export MARGIN_TEST_LTI_PYTHON := $(PEER_PYTHON)
export MARGIN_TEST_PEER_PYTHON := $(PEER_PYTHON)
lti-peer:
	@$(PEER_PYTHON) -c "import lti1p3platform" 2>/dev/null || ( \
		(python3 -m venv target/peers/venv 2>/dev/null || ($(SUDO) apt-get update && $(SUDO) apt-get install -y python3-venv && python3 -m venv target/peers/venv)) \
		&& $(PEER_PYTHON) -m pip install --quiet lti1p3platform==0.1.8 )

# The readers of Margin's exports no one here wrote (tests/all/exports_checked.rs):
# libxml2's xmllint, against the official IMS schemas, and python-docx, in
# the peers' Python.
readers: lti-peer
	@command -v xmllint >/dev/null \
		|| ($(SUDO) apt-get update && $(SUDO) apt-get install -y libxml2-utils)
	@$(PEER_PYTHON) -c "import docx" 2>/dev/null \
		|| $(PEER_PYTHON) -m pip install --quiet python-docx==1.1.2

# Each test in a process of its own, several at once (cargo-nextest,
# .config/nextest.toml). In one process, tests calling Leptos server
# functions while another rendered a page once hung about 1 run in 8, so
# `cargo test` ran them one at a time; a process per test shares nothing.
#
# Then the integration suites again on PostgreSQL, each test in a database of
# its own (tests/all/common/database.rs), on the server scripts/test-postgres
# finds or starts. The SQLite pass is told that server too: the schema
# comparison (tests/all/schemas.rs) migrates one database of each kind.
cargo-test:
	url="$$(scripts/test-postgres)" && MARGIN_TEST_POSTGRES_URL="$$url" \
		cargo nextest run --workspace --features ssr
	$(MAKE) cargo-test-postgres

cargo-test-postgres:
	url="$$(scripts/test-postgres)" && \
		MARGIN_TEST_DATABASE=postgres MARGIN_TEST_POSTGRES_URL="$$url" \
		cargo nextest run --features ssr --test all

# `cargo leptos build` first: `end-to-end` reports success when the build
# fails (cargo-leptos 0.3.11 returns early with no error), so a browser-only
# compile error would otherwise pass.
e2e:
	rm -rf target/e2e && mkdir -p target/e2e
	cargo leptos build --split
	env -u AI_API_KEY -u AI_BASE_URL -u AI_MODEL AI_PROVIDER=demo \
		MARGIN_SIGNUPS_PER_CLIENT_HOUR=10000 \
		LEPTOS_SITE_ADDR=$(E2E_ADDR) DATABASE_URL=sqlite://$(E2E_DB) \
		MARGIN_E2E_POSTGRES_URL="$$(scripts/test-postgres)" MARGIN_E2E_BIN=$(CURDIR)/target/debug/margin \
		cargo leptos end-to-end --split

## The Debian package (target/debian/margin_<version>_<arch>.deb): the
## release build, its site files and a systemd unit (docs/operating.md).
deb: tools npm-deps
	PATH="$(NODE_BIN):$$PATH" cargo leptos build --release --precompress --split
	scripts/package-deb target/release/margin target/site target/release/hash.txt target/debian

# The package built from the server and site the e2e step just built,
# installed, started, stopped and removed on this machine (as root, or
# with sudo), which is left as it was found.
package:
	scripts/test-package

## The property tests of the parsers and the material readers (tests/all/fuzz.rs, the turn log's
## compaction) with many more cases than `make test` runs.
FUZZ_CASES ?= 20000
fuzz:
	PROPTEST_CASES=$(FUZZ_CASES) cargo test --features ssr --test all -- fuzz::
	PROPTEST_CASES=$(FUZZ_CASES) cargo test --features ssr --lib -- compact

## 200 streams held for 10 minutes against the scripted model; prints the
## server's open file descriptors and resident memory over time (see
## benches/turns.rs). SOAK_STREAMS and SOAK_SECS change the load.
soak:
	MARGIN_BENCH_ONLY=soak cargo bench --features ssr --bench turns

## 20 accounts uploading hostile files (nested, packed) for a minute beside
## 50 streaming replies and sign-ins, on the real server binary: replies
## failed, sign-in p95, what the uploads got, the server's peak memory
## (benches/hostile.rs). HOSTILE_SECS changes the length.
soak-hostile:
	cargo bench --features ssr --bench hostile

## Build tools: the WASM target, cargo-leptos and the wasm-bindgen CLI
## matching Cargo.lock, and cargo-nextest (machines of this kind come with
## it). Each is installed only when missing.
tools:
	@rustup target list --installed | grep -qx wasm32-unknown-unknown \
		|| rustup target add wasm32-unknown-unknown
	@cargo leptos --version 2>/dev/null | grep -q "$(CARGO_LEPTOS_VERSION)" \
		|| cargo +nightly install cargo-leptos --version $(CARGO_LEPTOS_VERSION) --locked
	@wasm-bindgen --version 2>/dev/null | grep -q "$(WASM_BINDGEN_VERSION)" \
		|| cargo install wasm-bindgen-cli --version $(WASM_BINDGEN_VERSION)
	@cargo nextest --version >/dev/null 2>&1 \
		|| cargo +nightly install cargo-nextest --locked

## Chromium from Debian (Playwright's own browser download cannot work here).
browser:
	@test -x /usr/bin/chromium \
		|| ($(SUDO) apt-get update && $(SUDO) apt-get install -y chromium)
	@# pdftotext reads the printed worksheets back in end2end/tests/print.spec.ts.
	@command -v pdftotext >/dev/null \
		|| ($(SUDO) apt-get update && $(SUDO) apt-get install -y poppler-utils)

## The end2end npm packages: Playwright, and binaryen's wasm-opt.
npm-deps:
	@(test -d end2end/node_modules/@playwright/test && test -d end2end/node_modules/oidc-provider && test -x $(NODE_BIN)/wasm-opt) \
		|| (cd end2end && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund)

e2e-deps: browser npm-deps

## Benchmarks: what the server adds to time-to-first-text, CPU per 1,000
## streamed deltas, and memory per open stream (see benches/turns.rs); the
## change list of two lessons at the size cap (benches/changes.rs); the
## lessons list and search of a teacher with 1,000 lessons (benches/library.rs).
bench:
	cargo bench --features ssr --bench prompt
	cargo bench --features ssr --bench changes
	cargo bench --features ssr --bench library
	cargo bench --features ssr --bench safety
	cargo bench --features ssr --bench turns
	url="$$(scripts/test-postgres)" && MARGIN_BENCH_DATABASE=postgres MARGIN_BENCH_POSTGRES_URL="$$url" \
		cargo bench --features ssr --bench turns

## The district benchmark: three Margin instances on one PostgreSQL (the
## server scripts/test-postgres finds; it says whether fsync is on), replies
## added in steps of 100 to 2,000 at once, with per-step latency over the
## model's, cross-instance delay, commits per second and CPU (benches/scale.rs;
## MARGIN_SCALE_STEPS and MARGIN_SCALE_INSTANCES change the ramp).
bench-scale:
	MARGIN_BENCH_POSTGRES_URL="$$(scripts/test-postgres)" cargo bench --features ssr --bench scale

## The sidebar benchmark: a release build in Chromium streaming a 20,000
## character reply one character per chunk; prints main-thread time per chunk
## at the start and the end, the longest task, and the gzipped WASM size
## (see end2end/bench/sidebar.spec.ts; results also in target/bench/).
BENCH_UI_DB := $(CURDIR)/target/bench-ui/margin-bench.db
bench-ui: tools e2e-deps
	rm -rf target/bench-ui && mkdir -p target/bench-ui
	env -u AI_API_KEY -u AI_BASE_URL -u AI_MODEL AI_PROVIDER=demo MARGIN_BENCH=ui \
		PATH="$(NODE_BIN):$$PATH" LEPTOS_SITE_ADDR=127.0.0.1:3200 DATABASE_URL=sqlite://$(BENCH_UI_DB) \
		sh -c 'cargo leptos build --release --precompress --split && cargo leptos end-to-end --release --precompress --split'
	$(MAKE) bench-islands

## Where the bundle's bytes go, island by island, with a budget for each part
## (see end2end/bench/islands.mjs; bench-ui ends with it): the same release
## build with function names kept, optimised with the same wasm-opt
## settings, then attributed. Fails, naming the part, when one is over budget.
ISLANDS_DIR := $(CURDIR)/target/bench-islands
WASM_OPT_FLAGS := -Oz --converge --low-memory-unused --enable-bulk-memory --enable-nontrapping-float-to-int \
	--enable-reference-types --enable-multivalue --enable-sign-ext --enable-mutable-globals
bench-islands: tools e2e-deps
	RUSTFLAGS="-C symbol-mangling-version=v0" CARGO_PROFILE_WASM_RELEASE_STRIP=none \
		cargo build --lib --target wasm32-unknown-unknown --profile wasm-release \
		--no-default-features --features hydrate --target-dir $(ISLANDS_DIR)
	wasm-bindgen --target web --keep-debug --out-dir $(ISLANDS_DIR)/pkg \
		$(ISLANDS_DIR)/wasm32-unknown-unknown/wasm-release/margin.wasm
	$(NODE_BIN)/wasm-opt -g $(WASM_OPT_FLAGS) $(ISLANDS_DIR)/pkg/margin_bg.wasm -o $(ISLANDS_DIR)/margin.wasm
	mkdir -p target/bench
	node end2end/bench/islands.mjs $(ISLANDS_DIR)/margin.wasm target/bench/islands.json
