{#
    The links of the longest chain of partial key changes (int_cdc_key_changes): changes that
    share a key, each later than the one before. A key change ties its two keys, so following
    what one run touches (cdc_touched_keys_query), or carrying rows over (cdc_history), takes one
    join round per link. The table is small: one narrow query per link, and one in all when no
    two key changes share a key. Raises, naming var cdc_key_change_chain_limit, past that many
    links. 1 when nothing has landed (compiled for lint or docs). Counted once an invocation:
    every node that asks runs after int_cdc_key_changes is built (each query that follows the
    touched keys asks, five in an incremental cdc_history run).
#}
{% macro cdc_key_change_rounds() %}
    {% set known = cdc_invocation_state('cdc_key_change_rounds', {}) %}
    {% if 'links' not in known %}
        {% do known.update({'links': cdc_key_change_links()}) %}
    {% endif %}
    {{ return(known.links) }}
{% endmacro %}

{% macro cdc_key_change_links() %}
    {% set limit = cdc_key_change_chain_limit() %}
    {% if not cdc_landed_partitions() %}
        {{ return(1) }}
    {% endif %}
    {% set longest = namespace(links=1) %}
    {% for links in range(2, limit + 2) if longest.links == links - 1 %}
        {% set query %}
            with key_change_ends as ({{ cdc_key_change_ends() }})

            select count(*)
            from key_change_ends as link_1
            {% for link in range(2, links + 1) %}
                inner join key_change_ends as link_{{ link }}
                    on
                        link_{{ link }}.table_id = link_{{ link - 1 }}.table_id
                        and link_{{ link }}.key_json = link_{{ link - 1 }}.other_key_json
                        and link_{{ link }}.sequence_key > link_{{ link - 1 }}.sequence_key
            {% endfor %}
        {% endset %}
        {% if cdc_integer_list(query)[0] > 0 %}
            {% set longest.links = links %}
        {% endif %}
    {% endfor %}
    {% if longest.links > limit %}
        {{ exceptions.raise_compiler_error(
            'more than ' ~ limit ~ ' key changes with partial after images follow one another through shared keys '
            ~ '(int_cdc_key_changes): raise var cdc_key_change_chain_limit (now ' ~ limit ~ ')'
        ) }}
    {% endif %}
    {{ return(longest.links) }}
{% endmacro %}
