"""The real systems' commands: the testbed (`startlab testbed`), the BPF congestion controls
(`startlab kernel`), startlab-udp (`startlab net`) and `startlab compare-real` (docs/TESTBED.md,
docs/KERNEL-BPF.md, docs/REAL.md). The main group adds them (startlab.cli)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

import startlab

from ._cliutil import Failure as _Failure
from ._cliutil import naming as _naming
from ._cliutil import scenario_file as _scenario_file


@click.group("testbed")
def testbed_group() -> None:
    """The real-path testbed's network namespaces (docs/TESTBED.md; needs root)."""


@testbed_group.command("status")
def testbed_status() -> None:
    """List the testbed namespaces that exist (sl<pid>-<tag>-client/router/server)."""
    from .real import testbed

    names = testbed.namespaces()
    click.echo("\n".join(names) if names else "no testbed namespaces")


@testbed_group.command("up")
@click.argument("scenario", metavar="SCENARIO")
@click.option("--tag", default="up", show_default=True, help="Tells testbeds apart in the namespace names (1-8 of a-z, 0-9).")
@click.option("--pcap", type=click.Path(file_okay=False, path_type=Path), help="The router writes every frame it forwards to capture files here (docs/PCAP.md).")
def testbed_up(scenario: str, tag: str, pcap: Path | None) -> None:
    """Build the namespaces and run the router with SCENARIO's bottleneck until `startlab testbed
    down`; prints the namespaces to run programs in (ip netns exec NAME ...)."""
    import subprocess

    path = _scenario_file(scenario)
    with _naming(scenario):
        startlab.validate(path)
    holder = subprocess.Popen(
        [sys.executable, "-m", "startlab.real.testbed", "_hold", str(path.resolve()), tag, *([str(pcap.resolve())] if pcap else [])],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True,
    )  # fmt: skip
    line = holder.stdout.readline().strip() if holder.stdout else ""
    if not line.startswith("{"):
        holder.wait(timeout=30)
        raise _Failure(line or "error: the testbed holder exited without a word", 2)
    names = json.loads(line)
    click.echo(f"testbed up (holder pid {holder.pid}): data flows from {names['server']} ({names['server_ip']}) to {names['client']} ({names['client_ip']})")
    click.echo(f"router: {names['router']}; run programs with `ip netns exec NAME ...`; stop with `startlab testbed down`")


@testbed_group.command("down")
@click.option("--all", "all_", is_flag=True, help="Also those of other processes still running.")
def testbed_down(all_: bool) -> None:
    """Stop the testbeds of `startlab testbed up` and remove leftover testbed namespaces (those
    whose process is gone, or all with --all)."""
    from .real import testbed

    stopped = testbed.release()
    removed = testbed.cleanup(all_processes=all_)
    if stopped:
        click.echo(f"stopped {len(stopped)} testbed(s) held up by `startlab testbed up`")
    click.echo(f"removed {len(removed)} namespaces" + (": " + ", ".join(removed) if removed else ""))


@click.group("kernel")
def kernel_group() -> None:
    """The papers' startup algorithms as BPF congestion controls in the running kernel
    (docs/KERNEL-BPF.md; loading needs root, clang, bpftool and libbpf-dev)."""


def _bpf_params(params: tuple[str, ...]) -> dict[str, int]:
    """``--param NAME=N`` options as a dict; ValueError names a malformed one."""
    values = {}
    for item in params:
        key, eq, value = item.partition("=")
        if not eq or not value.strip().isdigit():
            raise ValueError(f"--param {item!r}: expected NAME=INTEGER such as MAX_SSTHRESH=50")
        values[key.strip()] = int(value)
    return values


def _bpf_call(action: str, name: str, params: tuple[str, ...] = ()) -> bool:
    from .real import kernelbpf

    try:
        values = _bpf_params(params)
        if action == "build":
            click.echo(str(kernelbpf.build(name, values)))
            return True
        if action == "load":
            return kernelbpf.load(name, values, keep=True)
        return kernelbpf.unload(name)
    except ValueError as e:
        raise _Failure(f"error: {e}", 2) from e
    except kernelbpf.KernelBpfError as e:
        raise _Failure(f"error: {e}", 1) from e


@kernel_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
def kernel_list(as_json: bool) -> None:
    """Every BPF startup algorithm: its kernel name, what it ports, and whether it is loaded."""
    from .real import kernelbpf

    rows = kernelbpf.status()
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    from rich.table import Table

    from ._console import stdout_console

    table = Table(title="BPF startup algorithms" + (f" (cannot load here: {kernelbpf.permitted()})" if kernelbpf.permitted() else ""))
    for heading in ("name", "kernel name", "ports", "loaded", "summary"):
        table.add_column(heading)
    for r in rows:
        by = r["loaded_by"]
        loaded = ("yes" + (" (startlab kernel load)" if by == 0 else f" (startlab pid {by})" if by else "")) if r["loaded"] else "no"
        table.add_row(str(r["name"]), str(r["kernel_name"]), str(r["ports"]), loaded, str(r["summary"]))
    stdout_console().print(table)


_PARAM_OPTION = click.option("--param", "params", multiple=True, metavar="NAME=N", help="A compile-time parameter (MAX_SSTHRESH=50). Repeatable.")


@kernel_group.command("build")
@click.argument("name")
@_PARAM_OPTION
def kernel_build(name: str, params: tuple[str, ...]) -> None:
    """Compile NAME (bpf-lss, bpf-lss+cubic, ...) and print its object file."""
    _bpf_call("build", name, params)


@kernel_group.command("load")
@click.argument("name")
@_PARAM_OPTION
def kernel_load(name: str, params: tuple[str, ...]) -> None:
    """Register NAME in the kernel (root): sockets can then select it by its kernel name."""
    from .real import kernelbpf

    done = _bpf_call("load", name, params)
    v = kernelbpf.variant(name)
    click.echo(f"{v.name}: {'loaded' if done else 'already loaded'} as {v.kernel_name}; unload with `startlab kernel unload {v.name}`")


@kernel_group.command("unload")
@click.argument("name")
def kernel_unload(name: str) -> None:
    """Unregister NAME from the kernel (always safe: says so when it was not loaded)."""
    from .real import kernelbpf

    done = _bpf_call("unload", name)
    click.echo(f"{kernelbpf.variant(name).name}: {'unloaded' if done else 'was not loaded'}")


@kernel_group.command("conform")
@click.argument("name")
@click.option("--acks", default=1500, show_default=True, help="ACKs to script.")
@click.option("--rate", "rate", default="20Mbps", show_default=True, help="The scripted bottleneck's rate.")
@click.option("--rtt", default="40ms", show_default=True, help="The scripted path's base RTT.")
@click.option("--initial-ssthresh", type=int, help="A finite initial ssthresh, segments (compiled into the BPF object).")
@click.option("--json", "as_json", is_flag=True, help="Print both traces as JSON.")
@click.option("--param", "params", multiple=True, metavar="NAME=N", help="A compile-time parameter (PRESET=2, SAVED_RATE=20000000), given to the Rust version as its startup parameter. Repeatable.")
def kernel_conform(name: str, acks: int, rate: str, rtt: str, initial_ssthresh: int | None, as_json: bool, params: tuple[str, ...]) -> None:
    """Feed one scripted ACK sequence to NAME in the kernel and to its Rust version; compare their
    windows ACK by ACK (root; docs/KERNEL-BPF.md)."""
    from .real import bpfparams, conformance, kernelbpf
    from .sweep.file import RATE_UNITS, TIME_UNITS, SweepError, parse_amount

    try:
        v = kernelbpf.variant(name)
        values = _bpf_params(params)
        rust = bpfparams.rust_params(v.name, values)
        if acks < 1 or (initial_ssthresh is not None and initial_ssthresh < 2):
            raise ValueError("--acks must be at least 1 and --initial-ssthresh at least 2 segments")
        script = conformance.Script(
            rate_bps=parse_amount(rate, RATE_UNITS, "--rate", "a rate such as \"20Mbps\""),
            rtt_s=parse_amount(rtt, TIME_UNITS, "--rtt", "a duration such as \"40ms\""),
            acks=acks, initial_ssthresh=initial_ssthresh,
        )  # fmt: skip
    except (ValueError, SweepError) as e:
        raise _Failure(f"error: {e}", 2) from e
    try:
        trace = conformance.conform(v.name, script, bpf_params=values)
    except kernelbpf.KernelBpfError as e:
        raise _Failure(f"error: {e}", 1) from e
    window = v.algorithm.sim in conformance.WINDOW_ALGORITHMS
    exact = window and v.avoidance == "reno"
    problems = conformance.verdict(trace)
    if as_json:
        click.echo(json.dumps({**trace.__dict__, "exact": exact, "mismatches": problems}))
    else:
        rule = "equal after every ACK" if exact else "within one segment at the end of every round" + (", equal in startup" if window else "")
        given = "".join(f", {k} = {json.dumps(x)}" for k, x in rust.items())
        click.echo(f"{v.name} (kernel {v.kernel_name}) against startlab's {v.algorithm.sim} ({v.avoidance}{given}): {len(trace.acks)} ACKs, {len(trace.rounds)} rounds, mss {trace.mss}")
        for i in trace.rounds:
            click.echo(f"  round ending at ACK {i:5d}: kernel cwnd {trace.kernel_cwnd[i]:6d}   Rust {trace.rust_cwnd[i]:10.3f}")
        click.echo(f"windows {rule}: " + ("yes" if not problems else f"NO, {len(problems)} departures; first: {problems[0]}"))
    if problems:
        raise SystemExit(1)


def _real(
    scenario: str,
    stacks: list[str],
    startup: str | None,
    as_json: bool,
    out: Path | None,
    tag: str,
    recovery: str | None = None,
    avoidance: str | None = None,
    bpf_params: dict[str, int] | None = None,
) -> None:
    """compare-real and testbed run: run, print the table (or the JSON), write --out."""
    import tempfile

    from .real import kernelbpf, side_by_side
    from .real.system import RealSystemError

    path = _scenario_file(scenario)
    ported = sorted({kernelbpf.variant(s).algorithm.sim for s in stacks if s.startswith("kernel:bpf-")})
    if "sim" in stacks and ported and startup not in ported and not bpf_params:
        runs = f"--startup {startup}" if startup else "the scenario's startup"
        click.echo(f"note: the sim stack runs {runs}; --startup {ported[0]} runs the Rust version of the BPF algorithm beside it", err=True)
    with tempfile.TemporaryDirectory(prefix="startlab-real-") as scratch:
        try:
            with _naming(scenario):
                results = side_by_side.compare_real(
                    path, stacks, out or Path(scratch), startup=startup, tag=tag, recovery=recovery, avoidance=avoidance, bpf_params=bpf_params
                )
        except RealSystemError as e:  # the testbed, a kernel setting, a missing startlab-quinn binary
            raise _Failure(f"error: {e}", 2) from e
        except ValueError as e:
            raise _Failure(f"error: {e}", 2) from e
    if out is not None:
        changed = ", ".join(x for x in (startup, recovery and f"recovery {recovery}", avoidance and f"avoidance {avoidance}") if x)
        side_by_side.write(results, out, f"{path.name}" + (f" ({changed})" if changed else ""))
    if as_json:
        click.echo(json.dumps({"stacks": [r.row() for r in results]}))
        return
    from rich.table import Table

    from ._console import stdout_console

    rows = side_by_side.table(results)
    grid = Table(title=f"{path.name}: startup on the real path" + (f" ({startup})" if startup else ""))
    for k, heading in enumerate(rows[0]):
        grid.add_column(heading, justify="left" if k in (0, 2) else "right")
    for row in rows[1:]:
        grid.add_row(*row)
    stdout_console().print(grid)
    for r in results:
        if r.router is not None and r.router["late"]:
            click.echo(
                f"warning: {r.stack}: the router released {r.router['late_releases']} packets more than 1 ms late "
                f"(worst {r.router['lateness_worst_s'] * 1e3:.2f} ms); the path was not emulated faithfully then",
                err=True,
            )
    if out is not None:
        click.echo(f"wrote {out}/compare.json and {out}/cwnd.png")


@click.group("net")
def net_group() -> None:
    """startlab-udp: the simulator's TCP endpoints over UDP with the real clock (docs/REAL.md)."""


def _read_key(key_file: Path | None) -> str:
    if key_file is None:
        raise _Failure("error: --key-file is required (64 hex digits; `startlab net key > FILE` makes one)", 2)
    text = key_file.read_text().strip()
    try:
        bytes.fromhex(text)
    except ValueError:
        text = ""
    if len(text) != 64:
        raise _Failure(f"error: --key-file {key_file}: expected 64 hex digits (a 32-byte key); `startlab net key > FILE` makes one", 2)
    return text


@net_group.command("key")
def net_key() -> None:
    """Print a fresh random key (64 hex digits) for --key-file."""
    from .real import udp

    click.echo(udp.key())


@net_group.command("recv")
@click.option("--bind", required=True, metavar="HOST:PORT", help="UDP address to receive on (port 0: any; printed).")
@click.option("--key-file", type=click.Path(dir_okay=False, exists=True, path_type=Path), help="The shared key (64 hex digits).")
@click.option("--idle-timeout", default=5.0, show_default=True, help="Give up after this many seconds without a datagram.")
@click.option("--accept-timeout", type=float, help="Give up if no sender comes within this many seconds (default: wait).")
def net_recv(bind: str, key_file: Path | None, idle_timeout: float, accept_timeout: float | None) -> None:
    """Receive one startlab-udp connection (ACKing as the sender's scenario says); print the
    receiver's report as JSON."""
    from .real import udp

    secret = _read_key(key_file)
    try:
        report = udp.serve(bind, secret, idle_timeout=idle_timeout, accept_timeout=accept_timeout)
    except (ValueError, OSError) as e:
        raise _Failure(f"error: {e}", 2) from e
    click.echo(json.dumps(report))


@net_group.command("send")
@click.argument("scenario", metavar="SCENARIO")
@click.option("--to", "server", required=True, metavar="HOST:PORT", help="The receiver's address.")
@click.option("--key-file", type=click.Path(dir_okay=False, exists=True, path_type=Path), help="The shared key (64 hex digits).")
@click.option("--flow", default=0, show_default=True, help="Which [[flows]] entry to send.")
@click.option("--duration", type=float, help="Stop after this many seconds (default: the scenario's duration).")
@click.option("--json", "as_json", is_flag=True, help="Print the whole sender report as JSON.")
def net_send(scenario: str, server: str, key_file: Path | None, flow: int, duration: float | None, as_json: bool) -> None:
    """Send SCENARIO's flow (its TCP, startup and receiver settings) over UDP to a `startlab net
    recv`; print the startup exit, retransmissions, goodput and pacing gap error."""
    from .real import udp

    secret = _read_key(key_file)
    path = _scenario_file(scenario)
    try:
        with _naming(scenario):
            report = udp.send(path, server, secret, flow=flow, duration=duration)
    except (ValueError, OSError) as e:
        raise _Failure(f"error: {e}", 2) from e
    if as_json:
        click.echo(json.dumps(report))
        return
    exit_ = report.get("startup_exit") or {}
    pacing = report.get("pacing") or {}
    goodput = report.get("goodput_bps")
    click.echo(
        f"{report['flow']} ({report['startup']}): {report['bytes_acked']} bytes acked, "
        + (f"goodput {goodput / 1e6:.2f} Mbit/s, " if goodput else "")
        + f"{report['retransmissions']} retransmissions, {report['rto_count']} RTOs"
    )
    if exit_:
        click.echo(f"startup exit: {exit_['time_s']:.3f} s after the first data, {exit_['reason']}, cwnd {exit_['cwnd_pkts']:.0f} segments")
    if pacing.get("count"):
        click.echo(f"pacing gap error: mean {pacing['mean_us']:.1f} us, p99 {pacing['p99_us']:.1f} us, max {pacing['max_us']:.1f} us over {pacing['count']} releases")
    dropped = {k: v for k, v in (report.get("drops") or {}).items() if v}
    if dropped:
        click.echo("datagrams dropped: " + ", ".join(f"{k} {v}" for k, v in dropped.items()))


@click.command("compare-real")
@click.argument("scenario", metavar="SCENARIO")
@click.option("--stacks", default="sim,udp,kernel:cubic", show_default=True, help="Comma-separated: sim, udp, kernel:cubic, kernel:cubic-nohystart, kernel:reno, kernel:bbr, kernel:bpf-NAME[+cubic] (startlab kernel list); for a QUIC flow quinn:startlab (startlab's algorithm inside quinn), quinn:cubic, quinn:newreno, quinn:bbr.")
@click.option("--startup", help="Run the scenario's flow with this startup algorithm (its defaults) instead.")
@click.option("--recovery", help='The sim and udp stacks\' tcp.recovery instead of the scenario\'s (e.g. "linux", the kernel\'s RACK-TLP + PRR).')
@click.option("--avoidance", help="The sim and udp stacks' tcp.congestion_avoidance instead of the scenario's (e.g. reno beside kernel:reno).")
@click.option("--json", "as_json", is_flag=True, help='Print {"stacks": [{"stack", "exit_time_s", ...}]}.')
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), help="Write compare.json, cwnd.json and the overlaid cwnd.png here.")
@click.option("--bpf-param", "bpf_params", multiple=True, metavar="NAME=N", help="Compile the kernel:bpf stack with this parameter (PRESET=2, SAVED_RATE=20000000) and give the sim and udp stacks the startup parameter it stands for. Repeatable.")
def compare_real(
    scenario: str, stacks: str, startup: str | None, recovery: str | None, avoidance: str | None, as_json: bool, out: Path | None, bpf_params: tuple[str, ...]
) -> None:
    """Run SCENARIO's path with the simulator, startlab-udp and kernel TCP (testbed; root) and
    compare their startups: exit time and reason, exit cwnd, first drop, drops in 5 s, goodput."""
    from .real import side_by_side

    try:
        names = side_by_side.parse_stacks(stacks)
        values = _bpf_params(bpf_params)
    except ValueError as e:
        raise _Failure(f"error: {e}", 2) from e
    _real(scenario, names, startup, as_json, out, "cmp", recovery, avoidance, values)


@testbed_group.command("run")
@click.argument("scenario", metavar="SCENARIO")
@click.option("--stack", default="udp", show_default=True, help="udp, kernel:cubic, kernel:cubic-nohystart, kernel:reno, kernel:bbr, kernel:bpf-NAME[+cubic] (startlab kernel list) or quinn:startlab|cubic|newreno|bbr.")
@click.option("--startup", help="Run the scenario's flow with this startup algorithm (its defaults) instead.")
@click.option("--json", "as_json", is_flag=True, help="Print the row as JSON.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), help="Write compare.json, cwnd.json and cwnd.png here.")
def testbed_run(scenario: str, stack: str, startup: str | None, as_json: bool, out: Path | None) -> None:
    """Build a testbed, run SCENARIO's flow on its path with one stack, take it down."""
    from .real import side_by_side

    try:
        names = side_by_side.parse_stacks(stack)
    except ValueError as e:
        raise _Failure(f"error: {e}", 2) from e
    if names == ["sim"] or len(names) != 1:
        raise _Failure("error: --stack: one testbed stack (udp, kernel:NAME or quinn:NAME); `startlab run` runs the simulator", 2)
    _real(scenario, names, startup, as_json, out, "run")


#: The commands this module adds to the main group.
COMMANDS = (testbed_group, kernel_group, net_group, compare_real)
