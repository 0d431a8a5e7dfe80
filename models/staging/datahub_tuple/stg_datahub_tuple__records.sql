{{ flatten_datahub_tuple(source('cdc_landing', 'raw_cdc_messages')) }}
