"""The command line starts at once: what ``import startlab``, ``startlab --help`` and ``startlab run
--json`` import (sets of modules, not timings), and the JSON ``run --json`` writes without pandas."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import startlab
from startlab import cli, result

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

#: Packages that take a large part of a second to import. None is needed to parse a command line,
#: to print help or to write the JSON of a run.
HEAVY = ("pandas", "matplotlib", "scipy", "dask", "distributed", "duckdb", "pyarrow", "rich", "numpy")

#: What prints the top-level package of every module a snippet left imported, on stderr's last line.
_REPORT = "import sys, json; print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})), file=sys.stderr)"


def imported_after(code: str) -> tuple[set[str], subprocess.CompletedProcess[str]]:
    """The top-level packages imported by ``code`` run in a fresh interpreter, and the process."""
    done = subprocess.run(
        [sys.executable, "-c", f"{code}\n{_REPORT}"], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stderr.strip().splitlines()[-1])), done


def run_cli(*args: str) -> str:
    """Python code that runs ``startlab ARGS`` as the console script does, then carries on."""
    return f"from startlab.cli import main\ntry:\n    main({list(args)!r})\nexcept SystemExit as e:\n    assert not e.code, e.code"


@pytest.mark.parametrize("code", ["import startlab", "import startlab.cli", "import startlab.__main__"])
def test_importing_the_package_or_the_command_line_loads_no_heavy_package(code: str) -> None:
    modules, _ = imported_after(code)
    assert "startlab" in modules
    assert not modules & set(HEAVY), f"{code} imported {sorted(modules & set(HEAVY))}"


def test_help_loads_no_heavy_package_and_lists_every_command() -> None:
    modules, done = imported_after(run_cli("--help"))
    assert not modules & set(HEAVY), sorted(modules & set(HEAVY))
    listed = done.stdout.split("Commands:")[1]
    for name in ("run", "validate", "algorithms", "bench", "model", "check", "sweep", "results", "plot"):
        assert f"\n  {name} " in listed, name
    assert "Summarize a sweep database" in listed and "Plot a metric of a sweep" in listed


def test_run_json_builds_no_dataframe() -> None:
    # numpy: the native module hands the traces over as arrays. Nothing else heavy.
    scenario = EXAMPLES / "two-rtts.toml"
    modules, done = imported_after(run_cli("run", str(scenario), "--json"))
    assert not modules & (set(HEAVY) - {"numpy"}), sorted(modules & set(HEAVY))
    assert done.stdout == startlab.run(scenario, progress=False).to_json() + "\n"


def test_the_sweep_analysis_commands_load_when_asked_for() -> None:
    _, done = imported_after(run_cli("plot", "--help"))
    assert "--x COLUMN" in done.stdout and "--kind [line|cdf]" in done.stdout
    modules, done = imported_after(run_cli("results", "--help"))
    assert "--sql QUERY" in done.stdout and "duckdb" in modules


@pytest.mark.parametrize("name", ["results", "plot"])
def test_the_listed_help_of_a_lazy_command_is_its_own(name: str) -> None:
    from startlab.sweep import commands

    assert name in cli.cli.commands
    stand_in = next(cli._LazyCommand(n, target, text) for n, target, text in cli._LAZY_COMMANDS if n == name)
    real = {"results": commands.results_command, "plot": commands.plot_command}[name]
    assert stand_in.load() is real
    assert inspect.cleandoc(stand_in.help or "") == inspect.cleandoc(real.help or "")
    for width in (40, 80, 200):
        assert stand_in.get_short_help_str(width) == real.get_short_help_str(width)


def test_the_public_api_is_unchanged() -> None:
    for name in startlab.__all__:
        assert hasattr(startlab, name), name
    assert callable(startlab.compare) and startlab.Comparison.__module__ == "startlab.compare"
    assert startlab.Result.__module__ == "startlab.result"
    # Submodules load as attributes on first use, as they did when the package imported them.
    assert startlab.models.t_ss is not None and callable(startlab.plot.cwnd)
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        startlab.nothing  # noqa: B018


def test_native_json_is_the_json_of_the_result_for_every_example() -> None:
    # In a child process: the large examples would leave this one's heap grown, and the memory
    # limit tests measure how much a run grows it.
    code = f"""
import json, sys
from pathlib import Path
import startlab
from startlab import _core, result
checked = []
for path in sorted(Path({str(EXAMPLES)!r}).glob("*.toml")):
    sim = _core.Simulation(*startlab.read_scenario(path))
    sim.run()
    raw = sim.results()
    fast, full = result.native_json(raw), startlab.Result._from_native(raw, sim.stats()).to_json()
    assert fast == full, f"{{path.name}}: run --json differs from Result.to_json"
    checked.append((path.name, len(json.loads(fast)["flows"])))
print(json.dumps(checked))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    checked = dict(json.loads(done.stdout))
    assert set(checked) == {p.name for p in EXAMPLES.glob("*.toml")} and checked["paced-start-fig11.toml"] > 1000


@pytest.mark.parametrize(
    "columns",
    [
        {"a_ns": [1, None, 2_500_000_000, 2**60 + 1], "n": [1, 2, 3, 4], "t": ["x", None, "y", "z"]},
        {"size": [1000, None, 3, 2**62], "b": [True, False, None, True], "none": [None] * 4, "mixed": [1, 2.5, 3, 0.1]},
        {"f": [0.0, float("nan"), float("inf"), -1.5], "i": [-(2**63), 0, 2**63 - 1, 7], "s": ["a", "b", "c", "d"]},
        {"x": [], "y_ns": []},
        {},
    ],
    ids=["ns-and-text", "nullable-ints-bools-mixed", "non-finite-floats", "no-rows", "no-columns"],
)
def test_native_records_follow_the_dataframe(columns: dict[str, list[Any]]) -> None:
    expected = result.json_records(result._table(columns))
    got = result._native_records(columns)
    assert json.dumps(got, allow_nan=False) == json.dumps(expected, allow_nan=False)
    assert [list(row) for row in got] == [list(row) for row in expected]
