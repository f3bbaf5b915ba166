"""`profile-lake forget`: the line it lands, the rules it checks, the atomic write. No Spark."""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from profile_lake.cli import main
from profile_lake.erasure.command import (
    ForgetError,
    ForgetRequest,
    file_name,
    forget_request,
    land_request,
)
from profile_lake.erasure.salts import tenants_needing_salts
from profile_lake.project import project_var

NOON = datetime(2026, 12, 4, 12, 0, 0, 123456, tzinfo=UTC)


def test_the_line_has_the_four_fields_of_the_spec() -> None:
    request = forget_request("acme", "email:ann@example.com", "req-1", NOON)
    assert json.loads(request.line()) == {
        "tenant_id": "acme",
        "request_id": "req-1",
        "identity": "email:ann@example.com",
        "requested_ts": "2026-12-04T12:00:00.123456+00:00",
    }
    assert "\n" not in request.line()


def test_requested_ts_is_utc_and_passes_the_landing_timestamp_rule() -> None:
    paris = timezone(timedelta(hours=1))
    request = forget_request("acme", "phone:+331", "r", NOON.astimezone(paris))
    assert request.requested_ts == "2026-12-04T12:00:00.123456+00:00"
    assert re.search(str(project_var("iso_timestamp_pattern")), request.requested_ts)


def test_request_id_defaults_to_a_new_uuid4_hex() -> None:
    first = forget_request("acme", "cookie:c1", now=NOON).request_id
    second = forget_request("acme", "cookie:c1", now=NOON).request_id
    assert re.fullmatch(r"[0-9a-f]{32}", first) and first != second


@pytest.mark.parametrize(
    ("tenant", "identity", "request_id", "says"),
    [
        ("Acme", "email:a@b", "r", "must match"),
        ("", "email:a@b", "r", "must match"),
        ("acme", "fax:123", "r", "namespace:value"),
        ("acme", "email:", "r", "namespace:value"),
        ("acme", "email:" + "x" * 257, "r", "namespace:value"),
        ("acme", "email:a@b", "", "1 to 128"),
        ("acme", "email:a@b", "r" * 129, "1 to 128"),
    ],
)
def test_a_request_the_lake_would_quarantine_is_refused(
    tenant: str, identity: str, request_id: str, says: str
) -> None:
    with pytest.raises(ForgetError, match=re.escape(says)):
        forget_request(tenant, identity, request_id, NOON)


def test_the_file_name_is_stamped_and_safe_for_a_glob() -> None:
    request = forget_request("acme", "email:a@b", "r{1}/*..?", NOON)
    name = file_name(request)
    assert name == "forget-20261204T120000123456Z-r_1______.jsonl"
    assert not any(char in name for char in "{}[]*?\\/")


def test_landing_writes_one_line_atomically(tmp_path: Path, monkeypatch) -> None:
    request = forget_request("acme", "email:a@b", "req-1", NOON)
    landed = land_request(request, tmp_path)
    assert landed.parent == tmp_path / "erasures"
    assert landed.read_text(encoding="utf-8") == request.line() + "\n"
    # nothing else is left in the folder: the hidden file was renamed
    assert os.listdir(tmp_path / "erasures") == [landed.name]
    # a file that landed is never changed
    with pytest.raises(ForgetError, match="already landed"):
        land_request(request, tmp_path)


def test_a_failed_write_leaves_nothing_a_landing_glob_matches(tmp_path: Path, monkeypatch) -> None:
    def failing_replace(source: object, target: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", failing_replace)
    request = ForgetRequest("acme", "email:a@b", "req-1", NOON.isoformat())
    with pytest.raises(OSError, match="disk full"):
        land_request(request, tmp_path)
    assert os.listdir(tmp_path / "erasures") == []


def test_the_command_lands_the_request_and_says_what_the_next_run_does(
    tmp_path: Path, capsys
) -> None:
    code = main(
        ["forget", "--tenant", "acme", "--identity", "crm:42", "--request-id", "r-9",
         "--landing", str(tmp_path)]
    )  # fmt: skip
    assert code == 0
    (landed,) = (tmp_path / "erasures").glob("forget-*-r-9.jsonl")
    assert json.loads(landed.read_text())["identity"] == "crm:42"
    said = capsys.readouterr().out
    assert "r-9" in said and "dbt build" in said
    # the preview names the file to remove, and never echoes the person's identity
    assert f"remove {landed.name}" in said and "crm:42" not in said


def test_the_command_refuses_a_bad_identity_and_writes_nothing(tmp_path: Path, capsys) -> None:
    code = main(["forget", "--tenant", "acme", "--identity", "nope", "--landing", str(tmp_path)])
    assert code == 1
    assert "error:" in capsys.readouterr().err
    assert not (tmp_path / "erasures").exists()


def test_salts_are_drawn_for_readable_tenants_without_one() -> None:
    requesting = ["acme", "acme", "~unreadable", None, "globex", "hooli"]
    assert tenants_needing_salts(requesting, ["globex"]) == ["acme", "hooli"]
    assert tenants_needing_salts([], ["acme"]) == []
