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

def validate(text: str, format: str = "toml", base: str | None = None) -> None:
    """Parse and check a scenario (format "toml" or "json"); raise ScenarioError if it is refused.
    Files the scenario names are relative to ``base`` (its file's directory) when given."""

def normalize(text: str, format: str = "toml", base: str | None = None) -> str:
    """The fully resolved scenario (every default filled in) as a JSON string."""

def algorithms() -> str:
    """The algorithm registry as JSON: a list of {name, role, summary, source, params}."""

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
        GIL. Returns True once the run is finished (duration reached or nothing left to do)."""
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
