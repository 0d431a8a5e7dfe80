{{ scd2_test_versions(ref('data_scd2_partial_images'), with_declared_columns=true) }}
