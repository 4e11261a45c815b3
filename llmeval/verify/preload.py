"""Imported by the verifier forkserver: math-verify loaded and warmed once, then inherited by
every worker forked from it (so a replaced worker starts in milliseconds)."""

from llmeval.verify.verifier import warm_up

warm_up()
