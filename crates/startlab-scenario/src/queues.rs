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

/// One queue kind.
#[derive(Clone, Copy, Debug)]
pub struct QueueDecl {
    /// Name, summary, source and parameters, in the algorithms' form (role `queue`).
    pub info: AlgorithmInfo,
    /// Default `limit` when the scenario leaves it out (`None`: it must be given).
    pub default_limit: Option<&'static str>,
    /// `limit` may be in bytes as well as packets.
    pub byte_limit: bool,
}

/// Every queue kind, in the order the docs list them.
pub static DECLS: &[QueueDecl] = &[
    QueueDecl {
        info: AlgorithmInfo { name: "droptail", role: "queue", summary: "FIFO that drops arrivals when full.", source: "—", params: &[] },
        default_limit: None,
        byte_limit: true,
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
