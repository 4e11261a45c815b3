"""Statistics against values computed by hand (the arithmetic is in the comments)."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import pytest

from llmeval.evaluate.metrics import (
    Outcome,
    clustered_stderr,
    group_by_problem,
    ks_up_to,
    maj_at_k,
    majority_winner,
    pass_at_k,
    pass_hat_k,
    sample_stderr,
    summarize,
)
from llmeval.evaluate.reading import InputRun, RunPart
from llmeval.evaluate.samples import Sample
from llmeval.evaluate.scoring import task_score, vote_class
from llmeval.records import RunSpec
from llmeval.tasks import TASKS


def _o(pid: str, idx: int, status: str, vote: str | None = "v", truncated: bool = False) -> Outcome:
    if status == "no_answer":
        vote = None
    return Outcome(pid, idx, status, truncated=truncated, vote=vote)


# P1: right, right, "7", no answer -> 2/4; P2: all right -> 1; P3: "3","3","4","5" -> 0
OUTCOMES = [
    _o("p1", 0, "correct"),
    _o("p1", 1, "correct"),
    _o("p1", 2, "incorrect", "7"),
    _o("p1", 3, "no_answer"),
    *[_o("p2", i, "correct") for i in range(4)],
    _o("p3", 0, "incorrect", "3"),
    _o("p3", 1, "incorrect", "3"),
    _o("p3", 2, "incorrect", "4"),
    _o("p3", 3, "timeout", "5"),
]


def test_summary_by_hand() -> None:
    s = summarize(group_by_problem(OUTCOMES))
    assert s.n_problems == 3
    assert s.accuracy == pytest.approx(0.5)  # (0.5 + 1 + 0) / 3
    # sd(0.5, 1, 0; ddof=1) = sqrt((0 + .25 + .25) / 2) = 0.5; / sqrt(3)
    assert s.stderr == pytest.approx(0.5 / math.sqrt(3))
    # sqrt(0.5*0.5/3 + 0 + 0) / 3
    assert s.sample_stderr == pytest.approx(math.sqrt(0.25 / 3) / 3)
    # pass@2: p1 1 - C(2,2)/C(4,2) = 5/6, p2 1, p3 0 -> 11/18; pass@4: p1 1, p2 1, p3 0
    assert s.pass_at_k == pytest.approx({"1": 0.5, "2": 11 / 18, "4": 2 / 3})
    # maj@1: p1 blocks 1,1,0,0 -> .5; maj@2: p1 [r,r] 1, ["7", none] 0 -> .5; maj@4: p1 2 votes
    # right vs 1 for "7" -> 1; p3 "3" wins (wrong) -> 0
    assert s.maj_at_k == pytest.approx({"1": 0.5, "2": 0.5, "4": 2 / 3})
    # pass^2: p1 C(2,2)/C(4,2) = 1/6, p2 1, p3 0 -> 7/18; pass^4: p2 alone -> 1/3
    assert s.pass_hat_k == pytest.approx({"1": 0.5, "2": 7 / 18, "4": 1 / 3})


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (5, 2, 1, 0.4),
        (5, 2, 2, 0.1),  # C(2,2)/C(5,2) = 1/10
        (5, 2, 3, 0.0),  # fewer right than k
        (10, 7, 3, 35 / 120),  # C(7,3)/C(10,3)
        (64, 64, 64, 1.0),
        (64, 63, 64, 0.0),
    ],
)
def test_pass_hat_k(n: int, c: int, k: int, expected: float) -> None:
    assert pass_hat_k(n, c, k) == pytest.approx(expected)


@pytest.mark.parametrize("n", [1, 2, 5, 8])
def test_pass_hat_k_is_the_share_of_k_subsets_all_right(n: int) -> None:
    """Unbiased: over every way c of n samples can be right, the estimate is the share of the
    C(n, k) subsets of k samples that are all right (and pass@k the share with one right)."""
    for c in range(n + 1):
        right = [i < c for i in range(n)]
        for k in range(1, n + 1):
            subsets = list(itertools.combinations(right, k))
            assert pass_hat_k(n, c, k) == pytest.approx(sum(map(all, subsets)) / len(subsets))
            assert pass_at_k(n, c, k) == pytest.approx(sum(map(any, subsets)) / len(subsets))
    with pytest.raises(ValueError):
        pass_hat_k(n, 0, n + 1)


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (5, 2, 1, 0.4),
        (5, 2, 2, 0.7),  # 1 - C(3,2)/C(5,2) = 1 - 3/10
        (5, 2, 4, 1.0),  # n - c < k
        (4, 0, 2, 0.0),
        (10, 3, 3, 1 - 35 / 120),  # 1 - C(7,3)/C(10,3)
        (64, 1, 64, 1.0),
    ],
)
def test_pass_at_k(n: int, c: int, k: int, expected: float) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(expected)


def test_pass_at_k_rejects_k_above_n() -> None:
    with pytest.raises(ValueError):
        pass_at_k(2, 1, 4)


def test_ks() -> None:
    assert ks_up_to(64) == [1, 2, 4, 8, 16, 32, 64]
    assert ks_up_to(6) == [1, 2, 4, 6]
    assert ks_up_to(1) == [1]


def test_maj_ties_go_to_the_earliest_vote() -> None:
    wrong_first = [_o("p", 0, "incorrect", "7"), _o("p", 1, "correct")]
    right_first = [_o("p", 0, "correct"), _o("p", 1, "incorrect", "7")]
    assert maj_at_k(wrong_first, 2) == 0.0
    assert maj_at_k(right_first, 2) == 1.0


def test_maj_correct_answers_vote_together_and_abstainers_do_not_count() -> None:
    # two right answers (any spelling) beat "7" x1; the three no-answers abstain
    block = [
        _o("p", 0, "no_answer"),
        _o("p", 1, "incorrect", "7"),
        _o("p", 2, "correct", "1/2"),
        _o("p", 3, "correct", "0.5"),
        _o("p", 4, "no_answer"),
        _o("p", 5, "no_answer"),
    ]
    assert maj_at_k(block, 6) == 1.0
    # blocks of 3 by sample_idx: [none, "7", right] tie 1-1 -> "7" first -> 0; [right, none, none]
    assert maj_at_k(block, 3) == 0.5


def test_truncated_right_answer_is_wrong_and_does_not_vote() -> None:
    cut = [_o("p", 0, "correct", truncated=True), _o("p", 1, "incorrect", "7")]
    assert not cut[0].correct
    assert summarize({"p": cut}).accuracy == 0.0
    assert maj_at_k(cut, 2) == 0.0


def test_standard_errors_edge_cases() -> None:
    assert clustered_stderr([0.5]) is None
    # single-sample problems add no within-problem variance
    assert sample_stderr([1.0, 0.0], [1, 1]) == 0.0
    # p=.25 of 4 and p=.5 of 2: sqrt(.1875/3 + .25/1) / 2
    assert sample_stderr([0.25, 0.5], [4, 2]) == pytest.approx(math.sqrt(0.0625 + 0.25) / 2)


def _sample(pid: str, idx: int, pred: str | None, gold: str = "5", **kw: object) -> Sample:
    meta = kw.pop("meta", {})
    return Sample(pid, idx, gold, pred, bool(kw.get("truncated")), kw.get("tokens"), meta)  # type: ignore[arg-type]


def _file(task: str, samples: list[Sample], statuses: list[str], n: int | None = None) -> InputRun:
    """A read file whose samples carry `statuses` (both policies alike); `n` from a run spec."""
    for sample, status in zip(samples, statuses, strict=True):
        sample.status = {"strict": status, "lenient": status}
    spec = None if n is None else RunSpec(model="m", n_samples=n)
    path = Path(f"{task}_x.jsonl")
    return InputRun(path, TASKS[task], [RunPart(path, spec, samples=samples)], spec=spec)


def test_task_score_counts_missing_and_groups() -> None:
    samples = [
        _sample("a", 0, "5", tokens=100, meta={"subject": "Algebra", "level": 1}),
        _sample("a", 1, "\\dfrac{1}{2}", tokens=300, meta={"subject": "Algebra", "level": 1}),
        _sample("a", 2, "\\frac{1}{2}", truncated=True, meta={"subject": "Algebra", "level": 1}),
        _sample("b", 0, None, meta={"subject": "Geometry", "level": 3}),
        _sample("b", 1, "5", meta={"subject": "Geometry", "level": 3}),
    ]
    statuses = ["correct", "incorrect", "incorrect", "no_answer", "correct"]
    score = task_score(_file("math500", samples, statuses, n=4), "strict")
    assert (score.n_problems, score.n_samples, score.samples_expected) == (2, 4, 8)
    assert (score.samples_scored, score.samples_missing, score.complete) == (5, 3, False)
    assert (score.n_correct, score.n_incorrect, score.n_no_answer) == (2, 2, 1)
    assert score.n_truncated == 1 and score.truncation_rate == pytest.approx(0.2)
    assert score.mean_completion_tokens == pytest.approx(200)
    assert score.accuracy == pytest.approx((1 / 3 + 1 / 2) / 2)
    assert score.by_subject["Algebra"].accuracy == pytest.approx(1 / 3)
    assert score.by_level["3"].accuracy == pytest.approx(0.5)
    first = score.problems[0]
    assert (first.problem_id, first.n_missing) == ("a", 1)
    # "5" (right) and the 1/2 spelled two ways tie 1-1 (the cut-off one does not vote): the
    # earliest vote wins
    assert first.majority_answer == "5" and first.majority_correct


def test_a_run_with_a_spec_is_complete_only_with_every_sample_index() -> None:
    """llmeval numbers samples 0..n-1: four samples 0, 1, 2, 7 of n = 4 miss sample 3."""
    samples = [_sample("a", i, "5") for i in (0, 1, 2, 7)]
    score = task_score(_file("aime24", samples, ["correct"] * 4, n=4), "strict")
    assert (score.samples_scored, score.samples_missing, score.complete) == (4, 1, False)
    samples = [_sample("a", i, "5") for i in (0, 1, 2, 7)]
    score = task_score(_file("aime24", samples, ["correct"] * 4), "strict")  # no spec: counted
    assert (score.samples_missing, score.complete) == (0, True)


def test_wrong_answers_spelled_differently_vote_together() -> None:
    # right once (first), then 1/2 written two ways: the wrong class has two votes and wins
    samples = [
        _sample("a", 0, "5"),
        _sample("a", 1, "\\dfrac{1}{2}"),
        _sample("a", 2, "\\frac{1}{2}"),
    ]
    score = task_score(_file("aime24", samples, ["correct", "incorrect", "incorrect"]), "strict")
    assert score.maj_at_k["3"] == 0.0 and score.problems[0].majority_answer == "\\dfrac{1}{2}"


@pytest.mark.parametrize(
    ("spellings", "value"),
    [
        (["\\frac{2}{4}", "1/2", "\\dfrac{1}{2}", " 1 / 2 "], "1/2"),
        (["-\\frac{6}{3}", "-2", "-002", "-\\tfrac{4}{2}"], "-2"),
        (["\\frac{0}{5}", "0", "-0", "0.0", "-.0"], "0"),
        (["0.5", ".50", "\\frac{1}{2}", "000.5"], "1/2"),
        (["-2.25", "-\\frac{9}{4}", "-9/4"], "-9/4"),
        (["3.", "3.000", "3"], "3"),
    ],
)
def test_equal_rationals_vote_as_one_value(spellings: list[str], value: str) -> None:
    assert {vote_class(s) for s in spellings} == {value}


def test_other_answers_keep_their_normal_form() -> None:
    assert vote_class("x + 2") == "x+2" and vote_class("1.5.2") == "1.5.2"
    assert vote_class(".") == "." and vote_class("0.\\overline{3}") == "0.\\overline{3}"
    assert vote_class("0.333") != vote_class("1/3")  # near is not equal: different votes
    assert vote_class("\\frac{1}{0}") == "\\frac{1}{0}"  # no value: compared as written
    assert len({vote_class("1/2"), vote_class("1/3"), vote_class("2")}) == 3


def test_a_wrong_value_written_three_ways_outvotes_two_right_answers() -> None:
    # before values voted, 2/4, 1/2 and 0.5-as-a-fraction were three classes of one vote each
    samples = [_sample("a", i, pred) for i, pred in enumerate(
        ["5", "\\frac{2}{4}", "5", "1/2", "\\dfrac{1}{2}"]
    )]  # fmt: skip
    statuses = ["correct", "incorrect", "correct", "incorrect", "incorrect"]
    score = task_score(_file("aime24", samples, statuses), "strict")
    assert score.maj_at_k["5"] == 0.0 and not score.problems[0].majority_correct
    assert score.problems[0].majority_answer == "\\frac{2}{4}"  # the class's first spelling


def test_maj_at_k_agrees_with_majority_winner_block_by_block() -> None:
    """The fast maj@k (labels counted per block) against the vote rule written out."""
    import random

    def majority_correct(block: list[Outcome]) -> bool:
        winner = majority_winner(block)
        return winner is not None and winner.correct

    rng = random.Random(1)
    for _ in range(3000):
        outs = []
        for i in range(rng.randint(1, 12)):
            status = rng.choice(["correct", "incorrect", "no_answer", "timeout"])
            vote = None if status == "no_answer" or rng.random() < 0.1 else rng.choice("abc")
            outs.append(Outcome("p", i, status, truncated=rng.random() < 0.1, vote=vote))
        rng.shuffle(outs)
        ordered = sorted(outs, key=lambda o: o.sample_idx)
        for k in range(1, len(outs) + 1):
            blocks = [ordered[i : i + k] for i in range(0, len(ordered) - k + 1, k)]
            expected = sum(majority_correct(b) for b in blocks) / len(blocks)
            assert maj_at_k(outs, k) == pytest.approx(expected)
