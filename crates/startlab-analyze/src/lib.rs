//! `startlab analyze`: reads a packet capture (pcap or pcapng, streamed), reassembles each TCP
//! connection and reports per flow what its startup did — RTT samples, the flight over time (the
//! sender's window as far as the capture shows it), retransmissions and their kind, the startup's
//! exit (first loss or flight plateau) with its time and flight, the overshoot over the delivery
//! rate × min RTT, and the startup columns of `startlab run`'s flow table (docs/ANALYZE.md).
//!
//! Bad input never panics: a truncated or corrupt file stops the reading at the packet it names
//! and what was read before is still analysed; frames that cannot be analysed (headers cut by the
//! snapshot length, not IP, not TCP/UDP) are counted by reason, the first few named by packet
//! number; a timestamp earlier than the one before is reported and taken as the one before.

pub mod capture;
pub mod decode;
mod report;
pub mod series;
mod sludp;
pub mod tcp;
mod udp;

pub use report::{FlowReport, Report, UdpReport};

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;

use decode::{Decoded, Skip};
use tcp::Connection;

/// Where the capture was taken, as the user says it (otherwise it is inferred per flow).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Vantage {
    /// At the data sender (its own interface): the flight is the sender's, RTTs whole.
    Sender,
    /// At the data receiver.
    Receiver,
    /// Between the two.
    Middle,
}

impl Vantage {
    /// Parses `sender`, `receiver` or `middle`.
    pub fn parse(s: &str) -> Option<Vantage> {
        match s {
            "sender" => Some(Vantage::Sender),
            "receiver" => Some(Vantage::Receiver),
            "middle" => Some(Vantage::Middle),
            _ => None,
        }
    }

    /// The name.
    pub fn name(self) -> &'static str {
        match self {
            Vantage::Sender => "sender",
            Vantage::Receiver => "receiver",
            Vantage::Middle => "middle",
        }
    }
}

/// How to analyse.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// The vantage point, when the user knows it; None: inferred per flow.
    pub vantage: Option<Vantage>,
}

/// Problems named by packet number: at most this many per kind in the report.
const NAMED_PER_KIND: usize = 5;

/// Analyses the capture at `path`.
pub fn analyze(path: &Path, options: &Options) -> Report {
    let mut conns: Vec<Connection> = Vec::new();
    let mut index: BTreeMap<(SocketAddr, SocketAddr), usize> = BTreeMap::new();
    let mut udp = udp::Flows::default();
    let mut state = report::CaptureState::default();
    let forced_sender = options.vantage == Some(Vantage::Sender);
    let (format, result) = capture::read(path, |frame| {
        state.packets += 1;
        state.bytes += u64::from(frame.orig_len);
        state.links.insert(frame.link.name());
        if frame.link == capture::Link::Untimed {
            state.skip(frame.number, &Skip::UnsupportedLink(frame.link.name()), NAMED_PER_KIND);
            return;
        }
        // Time: ns since the capture's first frame; never backwards.
        let t_abs = frame.time_ns;
        let first = *state.first_time.get_or_insert(t_abs);
        if t_abs < state.last_abs {
            state.backwards += 1;
            if state.backwards_named.len() < NAMED_PER_KIND {
                state.backwards_named.push(format!(
                    "packet {}: its timestamp is {:.6} s before the previous packet's; taken as the previous packet's",
                    frame.number,
                    (state.last_abs - t_abs) as f64 / 1e9
                ));
            }
        } else {
            state.last_abs = t_abs;
        }
        let t = state.last_abs.saturating_sub(first);
        match decode::decode(frame) {
            Decoded::Tcp(seg) => {
                state.tcp += 1;
                let key = if seg.src <= seg.dst { (seg.src, seg.dst) } else { (seg.dst, seg.src) };
                let i = *index.entry(key).or_insert_with(|| {
                    conns.push(Connection::new(&seg, frame.number, t, forced_sender));
                    conns.len() - 1
                });
                conns[i].on_segment(&seg, t);
            }
            Decoded::Udp(d) => {
                state.udp += 1;
                if let Some(seg) = sludp::segment(&d) {
                    // startlab-udp: the TCP it carries is analysed as TCP.
                    state.startlab_udp += 1;
                    let key = if seg.src <= seg.dst { (seg.src, seg.dst) } else { (seg.dst, seg.src) };
                    let i = *index.entry(key).or_insert_with(|| {
                        conns.push(Connection::new(&seg, frame.number, t, forced_sender));
                        conns.len() - 1
                    });
                    conns[i].on_segment(&seg, t);
                } else {
                    udp.on_datagram(&d, frame.number, t);
                }
            }
            Decoded::Skipped(why) => state.skip(frame.number, &why, NAMED_PER_KIND),
        }
    });
    report::build(path, format, result.err(), state, conns, udp, options)
}

#[cfg(test)]
mod tests;
