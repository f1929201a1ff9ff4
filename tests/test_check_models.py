"""The model cross-check (``startlab check models``, the whole grid: it takes a few seconds)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from startlab.check import check_models
from startlab.cli import cli


def test_every_model_agrees_with_the_simulator_where_its_assumptions_hold() -> None:
    frame = check_models()
    judged = frame[frame["holds"]]
    assert set(judged["model"]) >= {
        "scharf.t_ss",
        "scharf.t_js",
        "scharf.t_ms",
        "scharf.t_qs",
        "scharf.t_is",
        "growth.slow_start_time",
        "growth.smooth_start_time",
        "barakat.w_d",
        "paced_start.exit_gap",
        "barakat.w_b",
        "barakat.w_b_multi",
        "barakat.w_th_after",
        "barakat.transfer_time",
        "paced_start.table2_ratio",
    }
    bad = judged[~judged["ok"].astype(bool)]
    assert bad.empty, bad.to_string()
    # Where they do not hold the comparison is reported, not judged, and it does differ.
    outside = frame[~frame["holds"]]
    assert outside["ok"].isna().all() and (outside["rel_error"].abs() > 0.1).any()


def test_the_cli_writes_the_table_and_plot(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["check", "models", "--quick", "--only", "paced_start", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "paced_start.exit_gap" in result.output
    assert "paced_start.table2_ratio" in result.output and "in [1, 1.2]" in result.output  # case 2's range
    assert (tmp_path / "check.csv").is_file() and (tmp_path / "check.png").is_file()
    bad = CliRunner().invoke(cli, ["check", "models", "--only", "nope"])
    assert bad.exit_code == 2 and "unknown model family" in bad.output
