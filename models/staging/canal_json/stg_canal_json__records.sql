{{ flatten_canal_json(source('cdc_landing', 'raw_cdc_messages')) }}
