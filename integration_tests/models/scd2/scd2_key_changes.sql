-- a chain of two key changes with partial after images: two join rounds
{{ scd2_test_versions(ref('data_scd2_key_changes'), key_change_rounds=2) }}
