"""Generations built to hurt a verifier: huge numbers, deep nesting, megabyte outputs, thousands
of boxes, broken braces, odd characters, and Python payloads wherever an answer can stand.

Used by `bench/stress_hostile.py` and `tests/test_hostile.py`. Payloads try to create a file
in a marker folder; a run passes only if that folder stays empty.
"""

from __future__ import annotations

from pathlib import Path

# Expressions that are costly to evaluate, parse or compare.
HURT = [
    "9^{9^{9^{9^{9}}}}", "2^{2^{2^{2^{2^{2^{2}}}}}}", "10^{10^{10^{10}}}", "x^{x^{x^{x^{x}}}}",
    "e^{e^{e^{e^{e}}}}", "(10^{10})!", "100000!", "(10^{100})!!", "\\binom{10^{12}}{10^{6}}",
    "\\binom{10^{100}}{10^{50}}", "\\sum_{k=1}^{10^{100}} k", "\\prod_{k=1}^{10^{9}} k",
    "\\sqrt[1000000]{2}^{10^{9}}", "1" * 100_000, "0." + "9" * 100_000, "10^{-10^{10}}",
    "\\frac{1}{0}", "0^{0}", "\\infty - \\infty", "\\frac{" * 3000 + "1" + "}{2}" * 3000,
    "\\sqrt{" * 5000 + "2" + "}" * 5000, "{" * 100_000 + "1" + "}" * 100_000,
    "(" * 100_000 + "1" + ")" * 100_000, "\\left(" * 10_000 + "1" + "\\right)" * 10_000,
    "1+" * 500_000 + "1", "x" * 1_000_000, "\\begin{pmatrix}" + "1&" * 20_000 + "1\\end{pmatrix}",
    "\\int_0^{10^{10}} e^{x^{x}} dx", "\\lim_{n\\to\\infty} n^{n^{n}}", "(1,2" * 20_000 + ")",
    "\\{" + ",".join(str(i) for i in range(30_000)) + "\\}", "[" * 50_000 + "]" * 50_000,
    "\\ud800 \\x00", "\x00\x01\x02\x1b[31m\x7f\u202e42", "\ud800\udfff\ud800",
    "\\text{" + "a" * 200_000 + "}", "\\mathrm{" * 2000 + "x" + "}" * 2000,
]  # fmt: skip


# Markup that must stay text in the HTML report.
HTML = [
    "<script>document.title='pwned'</script>",
    "</script><img src=x onerror=\"document.title='pwned'\">",
    "<!--<script>--><svg onload=alert(1)>",
]


def payloads(marker: Path) -> list[str]:
    """Python that creates a file in `marker` if anything ever runs it."""
    m = [marker / f"p{i}" for i in range(12)]
    return [
        f"__import__('os').system('touch {m[0]}')",
        f'__import__("pathlib").Path("{m[1]}").touch()',
        f"eval(\"__import__('os').system('touch {m[2]}')\")",
        f"exec(\"import os; os.system('touch {m[3]}')\")",
        f"(lambda: __import__('os').system('touch {m[4]}'))()",
        f"open('{m[5]}', 'w').write('x')",
        f"getattr(__builtins__, 'exec')(\"open('{m[6]}','w')\")",
        f"1+__import__('os').system('touch {m[7]}')",
        f"\\text{{__import__('os').system('touch {m[8]}')}}",
        f"\\mathrm{{__import__('os').system('touch {m[9]}')}}",
        f"Symbol('x').__class__.__init__.__globals__['os'].system('touch {m[10]}')",
        f"[c for c in ().__class__.__base__.__subclasses__()][0]; open('{m[11]}','w')",
    ]


def _think(answer_part: str, reasoning: str = "Let me think about it.") -> str:
    return f"<think>\n{reasoning}\n</think>\n\n{answer_part}"


def math_rows(marker: Path, per_kind: int | None = None) -> list[dict]:
    """Generation rows of a math task: each hostile expression boxed (and unterminated,
    twice boxed, in an unfinished thought), megabyte texts, many boxes, and payloads
    in the box, after `</think>`, in the reasoning, in the reasoning field and in the gold."""
    texts: list[tuple[str, str]] = []  # (gold, gen)
    for expr in HURT[:per_kind]:
        texts.append(("42", _think(f"So $\\boxed{{{expr}}}$.")))
        texts.append(("\\frac{\\pi}{3}", _think(f"Thus \\fbox{{{expr}}} and done.")))
    for expr in HURT[: per_kind and per_kind // 2]:
        texts.append(("\\{1, 2\\}", f"<think>{expr} \\boxed{{{expr}}}"))  # never closed
    bulk = [
        _think("\\boxed{1}" * 20_000), _think("\\boxed{}" * 20_000), _think("\\boxedx" * 20_000),
        _think("\\boxed{" * 20_000), "\\boxed{" + "{" * 1000 + "7", "}" * 1000 + "\\boxed{5",
        _think("\\boxed{42}", "x" * 1_000_000), "a" * 1_000_000 + "\\boxed{42}",
        _think("Answer" + " " * 100_000 + "z"), _think("\\boxed{1" + " ." * 500_000 + "}"),
        _think("\\boxed{\ud800\ud800}"), "\x00" * 1000 + "\\boxed{\x00}", "</think>" * 50_000,
        "<think>" * 50_000 + "\\boxed{3}", _think("$" * 100_000 + "\\boxed{$$$}"),
    ]  # fmt: skip
    texts += [("42", g) for g in bulk[:per_kind]]
    texts += [("42", _think(f"{h} \\boxed{{{h}}}", h)) for h in HTML]
    rows = []
    for gold, gen in texts:
        rows.append({"answer": gold, "gen": gen})
    for code in payloads(marker)[:per_kind]:
        rows.append({"answer": "42", "gen": _think(f"$\\boxed{{{code}}}$")})
        rows.append({"answer": "42", "gen": _think(f"The answer is {code}")})
        rows.append({"answer": "42", "gen": _think("\\boxed{41}", f"\\boxed{{{code}}} {code}")})
        rows.append({"answer": "x+1", "gen": f"\\boxed{{{code}}}", "reasoning": code})
        rows.append({"answer": code, "gen": _think(f"\\boxed{{{code}}}")})  # gold too
        rows.append({"answer": code, "gen": _think("\\boxed{x^2+1}")})
    return [_row(i, r) for i, r in enumerate(rows)]


def choice_rows(marker: Path, per_kind: int | None = None) -> list[dict]:
    """GPQA-style rows: payloads and hostile text where a letter is expected (and as gold)."""
    rows = []
    for code in payloads(marker)[:per_kind]:
        rows.append({"answer": "C", "gen": _think(f"\\boxed{{{code}}}")})
        rows.append({"answer": "C", "gen": _think(f"Answer: {code}")})
        rows.append({"answer": code, "gen": _think("\\boxed{C}")})
    for expr in HURT[: per_kind and per_kind // 2]:
        rows.append({"answer": "A", "gen": _think(f"\\boxed{{\\text{{{expr}}}}}")})
    rows.append({"answer": "B", "gen": _think("Answer: " + " or ".join("ABCD" * 20_000))})
    rows.append({"answer": "B", "gen": _think("answer is " * 100_000)})
    return [_row(i, r) for i, r in enumerate(rows)]


def _row(i: int, row: dict) -> dict:
    usage = {"completion_tokens": len(row["gen"]) // 4}
    return {"problem_id": f"h{i}", "sample_idx": 0, "prompt": "Solve it.", **row,
            "finish_reason": "stop", "usage": usage}  # fmt: skip
