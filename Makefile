# Two commands on a fresh machine (Python 3.11+, Java 17+):
#   make demo   set up .venv and run the main job end to end on the embedded default
#   make test   set up .venv and run the whole test suite
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test venv java clean

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "changeprov needs Python 3.11 or newer (found " + sys.version.split()[0] + ")")'
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet --upgrade pip setuptools wheel
	$(BIN)/python -m pip install --quiet -e '.[test]'
	@touch $(STAMP)

venv: $(STAMP)

java:
	@$(BIN)/python -m changeprov.javacheck

demo: venv java
	$(BIN)/changeprov demo --workdir build/demo

# The browser tests (pytest -m browser) need headless Chromium; as root with apt-get we install it (quietly,
# non-fatal: without it they skip, or fail under CI with a message saying so).
test: venv java
	@if [ ! -x /usr/bin/chromium ] && command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	  echo "installing chromium for the browser tests (apt-get install -y chromium)"; \
	  apt-get install -y -qq chromium >/dev/null 2>&1 \
	  || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq chromium >/dev/null 2>&1; } \
	  || echo "could not install chromium: the browser tests will skip (or fail under CI)"; \
	fi
	$(BIN)/python -m pytest $(PYTEST_ARGS)

clean:
	rm -rf build .pytest_cache .hypothesis
