{#- Stops a first build (or full refresh) of a model read from `relation`'s change feed when
    the feed no longer starts at the table's creation: Delta removes commits older than
    delta.logRetentionDuration (30 days by default) from the log, and when the creation is
    among them the changes before the oldest version left cannot be read, so a build from
    there would leave them out silently. Called when no creation or replacement of the table
    is left in its history (delta_table_creations); `oldest_version`: the oldest version
    left. With '*' in var `accept_change_feed_gaps` the build goes on from there. -#}
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
