# Set-up and the two jobs. `make demo` runs the example suites; `make test` runs the tests.
# Both create .venv on first use. TORCH pins a CPU build for machines without a GPU; on a GPU
# machine run e.g. `make test TORCH=torch` inside an environment that already has torch.
PYTHON ?= python3
VENV ?= .venv
TORCH ?= torch==2.13.0
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: venv demo test clean

$(STAMP): pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q "$(TORCH)"
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

# the example suites into the embedded SQLite history (.gemmcheck/history.db), then its dashboard
demo: $(STAMP)
	$(BIN)/python -m pytest examples -p no:cacheprovider
	$(BIN)/gemmcheck history

test: $(STAMP)
	$(BIN)/python -m pytest tests

clean:
	rm -rf $(VENV) .gemmcheck
