"""``startlab model``: closed forms from the command line, with units and ranges."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from startlab import modelcli
from startlab.cli import cli


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["model", *args])
    return result.exit_code, result.output


def test_a_worked_example_of_scharfs_t_ss_with_units() -> None:
    # ALGORITHMS.md §18.1: s = 100 000 B, w = 3, b = 1 on 10 Mb/s, 200 ms -> 0.833673 s.
    code, out = run("t_ss", "--s", "100KB", "--r", "10Mbps", "--tau", "200ms", "--w", "3")
    assert code == 0 and "0.833673" in out


def test_a_range_gives_a_table_and_a_plot(tmp_path: Path) -> None:
    image = tmp_path / "t_ss.png"
    code, out = run("scharf.t_ss", "--s", "10KB..2MB", "--r", "10Mbps", "--tau", "200ms", "--points", "5", "--plot", str(image))
    assert code == 0, out
    assert "0.205887" in out and "2.63786" in out  # the two ends, §18.1's worked examples
    assert image.is_file() and image.stat().st_size > 0
    evaluation = modelcli.evaluate("t_ss", ["--s", "10KB..2MB", "--r", "10Mbps", "--tau", "0.2"], points=7)
    assert evaluation.swept == "s" and len(evaluation.values) == 7
    assert evaluation.xs[0] == pytest.approx(1e4) and evaluation.xs[-1] == pytest.approx(2e6)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nope"], "unknown model 'nope'"),
        (["t_ss", "--s", "1KB", "--r", "10Mbps"], "needs --tau"),
        (["t_ss", "--s", "1KB", "--r", "10Mbps", "--tau", "1s", "--x", "2"], "has no parameter --x"),
        (["t_ss", "--s", "1QB", "--r", "10Mbps", "--tau", "1s"], "unknown unit 'QB'"),
        (["t_ss", "--s", "5KB..1KB", "--r", "10Mbps", "--tau", "1s"], "must go up"),
        (["t_ss", "--s", "1KB..2KB", "--r", "1Mbps..2Mbps", "--tau", "1s"], "only one parameter may be a range"),
        (["exit_case", "--alpha", "1.5"], "0 < alpha <= 1"),
        (["w_b_multi", "--B", "20", "--d", "1", "--mu_t", "70", "--n", "40", "--exact", "maybe"], "expected true or false"),
    ],
)
def test_bad_input_is_one_line_with_exit_code_2(args: list[str], message: str) -> None:
    code, out = run(*args)
    assert code == 2
    assert message in out and "Traceback" not in out


def test_a_switch_takes_true_or_false() -> None:
    # Eq. (6) and its exact form (Theorem 1's burst), ALGORITHMS.md §18.2: B = 20, d = 1, muT = 70, N = 40.
    base = ["barakat.w_b_multi", "--B", "20", "--d", "1", "--mu_t", "70", "--n", "40"]
    assert run(*base)[1].count("40") >= 1
    code, out = run(*base, "--exact", "true")
    assert code == 0 and "50" in out


def test_list_names_every_model() -> None:
    code, out = run("--list")
    assert code == 0
    for name in ("scharf.t_ss", "scharf.t_qs", "paced_start.exit_gap", "paced_start.boundaries"):
        assert name in out
