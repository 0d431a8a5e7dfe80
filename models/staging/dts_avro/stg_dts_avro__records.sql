{{ flatten_dts_avro(source('cdc_landing', 'raw_cdc_messages')) }}
