# SPDX-License-Identifier: Apache-2.0
# Two commands: `make run` (measure the default experiment and write its report) and
# `make test`. Both install what is missing first, so a fresh Debian machine needs nothing else.

VENV    := .venv
BIN     := $(VENV)/bin
BUILD   := build/agent
LINK    := build/link
PLAN    ?=
RESULTS ?= results

.PHONY: run test deps agent link test-agent test-link test-host bench clean

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

# Builds both agent variants (traced and -notrace) and installs them next to the host tool.
agent: deps
	@test -f $(BUILD)/CMakeCache.txt || cmake -S agent -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build $(BUILD) -j2
	@cmake --install $(BUILD) --prefix $(VENV) >/dev/null

# The link emulator (link/): a host tool of its own, installed next to the agents.
link: deps
	@test -f $(LINK)/CMakeCache.txt || cmake -S link -B $(LINK) -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build $(LINK) -j2
	@cmake --install $(LINK) --prefix $(VENV) >/dev/null

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
