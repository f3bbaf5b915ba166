"""Run locks: one writer per tenant (see profile_lake.locks.rules and .delta)."""
