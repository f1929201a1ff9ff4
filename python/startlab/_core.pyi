"""Type stub of the native module built from crates/startlab-py (the contract between Rust and Python).

Engine times (`*_ns`) are integer nanoseconds; result and trace columns are already in SI units (seconds).
"""
from typing import Any

import numpy as np

__version__: str

class ScenarioError(ValueError):
    """A scenario was refused. The message names the key path, what was given and what is accepted."""

class SimulationError(RuntimeError):
    """The simulator failed internally (a bug, never bad input); the message says where."""

class PluginError(RuntimeError):
    """A Python startup plug-in raised (or returned what is not an action): the run stopped. The
    message names the plug-in, the hook and the simulated time; ``__cause__`` is the plug-in's
    exception."""

#: The hooks a plug-in class may define.
PLUGIN_HOOKS: list[str]

def register_startup(
    name: str, summary: str, source: str, params: list[tuple[str, str, str, str, str, float, float, list[str]]], per_response: bool, factory: Any
) -> None:
    """Register a Python startup plug-in (use ``startlab.startup``): ``factory(params: dict)``
    returns an object with ``on_ack(view, ack)`` and any of the other hooks. Each parameter is
    (name, kind, default as written in a scenario, help, range kind, low, high, choice options)."""

class View:
    """The controller's state handed to a plug-in's hooks (read-only; bytes and seconds)."""
    cwnd: float
    ssthresh: float
    mss: int
    round: int
    min_rtt: float | None
    new_round: bool

class Ack:
    """An ACK that advanced SND.UNA (read-only; bytes and seconds)."""
    now: float
    newly_acked: int
    ack_seq: int
    snd_nxt: int
    rtt: float | None
    flight_size: int
    cwnd_limited: bool
    acked_segments: int
    timer_triggered: bool
    delivered: int
    delivery_rate: float | None

class Congestion:
    """A congestion signal: kind is "fast-retransmit", "timeout" or "ecn"."""
    now: float
    kind: str
    flight_size: int
    enter_recovery: bool

class QuickStartVerdict:
    """The sender's verdict on its Quick-Start request."""
    outcome: str
    rate_code: int | None
    rtt: float | None
    queued: int | None
    snd_max: int
    flight_size: int
    in_startup: bool

class Action:
    """What a plug-in decided on one hook call (bytes, bytes/s, seconds); checked when made."""
    def __init__(
        self, increase: float = 0.0, *, set_cwnd: float | None = None, set_ssthresh: float | None = None, exit: str | None = None,
        pacing_rate: float | None = None, send_limit: int | str | None = None, exit_when_sent: tuple[int, str] | None = None,
        pacing_start: float | None = None,
    ) -> None: ...
    increase: float
    set_cwnd: float | None
    set_ssthresh: float | None
    exit: str | None
    pacing_rate: float | None
    pacing_start: float | None

class SavedPath:
    """Saved congestion-control parameters (Careful Resume's, RFC 9959 §3.1) that a connection
    leaves for the next one of its ``[[users]]`` user: ``rate`` in bit/s, ``rtt`` in s,
    ``saved_at`` (simulated time in s, or None: fresh when the next connection starts); ``cwnd``
    is ``rate / 8 * rtt`` in bytes. Checked when made."""
    def __init__(self, rate: float, rtt: float, saved_at: float | None = None) -> None: ...
    rate: float
    rtt: float
    saved_at: float | None
    @property
    def cwnd(self) -> float: ...

def validate(text: str, format: str = "toml", base: str | None = None) -> None:
    """Parse and check a scenario (format "toml" or "json"); raise ScenarioError if it is refused.
    Files the scenario names are relative to ``base`` (its file's directory) when given."""

def normalize(text: str, format: str = "toml", base: str | None = None) -> str:
    """The fully resolved scenario (every default filled in) as a JSON string."""

def queues() -> str:
    """The queue kinds as JSON: a list of {name, role, summary, source, params, limit,
    byte_limit} (``limit``: the default buffer, or None when a scenario must give it)."""

def algorithms() -> str:
    """The algorithm registry as JSON: a list of {name, role, summary, source, params, plugin}
    (``plugin``: a Python plug-in registered in this process)."""

class Simulation:
    """One simulation of one scenario. Build it, advance it in chunks (so Python can show progress),
    then collect the results."""

    def __init__(self, text: str, format: str = "toml", base: str | None = None) -> None: ...
    @property
    def duration_ns(self) -> int: ...
    @property
    def now_ns(self) -> int: ...
    @property
    def finished(self) -> bool: ...
    def set_event_limit(self, limit: int | None = None) -> None:
        """Stop processing events once `limit` events were processed in all (None: no limit)."""
    @property
    def event_limit_reached(self) -> bool:
        """True when the event limit stopped the run before its end."""
    def advance(self, until_ns: int) -> bool:
        """Run events up to and including `until_ns` (capped at the scenario duration). Releases the
        GIL unless a Python plug-in runs. Returns True once the run is finished (duration reached or
        nothing left to do). Raises PluginError when a plug-in failed (and again on every later call)."""
    def capture_pcap(self, directory: str) -> None:
        """Capture packets to pcap/pcapng files in ``directory`` (``[trace.pcap]``'s links, or
        a dumbbell's bottleneck / every graph link); call before the run. OSError: the directory
        or a file cannot be created."""
    @property
    def has_pcap_table(self) -> bool: ...
    def pcap_files(self) -> list[tuple[str, int]]:
        """The capture files of a finished run, with the packets each holds."""
    def capture_qlog(self, directory: str) -> None:
        """Write a qlog file per flow to ``directory`` (``[trace.qlog]``'s flows, or every flow);
        call before the run. OSError: the directory or a file cannot be created."""
    @property
    def has_qlog_table(self) -> bool: ...
    def qlog_files(self) -> list[tuple[str, int]]:
        """The qlog files of a finished run, with the events each holds."""
    def run(self) -> None:
        """Advance to the end."""
    def stats(self) -> dict[str, int]:
        """Engine counters: events, delivered_packets (data packets delivered to receivers),
        sent_packets, dropped_packets, sim_time_ns."""
    def drain_transfers(self) -> dict[str, Any]:
        """The ``[[users]]`` transfers that ended since the last call, as columns (``measured``
        false), plus ``group`` (the ``[[users]]`` group index); ``results()`` then holds only the
        transfers not drained."""
    def transfer_measure(self) -> str:
        """JSON: how ``measured`` is decided for the transfers of the finished run: ``kind``
        (``all``, ``time`` with ``from``/``to``, ``warmup`` with ``warmup`` and ``first``)."""
    def results(self) -> dict[str, Any]:
        """Results of a finished run:
        {"flows": {column: list}, "links": {column: list},
         "traces": {"cwnd": {column: np.ndarray}, "seq": {...}, "queue": {...}},
         "flow_names": list[str], "link_names": list[str], "seq_kinds": list[str],
         "scenario": str (resolved scenario JSON)}"""

def analyze_capture(path: str, vantage: str | None = None) -> str:
    """The capture analysis (docs/ANALYZE.md) as JSON: capture, flows, tcp_connections, udp, warnings."""
