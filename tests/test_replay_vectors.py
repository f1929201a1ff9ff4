"""Connection-vector files for [[replay]] (startlab.replay): the format and its checks, CSV and
Parquet round trips, the synthetic Fig. 16 generator and the ``startlab replay`` commands. Pure
Python: nothing here runs the simulator."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import startlab
from startlab import replay
from startlab.replay import COLUMNS, ScenarioError

HEADER = ",".join(COLUMNS)


@pytest.fixture(scope="module")
def fig16() -> pd.DataFrame:
    """The default synthetic set (450 connections, 10 Mbit/s, load 0.3, 300 s, seed 1)."""
    return replay.generate()


def startlab_cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200"}
    command = [sys.executable, "-m", "startlab.cli", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=300, check=False)


# --- the generator ----------------------------------------------------------------------------


def test_the_default_set_is_scharfs_fig_16_setup(fig16: pd.DataFrame) -> None:
    assert replay.DEFAULT_RTTS_MS == (4, 28, 54, 74, 98, 124, 150, 174, 200)
    assert list(fig16.columns) == list(COLUMNS)
    assert [str(t) for t in fig16.dtypes] == ["int64", "float64", "int64", "int64", "float64", "int64"]
    assert fig16["connection"].nunique() == 450
    assert sorted(fig16["rtt_class"].unique()) == list(range(9))
    # Offered downlink load: sum(response) * 8 / (duration * rate), within 1 % (in fact to the byte).
    load = fig16["response"].sum() * 8 / (300 * 10e6)
    assert load == pytest.approx(0.3, rel=0.01)
    assert fig16["response"].sum() == round(0.3 * 300 * 10e6 / 8)
    assert (fig16["request"] >= 1).all() and (fig16["request"] <= replay.REQUEST_MAX).all()
    assert 200 <= fig16["request"].median() <= 450
    assert (fig16["response"] >= 1).all() and 7_000 <= fig16["response"].mean() <= 14_000
    # Connections are numbered in order of opening, in the first tenth of the run.
    starts = fig16.groupby("connection", sort=True)["start"].first()
    assert list(starts.index) == list(range(450)) and starts.is_monotonic_increasing
    assert starts.min() >= 0 and starts.max() <= 0.1 * 300
    note = fig16.attrs["note"]
    assert note.startswith("synthetic:") and "NOT the traffic traces" in note and "[21]" in note


def test_every_connection_is_planned_to_end_before_95_percent_of_the_run(fig16: pd.DataFrame) -> None:
    rtt_s = np.asarray(replay.DEFAULT_RTTS_MS)[fig16["rtt_class"].to_numpy()] / 1e3
    estimate = replay.transfer_estimate(fig16["response"].to_numpy(), rtt_s, 10e6, 0.3)
    planned = fig16.assign(busy=fig16["think"] + estimate).groupby("connection").agg(start=("start", "first"), busy=("busy", "sum"))
    end = planned["start"] + planned["busy"]
    assert (end <= 0.95 * 300 + 1e-3).all()
    # ... and the thinks spread the exchanges over the run rather than bunching them at the start.
    assert end.median() > 0.8 * 300


def test_think_times_are_nearly_exponential(fig16: pd.DataFrame) -> None:
    # Each think divided by its connection's mean: an exponential law has coefficient of variation 1.
    ratio = fig16["think"] / fig16.groupby("connection")["think"].transform("mean")
    many = fig16.groupby("connection")["think"].transform("size") >= 20
    cv = ratio[many].std() / ratio[many].mean()
    assert 0.85 <= cv <= 1.1
    assert (fig16["think"] >= 0).all()


@settings(max_examples=12, deadline=None)
@given(
    connections=st.integers(100, 600),
    load=st.floats(0.05, 0.6),
    duration=st.sampled_from([120.0, 300.0, 600.0]),
    rate=st.sampled_from(["10Mbps", "20Mbit/s", 5e6]),
    seed=st.integers(0, 2**64 - 1),
)
def test_the_offered_load_is_the_one_asked_for(connections: int, load: float, duration: float, rate: str | float, seed: int) -> None:
    frame = replay.generate(connections=connections, load=load, duration=duration, rate=rate, seed=seed)
    offered = frame["response"].sum() * 8 / (duration * replay.rate_bps(rate))
    assert offered == pytest.approx(load, rel=0.01)
    assert frame["connection"].nunique() == connections
    replay._frame({c: frame[c].to_numpy() for c in COLUMNS}, str, None)  # passes the file checks


def test_the_same_seed_gives_the_same_frame_and_another_seed_another() -> None:
    a, b = replay.generate(seed=7), replay.generate(seed=7)
    pd.testing.assert_frame_equal(a, b)
    assert a.attrs == b.attrs
    c = replay.generate(seed=8)
    assert not a.equals(c)
    assert a["response"].sum() == c["response"].sum()  # the load is the same


def test_the_output_is_pinned() -> None:
    # Raw PCG64 outputs, inverse CDFs, times rounded to microseconds: the same text on any
    # machine and NumPy version. A change here changes every generated file.
    frame = replay.generate(connections=20, duration=60.0, load=0.2, seed=2024)
    digest = hashlib.sha256(replay._csv_text(frame).encode()).hexdigest()
    assert digest == "a13f1df27599f93f225e4ba11b80725438e98d736e212d770bd2272cec98d62b"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"connections": 0}, "connections"),
        ({"load": 1.0}, "load"),
        ({"load": 0}, "load"),
        ({"rate": "10MBps"}, "rate"),
        ({"rate": -1}, "rate"),
        ({"duration": "5 parsecs"}, "duration"),
        ({"rtts_ms": []}, "rtts_ms"),
        ({"rtts_ms": [4, 0]}, "rtts_ms"),
        ({"seed": -1}, "seed"),
        ({"connections": 1, "duration": 10.0}, "do not fit"),
    ],
)
def test_impossible_parameters_are_refused(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        replay.generate(**kwargs)  # type: ignore[arg-type]


def test_a_connection_too_busy_to_fit_hands_exchanges_to_others() -> None:
    frame = replay.generate(connections=50, duration=60.0, seed=1)
    assert "exchanges moved" in frame.attrs["note"]
    assert frame["response"].sum() == round(0.3 * 60 * 10e6 / 8)
    rtt_s = np.asarray(replay.DEFAULT_RTTS_MS)[frame["rtt_class"].to_numpy()] / 1e3
    busy = (frame["think"] + replay.transfer_estimate(frame["response"].to_numpy(), rtt_s, 10e6, 0.3)).groupby(frame["connection"]).sum()
    assert (frame.groupby("connection")["start"].first() + busy <= 0.95 * 60 + 1e-3).all()


def test_units() -> None:
    assert replay.rate_bps("10Mbps") == replay.rate_bps("10 Mbit/s") == replay.rate_bps(10e6) == 10e6
    assert replay.rate_bps("1.5Gbps") == 1.5e9 and replay.rate_bps("64kbps") == 64e3
    assert replay.duration_s("300s") == replay.duration_s("5min") == replay.duration_s(300) == 300.0
    assert replay.duration_s("250ms") == 0.25
    assert replay.pareto_scale(10_000, 1.1, 10e6) == pytest.approx(1556.9, rel=1e-4)


# --- round trips -------------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_write_then_read_is_exact(fig16: pd.DataFrame, suffix: str, tmp_path: Path) -> None:
    path = replay.write(fig16, tmp_path / f"vectors{suffix}")
    back = replay.read(path)
    pd.testing.assert_frame_equal(back, fig16, check_exact=True)
    assert back.attrs["note"] == fig16.attrs["note"]


def test_the_csv_starts_with_the_synthetic_caveat(fig16: pd.DataFrame, tmp_path: Path) -> None:
    text = replay.write(fig16, tmp_path / "v.csv").read_text(encoding="utf-8")
    first, header = text.splitlines()[:2]
    assert first.startswith("# synthetic:") and "NOT the traffic traces" in first
    assert header == HEADER
    meta = pq.read_schema(replay.write(fig16, tmp_path / "v.parquet")).metadata
    assert meta[b"startlab.note"].decode().startswith("synthetic:")


def test_parquet_to_csv_text_parses_back_identically(fig16: pd.DataFrame, tmp_path: Path) -> None:
    parquet = replay.write(fig16, tmp_path / "v.parquet")
    text = replay.parquet_to_csv_text(str(parquet))
    assert text.splitlines()[1] == HEADER and text.startswith("# synthetic:")
    (tmp_path / "back.csv").write_text(text, encoding="utf-8")
    back = replay.read(tmp_path / "back.csv")
    pd.testing.assert_frame_equal(back, replay.read(parquet), check_exact=True)
    assert back.attrs == fig16.attrs
    assert text == replay.write(fig16, tmp_path / "v.csv").read_text(encoding="utf-8")


_finite = st.floats(min_value=0.0, allow_nan=False, allow_infinity=False)
_big = st.integers(1, 2**63 - 1)


@st.composite
def vector_frames(draw: st.DrawFn) -> pd.DataFrame:
    ids = draw(st.lists(st.integers(0, 2**63 - 1), min_size=1, max_size=5, unique=True))
    rows = []
    for cid in ids:
        start, klass = draw(_finite), draw(st.integers(0, 2**63 - 1))
        for _ in range(draw(st.integers(1, 4))):
            rows.append((cid, start, klass, draw(_big), draw(_finite), draw(_big)))
    return pd.DataFrame(rows, columns=list(COLUMNS)).astype(
        {"connection": "int64", "start": "float64", "rtt_class": "int64", "request": "int64", "think": "float64", "response": "int64"}
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frame=vector_frames())
def test_any_valid_frame_round_trips_exactly(frame: pd.DataFrame) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for suffix in (".csv", ".parquet"):
            back = replay.read(replay.write(frame, Path(tmp) / f"v{suffix}"))
            pd.testing.assert_frame_equal(back, frame, check_exact=True)
        csv = Path(tmp) / "p.csv"
        csv.write_text(replay.parquet_to_csv_text(str(Path(tmp) / "v.parquet")), encoding="utf-8")
        pd.testing.assert_frame_equal(replay.read(csv), frame, check_exact=True)


def test_comments_blank_lines_spaces_and_crlf_are_accepted(tmp_path: Path) -> None:
    path = tmp_path / "hand.csv"
    path.write_bytes(
        b"# a hand-written file\r\n\r\n  connection , start,rtt_class,request,think,response\r\n"
        b"7, 1.5, 2, 300, 0, 1000\r\n   # a comment between rows\n\t\n7,1.5,2,+300,2e-3,5000\n3,.5,0,1,0.,1"
    )
    frame = replay.read(path)
    assert frame["connection"].tolist() == [7, 7, 3]
    assert frame["think"].tolist() == [0.0, 0.002, 0.0]
    assert frame["start"].tolist() == [1.5, 1.5, 0.5]
    assert "note" not in frame.attrs


# --- bad files ---------------------------------------------------------------------------------

GOOD_ROWS = "0,0.0,0,300,0.0,1000\n0,0.0,0,300,1.5,2000\n1,2.0,3,200,0.5,500\n"


@pytest.mark.parametrize(
    ("text", "needles"),
    [
        ("connection,start,rtt_class,request,response\n0,0,0,1,1\n", ["line 1", "missing column 'think'"]),
        ("connection,start,rtt_class,request,think,response,extra\n", ["line 1", "unknown column 'extra'"]),
        ("connection,start,rtt_class,request,response,think\n", ["line 1", "out of order"]),
        ("connection,start,rtt_class,request,think,response,think\n", ["line 1", "'think' appears twice"]),
        ("# only a comment\n\n", ["no header"]),
        (HEADER + "\n# no rows\n", ["no epochs"]),
        (HEADER + "\n0,0,0,abc,0,1\n", ["line 2", "request", "'abc' is not an integer"]),
        (HEADER + "\n0,0,0,1.5,0,1\n", ["line 2", "request", "'1.5' is not an integer"]),
        (HEADER + "\n0,0,0,1,0,\n", ["line 2", "response", "empty field"]),
        (HEADER + "\n0,nan,0,1,0,1\n", ["line 2", "start", "'nan' is not a number"]),
        (HEADER + "\n0,0,0,1,inf,1\n", ["line 2", "think", "'inf' is not a number"]),
        (HEADER + "\n0,1e999,0,1,0,1\n", ["line 2", "start", "not finite"]),
        (HEADER + "\n0,0,0,99999999999999999999,0,1\n", ["line 2", "request", "too large"]),
        (HEADER + "\n0,0,0,1,0,1,9\n", ["line 2", "expected 6", "found 7"]),
        (HEADER + "\n" + GOOD_ROWS + "2,0,0,0,0,1\n", ["line 5", "request", "0 bytes", "at least 1"]),
        (HEADER + "\n" + GOOD_ROWS + "2,0,0,1,0,0\n", ["line 5", "response", "0 bytes"]),
        (HEADER + "\n" + GOOD_ROWS + "2,0,0,1,0,-5\n", ["line 5", "response", "-5 bytes"]),
        (HEADER + "\n" + GOOD_ROWS + "2,0,0,1,-0.5,1\n", ["line 5", "think", "-0.5 is negative"]),
        (HEADER + "\n" + GOOD_ROWS + "2,-1,0,1,0,1\n", ["line 5", "start", "-1.0 is negative"]),
        (HEADER + "\n" + GOOD_ROWS + "-2,0,0,1,0,1\n", ["line 5", "connection", "-2 is negative"]),
        (HEADER + "\n" + GOOD_ROWS + "2,0,-1,1,0,1\n", ["line 5", "rtt_class", "-1 is negative"]),
        (HEADER + "\n" + GOOD_ROWS + "1,2.5,3,1,0,1\n", ["line 5", "start", "differs from 2.0", "line 4"]),
        (HEADER + "\n" + GOOD_ROWS + "1,2.0,4,1,0,1\n", ["line 5", "rtt_class", "differs from 3", "line 4"]),
        (HEADER + "\n" + GOOD_ROWS + "0,0.0,0,1,0,1\n", ["line 5", "connection 0", "contiguous", "line 3"]),
        ("# comment\n\n" + HEADER + "\n\n" + GOOD_ROWS + "# c\n0,0.0,0,1,0,1\n", ["line 9", "contiguous", "line 6"]),
    ],
)
def test_a_bad_csv_is_refused_with_file_line_and_column(text: str, needles: list[str], tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ScenarioError) as caught:
        replay.read(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: "), message
    for needle in needles:
        assert needle in message, f"{needle!r} not in {message!r}"


def test_files_that_are_not_vector_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match=r"\.csv or \.parquet, not '\.txt'"):
        replay.read(tmp_path / "v.txt")
    with pytest.raises(ScenarioError, match="not found"):
        replay.read(tmp_path / "missing.csv")
    with pytest.raises(ScenarioError, match="not found"):
        replay.read(tmp_path / "missing.parquet")
    (tmp_path / "latin1.csv").write_bytes(HEADER.encode() + b"\n# caf\xe9\n")
    with pytest.raises(ScenarioError, match="not UTF-8"):
        replay.read(tmp_path / "latin1.csv")
    (tmp_path / "text.parquet").write_text(HEADER + "\n", encoding="utf-8")
    with pytest.raises(ScenarioError, match="not a readable Parquet file"):
        replay.read(tmp_path / "text.parquet")


def _parquet(path: Path, **columns: pa.Array) -> Path:
    base = {
        "connection": pa.array([0, 0, 1], pa.int64()),
        "start": pa.array([0.0, 0.0, 2.0]),
        "rtt_class": pa.array([0, 0, 3], pa.int32()),
        "request": pa.array([300, 300, 200], pa.uint16()),
        "think": pa.array([0.0, 1.5, 0.5], pa.float32()),
        "response": pa.array([1000, 2000, 500], pa.int64()),
    }
    base.update(columns)
    pq.write_table(pa.table({k: v for k, v in base.items() if v is not None}), path)
    return path


def test_a_parquet_file_with_other_integer_and_float_widths_is_read(tmp_path: Path) -> None:
    frame = replay.read(_parquet(tmp_path / "ok.parquet", start=pa.array([0, 0, 2], pa.int64())))
    assert frame["request"].tolist() == [300, 300, 200] and frame["think"].tolist() == [0.0, 1.5, 0.5]
    assert [str(t) for t in frame.dtypes] == ["int64", "float64", "int64", "int64", "float64", "int64"]


@pytest.mark.parametrize(
    ("columns", "needles"),
    [
        ({"think": None}, ["missing column 'think'"]),
        ({"extra": pa.array([1, 2, 3])}, ["unknown column 'extra'"]),
        ({"request": pa.array([1.0, 2.0, 3.0])}, ["column 'request'", "double", "integer type"]),
        ({"start": pa.array(["a", "b", "c"])}, ["column 'start'", "string"]),
        ({"response": pa.array([1, None, 3], pa.int64())}, ["row 2", "response", "null"]),
        ({"think": pa.array([0.0, float("nan"), 0.0])}, ["row 2", "think", "not finite"]),
        ({"response": pa.array([1, 2, 0], pa.int64())}, ["row 3", "response", "0 bytes"]),
        ({"request": pa.array([1, 2, 2**64 - 1], pa.uint64())}, ["row 3", "request", "too large"]),
        ({"start": pa.array([0.0, -1.0, 2.0])}, ["row 2", "start", "negative"]),
        ({"start": pa.array([0.0, 0.5, 2.0])}, ["row 2", "start", "differs", "row 1"]),
        (
            {"connection": pa.array([0, 1, 0], pa.int64()), "start": pa.array([0.0, 0.0, 0.0]), "rtt_class": pa.array([0, 0, 0])},
            ["row 3", "connection 0", "contiguous", "row 1"],
        ),
    ],
)
def test_a_bad_parquet_file_is_refused_with_file_row_and_column(columns: dict[str, pa.Array], needles: list[str], tmp_path: Path) -> None:
    path = _parquet(tmp_path / "bad.parquet", **columns)
    with pytest.raises(ScenarioError) as caught:
        replay.read(path)
    for needle in needles:
        assert needle in str(caught.value), f"{needle!r} not in {caught.value}"
    # The native side's converter says the same as a ValueError (nothing else).
    with pytest.raises(ValueError) as converted:
        replay.parquet_to_csv_text(str(path))
    assert str(converted.value) == str(caught.value)


def test_parquet_to_csv_text_raises_only_value_errors(tmp_path: Path) -> None:
    (tmp_path / "junk.parquet").write_bytes(b"PAR1 but not really")
    cases = [tmp_path / "junk.parquet", tmp_path / "missing.parquet", tmp_path / "v.csv", tmp_path]
    for path in cases:
        with pytest.raises(ValueError, match=str(path.name)):
            replay.parquet_to_csv_text(str(path))


def test_write_refuses_a_frame_that_would_not_read_back(fig16: pd.DataFrame, tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="response"):
        replay.write(fig16.assign(response=0), tmp_path / "v.csv")
    with pytest.raises(ScenarioError, match="no column 'think'"):
        replay.write(fig16.drop(columns="think"), tmp_path / "v.csv")
    with pytest.raises(ScenarioError, match=r"\.csv or \.parquet"):
        replay.write(fig16, tmp_path / "v.json")
    with pytest.raises(ScenarioError, match="row 3 of the frame: think: nan is not finite"):
        replay.write(fig16.assign(think=[0.0, 0.0, float("nan")] + [0.0] * (len(fig16) - 3)), tmp_path / "v.csv")
    with pytest.raises(ScenarioError, match="row 1 of the frame: request: 1.5 is not an integer"):
        replay.write(fig16.assign(request=1.5), tmp_path / "v.csv")
    with pytest.raises(ScenarioError, match="column 'response' is of type object"):
        replay.write(fig16.assign(response="big"), tmp_path / "v.csv")
    assert not (tmp_path / "v.csv").exists()
    floats = fig16.astype({"request": "float64", "response": "uint64"})  # whole floats and unsigned ints are fine
    pd.testing.assert_frame_equal(replay.read(replay.write(floats, tmp_path / "v.csv")), fig16)


# --- the scenario --------------------------------------------------------------------------------


def test_the_scenario_runs_the_file_on_scharfs_dumbbell() -> None:
    text = replay.scenario_toml(vectors="vectors.csv", rtts_ms=replay.DEFAULT_RTTS_MS, rate="10Mbit/s", duration=300, seed=3, startup="jump-start")
    doc = tomllib.loads(text)
    assert doc["seed"] == 3 and doc["duration"] == "300s"
    topology = doc["topology"]
    assert topology["kind"] == "dumbbell" and topology["bottleneck_rate"] == "10Mbps"
    assert topology["rtts"] == ["4ms", "28ms", "54ms", "74ms", "98ms", "124ms", "150ms", "174ms", "200ms"]
    assert topology["pairs"] == 9
    assert topology["queue"] == {"kind": "droptail", "limit": "50pkt"}
    assert doc["replay"] == [{"name": "tmix", "file": "vectors.csv", "direction": "forward", "startup": {"algorithm": "jump-start"}}]
    assert doc["trace"] == {"cwnd": False, "seq": False, "queue": False}
    assert "SYNTHETIC" in text
    other = tomllib.loads(
        replay.scenario_toml(
            vectors="v.parquet", rtts_ms=[10, 20.5], rate=2.5e6, duration="90s", seed=1, buffer_pkts=20,
            startup={"algorithm": "quick-start", "rate": "5.12Mbps"}, tcp={"mss": "1000B", "handshake": True}, direction="reverse",
        )
    )  # fmt: skip
    assert other["topology"]["rtts"] == ["10ms", "20.5ms"] and other["topology"]["bottleneck_rate"] == "2500Kbps"
    assert other["replay"][0]["startup"] == {"algorithm": "quick-start", "rate": "5.12Mbps"}
    assert other["replay"][0]["tcp"] == {"mss": "1000B", "handshake": True}
    assert other["replay"][0]["direction"] == "reverse"


def test_the_scenarios_topology_is_accepted_by_the_native_checks() -> None:
    # Without the [[replay]] table (checked by the engine's own tests) and with one plain flow in
    # its place, the rest of the scenario passes startlab.validate unchanged.
    doc = tomllib.loads(replay.scenario_toml(vectors="v.csv", rtts_ms=replay.DEFAULT_RTTS_MS, rate="10Mbps", duration=300, seed=1))
    del doc["replay"]
    doc["flows"] = [{"name": "probe", "pair": 8, "size": "10KB"}]
    startlab.validate(doc)


# --- the command line ---------------------------------------------------------------------------


def test_replay_generate_writes_the_vectors_and_a_scenario(tmp_path: Path) -> None:
    out, scenario = tmp_path / "data" / "vectors.csv", tmp_path / "runs" / "fig16.toml"
    done = startlab_cli("replay", "generate", "--out", out, "--scenario", scenario, "--seed", "5")
    assert done.returncode == 0, done.stderr
    assert "450 connections" in done.stdout and "RTT classes 0-8" in done.stdout
    assert "offered downlink load: 0.3000 of 10Mbps over 300 s" in done.stdout
    assert "synthetic" in done.stdout and "NOT the traffic traces" in done.stdout
    assert str(out) in done.stderr and str(scenario) in done.stderr
    pd.testing.assert_frame_equal(replay.read(out), replay.generate(seed=5))
    doc = tomllib.loads(scenario.read_text(encoding="utf-8"))
    assert doc["replay"][0]["file"] == "../data/vectors.csv" and doc["seed"] == 5
    assert (scenario.parent / doc["replay"][0]["file"]).resolve() == out.resolve()


def test_replay_generate_options(tmp_path: Path) -> None:
    out = tmp_path / "v.parquet"
    done = startlab_cli("replay", "generate", "--connections", "100", "--load", "0.1", "--rate", "20Mbit/s", "--duration", "2min", "--out", out)
    assert done.returncode == 0, done.stderr
    assert "100 connections" in done.stdout and "offered downlink load: 0.1000 of 20Mbps over 120 s" in done.stdout
    frame = replay.read(out)
    assert frame["connection"].nunique() == 100 and frame["response"].sum() * 8 / (120 * 20e6) == pytest.approx(0.1, rel=0.01)


def test_replay_check_prints_the_summary(fig16: pd.DataFrame, tmp_path: Path) -> None:
    path = replay.write(fig16, tmp_path / "v.parquet")
    done = startlab_cli("replay", "check", path, "--rate", "10Mbps", "--duration", "300s")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"ok: {path}\n450 connections")
    assert "offered downlink load: 0.3000" in done.stdout and "synthetic" in done.stdout


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (("replay", "check", "{bad}"), ["bad.csv", "line 3", "think", "negative"]),
        (("replay", "check", "{dir}/nowhere.csv"), ["nowhere.csv", "not found"]),
        (("replay", "check", "{dir}/v.tsv"), ["v.tsv", ".csv or .parquet"]),
        (("replay", "check", "{bad}", "--rate", "10Mbps"), ["--rate and --duration together"]),
        (("replay", "generate", "--out", "{dir}/v.txt"), ["--out", ".csv or .parquet"]),
        (("replay", "generate", "--out", "{dir}/v.csv", "--load", "1.5"), ["load"]),
        (("replay", "generate", "--out", "{dir}/v.csv", "--connections", "1", "--duration", "10"), ["do not fit"]),
    ],
)
def test_bad_input_is_one_error_line_and_exit_code_2(args: tuple[str, ...], needles: list[str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text(HEADER + "\n0,0,0,1,0,1\n0,0,0,1,-1,1\n", encoding="utf-8")
    done = startlab_cli(*(a.format(bad=bad, dir=tmp_path) for a in args))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    for needle in needles:
        assert needle in lines[0], f"{needle!r} not in {lines[0]!r}"
    assert not (tmp_path / "v.csv").exists()


def test_replay_help_loads_no_heavy_package() -> None:
    code = (
        "from startlab.cli import main\n"
        "try:\n    main(['replay', '--help'])\nexcept SystemExit as e:\n    assert not e.code\n"
        "import sys; print(sorted({m.split('.')[0] for m in sys.modules} & {'numpy', 'pandas', 'pyarrow'}), file=sys.stderr)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "[]"
    assert "generate" in done.stdout and "check" in done.stdout

