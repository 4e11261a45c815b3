# llmeval: the two set-up commands for a new machine are `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: install demo test test-fast test-vllm lint format stress bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

## The main job end to end on its default.
demo: $(STAMP)
	bash scripts/demo.sh

## Every test that runs on this machine (lint included); vLLM tests excluded.
test: $(STAMP)
	$(PY) -m ruff check llmeval tests bench scripts
	$(PY) -m pytest -m "not vllm"

test-fast: $(STAMP)
	$(PY) -m pytest -m "not vllm and not integration and not slow" -x -q

test-vllm: $(STAMP)
	$(PY) -m pytest -m vllm

lint: $(STAMP)
	$(PY) -m ruff check llmeval tests bench scripts
	$(PY) -m ruff format --check llmeval tests bench scripts

format: $(STAMP)
	$(PY) -m ruff format llmeval tests bench scripts
	$(PY) -m ruff check --fix llmeval tests bench scripts

stress: $(STAMP)
	@echo "no stress scripts yet"

## Every benchmark (several minutes; figures only, never part of make test).
bench: $(STAMP)
	@for f in bench/bench_*.py; do echo "== $$f"; $(PY) $$f || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
