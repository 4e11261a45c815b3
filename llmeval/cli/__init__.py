"""The command line: the parser and one module per command."""
