"""The per-problem x per-sample grid of each run: one cell per sample, a glyph and a colour per
kind (so it reads in grey and to a screen reader), problems sorted by solve rate. The cells
are drawn by the page's script from the problems data; a cell opens its sample's text."""

from __future__ import annotations

from html import escape

from llmeval.evaluate.samples import Sample
from llmeval.report.sections import note, section

# kind -> (glyph, what it means); the page's script and stylesheet use the same kinds
KINDS = {
    "correct": ("✓", "correct"),
    "incorrect": ("✗", "incorrect"),
    "no_answer": ("∅", "no answer"),
    "truncated": ("✂", "truncated at the token cap"),
    "gold": ("?", "gold unparsed: compared as text"),
    "judge": ("J", "overturned by the judge"),
    "error": ("!", "not verified: timeout or error"),
}


def cell_kind(sample: Sample, policy: str, gold_unparsed: bool) -> str:
    """What a sample's cell shows, first match wins: cut off at the token cap (wrong whatever
    it says), turned correct by the judge, no answer, not verified, its problem's gold
    unparsed (the verdict compared text), else correct or incorrect."""
    status = sample.status.get(policy, "")
    if sample.truncated:
        return "truncated"
    if sample.judge == "yes":
        return "judge"
    if status == "no_answer":
        return "no_answer"
    if status in ("timeout", "error"):
        return "error"
    if gold_unparsed:
        return "gold"
    return "correct" if status == "correct" else "incorrect"


def legend() -> str:
    """The glyphs and colours, as the grid draws them."""
    items = "".join(
        f'<li><span class="gc gc-{kind}" aria-hidden="true">{glyph}</span> {escape(text)}</li>'
        for kind, (glyph, text) in KINDS.items()
    )
    return f'<ul class="glegend">{items}</ul>'


GLYPHS = {kind: glyph for kind, (glyph, _) in KINDS.items()}
NAMES = {kind: text for kind, (_, text) in KINDS.items()}


def grid_section(has_samples: bool) -> str:
    """The section the script fills (`#grids`), with its legend; nothing without samples."""
    if not has_samples:
        return ""
    how = note(
        "One row per problem, sorted by solve rate (most solved first, so flaky problems sit "
        "in the middle); one cell per sample, by sample index. Click a cell (or press Enter "
        "on it) to open that sample's text in the problems table."
    )
    return section("grid", "Per-problem grid", legend(), how, '<div id="grids"></div>')
