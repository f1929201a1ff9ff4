"""The ``startlab`` command line: run, validate and benchmark scenarios.

Exit codes: 0 success; 2 bad input (a refused scenario, a missing file, a usage error), reported
as one ``error: ...`` line on stderr; 1 an internal simulator failure (``internal error: ...``); 3 a
run stopped by one of its ``--max-*`` limits (``error: the run stopped after ...``).

Each command imports what it uses when it runs: importing this module (``startlab --help``) loads
neither pandas, matplotlib, SciPy, DuckDB, Dask nor rich, and ``startlab run --json`` writes the
JSON from the native results without pandas (tests/test_imports.py holds these import sets).
"""

from __future__ import annotations

import importlib
import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import click

import startlab

from ._cliutil import Failure as _Failure
from ._cliutil import naming as _naming
from ._cliutil import scenario_file as _scenario_file

if TYPE_CHECKING:
    import pandas as pd
    from rich.table import Table

#: Per-flow columns shown by ``startlab run``: (column, heading, formatter).
_FLOW_COLUMNS: Sequence[tuple[str, str, Callable[[Any], str]]] = (
    ("flow", "flow", str),
    ("startup", "startup", str),
    ("su_time", "su-time\ns", lambda v: f"{v:.3f}"),
    ("su_throughput", "su-tput\nMbit/s", lambda v: f"{v / 1e6:.2f}"),
    ("su_loss", "su-loss\n%", lambda v: f"{100 * v:.2f}"),
    ("exit_reason", "exit", str),
    ("exit_cwnd_pkts", "exit cwnd\npkts", lambda v: f"{v:.1f}"),
    ("overshoot", "overshoot\n×BDP", lambda v: f"{v:.2f}"),
    ("throughput", "tput\nMbit/s", lambda v: f"{v / 1e6:.2f}"),
    ("loss_rate", "loss\n%", lambda v: f"{100 * v:.2f}"),
    ("timeouts", "RTOs", lambda v: f"{v:.0f}"),
    ("completion_time", "completion\ns", lambda v: f"{v:.3f}"),
)

#: Per-link columns shown by ``startlab run`` for links that carried traffic or dropped packets.
_LINK_COLUMNS: Sequence[tuple[str, str, Callable[[Any], str]]] = (
    ("link", "link", str),
    ("rate", "rate\nMbit/s", lambda v: f"{v / 1e6:g}"),
    ("utilization", "util\n%", lambda v: f"{100 * v:.1f}"),
    ("drops", "drops\npkts", lambda v: f"{v:.0f}"),
    ("mean_queue", "mean queue\npkts", lambda v: f"{v:.1f}"),
    ("max_queue", "max queue\npkts", lambda v: f"{v:.0f}"),
)


#: Per-group columns of the ``[[users]]`` transfers shown by ``startlab run``.
_TRANSFER_SUMMARY_COLUMNS: Sequence[tuple[str, str, Callable[[Any], str]]] = (
    ("user", "users", str),
    ("transfers", "transfers", lambda v: f"{v:.0f}"),
    ("completed", "completed", lambda v: f"{v:.0f}"),
    ("completion_median", "median completion\ns", lambda v: f"{v:.3f}"),
    ("median", "median tput\nMbit/s", lambda v: f"{v / 1e6:.2f}"),
    ("p5", "p5\nMbit/s", lambda v: f"{v / 1e6:.2f}"),
    ("p95", "p95\nMbit/s", lambda v: f"{v / 1e6:.2f}"),
    ("total_loss", "loss\n%", lambda v: f"{100 * v:.2f}"),
)


#: Per-train columns of packet-train probes shown by ``startlab run``.
_PROBE_COLUMNS: Sequence[tuple[str, str, Callable[[Any], str]]] = (
    ("source", "probe", str),
    ("train", "train", lambda v: f"{v:.0f}"),
    ("source_gap", "source gap\nms", lambda v: f"{v * 1e3:.3f}"),
    ("dest_gap", "dest gap\nms", lambda v: f"{v * 1e3:.3f}"),
    ("gap_difference", "gap diff\nms", lambda v: f"{v * 1e3:.3f}"),
    ("train_rate", "train rate\nMbit/s", lambda v: f"{v / 1e6:.2f}"),
    ("received", "received", lambda v: f"{v:.0f}"),
)


#: Per-group columns shown by ``startlab run`` when a run has more flows than fit a table.
_SUMMARY_COLUMNS: Sequence[tuple[str, str, Callable[[Any], str]]] = (
    ("startup", "startup", str),
    ("flows", "flows", lambda v: f"{v:.0f}"),
    ("completed", "completed", lambda v: f"{v:.0f}"),
    ("median", "median tput\nMbit/s", lambda v: f"{v / 1e6:.2f}"),
    ("p5", "p5\nMbit/s", lambda v: f"{v / 1e6:.2f}"),
    ("p95", "p95\nMbit/s", lambda v: f"{v / 1e6:.2f}"),
    ("completion_median", "median completion\ns", lambda v: f"{v:.3f}"),
    ("with_loss", "with loss\n%", lambda v: f"{100 * v:.1f}"),
    ("loss_in_startup", "loss in startup\n%", lambda v: f"{100 * v:.2f}"),
    ("total_loss", "total loss\n%", lambda v: f"{100 * v:.2f}"),
    ("jain", "Jain", lambda v: f"{v:.3f}"),
)

#: Above this many flows ``startlab run`` prints the per-startup summary instead of every flow.
_MAX_FLOW_ROWS = 30


class _LazyCommand(click.Command):
    """Stands for a command defined in a module too slow to import for every command: ``--help``
    lists it with this help, and :class:`_Group` imports the real command to run it (or to show its
    own help). tests/test_imports.py checks that the help given here is the command's."""

    def __init__(self, name: str, target: str, help: str) -> None:
        super().__init__(name, help=help)
        self.target = target  # "module:attribute"

    def load(self) -> click.Command:
        module, attribute = self.target.split(":")
        command: click.Command = getattr(importlib.import_module(module), attribute)
        return command


class _Group(click.Group):
    """Turns the package's exceptions into one-line messages and exit codes, never a traceback;
    imports the commands that stand as :class:`_LazyCommand` when one is asked for."""

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if isinstance(command, _LazyCommand):
            command = self.commands[cmd_name] = command.load()
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """click's listing of the commands, without importing those not yet loaded."""
        commands = [(name, self.commands[name]) for name in self.list_commands(ctx) if not self.commands[name].hidden]
        if commands:
            limit = formatter.width - 6 - max(len(name) for name, _ in commands)
            with formatter.section("Commands"):
                formatter.write_dl([(name, command.get_short_help_str(limit)) for name, command in commands])

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except startlab.ScenarioError as e:
            raise _Failure(f"error: {e}", 2) from e
        except OSError as e:
            raise _Failure(f"error: {e}", 2) from e
        except startlab.PluginError as e:
            # The plug-in's own traceback: the user's code, not startlab's, failed.
            import traceback

            cause = "".join(traceback.format_exception(e.__cause__)) if e.__cause__ is not None else ""
            raise _Failure(f"error: {e}\nThe plug-in's traceback:\n{cause}".rstrip(), 4) from e
        except startlab.SimulationError as e:
            raise _Failure(f"internal error: {e}", 1) from e
        except startlab.ResourceLimitError as e:
            raise _Failure(f"error: {e}", 3) from e


def _plugin_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--plugin MODULE`` (repeatable): import a module that registers Python plug-ins."""
    return click.option(
        "--plugin", "plugins", multiple=True, metavar="MODULE",
        help="Import this Python module first (it registers startup plug-ins; looked for on sys.path, then in the current directory). Repeatable.",
    )(f)  # fmt: skip


def _import_plugins(modules: Sequence[str]) -> None:
    from .plugin import import_modules

    try:
        import_modules(list(modules), os.getcwd())
    except startlab.ScenarioError as e:
        raise _Failure(f"error: --plugin: {str(e).split(': ', 1)[1]}", 2) from e


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(startlab.__version__, prog_name="startlab")
def cli() -> None:
    """A laboratory for TCP startup congestion control."""


@cli.command()
@click.argument("scenario", metavar="SCENARIO")
@click.option(
    "--json", "as_json", is_flag=True, help="Print the result tables as JSON only (flows, links; responses, transfers, probes when there are any)."
)
@click.option(
    "--out", type=click.Path(file_okay=False, path_type=Path), help="Write tables and plots here."
)
@click.option(
    "--pcap", type=click.Path(file_okay=False, path_type=Path),
    help="Write pcapng capture files here ([trace.pcap]'s links, else the bottleneck or every graph link; docs/PCAP.md).",
)
@click.option(
    "--qlog", type=click.Path(file_okay=False, path_type=Path),
    help="Write a qlog file per flow here ([trace.qlog]'s flows, else every flow; docs/QLOG.md).",
)
@click.option("--no-progress", is_flag=True, help="Do not draw a progress bar.")
@click.option(
    "--compare",
    "algorithms",
    metavar="ALG,ALG,...",
    help="Run the scenario once per startup algorithm (every flow switched to it) and compare.",
)
@click.option("--max-events", type=float, help="Stop the run after this many engine events.")
@click.option("--max-sim-time", help="Refuse a scenario longer than this simulated time (600s).")
@click.option("--max-memory", help="Stop the run once it adds more than this to the process's resident memory (2GiB).")
@click.option("--max-wall", help="Stop the run after this much wall time (30s, 10min).")
@_plugin_option
def run(
    scenario: str, as_json: bool, out: Path | None, pcap: Path | None, qlog: Path | None, no_progress: bool, algorithms: str | None,
    max_events: float | None, max_sim_time: str | None, max_memory: str | None, max_wall: str | None,
    plugins: tuple[str, ...],
) -> None:  # fmt: skip
    """Simulate SCENARIO (a TOML file) and show the results. A run stopped by one of the --max-*
    limits exits with code 3 and says which limit and how far it got; a Python plug-in that
    raises stops the run with its traceback and exit code 4."""
    from ._console import stdout_console
    from .result import json_records, build, native_json

    _import_plugins(plugins)
    progress = False if no_progress else None
    given = {k: v for k, v in (("max_events", max_events), ("max_sim_time", max_sim_time), ("max_memory", max_memory), ("max_wall", max_wall)) if v is not None}
    limits: dict[str, Any] = {}
    if given:
        from .sweep import file as sweepfile

        if algorithms is not None:
            raise _Failure("error: the --max-* limits apply to a single run, not to --compare", 2)
        try:
            parsed = sweepfile.parse_limits(given, "limits")
        except sweepfile.SweepError as e:
            raise _Failure(f"error: {e}", 2) from e
        limits = {k: getattr(parsed, k) for k in given}
    if algorithms is not None and (pcap is not None or qlog is not None):
        raise _Failure("error: --pcap and --qlog record a single run, not --compare", 2)
    if algorithms is not None:
        names = [name.strip() for name in algorithms.split(",") if name.strip()]
        with _naming(scenario):
            comparison = startlab.compare(_scenario_file(scenario), names, progress=progress)
        if as_json:
            click.echo(json.dumps({"flows": json_records(comparison.flows)}))
        else:
            columns = (("variant", "algorithm", str), *_FLOW_COLUMNS[:1], *_FLOW_COLUMNS[2:])
            stdout_console().print(_table("Comparison", comparison.flows, columns))
        if out is not None:
            written = comparison.write(out)
            click.echo(f"wrote {len(written)} files to {out}", err=True)
        return
    transfers = None
    if out is not None:
        # [[users]] transfer rows stream to the output directory as they end.
        out.mkdir(parents=True, exist_ok=True)
        transfers = out / "transfers.parquet"
    fallback = None if out is None else out / "pcap"
    with _naming(scenario):
        try:
            sim, stream = startlab._simulate(
                _scenario_file(scenario), progress=progress, transfers=transfers, pcap=pcap, pcap_fallback=fallback,
                qlog=qlog, qlog_fallback=None if out is None else out / "qlog", **limits,
            )  # fmt: skip
        except OSError as e:
            raise _Failure(f"error: {e}", 2) from e
    raw = sim.results()
    for warning in raw.get("warnings", ()):
        click.echo(f"warning: {warning}", err=True)
    captured = sim.pcap_files()
    if captured:
        where = Path(captured[0][0]).parent
        click.echo(f"wrote {len(captured)} capture files ({sum(n for _, n in captured)} packets) to {where}", err=True)
    logged = sim.qlog_files()
    if logged:
        click.echo(f"wrote {len(logged)} qlog files ({sum(n for _, n in logged)} events) to {Path(logged[0][0]).parent}", err=True)
    if stream is not None:
        stream.finish(raw)
        raw = {k: v for k, v in raw.items() if k != "transfers"}
    if as_json:
        # The JSON of Result.to_json, from the native columns: no pandas to import.
        click.echo(native_json(raw))
        if out is None:
            return
    try:
        result = build(raw, sim.stats())
    except startlab.ResultError as e:
        # The run is done: its tables go where the user looks for them before the error is told.
        if e.tables is not None and out is not None:
            (out / "results.json").write_text(e.tables)
            where = f"written to {out / 'results.json'}"
        elif e.tables is not None:
            click.echo(e.tables)
            where = "printed above as JSON"
        else:
            where = "lost"
        raise _Failure(f"internal error: {e}; the flows and links are {where}", 5) from e
    if stream is not None:
        result.transfers, result.transfers_file = None, stream.path
    if not as_json:
        console = stdout_console()
        if len(result.flows) > _MAX_FLOW_ROWS:
            title = f"{int(result.flows['measured'].sum())} measured flows of {len(result.flows)}"
            if result.warmup_end is not None:
                title += f" (after a warm-up of {result.warmup_end:g} s)"
            console.print(_table(title, result.summary(), _SUMMARY_COLUMNS))
        else:
            console.print(_table("Flows", result.flows, _FLOW_COLUMNS))
        active = result.links[(result.links["drops"] > 0) | (result.links["utilization"] > 0)]
        title = "Links"
        if len(active) > _MAX_FLOW_ROWS:
            title = f"The 10 busiest of {len(active)} links that carried traffic"
            active = active.sort_values(["utilization", "drops"], ascending=False).head(10)
        if len(active):
            console.print(_table(title, active, _LINK_COLUMNS))
        if result.probes is not None and len(result.probes):
            console.print(_table("Packet-train probes", result.probes, _PROBE_COLUMNS))
        streamed = result.transfers_file if result.transfers_file is not None and result.transfers_file.exists() else None
        if streamed is not None or (result.transfers is not None and len(result.transfers)):
            from . import _transfers

            table = _transfers.summary(streamed if streamed is not None else result.transfers)
            console.print(_table("Measured transfers of the users", table, _TRANSFER_SUMMARY_COLUMNS))
    if out is not None:
        written = result.write(out)
        click.echo(f"wrote {len(written)} files to {out}", err=True)


@cli.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("name", required=False)
@click.option("--points", default=20, show_default=True, help="Values of a range A..B.")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False), help="Save the swept curve (PNG, SVG, ...).")
@click.option("--list", "list_models", is_flag=True, help="List the models and their parameters.")
@click.pass_context
def model(ctx: click.Context, name: str | None, points: int, plot_path: str | None, list_models: bool) -> None:
    """Evaluate a closed-form model: startlab model t_ss --s 100KB --r 10Mbps --tau 200ms.

    Parameters are the function's keyword names (the papers' symbols); values take units (100KB,
    10Mbps, 200ms) and one may be a range A..B, printed as a table (and plotted with --plot).
    """
    import inspect

    from rich.table import Table

    from . import modelcli
    from ._console import stdout_console

    if list_models or name is None:
        table = Table(title="Models (startlab.models)")
        table.add_column("model")
        table.add_column("parameters")
        for full, func in modelcli.functions().items():
            table.add_row(full, ", ".join(inspect.signature(func).parameters))
        stdout_console().print(table)
        return
    try:
        result = modelcli.evaluate(name, ctx.args, points)
        if plot_path:
            modelcli.plot(result, plot_path)
    except ValueError as e:  # ModelError and the models' own range checks
        raise _Failure(f"error: {e}", 2) from e
    table = Table(title=result.name, min_width=len(result.name) + 4)
    if result.swept:
        table.add_column(result.swept, justify="right")
    table.add_column("value", justify="right")
    for x, v in zip(result.xs, result.values):
        cell = ", ".join(f"{e:.6g}" if isinstance(e, float) else str(e) for e in v) if isinstance(v, tuple) else (f"{v:.6g}" if isinstance(v, float) else str(v))
        table.add_row(*([f"{x:.6g}"] if result.swept else []), cell)
    stdout_console().print(table)
    if plot_path:
        click.echo(f"wrote {plot_path}", err=True)


@cli.group()
def check() -> None:
    """Hold the simulator against the analytical models (docs/MODELS.md)."""


@check.command("models")
@click.option("--quick", is_flag=True, help="A few grid points per model (what CI runs).")
@click.option("--only", help="One model family: scharf, quick_start, growth, smooth_start, paced_start or barakat.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), help="Write check.csv and check.png here.")
def check_models(quick: bool, only: str | None, out: Path | None) -> None:
    """Run each model's grid of scenarios; print model value, simulated value and relative error.

    Exit code 1 if a comparison where the model's assumptions hold is outside its tolerance.
    """
    from rich.table import Table

    from . import check as checks
    from ._console import stdout_console

    try:
        frame = checks.check_models(quick=quick, only=only)
    except ValueError as e:
        raise _Failure(f"error: {e}", 2) from e
    table = Table(title="Models against the simulator")
    for heading in ("model", "point", "assumptions", "model", "simulated", "error", "tolerance", "verdict"):
        table.add_column(heading, justify="left" if heading in ("model", "point") else "right")
    for row in frame.to_dict(orient="records"):
        verdict = "–" if row["ok"] is None else ("ok" if row["ok"] else "FAIL")
        if row["bounds"] is not None and row["bounds"] == row["bounds"]:
            tolerance = f"in [{row['bounds'][0]:g}, {row['bounds'][1]:g}]"
        elif row["tolerance"] is None or row["tolerance"] != row["tolerance"]:
            tolerance = "–"
        else:
            tolerance = f"{100 * row['tolerance']:.0f} %"
        table.add_row(
            row["model"], row["point"], "hold" if row["holds"] else "do not hold",
            f"{row['model_value']:.6g}", f"{row['simulated']:.6g}", f"{100 * row['rel_error']:+.2f} %", tolerance, verdict,
        )
    stdout_console().print(table)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        frame.to_csv(out / "check.csv", index=False)
        checks.plot(frame).savefig(out / "check.png", dpi=150)
        click.echo(f"wrote {out / 'check.csv'} and {out / 'check.png'}", err=True)
    if (frame["ok"] == False).any():  # noqa: E712 - None (not judged) must not count
        raise _Failure("error: a model and the simulator disagree beyond the tolerance where the model holds", 1)


@cli.group("replay")
def replay_group() -> None:
    """Connection-vector files for [[replay]] (docs/REPLAY.md): generate a synthetic set, check one."""


@replay_group.command("generate")
@click.option("--connections", default=450, show_default=True, help="Client-server connections.")
@click.option("--load", default=0.3, show_default=True, help="Offered downlink load, a fraction of --rate.")
@click.option("--rate", default="10Mbps", show_default=True, help="Bottleneck rate (10Mbps, 10Mbit/s, or bit/s).")
@click.option("--duration", default="300s", show_default=True, help="Length of the run (300s, 5min, or seconds).")
@click.option("--seed", default=1, show_default=True, help="Seed of the generator.")
@click.option("--out", required=True, metavar="FILE.csv|FILE.parquet", help="Write the vectors here.")
@click.option("--scenario", "scenario_path", metavar="FILE.toml", help="Also write a scenario that replays them.")
def replay_generate(connections: int, load: float, rate: str, duration: str, seed: int, out: str, scenario_path: str | None) -> None:
    """Write a SYNTHETIC vector set shaped like Scharf et al.'s Fig. 16 workload (450 connections,
    nine RTTs from 4 to 200 ms, load 0.3): a model, not the paper's traces, which are not available."""
    import os

    from . import replay as vectors

    if Path(out).suffix.lower() not in (".csv", ".parquet"):
        raise _Failure(f"error: --out {out}: expected a .csv or .parquet file", 2)
    if scenario_path is not None and Path(scenario_path).suffix.lower() != ".toml":
        raise _Failure(f"error: --scenario {scenario_path}: expected a .toml file", 2)
    try:
        frame = vectors.generate(connections=connections, rate=rate, load=load, duration=duration, seed=seed)
        text = None
        if scenario_path is not None:
            relative = os.path.relpath(Path(out).resolve(), Path(scenario_path).resolve().parent)
            text = vectors.scenario_toml(vectors=Path(relative).as_posix(), rate=rate, duration=duration, seed=seed)
    except ValueError as e:
        raise _Failure(f"error: {e}", 2) from e
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    vectors.write(frame, out)
    click.echo(f"wrote {out}", err=True)
    if text is not None and scenario_path is not None:
        Path(scenario_path).parent.mkdir(parents=True, exist_ok=True)
        Path(scenario_path).write_text(text, encoding="utf-8")
        click.echo(f"wrote {scenario_path}", err=True)
    click.echo(vectors.describe(frame, rate=rate, duration=duration))


@replay_group.command("check")
@click.argument("file", metavar="FILE")
@click.option("--rate", help="With --duration: also print the offered load at this bottleneck rate.")
@click.option("--duration", help="With --rate: the length of the run (300s, 5min, or seconds).")
def replay_check(file: str, rate: str | None, duration: str | None) -> None:
    """Read and check a vector file (.csv or .parquet); print its summary, or the first error."""
    from . import replay as vectors

    if (rate is None) != (duration is None):
        raise _Failure("error: give --rate and --duration together", 2)
    frame = vectors.read(file)  # a ScenarioError is one error line, exit code 2
    try:
        text = vectors.describe(frame, rate=rate, duration=duration)
    except ValueError as e:
        raise _Failure(f"error: {e}", 2) from e
    click.echo(f"ok: {file}")
    click.echo(text)


#: Per-flow columns ``startlab analyze`` prints beside the run table's: what the capture shows.
_CAPTURE_COLUMNS: Sequence[tuple[str, str, Callable[[Any], str]]] = (
    ("flow", "flow", str),
    ("vantage", "vantage", str),
    ("base_rtt", "min RTT\nms", lambda v: f"{v * 1e3:.2f}"),
    ("max_rtt", "max RTT\nms", lambda v: f"{v * 1e3:.2f}"),
    ("available_rate", "delivery rate\nMbit/s", lambda v: f"{v / 1e6:.2f}"),
    ("startup_exit_time", "exit at\ns", lambda v: f"{v:.3f}"),
    ("exit_round", "exit\nround", lambda v: f"{v:.0f}"),
    ("retransmissions_fast", "retx\nfast", lambda v: f"{v:.0f}"),
    ("retransmissions_timeout", "retx\ntimeout", lambda v: f"{v:.0f}"),
    ("retransmissions_probe", "retx\nprobe", lambda v: f"{v:.0f}"),
    ("retransmissions_spurious", "spurious\n(DSACK)", lambda v: f"{v:.0f}"),
    ("mss", "MSS\nB", lambda v: f"{v:.0f}"),
    ("wscale", "wscale\nsnd/rcv", str),
    ("sack", "SACK", lambda v: "yes" if v else "no"),
    ("timestamps", "TS", lambda v: "yes" if v else "no"),
)

#: The UDP directions ``startlab analyze`` lists: all a capture shows of an encrypted transport.
_UDP_COLUMNS: Sequence[tuple[str, str, Callable[[Any], str]]] = (
    ("src", "from", str),
    ("dst", "to", str),
    ("datagrams", "datagrams", lambda v: f"{v:.0f}"),
    ("bytes", "bytes", lambda v: f"{v:.0f}"),
    ("t_first", "first\ns", lambda v: f"{v:.3f}"),
    ("t_last", "last\ns", lambda v: f"{v:.3f}"),
    ("quic_long_headers", "QUIC long\nheaders", lambda v: f"{v:.0f}"),
)


@cli.command()
@click.argument("capture", metavar="CAPTURE.pcap[ng]")
@click.option("--vantage", type=click.Choice(["sender", "receiver", "middle"]), help="Where the capture was taken (default: inferred per flow from the round trips to each side).")
@click.option("--json", "as_json", is_flag=True, help="Print the analysis as JSON only (flows with their series, UDP flows, the capture, warnings).")
@click.option("--plot", "plot_dir", type=click.Path(file_okay=False, path_type=Path), help="Draw each flow's startup figure (flight, exit, BDP) here as PNG and SVG.")
@click.option("--fit", is_flag=True, help="Propose a scenario that reproduces the first flow (or --flow), run it and print both tables.")
@click.option("--flow", "flow_name", help="The flow --fit uses (its name as printed, SRC -> DST).")
@click.option("--fit-out", type=click.Path(dir_okay=False, path_type=Path), help="Write the fitted scenario here (default: CAPTURE's name with -fit.toml).")
def analyze(capture: str, vantage: str | None, as_json: bool, plot_dir: Path | None, fit: bool, flow_name: str | None, fit_out: Path | None) -> None:
    """Read a packet capture (pcap or pcapng), reassemble its TCP connections and print each data
    flow's startup as `startlab run` does: su-time, exit (first loss or flight plateau) with its
    flight, overshoot over delivery rate × min RTT; RTTs and retransmission kinds beside it
    (docs/ANALYZE.md). A damaged file gives what could be read and a warning naming the packet."""
    from . import analyze as an
    from ._console import stdout_console

    try:
        result = an.analyze(capture, vantage)
    except an.CaptureError as e:
        raise _Failure(f"error: {e}", 2) from e
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)
    fitted = None
    if fit:
        fitted = _fit(an, result, flow_name, fit_out if fit_out is not None else Path(capture).with_name(Path(capture).stem + "-fit.toml"))
    if as_json:
        click.echo(result.to_json())
    else:
        console = stdout_console()
        c = result.capture
        console.print(f"{c['path']}: {c['format']}, {c['packets']} packets ({', '.join(c['link_types']) or 'no link type'}), "
                      f"{c['duration']:.3f} s; {result.tcp_connections} TCP connections, {len(result.flows)} with data, {len(result.udp)} UDP directions")  # fmt: skip
        if len(result.flows):
            console.print(_table("Flows", result.flows, _FLOW_COLUMNS))
            console.print(_table("What the capture shows", result.flows, _CAPTURE_COLUMNS))
        if len(result.udp):
            console.print(_table("UDP (no keys: datagrams, sizes and times only)", result.udp, _UDP_COLUMNS))
        if fitted is not None:
            console.print(_table("The capture beside the fitted scenario", fitted, (("source", "source", str), *_FLOW_COLUMNS[2:])))
    if plot_dir is not None:
        from .plot import save

        plot_dir.mkdir(parents=True, exist_ok=True)
        written = []
        for i, name in enumerate(result.flows["flow"] if len(result.flows) else []):
            written += save(result.plot(name), plot_dir / f"flight-{i}")
        click.echo(f"wrote {len(written)} files to {plot_dir}", err=True)


def _fit(an: Any, result: Any, flow_name: str | None, out: Path) -> pd.DataFrame:
    """Propose, write and run the scenario of one flow; both rows as one table."""
    import pandas as pd

    if result.flows.empty:
        raise _Failure("error: --fit: the capture has no TCP flow with data", 2)
    rows = result.flows.set_index("flow", drop=False)
    if flow_name is not None and flow_name not in rows.index:
        raise _Failure(f"error: --flow {flow_name!r} is not a flow of the capture; its flows: {', '.join(rows.index)}", 2)
    row = rows.loc[flow_name if flow_name is not None else rows.index[0]].to_dict()
    try:
        scenario = an.propose(row, result.series[row["flow"]])
    except ValueError as e:
        raise _Failure(f"error: --fit: {e}", 2) from e
    out.write_text(an.scenario_toml(scenario, f"Proposed by startlab analyze --fit from {result.capture['path']}, flow {row['flow']}.\nRun it: startlab run {out.name}"), encoding="utf-8")
    click.echo(f"wrote {out}", err=True)
    run = startlab.run(scenario, progress=False)
    fit_row = run.flows.iloc[0].to_dict()
    fit_row["source"] = f"fit: {scenario['topology']['bottleneck_rate']}, {scenario['topology']['rtt']}, {scenario['topology']['queue']['limit']}"
    row["source"] = "capture"
    return pd.DataFrame([row, fit_row])


@cli.command()
@click.argument("scenario", metavar="SCENARIO")
@_plugin_option
def validate(scenario: str, plugins: tuple[str, ...]) -> None:
    """Check SCENARIO (a TOML file) without running it."""
    _import_plugins(plugins)
    with _naming(scenario):
        startlab.validate(_scenario_file(scenario))
    click.echo(f"ok: {scenario}")


def _range_text(param: dict[str, Any]) -> str:
    """A declared range in words ("at least 1", "0 to 30", "positive", "between 0 and 1, both
    excluded"); "" when any value goes."""
    r = param.get("range", "any")
    if not isinstance(r, dict):
        return ""

    def value(x: float) -> str:
        if param["kind"] == "rate":
            scale, unit = next(((s, u) for s, u in ((1e9, "Gbps"), (1e6, "Mbps"), (1e3, "kbps")) if x >= s), (1.0, "bps"))
            return f"{x / scale:g}{unit}"
        return f"{x:g}"

    (how, bound), = r.items()
    if how == "above":
        return "positive" if bound == 0 else f"above {value(bound)}"
    if how == "at_least":
        return f"at least {value(bound)}"
    if how == "strictly_between":
        return f"between {value(bound[0])} and {value(bound[1])}, both excluded"
    return f"{value(bound[0])} to {value(bound[1])}"


def _params_text(a: dict[str, Any], markdown: bool) -> str:
    """An algorithm's parameters as `name` = default (range)."""
    parts = []
    for p in a["params"]:
        rng = _range_text(p)
        name = f"`{p['name']}`" if markdown else p["name"]
        parts.append(f"{name} = {p['default']}" + (f" ({rng})" if rng else ""))
    return (", " if markdown else "\n").join(parts) or "–"


def algorithms_markdown() -> str:
    """The registry as the Markdown table of docs/SCENARIOS.md (``startlab algorithms
    --markdown``), derived from each algorithm's declaration."""
    lines = ["| algorithm | role | what it does | parameters (default) |", "|---|---|---|---|"]
    for a in (a for a in startlab.algorithms() if not a["plugin"]):
        lines.append(f"| [{a['name']}](algorithms/{a['name']}.md) | {a['role']} | {a['summary']} | {_params_text(a, True)} |")
    return "\n".join(lines) + "\n"


def queues_markdown() -> str:
    """The queue kinds as the Markdown table of docs/SCENARIOS.md (``startlab queues --markdown``),
    derived from each kind's declaration."""
    lines = ["| kind | what it does | limit (default) | parameters (default) | source |", "|---|---|---|---|---|"]
    for q in startlab.queues():
        limit = q["limit"] or "required"
        unit = "packets or bytes" if q["byte_limit"] else "packets"
        lines.append(f"| `{q['name']}` | {q['summary']} | {limit} ({unit}) | {_params_text(q, True)} | {q['source']} |")
    return "\n".join(lines) + "\n"


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the queue kinds as JSON.")
@click.option("--markdown", is_flag=True, help="Print them as docs/SCENARIOS.md's Markdown table.")
def queues(as_json: bool, markdown: bool) -> None:
    """List every queue kind a link can have, with its parameters, defaults and ranges."""
    listed = startlab.queues()
    rows = [(q["name"], q["summary"], q["limit"] or "required", _params_text(q, False), q["source"]) for q in listed]
    _print_registry(listed, as_json, queues_markdown if markdown else None, "Queue kinds", ("kind", "summary", "limit", "parameters (default)", "source"), rows)


def _print_registry(listed: list[dict[str, Any]], as_json: bool, markdown: Callable[[], str] | None, title: str, headings: tuple[str, ...], rows: list[tuple[str, ...]]) -> None:
    """A declared registry (algorithms, queue kinds) as JSON, as docs/SCENARIOS.md's Markdown table,
    or as a table on the terminal."""
    if as_json:
        click.echo(json.dumps(listed, indent=2))
        return
    if markdown is not None:
        click.echo(markdown(), nl=False)
        return
    from rich.table import Table

    from ._console import stdout_console

    table = Table(title=title)
    for heading in headings:
        table.add_column(heading)
    for row in rows:
        table.add_row(*row)
    stdout_console().print(table)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the registry as JSON.")
@click.option("--markdown", is_flag=True, help="Print the registry as docs/SCENARIOS.md's Markdown table (built-in algorithms only).")
@_plugin_option
def algorithms(as_json: bool, markdown: bool, plugins: tuple[str, ...]) -> None:
    """List every startup and avoidance algorithm with its parameters, defaults and ranges (and
    the Python plug-ins --plugin registers)."""
    _import_plugins(plugins)
    listed = startlab.algorithms()
    rows = [(a["name"], a["role"], a["summary"], _params_text(a, False), a["source"]) for a in listed]
    _print_registry(listed, as_json, algorithms_markdown if markdown else None, "Algorithms", ("name", "role", "summary", "parameters (default)", "source"), rows)


@cli.command()
@click.option("--quick", is_flag=True, help="2 s of simulated time and at most 100 flows.")
@click.option("--repeat", default=3, show_default=True, help="Runs per scenario; the fastest is kept.")
@click.option("--sweep", "sweeps", is_flag=True, help="Instead: the Figure 8 sweep's runs per minute and the store's cost per run.")
@click.option("--dask", is_flag=True, help="With --sweep: also on a Dask LocalCluster.")
def bench(quick: bool, repeat: int, sweeps: bool, dask: bool) -> None:
    """Time the benchmark scenarios, each in a fresh process (docs/PERFORMANCE.md)."""
    if sweeps:
        from .sweep import bench as sweepbench

        sweepbench.run(dask=dask)
        return
    from . import bench as benchmark

    benchmark.report(benchmark.run_all(quick=quick, repeat=max(repeat, 1)))


@cli.command()
@click.argument("sweep_file", metavar="SWEEP.toml")
@click.option("--db", type=click.Path(dir_okay=False, path_type=Path), help="The results database (default: SWEEP.duckdb beside the sweep file).")
@click.option("-j", "--jobs", type=int, help="Local worker processes (default: every core).")
@click.option("--dask", "dask_address", metavar="ADDRESS", help="Run on this Dask scheduler (tcp://host:port) instead of locally.")
@click.option("--traces/--no-traces", default=None, help="Also store each run's traces as Parquet files (default: the sweep file's traces).")
@click.option("--retry-failed", is_flag=True, help="Run again the runs stored as failed.")
@click.option("--max-events", type=float, help="Per-run limit on engine events.")
@click.option("--max-sim-time", help="Per-run limit on simulated time (600s).")
@click.option("--max-memory", help="Per-run limit on what a run adds to its process's resident memory (2GiB); default: half the machine's memory.")
@click.option("--max-wall", help="Per-run limit on wall time (30s, 10min); off by default.")
@click.option("--dry-run", is_flag=True, help="List the runs and whether each is stored, to run, or refused; run nothing.")
@click.option("--progress/--no-progress", default=None, help="Progress bar on stderr (default: when stderr is a terminal).")
@click.option("--log", is_flag=True, help="One line on stderr per stored run.")
def sweep(
    sweep_file: str, db: Path | None, jobs: int | None, dask_address: str | None, traces: bool | None, retry_failed: bool,
    max_events: float | None, max_sim_time: str | None, max_memory: str | None, max_wall: str | None, dry_run: bool,
    progress: bool | None, log: bool,
) -> None:  # fmt: skip
    """Run a parameter sweep (docs/SWEEPS.md): every run not yet in the database, on local
    processes or a Dask cluster, each stored as it completes. Rerun to resume."""
    from ._console import stdout_console
    from .sweep import file as sweepfile, run as sweeprun

    try:
        spec = sweepfile.load(sweep_file)
        options = (("max_events", max_events), ("max_sim_time", max_sim_time), ("max_memory", max_memory), ("max_wall", max_wall))
        given = {k: v for k, v in options if v is not None}
        limits = sweepfile.parse_limits({**_limit_dict(spec.limits), **given}, "limits")
    except sweepfile.SweepError as e:
        raise _Failure(f"error: {e}", 2) from e
    if jobs is not None and jobs < 1:
        raise _Failure(f"error: --jobs {jobs}: expected at least 1 worker", 2)
    address = dask_address or spec.dask
    if address is not None and not sweepfile.DASK_ADDRESS.match(address):
        raise _Failure(f"error: --dask {address!r}: expected a scheduler address such as tcp://10.0.0.1:8786 or 10.0.0.1:8786", 2)
    path = db or Path(sweep_file).with_suffix(".duckdb")
    try:
        if dry_run:
            stdout_console().print(_dry_run(spec, path, limits))
            return
        report = sweeprun.run_sweep(
            spec, path, jobs=jobs, dask=address, traces=traces, retry_failed=retry_failed, limits=limits, progress=progress, log=log
        )
    except (sweepfile.SweepError, sweeprun.SweepStoreError) as e:
        raise _Failure(f"error: {e}", 2) from e
    except sweeprun.SweepInterrupted as e:
        raise _Failure(str(e), 130) from e
    click.echo(sweeprun.describe(report), err=True)


def _limit_dict(limits: Any) -> dict[str, Any]:
    from .sweep.file import LIMIT_KEYS

    return {k: getattr(limits, k) for k in LIMIT_KEYS if getattr(limits, k) is not None}


def _dry_run(spec: Any, path: Path, limits: Any) -> Table:
    """The runs of a sweep, with the state of each in the database at ``path``."""
    import duckdb
    from rich.table import Table

    from .sweep import run as sweeprun

    tasks = sweeprun.plan(spec, limits=limits)
    stored: dict[str, str] = {}
    if path.exists():
        con = sweeprun.connect_db(path, read_only=True)
        try:
            for table, label in (("archive_runs", "archived, "), ("runs", "")):
                try:
                    stored.update({k: label + v for k, v in con.execute(f"SELECT key, status FROM {table}").fetchall()})
                except duckdb.CatalogException:
                    if table == "runs":
                        raise sweeprun.SweepStoreError(f"{path}: not a startlab sweep database (it has no runs table)") from None
        finally:
            con.close()
    table = Table(title=f"{spec.name}: {len(tasks)} runs ({spec.points} points x {spec.replicates} replicates)")
    for heading in ["point", "rep", *[c.name for c in spec.columns], "seed", "key", "state"]:
        table.add_column(heading, justify="right" if heading in ("point", "rep", "seed") else "left")
    for t in tasks[:200]:
        state = f"stored ({stored[t.key]})" if t.key in stored else ("refused: " + (t.refused or "") if t.refused else "to run")
        table.add_row(str(t.point), str(t.replicate), *[str(t.values[c.name]) for c in spec.columns], str(t.seed), t.key[:12], state)
    if len(tasks) > 200:
        table.caption = f"the first 200 of {len(tasks)} runs"
    return table


def _table(
    title: str, frame: pd.DataFrame, columns: Sequence[tuple[str, str, Callable[[Any], str]]]
) -> Table:
    """A rich table of the given columns (those present); nulls are shown as a dash."""
    from rich.table import Table

    present = [(name, heading, fmt) for name, heading, fmt in columns if name in frame]
    table = Table(title=title)
    for name, heading, _ in present:
        table.add_column(heading, justify="left" if name in ("flow", "link") else "right")
    for row in frame.to_dict(orient="records"):
        table.add_row(*(_cell(row[name], fmt) for name, _, fmt in present))
    return table


def _cell(value: Any, fmt: Callable[[Any], str]) -> str:
    import pandas as pd

    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return fmt(value)


#: The sweep analysis commands (startlab.sweep.stats imports DuckDB, SciPy and matplotlib): name,
#: where the command is, and its help as ``startlab --help`` lists it (its docstring).
_LAZY_COMMANDS = (
    ("results", "startlab.sweep.commands:results_command", "Summarize a sweep database, or query it with --sql."),
    (
        "plot",
        "startlab.sweep.commands:plot_command",
        "Plot a metric of a sweep against an axis (mean/median over replicates with a CI band),\n"
        "or its CDF over flows (--kind cdf); print the table behind it.",
    ),
)
_LAZY_COMMANDS += (
    (
        "evaluate",
        "startlab.evaluate.cli:evaluate_command",
        "Evaluate startup algorithms on a suite of paths and workloads against baselines: verdicts\n"
        "with confidence intervals, the harm to other flows, an HTML report (docs/EVALUATE.md).",
    ),
    ("traces", "startlab.evaluate.cli:traces_command", "Mahimahi link traces: generate cellular-like or Wi-Fi-like ones, or measure a file."),
    ("reproduce", "startlab.reproduce.cli:reproduce_command", "Reproduce the papers' results: startlab reproduce --list | NAME | --all --report DIR."),
)
for _name, _target, _help in _LAZY_COMMANDS:
    cli.add_command(_LazyCommand(_name, _target, _help))

# The real systems' commands (testbed, kernel, net, compare-real), defined in their own module.
from .cli_real import COMMANDS as _REAL_COMMANDS  # noqa: E402

for _command in _REAL_COMMANDS:
    cli.add_command(_command)


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the ``startlab`` command (exits the process)."""
    cli.main(args=argv, prog_name="startlab")


if __name__ == "__main__":
    main()
