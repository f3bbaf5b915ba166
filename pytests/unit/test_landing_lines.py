"""Splitting a landed file into numbered lines (profile_lake.ingest.lines): the rules the Spark
ingest applies per file, with no Spark."""

from __future__ import annotations

import gzip

import pytest

from profile_lake.ingest.lines import LandedLine, landed_lines, split_lines, stream_of


def lines_of(content: bytes, path: str = "records/part-00000.jsonl") -> list[LandedLine]:
    return list(landed_lines(path, content))


def texts(content: bytes, path: str = "records/part-00000.jsonl") -> list[str]:
    return [item.line for item in lines_of(content, path)]


def test_lines_are_numbered_from_one() -> None:
    found = lines_of(b'{"a":1}\n{"b":2}\n{"c":3}\n')
    assert [(item.line_number, item.line) for item in found] == [
        (1, '{"a":1}'),
        (2, '{"b":2}'),
        (3, '{"c":3}'),
    ]
    assert all(item.is_valid_utf8 for item in found)


def test_a_final_newline_ends_the_last_line_and_starts_no_empty_one() -> None:
    assert texts(b"a\nb\n") == ["a", "b"]
    assert texts(b"a\nb") == ["a", "b"]


def test_blank_lines_inside_a_file_are_lines() -> None:
    assert texts(b"a\n\n   \nb\n") == ["a", "", "   ", "b"]
    assert texts(b"\n") == [""]
    assert texts(b"\n\n") == ["", ""]


def test_an_empty_file_has_no_line() -> None:
    assert lines_of(b"") == []
    assert lines_of(gzip.compress(b""), "records/part-00000.jsonl.gz") == []


def test_crlf_endings_are_accepted_and_not_kept() -> None:
    found = lines_of(b'{"a":1}\r\n{"b":2}\r\n')
    assert [item.line for item in found] == ['{"a":1}', '{"b":2}']
    assert [item.line_bytes for item in found] == [7, 7]


def test_mixed_endings_and_a_lone_carriage_return() -> None:
    # Only one \r right before \n is a line ending; a \r elsewhere is part of the line.
    assert texts(b"a\r\nb\nc\r\r\nd\re\n") == ["a", "b", "c\r", "d\re"]
    assert texts(b"a\r") == ["a"]


def test_line_bytes_count_bytes_not_characters() -> None:
    (line,) = lines_of('{"name":"Zoë ☃"}\n'.encode())
    assert line.line == '{"name":"Zoë ☃"}'
    assert line.line_bytes == len('{"name":"Zoë ☃"}'.encode())
    assert line.line_bytes > len(line.line)


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [
        (b"\xe9", "\\xe9"),  # Latin-1 e-acute
        (b"\xff\xfe", "\\xff\\xfe"),
        (b"\xc0\xaf", "\\xc0\\xaf"),  # overlong '/'
        (b"\xed\xa0\x80", "\\xed\\xa0\\x80"),  # an encoded surrogate
        (b"\xe2\x82", "\\xe2\\x82"),  # truncated sequence
        (b"\x80", "\\x80"),  # lone continuation byte
    ],
)
def test_invalid_utf8_is_kept_as_escapes(raw: bytes, escaped: str) -> None:
    content = b'{"city":"Montr' + raw + b'al"}\n{"ok":true}\n'
    bad, good = lines_of(content)
    assert not bad.is_valid_utf8
    assert bad.line == '{"city":"Montr' + escaped + 'al"}'
    assert bad.line_bytes == len(content.split(b"\n")[0])
    assert good.is_valid_utf8 and good.line == '{"ok":true}'


def test_valid_utf8_around_an_invalid_byte_is_kept_as_text() -> None:
    (line,) = lines_of("é☃".encode() + b"\xff" + "ü".encode())
    assert line.line == "é☃\\xffü"
    assert not line.is_valid_utf8


def test_a_byte_order_mark_and_control_characters_are_kept() -> None:
    (line,) = lines_of(b'\xef\xbb\xbf{"a":"\x00\x01\x1f"}\n')
    assert line.is_valid_utf8
    assert line.line == '\ufeff{"a":"\x00\x01\x1f"}'


def test_a_gzip_file_is_decompressed() -> None:
    content = gzip.compress(b'{"a":1}\r\n{"b":2}\n\xe9\n')
    found = lines_of(content, "records/part-00002.jsonl.gz")
    assert [(item.line_number, item.line, item.is_valid_utf8) for item in found] == [
        (1, '{"a":1}', True),
        (2, '{"b":2}', True),
        (3, "\\xe9", False),
    ]


def test_a_multi_member_gzip_file_is_read_whole() -> None:
    content = gzip.compress(b"a\nb\n") + gzip.compress(b"c\n")
    assert texts(content, "records/part-00002.jsonl.gz") == ["a", "b", "c"]


def test_a_plain_file_is_not_decompressed_even_if_it_is_gzip() -> None:
    compressed = gzip.compress(b"a\n")
    found = lines_of(compressed, "records/part-00000.jsonl")
    assert found and found[0].line_number == 1


@pytest.mark.parametrize(
    "content",
    [
        b"this is not gzip at all\n",
        gzip.compress(b'{"a":1}\n{"b":2}\n', mtime=0)[:-12],  # truncated: no trailer
        gzip.compress(b'{"a":1}\n', mtime=0)[:-4] + b"\x00\x00\x00\x00",  # wrong size in trailer
        b"\x1f\x8b",  # a gzip magic number and nothing else
    ],
)
def test_a_corrupt_gzip_file_gives_one_line_zero(content: bytes) -> None:
    (line,) = lines_of(content, "records/part-00002.jsonl.gz")
    assert line.line_number == 0
    assert not line.is_valid_utf8
    assert line.line.startswith("unreadable compressed file: ")
    assert line.line_bytes == len(content)


def test_split_lines_numbers_a_large_file_in_order() -> None:
    content = b"".join(b'{"n":%d}\n' % index for index in range(10_000))
    found = list(split_lines(content))
    assert len(found) == 10_000
    assert found[-1].line_number == 10_000 and found[-1].line == '{"n":9999}'


def test_a_long_line_is_one_line() -> None:
    long = b'{"blob":"' + b"x" * 5_000_000 + b'"}'
    (line,) = lines_of(long + b"\n")
    assert line.line_bytes == len(long)


@pytest.mark.parametrize(
    ("path", "stream"),
    [
        ("records/part-00000.jsonl", "records"),
        ("/landing/id_mutations/part-00001.jsonl", "id_mutations"),
        ("file:///tmp/landing/entity_names/part-00002.jsonl.gz", "entity_names"),
        ("file:/tmp/landing/records/part-00003.jsonl", "records"),
        ("/landing/records/", None),  # a folder, not a file in it
        ("/landing/other/part-00000.jsonl", None),
        ("/landing/records/nested/part-00000.jsonl", None),
        ("/landing/Records/part-00000.jsonl", None),
        ("part-00000.jsonl", None),
        ("", None),
    ],
)
def test_stream_of_is_the_folder_the_file_sits_in(path: str, stream: str | None) -> None:
    assert stream_of(path) == stream
