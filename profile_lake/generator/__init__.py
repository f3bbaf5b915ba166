"""Deterministic landing data for Profile Lake (pure Python, standard library only).

`generate(GeneratorConfig(out=...))` writes records/, id_mutations/ and entity_names/ JSON
lines as SPEC.md sections 2-3 define them, bad lines included, and returns the manifest.
"""

from profile_lake.generator.config import GeneratorConfig
from profile_lake.generator.core import generate
from profile_lake.generator.tenants import (
    ERROR_CODES,
    ERROR_STAGES,
    STREAMS,
    TENANTS,
    TENANTS_BY_NAME,
    Tenant,
)

__all__ = [
    "ERROR_CODES",
    "ERROR_STAGES",
    "STREAMS",
    "TENANTS",
    "TENANTS_BY_NAME",
    "GeneratorConfig",
    "Tenant",
    "generate",
]
