{#
    Pre-hook of cdc_history: if cdc_history exists but no run has completed (no watermark),
    it is emptied and built whole.
#}
{% macro cdc_history_prepare() %}
    {% if execute and is_incremental() and cdc_batch_watermark() < 0 %}
        delete from {{ this }}
    {% endif %}
{% endmacro %}
