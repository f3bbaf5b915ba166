"""Erasure of a person (SPEC.md section 7), the pure logic: no Spark here.

The lake keeps an erased person only as salted one-way hashes of their identities and
record_ids (`hashing`), judges every landed line against those hashes (`lines`), and after a
purge truncates each table's Delta log and leaves a marker telling change-feed readers that the
history before it is gone on purpose (`log_purge`). The Spark steps call these; keeping them
pure lets each rule be unit tested in seconds and written once.
"""
