{{ config(materialized='view') }}
{#
    How far each stream has got: the newest heartbeat and the newest change commit time
    per format and source. `dbt source freshness` reads it through source cdc_streams.
#}
with heartbeats as (
    select
        source_format,
        source_id,
        max(heartbeat_ts) as last_heartbeat_ts
    from {{ ref('cdc_heartbeats') }}
    group by source_format, source_id
),

changes as (
    select
        source_format,
        table_id as source_id,
        max(commit_ts) as last_commit_ts
    from {{ ref('cdc_events') }}
    group by source_format, table_id
),

final as (
    select
        coalesce(heartbeats.source_format, changes.source_format) as source_format,
        coalesce(heartbeats.source_id, changes.source_id) as source_id,
        heartbeats.last_heartbeat_ts,
        changes.last_commit_ts,
        greatest(heartbeats.last_heartbeat_ts, changes.last_commit_ts) as progress_ts
    from heartbeats
    full outer join changes
        on
            heartbeats.source_format = changes.source_format
            and heartbeats.source_id = changes.source_id
)

select * from final
