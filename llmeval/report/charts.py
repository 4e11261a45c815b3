"""Small hand-written inline SVG charts: lines over a log2 x axis, sorted bars, histograms.

Every label and attribute is escaped by `tag`, so callers may pass task names or problem ids.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Collection, Mapping, Sequence
from html import escape
from itertools import groupby

PALETTE = ("#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2")
HIST_COLORS = ("#16a34a", "#dc2626")  # correct, wrong
W, H = 460, 280
LEFT, RIGHT, TOP, BOTTOM = 56, 14, 30, 44
DASH = {"stroke_dasharray": "5 4"}
SVG_OPEN = (
    f'<svg class="chart" viewBox="0 0 {W} {H}" width="{W}" height="{H}" '
    'xmlns="http://www.w3.org/2000/svg" role="img">'
)


def tag(name: str, text: str | None = None, /, **attrs: object) -> str:
    """One SVG element; attribute names use `_` for `-`; floats get one decimal."""
    parts = [name]
    for key, value in attrs.items():
        shown = f"{value:.1f}" if isinstance(value, float) else str(value)
        parts.append(f'{key.rstrip("_").replace("_", "-")}="{escape(shown)}"')
    head = " ".join(parts)
    return f"<{head}/>" if text is None else f"<{head}>{text}</{name}>"


def _text(text: str, cls: str, anchor: str = "middle", **attrs: object) -> str:
    """A text element showing `text` (escaped)."""
    return tag("text", escape(text), class_=cls, text_anchor=anchor, **attrs)


def nice_ticks(lo: float, hi: float) -> list[float]:
    """About five round tick values covering [lo, hi] (its two ends where the span is too small
    for floats to step through: a cost of 1e-321 dollars)."""
    if hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / 5
    if not 1e-290 < raw < 1e290:
        return [lo, hi]
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10, 20) if m * mag >= raw)
    first = math.ceil(lo / step - 1e-9) * step
    count = int((hi - first) / step + 1e-9) + 1
    return [float(f"{first + i * step:.10g}") for i in range(count)]  # (0.1 * 3 is 0.3)


def fmt_num(v: float) -> str:
    """Short tick label: 0.25, 4k, 16k, 3."""
    if abs(v) >= 1024 and v % 1024 == 0:
        return f"{int(v) // 1024}k"
    if abs(v) >= 1000:
        return f"{v / 1000:g}k"
    return f"{v:.3g}"


class _Frame:
    """The plot area: data to pixels (x on a log2 scale if asked) and the axes' SVG."""

    def __init__(self, x_lo: float, x_hi: float, y_lo: float, y_hi: float, log2_x: bool) -> None:
        self.tx = math.log2 if log2_x else float
        self.x_lo, self.x_span = self.tx(x_lo), (self.tx(x_hi) - self.tx(x_lo)) or 1.0
        self.y_lo, self.y_span = y_lo, (y_hi - y_lo if y_hi > y_lo else 1.0)

    def px(self, x: float) -> float:
        return LEFT + (self.tx(x) - self.x_lo) / self.x_span * (W - LEFT - RIGHT)

    def py(self, y: float) -> float:
        return H - BOTTOM - (y - self.y_lo) / self.y_span * (H - TOP - BOTTOM)

    def axes(
        self, x_ticks: Sequence[float], y_ticks: Sequence[float], x_label: str, y_label: str
    ) -> list[str]:
        """Grid lines and tick labels, the two axes and their labels."""
        out = []
        for y in y_ticks:
            py = self.py(y)
            out.append(tag("line", class_="grid", x1=LEFT, x2=W - RIGHT, y1=py, y2=py))
            out.append(_text(fmt_num(y), "tick", "end", x=LEFT - 6, y=py + 4))
        for x in x_ticks:
            out.append(_text(fmt_num(x), "tick", x=self.px(x), y=H - BOTTOM + 16))
        turn = f"translate(14 {(TOP + H - BOTTOM) / 2}) rotate(-90)"
        return [
            *out,
            tag("line", class_="axis", x1=LEFT, x2=W - RIGHT, y1=H - BOTTOM, y2=H - BOTTOM),
            tag("line", class_="axis", x1=LEFT, x2=LEFT, y1=TOP, y2=H - BOTTOM),
            _text(x_label, "label", x=(LEFT + W - RIGHT) / 2, y=H - 8),
            _text(y_label, "label", transform=turn),
        ]


TITLE_CHARS = 60  # a title line at most this long fits the chart's width (12px bold)
TITLE_LINE = 14  # pixels between title lines


def _svg(title: str, body: list[str], below: int = 0) -> str:
    """The chart: its title on as many lines as it needs above the plot (a long task or model
    name is never cut at the edge), the plot moved down by the lines added; `below` pixels
    more under it (a legend there)."""
    lines = textwrap.wrap(title, TITLE_CHARS) or [""]
    extra = TITLE_LINE * (len(lines) - 1)
    head = tag("title", escape(title)) + "".join(
        _text(line, "title", "start", x=8, y=18 + TITLE_LINE * i) for i, line in enumerate(lines)
    )
    height = H + extra + below
    opened = SVG_OPEN.replace(f"0 0 {W} {H}", f"0 0 {W} {height}")
    opened = opened.replace(f'height="{H}"', f'height="{height}"')
    plot = (
        "".join(body) if not extra else f'<g transform="translate(0 {extra})">{"".join(body)}</g>'
    )
    return f"{opened}{head}{plot}</svg>"


LEGEND_ROW = 14  # pixels between legend lines
LEGEND_X = 12  # where a row of the legend under the plot starts
CHAR_PX = 6.8  # at least the width of a character of the legend's 10px font (6.5 in Chromium)
# a longer name is cut in the legend under the plot (whole in its tooltip)
LEGEND_CHARS = int((W - RIGHT - LEGEND_X - 22) / CHAR_PX)


def _legend(entries: Sequence[tuple[str, str, bool]], low: bool = False) -> list[str]:
    """(name, color, dashed) entries at the top right, or just above the x axis if `low`."""
    out = []
    x = W - RIGHT - 4
    y0 = H - BOTTOM - 10 - LEGEND_ROW * (len(entries) - 1) if low else TOP + 4
    for i, (name, color, dashed) in enumerate(entries):
        out += _key(x - 18, y0 + LEGEND_ROW * i, color, dashed)
        out.append(_text(name, "legend", "end", x=x - 22, y=y0 + LEGEND_ROW * i + 4))
    return out


def _key(x: float, y: float, color: str, dashed: bool) -> list[str]:
    style = DASH if dashed else {}
    return [tag("line", x1=x, x2=x + 18, y1=y, y2=y, stroke=color, stroke_width=2.5, **style)]


def _legend_below(entries: Sequence[tuple[str, str, bool]]) -> tuple[list[str], int]:
    """(name, color, dashed) entries in rows under the plot and its x label, where they cover
    no data however many there are: the elements and the height they take."""
    out: list[str] = []
    x, y = float(LEGEND_X), H + 6.0
    for name, color, dashed in entries:
        shown = name if len(name) <= LEGEND_CHARS else name[: LEGEND_CHARS - 1] + "…"
        width = 22 + CHAR_PX * len(shown)
        if x > LEGEND_X and x + width > W - RIGHT:
            x, y = float(LEGEND_X), y + LEGEND_ROW
        out += _key(x, y, color, dashed)
        out.append(tag("text", tag("title", escape(name)) + escape(shown), class_="legend",
                       text_anchor="start", x=x + 22, y=y + 4))  # fmt: skip
        x += width + 12
    return out, int(y - H + LEGEND_ROW) if entries else 0


def line_chart(
    title: str,
    x_label: str,
    y_label: str,
    xs: Sequence[float],
    lines: Mapping[str, Sequence[float]],
    *,
    dashed: Collection[str] = (),
    y_range: tuple[float, float] | None = None,
    legend: str = "top",
) -> str:
    """Named lines over shared xs (log2 scale) with point markers whose tooltips give the
    values; a NaN breaks its line. The legend at the top right, `low` (above the x axis) or
    `below` the plot."""
    ys = [y for line in lines.values() for y in line if not math.isnan(y)]
    if not xs or not ys:
        return _svg(title, [_text("no data", "label", x=W / 2, y=H / 2)])
    y_lo, y_hi = y_range or (min(0.0, *ys), max(ys) * 1.08 or 1.0)
    frame = _Frame(min(xs), max(xs), y_lo, y_hi, log2_x=True)
    body = frame.axes(sorted(set(xs)), nice_ticks(y_lo, y_hi), x_label, y_label)
    keys = [(name, color, name in dashed) for name, color in zip(lines, PALETTE, strict=False)]
    for (name, line), color in zip(lines.items(), PALETTE, strict=False):
        style = DASH if name in dashed else {}
        for broken, run in groupby(zip(xs, line, strict=True), key=lambda p: math.isnan(p[1])):
            if broken:
                continue
            points = [(frame.px(x), frame.py(y), f"{name}: {fmt_num(x)} → {y:.4g}") for x, y in run]
            pts = " ".join(f"{x:.1f},{y:.1f}" for x, y, _ in points)
            body.append(
                tag("polyline", fill="none", stroke=color, stroke_width=2, points=pts, **style)
            )
            for x, y, tip in points:
                body.append(tag("circle", tag("title", escape(tip)), cx=x, cy=y, r=3, fill=color))
    if legend == "below":
        under, height = _legend_below(keys)
        return _svg(title, body + under, height)
    return _svg(title, body + _legend(keys, legend == "low"))


def _bar(frame: _Frame, lo: float, hi: float, value: float, tip: str, **style: object) -> str:
    """A bar over [lo, hi) up to `value`, with `tip` as its tooltip."""
    x, y = frame.px(lo), frame.py(value)
    width = max(frame.px(hi) - x - 0.5, 0.5)
    return tag(
        "rect", tag("title", escape(tip)), x=x, y=y, width=width, height=H - BOTTOM - y, **style
    )


def sorted_bars(title: str, x_label: str, y_label: str, values: Sequence[tuple[str, float]]) -> str:
    """One bar per (name, value in 0-1), in the given order; each bar's tooltip names it."""
    frame = _Frame(0, max(len(values), 1), 0.0, 1.0, log2_x=False)
    body = frame.axes([], nice_ticks(0, 1), x_label, y_label)
    for i, (name, v) in enumerate(values):
        body.append(_bar(frame, i, i + 1, v, f"{name}: {v:.3f}", fill=PALETTE[0]))
    return _svg(title, body)


def histogram(
    title: str,
    x_label: str,
    y_label: str,
    edges: Sequence[float],
    counts: Mapping[str, Sequence[float]],
) -> str:
    """Overlaid translucent histograms (in `HIST_COLORS`) over shared bin edges."""
    top = (max((c for cs in counts.values() for c in cs), default=0) or 1) * 1.08
    frame = _Frame(edges[0], edges[-1], 0, top, log2_x=False)
    body = frame.axes(nice_ticks(edges[0], edges[-1]), nice_ticks(0, top), x_label, y_label)
    for (name, cs), color in zip(counts.items(), HIST_COLORS, strict=False):
        for lo, hi, c in zip(edges, edges[1:], cs, strict=False):
            if c > 0:
                tip = f"{name} {fmt_num(lo)}-{fmt_num(hi)}: {c:g}"
                body.append(_bar(frame, lo, hi, c, tip, fill=color, fill_opacity=0.45))
    legend = [(name, color, False) for name, color in zip(counts, HIST_COLORS, strict=False)]
    return _svg(title, body + _legend(legend))
