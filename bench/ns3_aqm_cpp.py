"""The C++ sinks bench/ns3_aqm.py compiles into ns-3 through cppyy (`_CPP_AQM_HELPERS`): installing
the queue disc on the bottleneck device, and counting at it — drops (all, and those the control
law chose), marks, the mean of its ``SojournTime`` trace, and the mean wait from the queue disc's
``Enqueue`` to the device's ``PhyTxBegin`` (what startlab's ``sojourn_mean`` measures). The sender
socket's traces (first ssthresh reduction, cwnd before it, RTOs) are bench/ns3_cpp.py's
``ns3past`` sinks. Counting in C++ costs no Python call per packet."""

_CPP_AQM_HELPERS = r"""
#include <cstring>
#include <unordered_map>
namespace ns3aqm {
static ns3::Time g_split;
static uint64_t g_drops = 0, g_early = 0, g_marks = 0, g_soj_n = 0, g_wait_n = 0;
static double g_soj_sum = 0, g_wait_sum = 0, g_first_drop = -1;
static std::unordered_map<uint64_t, ns3::Time> g_enqueued;  // packet uid -> queue disc enqueue
// Every data drop before g_split: time, first data byte (counted from 0, as startlab), early.
static std::vector<double> g_drop_t, g_drop_seq;
static std::vector<int> g_drop_early;
// The SojournTime trace per 10 ms of simulated time (sum s, count), for means over a prefix.
static const double BIN_S = 0.01;
static std::vector<double> g_soj_bin_sum;
static std::vector<uint64_t> g_soj_bin_n;

uint64_t Drops() { return g_drops; }
uint64_t EarlyDrops() { return g_early; }
uint64_t Marks() { return g_marks; }
double FirstDrop() { return g_first_drop; }
double SojournMean() { return g_soj_n ? g_soj_sum / g_soj_n : 0.0; }
uint64_t SojournCount() { return g_soj_n; }
double WaitMean() { return g_wait_n ? g_wait_sum / g_wait_n : 0.0; }
uint64_t WaitCount() { return g_wait_n; }
size_t DropCount() { return g_drop_t.size(); }
double DropT(size_t i) { return g_drop_t[i]; }
double DropSeq(size_t i) { return g_drop_seq[i]; }
int DropEarly(size_t i) { return g_drop_early[i]; }
// The SojournTime trace's 10 ms bins: how many, and each one's sum (s) and count.
size_t BinCount() { return g_soj_bin_n.size(); }
double BinSum(size_t i) { return g_soj_bin_sum[i]; }
uint64_t BinN(size_t i) { return g_soj_bin_n[i]; }

// A queue disc item holds the packet without its IP header (added when it leaves the queue disc),
// so the TCP header is at the front. Data segments are the items larger than 200 B.
static void OnDropReason(ns3::Ptr<const ns3::QueueDiscItem> item, const char* reason) {
    g_enqueued.erase(item->GetPacket()->GetUid());
    if (item->GetSize() <= 200 || ns3::Simulator::Now() >= g_split) return;
    // The control law's reasons (CoDel/FQ-CoDel "Target exceeded drop", PIE "Unforced drop", FQ-CoDel's
    // prefixed by "(Dropped by child queue disc) "); the rest are the buffer's (overlimit, forced).
    bool early = std::strstr(reason, "Target exceeded") || std::strstr(reason, "Unforced");
    ns3::TcpHeader tcp;
    item->GetPacket()->PeekHeader(tcp);
    if (g_first_drop < 0) g_first_drop = ns3::Simulator::Now().GetSeconds();
    ++g_drops;
    if (early) ++g_early;
    g_drop_t.push_back(ns3::Simulator::Now().GetSeconds());
    g_drop_seq.push_back(double(tcp.GetSequenceNumber().GetValue()) - 1.0);
    g_drop_early.push_back(early);
}
static void OnMark(ns3::Ptr<const ns3::QueueDiscItem>, const char*) { ++g_marks; }
static void OnSojourn(ns3::Time t) {
    g_soj_sum += t.GetSeconds(); ++g_soj_n;
    size_t bin = size_t(ns3::Simulator::Now().GetSeconds() / BIN_S);
    if (bin < g_soj_bin_n.size()) { g_soj_bin_sum[bin] += t.GetSeconds(); ++g_soj_bin_n[bin]; }
}
static void OnEnqueue(ns3::Ptr<const ns3::QueueDiscItem> item) {
    g_enqueued[item->GetPacket()->GetUid()] = ns3::Simulator::Now();
}
static void OnTxBegin(ns3::Ptr<const ns3::Packet> p) {
    auto it = g_enqueued.find(p->GetUid());
    if (it == g_enqueued.end()) return;
    g_wait_sum += (ns3::Simulator::Now() - it->second).GetSeconds();
    ++g_wait_n;
    g_enqueued.erase(it);
}

// Install queue disc `type` (MaxSize `max_size`, every other attribute at ns-3's default) as the
// root queue disc of `dev`; set the reverse device's drop-tail queue to `reverse_queue`.
ns3::Ptr<ns3::QueueDisc> Install(ns3::Ptr<ns3::NetDevice> dev, std::string type,
                                 std::string max_size, ns3::Ptr<ns3::NetDevice> reverse,
                                 std::string reverse_queue) {
    ns3::TrafficControlHelper tch;
    tch.SetRootQueueDisc(type, "MaxSize", ns3::QueueSizeValue(ns3::QueueSize(max_size)));
    ns3::QueueDiscContainer c = tch.Install(dev);
    ns3::DynamicCast<ns3::PointToPointNetDevice>(reverse)->GetQueue()->SetMaxSize(
        ns3::QueueSize(reverse_queue));
    return c.Get(0);
}
// PIE's uniform draws from a fixed stream, whatever ran before in this process.
int64_t AssignPieStream(ns3::Ptr<ns3::QueueDisc> qd, int64_t stream) {
    ns3::Ptr<ns3::PieQueueDisc> pie = ns3::DynamicCast<ns3::PieQueueDisc>(qd);
    return pie ? pie->AssignStreams(stream) : 0;
}
// The device's own queue size in packets (a check that the bottleneck's is 1).
uint32_t DeviceQueuePackets(ns3::Ptr<ns3::NetDevice> dev) {
    return ns3::DynamicCast<ns3::PointToPointNetDevice>(dev)->GetQueue()->GetMaxSize().GetValue();
}

// Reset the counters and connect the sinks to the root queue disc `qd` of device `dev`; drops are
// counted before `split_s` simulated seconds.
void Setup(ns3::Ptr<ns3::QueueDisc> qd, ns3::Ptr<ns3::NetDevice> dev, double split_s) {
    g_split = ns3::Seconds(split_s);
    g_drops = g_early = g_marks = g_soj_n = g_wait_n = 0;
    g_soj_sum = g_wait_sum = 0; g_first_drop = -1;
    g_enqueued.clear(); g_drop_t.clear(); g_drop_seq.clear(); g_drop_early.clear();
    g_soj_bin_sum.assign(size_t(split_s / BIN_S) + 2, 0.0); g_soj_bin_n.assign(size_t(split_s / BIN_S) + 2, 0);
    qd->TraceConnectWithoutContext("DropBeforeEnqueue", ns3::MakeCallback(&OnDropReason));
    qd->TraceConnectWithoutContext("DropAfterDequeue", ns3::MakeCallback(&OnDropReason));
    qd->TraceConnectWithoutContext("Mark", ns3::MakeCallback(&OnMark));
    qd->TraceConnectWithoutContext("SojournTime", ns3::MakeCallback(&OnSojourn));
    qd->TraceConnectWithoutContext("Enqueue", ns3::MakeCallback(&OnEnqueue));
    dev->TraceConnectWithoutContext("PhyTxBegin", ns3::MakeCallback(&OnTxBegin));
}
}
"""
