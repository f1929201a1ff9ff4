"""Speed comparison of startlab and ns-3 on the same single-flow dumbbell scenario.

    python bench/ns3_compare.py [--scenario 100M|1G|both] [--duration SECONDS] [--repeat N]
                                [--ns3-timeout SECONDS] [--profile N] [--cc newreno|cubic]

Needs startlab installed and ns-3's Python bindings (``pip install ns3``, cppyy based; the first
``from ns import ns`` compiles bindings and takes a while). Nothing is downloaded at run time.

For each scenario both simulators simulate one bulk TCP NewReno flow (SACK, MSS 1448 B, initial
window 10, ACK every packet, initial ssthresh infinite) through sender -- access -- router --
bottleneck -- router -- access -- receiver, drop-tail queue at the bottleneck, the whole RTT on the
bottleneck. With ``--cc cubic`` the flow is TCP CUBIC after plain slow start instead (ns-3's
``TcpCubic`` with HyStart off; C 0.4, beta 0.7 and fast convergence on both sides), so slow start
overshoots and loses about a buffer's worth of packets at once. Wall time is measured around the
run only (startlab ``Simulation.run()``, ns-3 ``Simulator.Run()``); building the scenario is
reported separately as setup. "Delivered" counts the data packets that arrive at the receiver
(startlab: engine counter; ns-3: a C++ trace sink on the receiver's PointToPoint device counting
packets larger than 200 B, i.e. data segments, so the counting costs no Python call per packet).

ns-3 can take very long on these scenarios (its SACK scoreboard is a linked list walked from the
head, and slow start overshoots to thousands of segments in flight), so its run has a wall-clock
budget (--ns3-timeout, default 600 s): a C++ watchdog (an event every 10 ms of simulated time, and
a check every 64 delivered packets) stops the run once the budget is spent, and the row is then
marked as partial, with the simulated time it reached.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field

MSS = 1448

SCENARIOS = {
    # name: bottleneck rate, access rate, RTT (ms, all on the bottleneck), bottleneck queue (pkts)
    "100M": {"bottleneck": "100Mbps", "access": "1Gbps", "rtt_ms": 80, "queue": 1000},
    "1G": {"bottleneck": "1Gbps", "access": "10Gbps", "rtt_ms": 50, "queue": 4167},
}
#: ``--cc``: congestion control of both simulators. ns-3 socket type; startlab ``tcp`` keys. CUBIC's
#: C, beta and fast convergence are startlab's defaults and ns-3's (set explicitly on both sides);
#: ns-3's HyStart is turned off, so both start with plain slow start and overshoot.
CUBIC_C, CUBIC_BETA, CUBIC_FAST_CONVERGENCE = 0.4, 0.7, True
CC = {
    "newreno": ("ns3::TcpNewReno", ""),
    "cubic": (
        "ns3::TcpCubic",
        f', congestion_avoidance = "cubic", cubic_c = {CUBIC_C}, cubic_beta = {CUBIC_BETA}, '
        f"cubic_fast_convergence = {str(CUBIC_FAST_CONVERGENCE).lower()}",
    ),
}
ACCESS_QUEUE = 100000  # startlab's default access-link queue (packets); never fills here
WATCHDOG_PERIOD_S = 0.01  # simulated seconds between ns-3 watchdog checks

STARTLAB_TOML = """\
seed = 1
duration = "{duration}s"
[topology]
kind = "dumbbell"
bottleneck_rate = "{bottleneck}"
rtt = "{rtt_ms}ms"
access_rate = "{access}"
queue = {{ kind = "droptail", limit = "{queue}pkt" }}
[[flows]]
name = "bulk"
tcp = {{ recovery = "sack", mss = "1448B", header = "52B", initial_window = 10, ack = "every-packet"{extra} }}
size = "infinite"
[trace]
cwnd = false
seq = false
queue = false
"""


@dataclass
class Run:
    setup_s: float
    wall_s: float
    delivered: int  # data packets arrived at the receiver
    app_bytes: int  # bytes delivered to the receiving application
    events: int
    sim_s: float  # simulated time reached (the duration unless the run was stopped early)
    timed_out: bool = False
    # (simulated end of chunk s, wall s of the chunk, data packets delivered so far); with --profile
    chunks: list[tuple[float, float, int]] = field(default_factory=list)

    def throughput(self) -> float:
        """Application-level throughput over the simulated time reached, bit/s."""
        return self.app_bytes * 8 / self.sim_s if self.sim_s > 0 else 0.0

    def rate(self) -> float:
        """Delivered data packets per wall-clock second of the run."""
        return self.delivered / self.wall_s if self.wall_s > 0 else 0.0


#: Extra startlab TCP keys (``--startlab-handshake`` adds ``, handshake = true``, ``--cc cubic``
#: the CUBIC keys).
STARTLAB_TCP_EXTRA = ""


def run_startlab(
    params: dict, duration: float, nchunks: int = 0, stop_s: float | None = None
) -> Run:
    """Run the scenario in startlab; with ``nchunks`` > 0 advance in that many equal steps of
    simulated time and record the wall time of each (a separate, profiling run); with ``stop_s``
    stop at that simulated time (to compare with a partial ns-3 run over the same span)."""
    from startlab import _core

    text = STARTLAB_TOML.format(duration=duration, extra=STARTLAB_TCP_EXTRA, **params)
    t0 = time.perf_counter()
    sim = _core.Simulation(text)
    t1 = time.perf_counter()
    chunks = []
    if nchunks:
        for i in range(1, nchunks + 1):
            c0 = time.perf_counter()
            sim.advance(round(duration * 1e9 * i / nchunks))
            c1 = time.perf_counter()
            chunks.append((duration * i / nchunks, c1 - c0, int(sim.stats()["delivered_packets"])))
    elif stop_s is not None:
        sim.advance(round(stop_s * 1e9))
    else:
        sim.run()
    t2 = time.perf_counter()
    stats = sim.stats()
    if stop_s is not None:
        # results() needs a finished run; the engine counts every delivered data packet as MSS
        # bytes (bytes_delivered == delivered_packets * MSS in a full run)
        app_bytes = int(stats["delivered_packets"]) * MSS
    else:
        app_bytes = int(sim.results()["flows"]["bytes_delivered"][0])
    return Run(
        setup_s=t1 - t0,
        wall_s=t2 - t1,
        delivered=int(stats["delivered_packets"]),
        app_bytes=app_bytes,
        events=int(stats["events"]),
        sim_s=stats["sim_time_ns"] / 1e9,
        chunks=chunks,
    )


_CPP_HELPERS = r"""
#include <chrono>
namespace ns3bench {
static uint64_t g_data_rx = 0;
static uint64_t g_watch_events = 0;
static double g_budget = 0;
static bool g_timed_out = false;
static ns3::Time g_period;
static std::chrono::steady_clock::time_point g_start;

uint64_t DataRx() { return g_data_rx; }
uint64_t SinkTotalRx(ns3::Ptr<ns3::Application> app) {
    return ns3::DynamicCast<ns3::PacketSink>(app)->GetTotalRx();
}
// Events executed by the simulator, less the watchdog's own.
uint64_t EventCount() { return ns3::Simulator::GetEventCount() - g_watch_events; }
bool TimedOut() { return g_timed_out; }

bool OverBudget() {
    if (g_timed_out) return true;
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - g_start).count();
    if (wall > g_budget) { g_timed_out = true; ns3::Simulator::Stop(); }
    return g_timed_out;
}
// The watchdog runs every g_period of simulated time and, since one such period can take minutes
// of wall time during ns-3's SACK recovery, also every 64 data packets at the receiver.
void Watch() {
    ++g_watch_events;
    if (!OverBudget()) ns3::Simulator::Schedule(g_period, &Watch);
}
void CountRx(ns3::Ptr<const ns3::Packet> p) {
    if (p->GetSize() > 200 && (++g_data_rx & 63) == 0) OverBudget();
}
void ConnectRx(ns3::Ptr<ns3::NetDevice> dev) {
    dev->TraceConnectWithoutContext("MacRx", ns3::MakeCallback(&CountRx));
}
// Reset the counters and arm the wall-clock watchdog (call just before the first Run()).
void Start(double budget_s, double period_s) {
    g_data_rx = 0; g_watch_events = 0; g_timed_out = false; g_budget = budget_s;
    g_period = ns3::Seconds(period_s);
    ns3::Simulator::Schedule(g_period, &Watch);
    g_start = std::chrono::steady_clock::now();
}
}
"""


def ns3_setup_defaults(ns, cc: str = "newreno") -> None:
    """TCP configuration matching the startlab flow (set once per process)."""
    sd = ns.Config.SetDefault
    sd("ns3::TcpL4Protocol::SocketType", ns.TypeIdValue(ns.TypeId.LookupByName(CC[cc][0])))
    if cc == "cubic":
        sd("ns3::TcpCubic::HyStart", ns.BooleanValue(False))
        sd("ns3::TcpCubic::C", ns.DoubleValue(CUBIC_C))
        sd("ns3::TcpCubic::Beta", ns.DoubleValue(CUBIC_BETA))
        sd("ns3::TcpCubic::FastConvergence", ns.BooleanValue(CUBIC_FAST_CONVERGENCE))
    sd(
        "ns3::TcpL4Protocol::RecoveryType",
        ns.TypeIdValue(ns.TypeId.LookupByName("ns3::TcpClassicRecovery")),
    )
    sd("ns3::TcpSocket::SegmentSize", ns.UintegerValue(MSS))
    sd("ns3::TcpSocket::DelAckCount", ns.UintegerValue(1))
    sd("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(10))
    sd("ns3::TcpSocket::SndBufSize", ns.UintegerValue(64 << 20))
    sd("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(64 << 20))
    sd("ns3::TcpSocketBase::Sack", ns.BooleanValue(True))
    # Timestamps on (ns-3 default): 20 B IP + 32 B TCP = startlab's 52 B header, 1500 B IP packets.
    sd("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(True))


def run_ns3(ns, params: dict, duration: float, budget_s: float, nchunks: int = 0) -> Run:
    """Run the scenario in ns-3 with a wall-clock budget for the run; ``nchunks`` as in
    :func:`run_startlab` (``Simulator.Run()`` once per chunk, each ended by ``Simulator.Stop``)."""
    import cppyy

    h = cppyy.gbl.ns3bench
    t0 = time.perf_counter()
    nodes = ns.NodeContainer()
    nodes.Create(4)  # 0 sender, 1 left router, 2 right router, 3 receiver
    ns.InternetStackHelper().Install(nodes)

    def link(a: int, b: int, rate: str, delay: str, queue_pkts: int):
        p2p = ns.PointToPointHelper()
        p2p.SetDeviceAttribute("DataRate", ns.StringValue(rate))
        p2p.SetChannelAttribute("Delay", ns.StringValue(delay))
        p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", ns.StringValue(f"{queue_pkts}p"))
        return p2p.Install(nodes.Get(a), nodes.Get(b))

    one_way = f"{params['rtt_ms'] / 2}ms"
    devs = [
        link(0, 1, params["access"], "0ms", ACCESS_QUEUE),
        link(1, 2, params["bottleneck"], one_way, params["queue"]),
        link(2, 3, params["access"], "0ms", ACCESS_QUEUE),
    ]
    addr = ns.Ipv4AddressHelper()
    ifaces = []
    for i, d in enumerate(devs):
        addr.SetBase(ns.Ipv4Address(f"10.1.{i + 1}.0"), ns.Ipv4Mask("255.255.255.0"))
        ifaces.append(addr.Assign(d))
        # Assign() installs the default FqCoDel queue disc; remove it so the PointToPoint device's
        # drop-tail queue is the only buffer, as in startlab.
        ns.TrafficControlHelper().Uninstall(d)
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

    port = 5000
    sink_helper = ns.PacketSinkHelper(
        "ns3::TcpSocketFactory", ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo()
    )
    sink_apps = sink_helper.Install(nodes.Get(3))
    sink_apps.Start(ns.Seconds(0))
    bulk = ns.BulkSendHelper(
        "ns3::TcpSocketFactory", ns.InetSocketAddress(ifaces[2].GetAddress(1), port).ConvertTo()
    )
    bulk.SetAttribute("MaxBytes", ns.UintegerValue(0))
    bulk.SetAttribute("SendSize", ns.UintegerValue(MSS))
    bulk_apps = bulk.Install(nodes.Get(0))
    bulk_apps.Start(ns.Seconds(0))
    h.ConnectRx(devs[2].Get(1))  # the receiver's device

    chunks = []
    t1 = time.perf_counter()
    h.Start(budget_s, WATCHDOG_PERIOD_S)
    if nchunks:
        for i in range(1, nchunks + 1):
            end = duration * i / nchunks
            ns.Simulator.Stop(ns.Seconds(end) - ns.Simulator.Now())
            c0 = time.perf_counter()
            ns.Simulator.Run()
            c1 = time.perf_counter()
            chunks.append((ns.Simulator.Now().GetSeconds(), c1 - c0, int(h.DataRx())))
            if h.TimedOut():
                break
    else:
        ns.Simulator.Stop(ns.Seconds(duration))
        ns.Simulator.Run()
    t2 = time.perf_counter()
    result = Run(
        setup_s=t1 - t0,
        wall_s=t2 - t1,
        delivered=int(h.DataRx()),
        app_bytes=int(h.SinkTotalRx(sink_apps.Get(0))),
        events=int(h.EventCount()),
        sim_s=ns.Simulator.Now().GetSeconds(),
        timed_out=bool(h.TimedOut()),
        chunks=chunks,
    )
    ns.Simulator.Destroy()
    return result


def median_run(runs: list[Run]) -> Run:
    """The run with the median wall time (the simulations are deterministic; only time varies)."""
    return sorted(runs, key=lambda r: r.wall_s)[len(runs) // 2]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenario", choices=["100M", "1G", "both"], default="both")
    ap.add_argument("--duration", type=float, default=10.0, help="simulated seconds (default 10)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per simulator; median wall time")
    ap.add_argument(
        "--ns3-timeout",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="wall-clock budget of one ns-3 run (default 600); a run stopped by it is reported as "
        "partial",
    )
    ap.add_argument(
        "--profile",
        type=int,
        default=0,
        metavar="N",
        help="also run each simulator once more in N equal chunks of simulated time and print the "
        "wall time of each chunk (shows where the time goes)",
    )
    ap.add_argument(
        "--startlab-handshake",
        action="store_true",
        help="give the startlab flow a three-way handshake before data, as ns-3's TCP always has "
        "(off by default: the startlab flow sends from t = 0)",
    )
    ap.add_argument(
        "--cc",
        choices=list(CC),
        default="newreno",
        help="congestion control of both simulators (default newreno); cubic: CUBIC with plain "
        "slow start (ns-3 TcpCubic with HyStart off), C 0.4, beta 0.7, fast convergence",
    )
    args = ap.parse_args()
    global STARTLAB_TCP_EXTRA
    if args.startlab_handshake:
        STARTLAB_TCP_EXTRA += ", handshake = true"
    STARTLAB_TCP_EXTRA += CC[args.cc][1]

    try:
        import startlab
    except ImportError:
        print("startlab is not importable: build it with `maturin develop --release`")
        return 2
    t_import = time.perf_counter()
    try:
        from ns import ns
    except ImportError:
        print("ns-3 Python bindings not found: `pip install ns3` is needed")
        return 2
    t_import = time.perf_counter() - t_import
    import cppyy

    cppyy.cppdef(_CPP_HELPERS)
    ns3_setup_defaults(ns, args.cc)

    from importlib.metadata import PackageNotFoundError, version

    try:
        ns3_version = version("ns3")
    except PackageNotFoundError:
        ns3_version = "unknown"
    print(
        f"startlab {startlab.__version__}; ns-3 (PyPI ns3) {ns3_version}; "
        f"ns-3 import took {t_import:.1f} s (not counted); ns-3 budget {args.ns3_timeout:g} s per run"
    )

    names = ["100M", "1G"] if args.scenario == "both" else [args.scenario]
    dur = args.duration
    cc_note = ", TCP CUBIC without HyStart" if args.cc == "cubic" else ""
    rows = []
    for name in names:
        p = SCENARIOS[name]
        print(
            f"\n== {name}: bottleneck {p['bottleneck']}, access {p['access']}, RTT {p['rtt_ms']} ms "
            f"(all on the bottleneck), drop-tail {p['queue']} pkt, {dur:g} s simulated, "
            f"repeat {args.repeat}, startlab handshake {'on' if args.startlab_handshake else 'off'} "
            f"(ns-3: always){cc_note}",
            flush=True,
        )
        sl = median_run([run_startlab(p, dur) for _ in range(args.repeat)])
        n3 = median_run([run_ns3(ns, p, dur, args.ns3_timeout) for _ in range(args.repeat)])
        # If ns-3 was stopped early, also run startlab over the span ns-3 reached: the start
        # (slow-start overshoot and its recovery) is the expensive part for both simulators.
        same = run_startlab(p, dur, stop_s=n3.sim_s) if n3.timed_out else None
        ref = same or sl
        runs = [("startlab", sl)]
        if same:
            runs.append((f"startlab to {n3.sim_s:.3f} s", same))
        runs.append(("ns-3", n3))
        print(
            f"{'':22}{'setup s':>9}{'wall s':>10}{'sim. s':>8}{'delivered':>11}{'pkts/wall-s':>13}"
            f"{'events':>11}{'throughput':>16}"
        )
        for label, r in runs:
            note = "  PARTIAL: stopped by --ns3-timeout" if r.timed_out else ""
            print(
                f"{label:22}{r.setup_s:9.3f}{r.wall_s:10.3f}{r.sim_s:8.3f}{r.delivered:11d}"
                f"{r.rate():13,.0f}{r.events:11d}{r.throughput() / 1e6:11.2f} Mbps{note}"
            )
        speed = ref.rate() / n3.rate() if n3.rate() > 0 else float("inf")
        if same:
            # Compare delivered packets, not throughput: ns-3's sink counts in-order bytes only,
            # which lag far behind during a recovery; startlab's partial count is all arrivals.
            tput = same.delivered / n3.delivered if n3.delivered else float("inf")
            print(
                f"ratio startlab/ns-3 over the first {n3.sim_s:.3f} s simulated (ns-3 was stopped "
                f"after {n3.wall_s:.0f} s wall, at {n3.sim_s:.3f} of {dur:g} s simulated): "
                f"delivered pkts per wall-second x{speed:,.1f}, delivered pkts {tput:.3f}"
            )
        else:
            tput = sl.throughput() / n3.throughput() if n3.throughput() > 0 else float("inf")
            print(
                f"ratio startlab/ns-3: delivered pkts per wall-second x{speed:,.1f}, "
                f"throughput {tput:.3f}"
            )
            if not 0.85 <= tput <= 1.15:
                print(
                    f"WARNING: throughputs differ by more than 15% ({tput:.3f}); the two runs "
                    "may not simulate the same thing"
                )
        label = f"{name} CUBIC" if args.cc == "cubic" else name
        rows.append((label, runs, speed, tput, same is not None))
        if args.profile:
            psl = run_startlab(p, dur, args.profile)
            pn3 = run_ns3(ns, p, dur, args.ns3_timeout, args.profile)
            print(f"profile ({args.profile} chunks; a separate run of each):")
            print(
                f"{'sim. time s':>12}{'startlab wall s':>17}{'delivered':>11}"
                f"{'ns-3 wall s':>13}{'delivered':>11}"
            )
            for i, (end, w1, d1) in enumerate(psl.chunks):
                n3c = (
                    f"{pn3.chunks[i][1]:13.3f}{pn3.chunks[i][2]:11d}" if i < len(pn3.chunks) else ""
                )
                print(f"{end:12g}{w1:17.3f}{d1:11d}{n3c}")
            if pn3.timed_out:
                print(f"(ns-3 profile run stopped by --ns3-timeout at {pn3.sim_s:.3f} s simulated)")
        sys.stdout.flush()

    print("\nsummary (markdown):")
    print(
        "| scenario | simulator | wall s | simulated s | delivered pkts | pkts / wall-s | "
        "throughput Mbps |"
    )
    print("|---|---|---:|---:|---:|---:|---:|")
    for name, runs, speed, tput, partial in rows:
        for label, r in runs:
            mark = " (partial)" if r.timed_out else ""
            print(
                f"| {name} | {label}{mark} | {r.wall_s:.3f} | {r.sim_s:.3f} | {r.delivered:,} | "
                f"{r.rate():,.0f} | {r.throughput() / 1e6:.1f} |"
            )
        what = "delivered pkts" if partial else "throughput"
        span = " (same span)" if partial else ""
        print(
            f"| {name} | **startlab / ns-3**{span} | | | | **x{speed:,.0f}** | {what} {tput:.3f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
