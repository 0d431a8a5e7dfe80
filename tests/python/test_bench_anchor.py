"""The benchmark's anchor (Spark's Auto CDC, cdc_bench.anchor) says why it cannot run from the API's
signature, before it starts a Spark Connect server. No Spark."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import pytest
from pyspark import pipelines

from cdc_bench import anchor


def scd1_only(target: str, stored_as_scd_type: Literal[1, "1"] | None = None) -> None:
    """As this PySpark declares it."""


def scd1_and_2(target: str, stored_as_scd_type: Literal[1, 2] | None = None) -> None:
    """As a PySpark with SCD type 2 would."""


def undeclared(target: str, stored_as_scd_type=None) -> None:
    """A signature that does not say."""


def test_the_scd_types_a_signature_accepts() -> None:
    assert anchor.scd_types_accepted(scd1_only) == {"1"}
    assert anchor.scd_types_accepted(scd1_and_2) == {"1", "2"}
    assert anchor.scd_types_accepted(undeclared) is None


def test_an_api_without_scd_type_2_stops_the_anchor_before_its_server(tmp_path: Path, monkeypatch) -> None:
    def no_server(*args, **kwargs):
        raise AssertionError("a Spark Connect server was started")

    monkeypatch.setattr(pipelines, "create_auto_cdc_flow", scd1_only)
    monkeypatch.setattr(anchor, "_ConnectServer", no_server)
    events = tmp_path / "events.parquet"
    events.mkdir()
    result = anchor.run_anchor(str(events), str(tmp_path / "work"))
    assert result["ran"] is False
    assert "accepts stored_as_scd_type 1 only; the anchor needs SCD type 2" in result["reason"]

    monkeypatch.setattr(pipelines, "create_auto_cdc_flow", scd1_and_2)
    with pytest.raises(AssertionError, match="server was started"):
        anchor.run_anchor(str(events), str(tmp_path / "work"))
