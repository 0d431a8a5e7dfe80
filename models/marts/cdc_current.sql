{{ config(materialized='view') }}
{#
    The live rows: the current, not deleted version of every key. A view over the
    current-version partitions of cdc_history, so it costs nothing to refresh and
    cannot disagree with the history.
#}
select
    table_id,
    key_json,
    row_image,
    valid_from,
    valid_from_sequence,
    op,
    event_id,
    source_format,
    key_bucket
from {{ ref('cdc_history') }}
where
    is_current
    and not is_deleted
