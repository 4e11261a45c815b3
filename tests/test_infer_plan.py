"""Pure parts of infer: seeds, resume planning, input loading, run-spec comparison."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from llmeval.errors import InputError
from llmeval.infer.run import count_missing, plan, sample_seed, unknown_ids
from llmeval.problems import InputKeys, derived_id, load_problems, user_message
from llmeval.records import Problem
from llmeval.tasks import MATH_TEMPLATE
from tests.infer_helpers import AIME24, write_jsonl


def _problems(n: int) -> list[Problem]:
    return [Problem(id=f"p{i}", problem=f"q{i}", answer=str(i)) for i in range(n)]


def test_seeds_are_deterministic_distinct_and_31_bit() -> None:
    seeds = {sample_seed(0, f"p{i}", k) for i in range(50) for k in range(8)}
    assert len(seeds) == 400
    assert all(0 <= s < 2**31 for s in seeds)
    assert sample_seed(0, "p1", 3) == sample_seed(0, "p1", 3)
    assert sample_seed(1, "p1", 3) != sample_seed(0, "p1", 3)


def test_plan_skips_done_pairs_and_grows_with_n() -> None:
    problems = _problems(3)
    done = {("p0", 0), ("p0", 1), ("p2", 1), ("gone", 0)}
    jobs = list(plan(problems, 2, done, 0))
    assert count_missing(problems, 2, done) == len(jobs) == 3
    # round by round: every problem's sample 0 before any sample 1
    assert [(problems[j.problem].id, j.sample_idx) for j in jobs] == [
        ("p1", 0),
        ("p2", 0),
        ("p1", 1),
    ]
    more = plan(problems, 4, done | {(problems[j.problem].id, j.sample_idx) for j in jobs}, 0)
    assert {(j.problem, j.sample_idx) for j in more} == {(i, k) for i in range(3) for k in (2, 3)}
    assert all(j.seed == sample_seed(0, problems[j.problem].id, j.sample_idx) for j in more)
    assert unknown_ids(problems, done) == {"gone"}


def test_a_huge_n_is_planned_lazily() -> None:
    start = time.monotonic()
    jobs = plan(_problems(30), 100_000_000, set(), 0)
    assert count_missing(_problems(30), 100_000_000, {("p0", 5)}) == 3_000_000_000 - 1
    assert next(jobs).sample_idx == 0 and time.monotonic() - start < 1


def test_data_format_with_template(tmp_path: Path) -> None:
    problems = load_problems(AIME24)
    assert len(problems) == 30 and problems[0].id == "aime24/60"
    msg = user_message(problems[0], MATH_TEMPLATE)
    assert msg.startswith("Every morning Aya") and msg.endswith("within \\boxed{}.")
    assert "solution" not in problems[0].extras  # long reference text stays out of records
    assert problems[0].extras["url"].startswith("https://")


def test_upstream_format_sends_prompt_verbatim(tmp_path: Path) -> None:
    inp = write_jsonl(
        tmp_path / "up.jsonl",
        [{"prompt": "Q1 as is", "answer": 3, "doc_id": 7}, {"prompt": "Q2", "answer": "x"}],
    )
    a, b = load_problems(inp)
    assert (a.id, a.answer, user_message(a, MATH_TEMPLATE)) == ("7", "3", "Q1 as is")
    assert b.id == derived_id("Q2") and b.id == load_problems(inp)[1].id


def test_custom_keys(tmp_path: Path) -> None:
    inp = write_jsonl(tmp_path / "c.jsonl", [{"question": "Q", "label": "5", "uid": "u1"}])
    (p,) = load_problems(inp, InputKeys(question="question", answer="label", id="uid"))
    assert (p.id, p.problem, p.answer) == ("u1", "Q", "5")


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ('{"id": "a", "problem": "q", "answer": "1"}\n{oops\n', r"x\.jsonl:2: not valid JSON"),
        # an input is nobody's append target: a cut last line is an error, not skipped as torn
        ('{"id": "a", "problem": "q", "answer": "1"}\n{"id": "b", "pro', r"x\.jsonl:2: not valid"),
        ('{"id": "a", "answer": "1"}\n', r"x\.jsonl:1: missing key 'problem' \(or 'prompt'\)"),
        ('{"id": "a", "problem": "q"}\n', r"x\.jsonl:1: missing key 'answer'"),
        ("[1, 2]\n", r"x\.jsonl:1: expected a JSON object"),
        ('{"id": "a", "problem": "q", "answer": null}\n', r"x\.jsonl:1: key 'answer' must be"),
        (
            '{"id": "a", "problem": "q", "answer": "1"}\n\n'
            '{"id": "a", "problem": "r", "answer": "2"}\n',
            r"x\.jsonl:3: duplicate id 'a' \(also on line 1\)",
        ),
        ("", r"x\.jsonl: no problems"),
    ],
)
def test_bad_inputs_name_file_and_line(tmp_path: Path, lines: str, message: str) -> None:
    inp = tmp_path / "x.jsonl"
    inp.write_text(lines)
    with pytest.raises(InputError, match=message):
        load_problems(inp)


def test_missing_input_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"nope\.jsonl: no such file"):
        load_problems(tmp_path / "nope.jsonl")
