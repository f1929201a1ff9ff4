//! The packet path through a link whose queue is a dequeue-time discipline (CoDel, FQ-CoDel, …;
//! aqm/): a packet is offered to the discipline, which may drop it or others at once; each time
//! the link goes free a `Dequeue` event asks the discipline for the next packet, which may come
//! with packets it dropped on the way and with a CE mark.

use super::*;
use crate::aqm::{DropCause, Ecn};
use crate::trace::QueueTrace;

/// The queue trace's recorder for channel `c` (a no-op when the queue trace is off).
pub(super) fn queue_recorder<'a>(on: bool, traces: &'a mut QueueTrace, gate: &'a mut Gate, c: u32) -> impl FnMut(QueueChange) + 'a {
    move |q: QueueChange| {
        if on && gate.pass(c as usize, q.time) {
            traces.time.push(q.time.as_secs_f64());
            traces.link.push(c);
            traces.packets.push(q.packets);
            traces.bytes.push(q.bytes);
            traces.red_avg.push(q.red_avg);
            traces.sojourn.push(q.sojourn.map_or(f64::NAN, |d| d.as_secs_f64()));
        }
    }
}

/// The flow key a discipline hashes (the 5-tuple's stand-in): the connection and the direction.
fn flow_key(p: &Packet) -> u64 {
    let cross = (p.kind == PktKind::Cross) as u64;
    (cross << 63) ^ ((p.flow as u64) << 32) ^ ((p.conn as u64) << 12) ^ p.dst as u64
}

impl Simulation {
    /// The packet trace's record of `pkt` on channel `c`, if both are traced.
    fn aqm_record(&self, c: u32, pkt: u32) -> Option<PacketRecord> {
        let pt = self.ptrace.as_ref().filter(|p| p.channels[c as usize])?;
        let q = self.arena.get(pkt);
        let source = if q.kind == PktKind::Cross { self.flows.len() as u32 + q.flow } else { q.flow };
        pt.sources[source as usize].then(|| PacketRecord {
            kind: q.kind as u8,
            flow: source,
            seq: if q.kind == PktKind::Ack { self.arena.ack(pkt).ack } else { q.seq },
            len: q.len,
            size: q.size,
        })
    }

    fn aqm_trace(&mut self, c: u32, event: u8, rec: Option<PacketRecord>) {
        if let Some(r) = rec {
            let ch = &self.net.channels[c as usize];
            self.traces.packets.push(self.now, c, event, &r, ch.waiting_pkts(), ch.waiting_bytes());
        }
    }

    /// Forwards `pkt` into channel `c`'s discipline.
    pub(super) fn forward_aqm(&mut self, c: u32, pkt: u32) {
        let now = self.now;
        let (key, size, ecn) = {
            let p = self.arena.get(pkt);
            let ecn = match flags::ip_ecn(p.flags) {
                startlab_tcp::IpEcn::NotEct => Ecn::NotEct,
                startlab_tcp::IpEcn::Ect0 => Ecn::Ect0,
                startlab_tcp::IpEcn::Ect1 => Ecn::Ect1,
                startlab_tcp::IpEcn::Ce => Ecn::Ce,
            };
            (flow_key(p), p.size, ecn)
        };
        let rec = self.aqm_record(c, pkt);
        let ch = &mut self.net.channels[c as usize];
        let before = ch.waiting_pkts();
        let offer = ch.aqm_enqueue(now, size, pkt, key, ecn, queue_recorder(self.scenario.trace.queue, &mut self.traces.queue, &mut self.gate_queue, c));
        match offer {
            Offer::Queued { dequeue_at } => {
                self.aqm_trace(c, PKT_ENQUEUE, rec);
                if let Some(link) = self.qs.as_mut().and_then(|qs| qs.links[c as usize].as_mut()) {
                    link.add(now, size as u64);
                }
                let ch = &mut self.net.channels[c as usize];
                let occ = ch.waiting_pkts();
                if occ > before && !ch.early_watch.is_empty() {
                    if now > ch.early_next_end {
                        early_settle(ch, &mut self.flows, |end, _| (now > end).then_some(true));
                    }
                    ch.early_acc = ch.early_acc.max(occ);
                }
                self.aqm_drops(c);
                match dequeue_at {
                    Some(t) if t <= now => self.aqm_service(c),
                    Some(t) => {
                        self.q.push(t, Source::Dequeue(c));
                    }
                    None => {}
                }
            }
            Offer::Accepted { .. } | Offer::Dropped | Offer::Lost => unreachable!("a dequeue-time queue answers Queued"),
        }
    }

    /// Drops what channel `c`'s discipline decided to drop (checked inline: mostly nothing).
    #[inline]
    fn aqm_drops(&mut self, c: u32) {
        if self.net.channels[c as usize].has_aqm_drops() {
            self.take_aqm_drops(c);
        }
    }

    fn take_aqm_drops(&mut self, c: u32) {
        for (pkt, cause) in self.net.channels[c as usize].take_aqm_drops() {
            let rec = self.aqm_record(c, pkt);
            if cause == DropCause::Impairment {
                self.aqm_trace(c, PKT_LOST, rec);
                let p = self.arena.get(pkt);
                if p.kind == PktKind::Data && p.conn == self.flows[p.flow as usize].conn {
                    self.flows[p.flow as usize].m.impairment_drops += 1;
                }
            } else {
                self.aqm_trace(c, PKT_DROP, rec);
            }
            self.drop_packet(pkt);
        }
    }

    /// Channel `c`'s link went free: the discipline's next packet starts transmission.
    pub(super) fn aqm_service(&mut self, c: u32) {
        let now = self.now;
        let seq = self.q.next_seq();
        let ch = &mut self.net.channels[c as usize];
        let (dep, next) = ch.aqm_dequeue(now, seq, queue_recorder(self.scenario.trace.queue, &mut self.traces.queue, &mut self.gate_queue, c));
        self.aqm_drops(c);
        if let Some(d) = dep {
            let rec = self.aqm_record(c, d.pkt);
            let p = self.arena.get_mut(d.pkt);
            if d.ce && p.flags & flags::CE == 0 {
                p.flags |= flags::CE;
                let (kind, flow, conn, startup) = (p.kind, p.flow, p.conn, p.flags & flags::STARTUP != 0);
                self.net.channels[c as usize].stats.marks += 1;
                if kind == PktKind::Data && conn == self.flows[flow as usize].conn {
                    let m = &mut self.flows[flow as usize].m;
                    m.ecn_marks += 1;
                    m.marked_startup += startup as u64;
                }
                self.aqm_trace(c, PKT_MARK, rec);
            }
            self.aqm_trace(c, PKT_DEQUEUE, rec);
            if self.pcap.is_some() {
                self.capture(c, now, d.pkt);
            }
            if d.first {
                self.q.push_with_seq(d.arrival, seq, Source::Channel(c));
            }
        }
        if let Some(t) = next {
            self.q.push(t, Source::Dequeue(c));
        }
    }
}
