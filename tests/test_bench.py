"""The benchmark's scenarios are accepted by the simulator (running them is `startlab bench`)."""

from __future__ import annotations

from pathlib import Path

import pytest

import startlab
from startlab import bench


@pytest.mark.parametrize("name", bench.names(quick=False))
def test_every_benchmark_scenario_is_valid(name: str, tmp_path: Path) -> None:
    # As `startlab bench --write DIR` writes it: files the scenario names (the replay's vectors)
    # beside it, named relative to it.
    path = tmp_path / f"{name}.toml"
    path.write_text(bench.scenario(name, quick=False, directory=tmp_path), encoding="utf-8")
    startlab.validate(path)


def test_the_dumbbell_buffer_is_one_bdp_in_packets() -> None:
    # 1 Gbit/s × 50 ms / 8 / 1500 B = 4166.7 packets, rounded up.
    assert 'limit = "4167pkt"' in bench.dumbbell(10, "2s")


def test_quick_runs_fewer_flows_for_less_time() -> None:
    assert bench.names(quick=True) == [
        "paced-start-default",
        "paced-start-fig11",
        "paced-start-parking-lot",
        "dumbbell-n10",
        "dumbbell-n100",
        "slow-start-100mbps",
        "slow-start-1gbps",
        "mss100-100mbps",
        "slow-start-1gbps-prr",
        "slow-start-1gbps-rack-tlp",
        "slow-start-1gbps-linux",
        "slow-start-1gbps-sack1",
        "slow-start-1gbps-ns3-prr",
        "users-1000",
        "replay-450",
        "fq-codel-n1000",
        "fq-codel-short-n10000",
        "quic-1gbps-loss-burst",
        "quic-n1000",
    ]
    assert 'duration = "2s"' in bench.scenario("dumbbell-n100", quick=True)
    # The short-flow FQ-CoDel row: 1000 flows in --quick, 10 000 otherwise, started over the run.
    assert "count = 1000\n" in bench.scenario("fq-codel-short-n10000", quick=True)
    assert "count = 10000\n" in bench.scenario("fq-codel-short-n10000", quick=False)
    assert 'kind = "fq-codel"' in bench.scenario("fq-codel-n1000", quick=True)
    assert 'duration = "2s"' in bench.scenario("slow-start-1gbps", quick=True)


@pytest.mark.parametrize(
    ("name", "limit"),
    [("slow-start-100mbps", 833), ("slow-start-1gbps", 8333), ("slow-start-10gbps", 83333), ("hystart-fig1", 12333), ("mss100-100mbps", 8929)],
)
def test_the_large_window_paths_have_the_issue_buffers(name: str, limit: int) -> None:
    # One BDP of 1500-byte packets (140-byte with the 100-byte MSS) at 100 ms; HyStart Fig. 1's own.
    assert f'limit = "{limit}pkt"' in bench.scenario(name, quick=False)


def test_each_recovery_runs_the_large_window_paths() -> None:
    # Issue 16: the per-ACK cost must stay independent of the window under every recovery.
    for recovery in ("prr", "rack-tlp", "linux", "sack1", "ns3-prr"):
        for path, limit in (("slow-start-1gbps", 8333), ("slow-start-10gbps", 83333)):
            text = bench.scenario(f"{path}-{recovery}", quick=False)
            assert f'recovery = "{recovery}"' in text and f'limit = "{limit}pkt"' in text


def test_peak_rss_is_the_process_own_and_not_its_parents() -> None:
    # getrusage's ru_maxrss survives exec: a child of a big parent reported the parent's peak.
    import subprocess
    import sys

    measure = "from startlab import bench; print(bench._peak_rss())"
    big_then_exec = (
        "import os, sys; block = bytearray(400 * 2**20); block[::4096] = b'x' * len(block[::4096]); "
        f"os.execv(sys.executable, [sys.executable, '-c', {measure!r}])"
    )
    done = subprocess.run([sys.executable, "-c", big_then_exec], capture_output=True, text=True, check=True, timeout=120)
    assert 0 < int(done.stdout) < 300 * 2**20, done.stdout


def test_write_puts_every_scenario_in_a_file_the_engine_accepts(tmp_path: Path) -> None:
    bench.main(["--write", str(tmp_path)])
    written = sorted(p.stem for p in tmp_path.glob("*.toml"))
    assert written == sorted(bench.names(quick=False))
    startlab.validate(tmp_path / "slow-start-10gbps.toml")
