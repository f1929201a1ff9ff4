"""The benchmark behind ``startlab bench``: wall time, event rate and peak memory per scenario.

Scenarios: ``paced-start-default`` (examples/paced-start-default.toml as shipped),
``paced-start-fig11`` and ``paced-start-parking-lot`` (the paper's 2000-flow dumbbell and
parking-lot workloads, examples/paced-start-fig11.toml and examples/paced-start-parking-lot.toml),
and ``dumbbell-nN``: N long-lived SACK flows started together through a 1 Gbps bottleneck with a 50 ms
RTT, 10 Gbps access links and a drop-tail buffer of one BDP, for 20 s of simulated time with traces
off (``--quick``: 2 s and N = 10, 100 only); ``fq-codel-n1000`` and ``fq-codel-short-n10000``,
the same path behind FQ-CoDel with 1000 long flows or 10 000 short ones (``--quick``: 1000);
``quic-1gbps-loss-burst`` and ``quic-n1000``, QUIC flows (issue 35): one slow-start flow on 1 Gbit/s
/ 100 ms that overshoots its one-BDP buffer and loses about a BDP in one burst, and 1000 long flows
on the ``dumbbell-nN`` path.

Each scenario runs in a fresh interpreter (``python -m startlab.bench --one NAME``) so that the
peak resident memory reported is its own. Wall time covers building and running the simulation.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from ._console import stdout_console

#: Scenarios shipped inside the package (examples/paced-start-default.toml links here), so the
#: benchmark works from an installed wheel as well as from a checkout.
SCENARIOS = Path(__file__).resolve().parent / "scenarios"

_DUMBBELL_PREFIX = "dumbbell-n"

#: Benchmark scenarios shipped as files in ``SCENARIOS``.
_SHIPPED = ("paced-start-default", "paced-start-fig11", "paced-start-parking-lot")


#: The ``dumbbell-nN`` flows' transport: SACK TCP with 1448-byte segments and an ACK per segment.
_SACK = 'tcp = { recovery = "sack", mss = "1448B", header = "52B", ack = "every-packet" }'


def dumbbell(
    flows: int,
    duration: str,
    queue: str | None = None,
    flow_keys: str = 'start = "0s"\nsize = "infinite"',
    rtt: float = 0.050,
    transport: str = _SACK,
) -> str:
    """TOML of ``flows`` long-lived flows (``transport``: the flows' ``tcp`` or ``quic`` keys, SACK TCP
    by default) through 1 Gbps / ``rtt`` (50 ms) with a one-BDP drop-tail buffer (or ``queue``, an
    inline table body); ``flow_keys`` replaces the flows' start and size."""
    rate, packet = 1e9, 1500  # bit/s, bytes on the wire
    bdp_packets = math.ceil(rate * rtt / 8 / packet)
    queue = queue or f'kind = "droptail", limit = "{bdp_packets}pkt"'
    return f"""\
seed = 1
duration = "{duration}"

[topology]
kind = "dumbbell"
bottleneck_rate = "1Gbps"
rtt = "{rtt * 1e3:g}ms"
access_rate = "10Gbps"
queue = {{ {queue} }}

[[flows]]
name = "bulk"
count = {flows}
{transport}
startup = {{ algorithm = "slow-start" }}
{flow_keys}

[trace]
cwnd = false
seq = false
queue = false
"""


#: Single-flow large-window paths (issue 12): ``name -> (rate bit/s, RTT s, MSS B, header B,
#: buffer packets or None for one BDP of whole packets, simulated s)``. Slow start with IW 10 on SACK
#: overshoots the one-BDP drop-tail buffer and loses about a BDP in one burst, the case where a
#: per-ACK cost that grows with the window would show.
LARGE_WINDOW: dict[str, tuple[float, float, int, int, int | None, str]] = {
    "slow-start-100mbps": (100e6, 0.100, 1448, 52, None, "4s"),
    "slow-start-1gbps": (1e9, 0.100, 1448, 52, None, "4s"),
    "slow-start-10gbps": (10e9, 0.100, 1448, 52, None, "4s"),
    # HyStart paper Fig. 1: 400 Mbit/s, 360 ms, a 12 333-packet buffer; 10 s covers the overshoot
    # (slow start reaches the BDP after about 11 RTTs) and its recovery.
    "hystart-fig1": (400e6, 0.360, 1448, 52, 12333, "10s"),
    "mss100-100mbps": (100e6, 0.100, 100, 40, None, "4s"),
}


#: The same large-window paths under the other scoreboard recoveries (issue 16: the per-ACK cost
#: must stay independent of the window under each): ``name -> (path, recovery)``.
RECOVERY_PATHS: dict[str, tuple[str, str]] = {
    f"{path}-{recovery}": (path, recovery)
    for path in ("slow-start-1gbps", "slow-start-10gbps")
    for recovery in ("prr", "rack-tlp", "linux", "sack1", "ns3-prr")
}


def large_window(name: str, duration: str | None = None) -> str:
    """TOML of one single slow-start flow of :data:`LARGE_WINDOW` (SACK) or
    :data:`RECOVERY_PATHS`, traces off."""
    name, recovery = RECOVERY_PATHS.get(name, (name, "sack"))
    rate, rtt, mss, header, buffer, default_duration = LARGE_WINDOW[name]
    if buffer is None:
        buffer = round(rate * rtt / 8 / (mss + header))
    access = max(10 * rate, 10e9)
    return f"""\
seed = 1
duration = "{duration or default_duration}"

[topology]
kind = "dumbbell"
bottleneck_rate = "{rate / 1e6:g}Mbps"
rtt = "{rtt * 1e3:g}ms"
access_rate = "{access / 1e6:g}Mbps"
queue = {{ kind = "droptail", limit = "{buffer}pkt" }}

[[flows]]
name = "bulk"
tcp = {{ recovery = "{recovery}", mss = "{mss}B", header = "{header}B", ack = "every-packet", initial_window = 10 }}
startup = {{ algorithm = "slow-start" }}
size = "infinite"

[trace]
cwnd = false
seq = false
queue = false
"""


def large_window_scenarios(quick: bool) -> dict[str, str]:
    """The large-window scenarios by name (``--quick``: 1 Gbit/s and below, 2 s)."""
    chosen = [n for n in LARGE_WINDOW if not quick or n in ("slow-start-100mbps", "slow-start-1gbps", "mss100-100mbps")]
    chosen += [n for n, (path, _) in RECOVERY_PATHS.items() if not quick or path == "slow-start-1gbps"]
    return {n: large_window(n, "2s" if quick else None) for n in chosen}


def users(count: int, duration: str) -> str:
    """TOML of ``count`` closed-loop users (``[[users]]``, a new connection per transfer) on the
    long-flow dumbbell's path (1 Gbps / 50 ms, one-BDP buffer) over 100 host pairs: bounded-Pareto
    transfers of mean 1 MB (shape 1.2, cutoff 100 MB), exponential think times of mean 1 s (the
    users offer more than the link carries, so it stays busy)."""
    bdp_packets = math.ceil(1e9 * 0.050 / 8 / 1500)
    return f"""\
seed = 1
duration = "{duration}"

[topology]
kind = "dumbbell"
bottleneck_rate = "1Gbps"
rtt = "50ms"
pairs = 100
access_rate = "10Gbps"
queue = {{ kind = "droptail", limit = "{bdp_packets}pkt" }}

[[users]]
name = "user"
count = {count}
size = {{ dist = "pareto", mean = "1MB", shape = 1.2, cutoff = "100MB" }}
think = "1s"
tcp = {{ recovery = "sack", mss = "1448B", header = "52B", ack = "every-packet" }}

[trace]
cwnd = false
seq = false
queue = false
"""


_REPLAY_DIR: list[Path] = []


def _files_dir() -> Path:
    """A temporary directory for the files benchmark scenarios name, one per process."""
    import tempfile

    if not _REPLAY_DIR:
        _REPLAY_DIR.append(Path(tempfile.mkdtemp(prefix="startlab-bench-")))
    return _REPLAY_DIR[0]


def replay(connections: int, duration: float, directory: Path) -> str:
    """TOML replaying ``connections`` synthetic connection vectors (``startlab.replay.generate``:
    nine RTTs 4-200 ms, load 0.3) on a 1 Gbit/s bottleneck. The vector file is written to
    ``directory`` (once; not timed) and named relative to it: the scenario is read with
    ``directory`` as its base."""
    from startlab import replay as vectors

    name = f"vectors-{connections}-{duration:g}.csv"
    if not (directory / name).exists():
        vectors.write(vectors.generate(connections=connections, rate="1Gbps", load=0.3, duration=duration, seed=1), directory / name)
    return vectors.scenario_toml(vectors=name, rate="1Gbps", duration=duration, buffer_pkts=4167, access_rate="10Gbps")


#: FQ-CoDel at the bottleneck (issue 33): 1000 long flows, and 10 000 short ones (30 KB each,
#: started uniformly over the run) — one flow queue each, the sparse-flow lists busy.
FQ_CODEL = ("fq-codel-n1000", "fq-codel-short-n10000")


def fq_codel(name: str, quick: bool) -> str:
    """TOML of one :data:`FQ_CODEL` scenario (1 Gbit/s, 50 ms, FQ-CoDel at its defaults)."""
    duration = 2.0 if quick else 20.0
    if name == "fq-codel-n1000":
        return dumbbell(1000, f"{duration:g}s", 'kind = "fq-codel"')
    count = 1000 if quick else 10_000
    return dumbbell(count, f"{duration:g}s", 'kind = "fq-codel"', f'start = "0s"\nstart_jitter = "{duration * 0.9:g}s"\nsize = "30KB"')


#: QUIC flows (issue 35): one flow's loss burst at a large window, and 1000 long flows.
QUIC = ("quic-1gbps-loss-burst", "quic-n1000")


def quic(name: str, quick: bool) -> str:
    """TOML of one :data:`QUIC` scenario (RFC 9002 defaults: 1472-byte datagrams, handshake,
    pacing), traces off."""
    if name == "quic-1gbps-loss-burst":
        return dumbbell(1, "2s" if quick else "4s", rtt=0.100, transport="quic = {}")
    return dumbbell(1000, "2s" if quick else "20s", transport="quic = {}")


def names(quick: bool) -> list[str]:
    """The benchmark scenarios, in the order they run."""
    counts = (10, 100) if quick else (10, 100, 1000)
    return [*_SHIPPED] + [f"{_DUMBBELL_PREFIX}{n}" for n in counts] + list(large_window_scenarios(quick)) + ["users-1000", "replay-450", *FQ_CODEL, *QUIC]


def scenario(name: str, quick: bool, directory: Path | None = None) -> str:
    """The TOML text of one benchmark scenario; files it names are written to ``directory`` (by
    default a temporary one, see :func:`_files_dir`) and named relative to it."""
    if name.startswith(_DUMBBELL_PREFIX):
        return dumbbell(int(name[len(_DUMBBELL_PREFIX) :]), "2s" if quick else "20s")
    if name in _SHIPPED:
        return (SCENARIOS / f"{name}.toml").read_text(encoding="utf-8")
    if name in LARGE_WINDOW or name in RECOVERY_PATHS:
        return large_window(name, "2s" if quick else None)
    if name in FQ_CODEL:
        return fq_codel(name, quick)
    if name in QUIC:
        return quic(name, quick)
    if name == "users-1000":
        return users(1000, "2s" if quick else "20s")
    if name == "replay-450":
        return replay(450, 5.0 if quick else 60.0, directory or _files_dir())
    raise ValueError(f"unknown benchmark scenario {name!r}; known: {', '.join(names(False))}")


def measure(name: str, quick: bool) -> dict[str, Any]:
    """Run one scenario in this process and report its cost."""
    from startlab import _core

    text = scenario(name, quick)
    # The directory of the files the scenario named, if it named any.
    base = str(_REPLAY_DIR[0]) if _REPLAY_DIR else None
    rss_before = _peak_rss()
    start = time.perf_counter()
    sim = _core.Simulation(text, "toml", base)
    sim.run()
    wall = time.perf_counter() - start
    stats = sim.stats()
    return {
        "scenario": name,
        "simulated_s": stats["sim_time_ns"] / 1e9,
        "wall_s": wall,
        "events": stats["events"],
        "events_per_s": stats["events"] / wall,
        "delivered_per_s": stats["delivered_packets"] / wall,
        "peak_rss_bytes": _peak_rss(),
        "rss_before_bytes": rss_before,
    }


def _peak_rss() -> int:
    """Peak resident set size of this process in bytes. On Linux, ``VmHWM`` of /proc/self/status:
    ``getrusage``'s ``ru_maxrss`` survives ``exec``, so in a child started by ``startlab bench``
    it is at least the parent's peak (209 MiB with the CLI loaded, hiding the child's own ~140
    MiB). Elsewhere ``ru_maxrss`` (KiB on Linux, bytes on macOS)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def run_all(quick: bool, repeat: int = 3) -> list[dict[str, Any]]:
    """Measure each scenario ``repeat`` times, each in a fresh interpreter, and keep the fastest
    run (wall-clock time on a shared machine only ever adds noise); a failure is a row with an
    ``error``."""
    # The child imports the same startlab as this process, wherever it was found.
    package_root = str(Path(__file__).resolve().parents[1])
    path = os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path}
    rows = []
    with Console(stderr=True).status("benchmarking") as status:
        for name in names(quick):
            command = [sys.executable, "-m", "startlab.bench", "--one", name]
            best: dict[str, Any] | None = None
            for attempt in range(repeat):
                status.update(f"benchmarking {name} ({attempt + 1}/{repeat})")
                child = subprocess.run(
                    command + ["--quick"] * quick,
                    capture_output=True,
                    text=True,
                    env=env,
                    check=False,
                )
                if child.returncode != 0:
                    lines = child.stderr.strip().splitlines() or [f"exit code {child.returncode}"]
                    best = {"scenario": name, "error": lines[-1]}
                    break
                row = json.loads(child.stdout)
                if best is None or row["wall_s"] < best["wall_s"]:
                    best = row
            assert best is not None
            rows.append({**best, "runs": repeat})
    return rows


def report(rows: Sequence[dict[str, Any]]) -> None:
    """Print the measurements as a table on stdout, and each failure after it on stderr."""
    runs = max((row.get("runs", 1) for row in rows), default=1)
    out = Table(title=f"startlab benchmark (fastest of {runs} runs per scenario)")
    headings = ["scenario", "simulated s", "wall s", "events", "events/s", "delivered pkt/s"]
    for heading in [*headings, "peak RSS MiB", "RSS before run MiB"]:
        out.add_column(heading, justify="left" if heading == "scenario" else "right")
    for row in rows:
        if "error" in row:
            out.add_row(row["scenario"], "[red]failed[/red]")
            continue
        out.add_row(
            row["scenario"],
            f"{row['simulated_s']:g}",
            f"{row['wall_s']:.2f}",
            f"{row['events']:,}",
            f"{row['events_per_s']:,.0f}",
            f"{row['delivered_per_s']:,.0f}",
            f"{row['peak_rss_bytes'] / 2**20:.0f}",
            f"{row['rss_before_bytes'] / 2**20:.0f}",
        )
    stdout_console().print(out)
    for row in rows:
        if "error" in row:
            print(f"{row['scenario']} failed: {row['error']}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m startlab.bench [--quick] [--one NAME]``."""
    parser = argparse.ArgumentParser(
        prog="startlab.bench", description="Time the startlab benchmark scenarios."
    )
    parser.add_argument("--quick", action="store_true", help="2 s simulated, at most 100 flows")
    parser.add_argument("--one", metavar="NAME", help="measure one scenario here, print JSON")
    parser.add_argument("--repeat", type=int, default=3, help="runs per scenario; the fastest is kept")
    parser.add_argument(
        "--write", metavar="DIR", type=Path,
        help="write every benchmark scenario to DIR/NAME.toml and exit (to time them on another build, "
        "e.g. with the engine example: cargo run --release -p startlab-sim --example run -- DIR/NAME.toml)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if args.write:
        args.write.mkdir(parents=True, exist_ok=True)
        for name in names(args.quick):
            (args.write / f"{name}.toml").write_text(scenario(name, args.quick, args.write), encoding="utf-8")
            print(args.write / f"{name}.toml")
        return
    if args.one:
        print(json.dumps(measure(args.one, args.quick)))
    else:
        report(run_all(args.quick, max(args.repeat, 1)))


if __name__ == "__main__":
    main()
