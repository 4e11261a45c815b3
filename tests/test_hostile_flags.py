"""Hostile values in flags end in a clear outcome, never a traceback: a subnormal price (the
cost picture's ticks), a dotted key holding a digit `int` cannot read (key lookup)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from llmeval.cli.main import main
from tests.support.synthetic import generation, write_jsonl


@pytest.mark.parametrize("price", ["1e-321", "5e-324", "1e-12", "999999"])
def test_a_price_of_any_size_draws_the_cost_picture(price: str, tmp_path: Path) -> None:
    """`--price-out 1e-321` crashed the cost picture's ticks (a span of subnormal floats: a
    tick step of 10**-324 is 0); tiny costs had ticks that all read 0."""
    usage = {"prompt_tokens": 80, "completion_tokens": 20_000}
    rows = [generation(f"p{i}", 0, "7", f"\\boxed{{{7 + i % 2}}}", usage=usage) for i in range(4)]
    path = write_jsonl(tmp_path / "aime24.jsonl", rows)
    out = tmp_path / "r.html"
    argv = ["report", str(path), "-o", str(out), "--no-progress", "--no-compress"]
    assert main([*argv, "--price-in", "0", "--price-out", price]) == 0
    page = out.read_text(encoding="utf-8")
    picture = page[page.index("cost vs accuracy") :]
    picture = picture[: picture.index("</svg>")]
    ticks = re.findall(r'class="tick"[^>]*>([^<]*)<', picture)
    cost_ticks = ticks[ticks.index("1") + 1 :]  # (after the accuracy axis: 0 ... 1)
    assert len(cost_ticks) >= 2 and len(set(cost_ticks)) == len(cost_ticks), cost_ticks


@pytest.mark.parametrize("digit", ["²", "①", "٣"])
def test_a_dotted_key_with_a_digit_of_another_script_is_a_missing_field(
    digit: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--response-key resps.0.²` was a ValueError traceback (str.isdigit holds for '²', int()
    cannot read it): a key part that is no decimal index names no list item."""
    row = {"doc_id": 0, "doc": {"answer": "2"}, "resps": [["\\boxed{2}"]], "target": "2"}
    path = tmp_path / "aime24.jsonl"
    path.write_text(json.dumps(row) + "\n")
    assert main(["eval", str(path), "--no-progress", "--response-key", f"resps.0.{digit}"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert f"no field 'resps.0.{digit}' (--response-key)" in line
