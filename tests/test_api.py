"""The Python API: inputs, refusals, result tables as documented, determinism, plots and files."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from matplotlib.figure import Figure

import startlab

RESULTS_MD = Path(__file__).resolve().parents[1] / "docs" / "RESULTS.md"


def _section(heading: str) -> str:
    """The text of one ``## heading`` section of docs/RESULTS.md."""
    return RESULTS_MD.read_text(encoding="utf-8").split(f"\n## {heading}")[1].split("\n## ")[0]


def documented_table_columns(heading: str) -> set[str]:
    """Column names in the first cell of each row of a RESULTS.md table."""
    rows = [line for line in _section(heading).splitlines() if line.startswith("| `")]
    return {name for row in rows for name in re.findall(r"`(\w+)`", row.split("|")[1])}


def documented_trace_columns(kind: str) -> set[str]:
    """Column names listed for one trace (``- `kind`: `time` (s), ...``), values in () left out."""
    line = next(line for line in _section("Traces").splitlines() if line.startswith(f"- `{kind}`:"))
    return set(re.findall(r"`(\w+)`", re.sub(r"\([^)]*\)", "", line.split(":", 1)[1])))


def mentioned_in_results_md() -> set[str]:
    return set(re.findall(r"`(\w+)`", RESULTS_MD.read_text(encoding="utf-8")))


# --- inputs ---------------------------------------------------------------------------------------


def test_a_path_toml_text_and_a_dict_give_the_same_result(
    small_toml: str, small_file: Path, small_dict: dict[str, Any]
) -> None:
    expected = startlab.run(small_toml, progress=False).to_json()
    for scenario in (small_file, str(small_file), small_dict):
        assert startlab.run(scenario, progress=False).to_json() == expected, f"input {scenario!r}"


def test_a_missing_toml_file_is_a_scenario_error_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.toml"
    for scenario in (str(missing), missing):
        with pytest.raises(startlab.ScenarioError, match=r"nowhere\.toml"):
            startlab.run(scenario, progress=False)


def test_the_errors_are_the_standard_exception_kinds() -> None:
    assert issubclass(startlab.ScenarioError, ValueError)
    assert issubclass(startlab.SimulationError, RuntimeError)


@pytest.mark.parametrize(
    ("old", "new", "key_path"),
    [
        ("bottleneck_rate =", "bottleneck_rat =", "topology.bottleneck_rat"),
        ('"10Mbps"', '"100Mbs"', "topology.bottleneck_rate"),
        ('"10Mbps"', '"0Mbps"', "topology.bottleneck_rate"),
        ('"10Mbps"', '"-10Mbps"', "topology.bottleneck_rate"),
        ('duration = "2s"\n', "", "duration"),
    ],
    ids=["unknown-key", "bad-unit", "zero-rate", "negative-rate", "missing-duration"],
)
def test_a_refused_scenario_names_the_key_path(
    small_toml: str, old: str, new: str, key_path: str
) -> None:
    assert old in small_toml
    bad = small_toml.replace(old, new, 1)
    with pytest.raises(startlab.ScenarioError) as refused:
        startlab.validate(bad)
    assert key_path in str(refused.value), f"the message should name {key_path}: {refused.value}"
    with pytest.raises(startlab.ScenarioError):
        startlab.run(bad, progress=False)


def test_validate_accepts_the_small_scenario(small_toml: str, small_file: Path) -> None:
    startlab.validate(small_toml)
    startlab.validate(small_file)


def test_the_result_carries_the_normalized_scenario(
    small_toml: str, small_result: startlab.Result
) -> None:
    normalized = startlab.normalize(small_toml)
    assert isinstance(normalized, dict)
    assert small_result.scenario == normalized


def test_the_version_is_a_string() -> None:
    assert isinstance(startlab.__version__, str) and startlab.__version__


# --- result tables --------------------------------------------------------------------------------


def test_the_flows_table_has_the_documented_columns(small_result: startlab.Result) -> None:
    flows = small_result.flows
    assert documented_table_columns("Per flow") <= set(flows.columns)
    assert set(flows.columns) <= mentioned_in_results_md(), "every column is documented"
    assert list(flows["flow"]) == ["bulk", "short"]
    assert isinstance(flows.index, pd.RangeIndex)


def test_the_links_table_has_the_documented_columns(small_result: startlab.Result) -> None:
    links = small_result.links
    assert documented_table_columns("Per link direction") <= set(links.columns)
    assert set(links.columns) <= mentioned_in_results_md(), "every column is documented"
    assert links["link"].is_unique


def test_missing_values_are_nan_not_zero_or_none(small_result: startlab.Result) -> None:
    bulk = small_result.flows.set_index("flow").loc["bulk"]
    assert pd.isna(bulk["completion_time"]), "an infinite transfer has no completion time"
    assert pd.isna(bulk["size"]), "an infinite transfer has no size"


@pytest.mark.parametrize("kind", ["cwnd", "seq", "queue"])
def test_traces_have_the_documented_columns(small_result: startlab.Result, kind: str) -> None:
    trace = getattr(small_result.traces, kind)
    assert set(trace.columns) == documented_trace_columns(kind)
    assert len(trace) > 0, f"the {kind} trace is enabled and should have points"
    assert trace["time"].dtype == "float64", "times are float seconds"
    assert trace["time"].between(0.0, 2.0).all(), "every point lies within the 2 s run"


def test_trace_ids_are_named_categoricals(small_result: startlab.Result) -> None:
    traces = small_result.traces
    for trace, column, names in [
        (traces.cwnd, "flow", {"bulk", "short"}),
        (traces.seq, "flow", {"bulk", "short"}),
        (traces.seq, "event", {"sent", "retransmitted", "acked", "dropped"}),
        (traces.queue, "link", set(small_result.links["link"])),
    ]:
        assert isinstance(trace[column].dtype, pd.CategoricalDtype), column
        assert set(trace[column].dropna()) <= names, f"{column} holds names"
        assert not trace[column].isna().any(), f"every {column} id maps to a name"


# --- JSON and determinism -------------------------------------------------------------------------


def test_to_json_is_strict_json_with_flows_and_links(small_result: startlab.Result) -> None:
    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} is not JSON")

    document = json.loads(small_result.to_json(), parse_constant=refuse)
    assert set(document) == {"flows", "links"}
    assert [row["flow"] for row in document["flows"]] == ["bulk", "short"]
    assert document["flows"][0]["completion_time"] is None
    assert set(document["links"][0]) == set(small_result.links.columns)


def test_the_same_scenario_twice_gives_identical_results(small_toml: str) -> None:
    first = startlab.run(small_toml, progress=False)
    second = startlab.run(small_toml, progress=False)
    assert first.to_json() == second.to_json()
    for kind in ("cwnd", "seq", "queue"):
        pd.testing.assert_frame_equal(getattr(first.traces, kind), getattr(second.traces, kind))


def test_the_progress_bar_does_not_change_the_result(small_toml: str) -> None:
    with_bar = startlab.run(small_toml, progress=True)
    assert with_bar.to_json() == startlab.run(small_toml, progress=False).to_json()
    assert with_bar.stats["sim_time_ns"] == 2_000_000_000


# --- plots and files ------------------------------------------------------------------------------


def test_plots_return_figures(small_result: startlab.Result) -> None:
    figures = [
        small_result.plot_cwnd(),
        small_result.plot_cwnd(flows="short"),
        small_result.plot_sequence(),
        small_result.plot_sequence(flow="short"),
        small_result.plot_queue(),
        small_result.plot_queue(links=small_result.links["link"][:2]),
    ]
    assert all(isinstance(figure, Figure) for figure in figures)


def test_plotting_an_unknown_flow_names_the_known_ones(small_result: startlab.Result) -> None:
    with pytest.raises(ValueError, match="bulk"):
        small_result.plot_sequence(flow="nobody")


def test_write_creates_tables_scenario_and_plots(
    small_result: startlab.Result, tmp_path: Path
) -> None:
    written = small_result.write(tmp_path / "out")
    names = {path.name for path in written}
    tables = ["flows", "links", "trace_cwnd", "trace_seq", "trace_queue"]
    expected = {f"{t}.{ext}" for t in tables for ext in ("parquet", "csv")}
    expected |= {f"{p}.{ext}" for p in ("cwnd", "sequence", "queue") for ext in ("png", "svg")}
    expected |= {"scenario.json", "stats.json"}
    assert names == expected
    assert all(path.is_file() and path.stat().st_size > 0 for path in written)
    flows = pd.read_parquet(tmp_path / "out" / "flows.parquet")
    assert list(flows["flow"]) == ["bulk", "short"]
    assert list(pd.read_csv(tmp_path / "out" / "links.csv").columns) == list(
        small_result.links.columns
    )


def test_disabled_traces_are_empty_and_skipped_by_write(small_toml: str, tmp_path: Path) -> None:
    quiet = small_toml.replace("= true", "= false")
    result = startlab.run(quiet, progress=False)
    for kind in ("cwnd", "seq", "queue"):
        trace = getattr(result.traces, kind)
        assert trace.empty and set(trace.columns) == documented_trace_columns(kind), kind
    assert isinstance(result.plot_cwnd(), Figure), "an empty trace still gives a figure"
    names = {path.name for path in result.write(tmp_path)}
    assert names == {
        "flows.parquet",
        "flows.csv",
        "links.parquet",
        "links.csv",
        "scenario.json",
        "stats.json",
    }


def test_the_cwnd_trace_says_which_rows_are_congestion_events() -> None:
    """Every reduction of the run is a row marked with its kind; a run without loss has none."""
    path = {"kind": "dumbbell", "bottleneck_rate": "10Mbps", "rtt": "40ms", "access_rate": "1Gbps", "queue": {"kind": "droptail", "limit": "30pkt"}}
    flow = {"name": "f", "tcp": {"recovery": "sack", "mss": "1448B"}, "startup": {"algorithm": "slow-start"}, "size": "infinite"}
    r = startlab.run({"seed": 1, "duration": "3s", "topology": path, "flows": [flow]}, progress=False)
    cwnd = r.traces.cwnd
    events = cwnd[cwnd["cause"] != "update"]
    assert list(cwnd["cause"].cat.categories) == ["update", "loss", "timeout", "ecn"]
    assert len(events) == r.flows.iloc[0]["recovery_episodes"] + r.flows.iloc[0]["timeouts"] > 0
    # At a congestion event ssthresh falls to at most the window of the row before it.
    before = cwnd["cwnd"].shift()[events.index]
    assert (events["ssthresh"] <= before).all()
    calm = startlab.run({"seed": 1, "duration": "1s", "topology": {**path, "queue": {"kind": "droptail", "limit": "1000pkt"}}, "flows": [{**flow, "size": "20kB"}]}, progress=False)
    assert (calm.traces.cwnd["cause"] == "update").all()
