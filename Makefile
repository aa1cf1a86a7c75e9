# pi-lsp: one entry point for setting up, running and testing on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
ORACLE_DIR := .pi-oracle
PI_VERSION := 0.73.1
STAMP := $(VENV)/.installed

.PHONY: setup oracle acp-deps demo test test-fast lint lint-python lint-typescript lint-lua typecheck bench bench-vscode clean vscode-test vscode-e2e protocol

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

$(ORACLE_DIR)/node_modules/@mariozechner/pi-coding-agent/package.json:
	mkdir -p $(ORACLE_DIR)
	cd $(ORACLE_DIR) && npm install --no-audit --no-fund --loglevel=error @mariozechner/pi-coding-agent@$(PI_VERSION)

oracle: $(ORACLE_DIR)/node_modules/@mariozechner/pi-coding-agent/package.json

# The official ACP TypeScript SDK and ajv, the client and schema checker of tests/acp (pinned by its lock).
ACP_DEPS := tests/acp/node_modules/.package-lock.json
$(ACP_DEPS): tests/acp/package-lock.json
	cd tests/acp && npm ci --no-audit --no-fund --loglevel=error

acp-deps: $(ACP_DEPS)

demo: setup
	$(BIN)/pi-lsp demo

# -rfEs: failures, errors and every skipped test with its reason in the summary at the end.
test: setup oracle acp-deps vscode-test vscode-e2e
	$(BIN)/pytest -q -rfEs -n 2

# The VS Code extension (vscode-client/): typecheck, eslint, bundle, the server wheel it ships, unit tests and tests
# against the real server (and the private environment made from that wheel), and one smoke run of the chat's
# streaming benchmark (a 4,000-byte reply in headless Chromium: it must still run; `make bench-vscode` measures).
VSCODE_DEPS := vscode-client/node_modules/.package-lock.json
$(VSCODE_DEPS): vscode-client/package-lock.json
	cd vscode-client && npm ci --no-audit --no-fund --loglevel=error

vscode-test: setup $(VSCODE_DEPS)
	cd vscode-client && npm run --silent typecheck && npm run --silent lint && npm run --silent build
	cd vscode-client && PYTHON=$(CURDIR)/$(BIN)/python npm run --silent wheel
	cd vscode-client && PI_LSP_COMMAND=$(CURDIR)/$(BIN)/pi-lsp npm test --silent
	cd vscode-client && node bench/run.mjs --smoke

# End to end: the packaged .vsix in a real VS Code (code-server from npm, installed by
# e2e/setup.sh) in headless Chromium, with the real server and the loopback fake model.
# Screenshots go to vscode-client/e2e/screenshots/, the run's logs to vscode-client/e2e/run/.
vscode-e2e: setup $(VSCODE_DEPS)
	vscode-client/e2e/setup.sh
	cd vscode-client && PYTHON=$(CURDIR)/$(BIN)/python npm run --silent package >/dev/null
	cd vscode-client && npm run --silent e2e

# The unit tests only: nothing that starts a server, runs the agent, runs pi or drives an editor
# (the lane marks of tests/lanes.py); a few minutes on two cores. make test runs everything.
test-fast: setup
	$(BIN)/pytest -q -x -m "not (slow or server or agent or oracle or editor)"

# The files made from the protocol source (pi_lsp/protocol/): vscode-client/src/shared/protocol.ts,
# nvim-client/lua/pi/protocol.lua and the index in docs/protocol.md. tests/test_protocol_source.py
# fails while a committed copy is stale.
protocol: setup
	$(BIN)/python -m pi_lsp.protocol.generate

# Every language's checks, one target (CI runs it):
# Python: ruff (lint and format), mypy --strict, the rules of ARCHITECTURE.md (import-linter contracts
# in pyproject.toml); TypeScript (vscode-client/): tsc and eslint; Lua (nvim-client/): StyLua
# (nvim-client/stylua.toml, installed from tools/lua/package-lock.json) and luacheck
# (nvim-client/.luacheckrc; Debian's lua-check package, which .ci/run installs).
LUA_TOOLS := tools/lua/node_modules/.package-lock.json
$(LUA_TOOLS): tools/lua/package-lock.json
	cd tools/lua && npm ci --no-audit --no-fund --loglevel=error

lint: lint-python lint-typescript lint-lua

lint-python: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

lint-typescript: $(VSCODE_DEPS)
	cd vscode-client && npm run --silent typecheck && npm run --silent lint

lint-lua: $(LUA_TOOLS)
	tools/lua/node_modules/.bin/stylua --config-path nvim-client/stylua.toml --check nvim-client/lua
	@command -v luacheck >/dev/null || { echo "luacheck is missing: apt-get install lua-check (or luarocks install luacheck)"; exit 1; }
	cd nvim-client && luacheck --no-color lua

bench: setup oracle
	$(BIN)/python benchmarks/bench_session.py
	$(BIN)/python benchmarks/bench_server.py
	$(BIN)/python benchmarks/bench_compaction.py
	$(BIN)/python benchmarks/bench_prompt.py
	$(BIN)/python benchmarks/bench_agent.py

# The chat's streaming benchmark: real host code in Node, the real webview bundle in headless
# Chromium ($$CHROMIUM, else /usr/bin/chromium); numbers in docs/benchmarks.md.
bench-vscode: $(VSCODE_DEPS)
	cd vscode-client && npm run --silent build && node bench/run.mjs

clean:
	rm -rf $(VENV) $(ORACLE_DIR) vscode-client/node_modules vscode-client/out vscode-client/out-test vscode-client/out-e2e vscode-client/e2e/.tools vscode-client/e2e/run vscode-client/e2e/screenshots .pytest_cache .mypy_cache .ruff_cache .hypothesis
