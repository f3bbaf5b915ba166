"""A request's subject (SPEC.md section 7): the named identity's profile, its mapped identities
and the records of any of them; an identity never seen alone. No Spark."""

from __future__ import annotations

from profile_lake.erasure.hashing import erasure_hash
from profile_lake.erasure.subject import (
    PersonRows,
    fix_subject,
    named_identity,
    subject_identities,
)

SALT = bytes(range(32))
ANN = "email:ann@example.com"


def test_an_identity_never_seen_erases_no_identity_but_keeps_its_hash() -> None:
    wanted = erasure_hash(SALT, "identity", ANN)
    assert named_identity(SALT, wanted, ["email:bob@example.com", "crm:1"]) is None
    subject = fix_subject(wanted, PersonRows(None))
    assert subject.identities == frozenset() and subject.record_ids == frozenset()
    erased = subject.erased_set(SALT)
    assert erased.holds_identity(ANN)  # a later line naming her is erased
    assert not erased.holds_identity("email:bob@example.com")


def test_the_named_identity_is_found_by_its_hash() -> None:
    wanted = erasure_hash(SALT, "identity", ANN)
    assert named_identity(SALT, wanted, ["crm:1", ANN, "cookie:x"]) == ANN
    # another tenant's salt hashes her differently
    assert named_identity(bytes(32), wanted, [ANN]) is None


def test_the_subject_is_the_whole_profile_with_every_identity_mapped_into_it() -> None:
    rows = PersonRows(
        named="cookie:old",  # renamed to ann, who is linked to crm:1 by a record
        canonical=ANN,
        profile_canonicals=frozenset({ANN, "crm:1"}),
        mapped=(
            ("cookie:old", ANN),
            ("cookie:older", ANN),
            ("crm:legacy-1", "crm:1"),
            ("email:bob@example.com", "email:bob@example.com"),  # another person
        ),
        records=(("r1", ANN), ("r2", "crm:legacy-1"), ("r3", "email:bob@example.com")),
    )
    subject = fix_subject(erasure_hash(SALT, "identity", "cookie:old"), rows)
    assert subject.identities == {"cookie:old", "cookie:older", ANN, "crm:1", "crm:legacy-1"}
    assert subject.record_ids == {"r1", "r2"}
    erased = subject.erased_set(SALT)
    assert all(erased.holds_identity(identity) for identity in subject.identities)
    assert erased.holds_record("r2") and not erased.holds_record("r3")
    assert not erased.holds_identity("email:bob@example.com")


def test_an_identity_in_no_profile_is_erased_with_what_maps_to_it() -> None:
    rows = PersonRows(named=ANN, canonical=ANN, mapped=(("cookie:a", ANN),))
    assert subject_identities(rows) == {ANN, "cookie:a"}


def test_a_record_only_relating_to_the_subject_is_not_erased() -> None:
    rows = PersonRows(
        named=ANN,
        canonical=ANN,
        profile_canonicals=frozenset({ANN}),
        records=(("r1", ANN), ("r9", "email:blocked@example.com")),
    )
    assert fix_subject("h", rows).record_ids == {"r1"}
