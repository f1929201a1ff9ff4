//! The serving side of a QUIC flow: the QUIC *client* endpoint the INIT describes (it opens the
//! QUIC connection, sends the request, receives the response and acknowledges it).

use super::{Ends, State};
use crate::send::{ip_ecn, plausible};
use crate::wire::{self, Body, Datagram, DropReason, QuicDatagram, QuicSettings};

/// A QUIC datagram the serving side read, owned.
pub(super) enum QuicIn {
    /// A QUIC INIT.
    Init(QuicSettings),
    /// A QUIC packet.
    Packet(QuicDatagram),
}
use crate::{net, NetError, QuicClientReport};
use startlab_quic::endpoint::Endpoint;
use startlab_quic::Space;
use startlab_tcp::IpEcn;
use startlab_units::Time;
use std::net::SocketAddr;

/// The QUIC client endpoint and what its report needs.
pub(super) struct QuicEnd {
    pub(super) client: Endpoint,
    settings: QuicSettings,
    pub(super) ce_received: u64,
    oversize: u64,
    /// The latest time handed to the endpoint: an event's time never goes back before it.
    floor: Time,
}

impl QuicEnd {
    pub(super) fn report(&self) -> QuicClientReport {
        let s = &self.settings;
        let st = self.client.sender().stats();
        QuicClientReport {
            handshake: s.handshake,
            handshake_complete: self.client.is_complete(),
            request: s.request,
            max_datagram_size: s.max_datagram_size,
            ack_eliciting_threshold: s.ack_policy.ack_eliciting_threshold,
            max_ack_delay_s: s.ack_policy.max_ack_delay.as_secs_f64(),
            max_data: s.receive_window,
            ecn: s.ecn,
            packets_sent: st.packets_sent,
            ptos: st.ptos,
            oversize_datagrams: self.oversize,
        }
    }
}

impl State {
    /// A QUIC INIT or QUIC packet (decoded, not yet authenticated) from `src`, `n` bytes, with the
    /// ECN bits `ecn` of its IP header.
    /// `(conn, pn)`: the datagram's connection id and packet number.
    pub(super) fn on_quic(&mut self, now: Time, n: usize, src: Option<SocketAddr>, ecn: u8, (conn, pn): (u64, u64), d: QuicIn) -> Result<(), NetError> {
        let Some(src) = src else {
            self.drops.count(DropReason::WrongPeer);
            return Ok(());
        };
        if let Some(r) = self.reject(matches!(d, QuicIn::Init(_)), conn, src, n) {
            self.drops.count(r);
            return Ok(());
        }
        if let (None, QuicIn::Init(settings)) = (&self.conn, &d) {
            if settings.ecn {
                // tcp.ecn = true: every packet of the connection leaves ECT(0), as in the simulator.
                net::set_ecn(&self.sock, src.is_ipv6(), true).map_err(|e| NetError::Io { context: "setting the ECN codepoint".into(), source: e.into() })?;
            }
            let end = QuicEnd { client: settings.client_endpoint(), settings: *settings, ce_received: 0, oversize: 0, floor: Time::ZERO };
            self.open(conn, src, now, Ends::Quic(Box::new(end)))?;
        }
        if !self.accept(pn, n, now) {
            return Ok(());
        }
        let c = self.conn.as_mut().expect("the connection exists now");
        let Ends::Quic(q) = &mut c.ends else {
            // A TCP connection's peer sending QUIC.
            self.drops.count(DropReason::UnexpectedType);
            return Ok(());
        };
        // The endpoint's time for this datagram is the kernel's arrival stamp (`ack_delay` ago),
        // as the simulator delivers a packet the moment it arrives; the host's delay since then
        // travels as the hold of what the endpoint sends in answer.
        let at = Time(now.as_nanos().saturating_sub(self.ack_delay.as_nanos())).max(q.floor);
        q.floor = at;
        self.ack_delay = now.saturating_since(at);
        match d {
            QuicIn::Init(_) => {
                // The first INIT and every repeat are answered; the endpoint then opens (its
                // first Initial, or without a handshake its request).
                let token = c.token;
                self.send(Body::InitAck { token, syn_ack: None })?;
            }
            QuicIn::Packet(QuicDatagram { packet, .. }) => {
                if !plausible(&packet, pn, &q.client) {
                    self.drops.count(DropReason::Malformed);
                    return Ok(());
                }
                let ecn = ip_ecn(ecn);
                q.ce_received += (ecn == IpEcn::Ce) as u64;
                q.client.on_packet(at, &packet, ecn);
                if packet.space == Space::AppData && packet.data.is_some() {
                    let t0 = *c.first_data.get_or_insert(now);
                    c.last_data = now;
                    c.timeline.record(now.saturating_since(t0).as_nanos(), q.client.stream_received());
                }
            }
        }
        self.quic_pump(at)
    }

    /// The endpoint's timer, due `ack_delay` ago, fired at `now`: the endpoint is told it fired on
    /// time, and what it sends carries the lateness as its hold.
    pub(super) fn quic_timer(&mut self, now: Time) -> Result<(), NetError> {
        let Some(Ends::Quic(q)) = self.conn.as_mut().map(|c| &mut c.ends) else { return Ok(()) };
        let at = Time(now.as_nanos().saturating_sub(self.ack_delay.as_nanos())).max(q.floor);
        q.floor = at;
        self.ack_delay = now.saturating_since(at);
        q.client.on_timeout(at);
        self.quic_pump(at)
    }

    /// Sends what the QUIC client releases at `now` (the endpoint's time), each packet with the
    /// hold since then (`ack_delay`, which the TCP mode's ACKs carry too).
    fn quic_pump(&mut self, now: Time) -> Result<(), NetError> {
        let hold = std::mem::take(&mut self.ack_delay);
        loop {
            let Some(c) = self.conn.as_mut() else { return Ok(()) };
            let Ends::Quic(q) = &mut c.ends else { return Ok(()) };
            let Some(packet) = q.client.poll_transmit(now) else { return Ok(()) };
            if packet.ack.is_some() {
                self.acks_sent += 1;
                self.ack_lag.record(hold);
            }
            let size = packet.size as usize;
            let body = Body::Quic(QuicDatagram { hold_ns: hold.as_nanos().min(u32::MAX as u64) as u32, packet });
            if wire::encoded_len(&Datagram { conn: c.id, pn: c.next_pn, body: body.clone() }) > size {
                q.oversize += 1;
            }
            self.send(body)?;
        }
    }
}
