# Evidence Workbench. `make run` and `make test` do all the set-up on first use.
SHELL := /bin/bash
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Django 6.1 needs Python 3.12 or newer; take the first one this machine has.
PYTHON ?= $(shell for p in python3.13 python3.12 /root/.pyenv/versions/3.13*/bin/python3.13 /root/.pyenv/versions/3.12*/bin/python3.12 /usr/bin/python3.13 /usr/bin/python3.12 python3; do \
	$$p -c 'import sys; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1 && { echo $$p; break; }; done)
HOST ?= 127.0.0.1
PORT ?= 8000
PYTEST_WORKERS ?= auto

LOWEST := .venv-lowest
LOWEST_STAMP := $(LOWEST)/.installed
# What `make test-lowest` runs (under two minutes): the compiler's oracles, reasons, planning,
# invalid input and bundles, the retrieval adapters (at the oldest langchain-core and
# llama-index-core they declare), the workbench views, and whole pages rendered with bad input.
LOWEST_TESTS ?= tests/compiler/test_compiler_oracles.py tests/compiler/test_compiler_reasons.py \
	tests/compiler/test_compiler_planning.py tests/compiler/test_compiler_invalid_input.py \
	tests/compiler/test_bundle.py tests/compiler/test_adapters_langchain.py \
	tests/compiler/test_adapters_llamaindex.py tests/workbench/test_workbench_views.py \
	tests/workbench/test_query_parameters.py

.PHONY: run serve test test-fast test-lowest lint bench bench-pages demo-compile dist dist-compiler clean

# manage.py defaults to the production profile; `make run` asks for the development one (pytest
# names its own, workbench.settings.test, in pyproject.toml).
run: export DJANGO_SETTINGS_MODULE = workbench.settings.dev

# The compiler is its own distribution (evidence-compiler, packaging/evidence-compiler), which
# the workbench requires at exactly its version; no index has it, so it is installed from the
# checkout in the same pip call, editable: both distributions run this checkout's code.
COMPILER_DIST := packaging/evidence-compiler
COMPILER_DIST_FILES := $(COMPILER_DIST)/pyproject.toml compiler/version.py

$(STAMP): pyproject.toml setup.py $(COMPILER_DIST_FILES)
	@test -n "$(PYTHON)" || { echo "Python 3.12 or newer is required (Django 6.1)"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e $(COMPILER_DIST) -e '.[dev,lint]'
	touch $(STAMP)

## run: migrate the embedded SQLite database, load the demo workspace, start the task worker
## (suite runs) beside the web server and serve on 127.0.0.1:8000; stopping one stops both
run: $(STAMP)
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py load_demo
	$(BIN)/python manage.py db_worker --no-reload --interval 0.5 & worker=$$!; \
	trap 'kill $$worker 2>/dev/null; wait $$worker 2>/dev/null' EXIT INT TERM; \
	$(BIN)/python manage.py runserver $(HOST):$(PORT)

# `make serve`: the production profile (DEBUG off, gunicorn, WhiteNoise, JSON logs) on a local
# SQLite file under var/, over plain HTTP on 127.0.0.1 — so the HTTPS-only settings are off.
SERVE_ENV = DJANGO_SETTINGS_MODULE=workbench.settings.production \
	DJANGO_SECRET_KEY="$$(cat var/serve-secret)" DATABASE_URL=sqlite:///$(CURDIR)/var/serve.sqlite3 \
	DJANGO_ALLOWED_HOSTS=$(HOST),localhost DJANGO_SECURE_SSL_REDIRECT=false \
	DJANGO_SECURE_COOKIES=false DJANGO_SECURE_HSTS_SECONDS=0

## serve: the production commands (docs/deployment.md) locally: migrate, collect static files,
## load the demo, then gunicorn and the task worker on 127.0.0.1:8000; stopping one stops both
serve: $(STAMP)
	mkdir -p var
	test -s var/serve-secret || $(BIN)/python -c 'import secrets; print(secrets.token_urlsafe(50))' > var/serve-secret
	$(SERVE_ENV) $(BIN)/django-admin migrate --noinput
	$(SERVE_ENV) $(BIN)/django-admin collectstatic --noinput --verbosity 0
	$(SERVE_ENV) $(BIN)/django-admin load_demo
	$(SERVE_ENV) $(BIN)/django-admin db_worker --no-reload & worker=$$!; \
	trap 'kill $$worker 2>/dev/null; wait $$worker 2>/dev/null' EXIT INT TERM; \
	$(SERVE_ENV) $(BIN)/gunicorn workbench.wsgi --bind $(HOST):$(PORT) --workers 2

## test: the whole suite, in parallel (browser tests run when /usr/bin/chromium exists)
test: $(STAMP)
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) $(PYTEST_ARGS)

## test-fast: the suite without the browser tests
test-fast: $(STAMP)
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) -m "not browser" $(PYTEST_ARGS)

# Every direct dependency at exactly the lower bound pyproject.toml declares, in its own venv.
# (evidence-compiler is not in that list: it comes from the checkout, as in the dev install.)
$(LOWEST_STAMP): pyproject.toml setup.py .ci/lowest_requirements.py $(COMPILER_DIST_FILES)
	@test -n "$(PYTHON)" || { echo "Python 3.12 or newer is required (Django 6.1)"; exit 1; }
	test -x $(LOWEST)/bin/python || $(PYTHON) -m venv $(LOWEST)
	$(LOWEST)/bin/python .ci/lowest_requirements.py > $(LOWEST)/requirements.txt
	$(LOWEST)/bin/python -m pip install --quiet --upgrade pip
	$(LOWEST)/bin/python -m pip install --quiet --only-binary=:all: -r $(LOWEST)/requirements.txt
	$(LOWEST)/bin/python -m pip install --quiet --no-deps -e $(COMPILER_DIST) -e .
	touch $(LOWEST_STAMP)

## test-lowest: a representative part of the suite against those lowest versions
test-lowest: $(LOWEST_STAMP)
	$(LOWEST)/bin/python -m pip check
	$(LOWEST)/bin/python -m pytest -n $(PYTEST_WORKERS) -m "not browser" -p no:cacheprovider $(LOWEST_TESTS)

## lint: ruff (check and format), the layers contract (import-linter) and mypy on every package
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python bench/compile_scale.py
	$(BIN)/python bench/sweep.py

## bench-pages: each heavy page, one client and eight, against the cheapest signed-in page, under
## gunicorn with the production profile (50 and 2,000 scenarios; bench/web_pages.py --help)
bench-pages: $(STAMP)
	$(BIN)/python bench/web_pages.py --scenarios 50 2000

## dist: the two wheels a deployment installs, evidence-compiler's and the workbench's, in dist/
dist: $(STAMP)
	$(BIN)/python -m pip wheel --quiet --no-deps -w dist $(COMPILER_DIST) .
	ls dist/evidence_compiler-*.whl dist/evidence_workbench-*.whl

## dist-compiler: the standalone evidence-compiler wheel and sdist (compiler, compiler_trust,
## compiler_tools) in dist/
dist-compiler: $(STAMP)
	$(BIN)/python -m build --quiet --outdir dist $(COMPILER_DIST)
	ls dist/evidence_compiler-*

demo-compile: $(STAMP)
	$(BIN)/python -m compiler_tools compile examples/atlas.json

clean:
	rm -rf $(VENV) $(LOWEST) .pytest_cache dist
