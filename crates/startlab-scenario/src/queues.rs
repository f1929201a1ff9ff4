//! Queue kinds and their declared parameters: each kind states its name, summary, source and
//! typed parameters (kind, default, help, valid range) once, as the algorithms do
//! (`startlab_cc::decl`). The scenario check (resolve/queues.rs), `startlab queues` and the table
//! of docs/SCENARIOS.md are derived from [`DECLS`]. Every kind also takes `limit`, the buffer
//! (packets or bytes for drop-tail and RED, packets for the others).

use startlab_cc::decl::{AlgorithmInfo, Param, ParamInfo, Range};
use startlab_units::Dur;

/// RED's `min_th`: in the unit of `limit`.
pub const RED_MIN_TH: Param<u64> = Param::window("min_th", "5pkt", "Lower threshold of the average queue, in the unit of limit (packets or bytes).");
/// RED's `max_th`.
pub const RED_MAX_TH: Param<u64> = Param::window("max_th", "15pkt", "Upper threshold of the average queue (at most limit); the drop probability reaches max_p there.");
/// RED's `max_p`.
pub const RED_MAX_P: Param<f64> = Param::number("max_p", "0.1", "Drop probability at max_th.").range(Range::Between(0.0, 1.0));
/// RED's `w_q`.
pub const RED_W_Q: Param<f64> = Param::number("w_q", "0.002", "EWMA weight of the average queue.").range(Range::Between(0.0, 1.0));
/// RED's `gentle`.
pub const RED_GENTLE: Param<bool> = Param::flag("gentle", "true", "Gentle RED: the probability rises from max_p to 1 between max_th and 2·max_th.");
/// RED's `ns2_wait`.
pub const RED_NS2_WAIT: Param<bool> = Param::flag("ns2_wait", "false", "ns-2's wait_ spacing of drops instead of the paper's uniform spacing.");
/// `ecn` of RED (default off).
pub const RED_ECN: Param<bool> = Param::flag("ecn", "false", "Mark ECN-capable packets CE instead of dropping them.");

/// CoDel's and FQ-CoDel's `target`.
pub const CODEL_TARGET: Param<Dur> = Param::duration("target", "5ms", "Acceptable standing queue delay (must be below interval).");
/// CoDel's and FQ-CoDel's `interval`.
pub const CODEL_INTERVAL: Param<Dur> = Param::duration("interval", "100ms", "How long the sojourn time must stay above target before dropping; the control law's base.");
/// CoDel's `mtu`: a queue of at most this many bytes is never dropped from.
pub const CODEL_MTU: Param<u64> = Param::integer("mtu", "1500", "Bytes: a queue holding at most this much is never dropped from (RFC 8289's MAXPACKET).").range(Range::AtLeast(1.0));
/// CoDel's `ecn` (ns-3's default: off).
pub const CODEL_ECN: Param<bool> = Param::flag("ecn", "false", "Mark ECN-capable packets CE instead of dropping them.");
/// FQ-CoDel's `ecn` (Linux's and ns-3's default: on).
pub const FQ_ECN: Param<bool> = Param::flag("ecn", "true", "Mark ECN-capable packets CE instead of dropping them.");
/// FQ-CoDel's `flows`.
pub const FQ_FLOWS: Param<u64> = Param::integer("flows", "1024", "Flow queues the 5-tuple hash maps into (flows that collide share one).").range(Range::Between(1.0, 65536.0));
/// FQ-CoDel's `quantum`.
pub const FQ_QUANTUM: Param<u64> = Param::integer("quantum", "1500", "Bytes a flow queue may send per round of the deficit round robin (at least mtu).").range(Range::AtLeast(1.0));
/// FQ-CoDel's `memory_limit`.
pub const FQ_MEMORY_LIMIT: Param<u64> = Param::window("memory_limit", "32MiB", "Most bytes held in all flow queues together (Linux's memory_limit).").range(Range::AtLeast(1.0));
/// FQ-CoDel's `drop_batch`.
pub const FQ_DROP_BATCH: Param<u64> = Param::integer("drop_batch", "64", "Most packets one overflow drops from the fattest flow queue.").range(Range::AtLeast(1.0));

/// PIE's `target` (QDELAY_REF).
pub const PIE_TARGET: Param<Dur> = Param::duration("target", "15ms", "The latency target the drop probability steers the queueing delay to.");
/// PIE's `t_update`.
pub const PIE_T_UPDATE: Param<Dur> = Param::duration("t_update", "15ms", "Period of the drop-probability update.");
/// PIE's `alpha`.
pub const PIE_ALPHA: Param<f64> = Param::number("alpha", "0.125", "Weight of the distance to target per update, in Hz (Linux's alpha 2 is 0.125).").range(Range::AtLeast(0.0));
/// PIE's `beta`.
pub const PIE_BETA: Param<f64> = Param::number("beta", "1.25", "Weight of the delay's trend per update, in Hz (Linux's beta 20 is 1.25).").range(Range::AtLeast(0.0));
/// PIE's `max_burst`.
pub const PIE_MAX_BURST: Param<Dur> = Param::duration("max_burst", "150ms", "Burst allowance: no early drop for this long after the queue was calm.");
/// PIE's `ecn`.
pub const PIE_ECN: Param<bool> = Param::flag("ecn", "false", "Mark ECN-capable packets instead of dropping them while the probability is at most mark_ecn_th.");
/// PIE's `mark_ecn_th`.
pub const PIE_MARK_ECN_TH: Param<f64> = Param::number("mark_ecn_th", "0.1", "Drop probability above which ECN-capable packets are dropped too.").range(Range::Between(0.0, 1.0));
/// PIE's delay estimator.
pub const PIE_ESTIMATOR: Param<&'static str> = Param::choice("estimator", &["timestamps", "departure-rate"], "\"timestamps\"", "Queueing delay from each packet's sojourn time, or from the measured departure rate (RFC 8033 §5.2).");
/// PIE's `dq_threshold`.
pub const PIE_DQ_THRESHOLD: Param<u64> = Param::integer("dq_threshold", "16384", "Bytes of one departure-rate measurement cycle.").range(Range::AtLeast(1.0));
/// PIE's `mtu` (MEAN_PKTSIZE of the 2-packet safeguard).
pub const PIE_MTU: Param<u64> = Param::integer("mtu", "1500", "Bytes: no early drop while at most twice this much waits.").range(Range::AtLeast(1.0));
/// PIE's derandomization.
pub const PIE_DERANDOMIZE: Param<bool> = Param::flag("derandomize", "false", "Drop on the accumulated probability (RFC 8033 §5.4).");
/// PIE's cap drop adjustment.
pub const PIE_CAP_DROP: Param<bool> = Param::flag("cap_drop", "true", "From a 10% probability, one update raises it by at most 2% (RFC 8033 §5.5).");

/// DualPI2's `target`.
pub const DUALPI2_TARGET: Param<Dur> = Param::duration("target", "15ms", "The Classic queue's delay target of the PI² controller.");
/// DualPI2's `t_update`.
pub const DUALPI2_T_UPDATE: Param<Dur> = Param::duration("t_update", "16ms", "Period of the base probability's update.");
/// DualPI2's `alpha`.
pub const DUALPI2_ALPHA: Param<f64> = Param::number("alpha", "0.16", "Integral gain, Hz.").range(Range::AtLeast(0.0));
/// DualPI2's `beta`.
pub const DUALPI2_BETA: Param<f64> = Param::number("beta", "3.2", "Proportional gain, Hz.").range(Range::AtLeast(0.0));
/// DualPI2's coupling factor.
pub const DUALPI2_K: Param<f64> = Param::number("k", "2", "Coupling factor: the L queue's coupled marking probability is k·p'.").range(Range::Above(0.0));
/// DualPI2's step threshold.
pub const DUALPI2_STEP: Param<Dur> = Param::duration("step_thresh", "1ms", "The L queue marks every packet that waited longer than this.");
/// DualPI2's scheduler shift.
pub const DUALPI2_TSHIFT: Param<Dur> = Param::duration("tshift", "50ms", "Time-shifted FIFO: the Classic head goes first only when it waited this much longer than the L head.");
/// DualPI2's classic ECN.
pub const DUALPI2_ECN: Param<bool> = Param::flag("ecn", "true", "Mark ECT(0) packets in the Classic queue instead of dropping them (not in overload).");
/// DualPI2's overload rule.
pub const DUALPI2_DROP_ON_OVERLOAD: Param<bool> = Param::flag("drop_on_overload", "true", "In overload, drop from both queues (RFC 9332 §4.2.3); off: hold the probability and let the buffer overflow.");

/// One queue kind.
#[derive(Clone, Copy, Debug)]
pub struct QueueDecl {
    /// Name, summary, source and parameters, in the algorithms' form (role `queue`).
    pub info: AlgorithmInfo,
    /// Default `limit` when the scenario leaves it out (`None`: it must be given).
    pub default_limit: Option<&'static str>,
    /// `limit` may be in bytes as well as packets.
    pub byte_limit: bool,
    /// L4S-aware (RFC 9330 §2): it classifies ECT(1) into a queue of its own with shallow marking
    /// (DualPI2, RFC 9332 §2.3). An L4S flow on a path without one is marked as an ECT(0) flow
    /// is, and the run says so in its warnings.
    pub l4s: bool,
}

/// Every queue kind, in the order the docs list them.
pub static DECLS: &[QueueDecl] = &[
    QueueDecl {
        info: AlgorithmInfo { name: "droptail", role: "queue", summary: "FIFO that drops arrivals when full.", source: "—", params: &[] },
        default_limit: None,
        byte_limit: true,
        l4s: false,
    },
    QueueDecl {
        info: AlgorithmInfo {
            name: "red",
            role: "queue",
            summary: "Random Early Detection with the gentle option and ECN marking; decides at arrival.",
            source: "Floyd & Jacobson 1993; ALGORITHMS.md §17",
            params: &[RED_MIN_TH.info, RED_MAX_TH.info, RED_MAX_P.info, RED_W_Q.info, RED_GENTLE.info, RED_ECN.info, RED_NS2_WAIT.info],
        },
        default_limit: None,
        byte_limit: true,
        l4s: false,
    },
    QueueDecl {
        info: AlgorithmInfo {
            name: "codel",
            role: "queue",
            summary: "Drops (or marks) at dequeue once the sojourn time has stayed above target for an interval, ever closer (interval/√count).",
            source: "RFC 8289",
            params: &[CODEL_TARGET.info, CODEL_INTERVAL.info, CODEL_MTU.info, CODEL_ECN.info],
        },
        default_limit: Some("1000pkt"),
        byte_limit: false,
        l4s: false,
    },
    QueueDecl {
        info: AlgorithmInfo {
            name: "fq-codel",
            role: "queue",
            summary: "Per-flow queues with CoDel each, served by deficit round robin, new flows first; overflow drops from the fattest queue.",
            source: "RFC 8290",
            params: &[CODEL_TARGET.info, CODEL_INTERVAL.info, CODEL_MTU.info, FQ_ECN.info, FQ_FLOWS.info, FQ_QUANTUM.info, FQ_MEMORY_LIMIT.info, FQ_DROP_BATCH.info],
        },
        default_limit: Some("10240pkt"),
        byte_limit: false,
        l4s: false,
    },
    QueueDecl {
        info: AlgorithmInfo {
            name: "pie",
            role: "queue",
            summary: "Drops (or marks) arrivals with a probability a PI controller updates every t_update from the queueing delay; burst allowance.",
            source: "RFC 8033",
            params: &[
                PIE_TARGET.info,
                PIE_T_UPDATE.info,
                PIE_ALPHA.info,
                PIE_BETA.info,
                PIE_MAX_BURST.info,
                PIE_ECN.info,
                PIE_MARK_ECN_TH.info,
                PIE_ESTIMATOR.info,
                PIE_DQ_THRESHOLD.info,
                PIE_MTU.info,
                PIE_DERANDOMIZE.info,
                PIE_CAP_DROP.info,
            ],
        },
        default_limit: Some("1000pkt"),
        byte_limit: false,
        l4s: false,
    },
    QueueDecl {
        info: AlgorithmInfo {
            name: "dualpi2",
            role: "queue",
            summary: "L4S dual queue: ECT(1)/CE to a shallow L queue with a step mark and k·p' coupled marks, the rest to a Classic queue with p'²; time-shifted FIFO.",
            source: "RFC 9332",
            params: &[DUALPI2_TARGET.info, DUALPI2_T_UPDATE.info, DUALPI2_ALPHA.info, DUALPI2_BETA.info, DUALPI2_K.info, DUALPI2_STEP.info, DUALPI2_TSHIFT.info, DUALPI2_ECN.info, DUALPI2_DROP_ON_OVERLOAD.info],
        },
        default_limit: Some("10000pkt"),
        byte_limit: false,
        l4s: true,
    },
];

/// The declaration of queue kind `name`.
pub fn decl(name: &str) -> Option<&'static QueueDecl> {
    DECLS.iter().find(|d| d.info.name == name)
}

/// Every kind's parameters, for listing.
pub fn infos() -> impl Iterator<Item = &'static AlgorithmInfo> {
    DECLS.iter().map(|d| &d.info)
}

/// The declared parameter `name` of `kind`.
pub fn param(kind: &QueueDecl, name: &str) -> Option<&'static ParamInfo> {
    kind.info.params.iter().find(|p| p.name == name)
}
