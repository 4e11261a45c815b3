"""`python -m llmeval`."""

import sys

try:
    from llmeval.cli.main import entry
except KeyboardInterrupt:  # Ctrl-C while importing: no traceback
    sys.exit(130)

# Guarded: verifier workers start from a forkserver, which imports this module again.
if __name__ == "__main__":
    entry()
