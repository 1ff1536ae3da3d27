# castscope: `make run` and `make test` are the whole set-up on a fresh Debian machine.
SWIFT     ?= swift
SUDO      := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)
# Debian packages the build links against (C system libraries) and the tests use.
APT_PACKAGES := pkg-config libsystemd-dev zlib1g-dev libarchive-dev python3
SAMPLES   := healthy-jitsi retry-storm stopped-10001 jetsam-kill sendbird-call-ended mixed-bundle

.PHONY: all deps build release run test expected samples generate check-generated clean

all: build

deps: ## install the Debian packages that are missing (nothing when all are there)
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "make: installing$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing >/dev/null; \
	fi

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

run: release ## build in release and analyze every sample bundle
	.build/release/castscope analyze samples/

test: deps ## every test: parser samples, units, end-to-end runs of the binary on samples and real logs
	$(SWIFT) build
	$(SWIFT) test

generate: ## parsers/*.json -> Sources/CastscopeKit/Parsers/BuiltinParsers.generated.swift
	python3 scripts/generate-parsers.py

samples: ## rewrite samples/ from scripts/generate-samples.py
	python3 scripts/generate-samples.py

expected: build ## refresh each sample's expected report (review the diff!)
	@for s in $(SAMPLES); do \
	  .build/debug/castscope analyze --json samples/$$s > samples/$$s/.expected.json || true; \
	  echo "wrote samples/$$s/.expected.json"; \
	done

clean:
	rm -rf .build
