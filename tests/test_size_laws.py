"""Size laws added for closed-loop workloads: uniform, lognormal and an empirical CDF file, as the
resolved scenario shows them and as sweeps key them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import startlab
from startlab.sweep import run as sweeprun


def scenario(size: dict[str, object]) -> dict[str, object]:
    return {
        "seed": 1,
        "duration": "5s",
        "topology": {"kind": "dumbbell", "bottleneck_rate": "10Mbps", "rtt": "20ms", "access_rate": "100Mbps", "pairs": 4,
                     "queue": {"kind": "droptail", "limit": "50pkt"}},
        "arrivals": [{"name": "web", "rate": 5, "size": size}],
    }


def in_dir(tmp_path: Path, size: dict[str, object]) -> Path:
    """The scenario as a file in ``tmp_path``, so that its CDF file is read from there."""
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(scenario(size)), encoding="utf-8")
    return path


def test_an_empirical_file_is_named_in_the_resolved_scenario_and_keys_the_runs(tmp_path: Path) -> None:
    (tmp_path / "sizes.csv").write_text("1000,0.5\n9000,1\n", encoding="utf-8")
    resolved = startlab.normalize(in_dir(tmp_path, {"dist": "empirical", "file": "sizes.csv"}))
    size = resolved["arrivals"][0]["size"]
    assert size == {"dist": "empirical", "file": "sizes.csv", "count": 2}
    before = sweeprun.named_files(resolved, tmp_path)
    (tmp_path / "sizes.csv").write_text("1000,0.4\n9000,1\n", encoding="utf-8")
    assert sweeprun.named_files(resolved, tmp_path)["sizes.csv"] != before["sizes.csv"], "an edited CDF keys its runs anew"
    r = startlab.run(scenario({"dist": "empirical", "file": "sizes.csv"}), progress=False, base=tmp_path)
    assert r.flows["size"].between(1000, 9000).all() and len(r.flows) > 10


@pytest.mark.parametrize(
    ("size", "message"),
    [
        ({"dist": "uniform", "min": "2KB", "max": "1KB"}, r"arrivals\[0\]\.size\.max: 1000 B is below min = 2000 B"),
        ({"dist": "lognormal", "mu": 9.357, "sigma": 0}, r"arrivals\[0\]\.size\.sigma: 0 is not valid"),
        ({"dist": "empirical", "file": "missing.csv"}, r"arrivals\[0\]\.size\.file: cannot read"),
        ({"dist": "normal", "mean": "1KB"}, r'"normal" is not a known size distribution; expected .*"lognormal" or "empirical"'),
    ],
)
def test_impossible_laws_are_refused(size: dict[str, object], message: str, tmp_path: Path) -> None:
    with pytest.raises(startlab.ScenarioError, match=message):
        startlab.normalize(in_dir(tmp_path, size))


def test_a_cdf_that_does_not_end_at_one_is_refused_with_the_file(tmp_path: Path) -> None:
    (tmp_path / "short.csv").write_text("1000,0.5\n9000,0.9\n", encoding="utf-8")
    with pytest.raises(startlab.ScenarioError, match=r"short\.csv: its last probability is 0\.9; a CDF must end at 1"):
        startlab.normalize(in_dir(tmp_path, {"dist": "empirical", "file": "short.csv"}))


def app_scenario(think: object) -> dict[str, object]:
    return {
        "seed": 2,
        "duration": "120s",
        "topology": {"kind": "dumbbell", "bottleneck_rate": "7.5Mbps", "rtt": "100ms", "access_rate": "100Mbps",
                     "queue": {"kind": "droptail", "limit": "50pkt"}},
        "flows": [{"name": "user", "tcp": {"mss": "1448B"}, "app": {
            "kind": "request-response", "request": "300B", "count": 12, "think": think,
            "response": {"dist": "uniform", "min": "100KB", "max": "1MB"},
        }}],
    }


def test_think_time_laws_fixed_uniform_and_exponential() -> None:
    # Barakat & Altman Figs. 10-12: files of U[100 KB, 1 MB] separated by U[0, 5 s].
    uniform = startlab.run(app_scenario({"dist": "uniform", "min": "0s", "max": "5s"}), progress=False).responses
    assert len(uniform) == 12 and uniform["think"].iloc[0] == 0.0
    assert uniform["think"].iloc[1:].between(0.0, 5.0).all() and uniform["think"].iloc[1:].nunique() == 11
    assert uniform["size"].between(100_000, 1_000_000).all()
    fixed = startlab.run(app_scenario({"dist": "fixed", "value": "2s"}), progress=False).responses
    assert (fixed["think"].iloc[1:] == 2.0).all()
    # A plain duration is still the exponential mean, drawn as before.
    plain = startlab.run(app_scenario("2s"), progress=False).responses
    table = startlab.run(app_scenario({"dist": "exponential", "mean": "2s"}), progress=False).responses
    assert plain.equals(table)


@pytest.mark.parametrize(
    ("think", "message"),
    [
        ({"dist": "uniform", "min": "5s", "max": "1s"}, r"flows\[0\]\.app\.think\.max: 1s is below min = 5s"),
        ({"dist": "gamma", "mean": "1s"}, r'flows\[0\]\.app\.think\.dist: "gamma" is not a known think-time law'),
        ({"dist": "fixed", "mean": "1s"}, r'flows\[0\]\.app\.think\.mean: is not a key of dist = "fixed"'),
        (3, r"flows\[0\]\.app\.think: 3 is not valid; expected a duration"),
        ("3", r'flows\[0\]\.app\.think: "3" is not valid'),
    ],
)
def test_bad_think_laws_are_refused(think: object, message: str) -> None:
    with pytest.raises(startlab.ScenarioError, match=message):
        startlab.normalize(app_scenario(think))
