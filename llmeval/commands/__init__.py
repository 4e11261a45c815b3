"""Subcommands of the command line, one module each: `register(subparsers)` and `run(args)`."""
