//! Queue kinds of a link: drop-tail and RED (with ECN marking).

use super::*;

/// Packet size the RED defaults assume when a byte-mode queue leaves a threshold out (docs/QUEUES.md).
pub(super) const RED_DEFAULT_PACKET_BYTES: u64 = 1500;

pub(super) fn queue(path: &str, q: &raw::Queue) -> R<QueueSpec> {
    let limit = match q.limit {
        Amount::Pkts(n) => QueueLimit::Packets(n),
        Amount::Bytes(b) => QueueLimit::Bytes(b),
        Amount::Keyword(k) => {
            return err(format!("{path}.limit"), format!("{k:?} is not a queue limit; expected packets (\"100pkt\") or bytes (\"64KB\")"))
        }
    };
    match q.kind.as_str() {
        "droptail" => {
            let red_keys = [
                ("min_th", q.min_th.is_some()),
                ("max_th", q.max_th.is_some()),
                ("max_p", q.max_p.is_some()),
                ("w_q", q.w_q.is_some()),
                ("gentle", q.gentle.is_some()),
                ("ecn", q.ecn.is_some()),
                ("ns2_wait", q.ns2_wait.is_some()),
            ];
            if let Some((k, _)) = red_keys.iter().find(|(_, given)| *given) {
                return err(format!("{path}.{k}"), format!("{k} is a RED parameter; it needs kind = \"red\" (a \"droptail\" queue takes only limit)"));
            }
            Ok(QueueSpec::Droptail { limit })
        }
        "red" => red(path, q, limit),
        other => err(format!("{path}.kind"), format!("{other:?} is not a known queue; expected \"droptail\" or \"red\"")),
    }
}

/// `kind = "red"`: thresholds in the unit of the limit, lab defaults of ALGORITHMS.md §17.1.
pub(super) fn red(path: &str, q: &raw::Queue, limit: QueueLimit) -> R<QueueSpec> {
    let (cap, unit, scale) = match limit {
        QueueLimit::Packets(n) => (n, "packets", 1),
        QueueLimit::Bytes(b) => (b, "bytes", RED_DEFAULT_PACKET_BYTES),
    };
    let threshold = |key: &str, given: Option<Amount>, default_pkts: u64| -> R<f64> {
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
    let min_th = threshold("min_th", q.min_th, 5)?;
    let max_th = threshold("max_th", q.max_th, 15)?;
    if min_th >= max_th {
        return err(format!("{path}.min_th"), format!("min_th ({min_th}) must be below max_th ({max_th})"));
    }
    if max_th > cap as f64 {
        let how = if q.max_th.is_none() { " (the default; set min_th and max_th for a small buffer)" } else { "" };
        return err(format!("{path}.max_th"), format!("max_th ({max_th} {unit}{how}) must be at most the limit ({cap} {unit})"));
    }
    let max_p = q.max_p.unwrap_or(0.1);
    if !(max_p > 0.0 && max_p <= 1.0) {
        return err(format!("{path}.max_p"), format!("{max_p} is not valid; expected a probability greater than 0 and at most 1"));
    }
    let w_q = q.w_q.unwrap_or(0.002);
    if !(w_q > 0.0 && w_q <= 1.0) {
        return err(format!("{path}.w_q"), format!("{w_q} is not valid; expected a weight greater than 0 and at most 1"));
    }
    Ok(QueueSpec::Red {
        limit,
        min_th,
        max_th,
        max_p,
        w_q,
        gentle: q.gentle.unwrap_or(true),
        ecn: q.ecn.unwrap_or(false),
        ns2_wait: q.ns2_wait.unwrap_or(false),
    })
}
