#!/usr/bin/env bash
# Sample every task with the recommended settings: `llmeval infer` per task, resumable.
#
# Usage: scripts/run_infer.sh [TASK...]      (tasks also from TASKS; rerun to resume)
# Writes OUTPUT_DIR/<task>.jsonl (+ .spec.json) and a log per task in OUTPUT_DIR/logs/<task>.log;
# a shard (SHARD=K/N) writes OUTPUT_DIR/<task>.shards/K-of-N.jsonl and logs/<task>.K-of-N.log.
# A rerun asks only for the samples still missing; a larger N adds samples without redoing any.
#
# Environment (defaults in brackets):
#   BASE_URLS     one or more server base URLs, space- or comma-separated; requests go to
#                 the least-loaded one                             [http://127.0.0.1:8000/v1]
#   MODEL         the served model name                [the only model the first server lists]
#   TASKS         task names                                        [aime24 aime25 math500]
#   INPUT_DIR     where <task>.jsonl problem files are                   [the repository's data/]
#   OUTPUT_DIR    where generations go                                [output/<MODEL name>]
#   N_SAMPLES     samples per problem for every task (overrides the two below)
#   N_SMALL       samples per problem for the 30-40-problem sets (aime*, hmmt25, amc23)  [64]
#   N_LARGE       samples per problem for the other tasks (math500, ...)                 [8]
#   TEMPERATURE [0.6]  TOP_P [0.95]  MAX_TOKENS [32768]  SEED [0]
#   REASONING_EFFORT  sent as reasoning_effort (low, medium, high: gpt-oss on vLLM)     [none]
#   THINKING_BUDGET   thinking tokens, sent as vLLM's thinking_token_budget (its server needs
#                 --reasoning-parser)                                                    [none]
#   TOOLS         python: the model may run Python in a sandbox (docs/tools.md); such runs
#                 go to OUTPUT_DIR/tools-python/ (a run without tools is another run)   [none]
#   TOOL_PROTOCOL native (OpenAI function calling) or inline (```python blocks)        [native]
#   MAX_TOOL_CALLS [8]  TOOL_TIMEOUT CPU seconds per call [10]  SANDBOX_CMD a wrapper  [none]
#   SHARD         K/N: only shard K of N of each task, for one node of a cluster (shards of
#                 any N make one run: scripts/slurm/); auto: the Slurm array task's; none: the
#                 whole task                [llmeval's default: auto inside a Slurm array, else none]
#   MAX_WORKERS   requests in flight (all servers together)                            [128]
#   STREAM        1: stream (no read timeout on 32k-token outputs), 0: --no-stream        [1]
#   SYSTEM_PROMPT a system prompt (none by default)
#   EXTRA_BODY    a JSON object merged into every request, passed whole (spaces and quotes kept),
#                 e.g. '{"chat_template_kwargs": {"enable_thinking": false}}'
#   EXTRA_ARGS    more `llmeval infer` flags, split at spaces (e.g. --top-k 20 --timeout 3600)
#   WAIT          seconds to wait for the servers to answer (/health or /v1/models) before
#                 starting, as a Slurm job does while vLLM loads its weights              [0]
#   LLMEVAL       the llmeval command  [llmeval on PATH, else .venv's, else python3's; said which]
#   DRY_RUN=1     print the commands, run nothing
# Passwords in BASE_URLS (http://user:password@host), an --api-key in EXTRA_ARGS, the keys of
# OPENAI_API_KEY and LLMEVAL_JUDGE_API_KEY and any `Bearer <token>` (a server may quote the key
# back) are written as *** in messages, logs and DRY_RUN commands. A model name the server chose is made a safe
# folder name (its last part; '..', '/' and other characters cannot leave output/).
# Exit code: 0 when every task is complete, else the first failing task's code (3: rerun).
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
case "${1:-}" in -h | --help) usage; exit 0 ;; esac
die() { echo "run_infer.sh: error: $*" | redact >&2; exit 2; }
source "$(dirname "$0")/lib.sh"

BASE_URLS=${BASE_URLS:-http://127.0.0.1:8000/v1}
read -r -a URLS <<<"${BASE_URLS//,/ }"
((${#URLS[@]} > 0)) || die "BASE_URLS is empty"
if (($# > 0)); then TASK_LIST=("$@"); else read -r -a TASK_LIST <<<"${TASKS:-aime24 aime25 math500}"; fi
INPUT_DIR=${INPUT_DIR:-$(cd "$(dirname "$0")/.." && pwd)/data}
TEMPERATURE=${TEMPERATURE:-0.6}
TOP_P=${TOP_P:-0.95}
MAX_TOKENS=${MAX_TOKENS:-32768}
SEED=${SEED:-0}
MAX_WORKERS=${MAX_WORKERS:-128}
N_SMALL=${N_SMALL:-64}
N_LARGE=${N_LARGE:-8}
read -r -a EXTRA <<<"${EXTRA_ARGS:-}"
hide_key_flags "${EXTRA[@]}"
for v in N_SMALL N_LARGE MAX_TOKENS MAX_WORKERS SEED ${N_SAMPLES:+N_SAMPLES} \
  ${THINKING_BUDGET:+THINKING_BUDGET} ${WAIT:+WAIT} ${MAX_TOOL_CALLS:+MAX_TOOL_CALLS}; do
  [[ "${!v}" =~ ^[0-9]+$ ]] || die "$v must be a whole number, got '${!v}'"
done

find_llmeval run_infer.sh
if [[ "${DRY_RUN:-0}" != 1 ]]; then  # every problem file is there before any server is asked
  for task in "${TASK_LIST[@]}"; do
    [[ -f "$INPUT_DIR/$task.jsonl" ]] || die "no problem file $INPUT_DIR/$task.jsonl for task '$task'"
  done
fi

# Whether a server answers at a base URL: its /health (vLLM, SGLang, llama.cpp), else /models.
answers() {
  local base=${1%/}
  curl -fsS --max-time 5 -o /dev/null "${base%/v1}/health" 2>/dev/null ||
    curl -fsS --max-time 5 -o /dev/null "$base/models" 2>/dev/null
}

# Every server of BASE_URLS answering, waiting up to WAIT seconds; none: exit 4 saying so.
wait_for_servers() {
  local start=$SECONDS limit=${WAIT:-0} url silent=() said=-1
  while :; do
    silent=()
    for url in "${URLS[@]}"; do answers "$url" || silent+=("$url"); done
    ((${#silent[@]} == 0)) && return 0
    ((SECONDS - start >= limit)) && break
    if (((SECONDS - start) / 30 != said)); then
      said=$(((SECONDS - start) / 30))
      echo "run_infer.sh: waiting for ${silent[*]} to answer ($((SECONDS - start)) of $limit s)" | redact >&2
    fi
    sleep 2
  done
  if ((${#silent[@]} == ${#URLS[@]})); then
    echo "run_infer.sh: error: no server answers at BASE_URLS (${URLS[*]}): start one" \
      "(scripts/model_server.sh), check the URLs, or set WAIT=SECONDS to wait for it" | redact >&2
    exit 4
  fi
  echo "run_infer.sh: warning: no answer from ${silent[*]}: llmeval sets such servers aside" | redact >&2
}

MODEL=${MODEL:-}
if [[ "${DRY_RUN:-0}" != 1 ]]; then
  wait_for_servers
fi
if [[ -z "$MODEL" && "${DRY_RUN:-0}" != 1 ]]; then
  # Ask the first server, as `llmeval infer` would, so the output folder can be named.
  MODEL=$(curl -fsS --max-time 10 "${URLS[0]%/}/models" 2>/dev/null | python3 -c '
import json, sys
try:
    ids = [m["id"] for m in json.load(sys.stdin)["data"]]
except Exception:
    sys.exit(1)
print(ids[0] if len(ids) == 1 else "")') || die "${URLS[0]%/}/models lists no models as JSON: set MODEL"
  [[ -n "$MODEL" ]] || die "${URLS[0]} serves several models: set MODEL"
fi
OUTPUT_DIR=${OUTPUT_DIR:-output/$(safe_name "${MODEL:-MODEL}")}
[[ -n "${TOOLS:-}" ]] && OUTPUT_DIR=$OUTPUT_DIR/tools-$(safe_name "$TOOLS")

# A shard logs apart (SHARD=K/N, or the Slurm array task llmeval takes its shard from).
LOG_SUFFIX="" SHARD_NOTE=""
if [[ "${SHARD:-}" =~ ^[0-9]+/[0-9]+$ ]]; then
  LOG_SUFFIX=".${SHARD%/*}-of-${SHARD#*/}" SHARD_NOTE=", shard $SHARD"
elif [[ "${SHARD:-}" != none && -n "${SLURM_ARRAY_TASK_ID:-}" ]]; then
  LOG_SUFFIX=".array-task-$SLURM_ARRAY_TASK_ID" SHARD_NOTE=", Slurm array task $SLURM_ARRAY_TASK_ID's shard"
fi

samples_for() {
  if [[ -n "${N_SAMPLES:-}" ]]; then echo "$N_SAMPLES"; return; fi
  case "$1" in aime* | hmmt* | amc*) echo "$N_SMALL" ;; *) echo "$N_LARGE" ;; esac
}

status=0
for task in "${TASK_LIST[@]}"; do
  input=$INPUT_DIR/$task.jsonl
  cmd=("${LLMEVAL_CMD[@]}" infer --input "$input" --output "$OUTPUT_DIR/$task.jsonl")
  for url in "${URLS[@]}"; do cmd+=(--base-url "$url"); done
  [[ -n "$MODEL" ]] && cmd+=(--model "$MODEL")
  cmd+=(--n-samples "$(samples_for "$task")" --temperature "$TEMPERATURE" --top-p "$TOP_P"
    --max-tokens "$MAX_TOKENS" --seed "$SEED" --max-workers "$MAX_WORKERS")
  [[ "${STREAM:-1}" == 0 ]] && cmd+=(--no-stream)
  [[ -n "${SYSTEM_PROMPT:-}" ]] && cmd+=(--system-prompt "$SYSTEM_PROMPT")
  [[ -n "${EXTRA_BODY:-}" ]] && cmd+=(--extra-body "$EXTRA_BODY")
  [[ -n "${REASONING_EFFORT:-}" ]] && cmd+=(--reasoning-effort "$REASONING_EFFORT")
  [[ -n "${THINKING_BUDGET:-}" ]] && cmd+=(--thinking-budget "$THINKING_BUDGET")
  if [[ -n "${TOOLS:-}" ]]; then
    cmd+=(--tools "$TOOLS" --tool-protocol "${TOOL_PROTOCOL:-native}")
    [[ -n "${MAX_TOOL_CALLS:-}" ]] && cmd+=(--max-tool-calls "$MAX_TOOL_CALLS")
    [[ -n "${TOOL_TIMEOUT:-}" ]] && cmd+=(--tool-timeout "$TOOL_TIMEOUT")
    [[ -n "${SANDBOX_CMD:-}" ]] && cmd+=(--sandbox-cmd "$SANDBOX_CMD")
  fi
  [[ -n "${SHARD:-}" ]] && cmd+=(--shard "$SHARD")
  cmd+=("${EXTRA[@]}")
  if [[ "${DRY_RUN:-0}" == 1 ]]; then
    printf '%q ' "${cmd[@]}" | sed 's/ $//' | redact
    echo
    continue
  fi
  mkdir -p "$OUTPUT_DIR/logs"
  log=$OUTPUT_DIR/logs/$task$LOG_SUFFIX.log  # one per shard: the shards run on several nodes
  echo "run_infer.sh: $task -> $OUTPUT_DIR/$task.jsonl$SHARD_NOTE (log: $log)" >&2
  printf '\n[%s] %s\n' "$(date -u +%FT%TZ)" "${cmd[*]}" | redact >>"$log"
  rc=0
  "${cmd[@]}" 2> >(redact | tee -a "$log" >&2) || rc=$?
  wait  # let tee flush the log
  if ((rc != 0)); then
    hint=""
    ((rc == 3 || rc == 4)) && hint=" (rerun to resume)"
    echo "run_infer.sh: $task ended with exit code $rc$hint" >&2
    ((rc == 130)) && exit 130
    ((status == 0)) && status=$rc
  fi
done
exit "$status"
