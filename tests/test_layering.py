"""The package's shape, checked on the source: which stage may import which, each third-party
library in one home, nothing shipped importing the test harness, and the size limits."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import llmeval

PACKAGE = Path(llmeval.__file__).parent
MODULES = sorted(PACKAGE.rglob("*.py"))

# Subpackage -> the llmeval subpackages it must never import.
FORBIDDEN = {
    "infer": {"evaluate", "verify", "report"},
    "evaluate": {"infer", "client", "report"},
    "verify": {"infer", "evaluate", "client", "report"},
    "client": {"infer", "evaluate", "verify", "report"},
    "report": {"infer", "client"},
    "judge": {"infer", "evaluate", "verify", "report"},
    "runs": {"infer", "evaluate", "verify", "client", "report", "judge", "cli"},
    "sandbox": {"infer", "evaluate", "verify", "report", "client", "judge", "cli", "inference"},
    "contests": {"infer", "client", "report", "judge"},  # reads with eval's readers, verifies
}
# Stage-neutral packages -> the only llmeval modules besides their own they may import.
ALLOWED = {
    "runs": {"records", "files", "jsonl", "errors", "sampling"},
    "sandbox": {"records", "jsonl", "transcripts", "errors", "files", "runs"},
}
# Third-party library -> the only subpackage that may import it.
HOMES = {
    "httpx": "client",
    "httpx_aiohttp": "client",
    "aiohttp": "client",
    "math_verify": "verify",
    "latex2sympy2_extended": "verify",
    "sympy": "verify",
}


def _rel(path: Path) -> str:
    return path.relative_to(PACKAGE).as_posix()


def _stage(path: Path) -> str:
    """The subpackage a module belongs to ('' at the top level)."""
    parts = path.relative_to(PACKAGE).parts
    return parts[0] if len(parts) > 1 else ""


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


@pytest.mark.parametrize("path", MODULES, ids=_rel)
def test_stages_import_only_what_they_may(path: Path) -> None:
    stage = _stage(path)
    for name in _imports(path):
        parts = name.split(".")
        assert parts[0] not in ("tests", "scripts", "bench"), f"{_rel(path)} imports {name}"
        home = HOMES.get(parts[0])
        assert home is None or stage == home, f"{_rel(path)} imports {name} (home: {home}/)"
        if parts[0] == "llmeval" and len(parts) > 1:
            assert parts[1] not in FORBIDDEN.get(stage, ()), f"{_rel(path)} imports {name}"
            allowed = ALLOWED.get(stage)
            assert allowed is None or parts[1] in allowed | {stage}, f"{_rel(path)} imports {name}"


def _long_functions(path: Path, limit: int) -> list[str]:
    tree = ast.parse(path.read_text())
    return [
        f"{_rel(path)}:{node.name}"
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and (node.end_lineno or 0) - node.lineno + 1 > limit
    ]


# Modules past 400 lines, each with the reason it still holds one concept (a review's answer).
LONG_MODULES: dict[str, str] = {}


def test_shape() -> None:
    """One concept per module, named in the first line of its docstring; a module past 400
    lines is questioned (listed in LONG_MODULES with why it still holds one concept); at most
    12 modules at the top level, at most 2 functions over 60 lines (the package's total size
    is a figure of `bench/bench_size.py`)."""
    for path in MODULES:
        doc = ast.get_docstring(ast.parse(path.read_text())) or ""
        assert doc.strip().splitlines()[0:1], f"{_rel(path)}: no docstring naming its concept"
    lines = {path: len(path.read_text().splitlines()) for path in MODULES}
    top = [
        p for p in MODULES if p.parent == PACKAGE and p.name not in ("__init__.py", "__main__.py")
    ]
    assert len(top) <= 12, f"{len(top)} modules at the top level"
    over = {_rel(p): n for p, n in lines.items() if n > 400 and _rel(p) not in LONG_MODULES}
    assert not over, f"modules over 400 lines, not reviewed: {over}"
    long = [name for path in MODULES for name in _long_functions(path, 60)]
    assert len(long) <= 2, f"functions over 60 lines: {long}"


def _module(path: Path) -> str:
    return ".".join(("llmeval", *path.relative_to(PACKAGE).with_suffix("").parts)).removesuffix(
        ".__init__"
    )


def test_no_import_cycles() -> None:
    """No module reaches itself through the llmeval modules it imports (imports made only for
    type checking count too)."""
    names = {_module(p): p for p in MODULES}
    graph: dict[str, set[str]] = {}
    for name, path in names.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module)
                found.update(f"{node.module}.{alias.name}" for alias in node.names)
        graph[name] = {m for m in found if m in names and m != name}
    for start in graph:
        seen, todo = set(), list(graph[start])
        while todo:
            name = todo.pop()
            assert name != start, f"{start} imports itself through {sorted(seen)}"
            if name not in seen:
                seen.add(name)
                todo.extend(graph[name])
