"""Read a Delta table with the independent `deltalake` (delta-rs) reader, without Spark."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
from deltalake import DeltaTable
from pyarrow import fs

# DataFusion's Arrow view types, and the plain types every other reader of the lake returns
_PLAIN_TYPES = {pa.string_view(): pa.string(), pa.binary_view(): pa.binary()}


def has_deletion_vectors(table: DeltaTable) -> bool:
    """Whether the table's protocol lets its files carry deletion vectors (rows marked deleted
    in a side file instead of the data file being rewritten)."""
    return "deletionVectors" in (table.protocol().reader_features or [])


def read_delta(table_dir: Path | str, columns: list[str] | None = None) -> pa.Table:
    """The table's current snapshot.

    A table with deletion vectors is read by delta-rs' DataFusion scan, the reader of delta-rs
    that applies them (its pyarrow reader refuses such tables). Others are read file by file
    through a pyarrow filesystem rooted at the table: delta-rs' own object store intermittently
    aborts the process at exit (delta-io/delta-rs#2184), which would fail a test run after its
    tests passed; the scan is consumed whole before it returns, so no read is in flight then."""
    table_dir = str(table_dir)
    table = DeltaTable(table_dir)
    if has_deletion_vectors(table):
        return plain_types(pa.table(table.scan(columns=columns)))
    files = fs.SubTreeFileSystem(table_dir, fs.LocalFileSystem())
    return table.to_pyarrow_table(columns=columns, filesystem=files)


def plain_types(table: pa.Table) -> pa.Table:
    """`table` with DataFusion's view types cast to the plain types other readers return."""
    fields = [field.with_type(_plain_type(field.type)) for field in table.schema]
    return table.cast(pa.schema(fields, metadata=table.schema.metadata))


def _plain_type(data_type: pa.DataType) -> pa.DataType:
    """`data_type` with view types (also nested in lists, maps and structs) made plain."""
    if data_type in _PLAIN_TYPES:
        return _PLAIN_TYPES[data_type]
    if pa.types.is_list_view(data_type) or pa.types.is_list(data_type):
        return pa.list_(data_type.value_field.with_type(_plain_type(data_type.value_type)))
    if pa.types.is_large_list_view(data_type) or pa.types.is_large_list(data_type):
        return pa.large_list(data_type.value_field.with_type(_plain_type(data_type.value_type)))
    if pa.types.is_map(data_type):
        return pa.map_(
            data_type.key_field.with_type(_plain_type(data_type.key_type)),
            data_type.item_field.with_type(_plain_type(data_type.item_type)),
        )
    if pa.types.is_struct(data_type):
        return pa.struct([field.with_type(_plain_type(field.type)) for field in data_type])
    return data_type
