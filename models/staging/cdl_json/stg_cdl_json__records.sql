{{ flatten_cdl_json(source('cdc_landing', 'raw_cdc_messages')) }}
