"""The list of broken files (`bad_files.Case`s): 2 = bad input or usage, 5 = output not writable."""

from __future__ import annotations

import json

from llmeval.testing.bad_files import (
    BINARY,
    GOOD,
    HUGE,
    INPUT,
    PROBLEMS,
    Case,
    broken_spec,
    disk_full,
    eval_broken_cache,
    eval_broken_spec,
    eval_cache_full,
    infer_input,
    infer_output,
    judged,
    read_only,
    spec_mismatch,
)  # fmt: skip

P0, P1, *_ = INPUT.splitlines(keepends=True)
G0, G1, G2, *_ = GOOD.splitlines(keepends=True)
WRONG_TYPE = json.dumps({**PROBLEMS[2], "answer": ["4"]}).encode() + b"\n"
NO_ANSWER = json.dumps({"id": "p9", "problem": "What?"}).encode() + b"\n"
GEN_DICT = json.dumps({"problem_id": "p1", "sample_idx": 2, "answer": "2", "gen": {}}).encode()
NO_GOLD = json.dumps({"problem_id": "p1", "sample_idx": 2, "gen": "\\boxed{2}"}).encode()
BAD_IDX = json.dumps({"problem_id": "p1", "sample_idx": "two", "answer": "2", "gen": ""}).encode()

CASES = [
    # infer: the problems file
    Case("infer: empty input", infer_input(b"", None), 2),
    Case("infer: binary input", infer_input(BINARY, 1), 2),
    Case(
        "infer: non-JSON line in the middle of the input", infer_input(P0 + b"{oops\n" + P1, 2), 2
    ),
    Case("infer: wrong type (answer a list)", infer_input(P0 + P1 + WRONG_TYPE, 3), 2),
    Case("infer: missing key (no answer)", infer_input(P0 + NO_ANSWER, 2), 2),
    Case("infer: duplicate ids", infer_input(P0 + P1 + P0, 3), 2),
    Case("infer: an 8 MB non-JSON line", infer_input(P0 + HUGE + b"\n" + P1, 2), 2),
    Case("infer: a JSON array, not objects", infer_input(P0 + b"[1, 2]\n", 2), 2),
    # infer: the output it resumes
    Case("infer: broken line inside the output", infer_output(G0 + b"{torn\n" + G1, 2), 2),
    Case("infer: wrong type inside the output", infer_output(G0 + BAD_IDX + b"\n" + G1, 2), 2),
    Case("infer: binary output", infer_output(BINARY, 1), 2),
    Case(
        "infer: torn last line of the output", infer_output(G0 + G1 + G2[:30], None), 0, torn=True
    ),
    Case("infer: a spec that does not match", spec_mismatch, 2),
    Case("infer: a broken spec", broken_spec, 2),
    Case("infer: read-only output folder", read_only("infer"), 5),
    Case("infer: disk full (64 KB tmpfs)", disk_full(real=True), 5),
    Case("infer: file-size limit (EFBIG)", disk_full(real=False), 5),
    # eval
    Case("eval: empty file", judged("eval", b"", None), 2),
    Case("eval: binary file", judged("eval", BINARY, 1), 2),
    Case("eval: non-JSON line in the middle", judged("eval", G0 + b"nope\n" + G1, 2), 2),
    Case("eval: wrong type (gen an object)", judged("eval", G0 + GEN_DICT + b"\n", 2), 2),
    Case("eval: missing key (no gold answer)", judged("eval", G0 + G1 + NO_GOLD + b"\n", 3), 2),
    Case("eval: an 8 MB non-JSON line", judged("eval", G0 + HUGE + b"\n" + G1, 2), 2),
    Case("eval: torn last line", judged("eval", G0 + G1 + G2[:25], None), 0),
    Case("eval: a broken spec beside the file", eval_broken_spec, 2),
    Case("eval: broken line in the verdict cache", eval_broken_cache, 2),
    Case("eval: read-only folder for the cache", read_only("cache"), 5),
    Case("eval: read-only folder for --result-json", read_only("result"), 5),
    Case("eval: verdict cache hits the file-size limit", eval_cache_full, 5),
    # report
    Case("report: non-JSON line in the middle", judged("report", G0 + b"nope\n" + G1, 2), 2),
    Case("report: binary file", judged("report", BINARY, 1), 2),
    Case("report: read-only folder for --out", read_only("report"), 5),
]
