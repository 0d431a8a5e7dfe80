{{ flatten_debezium_json(source('cdc_landing', 'raw_cdc_messages')) }}
