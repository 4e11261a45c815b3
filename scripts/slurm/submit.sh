#!/usr/bin/env bash
# Submit an llmeval run to Slurm: an array of SHARDS tasks, each starting its own server on its
# node and asking for its shard of every task (infer_array.sbatch), then a scoring job that runs
# once they all ended (score.sbatch, --dependency=afterany). Adapt both files' #SBATCH lines.
#
# Usage: MODEL=/models/Qwen3-8B SHARDS=8 scripts/slurm/submit.sh
# A task that fails or runs out of time leaves its finished samples; submit again (any SHARDS)
# and only the missing samples are asked for. Scores and report: OUTPUT_DIR/scores.json and
# OUTPUT_DIR/report.html.
#
# Environment (defaults in brackets); every variable is passed on to the jobs, so the settings
# of model_server.sh (ENGINE, TP, DP, MAX_MODEL_LEN, GPU_MEM, PYTHON, SERVED_NAME, ...) and of
# run_infer.sh (TASKS, N_SAMPLES, MAX_TOKENS, REASONING_EFFORT, THINKING_BUDGET, MAX_WORKERS,
# LLMEVAL, ...) apply to every task:
#   MODEL         the model the servers load (path or hub name)                     [required]
#   SHARDS        array tasks: the shards of the run, one server each                    [4]
#   OUTPUT_DIR    where every task writes: a folder all nodes share [output/<MODEL name> here]
#                 (the name as run_infer.sh makes it: MODEL's last part, other characters than
#                 letters, digits, '.', '_', '-' as '_', so that it stays inside output/)
#   SERVER_ARGS   model_server.sh's EXTRA_ARGS (e.g. --reasoning-parser deepseek_r1)
#   INFER_ARGS    run_infer.sh's EXTRA_ARGS (llmeval infer flags)
#   SBATCH_ARGS   more sbatch flags for both jobs (e.g. --partition gpu --account lab)
#   DRY_RUN=1     print the sbatch commands and what each array task would run; submit nothing
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
case "${1:-}" in -h | --help) usage; exit 0 ;; esac
die() { echo "submit.sh: error: $*" >&2; exit 2; }

HERE=$(cd "$(dirname "$0")" && pwd)
export LLMEVAL_ROOT=${LLMEVAL_ROOT:-$(cd "$HERE/../.." && pwd)}
source "$HERE/../lib.sh" # safe_name: run_infer.sh's rule for a folder named after the model
[[ -n "${MODEL:-}" ]] || die "set MODEL, the model the servers load"
SHARDS=${SHARDS:-4}
# decimal digits, as --shard K/N reads N (08 is 8 and 010 is 10, never octal)
[[ "$SHARDS" =~ ^[0-9]{1,9}$ ]] && ((10#$SHARDS >= 1)) ||
  die "SHARDS must be a whole number from 1 to 999999999 in decimal digits, got '$SHARDS'"
SHARDS=$((10#$SHARDS))
OUTPUT_DIR=${OUTPUT_DIR:-output/$(safe_name "$MODEL")} # (MODEL=.. cannot name the folder here)
[[ "$OUTPUT_DIR" == /* ]] || OUTPUT_DIR=$PWD/$OUTPUT_DIR # the jobs may start elsewhere
export OUTPUT_DIR MODEL
read -r -a SBATCH <<<"${SBATCH_ARGS:-}"
array=(sbatch --parsable --array="0-$((SHARDS - 1))" --export=ALL "${SBATCH[@]}" "$HERE/infer_array.sbatch")
score=(sbatch --parsable --export=ALL "${SBATCH[@]}" "$HERE/score.sbatch")

if [[ "${DRY_RUN:-0}" == 1 ]]; then
  printf '%q ' "${array[@]}" | sed 's/ $//'
  echo
  printf '%q ' "${score[@]:0:2}" "--dependency=afterany:ARRAY_JOB_ID" "${score[@]:2}" | sed 's/ $//'
  echo
  for ((k = 0; k < SHARDS; k++)); do
    SLURM_ARRAY_TASK_ID=$k SLURM_ARRAY_TASK_COUNT=$SHARDS SLURM_ARRAY_TASK_MIN=0 \
      SLURM_ARRAY_JOB_ID=ARRAY_JOB_ID DRY_RUN=1 bash "$HERE/infer_array.sbatch"
  done
  echo "# then, once every array task ended: the scores and the report"
  DRY_RUN=1 bash "$HERE/score.sbatch"
  exit 0
fi
command -v sbatch >/dev/null || die "no sbatch on PATH: run this where Slurm jobs are submitted (DRY_RUN=1 shows what it would submit)"
mkdir -p "$OUTPUT_DIR/logs"
job=$("${array[@]}")
job=${job%%;*} # (--parsable: "id" or "id;cluster")
scored=$("${score[@]:0:2}" "--dependency=afterany:$job" "${score[@]:2}")
echo "submit.sh: array job $job ($SHARDS tasks) writes $OUTPUT_DIR; scoring job ${scored%%;*} runs once they all ended" >&2
