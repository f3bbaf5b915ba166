"""The deltalake reader's type normalisation: DataFusion's view types become the plain types
the pyarrow reader returns, at any depth."""

from __future__ import annotations

import pyarrow as pa

from profile_lake.delta_reader import _plain_type, plain_types


def test_view_types_become_plain_at_any_depth() -> None:
    viewed = pa.struct(
        [
            pa.field("name", pa.string_view()),
            pa.field("ids", pa.list_view(pa.string_view())),
            pa.field("tags", pa.map_(pa.string_view(), pa.large_list(pa.binary_view()))),
            pa.field("count", pa.int64(), nullable=False),
        ]
    )
    assert _plain_type(viewed) == pa.struct(
        [
            pa.field("name", pa.string()),
            pa.field("ids", pa.list_(pa.string())),
            pa.field("tags", pa.map_(pa.string(), pa.large_list(pa.binary()))),
            pa.field("count", pa.int64(), nullable=False),
        ]
    )


def test_plain_types_are_left_as_they_are() -> None:
    for data_type in (pa.string(), pa.int32(), pa.timestamp("us", "UTC"), pa.list_(pa.bool_())):
        assert _plain_type(data_type) == data_type


def test_a_table_keeps_its_values_and_nulls() -> None:
    viewed = pa.table(
        {
            "tenant_id": pa.array(["acme", None], pa.string_view()),
            "related_ids": pa.array([["a", "b"], None], pa.list_(pa.string_view())),
        }
    )
    plain = plain_types(viewed)
    assert plain.schema.field("tenant_id").type == pa.string()
    assert plain.schema.field("related_ids").type == pa.list_(pa.string())
    assert plain.to_pylist() == viewed.to_pylist()
