"""The real systems beside the simulator (docs/TESTBED.md, docs/REAL.md, docs/KERNEL-BPF.md): what
runs on this machine's network stack rather than in simulated time. Linux only, and most of it
needs root; every entry point says why when it cannot run here.

Modules, bottom up (each imports only those above it):

- :mod:`~startlab.real.system` — the state directory, the command runner, process liveness, kernel
  file writes, the kernel's congestion controls; :class:`RealSystemError`, the base of every error.
- :mod:`~startlab.real.testbed` — client, router and server network namespaces; the router runs
  the simulator's own link and queue code (:mod:`~startlab.real.router`, crates/startlab-router).
- :mod:`~startlab.real.tracefs` — tcp_probe/tcp_retransmit_skb from a private tracefs instance.
- :mod:`~startlab.real.kernelbpf` — the papers' startups as BPF congestion controls (``bpf/``).
- :mod:`~startlab.real.kerneltcp` — one Linux TCP transfer across the testbed, traced per ACK (its
  two ends run in the namespaces as :mod:`~startlab.real.kernelends`).
- :mod:`~startlab.real.conformance` — a BPF algorithm and its Rust version on the same scripted ACKs.
- :mod:`~startlab.real.udp` — startlab-udp, the simulator's sans-IO endpoints over UDP.
- :mod:`~startlab.real.side_by_side` — one scenario on the simulator, startlab-udp and kernel TCP.

The names below are the public surface; the command line (``startlab testbed|kernel|net|
compare-real``, python/startlab/cli_real.py) is built on them.
"""

from __future__ import annotations

from .side_by_side import StackResult, compare_real, parse_stacks
from .conformance import Script, Trace, conform
from .kernelbpf import KernelBpfError
from .kerneltcp import KernelRun, KernelSample, KernelTcpError
from .system import RealSystemError
from .testbed import Testbed, TestbedError, permitted
from .tracefs import TracefsError

__all__ = [
    "KernelBpfError",
    "KernelRun",
    "KernelSample",
    "KernelTcpError",
    "RealSystemError",
    "Script",
    "StackResult",
    "Testbed",
    "TestbedError",
    "Trace",
    "TracefsError",
    "compare_real",
    "conform",
    "parse_stacks",
    "permitted",
]
