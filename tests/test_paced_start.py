"""Paced Start from Python: its own result columns, and the paper's Sack-vs-PaSt comparison."""

from __future__ import annotations

import math
import tomllib
from pathlib import Path

import pandas as pd
import startlab

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "paced-start-past.toml"


def test_paced_start_reports_its_exit_case_and_gap_and_other_flows_get_nulls() -> None:
    scenario = tomllib.loads(EXAMPLE.read_text(encoding="utf-8"))
    scenario["duration"] = "2s"
    sack = dict(scenario["flows"][0], name="sack", startup={"algorithm": "slow-start"})
    scenario["flows"].append(sack)
    flows = startlab.run(scenario, progress=False).flows.set_index("flow")
    past = flows.loc["past"]
    assert past["exit_reason"] == "rate-found"
    assert past["past_exit"] == "rate-found"
    assert past["past_case"] in (1, 2, 3, 4, 5)
    # The FILL window is RTT / g: within one packet of base_rtt / past_gap.
    assert abs(past["exit_cwnd_pkts"] - past["base_rtt"] / past["past_gap"]) < 0.02 * past["exit_cwnd_pkts"]
    assert math.isnan(flows.loc["sack", "past_gap"]) and pd.isna(flows.loc["sack", "past_exit"])


def test_the_example_shows_figure_8s_contrast() -> None:
    scenario = tomllib.loads(EXAMPLE.read_text(encoding="utf-8"))
    scenario["duration"] = "10s"
    result = startlab.compare(scenario, ["paced-start", "slow-start"], progress=False)
    rows = result.flows.set_index("variant")
    assert rows.loc["paced-start", "su_loss"] == 0.0
    assert rows.loc["slow-start", "su_loss"] > 0.02
    assert rows.loc["paced-start", "su_time"] < 0.1 * rows.loc["slow-start", "su_time"]


def test_su_throughput_sent_counts_the_fill_train_that_su_throughput_leaves_out() -> None:
    # PaSt leaves startup when the last packet of its fill train is sent, before any of it is
    # acknowledged: §19's su_throughput (bytes ACKed at t_su) leaves the train out, while the
    # paper's Table 4 values fit the bytes sent (su_throughput_sent). Slow start's exit follows
    # an ACK, so for it the two differ by the window in flight only.
    scenario = tomllib.loads(EXAMPLE.read_text(encoding="utf-8"))
    scenario["duration"] = "5s"
    rows = startlab.compare(scenario, ["paced-start", "slow-start"], progress=False).flows.set_index("variant")
    past = rows.loc["paced-start"]
    fill = past["exit_cwnd_pkts"] * 1000 * 8 / past["su_time"]
    assert past["su_throughput_sent"] - past["su_throughput"] >= 0.9 * fill
    assert past["su_throughput_sent"] > 5 * past["su_throughput"]
    for variant in rows.index:
        assert rows.loc[variant, "su_throughput_sent"] >= rows.loc[variant, "su_throughput"]
