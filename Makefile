# SPDX-License-Identifier: Apache-2.0
# Two commands: `make run` (measure the default experiment and write its report) and
# `make test`. Both install what is missing first, so a fresh Debian machine needs nothing else.

VENV    := .venv
BIN     := $(VENV)/bin
BUILD   := build/agent
LINK    := build/link
PLAN    ?=
RESULTS ?= results

.PHONY: run test deps agent libs link test-agent test-link test-host bench clean

run: agent link
	$(BIN)/tlsbench run $(PLAN) --output $(RESULTS)

test: test-agent test-link test-host

deps: $(VENV)/.installed
	@scripts/install-deps.sh

# Re-installs the Python package only when its declaration changes.
$(VENV)/.installed: pyproject.toml
	@scripts/install-deps.sh
	@test -x $(BIN)/python || python3 -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[test]'
	@touch $@

# The current library versions from Debian 13 sources (docs/libraries.md): built once per
# machine into ~/.cache/tlsbench (minutes), looked up later (a second). A version that cannot be
# built is named with the command to retry and left out: the other agents still build.
LIB_PATH = $$($(BIN)/tlsbench libs path $(1) 2>/dev/null)

# Builds both agent variants (traced and -notrace), the Debian 12 libraries' and the cached
# current versions' (tlsbench-agent-openssl-3.5, -wolfssl-5.7, ...), and installs them next to
# the host tool.
agent: deps
	-@$(BIN)/tlsbench libs build
	@cmake -S agent -B $(BUILD) -DCMAKE_BUILD_TYPE=Release \
	    -DTB_OPENSSL35_PREFIX=$(call LIB_PATH,openssl@3.5) \
	    -DTB_WOLFSSL57_PREFIX=$(call LIB_PATH,wolfssl@5.7) \
	    -DTB_MBEDTLS36_PREFIX=$(call LIB_PATH,mbedtls@3.6) >/dev/null
	cmake --build $(BUILD) -j2
	@cmake --install $(BUILD) --prefix $(VENV) >/dev/null

# The link emulator (link/): a host tool of its own, installed next to the agents.
link: deps
	@test -f $(LINK)/CMakeCache.txt || cmake -S link -B $(LINK) -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build $(LINK) -j2
	@cmake --install $(LINK) --prefix $(VENV) >/dev/null

# The current library versions alone (make agent builds them first anyway).
libs: deps
	$(BIN)/tlsbench libs build

test-agent: agent
	ctest --test-dir $(BUILD) --output-on-failure

test-link: link
	ctest --test-dir $(LINK) --output-on-failure

test-host: agent link
	$(BIN)/pytest -q

bench: agent link
	$(BIN)/python bench/run_all.py

clean:
	rm -rf build $(VENV)
