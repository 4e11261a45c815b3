"""A run, stage-neutral: one model on one task under one settings history, on disk as a file,
its shards or NeMo-Skills' seed files. Its files (`layout`), the one-run rule and its settings
history (`spec`), the pairs it plans, holds and misses (`pairs`), which rows are one sample
(`samples`), which texts are one problem (`problems`), and its names (`names`). infer, eval and
the report ask these modules; none of them imports a stage."""
