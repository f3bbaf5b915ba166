"""Canonical identity -> profile_id per tenant, by connected components, recomputing only the
components touched since the last run (see the YAML docs)."""

import os
from functools import partial
from pathlib import Path

from profile_lake.spark.dbt_refs import ref_table_name
from profile_lake.spark.identity_graph import resolve_components
from profile_lake.spark.identity_graph_increments import (
    GraphSources,
    resolve_changes,
    resolve_everything,
)
from profile_lake.tenant_scope import parse_tenant_scope, tenant_scope_suffix


def model(dbt, session):
    dbt.config(
        materialized="incremental",
        incremental_strategy="merge_with_deletes",
        unique_key=["tenant_id", "identity_id"],
        partition_by=["tenant_id"],
    )
    # the lineage: both are read by name below, at the versions stamped on the rows written
    dbt.ref("records")
    dbt.ref("identity_map")
    # meta_get with literal keys: dbt passes a Python model only the meta keys its code names
    tenants = parse_tenant_scope(
        dbt.config.meta_get("tenant_scope"), dbt.config.meta_get("tenant_id_pattern")
    )
    sources = GraphSources.latest(
        session,
        ref_table_name(dbt, "records"),
        ref_table_name(dbt, "identity_map"),
        tenants,
    )
    # one checkpoint folder per tenant scope: runs of other tenants may run at the same time
    scope = tenant_scope_suffix(tenants).removeprefix("_") or "all"
    lake_home = Path(os.environ.get("PROFILE_LAKE_HOME", ".lake"))
    resolve = partial(
        resolve_components,
        checkpoint_root=lake_home / "checkpoints" / "identity_graph" / dbt.this.schema / scope,
        # the YAML's meta sets it (from PROFILE_LAKE_FAST_PATH_MAX_LINKS); literal default only
        fast_path_max_links=int(dbt.config.meta_get("fast_path_max_links", 1000000)),
    )
    if dbt.is_incremental:
        return resolve_changes(session, sources, session.table(str(dbt.this)), resolve)
    return resolve_everything(session, sources, resolve)
