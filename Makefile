# Profile Lake: the two commands are `make run` and `make test`; each does its own set-up.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
JARS_STAMP := .cache/jars/.complete
VENV_STAMP := $(VENV)/.complete

export DBT_PROFILES_DIR := $(CURDIR)/profiles
export DBT_PROJECT_DIR := $(CURDIR)
export PROFILE_LAKE_HOME ?= $(CURDIR)/.lake
export PROFILE_LAKE_LANDING ?= $(CURDIR)/sample/landing
export DBT_SEND_ANONYMOUS_USAGE_STATS := false

.PHONY: help setup browser run test lint unit integration bench docs report screenshots clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

$(VENV_STAMP): pyproject.toml adapter/pyproject.toml requirements.lock
	@echo "==> python environment ($(VENV)) from requirements.lock"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet -c requirements.lock -e ".[dev]" -e ./adapter
	@touch $@

$(JARS_STAMP): jars/pom.xml
	@echo "==> JVM jars (Delta, PostgreSQL JDBC) from Maven Central into .cache/jars (once; later runs are offline)"
	rm -rf .cache/jars
	mvn --batch-mode --quiet -f jars/pom.xml -Dmaven.repo.local=$(CURDIR)/.cache/m2 \
		dependency:copy-dependencies -DexcludeTransitive=true -DoutputDirectory=$(CURDIR)/.cache/jars
	@touch $@

setup: $(VENV_STAMP) $(JARS_STAMP)  ## install what the pipeline needs (idempotent; offline once done; no root)

# Debian's headless Chromium and its chromedriver, for the browser tests and the screenshots
# only, so `make run` needs neither root nor a browser (selenium is given both paths, so
# nothing downloads a browser at run time). Installing needs root; once installed, nothing does.
browser:  ## Chromium and chromedriver for `make test` and `make screenshots` (root to install)
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
		(echo "==> Chromium and chromedriver (Debian packages chromium, chromium-driver)" && \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium chromium-driver)

run: setup  ## run the pipeline on the landing data (sample by default) and print a summary
	$(BIN)/dbt build --exclude-resource-type unit_test
	$(BIN)/profile-lake summary

lint: setup  ## sqlfluff on the SQL models, ruff on the Python
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/sqlfluff lint models analyses snapshots tests

unit: setup  ## fast tests of pure logic (no Spark)
	$(BIN)/pytest pytests/unit -q

test: setup browser  ## lint, then every test (unit and integration); prints the duration
	@start=$$(date +%s); \
	$(MAKE) --no-print-directory lint && \
	$(BIN)/pytest pytests -n 2 --dist loadgroup --no-loadscope-reorder --durations=25; rc=$$?; \
	echo "test duration: $$(( $$(date +%s) - start )) s"; exit $$rc

bench: setup  ## run the benchmarks in bench/ (prints ratios)
	@for script in bench/bench_*.py; do $(BIN)/python $$script || exit 1; done

docs: setup  ## build dbt docs (target/index.html)
	$(BIN)/dbt docs generate

report: setup  ## write target/report.html: runs, lag, bad input, identity graph (after make run)
	$(BIN)/profile-lake report -o target/report.html

# A lake of its own under target/shots: the sample, then two generated waves, a build each.
SHOTS := $(CURDIR)/target/shots
screenshots: setup browser  ## the README's pictures (docs/img/): a small lake, its report and docs, Chromium
	rm -rf $(SHOTS) && mkdir -p $(SHOTS)/landing && cp -r sample/landing/. $(SHOTS)/landing/
	export PROFILE_LAKE_HOME=$(SHOTS)/lake PROFILE_LAKE_LANDING=$(SHOTS)/landing && \
	$(BIN)/dbt build --exclude-resource-type unit_test && \
	for seed in 11 12; do \
		$(BIN)/profile-lake generate --out $(SHOTS)/landing --seed $$seed --tenants 3 \
			--records-per-tenant 80 --quiet && \
		$(BIN)/dbt build --exclude-resource-type unit_test || exit 1; \
	done && \
	$(BIN)/dbt docs generate --target-path $(SHOTS)/docs && \
	$(BIN)/profile-lake report -o $(SHOTS)/report.html && \
	$(BIN)/python -m pytests.support.screenshots $(SHOTS)/report.html $(SHOTS)/docs docs/img

clean:  ## remove the lake, dbt output and caches of test runs (keeps the set-up)
	rm -rf .lake target logs
