"""Helpers the test suite and the benchmarks share: running dbt in-process on this project, and
rendering the committed profile. Real dbt, real Spark: nothing here fakes either."""
