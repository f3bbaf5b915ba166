"""The tenants of the `tenants` seed and the error codes of SPEC.md section 3.

These constants are the generator's view of the seed; a unit test checks the seed against them.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_RECORD_TYPES: tuple[str, ...] = ("profile", "event")
DEFAULT_MAX_PAYLOAD_BYTES = 1_048_576


@dataclass(frozen=True)
class Tenant:
    """One row of the `tenants` seed."""

    name: str
    record_types: tuple[str, ...] = DEFAULT_RECORD_TYPES
    max_payload_bytes: int = DEFAULT_MAX_PAYLOAD_BYTES


TENANTS: tuple[Tenant, ...] = (
    Tenant("acme"),
    Tenant("globex", max_payload_bytes=65_536),
    Tenant("initech", record_types=("profile", "event", "order")),
    Tenant("umbrella"),
    Tenant("hooli"),
    Tenant("stark"),
    Tenant("wayne"),
    Tenant("wonka"),
)
TENANTS_BY_NAME: dict[str, Tenant] = {tenant.name: tenant for tenant in TENANTS}

STREAMS: tuple[str, ...] = ("records", "id_mutations", "entity_names")

# error code -> the stage that reports it (SPEC.md section 3)
ERROR_STAGES: dict[str, str] = {
    "invalid_utf8": "parse",
    "invalid_json": "parse",
    "not_an_object": "parse",
    "duplicate_key": "parse",
    "missing_field": "convert",
    "wrong_type": "convert",
    "invalid_timestamp": "convert",
    "invalid_tenant_id": "validate",
    "unknown_tenant": "validate",
    "invalid_record_id": "validate",
    "invalid_op": "validate",
    "event_ts_in_future": "validate",
    "negative_seq": "validate",
    "invalid_record_type": "validate",
    "invalid_identity": "validate",
    "too_many_related_ids": "validate",
    "payload_too_large": "validate",
    "name_too_long": "validate",
}
ERROR_CODES: tuple[str, ...] = tuple(ERROR_STAGES)
