"""Trace-driven request/response through the engine (``[[replay]]``, docs/REPLAY.md; Scharf
Figs. 16-17): one flow per connection, one ``result.responses`` row per epoch, the same results from
CSV and Parquet, and errors that name ``replay[0].file`` and the line. The file format itself is
tested in tests/test_replay_vectors.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import startlab
from startlab import replay

HEADER = "connection,start,rtt_class,request,think,response\n"

#: Connection 7 on pair 0 (20 ms): three epochs, the second with a 5000-byte request (four
#: packets of the default 1448-byte MSS). Connection 3 on pair 1 (100 ms): one epoch.
VECTORS = (
    "# two connections\n"
    + HEADER
    + "7,0.5,0,300,0.2,20000\n"
    + "7,0.5,0,5000,1.5,50000\n"
    + "7,0.5,0,100,0,3000\n"
    + "3,1.0,1,200,0.1,100000\n"
)


def scenario(file: Path | str, duration: str = "10s", **table: Any) -> dict[str, Any]:
    return {
        "seed": 1,
        "duration": duration,
        "topology": {
            "kind": "dumbbell",
            "bottleneck_rate": "10Mbps",
            "rtts": ["20ms", "100ms"],
            "access_rate": "100Mbps",
            "queue": {"kind": "droptail", "limit": "50pkt"},
        },
        "replay": [{"name": "tm", "file": str(file), **table}],
    }


@pytest.fixture
def vectors(tmp_path: Path) -> Path:
    path = tmp_path / "vectors.csv"
    path.write_text(VECTORS, encoding="utf-8")
    return path


@pytest.fixture
def result(vectors: Path) -> startlab.Result:
    doc = scenario(vectors)
    doc["trace"] = {"packets": {"links": ["access-d0"], "direction": "reverse"}}
    return startlab.run(doc, progress=False)


def test_one_flow_per_connection_named_after_its_id(result: startlab.Result) -> None:
    flows = result.flows.set_index("flow")
    assert list(result.flows["flow"]) == ["tm-7", "tm-3"]
    assert set(flows["group"]) == {"tm"}
    # direction = "forward": the server at s{rtt_class}, the client at d{rtt_class}.
    assert (flows.loc["tm-7", "src"], flows.loc["tm-7", "dst"]) == ("s0", "d0")
    assert (flows.loc["tm-3", "src"], flows.loc["tm-3", "dst"]) == ("s1", "d1")
    assert flows.loc["tm-7", "start"] == pytest.approx(0.5) and flows.loc["tm-3", "start"] == pytest.approx(1.0)
    assert flows["completed"].all()


def test_one_response_row_per_epoch_in_closed_loop(result: startlab.Result) -> None:
    responses = result.responses
    assert responses is not None
    assert list(zip(responses["flow"], responses["index"])) == [("tm-7", 0), ("tm-7", 1), ("tm-7", 2), ("tm-3", 0)]
    assert list(responses["size"]) == [20_000, 50_000, 3_000, 100_000]
    assert list(responses["think"]) == pytest.approx([0.2, 1.5, 0.0, 0.1])
    for flow, start in (("tm-7", 0.5), ("tm-3", 1.0)):
        rows = responses[responses["flow"] == flow].reset_index(drop=True)
        # Epoch 0's request leaves its think time after the connection opens (no handshake) ...
        assert rows["request_time"].iloc[0] == pytest.approx(start + rows["think"].iloc[0], abs=1e-6)
        # ... and epoch k's its think time after epoch k - 1's response was complete.
        done = rows["request_time"].to_numpy()[:-1] + rows["response_time"].to_numpy()[:-1]
        np.testing.assert_allclose(rows["request_time"].to_numpy()[1:] - done, rows["think"].to_numpy()[1:], atol=1e-6)
    assert (responses["response_time"] > 0).all()


def test_a_request_longer_than_one_segment_travels_as_several_packets(result: startlab.Result) -> None:
    packets = result.traces.packets
    requests = packets[(packets["kind"] == "request") & (packets["event"] == "enqueue") & (packets["flow"] == "tm-7")]
    # 300 B, then 5000 B = 1448 + 1448 + 1448 + 656, then 100 B; each with a 40-byte header.
    assert list(requests["size"]) == [340, 1488, 1488, 1488, 696, 140]
    # The 5000-byte request was answered: epoch 1's response (50 kB) reached the client.
    rows = result.responses.set_index(["flow", "index"])
    assert rows.loc[("tm-7", 1), "response_time"] < 1.0


def test_the_same_vectors_as_parquet_give_the_same_results(vectors: Path, tmp_path: Path) -> None:
    parquet = replay.write(replay.read(vectors), tmp_path / "vectors.parquet")
    a = startlab.run(scenario(vectors), progress=False)
    b = startlab.run(scenario(parquet), progress=False)
    pd.testing.assert_frame_equal(a.flows, b.flows)
    pd.testing.assert_frame_equal(a.responses, b.responses)


def test_reverse_puts_the_servers_on_the_right(vectors: Path) -> None:
    result = startlab.run(scenario(vectors, direction="reverse"), progress=False)
    flows = result.flows.set_index("flow")
    assert (flows.loc["tm-7", "src"], flows.loc["tm-7", "dst"]) == ("d0", "s0")
    links = result.links.set_index("link")["departures"]
    assert links["bottleneck:right->left"] > links["bottleneck:left->right"]


@pytest.mark.parametrize(
    ("text", "line"),
    [
        # rtt_class 2 on a dumbbell of two pairs.
        ("# c\n" + HEADER + "0,0,0,300,0,1000\n1,0,2,300,0,1000\n", 4),
        # The header lacks a column.
        ("connection,start,rtt_class,request,response\n0,0,0,300,0,1000\n", 1),
        ("# c\n" + HEADER + "0,0,0,300,0,1000\n0,0,0,-5,0,1000\n", 4),
        (HEADER + "0,0,0,300,0,-1000\n", 2),
        # Connection 0 again after connection 1.
        (HEADER + "0,0,0,300,0,1000\n1,0,1,300,0,1000\n0,0,0,300,0,1000\n", 4),
        # Starts at the run's end.
        (HEADER + "0,0,0,300,0,1000\n5,10,0,300,0,1000\n", 3),
    ],
    ids=["rtt-class", "header", "negative-request", "negative-response", "not-contiguous", "late-start"],
)
def test_bad_vector_files_are_refused_at_replay_file_with_the_line(tmp_path: Path, text: str, line: int) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(startlab.ScenarioError, match=r"^replay\[0\]\.file: ") as error:
        startlab.validate(scenario(path))
    assert f"line {line}" in str(error.value), str(error.value)


def test_a_txt_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text(VECTORS, encoding="utf-8")
    with pytest.raises(startlab.ScenarioError, match=r"^replay\[0\]\.file: .*\.csv or \.parquet"):
        startlab.validate(scenario(path))


def test_bad_replay_keys_name_the_key(vectors: Path) -> None:
    with pytest.raises(startlab.ScenarioError, match=r"^replay\[0\]\.direction: "):
        startlab.validate(scenario(vectors, direction="both"))
    with pytest.raises(startlab.ScenarioError, match=r"^replay\[0\]\.startup\.algorithm: "):
        startlab.validate(scenario(vectors, startup={"algorithm": "initial-start"}))
    with pytest.raises(startlab.ScenarioError, match=r"^replay\[0\]\.tcp\.startup_after_idle: "):
        startlab.validate(scenario(vectors, tcp={"startup_after_idle": True}))


def test_the_generators_scenario_replays_every_epoch(tmp_path: Path) -> None:
    frame = replay.generate(connections=20, duration=30, seed=2)
    replay.write(frame, tmp_path / "vectors.csv")
    path = tmp_path / "replay.toml"
    path.write_text(replay.scenario_toml(vectors="vectors.csv", duration=30, seed=2), encoding="utf-8")
    result = startlab.run(path, progress=False)
    assert len(result.flows) == frame["connection"].nunique() == 20
    responses = result.responses
    assert responses is not None
    per_connection = frame.groupby("connection").size()
    rows = responses.groupby("flow").size()
    # At most one row per epoch, and rows only for epochs that finished: nearly all of them.
    for connection, epochs in per_connection.items():
        assert rows.get(f"tmix-{connection}", 0) <= epochs
    assert len(responses) <= len(frame)
    assert len(responses) >= 0.9 * len(frame)
    # The sizes are the file's, epoch by epoch.
    first = frame.groupby("connection").head(1).set_index("connection")["response"]
    got = responses[responses["index"] == 0].set_index("flow")["size"]
    for connection, size in first.items():
        if f"tmix-{connection}" in got.index:
            assert got[f"tmix-{connection}"] == size
