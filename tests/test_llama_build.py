"""The llama-server build's time left (issue 42.10): a range from the compile units done, the
time they took and how the rest of the build usually goes, never the rate of the first, small
units alone (it read "about 6 min left" at 5% of a 36-minute build)."""

from __future__ import annotations

import re

import pytest

from scripts.local.llama_build import TIME_SHARE, progress_line, seconds_left, time_share

BUILD_S = 36 * 60  # the build on a busy 2-core machine


def shown_range(line: str) -> tuple[int, int]:
    """The minutes left a progress line shows: `about 3-6 min left` (or `about 4 min left`)."""
    found = re.search(r"about (\d+)(?:-(\d+))? min left", line)
    assert found, line
    return int(found[1]), int(found[2] or found[1])


@pytest.mark.parametrize("percent", [2, 5, 10, 25, 40, 50, 60, 75, 90, 95, 99])
def test_the_range_holds_the_time_left_of_a_build_at_the_usual_pace(percent: int) -> None:
    elapsed = BUILD_S * time_share(percent / 100)
    low, high = shown_range(progress_line(percent, elapsed))
    assert low <= (BUILD_S - elapsed) / 60 <= high + 0.5


@pytest.mark.parametrize(("pace", "percent"), [(0.6, 5), (1.6, 5), (0.7, 40), (1.4, 40)])
def test_the_range_holds_when_the_rest_goes_faster_or_slower(pace: float, percent: int) -> None:
    """A busy machine's pace changes: the rest of the build at 0.6-1.6 times the pace so far
    (early) or 0.7-1.4 (at 40%) still ends inside the range shown."""
    elapsed = BUILD_S * time_share(percent / 100)
    low, high = shown_range(progress_line(percent, elapsed))
    assert low <= (BUILD_S - elapsed) * pace / 60 <= high + 0.5


def test_the_range_narrows_as_the_build_goes_on() -> None:
    widths = []
    for percent in (5, 25, 50, 75, 95):
        low, high = seconds_left(percent, BUILD_S * time_share(percent / 100)) or (0, 0)
        widths.append(high / low)
    assert widths == sorted(widths, reverse=True) and widths[-1] < 1.5 < widths[0]


def test_the_time_share_rises_from_nothing_to_the_whole_build() -> None:
    shares = [time_share(k / 100) for k in range(101)]
    assert shares[0] == 0 and shares[-1] == 1 and shares == sorted(shares)
    assert time_share(0.05) < 0.05  # the first units are the small, quick ones
    assert [u for u, _ in TIME_SHARE] == sorted(u for u, _ in TIME_SHARE)


def test_no_estimate_before_the_first_mark_nor_once_done() -> None:
    assert seconds_left(0, 30) is None and seconds_left(100, 600) is None
    assert progress_line(0, 12) == "building llama-server: 0% of its compile units after 12 s"
    assert progress_line(100, 455).endswith("after 8 min")
