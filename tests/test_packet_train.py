"""Packet-train probes (``[[cross]] kind = "train"``): the Paced Start paper's Fig. 1 setup, the
exact send schedule, losses, and refused tables."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import startlab

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "packet-train.toml"


@pytest.fixture(scope="module")
def result() -> startlab.Result:
    return startlab.run(EXAMPLE, progress=False)


def test_the_turning_point_estimates_the_available_bandwidth(result: startlab.Result) -> None:
    trains = result.probes
    assert list(trains.columns) == ["source", "train", "source_gap", "sent", "received", "dest_gap", "gap_difference", "train_rate"]
    assert (trains["sent"] == 20).all() and (trains["received"] == 20).all()
    # Faster than the 6.4 Mb/s available: the bottleneck spreads the train.
    fast = trains[trains["source_gap"] <= 0.0016]
    assert (fast["gap_difference"] > 0.1 * fast["source_gap"]).all()
    # Slower than it: the train arrives as it was sent (within one cross packet's 1.2 ms over 19 gaps).
    slow = trains[trains["source_gap"] >= 2.2e-3]
    assert (slow["gap_difference"].abs() < 0.05 * slow["source_gap"]).all()
    # The turning point: the smallest gap whose difference is under 5 % of the gap.
    turning = trains[trains["gap_difference"] < 0.05 * trains["source_gap"]]["source_gap"].min()
    estimate = 1500 * 8 / turning
    assert estimate == pytest.approx(6.4e6, rel=0.1), estimate
    # The train rate is bits after the first packet over the arrival span.
    row = trains.iloc[0]
    assert row["train_rate"] == pytest.approx(19 * 1500 * 8 / (19 * row["dest_gap"]))


def test_packets_leave_on_the_exact_schedule(result: startlab.Result) -> None:
    p = result.probe_packets
    assert len(p) == 13 * 20
    gaps = [0.8, 1, 1.2, 1.4, 1.6, 1.7, 1.8, 1.9, 2, 2.2, 2.4, 2.7, 3]
    expected = [1.0 + t * 0.2 + i * gaps[t] * 1e-3 for t in range(13) for i in range(20)]
    assert p["sent"].tolist() == pytest.approx(expected, abs=1e-9)
    assert (p["received"] > p["sent"] + 0.02).all(), "at least the one-way propagation delay"


def test_lost_probe_packets_are_nan_and_the_gap_skips_them(tmp_path: Path) -> None:
    text = EXAMPLE.read_text(encoding="utf-8") + '\n[[impairments]]\nlink = "access-xd1"\nloss = { kind = "random", p = 0.2 }\n'
    r = startlab.run(text, progress=False, base=EXAMPLE.parent)
    lost = r.probe_packets["received"].isna()
    assert lost.sum() > 10
    trains = r.probes
    assert (trains["received"] == 20 - lost.groupby(r.probe_packets["train"]).sum().to_numpy()).all()
    # Gaps are measured between positions, so losses do not inflate them on the slow trains.
    slow = trains[trains["source_gap"] >= 2.2e-3]
    assert (slow["gap_difference"].abs() < 0.05 * slow["source_gap"]).all()
    written = {p.name for p in r.write(tmp_path)}
    assert {"probes.csv", "probe_packets.parquet", "probes.png"} <= written


def test_a_run_without_probes_has_empty_probe_tables() -> None:
    r = startlab.run(EXAMPLE.read_text(encoding="utf-8").split("[[cross]]\nname = \"ptr\"")[0], progress=False)
    assert r.probes is not None and r.probes.empty and r.probe_packets.empty
    assert not math.isnan(r.flows.shape[0])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("packets = 20", r"cross\[1\]\.packets: 0 packets per train; expected 2 to 100000", ),
        ('gaps = ["0.8ms"', r"cross\[1\]\.gaps\[0\]: must be longer than 0s"),
        ('interval = "200ms"', r"cross\[1\]\.interval: 0.01s is not longer than the longest train \(20 packets 0.003s apart\)"),
        ('kind = "train"', r"cross\[1\]\.rate: is not a key of kind = \"train\""),
    ],
)
def test_impossible_trains_are_refused_with_their_key_path(change: str, message: str) -> None:
    replacement = {
        "packets = 20": "packets = 0",
        'gaps = ["0.8ms"': 'gaps = ["0ms"',
        'interval = "200ms"': 'interval = "10ms"',
        'kind = "train"': 'kind = "train"\nrate = "1Mbps"',
    }[change]
    text = EXAMPLE.read_text(encoding="utf-8").replace(change, replacement, 1)
    with pytest.raises(startlab.ScenarioError, match=message):
        startlab.validate(text)


def test_train_keys_on_another_kind_are_refused() -> None:
    text = EXAMPLE.read_text(encoding="utf-8").replace('kind = "cbr"', 'kind = "cbr"\npackets = 3', 1)
    with pytest.raises(startlab.ScenarioError, match=r'cross\[0\]\.packets: is a key of kind = "train", not "cbr"'):
        startlab.validate(text)


def test_startlab_run_prints_the_probe_table() -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "startlab", "run", str(EXAMPLE), "--no-progress"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "Packet-train probes" in done.stdout and "train rate" in done.stdout
