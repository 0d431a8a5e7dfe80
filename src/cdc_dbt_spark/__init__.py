"""cdc-dbt-spark's Python: the loader that lands CDC messages, untouched, in `raw_cdc_messages`.

The dbt project (models, macros, seeds) does the rest; `cdc-load` (or
`python scripts/load_raw.py`) is the loader's command line.
"""
