"""Pure serving figures from generation records: output tokens/s, latency, TTFT percentiles."""

from __future__ import annotations

import math
from collections.abc import Sequence

from llmeval.report.data import ReportSample

PERCENTILES = (50, 90, 99)
ALL_ENDPOINTS = "all"


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100) by linear interpolation between closest ranks; nan if empty."""
    vals = sorted(values)
    if not vals:
        return math.nan
    pos = (len(vals) - 1) * q / 100
    lo = math.floor(pos)
    hi = min(lo + 1, len(vals) - 1)
    return vals[lo] + (vals[hi] - vals[lo]) * (pos - lo)


def _summary(values: Sequence[float]) -> dict[str, float]:
    return {f"p{q}": percentile(values, q) for q in PERCENTILES}


def serving_figures(samples: Sequence[ReportSample]) -> dict[str, dict]:
    """Per endpoint (and "all" when several): request count, output tokens, and percentiles.

    Output tokens/s of a request is completion tokens over its decode time (latency minus
    time to first token when both are known, else latency). Requests without the needed
    fields are left out of that figure only.
    """
    by_endpoint: dict[str, list[ReportSample]] = {}
    for s in samples:
        by_endpoint.setdefault(s.endpoint or "unknown", []).append(s)
    out = {ep: _figures(rows) for ep, rows in sorted(by_endpoint.items())}
    if len(out) > 1:
        out[ALL_ENDPOINTS] = _figures(samples)
    return out


def _figures(rows: Sequence[ReportSample]) -> dict:
    tokens = [s.tokens for s in rows if s.tokens is not None]
    latency = [s.latency_s for s in rows if s.latency_s is not None]
    ttft = [s.ttft_s for s in rows if s.ttft_s is not None]
    rates = []
    for s in rows:
        if s.tokens is None or s.latency_s is None:
            continue
        decode = s.latency_s - (s.ttft_s or 0.0)
        if decode > 0:
            rates.append(s.tokens / decode)
    return {
        "requests": len(rows),
        "output_tokens": sum(tokens),
        "tokens_per_s": _summary(rates),
        "latency_s": _summary(latency),
        "ttft_s": _summary(ttft),
    }
