"""The leaderboard's statistics, by hand: the paired sign-flip test, Holm's correction, rank
ranges (report/ranking.py)."""

from __future__ import annotations

import pytest

from llmeval.report.ranking import PairTest, holm, rank_ranges, rank_text, sign_flip_test


def test_a_clear_difference_is_significant_and_none_is_not() -> None:
    # 12 problems all +0.5: of 4,096 sign patterns, 2 are as extreme (all + or all -)
    diff, p = sign_flip_test([[0.5] * 12])
    assert diff == pytest.approx(0.5)
    assert p == pytest.approx(2 / 4096, abs=0.002) and p > 0
    assert sign_flip_test([[0.0] * 30]) == (0.0, 1.0)  # the same on every problem
    assert sign_flip_test([]) == (0.0, 1.0)  # nothing shared


def test_tasks_weigh_equally_and_small_samples_stay_insignificant() -> None:
    # task 1: +1 on 2 of 2 problems; task 2: 0 on 10 problems: (1 + 0) / 2
    diff, p = sign_flip_test([[1.0, 1.0], [0.0] * 10])
    assert diff == pytest.approx(0.5)
    assert p == pytest.approx(0.5, abs=0.03)  # 2 of 4 sign patterns are as extreme
    # opposite signs cancel: +0.25 and -0.25 on one problem each -> 0, never rejected
    assert sign_flip_test([[0.25, -0.25]])[1] == pytest.approx(1.0)


def test_the_same_input_gives_the_same_p() -> None:
    diffs = [[0.25, -0.5, 0.75, 0.0, 0.25, 1.0, -0.25, 0.5]]
    assert sign_flip_test(diffs) == sign_flip_test(diffs)


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
