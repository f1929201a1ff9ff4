"""startlab's queue disciplines against ns-3 3.44's queue discs, one slow-start flow per run.

    python bench/ns3_aqm.py [--path 20M|100M|both] [--cc cubic|newreno|both]
                            [--queue codel,fq-codel,pie] [--duration 10] [--json]
                            [--startlab-recovery NAME] [--ns3-recovery prr|classic]
                            [--runs N] [--seed N] [--ns3-run N] [--ns3-timeout SECONDS]
                            [--events SECONDS] [--startlab-set QUEUE:KEY=VALUE] [--startlab-only]

Startlab issue 33, item 7. Each combination of path, congestion control and queue runs in each
simulator (PIE, which draws at random, ``--runs`` times, startlab seeds ``--seed``.. and ns-3
``RngRun`` ``--ns3-run``..; the tables then compare means and show the ranges): one bulk TCP
flow from t = 0, with a handshake in both (ns-3's TCP always has one), through
bench/ns3_compare.py's dumbbell (sender -- 1 Gbit/s access -- router -- bottleneck -- router --
1 Gbit/s access -- receiver, the whole RTT on the bottleneck) and its TCP settings (SACK,
timestamps, MSS 1448 B = 1500 B IP packets, IW 10, an ACK per segment, initial ssthresh infinite;
CUBIC C 0.4, beta 0.7, fast convergence and ns-3's HyStart off, or NewReno). Loss recovery is
ns-3's default ``TcpPrrRecovery`` against startlab's ``ns3-prr``, which models that release's PRR
(docs/NS3-COMPARISON.md); ``--startlab-recovery``/``--ns3-recovery`` change them.

Paths: ``20M`` (20 Mbit/s, 40 ms RTT) and ``100M`` (100 Mbit/s, 80 ms RTT).

The bottleneck's sending device (left router -> right router) in ns-3: a PointToPoint device with
flow control and a ``DropTailQueue`` of MaxSize 1p, under the root queue disc
``ns3::CoDelQueueDisc``, ``ns3::FqCoDelQueueDisc`` or ``ns3::PieQueueDisc`` installed with
``TrafficControlHelper``, MaxSize 1000p and every other attribute at ns-3's default (printed at the
start, read from the TypeIds). The other devices have no queue disc and drop-tail device queues
(access 100000p, the bottleneck's reverse 1000p). In startlab: ``queue = { kind = ..., limit =
"1000pkt", ... }`` with ns-3's defaults written out (``STARTLAB_QUEUES``).

Reported per combination (markdown, or JSON with ``--json``), with startlab's relative difference
from ns-3 and whether it is within issue 33's tolerance:

- first drop: the first TCP data packet dropped at the bottleneck (ns-3: the queue disc's
  ``DropBeforeEnqueue``/``DropAfterDequeue`` traces; startlab: the first ``dropped`` row of the
  ``seq`` trace), 5 %;
- startup exit: the first congestion reduction (ns-3: the first decrease of the sender socket's
  ``SlowStartThreshold``; startlab: ``startup_exit_time``), 5 %; startlab's ``t_su`` (end of the
  startup period, after the recovery) is in the JSON;
- cwnd at exit in segments, just before that reduction (ns-3: the last ``CongestionWindow`` value;
  startlab: ``exit_cwnd_pkts``), 5 %;
- drops in the run (``--duration``, 10 s by default): TCP data packets dropped at the bottleneck,
  buffer overflow and the control law's together (the control law's share is in the JSON), 15 %;
- mean sojourn: ns-3's queue-disc ``SojournTime`` trace averaged over every packet it reports
  (those CoDel drops after dequeue included); startlab's bottleneck ``sojourn_mean`` (every
  transmitted packet, from enqueue to the start of its transmission), 10 %;
- (diagnostic, no tolerance in the issue) ns-3's mean wait from the queue disc's ``Enqueue`` to the
  device's ``PhyTxBegin`` over transmitted packets: the same quantity as startlab's
  ``sojourn_mean``, including the wait in the 1-packet device queue that startlab does not have;
- (diagnostic) drops and mean sojourn before the first RTO of any run of the combination in either
  simulator (on a 10 ms boundary; startlab's sojourn from the same scenario run only that long):
  after a timeout the two TCPs are known to part (docs/NS3-COMPARISON.md), whatever the queue.

``--startlab-set pie:max_burst='"0ms"'`` (repeatable) changes a key of startlab's queue table, for
diagnostics only: the table then no longer has ns-3's defaults. ``--startlab-only`` runs startlab
alone (no ns-3 needed). ``--events S`` prints bench/ns3_compare.py's timeline of both first runs.

The C++ sinks are bench/ns3_aqm_cpp.py's and bench/ns3_cpp.py's (``ns3past``: the socket's traces);
the dumbbell, the bulk flow and the TCP defaults are imported from bench/ns3_compare.py. PIE draws
from a fixed ns-3 stream (``AssignStreams``, run ``--ns3-run``) and startlab's seed (``--seed``).
Results of the measured runs and every difference beyond tolerance: docs/QUEUES.md, "Against ns-3
3.44".
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ns3_compare as nc  # noqa: E402  (dumbbell, bulk flow, TCP defaults, startlab template)
from ns3_aqm_cpp import _CPP_AQM_HELPERS  # noqa: E402
from ns3_cpp import _CPP_HELPERS, _CPP_PAST_HELPERS  # noqa: E402

MSS = nc.MSS
LIMIT_PKTS = 1000  # the queue disc's MaxSize and startlab's limit
DEVICE_QUEUE = "1p"  # the bottleneck device's own queue under the queue disc (ns-3)
REVERSE_QUEUE = "1000p"  # the bottleneck's reverse device (ACKs; no queue disc)

PATHS = {
    "20M": {"bottleneck": "20Mbps", "access": "1Gbps", "rtt_ms": 40, "queue": LIMIT_PKTS},
    "100M": {"bottleneck": "100Mbps", "access": "1Gbps", "rtt_ms": 80, "queue": LIMIT_PKTS},
}
NS3_QUEUES = {"codel": "ns3::CoDelQueueDisc", "fq-codel": "ns3::FqCoDelQueueDisc", "pie": "ns3::PieQueueDisc"}
#: startlab's queue for each kind, ns-3 3.44's attribute defaults written out (startlab's own defaults
#: already agree except FQ-CoDel's limit). CoDel: Target, Interval, MinBytes, UseEcn. FQ-CoDel:
#: the same (MinBytes is its CoDel children's), UseEcn true, Flows, DropBatchSize, quantum = the
#: device MTU (1500); ns-3 has no memory limit, startlab's 32 MiB is never reached by 1000 packets.
#: PIE: QueueDelayReference, Tupdate, A, B, MaxBurstAllowance, UseEcn, MarkEcnThreshold,
#: UseDequeueRateEstimator false, DequeueThreshold, UseDerandomization, UseCapDropAdjustment. ns-3's
#: MeanPktSize (1000) counts only with a byte limit: with a packet limit its "no drop" safeguard is
#: at most 2 packets waiting, which startlab's `mtu = 1500` (2 x 1500 B) is with 1500 B packets.
STARTLAB_QUEUES = {
    "codel": 'kind = "codel", limit = "1000pkt", target = "5ms", interval = "100ms", mtu = 1500, ecn = false',
    "fq-codel": 'kind = "fq-codel", limit = "1000pkt", target = "5ms", interval = "100ms", mtu = 1500, '
    "ecn = true, flows = 1024, quantum = 1500, drop_batch = 64",
    "pie": 'kind = "pie", limit = "1000pkt", target = "15ms", t_update = "15ms", alpha = 0.125, '
    'beta = 1.25, max_burst = "150ms", ecn = false, mark_ecn_th = 0.1, estimator = "timestamps", '
    "dq_threshold = 16384, mtu = 1500, derandomize = false, cap_drop = true",
}
#: Issue 33 item 7's tolerances (relative difference from ns-3).
TOLERANCE = {"first_drop_s": 0.05, "exit_s": 0.05, "exit_cwnd": 0.05, "drops": 0.15, "sojourn_ms": 0.10}
METRICS = [  # key, label ({d}: the duration, {w}: the window before the first RTO)
    ("first_drop_s", "first drop, s"),
    ("exit_s", "startup exit (first reduction), s"),
    ("exit_cwnd", "cwnd at exit, segments"),
    ("drops", "drops in {d:g} s"),
    ("sojourn_ms", "mean sojourn, ms"),
    ("wait_ms", "mean wait to transmission start, ms (diagnostic)"),
    ("drops_window", "drops before {w:g} s (diagnostic)"),
    ("sojourn_window_ms", "mean sojourn before {w:g} s, ms (diagnostic)"),
]
WINDOW_KEYS = ("drops_window", "sojourn_window_ms")
BIN_S = 0.01  # the ns-3 sojourn bins of bench/ns3_aqm_cpp.py


@dataclass
class AqmOutcome:
    """One simulator's run of one combination."""

    recovery: str
    first_drop_s: float | None
    exit_s: float | None
    exit_cwnd: float | None
    drops: int  # TCP data packets dropped at the bottleneck during the run
    early_drops: int  # of those, the control law's
    marks: int
    sojourn_ms: float  # mean sojourn (ns-3: SojournTime trace; startlab: sojourn_mean)
    wait_ms: float  # mean wait from enqueue to transmission start
    rtos: int
    goodput_mbps: float
    sim_s: float
    wall_s: float
    t_su: float | None = None  # startlab only
    timed_out: bool = False
    events: list[tuple[float, str, float]] = field(default_factory=list)  # as ns3_compare.Outcome
    # Diagnostics over [0, window): the window ends at the first RTO of any run of the
    # combination in either simulator (where the two TCPs are known to part), else at the end.
    window_s: float | None = None
    drops_window: float | None = None
    sojourn_window_ms: float | None = None
    soj_bins: list[tuple[float, int]] = field(default_factory=list)  # ns-3: SojournTime per 10 ms
    seed: int = 1  # startlab's seed or ns-3's RngRun

    def first_rto(self) -> float | None:
        return next((t for t, k, _ in self.events if k == "rto"), None)


def queue_table(queue: str, overrides: dict[str, str] | None = None) -> str:
    """The body of startlab's inline queue table for ``queue``, with ``overrides`` (key -> TOML value)
    replacing or adding keys (``--startlab-set``, for diagnostics)."""
    pairs = dict(kv.split(" = ", 1) for kv in STARTLAB_QUEUES[queue].split(", "))
    pairs.update(overrides or {})
    return ", ".join(f"{k} = {v}" for k, v in pairs.items())


def startlab_toml(
    path: str, cc: str, queue: str, duration: float, recovery: str, seed: int = 1, overrides: dict[str, str] | None = None
) -> str:
    """The startlab scenario of one combination: bench/ns3_compare.py's template with the handshake,
    the queue, the recovery, the seed and the cwnd and seq traces."""
    p = PATHS[path]
    text = nc.STARTLAB_TOML.format(duration=duration, extra=", handshake = true" + nc.CC[cc][1], **p)
    for old, new in (
        (f'queue = {{ kind = "droptail", limit = "{p["queue"]}pkt" }}', f"queue = {{ {queue_table(queue, overrides)} }}"),
        ('recovery = "sack"', f"recovery = {json.dumps(recovery)}"),
        ("seed = 1\n", f"seed = {seed}\n"),
        ("cwnd = false\nseq = false", "cwnd = true\nseq = true"),
    ):
        assert old in text, f"bench/ns3_compare.py's STARTLAB_TOML no longer has {old!r}"
        text = text.replace(old, new)
    return text


def run_startlab(
    path: str, cc: str, queue: str, duration: float, recovery: str, seed: int = 1, overrides: dict[str, str] | None = None
) -> AqmOutcome:
    """Run one combination in startlab (``overrides``: see :func:`queue_table`)."""
    import numpy as np

    from startlab import _core

    sim = _core.Simulation(startlab_toml(path, cc, queue, duration, recovery, seed, overrides))
    t0 = time.perf_counter()
    sim.run()
    wall = time.perf_counter() - t0
    res = sim.results()
    flows, links = res["flows"], res["links"]
    b = list(links["link"]).index("bottleneck:left->right")
    seq = res["traces"]["seq"]
    dropped = list(res["seq_kinds"]).index("dropped")
    event, when, seqno = np.asarray(seq["event"]), np.asarray(seq["time"]), np.asarray(seq["seq"])
    drop_t = when[event == dropped]
    events = nc.startlab_timeline(res, [(float(t), "drop", float(s) / MSS) for t, s in zip(drop_t, seqno[event == dropped])])
    cwnd = flows["exit_cwnd_pkts"][0]
    exit_s = flows["startup_exit_time"][0]
    return AqmOutcome(
        recovery=str(flows["recovery"][0]),
        first_drop_s=float(drop_t[0]) if len(drop_t) else None,
        exit_s=exit_s,
        exit_cwnd=None if cwnd is None or exit_s is None else float(cwnd),
        drops=int(len(drop_t)),
        early_drops=int(links["early_drops"][b]),
        marks=int(links["marks"][b]),
        sojourn_ms=float(links["sojourn_mean"][b]) * 1e3,
        wait_ms=float(links["sojourn_mean"][b]) * 1e3,
        rtos=int(flows["timeouts"][0]),
        goodput_mbps=int(flows["bytes_delivered"][0]) * 8 / duration / 1e6,
        sim_s=sim.stats()["sim_time_ns"] / 1e9,
        wall_s=wall,
        t_su=None if flows["t_su"][0] is None else float(flows["t_su"][0]),
        events=sorted(events),
        seed=seed,
    )


def ns3_attribute_defaults(ns, type_name: str) -> dict[str, str]:
    """The attributes of an ns-3 TypeId with their initial values, as strings."""
    tid = ns.TypeId.LookupByName(type_name)
    out = {}
    for i in range(tid.GetAttributeN()):
        a = tid.GetAttribute(i)
        out[str(a.name)] = str(a.initialValue.SerializeToString(a.checker))
    return out


def run_ns3(ns, path: str, queue: str, duration: float, budget_s: float, recovery: str, stream: int) -> AqmOutcome:
    """Run one combination in ns-3 (``nc.ns3_setup_defaults`` already chose the TCP)."""
    import cppyy

    h, hp, ha = cppyy.gbl.ns3bench, cppyy.gbl.ns3past, cppyy.gbl.ns3aqm
    # bench/ns3_compare.py's dumbbell with flow control on the bottleneck and 1-packet device
    # queues there (its queue discs removed); then the AQM on the forward device.
    nodes, devs, ifaces = nc.ns3_dumbbell(ns, {**PATHS[path], "queue": int(DEVICE_QUEUE[:-1])})
    fwd, rev = devs[1].Get(0), devs[1].Get(1)
    qd = ha.Install(fwd, NS3_QUEUES[queue], f"{LIMIT_PKTS}p", rev, REVERSE_QUEUE)
    assert int(ha.DeviceQueuePackets(fwd)) == 1
    ha.AssignPieStream(qd, stream)
    sink_apps, bulk_apps = nc.ns3_bulk_flow(ns, nodes, ifaces)
    h.ConnectRx(devs[2].Get(1))  # the receiver's device: the watchdog's packet count
    hp.Setup(fwd, bulk_apps.Get(0), duration)  # socket traces (and the device queue's drops: none)
    ha.Setup(qd, fwd, duration)
    h.Start(budget_s, nc.WATCHDOG_PERIOD_S)
    t0 = time.perf_counter()
    ns.Simulator.Stop(ns.Seconds(duration))
    ns.Simulator.Run()
    wall = time.perf_counter() - t0
    if int(hp.Drops()) or int(hp.TcDrops()):
        print(
            f"WARNING: {int(hp.Drops())} drops in the bottleneck's device queue and {int(hp.TcDrops())} "
            "in the traffic-control layer; they are not in the counts",
            file=sys.stderr,
        )
    events = [(float(ha.DropT(i)), "drop", float(ha.DropSeq(i)) / MSS) for i in range(int(ha.DropCount()))]
    for i in range(int(hp.EvCount())):
        kind, value, t = int(hp.EvKind(i)), float(hp.EvV(i)), float(hp.EvT(i))
        if kind == 0:
            events.append((t, "ssthresh", value / MSS))
        elif kind == 1 and int(value) in (3, 4):  # TcpCongState_t: CA_RECOVERY 3, CA_LOSS 4
            events.append((t, "recovery" if int(value) == 3 else "rto", 0.0))
    first = float(ha.FirstDrop())
    out = AqmOutcome(
        recovery=nc.NS3_RECOVERY[recovery].removeprefix("ns3::"),
        first_drop_s=first if first >= 0 else None,
        exit_s=float(hp.ExitTime()) if hp.Exited() else None,
        exit_cwnd=int(hp.ExitCwnd()) / MSS if hp.Exited() else None,
        drops=int(ha.Drops()),
        early_drops=int(ha.EarlyDrops()),
        marks=int(ha.Marks()),
        sojourn_ms=float(ha.SojournMean()) * 1e3,
        wait_ms=float(ha.WaitMean()) * 1e3,
        rtos=int(hp.Rtos()),
        goodput_mbps=int(h.SinkTotalRx(sink_apps.Get(0))) * 8 / duration / 1e6,
        sim_s=ns.Simulator.Now().GetSeconds(),
        wall_s=wall,
        timed_out=bool(h.TimedOut()),
        events=sorted(events),
        soj_bins=[(float(ha.BinSum(i)), int(ha.BinN(i))) for i in range(int(ha.BinCount()))],
    )
    ns.Simulator.Destroy()
    return out


def fill_windows(sls: list[AqmOutcome], n3s: list[AqmOutcome], path: str, cc: str, queue: str, args) -> float:
    """Set the window diagnostics of every run: the window ends at the earliest first RTO of all
    runs (on a 10 ms boundary, the ns-3 bins'), or at the end of the run. startlab's mean sojourn
    over it comes from the same scenario run only that long."""
    rtos = [t for o in sls + n3s if (t := o.first_rto()) is not None]
    window = min(int(min(rtos) / BIN_S) * BIN_S, args.duration) if rtos else args.duration
    window = round(window, 2)
    for o in sls + n3s:
        o.window_s = window
        o.drops_window = sum(1 for t, k, _ in o.events if k == "drop" and t < window)
    for o in sls:
        if window < args.duration:
            short = run_startlab(path, cc, queue, window, args.startlab_recovery, o.seed, args.overrides.get(queue))
            o.sojourn_window_ms = short.sojourn_ms
        else:
            o.sojourn_window_ms = o.sojourn_ms
    nbins = round(window / BIN_S)
    for o in n3s:
        total = sum(b[0] for b in o.soj_bins[:nbins])
        n = sum(b[1] for b in o.soj_bins[:nbins])
        o.sojourn_window_ms = total / n * 1e3 if n else 0.0
    return window


def mean_of(runs: list[AqmOutcome]) -> dict:
    """Each metric's mean over the runs (None if any run has none), and its range."""
    out = {}
    for key, _ in METRICS:
        vals = [getattr(o, key) for o in runs]
        if any(v is None for v in vals):
            out[key] = (None, None, None)
        else:
            out[key] = (sum(vals) / len(vals), min(vals), max(vals))
    return out


def compare(sls: list[AqmOutcome], n3s: list[AqmOutcome]) -> dict:
    """Per metric: both simulators' means over their runs (and ranges), startlab's relative
    difference from ns-3, the tolerance and whether it is met (None where the issue gives no
    tolerance or a value is missing)."""
    a_all, b_all = mean_of(sls), mean_of(n3s)
    rows = {}
    for key, _ in METRICS:
        (a, a_lo, a_hi), (b, b_lo, b_hi) = a_all[key], b_all[key]
        diff = (a - b) / b if a is not None and b else None
        tol = TOLERANCE.get(key)
        ok = None if diff is None or tol is None else abs(diff) <= tol
        rows[key] = {
            "startlab": a, "ns3": b, "diff": diff, "tolerance": tol, "within": ok,
            "startlab_range": [a_lo, a_hi], "ns3_range": [b_lo, b_hi],
        }  # fmt: skip
    return rows


def _num(v, key: str) -> str:
    if v is None:
        return "–"
    if key.startswith("drops"):
        return f"{v:,.0f}" if float(v).is_integer() else f"{v:,.1f}"
    if key == "exit_cwnd":
        return f"{v:.1f}"
    if key.endswith("_s"):
        return f"{v:.4f}"
    return f"{v:.3f}"


def combo_markdown(rep: dict) -> str:
    """One combination's table (means, and ranges when there were several runs)."""
    d, w, many = rep["duration_s"], rep["window_s"], rep["runs"] > 1
    lines = ["| | startlab | ns-3 | difference | tolerance | within |", "|---|---:|---:|---:|---:|---|"]
    for key, label in METRICS:
        if key in WINDOW_KEYS and w >= d:
            continue
        r = rep["metrics"][key]
        cells = []
        for side in ("startlab", "ns3"):
            c = _num(r[side], key)
            lo, hi = r[f"{side}_range"]
            if many and lo is not None:
                c += f" ({_num(lo, key)}–{_num(hi, key)})"
            cells.append(c)
        diff = "–" if r["diff"] is None else f"{r['diff'] * 100:+.1f} %"
        tol = "–" if r["tolerance"] is None else f"{r['tolerance'] * 100:.0f} %"
        ok = "–" if r["within"] is None else ("yes" if r["within"] else "**no**")
        lines.append(f"| {label.format(d=d, w=w)} | {cells[0]} | {cells[1]} | {diff} | {tol} | {ok} |")
    return "\n".join(lines)


def summary_markdown(reps: list[dict]) -> str:
    """One row per combination: each metric's difference (startlab vs ns-3), bold where beyond
    tolerance; the window's end where it is before the end of the run."""
    names = ["first drop", "exit", "cwnd", "drops", "sojourn", "wait (diag.)", "drops to RTO (diag.)"]
    names.append("sojourn to RTO (diag.)")
    lines = [
        "| path | cc | queue | runs | " + " | ".join(names) + " | first RTO window s |",
        "|---|---|---|---:|" + "---:|" * (len(names) + 1),
    ]
    for rep in reps:
        cells = []
        for key, _ in METRICS:
            r = rep["metrics"][key]
            shown = r["diff"] is not None and not (key in WINDOW_KEYS and rep["window_s"] >= rep["duration_s"])
            c = f"{r['diff'] * 100:+.1f} %" if shown else "–"
            cells.append(f"**{c}**" if r["within"] is False else c)
        w = "–" if rep["window_s"] >= rep["duration_s"] else f"{rep['window_s']:g}"
        head = f"| {rep['path']} | {rep['cc']} | {rep['queue']} | {rep['runs']} | "
        lines.append(head + " | ".join(cells) + f" | {w} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--path", choices=["20M", "100M", "both"], default="both")
    ap.add_argument("--cc", choices=["cubic", "newreno", "both"], default="both")
    ap.add_argument("--queue", default="codel,fq-codel,pie", help="comma-separated: codel, fq-codel, pie")
    ap.add_argument("--duration", type=float, default=10.0, help="simulated seconds (default 10)")
    ap.add_argument("--json", action="store_true", help="print the results as JSON (notes to stderr)")
    ap.add_argument(
        "--startlab-recovery", default="ns3-prr", metavar="NAME", help="tcp.recovery of the startlab flow (default ns3-prr)"
    )
    ap.add_argument(
        "--ns3-recovery", choices=list(nc.NS3_RECOVERY), default="prr", help="ns-3's RecoveryType (default prr, ns-3's own)"
    )
    ap.add_argument(
        "--runs", type=int, default=1,
        help="PIE only (it draws at random; CoDel and FQ-CoDel do not): runs per simulator, startlab seeds --seed.., "
        "ns-3 RngRun --ns3-run..; the tables compare means",
    )
    ap.add_argument("--seed", type=int, default=1, help="startlab's seed (PIE's draws)")
    ap.add_argument("--ns3-run", type=int, default=1, help="ns-3's RngRun (PIE's draws)")
    ap.add_argument("--ns3-stream", type=int, default=0, help="the ns-3 stream index given to PIE")
    ap.add_argument(
        "--ns3-timeout", type=float, default=600.0, metavar="SECONDS", help="wall-clock budget of one ns-3 run"
    )
    ap.add_argument(
        "--startlab-set", action="append", default=[], metavar="QUEUE:KEY=VALUE",
        help="diagnostics: set a key of startlab's queue table, e.g. pie:max_burst='\"0ms\"' (the table then no "
        "longer has ns-3's defaults); repeatable",
    )
    ap.add_argument("--startlab-only", action="store_true", help="run startlab only (no ns-3 needed)")
    ap.add_argument(
        "--events", type=float, metavar="SECONDS",
        help="also print both first runs' ssthresh changes, recoveries, RTOs and drops per 50 ms up to SECONDS "
        "(bench/ns3_compare.py's timeline)",
    )
    args = ap.parse_args()  # fmt: skip
    queues = [q.strip() for q in args.queue.split(",") if q.strip()]
    bad = [q for q in queues if q not in NS3_QUEUES]
    if bad or not queues:
        ap.error(f"--queue: unknown {bad}; choose from {', '.join(NS3_QUEUES)}")
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    args.overrides = {}
    for item in args.startlab_set:
        q, _, kv = item.partition(":")
        key, eq, value = kv.partition("=")
        if q not in NS3_QUEUES or not eq or not key.strip():
            ap.error(f"--startlab-set {item!r}: expected QUEUE:KEY=VALUE with QUEUE one of {', '.join(NS3_QUEUES)}")
        args.overrides.setdefault(q, {})[key.strip()] = value.strip()
    paths = list(PATHS) if args.path == "both" else [args.path]
    ccs = ["cubic", "newreno"] if args.cc == "both" else [args.cc]
    combos = [(p, c, q) for p in paths for c in ccs for q in queues]
    out = sys.stderr if args.json else sys.stdout

    import startlab

    if args.startlab_only:
        for p, c, q in combos:
            for i in range(args.runs if q == "pie" else 1):
                r = run_startlab(p, c, q, args.duration, args.startlab_recovery, args.seed + i, args.overrides.get(q))
                vals = ", ".join(f"{k} {getattr(r, k)}" for k, _ in METRICS if k not in WINDOW_KEYS)
                print(f"{p} {c} {q} seed {r.seed}: {vals}, t_su {r.t_su}, first RTO {r.first_rto()}", file=out)
        return 0
    try:
        from ns import ns
    except ImportError:
        print("ns-3 Python bindings not found: `pip install ns3` is needed")
        return 2
    import cppyy

    for code in (_CPP_HELPERS, _CPP_PAST_HELPERS, _CPP_AQM_HELPERS):
        cppyy.cppdef(code)
    from importlib.metadata import version

    print(f"startlab {startlab.__version__}; ns-3 bindings: PyPI ns3 {version('ns3')}", file=out)
    defaults = {q: ns3_attribute_defaults(ns, NS3_QUEUES[q]) for q in queues}
    for q in queues:
        attrs = ", ".join(f"{k} {v}" for k, v in defaults[q].items() if k != "MaxSize")
        print(f"{NS3_QUEUES[q]} defaults (MaxSize set to {LIMIT_PKTS}p): {attrs}", file=out)
    reps = []
    for p, c, q in combos:
        pp, n = PATHS[p], (args.runs if q == "pie" else 1)
        print(
            f"\n== {p} ({pp['bottleneck']}, RTT {pp['rtt_ms']} ms), {c}, {q}: "
            f"startlab {queue_table(q, args.overrides.get(q))}; "
            f"ns-3 {NS3_QUEUES[q]} MaxSize {LIMIT_PKTS}p over a {DEVICE_QUEUE} device queue; {args.duration:g} s; "
            f"{n} run(s) each",
            file=out,
            flush=True,
        )
        over = args.overrides.get(q)
        sls = [run_startlab(p, c, q, args.duration, args.startlab_recovery, args.seed + i, over) for i in range(n)]
        n3s = []
        for i in range(n):
            ns.RngSeedManager.SetRun(args.ns3_run + i)
            nc.ns3_setup_defaults(ns, c, args.ns3_recovery)
            n3s.append(run_ns3(ns, p, q, args.duration, args.ns3_timeout, args.ns3_recovery, args.ns3_stream))
            n3s[-1].seed = args.ns3_run + i
            note = f" (PARTIAL: stopped at {n3s[-1].sim_s:.3f} s)" if n3s[-1].timed_out else ""
            print(f"wall s: startlab {sls[i].wall_s:.3f}, ns-3 {n3s[-1].wall_s:.1f}{note}", file=out, flush=True)
        window = fill_windows(sls, n3s, p, c, q, args)
        rep = {
            "path": p,
            "cc": c,
            "queue": q,
            "duration_s": args.duration,
            "runs": n,
            "window_s": window,
            "ns3_queue_disc": NS3_QUEUES[q],
            "ns3_defaults": defaults[q],
            "startlab_queue": queue_table(q, args.overrides.get(q)),
            "metrics": compare(sls, n3s),
            "startlab": [{k: v for k, v in asdict(o).items() if k not in ("events", "soj_bins")} for o in sls],
            "ns3": [{k: v for k, v in asdict(o).items() if k not in ("events", "soj_bins")} for o in n3s],
        }
        reps.append(rep)
        if args.events:
            nc.past_timeline(sls[0], n3s[0], args.events, out)
        for s_, n_ in zip(sls, n3s):
            print(
                f"startlab seed {s_.seed} / ns-3 run {n_.seed}: recovery {s_.recovery} / {n_.recovery}; early drops "
                f"{s_.early_drops} / {n_.early_drops}; marks {s_.marks} / {n_.marks}; RTOs {s_.rtos} / {n_.rtos} "
                f"(first {s_.first_rto()} / {n_.first_rto()}); goodput Mbit/s {s_.goodput_mbps:.2f} / "
                f"{n_.goodput_mbps:.2f}; startlab t_su {s_.t_su}",
                file=out,
            )
        if not args.json:
            print(combo_markdown(rep), flush=True)
    if args.json:
        print(json.dumps(reps, indent=2))
    else:
        print("\nsummary: startlab's difference from ns-3 (bold: beyond tolerance)")
        print(summary_markdown(reps))
    return 0


if __name__ == "__main__":
    sys.exit(main())
