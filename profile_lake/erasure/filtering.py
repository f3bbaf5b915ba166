"""Which lines an erased set removes, as Spark SQL (SPEC.md section 7).

The tables after an erasure are the tables over the landed input without every line whose
record_id or primary_id is in the erased set, and with erased identities removed from every
other line's related_ids. The lake keeps the erased set as salted hashes only, so a line is
matched by hashing its ids with its tenant's salt. These expressions are written once, here,
and read rows joined to their tenant's erased set (`ERASED_COLUMNS`: the salt, and arrays of
the erased identities' and records' hashes, all null for a tenant with nothing erased).

Pure: it builds SQL text; profile_lake.spark.erasure_filter runs it.
"""

from __future__ import annotations

from profile_lake.erasure.hashing import erasure_hash_sql

SALT = "erasure_salt"
ERASED_IDENTITIES = "erased_identity_hashes"
ERASED_RECORDS = "erased_record_hashes"
ERASED_COLUMNS = (SALT, ERASED_IDENTITIES, ERASED_RECORDS)


def erased_sets_sql(erased_set_table: str, salts_table: str, per_request: bool = False) -> str:
    """One row per tenant with something erased (per tenant and request_id with
    `per_request`): its salt and the arrays of hashes (`ERASED_COLUMNS`), from
    `<schema>_control.erased_set` (tenant_id, request_id, kind, hash) and the salts. Small: a
    few hashes per request."""
    request = "erased.request_id, " if per_request else ""
    return (
        f"select erased.tenant_id, {request}salts.salt as {SALT}, "
        f"collect_set(case when erased.kind = 'identity' then erased.hash end) "
        f"as {ERASED_IDENTITIES}, "
        f"collect_set(case when erased.kind = 'record' then erased.hash end) "
        f"as {ERASED_RECORDS} "
        f"from {erased_set_table} as erased "
        f"inner join {salts_table} as salts on erased.tenant_id = salts.tenant_id "
        f"group by erased.tenant_id, {request}salts.salt"
    )


def no_erased_sets_sql() -> str:
    """The erased sets of a lake where no request was ever applied: no row, typed."""
    return (
        f"select cast(null as string) as tenant_id, cast(null as binary) as {SALT}, "
        f"cast(null as array<string>) as {ERASED_IDENTITIES}, "
        f"cast(null as array<string>) as {ERASED_RECORDS} where false"
    )


def _in(sets: str, column: str) -> str:
    """A column of the erased sets, qualified by the relation's alias `sets` when given (SQL
    models join them under an alias; the Python models' frames need none)."""
    return f"{sets}.{column}" if sets else column


def _identity_erased(value_sql: str, sets: str) -> str:
    value_hash = erasure_hash_sql(value_sql, "identity", _in(sets, SALT))
    return f"array_contains({_in(sets, ERASED_IDENTITIES)}, {value_hash})"


def line_erased_sql(
    record_sql: str = "record_id", primary_sql: str = "primary_id", *, sets: str = ""
) -> str:
    """True for a line the erased set removes: its record_id or primary_id is erased. False
    (never null) for a tenant with nothing erased."""
    record_hash = erasure_hash_sql(record_sql, "record", _in(sets, SALT))
    record_erased = f"array_contains({_in(sets, ERASED_RECORDS)}, {record_hash})"
    return (
        f"coalesce({_in(sets, SALT)} is not null and ({record_erased} "
        f"or {_identity_erased(primary_sql, sets)}), false)"
    )


def identity_erased_sql(value_sql: str, *more_sql: str, sets: str = "") -> str:
    """True when one of the identities is erased (false, never null, for a tenant with
    nothing erased): a name line's id, a rename line's from_id or to_id, a stored row's
    identity."""
    erased = " or ".join(_identity_erased(value, sets) for value in (value_sql, *more_sql))
    return f"coalesce({_in(sets, SALT)} is not null and ({erased}), false)"


def related_ids_kept_sql(related_sql: str = "related_ids", *, sets: str = "") -> str:
    """`related_sql` without the erased identities (as it is for a tenant with nothing
    erased)."""
    return (
        f"case when {_in(sets, SALT)} is null then {related_sql} "
        f"else filter({related_sql}, erased_candidate -> "
        f"not {_identity_erased('erased_candidate', sets)}) end"
    )


def touches_erased_sql(
    record_sql: str = "record_id",
    primary_sql: str = "primary_id",
    related_sql: str = "related_ids",
    *,
    sets: str = "",
) -> str:
    """True for a line an erasure changes: removed, or with an erased related identity."""
    related = (
        f"coalesce(exists({related_sql}, erased_candidate -> "
        f"{_identity_erased('erased_candidate', sets)}), false)"
    )
    return (
        f"({line_erased_sql(record_sql, primary_sql, sets=sets)} "
        f"or coalesce({_in(sets, SALT)} is not null and {related}, false))"
    )
