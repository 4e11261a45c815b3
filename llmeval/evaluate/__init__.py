"""The `eval` stage: read generation files as runs (ours, upstream's, other harnesses'; a file
with its shards), read each policy's answer, verify it (and ask the judge), score each run, and
print the table, the export and the runs in progress."""
