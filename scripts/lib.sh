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

# Copies stdin to stdout with the user:password@ of every URL replaced by ***@, and the value
# of every --api-key (--api_key, --judge-api-key, an abbreviation, `=VALUE` too) by ***.
redact() {
  sed -uE -e 's#(://)[^/@[:space:]]+@#\1***@#g' \
    -e 's#(--(judge-)?api[-_a-z]*)([ =])([^ \\]|\\.)+#\1\3***#g'
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
