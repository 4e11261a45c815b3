"""Scores of a run in progress (issue 31.2): the complete-rounds estimate avg@k, k the rounds
every planned problem has finished, and the mean over all finished samples; by hand."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from llmeval.evaluate.metrics import Outcome, complete_rounds, finished_mean, group_by_problem
from llmeval.evaluate.reading import InputRun
from llmeval.evaluate.samples import Sample
from llmeval.evaluate.scoring import task_score
from llmeval.records import RunSpec
from llmeval.tasks import TASKS


def _o(pid: str, idx: int, right: bool, truncated: bool = False) -> Outcome:
    return Outcome(pid, idx, "correct" if right else "incorrect", truncated=truncated)


def test_rounds_stop_at_the_first_gap_of_any_problem() -> None:
    # a: 0 1 2 3 (r r w r), b: 0 1 _ 3 (w r - r): b lacks sample 2, so k = 2
    outs = [_o("a", 0, True), _o("a", 1, True), _o("a", 2, False), _o("a", 3, True),
            _o("b", 0, False), _o("b", 1, True), _o("b", 3, True)]  # fmt: skip
    rounds = complete_rounds(group_by_problem(outs), n=4)
    assert rounds.k == 2
    assert rounds.accuracy == pytest.approx(0.75)  # (2/2 + 1/2) / 2; b's sample 3 not counted
    assert rounds.stderr == pytest.approx(math.sqrt(0.125 / 2))  # sd(1, .5) = sqrt(.125)
    # the naive mean: 5 right of 7 finished
    assert finished_mean(outs) == pytest.approx(5 / 7)


def test_no_complete_round_gives_no_figure() -> None:
    outs = [_o("a", 0, True), _o("b", 1, True)]  # b has no sample 0
    rounds = complete_rounds(group_by_problem(outs), n=4)
    assert (rounds.k, rounds.accuracy, rounds.stderr) == (0, None, None)
    # a planned problem without any sample: no round is complete either
    assert complete_rounds(group_by_problem([_o("a", 0, True)]), n=1, unstarted=1).k == 0
    assert complete_rounds({}, n=4).k == 0 and finished_mean([]) is None


def test_k_never_passes_n_and_truncated_samples_count_as_wrong() -> None:
    outs = [_o("a", i, True, truncated=i == 1) for i in range(6)]  # 6 samples of n = 4
    rounds = complete_rounds(group_by_problem(outs), n=4)
    assert rounds.k == 4 and rounds.accuracy == pytest.approx(3 / 4)
    assert rounds.stderr is None  # one problem: no spread between problems


def _run(samples: list[tuple[str, int, bool]], n: int, problems_missing: int = 0) -> InputRun:
    run = InputRun(Path("aime24.jsonl"), TASKS["aime24"], spec=RunSpec(model="m", n_samples=n))
    for pid, idx, right in samples:
        sample = Sample(pid, idx, "5", "5" if right else "4", False, 10, {})
        sample.status = dict.fromkeys(("strict", "lenient"), "correct" if right else "incorrect")
        run.parts[0].samples.append(sample)
    run.reference.missing = [f"missing{i}" for i in range(problems_missing)]
    return run


def test_task_score_reports_both_figures_while_incomplete() -> None:
    # round 0 done for a, b; a also has its samples 1 and 2 (right, as early finishers are)
    done = [("a", 0, False), ("b", 0, True), ("a", 1, True), ("a", 2, True)]
    score = task_score(_run(done, n=3), "strict")
    assert not score.complete and score.rounds_complete == 1
    assert score.rounds_accuracy == pytest.approx(0.5)  # a 0/1, b 1/1
    assert score.finished_mean == pytest.approx(0.75)  # 3 of 4
    assert (score.samples_scored, score.samples_expected) == (4, 6)
    # a planned problem not started: no round is complete
    score = task_score(_run(done, n=3, problems_missing=1), "strict")
    assert score.rounds_complete == 0 and score.rounds_accuracy is None


def test_once_complete_both_are_avg_at_n() -> None:
    done = [(pid, i, (i + ord(pid)) % 3 == 0) for pid in "abcde" for i in range(3)]
    score = task_score(_run(done, n=3), "strict")
    assert score.complete and score.rounds_complete == 3
    assert score.rounds_accuracy == score.finished_mean == score.accuracy
    assert score.rounds_stderr == score.stderr
