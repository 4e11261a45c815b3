"""The leaderboard's statistics, by hand: the paired sign-flip test (exact, and its saddlepoint
approximation against the exact value), Holm's correction, rank ranges, and the line saying
when the data cannot separate the rows (report/ranking.py)."""

from __future__ import annotations

import random

import pytest

from llmeval.report.ranking import (
    PairTest,
    holm,
    rank_ranges,
    rank_text,
    separation,
    sign_flip_test,
)


def test_a_clear_difference_is_significant_and_none_is_not() -> None:
    # 12 problems all +0.5: of 4,096 sign patterns, 2 are as extreme (all + or all -)
    test = sign_flip_test([[0.5] * 12])
    assert test.statistic == pytest.approx(0.5)
    assert test.p == 2 / 4096 and test.exact and test.floor == 2 / 4096
    assert sign_flip_test([[0.0] * 30])[:2] == (0.0, 1.0)  # the same on every problem
    assert sign_flip_test([])[:2] == (0.0, 1.0)  # nothing shared


def test_p_counts_every_sign_pattern() -> None:
    # +0.5, +0.25, -0.25: |S| over the 8 patterns is 1, .5, .5, 0, 0, .5, .5, 1 -> 6 of 8 >= .5
    assert sign_flip_test([[0.5, 0.25, -0.25]]).p == pytest.approx(0.75)
    # task 1: +1 on 2 of 2 problems; task 2: 0 on 10 problems: (1 + 0) / 2, the largest |S|
    test = sign_flip_test([[1.0, 1.0], [0.0] * 10])
    assert test.statistic == pytest.approx(0.5) and test.p == pytest.approx(0.5)
    # opposite signs cancel: +0.25 and -0.25 on one problem each -> 0, never rejected
    assert sign_flip_test([[0.25, -0.25]]).p == pytest.approx(1.0)


def test_p_reaches_far_below_a_fixed_number_of_resamples() -> None:
    # 30 problems, 8 samples each, one row ahead on 29: 5,000 random flips could not go below
    # 1/5001 = 2.0e-4, which no pair of a 23-row board (Holm: 0.05/253 = 1.98e-4) can pass
    rng = random.Random(3)
    diffs = [rng.choice([1, 2, 3, 4]) / 8 for _ in range(29)] + [-1 / 8]
    test = sign_flip_test([diffs])
    assert test.exact and test.p < 1e-6 and test.floor == 2.0**-29


def _diffs(rng: random.Random, problems: int, n: int, shift: float) -> list[float]:
    """Per-problem differences of two rows, the first `shift` more likely right."""
    diffs = []
    for _ in range(problems):
        q = rng.random()
        ahead = sum(rng.random() < min(1.0, q + shift) for _ in range(n))
        diffs.append((ahead - sum(rng.random() < q for _ in range(n))) / n)
    return diffs


@pytest.mark.parametrize(
    "tasks",
    [[(30, 8, 0.08)], [(30, 64, 0.08)], [(500, 4, 0.02)], [(500, 4, 0.15)], [(40, 16, 0.3)],
     [(60, 8, 0.0)], [(30, 8, 0.06), (500, 4, 0.06)], [(30, 16, 0.15), (30, 16, 0.15)]],
)  # fmt: skip
def test_the_saddlepoint_follows_the_exact_p_into_the_tail(
    tasks: list[tuple[int, int, float]],
) -> None:
    """Where the exact count is too big, the saddlepoint approximation gives p; where both can
    be computed it stays within 0.75-2.5 times the exact p (above it mostly: a continuity
    correction of half the smallest flip), from the bulk to 1e-30 (the normal approximation is
    off by orders of magnitude there)."""
    rng = random.Random(7)
    diffs = [_diffs(rng, *task) for task in tasks]
    exact, approximate = sign_flip_test(diffs, 10**8), sign_flip_test(diffs, exact_work=0)
    assert exact.exact and not approximate.exact
    assert exact.statistic == approximate.statistic
    assert 0.75 < approximate.p / exact.p < 2.5, (exact, approximate)
    assert approximate.p >= approximate.floor


def test_the_same_input_gives_the_same_p() -> None:
    diffs = [[0.25, -0.5, 0.75, 0.0, 0.25, 1.0, -0.25, 0.5]]
    assert sign_flip_test(diffs) == sign_flip_test(diffs)
    assert sign_flip_test(diffs, exact_work=0) == sign_flip_test(diffs, exact_work=0)


def test_holm_steps_down() -> None:
    # sorted: .01 <= .05/4, .015 <= .05/3, .03 > .05/2: stop (.04 is not rejected either)
    assert holm([0.03, 0.01, 0.015, 0.04]) == [False, True, True, False]
    assert holm([0.03, 0.01, 0.02, 0.04]) == [False, True, False, False]  # .02 > .05/3
    assert holm([0.2, 0.001]) == [False, True]
    assert holm([]) == []


def test_rank_ranges_claim_only_significant_orderings() -> None:
    # A beats C (significant); A vs B and B vs C not significant
    tests = [
        PairTest("A", "B", 0.05, 30, 0.2),
        PairTest("A", "C", 0.30, 30, 0.001, significant=True),
        PairTest("B", "C", 0.25, 30, 0.04),
    ]
    ranks = rank_ranges(["A", "B", "C"], tests)
    assert ranks == {"A": (1, 2), "B": (1, 3), "C": (2, 3)}
    assert rank_text(*ranks["B"]) == "1–3" and rank_text(1, 1) == "1"
    # a significant negative difference puts b above a
    assert rank_ranges(["A", "B"], [PairTest("A", "B", -0.2, 30, 0.0, True)]) == {
        "A": (2, 2),
        "B": (1, 1),
    }


def test_the_line_under_the_board_says_when_the_data_cannot_separate_the_rows() -> None:
    tests = [PairTest("A", "B", 0.3, 30, 1e-6, True), PairTest("A", "C", 0.1, 30, 0.2)]
    assert separation(3, tests) == "1 of 2 pairs differ significantly (Holm, 5%)."
    # nothing significant, though the problems would allow it
    tests = [PairTest("A", "B", 0.01, 30, 0.4, floor=2.0**-29)]
    assert separation(2, tests).startswith("The data cannot separate these 2 rows")
    assert "threshold" not in separation(2, tests)
    # 8 problems where rows differ: p >= 2/2^8 = 0.0078 > 0.05 / 45 pairs
    tests = [PairTest(f"m{i}", f"m{j}", 0.4, 8, 2**-7, floor=2**-7)
             for i in range(10) for j in range(i + 1, 10)]  # fmt: skip
    text = separation(10, tests)
    assert "every rank is 1–10" in text and "below 0.0078" in text and "= 0.0011" in text
