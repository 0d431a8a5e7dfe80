"""Operational tools a user runs beside the product: the Spark Thrift Server (target `thrift`), the
local standalone cluster (target `cluster`), the typed-table scaffold and the demo."""
