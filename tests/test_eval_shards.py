"""`eval` and `report` over a run written in shards (issue 28.3, 28.5): the shard files of a run
are one run, scored once over their union, exactly as the unsharded file; a missing pair names
its shard, a pair two files hold counts once, files of two runs are refused. The shard files
are made as infer makes them: an unsharded run from the loopback server, split by
`Shard.owns` into `<run>.shards/K-of-N.jsonl`, each with its run spec naming its shard."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from llmeval.cli.main import main
from llmeval.records import RunSpec
from llmeval.runs.layout import shard_file, shards_folder
from llmeval.runs.pairs import Shard
from tests.infer_helpers import AIME24, infer, rows, write_jsonl
from tests.support.fake_model import load_answers
from tests.support.threaded_server import serve

FLAGS = ["--workers", "1", "--no-progress"]
# what may differ between the figures of one run read from other files
WHERE = ("file", "files", "shards")


@pytest.fixture(scope="module")
def unsharded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One run of aime24 x 4 samples from the loopback server (half of them right)."""
    out = tmp_path_factory.mktemp("run") / "m" / "aime24.jsonl"
    with serve(answers=load_answers(AIME24), accuracy=0.5) as srv:
        assert infer(srv.url, AIME24, out, "--n-samples", "4") == 0
    return out


def _copy(unsharded: Path, folder: Path) -> Path:
    """The run's file and spec copied into `folder/m/` (a model folder of its own)."""
    (folder / "m").mkdir(parents=True)
    out = folder / "m" / "aime24.jsonl"
    for suffix in ("", ".spec.json"):
        shutil.copy(f"{unsharded}{suffix}", f"{out}{suffix}")
    return out


def split(out: Path, count: int, rows_of: list[dict[str, Any]] | None = None) -> list[Path]:
    """Write the rows of the run `out` (or `rows_of`) into its `count` shard files, as infer
    --shard K/N writes them: the pairs each owns, in the file order, a spec naming its shard."""
    spec = RunSpec.read(Path(f"{out}.spec.json").read_bytes())
    every = rows(out) if rows_of is None else rows_of
    shards_folder(out).mkdir(exist_ok=True)
    files = []
    for index in range(count):
        shard = Shard(index, count)
        owned = [r for r in every if shard.owns(r["problem_id"], r["sample_idx"])]
        path = write_jsonl(shard_file(out, shard), owned)
        shard_spec = spec.model_copy(update={"shard": str(shard)})
        Path(f"{path}.spec.json").write_text(shard_spec.model_dump_json())
        files.append(path)
    return files


def _eval(tmp_path: Path, *args: str) -> list[dict[str, Any]]:
    result = tmp_path / "result.json"
    assert main(["eval", *args, "--result-json", str(result), *FLAGS]) == 0
    return json.loads(result.read_text())["tasks"]


def _figures(task: dict[str, Any]) -> dict[str, Any]:
    """Every figure of a run but where it was read from; problems by id."""
    figures = {k: v for k, v in task.items() if k not in WHERE}
    figures["problems"] = sorted(figures["problems"], key=lambda p: p["problem_id"])
    return figures


def test_three_shards_score_exactly_as_the_unsharded_file(unsharded: Path, tmp_path: Path) -> None:
    (whole,) = _eval(tmp_path, str(unsharded))
    assert whole["complete"] and whole["samples_scored"] == 120 and 0 < whole["accuracy"] < 1
    out = _copy(unsharded, tmp_path)
    files = split(out, 3)
    out.unlink()
    Path(f"{out}.spec.json").unlink()
    # the shards folder, the model folder holding it, any one shard file: one run
    for named in (shards_folder(out), out.parent, files[1]):
        (task,) = _eval(tmp_path, str(named))
        assert _figures(task) == _figures(whole)
        assert task["files"] == [str(f) for f in files]
        assert task["shards"] == ["0/3", "1/3", "2/3"] and task["file"] == str(out)
        assert task["missing_by_shard"] == {} and task["n_duplicates"] == 0


def test_a_missing_pair_makes_the_run_incomplete_and_names_its_shard(
    unsharded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _copy(unsharded, tmp_path)
    out.unlink()
    files = split(out, 3, rows(unsharded))
    kept = rows(files[1])
    lost = kept.pop(5)
    write_jsonl(files[1], kept)
    (task,) = _eval(tmp_path, str(out.parent))
    assert (task["complete"], task["samples_missing"], task["samples_scored"]) == (False, 1, 119)
    assert task["missing_by_shard"] == {"1/3": 1}
    assert Shard(1, 3).owns(lost["problem_id"], lost["sample_idx"])
    assert "bytheshardowningthem:1/3:1" in "".join(capsys.readouterr().out.split())
    # a shard that never ran (its array task failed): all its pairs are missing, named
    owned = len(rows(files[2]))
    files[2].unlink()
    (task,) = _eval(tmp_path, str(out.parent))
    assert task["missing_by_shard"] == {"1/3": 1, "2/3": owned}
    assert task["samples_missing"] == owned + 1 and task["shards"] == ["0/3", "1/3"]
    page = tmp_path / "r.html"
    assert main(["report", str(out.parent), "--out", str(page), *FLAGS]) == 0
    told = f"{owned + 1} samples missing in all; by the shard owning them: 1/3: 1, 2/3: {owned}"
    assert f"<td>no: {owned + 1}</td>" in page.read_text() and told in page.read_text()


def test_a_pair_in_two_shards_counts_once_with_a_warning_naming_both(
    unsharded: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (whole,) = _eval(tmp_path, str(unsharded))
    out = _copy(unsharded, tmp_path)
    out.unlink()
    files = split(out, 3, rows(unsharded))
    stray = rows(files[0])[0]  # written again by shard 2 (a copied file, a bad merge)
    write_jsonl(files[2], [*rows(files[2]), stray])
    (task,) = _eval(tmp_path, str(out.parent))
    assert task["n_duplicates"] == 1 and task["samples_scored"] == 120
    assert {k: v for k, v in _figures(task).items() if k != "n_duplicates"} == {
        k: v for k, v in _figures(whole).items() if k != "n_duplicates"
    }
    found = [r.getMessage() for r in caplog.records]
    (warning,) = [message for message in found if "the same 1 (problem" in message]
    assert f"{files[0]} and {files[2]} hold the same 1 (problem, sample) pairs" in warning
    assert f"{stray['problem_id']}#{stray['sample_idx']}" in warning


@pytest.mark.parametrize(
    ("change", "field", "shown"),
    [
        ({"temperature": 1.0}, "temperature", "(0.6 vs 1.0)"),
        ({"reasoning_effort": "high"}, "reasoning_effort", "(null vs high)"),
        ({"model": "other", "thinking_budget": 512}, "model", "(test-model vs other; also"),
    ],
)
def test_shards_of_two_runs_are_refused_in_one_line(
    unsharded: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    change: dict[str, Any],
    field: str,
    shown: str,
) -> None:
    out = _copy(unsharded, tmp_path)
    files = split(out, 3)
    spec_path = Path(f"{files[2]}.spec.json")
    spec = RunSpec.read(spec_path.read_bytes())
    spec_path.write_text(spec.model_copy(update=change).model_dump_json())
    for named in (out, files[2], out.parent):
        assert main(["eval", str(named), *FLAGS]) == 2
        err = capsys.readouterr().err
        (line,) = [line for line in err.splitlines() if ": error: " in line]
        assert f"{out} and {files[2]} are not one run: their run specs differ in {field}" in line
        assert shown in line and "Traceback" not in err


def test_a_shard_whose_resume_grew_n_merges_and_the_run_plans_the_larger_n(
    unsharded: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Seeds and requests do not depend on n: a shard rerun with --n-samples 8 is still the
    run; the others' samples 4-7 are missing, named by their shards, never a refusal."""
    out = _copy(unsharded, tmp_path)
    out.unlink()
    files = split(out, 2, rows(unsharded))
    spec_path = Path(f"{files[1]}.spec.json")
    spec = RunSpec.read(spec_path.read_bytes())
    spec_path.write_text(spec.model_copy(update={"n_samples": 8}).model_dump_json())
    (task,) = _eval(tmp_path, str(out.parent))
    assert (task["n_samples"], task["complete"], task["samples_missing"]) == (8, False, 120)
    assert sum(task["missing_by_shard"].values()) == 120
    assert any("written with n = 4, 8" in r.getMessage() for r in caplog.records)


def test_a_shard_without_a_spec_or_with_another_shards_spec_is_refused(
    unsharded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _copy(unsharded, tmp_path)
    files = split(out, 2)
    out.unlink()
    shutil.copy(f"{files[0]}.spec.json", f"{files[1]}.spec.json")  # says shard 0/2
    assert main(["eval", str(out.parent), *FLAGS]) == 2
    assert "its run spec is of shard 0/2, its name of shard 1/2" in capsys.readouterr().err
    Path(f"{files[1]}.spec.json").unlink()
    assert main(["eval", str(out.parent), *FLAGS]) == 2
    assert f"{files[1]}: no run spec beside it" in capsys.readouterr().err


def test_a_run_moved_to_shards_half_way_merges_with_its_file(
    unsharded: Path, tmp_path: Path
) -> None:
    (whole,) = _eval(tmp_path, str(unsharded))
    out = _copy(unsharded, tmp_path)
    done = rows(unsharded)
    write_jsonl(out, done[:50])  # the unsharded run, stopped half-way
    split(out, 3, done[50:80])  # then 3 shards asked for the rest, and were stopped
    split(out, 4, done[80:])  # then resharded to 4: each asks only for what no file holds
    (task,) = _eval(tmp_path, str(out))
    assert _figures(task) == _figures(whole)
    assert task["files"][0] == str(out) and len(task["files"]) == 8
    assert task["shards"] == ["0/3", "1/3", "2/3", "0/4", "1/4", "2/4", "3/4"]


def test_an_empty_shard_file_is_part_of_the_run(unsharded: Path, tmp_path: Path) -> None:
    """A shard that wrote its spec and no sample yet (or owns nothing of a tiny run)."""
    (whole,) = _eval(tmp_path, str(unsharded))
    out = _copy(unsharded, tmp_path)
    files = split(out, 2, [])
    assert all(f.read_text() == "" for f in files)
    (task,) = _eval(tmp_path, str(out.parent))
    assert _figures(task) == _figures(whole) and len(task["files"]) == 3


def test_each_file_keeps_its_own_verdict_cache(unsharded: Path, tmp_path: Path) -> None:
    """A shard's verdicts live beside it (they move and go with it); one eval reads them all."""
    out = _copy(unsharded, tmp_path)
    decimals = [
        dict(r, gen=re.sub(r"\\boxed\{(\d+)\}", r"\\boxed{\1.0}", r["gen"])) for r in rows(out)
    ]  # answers the verifier decides, not the exact-integer rule
    out.unlink()
    files = split(out, 3, decimals)
    result = tmp_path / "result.json"
    assert main(["eval", str(out.parent), "--result-json", str(result), *FLAGS]) == 0
    first = json.loads(result.read_text())
    assert first["cache"]["new"] > 0 and first["cache"]["files"] == [
        f"{f}.verdicts.jsonl" for f in files
    ]
    assert not Path(f"{out}.verdicts.jsonl").exists()
    for path in files:
        cached = {r["pred"] for r in rows(Path(f"{path}.verdicts.jsonl"))}
        answers = {m[1] for r in rows(path) if (m := re.search(r"\\boxed\{([^}]*)\}", r["gen"]))}
        assert cached == answers  # its own samples' answers, and only those
    assert main(["eval", str(files[0]), "--result-json", str(result), *FLAGS]) == 0
    again = json.loads(result.read_text())
    assert again["cache"]["new"] == 0 and again["tasks"] == first["tasks"]
