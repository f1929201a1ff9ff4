"""The command line, run as a real process: outputs, files, messages and exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def startlab(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """Run ``python -m startlab.cli ARGS`` with a wide terminal for rich tables."""
    env = {**os.environ, "COLUMNS": "200"}
    command = [sys.executable, "-m", "startlab.cli", *map(str, args)]
    return subprocess.run(
        command, capture_output=True, text=True, env=env, timeout=300, check=False
    )


def assert_one_line_error(done: subprocess.CompletedProcess[str], code: int, *needles: str) -> None:
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, f"one line on stderr, got: {done.stderr!r}"
    assert lines[0].startswith("error: "), lines[0]
    for needle in needles:
        assert needle in lines[0], f"the message should name {needle}: {lines[0]}"
    assert done.stdout == ""


def test_run_prints_tables_of_flows_and_links(small_file: Path) -> None:
    done = startlab("run", small_file, "--no-progress")
    assert done.returncode == 0, done.stderr
    for text in ("Flows", "bulk", "short", "su-time", "Links"):
        assert text in done.stdout


def test_run_json_prints_only_the_results_json(small_file: Path) -> None:
    done = startlab("run", small_file, "--json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert set(document) == {"flows", "links"}
    assert [row["flow"] for row in document["flows"]] == ["bulk", "short"]


def test_run_out_writes_tables_and_plots(small_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = startlab("run", small_file, "--json", "--out", out)
    assert done.returncode == 0, done.stderr
    json.loads(done.stdout)  # the message about the files goes to stderr
    assert str(out) in done.stderr
    for name in (
        "flows.parquet",
        "flows.csv",
        "links.parquet",
        "cwnd.png",
        "cwnd.svg",
        "queue.png",
    ):
        assert (out / name).is_file(), name


def test_a_missing_file_is_one_error_line_and_exit_code_2(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.toml"
    for command in ("run", "validate"):
        assert_one_line_error(startlab(command, missing), 2, "nowhere.toml")


def test_a_refused_scenario_is_one_error_line_naming_file_and_key(
    small_toml: str, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(small_toml.replace("bottleneck_rate =", "bottleneck_rat ="), encoding="utf-8")
    for command in ("run", "validate"):
        assert_one_line_error(startlab(command, bad), 2, "bad.toml", "topology.bottleneck_rat")


def test_two_cross_sources_of_one_name_are_refused_before_the_run(tmp_path: Path) -> None:
    """examples/packet-train.toml with its cross list repeated: refused at check time with the
    repeated entry's key path (it used to simulate to the end and fail while building tables)."""
    example = (Path(__file__).resolve().parent.parent / "examples" / "packet-train.toml").read_text(encoding="utf-8")
    cross = example[example.index("[[cross]]") : example.index("[trace]")]
    doubled = tmp_path / "doubled.toml"
    doubled.write_text(example.replace(cross, cross + cross), encoding="utf-8")
    count = example.count("[[cross]]")
    for command in ("run", "validate"):
        assert_one_line_error(startlab(command, doubled), 2, "doubled.toml", f"cross[{count}].name", "already the name")


def test_a_result_that_fails_to_build_keeps_the_finished_run(
    small_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failure after the simulation (building the tables) loses nothing: the CLI prints the
    flows and links as JSON (or writes them to --out) and says what failed, exit code 5; the API
    raises ResultError carrying the same JSON."""
    from click.testing import CliRunner

    import startlab
    from startlab.cli import cli

    def broken(cls: object, raw: object, stats: object) -> object:
        raise ValueError("Categorical categories must be unique")

    monkeypatch.setattr(startlab.Result, "_from_native", classmethod(broken))
    done = CliRunner().invoke(cli, ["run", str(small_file), "--no-progress"])
    assert done.exit_code == 5, done.output
    tables = json.loads(done.stdout.strip().splitlines()[0])
    assert {f["flow"] for f in tables["flows"]} == {"bulk", "short"}
    assert "Categorical categories must be unique" in done.stderr and "printed above" in done.stderr
    out = tmp_path / "out"
    done = CliRunner().invoke(cli, ["run", str(small_file), "--no-progress", "--out", str(out)])
    assert done.exit_code == 5, done.output
    assert json.loads((out / "results.json").read_text())["flows"] == tables["flows"]
    with pytest.raises(startlab.ResultError) as caught:
        startlab.run(small_file, progress=False)
    assert json.loads(caught.value.tables or "")["flows"] == tables["flows"]
    assert isinstance(caught.value.__cause__, ValueError)


@pytest.mark.parametrize(
    "text", ["this is [not toml", "seed = 1\n"], ids=["bad-toml", "incomplete"]
)
def test_bad_toml_is_one_error_line(tmp_path: Path, text: str) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(text, encoding="utf-8")
    assert_one_line_error(startlab("validate", bad), 2, "bad.toml")


def test_validate_says_ok(small_file: Path) -> None:
    done = startlab("validate", small_file)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"ok: {small_file}"


def test_python_m_startlab_is_the_cli() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "startlab", "--help"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "validate" in done.stdout and "bench" in done.stdout
