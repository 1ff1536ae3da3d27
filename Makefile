# castscope: `make run` and `make test` are the whole set-up on a fresh Debian machine.
SWIFT     ?= swift
SUDO      := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)
# Debian packages the build links against (C system libraries) and the tests use
# (systemd-journal-remote builds real journal files; chromium renders the HTML report;
# clickhouse-server/-client (18.16) are the real servers the ClickHouse tests start).
APT_PACKAGES := pkg-config libsystemd-dev zlib1g-dev libarchive-dev liblz4-dev systemd-journal-remote chromium python3 tzdata
APT_PACKAGES += clickhouse-server clickhouse-client python3-pip
# The compressors whose other frame layouts the tests write (pzstd's skippable frame, lz4 -l, lzma).
APT_PACKAGES += zstd lz4 xz-utils
SAMPLES   := healthy-jitsi retry-storm stopped-10001 jetsam-kill sendbird-call-ended mixed-bundle relay

.PHONY: all deps pydeps build release run test expected samples journals generate bench clean man completions chdb soak fuzz

# chdb (current ClickHouse embedded in Python, ~540 MB installed) checks the same DDL, rows and
# queries as the 18.16 server: installed once into a cache outside the checkout, reused after.
CHDB_DIR ?= $(HOME)/.cache/castscope/chdb
CHDB_PY  := PYTHONPATH=$(CHDB_DIR)$${PYTHONPATH:+:$$PYTHONPATH} python3

all: build man completions

deps: ## install the Debian packages that are missing (nothing when all are there)
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "make: installing$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing >/dev/null; \
	fi
	@$(MAKE) --no-print-directory pydeps

# PyPI packages the report tests use: jsonschema (schema/*.schema.json against real output),
# cmarkgfm (GitHub's own cmark-gfm, renders the Markdown report).
PY_PACKAGES := jsonschema cmarkgfm
pydeps:
	@python3 -c "import jsonschema, cmarkgfm" 2>/dev/null || python3 -m pip install -q $(PY_PACKAGES)

# Journal files are built from the committed export text (binary files stay out of git).
JOURNAL_REMOTE := /lib/systemd/systemd-journal-remote
samples/relay/relay.journal: samples/relay/relay.export | deps
	rm -f $@
	SYSTEMD_JOURNAL_COMPACT=0 $(JOURNAL_REMOTE) --output=$(CURDIR)/$@ $< 2>/dev/null

journals: samples/relay/relay.journal

build: deps
	$(SWIFT) build

# The man page (swift-argument-parser's generate-manual plugin, debug build: no release needed)
# and shell completions (from the binary itself): `man -l .build/share/man/man1/castscope.1`.
man: build
	$(SWIFT) package --allow-writing-to-package-directory generate-manual --configuration debug >/dev/null
	mkdir -p .build/share/man/man1
	cp .build/plugins/GenerateManual/outputs/castscope/castscope.1 .build/share/man/man1/castscope.1

completions: build
	mkdir -p .build/share/completions
	.build/debug/castscope --generate-completion-script bash > .build/share/completions/castscope.bash
	.build/debug/castscope --generate-completion-script zsh > .build/share/completions/_castscope
	.build/debug/castscope --generate-completion-script fish > .build/share/completions/castscope.fish

release: deps
	$(SWIFT) build -c release --static-swift-stdlib

run: release journals ## build in release and analyze every sample bundle
	.build/release/castscope analyze samples/

test: deps journals man completions chdb ## every test: parser samples, units, end-to-end runs of the binary on samples and real logs
	$(SWIFT) build
	$(SWIFT) test
	$(CHDB_PY) scripts/clickhouse-check.py

chdb: ## install chdb (PyPI) into $(CHDB_DIR) unless python3 can already import it
	@$(CHDB_PY) -c 'import chdb' 2>/dev/null || { echo "make: installing chdb into $(CHDB_DIR)"; \
	  python3 -m pip install -q --break-system-packages --target $(CHDB_DIR) chdb; }

generate: ## parsers/*.json -> Sources/CastscopeKit/Parsers/BuiltinParsers.generated.swift
	python3 scripts/generate-parsers.py

samples: ## rewrite samples/ from scripts/generate-samples.py
	python3 scripts/generate-samples.py

expected: build journals ## refresh each sample's expected report (review the diff!)
	@for s in $(SAMPLES); do \
	  SOURCE_DATE_EPOCH=0 .build/debug/castscope analyze --json samples/$$s > samples/$$s/.expected.json || true; \
	  echo "wrote samples/$$s/.expected.json"; \
	done

bench: release ## speed and memory against grep, zcat, journalctl, lnav (BENCH_SIZE=2048 for 2 GB)
	@command -v lnav >/dev/null || (DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq lnav >/dev/null)
	python3 scripts/bench.py

clean:
	rm -rf .build

SOAK_CYCLES ?= 50
soak: build ## tail exactly once: SOAK_CYCLES runs killed (SIGKILL/SIGTERM) while journals are written and rotated
	python3 scripts/soak-tail.py .build/debug/castscope $(SOAK_CYCLES)

FUZZ_SECONDS ?= 60
fuzz: deps ## libFuzzer over every stage, with and without ASan: FUZZ_SECONDS per target (Fuzz/run.py)
	FUZZ_SECONDS=$(FUZZ_SECONDS) python3 Fuzz/run.py
