//! Captures written here, packet by packet (etherparse builds the headers, pcap-file writes the
//! file), from scripted exchanges and from a small slow-start sender whose window is known at
//! every moment: the analysis must find what the script put in.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Duration;

use etherparse::{PacketBuilder, TcpOptionElement};
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
use pcap_file::pcapng::blocks::interface_description::{InterfaceDescriptionBlock, InterfaceDescriptionOption};
use pcap_file::pcapng::PcapNgWriter;
use pcap_file::{DataLink, TsResolution};

use super::*;

const SENDER: ([u8; 4], u16) = ([10, 203, 2, 1], 5201);
const RECEIVER: ([u8; 4], u16) = ([10, 203, 1, 1], 40000);
const MS: u64 = 1_000_000;

/// One captured packet.
#[derive(Clone)]
struct Pkt {
    t: u64,
    data: Vec<u8>,
}

/// A TCP packet from the sender (`from_sender`) or the receiver.
#[derive(Clone, Default)]
struct Tcp {
    seq: u32,
    ack: Option<u32>,
    syn: bool,
    fin: bool,
    payload: usize,
    options: Vec<TcpOptionElement>,
}

fn frame(from_sender: bool, p: &Tcp) -> Vec<u8> {
    let (src, dst) = if from_sender { (SENDER, RECEIVER) } else { (RECEIVER, SENDER) };
    let mut b = PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]).ipv4(src.0, dst.0, 64).tcp(src.1, dst.1, p.seq, 65535);
    if let Some(a) = p.ack {
        b = b.ack(a);
    }
    if p.syn {
        b = b.syn();
    }
    if p.fin {
        b = b.fin();
    }
    if !p.options.is_empty() {
        b = b.options(&p.options).expect("options fit");
    }
    let payload = vec![0u8; p.payload];
    let mut out = Vec::new();
    b.write(&mut out, &payload).expect("the frame is built");
    out
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("startlab-analyze-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir.join(name)
}

/// Writes `pkts` as a pcap (nanosecond timestamps) with `snaplen` bytes kept of each.
fn write_pcap(name: &str, pkts: &[Pkt], snaplen: usize) -> PathBuf {
    let path = tmp(name);
    let file = std::fs::File::create(&path).expect("create");
    let header = PcapHeader { ts_resolution: TsResolution::NanoSecond, snaplen: snaplen as u32, datalink: DataLink::ETHERNET, endianness: pcap_file::Endianness::Little, ..Default::default() };
    let mut w = PcapWriter::with_header(file, header).expect("header");
    for p in pkts {
        let kept = &p.data[..p.data.len().min(snaplen)];
        w.write_packet(&PcapPacket::new(Duration::from_nanos(1_700_000_000_000_000_000 + p.t), p.data.len() as u32, kept)).expect("write");
    }
    path
}

/// The same packets as pcapng with microsecond timestamps (the default if_tsresol).
fn write_pcapng(name: &str, pkts: &[Pkt]) -> PathBuf {
    let path = tmp(name);
    let file = std::fs::File::create(&path).expect("create");
    let mut w = PcapNgWriter::new(file).expect("section");
    let mut idb = InterfaceDescriptionBlock::new(DataLink::ETHERNET, 65535);
    idb.options.push(InterfaceDescriptionOption::IfTsResol(6));
    w.write_pcapng_block(idb).expect("idb");
    for p in pkts {
        // pcap-file writes the 64-bit timestamp as given in ns: give it microsecond units.
        let units = 1_700_000_000_000_000 + p.t / 1000;
        let epb = EnhancedPacketBlock {
            interface_id: 0,
            timestamp: Duration::from_nanos(units),
            original_len: p.data.len() as u32,
            data: std::borrow::Cow::Borrowed(&p.data),
            options: vec![],
        };
        w.write_pcapng_block(epb).expect("epb");
    }
    path
}

fn run(path: &std::path::Path) -> Report {
    analyze(path, &Options::default())
}

// --- a small slow-start sender behind a bottleneck -------------------------------------------

struct Path {
    /// Round-trip propagation, ns.
    prop: u64,
    /// Bottleneck service time per segment, ns.
    service: u64,
    mss: u32,
    iw: u32,
    /// Slow start stops growing at this window (segments), as a delay-based exit would.
    plateau: Option<u32>,
    /// Segments (0-based) whose first transmission the bottleneck drops.
    drops: BTreeSet<u32>,
    segments: u32,
    /// Where the capture is.
    at_receiver: bool,
    timestamps: bool,
    sack: bool,
}

struct Truth {
    /// When the sender's window stopped growing (plateau) or it retransmitted first (loss), ns.
    exit_t: u64,
    /// Its window then, segments.
    exit_cwnd: u32,
}

#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct AckEv {
    at: u64,
    ack: u32,
    sack: Option<(u32, u32)>,
    tsval: u32,
    tsecr: u32,
}

/// Simulates the transfer and returns the capture (handshake, data, ACKs, FIN) and the truth.
fn simulate(p: &Path) -> (Vec<Pkt>, Truth) {
    let mut pkts = Vec::new();
    let isn_s: u32 = 1_000_000;
    let isn_r: u32 = 4_000_000_000; // wraps the receiver's sequence space on purpose
    let one_way = p.prop / 2;
    let ts_ms = |t: u64| (t / MS) as u32 + 1;
    let syn_opts = |mss: u16| {
        let mut o = vec![TcpOptionElement::MaximumSegmentSize(mss), TcpOptionElement::WindowScale(7)];
        if p.sack {
            o.push(TcpOptionElement::SelectiveAcknowledgementPermitted);
        }
        if p.timestamps {
            o.push(TcpOptionElement::Timestamp(1, 0));
        }
        o
    };
    // Handshake: the receiver (client) opens. Times at the capture.
    let (t_syn, t_synack, t_ack) = if p.at_receiver { (0, p.prop, p.prop + 10_000) } else { (one_way, one_way + 10_000, one_way + p.prop) };
    pkts.push(Pkt { t: t_syn, data: frame(false, &Tcp { seq: isn_r, syn: true, options: syn_opts(1460), ..Default::default() }) });
    pkts.push(Pkt { t: t_synack, data: frame(true, &Tcp { seq: isn_s, ack: Some(isn_r.wrapping_add(1)), syn: true, options: syn_opts(1460), ..Default::default() }) });
    let ts_opt = |v: u32, e: u32| if p.timestamps { vec![TcpOptionElement::Timestamp(v, e)] } else { vec![] };
    pkts.push(Pkt { t: t_ack, data: frame(false, &Tcp { seq: isn_r.wrapping_add(1), ack: Some(isn_s.wrapping_add(1)), options: ts_opt(2, 1), ..Default::default() }) });
    // The sender's clock: time at the sender. Data starts one RTT after the SYN reached it.
    let start = one_way + p.prop + 20_000;
    let mut cwnd = p.iw as f64;
    let mut una = 0u32;
    let mut next = 0u32;
    let mut exited = false;
    let mut truth = None;
    let mut in_recovery: Option<u32> = None;
    let mut dupacks = 0;
    let mut last_depart = 0u64;
    let mut received = BTreeSet::new();
    let mut expected = 0u32;
    let mut acks = std::collections::BinaryHeap::new();
    let mut recv_ts = 0u32;
    let mut sender_tsecr = 2u32;
    let mut sent_once = BTreeSet::new();
    let mut capture: BTreeMap<(u64, u32), Vec<u8>> = BTreeMap::new();
    let n = std::cell::Cell::new(0u32);
    let mut send = |i: u32, t: u64, capture: &mut BTreeMap<(u64, u32), Vec<u8>>, acks: &mut std::collections::BinaryHeap<std::cmp::Reverse<AckEv>>, tsecr: u32| {
        let first = sent_once.insert(i);
        let seq = isn_s.wrapping_add(1).wrapping_add(i * p.mss);
        let tsval = ts_ms(t);
        let data = frame(true, &Tcp { seq, ack: Some(isn_r.wrapping_add(1)), payload: p.mss as usize, options: ts_opt(tsval, tsecr), ..Default::default() });
        let depart = (t + one_way / 2).max(last_depart) + p.service;
        last_depart = depart;
        n.set(n.get() + 1);
        if !p.at_receiver {
            capture.insert((t, n.get()), data.clone());
        }
        if first && p.drops.contains(&i) {
            return;
        }
        let arrive = depart + one_way / 2;
        if p.at_receiver {
            capture.insert((arrive, n.get()), data);
        }
        received.insert(i);
        while received.contains(&expected) {
            expected += 1;
        }
        if i + 1 == expected || i < expected {
            recv_ts = tsval;
        }
        let sack = received.range(expected..).next().map(|&lo| {
            let mut hi = lo;
            while received.contains(&(hi + 1)) {
                hi += 1;
            }
            (lo, hi + 1)
        });
        acks.push(std::cmp::Reverse(AckEv { at: arrive + 5_000, ack: expected, sack: if p.sack { sack } else { None }, tsval: ts_ms(arrive), tsecr: recv_ts }));
    };
    let mut t = start;
    while next < p.iw.min(p.segments) {
        send(next, t, &mut capture, &mut acks, sender_tsecr);
        next += 1;
        t += 1_000;
    }
    while let Some(std::cmp::Reverse(ev)) = acks.pop() {
        // The ACK leaves the receiver at ev.at; the capture sees it then (receiver) or one way later.
        let seen = if p.at_receiver { ev.at } else { ev.at + one_way };
        let mut opts = ts_opt(ev.tsval, ev.tsecr);
        if let Some((lo, hi)) = ev.sack {
            let l = isn_s.wrapping_add(1).wrapping_add(lo * p.mss);
            let r = isn_s.wrapping_add(1).wrapping_add(hi * p.mss);
            opts.push(TcpOptionElement::SelectiveAcknowledgement((l, r), [None, None, None]));
        }
        let ackno = isn_s.wrapping_add(1).wrapping_add(ev.ack * p.mss);
        n.set(n.get() + 1);
        capture.insert((seen, n.get()), frame(false, &Tcp { seq: isn_r.wrapping_add(1), ack: Some(ackno), options: opts, ..Default::default() }));
        let now = ev.at + one_way;
        sender_tsecr = ev.tsval;
        let mut now_t = now + 2_000;
        if ev.ack > una {
            let newly = ev.ack - una;
            una = ev.ack;
            dupacks = 0;
            if let Some(point) = in_recovery {
                if una >= point {
                    in_recovery = None;
                } else {
                    send(una, now_t, &mut capture, &mut acks, sender_tsecr);
                    now_t += 1_000;
                }
            } else if !exited {
                cwnd += f64::from(newly);
                if let Some(limit) = p.plateau {
                    if cwnd >= f64::from(limit) {
                        cwnd = f64::from(limit);
                        exited = true;
                        truth = Some(Truth { exit_t: now, exit_cwnd: limit });
                    }
                }
            } else {
                cwnd += f64::from(newly) / cwnd;
            }
        } else if next > una {
            dupacks += 1;
            if dupacks == 3 && in_recovery.is_none() {
                if !exited {
                    exited = true;
                    truth = Some(Truth { exit_t: now_t, exit_cwnd: cwnd as u32 });
                }
                cwnd = (cwnd / 2.0).max(2.0);
                in_recovery = Some(next);
                send(una, now_t, &mut capture, &mut acks, sender_tsecr);
                now_t += 1_000;
            }
        }
        let outstanding = |next: u32, una: u32| f64::from(next - una);
        let limit = if in_recovery.is_some() { cwnd + f64::from(dupacks.min(3)) } else { cwnd };
        while next < p.segments && outstanding(next, una) < limit {
            send(next, now_t, &mut capture, &mut acks, sender_tsecr);
            next += 1;
            now_t += 1_000;
        }
        if una >= p.segments {
            break;
        }
    }
    // FIN and its ACK.
    let t_end = capture.keys().last().map_or(0, |k| k.0) + MS;
    let fin_seq = isn_s.wrapping_add(1).wrapping_add(p.segments * p.mss);
    capture.insert((t_end, u32::MAX - 1), frame(true, &Tcp { seq: fin_seq, ack: Some(isn_r.wrapping_add(1)), fin: true, options: ts_opt(ts_ms(t_end), sender_tsecr), ..Default::default() }));
    capture.insert((t_end + p.prop, u32::MAX), frame(false, &Tcp { seq: isn_r.wrapping_add(1), ack: Some(fin_seq.wrapping_add(1)), options: ts_opt(ts_ms(t_end + p.prop), ts_ms(t_end)), ..Default::default() }));
    pkts.extend(capture.into_iter().map(|((t, _), data)| Pkt { t, data }));
    pkts.sort_by_key(|p| p.t);
    (pkts, truth.unwrap_or(Truth { exit_t: 0, exit_cwnd: 0 }))
}

fn path() -> Path {
    Path {
        prop: 40 * MS,
        service: MS,
        mss: 1448,
        iw: 10,
        plateau: None,
        drops: BTreeSet::new(),
        segments: 2000,
        at_receiver: false,
        timestamps: true,
        sack: true,
    }
}

fn only_flow(r: &Report) -> &FlowReport {
    assert_eq!(r.flows.len(), 1, "one data direction expected, got {:?}", r.flows.iter().map(|f| &f.flow).collect::<Vec<_>>());
    &r.flows[0]
}

// --- tests -----------------------------------------------------------------------------------

#[test]
fn reads_the_handshake_options_of_both_sides() {
    let (pkts, _) = simulate(&Path { segments: 30, ..path() });
    let r = run(&write_pcap("options.pcap", &pkts, 65535));
    let f = only_flow(&r);
    assert_eq!(f.src, "10.203.2.1:5201", "the data sender is the server");
    assert!(f.handshake, "both SYNs were captured");
    assert_eq!(f.mss_option, Some(1460));
    assert_eq!(f.receiver_mss_option, Some(1460));
    assert_eq!(f.wscale, (Some(7), Some(7)));
    assert!(f.sack && f.timestamps, "SACK-permitted and timestamps on both SYNs");
    assert_eq!(f.mss, 1448);
    assert_eq!(f.bytes_acked, 30 * 1448, "every byte acknowledged, the sequence wrap of the receiver notwithstanding");
    assert!(f.completed, "the FIN was acknowledged");
    assert_eq!(f.retransmissions, 0);
}

#[test]
fn finds_a_plateau_exit_within_one_rtt_and_its_window_within_ten_percent() {
    let p = Path { plateau: Some(60), ..path() };
    let (pkts, truth) = simulate(&p);
    let r = run(&write_pcap("plateau.pcap", &pkts, 65535));
    let f = only_flow(&r);
    assert_eq!(f.exit_reason, "plateau", "the window stopped growing at 60 segments without loss");
    assert_eq!(f.vantage, "sender", "{}", f.vantage_basis);
    let t = f.startup_exit_time.expect("an exit") * 1e9;
    let rtt = f.base_rtt.expect("an RTT") * 1e9;
    assert!((t - truth.exit_t as f64).abs() <= rtt, "exit at {t} ns, truth {} ns, RTT {rtt} ns", truth.exit_t);
    let pkts_at_exit = f.exit_cwnd_pkts.expect("a flight");
    assert!((pkts_at_exit / f64::from(truth.exit_cwnd) - 1.0).abs() <= 0.10, "exit flight {pkts_at_exit} segments, window {}", truth.exit_cwnd);
    assert_eq!(f.retransmissions, 0);
}

#[test]
fn finds_a_loss_exit_and_calls_the_retransmission_fast() {
    let p = Path { drops: [70].into_iter().collect(), ..path() };
    let (pkts, truth) = simulate(&p);
    let r = run(&write_pcap("loss.pcap", &pkts, 65535));
    let f = only_flow(&r);
    assert_eq!(f.exit_reason, "loss");
    assert_eq!(f.retransmissions, 1, "one segment dropped, one retransmission");
    assert_eq!(f.retransmissions_fast, 1, "after three duplicate ACKs: a fast retransmission");
    assert_eq!(f.recovery_episodes, 1);
    assert_eq!(f.timeouts, 0);
    let t = f.startup_exit_time.expect("an exit") * 1e9;
    assert!((t - truth.exit_t as f64).abs() <= 40e6, "exit at {t}, truth {}", truth.exit_t);
    let w = f.exit_cwnd_pkts.expect("a flight");
    assert!((w / f64::from(truth.exit_cwnd) - 1.0).abs() <= 0.10, "exit flight {w} segments, window {}", truth.exit_cwnd);
    assert!(f.t_su > t / 1e9, "startup ends when the recovery does, after the retransmission");
}

#[test]
fn measures_the_path_rtt_at_the_sender_and_at_the_receiver() {
    for at_receiver in [false, true] {
        let p = Path { plateau: Some(30), at_receiver, segments: 600, ..path() };
        let (pkts, _) = simulate(&p);
        let r = run(&write_pcap(&format!("rtt-{at_receiver}.pcap"), &pkts, 65535));
        let f = only_flow(&r);
        let base = f.base_rtt.expect("RTT samples");
        // The path: 40 ms propagation, one segment's service (1 ms), the receiver's 5 ms ACK delay.
        assert!((0.040..0.0475).contains(&base), "capture at the receiver: {at_receiver}; base RTT {base}");
        assert_eq!(f.vantage, if at_receiver { "receiver" } else { "sender" }, "{}", f.vantage_basis);
        assert_eq!(f.exit_reason, "plateau");
        let w = f.exit_cwnd_pkts.expect("a flight");
        assert!((w / 30.0 - 1.0).abs() <= 0.10, "capture at the receiver: {at_receiver}; exit flight {w} segments, window 30");
    }
}

#[test]
fn karn_takes_no_sample_from_a_retransmitted_segment_and_calls_a_silence_a_timeout() {
    let s = |t, p: Tcp| Pkt { t, data: frame(true, &p) };
    let r_ = |t, p: Tcp| Pkt { t, data: frame(false, &p) };
    let ack = |a| Tcp { seq: 501, ack: Some(a), ..Default::default() };
    let data = |seq| Tcp { seq, ack: Some(501), payload: 1000, ..Default::default() };
    let pkts = vec![
        // t=0: SYN, SYN-ACK 40 ms later (seen at the receiver side's SYN ... as a middle box would)
        r_(0, Tcp { seq: 500, syn: true, ..Default::default() }),
        s(40 * MS, Tcp { seq: 0, ack: Some(501), syn: true, ..Default::default() }),
        r_(80 * MS, ack(1)),
        // t=80 ms: two segments; the first is lost, the second's ACK is a duplicate.
        s(81 * MS, data(1)),
        s(82 * MS, data(1001)),
        r_(122 * MS, ack(1)),
        // t=400 ms: silence, then the first segment again: a timeout.
        s(400 * MS, data(1)),
        // Its ACK comes 40 ms after the retransmission, 359 ms after the original: no sample.
        r_(440 * MS, ack(2001)),
    ];
    let r = run(&write_pcap("karn.pcap", &pkts, 65535));
    let f = only_flow(&r);
    assert_eq!(f.retransmissions, 1);
    assert_eq!(f.retransmissions_timeout, 1, "a retransmission after 278 ms without an ACK is a timeout");
    assert_eq!(f.timeouts, 1);
    assert_eq!(f.exit_reason, "timeout");
    assert_eq!(f.rtt_samples, 0, "the only ACK of new data covers a retransmitted segment: Karn's rule takes no sample");
    assert!(!f.completed && f.bytes_acked == 2000, "no FIN: not completed; both segments acknowledged");
}

#[test]
fn a_dsack_marks_the_retransmission_spurious() {
    let s = |t, p: Tcp| Pkt { t, data: frame(true, &p) };
    let r_ = |t, p: Tcp| Pkt { t, data: frame(false, &p) };
    let data = |seq| Tcp { seq, ack: Some(1), payload: 1000, ..Default::default() };
    let pkts = vec![
        s(0, data(1)),
        r_(40 * MS, Tcp { seq: 1, ack: Some(1001), ..Default::default() }),
        s(41 * MS, data(1001)),
        // The sender retransmits too early (a timer), the original arrives and is acknowledged...
        s(70 * MS, data(1001)),
        r_(81 * MS, Tcp { seq: 1, ack: Some(2001), ..Default::default() }),
        // ...and the duplicate arrives: the receiver reports it with a DSACK block below the ACK.
        r_(110 * MS, Tcp {
            seq: 1,
            ack: Some(2001),
            options: vec![TcpOptionElement::SelectiveAcknowledgement((1001, 2001), [None, None, None])],
            ..Default::default()
        }),
    ];
    let r = run(&write_pcap("dsack.pcap", &pkts, 65535));
    let f = only_flow(&r);
    assert_eq!(f.retransmissions, 1);
    assert_eq!(f.dsacks, 1, "the block below the cumulative ACK is a DSACK");
    assert_eq!(f.retransmissions_spurious, 1, "the DSACK covers the retransmitted range");
}

#[test]
fn pcapng_with_microsecond_timestamps_gives_the_same_flow() {
    let p = Path { plateau: Some(40), segments: 500, ..path() };
    let (pkts, _) = simulate(&p);
    let a = run(&write_pcap("same.pcap", &pkts, 65535));
    let b = run(&write_pcapng("same.pcapng", &pkts));
    assert_eq!(b.capture.format, Some("pcapng"));
    let (fa, fb) = (only_flow(&a), only_flow(&b));
    assert_eq!(fa.exit_reason, fb.exit_reason);
    assert_eq!(fa.bytes_acked, fb.bytes_acked);
    assert!((fa.base_rtt.unwrap() - fb.base_rtt.unwrap()).abs() < 2e-6, "{:?} vs {:?}: microseconds, not nanoseconds", fa.base_rtt, fb.base_rtt);
}

#[test]
fn a_truncated_capture_names_the_packet_and_keeps_what_was_read() {
    let (pkts, _) = simulate(&Path { segments: 200, ..path() });
    let full = write_pcap("whole.pcap", &pkts, 65535);
    let bytes = std::fs::read(&full).unwrap();
    let cut = tmp("truncated.pcap");
    // Cut in the middle of the 101st record.
    let mut offset = 24;
    for p in &pkts[..100] {
        offset += 16 + p.data.len();
    }
    std::fs::write(&cut, &bytes[..offset + 30]).unwrap();
    let r = run(&cut);
    let err = r.capture.error.clone().expect("an error");
    assert!(err.starts_with("packet 101:") && err.contains("truncated"), "{err}");
    assert_eq!(r.capture.packets, 100, "the hundred packets before the cut were read");
    assert_eq!(r.flows.len(), 1, "and analysed");
    assert!(r.warnings.iter().any(|w| w.contains("packet 101")), "{:?}", r.warnings);
}

#[test]
fn a_corrupt_record_names_the_packet() {
    let (pkts, _) = simulate(&Path { segments: 20, ..path() });
    let full = write_pcap("corrupt-src.pcap", &pkts, 65535);
    let mut bytes = std::fs::read(&full).unwrap();
    let mut offset = 24;
    for p in &pkts[..5] {
        offset += 16 + p.data.len();
    }
    // Packet 6's captured length: far beyond the snapshot length.
    bytes[offset + 8..offset + 12].copy_from_slice(&0x7fff_0000u32.to_le_bytes());
    let path = tmp("corrupt.pcap");
    std::fs::write(&path, &bytes).unwrap();
    let r = run(&path);
    let err = r.capture.error.clone().expect("an error");
    assert!(err.starts_with("packet 6:") && err.contains("corrupt length"), "{err}");
    assert_eq!(r.capture.packets, 5);
    // Packet 6's timestamp fraction: a microsecond count of a million or more.
    let mut bytes = std::fs::read(&full).unwrap();
    bytes[offset + 4..offset + 8].copy_from_slice(&2_000_000_000u32.to_le_bytes());
    std::fs::write(&path, &bytes).unwrap();
    let r = run(&path);
    let err = r.capture.error.clone().unwrap_or_else(|| panic!("an error expected: {:?} {:?}", r.capture, r.warnings));
    assert!(err.starts_with("packet 6: a corrupt record (its timestamp's fraction"), "{err}");
}

#[test]
fn not_a_capture_is_refused_with_its_first_bytes() {
    let path = tmp("text.pcap");
    std::fs::write(&path, b"hello, this is not a capture").unwrap();
    let r = run(&path);
    let err = r.capture.error.expect("an error");
    assert!(err.contains("not a pcap or pcapng file") && err.contains("68 65 6c 6c"), "{err}");
    assert!(r.flows.is_empty());
}

#[test]
fn headers_cut_by_the_snapshot_length_are_counted_and_named() {
    let (pkts, _) = simulate(&Path { segments: 20, ..path() });
    // 54 bytes keep Ethernet + IPv4 + 20 bytes of TCP: the headers with options (SYN, timestamps)
    // are cut, the payloads of every segment too.
    let r = run(&write_pcap("snaplen.pcap", &pkts, 60));
    assert!(r.capture.error.is_none(), "{:?}", r.capture.error);
    let cut = r.capture.skipped.get("headers-cut-by-snaplen").copied().unwrap_or(0);
    assert!(cut > 0, "{:?}", r.capture.skipped);
    assert!(r.capture.problems.iter().any(|p| p.starts_with("packet 1: the TCP header cut by the snapshot length")), "{:?}", r.capture.problems);
    assert!(r.warnings.iter().any(|w| w.contains("snapshot length")), "{:?}", r.warnings);
    // A snaplen that keeps the headers but not the payloads loses nothing.
    let r = run(&write_pcap("snaplen-ok.pcap", &pkts, 100));
    assert!(r.capture.skipped.is_empty(), "{:?}", r.capture.skipped);
    assert_eq!(only_flow(&r).bytes_acked, 20 * 1448, "payload lengths come from the IP header, not from the bytes captured");
}

#[test]
fn a_capture_without_tcp_says_so() {
    let mut pkts = Vec::new();
    for i in 0..5u64 {
        let b = PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]).ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64).udp(4433, 5000);
        let mut data = Vec::new();
        b.write(&mut data, &[0x40, 1, 2, 3, 4, 5]).unwrap();
        pkts.push(Pkt { t: i * MS, data });
    }
    let r = run(&write_pcap("udp.pcap", &pkts, 65535));
    assert!(r.flows.is_empty());
    assert_eq!(r.udp.len(), 1);
    assert_eq!(r.udp[0].datagrams, 5);
    assert!(r.warnings.iter().any(|w| w.contains("no TCP segment")), "{:?}", r.warnings);
}

#[test]
fn timestamps_that_go_backwards_are_named_and_held() {
    let (mut pkts, _) = simulate(&Path { segments: 50, ..path() });
    pkts[20].t = pkts[19].t - 5 * MS;
    let r = run(&write_pcap("backwards.pcap", &pkts, 65535));
    assert_eq!(r.capture.time_backwards, 1);
    assert!(r.capture.problems.iter().any(|p| p.starts_with("packet 21: its timestamp is 0.005000 s before")), "{:?}", r.capture.problems);
    assert_eq!(only_flow(&r).bytes_acked, 50 * 1448, "the flow is still analysed");
}

#[test]
fn linux_cooked_and_raw_ip_link_types_are_read() {
    let (pkts, _) = simulate(&Path { segments: 40, ..path() });
    for (name, datalink, strip, prefix) in [
        ("raw.pcap", DataLink::RAW, 14usize, vec![]),
        ("sll.pcap", DataLink::LINUX_SLL, 14, {
            let mut h = vec![0u8, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0];
            h.extend_from_slice(&[0x08, 0x00]);
            h
        }),
        ("sll2.pcap", DataLink::LINUX_SLL2, 14, {
            let mut h = vec![0x08, 0x00, 0, 0, 0, 0, 0, 2, 0, 1, 0, 6];
            h.extend_from_slice(&[2, 0, 0, 0, 0, 1, 0, 0]);
            h
        }),
    ] {
        let path = tmp(name);
        let file = std::fs::File::create(&path).unwrap();
        let header = PcapHeader { datalink, ..Default::default() };
        let mut w = PcapWriter::with_header(file, header).unwrap();
        for p in &pkts {
            let mut data = prefix.clone();
            data.extend_from_slice(&p.data[strip..]);
            w.write_packet(&PcapPacket::new(Duration::from_micros(p.t / 1000), data.len() as u32, &data)).unwrap();
        }
        drop(w);
        let r = run(&path);
        assert!(r.capture.skipped.is_empty(), "{name}: {:?} {:?}", r.capture.skipped, r.capture.problems);
        assert_eq!(only_flow(&r).bytes_acked, 40 * 1448, "{name}");
    }
}

#[test]
fn a_startlab_udp_transfer_is_read_as_the_tcp_it_carries() {
    use startlab_udp::wire::{self, Body, Datagram};
    let key = [7u8; wire::KEY_LEN];
    let client = ([10, 203, 1, 1], 40000u16);
    let server = ([10, 203, 2, 1], 5201u16);
    let mut pkts = Vec::new();
    let mut pn = [0u64; 2];
    let mut put = |t: u64, from_client: bool, body: Body<'_>| {
        let side = usize::from(!from_client);
        pn[side] += 1;
        let d = Datagram { conn: 42, pn: pn[side], body };
        let mut buf = vec![0u8; wire::encoded_len(&d)];
        let n = wire::encode(&key, &mut buf, &d);
        let (src, dst) = if from_client { (client, server) } else { (server, client) };
        let mut data = Vec::new();
        PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]).ipv4(src.0, dst.0, 64).udp(src.1, dst.1).write(&mut data, &buf[..n]).unwrap();
        pkts.push(Pkt { t, data });
    };
    let payload = vec![0u8; 1000];
    let ack = |a: u64, sack: Option<(u64, u64)>| {
        let mut x = startlab_tcp::Ack { ack: a, rwnd: u64::MAX, ..Default::default() };
        if let Some(b) = sack {
            x.sack[0] = b;
            x.n_sack = 1;
        }
        Body::Ack { ack: x, verified: true, delay_ns: 0 }
    };
    // t = 0..9 ms: ten segments from the client (startlab-udp's data sender); the fourth is lost.
    for i in 0..10u64 {
        put(i * MS, true, Body::Data { seq: i * 1000, retransmit: false, ect: false, cwr: false, token: None, payload: &payload });
    }
    // t = 40..42 ms: the first three acknowledged, then duplicates with SACK.
    for i in 0..3u64 {
        put(40 * MS + i * MS, false, ack((i + 1) * 1000, None));
    }
    for i in 4..10u64 {
        put(40 * MS + i * MS, false, ack(3000, Some((4000, (i + 1) * 1000))));
    }
    // t = 47 ms: the fourth again; its ACK covers everything.
    put(47 * MS, true, Body::Data { seq: 3000, retransmit: true, ect: false, cwr: false, token: None, payload: &payload });
    put(87 * MS, false, ack(10_000, None));
    let r = run(&write_pcap("startlab-udp.pcap", &pkts, 65535));
    assert_eq!(r.capture.startlab_udp_packets, pkts.len() as u64, "every datagram is startlab-udp's");
    let f = only_flow(&r);
    assert_eq!(f.src, "10.203.1.1:40000", "the client sends the data");
    assert_eq!(f.bytes_acked, 10_000);
    assert_eq!((f.retransmissions, f.retransmissions_fast), (1, 1), "one fast retransmission after the duplicate ACKs");
    assert_eq!(f.exit_reason, "loss");
    assert!(f.base_rtt.is_some_and(|b| (0.039..0.041).contains(&b)), "Karn's samples: 40 ms, got {:?}", f.base_rtt);
    assert!(r.udp.is_empty(), "no datagram is left as plain UDP");
}

#[test]
fn a_plateau_shortly_before_a_loss_is_still_the_exit() {
    // The window stops at 60 segments; a segment sent soon after is lost before a whole round of
    // the plateau has passed: the exit is the plateau, not the loss.
    let p = Path { plateau: Some(60), drops: [125].into_iter().collect(), ..path() };
    let (pkts, truth) = simulate(&p);
    let r = run(&write_pcap("plateau-then-loss.pcap", &pkts, 65535));
    let f = only_flow(&r);
    assert_eq!(f.retransmissions, 1, "the loss is there");
    assert_eq!(f.exit_reason, "plateau", "rounds {:?}", f.round_growths);
    let t = f.startup_exit_time.expect("an exit") * 1e9;
    assert!((t - truth.exit_t as f64).abs() <= f.base_rtt.unwrap() * 1e9, "exit at {t}, truth {}", truth.exit_t);
    let w = f.exit_cwnd_pkts.expect("a flight");
    assert!((w / 60.0 - 1.0).abs() <= 0.10, "exit flight {w} segments, window 60");
}
