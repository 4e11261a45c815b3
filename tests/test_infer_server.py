"""The loopback server's model: deterministic per (seed, prompt), gold-aware, honours max_tokens."""

from __future__ import annotations

import http.client
import json

import pytest

from tests.support.fake_model import FakeModel, count_tokens
from tests.support.faults import FaultPicker, parse_faults, parse_schedule
from tests.support.threaded_server import serve


def test_text_is_deterministic_per_seed_and_prompt() -> None:
    model = FakeModel()
    a, b = model.complete(1, "p"), model.complete(1, "p")
    assert a == b and a.text.startswith("<think>\n") and "</think>\n\nSo the answer is" in a.text
    assert model.complete(2, "p") != a and model.complete(1, "q") != a


def test_accuracy_against_gold_answers() -> None:
    model = FakeModel({"What is 6 times 7?": "42"}, accuracy=0.3)
    prompt = "What is 6 times 7?\nPlease reason step by step."
    right = sum("\\boxed{42}" in model.complete(s, prompt).text for s in range(400))
    assert 80 < right < 160
    assert all(
        "\\boxed{42}" in FakeModel({"6": "42"}, 1.0).complete(s, "6").text for s in range(20)
    )


def test_max_tokens_cuts_with_finish_length() -> None:
    model = FakeModel()
    full = model.complete(3, "p")
    cut = model.complete(3, "p", max_tokens=5)
    assert cut.finish_reason == "length" and cut.completion_tokens == 5
    assert count_tokens(cut.reasoning) == 5 and "</think>" not in cut.text
    assert model.complete(3, "p", max_tokens=full.completion_tokens) == full


def test_fault_options_parse() -> None:
    assert parse_faults("429=0.1, drop_mid=0.5") == {"429": 0.1, "drop_mid": 0.5}
    assert parse_schedule("0:429,3:close_after") == {0: "429", 3: "close_after"}
    with pytest.raises(ValueError, match="unknown fault 'oom'"):
        parse_faults("oom=0.1")


def test_faults_are_scheduled_first_then_drawn_by_seed() -> None:
    def picks(seed: int) -> list[str | None]:
        picker = FaultPicker({"429": 0.3, "drop": 0.2}, {1: "slow", 4: "empty"}, seed)
        return [picker.pick() for _ in range(200)]

    first = picks(7)
    assert first == picks(7) and first != picks(8)
    assert (first[1], first[4]) == ("slow", "empty")
    drawn = [kind for i, kind in enumerate(first) if i not in (1, 4)]
    # 429 with its rate (0.3); drop only where 429 was not drawn (0.7 x 0.2 = 0.14)
    assert 0.2 < drawn.count("429") / len(drawn) < 0.4
    assert 0.07 < drawn.count("drop") / len(drawn) < 0.21


def test_keep_alive_health_models_and_unknown_route() -> None:
    with serve(models=("m1",)) as srv:
        host, port = srv.url.split("//")[1].split("/")[0].split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=5)
        for path, status in (("/health", 200), ("/v1/models", 200), ("/nope", 404)):
            conn.request("GET", path)
            resp = conn.getresponse()
            assert resp.status == status
            data = json.loads(resp.read())
        conn.request("GET", "/v1/models")
        assert json.loads(conn.getresponse().read())["data"][0]["id"] == "m1"
        conn.close()
        assert "error" not in data or data["object"] == "error"
        assert srv.stats["GET /v1/models"] == 2


def test_reasoning_token_count_is_what_the_tokenizer_counts() -> None:
    """The fake model counts its reasoning's tokens without tokenizing (its words, one space
    apart): the same number `count_tokens` gives, long and short."""
    for low, high in ((0, 0), (1, 30), (20, 80), (5000, 5200)):
        model = FakeModel(min_words=low, max_words=high)
        for seed in range(5):
            reasoning, _, count = model._full(seed, "What is 6 times 7?")
            assert count == count_tokens(reasoning)
