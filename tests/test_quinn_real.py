"""quinn on the testbed (crates/startlab-quinn, startlab.real.quinn, docs/REAL.md "quinn"):
startlab's algorithm inside a real QUIC stack beside the simulator running the same algorithm and
quinn's own CUBIC. The testbed test needs root, network namespaces and the built binary, and skips
with the reason otherwise; a missing binary's error is checked everywhere."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from startlab.cli import cli
from startlab.real import quinn, side_by_side, testbed

ROOT = Path(__file__).resolve().parents[1]
QUIC_20 = ROOT / "examples" / "real" / "quic-path-20mbps.toml"
TESTBED = testbed.permitted()


def _built() -> str | None:
    try:
        quinn.binary()
    except quinn.QuinnError as e:
        return str(e)
    return None


def _short(tmp_path: Path, seconds: float = 2.0) -> Path:
    out = tmp_path / "quic-20.toml"
    out.write_text(QUIC_20.read_text().replace('duration = "5s"', f'duration = "{seconds}s"'))
    return out


def _own_namespaces() -> list[str]:
    """The testbed namespaces of this process (``sl<pid>-...``); other processes may have theirs."""
    names = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
    return [n for n in names if n.startswith(f"sl{os.getpid()}-")]


def test_quinn_stack_names_are_known() -> None:
    assert side_by_side.parse_stacks("sim,quinn:startlab,quinn:cubic") == ["sim", "quinn:startlab", "quinn:cubic"]
    with pytest.raises(ValueError, match="'quinn:vegas' is not a stack"):
        side_by_side.parse_stacks("quinn:vegas")


def test_a_missing_binary_names_the_build_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STARTLAB_QUINN", str(tmp_path / "nowhere" / "startlab-quinn"))
    with pytest.raises(quinn.QuinnError, match=r"cargo build --release -p startlab-quinn"):
        quinn.binary()
    # Nowhere at all: no variable, not on PATH, no checkout around.
    monkeypatch.delenv("STARTLAB_QUINN")
    monkeypatch.delenv("CARGO_TARGET_DIR", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(quinn, "_roots", lambda: [tmp_path])
    with pytest.raises(quinn.QuinnError, match=r"package startlab-quinn.*`cargo build --release -p startlab-quinn`"):
        quinn.binary()
    # compare-real says so before it builds a testbed, without a traceback.
    got = CliRunner().invoke(cli, ["compare-real", str(QUIC_20), "--stacks", "sim,quinn:startlab"])
    assert got.exit_code == 2, got.output
    assert "cargo build --release -p startlab-quinn" in got.output and "Traceback" not in got.output


def test_quinn_refuses_a_tcp_flow(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "startlab-quinn"
    fake.write_text("#!/bin/sh\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("STARTLAB_QUINN", str(fake))
    got = CliRunner().invoke(cli, ["compare-real", str(ROOT / "examples" / "real" / "path-20mbps.toml"), "--stacks", "sim,quinn:cubic"])
    assert got.exit_code == 2 and "quinn stacks run QUIC flows" in got.output, got.output


@pytest.mark.skipif(TESTBED is not None, reason=f"the testbed cannot run here: {TESTBED}")
@pytest.mark.skipif(_built() is not None, reason=f"{_built()}")
def test_compare_real_runs_startlab_inside_quinn_beside_the_simulator(tmp_path: Path) -> None:
    scenario = _short(tmp_path)
    out = tmp_path / "out"
    got = CliRunner().invoke(cli, ["compare-real", str(scenario), "--stacks", "sim,quinn:startlab,quinn:cubic", "--json", "--out", str(out)])
    assert got.exit_code == 0, got.output
    rows = {r["stack"]: r for r in json.loads(got.output.splitlines()[-1])["stacks"]}
    assert list(rows) == ["sim", "quinn:startlab", "quinn:cubic"]
    for name, row in rows.items():
        assert row["exit_time_s"] is not None and row["exit_cwnd_pkts"] is not None, (name, row)
        assert row["exit_reason"] != "not-exited", row
        assert 0 < row["exit_time_s"] < 2.0, row
        assert row["goodput_bps"] is not None and 5e6 < row["goodput_bps"] < 20e6, row
    # startlab's HyStart++ inside quinn reports its own reasons (not the window's first fall).
    assert rows["quinn:startlab"]["exit_reason"] in ("css-done", "delay-increase", "loss"), rows
    assert rows["quinn:cubic"]["exit_reason"] == "loss"
    details = {s["stack"]: s["detail"] for s in json.loads((out / "compare.json").read_text())["stacks"]}
    for name in ("quinn:startlab", "quinn:cubic"):
        assert details[name]["completed"] and details[name]["bytes"] > 1_000_000, details[name]
    ctl = details["quinn:startlab"]["controller"]
    assert (ctl["startup"], ctl["avoidance"], ctl["initial_window"]) == ("hystart++", "cubic", 14_720)
    cwnd = json.loads((out / "cwnd.json").read_text())
    # The startlab controller's trace starts at the QUIC initial window: 10 datagrams.
    assert cwnd["quinn:startlab"][0] == [pytest.approx(cwnd["quinn:startlab"][0][0]), 10.0]
    # Clean host: the namespaces this test made are gone.
    assert _own_namespaces() == []
