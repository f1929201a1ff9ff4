"""DualPI2's coupling in whole runs against what RFC 9332 and the Linux qdisc's documentation say
(docs/QUEUES.md, "RFC 9332's model against the simulation"): the L queue's packets wait well under
the 1 ms step, the Classic queue's near the 15 ms target, no packet is lost, and the larger the
coupling factor k, the larger the classic flow's window beside a Prague flow."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench" / "dualpi2_coupling.py"
spec = importlib.util.spec_from_file_location("dualpi2_coupling", BENCH)
assert spec and spec.loader
coupling = importlib.util.module_from_spec(spec)
spec.loader.exec_module(coupling)


@pytest.mark.parametrize("classic", ["reno", "cubic"])
def test_the_classic_flows_window_share_grows_with_the_coupling_factor(classic: str) -> None:
    rows = [coupling.measure(k, classic, duration=30.0) for k in (1.0, 2.0, 4.0)]
    ratios = [r["ratio"] for r in rows]
    assert ratios[0] < ratios[1] < ratios[2], ratios
    for r in rows:
        assert r["wait_L"] < 1.0, r
        assert 5.0 < r["wait_C"] < 16.0, r
        # Both queues mark ECN-capable packets rather than drop them.
        assert r["drops"] == 0 and r["p_L"] > 0 and r["p_C"] > 0, r
