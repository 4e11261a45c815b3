"""`llmeval report` end to end on real generation files: judged by eval (cache reused),
texts joined back to the right samples, every section written, errors in one line."""

from __future__ import annotations

import base64
import gzip
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from llmeval.cli.main import main
from llmeval.records import RunSpec
from tests.support.report_fixtures import HOSTILE
from tests.support.synthetic import generation, output, upstream, write_jsonl

RNG = random.Random(5)
FLAGS = ["--workers", "1", "--no-progress"]


def _rows(answers: dict[str, list[str | None]], gold: str = "204") -> list[dict[str, Any]]:
    rows = []
    for pid, finals in answers.items():
        for idx, final in enumerate(finals):
            gen = output(final, 300, RNG) + (HOSTILE if pid == "p1" and idx == 0 else "")
            rows.append(generation(pid, idx, gold, gen, latency_s=2.0 + idx, ttft_s=0.5,
                                   endpoint=f"http://127.0.0.1:{8000 + idx % 2}/v1"))  # fmt: skip
    return rows


def _spec(path: Path, model: str, n: int) -> None:
    spec = RunSpec(model=model, n_samples=n, temperature=0.6, top_p=0.95, max_tokens=4096,
                   seed=0, prompt_template="{problem}")  # fmt: skip
    path.with_name(path.name + ".spec.json").write_text(spec.model_dump_json())


def _data(page: str) -> dict[str, Any]:
    raw = re.search(r'<script type="application/json" id="llmeval-data">(.*?)</script>', page, re.S)
    return json.loads(raw.group(1))


def _texts(page: str, i: int) -> list:
    body = re.search(rf'<script type="text/plain" id="t{i}" data-enc="gzip">(.*?)</script>', page)
    return json.loads(gzip.decompress(base64.b64decode(body.group(1))))


def test_report_of_a_run_and_its_baseline(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    right = ["204"] * 4
    new = {"p1": ["204", "204", "205", None], "p2": right, "p3": ["1", "2", "3", "204"]}
    old = {"p1": ["1", "1", "1", "1"], "p2": right, "p3": ["204", "204", "204", "3"]}
    new["p1"][2] = "204"
    run = write_jsonl(tmp_path / "aime24_new.jsonl", _rows(new))
    base = write_jsonl(tmp_path / "aime24_old.jsonl", _rows(old))
    _spec(run, "model-new", 4)
    _spec(base, "model-old", 4)
    out = tmp_path / "r" / "report.html"
    assert main(["report", str(run), "--baseline", str(base), "--out", str(out), *FLAGS]) == 0
    page = out.read_text()
    for section in ("overview", "pictures", "problems", "comparison", "serving"):
        assert f'<section id="{section}">' in page
    data = _data(page)
    fracs = {p["id"]: p["frac"] for p in data["problems"]}
    assert fracs == {"p1": 0.75, "p2": 1.0, "p3": 0.25}
    p1 = next(p for p in data["problems"] if p["id"] == "p1")
    assert [s[1] for s in p1["s"]] == ["correct", "correct", "correct", "no_answer"]
    assert p1["maj"] == "204" and p1["noans"] == 1
    # accuracy 2/3 = 66.7; paired diff vs old (0, 1, 3/4): (+3/4, 0, -1/2) -> +8.3 points
    assert "66.7 ± " in page and "model-new" in page and "model-old" in page
    assert "<td>+8.3</td>" in page
    assert "2 flipped problems (1 gained, 1 lost)" in page
    assert "http://127.0.0.1:8001/v1" in page  # serving per endpoint
    # texts joined to the right sample; hostile text only inside the compressed block
    prompt, samples = _texts(page, data["problems"].index(p1))
    assert prompt.startswith("Problem p1") and samples[0][1].endswith(HOSTILE)
    assert "<script>document.title" not in page

    caplog.clear()
    with caplog.at_level("INFO", logger="llmeval"):
        assert main(["report", str(run), "--out", str(out), *FLAGS]) == 0
    assert "verified now" in out.read_text() and "0 verified now" in out.read_text()
    assert '<section id="comparison">' not in out.read_text()


def test_upstream_rows_without_ids_get_their_texts(tmp_path: Path) -> None:
    rows = _rows({"q1": ["204", "7"], "q2": [None, "204"]})
    path = write_jsonl(tmp_path / "aime24_up.jsonl", [upstream(r, with_ids=False) for r in rows])
    out = tmp_path / "up.html"
    assert main(["report", str(path), "--out", str(out), "--no-compress", *FLAGS]) == 0
    page = out.read_text()
    data = _data(page)
    assert sorted(p["frac"] for p in data["problems"]) == [0.5, 0.5]
    t0 = json.loads(
        re.search(r'<script type="application/json" id="t0">(.*?)</script>', page).group(1)
    )
    assert t0[0].startswith("Problem q1") and "\\boxed{204}" in t0[1][0][1]


def test_duplicate_rows_keep_texts_aligned(tmp_path: Path) -> None:
    rows = _rows({"p1": ["204", "7", "204"]})
    rows.insert(1, dict(rows[0], gen="a repeated row that eval skips"))
    path = write_jsonl(tmp_path / "aime24_dup.jsonl", rows)
    out = tmp_path / "dup.html"
    assert main(["report", str(path), "--out", str(out), *FLAGS]) == 0
    page = out.read_text()
    _, samples = _texts(page, 0)
    assert len(samples) == 3 and all("repeated" not in gen for _, gen in samples)
    assert samples[1][1].endswith("\\boxed{7}$$")


def test_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["report", str(tmp_path / "missing_aime24.jsonl"), "--out", str(tmp_path / "x.html")])
        == 2
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("llmeval report: error:")
    path = write_jsonl(tmp_path / "aime24_a.jsonl", _rows({"p1": ["204"]}))
    assert main(["report", str(path), "--out", str(tmp_path), *FLAGS]) == 2
    assert "is a folder" in capsys.readouterr().err


def test_the_report_shows_both_policies(tmp_path: Path) -> None:
    """A GPQA-like run that answers with a bare final letter: strict 0%, lenient 75%, and the
    report said 0% alone (the word 'lenient' was nowhere); now in the overview and the
    comparison."""
    rows = []
    for i, gold in enumerate("ABCD"):
        for idx in range(2):
            letter = gold if idx == 0 or i % 2 else "A" if gold != "A" else "B"
            gen = (
                "<think>\nThe options compare as follows.\n</think>\n\nSo, in the end:\n\n**"
                + letter
                + "**"
            )
            rows.append(generation(f"q{i}", idx, gold, gen))
    for name in ("new", "old"):
        (tmp_path / name).mkdir()
    run = write_jsonl(tmp_path / "new" / "gpqa_diamond.jsonl", rows)
    base = write_jsonl(tmp_path / "old" / "gpqa_diamond.jsonl", rows)
    out = tmp_path / "r.html"
    assert main(["report", str(run), "--baseline", str(base), "--out", str(out), *FLAGS]) == 0
    page = out.read_text()
    overview = page.split('<section id="overview">')[1].split("</section>")[0]
    assert "<th>acc ± se</th><th>lenient</th>" in overview
    assert "<td>0.0 ± 0.0</td><td>75.0</td>" in overview
    compared = page.split('<section id="comparison">')[1].split("</section>")[0]
    assert "<td>gpqa_diamond</td><td>strict</td><td>4</td><td>0.0</td><td>0.0</td>" in compared
    assert "<td>gpqa_diamond</td><td>lenient</td><td>4</td><td>75.0</td><td>75.0</td>" in compared


def test_the_overview_is_evals_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The report's headline table has eval's columns, named alike, with the same text in each
    cell, and the lines under it (an incomplete run, copied rows) as eval prints them."""
    rows = _rows({"p1": ["204", "204", "205", None], "p2": ["204", "1", "204", "204"]})
    (tmp_path / "m").mkdir()
    run = write_jsonl(tmp_path / "m" / "aime24.jsonl", [*rows, rows[0]])
    _spec(run, "model-m", 5)  # 5 asked, 4 drawn: incomplete
    assert main(["eval", str(run), *FLAGS]) == 0
    table = capsys.readouterr().out.splitlines()
    out = tmp_path / "r.html"
    assert main(["report", str(run), "--out", str(out), *FLAGS]) == 0
    overview = out.read_text().split('<section id="overview">')[1].split("</section>")[0]
    head = re.findall(r"<th>(.*?)</th>", overview.split("</thead>")[0])
    cells = re.findall(r"<td>(.*?)</td>", overview.split("<tbody>")[1].split("</tbody>")[0])
    assert head[:4] == ["run", "model", "problems", "n"] and cells[1:4] == ["model-m", "2", "5"]
    header = next(line for line in table if line.startswith("run: task · model, size · file"))
    row = next(line for line in table if line.startswith("aime24 · model-m"))
    assert header.split()[7:] == " ".join(head[4:]).split()
    assert row.split()[3:] == " ".join(cells[4:]).split()  # after `aime24 · model-m`
    assert cells[-1] == "no: 2" and "NO (" not in overview
    for what, line in (("incomplete", "0 problems without a sample, 2 samples missing"),
                       ("copies", "1 rows repeat earlier rows of their file")):  # fmt: skip
        assert f"{what}: aime24 · model-m: {line}" in "\n".join(table)  # the run's one name
        assert f"{what}: aime24 · model-m: {line}" in overview


def test_a_run_in_progress_is_headed_by_its_complete_rounds_estimate(tmp_path: Path) -> None:
    """Issue 42.6: the report of a run in progress heads its overview with coverage and avg@k
    ± se over the rounds every problem has finished (eval's figures), not only the mean over
    finished samples, which reads high when the right answers finish first."""
    answers = {"p1": ["204", "1", "5", "204"], "p2": ["2", "204", "204", "204"],
               "p3": ["1", "2", "3", "204"]}  # fmt: skip
    # rounds 0-1 whole; of the later ones, the right (short) samples finished first
    finished = [r for r in _rows(answers) if r["sample_idx"] < 2 or "{204}" in r["gen"]]
    run = write_jsonl(tmp_path / "aime24.jsonl", finished)
    _spec(run, "m", 4)
    out, result = tmp_path / "report.html", tmp_path / "scores.json"
    assert main(["report", str(run), "-o", str(out), "--task", "aime24", *FLAGS]) == 0
    assert main(["eval", str(run), "--task", "aime24", "--result-json", str(result), *FLAGS]) == 0
    score = json.loads(result.read_text())["tasks"][0]
    assert score["rounds_complete"] == 2 and not score["complete"]
    overview = re.search(r'<section id="overview"><h2>Overview</h2>(.*?)</section>',
                         out.read_text(encoding="utf-8"), re.S)  # fmt: skip
    assert overview
    headline = re.match(r'<p class="headline">(.*?)</p>', overview.group(1))
    assert headline, overview.group(1)[:300]
    avg, se = 100 * score["rounds_accuracy"], 100 * score["rounds_stderr"]
    assert headline.group(1) == (
        f"aime24 · m: 10/12 samples, 3/3 problems, rounds 2/4: avg@2 {avg:.1f} ± {se:.1f}, "
        f"finished mean {100 * score['finished_mean']:.1f} (provisional)"
    )
    assert score["finished_mean"] > score["rounds_accuracy"]  # the reason for the headline
