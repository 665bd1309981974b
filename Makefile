# Two commands do all the set-up: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: venv run test lint lint-js typecheck imports unit coverage browser prometheus bench clean vsix vscode-test

# The lowest total line coverage `make coverage` accepts.
COVERAGE_FLOOR ?= 88
# Test processes (pytest-xdist): one per core. Every test has its own store (a file or a
# throwaway PostgreSQL database) and its own ports, so they run side by side.
TEST_WORKERS ?= auto
# The suite starts hundreds of Python processes (servers, workers, bridges' frameworks). Where
# the environment says PYTHONDONTWRITEBYTECODE, each would compile PawFlow's modules from
# source again (about a third of a second of CPU per start on two cores): tests and
# benchmarks run with bytecode written (to __pycache__, which git ignores).
WITH_BYTECODE := env -u PYTHONDONTWRITEBYTECODE

# The environment is made again when its installer does not run: a build cut short (Ctrl+C
# in the first seconds of `make run`, or while pip upgrades itself) leaves a python without a
# working pip, which would fail every later run. `make clean` starts over by hand.
define ENSURE_VENV
@$(PY) -m pip --version >/dev/null 2>&1 || { \
  if [ -e $(VENV) ]; then echo "$(VENV) is incomplete (an interrupted build?): making it again"; fi; \
  echo "$(PYTHON) -m venv $(VENV)"; rm -rf $(VENV) && $(PYTHON) -m venv $(VENV); }
endef

venv:
	$(ENSURE_VENV)

# The `dev` extra is the whole product (`pawflow[all]`) and the tools of the tests.
$(STAMP): pyproject.toml
	$(ENSURE_VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@

# CrewAI cannot share .venv (it pins openai<3, which openai-agents refuses): its bridge's
# processes run from a venv of their own, which tests/bridges/test_crewai.py starts them with
# (the core, PostgreSQL for the tests' stores, and CrewAI).
CREWAI_VENV := .venv-crewai
CREWAI_STAMP := $(CREWAI_VENV)/.installed

$(CREWAI_STAMP): pyproject.toml
	test -x $(CREWAI_VENV)/bin/python || $(PYTHON) -m venv $(CREWAI_VENV)
	$(CREWAI_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(CREWAI_VENV)/bin/python -m pip install --quiet -e '.[crewai,postgres]'
	touch $@

run: $(STAMP)
	$(PY) -m pawflow serve --demo

lint: $(STAMP) lint-js
	$(PY) -m ruff check src tests benchmarks scripts
	$(PY) -m ruff format --check src tests benchmarks scripts

# The web chat's JavaScript (src/pawflow/server/static/js, its service worker sw.js with
# the worker's types, and the MCP App's in src/pawflow/mcp/app) type-checked by TypeScript,
# with the compiler pinned in tools/webchat (installed again when its lock file changes). Without
# node/npm the check is skipped locally and fails in CI (CI=true).
WEBCHAT_TOOLS := tools/webchat

lint-js:
	@if command -v npm >/dev/null 2>&1 && command -v node >/dev/null 2>&1; then \
	  if [ ! -f $(WEBCHAT_TOOLS)/node_modules/.package-lock.json ] || \
	     [ $(WEBCHAT_TOOLS)/package-lock.json -nt $(WEBCHAT_TOOLS)/node_modules/.package-lock.json ]; then \
	    (cd $(WEBCHAT_TOOLS) && npm ci --no-audit --no-fund) || exit 1; \
	  fi; \
	  echo "tsc -p $(WEBCHAT_TOOLS)"; $(WEBCHAT_TOOLS)/node_modules/.bin/tsc -p $(WEBCHAT_TOOLS) && \
	  $(WEBCHAT_TOOLS)/node_modules/.bin/tsc -p $(WEBCHAT_TOOLS)/tsconfig.worker.json; \
	elif [ "$$CI" = true ]; then echo "node and npm are missing (apt-get install nodejs npm)"; exit 1; \
	else echo "node and npm are missing (apt-get install nodejs npm): web chat types not checked"; fi

typecheck: $(STAMP)
	$(PY) -m mypy

imports: $(STAMP)
	$(VENV)/bin/lint-imports

# `make test` runs the suite without measuring coverage: measuring costs about a third more
# time, and the suite must stay within 15 minutes on two cores. `make coverage` runs it measured,
# and fails below COVERAGE_FLOOR.
unit: $(STAMP) $(CREWAI_STAMP) browser prometheus
	$(WITH_BYTECODE) $(PY) -m pytest -q -n $(TEST_WORKERS)

coverage: $(STAMP) $(CREWAI_STAMP) browser prometheus
	$(WITH_BYTECODE) $(PY) -m pytest -q -n $(TEST_WORKERS) --cov --cov-report=term --cov-fail-under=$(COVERAGE_FLOOR)

# The web chat tests drive Debian's chromium (never a downloaded browser).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -q && apt-get install -y -q chromium; \
	  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then \
	    sudo apt-get update -q && sudo apt-get install -y -q chromium; \
	  else echo "chromium is missing and cannot be installed without root:" \
	    "run 'sudo apt-get install chromium' (the web chat tests are skipped until then)."; fi; }

# The metrics test scrapes a real pawflow serve with Debian's prometheus; in CI (CI=true) a
# missing prometheus fails that test, never skips it.
prometheus:
	@command -v prometheus >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -q && apt-get install -y -q prometheus; \
	  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then \
	    sudo apt-get update -q && sudo apt-get install -y -q prometheus; \
	  else echo "prometheus is missing and cannot be installed without root:" \
	    "run 'sudo apt-get install prometheus' (the Prometheus test is skipped until then)."; fi; }

test: lint typecheck imports vscode-test unit

# `make bench BENCH_ARGS="--quick --only sse,http"` runs some sections with small counts.
bench: $(STAMP)
	$(PY) -m pip install --quiet -e '.[dev,bench]'
	$(WITH_BYTECODE) $(PY) benchmarks/run.py $(BENCH_ARGS)

# The VS Code extension (clients/vscode): its tests run against a real `pawflow serve` from
# this venv. Without node/npm they are skipped locally and fail in CI (CI=true).
VSCODE := clients/vscode

vscode-test: $(STAMP) browser
	@if command -v npm >/dev/null 2>&1 && command -v node >/dev/null 2>&1; then \
	  cd $(VSCODE) && npm ci --no-audit --no-fund && \
	  PAWFLOW_BIN="$(CURDIR)/$(VENV)/bin/pawflow" npm test; \
	elif [ "$$CI" = true ]; then echo "node and npm are missing (apt-get install nodejs npm)"; exit 1; \
	else echo "node and npm are missing (apt-get install nodejs npm): extension tests skipped"; fi

vsix:
	cd $(VSCODE) && npm ci --no-audit --no-fund && npm run package
	@echo "built $(VSCODE)/pawflow.vsix"

clean:
	rm -rf $(VENV) $(CREWAI_VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis $(WEBCHAT_TOOLS)/node_modules \
	  tools/mcp-host/node_modules tools/oidc-provider/node_modules
