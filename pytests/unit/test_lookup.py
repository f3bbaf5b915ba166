"""The pure parts of `profile-lake lookup`: keys, the join of index and profile rows, output."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from profile_lake.lookup import join_profiles, keys_by_tenant, parse_keys, to_json_line

PROFILE = {
    "tenant_id": "acme",
    "profile_id": "email:a@x.test",
    "identities": ["email:a@x.test", "cookie:c1"],
    "identity_names": [],
    "live_records": [{"record_id": "r1"}],
    "identity_count": 2,
    "record_count": 1,
    "record_count_by_type": {"event": 1},
    "first_event_ts": datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC),
    "last_event_ts": datetime(2025, 1, 3, tzinfo=UTC),
    "last_event_ts_by_type": {"event": datetime(2025, 1, 3, tzinfo=UTC)},
}


def test_keys_are_grouped_by_tenant_once_each_in_order() -> None:
    keys = [("b", "x"), ("a", "y"), ("b", "z"), ("b", "x")]
    assert keys_by_tenant(keys) == {"b": ["x", "z"], "a": ["y"]}


def test_a_key_joins_its_profile_through_the_index() -> None:
    index = [
        {
            "tenant_id": "acme",
            "identity_id": "cookie:c1",
            "canonical_id": "cookie:c1",
            "profile_id": "email:a@x.test",
        },
    ]
    [result] = join_profiles([("acme", "cookie:c1")], index, [PROFILE])
    assert result["profile_id"] == "email:a@x.test"
    assert result["canonical_id"] == "cookie:c1"
    assert result["record_count"] == 1 and result["identities"] == PROFILE["identities"]


def test_unknown_keys_and_other_tenants_give_no_profile() -> None:
    index = [
        {
            "tenant_id": "acme",
            "identity_id": "cookie:c1",
            "canonical_id": "cookie:c1",
            "profile_id": "email:a@x.test",
        },
    ]
    keys = [("globex", "cookie:c1"), ("acme", "cookie:nope"), ("acme", "cookie:nope")]
    assert join_profiles(keys, index, [PROFILE]) == [
        {"tenant_id": "globex", "identity_id": "cookie:c1", "profile_id": None},
        {"tenant_id": "acme", "identity_id": "cookie:nope", "profile_id": None},
    ]


def test_an_index_row_whose_profile_is_gone_gives_no_profile() -> None:
    index = [
        {"tenant_id": "acme", "identity_id": "x", "canonical_id": "x", "profile_id": "gone"},
    ]
    assert join_profiles([("acme", "x")], index, [PROFILE])[0]["profile_id"] is None


def test_json_lines_carry_iso_timestamps() -> None:
    line = to_json_line({"tenant_id": "acme", "first_event_ts": PROFILE["first_event_ts"]})
    assert json.loads(line) == {"tenant_id": "acme", "first_event_ts": "2025-01-02T03:04:05+00:00"}


def test_per_type_maps_print_as_json_objects_like_spark_to_json() -> None:
    line = to_json_line({"last_event_ts_by_type": PROFILE["last_event_ts_by_type"]})
    assert json.loads(line) == {"last_event_ts_by_type": {"event": "2025-01-03T00:00:00+00:00"}}


def test_keys_come_from_pairs_and_a_file(tmp_path: Path) -> None:
    keys_file = tmp_path / "keys.csv"
    keys_file.write_text("tenant_id,identity_id\nacme, email:a@x.test\n\nglobex,crm:7\n")
    assert parse_keys(["umbrella", "crm:u3"], keys_file) == [
        ("umbrella", "crm:u3"),
        ("acme", "email:a@x.test"),
        ("globex", "crm:7"),
    ]


@pytest.mark.parametrize(
    ("pairs", "content", "message"),
    [
        (["acme"], None, "pairs"),
        ([], None, "at least one key"),
        ([], "acme\n", "keys.csv:1: expected tenant_id,identity_id"),
        ([], "acme,\n", "keys.csv:1"),
    ],
)
def test_bad_keys_are_reported(tmp_path: Path, pairs, content, message) -> None:
    keys_file = None
    if content is not None:
        keys_file = tmp_path / "keys.csv"
        keys_file.write_text(content)
    with pytest.raises(ValueError, match=message):
        parse_keys(pairs, keys_file)
