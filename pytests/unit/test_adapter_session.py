"""The adapter's session connection (no Spark started): the dbt node a statement runs for,
read from the query comment dbt puts before it, which names the statement's Spark jobs."""

from __future__ import annotations

import json

import pytest
from dbt.adapters.profile_lake_spark.session import dbt_node_id


def query_comment(**fields: str) -> str:
    """The comment dbt's default `query-comment` puts before a statement."""
    header = {"app": "dbt", "dbt_version": "1.11.16", "profile_name": "profile_lake"}
    return f"/* {json.dumps({**header, 'target_name': 'local', **fields})} */\n"


@pytest.mark.parametrize(
    ("sql", "node_id"),
    [
        (
            query_comment(node_id="model.profile_lake.profiles") + "create table p as select 1",
            "model.profile_lake.profiles",
        ),
        (
            "  " + query_comment(node_id="operation.profile_lake.profile_lake-on-run-end-0"),
            "operation.profile_lake.profile_lake-on-run-end-0",
        ),
        (query_comment(connection_name="master") + "show databases", None),
        ("select 1\n" + query_comment(node_id="model.profile_lake.late"), None),
        ("/* a comment of the model's own */ select 1", None),
        ('/* {"node_id": "model.profile_lake.broken" */ select 1', None),
        (query_comment(node_id="") + "select 1", None),
        ("select 1", None),
    ],
    ids=["model", "hook", "no node", "comment after", "plain comment", "not json", "empty", "none"],
)
def test_dbt_node_id(sql: str, node_id: str | None) -> None:
    assert dbt_node_id(sql) == node_id
