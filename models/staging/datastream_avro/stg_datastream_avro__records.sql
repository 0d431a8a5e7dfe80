{{ flatten_datastream_avro(source('cdc_landing', 'raw_cdc_messages')) }}
