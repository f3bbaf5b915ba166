"""Test support, beside the tests and not in the shipped package: running dbt in-process and in
subprocesses on this project, throwaway PostgreSQL, the browser, expected rows. Real dbt, real
Spark: nothing here fakes either. pytest puts the repository root on the path (pyproject.toml's
`pythonpath`), so the tests import it as `pytests.support`; so do `make screenshots` and the
benchmarks that run dbt (bench/plumbing.py)."""
