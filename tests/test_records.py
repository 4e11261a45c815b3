"""Record models: numeric gold answers become text; run specs report what differs."""

from __future__ import annotations

from llmeval.records import Generation, Problem, RunSpec


def test_numeric_gold_is_coerced_to_text() -> None:
    assert Problem(id="x", problem="q", answer=27.0).answer == "27.0"
    assert Problem(id="x", problem="q", answer=204).answer == "204"
    g = Generation(problem_id="x", sample_idx=0, prompt="p", answer=5, gen="")
    assert g.answer == "5"


def test_problem_keeps_extra_fields() -> None:
    p = Problem.model_validate({"id": "x", "problem": "q", "answer": "1", "level": 3})
    assert p.extras == {"level": 3}


def _spec(**kw: object) -> RunSpec:
    return RunSpec.model_validate({"model": "m", "n_samples": 4, **kw})


def test_spec_differences_ignore_n_samples_and_endpoints() -> None:
    assert _spec().differences(_spec(n_samples=8, base_urls=["http://x/v1"])) == {}
    assert _spec().differences(_spec(temperature=1.0)) == {"temperature": (0.6, 1.0)}


def test_a_token_count_that_is_not_sane_reads_as_absent() -> None:
    from llmeval.records import Generation, Usage, token_count

    assert [token_count(v) for v in (0, 12, 12.0, 10**9)] == [0, 12, 12, 10**9]
    garbage = [float("nan"), float("inf"), -1, "12", 10**400, True, 12.5, 10**9 + 1, None, {}]
    assert [token_count(v) for v in garbage] == [None] * len(garbage)
    line = '{"problem_id": "a", "sample_idx": 0, "prompt": "q", "answer": "1", "gen": "x", '
    usage = '"usage": {"prompt_tokens": NaN, "completion_tokens": ' + "9" * 400 + "}}"
    assert Generation.model_validate_json(line + usage).usage == Usage()
