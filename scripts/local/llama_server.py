"""llama.cpp's `llama-server` serving one GGUF model on loopback (tests, the demo, the scripts).

Runs the binary directly (never a wrapper that would leave it running when killed). One thread
and `--no-repack` by default: see `LlamaServer`.
`python -m scripts.local.llama_server` resolves binary and model, then execs the server.
"""

from __future__ import annotations

import os
from pathlib import Path

from scripts.local.server_process import ServerProcess


class LlamaServer(ServerProcess):
    """One llama-server process serving one model (`with LlamaServer(...) as srv: srv.base_url`).

    `threads=1`: llama.cpp's worker threads spin at barriers, so two threads on a busy 2-core
    machine ran 8x slower than one. `--no-repack`: on CPUs that report AMX the AMX matmul of
    quantized models (SmolLM2's Q4_1) crashed with SIGSEGV here; it disables that path.
    """

    def __init__(
        self,
        binary: str | Path,
        model: str | Path,
        *,
        alias: str | None = None,
        parallel: int = 4,
        ctx_per_slot: int = 4096,
        threads: int | None = None,
        extra_args: tuple[str, ...] = (),
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.binary, self.model = Path(binary), Path(model)
        self.alias = alias or self.model.stem
        self.parallel, self.ctx_per_slot = parallel, ctx_per_slot
        self.threads = threads or int(os.environ.get("LLMEVAL_LLAMA_THREADS", "1"))
        self.extra_args = extra_args

    def command(self) -> list[str]:
        """The command line that starts the server."""
        return [
            str(self.binary),
            *("-m", str(self.model), "--alias", self.alias),
            *("--host", self.host, "--port", str(self.port)),
            *("--parallel", str(self.parallel), "-c", str(self.parallel * self.ctx_per_slot)),
            *("--threads", str(self.threads), "--no-webui", "--no-repack"),
            *self.extra_args,
        ]


def main(argv: list[str] | None = None) -> int:
    """Resolve the binary and model, then exec llama-server in this process (for scripts)."""
    import argparse

    from scripts.local.llama_build import ensure_llama_server, find_llama_server
    from scripts.local.smollm import SMOLLM2_FILE, SMOLLM2_NAME, ensure_smollm2, find_smollm2

    parser = argparse.ArgumentParser(prog="python -m scripts.local.llama_server")
    parser.add_argument("--model", help="a GGUF file (default: SmolLM2-135M-Instruct)")
    parser.add_argument("--alias", help="the served model name (default: the file's stem)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: a free port")
    parser.add_argument("--parallel", type=int, default=4, help="concurrent slots")
    parser.add_argument("--ctx-per-slot", type=int, default=4096)
    parser.add_argument("--threads", type=int, help="default: $LLMEVAL_LLAMA_THREADS or 1")
    parser.add_argument("--dry-run", action="store_true", help="print the command, do not run")
    args, extra = parser.parse_known_args(argv)
    if args.model:
        model, alias = Path(args.model), args.alias
    else:
        found = (find_smollm2() or Path(SMOLLM2_FILE)) if args.dry_run else ensure_smollm2()
        model, alias = found, args.alias or SMOLLM2_NAME
    dry = args.dry_run
    binary = (find_llama_server() or Path("llama-server")) if dry else ensure_llama_server()
    server = LlamaServer(
        binary, model, alias=alias, port=args.port or None, host=args.host,
        parallel=args.parallel, ctx_per_slot=args.ctx_per_slot, threads=args.threads,
        extra_args=tuple(extra),
    )  # fmt: skip
    cmd = server.command()
    print(" ".join(cmd), flush=True)
    if not args.dry_run:
        os.execv(cmd[0], cmd)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
