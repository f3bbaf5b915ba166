{% macro check_change_feed_kept(relation, watermarks, oldest_version) -%}
    {%- set accepted = var('accept_change_feed_gaps', []) -%}
    {%- set stranded = [] -%}
    {%- for row in watermarks.rows
        if row['watermark'] | int + 1 < oldest_version and row['tenant_id'] not in accepted and '*' not in accepted -%}
        {%- do stranded.append(row['tenant_id'] ~ ' (after version ' ~ row['watermark'] ~ ')') -%}
    {%- endfor -%}
    {%- if stranded -%}
        {{ exceptions.raise_compiler_error(
            "the change feed of " ~ relation ~ " no longer holds the changes " ~ this.identifier
            ~ " has still to read for tenant " ~ stranded | join(', tenant ')
            ~ ": its history now starts at version " ~ oldest_version
            ~ " (Delta removes commits older than delta.logRetentionDuration). Re-read those"
            ~ " tenants' current rows from " ~ relation ~ ", then go on from version "
            ~ oldest_version ~ " with --vars '{accept_change_feed_gaps: [<tenant>, ...]}'."
            ~ " Raise delta.logRetentionDuration on " ~ relation
            ~ " above the longest time a tenant may wait, so that it does not happen again."
        ) }}
    {%- endif -%}
{%- endmacro %}
