"""``startlab analyze`` on truth (issue 37, item 4): kernel TCP (CUBIC with HyStart, Reno) and
startlab-udp transfers on the testbed's two real paths captured with tcpdump at the sender's
interface; the startup exit the analysis finds in the capture must lie within one RTT of the
stack's own (the kernel's tcp_probe: the first finite ssthresh; startlab-udp's sender: its
controller's exit) and its flight within 10 % of the stack's cwnd there. Needs root, the namespaces, tcpdump and tracefs; skips
with the reason where one is missing. The testbed (and tcpdump inside it) is removed even on failure.
The measured figures of every run are in docs/ANALYZE.md (``python bench/analyze_truth.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from startlab.real import capture, testbed, tracefs

ROOT = Path(__file__).resolve().parents[1]
REASON = testbed.permitted() or capture.tcpdump_missing()
if REASON is None:
    REASON = tracefs.tracing_permitted()


@pytest.fixture(scope="module")
def tb() -> Iterator[testbed.Testbed]:
    if REASON is not None:
        pytest.skip(f"the truth test cannot run here: {REASON}")
    with testbed.Testbed("anl") as made:
        yield made


@pytest.mark.flaky(reruns=1)
@pytest.mark.parametrize(("path", "stack", "size"), [
    ("path-20mbps", "kernel:cubic", 4_000_000),
    ("path-20mbps", "kernel:reno", 4_000_000),
    ("path-100mbps", "kernel:cubic", 12_000_000),
    ("path-100mbps", "kernel:reno", 12_000_000),
    ("path-20mbps", "udp", None),
    ("path-100mbps", "udp", None),
])  # fmt: skip
def test_analyze_finds_the_stacks_startup_exit_in_its_capture(tb: testbed.Testbed, tmp_path: Path, path: str, stack: str, size: int | None) -> None:
    (row,) = capture.kernel_truth(tb, ROOT / "examples" / "real" / f"{path}.toml", stack, tmp_path, size=size)
    assert row.kernel_exit_s is not None, f"the kernel left startup: {row}"
    assert row.analyze_exit_s is not None, f"analyze found an exit: {row}"
    assert row.time_error_rtts is not None and row.time_error_rtts <= 1.0, f"exit within one RTT: {row}"
    assert row.flight_error is not None and abs(row.flight_error) <= 0.10, f"exit flight within 10 % of tcp_probe's cwnd: {row}"
    if row.kernel_reason in ("loss", "timeout"):
        assert row.analyze_reason in ("loss", "timeout"), f"a loss exit is found as one: {row}"
