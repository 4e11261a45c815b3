"""Differential fuzz of the verifier's numbers: thousands of numeric and structured (gold,
answer) pairs (integers, fractions, decimals exact and approximate, e-notation and
`\\times 10^{k}` from 1e-45 to 1e45, roots, pi, percents, tuples, sets, intervals, matrices
and lists of them; near-misses at a relative 1e-5..1e-8; equal values written differently;
numbers dressed in units, currency, degrees, ordinals, congruences, percent words and math
delimiters, on either side; equations, expressions of variables, complex numbers, infinity,
factorials, logs, times and letters), plus the rows of the verdict table; with `--data`, every
gold of `data/` and of other graders' test suites against itself, its standard rewriting and
the next gold, and the examples of the documented gold and answer rules of both trees (a rule
removed in this checkout is still compared); through three verifiers:

- ref: the verifier of a git revision (`--ref`, default main), from `git archive`;
- this: the verifier of this checkout;
- veto: this checkout with math-verify deciding every parsed pair and the numeric comparison
  (`numbers.compare`: relative tolerance, exact decimals) allowed only to turn its "correct"
  into "incorrect". The whole comparison is the strongest veto there is, so every pair where
  veto and this differ is one that no veto-only design can decide as this does.

Every verdict is (strict, lenient). Each verifier runs in its own process, one pair at a time
under a 20 s alarm. Prints every differing pair, then the figures (the seconds of each
verifier: wall clock, and the CPU time of its process, the figure to compare on a busy
machine).

    .venv/bin/python -m bench.fuzz_verify [--ref main] [--seed 0] [--scale 1] [--no-veto] [--data]
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import resource
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import Counter
from decimal import Decimal, getcontext
from fractions import Fraction
from pathlib import Path

import mpmath

from tests.support import readme_rules

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "tests" / "test_verdict_semantics.py"
getcontext().prec = 100
mpmath.mp.dps = 60
Pair = tuple[str, str, str]  # (category, gold, answer)


# ---------------------------------------------------------------------------------------
# numbers written out


def _dec(value: mpmath.mpf) -> Decimal:
    return Decimal(mpmath.nstr(value, 60, min_fixed=-(10**9), max_fixed=10**9))


def sci(value: mpmath.mpf, sig: int, style: str) -> str:
    """`value` rounded to `sig` significant digits, written plainly (`fixed`), in e-notation
    (`e`) or with `\\times`/`\\cdot 10^{k}`."""
    d = _dec(value)
    if d == 0:
        return "0"
    exp = d.adjusted()
    d = d.quantize(Decimal(1).scaleb(exp - sig + 1))
    exp = d.adjusted()  # rounding may carry into a new digit (9.99 -> 10.0)
    if style == "fixed" and -6 <= exp <= 15:
        return format(d, "f")
    mant = format(d.scaleb(-exp), "f")
    if style == "e":
        return f"{mant}e{exp}"
    return f"{mant} \\{'times' if style == 'times' else 'cdot'} 10^{{{exp}}}"


class Atom:
    """A gold scalar: its spellings (the first is the gold), value and exact rational value."""

    def __init__(self, kind: str, forms: list[str], value: object, exact: Fraction | None):
        self.kind, self.forms, self.exact = kind, forms, exact
        self.value = mpmath.mpf(value) if not isinstance(value, mpmath.mpf) else value


def _frac(q: Fraction, times: int = 1) -> str:
    """`\\frac{p}{q}` (`times` > 1: unreduced, both multiplied by it)."""
    sign = "-" if q < 0 else ""
    return f"{sign}\\frac{{{times * abs(q.numerator)}}}{{{times * q.denominator}}}"


def _atom(rng: random.Random) -> Atom:
    kind = rng.choice(("int", "int", "fraction", "decimal", "sci", "root", "pi", "big-irrational"))
    sign = rng.choice((1, 1, 1, -1))
    if kind == "int":
        n = sign * rng.choice(
            (rng.randint(0, 999), rng.randint(10**3, 10**9), 10 ** rng.randint(10, 30))
        )
        return Atom(kind, [str(n)], n, Fraction(n))
    if kind == "fraction":
        q = Fraction(
            sign * rng.randint(1, 200), rng.choice((3, 6, 7, 9, 11, 12, 13, 4, 8, 40, 125))
        )
        if q.denominator == 1:
            q += Fraction(1, 3)
        forms = [_frac(q), f"{q.numerator}/{q.denominator}", _frac(q).replace("\\frac", "\\dfrac")]
        return Atom(kind, forms, mpmath.mpf(q.numerator) / q.denominator, q)
    if kind == "decimal":
        text = f"{sign * rng.randint(1, 99999) / 10 ** rng.randint(1, 4):.{rng.randint(1, 4)}f}"
        q = Fraction(Decimal(text))
        return Atom(kind, [text], mpmath.mpf(text), q)
    if kind == "sci":
        mant, exp = f"{sign * rng.randint(10, 9999) / 1000:.3g}", rng.randint(-45, 45)
        forms = [f"{mant}e{exp}", f"{mant} \\times 10^{{{exp}}}"]
        q = Fraction(Decimal(mant)) * Fraction(10) ** exp
        return Atom(kind, forms, mpmath.mpf(mant) * mpmath.mpf(10) ** exp, q)
    if kind == "root":
        n, k, m = (
            rng.choice((2, 3, 5, 6, 7, 10, 11, 13, 17, 19, 23)),
            rng.randint(1, 9),
            rng.randint(1, 5),
        )
        head = "" if k == 1 else str(k)
        forms = [f"{head}\\sqrt{{{n}}}", f"\\sqrt{{{k * k * n}}}"]
        if m > 1:
            forms = [f"\\frac{{{f}}}{{{m}}}" for f in forms]
        if rng.random() < 0.3:
            forms = [f"\\sqrt[3]{{{n}}}", f"{n}^{{1/3}}"]
            return Atom(kind, forms, mpmath.cbrt(n), None)
        return Atom(kind, forms, k * mpmath.sqrt(n) / m, None)
    if kind == "pi":
        k, m = rng.randint(1, 12), rng.choice((1, 2, 3, 4, 6, 180))
        head = "" if k == 1 else str(k)
        forms = [f"{head}\\pi" if m == 1 else f"\\frac{{{head}\\pi}}{{{m}}}"]
        forms.append(f"{k}\\pi/{m}" if m > 1 else f"{k} \\cdot \\pi")
        return Atom(kind, forms, k * mpmath.pi / m, None)
    exp = rng.randint(-40, 40)
    base, value = rng.choice((("\\sqrt{2}", mpmath.sqrt(2)), ("\\pi", mpmath.pi), ("e", mpmath.e)))
    forms = [f"{base} \\times 10^{{{exp}}}", f"10^{{{exp}}} {base}"]
    return Atom(kind, forms, value * mpmath.mpf(10) ** exp, None)


_STYLES = ("fixed", "fixed", "e", "times", "cdot")
_DELTAS = (1e-5, 3e-6, 1.5e-6, 5e-7, 1e-7, 1e-8)


def answers(atom: Atom, rng: random.Random) -> list[tuple[str, str]]:
    """(variant, answer) for a gold atom: other spellings, exact and rounded decimals,
    near-misses, 10x off, the sign flipped."""
    out = [("spelling", form) for form in atom.forms[1:]]
    if atom.exact is not None:
        q = atom.exact
        out.append(("unreduced", _frac(q, 2)))
        if q.denominator == 1 and abs(q) < 10**15:
            out.append(("point-zero", f"{q.numerator}.0"))
    for sig in rng.sample((3, 4, 5, 6, 7, 8, 9, 10, 12, 15, 20), 4):
        out.append((f"round{sig}", sci(atom.value, sig, rng.choice(_STYLES))))
    for delta in rng.sample(_DELTAS, 3):
        near = atom.value * (1 + rng.choice((-1, 1)) * mpmath.mpf(delta))
        out.append((f"near{delta:g}", sci(near, 15, rng.choice(_STYLES))))
    out.append(("10x", sci(atom.value * 10, 8, rng.choice(_STYLES))))
    if atom.value != 0:
        out.append(("negated", sci(-atom.value, 10, rng.choice(_STYLES))))
    return out


def _percents(rng: random.Random) -> list[Pair]:
    x = rng.choice((rng.randint(1, 150), rng.randint(1, 999) / 10, rng.randint(1, 99) / 1000))
    text, hundredth = f"{x:g}", f"{x / 100:.8g}"
    pairs = [(f"{text}%", a) for a in (text, f"{text}\\%", hundredth, f"{text} \\text{{ percent}}")]
    pairs += [(text, a) for a in (f"{text}\\%", f"{x * 100:g}\\%", f"{text} percent", hundredth)]
    pairs += [(text, f"{x:.2f}\\%"), (f"{x:.2f}", f"{text}\\%"), (f"-{text}", f"-{text}.\\%")]
    pairs.append((f"{text}%", sci(mpmath.mpf(text) * (1 + mpmath.mpf(1e-7)), 12, "fixed")))
    return [("percent", g, a) for g, a in pairs]


_SHAPES = (
    ("tuple", "({}, {})"),
    ("tuple", "\\left( {}, {} \\right)"),
    ("interval", "[{}, {})"),
    ("interval", "({}, {}]"),
    ("set", "\\{{{}, {}\\}}"),
    ("list", "{}, {}"),
    ("matrix", "\\begin{{pmatrix}} {} \\\\ {} \\end{{pmatrix}}"),
    ("matrix", "\\begin{{pmatrix}} {} & {} \\end{{pmatrix}}"),
)


def _structure(rng: random.Random) -> list[Pair]:
    shape, pattern = rng.choice(_SHAPES)
    first, second = sorted((_atom(rng), _atom(rng)), key=lambda a: a.value)
    if shape == "interval" and first.value == second.value:
        return []
    gold = pattern.format(first.forms[0], second.forms[0])
    pairs = []
    for _ in range(4):
        (va, a), (vb, b) = rng.choice(answers(first, rng)), rng.choice(answers(second, rng))
        if rng.random() < 0.5:
            (va, a), (vb, b) = ("spelling", first.forms[-1]), (vb, b)
        if shape in ("set", "list") and rng.random() < 0.5:
            a, b = b, a
        pairs.append((f"{shape}/{va}+{vb}", gold, pattern.format(a, b)))
    return pairs


# Decorations models and golds put around a number: units (text, words, powers), currency,
# degrees, ordinals, approximately, congruences, percent words, math delimiters, spacing.
_ANSWER_DRESS = (
    "{} \\text{{ cm}}",
    "{}\\text{{m}}^2",
    "{} \\mbox{{ inches}}^2",
    "{}\\,\\text{{kg m}}^{{-2}}",
    "{} \\mathrm{{ kg}}",
    "{} \\textit{{units}}",
    "{} miles",
    "{}weeks",
    "{} cm^2",
    "{} m",
    "\\${}",
    "{}\\,€",
    "£{}",
    "{}^{{\\circ}}",
    "{}^\\circ",
    "{}\\degree",
    "\\approx {}",
    "{}.",
    "x = {}",
    "{} \\text{{ percent}}",
    "{} percent",
    "{}%",
    "n \\equiv {} \\pmod{{17}}",
    "x \\equiv {} \\ (\\text{{mod }} 9)",
    "{}^{{th}}",
    "{}^{{\\text{{nd}}}}",
    "{}rd",
    "\\quad {}",
    "${}$",
    "\\({}\\)",
    "\\left( {} \\right)",
    "{}\\!",
    "\\textbf{{{}}}",
    "\\text{{{}}}",
    "{} \\text{{ for }} x > 0",
    "{}$, where $x$ is real",
    "{} \\, \\text{{s}}",
)
_GOLD_DRESS = (
    "{} cm",
    "{} \\text{{ m}}",
    "{} \\mbox{{ inches}}^2",
    "${}$ miles",
    "\\${}",
    "{}$.",
    "${}$",
    "\\quad {}",
    "{}%",
    "{}\\%",
    "{}^\\circ",
    "\\text{{{}}}",
    "x = {}",
    "{} \\text{{ units}}",
    "{} kcal m^{{-2}} yr^{{-1}}",
    "\\boxed{{{}}}",
    "{}\\,\\text{{s}}",
    "{} m",
)
# Golds that are not numbers: equations, expressions of variables, complex numbers, infinity.
_FORMS = (
    ("2x+3", ("3+2x", "2x+4", "x = 2x+3", "y = 2x+3", "f(x) = 2x+3", "5", "2x + 3 \\text{ cm}")),
    ("y=2x+3", ("f(x)=2x+3", "y = 3+2x", "2x+3", "x=2x+3", "y=2x-3", "g(x)=2x+3")),
    ("x=5", ("5", "x = 5.0", "y=5", "x=\\frac{10}{2}", "x = 6", "x \\in \\{5\\}", "5 m")),
    ("p - q", ("-q+p", "7", "q - p", "p-q+0", "(p - q)")),
    ("\\frac{a}{b}", ("a/b", "\\frac{2a}{2b}", "\\frac{b}{a}", "0.5", "ab^{-1}")),
    ("x^2-1", ("(x-1)(x+1)", "x^2+1", "0", "-1+x^2", "x²-1")),
    ("\\sqrt{x}", ("x^{1/2}", "x^{0.5}", "\\sqrt{x} \\text{ m}", "x")),
    ("3+4i", ("4i+3", "3-4i", "5", "3+4 i", "(3, 4)", "i(4-3i)")),
    ("-1", ("i^2", "i^{2}", "-1.0", "1", "e^{i\\pi}")),
    ("\\infty", ("\\infty", "-\\infty", "+\\infty", "\\infty \\text{ m}", "10^{100}", "oo")),
    (
        "(-\\infty, 3]",
        ("(-\\infty,3]", "x \\le 3", "(-\\infty, 3)", "[3, \\infty)", "t(-\\infty, 3]"),
    ),
    ("\\{1, 2, 3\\}", ("\\{3, 2, 1\\}", "1, 2, 3", "(1, 2, 3)", "\\{1, 2\\}", "[1, 3]", "1,2,3,3")),
    (
        "(1, 2, 3)",
        ("(3, 2, 1)", "\\{1, 2, 3\\}", "1, 2, 3", "\\begin{pmatrix}1\\\\2\\\\3\\end{pmatrix}"),
    ),
    (
        "\\begin{pmatrix}1 & 2\\\\3 & 4\\end{pmatrix}",
        (
            "\\begin{bmatrix}1 & 2\\\\3 & 4\\end{bmatrix}",
            "\\begin{pmatrix}1 & 3\\\\2 & 4\\end{pmatrix}",
            "\\begin{pmatrix}1 & 2 & 3 & 4\\end{pmatrix}",
            "(1, 2, 3, 4)",
        ),
    ),
    ("5!", ("120", "5 \\cdot 4!", "\\frac{6!}{6}", "119", "2^{100}")),
    (
        "2^{100}",
        ("1267650600228229401496703205376", "1.2676506 \\times 10^{30}", "4^{50}", "2^{101}"),
    ),
    ("\\log_2 8", ("3", "\\frac{\\ln 8}{\\ln 2}", "3.0000001", "2.9")),
    (
        "\\sin\\frac{\\pi}{6}",
        ("\\frac{1}{2}", "0.5", "\\cos\\frac{\\pi}{3}", "\\sin 30^\\circ", "0.4999"),
    ),
    ("e^{2}", ("\\exp(2)", "7.389056", "7.39", "e^2", "2e")),
    ("0", ("-0", "0.0", "0\\%", "0 \\text{ cm}", "10^{-30}", "\\frac{0}{5}")),
    ("\\frac{1}{0}", ("\\frac{1}{0}", "\\infty", "1/0", "2/0")),
    ("1:30", ("1:30", "\\frac{1}{30}", "90", "1.5", "13:30")),
    ("A", ("A", "(A)", "\\text{(A) 5}", "a", "A^2", "B")),
    ("\\text{yes}", ("yes", "Yes", "\\text{no}", "y")),
    ("2\\sqrt{5}", ("√20", "2√5", "\\sqrt{20}", "4.472136", "√21", "2 √5")),
    (
        "\\frac{37}{4} m",
        ("9.25 m", "9.25", "\\frac{37m}{4}", "9.25\\text{ m}", "9.25 {m}", "37m/4"),
    ),
    ("6-5i", ("6 - 5i", "-5i+6", "6-5 i", "6+5i", "6-5j", "6 - 5\\,i")),
)


def _dressed(rng: random.Random) -> list[Pair]:
    """A number's answer variants with a decoration, and a decorated gold against them."""
    atom = _atom(rng)
    if atom.kind not in ("int", "fraction", "decimal", "sci"):
        n = rng.randint(1, 999)
        atom = Atom("int", [str(n)], n, Fraction(n))
    pairs = []
    for variant, answer in [*rng.sample(answers(atom, rng), 3), ("itself", atom.forms[0])]:
        dress = rng.choice(_ANSWER_DRESS)
        pairs.append((f"dressed/{variant}", atom.forms[0], dress.format(answer)))
        gold = rng.choice(_GOLD_DRESS).format(atom.forms[0])
        pairs.append((f"dressed-gold/{variant}", gold, rng.choice(("{}", dress)).format(answer)))
    return pairs


def _forms(rng: random.Random) -> list[Pair]:
    """A gold that is no plain number against its answers, one of them dressed."""
    gold, found = rng.choice(_FORMS)
    pairs = [("form", gold, answer) for answer in found]
    pairs.append(("form/dressed", gold, rng.choice(_ANSWER_DRESS).format(rng.choice(found))))
    pairs.append(("form/swapped", rng.choice(found), gold))
    return pairs


def generate(seed: int, scale: float) -> list[Pair]:
    """The fuzz pairs: scalars with their answer variants, percents, structures, dressed
    numbers, and golds that are no plain number."""
    rng = random.Random(seed)
    pairs: list[Pair] = []
    for _ in range(int(300 * scale)):
        atom = _atom(rng)
        pairs += [(f"{atom.kind}/{v}", atom.forms[0], a) for v, a in answers(atom, rng)]
    for _ in range(int(60 * scale)):
        pairs += _percents(rng)
    for _ in range(int(250 * scale)):
        pairs += _structure(rng)
    for _ in range(int(150 * scale)):
        pairs += _dressed(rng)
    for _ in range(int(40 * scale)):
        pairs += _forms(rng)
    return list(dict.fromkeys(pairs))


def data_pairs() -> list[Pair]:
    """Every math gold of `data/`, and every gold of other graders' test suites
    (`tests/data/public_golds.json`), against itself, its standard rewriting and the next
    gold."""
    from llmeval.tasks import DATA_DIR, TASKS
    from tests.support.gold_rewrite import rewrite

    lists = {}
    for name in sorted(name for name, task in TASKS.items() if task.kind == "math"):
        lists[f"data/{name}"] = [
            json.loads(ln)["answer"] for ln in (DATA_DIR / f"{name}.jsonl").open()
        ]
    public = json.loads((ROOT / "tests" / "data" / "public_golds.json").read_text())["sources"]
    for source in public:
        lists[f"public/{source['repo']}"] = source["golds"]
    pairs = []
    for category, golds in lists.items():
        for i, gold in enumerate(golds):
            for answer in (gold, rewrite(gold), golds[(i + 1) % len(golds)]):
                pairs.append((category, gold, answer))
    return list(dict.fromkeys(pairs))


def _assigned(path: Path, names: tuple[str, ...]) -> list[tuple[str, ...]]:
    """The tuples of the module-level lists `names` of a source file, read without importing."""
    found: list[tuple[str, ...]] = []
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            if getattr(target, "id", "") in names:
                found += [tuple(row) for row in ast.literal_eval(node.value)]
    return found


def _rules(root: Path) -> dict[str, list[tuple[str, ...]]]:
    """A tree's rule examples: the rule tables (docs/verifier.md, the README before it), and
    (before issue 32) the RULES lists of its verify modules."""
    verify = root / "llmeval" / "verify"
    pages = (root / "docs" / "verifier.md", root / "README.md")  # the tables' home, then before
    found = readme_rules.page_rules("\n".join(p.read_text() for p in pages if p.exists()))
    found["gold"] += _assigned(verify / "gold.py", ("RULES",))
    found["shared"] += _assigned(verify / "gold.py", ("SHARED_RULES",))
    found["answer"] += _assigned(verify / "answer.py", ("RULES",))
    found["shape"] += _assigned(verify / "shapes.py", ("RULES",))
    return found


def rule_pairs(roots: list[Path]) -> list[Pair]:
    """The examples of the documented rules of every tree in `roots` (a rule removed here is
    still tested), as pairs (`readme_rules.rule_pairs`)."""
    pairs = [
        (f"rule/{table}", gold, answer)
        for root in roots
        for table, _, gold, answer in readme_rules.rule_pairs(_rules(root))
    ]
    return list(dict.fromkeys(pairs))


def table_rows() -> list[tuple[str, str, str | None, str | None]]:
    """(gold, answer, expected strict, expected lenient) of test_verdict_semantics.ROWS (one
    policy each) and of the verdict rules table (both)."""
    rows = [
        (gold, answer, *((expected, None) if policy == "strict" else (None, expected)))
        for gold, answer, policy, expected, _ in readme_rules.semantic_rows(TABLE)
    ]
    for _, gold, answer, strict, lenient in readme_rules.rule_rows(readme_rules.VERDICTS):
        rows.append((gold, answer, strict, lenient))
    return rows


# ---------------------------------------------------------------------------------------
# the verifiers, each in its own process


class _Alarm(BaseException):
    """A pair over its time (a BaseException: math-verify swallows Exception)."""


def worker(mode: str) -> None:
    """Read [gold, answer] pairs as JSON on stdin, write [strict, lenient] verdicts as JSON."""
    try:  # the verifier entry; `policy` in revisions before issue 24
        from llmeval.verify import verifier as policy
    except ImportError:
        from llmeval.verify import policy  # type: ignore[no-redef]

    if mode == "veto":
        from llmeval.verify.equations import prepare

        try:
            from llmeval.verify.numbers import compare
        except ImportError:  # before issue 32: matching.py
            from llmeval.verify.matching import compare  # type: ignore[no-redef]

        def veto_equal(gold_parsed: list, answer_parsed: list, full: bool = True) -> bool:
            gold_parsed, answer_parsed = prepare(gold_parsed, answer_parsed)
            said = policy._math_verify().verify(
                gold_parsed,
                answer_parsed,
                float_rounding=policy.FLOAT_ROUNDING,
                numeric_precision=policy.NUMERIC_PRECISION,
                strict=True,
                allow_set_relation_comp=False,
                timeout_seconds=None,
            )
            return bool(said) and compare(gold_parsed, answer_parsed) is not False

        policy._equal = veto_equal

    def alarm(*_: object) -> None:
        raise _Alarm

    signal.signal(signal.SIGALRM, alarm)
    verdicts = []
    for gold, answer in json.load(sys.stdin):
        signal.alarm(20)
        try:
            strict, lenient, _ = policy.verify(gold=gold, answer=answer)
            verdicts.append([strict, lenient or strict])
        except _Alarm:
            verdicts.append(["timeout", "timeout"])
        except Exception as exc:
            verdicts.append([f"error {type(exc).__name__}", f"error {type(exc).__name__}"])
        finally:
            signal.alarm(0)
    json.dump(verdicts, sys.stdout)


def run(
    pairs: list[tuple[str, str]], root: Path, mode: str
) -> tuple[list[list[str]], tuple[float, float]]:
    """The verdicts of the llmeval found first in `root`, and the (wall, CPU) seconds it took."""
    code = f"import sys; sys.path[:0] = [{str(root)!r}, {str(ROOT)!r}]; "
    code += f"from bench.fuzz_verify import worker; worker({mode!r})"
    start, cpu = time.perf_counter(), _child_cpu()
    done = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(pairs),
        capture_output=True,
        text=True,
        cwd=root,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"the {mode} verifier in {root} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout), (time.perf_counter() - start, _child_cpu() - cpu)


def _child_cpu() -> float:
    """User + system CPU seconds of the finished child processes."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def checkout(ref: str, into: Path) -> Path:
    """The llmeval package of git revision `ref`, unpacked under `into`."""
    archive = into / "ref.tar"
    has_docs = subprocess.run(
        ["git", "-C", str(ROOT), "cat-file", "-e", f"{ref}:docs/verifier.md"], capture_output=True
    )
    paths = ["llmeval", "README.md"] + (["docs/verifier.md"] if has_docs.returncode == 0 else [])
    subprocess.run(["git", "-C", str(ROOT), "archive", "-o", str(archive), ref, *paths], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    return into


def _differences(name: str, pairs: list[Pair], old: list[list[str]], new: list[list[str]]) -> str:
    rows = [
        (*pair, "/".join(o), "/".join(n))
        for pair, o, n in zip(pairs, old, new, strict=True)
        if o != n
    ]
    print(f"\n{name}: {len(rows)} pairs differ (verdicts strict/lenient)")
    for category, gold, answer, o, n in rows:
        print(f"  {category:28} gold {gold!r:40} answer {answer!r:40} {o} -> {n}")
    by_kind = Counter(f"{row[0].split('/')[0]} {row[3]} -> {row[4]}" for row in rows)
    return f"{len(rows)} {dict(sorted(by_kind.items()))}" if rows else "0"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ref", default="main", help="git revision to compare with (main)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--scale", type=float, default=1.0, help="more or fewer pairs")
    parser.add_argument("--no-veto", action="store_true", help="skip the veto candidate")
    parser.add_argument("--data", action="store_true", help="add the golds of data/ (slow)")
    args = parser.parse_args()
    rows = table_rows()
    with tempfile.TemporaryDirectory() as tmp:
        tree = checkout(args.ref, Path(tmp))
        fuzz = generate(args.seed, args.scale)
        if args.data:
            fuzz = list(dict.fromkeys(fuzz + data_pairs() + rule_pairs([ROOT, tree])))
        pairs = fuzz + [("table", g, a) for g, a, _, _ in rows]
        texts = [(g, a) for _, g, a in pairs]
        ref, ref_s = run(texts, tree, "this")
    this, this_s = run(texts, ROOT, "this")
    figures = [("pairs (fuzz + table rows)", f"{len(fuzz)} + {len(rows)}")]
    figures.append(
        (
            f"ref ({args.ref}) vs this: pairs that differ",
            _differences(f"{args.ref} -> this", pairs, ref, this),
        )
    )
    verifiers = {f"ref ({args.ref})": ref, "this": this}
    seconds = {f"ref ({args.ref})": ref_s, "this": this_s}
    if not args.no_veto:
        veto, seconds["veto"] = run(texts, ROOT, "veto")
        verifiers["veto"] = veto
        blocked = _differences("this -> veto", pairs, this, veto)
        figures.append(("this vs veto: pairs that differ", blocked))
    for name, verdicts in verifiers.items():
        got = verdicts[len(fuzz) :]
        wrong = [
            (row, policy, expected)
            for row, verdict in zip(rows, got, strict=True)
            for policy, expected, said in zip(("strict", "lenient"), row[2:], verdict, strict=True)
            if expected is not None and said != expected
        ]
        for (gold, answer, *_), policy, expected in wrong:
            print(f"  {name}: table row {gold!r} / {answer!r} ({policy}) expected {expected}")
        counts = Counter(v[0] for v in verdicts[: len(fuzz)])
        figures.append((f"{name}: table rows wrong", len(wrong)))
        figures.append((f"{name}: strict verdicts of the fuzz", dict(sorted(counts.items()))))
        wall, cpu = seconds[name]
        figures.append((f"{name}: seconds (wall, CPU)", f"{wall:.1f}, {cpu:.1f}"))
    print("\nfigures")
    for label, value in figures:
        print(f"  {label:45} {value}")


if __name__ == "__main__":
    main()
