"""Landing files -> append-only staging tables, each file exactly once."""
