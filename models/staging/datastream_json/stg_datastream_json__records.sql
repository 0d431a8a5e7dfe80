{{ flatten_datastream_json(source('cdc_landing', 'raw_cdc_messages')) }}
