"""The real-path testbed's namespaces (startlab.testbed; docs/TESTBED.md): built and always
removed, leftovers of a dead process found, Linux TCP between them with TCP_INFO. Needs root;
skips with the reason elsewhere."""

from __future__ import annotations

import os
import signal
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from startlab.real import testbed

REASON = testbed.permitted()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"the testbed cannot run here: {REASON}")

PYTHON_PATH = str(Path(testbed.__file__).resolve().parents[2])


def ours() -> list[str]:
    return [n for n in testbed.namespaces() if n.startswith(f"{testbed.PREFIX}{os.getpid()}-")]


def test_the_namespaces_exist_while_up_and_are_gone_after() -> None:
    with testbed.Testbed("up") as tb:
        assert tb.exists() and len(ours()) == 3
        routes = tb.exec(tb.client, "ip", "route").stdout
        assert "default via 10.203.1.2" in routes
    assert not tb.exists() and ours() == []
    tb.down()  # twice is harmless


def test_an_exception_inside_removes_the_namespaces() -> None:
    with pytest.raises(RuntimeError, match="boom"):
        with testbed.Testbed("boom"):
            raise RuntimeError("boom")
    assert ours() == []


@pytest.mark.parametrize("cc", ["reno", "cubic"])
def test_linux_tcp_crosses_the_router_and_reports_tcp_info(cc: str) -> None:
    with testbed.Testbed("tcp") as tb:
        got = tb.transfer(3_000_000, cc)
    assert got["bytes"] == 3_000_000
    assert got["congestion_control"] == cc
    samples = got["samples"]
    assert len(samples) >= 2 and all(s.cwnd >= 1 for s in samples)
    assert samples[-1].bytes_acked >= 3_000_000
    assert 0 < samples[-1].rtt < 0.05


def _child(script: str) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=PYTHON_PATH)
    return subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=env)


def test_leftovers_of_a_killed_process_are_removed_by_the_next_cleanup() -> None:
    child = _child("from startlab.real import testbed; import os; tb = testbed.Testbed('dead'); tb.up(); print(os.getpid(), flush=True); import time; time.sleep(60)")
    pid = int(child.stdout.readline())  # type: ignore[union-attr]
    left = [n for n in testbed.namespaces() if n.startswith(f"{testbed.PREFIX}{pid}-")]
    assert len(left) == 3
    child.kill()  # SIGKILL: no chance to clean up
    child.wait()
    child.stdout.close()  # type: ignore[union-attr]
    removed = testbed.cleanup()
    assert set(left) <= set(removed)
    assert not [n for n in testbed.namespaces() if n.startswith(f"{testbed.PREFIX}{pid}-")]


def test_sigterm_removes_the_namespaces() -> None:
    child = _child("from startlab.real import testbed; import os; tb = testbed.Testbed('term'); tb.up(); print(os.getpid(), flush=True); import time; time.sleep(60)")
    pid = int(child.stdout.readline())  # type: ignore[union-attr]
    child.send_signal(signal.SIGTERM)
    child.wait(timeout=30)
    child.stdout.close()  # type: ignore[union-attr]
    deadline = time.monotonic() + 5
    while [n for n in testbed.namespaces() if n.startswith(f"{testbed.PREFIX}{pid}-")] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [n for n in testbed.namespaces() if n.startswith(f"{testbed.PREFIX}{pid}-")]


def test_a_bad_tag_is_refused() -> None:
    with pytest.raises(ValueError, match="tag = 'Bad Tag'"):
        testbed.Testbed("Bad Tag")


PATH_20 = Path(__file__).parent / "data" / "testbed-20mbps.toml"


def test_the_router_applies_the_bottleneck_and_logs_every_drop() -> None:
    with testbed.Testbed("rtr") as tb:
        tb.start_router(PATH_20)
        got = tb.transfer(4_000_000, "cubic")
        report = tb.stop_router()
    assert got["bytes"] == 4_000_000
    # 20 Mbit/s of 1500-byte packets carry at most 20e6 * 1448 / 1500 bit/s of payload.
    assert 14e6 < got["goodput"] < 20e6 * 1448 / 1500
    rtts = [s.rtt for s in got["samples"] if s.rtt > 0]
    assert 0.040 <= min(rtts) < 0.043, "the router's delay (RTT 40 ms) plus a little host time"
    fwd, rev = report["forward"], report["reverse"]
    assert report["path"]["rtt_s"] == pytest.approx(0.040)
    assert fwd["max_queue_pkts"] == 67, "slow start fills the 67-packet buffer"
    assert fwd["drops"] == fwd["queue_drops"] == len(fwd["drop_log"]) > 0
    assert all(d["reason"] == "queue" and d["size"] == 1500 and d["proto"] == 6 for d in fwd["drop_log"])
    times = [d["t_s"] for d in fwd["drop_log"]]
    assert times == sorted(times) and 0 < times[0] < report["duration_s"]
    assert rev["drops"] == 0 and rev["arrivals"] > 0
    for d in (fwd, rev):
        assert d["forwarded"] > 0 and 0 < d["lateness_mean_s"] <= d["lateness_worst_s"]
    assert report["late"] == (max(fwd["lateness_worst_s"], rev["lateness_worst_s"]) > 1e-3)


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark (Debian package tshark, which .ci/run installs) is not on PATH")
def test_the_router_captures_every_frame_it_forwards(tmp_path: Path) -> None:
    with testbed.Testbed("cap") as tb:
        tb.start_router(PATH_20, pcap=tmp_path)
        got = tb.transfer(2_000_000, "cubic")
        report = tb.stop_router()
    assert got["bytes"] == 2_000_000
    fwd, rev = report["forward"], report["reverse"]
    assert fwd["capture_error"] is None and rev["capture_error"] is None
    assert Path(fwd["capture_file"]).name == "bottleneck-forward.pcapng"
    assert fwd["captured"] == fwd["forwarded"] > 1000 and rev["captured"] == rev["forwarded"] > 0
    fields = subprocess.run(
        ["tshark", "-n", "-r", fwd["capture_file"], "-T", "fields", "-e", "frame.time_epoch", "-e", "tcp.len", "-e", "_ws.malformed"],
        capture_output=True, text=True, check=True,
    ).stdout.splitlines()  # fmt: skip
    assert len(fields) == fwd["captured"]
    times = [float(line.split("\t")[0]) for line in fields]
    assert times == sorted(times) and times[-1] <= report["duration_s"] + 0.1, "release times since the router started"
    assert not any(line.split("\t")[2] for line in fields), "no malformed frame"
    payload = sum(int(line.split("\t")[1] or 0) for line in fields)
    # Every byte once, plus what slow start's overflow made the sender send again.
    assert payload >= 2_000_000 and payload - 2_000_000 < 1448 * (fwd["drops"] + 5)


@pytest.mark.parametrize("kind", ["codel", "fq-codel", "pie"])
def test_the_router_runs_the_simulators_dequeue_time_disciplines(kind: str, tmp_path: Path) -> None:
    """The same 20 Mbit/s path behind CoDel, FQ-CoDel or PIE (the simulator's own code on the
    router's frames): Linux CUBIC crosses it, the discipline's own drops are logged as `aqm`, and
    it keeps the queue well below the 67-packet drop-tail buffer's (which slow start fills)."""
    scenario = tmp_path / f"{kind}.toml"
    scenario.write_text(PATH_20.read_text().replace('queue = { kind = "droptail", limit = "67pkt" }', f'queue = {{ kind = "{kind}", limit = "1000pkt" }}'))
    with testbed.Testbed(kind.replace("-", "")[:6]) as tb:
        tb.start_router(scenario)
        got = tb.transfer(8_000_000, "cubic")
        report = tb.stop_router()
    assert got["bytes"] == 8_000_000
    fwd = report["forward"]
    assert report["path"]["queue"].startswith(kind)
    assert fwd["aqm_drops"] > 0, "the discipline never dropped"
    assert {d["reason"] for d in fwd["drop_log"]} <= {"aqm", "queue"} and fwd["drops"] == len(fwd["drop_log"])
    rtts = sorted(s.rtt for s in got["samples"] if s.rtt > 0)
    # Drop-tail's 67 packets add up to 40 ms; the disciplines hold the median RTT near 40 ms plus
    # their target (5 ms for the CoDels, 15 ms for PIE).
    assert rtts[len(rtts) // 2] < 0.040 + 0.025, f"median RTT {rtts[len(rtts) // 2]:.4f} s"


def test_the_router_refuses_a_path_it_cannot_emulate(tmp_path: Path) -> None:
    import startlab

    text = PATH_20.read_text().replace('rtt = "40ms"', 'rtts = ["40ms", "80ms"]\npairs = 2')
    bad = tmp_path / "two.toml"
    bad.write_text(text)
    with testbed.Testbed("bad") as tb:
        with pytest.raises(startlab.ScenarioError, match="topology.rtts: the testbed has one sender"):
            tb.start_router(bad)
        # The kernel forwards again.
        assert tb.exec(tb.router, "sysctl", "-n", "net.ipv4.ip_forward").stdout.strip() == "1"


def test_a_router_outliving_its_owner_is_stopped_by_cleanup() -> None:
    script = (
        "from startlab.real import testbed; import os, sys; tb = testbed.Testbed('orph'); tb.up(); "
        f"tb.start_router({str(PATH_20)!r}); print(os.getpid(), tb._router.pid, flush=True); import time; time.sleep(60)"
    )
    child = _child(script)
    pid, router_pid = (int(x) for x in child.stdout.readline().split())  # type: ignore[union-attr]
    router_ns = f"{testbed.PREFIX}{pid}-orph-router"
    assert testbed._run("ip", "netns", "pids", router_ns).stdout.split(), "the router runs in its namespace"
    child.kill()
    child.wait()
    child.stdout.close()  # type: ignore[union-attr]
    testbed.cleanup()
    assert router_ns not in testbed.namespaces()
    deadline = time.monotonic() + 5
    while Path(f"/proc/{router_pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not Path(f"/proc/{router_pid}").exists(), "no router process is left"
