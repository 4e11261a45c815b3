#!/usr/bin/env bash
# Score a folder of generations: `llmeval eval` over its <task>.jsonl files, JSON result beside them.
#
# Usage: scripts/get_scores.sh [OUTPUT_DIR]          (default: $OUTPUT_DIR)
# Prints the score table and writes OUTPUT_DIR/scores.json. Verdicts are cached beside each file,
# so a second call (or one after adding samples) verifies only what is new. A run written in
# shards (<task>.shards/K-of-N.jsonl, beside or instead of <task>.jsonl) is scored as one run.
#
# Environment (defaults in brackets):
#   OUTPUT_DIR    the folder run_infer.sh wrote                                        [required]
#   TASKS         only these tasks' files (space-separated)             [every <task>.jsonl]
#   RESULT_JSON   where the JSON result goes                          [OUTPUT_DIR/scores.json]
#   WORKERS       verification processes                                        [all cores]
#   TIMEOUT       seconds per sample before it counts as a timeout                      [20]
#   EXTRA_ARGS    more `llmeval eval` flags (e.g. --export-verdicts FILE)
#   REQUIRE_COMPLETE=1  exit 6 when any run is incomplete (eval --require-complete), after
#                 printing the table and writing the JSON result: partial figures are not final
#   LLMEVAL       the llmeval command  [llmeval on PATH, else .venv's, else python3's; said which]
#   DRY_RUN=1     print the command, run nothing
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
case "${1:-}" in -h | --help) usage; exit 0 ;; esac
die() { echo "get_scores.sh: error: $*" >&2; exit 2; }
source "$(dirname "$0")/lib.sh"

OUTPUT_DIR=${1:-${OUTPUT_DIR:-}}
[[ -n "$OUTPUT_DIR" ]] || die "give the output folder (argument or OUTPUT_DIR); see --help"
[[ -d "$OUTPUT_DIR" ]] || die "no folder $OUTPUT_DIR"
RESULT_JSON=${RESULT_JSON:-$OUTPUT_DIR/scores.json}
read -r -a EXTRA <<<"${EXTRA_ARGS:-}"
find_llmeval get_scores.sh

# Generation files only: not verdict caches or exports that live beside them.
files=()
if [[ -n "${TASKS:-}" ]]; then
  read -r -a task_list <<<"$TASKS"
  for task in "${task_list[@]}"; do
    [[ -f "$OUTPUT_DIR/$task.jsonl" || -d "$OUTPUT_DIR/$task.shards" ]] ||
      die "no file $OUTPUT_DIR/$task.jsonl (nor shards in $OUTPUT_DIR/$task.shards)"
    [[ -f "$OUTPUT_DIR/$task.jsonl" ]] && files+=("$OUTPUT_DIR/$task.jsonl")
    [[ -d "$OUTPUT_DIR/$task.shards" ]] && files+=("$OUTPUT_DIR/$task.shards")
  done
else
  for f in "$OUTPUT_DIR"/*.jsonl "$OUTPUT_DIR"/*.shards; do
    case "$f" in *.verdicts.jsonl | *.verdicts.export.jsonl) continue ;; esac
    [[ -f "$f" || -d "$f" ]] && files+=("$f")
  done
fi
((${#files[@]} > 0)) || die "no generation files (*.jsonl) in $OUTPUT_DIR"

cmd=("${LLMEVAL_CMD[@]}" eval "${files[@]}" --result-json "$RESULT_JSON")
[[ -n "${WORKERS:-}" ]] && cmd+=(--workers "$WORKERS")
[[ -n "${TIMEOUT:-}" ]] && cmd+=(--timeout "$TIMEOUT")
[[ "${REQUIRE_COMPLETE:-0}" == 1 ]] && cmd+=(--require-complete)
cmd+=("${EXTRA[@]}")
if [[ "${DRY_RUN:-0}" == 1 ]]; then
  printf '%q ' "${cmd[@]}" | sed 's/ $//' | redact
  echo
  exit 0
fi
rc=0
"${cmd[@]}" || rc=$?
((rc == 0 || rc == 6)) && echo "get_scores.sh: wrote $RESULT_JSON" >&2
exit "$rc"
