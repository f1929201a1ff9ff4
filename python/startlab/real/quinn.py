"""quinn, a real QUIC stack, on the testbed (crates/startlab-quinn, docs/REAL.md "quinn").

The ``startlab-quinn`` binary runs one quinn connection: its ``server`` (the data sender, in the
testbed's server namespace) sends the scenario flow's response with either startlab's startup +
avoidance for that flow inside quinn (``quinn:startlab``) or quinn's own controller
(``quinn:cubic``, ``quinn:newreno``, ``quinn:bbr``); its ``client`` (the receiver, in the client
namespace) connects, asks, and reads everything. Both print a JSON report.

The binary is found, in this order, at ``$STARTLAB_QUINN``, on ``PATH``, or in the ``target/``
directory of the startlab checkout (the newer of ``release`` and ``debug``): build it with
``cargo build --release -p startlab-quinn``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from .system import RealSystemError

#: compare-real's quinn stacks: startlab's algorithm inside quinn, and quinn's own controllers.
STACKS = ("quinn:startlab", "quinn:cubic", "quinn:newreno", "quinn:bbr")
BUILD = "cargo build --release -p startlab-quinn"


class QuinnError(RealSystemError):
    """The startlab-quinn binary is missing or a transfer failed."""


def _roots() -> list[Path]:
    """Checkouts that may hold a built binary: this package's own, then the working directory and
    its parents."""
    here = Path(__file__).resolve().parents[3]
    cwd = Path.cwd().resolve()
    out = []
    for root in (here, cwd, *cwd.parents):
        if (root / "crates" / "startlab-quinn").is_dir() and root not in out:
            out.append(root)
    return out


def binary() -> Path:
    """The ``startlab-quinn`` binary; :class:`QuinnError` naming the build command if there is none."""
    given = os.environ.get("STARTLAB_QUINN")
    if given:
        if not (Path(given).is_file() and os.access(given, os.X_OK)):
            raise QuinnError(f"STARTLAB_QUINN={given}: not an executable file; build startlab-quinn with `{BUILD}`")
        return Path(given)
    found = shutil.which("startlab-quinn")
    if found:
        return Path(found)
    target = os.environ.get("CARGO_TARGET_DIR")
    candidates = [Path(target) / p / "startlab-quinn" for p in ("release", "debug")] if target else []
    for root in _roots():
        candidates += [root / "target" / p / "startlab-quinn" for p in ("release", "debug")]
    built = [c for c in candidates if c.is_file() and os.access(c, os.X_OK)]
    if not built:
        raise QuinnError(
            f"the startlab-quinn binary (package startlab-quinn, crates/startlab-quinn) is not built: run `{BUILD}` "
            "in the startlab checkout, or set STARTLAB_QUINN to the binary"
        )
    return max(built, key=lambda c: c.stat().st_mtime)


def cc_of(stack: str) -> str:
    """``quinn:cubic`` -> ``cubic``; a ValueError names the quinn stacks."""
    if stack not in STACKS:
        raise ValueError(f"{stack!r} is not a quinn stack; expected one of {', '.join(STACKS)}")
    return stack.removeprefix("quinn:")


def testbed_transfer(tb: Any, scenario: str | os.PathLike[str], stack: str, *, flow: int = 0, port: int = 5302, timeout: float = 120.0) -> dict[str, Any]:
    """One transfer across a :class:`startlab.real.testbed.Testbed` (server in the server
    namespace, client in the client namespace): ``{"server": ..., "client": ...}`` reports."""
    cc = cc_of(stack)
    exe = os.fspath(binary())
    scenario = os.fspath(Path(scenario).resolve())
    with tempfile.TemporaryDirectory(prefix="startlab-quinn-") as tmp:
        cert = os.path.join(tmp, "cert.der")
        args = [exe, "server", "--bind", f"{tb.server_ip}:{port}", "--cert-out", cert, "--cc", cc, "--scenario", scenario, "--flow", str(flow)]
        server = subprocess.Popen(
            ["ip", "netns", "exec", tb.server, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )  # fmt: skip
        try:
            assert server.stdout is not None
            ready = server.stdout.readline()
            if not ready.startswith("ready "):
                err = server.stderr.read() if server.stderr else ""
                raise QuinnError(f"the startlab-quinn server did not start: {(ready + err).strip()}")
            client = subprocess.run(
                ["ip", "netns", "exec", tb.client, exe, "client", "--server", f"{tb.server_ip}:{port}", "--cert", cert, "--scenario", scenario, "--flow", str(flow)],
                capture_output=True, text=True, timeout=timeout,
            )  # fmt: skip
            if client.returncode != 0:
                raise QuinnError(f"the startlab-quinn client failed: {client.stderr.strip()}")
            out, err = server.communicate(timeout=timeout)
        except BaseException:
            server.kill()
            server.communicate()
            raise
    if server.returncode != 0:
        raise QuinnError(f"the startlab-quinn server failed: {err.strip()}")
    return {"server": json.loads(out), "client": json.loads(client.stdout)}
