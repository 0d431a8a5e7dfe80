"""The benchmark (python scripts/bench.py): the full build, an incremental and a small run against
the floor (Spark writing the raw files once), a hand-written one-job SCD2 and Spark's own Auto CDC;
and the profiler of one model's SQL on the warehouse a bench run left (scripts/profile_model.py)."""
