//! Queue kinds of a link, checked against their declarations (queues.rs): drop-tail, RED (with
//! ECN marking), CoDel and FQ-CoDel.

use super::*;
use crate::queues::{self as decls, QueueDecl};
use crate::registry::{ParamInfo, ParamKind, ParamValue};

/// Packet size the RED defaults assume when a byte-mode queue leaves a threshold out (docs/QUEUES.md).
pub(super) const RED_DEFAULT_PACKET_BYTES: u64 = 1500;

/// A declared parameter of a queue, its default filled in and its range checked.
fn value(path: &str, q: &raw::Queue, p: &ParamInfo) -> R<ParamValue> {
    // Windows of a queue (memory_limit) count packets of 1500 bytes.
    tcp::param_value(path, p, q.params.get(p.name), RED_DEFAULT_PACKET_BYTES)
}

fn dur(path: &str, q: &raw::Queue, p: &startlab_cc::decl::Param<Dur>) -> R<Dur> {
    match value(path, q, &p.info)? {
        ParamValue::Dur(d) if d > Dur::ZERO => Ok(d),
        ParamValue::Dur(_) => err(format!("{path}.{}", p.info.name), "must be longer than 0s"),
        _ => unreachable!("a duration parameter resolves to a duration"),
    }
}

fn int(path: &str, q: &raw::Queue, p: &startlab_cc::decl::Param<u64>) -> R<u64> {
    match value(path, q, &p.info)? {
        ParamValue::Integer(n) | ParamValue::Bytes(n) => Ok(n),
        _ => unreachable!("an integer parameter resolves to an integer"),
    }
}

fn flag(path: &str, q: &raw::Queue, p: &startlab_cc::decl::Param<bool>) -> R<bool> {
    match value(path, q, &p.info)? {
        ParamValue::Bool(b) => Ok(b),
        _ => unreachable!("a flag resolves to a boolean"),
    }
}

fn number(path: &str, q: &raw::Queue, p: &startlab_cc::decl::Param<f64>) -> R<f64> {
    match value(path, q, &p.info)? {
        ParamValue::Number(x) => Ok(x),
        ParamValue::Integer(i) => Ok(i as f64),
        _ => unreachable!("a number parameter resolves to a number"),
    }
}

/// The `limit` of a queue of kind `d`: given, or the kind's default.
fn limit(path: &str, q: &raw::Queue, d: &QueueDecl) -> R<QueueLimit> {
    let given = match (q.limit, d.default_limit) {
        (Some(a), _) => a,
        (None, Some(text)) => serde_json::from_value(serde_json::Value::String(text.into())).expect("declared default limits parse"),
        (None, None) => return Err(missing(&format!("{path}.limit"))),
    };
    match given {
        // A FIFO may have no buffer at all (only a packet finding the link idle passes).
        Amount::Pkts(0) if !d.byte_limit => err(format!("{path}.limit"), "must hold at least one packet"),
        Amount::Pkts(n) => Ok(QueueLimit::Packets(n)),
        Amount::Bytes(b) if d.byte_limit => Ok(QueueLimit::Bytes(b)),
        Amount::Bytes(_) => err(format!("{path}.limit"), format!("a {:?} queue counts packets; give the limit in packets (\"1000pkt\")", d.info.name)),
        Amount::Keyword(k) => err(format!("{path}.limit"), format!("{k:?} is not a queue limit; expected packets (\"100pkt\"){}", if d.byte_limit { " or bytes (\"64KB\")" } else { "" })),
    }
}

pub(super) fn queue(path: &str, q: &raw::Queue) -> R<QueueSpec> {
    let Some(d) = decls::decl(&q.kind) else {
        return err(format!("{path}.kind"), format!("{:?} is not a known queue; expected {}", q.kind, tcp::quoted_alternatives(decls::DECLS.iter().map(|d| d.info.name))));
    };
    for key in q.params.keys() {
        if !d.info.params.iter().any(|p| p.name == key) {
            let owners: Vec<&'static str> = decls::DECLS.iter().filter(|o| o.info.params.iter().any(|p| p.name == key)).map(|o| o.info.name).collect();
            let takes = if d.info.params.is_empty() {
                "takes only limit".to_string()
            } else {
                format!("takes limit, {}", d.info.params.iter().map(|p| p.name).collect::<Vec<_>>().join(", "))
            };
            let hint = if owners.is_empty() { String::new() } else { format!("; {key} belongs to kind = {}", tcp::quoted_alternatives(owners)) };
            return err(format!("{path}.{key}"), format!("is not a parameter of a {:?} queue (it {takes}){hint}", d.info.name));
        }
    }
    let limit = limit(path, q, d)?;
    match d.info.name {
        "droptail" => Ok(QueueSpec::Droptail { limit }),
        "red" => red(path, q, limit),
        "codel" | "fq-codel" => {
            let target = dur(path, q, &decls::CODEL_TARGET)?;
            let interval = dur(path, q, &decls::CODEL_INTERVAL)?;
            if target >= interval {
                return err(format!("{path}.target"), format!("{target} must be below interval ({interval}): CoDel tolerates a standing queue of target for an interval"));
            }
            let mtu = int(path, q, &decls::CODEL_MTU)?;
            if d.info.name == "codel" {
                return Ok(QueueSpec::Codel { limit, target, interval, mtu, ecn: flag(path, q, &decls::CODEL_ECN)? });
            }
            let quantum = int(path, q, &decls::FQ_QUANTUM)?;
            if quantum < mtu {
                return err(format!("{path}.quantum"), format!("{quantum} bytes is below mtu ({mtu} bytes): a flow queue could not send a full packet per round"));
            }
            Ok(QueueSpec::FqCodel {
                limit,
                target,
                interval,
                mtu,
                ecn: flag(path, q, &decls::FQ_ECN)?,
                flows: int(path, q, &decls::FQ_FLOWS)?,
                quantum,
                memory_limit: int(path, q, &decls::FQ_MEMORY_LIMIT)?,
                drop_batch: int(path, q, &decls::FQ_DROP_BATCH)?,
            })
        }
        "pie" => {
            let target = dur(path, q, &decls::PIE_TARGET)?;
            let t_update = dur(path, q, &decls::PIE_T_UPDATE)?;
            Ok(QueueSpec::Pie {
                limit,
                target,
                t_update,
                alpha: number(path, q, &decls::PIE_ALPHA)?,
                beta: number(path, q, &decls::PIE_BETA)?,
                max_burst: match value(path, q, &decls::PIE_MAX_BURST.info)? {
                    ParamValue::Dur(d) => d,
                    _ => unreachable!("a duration parameter resolves to a duration"),
                },
                ecn: flag(path, q, &decls::PIE_ECN)?,
                mark_ecn_th: number(path, q, &decls::PIE_MARK_ECN_TH)?,
                timestamps: matches!(value(path, q, &decls::PIE_ESTIMATOR.info)?, ParamValue::Choice(c) if c == "timestamps"),
                dq_threshold: int(path, q, &decls::PIE_DQ_THRESHOLD)?,
                mtu: int(path, q, &decls::PIE_MTU)?,
                derandomize: flag(path, q, &decls::PIE_DERANDOMIZE)?,
                cap_drop: flag(path, q, &decls::PIE_CAP_DROP)?,
            })
        }
        "dualpi2" => {
            let target = dur(path, q, &decls::DUALPI2_TARGET)?;
            let step_thresh = dur(path, q, &decls::DUALPI2_STEP)?;
            if step_thresh >= target {
                return err(format!("{path}.step_thresh"), format!("{step_thresh} must be below target ({target}): the L queue is the shallow one"));
            }
            Ok(QueueSpec::DualPi2 {
                limit,
                target,
                t_update: dur(path, q, &decls::DUALPI2_T_UPDATE)?,
                alpha: number(path, q, &decls::DUALPI2_ALPHA)?,
                beta: number(path, q, &decls::DUALPI2_BETA)?,
                k: number(path, q, &decls::DUALPI2_K)?,
                step_thresh,
                tshift: match value(path, q, &decls::DUALPI2_TSHIFT.info)? {
                    ParamValue::Dur(d) => d,
                    _ => unreachable!("a duration parameter resolves to a duration"),
                },
                ecn: flag(path, q, &decls::DUALPI2_ECN)?,
                drop_on_overload: flag(path, q, &decls::DUALPI2_DROP_ON_OVERLOAD)?,
            })
        }
        other => unreachable!("queue kind {other} is declared but not resolved"),
    }
}

/// `kind = "red"`: thresholds in the unit of the limit, lab defaults of ALGORITHMS.md §17.1.
pub(super) fn red(path: &str, q: &raw::Queue, limit: QueueLimit) -> R<QueueSpec> {
    let (cap, unit, scale) = match limit {
        QueueLimit::Packets(n) => (n, "packets", 1),
        QueueLimit::Bytes(b) => (b, "bytes", RED_DEFAULT_PACKET_BYTES),
    };
    let threshold = |p: &ParamInfo, default_pkts: u64| -> R<f64> {
        let key = p.name;
        let given = match q.params.get(key) {
            None => None,
            Some(v) => Some(serde_json::from_value::<Amount>(v.clone()).map_err(|_| ScenarioError::new(format!("{path}.{key}"), format!("{v} is not a threshold; expected {unit} like the limit")))?),
        };
        match (given, limit) {
            (None, _) => Ok((default_pkts * scale) as f64),
            (Some(Amount::Pkts(n)), QueueLimit::Packets(_)) | (Some(Amount::Bytes(n)), QueueLimit::Bytes(_)) => Ok(n as f64),
            (Some(Amount::Keyword(k)), _) => err(format!("{path}.{key}"), format!("{k:?} is not a threshold; expected {unit} like the limit")),
            (Some(_), _) => err(
                format!("{path}.{key}"),
                format!("must be in {unit}, the unit of {path}.limit (RED thresholds and the limit share one unit)"),
            ),
        }
    };
    debug_assert!(matches!(decls::RED_MIN_TH.info.kind, ParamKind::Window));
    let min_th = threshold(&decls::RED_MIN_TH.info, 5)?;
    let max_th = threshold(&decls::RED_MAX_TH.info, 15)?;
    if min_th >= max_th {
        return err(format!("{path}.min_th"), format!("min_th ({min_th}) must be below max_th ({max_th})"));
    }
    if max_th > cap as f64 {
        let how = if !q.params.contains_key("max_th") { " (the default; set min_th and max_th for a small buffer)" } else { "" };
        return err(format!("{path}.max_th"), format!("max_th ({max_th} {unit}{how}) must be at most the limit ({cap} {unit})"));
    }
    let max_p = number(path, q, &decls::RED_MAX_P)?;
    if max_p <= 0.0 {
        return err(format!("{path}.max_p"), format!("{max_p} is not valid; expected a probability greater than 0 and at most 1"));
    }
    let w_q = number(path, q, &decls::RED_W_Q)?;
    if w_q <= 0.0 {
        return err(format!("{path}.w_q"), format!("{w_q} is not valid; expected a weight greater than 0 and at most 1"));
    }
    Ok(QueueSpec::Red {
        limit,
        min_th,
        max_th,
        max_p,
        w_q,
        gentle: flag(path, q, &decls::RED_GENTLE)?,
        ecn: flag(path, q, &decls::RED_ECN)?,
        ns2_wait: flag(path, q, &decls::RED_NS2_WAIT)?,
    })
}
