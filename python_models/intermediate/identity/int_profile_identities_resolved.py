"""Canonical identity -> profile_id per tenant, by connected components under the tenant's
linking rules, recomputing only the components touched since the last run (see the YAML
docs)."""

import os
from functools import partial
from pathlib import Path

from profile_lake.identity.rules import parse_rule_rows, rules_by_tenant
from profile_lake.spark.dbt_refs import ref_table_name
from profile_lake.spark.identity_graph_increments import (
    GraphSources,
    resolve_changes,
    resolve_everything,
)
from profile_lake.spark.identity_linking import resolve_with_rules
from profile_lake.tenant_scope import parse_tenant_scope, tenant_scope_suffix


def model(dbt, session):
    dbt.config(
        materialized="incremental",
        incremental_strategy="merge_with_deletes",
        unique_key=["tenant_id", "identity_id"],
        partition_by=["tenant_id"],
        # optimize_layouts Z-orders each tenant by identity: a mart reading a few keys skips files
        zorder_by=["identity_id"],
        on_schema_change="append_new_columns",
        # the marts read what each run changed from the feed (profile_lake.mart_feeds)
        tblproperties={"delta.enableChangeDataFeed": "true"},
    )
    # the lineage: all three are read by name below, at the versions the run reads
    dbt.ref("records")
    dbt.ref("int_record_states")
    dbt.ref("identity_map")
    # the linking rules (checked at on-run-start by check_identity_rules) and the tenants
    rules_seed = dbt.ref("identity_rules")
    tenants_seed = dbt.ref("tenants")
    # meta_get with literal keys: dbt passes a Python model only the meta keys its code names
    tenants = parse_tenant_scope(
        dbt.config.meta_get("tenant_scope"), dbt.config.meta_get("tenant_id_pattern")
    )
    rule_rows = parse_rule_rows(row.asDict() for row in rules_seed.collect())
    known = {row["tenant_id"] for row in tenants_seed.select("tenant_id").collect()}
    known |= {row.tenant_id for row in rule_rows if row.tenant_id != "*"}
    rules = rules_by_tenant(rule_rows, sorted(known if tenants is None else set(tenants)))
    sources = GraphSources.latest(
        session,
        (
            ref_table_name(dbt, "records"),
            ref_table_name(dbt, "int_record_states"),
            ref_table_name(dbt, "identity_map"),
        ),
        tenants,
        rules,
    )
    # one checkpoint folder per tenant scope: runs of other tenants may run at the same time
    scope = tenant_scope_suffix(tenants).removeprefix("_") or "all"
    lake_home = Path(os.environ.get("PROFILE_LAKE_HOME", ".lake"))
    resolve = partial(
        resolve_with_rules,
        rules=rules,
        checkpoint_root=lake_home / "checkpoints" / "identity_graph" / dbt.this.schema / scope,
        # the YAML's meta sets it (from PROFILE_LAKE_FAST_PATH_MAX_LINKS); literal default only
        fast_path_max_links=int(dbt.config.meta_get("fast_path_max_links", 1000000)),
        # from PROFILE_LAKE_PRESSURED_MAX_LINKS, likewise
        pressured_max_links=int(dbt.config.meta_get("pressured_max_links", 2000000)),
    )
    if dbt.is_incremental:
        return resolve_changes(session, sources, session.table(str(dbt.this)), resolve)
    return resolve_everything(session, sources, resolve)
