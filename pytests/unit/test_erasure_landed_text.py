"""The landed text of a line relating to an erased person (profile_lake.erasure.landed_text)."""

import json

import pytest

from profile_lake.erasure.landed_text import top_level_spans, without_erased_related

GONE = frozenset({"email:gone@x.test"})


def test_only_the_erased_related_id_leaves_and_every_other_byte_stays() -> None:
    line = (
        '{"tenant_id": "acme", "payload": {"score": 1.10, "n": [1, 2]}, '
        '"related_ids": ["phone:+1555", "email:gone@x.test", "crm:7"], "seq": 3}'
    )
    rewritten = without_erased_related(line, GONE)
    assert rewritten == (
        '{"tenant_id": "acme", "payload": {"score": 1.10, "n": [1, 2]}, '
        '"related_ids": ["phone:+1555","crm:7"], "seq": 3}'
    )
    assert json.loads(rewritten)["related_ids"] == ["phone:+1555", "crm:7"]


def test_a_nested_related_ids_key_is_not_the_lines_own() -> None:
    line = (
        '{"payload": {"related_ids": ["email:gone@x.test"]}, "related_ids": ["email:gone@x.test"]}'
    )
    assert without_erased_related(line, GONE) == (
        '{"payload": {"related_ids": ["email:gone@x.test"]}, "related_ids": []}'
    )


@pytest.mark.parametrize(
    "line",
    [
        '{"related_ids": ["phone:+1555"]}',
        "not json",
        '["email:gone@x.test"]',
        '{"related_ids": "email:gone@x.test"}',
        None,
    ],
)
def test_a_line_without_an_erased_related_id_is_unchanged(line: str | None) -> None:
    assert without_erased_related(line, GONE) == line


def test_escaped_keys_and_values_are_read_as_json_reads_them() -> None:
    line = '{"related\\u005fids": ["email:gone@x.test", "email:caf\\u00e9@x.test"]}'
    rewritten = without_erased_related(line, GONE)
    assert json.loads(rewritten) == {"related_ids": ["email:café@x.test"]}


def test_spans_name_each_top_level_value() -> None:
    text = ' { "a" : 1 , "b": {"c": [2]} } '
    assert [(key, text[start:end]) for key, start, end in top_level_spans(text)] == [
        ("a", "1"),
        ("b", '{"c": [2]}'),
    ]
