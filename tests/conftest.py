"""Shared fixtures: one small, fast scenario (10 Mbit/s, 20 ms, 2 s) in every accepted form; Ctrl-C
for the tests that send it, whatever the test runner inherited."""

from __future__ import annotations

import copy
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import startlab

#: A bulk transfer and a short one joining it later, through a 25-packet-BDP bottleneck with a
#: 50-packet buffer, so that slow start overflows it and every trace has points.
SMALL_TOML = """\
seed = 1
duration = "2s"

[topology]
kind = "dumbbell"
bottleneck_rate = "10Mbps"
rtt = "20ms"
access_rate = "100Mbps"
queue = { kind = "droptail", limit = "50pkt" }

[[flows]]
name = "bulk"
startup = { algorithm = "slow-start" }
start = "0s"
size = "infinite"
[flows.tcp]
recovery = "sack"
mss = "1000B"
initial_window = 2
initial_ssthresh = "infinite"
ack = "every-packet"

[[flows]]
name = "short"
startup = { algorithm = "slow-start" }
start = "500ms"
size = "100KB"
[flows.tcp]
recovery = "newreno"
mss = "1000B"
initial_window = 2
initial_ssthresh = "infinite"
ack = "every-packet"

[trace]
cwnd = true
seq = true
queue = true
interval = "0s"
"""


def _tcp(recovery: str) -> dict[str, Any]:
    return {
        "recovery": recovery,
        "mss": "1000B",
        "initial_window": 2,
        "initial_ssthresh": "infinite",
        "ack": "every-packet",
    }


#: SMALL_TOML as a dict.
SMALL_DICT: dict[str, Any] = {
    "seed": 1,
    "duration": "2s",
    "topology": {
        "kind": "dumbbell",
        "bottleneck_rate": "10Mbps",
        "rtt": "20ms",
        "access_rate": "100Mbps",
        "queue": {"kind": "droptail", "limit": "50pkt"},
    },
    "flows": [
        {
            "name": "bulk",
            "tcp": _tcp("sack"),
            "startup": {"algorithm": "slow-start"},
            "start": "0s",
            "size": "infinite",
        },
        {
            "name": "short",
            "tcp": _tcp("newreno"),
            "startup": {"algorithm": "slow-start"},
            "start": "500ms",
            "size": "100KB",
        },
    ],
    "trace": {"cwnd": True, "seq": True, "queue": True, "interval": "0s"},
}


@pytest.fixture
def small_toml() -> str:
    """The small scenario as TOML text."""
    return SMALL_TOML


@pytest.fixture
def small_dict() -> dict[str, Any]:
    """The small scenario as a dict (a fresh copy each time)."""
    return copy.deepcopy(SMALL_DICT)


@pytest.fixture
def small_file(tmp_path: Path) -> Path:
    """The small scenario as a .toml file."""
    path = tmp_path / "small.toml"
    path.write_text(SMALL_TOML, encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def small_result() -> startlab.Result:
    """The small scenario's result, run once per session (tests must not modify it)."""
    return startlab.run(SMALL_TOML, progress=False)


# --- Ctrl-C -----------------------------------------------------------------------------------
# A test runner started with SIGINT ignored (a background job of a non-interactive shell: `cmd &`
# in a script, and so some CI agents) passes SIG_IGN on to this process and to every child, and
# Python then installs no KeyboardInterrupt handler: a SIGINT sent by a test would be dropped. The
# tests that send one restore it where it must arrive, and nowhere else (the startlab command itself
# leaves an ignored SIGINT ignored, as a program started that way should).


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture
def sigint_in_child() -> Callable[[], None]:
    """A ``preexec_fn`` for a child a test sends SIGINT to: the default disposition, restored after
    fork and before exec, so that the child's Python installs its KeyboardInterrupt handler."""
    return _default_sigint


@pytest.fixture
def sigint_here() -> Iterator[None]:
    """Python's KeyboardInterrupt handler in this process for the test (a test that sends SIGINT
    to itself); the runner's own disposition is put back afterwards."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
