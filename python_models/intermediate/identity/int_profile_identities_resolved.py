"""Canonical identity -> profile_id per tenant, by connected components (see the YAML docs)."""

import os
from pathlib import Path

from profile_lake.spark.identity_graph import canonical_links, profile_changes, resolve_components


def model(dbt, session):
    dbt.config(
        materialized="incremental",
        incremental_strategy="merge_with_deletes",
        unique_key=["tenant_id", "identity_id"],
        partition_by=["tenant_id"],
    )
    # the YAML's meta sets it (from PROFILE_LAKE_FAST_PATH_MAX_LINKS); literal default only
    fast_path_max_links = int(dbt.config.meta_get("fast_path_max_links", 1000000))
    records = dbt.ref("records").select("tenant_id", "primary_id", "related_ids")
    identity_map = dbt.ref("identity_map").select("tenant_id", "identity_id", "canonical_id")
    lake_home = Path(os.environ.get("PROFILE_LAKE_HOME", ".lake"))
    resolved = resolve_components(
        canonical_links(records, identity_map),
        checkpoint_root=lake_home / "checkpoints" / "identity_graph" / dbt.this.schema,
        fast_path_max_links=fast_path_max_links,
    )
    if dbt.is_incremental:  # full recompute; only the changed rows are merged
        return profile_changes(resolved, session.table(str(dbt.this)))
    return resolved
