"""Small hand-written inline SVG charts: lines, sorted bars, overlaid histograms.

Every label and attribute is escaped by `tag`, so callers may pass task names or problem ids.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

PALETTE = ("#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2")
W, H = 460, 280
LEFT, RIGHT, TOP, BOTTOM = 56, 14, 30, 44


@dataclass(frozen=True)
class Series:
    """One line: points (x, y); NaN y values break the line."""

    name: str
    xs: Sequence[float]
    ys: Sequence[float]
    dashed: bool = False


def tag(name: str, text: str | None = None, /, **attrs: object) -> str:
    """One SVG element; attribute names use `_` for `-`; floats get one decimal."""
    parts = [name]
    for key, value in attrs.items():
        shown = f"{value:.1f}" if isinstance(value, float) else str(value)
        parts.append(f'{key.rstrip("_").replace("_", "-")}="{escape(shown)}"')
    head = " ".join(parts)
    return f"<{head}/>" if text is None else f"<{head}>{text}</{name}>"


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """About `count` round tick values covering [lo, hi]."""
    if hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / count
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step - 1e-9) * step
    return [round(first + i * step, 10) for i in range(int((hi - first) / step + 1e-9) + 1)]


def fmt_num(v: float) -> str:
    """Short tick label: 0.25, 4k, 16k, 3."""
    if abs(v) >= 1024 and v % 1024 == 0:
        return f"{int(v) // 1024}k"
    if abs(v) >= 1000:
        return f"{v / 1000:g}k"
    return f"{v:.3g}"


class _Frame:
    """Plot area geometry and the axes' SVG."""

    def __init__(self, x_lo: float, x_hi: float, y_lo: float, y_hi: float, log2_x: bool) -> None:
        self.log2_x = log2_x
        self.x_lo, self.x_hi = self._tx(x_lo), self._tx(x_hi)
        if self.x_hi <= self.x_lo:
            self.x_hi = self.x_lo + 1
        self.y_lo, self.y_hi = y_lo, y_hi if y_hi > y_lo else y_lo + 1

    def _tx(self, x: float) -> float:
        return math.log2(x) if self.log2_x else x

    def px(self, x: float) -> float:
        return LEFT + (self._tx(x) - self.x_lo) / (self.x_hi - self.x_lo) * (W - LEFT - RIGHT)

    def py(self, y: float) -> float:
        return H - BOTTOM - (y - self.y_lo) / (self.y_hi - self.y_lo) * (H - TOP - BOTTOM)

    def axes(self, x_ticks: Sequence[float], y_ticks: Sequence[float], x_label: str, y_label: str):
        out = []
        for y in y_ticks:
            py = self.py(y)
            out.append(tag("line", class_="grid", x1=LEFT, x2=W - RIGHT, y1=py, y2=py))
            out.append(
                tag(
                    "text",
                    escape(fmt_num(y)),
                    class_="tick",
                    x=LEFT - 6,
                    y=py + 4,
                    text_anchor="end",
                )
            )
        for x in x_ticks:
            out.append(
                tag(
                    "text",
                    escape(fmt_num(x)),
                    class_="tick",
                    x=self.px(x),
                    y=H - BOTTOM + 16,
                    text_anchor="middle",
                )
            )
        out.append(tag("line", class_="axis", x1=LEFT, x2=W - RIGHT, y1=H - BOTTOM, y2=H - BOTTOM))
        out.append(tag("line", class_="axis", x1=LEFT, x2=LEFT, y1=TOP, y2=H - BOTTOM))
        out.append(
            tag(
                "text",
                escape(x_label),
                class_="label",
                x=(LEFT + W - RIGHT) / 2,
                y=H - 8,
                text_anchor="middle",
            )
        )
        turn = f"translate(14 {(TOP + H - BOTTOM) / 2}) rotate(-90)"
        out.append(
            tag("text", escape(y_label), class_="label", transform=turn, text_anchor="middle")
        )
        return out


def _svg(title: str, body: list[str]) -> str:
    head = tag("text", escape(title), class_="title", x=LEFT, y=18)
    inner = "".join([tag("title", escape(title)), head, *body])
    return tag(
        "svg",
        inner,
        class_="chart",
        viewBox=f"0 0 {W} {H}",
        width=W,
        height=H,
        xmlns="http://www.w3.org/2000/svg",
        role="img",
    )


def _legend(names: Sequence[str], colors: Sequence[str], dashes: Sequence[bool], low: bool):
    out = []
    x = W - RIGHT - 4
    y0 = H - BOTTOM - 10 - 14 * (len(names) - 1) if low else TOP + 4
    for i, (name, color, dashed) in enumerate(zip(names, colors, dashes, strict=True)):
        y = y0 + 14 * i
        extra = {"stroke_dasharray": "5 4"} if dashed else {}
        out.append(
            tag("line", x1=x - 18, x2=x, y1=y, y2=y, stroke=color, stroke_width=2.5, **extra)
        )
        out.append(tag("text", escape(name), class_="legend", x=x - 22, y=y + 4, text_anchor="end"))
    return out


def line_chart(
    series: Sequence[Series],
    *,
    title: str,
    x_label: str,
    y_label: str,
    log2_x: bool = False,
    y_range: tuple[float, float] | None = None,
    legend_low: bool = False,
) -> str:
    """Lines with point markers (tooltips give the values); NaN points break the line."""
    xs = [x for s in series for x in s.xs]
    ys = [y for s in series for y in s.ys if not math.isnan(y)]
    if not xs or not ys:
        return _svg(title, [tag("text", "no data", class_="label", x=W / 2, y=H / 2)])
    y_lo, y_hi = y_range or (min(0.0, min(ys)), max(ys) * 1.08 or 1.0)
    frame = _Frame(min(xs), max(xs), y_lo, y_hi, log2_x)
    body = frame.axes(sorted(set(xs)), nice_ticks(y_lo, y_hi), x_label, y_label)
    colors = [PALETTE[i % len(PALETTE)] for i in range(len(series))]
    for s, color in zip(series, colors, strict=True):
        dash = {"stroke_dasharray": "5 4"} if s.dashed else {}
        for run in _runs(s):
            pts = " ".join(f"{frame.px(x):.1f},{frame.py(y):.1f}" for x, y in run)
            body.append(
                tag("polyline", fill="none", stroke=color, stroke_width=2, points=pts, **dash)
            )
            for x, y in run:
                tip = tag("title", escape(f"{s.name}: {fmt_num(x)} → {y:.4g}"))
                body.append(tag("circle", tip, cx=frame.px(x), cy=frame.py(y), r=3, fill=color))
    body.extend(_legend([s.name for s in series], colors, [s.dashed for s in series], legend_low))
    return _svg(title, body)


def _runs(s: Series) -> list[list[tuple[float, float]]]:
    runs: list[list[tuple[float, float]]] = [[]]
    for x, y in zip(s.xs, s.ys, strict=True):
        if math.isnan(y):
            runs.append([])
        else:
            runs[-1].append((x, y))
    return [r for r in runs if r]


def sorted_bars(values: Sequence[tuple[str, float]], *, title: str, x_label: str, y_label: str):
    """One bar per (name, value in 0-1), in the given order; each bar's tooltip names it."""
    frame = _Frame(0, max(len(values), 1), 0.0, 1.0, False)
    body = frame.axes([], nice_ticks(0, 1), x_label, y_label)
    width = max((W - LEFT - RIGHT) / max(len(values), 1) - 0.5, 0.5)
    for i, (name, v) in enumerate(values):
        y = frame.py(v)
        tip = tag("title", escape(f"{name}: {v:.3f}"))
        body.append(
            tag(
                "rect", tip, x=frame.px(i), y=y, width=width, height=H - BOTTOM - y, fill=PALETTE[0]
            )
        )
    return _svg(title, body)


def histogram(
    edges: Sequence[float],
    counts: Sequence[tuple[str, Sequence[float]]],
    *,
    title: str,
    x_label: str,
    y_label: str,
    colors: Sequence[str] = ("#16a34a", "#dc2626"),
) -> str:
    """Overlaid translucent histograms over shared bin edges."""
    top = max((c for _, cs in counts for c in cs), default=0) or 1
    frame = _Frame(edges[0], edges[-1], 0, top * 1.08, False)
    x_ticks = nice_ticks(edges[0], edges[-1])
    body = frame.axes(x_ticks, nice_ticks(0, top * 1.08), x_label, y_label)
    for (name, cs), color in zip(counts, colors, strict=False):
        for lo, hi, c in zip(edges, edges[1:], cs, strict=False):
            if c <= 0:
                continue
            x0, x1, y = frame.px(lo), frame.px(hi), frame.py(c)
            tip = tag("title", escape(f"{name} {fmt_num(lo)}-{fmt_num(hi)}: {c:g}"))
            body.append(
                tag(
                    "rect",
                    tip,
                    x=x0,
                    y=y,
                    width=max(x1 - x0 - 0.5, 0.5),
                    height=H - BOTTOM - y,
                    fill=color,
                    fill_opacity=0.45,
                )
            )
    names = [n for n, _ in counts]
    body.extend(_legend(names, list(colors[: len(names)]), [False] * len(names), False))
    return _svg(title, body)
