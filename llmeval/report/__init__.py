"""The HTML report: its data, charts, sections and assets."""
