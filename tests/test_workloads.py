"""Flow arrivals and their aggregates from Python: summary, fairness, CDF, and the CLI table."""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import startlab
from startlab.cli import cli
from startlab.metrics import jain

FIG11 = Path(__file__).resolve().parents[1] / "examples" / "paced-start-fig11.toml"


@pytest.fixture(scope="module")
def fig11() -> startlab.Result:
    return startlab.run(FIG11, progress=False)


def test_jains_index_is_one_for_equal_shares_and_one_over_n_for_one_taker() -> None:
    assert jain([3.0, 3.0, 3.0]) == pytest.approx(1.0)
    assert jain([5.0, 0.0, 0.0, 0.0]) == pytest.approx(0.25)
    assert jain([1.0, 2.0]) == pytest.approx(9 / 10)
    with pytest.raises(ValueError, match="non-negative"):
        jain([1.0, -1.0])


def test_the_figure_11_run_measures_2000_flows_after_its_warm_up(fig11: startlab.Result) -> None:
    flows = fig11.flows
    assert fig11.warmup_end is not None and 5 <= fig11.warmup_end <= 30
    measured = flows[flows["measured"]]
    assert len(measured) == 2000
    assert (measured["start"] >= fig11.warmup_end).all()
    assert set(measured["group"]) == {"web"}
    summary = fig11.summary()
    assert list(summary["startup"]) == ["paced-start", "slow-start"]
    assert summary["flows"].sum() == 2000
    # Each row is what the flows table says for its group.
    past = measured[measured["startup"] == "paced-start"]
    row = summary.set_index("startup").loc["paced-start"]
    assert row["median"] == pytest.approx(past["throughput"].median())
    assert row["with_loss"] == pytest.approx((past["drops"] > 0).mean())
    assert row["total_loss"] == pytest.approx(past["drops"].sum() / past["packets_sent"].sum())
    assert 0 < fig11.fairness() <= 1


def test_the_cdf_has_one_step_line_per_algorithm(fig11: startlab.Result) -> None:
    figure = fig11.plot_cdf()
    lines = figure.axes[0].get_lines()
    assert len(lines) == 2
    for line in lines:
        y = np.asarray(line.get_ydata())
        assert y[-1] == pytest.approx(1.0) and np.all(np.diff(y) >= 0)
    with pytest.raises(KeyError, match="not a column"):
        fig11.plot_cdf(column="nope")


def test_the_cli_prints_one_row_per_algorithm_for_many_flows(tmp_path: Path) -> None:
    doc = tomllib.loads(FIG11.read_text(encoding="utf-8"))
    doc["duration"] = "40s"
    doc["measure"] = {"warmup": "10s"}
    path = tmp_path / "w.toml"
    import json

    path.write_text(json.dumps(doc), encoding="utf-8")
    result = startlab.run(doc, progress=False)
    out = CliRunner().invoke(cli, ["run", str(FIG11), "--no-progress"])
    assert out.exit_code == 0, out.output
    assert "2000 measured flows" in out.output and "paced-start" in out.output and "Jain" in out.output
    assert result.warmup_end == 10.0
    assert (result.flows["measured"] == (result.flows["start"] >= 10.0)).all()


def test_bad_arrival_settings_name_the_key() -> None:
    doc = tomllib.loads(FIG11.read_text(encoding="utf-8"))
    doc["arrivals"][0]["mix"][0]["share"] = 0.7
    with pytest.raises(startlab.ScenarioError, match=r"arrivals\[0\]\.mix: shares sum to 1.2"):
        startlab.validate(doc)
    doc = tomllib.loads(FIG11.read_text(encoding="utf-8"))
    doc["arrivals"][0]["size"] = {"dist": "pareto", "mean": "50pkt", "shape": 1.1}
    with pytest.raises(startlab.ScenarioError, match=r"arrivals\[0\]\.size\.cutoff"):
        startlab.validate(doc)
    doc["arrivals"][0]["size"] = {"dist": "weibull", "mean": "50pkt"}
    with pytest.raises(startlab.ScenarioError, match="expected \"fixed\", \"exponential\", \"pareto\", \"zipf\", \"uniform\", \"lognormal\" or \"empirical\""):
        startlab.validate(doc)
    # lognormal is known now (issue 13), and takes mu and sigma, not a mean.
    doc["arrivals"][0]["size"] = {"dist": "lognormal", "mean": "50pkt"}
    with pytest.raises(startlab.ScenarioError, match=r'arrivals\[0\]\.size\.mean: is not a key of dist = "lognormal"; it takes mu, sigma'):
        startlab.validate(doc)
