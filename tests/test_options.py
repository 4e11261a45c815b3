"""Options that check themselves (issue 32.6): infer's and eval's options, the client's config and
the sampling are frozen models whose bounds are the flags' checks, so a value out of range is
refused where the options are made, whoever makes them, never only by the command line."""

from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from llmeval.client.endpoints import ClientConfig
from llmeval.evaluate.options import EvalOptions
from llmeval.infer.options import InferOptions
from llmeval.judge.ask import JudgeOptions
from llmeval.problems import InputKeys
from llmeval.sampling import Sampling

URLS = ["http://127.0.0.1:8000/v1"]
CLIENT = ClientConfig(base_urls=URLS)


@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda: ClientConfig(base_urls=URLS, max_workers=0), "max_workers"),
        (lambda: ClientConfig(base_urls=URLS, timeout=math.nan), "timeout"),
        (lambda: ClientConfig(base_urls=URLS, deadline=0.0), "deadline"),
        (lambda: ClientConfig(base_urls=URLS, retry_delay=-1.0), "retry_delay"),
        (lambda: ClientConfig(base_urls=URLS, max_reply_bytes=0), "max_reply_bytes"),
        (lambda: ClientConfig(base_urls=[]), "base_urls"),
        (lambda: InferOptions(input="i", output="o", client=CLIENT, n_samples=0), "n_samples"),
        (lambda: InferOptions(input="i", output="o", client=CLIENT, progress_interval=0.0),
         "progress_interval"),
        (lambda: JudgeOptions(url=URLS[0], model="m", workers=0), "workers"),
        (lambda: JudgeOptions(url=URLS[0], model="m", timeout=math.inf), "timeout"),
        (lambda: JudgeOptions(url=URLS[0], model="m", max_tokens=0), "max_tokens"),
        (lambda: EvalOptions(paths=["x"], workers=0), "workers"),
        (lambda: EvalOptions(paths=["x"], timeout=math.inf), "timeout"),
        (lambda: EvalOptions(paths=["x"], memory_mb=-5), "memory_mb"),
        (lambda: Sampling(top_p=0.0), "top_p"),
    ],
)  # fmt: skip
def test_options_refuse_values_out_of_their_bounds(make, field: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValidationError) as caught:
        make()
    assert caught.value.errors()[0]["loc"][0] == field


def test_options_are_frozen() -> None:
    made = [
        ClientConfig(base_urls=URLS),
        InferOptions(input="i", output="o", client=ClientConfig(base_urls=URLS)),
        EvalOptions(paths=["x"]),
        InputKeys(),
        JudgeOptions(url=URLS[0], model="m"),
    ]
    for options in made:
        name = next(iter(type(options).model_fields))
        with pytest.raises(ValidationError, match="frozen"):
            setattr(options, name, getattr(options, name))
