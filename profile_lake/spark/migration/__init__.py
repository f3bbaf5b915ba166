"""Spark plumbing of a migration, a module per step: preflight (and the plan), shadow
(hydrated batch by batch with lineage in each commit), in_place (a conversion to Delta), audit,
publish (and collect), rollback; rows (reading, judging and quarantining the source's rows) and
lake (the control tables and the audit trail) serve them all.

Decisions (preflight, batches, resume points, audit comparison) are in profile_lake.migration;
this package reads and writes tables. See docs/migration.md.
"""

from profile_lake.spark.migration.audit import audit
from profile_lake.spark.migration.in_place import in_place
from profile_lake.spark.migration.lake import Lake, MigrationRefused, status
from profile_lake.spark.migration.preflight import run_preflight
from profile_lake.spark.migration.publish import collect, publish
from profile_lake.spark.migration.rollback import rollback
from profile_lake.spark.migration.shadow import hydrate, shadow_name, start_shadow

__all__ = [
    "Lake",
    "MigrationRefused",
    "audit",
    "collect",
    "hydrate",
    "in_place",
    "publish",
    "rollback",
    "run_preflight",
    "shadow_name",
    "start_shadow",
    "status",
]
