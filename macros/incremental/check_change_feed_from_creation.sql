{#- Stops a first build (or full refresh) of a model read from `relation`'s change feed when
    the feed no longer starts at the table's creation: Delta removes commits older than
    delta.logRetentionDuration (30 days by default) from the log, so the changes before the
    oldest version left cannot be read, and a build from there would leave them out silently.
    A history holding a creation or replacement of the table (CREATE, REPLACE TABLE) starts
    the table's rows as they are. `history`: the agate table of DESCRIBE HISTORY of
    `relation`. With '*' in var `accept_change_feed_gaps` the build goes on from the oldest
    version left. -#}
{% macro check_change_feed_from_creation(relation, history) -%}
    {%- set versions = history.columns['version'].values() | map('int') | list -%}
    {%- set creations = [] -%}
    {%- for operation in history.columns['operation'].values()
        if modules.re.match('(CREATE|REPLACE) ', operation) -%}
        {%- do creations.append(operation) -%}
    {%- endfor -%}
    {%- if versions | min > 0 and not creations and '*' not in var('accept_change_feed_gaps', []) -%}
        {{ exceptions.raise_compiler_error(
            "the change feed of " ~ relation ~ " no longer starts at the table's creation: its"
            ~ " history now starts at version " ~ versions | min ~ " (Delta removes commits older"
            ~ " than delta.logRetentionDuration), so a first build or full refresh of "
            ~ this.identifier ~ " would leave out the changes before it. To build from version "
            ~ versions | min ~ ' on, run with --vars "{accept_change_feed_gaps: [' ~ "'*'" ~ ']}".'
        ) }}
    {%- endif -%}
{%- endmacro %}
