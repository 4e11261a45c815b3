"""What one answer can cost the verifier under its work bound (`llmeval/verify/work.py`): for
golds of `data/` with variables, answers built to sit just inside the bound (sums of fractions
over quadratics, over two variables, nested fractions, powers; as many terms as the bound
allows) and just past it, each verified in this process; prints the CPU seconds per kind (the
median and the worst) and the verdicts past the bound.

    .venv/bin/python -m bench.bench_verify_bound [--golds 25] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import signal
import statistics
from collections import defaultdict
from collections.abc import Callable

from llmeval.tasks import DATA_DIR
from llmeval.verify import work
from llmeval.verify.gold import normalize_gold
from llmeval.verify.verifier import parse_gold, verify

LIMIT_S = 60  # a pair past this is reported as such


class _Alarm(BaseException):
    """A pair over LIMIT_S (a BaseException: math-verify swallows Exception)."""


def _kinds(rng: random.Random) -> dict[str, Callable[[str], str]]:
    def n() -> int:
        return rng.randint(1, 9)

    return {
        "quadratic": lambda v: f"\\frac{{{n()}}}{{{v}^2+{n()}{v}+{n()}}}",
        "linear": lambda v: f"\\frac{{{n()}}}{{{n()}{v}+{n()}}}",
        "two variables": lambda v: f"\\frac{{{n()}}}{{{v}+{n()}{rng.choice('xyabn')}}}",
        "nested": lambda v: f"\\frac{{1}}{{{v}+\\frac{{{n()}}}{{{v}+{n()}}}}}",
        "power": lambda v: f"({v}+{n()})^{{{rng.randint(2, 12)}}}",
    }


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _timed(gold: str, answer: str) -> tuple[float, str]:
    signal.alarm(LIMIT_S)
    start = _cpu()
    try:
        status = verify(gold=gold, answer=answer)
        verdict = f"{status[0]} ({status[2]})" if status[2] else status[0]
    except _Alarm:
        verdict = "over the limit"
    finally:
        signal.alarm(0)
    return _cpu() - start, verdict


def _at_bound(gold_latex: str, term: Callable[[str], str], variable: str) -> tuple[str, str]:
    """The longest sum of `term`s within the bound, and that sum with one term more."""
    terms = [term(variable)]
    while work.within("+".join(terms), gold_latex):
        terms.append(term(variable))
    return "+".join(terms[:-1]) or terms[0], "+".join(terms)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--golds", type=int, default=25)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    def alarm(*_: object) -> None:
        raise _Alarm

    signal.signal(signal.SIGALRM, alarm)
    rng = random.Random(args.seed)
    golds = [
        json.loads(line)["answer"]
        for name in ("math500", "minerva_math", "olympiadbench")
        for line in (DATA_DIR / f"{name}.jsonl").open()
    ]
    symbolic = [g for g in golds if any(c in g for c in "xyabn") and len(g) < 150]
    symbolic = [g for g in symbolic if parse_gold(g)]
    inside: dict[str, list[float]] = defaultdict(list)
    past: dict[str, list[float]] = defaultdict(list)
    verdicts_past: dict[str, int] = defaultdict(int)
    for gold in rng.sample(symbolic, min(args.golds, len(symbolic))):
        latex = normalize_gold(gold) or ""
        variable = next(c for c in "xyabn" if c in gold)
        for kind, term in _kinds(rng).items():
            within, beyond = _at_bound(latex, term, variable)
            inside[kind].append(_timed(gold, within)[0])
            seconds, verdict = _timed(gold, beyond)
            past[kind].append(seconds)
            verdicts_past[verdict] += 1
    print(f"{'answers (CPU seconds)':24} {'inside: median':>15} {'worst':>7} {'past: worst':>12}")
    for kind in inside:
        median, worst = statistics.median(inside[kind]), max(inside[kind])
        print(f"{kind:24} {median:15.2f} {worst:7.2f} {max(past[kind]):12.3f}")
    print("\nfigures")
    print(f"  golds (data/, with variables)   {min(args.golds, len(symbolic))}")
    print(f"  worst inside the bound (s)      {max(max(v) for v in inside.values()):.2f}")
    print(f"  worst past the bound (s)        {max(max(v) for v in past.values()):.3f}")
    print(f"  verdicts past the bound         {dict(verdicts_past)}")


if __name__ == "__main__":
    main()
