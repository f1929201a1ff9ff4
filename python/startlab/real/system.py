"""What the real-system modules share: where their state lives, how they run a command, whether a
process is alive, how they write a /proc, /sys or tracefs file, and what congestion controls the
running kernel offers. Nothing here changes the machine by itself."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

#: Where the locks, the journals of changed kernel settings and private tracefs mounts live.
STATE_DIR = Path("/run/startlab")
#: Linux socket options Python's socket module does not name.
SO_COOKIE = 57
TCP_CC_INFO = 26
TCP_NOTSENT_LOWAT = 25
#: The kernel's list of registered congestion controls.
AVAILABLE_CC = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")


class RealSystemError(RuntimeError):
    """A real-system step (a namespace, a kernel setting, a tracepoint, a BPF program) failed; the
    message says which and why."""


def run(*args: str, check: bool = True, error: type[Exception] = RealSystemError) -> subprocess.CompletedProcess[str]:
    """Run a command and capture its output; with ``check``, a non-zero status raises ``error``
    quoting the command and what it printed."""
    done = subprocess.run(list(args), capture_output=True, text=True)
    if check and done.returncode != 0:
        raise error(f"`{' '.join(args)}` failed: {done.stderr.strip() or done.stdout.strip()}")
    return done


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists (owned by anyone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def write(path: Path, value: str) -> None:
    """Write ``value`` to a kernel file (a sysctl, a module parameter, a tracefs control)."""
    with open(path, "w") as f:
        f.write(value)


def available_congestion_controls() -> list[str]:
    """The congestion controls the running kernel has registered now."""
    return AVAILABLE_CC.read_text().split()
