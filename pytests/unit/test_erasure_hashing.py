"""The salted one-way hash of erased identities and record_ids (profile_lake.erasure.hashing):
Python's value is the documented formula, and the SQL text computes that same formula.

Only the SQL's text is checked here: that Spark's value equals Python's is asserted by the
Spark step that first evaluates the expression, in the shared session of the integration
tests (a unit test starts no Spark)."""

from __future__ import annotations

import hashlib

import pytest

from profile_lake.erasure.hashing import (
    SALT_BYTES,
    ErasedSet,
    erasure_hash,
    erasure_hash_sql,
    new_salt,
)

SALT = bytes.fromhex("00ff10ab")


def test_the_hash_is_sha256_of_the_upper_case_hex_salt_the_kind_and_the_value() -> None:
    expected = hashlib.sha256(b"00FF10AB|identity|email:ana@example.com").hexdigest()
    assert erasure_hash(SALT, "identity", "email:ana@example.com") == expected
    assert erasure_hash(SALT, "record", "r-1") == hashlib.sha256(b"00FF10AB|record|r-1").hexdigest()


def test_values_are_hashed_as_utf8_and_a_lone_surrogate_as_a_question_mark() -> None:
    # what Spark's strings hold: Java encodes a character UTF-8 cannot take as '?'
    assert (
        erasure_hash(SALT, "identity", "email:zoë")
        == hashlib.sha256("00FF10AB|identity|email:zoë".encode()).hexdigest()
    )
    assert erasure_hash(SALT, "identity", "email:\ud800") == erasure_hash(
        SALT, "identity", "email:?"
    )


def test_the_kind_the_salt_and_the_value_each_change_the_hash() -> None:
    hashes = {
        erasure_hash(SALT, "identity", "crm:1"),
        erasure_hash(SALT, "record", "crm:1"),
        erasure_hash(bytes.fromhex("00ff10ac"), "identity", "crm:1"),
        erasure_hash(SALT, "identity", "crm:2"),
    }
    assert len(hashes) == 4


def test_an_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="'identity' or 'record'"):
        erasure_hash(SALT, "name", "x")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="'identity' or 'record'"):
        erasure_hash_sql("value", "name", "salt")  # type: ignore[arg-type]


def test_the_sql_is_the_same_formula_over_the_given_expressions() -> None:
    assert erasure_hash_sql("landing.primary_id", "identity", "salts.salt") == (
        "sha2(concat(hex(salts.salt), '|', 'identity', '|', landing.primary_id), 256)"
    )
    assert erasure_hash_sql("record_id", "record", "salt") == (
        "sha2(concat(hex(salt), '|', 'record', '|', record_id), 256)"
    )


def test_each_salt_is_new() -> None:
    salts = {new_salt() for _ in range(20)}
    assert len(salts) == 20
    assert all(len(salt) == SALT_BYTES for salt in salts)


def test_an_erased_set_holds_the_hashes_of_its_values_only() -> None:
    erased = ErasedSet.of_values(SALT, identities=["email:ana@example.com"], record_ids=["r-1"])
    assert erased.identity_hashes == {erasure_hash(SALT, "identity", "email:ana@example.com")}
    assert erased.holds_identity("email:ana@example.com")
    assert not erased.holds_identity("email:bob@example.com")
    assert erased.holds_record("r-1")
    # an identity is not a record_id, nor the other way round
    assert not erased.holds_record("email:ana@example.com")
    assert not erased.holds_identity("r-1")
    # the same values under another tenant's salt
    assert not ErasedSet(new_salt(), erased.identity_hashes, erased.record_hashes).holds_record(
        "r-1"
    )
    assert not erased.is_empty()
    assert ErasedSet.of_values(SALT).is_empty()
