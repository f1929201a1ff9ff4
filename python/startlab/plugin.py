"""Your own startup algorithm, in Python (docs/OWN-ALGORITHM.md).

A plug-in is a class with the hooks of the Rust ``StartupAlgorithm`` trait, registered under a
name with :func:`startup`::

    import startlab
    from startlab import Action, Param

    @startlab.startup("my-start", params={"max_ssthresh": Param.window("100pkt")})
    class MyStart:
        def __init__(self, params):
            self.max_ssthresh = params.max_ssthresh          # bytes
        def on_ack(self, view, ack):
            return Action(increase=min(ack.newly_acked, view.mss))

A scenario then names it (``startup = { algorithm = "my-start" }``) and lists the module that
registers it (``plugins = ["my_starts"]``), so that ``startlab run``, ``startlab sweep`` and every
sweep worker import it; or ``startlab.run(scenario, startup=MyStart)`` runs it on every flow.

Hooks (only ``on_ack`` is required; a hook the class does not define costs nothing):

- ``on_ack(view, ack)`` -> Action, a number (the increase in bytes) or None: an ACK that advanced
  ``SND.UNA`` in slow start.
- ``on_start(view)``, ``on_handshake(view, rtt, queued)``, ``on_restart(view, rtt, queued,
  snd_max)``, ``on_quick_start(view, verdict)`` -> Action or None (their ``increase`` and ``exit``
  are ignored, as in Rust).
- ``on_congestion(view, congestion)``: a loss, timeout or ECN signal (startup ends after it).
- ``loss_ssthresh(view, congestion, retransmitted)`` -> bytes or None.
- ``after_recovery(view, retransmitted)`` -> None, cwnd, or (cwnd, ssthresh or None), bytes.
- ``reopen(view, ack)`` -> bytes or None: an ACK in congestion avoidance; a threshold above cwnd
  re-opens slow start.
- ``report()`` -> {column: number or str}: per-flow result columns (prefix them with your name),
  also on each row of ``result.transfers`` for a ``[[users]]`` workload.
- ``on_send(view, now, snd_max, flight)`` -> Action or None: new data up to ``snd_max`` left at
  ``now`` in slow start, ``flight`` bytes now out (``increase`` and ``exit`` ignored).
- ``loss_window(view, congestion)`` -> bytes or None: the window a congestion signal in startup
  reduces from, instead of cwnd.
- ``keeps_startup_on_loss``: ``True`` or ``False`` (a class or instance attribute, read once per
  flow), or a method returning one (asked on each fast retransmit in startup): startup rides the
  loss recovery out instead of ending.
- ``on_recovery_ack(view, ack)`` -> Action or None: an ACK of a recovery that startup rides out
  (only ``pacing_rate``, ``exit`` and with it ``set_ssthresh`` apply).
- ``on_retransmit(seq, len)``: bytes retransmitted while in startup.
- ``retained()`` -> :class:`SavedPath`, ``"forget"`` or None: what the connection leaves for the
  next connection of its ``[[users]]`` user; ``seed(saved)`` hands the next one that
  :class:`SavedPath` (or None after ``"forget"``) after its ``__init__`` and ``on_start``, before
  it sends anything.

``view`` (:class:`View`) holds ``cwnd``, ``ssthresh`` (``inf`` when infinite), ``mss``, ``round``,
``min_rtt`` and ``new_round``; ``ack`` (:class:`Ack`) ``now``, ``newly_acked``, ``ack_seq``,
``snd_nxt``, ``rtt``, ``flight_size``, ``cwnd_limited``, ``acked_segments``, ``timer_triggered``,
``delivered`` and ``delivery_rate``. Windows and sequence numbers are bytes, times seconds, rates
bytes per second. Both are read-only and made afresh for every call.

A plug-in runs inside the simulator, deterministically as long as it is (no clocks, no unseeded
randomness). An exception in a hook (or a value that is not an action) stops the run with
:class:`PluginError` naming the plug-in, the hook and the simulated time; the exception is its
``__cause__``, traceback included.
"""

from __future__ import annotations

import importlib
import inspect
import json
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from . import _core
from ._core import Ack, Action, Congestion, PluginError, QuickStartVerdict, SavedPath, View

__all__ = ["Ack", "Action", "Congestion", "Param", "Params", "PluginError", "QuickStartVerdict", "SavedPath", "View", "registered", "startup"]

#: The hooks a plug-in class may define (the Rust trait's methods).
HOOKS: tuple[str, ...] = tuple(_core.PLUGIN_HOOKS)

_KINDS = ("window", "duration", "rate", "number", "integer", "bool", "choice")


@dataclass(frozen=True)
class Param:
    """One parameter of a plug-in: its kind, its default as a scenario writes it, what it means
    and the values it accepts (checked when a scenario is read, like a built-in algorithm's).

    Values reach ``__init__`` as windows in bytes, durations in seconds, rates in bit/s, numbers,
    integers, booleans or the chosen string."""

    kind: str
    default: Any
    help: str = ""
    at_least: float | None = None
    above: float | None = None
    between: tuple[float, float] | None = None
    options: tuple[str, ...] = ()

    @classmethod
    def window(cls, default: str, help: str = "", **range_: Any) -> Param:
        """A window: segments ("100pkt") or bytes ("64KiB"); range bounds in bytes."""
        return cls("window", default, help, **range_)

    @classmethod
    def duration(cls, default: str, help: str = "") -> Param:
        """A duration ("2ms")."""
        return cls("duration", default, help)

    @classmethod
    def rate(cls, default: str, help: str = "", **range_: Any) -> Param:
        """A rate ("10Mbps"); range bounds in bit/s."""
        return cls("rate", default, help, **range_)

    @classmethod
    def number(cls, default: float, help: str = "", **range_: Any) -> Param:
        """A number."""
        return cls("number", default, help, **range_)

    @classmethod
    def integer(cls, default: int, help: str = "", **range_: Any) -> Param:
        """A non-negative integer."""
        return cls("integer", default, help, **range_)

    @classmethod
    def flag(cls, default: bool, help: str = "") -> Param:
        """A boolean."""
        return cls("bool", default, help)

    @classmethod
    def choice(cls, options: Sequence[str], default: str, help: str = "") -> Param:
        """One of ``options``."""
        return cls("choice", default, help, options=tuple(options))

    def _spec(self, name: str, algorithm: str) -> tuple[str, str, str, str, str, float, float, list[str]]:
        """The declaration the native registry takes."""
        if self.kind not in _KINDS:
            raise ValueError(f"plug-in {algorithm!r}, parameter {name!r}: kind {self.kind!r} is not known; expected one of {', '.join(_KINDS)}")
        given = [(k, v) for k, v in (("at_least", self.at_least), ("above", self.above), ("between", self.between)) if v is not None]
        if len(given) > 1:
            raise ValueError(f"plug-in {algorithm!r}, parameter {name!r}: give at most one of at_least, above and between")
        range_, lo, hi = "any", 0.0, 0.0
        if given:
            range_, bound = given[0]
            lo, hi = (float(bound[0]), float(bound[1])) if range_ == "between" else (float(bound), 0.0)  # type: ignore[index, arg-type]
        return (name, self.kind, _written(self.kind, self.default), self.help, range_, lo, hi, list(self.options))


def _written(kind: str, default: Any) -> str:
    """A default as a scenario file writes it (the registry's form)."""
    if kind in ("window", "duration", "rate"):
        return str(default)
    if kind == "choice":
        return json.dumps(str(default))
    return json.dumps(default)


class Params(Mapping[str, Any]):
    """A plug-in's parameters for one flow, every default filled in: ``params.name`` or
    ``params["name"]``."""

    def __init__(self, values: Mapping[str, Any]) -> None:
        self._values = dict(values)

    def __getattr__(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(f"no parameter {name!r}; the plug-in declares {', '.join(self._values) or 'none'}") from None

    def __getitem__(self, name: str) -> Any:
        return self._values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Params({self._values!r})"


#: Every plug-in registered in this process: name -> class.
_REGISTERED: dict[str, type] = {}

C = TypeVar("C", bound=type)


def startup(
    name: str,
    *,
    params: Mapping[str, Param] | None = None,
    summary: str | None = None,
    source: str | None = None,
    per_response: bool = False,
    signals: Mapping[str, tuple[str, str]] | None = None,
) -> Callable[[C], C]:
    """Register a class as the startup algorithm ``name`` (a class decorator).

    Args:
        name: the name scenarios use (``startup = { algorithm = NAME }``); not a built-in's.
        params: its parameters, by name (:class:`Param`); the class's ``__init__(self, params)``
            receives them as :class:`Params` (an ``__init__(self)`` without that argument, or no
            ``__init__`` at all, is called without them).
        summary: one line for ``startlab algorithms``; the class docstring's first line if omitted.
        source: the paper or RFC; the class's module and name if omitted.
        per_response: a fast startup that may run again per response after idle
            (``tcp.startup_after_idle``; its ``on_restart`` hook).
        signals: the variables it decides on, ``{name: (unit, help)}`` (units: ``s``, ``bytes``,
            ``bytes/s``, ``pkts``, ``acks``, ``rounds``, ``-``): with ``[trace] startup = true`` its
            ``signals(self)`` method is asked after every ACK in startup for ``{name: value}`` (a
            missing or None value is NaN), and ``result.traces.startup`` records them.

    Registering a name again (a module imported again) replaces the earlier plug-in.
    """

    def register(cls: C) -> C:
        if not inspect.isclass(cls):
            raise TypeError(f"@startlab.startup({name!r}) decorates a class, not {type(cls).__name__}")
        if not callable(getattr(cls, "on_ack", None)):
            raise TypeError(f"plug-in {name!r}: {cls.__qualname__} defines no on_ack(self, view, ack) method")
        unknown = sorted(a for a in dir(cls) if a.startswith("on_") and a not in HOOKS)
        if unknown:
            raise TypeError(f"plug-in {name!r}: {cls.__qualname__}.{unknown[0]} is not a hook; the hooks are {', '.join(HOOKS)}")
        keeps = getattr(cls, "keeps_startup_on_loss", False)
        if not (isinstance(keeps, bool) or callable(keeps)):
            raise TypeError(f"plug-in {name!r}: {cls.__qualname__}.keeps_startup_on_loss = {keeps!r}; expected True, False or a method returning one")
        declared = dict(params or {})
        for key, p in declared.items():
            if not isinstance(p, Param):
                raise TypeError(f"plug-in {name!r}, parameter {key!r}: expected a startlab.Param (Param.window(...), Param.number(...), ...), not {type(p).__name__}")
        takes_params = _init_takes_params(cls)

        def factory(values: dict[str, Any]) -> Any:
            return cls(Params(values)) if takes_params else cls()

        doc = (inspect.getdoc(cls) or "").strip().splitlines()
        _core.register_startup(
            name,
            summary if summary is not None else (doc[0] if doc else f"Python plug-in {cls.__qualname__}"),
            source if source is not None else f"Python plug-in {cls.__module__}.{cls.__qualname__}",
            [p._spec(key, name) for key, p in declared.items()],
            per_response,
            factory,
            [(key, *_signal(name, key, spec)) for key, spec in (signals or {}).items()],
        )
        _REGISTERED[name] = cls
        cls.startlab_name = name  # type: ignore[attr-defined]
        return cls

    return register


def _signal(plugin: str, key: str, spec: Any) -> tuple[str, str]:
    """A signal's declaration ``(unit, help)``, checked."""
    if not (isinstance(spec, tuple) and len(spec) == 2 and all(isinstance(x, str) for x in spec)):
        raise TypeError(f"plug-in {plugin!r}, signal {key!r}: expected (unit, help), two strings, not {spec!r}")
    return spec[0], spec[1]


def _init_takes_params(cls: type) -> bool:
    """Whether the class's ``__init__`` takes the parameters (a positional argument after self)."""
    if cls.__init__ is object.__init__:  # type: ignore[misc]
        return False
    try:
        parameters = list(inspect.signature(cls.__init__).parameters.values())[1:]  # type: ignore[misc]
    except (TypeError, ValueError):
        return True
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.VAR_POSITIONAL)
    return any(p.kind in positional for p in parameters)


def registered() -> dict[str, type]:
    """Every plug-in registered in this process: name -> class."""
    return dict(_REGISTERED)


def name_of(algorithm: str | type) -> str:
    """The registered name of a plug-in class (or a name, as given)."""
    if isinstance(algorithm, str):
        return algorithm
    found = getattr(algorithm, "startlab_name", None)
    if found is None or _REGISTERED.get(found) is not algorithm:
        raise TypeError(f"{getattr(algorithm, '__qualname__', algorithm)!r} is not a registered plug-in; decorate it with @startlab.startup(NAME)")
    return str(found)


def module_of(algorithm: type) -> str | None:
    """The module a sweep worker imports to register ``algorithm`` (None for ``__main__``, which
    a worker re-runs itself)."""
    module = getattr(algorithm, "__module__", None)
    return None if module in (None, "__main__", "__mp_main__") else str(module)


def import_modules(modules: Sequence[Any], base: str | None = None) -> None:
    """Import the modules a scenario's ``plugins`` lists (registering their plug-ins); a module
    not found on ``sys.path`` is looked for in ``base`` (the scenario file's directory).
    Raises ``ScenarioError`` naming the entry that cannot be imported."""
    if not isinstance(modules, list | tuple):
        raise _core.ScenarioError(f"plugins: expected a list of Python module names, not {type(modules).__name__}")
    for i, module in enumerate(modules):
        if not isinstance(module, str):
            raise _core.ScenarioError(f"plugins[{i}]: expected a Python module name (a string), not {module!r}")
        if module in sys.modules:
            continue
        try:
            _import(module, base)
        except _core.ScenarioError:
            raise
        except Exception as e:
            raise _core.ScenarioError(f"plugins[{i}]: cannot import {module!r}: {type(e).__name__}: {e}") from e


def _import(module: str, base: str | None) -> None:
    try:
        importlib.import_module(module)
        return
    except ModuleNotFoundError as e:
        top = module.split(".")[0]
        if base is None or e.name != top or not ((Path(base) / f"{top}.py").is_file() or (Path(base) / top).is_dir()):
            raise
    sys.path.insert(0, base)
    try:
        importlib.import_module(module)
    finally:
        sys.path.remove(base)
