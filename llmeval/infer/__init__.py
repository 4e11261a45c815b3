"""The `infer` stage: plan what is missing, resume, run, show progress."""
