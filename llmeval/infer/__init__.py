"""The `infer` stage: plan what is missing (of the whole run or a shard), resume, run through
the chat client with one appender, record the settings, show progress and the summary."""
