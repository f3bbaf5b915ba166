{% macro check_change_feed_from_creation(relation, oldest_version) -%}
    {%- if oldest_version > 0 and '*' not in var('accept_change_feed_gaps', []) -%}
        {{ exceptions.raise_compiler_error(
            "the change feed of " ~ relation ~ " no longer starts at the table's creation: its"
            ~ " history now starts at version " ~ oldest_version ~ " (Delta removes commits older"
            ~ " than delta.logRetentionDuration), so a first build or full refresh of "
            ~ this.identifier ~ " would leave out the changes before it. To build from version "
            ~ oldest_version ~ ' on, run with --vars "{accept_change_feed_gaps: [' ~ "'*'" ~ ']}".'
        ) }}
    {%- endif -%}
{%- endmacro %}
