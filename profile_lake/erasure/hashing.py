"""The salted one-way hash that is all the lake keeps of an erased person.

Erased identities and record_ids are stored only as these hashes, one salt per tenant: a
hash of one tenant says nothing about another's, and no precomputed table of common
identities matches them. The salt sits beside the hashes, so someone who can read the lake
can still test guesses (every phone number, say); the hash keeps values out of the files, it
does not make them secret.

The hash is computed both in Python (judging landed lines) and in Spark SQL (matching table
rows), so it is defined here once, in both forms:

    sha2(concat(hex(salt), '|', kind, '|', value), 256)

`hex` gives upper-case digits in Spark; `sha2` gives lower-case ones and reads its text as
UTF-8.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from profile_lake.sql import sql_string

HashKind = Literal["identity", "record"]
HASH_KINDS: tuple[HashKind, ...] = ("identity", "record")
# 256 bits: a salt shared by no two tenants, whatever their number
SALT_BYTES = 32


def new_salt() -> bytes:
    """A tenant's salt, drawn once when the tenant's first request arrives."""
    return secrets.token_bytes(SALT_BYTES)


def erasure_hash(salt: bytes, kind: HashKind, value: str) -> str:
    """The hash of an identity or a record_id (`kind`) of the tenant whose salt is `salt`.

    The kind is hashed in so that a record_id spelled like an identity never matches it.
    Characters UTF-8 cannot encode (a lone surrogate from a `\\ud800` escape) become `?`, as
    Spark's strings do, so that both forms agree on every value."""
    _check_kind(kind)
    text = f"{salt.hex().upper()}|{kind}|{value}"
    return hashlib.sha256(text.encode("utf-8", errors="replace")).hexdigest()


def erasure_hash_sql(value_sql: str, kind: HashKind, salt_sql: str) -> str:
    """The Spark SQL expression computing erasure_hash of the expression `value_sql` with the
    salt (a binary expression) `salt_sql`: the erasure's statements match rows by this, so
    they carry no literal identity into the Delta log."""
    _check_kind(kind)
    return f"sha2(concat(hex({salt_sql}), '|', {sql_string(kind)}, '|', {value_sql}), 256)"


def _check_kind(kind: str) -> None:
    if kind not in HASH_KINDS:
        raise ValueError(f"an erasure hash is of kind 'identity' or 'record', not {kind!r}")


@dataclass(frozen=True)
class ErasedSet:
    """One tenant's erased set as the lake keeps it: the tenant's salt and the hashes of the
    erased identities and record_ids. It answers "is this value erased?" without ever holding
    the values."""

    salt: bytes
    identity_hashes: frozenset[str]
    record_hashes: frozenset[str]

    @classmethod
    def of_values(
        cls, salt: bytes, identities: Iterable[str] = (), record_ids: Iterable[str] = ()
    ) -> ErasedSet:
        """The erased set of these plain values, hashed with `salt` (for a request being
        fixed, and for tests)."""
        return cls(
            salt,
            frozenset(erasure_hash(salt, "identity", value) for value in identities),
            frozenset(erasure_hash(salt, "record", value) for value in record_ids),
        )

    def is_empty(self) -> bool:
        return not self.identity_hashes and not self.record_hashes

    def holds_identity(self, identity: str) -> bool:
        return bool(self.identity_hashes) and (
            erasure_hash(self.salt, "identity", identity) in self.identity_hashes
        )

    def holds_record(self, record_id: str) -> bool:
        return bool(self.record_hashes) and (
            erasure_hash(self.salt, "record", record_id) in self.record_hashes
        )
