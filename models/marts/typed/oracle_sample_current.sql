{{ cdc_typed_current('oracle_sample') }}
