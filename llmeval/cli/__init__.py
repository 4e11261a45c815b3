"""The command line: the parser, one module per command, `--follow` (`follow.py`) and options
made from flags (`flags.py`)."""
