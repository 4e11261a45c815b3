# Sourced by run_infer.sh and get_scores.sh: which llmeval to run, and URLs without passwords.

# Sets LLMEVAL_CMD: $LLMEVAL, else `llmeval` on PATH, else the repository's .venv, else a python3
# that can import llmeval; says which on stderr (checking that it runs), or stops with exit 2.
find_llmeval() {
  local me=$1 root py out
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  if [[ -n "${LLMEVAL:-}" ]]; then read -r -a LLMEVAL_CMD <<<"$LLMEVAL"
  elif command -v llmeval >/dev/null; then LLMEVAL_CMD=("$(command -v llmeval)")
  elif [[ -x "$root/.venv/bin/python" ]]; then LLMEVAL_CMD=("$root/.venv/bin/python" -m llmeval)
  elif py=$(command -v python3) && "$py" -c 'import llmeval' 2>/dev/null; then
    LLMEVAL_CMD=("$py" -m llmeval)
  else
    echo "$me: error: no llmeval: not on PATH, no $root/.venv (make install), and python3" \
      "(${py:-not found}) cannot import it; activate its environment or set LLMEVAL" >&2
    exit 2
  fi
  [[ "${DRY_RUN:-0}" == 1 ]] && return
  if ! out=$("${LLMEVAL_CMD[@]}" --version 2>&1); then
    echo "$me: error: ${LLMEVAL_CMD[*]} does not run: $(tail -n 1 <<<"$out")" >&2
    exit 2
  fi
  echo "$me: using ${LLMEVAL_CMD[*]} ($out)" >&2
}

# Copies stdin to stdout with the user:password@ of every URL replaced by ***@, the value of
# every --api-key (--api_key, --judge-api-key, an abbreviation, `=VALUE` too) and every bearer
# token (`Bearer KEY`) by ***, and every key of $OPENAI_API_KEY, $LLMEVAL_JUDGE_API_KEY and
# $REDACT_KEYS (space-separated; 6 characters or more) by *** wherever it appears: a gateway may
# quote the key back in an error.
redact() {
  local keys key args=(-e 's#(://)[^/@[:space:]]+@#\1***@#g'
    -e 's#(--(judge-)?api[-_a-z]*)([ =])([^ \\]|\\.)+#\1\3***#g'
    -e 's#([Bb][Ee][Aa][Rr][Ee][Rr])([[:space:]]+)[^[:space:]"'"'"',;]+#\1\2***#g')
  read -r -a keys <<<"${OPENAI_API_KEY:-} ${LLMEVAL_JUDGE_API_KEY:-} ${REDACT_KEYS:-}"
  for key in "${keys[@]}"; do # each a literal: the pattern's special characters escaped
    ((${#key} >= 6)) && args+=(-e "s#$(sed -E 's/[][\\.*^$#&|+?(){}/]/\\&/g' <<<"$key")#***#g")
  done
  sed -uE "${args[@]}"
}

# Adds the values of the --api-key / --judge-api-key flags among "$@" (llmeval flags from
# EXTRA_ARGS) to REDACT_KEYS, for `redact`.
hide_key_flags() {
  local take=0 arg
  for arg in "$@"; do
    if ((take)); then REDACT_KEYS="${REDACT_KEYS:-} $arg"; take=0; continue; fi
    case "$arg" in
      --api*=* | --judge-api*=*) REDACT_KEYS="${REDACT_KEYS:-} ${arg#*=}" ;;
      --api* | --judge-api*) take=1 ;;
    esac
  done
  export REDACT_KEYS
}

# A folder name from a model name a server chose: its last part, characters other than
# letters, digits, '.', '_' and '-' as '_', never '', '.' or '..' (nor hidden).
safe_name() {
  local name=${1%/}
  name=${name##*/}
  name=${name//[^A-Za-z0-9._-]/_}
  [[ "$name" == .* ]] && name=_${name#.}
  printf '%s\n' "${name:-model}"
}
