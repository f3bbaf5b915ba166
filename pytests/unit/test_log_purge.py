"""Truncating a purged table's Delta log (profile_lake.erasure.log_purge): which files of a
synthetic `_delta_log` go and which stay, and the marker that tells change-feed readers what
the truncation cost them."""

from __future__ import annotations

import json

import pytest

from profile_lake.erasure.log_purge import (
    PURGE_MARKER_FILE,
    LogPurge,
    PurgeMarker,
    consumed_after_purge,
    first_version_held,
    has_complete_checkpoint,
    log_files_to_purge,
)


def v(version: int) -> str:
    return f"{version:020d}"


CHECKPOINTED = 12
OLD_VERSIONS = [
    *(f"{v(n)}.json" for n in range(CHECKPOINTED)),
    *(f"{v(n)}.crc" for n in range(CHECKPOINTED)),
    f"{v(5)}.checkpoint.parquet",
    f"{v(10)}.checkpoint.0000000001.0000000002.parquet",
    f"{v(10)}.checkpoint.0000000002.0000000002.parquet",
    f"{v(8)}.checkpoint.2d1e0c8a-54f1-4b8e-9f57-1c0b2a9e7d11.json",
    f"{v(3)}.{v(5)}.compacted.json",
    f"{v(11)}.{v(12)}.compacted.json",  # holds version 11
    f"_staged_commits/{v(4)}.0b9f2c7e-1111-4a3b-8c9d-0123456789ab.json",
    "_sidecars/old-sidecar.parquet",
]
KEPT_VERSIONS = [
    f"{v(12)}.json",
    f"{v(12)}.crc",
    f"{v(12)}.checkpoint.parquet",
    f"{v(13)}.json",  # a commit after the checkpoint
    "_last_checkpoint",
    "_last_vacuum_info",  # VACUUM's note of the version it cleaned up to
    "_sidecars/7c3a-current.parquet",
]
UNRECOGNISED = [f"{v(11)}.json.tmp", "README", "_sidecars/nested/x.parquet", "_stats/x.json"]
LOG = OLD_VERSIONS + KEPT_VERSIONS + UNRECOGNISED


def test_every_file_of_a_version_before_the_checkpoint_goes() -> None:
    purge = log_files_to_purge(LOG, CHECKPOINTED, ["7c3a-current.parquet"])
    assert sorted(purge.deleted) == sorted(OLD_VERSIONS)
    assert sorted(purge.unrecognised) == sorted(UNRECOGNISED)
    assert not set(purge.deleted) & set(KEPT_VERSIONS)


def test_the_sidecars_the_checkpoint_names_stay_however_it_spells_them() -> None:
    sidecars = ["_sidecars/a.parquet", "_sidecars/b c.parquet", "_sidecars/d.parquet"]
    # a sidecar action's path is URL-encoded, and may be absolute
    for spelled in (
        ["a.parquet", "b%20c.parquet"],
        ["_sidecars/a.parquet", "b c.parquet"],
        [
            "file:/lake/t/_delta_log/_sidecars/a.parquet",
            "/lake/t/_delta_log/_sidecars/b%20c.parquet",
        ],
    ):
        purge = log_files_to_purge([f"{v(2)}.checkpoint.parquet", *sidecars], 2, spelled)
        assert purge.deleted == ("_sidecars/d.parquet",), spelled
    # a classic checkpoint names none: every sidecar goes
    purge = log_files_to_purge([f"{v(2)}.checkpoint.parquet", *sidecars], 2, [])
    assert purge.deleted == tuple(sidecars)


def test_a_log_holding_only_the_checkpointed_version_loses_nothing() -> None:
    names = [f"{v(7)}.json", f"{v(7)}.crc", f"{v(7)}.checkpoint.parquet", "_last_checkpoint"]
    assert log_files_to_purge(names, 7, []) == LogPurge((), ())


@pytest.mark.parametrize(
    "names",
    [
        [f"{v(12)}.json"],  # not checkpointed
        [f"{v(11)}.checkpoint.parquet", f"{v(12)}.json"],  # an older checkpoint only
        [f"{v(12)}.checkpoint.0000000001.0000000002.parquet"],  # a part missing
        [f"{v(12)}.checkpoint.0000000002.0000000002.parquet"],
        [f"{v(12)}.checkpoint.parquet.tmp"],
    ],
)
def test_no_log_is_truncated_without_a_complete_checkpoint_of_the_version(
    names: list[str],
) -> None:
    assert not has_complete_checkpoint(names, 12)
    with pytest.raises(ValueError, match="checkpoint the table before truncating its log"):
        log_files_to_purge([f"{v(1)}.json", *names], 12, [])


@pytest.mark.parametrize(
    "names",
    [
        [f"{v(12)}.checkpoint.parquet"],
        [f"{v(12)}.checkpoint.0000000001.0000000001.parquet"],
        [f"{v(12)}.checkpoint.{n:010d}.0000000003.parquet" for n in (3, 1, 2)],
        [f"{v(12)}.checkpoint.5c1d9f2e-8c33-4f1a-a7e0-2b6f3d4c5e6f.json"],
        [f"{v(12)}.checkpoint.5c1d9f2e-8c33-4f1a-a7e0-2b6f3d4c5e6f.parquet"],
    ],
)
def test_classic_multi_part_and_v2_checkpoints_are_complete(names: list[str]) -> None:
    assert has_complete_checkpoint(names, 12)
    assert log_files_to_purge([f"{v(1)}.json", *names], 12, []).deleted == (f"{v(1)}.json",)


def test_a_log_file_holds_actions_from_the_version_its_name_starts_with() -> None:
    assert first_version_held(f"{v(3)}.json") == 3
    assert first_version_held(f"{v(3)}.{v(9)}.compacted.json") == 3
    assert first_version_held(f"{v(4)}.checkpoint.0000000001.0000000002.parquet") == 4
    for other in ("_last_checkpoint", f"{v(3)}.json.tmp", f"{v(3)[1:]}.json", "x.json"):
        assert first_version_held(other) is None, other


def test_the_marker_is_a_small_json_file() -> None:
    marker = PurgeMarker(log_start=12, data_version=9)
    assert json.loads(marker.to_json()) == {"log_start": 12, "data_version": 9}
    assert PurgeMarker.from_json(marker.to_json()) == marker
    assert PURGE_MARKER_FILE == "_profile_lake_purge.json"  # hidden from Delta by its `_`


@pytest.mark.parametrize(
    "text",
    [
        "",
        "{",
        "[]",
        "null",
        '{"log_start": 12}',
        '{"log_start": "12", "data_version": 9}',
        '{"log_start": 12, "data_version": 9.0}',
        '{"log_start": true, "data_version": 0}',
        '{"log_start": 9, "data_version": 12}',
        '{"log_start": 3, "data_version": -1}',
    ],
)
def test_an_unreadable_marker_is_an_error_not_no_marker(text: str) -> None:
    with pytest.raises(ValueError):
        PurgeMarker.from_json(text)


@pytest.mark.parametrize(
    ("consumed", "expected"),
    [
        (15, 15),  # read after the purge: nothing to do with it
        (12, 12),
        (11, 12),  # past the last change: the maintenance up to 12 reads as nothing
        (9, 12),
        (8, None),  # the changes of version 9 are gone
        (0, None),
    ],
)
def test_a_reader_counts_the_purge_as_read_only_if_it_had_read_every_change_before(
    consumed: int, expected: int | None
) -> None:
    assert consumed_after_purge(consumed, PurgeMarker(12, 9), latest=15) == expected


def test_a_marker_past_the_latest_version_is_of_another_log() -> None:
    assert consumed_after_purge(9, PurgeMarker(12, 9), latest=11) is None
    assert consumed_after_purge(12, PurgeMarker(12, 9), latest=12) == 12
