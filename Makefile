# SPDX-License-Identifier: Apache-2.0
# Two commands: `make run` (measure the default experiment and write its report) and
# `make test`. Both install what is missing first, so a fresh Debian machine needs nothing else.

VENV    := .venv
BIN     := $(VENV)/bin
BUILD   := build/agent
LINK    := build/link
PLAN    ?=
RESULTS ?= results
# scripts/install-deps.sh's groups after python (run, host, test): everything, unless a
# target needs less
DEPS    ?= run host test

.PHONY: run test deps packages agent firmware libs link creds test-agent test-link test-host bench clean

# Installs and builds only what the plan needs: the default (the device,
# src/tlsbench/plans/device.toml) needs the default target's cross compiler and QEMU, and
# builds its firmware on demand; a host plan (PLAN=host, or a file) needs the agents and the
# link emulator, built with Debian 12's mbed TLS only (`make run LIBRARIES=all` builds every
# library version from Debian 13 sources first: minutes on a fresh machine).
run: LIBRARIES = none
run: DEPS = run $(if $(PLAN),host)
run: deps $(if $(PLAN),agent link)
	$(BIN)/tlsbench run $(PLAN) --output $(RESULTS)

test: test-agent test-link test-host

# The Python environment and the Debian packages install side by side (a fresh machine's
# two largest waits, 1.5-2 minutes each): the environment needs only python3-venv, first.
deps:
	@scripts/install-deps.sh python
	@$(MAKE) --no-print-directory -s -j2 $(VENV)/.installed packages DEPS="$(DEPS)"

packages:
	@scripts/install-deps.sh $(DEPS)

# labgrid (docs/fleet.md) in an environment of its own: it brings its own pyserial fork and
# pytest, which stay out of the host tool's; tlsbench runs its labgrid-client as a program.
LABGRID_VERSION := 26.0.1
.venv-labgrid/.installed: Makefile
	@test -x .venv-labgrid/bin/python || python3 -m venv .venv-labgrid
	.venv-labgrid/bin/pip install --quiet --disable-pip-version-check 'labgrid==$(LABGRID_VERSION)'
	@touch $@

# Re-installs the Python package only when its declaration changes; the tests' own packages
# (pytest, hypothesis, duckdb) only for the tests. --no-compile: Python compiles what a
# command imports when it first imports it, not all of scipy, pandas and pyarrow up front
# (20 of 60 s of the installation on the test machine).
PIP := $(BIN)/pip install --quiet --disable-pip-version-check --no-compile
$(VENV)/.installed: pyproject.toml
	@scripts/install-deps.sh python
	@test -x $(BIN)/python || python3 -m venv $(VENV)
	@echo "Installing the Python packages into $(VENV)"
	@$(PIP) -e .
	@touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(PIP) -e '.[test]'
	@touch $@

# The current library versions (docs/libraries.md: mbedtls@3.6, openssl@3.5, wolfssl@5.7),
# built from Debian 13 sources once into ~/.cache/tlsbench (a few minutes the first time,
# a lookup after) for their agents. A version that cannot be fetched or built gets one error
# and is left out; the other agents are built as usual. LIBRARIES=none: the Debian 12 agents only.
LIBRARIES ?= all

# Builds both agent variants (traced and -notrace) and installs them next to the host tool.
# The build is configured again only when a library prefix changed.
agent: deps
	@mkdir -p $(BUILD)
	@$(BIN)/python -m tlsbench.builder.prefixes $(LIBRARIES) > $(BUILD)/library-prefixes.new
	@if ! cmp -s $(BUILD)/library-prefixes.new $(BUILD)/library-prefixes || test ! -f $(BUILD)/CMakeCache.txt; then \
	    cmake -S agent -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $$(cat $(BUILD)/library-prefixes.new) >/dev/null; fi
	@mv $(BUILD)/library-prefixes.new $(BUILD)/library-prefixes
	cmake --build $(BUILD) -j2
	@cmake --install $(BUILD) --prefix $(VENV) >/dev/null

# The agent as firmware (docs/porting.md "The targets" and "Library builds on the device"): a
# device library build cross-built once per core into ~/.cache/tlsbench, then its counting and
# memory images into build/firmware/ (incremental; `tlsbench run` and the tests build a missing
# one on demand), and the cycle model's QEMU plugin into the same cache (docs/cycles.md). The
# default target's own build unless told: FIRMWARE_TARGETS=all FIRMWARE_LIBRARIES=all builds
# every target with every library build its core builds.
firmware: deps
	$(BIN)/python -m tlsbench.builder.firmware $(if $(FIRMWARE_TARGETS),--target $(FIRMWARE_TARGETS)) \
		$(if $(FIRMWARE_LIBRARIES),--library $(FIRMWARE_LIBRARIES))
	@$(BIN)/python -m tlsbench.builder.cycles >/dev/null

# The link emulator (link/): a host tool of its own, installed next to the agents.
link: deps
	@test -f $(LINK)/CMakeCache.txt || cmake -S link -B $(LINK) -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build $(LINK) -j2
	@cmake --install $(LINK) --prefix $(VENV) >/dev/null

# The same, saying so: builds every known library version and the agents against them.
libs: deps
	$(MAKE) agent LIBRARIES=all

# The committed test credentials (agent/creds/fixed/) made again by their recipe, on purpose
# only: new keys move every count that depends on a key or a signature (docs/benchmarks.md
# "Reproducible images"). The ML-DSA chains with the cached openssl@3.5's command.
creds: deps
	prefix=$$($(BIN)/python -c 'from tlsbench.builder import libraries; print(libraries.ensure("openssl@3.5").prefix)') && \
		OPENSSL_PQ=$$prefix/bin/openssl bash agent/creds/gen_creds.sh agent/creds/fixed

test-agent: agent firmware
	ctest --test-dir $(BUILD) --output-on-failure

test-link: link
	ctest --test-dir $(LINK) --output-on-failure

test-host: agent link .venv-labgrid/.installed $(VENV)/.installed-test
	$(BIN)/pytest -q

bench: agent link
	$(BIN)/python bench/run_all.py

clean:
	rm -rf build $(VENV)
