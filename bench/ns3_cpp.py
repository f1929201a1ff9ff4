"""The C++ helpers bench/ns3_compare.py compiles into ns-3 through cppyy: the watchdog and the
receiver's packet count (`_CPP_HELPERS`), and for `--scenario past` the drop, ssthresh, congestion
state and event-log sinks (`_CPP_PAST_HELPERS`). Counting in C++ costs no Python call per packet."""

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


_CPP_PAST_HELPERS = r"""
namespace ns3past {
static uint64_t g_drops = 0, g_drops_early = 0, g_rtos = 0;
static ns3::Time g_split;
static uint32_t g_cwnd = 0, g_exit_cwnd = 0;
static bool g_exited = false;
static double g_exit_time = 0;

static uint64_t g_tc_drops = 0;
// --events: (time s, kind, value) of every ssthresh change (0, the new value in bytes), congestion
// state change (1, the new TcpCongState_t) and TCP drop at the bottleneck (2, its first data byte,
// counted from 0 as startlab counts: ns-3's sequence number less the SYN's one).
static std::vector<double> g_ev_t, g_ev_v;
static std::vector<int> g_ev_kind;
static void Ev(int kind, double v) {
    g_ev_t.push_back(ns3::Simulator::Now().GetSeconds()); g_ev_kind.push_back(kind); g_ev_v.push_back(v);
}
size_t EvCount() { return g_ev_t.size(); }
double EvT(size_t i) { return g_ev_t[i]; }
int EvKind(size_t i) { return g_ev_kind[i]; }
double EvV(size_t i) { return g_ev_v[i]; }
uint64_t Drops() { return g_drops; }
uint64_t TcDrops() { return g_tc_drops; }
void OnTcDrop(ns3::Ptr<const ns3::Packet>) { ++g_tc_drops; }
uint64_t DropsEarly() { return g_drops_early; }
uint64_t Rtos() { return g_rtos; }
bool Exited() { return g_exited; }
double ExitTime() { return g_exit_time; }
uint32_t ExitCwnd() { return g_exit_cwnd; }

// The bottleneck queue's Drop trace (PPP frames): count the TCP flow's packets (IPv4 protocol 6),
// not the UDP cross traffic.
void OnDrop(ns3::Ptr<const ns3::Packet> p) {
    ns3::Ptr<ns3::Packet> c = p->Copy();
    ns3::PppHeader ppp;
    c->RemoveHeader(ppp);
    ns3::Ipv4Header ip;
    c->RemoveHeader(ip);
    if (ip.GetProtocol() != 6) return;
    ns3::TcpHeader tcp;
    c->PeekHeader(tcp);
    Ev(2, double(tcp.GetSequenceNumber().GetValue()) - 1.0);
    ++g_drops;
    if (ns3::Simulator::Now() < g_split) ++g_drops_early;
}
void OnCwnd(uint32_t, uint32_t cwnd) { g_cwnd = cwnd; }
// The first decrease of ssthresh is the first congestion reduction: TcpSocketBase sets ssthresh
// before the recovery (or RTO) code lowers cwnd, so g_cwnd still holds the window before it.
// (Establishing the connection sets ssthresh to its initial value: an increase, ignored.)
void OnSsthresh(uint32_t before, uint32_t after) {
    Ev(0, after);
    if (!g_exited && after < before) {
        g_exited = true;
        g_exit_time = ns3::Simulator::Now().GetSeconds();
        g_exit_cwnd = g_cwnd;
    }
}
void OnCongState(ns3::TcpSocketState::TcpCongState_t, ns3::TcpSocketState::TcpCongState_t now) {
    Ev(1, now);
    if (now == ns3::TcpSocketState::CA_LOSS) ++g_rtos;
}
void HookSocket(ns3::Ptr<ns3::Application> app) {
    ns3::Ptr<ns3::Socket> s = ns3::DynamicCast<ns3::BulkSendApplication>(app)->GetSocket();
    if (!s) { ns3::Simulator::Schedule(ns3::MilliSeconds(1), &HookSocket, app); return; }
    s->TraceConnectWithoutContext("CongestionWindow", ns3::MakeCallback(&OnCwnd));
    s->TraceConnectWithoutContext("SlowStartThreshold", ns3::MakeCallback(&OnSsthresh));
    s->TraceConnectWithoutContext("CongState", ns3::MakeCallback(&OnCongState));
}
// Reset the counters and connect the sinks: the bottleneck device's queue now, the sender's socket
// once the application created it (it does at its start, t = 0; the SYN-ACK comes 80 ms later).
// Drops by the router's traffic-control layer are counted apart: there should be none, since the
// bottleneck device has no flow control (see ns3_dumbbell).
void Setup(ns3::Ptr<ns3::NetDevice> bottleneck, ns3::Ptr<ns3::Application> bulk, double split_s) {
    g_drops = g_drops_early = g_rtos = g_tc_drops = 0; g_cwnd = g_exit_cwnd = 0; g_exited = false;
    g_ev_t.clear(); g_ev_v.clear(); g_ev_kind.clear();
    g_exit_time = 0; g_split = ns3::Seconds(split_s);
    ns3::Ptr<ns3::Queue<ns3::Packet>> q =
        ns3::DynamicCast<ns3::PointToPointNetDevice>(bottleneck)->GetQueue();
    q->TraceConnectWithoutContext("Drop", ns3::MakeCallback(&OnDrop));
    bottleneck->GetNode()->GetObject<ns3::TrafficControlLayer>()->TraceConnectWithoutContext(
        "TcDrop", ns3::MakeCallback(&OnTcDrop));
    ns3::Simulator::Schedule(ns3::MilliSeconds(1), &HookSocket, bulk);
}
}
"""
