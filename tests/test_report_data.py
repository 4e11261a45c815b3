"""The numbers behind the report's pictures, checked against hand-computed values."""

from __future__ import annotations

import math

import pytest

from llmeval.evaluate import metrics
from llmeval.evaluate.samples import Sample, Texts
from llmeval.evaluate.scoring import outcome
from llmeval.records import TaskScore
from llmeval.report.data import (
    Problems,
    default_caps,
    difficulty,
    length_cap_curve,
    length_histograms,
    pair_problems,
    paired_diff,
    pass_maj_curve,
    percentile,
    problems_of,
    serving_figures,
    stderr_curve,
)

P = "strict"  # the policy whose statuses the figures count


def _s(
    pid: str, idx: int, status: str, tokens: int | None = None, truncated: bool = False, **timing
) -> Sample:
    """A sample with its status under `P`; `timing`: latency_s, ttft_s, endpoint."""
    pred = "1" if status == "correct" else ("2" if status == "incorrect" else None)
    texts = Texts(
        "", None, None, timing.get("latency_s"), timing.get("ttft_s"), timing.get("endpoint")
    )
    return Sample(pid, idx, "1", pred, truncated, tokens, {}, texts=texts, status={P: status})


def _problems(spec: dict[str, str], **kw) -> Problems:
    """{'A': 'ccww'} -> problem A with samples correct, correct, incorrect, incorrect."""
    names = {"c": "correct", "w": "incorrect", "n": "no_answer"}
    rows = [
        _s(pid, i, names[ch], **kw) for pid, chars in spec.items() for i, ch in enumerate(chars)
    ]
    return problems_of(rows[::-1], P)  # order of input must not matter


def _score(**figures: object) -> TaskScore:
    return TaskScore.model_construct(**figures)


def test_pass_maj_curve_is_evals_figures_in_k_order() -> None:
    score = _score(
        pass_at_k={"1": 0.3, "16": 0.9, "2": 0.5, "4": 0.7}, maj_at_k={"1": 0.3, "2": 0.4}
    )
    curve = pass_maj_curve(score)
    assert curve["k"] == [1, 2, 4, 16]
    assert curve["pass"] == [0.3, 0.5, 0.7, 0.9]
    assert curve["maj"][:2] == [0.3, 0.4] and math.isnan(curve["maj"][2])
    assert pass_maj_curve(_score(pass_at_k={}, maj_at_k={})) == {"k": [], "pass": [], "maj": []}


def test_truncated_correct_counts_as_wrong_as_in_eval() -> None:
    rows = [_s("A", 0, "correct", truncated=True, tokens=10), _s("A", 1, "correct", tokens=10)]
    probs = problems_of(rows, P)
    assert difficulty(probs) == [("A", 0.5)]
    assert length_cap_curve(probs, [2048])["accuracy"] == [0.5]


def test_stderr_curve_splits_samples_into_disjoint_groups() -> None:
    probs = _problems({"A": "ccww", "B": "cwww"})
    curve = stderr_curve(probs)
    assert curve["n"] == [1, 2, 4]
    # n=1: groups [1,1] [1,0] [0,0] [0,0] -> accuracies 1, .5, 0, 0
    assert curve["observed"][0] == pytest.approx(math.sqrt(0.6875 / 3))
    assert curve["stderr"][0] == pytest.approx((0 + 0.5 + 0 + 0) / 4)
    # n=2: groups [1, .5] and [0, 0] -> accuracies .75 and 0
    assert curve["observed"][1] == pytest.approx(0.375 * math.sqrt(2))
    assert curve["stderr"][1] == pytest.approx((0.25 + 0) / 2)
    # n=4: one group, the whole run: stderr of [.5, .25]; no spread to observe
    assert curve["stderr"][2] == pytest.approx(0.125)
    assert math.isnan(curve["observed"][2])
    # sample stderr sqrt(sum p(1-p)/(n-1)) / P per group: [1, .5] -> sqrt(.25)/2, [0, 0] -> 0
    assert curve["sample_stderr"][1] == pytest.approx((0.25 + 0) / 2)
    assert metrics.sample_stderr([1, 0.5], [2, 2]) == pytest.approx(0.25)
    assert math.isnan(curve["sample_stderr"][0])  # one sample per problem: not estimable


def test_default_caps_end_at_the_runs_max_tokens() -> None:
    assert default_caps(32768) == [2048, 4096, 8192, 16384, 32768]
    assert default_caps(128) == [8, 16, 32, 64, 128]  # never a 512-token cap on a 128 run
    assert default_caps(5000) == [312, 625, 1250, 2500, 5000]
    assert default_caps(3) == [1, 3] and default_caps(0) == []


def test_length_cap_curve_counts_longer_samples_as_wrong() -> None:
    rows = [
        _s("A", 0, "correct", tokens=1000),
        _s("A", 1, "correct", tokens=3000),
        _s("A", 2, "incorrect", tokens=500),
        _s("A", 3, "no_answer", tokens=5000, truncated=True),
        _s("B", 0, "correct", tokens=2048),  # exactly at the cap: fits
        _s("B", 1, "incorrect", tokens=100),
        _s("B", 2, "incorrect", tokens=2500),
        _s("B", 3, "correct", tokens=None),  # no count: keeps its verdict
    ]
    curve = length_cap_curve(problems_of(rows, P), [2048, 4096, 8192])
    assert curve["accuracy"] == pytest.approx([(1 / 4 + 2 / 4) / 2, (2 / 4 + 2 / 4) / 2, 0.5])
    assert curve["truncated"] == pytest.approx([3 / 8, 1 / 8, 1 / 8])


def test_length_histograms_shared_bins() -> None:
    rows = [
        _s("A", 0, "correct", tokens=0),
        _s("A", 1, "incorrect", tokens=10),
        _s("A", 2, "correct", tokens=20),
        _s("A", 3, "no_answer", tokens=40),  # the top edge falls in the last bin
        _s("A", 4, "correct", tokens=None),  # left out
    ]
    h = length_histograms([outcome(s, P) for s in rows], bins=4)
    assert h["edges"] == [0, 10, 20, 30, 40]
    assert h["correct"] == [1, 0, 1, 0]
    assert h["wrong"] == [0, 1, 0, 1]


def test_difficulty_sorted_easiest_first_ties_in_problem_order() -> None:
    probs = _problems({"A": "cw", "B": "cc", "C": "ww", "D": "wc"})
    assert difficulty(probs)[0] == ("B", 1.0)
    assert difficulty(probs)[-1] == ("C", 0.0)
    assert {pid for pid, f in difficulty(probs) if f == 0.5} == {"A", "D"}


def test_paired_difference_and_flips() -> None:
    run = _problems({"p1": "cc", "p2": "cw", "p3": "ww", "p4": "cc"})
    base = _problems({"p1": "ww", "p2": "cc", "p3": "ww", "p5": "cc"})
    d = paired_diff("t", run, base, pair_problems(run, base, {}, {}))
    assert (d.n_common, d.only_run, d.only_baseline) == (3, 1, 1)
    assert d.run == pytest.approx(0.5) and d.baseline == pytest.approx(1 / 3)
    assert d.diff == pytest.approx(1 / 6)
    # differences 1, -1/2, 0: sample variance 21/36, over 3 problems
    assert d.stderr == pytest.approx(math.sqrt(7 / 36))
    assert [f.problem_id for f in d.flips] == ["p1", "p2"]
    assert [f.problem_id for f in d.gained] == ["p1"]
    assert [f.problem_id for f in d.lost] == ["p2"]


def test_paired_stderr_is_zero_for_a_constant_shift() -> None:
    run = _problems({"a": "cc", "b": "cw", "c": "cw"})
    base = _problems({"a": "cw", "b": "ww", "c": "ww"})
    d = paired_diff("t", run, base, pair_problems(run, base, {}, {}))
    assert d.diff == pytest.approx(0.5) and d.stderr == pytest.approx(0.0)


def test_percentile_linear_interpolation() -> None:
    vals = [4.0, 1.0, 3.0, 2.0]
    assert percentile(vals, 50) == pytest.approx(2.5)
    assert percentile(vals, 90) == pytest.approx(3.7)
    assert percentile(vals, 99) == pytest.approx(3.97)
    assert percentile([7.0], 99) == 7.0
    assert math.isnan(percentile([], 50))


def test_serving_figures_per_endpoint() -> None:
    rows = [
        _s("A", 0, "correct", tokens=100, latency_s=2.5, ttft_s=0.5, endpoint="e1"),
        _s("A", 1, "correct", tokens=300, latency_s=4.0, ttft_s=1.0, endpoint="e1"),
        _s("A", 2, "correct", tokens=50, latency_s=1.0, ttft_s=None, endpoint="e2"),
        _s("A", 3, "error", endpoint="e2"),  # failed: counted, no timings
    ]
    figs = serving_figures(rows)
    assert set(figs) == {"e1", "e2", "all"}
    assert figs["e1"]["requests"] == 2 and figs["e1"]["output_tokens"] == 400
    assert figs["e1"]["tokens_per_s"]["p50"] == pytest.approx(75.0)  # 50 and 100 tok/s
    assert figs["e2"]["tokens_per_s"]["p50"] == pytest.approx(50.0)
    assert figs["all"]["latency_s"]["p50"] == pytest.approx(2.5)
    assert figs["all"]["ttft_s"]["p99"] == pytest.approx(0.5 + 0.5 * 0.99)
    assert set(serving_figures(rows[:2])) == {"e1"}
