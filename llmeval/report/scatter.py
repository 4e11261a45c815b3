"""A scatter chart with vertical error bars (inline SVG, like `charts`): one point per named
item, its colour and name in the legend, its values in its tooltip."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from llmeval.report.charts import PALETTE, _Frame, _legend_below, _svg, nice_ticks, tag


def scatter(
    title: str, x_label: str, y_label: str, points: Sequence[tuple[str, float, float, float]]
) -> str:
    """(name, x, y, y's stderr) points over x from 0 and y in 0-1, each with a ±1 stderr bar;
    the legend below the plot."""
    x_hi = max((x for _, x, _, _ in points), default=0.0) * 1.1 or 1.0
    frame = _Frame(0.0, x_hi, 0.0, 1.0, log2_x=False)
    body = frame.axes(nice_ticks(0.0, x_hi), nice_ticks(0.0, 1.0), x_label, y_label)
    legend = []
    for i, (name, x, y, err) in enumerate(points):
        color = PALETTE[i % len(PALETTE)]
        px, low, high = frame.px(x), frame.py(max(0.0, y - err)), frame.py(min(1.0, y + err))
        body.append(tag("line", x1=px, x2=px, y1=low, y2=high, stroke=color, stroke_width=1.5))
        tip = f"{name}: {x:.4g} → {100 * y:.1f}% ± {100 * err:.1f}"
        body.append(tag("circle", tag("title", escape(tip)), cx=px, cy=frame.py(y), r=4.5,
                        fill=color))  # fmt: skip
        legend.append((name, color, False))
    under, height = _legend_below(legend)  # under the plot: never over a point
    return _svg(title, body + under, height)
