{{ cdc_typed_history('oracle_sample') }}
