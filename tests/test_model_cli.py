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
        (["t_ss", "--s", "100KB", "--r", "200ms", "--tau", "10Mbps"], "ms is a unit of a duration, but --r is a rate"),
        (["t_ss", "--s", "1KB..1Mbps", "--r", "10Mbps", "--tau", "1s"], "but --s is a size"),
        (["barakat.w_b", "--B", "10KB", "--d", "2", "--mu_t", "100"], "--B is a packet count; expected a unit pkt or a plain number (packets)"),
        (["paced_start.f", "--g", "1ms", "--alpha", "0.5"], "--g is a plain number"),
        (["t_ss", "--s", "1KB", "--size", "2KB", "--r", "1Mbps", "--tau", "1s"], "--s and --size are the same parameter"),
        (["response_time", "--s", "1KB", "--r", "1Mbps", "--tau", "1s", "--zz", "3"], "the scheme's own: --L"),
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


def test_every_parameter_has_a_dimension_and_every_alias_a_parameter() -> None:
    # A model added without declaring its parameters' units would take any unit silently.
    import inspect

    for full, func in modelcli.functions().items():
        module = full.split(".", 1)[0]
        for name in inspect.signature(func).parameters:
            assert name in modelcli.PARAMETERS[module], f"{full}: --{name} has no dimension in modelcli.PARAMETERS"
    for module, aliases in modelcli.ALIASES.items():
        for target in aliases.values():
            assert target in modelcli.PARAMETERS[module]


def test_longer_names_and_rate_units_for_a_byte_rate() -> None:
    # The issue's own example: --size 1KB..10MB, with --rate and --rtt for Scharf's r and tau.
    named = modelcli.evaluate("t_ss", ["--size", "1KB..10MB", "--rate", "10Mbps", "--rtt", "200ms"], points=5)
    symbols = modelcli.evaluate("t_ss", ["--s", "1KB..10MB", "--r", "10Mbps", "--tau", "200ms"], points=5)
    assert named.swept == "s" and named.values == symbols.values
    # r0 is in bytes/s: 1 Mb/s given as a rate is 125 000 B/s.
    as_rate = modelcli.evaluate("t_paced", ["--s", "100KB", "--r", "10Mbps", "--tau", "200ms", "--r0", "1Mbps"])
    as_bytes = modelcli.evaluate("t_paced", ["--s", "100KB", "--r", "10Mbps", "--tau", "200ms", "--r0", "125000"])
    assert as_rate.values == as_bytes.values
    assert modelcli.parse_value("B", "20pkt", "packets") == 20.0
