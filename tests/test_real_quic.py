"""startlab-udp's QUIC mode (docs/QUIC.md, "Over UDP: startlab-udp"): the simulator's two QUIC
endpoints over UDP, on loopback from Python, and beside the simulator through the testbed with
``startlab compare-real --stacks sim,udp`` (the testbed tests need root and skip elsewhere)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from startlab.real import side_by_side, testbed, udp

ROOT = Path(__file__).resolve().parents[1]
PATH_20_QUIC = ROOT / "examples" / "real" / "path-20mbps-quic.toml"
TESTBED = testbed.permitted()
needs_testbed = pytest.mark.skipif(TESTBED is not None, reason=f"the testbed cannot run here: {TESTBED}")


def sized(tmp_path: Path, size: str = "2MB") -> Path:
    """The 20 Mbit/s QUIC path with a sized response (both stacks run it to completion)."""
    text = PATH_20_QUIC.read_text().replace('size = "infinite"', f'size = "{size}"').replace('duration = "5s"', 'duration = "20s"')
    out = tmp_path / "quic-20.toml"
    out.write_text(text)
    return out


def test_a_quic_flow_runs_over_loopback_from_python(tmp_path: Path) -> None:
    key = udp.key()
    out: dict[str, Any] = {}
    ready = threading.Event()

    def serve() -> None:
        # Port 0 cannot be learnt from udp.serve: use a fixed free port instead.
        ready.set()
        out["report"] = udp.serve(f"127.0.0.1:{port}", key, idle_timeout=3.0, accept_timeout=10.0)

    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t = threading.Thread(target=serve, daemon=True)
    t.start()
    ready.wait()
    sent = udp.send(sized(tmp_path, "1MB"), f"127.0.0.1:{port}", key, connect_timeout=5.0)
    t.join(timeout=30)
    received = out["report"]
    assert sent["transport"] == "quic" and received["transport"] == "quic"
    assert sent["completed"] and sent["bytes_acked"] == 1_000_000 == received["delivered_bytes"]
    assert sent["mss"] == 1472 and sent["startup"] == "hystart++"
    assert received["quic"]["handshake_complete"] and received["receiver"] is None
    assert sum(sent["drops"].values()) == 0 and sum(received["drops"].values()) == 0


@needs_testbed
def test_quic_over_udp_and_the_simulator_leave_slow_start_together(tmp_path: Path) -> None:
    """Slow start over QUIC on the 20 Mbit/s path (one-BDP buffer): the same two endpoints,
    simulated and over UDP through the router, end slow start on the same loss at the same window
    and lose the same burst, with REAL.md's bounds for the TCP endpoints (10 % on the exit window,
    20 % on the burst: the drops up to one RTT after the exit), and both finish the response."""
    rows = {r.stack: r for r in side_by_side.compare_real(sized(tmp_path), ["sim", "udp"], tmp_path / "work", startup="slow-start")}
    sim, real = rows["sim"], rows["udp"]
    assert real.detail["transport"] == "quic" and real.detail["completed"], real.detail
    assert sim.goodput_bps is not None and real.goodput_bps is not None
    assert real.exit_reason == sim.exit_reason == "loss"
    assert real.exit_cwnd_pkts == pytest.approx(sim.exit_cwnd_pkts, rel=0.10)
    burst = [sum(1 for t in r.drop_times if t <= r.exit_time_s + 0.040) for r in (sim, real)]  # type: ignore[operator]
    assert burst[1] == pytest.approx(burst[0], rel=0.20) and burst[0] > 0
    assert real.router is not None and real.router["forwarded"] > 0


@needs_testbed
def test_quic_hystart_plus_plus_over_udp_agrees_with_the_simulator(tmp_path: Path) -> None:
    """HyStart++ (quiche's constants) over QUIC on the same path: the exit window within 10 %."""
    rows = {r.stack: r for r in side_by_side.compare_real(sized(tmp_path), ["sim", "udp"], tmp_path / "work")}
    sim, real = rows["sim"], rows["udp"]
    assert real.detail["completed"], real.detail
    assert real.exit_reason == sim.exit_reason
    assert real.exit_cwnd_pkts == pytest.approx(sim.exit_cwnd_pkts, rel=0.10)


@needs_testbed
def test_ce_marks_reach_the_quic_endpoint_over_udp(tmp_path: Path) -> None:
    """ECN over QUIC (``tcp.ecn = true``) through a RED queue that marks: every packet leaves
    ECT(0), the router's CE marks are read with IP_RECVTOS, counted in the client's ACK frames, and
    end slow start at the sender as in the simulator (reason ``ecn``, the window within 10 %)."""
    scenario = tmp_path / "quic-red-ecn.toml"
    scenario.write_text(
        PATH_20_QUIC.read_text()
        .replace('queue = { kind = "droptail", limit = "67pkt" }', 'queue = { kind = "red", limit = "300pkt", min_th = "10pkt", max_th = "40pkt", max_p = 0.1, w_q = 0.002, gentle = true, ecn = true }')
        .replace('tcp = { congestion_avoidance = "cubic" }', 'tcp = { congestion_avoidance = "cubic", ecn = true }')
        .replace('algorithm = "hystart++", preset = "quiche"', 'algorithm = "slow-start"')
        .replace('duration = "5s"', 'duration = "1.5s"')
    )
    rows = {r.stack: r for r in side_by_side.compare_real(scenario, ["sim", "udp"], tmp_path / "work")}
    sim, real = rows["sim"], rows["udp"]
    assert sim.exit_reason == real.exit_reason == "ecn", (sim.exit_reason, real.exit_reason)
    assert real.exit_cwnd_pkts == pytest.approx(sim.exit_cwnd_pkts, rel=0.10)
