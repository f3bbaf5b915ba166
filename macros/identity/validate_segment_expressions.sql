{#- Fails compilation naming the segment whose expression is malformed. -#}
{% macro validate_segment_expressions(segments, relation=none) -%}
    {%- set target_relation = relation if relation is not none else ref('profiles') -%}
    {%- set seen = [] -%}
    {%- for segment in segments -%}
        {%- if not segment.get('segment_id') or modules.re.match('^[a-z0-9_]{1,64}$', segment.segment_id | string) is none -%}
            {{ exceptions.raise_compiler_error(
                "Segment " ~ loop.index ~ " of the segments seed has segment_id '" ~ segment.get('segment_id')
                ~ "': use 1 to 64 characters of a-z, 0-9 and _.") }}
        {%- endif -%}
        {%- if segment.segment_id in seen -%}
            {{ exceptions.raise_compiler_error(
                "Segment '" ~ segment.segment_id ~ "' is defined twice in the segments seed: keep one row per segment_id.") }}
        {%- endif -%}
        {%- do seen.append(segment.segment_id) -%}
        {%- if not segment.get('expression') or not (segment.expression | trim) -%}
            {{ exceptions.raise_compiler_error(
                "Segment '" ~ segment.segment_id ~ "' has an empty expression: give a SQL boolean expression over "
                ~ target_relation ~ " (columns of profiles).") }}
        {%- endif -%}
    {%- endfor -%}
    {%- if segments | length == 0 or not execute -%}
        {{ return(none) }}
    {%- endif -%}
    {#- nothing to analyse against before the profiles are first built (a compile on a fresh lake) -#}
    {%- if adapter.get_relation(
            database=target_relation.database, schema=target_relation.schema,
            identifier=target_relation.identifier) is none -%}
        {{ return(none) }}
    {%- endif -%}
    {%- for segment in segments if segment.get('changes_at') -%}
        {%- set moments = adapter.sql_analysis(
            'select (' ~ segment.changes_at ~ ') as changes_at from ' ~ target_relation ~ ' limit 0') -%}
        {%- set found = moments.error if moments.error is not none else 'type ' ~ moments.columns[0][1] -%}
        {%- if moments.error is not none or moments.columns[0][1] != 'array<timestamp>' -%}
            {{ exceptions.raise_compiler_error(
                "Segment '" ~ segment.segment_id ~ "' has changes_at `" ~ segment.changes_at ~ "` (" ~ found
                ~ "). Give a SQL array of timestamps over the columns of profiles: the moments its membership"
                ~ " can change, e.g. array(last_event_ts + interval 7 days). Fix its row in seeds/segments.csv.") }}
        {%- endif -%}
    {%- endfor -%}
    {%- set flags = [] -%}
    {%- for segment in segments -%}
        {%- do flags.append('(' ~ segment.expression ~ ') as `' ~ segment.segment_id ~ '`') -%}
    {%- endfor -%}
    {%- set together = adapter.sql_analysis(
        'select ' ~ flags | join(', ') ~ ' from ' ~ target_relation ~ ' limit 0') -%}
    {%- if together.error is none and together.columns | map(attribute=1) | reject('equalto', 'boolean') | list | length == 0 -%}
        {{ return(none) }}
    {%- endif -%}
    {%- for segment in segments -%}
        {%- set alone = adapter.sql_analysis(
            'select (' ~ segment.expression ~ ') as flag from ' ~ target_relation ~ ' limit 0') -%}
        {%- if alone.error is not none -%}
            {{ exceptions.raise_compiler_error(
                "Segment '" ~ segment.segment_id ~ "' has an invalid expression `" ~ segment.expression
                ~ "` over " ~ target_relation ~ ": " ~ alone.error
                ~ " Fix its row in seeds/segments.csv (a SQL boolean expression over the columns of profiles).") }}
        {%- elif alone.columns[0][1] != 'boolean' -%}
            {{ exceptions.raise_compiler_error(
                "Segment '" ~ segment.segment_id ~ "' has expression `" ~ segment.expression ~ "` of type "
                ~ alone.columns[0][1] ~ ", not boolean. Fix its row in seeds/segments.csv (compare it, e.g. `... > 0`).") }}
        {%- endif -%}
    {%- endfor -%}
    {#- each alone is fine but together they are not (e.g. an unbalanced comment): say so -#}
    {{ exceptions.raise_compiler_error(
        "The segments' expressions are each valid but fail together: " ~ together.error) }}
{%- endmacro %}
