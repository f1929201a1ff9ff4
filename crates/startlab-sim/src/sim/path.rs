//! The packet path: arrival at a node, forwarding through a link's queue, drops, delivery to an
//! endpoint, and the ACKs that go back.

use super::*;

/// The fields of a dropped packet its accounting needs.
#[derive(Clone, Copy)]
pub(super) struct Dropped {
    pub(super) conn: u32,
    pub(super) kind: PktKind,
    pub(super) flow: u32,
    pub(super) flags: u16,
    pub(super) seq: u64,
    pub(super) len: u32,
}

/// The channel's dequeue reports matched to the packet trace's copy of its queue: each report is
/// the head of the queue starting transmission. Does nothing for a channel that is not traced.
pub(super) fn dequeue_hook<'a>(ptrace: Option<&'a mut PacketTracing>, packets: &'a mut PacketTrace, c: u32) -> impl FnMut(QueueChange) + 'a {
    let mut waiting = ptrace.filter(|p| p.channels[c as usize]).map(|p| &mut p.waiting[c as usize]);
    move |q: QueueChange| {
        if let Some(Some(r)) = waiting.as_mut().and_then(|w| w.pop_front()) {
            packets.push(q.time, c, PKT_DEQUEUE, &r, q.packets, q.bytes);
        }
    }
}

impl Simulation {
    pub(super) fn arrive(&mut self, node: u32, pkt: u32) {
        if self.arena.get(pkt).dst == node {
            self.deliver(pkt);
        } else {
            // A router (hosts never forward): one IP hop.
            let p = self.arena.get_mut(pkt);
            p.ttl = p.ttl.saturating_sub(1);
            if p.qs.is_some() {
                self.quick_start_hop(node, pkt);
            }
            self.forward(node, pkt);
        }
    }

    pub(super) fn forward(&mut self, node: u32, pkt: u32) {
        // Only the header fields: copying the whole packet (with its ACK and SACK blocks) per hop
        // costs a memcpy call.
        let (dst, size, pflags, kind, flow, conn) = {
            let p = self.arena.get(pkt);
            (p.dst, p.size, p.flags, p.kind, p.flow, p.conn)
        };
        let Some(c) = self.net.routes.next(node, dst) else {
            // Paths are checked when the simulation is built; this is a bug if it happens.
            self.violations.push(format!("no route from node {node} to {}", dst));
            self.drop_packet(pkt);
            return;
        };
        if self.net.channels[c as usize].is_aqm() {
            self.forward_aqm(c, pkt);
            return;
        }
        let now = self.now;
        let seq = self.q.next_seq();
        let trace_q = self.scenario.trace.queue;
        // The packet trace: None when this channel is not traced, else whether this packet is.
        let nf = self.flows.len() as u32;
        let traced = self.ptrace.as_ref().filter(|p| p.channels[c as usize]).map(|p| {
            let source = if kind == PktKind::Cross { nf + flow } else { flow };
            p.sources[source as usize].then(|| {
                let q = self.arena.get(pkt);
                let seq = if kind == PktKind::Ack { self.arena.ack(pkt).ack } else { q.seq };
                PacketRecord { kind: kind as u8, flow: source, seq, len: q.len, size, }
            })
        });
        let ch = &mut self.net.channels[c as usize];
        let mut record = queue_recorder(trace_q, &mut self.traces.queue, &mut self.gate_queue, c);
        {
            let mut dequeued = dequeue_hook(self.ptrace.as_deref_mut(), &mut self.traces.packets, c);
            ch.drain(now, |change| {
                dequeued(change);
                record(change);
            });
        }
        let before = ch.waiting_pkts();
        let ect = flags::ip_ecn(pflags) != startlab_tcp::IpEcn::NotEct;
        let offer = ch.offer(now, size, seq, pkt, ect, &mut record);
        drop(record);
        if let Some(rec) = traced {
            let (queued, qp, qb) = (ch.waiting_pkts() > before, ch.waiting_pkts(), ch.waiting_bytes());
            let pt = self.ptrace.as_deref_mut().expect("traced");
            let out = &mut self.traces.packets;
            match (&offer, rec) {
                (Offer::Accepted { marked, .. }, rec) => {
                    if queued {
                        // Its dequeue is reported when the channel drains it.
                        pt.waiting[c as usize].push_back(rec);
                    }
                    if let Some(r) = rec {
                        out.push(now, c, PKT_ENQUEUE, &r, qp, qb);
                        if *marked {
                            out.push(now, c, PKT_MARK, &r, qp, qb);
                        }
                        if !queued {
                            out.push(now, c, PKT_DEQUEUE, &r, qp, qb);
                        }
                    }
                }
                (Offer::Dropped, Some(r)) => out.push(now, c, PKT_DROP, &r, qp, qb),
                (Offer::Lost, Some(r)) => out.push(now, c, PKT_LOST, &r, qp, qb),
                _ => {}
            }
        }
        match offer {
            Offer::Accepted { arrival, start, first, marked } => {
                if marked && pflags & flags::CE == 0 {
                    self.arena.get_mut(pkt).flags |= flags::CE;
                    if kind == PktKind::Data && conn == self.flows[flow as usize].conn {
                        let m = &mut self.flows[flow as usize].m;
                        m.ecn_marks += 1;
                        m.marked_startup += (pflags & flags::STARTUP != 0) as u64;
                    }
                }
                if self.pcap.is_some() {
                    self.capture(c, start, pkt);
                }
                let ch = &mut self.net.channels[c as usize];
                if first {
                    self.q.push_with_seq(arrival, seq, Source::Channel(c));
                }
                if let Some(link) = self.qs.as_mut().and_then(|qs| qs.links[c as usize].as_mut()) {
                    link.add(now, size as u64);
                }
                let occ = ch.waiting_pkts();
                if occ > before && !ch.early_watch.is_empty() {
                    if now > ch.early_next_end {
                        // Every rise held in the accumulator came before the earliest window
                        // ended: it counts for every watching flow; then the ended windows go.
                        early_settle(ch, &mut self.flows, |end, _| (now > end).then_some(true));
                    }
                    ch.early_acc = ch.early_acc.max(occ);
                }
            }
            Offer::Dropped => self.drop_packet(pkt),
            Offer::Queued { .. } => unreachable!("a FIFO channel answers at once"),
            Offer::Lost => {
                if kind == PktKind::Data && conn == self.flows[flow as usize].conn {
                    self.flows[flow as usize].m.impairment_drops += 1;
                }
                self.drop_packet(pkt);
            }
        }
    }

    pub(super) fn drop_packet(&mut self, pkt: u32) {
        let p = {
            let q = self.arena.get(pkt);
            Dropped { kind: q.kind, flow: q.flow, flags: q.flags, seq: q.seq, len: q.len, conn: q.conn }
        };
        self.stats.dropped_packets += 1;
        if p.kind != PktKind::Cross && p.conn != self.flows[p.flow as usize].conn {
            // A packet of the slot's earlier connection.
            if let (PktKind::Data, Some(u)) = (p.kind, self.flows[p.flow as usize].user.as_mut()) {
                u.past.2 += 1;
            }
            self.arena.free(pkt);
            return;
        }
        if p.kind == PktKind::Request {
            // The client's timer resends a lost request (it would have heard nothing back); one
            // timer for the request's lost parts.
            if let Some(app) = self.flows[p.flow as usize].app.as_mut() {
                if app.retry_at.is_none_or(|t| t <= self.now) {
                    app.retry_at = Some(self.now + REQUEST_RETRY);
                    self.q.push(self.now + REQUEST_RETRY, Source::Request(p.flow));
                }
            }
        }
        if p.kind == PktKind::Data {
            let fl = &mut self.flows[p.flow as usize];
            fl.m.dropped += 1;
            if p.flags & flags::RETRANSMIT != 0 {
                fl.m.dropped_retransmissions += 1;
            }
            if p.flags & flags::STARTUP != 0 {
                fl.m.dropped_startup += 1;
            }
            if p.flags & flags::EARLY != 0 {
                fl.m.early_losses += 1;
            }
            self.seq_event(p.flow, SEQ_DROPPED, p.seq, p.len);
        }
        self.arena.free(pkt);
    }

    #[inline]
    pub(super) fn seq_event(&mut self, flow: u32, kind: u8, seq: u64, len: u32) {
        if let Some(tap) = self.qlog.as_deref_mut().filter(|t| t.logs(flow)) {
            if self.flows[flow as usize].quic.is_none() {
                match kind {
                    SEQ_SENT | SEQ_RETRANSMITTED => tap.segment_sent(flow, self.now, seq, len, kind == SEQ_RETRANSMITTED),
                    SEQ_ACKED => tap.ack_advanced(flow, self.now, seq),
                    _ => {}
                }
            }
        }
        if self.scenario.trace.seq && self.gate_seq.pass(flow as usize, self.now) {
            let t = &mut self.traces.seq;
            t.time.push(self.now.as_secs_f64());
            t.flow.push(flow);
            t.event.push(kind);
            t.seq.push(seq);
            t.len.push(len);
        }
    }

    pub(super) fn deliver(&mut self, pkt: u32) {
        if Arena::is_quic(pkt) {
            return self.deliver_quic(pkt);
        }
        let now = self.now;
        if self.arena.get(pkt).kind == PktKind::Ack {
            // The common case copies only the ACK, not the whole packet.
            let (flow, ack, conn) = {
                let p = self.arena.get(pkt);
                (p.flow, self.arena.ack(pkt), p.conn)
            };
            self.arena.free(pkt);
            if conn == self.flows[flow as usize].conn {
                self.on_ack(flow, &ack);
            }
            return;
        }
        let p = *self.arena.get(pkt);
        // A request's part number rides in its ACK contents.
        let part = if p.kind == PktKind::Request { self.arena.ack(pkt).ack } else { 0 };
        self.arena.free(pkt);
        if p.kind != PktKind::Cross {
            let fl = &mut self.flows[p.flow as usize];
            if p.conn != fl.conn {
                // A packet of the slot's earlier connection: that socket is closed.
                if p.kind == PktKind::Data {
                    self.stats.delivered_packets += 1;
                    if let Some(u) = fl.user.as_mut() {
                        u.past.1 += 1;
                    }
                }
                return;
            }
        }
        match p.kind {
            PktKind::Cross => {
                if matches!(self.cross[p.flow as usize].process, CrossProcess::Train { .. }) {
                    self.probe[p.seq as usize].received = Some(self.now);
                }
            }
            PktKind::Data => {
                self.stats.delivered_packets += 1;
                let fl = &mut self.flows[p.flow as usize];
                fl.m.delivered_pkts += 1;
                if let Some(req) = &p.qs {
                    fl.receiver.on_quick_start_request(req, p.ttl);
                }
                let ack = fl.receiver.on_segment_ip(now, p.seq, p.len, flags::ip_ecn(p.flags), p.flags & flags::CWR != 0);
                fl.rtimer.sync(&mut self.q, fl.receiver.next_timeout(), Source::ReceiverTimer(p.flow));
                let delivered = fl.receiver.delivered();
                let mut user_done = None;
                if let Some(app) = fl.app.as_mut() {
                    if app.answered > app.next && delivered >= app.end {
                        // The whole response is at the client: the exchange is done.
                        let took = now - app.requested_at;
                        app.next += 1;
                        app.awaiting = false;
                        if fl.user.is_some() {
                            user_done = Some(took);
                        } else {
                            app.done.push((app.requested_at.as_secs_f64(), took.as_secs_f64()));
                            if app.has(app.next) {
                                self.q.push(now + app.think(app.next), Source::Request(p.flow));
                            }
                        }
                    }
                }
                if let Some(ack) = ack {
                    self.send_ack(p.flow, ack);
                }
                if let Some(took) = user_done {
                    self.user_response_done(p.flow, took);
                }
            }
            PktKind::Syn => {
                let receiver = &mut self.flows[p.flow as usize].receiver;
                if let Some(req) = &p.qs {
                    receiver.on_quick_start_request(req, p.ttl);
                }
                let ack = receiver.on_syn_ecn(SynEcn {
                    ae: p.flags & flags::AE != 0,
                    cwr: p.flags & flags::CWR != 0,
                    ece: p.flags & flags::ECE != 0,
                    ip: flags::ip_ecn(p.flags),
                });
                self.send_ack(p.flow, ack);
                let fl = &self.flows[p.flow as usize];
                if let Some(a) = fl.app.as_ref().filter(|a| a.next == 0 && !a.awaiting) {
                    self.q.push(now + a.think(0), Source::Request(p.flow));
                }
            }
            PktKind::Ack => unreachable!("ACKs are delivered above"),
            PktKind::Request => {
                // The server's application answers request `seq` (a resent copy of a request
                // already answered is ignored).
                let fl = &mut self.flows[p.flow as usize];
                if let Some(app) = fl.app.as_mut() {
                    if p.seq as usize == app.answered && !app.requests.is_empty() {
                        // A request of several packets is answered once all its parts are in.
                        let mss = fl.sender.cc().mss();
                        if app.parts.is_empty() {
                            app.parts = vec![false; app.request_bytes(app.answered).div_ceil(mss) as usize];
                        }
                        if let Some(got) = app.parts.get_mut(part as usize) {
                            *got = true;
                        }
                        if !app.parts.iter().all(|&g| g) {
                            return;
                        }
                        app.parts.clear();
                    }
                    if p.seq as usize == app.answered {
                        let bytes = app.size(app.answered);
                        app.answered += 1;
                        let mss = fl.sender.cc().mss();
                        app.end += bytes.div_ceil(mss) * mss;
                        fl.sender.push(now, bytes);
                        self.after_sender(p.flow);
                    }
                }
            }
        }
    }

    pub(super) fn send_ack(&mut self, f: u32, ack: Ack) {
        let fl = &mut self.flows[f as usize];
        if !ack.syn_ack {
            if ack.ack < fl.m.last_ack_sent {
                self.violations.push(format!("flow {}: the receiver's cumulative ACK went back from {} to {}", fl.name, fl.m.last_ack_sent, ack.ack));
            }
            fl.m.last_ack_sent = fl.m.last_ack_sent.max(ack.ack);
        }
        let (from, to, mut size, conn) = (fl.dst, fl.src, fl.header, fl.conn);
        if ack.qs.is_some() {
            size += QS_OPTION_BYTES;
        }
        if ack.accecn.is_some() {
            size += startlab_tcp::AccEcnFeedback::OPTION_BYTES;
        }
        let pkt = self.arena.alloc_with_ack(Packet { kind: PktKind::Ack, flow: f, dst: to, size, seq: 0, len: 0, flags: 0, ttl: INITIAL_IP_TTL, qs: None, conn }, ack);
        self.forward(from, pkt);
    }

    pub(super) fn on_ack(&mut self, f: u32, ack: &Ack) {
        let now = self.now;
        let fl = &mut self.flows[f as usize];
        // A reordering impairment may deliver an older ACK after a newer one (the sender ignores
        // it); the receiver's own emissions are checked in `send_ack` either way.
        if !ack.syn_ack && !self.reordering {
            if ack.ack < fl.m.last_ack {
                self.violations.push(format!("flow {}: cumulative ACK went back from {} to {}", fl.name, fl.m.last_ack, ack.ack));
            }
            fl.m.last_ack = fl.m.last_ack.max(ack.ack);
        }
        let newly = fl.sender.on_ack(now, ack);
        if newly > 0 {
            self.on_progress(f, newly);
            let fl = &self.flows[f as usize];
            if fl.user.as_ref().is_some_and(|u| !u.persistent && !u.scheduled) && fl.sender.completed_at().is_some() {
                self.user_connection_done(f);
            }
        }
        self.after_sender(f);
    }

    /// Flow `f`'s in-order acknowledged bytes grew by `newly`: the time to 90 % of the available
    /// rate, and the seq trace.
    pub(super) fn on_progress(&mut self, f: u32, newly: u64) {
        let now = self.now;
        let fl = &mut self.flows[f as usize];
        {
            let una = fl.snd_una();
            // Time to 90 % of the available rate: bytes newly ACKed over the last base RTT.
            if let (None, Some(avail), Some(t0)) = (fl.m.t90, fl.available, fl.first_data_time()) {
                let rtt = fl.base_rtt;
                let w = &mut fl.m.window;
                if w.is_empty() {
                    w.push_back((t0, 0));
                }
                w.push_back((now, una));
                let from = Time(now.as_nanos().saturating_sub(rtt.as_nanos()));
                while w.len() >= 2 && w[1].0 <= from {
                    w.pop_front();
                }
                if now.as_nanos() >= t0.as_nanos() + rtt.as_nanos() && w[0].0 <= from {
                    let rate = (una - w[0].1) as f64 * 8.0 / rtt.as_secs_f64();
                    if rate >= 0.9 * avail {
                        fl.m.t90 = Some(now);
                        w.clear();
                        w.shrink_to_fit();
                    }
                }
            }
            self.seq_event(f, SEQ_ACKED, una, newly as u32);
        }
    }
}
