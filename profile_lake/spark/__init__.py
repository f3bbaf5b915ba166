"""Spark plumbing over the pure logic: thin DataFrame layers that the dbt Python models call."""
