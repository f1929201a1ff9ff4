"""The hooks that SUSS, Careful Resume and BBRv3 added to the ``StartupAlgorithm`` trait, in Python
plug-ins (docs/OWN-ALGORITHM.md §2): ``on_send``, ``Action(pacing_start=)``, ``loss_window``,
``keeps_startup_on_loss`` with ``on_recovery_ack`` and ``on_retransmit``, and ``retained`` /
``seed`` carried across the connections of a ``[[users]]`` user. Each one changes the run the way
the Rust trait says, and a bad return value stops the run naming the hook and what it accepts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import startlab
from startlab import Action, SavedPath

from test_careful_resume import users_scenario
from test_plugins import with_startup


def run(name: str) -> startlab.Result:
    """The plug-in ``name`` on test_plugins' path (10 Mbit/s, 40 ms, 20-packet buffer, SACK)."""
    return startlab.run(with_startup(f'{{ algorithm = "{name}" }}'), progress=False)


def sent(result: startlab.Result) -> Any:
    seq = result.traces.seq
    return seq[seq["event"] == "sent"]


def slow_start(view: Any, ack: Any) -> float:
    return float(min(ack.newly_acked, view.mss))


# on_send and pacing


def test_on_send_sees_each_new_segment_leave_and_can_pace_the_next() -> None:
    calls: list[tuple[float, int, int]] = []

    @startlab.startup("test-send-paced")
    class SendPaced:
        """Slow start; once 10 segments have left, paced at 1 Mbit/s."""

        def on_ack(self, view: Any, ack: Any) -> float:
            return slow_start(view, ack)

        def on_send(self, view: Any, now: float, snd_max: int, flight: int) -> Action | None:
            calls.append((now, snd_max, flight))
            return Action(pacing_rate=125_000.0) if snd_max >= 10 * view.mss else None

    @startlab.startup("test-send-unpaced")
    class SendUnpaced:
        def on_ack(self, view: Any, ack: Any) -> float:
            return slow_start(view, ack)

    paced = run("test-send-paced")
    sends = sent(paced)
    # Every call is one new segment leaving: its time, and one past its last byte.
    first = sends.drop_duplicates("seq")
    by_end = dict(zip(first["seq"] + first["len"], first["time"]))
    assert len(calls) > 20
    for now, snd_max, flight in calls:
        assert by_end[snd_max] == pytest.approx(now, abs=1e-9), (now, snd_max)
        assert 0 < flight <= snd_max
    assert [c[1] for c in calls] == sorted({c[1] for c in calls}), "snd_max only grows"
    # From the 11th segment on, one segment per 8 ms (1000 B at 125 kB/s); ACK-clocked slow start
    # sends back to back.
    gaps = np.diff(sends[sends["seq"] >= 10_000]["time"].to_numpy()[:50])
    assert gaps.min() >= 0.008 - 1e-9 and np.median(gaps) == pytest.approx(0.008, abs=1e-6)
    unpaced = np.diff(sent(run("test-send-unpaced"))["time"].to_numpy()[10:60])
    assert (unpaced < 1e-3).sum() > 25


def test_a_pacing_start_holds_the_next_segment_until_then() -> None:
    ends: dict[str, float] = {}

    def guarded(name: str, guard: float | None) -> None:
        @startlab.startup(name)
        class Guarded:
            def on_ack(self, view: Any, ack: Any) -> Action | float:
                if view.new_round and view.round == 3:
                    ends[name] = ack.now
                    start = None if guard is None else ack.now + guard
                    return Action(increase=slow_start(view, ack), pacing_rate=1e6, pacing_start=start)
                return slow_start(view, ack)

    guarded("test-pacing-start", 0.020)
    guarded("test-no-pacing-start", None)
    for name, delay in (("test-pacing-start", 0.020), ("test-no-pacing-start", 0.0)):
        sends = sent(run(name))
        after = sends[sends["time"] >= ends[name]]["time"].to_numpy()
        assert after[0] == pytest.approx(ends[name] + delay, abs=1e-9), name
        assert np.diff(after[:5]) == pytest.approx([0.001] * 4, abs=1e-9), "then 1000 B per ms"
    assert Action(pacing_start=1.5).pacing_start == 1.5
    for bad in (-0.001, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="pacing_start = .* is not valid; expected a simulated time in seconds >= 0"):
            Action(pacing_start=bad)


# loss_window


def test_loss_window_is_the_window_the_loss_reduces_from() -> None:
    seen: list[tuple[str, float]] = []

    @startlab.startup("test-loss-window")
    class TenSegments:
        def on_ack(self, view: Any, ack: Any) -> float:
            return slow_start(view, ack)

        def loss_window(self, view: Any, congestion: Any) -> float:
            seen.append((congestion.kind, view.cwnd))
            return 10.0 * view.mss

    @startlab.startup("test-no-loss-window")
    class Plain:
        def on_ack(self, view: Any, ack: Any) -> float:
            return slow_start(view, ack)

    small, plain = run("test-loss-window").flows.iloc[0], run("test-no-loss-window").flows.iloc[0]
    assert seen[0][0] == "fast-retransmit" and seen[0][1] > 50_000, seen
    assert small["exit_reason"] == plain["exit_reason"] == "loss"
    assert small["exit_cwnd_pkts"] == 10 and plain["exit_cwnd_pkts"] > 50
    # Reno halves the loss window: ssthresh 5 segments right after the loss.
    cwnd = run("test-loss-window").traces.cwnd
    assert cwnd[cwnd["cause"] == "loss"]["ssthresh"].iloc[0] == 5000


# keeps_startup_on_loss, on_recovery_ack, on_retransmit


def riding(name: str, keeps: Any, log: dict[str, list[Any]]) -> type:
    """Slow start that rides its first loss recovery out (when ``keeps`` says so) and ends startup
    with reason ``estimate`` on the recovery's 20th ACK."""

    @startlab.startup(name)
    class Rides:
        keeps_startup_on_loss = keeps

        def on_ack(self, view: Any, ack: Any) -> float:
            return slow_start(view, ack)

        def on_retransmit(self, seq: int, length: int) -> None:
            log["retransmit"].append((seq, length))

        def on_recovery_ack(self, view: Any, ack: Any) -> Action | None:
            log["recovery_ack"].append((ack.now, view.cwnd, view.ssthresh))
            if len(log["recovery_ack"]) == 20:
                return Action(exit="estimate", set_ssthresh=20.0 * view.mss)
            return None

    return Rides


def test_a_plugin_that_keeps_startup_on_loss_rides_the_recovery_out() -> None:
    log: dict[str, list[Any]] = {"retransmit": [], "recovery_ack": []}
    riding("test-rides", True, log)
    result = run("test-rides")
    flow = result.flows.iloc[0]
    assert flow["exit_reason"] == "estimate"
    assert len(log["recovery_ack"]) == 20
    # The recovery kept the window the loss found (ssthresh = cwnd, no reduction).
    assert all(cwnd == ssthresh > 50_000 for _, cwnd, ssthresh in log["recovery_ack"])
    assert flow["startup_exit_time"] == pytest.approx(log["recovery_ack"][-1][0], abs=1e-9)
    # Startup ended with the action's ssthresh: 20 segments once the recovery is over.
    cwnd = result.traces.cwnd
    assert cwnd[cwnd["time"] > flow["startup_exit_time"]]["ssthresh"].iloc[0] == 20_000
    # Every segment retransmitted in startup is one the queue dropped.
    seq = result.traces.seq
    dropped = set(seq[seq["event"] == "dropped"]["seq"])
    assert log["retransmit"] and all(s in dropped and n == 1000 for s, n in log["retransmit"])

    # The same class without the attribute ends startup on the loss; its other hooks never run.
    quiet: dict[str, list[Any]] = {"retransmit": [], "recovery_ack": []}
    riding("test-does-not-ride", False, quiet)
    assert run("test-does-not-ride").flows.iloc[0]["exit_reason"] == "loss"
    assert quiet == {"retransmit": [], "recovery_ack": []}


def test_keeps_startup_on_loss_may_be_a_method() -> None:
    asked: list[float] = []
    log: dict[str, list[Any]] = {"retransmit": [], "recovery_ack": []}

    def keeps(self: Any) -> bool:
        asked.append(1.0)
        return True

    riding("test-rides-method", keeps, log)
    by_method = run("test-rides-method").flows.iloc[0]
    assert len(asked) == 1, "asked once, at the fast retransmit in startup"
    riding("test-rides-attribute", True, {"retransmit": [], "recovery_ack": []})
    by_attribute = run("test-rides-attribute").flows.iloc[0]
    columns = ["exit_reason", "startup_exit_time", "su_time", "retransmissions", "throughput"]
    assert by_method[columns].tolist() == by_attribute[columns].tolist()
    # A method that answers False: the loss ends startup.
    riding("test-rides-method-no", lambda self: False, {"retransmit": [], "recovery_ack": []})
    assert run("test-rides-method-no").flows.iloc[0]["exit_reason"] == "loss"


# retained and seed


def resuming(name: str, seeds: list[Any], forget_after_first: bool = False) -> None:
    """A small Careful Resume: a connection keeps its largest delivery rate (while cwnd-limited)
    and its minimum RTT; the next connection of the user jumps to half that window on its first
    ACK, paced over the saved RTT. ``seeds`` records the seeds and, as strings, each connection's
    ``on_start`` and first ``on_ack``."""

    @startlab.startup(name)
    class Resume:
        def __init__(self) -> None:
            self.best, self.min_rtt, self.saved, self.jump = 0.0, None, None, None
            self.acked = False

        def on_start(self, view: Any) -> None:
            seeds.append("on_start")

        def seed(self, saved: SavedPath | None) -> None:
            assert seeds[-1] == "on_start", "seed comes after the instance's on_start"
            seeds.append(saved)
            self.saved = saved

        def on_ack(self, view: Any, ack: Any) -> Action | float:
            if not self.acked:
                self.acked = True
                seeds.append("on_ack")
            if ack.delivery_rate is not None and ack.cwnd_limited:
                self.best = max(self.best, ack.delivery_rate * 8)
            if ack.rtt is not None:
                self.min_rtt = ack.rtt if self.min_rtt is None else min(self.min_rtt, ack.rtt)
            if self.saved is not None and self.jump is None:
                self.jump = self.saved.cwnd / 2
                return Action(set_cwnd=self.jump, pacing_rate=self.jump / self.saved.rtt)
            return slow_start(view, ack)

        def retained(self) -> SavedPath | str | None:
            if forget_after_first and self.saved is not None:
                return "forget"
            if self.best == 0:
                return None
            rate = max(self.best, self.saved.rate if self.saved else 0.0)
            return SavedPath(rate, self.min_rtt if self.saved is None else min(self.min_rtt, self.saved.rtt))

        def report(self) -> dict[str, Any]:
            out: dict[str, Any] = {"resume_jump": self.jump or 0.0, "resume_best": self.best}
            if self.saved is not None:
                out["resume_saved_rate"] = self.saved.rate
            return out


def test_retained_and_seed_carry_a_saved_path_to_the_users_next_connection() -> None:
    seeds: list[Any] = []
    resuming("test-resume", seeds)
    resumed = startlab.run(users_scenario({"algorithm": "test-resume"}), progress=False).transfers
    plain = startlab.run(users_scenario({"algorithm": "slow-start"}), progress=False).transfers
    assert resumed is not None and plain is not None and list(resumed["transfer"]) == [0, 1, 2]
    # seed is called for each later connection after its on_start and before its first ACK,
    # with what the one before retained.
    order = [s if isinstance(s, str) else "seed" for s in seeds]
    assert order == ["on_start", "on_ack", "on_start", "seed", "on_ack", "on_start", "seed", "on_ack"], order
    seeds = [s for s in seeds if not isinstance(s, str)]
    assert len(seeds) == 2 and all(isinstance(s, SavedPath) for s in seeds)
    first = resumed.iloc[0]
    assert seeds[0].rate == first["resume_best"] and 0.9 * 20e6 < seeds[0].rate <= 20e6
    assert 0.1 <= seeds[0].rtt < 0.11 and seeds[0].saved_at is None
    assert seeds[0].cwnd == pytest.approx(seeds[0].rate / 8 * seeds[0].rtt)
    # The report column shows the jump on the later connections only.
    assert first["resume_jump"] == 0 and np.isnan(first["resume_saved_rate"])
    for k in (1, 2):
        row = resumed.iloc[k]
        assert row["resume_jump"] == pytest.approx(seeds[k - 1].cwnd / 2) and row["resume_saved_rate"] == seeds[k - 1].rate
        assert row["completion_time"] < 0.7 * plain.iloc[k]["completion_time"], k
    assert first["completion_time"] == plain.iloc[0]["completion_time"], "nothing saved before the first connection"


def test_forget_seeds_the_next_connection_with_none_and_none_keeps_nothing() -> None:
    seeds: list[Any] = []
    resuming("test-resume-forget", seeds, forget_after_first=True)
    rows = startlab.run(users_scenario({"algorithm": "test-resume-forget"}), progress=False).transfers
    assert rows is not None
    seeds = [s for s in seeds if not isinstance(s, str)]
    assert len(seeds) == 2 and isinstance(seeds[0], SavedPath) and seeds[1] is None
    assert rows["resume_jump"].tolist()[0] == 0 and rows["resume_jump"].tolist()[1] > 0 and rows["resume_jump"].tolist()[2] == 0

    never: list[Any] = []

    @startlab.startup("test-keeps-nothing")
    class KeepsNothing:
        def on_ack(self, view: Any, ack: Any) -> float:
            return slow_start(view, ack)

        def retained(self) -> None:
            return None

        def seed(self, saved: Any) -> None:
            never.append(saved)

    startlab.run(users_scenario({"algorithm": "test-keeps-nothing"}), progress=False)
    assert never == [], "seed is called only when the connection before left something"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"rate": 0.0, "rtt": 0.1}, "rate = 0 is not valid; expected bits per second > 0"),
        ({"rate": 1e6, "rtt": float("nan")}, "rtt = NaN is not valid; expected seconds > 0"),
        ({"rate": 1e6, "rtt": 0.1, "saved_at": -1.0}, "saved_at = -1 is not valid"),
    ],
)
def test_a_bad_saved_path_is_refused_where_it_is_made(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SavedPath(**kwargs)
    assert SavedPath(8e6, 0.05) == SavedPath(8e6, 0.05, None) and SavedPath(8e6, 0.05).cwnd == 50_000


# Bad return values


def failing(name: str, hook: str, body: Any, *, riding_out: bool = False) -> type:
    """Slow start whose ``hook`` is ``body``."""
    attributes: dict[str, Any] = {"on_ack": lambda self, view, ack: slow_start(view, ack), hook: body}
    if riding_out:
        attributes["keeps_startup_on_loss"] = True
    return startlab.startup(name)(type(name.replace("-", "_"), (), attributes))


def stopped_in(hook: str, message: str, caught: Any) -> None:
    """The PluginError names the hook and a simulated time; its cause says what the hook gave
    and what it accepts."""
    assert f"failed in {hook} at t = " in str(caught.value), str(caught.value)
    assert message in str(caught.value.__cause__), str(caught.value.__cause__)


@pytest.mark.parametrize(
    ("tag", "hook", "body", "message"),
    [
        ("a", "on_send", lambda self, view, now, snd_max, flight: 1000, "on_send returned 1000; expected startlab.Action or None"),
        ("b", "loss_window", lambda self, view, congestion: "all", "loss_window returned 'all'; expected a finite number of bytes or None"),
        ("c", "loss_window", lambda self, view, congestion: float("inf"), "loss_window returned inf; expected a finite number of bytes or None"),
        ("d", "keeps_startup_on_loss", lambda self: "yes", "keeps_startup_on_loss returned 'yes'; expected True or False"),
        ("e", "on_recovery_ack", lambda self, view, ack: 2.0, "on_recovery_ack returned 2.0; expected startlab.Action or None"),
        ("f", "on_retransmit", lambda self, seq, length: 1 / 0, "division by zero"),
    ],
)
def test_a_bad_return_stops_the_run_naming_the_hook(tag: str, hook: str, body: Any, message: str) -> None:
    name = f"test-bad-return-{tag}"
    failing(name, hook, body, riding_out=hook in ("on_recovery_ack", "on_retransmit"))
    with pytest.raises(startlab.PluginError, match=f'"{name}"') as caught:
        run(name)
    stopped_in(hook, message, caught)


@pytest.mark.parametrize(
    ("tag", "hook", "body", "message"),
    [
        ("a", "retained", lambda self: 42, 'retained returned 42; expected startlab.SavedPath, "forget" or None'),
        ("b", "retained", lambda self: "remember", "retained returned 'remember'; expected"),
        ("c", "seed", lambda self, saved: saved.nothing, "has no attribute 'nothing'"),
    ],
)
def test_a_bad_retained_or_seed_stops_the_users_run(tag: str, hook: str, body: Any, message: str) -> None:
    name = f"test-bad-memory-{tag}"
    cls = failing(name, hook, body)
    if hook == "seed":
        cls.retained = lambda self: SavedPath(10e6, 0.1)
    with pytest.raises(startlab.PluginError, match=f'"{name}"') as caught:
        startlab.run(users_scenario({"algorithm": name}), progress=False)
    stopped_in(hook, message, caught)


def test_keeps_startup_on_loss_must_be_a_bool_or_a_method() -> None:
    with pytest.raises(TypeError, match=r"keeps_startup_on_loss = 'yes'; expected True, False or a method"):

        @startlab.startup("test-keeps-yes")
        class KeepsYes:
            keeps_startup_on_loss = "yes"

            def on_ack(self, view: Any, ack: Any) -> None: ...

    @startlab.startup("test-keeps-instance-1")
    class KeepsOne:
        def __init__(self) -> None:
            self.keeps_startup_on_loss = 1

        def on_ack(self, view: Any, ack: Any) -> None: ...

    with pytest.raises(startlab.PluginError, match=r"failed in __init__ while the simulation was built: TypeError\('keeps_startup_on_loss = 1 is not True, False or a method'\)"):
        run("test-keeps-instance-1")


def test_the_new_hooks_are_listed_and_recognised() -> None:
    for hook in ("on_send", "loss_window", "keeps_startup_on_loss", "on_recovery_ack", "on_retransmit", "retained", "seed"):
        assert hook in startlab.plugin.HOOKS
    with pytest.raises(TypeError, match="on_sent is not a hook"):

        @startlab.startup("test-on-sent")
        class Typo:
            def on_ack(self, view: Any, ack: Any) -> None: ...

            def on_sent(self, view: Any, now: float, snd_max: int, flight: int) -> None: ...


def test_the_tutorials_new_hook_examples_run_as_it_says() -> None:
    doc = (Path(__file__).resolve().parents[1] / "docs" / "OWN-ALGORITHM.md").read_text(encoding="utf-8")

    def example(section: str) -> str:
        return doc.split(section)[1].split("```python\n")[1].split("```")[0]

    namespace: dict[str, Any] = {"startlab": startlab, "Action": Action}
    exec(compile(example("### Riding out a loss"), "OWN-ALGORITHM.md", "exec"), namespace)
    exec(compile(example("### State across connections"), "OWN-ALGORITHM.md", "exec"), namespace)
    assert run("ride-out").flows.iloc[0]["exit_reason"] == "estimate"
    resumed = startlab.run(users_scenario({"algorithm": "resume"}), progress=False).transfers
    plain = startlab.run(users_scenario({"algorithm": "slow-start"}), progress=False).transfers
    assert resumed is not None and plain is not None
    assert resumed["completion_time"][0] == plain["completion_time"][0]
    assert (resumed["completion_time"][1:] < 0.7 * plain["completion_time"][1:]).all()
