"""The real-path testbed's namespaces (startlab.testbed; docs/TESTBED.md): built and always
removed, leftovers of a dead process found, Linux TCP between them with TCP_INFO. Needs root;
skips with the reason elsewhere."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from startlab import testbed

REASON = testbed.permitted()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"the testbed cannot run here: {REASON}")

PYTHON_PATH = str(Path(testbed.__file__).resolve().parents[1])


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
    child = _child("from startlab import testbed; import os; tb = testbed.Testbed('dead'); tb.up(); print(os.getpid(), flush=True); import time; time.sleep(60)")
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
    child = _child("from startlab import testbed; import os; tb = testbed.Testbed('term'); tb.up(); print(os.getpid(), flush=True); import time; time.sleep(60)")
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
