# Set-up and the two jobs. `make demo` runs the example suites; `make test` runs the tests.
# Both create .venv on first use. TORCH pins a CPU build for machines without a GPU; on a GPU
# machine run e.g. `make test TORCH=torch` inside an environment that already has torch.
PYTHON ?= python3
VENV ?= .venv
TORCH ?= torch==2.13.0
# pytest-xdist workers for the plugin's own tests: one per core
TEST_WORKERS ?= auto
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
# and its report page
demo: $(STAMP)
	$(BIN)/python -m pytest examples -p no:cacheprovider
	$(BIN)/gemmcheck history
	$(BIN)/gemmcheck report --html .gemmcheck/report.html

# FlyDSL and an ld.lld for the compile-only lint tests, Debian's chromium for the report page's
# browser test, and the local PostgreSQL server: each script says what it could not set up and
# never fails (those tests then skip, saying why)
test: $(STAMP)
	VIRTUAL_ENV="$(abspath $(VENV))" bash ci/install-flydsl.sh
	VIRTUAL_ENV="$(abspath $(VENV))" bash ci/install-browser.sh
	bash ci/start-postgres.sh
	$(BIN)/python -m pytest tests -n $(TEST_WORKERS)

clean:
	rm -rf $(VENV) .gemmcheck
