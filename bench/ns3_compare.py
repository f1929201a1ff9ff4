"""Speed comparison of startlab and ns-3 on the same single-flow dumbbell scenario.

    python bench/ns3_compare.py [--scenario 100M|1G|both] [--duration SECONDS] [--repeat N]

Needs startlab installed and ns-3's Python bindings (``pip install ns3``, cppyy based; the first
``from ns import ns`` compiles bindings and takes a while). Nothing is downloaded at run time.

For each scenario both simulators simulate one bulk TCP NewReno flow (SACK, MSS 1448 B, initial
window 10, ACK every packet, initial ssthresh infinite) through sender -- access -- router --
bottleneck -- router -- access -- receiver, drop-tail queue at the bottleneck, the whole RTT on the
bottleneck. Wall time is measured around the run only (startlab ``Simulation.run()``, ns-3
``Simulator.Run()``); building the scenario is reported separately as setup. "Delivered" counts the
data packets that arrive at the receiver (startlab: engine counter; ns-3: a C++ trace sink on the
receiver's PointToPoint device counting packets larger than 200 B, i.e. data segments, so the
counting costs no Python call per packet).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass, field

MSS = 1448

SCENARIOS = {
    # name: bottleneck rate, access rate, RTT (ms, all on the bottleneck), bottleneck queue (pkts)
    "100M": dict(bottleneck="100Mbps", access="1Gbps", rtt_ms=80, queue=1000),
    "1G": dict(bottleneck="1Gbps", access="10Gbps", rtt_ms=50, queue=4167),
}
ACCESS_QUEUE = 100000  # startlab's default access-link queue (packets); never fills here

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
tcp = {{ recovery = "sack", mss = "1448B", header = "52B", initial_window = 10, ack = "every-packet" }}
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
    # (simulated end of chunk s, wall s of the chunk, data packets delivered so far); with --profile
    chunks: list[tuple[float, float, int]] = field(default_factory=list)

    def throughput(self, duration: float) -> float:
        return self.app_bytes * 8 / duration


def run_startlab(params: dict, duration: float, nchunks: int = 0) -> Run:
    """Run the scenario in startlab; with ``nchunks`` > 0 advance in that many equal steps of
    simulated time and record the wall time of each (a separate, profiling run)."""
    from startlab import _core

    text = STARTLAB_TOML.format(duration=duration, **params)
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
    else:
        sim.run()
    t2 = time.perf_counter()
    stats = sim.stats()
    flows = sim.results()["flows"]
    return Run(
        setup_s=t1 - t0,
        wall_s=t2 - t1,
        delivered=int(stats["delivered_packets"]),
        app_bytes=int(flows["bytes_delivered"][0]),
        events=int(stats["events"]),
        chunks=chunks,
    )


_CPP_HELPERS = r"""
namespace ns3bench {
static uint64_t g_data_rx = 0;
void CountRx(ns3::Ptr<const ns3::Packet> p) { if (p->GetSize() > 200) ++g_data_rx; }
void Reset() { g_data_rx = 0; }
uint64_t DataRx() { return g_data_rx; }
void ConnectRx(ns3::Ptr<ns3::NetDevice> dev) {
    dev->TraceConnectWithoutContext("MacRx", ns3::MakeCallback(&CountRx));
}
uint64_t SinkTotalRx(ns3::Ptr<ns3::Application> app) {
    return ns3::DynamicCast<ns3::PacketSink>(app)->GetTotalRx();
}
uint64_t EventCount() { return ns3::Simulator::GetEventCount(); }
}
"""


def ns3_setup_defaults(ns) -> None:
    """TCP configuration matching the startlab flow (set once per process)."""
    sd = ns.Config.SetDefault
    sd("ns3::TcpL4Protocol::SocketType", ns.TypeIdValue(ns.TypeId.LookupByName("ns3::TcpNewReno")))
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


def run_ns3(ns, params: dict, duration: float, nchunks: int = 0) -> Run:
    """Run the scenario in ns-3; ``nchunks`` as in :func:`run_startlab` (``Simulator.Run()`` is
    called once per chunk, each stopped by ``Simulator.Stop``)."""
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

    h.Reset()
    h.ConnectRx(devs[2].Get(1))  # receiver's device
    chunks = []
    t1 = time.perf_counter()
    if nchunks:
        for i in range(1, nchunks + 1):
            end = duration * i / nchunks
            ns.Simulator.Stop(ns.Seconds(end) - ns.Simulator.Now())
            c0 = time.perf_counter()
            ns.Simulator.Run()
            c1 = time.perf_counter()
            chunks.append((end, c1 - c0, int(h.DataRx())))
            print(f"  ns-3 {end:g} s simulated: chunk wall {c1 - c0:.2f} s", file=sys.stderr, flush=True)
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
        "--profile",
        type=int,
        default=0,
        metavar="N",
        help="also run each simulator once more in N equal chunks of simulated time and print the "
        "wall time of each chunk (shows where the time goes)",
    )
    args = ap.parse_args()

    try:
        import startlab
    except ImportError:
        print("startlab is not importable: build it with `maturin develop --release`", file=sys.stderr)
        return 2
    t_import = time.perf_counter()
    try:
        from ns import ns
    except ImportError:
        print("ns-3 Python bindings not found: `pip install ns3` is needed", file=sys.stderr)
        return 2
    t_import = time.perf_counter() - t_import
    import cppyy

    cppyy.cppdef(_CPP_HELPERS)
    ns3_setup_defaults(ns)

    try:
        from importlib.metadata import version

        ns3_version = version("ns3")
    except Exception:
        ns3_version = "unknown"
    print(f"startlab {startlab.__version__}; ns-3 (PyPI ns3) {ns3_version}; "
          f"ns-3 import took {t_import:.1f} s (not counted)")

    names = ["100M", "1G"] if args.scenario == "both" else [args.scenario]
    dur = args.duration
    rows = []
    for name in names:
        p = SCENARIOS[name]
        print(f"\n== {name}: bottleneck {p['bottleneck']}, access {p['access']}, RTT {p['rtt_ms']} ms "
              f"(all on the bottleneck), drop-tail {p['queue']} pkt, {dur:g} s simulated, "
              f"repeat {args.repeat}")
        sl = median_run([run_startlab(p, dur) for _ in range(args.repeat)])
        n3 = median_run([run_ns3(ns, p, dur) for _ in range(args.repeat)])
        hdr = f"{'':10}{'setup s':>9}{'wall s':>9}{'delivered':>11}{'pkts/wall-s':>13}" \
              f"{'events':>11}{'throughput':>14}"
        print(hdr)
        for label, r in (("startlab", sl), ("ns-3", n3)):
            print(f"{label:10}{r.setup_s:9.3f}{r.wall_s:9.3f}{r.delivered:11d}"
                  f"{r.delivered / r.wall_s:13,.0f}{r.events:11d}"
                  f"{r.throughput(dur) / 1e6:10.2f} Mbps")
        speed = (sl.delivered / sl.wall_s) / (n3.delivered / n3.wall_s)
        tput = sl.throughput(dur) / n3.throughput(dur)
        print(f"ratio startlab/ns-3: delivered pkts per wall-second x{speed:.1f}, "
              f"wall time x{sl.wall_s / n3.wall_s:.3f}, throughput {tput:.3f}")
        if not 0.85 <= tput <= 1.15:
            print(f"WARNING: throughputs differ by more than 15% ({tput:.3f}); the two runs may not "
                  "simulate the same thing")
        rows.append((name, sl, n3, speed, tput))
        if args.profile:
            psl = run_startlab(p, dur, args.profile)
            pn3 = run_ns3(ns, p, dur, args.profile)
            print(f"profile ({args.profile} chunks; a separate run of each):")
            print(f"{'sim. time s':>12}{'startlab wall s':>17}{'delivered':>11}"
                  f"{'ns-3 wall s':>13}{'delivered':>11}")
            for (end, w1, d1), (_, w2, d2) in zip(psl.chunks, pn3.chunks):
                print(f"{end:12g}{w1:17.3f}{d1:11d}{w2:13.3f}{d2:11d}")

    print("\nsummary (markdown):")
    print("| scenario | simulator | wall s | delivered pkts | pkts / wall-s | throughput Mbps |")
    print("|---|---|---:|---:|---:|---:|")
    for name, sl, n3, speed, tput in rows:
        for label, r in (("startlab", sl), ("ns-3", n3)):
            print(f"| {name} | {label} | {r.wall_s:.3f} | {r.delivered:,} | "
                  f"{r.delivered / r.wall_s:,.0f} | {r.throughput(dur) / 1e6:.1f} |")
        print(f"| {name} | **startlab / ns-3** | | | **x{speed:.1f}** | {tput:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
