//! A flow's `quic` table (docs/QUIC.md): its keys and defaults, and the keys of the `tcp` table
//! that a QUIC flow refuses because they are TCP's own.

use super::*;
use crate::quic::{AckFrequencySpec, QuicSpec, UDP_IP_HEADER};

/// Keys of the `tcp` table that only TCP has, with the `quic` key that plays their part (if any).
const TCP_ONLY: &[(&str, Option<&str>)] = &[
    ("recovery", Some("RFC 9002's loss detection is the recovery: packet_threshold, time_threshold")),
    ("prr_bound", None),
    ("mss", Some("max_datagram_size")),
    ("header", Some("max_datagram_size (the IPv4 and UDP headers, 28 bytes, are added)")),
    ("initial_window", Some("initial_window")),
    ("ack", Some("ack_eliciting_threshold, max_ack_delay")),
    ("delack_timeout", Some("max_ack_delay")),
    ("quickack_segments", Some("ack_eliciting_threshold")),
    ("rwnd", Some("max_data")),
    ("handshake", Some("handshake")),
    ("pacing", Some("pacing")),
    ("rto_policy", Some("the probe timeout: initial_rtt, granularity")),
    ("rto_min", Some("the probe timeout: initial_rtt, granularity")),
    ("rto_initial", Some("initial_rtt")),
    ("rto_max", None),
    ("clock_granularity", Some("granularity")),
    ("limited_transmit", None),
    ("dupthresh", Some("packet_threshold")),
    ("sack_blocks", Some("max_ack_ranges")),
    ("linux_ss_clamp", None),
    ("newreno_timer", None),
    ("idle_restart", None),
    ("startup_after_idle", None),
    ("startup_min_response", None),
];

/// The `tcp` keys `t` gives.
fn given_tcp_keys(t: &raw::Tcp) -> Vec<&'static str> {
    let set = [
        ("recovery", t.recovery.is_some()),
        ("prr_bound", t.prr_bound.is_some()),
        ("mss", t.mss.is_some()),
        ("header", t.header.is_some()),
        ("initial_window", t.initial_window.is_some()),
        ("ack", t.ack.is_some()),
        ("delack_timeout", t.delack_timeout.is_some()),
        ("quickack_segments", t.quickack_segments.is_some()),
        ("rwnd", t.rwnd.is_some()),
        ("handshake", t.handshake.is_some()),
        ("pacing", t.pacing.is_some()),
        ("rto_policy", t.rto_policy.is_some()),
        ("rto_min", t.rto_min.is_some()),
        ("rto_initial", t.rto_initial.is_some()),
        ("rto_max", t.rto_max.is_some()),
        ("clock_granularity", t.clock_granularity.is_some()),
        ("limited_transmit", t.limited_transmit.is_some()),
        ("dupthresh", t.dupthresh.is_some()),
        ("sack_blocks", t.sack_blocks.is_some()),
        ("linux_ss_clamp", t.linux_ss_clamp.is_some()),
        ("newreno_timer", t.newreno_timer.is_some()),
        ("idle_restart", t.idle_restart.is_some()),
        ("startup_after_idle", t.startup_after_idle.is_some()),
        ("startup_min_response", t.startup_min_response.is_some()),
    ];
    set.into_iter().filter(|(_, on)| *on).map(|(k, _)| k).collect()
}

/// Refuses a TCP-only key in the `tcp` table (at `p`) of a QUIC flow whose `quic` table is at `q`.
pub(super) fn refuse_tcp_only(p: &str, q: &str, t: Option<&raw::Tcp>) -> R<()> {
    let Some(t) = t else { return Ok(()) };
    if let Some(key) = given_tcp_keys(t).first() {
        let instead = TCP_ONLY.iter().find(|(k, _)| k == key).and_then(|(_, i)| *i);
        let hint = match instead {
            Some(i) => format!("; the QUIC counterpart is {q}.{i}"),
            None => "; QUIC has no counterpart".to_string(),
        };
        return err(
            format!("{p}.{key}"),
            format!("is a TCP setting, but this flow runs QUIC ({q}): its tcp table takes only congestion_avoidance and its parameters, initial_ssthresh, ecn and cwnd_validation{hint}"),
        );
    }
    Ok(())
}

/// The `quic` table at `p`.
pub(super) fn quic(p: &str, t: &raw::Quic) -> R<QuicSpec> {
    let bytes = |v: Option<crate::values::BytesV>, default: u64| v.map_or(default, |b| b.0);
    let path_mtu = bytes(t.path_mtu, 1500);
    if !(1228..=65_535).contains(&path_mtu) {
        return err(format!("{p}.path_mtu"), format!("{path_mtu} bytes is not valid; expected 1228B (a 1200-byte datagram with IPv4 and UDP headers) to 65535B"));
    }
    let max_datagram_size = bytes(t.max_datagram_size, path_mtu - UDP_IP_HEADER);
    if max_datagram_size < 1200 {
        return err(format!("{p}.max_datagram_size"), format!("{max_datagram_size} bytes is below QUIC's minimum of 1200 (RFC 9000 §14)"));
    }
    if max_datagram_size + UDP_IP_HEADER > path_mtu {
        return err(
            format!("{p}.max_datagram_size"),
            format!("{max_datagram_size} bytes plus 28 bytes of IPv4 and UDP headers is above the path MTU ({path_mtu} bytes, {p}.path_mtu); expected at most {}B", path_mtu - UDP_IP_HEADER),
        );
    }
    let rfc_iw = (10 * max_datagram_size).min(14_720u64.max(2 * max_datagram_size));
    let initial_window = match t.initial_window {
        None => rfc_iw,
        Some(Amount::Bytes(b)) => b,
        Some(Amount::Pkts(n)) => n.saturating_mul(max_datagram_size),
        Some(Amount::Keyword(k)) => return err(format!("{p}.initial_window"), format!("{k:?} is not a window; expected bytes (\"14720B\") or packets (\"10pkt\")")),
    };
    if initial_window < max_datagram_size || initial_window > 100_000 * max_datagram_size {
        return err(format!("{p}.initial_window"), format!("{initial_window} bytes is not valid; expected one datagram ({max_datagram_size}B) to 100000 datagrams"));
    }
    let client_hello = bytes(t.client_hello, 300);
    let server_flight = bytes(t.server_flight, 3000);
    for (key, v, max) in [("client_hello", client_hello, 65_535), ("server_flight", server_flight, 1_000_000)] {
        if v == 0 || v > max {
            return err(format!("{p}.{key}"), format!("{v} bytes is not valid; expected 1B to {max}B"));
        }
    }
    let request = bytes(t.request, 100);
    if request > 1_000_000 {
        return err(format!("{p}.request"), format!("{request} bytes is not valid; expected at most 1000000B"));
    }
    let ack_eliciting_threshold = t.ack_eliciting_threshold.unwrap_or(2);
    if !(1..=1000).contains(&ack_eliciting_threshold) {
        return err(format!("{p}.ack_eliciting_threshold"), "must be between 1 (an ACK per packet) and 1000");
    }
    let max_ack_delay = t.max_ack_delay.map_or(Dur::from_millis(25), |d| d.0);
    // RFC 9000 §18.2: values of 2^14 ms or more are invalid.
    if max_ack_delay >= Dur::from_millis(16_384) {
        return err(format!("{p}.max_ack_delay"), "must be below 16.384s (RFC 9000 §18.2)");
    }
    let max_ack_ranges = t.max_ack_ranges.unwrap_or(32);
    if !(1..=10_000).contains(&max_ack_ranges) {
        return err(format!("{p}.max_ack_ranges"), "must be between 1 and 10000");
    }
    let ack_frequency = match &t.ack_frequency {
        None => None,
        Some(f) => {
            let q = format!("{p}.ack_frequency");
            let threshold = f.threshold.unwrap_or(ack_eliciting_threshold);
            if !(1..=1000).contains(&threshold) {
                return err(format!("{q}.threshold"), "must be between 1 and 1000 packets");
            }
            let delay = f.max_ack_delay.map_or(max_ack_delay, |d| d.0);
            if delay >= Dur::from_millis(16_384) {
                return err(format!("{q}.max_ack_delay"), "must be below 16.384s");
            }
            Some(AckFrequencySpec { threshold, max_ack_delay: delay, reordering_threshold: f.reordering_threshold.unwrap_or(1) })
        }
    };
    let max_data = match t.max_data {
        None | Some(Amount::Keyword("infinite")) => None,
        Some(Amount::Bytes(b)) => Some(b),
        Some(Amount::Pkts(n)) => Some(n.saturating_mul(max_datagram_size)),
        Some(Amount::Keyword(k)) => return err(format!("{p}.max_data"), format!("{k:?} is not valid; expected bytes, packets or \"infinite\"")),
    };
    if max_data.is_some_and(|m| m < max_datagram_size) {
        return err(format!("{p}.max_data"), format!("must hold at least one datagram ({max_datagram_size}B)"));
    }
    let pacing_gain = t.pacing_gain.unwrap_or(1.25);
    if !(pacing_gain.is_finite() && (0.1..=10.0).contains(&pacing_gain)) {
        return err(format!("{p}.pacing_gain"), format!("{pacing_gain} is not valid; expected 0.1 to 10 (RFC 9002 §7.7 suggests 1.25)"));
    }
    if t.pacing_gain.is_some() && t.pacing == Some(false) {
        return err(format!("{p}.pacing_gain"), "applies only with pacing = true");
    }
    let initial_rtt = t.initial_rtt.map_or(Dur::from_millis(333), |d| d.0);
    if initial_rtt == Dur::ZERO {
        return err(format!("{p}.initial_rtt"), "must be longer than 0s");
    }
    let packet_threshold = t.packet_threshold.unwrap_or(3);
    if !(1..=1000).contains(&packet_threshold) {
        return err(format!("{p}.packet_threshold"), "must be between 1 and 1000 (RFC 9002 §6.1.1: SHOULD NOT be below 3)");
    }
    let time_threshold = t.time_threshold.unwrap_or(1.125);
    if !(time_threshold.is_finite() && (1.0..=16.0).contains(&time_threshold)) {
        return err(format!("{p}.time_threshold"), format!("{time_threshold} is not valid; expected 1 to 16 RTTs (RFC 9002 §6.1.2: 9/8)"));
    }
    let granularity = t.granularity.map_or(Dur::from_millis(1), |d| d.0);
    if granularity == Dur::ZERO || granularity > Dur::from_secs(1) {
        return err(format!("{p}.granularity"), "must be longer than 0s and at most 1s");
    }
    let persistent_congestion_threshold = t.persistent_congestion_threshold.unwrap_or(3);
    if !(1..=100).contains(&persistent_congestion_threshold) {
        return err(format!("{p}.persistent_congestion_threshold"), "must be between 1 and 100");
    }
    Ok(QuicSpec {
        max_datagram_size,
        path_mtu,
        initial_window,
        handshake: t.handshake.unwrap_or(true),
        client_hello,
        server_flight,
        request,
        ack_eliciting_threshold,
        max_ack_delay,
        immediate_ack_on_reorder: t.immediate_ack_on_reorder.unwrap_or(true),
        max_ack_ranges,
        ack_frequency,
        max_data,
        pacing: t.pacing.unwrap_or(true),
        pacing_gain,
        initial_rtt,
        packet_threshold,
        time_threshold,
        granularity,
        persistent_congestion_threshold,
    })
}

/// The `tcp` table of a QUIC flow, made to describe its controller: the segment is the datagram,
/// the header IPv4 and UDP's, the initial window the QUIC one (in whole datagrams, for the startup
/// algorithms that read it), every ACK of an ack-eliciting packet a delayed one unless the
/// threshold is 1, and the handshake the QUIC handshake.
pub(super) fn controller_tcp(mut tcp: TcpSpec, q: &QuicSpec) -> TcpSpec {
    tcp.mss = q.max_datagram_size;
    tcp.header = UDP_IP_HEADER;
    tcp.initial_window = q.initial_window.div_ceil(q.max_datagram_size);
    tcp.handshake = q.handshake;
    tcp.pacing = q.pacing;
    tcp.ack = if q.ack_eliciting_threshold == 1 { AckSpec::EveryPacket } else { AckSpec::Delayed { timeout: q.max_ack_delay } };
    tcp.rwnd = q.max_data;
    tcp
}
