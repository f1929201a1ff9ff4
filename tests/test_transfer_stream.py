"""Streaming the ``[[users]]`` transfer rows out of a run (``startlab.run(..., transfers=PATH)``,
``startlab run --out``): the same table as in memory, with ``[measure]`` applied to every row at
the end, while the engine keeps only the transfers not yet handed over."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from click.testing import CliRunner

import startlab
from startlab import _core
from startlab.cli import cli

from test_users import scenario


def streamed(doc: dict[str, Any], path: Path) -> tuple[startlab.Result, pd.DataFrame]:
    result = startlab.run(doc, progress=False, transfers=path)
    assert result.transfers is None and result.transfers_file == path
    table = pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)
    return result, table


MEASURES = [
    pytest.param({}, id="all"),
    pytest.param({"window": ["5s", "15s"]}, id="time-window"),
    pytest.param({"warmup": "4s"}, id="fixed-warmup"),
    pytest.param({"warmup": "auto"}, id="auto-warmup"),
    pytest.param({"warmup": "3s", "flows": 10}, id="first-10-after-warmup"),
]


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Chunks of 5000 events, so that a run hands its rows over many times; returns the number
    of rows each drain wrote."""
    monkeypatch.setattr(startlab, "_WALL_CHUNK_EVENTS", 5000)
    sizes: list[int] = []
    drain = startlab._transfers.TransferStream.drain

    def counting(self: Any) -> None:
        before = self.rows
        drain(self)
        sizes.append(self.rows - before)

    monkeypatch.setattr(startlab._transfers.TransferStream, "drain", counting)
    return sizes


@pytest.mark.parametrize("measure", MEASURES)
def test_the_streamed_table_is_the_in_memory_table(tmp_path: Path, measure: dict[str, Any], small_chunks: list[int]) -> None:
    doc = scenario(duration="60s", count=6, think={"dist": "uniform", "min": "0s", "max": "0.5s"})
    if measure:
        doc["measure"] = measure
    memory = startlab.run(copy.deepcopy(doc), progress=False)
    assert memory.transfers is not None and len(memory.transfers) > 100
    result, table = streamed(doc, tmp_path / "t.parquet")
    # The rows left the engine in many parts during the run, none of them large.
    assert sum(1 for n in small_chunks if n > 0) >= 10 and max(small_chunks) < len(table) / 5
    pd.testing.assert_frame_equal(table, memory.transfers, check_dtype=False)
    assert result.warmup_end == memory.warmup_end
    # The measurement selected something, and not everything, where the window says so.
    if measure:
        assert 0 < table["measured"].sum() < len(table)


def test_an_automatic_warmup_of_users_alone_is_reported() -> None:
    doc = scenario(duration="60s", count=6)
    doc["measure"] = {"warmup": "auto"}
    result = startlab.run(doc, progress=False)
    assert result.warmup_end is not None and result.warmup_end > 0
    assert result.transfers is not None
    assert (result.transfers["measured"] == (result.transfers["start"] >= result.warmup_end)).all()


def test_a_csv_file_holds_the_same_rows(tmp_path: Path) -> None:
    doc = scenario(duration="30s")
    _, parquet = streamed(doc, tmp_path / "t.parquet")
    _, csv = streamed(doc, tmp_path / "t.csv")
    pd.testing.assert_frame_equal(csv, parquet, check_dtype=False)


def test_the_engine_keeps_only_what_was_not_drained() -> None:
    doc = scenario(duration="30s")
    text = json.dumps(doc)
    sim = _core.Simulation(text, "json", None)
    sim.advance(15 * 10**9)
    first = sim.drain_transfers()
    assert len(first["user"]) > 10 and len(first["group"]) == len(first["user"])
    assert len(sim.drain_transfers()["user"]) == 0, "a second drain hands over nothing new"
    sim.run()
    rest = sim.results()["transfers"]
    whole = startlab.run(doc, progress=False).transfers
    assert whole is not None
    assert len(first["user"]) + len(rest["user"]) == len(whole)


def test_a_run_without_users_writes_no_file(tmp_path: Path) -> None:
    doc = scenario()
    del doc["users"]
    doc["flows"] = [{"name": "f", "size": "100KB"}]
    result = startlab.run(doc, progress=False, transfers=tmp_path / "t.parquet")
    assert not (tmp_path / "t.parquet").exists() and result.transfers is None


@pytest.mark.parametrize(("path", "message"), [("t.json", "ending in .parquet or .csv"), ("missing/t.csv", "does not exist")])
def test_a_bad_transfers_file_is_refused_before_the_run(tmp_path: Path, path: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        startlab.run(scenario(), progress=False, transfers=tmp_path / path)


def test_startlab_run_out_streams_the_transfers_and_prints_their_summary(tmp_path: Path) -> None:
    scenario_file = tmp_path / "users.json"
    doc = scenario(duration="30s")
    # The CLI reads TOML: write the dict as TOML through the resolved scenario of a run.
    memory = startlab.run(doc, progress=False)
    toml = "\n".join(_toml_lines(doc))
    scenario_file = tmp_path / "users.toml"
    scenario_file.write_text(toml, encoding="utf-8")
    out = tmp_path / "out"
    got = CliRunner().invoke(cli, ["run", str(scenario_file), "--out", str(out), "--no-progress"])
    assert got.exit_code == 0, got.output
    assert "Measured transfers of the users" in got.output
    assert memory.transfers is not None
    assert str(len(memory.transfers)) in got.output
    table = pd.read_parquet(out / "transfers.parquet")
    pd.testing.assert_frame_equal(table, memory.transfers, check_dtype=False)
    pd.testing.assert_frame_equal(pd.read_csv(out / "transfers.csv"), table, check_dtype=False)
    assert not any(p.name.startswith(".") for p in out.iterdir()), "the parts are removed"


def test_startlab_run_json_carries_the_transfers(tmp_path: Path) -> None:
    doc = scenario(duration="20s")
    scenario_file = tmp_path / "users.toml"
    scenario_file.write_text("\n".join(_toml_lines(doc)), encoding="utf-8")
    got = CliRunner().invoke(cli, ["run", str(scenario_file), "--json", "--no-progress"])
    assert got.exit_code == 0, got.output
    document = json.loads(got.output)
    memory = startlab.run(doc, progress=False)
    assert memory.transfers is not None
    assert document["transfers"] == json.loads(memory.to_json())["transfers"]
    assert len(document["transfers"]) == len(memory.transfers)


def _toml_lines(doc: dict[str, Any], prefix: str = "") -> list[str]:
    """A small TOML writer for these scenario dicts (inline tables for nested values)."""

    def value(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float)):
            return repr(v)
        if isinstance(v, str):
            return json.dumps(v)
        if isinstance(v, dict):
            return "{ " + ", ".join(f"{k} = {value(x)}" for k, x in v.items()) + " }"
        return "[" + ", ".join(value(x) for x in v) + "]"

    lines = [f"{k} = {value(v)}" for k, v in doc.items() if not isinstance(v, (dict, list)) or (isinstance(v, list) and v and not isinstance(v[0], dict))]
    for k, v in doc.items():
        if isinstance(v, dict):
            lines += [f"[{k}]"] + [f"{a} = {value(b)}" for a, b in v.items()]
        elif isinstance(v, list) and v and isinstance(v[0], dict):
            for item in v:
                lines += [f"[[{k}]]"] + [f"{a} = {value(b)}" for a, b in item.items()]
    return lines


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_a_streamed_table_keeps_the_startups_report_columns(tmp_path: Path, suffix: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Careful Resume's columns differ from row to row (a jump's only where one happened): in
    # chunks of 300 events, the parts differ in their columns.
    monkeypatch.setattr(startlab, "_WALL_CHUNK_EVENTS", 300)
    shapes: set[int] = set()
    write = startlab._transfers.TransferStream._write

    def spying(self: Any, columns: dict[str, Any]) -> None:
        if len(columns.get("group", ())):
            shapes.add(len(columns))
        write(self, columns)

    monkeypatch.setattr(startlab._transfers.TransferStream, "_write", spying)
    doc = scenario(duration="40s", count=4, startup={"algorithm": "careful-resume"})
    memory = startlab.run(copy.deepcopy(doc), progress=False)
    assert memory.transfers is not None and (memory.transfers["cr_jumps"] > 0).any() and (memory.transfers["cr_jumps"] == 0).any()
    _, table = streamed(doc, tmp_path / f"t{suffix}")
    assert len(shapes) > 1, "every part had the same columns"
    pd.testing.assert_frame_equal(table, memory.transfers, check_dtype=False)
