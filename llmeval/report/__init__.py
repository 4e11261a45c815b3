"""The HTML report: its inputs (eval's runs and scores), data, charts, sections (overview,
leaderboard with rank ranges, per-sample grid, comparison, tokens and cost, judge, serving),
assets."""
