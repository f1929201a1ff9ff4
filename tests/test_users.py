"""Closed-loop users (``[[users]]``, docs/SCENARIOS.md; Barakat & Altman Figs. 10-12, Paced Start
Fig. 17): each transfer starts one think time after the previous one completed, rows in
``result.transfers``, one engine slot per user."""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import startlab

BARAKAT = Path(__file__).resolve().parents[1] / "examples" / "barakat-users.toml"

#: Transfers of 20 to 200 kB over a 10 Mbit/s, 40 ms dumbbell with a 50-packet buffer.
USERS: dict[str, Any] = {
    "name": "u",
    "count": 3,
    "size": {"dist": "uniform", "min": "20KB", "max": "200KB"},
    "think": {"dist": "uniform", "min": "0s", "max": "2s"},
}


def scenario(seed: int = 1, duration: str = "20s", pairs: int = 3, **users: Any) -> dict[str, Any]:
    table = copy.deepcopy(USERS)
    table.update(users)
    return {
        "seed": seed,
        "duration": duration,
        "topology": {
            "kind": "dumbbell",
            "bottleneck_rate": "10Mbps",
            "rtt": "40ms",
            "pairs": pairs,
            "access_rate": "100Mbps",
            "queue": {"kind": "droptail", "limit": "50pkt"},
        },
        "users": [table],
    }


def run(doc: dict[str, Any]) -> startlab.Result:
    return startlab.run(doc, progress=False)


def transfers(doc: dict[str, Any]) -> pd.DataFrame:
    table = run(doc).transfers
    assert table is not None and len(table) > 0
    return table


def per_user(table: pd.DataFrame) -> list[pd.DataFrame]:
    return [rows.reset_index(drop=True) for _, rows in table.groupby("user_index", sort=True)]


def assert_closed_loop(rows: pd.DataFrame, start: float = 0.0) -> None:
    """Transfer k + 1 starts think[k + 1] after transfer k completed; the first one think[0] after
    the group's start."""
    assert list(rows["transfer"]) == list(range(len(rows)))
    assert rows["start"].iloc[0] == pytest.approx(start + rows["think"].iloc[0], abs=1e-6)
    done = rows["start"].to_numpy()[:-1] + rows["completion_time"].to_numpy()[:-1]
    gaps = rows["start"].to_numpy()[1:] - done
    np.testing.assert_allclose(gaps, rows["think"].to_numpy()[1:], rtol=0, atol=1e-6)


@pytest.fixture(scope="module")
def base() -> startlab.Result:
    return run(scenario())


def test_new_connection_transfers_follow_each_other_after_a_think_time(base: startlab.Result) -> None:
    table = base.transfers
    assert table is not None
    assert set(table["connection"]) == {"new"} and set(table["user"]) == {"u"}
    assert sorted(table["user_index"].unique()) == [0, 1, 2]
    for rows in per_user(table):
        k = int(rows["user_index"].iloc[0])
        assert set(rows["flow"]) == {f"u/{k}"}
        assert len(rows) >= 5
        assert_closed_loop(rows)
        # Only the last transfer may still be in progress at the end of the run.
        assert rows["completed"].iloc[:-1].all()
        last = rows.iloc[-1]
        if not last["completed"]:
            assert math.isnan(last["completion_time"]) and math.isnan(last["throughput"])
            assert last["start"] < 20.0
        else:
            assert last["start"] + last["completion_time"] <= 20.0
    # The laws: sizes uniform on [20 kB, 200 kB] in whole bytes, think times on [0, 2 s].
    assert table["size"].between(20_000, 200_000).all()
    assert table["think"].between(0.0, 2.0).all()
    assert table["measured"].all()


def test_users_are_not_flows_and_their_throughput_is_barakats(base: startlab.Result) -> None:
    assert len(base.flows) == 0, "users have rows in result.transfers only"
    done = base.transfers[base.transfers["completed"]]
    # No handshake: the first data segment leaves when the connection opens, so size·8 over the
    # completion time is the per-transfer throughput.
    np.testing.assert_allclose(done["throughput"], done["size"] * 8 / done["completion_time"], rtol=1e-9)
    assert (done["packets_sent"] >= np.ceil(done["size"] / 1448)).all()
    assert (done["retransmission_ratio"] <= 1).all() and (done["loss_rate"] >= 0).all()
    np.testing.assert_allclose(
        done["retransmission_ratio"], (done["packets_sent"] - done["retransmissions"]) / done["packets_sent"]
    )
    # Every transfer is a connection of its own, measured from its own start.
    assert done["su_time"].notna().all() and done["exit_reason"].notna().all()


def test_with_a_handshake_throughput_leaves_out_the_syn_round_trip() -> None:
    table = transfers(scenario(count=1, pairs=1, tcp={"handshake": True}))
    done = table[table["completed"]]
    assert len(done) >= 5
    # completion_time counts from the SYN; throughput from the first data segment, one SYN round
    # trip (40 ms plus serialisation) later.
    syn_rtt = done["completion_time"] - done["size"] * 8 / done["throughput"]
    assert syn_rtt.between(0.040, 0.041).all(), syn_rtt


def test_fixed_size_and_fixed_think_time_are_exact() -> None:
    table = transfers(
        scenario(size={"dist": "fixed", "value": "30KB"}, think={"dist": "fixed", "value": "500ms"}, start="1s")
    )
    assert (table["size"] == 30_000).all()
    assert (table["think"] == 0.5).all()
    for rows in per_user(table):
        assert_closed_loop(rows, start=1.0)
        assert rows["start"].iloc[0] == pytest.approx(1.5, abs=1e-9)


def test_the_transfers_limit_is_respected() -> None:
    table = transfers(scenario(transfers=3, duration="30s"))
    assert table.groupby("user_index").size().to_dict() == {0: 3, 1: 3, 2: 3}
    assert table["completed"].all()


def test_no_transfer_starts_outside_start_and_stop() -> None:
    think = {"dist": "fixed", "value": "1s"}
    table = transfers(scenario(start="2s", stop="6s", think=think))
    assert (table["start"] >= 2.0).all() and (table["start"] < 6.0).all()
    for rows in per_user(table):
        assert_closed_loop(rows, start=2.0)
        last = rows.iloc[-1]
        # The next one would have started at or after stop.
        assert last["completed"] and last["start"] + last["completion_time"] + 1.0 >= 6.0


def test_count_users_each_on_its_own_slot() -> None:
    table = transfers(scenario(count=7, pairs=7))
    assert sorted(table["user_index"].unique()) == list(range(7))
    assert sorted(table["flow"].unique()) == [f"u/{k}" for k in range(7)]


def test_the_same_seed_gives_the_same_transfers_and_another_seed_others() -> None:
    a = transfers(scenario(seed=5))
    b = transfers(scenario(seed=5))
    pd.testing.assert_frame_equal(a, b)
    c = transfers(scenario(seed=6))
    assert not a["size"].head(3).equals(c["size"].head(3))


def test_one_engine_slot_serves_every_connection_of_a_user() -> None:
    doc = scenario(count=1, pairs=1, size={"dist": "fixed", "value": "10KB"}, think={"dist": "fixed", "value": "0s"})
    result = run(doc)
    assert result.transfers is not None and len(result.transfers) > 40
    assert list(result.traces.cwnd["flow"].unique()) == ["u/0"]
    assert set(result.traces.seq["flow"].unique()) == {"u/0"}
    assert_closed_loop(result.transfers)
    # Each new connection starts from the initial window again: equal sizes, equal times.
    done = result.transfers[result.transfers["completed"]]
    assert done["completion_time"].iloc[1:].std() < 1e-6


@pytest.mark.parametrize(
    ("law", "check"),
    [
        ({"dist": "uniform", "min": "200ms", "max": "700ms"}, lambda t: t.between(0.2, 0.7).all() and abs(t.mean() - 0.45) < 0.02),
        ({"dist": "exponential", "mean": "1s"}, lambda t: (t > 0).all() and abs(t.mean() - 1.0) < 0.1),
        ("1s", lambda t: (t > 0).all() and abs(t.mean() - 1.0) < 0.1),
        # Bounded Pareto with mean 1 s and cutoff 10 s: its scale x_m is about 0.4 s.
        ({"dist": "pareto", "mean": "1s", "shape": 1.5, "cutoff": "10s"}, lambda t: t.between(0.3, 10.0).all() and abs(t.mean() - 1.0) < 0.15),
        # ln(seconds) ~ N(0, 0.5): median 1 s, mean exp(0.125).
        ({"dist": "lognormal", "mu": 0.0, "sigma": 0.5}, lambda t: abs(np.median(t) - 1.0) < 0.08 and abs(t.mean() - math.exp(0.125)) < 0.08),
        # Zipf over 4 ranks of 250 ms: only 0.25, 0.5, 0.75, 1 s.
        ({"dist": "zipf", "exponent": 1.0, "ranks": 4, "unit": "250ms"}, lambda t: set(np.round(t, 9)) <= {0.25, 0.5, 0.75, 1.0} and (t == 0.25).mean() > 0.4),
    ],
)
def test_think_laws(law: Any, check: Any) -> None:
    doc = scenario(count=50, pairs=1, transfers=30, size={"dist": "fixed", "value": "1KB"}, think=law, duration="400s")
    think = transfers(doc)["think"]
    assert len(think) == 1500
    assert check(think), (law, think.min(), think.max(), think.mean())


def test_the_app_think_time_takes_the_same_laws() -> None:
    doc = scenario()
    del doc["users"]
    doc["flows"] = [
        {
            "name": "web",
            "app": {
                "kind": "request-response",
                "request": "300B",
                "response": {"dist": "fixed", "value": "5KB"},
                "think": {"dist": "zipf", "exponent": 1.0, "ranks": 3, "unit": "100ms"},
                "count": 50,
            },
        }
    ]
    responses = run(doc).responses
    assert responses is not None and len(responses) == 50
    assert set(np.round(responses["think"].iloc[1:], 9)) <= {0.1, 0.2, 0.3}


def test_an_empirical_think_file_is_read_relative_to_the_scenario(tmp_path: Path) -> None:
    (tmp_path / "think.csv").write_text("# seconds,probability\n0.5,0.2\n1.0,0.7\n2,1\n", encoding="utf-8")
    text = """\
seed = 1
duration = "400s"
[topology]
kind = "dumbbell"
bottleneck_rate = "10Mbps"
rtt = "40ms"
access_rate = "100Mbps"
queue = { kind = "droptail", limit = "50pkt" }
[[users]]
name = "u"
count = 50
transfers = 30
size = { dist = "fixed", value = "1KB" }
think = { dist = "empirical", file = "think.csv" }
"""
    path = tmp_path / "users.toml"
    path.write_text(text, encoding="utf-8")
    think = startlab.run(path, progress=False).transfers["think"]
    assert len(think) == 1500
    assert think.between(0.5, 2.0).all()
    # A step of 0.2 at 0.5 s, then linear to 0.7 at 1 s and to 1 at 2 s.
    assert abs((think <= 0.5).mean() - 0.2) < 0.04
    assert abs((think <= 1.0).mean() - 0.7) < 0.04


def test_a_non_monotone_empirical_think_file_is_refused_with_its_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("0.5,0.2\n1.0,0.7\n0.8,0.9\n2,1\n", encoding="utf-8")
    doc = scenario(think={"dist": "empirical", "file": str(bad)})
    with pytest.raises(startlab.ScenarioError, match=r"^users\[0\]\.think\.file: .*bad\.csv: line 3: "):
        startlab.validate(doc)


def test_persistent_users_send_a_request_per_transfer() -> None:
    doc = scenario(count=1, pairs=1, connection="persistent", request="500B", duration="10s")
    doc["trace"] = {"packets": {"links": ["bottleneck"], "direction": "reverse"}}
    result = run(doc)
    table = result.transfers
    assert table is not None and len(table) >= 5
    assert set(table["connection"]) == {"persistent"}
    assert_closed_loop(table[table["completed"]])
    done = table[table["completed"]]
    np.testing.assert_allclose(done["throughput"], done["size"] * 8 / done["completion_time"], rtol=1e-9)
    # One connection: the startup metrics describe it once, on its first transfer.
    startup = ["su_time", "su_throughput", "su_loss", "exit_reason"]
    assert table.loc[table["transfer"] == 0, startup].notna().all(axis=None)
    assert table.loc[table["transfer"] > 0, startup].isna().all(axis=None)
    # The counts are each transfer's own: about one response's worth of segments.
    assert (done["packets_sent"] >= np.ceil(done["size"] / 1448)).all()
    assert (done["packets_sent"] <= np.ceil(done["size"] / 1448) + done["retransmissions"]).all()
    # Each transfer is one 500-byte request (one packet) from the client, across the bottleneck.
    packets = result.traces.packets
    requests = packets[(packets["kind"] == "request") & (packets["event"] == "enqueue")]
    assert len(requests) == len(table)
    assert (requests["size"] == 540).all()
    assert list(result.traces.cwnd["flow"].unique()) == ["u/0"]


def test_reverse_users_send_from_right_to_left() -> None:
    links = run(scenario(direction="reverse", count=2, pairs=2)).links.set_index("link")["departures"]
    assert links["bottleneck:right->left"] > 1.8 * links["bottleneck:left->right"]
    forward = run(scenario(count=2, pairs=2)).links.set_index("link")["departures"]
    assert forward["bottleneck:left->right"] > 1.8 * forward["bottleneck:right->left"]


def test_without_flows_a_dumbbell_has_one_pair_per_rtt() -> None:
    doc = scenario()
    del doc["topology"]["pairs"], doc["topology"]["rtt"]
    doc["topology"]["rtts"] = ["20ms", "40ms", "60ms", "80ms"]
    names = set(run(doc).links["link"])
    assert {"access-s3:s3->left", "access-d3:right->d3"} <= names
    assert not any(name.startswith("access-s4") for name in names)


def test_write_saves_the_transfers(tmp_path: Path) -> None:
    result = run(scenario(duration="5s"))
    written = result.write(tmp_path / "out")
    assert tmp_path / "out" / "transfers.parquet" in written
    assert (tmp_path / "out" / "transfers.csv").exists()
    back = pd.read_parquet(tmp_path / "out" / "transfers.parquet")
    assert list(back.columns) == list(result.transfers.columns)
    assert len(back) == len(result.transfers)
    assert (tmp_path / "out" / "cwnd.png").exists(), "the cwnd plot draws users' slots"


def test_the_barakat_example_runs_five_users() -> None:
    result = startlab.run(BARAKAT, progress=False)
    table = result.transfers
    assert table is not None
    assert sorted(table["user_index"].unique()) == [0, 1, 2, 3, 4]
    assert (table.groupby("user_index").size() >= 3).all()
    assert table["size"].between(100_000, 1_000_000).all()
    assert table["think"].between(0.0, 5.0).all()
    for rows in per_user(table):
        assert_closed_loop(rows)


@pytest.mark.parametrize(
    ("change", "path"),
    [
        ({"think": {"dist": "uniform", "min": "2s", "max": "1s"}}, r"users\[0\]\.think\.max"),
        ({"think": {"dist": "pareto", "mean": "2s", "shape": 1.5, "cutoff": "2s"}}, r"users\[0\]\.think\.cutoff"),
        ({"think": {"dist": "pareto", "mean": "2s", "shape": 0, "cutoff": "9s"}}, r"users\[0\]\.think\.shape"),
        ({"think": {"dist": "lognormal", "mu": 0.0, "sigma": 0}}, r"users\[0\]\.think\.sigma"),
        ({"think": {"dist": "zipf", "exponent": 1.0, "ranks": 0, "unit": "1s"}}, r"users\[0\]\.think\.ranks"),
        ({"think": {"dist": "gamma", "mean": "1s"}}, r"users\[0\]\.think\.dist"),
        ({"think": {"dist": "fixed", "value": "1s", "max": "2s"}}, r"users\[0\]\.think\.max"),
        ({"count": 0}, r"users\[0\]\.count"),
        ({"count": 100_001}, r"users\[0\]\.count"),
        ({"connection": "new", "request": "300B"}, r"users\[0\]\.request"),
        ({"connection": "persistent", "request": "70000B"}, r"users\[0\]\.request"),
        ({"transfers": 0}, r"users\[0\]\.transfers"),
        ({"connection": "sometimes"}, r"users\[0\]\.connection"),
        ({"start": "5s", "stop": "5s"}, r"users\[0\]\.stop"),
        ({"stop": "30s"}, r"users\[0\]\.stop"),
        ({"direction": "sideways"}, r"users\[0\]\.direction"),
        ({"from": ["s0"]}, r"users\[0\]\.from"),
        ({"size": {"dist": "uniform", "min": "2KB", "max": "1KB"}}, r"users\[0\]\.size\.max"),
        ({"tcp": {"startup_after_idle": True}}, r"users\[0\]\.tcp\.startup_after_idle"),
    ],
)
def test_bad_user_settings_name_the_key(change: dict[str, Any], path: str) -> None:
    with pytest.raises(startlab.ScenarioError, match=rf"^{path}: "):
        startlab.validate(scenario(**change))


def test_a_user_group_name_must_be_unique() -> None:
    doc = scenario()
    doc["flows"] = [{"name": "u", "size": "10KB"}]
    with pytest.raises(startlab.ScenarioError, match=r"^users\[0\]\.name: "):
        startlab.validate(doc)


def test_the_packet_trace_selects_a_user_group_by_name() -> None:
    doc = scenario(duration="5s")
    doc["trace"] = {"packets": {"links": ["bottleneck"], "flows": ["u"]}}
    packets = run(doc).traces.packets
    assert len(packets) > 0
    assert set(packets["flow"].astype(str)) <= {"u/0", "u/1", "u/2"} and "u/0" in set(packets["flow"].astype(str))
    doc["trace"]["packets"]["flows"] = ["u/1"]
    assert set(run(doc).traces.packets["flow"].astype(str)) == {"u/1"}


def test_initial_start_in_users_is_refused_naming_users() -> None:
    doc = scenario()
    doc["users"][0]["startup"] = {"algorithm": "initial-start"}
    with pytest.raises(startlab.ScenarioError, match=r"users\[0\]\.startup\.algorithm: .*tcp\.initial_window in \[\[users\]\]"):
        run(doc)
