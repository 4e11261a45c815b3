"""The HTML report: safe embedding of model text, sections present, CSP matches the script."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import re

import pytest

from llmeval.report.html import embed_json, render_report
from tests.support.report_fixtures import HOSTILE, hostile_run, make_run

META = {"model": "m", "date": "2026-01-01"}


def test_embed_json_has_no_raw_markup_and_round_trips() -> None:
    obj = {"t": "</script><!-- <script> & \u2028 \u2029", "n": [1, None, 0.5]}
    text = embed_json(obj)
    assert not re.search("[<>&\u2028\u2029]", text)
    assert json.loads(text) == obj


@pytest.mark.parametrize("compress", [False, True])
def test_model_text_cannot_break_out(compress: bool) -> None:
    page = render_report(hostile_run(n_problems=4, n=2), META, compress=compress)
    # Every <script ...> and </script> in the page is one of ours: the data blocks and the code.
    opens = re.findall(r"<script\b[^>]*>", page, flags=re.IGNORECASE)
    closes = re.findall(r"</script", page, flags=re.IGNORECASE)
    assert len(opens) == len(closes) == 1 + 4 + 1  # data, one text block per problem, code
    ours = ('<script type="application/json" id="t', '<script type="text/plain" id="t')
    data = '<script type="application/json" id="llmeval-data">'
    assert all(o in (data, "<script>") or o.startswith(ours) for o in opens)
    assert "window.__pwned" not in page.replace("window.__pwned=", "")  # only inside escaped data
    assert "<img" not in page and 'onerror="' not in page
    assert page.count('"use strict"') == 1  # the `$JS` in model text was not filled in


def test_texts_decode_back_to_the_samples() -> None:
    run = hostile_run(n_problems=2, n=2)
    for compress in (False, True):
        page = render_report(run, META, compress=compress)
        body = re.search(r'<script type="[^"]+" id="t0"[^>]*>(.*?)</script>', page, re.S).group(1)
        raw = gzip.decompress(base64.b64decode(body)).decode() if compress else body
        prompt, samples = json.loads(raw)
        assert prompt == HOSTILE and samples[0] == [HOSTILE, f"{HOSTILE} \\boxed{{1}}"]


def test_csp_allows_exactly_the_report_script() -> None:
    page = render_report(make_run(n_problems=3, n=2), META)
    script = re.search(r"<script>(.*?)</script>", page, re.S).group(1)
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in page
    assert "default-src 'none'" in page
    assert "http://" not in script and "https://" not in script


def test_all_sections_present_with_baseline() -> None:
    run = make_run("new", n_problems=12, n=4, endpoints=("http://a/v1", "http://b/v1"))
    base = make_run("old", n_problems=12, n=4, seed=3)
    page = render_report(run, META, baseline=base)
    for section in ("overview", "pictures", "problems", "comparison", "serving"):
        assert f'<section id="{section}">' in page
    assert page.count("<svg") == 5  # one task: five charts
    assert "pass@k and maj@k" in page and "accuracy under a length cap" in page
    assert "paired stderr" in page and "http://b/v1" in page and "TTFT s p99" in page
    assert '<section id="comparison">' not in render_report(run, META)


def test_chart_labels_are_escaped() -> None:
    run = hostile_run(n_problems=3, n=2)
    page = render_report(run, META)
    charts = re.search(r'<section id="pictures">.*?</section>', page, re.S).group(0)
    assert "evil&lt;script&gt;" in charts and "<script" not in charts


def test_run_settings_show_extra_body_as_json() -> None:
    """The run's --extra-body as the JSON it was given (it was a Python repr: True, quotes)."""
    from dataclasses import replace

    from llmeval.records import RunSpec

    run = make_run("r", n_problems=2, n=2)
    source = next(iter(run.files.values()))
    extra = {"chat_template_kwargs": {"enable_thinking": True}, "stop": None}
    source.spec = RunSpec(model="m", n_samples=2, extra_body=extra)
    page = render_report(replace(run), META)
    assert "{&quot;chat_template_kwargs&quot;: {&quot;enable_thinking&quot;: true}" in page
    assert "True" not in page.split('id="pictures"')[0]


LONG_TITLE = (
    "aime24 · DeepSeek-R1-Distill-Qwen-7B-step-12000: standard error vs samples per problem"
)


def test_chart_titles_wrap_rather_than_run_off_the_chart() -> None:
    from llmeval.report.charts import TITLE_CHARS, W, line_chart

    svg = line_chart(LONG_TITLE, "n", "se", [1.0, 2.0], {"se": [0.1, 0.05]})
    lines = re.findall(r'<text class="title"[^>]*>([^<]*)</text>', svg)
    assert len(lines) == 2 and all(len(line) <= TITLE_CHARS for line in lines)
    assert " ".join(lines).replace("&amp;", "&") == LONG_TITLE
    assert f'viewBox="0 0 {W} 294"' in svg and 'transform="translate(0 14)"' in svg
