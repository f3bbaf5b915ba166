"""`profile-lake forget`: land a request to erase a person (SPEC.md section 7).

Writes one line into the `erasures/` landing stream, under a hidden name first and then renamed
(`os.replace`) to `forget-<UTC stamp>-<request id>.jsonl`: the ingest never sees half a file.
The next `dbt run` / `dbt build` stages the request like any landed line; the identity is kept
in the lake only as a hash salted per tenant (`stg_erasures__requests.identity_hash`)."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from profile_lake.project import project_var, tenant_id_pattern

STREAM = "erasures"
REQUEST_ID_MAX = 128
# a request id in a file name: characters with no meaning to a glob or a shell, and short
_UNSAFE_IN_NAME = re.compile(r"[^A-Za-z0-9_-]")
_NAME_PART_MAX = 64


class ForgetError(ValueError):
    """A request the lake would quarantine: nothing is written."""


@dataclass(frozen=True)
class ForgetRequest:
    tenant_id: str
    identity: str
    request_id: str
    requested_ts: str

    def line(self) -> str:
        """The landing line: the four fields of SPEC.md section 7, one JSON object."""
        return json.dumps(
            {
                "tenant_id": self.tenant_id,
                "request_id": self.request_id,
                "identity": self.identity,
                "requested_ts": self.requested_ts,
            },
            separators=(",", ":"),
        )


def utc_now() -> datetime:
    return datetime.now(UTC)


def forget_request(
    tenant_id: str, identity: str, request_id: str | None = None, now: datetime | None = None
) -> ForgetRequest:
    """The request, checked with the project's rules (dbt_project.yml vars tenant_id_pattern
    and identity_pattern): a request the staging model would quarantine is refused here."""
    if not re.search(tenant_id_pattern(), tenant_id):
        raise ForgetError(f"tenant {tenant_id!r} must match {tenant_id_pattern()}")
    if not re.search(str(project_var("identity_pattern")), identity):
        raise ForgetError(f"the identity {project_var('identity_rule_message')}")
    request_id = uuid.uuid4().hex if request_id is None else request_id
    if not 1 <= len(request_id) <= REQUEST_ID_MAX:
        raise ForgetError(f"--request-id must be 1 to {REQUEST_ID_MAX} characters")
    moment = (now or utc_now()).astimezone(UTC)
    return ForgetRequest(tenant_id, identity, request_id, moment.isoformat(timespec="microseconds"))


def file_name(request: ForgetRequest) -> str:
    """`forget-<UTC stamp>-<request id>.jsonl`; the request id made safe for a file name."""
    stamp = datetime.fromisoformat(request.requested_ts).strftime("%Y%m%dT%H%M%S%fZ")
    safe = _UNSAFE_IN_NAME.sub("_", request.request_id)[:_NAME_PART_MAX]
    return f"forget-{stamp}-{safe}.jsonl"


def land_request(request: ForgetRequest, landing: Path) -> Path:
    """Write the request's line into `<landing>/erasures/` atomically: a hidden temporary file
    that no landing glob matches, flushed to disk, then renamed to its landing name."""
    folder = landing / STREAM
    folder.mkdir(parents=True, exist_ok=True)
    final = folder / file_name(request)
    if final.exists():
        raise ForgetError(f"{final} already landed (a landed file is never changed)")
    temporary = folder / f".{final.name}.tmp"
    try:
        with open(temporary, "w", encoding="utf-8") as handle:
            handle.write(request.line() + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, final)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return final


def plan(request: ForgetRequest, landed: Path) -> list[str]:
    """What the next run does with the request."""
    return [
        f"landed {landed}: request {request.request_id} of tenant {request.tenant_id}",
        "the next `dbt run` / `dbt build` stages it into stg_erasures__requests, which keeps "
        "the identity only as a hash salted for the tenant (a salt is drawn for a tenant's "
        "first request), and clears the line's text from the landing table",
        "applying requests is not built yet: staging this one erases nothing so far",
        f"the landing file is the producer's: remove {landed.name} once it is staged",
    ]


def add_forget_arguments(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add("--tenant", required=True, help="the tenant the person belongs to")
    add("--identity", required=True, help="an identity the person named: namespace:value")
    add("--request-id", help="the request's id, unique within the tenant (default: a new uuid4)")
    add("--landing", type=Path, help="landing folder (default: PROFILE_LAKE_LANDING)")


def run_forget(args: argparse.Namespace) -> int:
    landing = args.landing or Path(os.environ.get("PROFILE_LAKE_LANDING", "sample/landing"))
    try:
        request = forget_request(args.tenant, args.identity, args.request_id)
        landed = land_request(request, landing)
    except (ForgetError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    for line in plan(request, landed):
        print(line)
    return 0
