"""`python -m llmeval`."""

from llmeval.cli import entry

entry()
