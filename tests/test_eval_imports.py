"""Import rules of the eval stage, checked on the source: eval never imports infer, and each
third-party library has one home (math-verify and sympy in verify.py, rich in report.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import llmeval

PACKAGE = Path(llmeval.__file__).parent
EVAL_MODULES = [
    "eval_files",
    "eval_input",
    "sample_cache",
    "evaluate",
    "extract",
    "metrics",
    "report",
    "scoring",
    "verdict_cache",
    "verify",
    "verify_pool",
    "verify_tasks",
    "verify_preload",
    "verify_shortcut",
    "commands/eval",
]
HOMES = {
    "math_verify": {"verify", "verify_shortcut"},
    "latex2sympy2_extended": {"verify", "verify_shortcut"},
}
HOMES |= {"sympy": {"verify", "verify_shortcut"}}
HOMES |= {"rich": {"report"}, "httpx": set()}


def _imports(module: str) -> set[str]:
    tree = ast.parse((PACKAGE / f"{module}.py").read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_eval_never_imports_infer_or_the_client() -> None:
    for module in EVAL_MODULES:
        bad = {n for n in _imports(module) if n.startswith(("llmeval.infer", "llmeval.client"))}
        assert not bad, f"{module} imports {bad}"


def test_third_party_libraries_have_one_home() -> None:
    for module in EVAL_MODULES:
        for name in _imports(module):
            top = name.split(".")[0]
            if top in HOMES:
                assert module in HOMES[top], f"{module} imports {name}"
