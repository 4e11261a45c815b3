"""The `eval` stage: read generation files, extract answers, score, print."""
