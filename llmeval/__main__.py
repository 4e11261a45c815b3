"""`python -m llmeval`."""

from llmeval.cli import entry

# Guarded: verifier workers start from a forkserver, which imports this module again.
if __name__ == "__main__":
    entry()
