# castscope: `make run` and `make test` are the whole set-up on a fresh Debian machine.
SWIFT     ?= swift
SUDO      := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)
# Debian packages the build links against (C system libraries) and the tests use
# (systemd-journal-remote builds real journal files; chromium renders the HTML report).
APT_PACKAGES := pkg-config libsystemd-dev zlib1g-dev libarchive-dev systemd-journal-remote chromium python3
SAMPLES   := healthy-jitsi retry-storm stopped-10001 jetsam-kill sendbird-call-ended mixed-bundle relay

.PHONY: all deps build release run test expected samples journals generate bench clean soak fuzz

all: build

deps: ## install the Debian packages that are missing (nothing when all are there)
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "make: installing$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing >/dev/null; \
	fi

# Journal files are built from the committed export text (binary files stay out of git).
JOURNAL_REMOTE := /lib/systemd/systemd-journal-remote
samples/relay/relay.journal: samples/relay/relay.export | deps
	rm -f $@
	SYSTEMD_JOURNAL_COMPACT=0 $(JOURNAL_REMOTE) --output=$(CURDIR)/$@ $< 2>/dev/null

journals: samples/relay/relay.journal

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release --static-swift-stdlib

run: release journals ## build in release and analyze every sample bundle
	.build/release/castscope analyze samples/

test: deps journals ## every test: parser samples, units, end-to-end runs of the binary on samples and real logs
	$(SWIFT) build
	$(SWIFT) test

generate: ## parsers/*.json -> Sources/CastscopeKit/Parsers/BuiltinParsers.generated.swift
	python3 scripts/generate-parsers.py

samples: ## rewrite samples/ from scripts/generate-samples.py
	python3 scripts/generate-samples.py

expected: build journals ## refresh each sample's expected report (review the diff!)
	@for s in $(SAMPLES); do \
	  .build/debug/castscope analyze --json samples/$$s > samples/$$s/.expected.json || true; \
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
