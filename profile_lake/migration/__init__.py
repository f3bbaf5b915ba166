"""Migrating legacy Parquet datasets into the lake, in place or through a shadow.

See docs/migration.md.

Pure logic (listing and footers, batch plans, resume points, audits, the audit trail's rows)
lives here without Spark; the Spark plumbing is profile_lake.spark.migration.
"""
