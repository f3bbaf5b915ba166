"""Every erasure request line handled, with what it erased (see the YAML docs)."""

from pyspark.sql import functions as F

from profile_lake.spark.dbt_refs import ref_table_name
from profile_lake.spark.erasure_apply import LakeTables, fix_new_requests
from profile_lake.tenant_scope import parse_tenant_scope


def model(dbt, session):
    dbt.config(materialized="incremental", incremental_strategy="append")
    dbt.ref("stg_erasures__requests")  # the lineage; read by name below
    # meta_get with literal keys: dbt passes a Python model only the meta keys its code names
    tenants = parse_tenant_scope(
        dbt.config.meta_get("tenant_scope"), dbt.config.meta_get("tenant_id_pattern")
    )
    # one call per key, outside containers: dbt finds the keys only where they are arguments
    identity_map = dbt.config.meta_get("identity_map")
    identities_renamed = dbt.config.meta_get("identities_renamed")
    entity_names = dbt.config.meta_get("entity_names")
    entity_names_snapshot = dbt.config.meta_get("entity_names_snapshot")
    tables = LakeTables(
        requests=ref_table_name(dbt, "stg_erasures__requests"),
        # read by name as the run finds them: the staging models that feed them run after
        # this model, so a ref would make a cycle
        identity_map=identity_map,
        profile_identities=dbt.config.meta_get("profile_identities"),
        record_states=dbt.config.meta_get("record_states"),
        control_schema=dbt.config.meta_get("control_schema"),
        identity_rows=(
            (identity_map, ("identity_id", "canonical_id")),
            (identities_renamed, ("identity_id", "canonical_id")),
            (entity_names, ("id",)),
            (entity_names_snapshot, ("id",)),
        ),
    )
    fix_new_requests(session, tables, tenants)
    events = session.table(tables.events)
    if tenants is not None:
        events = events.where(F.col("tenant_id").isin(*tenants))
    if dbt.is_incremental:
        seen = session.table(str(dbt.this)).agg(F.max("at").alias("seen")).first()["seen"]
        if seen is not None:
            events = events.where(F.col("at") > F.lit(seen))
    return events
