"""`python -m llmeval.inference.online --input_file ... --output_file ...`: runs `llmeval infer`.

The upstream tool's entry point; its flag spellings are aliases of `llmeval infer`'s flags.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from llmeval.cli.main import main as cli_main


def main(argv: Sequence[str] | None = None) -> int:
    """Forward the arguments to `llmeval infer`."""
    return cli_main(["infer", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
