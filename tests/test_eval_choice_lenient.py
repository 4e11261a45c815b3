"""`llmeval eval --policy lenient` on a GPQA-Diamond file written as a small model writes it
(bare letters, bold letters, `Answer: B`, an option's text): the lenient policy reads them, so
its no-answer rate falls where the strict one stays; the figures are checked by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from llmeval.cli.main import main
from llmeval.tasks import DATA_DIR
from tests.support.synthetic import generation, write_jsonl

# gpqa_diamond/0: gold D, options (A) 10^-11 eV ... (D) 10^-4 eV
OUTPUTS = [
    ("D", "correct"),  # a bare letter
    ("**D**", "correct"),
    ("The lifetimes give an uncertainty.\n\n(D) 10^-4 eV", "correct"),
    ("D.", "correct"),
    ("\\boxed{10^-4 eV}", "correct"),  # the option's text (strict: wrong, not no answer)
    ("B", "incorrect"),
    ("Answer: D", "correct"),  # read by both policies
    ("I am not sure which one it is.", "no_answer"),
]


def _rows() -> list[dict[str, Any]]:
    first = json.loads((DATA_DIR / "gpqa_diamond.jsonl").open().readline())
    rows = []
    for idx, (gen, _) in enumerate(OUTPUTS):
        row = generation(first["id"], idx, first["answer"], gen)
        row["prompt"] = first["prompt_llmeval"]
        rows.append(row)
    return rows


def _score(tmp_path: Path, policy: str) -> dict[str, Any]:
    path = tmp_path / "gpqa_diamond_smollm2.jsonl"
    if not path.exists():
        write_jsonl(path, _rows())
    result = tmp_path / f"{policy}.json"
    argv = ["eval", str(path), "--policy", policy, "--result-json", str(result), "--no-progress"]
    assert main([*argv, "--no-cache"]) == 0
    (task,) = json.loads(result.read_text())["tasks"]
    return task


def test_lenient_reads_the_letters_a_small_model_writes(tmp_path: Path) -> None:
    strict, lenient = _score(tmp_path, "strict"), _score(tmp_path, "lenient")
    n = len(OUTPUTS)
    # strict: only "Answer: D" is read (correct) and the boxed option text (wrong)
    assert strict["n_no_answer"] == n - 2 and strict["n_correct"] == 1
    assert lenient["n_no_answer"] == 1
    assert lenient["n_correct"] == sum(expected == "correct" for _, expected in OUTPUTS)
    assert lenient["accuracy"] == 6 / n and strict["accuracy"] == 1 / n
    assert strict["policies"] == lenient["policies"] == {"strict": 1 / n, "lenient": 6 / n}
