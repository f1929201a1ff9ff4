"""Side-by-side comparison of startup algorithms, and the algorithm registry."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from matplotlib.figure import Figure

import startlab

PATH = """\
seed = 1
duration = "3s"
[topology]
kind = "dumbbell"
bottleneck_rate = "10Mbps"
rtt = "40ms"
access_rate = "100Mbps"
queue = { kind = "droptail", limit = "30pkt" }
[[flows]]
name = "f"
size = "300KB"
tcp = { mss = "1000B", ack = "every-packet", initial_ssthresh = "64pkt" }
"""


def test_the_registry_lists_every_algorithm_with_parameters_and_defaults() -> None:
    listed = startlab.algorithms()
    names = {a["name"] for a in listed}
    assert {"slow-start", "reno"} <= names
    for a in listed:
        assert a["role"] in ("startup", "avoidance") and a["summary"] and a["source"]
        for p in a["params"]:
            assert {"name", "kind", "default", "help"} <= set(p)


def test_compare_runs_each_algorithm_on_its_own_copy_of_the_scenario() -> None:
    names = _startups()[:3]
    comparison = startlab.compare(PATH, names, progress=False)
    assert list(comparison.flows["variant"]) == names
    assert list(comparison.flows["startup"]) == names, (
        "each run used the algorithm it is labelled with"
    )
    assert isinstance(comparison.plot_cwnd(), Figure)


def test_an_unknown_algorithm_in_compare_is_a_scenario_error() -> None:
    try:
        startlab.compare(PATH, ["slow-start", "warp-speed"], progress=False)
    except startlab.ScenarioError as e:
        assert "warp-speed" in str(e) and "flows[0].startup.algorithm" in str(e)
    else:
        raise AssertionError("an unknown algorithm must be refused")


def test_cli_compare_prints_one_table_and_writes_the_overlay(tmp_path: Path) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text(PATH, encoding="utf-8")
    cli = [sys.executable, "-m", "startlab.cli"]
    done = subprocess.run(
        [*cli, "run", str(scenario), "--compare", "slow-start,hystart", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    rows = json.loads(done.stdout)["flows"]
    assert [(r["variant"], r["startup"]) for r in rows] == [
        ("slow-start", "slow-start"),
        ("hystart", "hystart"),
    ]
    twice = subprocess.run(
        [*cli, "run", str(scenario), "--compare", "lss,lss"], capture_output=True, text=True
    )
    assert twice.returncode == 2 and "lss named more than once" in twice.stderr
    out = tmp_path / "out"
    subprocess.run(
        [*cli, "run", str(scenario), "--compare", "slow-start", "--out", str(out)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert {"compare.csv", "compare.parquet", "compare_cwnd.png", "compare_cwnd.svg"} <= {
        p.name for p in out.iterdir()
    }
    listing = subprocess.run([*cli, "algorithms"], capture_output=True, text=True, check=True)
    assert "slow-start" in listing.stdout


def _startups() -> list[str]:
    """The built-in startup algorithms (plug-ins other tests registered in this process aside)."""
    return [a["name"] for a in startlab.algorithms() if a["role"] == "startup" and not a["plugin"]]


def test_every_registered_startup_algorithm_runs_from_python_with_its_defaults() -> None:
    """Every algorithm of the registry builds from its defaults and reports an exit reason; the
    scenario gives what some need (a handshake RTT, a finite ssthresh)."""
    for name in _startups():
        scenario = {
            "seed": 1,
            "duration": "3s",
            "topology": {
                "kind": "dumbbell",
                "bottleneck_rate": "10Mbps",
                "rtt": "40ms",
                "access_rate": "100Mbps",
                "queue": {"kind": "droptail", "limit": "30pkt"},
            },
            "flows": [
                {
                    "name": name,
                    "size": "200KB",
                    "startup": {"algorithm": name},
                    "tcp": {"handshake": True, "initial_ssthresh": "64pkt"},
                }
            ],
        }
        flow = startlab.run(scenario, progress=False).flows.iloc[0]
        assert flow.startup == name
        assert flow.completed, f"{name}: the transfer completes"
        assert isinstance(flow.exit_reason, str) and flow.exit_reason


def test_a_bad_parameter_names_its_key_and_what_is_accepted() -> None:
    bad = {
        "seed": 1,
        "duration": "1s",
        "topology": {
            "kind": "dumbbell",
            "bottleneck_rate": "10Mbps",
            "rtt": "40ms",
            "access_rate": "100Mbps",
            "queue": {"kind": "droptail", "limit": "30pkt"},
        },
        "flows": [{"name": "f", "startup": {"algorithm": "lss", "max_ssthresh": 100}}],
    }
    try:
        startlab.validate(bad)
    except startlab.ScenarioError as e:
        assert "flows[0].startup.max_ssthresh" in str(e) and "pkt" in str(e)
    else:
        raise AssertionError("a window given as a bare number must be refused")


def test_the_scenario_reference_lists_every_registered_algorithm_with_a_page() -> None:
    docs = Path(__file__).resolve().parents[1] / "docs"
    reference = (docs / "SCENARIOS.md").read_text(encoding="utf-8")
    for a in (a for a in startlab.algorithms() if not a["plugin"]):
        assert f"[{a['name']}](algorithms/{a['name']}.md)" in reference, a["name"]
        assert (docs / "algorithms" / f"{a['name']}.md").is_file(), a["name"]


def test_the_scenario_reference_table_is_the_one_derived_from_the_declarations() -> None:
    """docs/SCENARIOS.md's algorithm table is `startlab algorithms --markdown`, which reads each
    algorithm's declaration (regenerate it with that command after changing one)."""
    from startlab.cli import algorithms_markdown

    reference = (Path(__file__).resolve().parents[1] / "docs" / "SCENARIOS.md").read_text(encoding="utf-8")
    assert algorithms_markdown() in reference


def test_an_out_of_range_parameter_is_refused_with_its_declared_range() -> None:
    cases = [
        ({"algorithm": "abc", "l": 0}, "flows[0].startup.l", "at least 1"),
        ({"algorithm": "paced-start", "epsilon": 1.5}, "flows[0].startup.epsilon", "from 0 to 1"),
        ({"algorithm": "quick-start", "rate": "50kbps"}, "flows[0].startup.rate", '"80kbps"'),
        ({"algorithm": "lss", "max_ssthresh": "0pkt"}, "flows[0].startup.max_ssthresh", "positive"),
    ]
    for startup, path, message in cases:
        bad = {
            "seed": 1,
            "duration": "1s",
            "topology": {"kind": "dumbbell", "bottleneck_rate": "10Mbps", "rtt": "40ms", "access_rate": "100Mbps", "queue": {"kind": "droptail", "limit": "30pkt"}},
            "flows": [{"name": "f", "startup": startup}],
        }
        with pytest.raises(startlab.ScenarioError) as e:
            startlab.validate(bad)
        assert path in str(e.value) and message in str(e.value), str(e.value)


def test_the_queue_table_is_the_one_derived_from_the_declarations() -> None:
    """docs/SCENARIOS.md's queue table is `startlab queues --markdown`, which reads each queue
    kind's declaration (regenerate it with that command after changing one)."""
    from startlab.cli import queues_markdown

    reference = (Path(__file__).resolve().parents[1] / "docs" / "SCENARIOS.md").read_text(encoding="utf-8")
    assert queues_markdown() in reference
    kinds = [q["name"] for q in startlab.queues()]
    assert kinds == ["droptail", "red", "codel", "fq-codel", "pie", "dualpi2"]
    for q in startlab.queues():
        assert f"`{q['name']}`" in (Path(__file__).resolve().parents[1] / "docs" / "QUEUES.md").read_text(encoding="utf-8"), q["name"]
