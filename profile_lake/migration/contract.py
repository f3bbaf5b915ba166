"""The target contract a migrated row must keep, as SQL checks: a row that breaks one is
quarantined with the check's error code and message (the codes of ingest_errors), never
carried over and never dropped silently.

Two contracts: `keys` (the key columns are present) for any dataset, and `records_snapshot`
(SPEC.md section 2's rules for the fields of a record, section 6), for a snapshot of records.
The tenant id and identity rules are the project's (vars `tenant_id_pattern`, `identity_pattern`
and `identity_rule_message` in dbt_project.yml), the same the landing data is checked by.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from profile_lake.project import project_var, tenant_id_pattern
from profile_lake.sql import sql_string

MAX_RELATED_IDS = 100
DEFAULT_RECORD_TYPES = ("profile", "event")
DEFAULT_MAX_PAYLOAD_BYTES = 1_048_576
CONTRACTS = ("keys", "records_snapshot")


@dataclass(frozen=True)
class Check:
    column: str
    error_code: str
    valid_when: str  # SQL over the row's columns; null counts as broken (rules on a value
    # hold for a missing one: missing_field reports it, once)
    message: str  # says what the rule is, after the column's name
    null_rule: bool = False  # broken only by a null: the Parquet footers' null counts decide


def key_checks(keys: Sequence[str]) -> list[Check]:
    return [
        Check(key, "missing_field", f"`{key}` is not null", "is required", null_rule=True)
        for key in keys
    ]


def null_checked_columns(checks: Sequence[Check]) -> tuple[str, ...] | None:
    """The columns of checks that only a null breaks, when every check is one (the footers'
    statistics can then clear a file without reading it); None when a check reads values."""
    if not all(check.null_rule for check in checks):
        return None
    return tuple(dict.fromkeys(check.column for check in checks))


def records_snapshot_checks(
    columns: Sequence[str],
    record_types: Sequence[str] = DEFAULT_RECORD_TYPES,
    max_payload_bytes: int = DEFAULT_MAX_PAYLOAD_BYTES,
) -> list[Check]:
    """SPEC.md section 2's rules for the fields a snapshot row carries (tenant_id too when the
    dataset has it, as a column or a partition)."""
    identity = sql_string(str(project_var("identity_pattern")))
    types = ", ".join(sql_string(record_type) for record_type in record_types)
    checks = []
    if "tenant_id" in columns:
        checks.append(
            Check(
                "tenant_id",
                "invalid_tenant_id",
                f"tenant_id rlike {sql_string(tenant_id_pattern())}",
                f"must match {tenant_id_pattern()}",
            )
        )
    checks += key_checks(["record_id", "record_type", "primary_id", "payload"])
    checks += [
        Check(
            "record_id",
            "invalid_record_id",
            "record_id is null or char_length(record_id) between 1 and 256",
            "must be 1 to 256 characters",
        ),
        Check(
            "record_type",
            "invalid_record_type",
            f"record_type is null or record_type in ({types})",
            f"must be one of {', '.join(record_types)}",
        ),
        Check(
            "primary_id",
            "invalid_identity",
            f"primary_id is null or primary_id rlike {identity}",
            str(project_var("identity_rule_message")),
        ),
        Check(
            "payload",
            "not_an_object",
            "payload is null or (ltrim(payload) like '{%' "
            "and get_json_object(payload, '$') is not null)",
            "must be a JSON object",
        ),
        Check(
            "payload",
            "payload_too_large",
            f"payload is null or octet_length(payload) <= {int(max_payload_bytes)}",
            f"serialized size exceeds {int(max_payload_bytes)} bytes",
        ),
    ]
    if "related_ids" in columns:
        checks += [
            Check(
                "related_ids",
                "too_many_related_ids",
                f"related_ids is null or size(related_ids) <= {MAX_RELATED_IDS}",
                f"must list at most {MAX_RELATED_IDS} identities",
            ),
            Check(
                "related_ids",
                "invalid_identity",
                "related_ids is null or forall(related_ids, related_id -> "
                f"coalesce(related_id rlike {identity}, false))",
                "every entry must be namespace:value with a known namespace and a value of 1 "
                "to 256 characters",
            ),
        ]
    return checks


def contract_checks(
    contract: Mapping[str, object], keys: Sequence[str], columns: Sequence[str]
) -> list[Check]:
    """The checks of a plan's contract (`{"name": ..., options}`)."""
    name = contract.get("name", "keys")
    if name == "none":  # nothing checked (in place: no scan at all)
        return []
    if name == "keys":
        return key_checks(keys)
    if name == "records_snapshot":
        return key_checks([key for key in keys if key != "record_id"]) + records_snapshot_checks(
            columns,
            tuple(contract.get("record_types") or DEFAULT_RECORD_TYPES),  # type: ignore[arg-type]
            int(contract.get("max_payload_bytes") or DEFAULT_MAX_PAYLOAD_BYTES),  # type: ignore[arg-type]
        )
    raise ValueError(f"unknown contract {name!r}: use one of {', '.join(CONTRACTS)}")


def problems_sql(checks: Sequence[Check]) -> str:
    """An array<struct<error_code, error_message>> expression of every check a row breaks
    (all of them, not the first), empty for a good row."""
    if not checks:
        return "cast(array() as array<struct<error_code:string,error_message:string>>)"
    items = ",\n    ".join(
        f"case when not coalesce({check.valid_when}, false) then named_struct("
        f"'error_code', {sql_string(check.error_code)}, "
        f"'error_message', {sql_string(check.column + ' ' + check.message)}) end"
        for check in checks
    )
    return f"filter(array(\n    {items}\n), problem -> problem is not null)"
