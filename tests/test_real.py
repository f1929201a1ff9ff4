"""startlab-udp from Python and the CLI (startlab net), and startlab compare-real / testbed run
(docs/REAL.md). Loopback tests run anywhere; the testbed ones need root and skip elsewhere."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import startlab
from startlab.real import side_by_side, testbed, udp
from startlab.cli import cli

ROOT = Path(__file__).resolve().parents[1]
PATH_20 = ROOT / "examples" / "real" / "path-20mbps.toml"
PATH_100 = ROOT / "examples" / "real" / "path-100mbps.toml"
TESTBED = testbed.permitted()
needs_testbed = pytest.mark.skipif(TESTBED is not None, reason=f"the testbed cannot run here: {TESTBED}")
ROW_KEYS = ["stack", "exit_time_s", "exit_reason", "exit_cwnd_pkts", "first_drop_s", "drops_5s", "goodput_bps"]


def short(tmp_path: Path, seconds: float = 1.0, startup: str = "slow-start") -> Path:
    text = PATH_20.read_text().replace('duration = "5s"', f'duration = "{seconds}s"').replace('"hystart-linux"', f'"{startup}"')
    out = tmp_path / "short.toml"
    out.write_text(text)
    return out


def test_stack_names_are_checked() -> None:
    assert side_by_side.parse_stacks("sim, udp,cubic,kernel:reno") == ["sim", "udp", "kernel:cubic", "kernel:reno"]
    with pytest.raises(ValueError, match="'vegas' is not a stack; expected a comma-separated list of sim, udp, kernel:cubic"):
        side_by_side.parse_stacks("sim,vegas")
    got = CliRunner().invoke(cli, ["compare-real", str(PATH_20), "--stacks", "sim,kernel:vegas"])
    assert got.exit_code == 2 and "kernel:vegas" in got.output and "Traceback" not in got.output


def test_compare_real_sim_alone_prints_the_issue_json_keys() -> None:
    got = CliRunner().invoke(cli, ["compare-real", str(PATH_20), "--stacks", "sim", "--json"])
    assert got.exit_code == 0, got.output
    rows = json.loads(got.output)["stacks"]
    assert [list(r) for r in rows] == [ROW_KEYS]
    sim = rows[0]
    assert sim["stack"] == "sim" and sim["exit_reason"] in ("delay-increase", "ack-train", "loss")
    assert 0 < sim["exit_time_s"] < 1 and sim["exit_cwnd_pkts"] > 10
    assert sim["goodput_bps"] < 20e6


def test_compare_real_refuses_a_scenario_it_cannot_put_on_one_path(tmp_path: Path) -> None:
    two = tmp_path / "two.toml"
    two.write_text(PATH_20.read_text() + '\n[[flows]]\nname = "b"\nstartup = { algorithm = "slow-start" }\nsize = "infinite"\n')
    got = CliRunner().invoke(cli, ["compare-real", str(two), "--stacks", "sim"])
    assert got.exit_code == 2 and "compare-real runs one flow" in got.output and "2 [[flows]] entries" in got.output


def _serve_in_thread(key: str, out: dict[str, Any]) -> threading.Thread:
    def serve() -> None:
        out["report"] = udp.serve("127.0.0.1:0", key, idle_timeout=3.0, accept_timeout=10.0)

    t = threading.Thread(target=serve, daemon=True)
    return t


def test_udp_transfer_over_loopback_through_the_cli(tmp_path: Path) -> None:
    key_file = tmp_path / "key"
    got = CliRunner().invoke(cli, ["net", "key"])
    key_file.write_text(got.output)
    receiver = subprocess.Popen(
        [sys.executable, "-m", "startlab", "net", "recv", "--bind", "127.0.0.1:0", "--key-file", str(key_file), "--accept-timeout", "20"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    ready = receiver.stdout.readline() if receiver.stdout else ""
    assert ready.startswith("ready 127.0.0.1:"), ready
    address = ready.split()[1]
    scenario = short(tmp_path, 0.5)
    sent = CliRunner().invoke(cli, ["net", "send", str(scenario), "--to", address, "--key-file", str(key_file), "--json"])
    out, err = receiver.communicate(timeout=30)
    assert sent.exit_code == 0, sent.output
    report = json.loads(sent.output)
    received = json.loads(out)
    assert report["bytes_acked"] > 0 and report["ended_by"] == "duration-limit"
    assert received["delivered_bytes"] >= report["bytes_acked"]
    assert sum(report["drops"].values()) == 0 and sum(received["drops"].values()) == 0, "nothing bad was sent"
    assert report["t0_mono_s"] > 0


def test_udp_errors_name_what_was_wrong(tmp_path: Path) -> None:
    bad = tmp_path / "bad.key"
    bad.write_text("not hex")
    got = CliRunner().invoke(cli, ["net", "send", str(PATH_20), "--to", "127.0.0.1:9", "--key-file", str(bad)])
    assert got.exit_code == 2 and "expected 64 hex digits" in got.output
    with pytest.raises(ValueError, match="key"):
        udp.send(PATH_20, "127.0.0.1:9", "ab" * 31)
    with pytest.raises(OSError, match="127.0.0.1:9"):
        udp.send(short(tmp_path), "127.0.0.1:9", udp.key(), connect_timeout=1.0)
    with pytest.raises(startlab.ScenarioError, match="no flow 3"):
        udp.send(PATH_20, "127.0.0.1:9", udp.key(), flow=3)


@needs_testbed
def test_testbed_run_udp_through_the_router_agrees_with_the_simulator(tmp_path: Path) -> None:
    """Slow start on the 20 Mbit/s path: the same endpoints, simulated and real, exit on the same
    loss at the same window and lose the same burst (the issue's bounds: 10 % on the window, 20 % on
    drops). The burst is the drops up to one RTT after the exit; later drops depend on how the
    recovery's real timers fall and vary from run to run (docs/REAL.md)."""
    scenario = short(tmp_path, 2.0)
    rows = {r.stack: r for r in side_by_side.compare_real(scenario, ["sim", "udp"], tmp_path / "work")}
    sim, udp = rows["sim"], rows["udp"]
    assert udp.exit_reason == sim.exit_reason == "loss"
    assert udp.exit_cwnd_pkts == pytest.approx(sim.exit_cwnd_pkts, rel=0.10)
    burst = [sum(1 for t in r.drop_times if t <= r.exit_time_s + 0.040) for r in (sim, udp)]  # type: ignore[operator]
    assert burst[1] == pytest.approx(burst[0], rel=0.20) and burst[0] > 0
    assert udp.router is not None and udp.router["forwarded"] > 0
    assert udp.goodput_bps is not None and 14e6 < udp.goodput_bps < 20e6


def test_hystart_linux_round_reset_moves_the_20_mbit_exit_by_a_round(tmp_path: Path) -> None:
    """docs/REAL.md: on the 20 Mbit/s path the 5.16–6.13 reset (rounds start only once cwnd >= 16)
    puts HyStart's rounds mid-flight and the simulator left a round after kernel CUBIC (6.18); the
    default reset of Linux >= 6.14 leaves by the ACK train at about 75 segments, as the kernel did."""
    scenario = short(tmp_path, 0.5, "hystart-linux")
    gated = tmp_path / "gated.toml"
    gated.write_text(scenario.read_text().replace('algorithm = "hystart-linux"', 'algorithm = "hystart-linux", round_reset = "gated"'))
    rows = [startlab.run(str(p)).flows.iloc[0] for p in (scenario, gated)]
    today, old = rows
    assert today["exit_reason"] == "ack-train" and 70 <= today["exit_cwnd_pkts"] <= 80, today[["exit_reason", "exit_cwnd_pkts"]]
    assert old["startup_exit_time"] > today["startup_exit_time"] + 0.030 and old["exit_cwnd_pkts"] > 1.5 * today["exit_cwnd_pkts"]


def test_the_simulators_row_keeps_its_retransmission_times(tmp_path: Path) -> None:
    """compare-real keeps each retransmission's time (since the first data packet) for the
    simulator, as for the kernel, so their recoveries can be set side by side."""
    sim = side_by_side.compare_real(short(tmp_path, 1.5), ["sim"], tmp_path / "work")[0]
    times = sim.detail["retransmit_times"]
    assert sim.detail["retransmissions"] > 0 and len(times) == sim.detail["retransmissions"]
    assert times == sorted(times) and sim.first_drop_s is not None and times[0] > sim.first_drop_s
    assert 0 <= sim.detail["retransmissions_lost"] <= sim.detail["retransmissions"]


def test_compare_real_overrides_recovery_and_avoidance_of_the_sim_stack(tmp_path: Path) -> None:
    """--recovery and --avoidance change the flow the sim (and udp) stacks run, and nothing else;
    an unknown value is refused with the accepted ones."""
    path, flow = side_by_side.prepare(PATH_20, tmp_path, "abc", "linux", "reno")
    tcp = json.loads(path.read_text())["flows"][0]["tcp"]
    assert (tcp["recovery"], tcp["congestion_avoidance"], tcp["ack"]) == ("linux", "reno", "linux")
    args = ["compare-real", str(PATH_20), "--stacks", "sim", "--startup", "abc", "--json"]
    base = json.loads(CliRunner().invoke(cli, args).output)["stacks"][0]
    linux = json.loads(CliRunner().invoke(cli, [*args, "--recovery", "linux", "--avoidance", "reno"]).output)["stacks"][0]
    assert linux["exit_cwnd_pkts"] == base["exit_cwnd_pkts"] and linux["drops_5s"] < base["drops_5s"]
    bad = CliRunner().invoke(cli, [*args, "--avoidance", "vegas"])
    assert bad.exit_code == 2 and '"vegas" is not known' in bad.output and '"reno", "cubic" or "prague"' in bad.output


@needs_testbed
def test_kernel_reno_and_the_simulators_linux_recovery_drop_alike(tmp_path: Path) -> None:
    """Issues 15 and 16: with the kernel's recovery (`recovery = "linux"`) and Reno's avoidance,
    the simulator's slow start (ABC) and kernel Reno on the 20 Mbit/s path agree on exit cwnd within
    10 % and on drops within 20 % (the burst and its recovery are over within 2 s)."""
    scenario = short(tmp_path, 2.0, "abc")
    rows = {r.stack: r for r in side_by_side.compare_real(scenario, ["sim", "kernel:reno"], tmp_path / "work", recovery="linux", avoidance="reno")}
    sim, kernel = rows["sim"], rows["kernel:reno"]
    assert sim.exit_reason == "loss" == kernel.exit_reason
    assert kernel.exit_cwnd_pkts == pytest.approx(sim.exit_cwnd_pkts, rel=0.10)
    assert sim.drops_5s > 0 and kernel.drops_5s == pytest.approx(sim.drops_5s, rel=0.20)


# The real path's timing decides the round HyStart's test fires in: one run in several sessions
# saw the kernel leave a round later (0.184 s against 0.143 s). A failing run is run again once;
# a kernel that keeps leaving at another time still fails.
@needs_testbed
@pytest.mark.flaky(reruns=1)
def test_kernel_cubic_and_the_simulators_hystart_linux_leave_together(tmp_path: Path) -> None:
    """Issue 15: kernel CUBIC with HyStart and the simulator's `hystart-linux` on the 20 Mbit/s path
    exit within 15 % of each other in time and window."""
    scenario = short(tmp_path, 1.0, "hystart-linux")
    rows = {r.stack: r for r in side_by_side.compare_real(scenario, ["sim", "kernel:cubic"], tmp_path / "work")}
    sim, kernel = rows["sim"], rows["kernel:cubic"]
    assert sim.exit_reason == "ack-train" and kernel.exit_reason in ("ack-train", "delay-increase")
    assert kernel.exit_time_s == pytest.approx(sim.exit_time_s, rel=0.15)
    assert kernel.exit_cwnd_pkts == pytest.approx(sim.exit_cwnd_pkts, rel=0.15)


@needs_testbed
def test_cubic_after_a_hystart_exit_fills_the_buffer_when_the_kernel_does(tmp_path: Path) -> None:
    """Issue 31: after the HyStart exit on the 20 Mbit/s path, with the kernel's recovery, the
    simulator's CUBIC (cubic_growth = "linux", 5 % per RTT before the first loss) drops its first
    packet within 10 % of kernel CUBIC's time; RFC 9438's growth (K = 0, W_max = the exit window)
    took four times as long."""
    scenario = short(tmp_path, 2.0, "hystart-linux")
    rows = {r.stack: r for r in side_by_side.compare_real(scenario, ["sim", "kernel:cubic"], tmp_path / "work", recovery="linux")}
    sim, kernel = rows["sim"], rows["kernel:cubic"]
    assert sim.first_drop_s is not None and kernel.first_drop_s is not None
    assert sim.first_drop_s == pytest.approx(kernel.first_drop_s, rel=0.10)
    rfc = tmp_path / "rfc.toml"
    rfc.write_text(scenario.read_text().replace('cubic_growth = "linux"', 'cubic_growth = "rfc9438"'))
    (before,) = side_by_side.compare_real(rfc, ["sim"], tmp_path / "work-rfc", recovery="linux")
    assert before.first_drop_s is None, "RFC 9438's growth does not reach the buffer's end in 2 s"


@needs_testbed
def test_testbed_run_cli_kernel_reno_writes_the_table_and_plot(tmp_path: Path) -> None:
    scenario = short(tmp_path, 1.5)
    got = CliRunner().invoke(cli, ["testbed", "run", str(scenario), "--stack", "reno", "--out", str(tmp_path / "out"), "--json"])
    assert got.exit_code == 0, got.output
    row = json.loads(got.output.splitlines()[0])["stacks"][0]
    assert list(row) == ROW_KEYS and row["stack"] == "kernel:reno"
    assert row["exit_reason"] == "loss" and row["first_drop_s"] is not None and row["drops_5s"] > 0
    assert (tmp_path / "out" / "cwnd.png").stat().st_size > 0
    saved = json.loads((tmp_path / "out" / "compare.json").read_text())["stacks"][0]
    assert saved["detail"]["source"] in ("tcp_probe", "tcp_info") and saved["router"]["forwarded"] > 0
    times = saved["detail"]["retransmit_times"]
    assert len(times) == saved["detail"]["retransmissions"] and times == sorted(times)
    assert len(saved["drop_times"]) >= row["drops_5s"] and saved["drop_times"] == sorted(saved["drop_times"])
    refused = CliRunner().invoke(cli, ["testbed", "run", str(scenario), "--stack", "sim"])
    assert refused.exit_code == 2 and "one testbed stack" in refused.output


@needs_testbed
def test_udp_carries_100_mbit_per_second_through_the_testbed(tmp_path: Path) -> None:
    """Issue 15: startlab-udp sustains 100 Mbit/s through the testbed on this 2-core machine. After
    HyStart's exit (no loss on this path), the 100 Mbit/s path (payload rate 96.5 Mbit/s) runs full."""
    text = PATH_100.read_text().replace('duration = "5s"', 'duration = "6s"')
    scenario = tmp_path / "p100.toml"
    scenario.write_text(text)
    with testbed.Testbed("u100") as tb:
        tb.start_router(scenario)
        try:
            run = udp.testbed_transfer(tb, scenario)
        finally:
            report = tb.stop_router()
    samples = run["receiver"]["timeline"]
    # Delivered over the last 2 s of the run, when the startup is long over.
    end_t, end_b = samples[-1]["t_s"], samples[-1]["bytes"]
    before = [s for s in samples if s["t_s"] <= end_t - 2.0][-1]
    rate = (end_b - before["bytes"]) * 8 / (end_t - before["t_s"])
    assert rate > 0.8 * 100e6 * 1448 / 1500, f"{rate / 1e6:.1f} Mbit/s of payload in the last 2 s"
    assert report["forward"]["forwarded"] > 30_000
