//! A QUIC endpoint with its handshake (RFC 9000 §7, RFC 9001 §4): the client and the server of
//! one connection, each a [`Sender`] for what it must deliver and a [`Receiver`] per
//! packet-number space for what it must acknowledge.
//!
//! The handshake is modelled by the sizes of its TLS messages ([`HandshakeSizes`]), carried as
//! CRYPTO data and delivered reliably like any data (lost packets' bytes are sent again, probe
//! timeouts resend the oldest), not by their content:
//! 1. The client sends its ClientHello in Initial packets padded to 1200 bytes (RFC 9000 §14.1).
//! 2. The server, once the ClientHello is in, sends its ServerHello (Initial) and its
//!    EncryptedExtensions, Certificate, CertificateVerify and Finished (Handshake). Until it has
//!    received a Handshake packet from the client it may send at most three times the bytes it
//!    received (the anti-amplification limit, RFC 9000 §8.1).
//! 3. The client, once the server's flight is in, sends its Finished (Handshake) — the handshake is
//!    complete for it — and the request on the stream (1-RTT). It discards its Initial keys when it
//!    first sends a Handshake packet (RFC 9001 §4.9.1).
//! 4. The server discards its Initial keys on the first Handshake packet it receives (which also
//!    validates the client's address); on the client's Finished the handshake is complete and
//!    confirmed for it: it sends HANDSHAKE_DONE and discards its Handshake keys. On the whole
//!    request it opens the response: the stream's `size` bytes.
//! 5. The client confirms the handshake on HANDSHAKE_DONE and discards its Handshake keys.
//!
//! Until then the client keeps a probe timeout armed even with nothing in flight (RFC 9002
//! §6.2.2.1). The controller hears of the handshake once, before the response's first byte
//! (`on_handshake` with the first RTT sample), as a TCP sender does after the SYN-ACK.
//!
//! Without a handshake (`handshake = false`) both ends start with their application data space
//! open and the handshake confirmed: the response leaves at once, as a resumed 0-RTT connection's
//! would.

use startlab_cc::Controller;
use startlab_tcp::parts::RangeSet;
use startlab_units::{Dur, Time};

use crate::ack::{AckFrequency, AckPolicy, Ecn, Receiver};
use crate::sender::{Sender, SenderConfig, Transmit};
use crate::Space;

/// Bytes of the handshake's TLS messages, as CRYPTO data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HandshakeSizes {
    /// The ClientHello (with its key shares and extensions).
    pub client_hello: u32,
    /// The ServerHello.
    pub server_hello: u32,
    /// EncryptedExtensions, Certificate, CertificateVerify and Finished: mostly the certificate
    /// chain.
    pub server_flight: u32,
    /// The client's Finished.
    pub client_finished: u32,
}

impl Default for HandshakeSizes {
    /// Typical of TLS 1.3 with X25519 and a two-certificate RSA chain.
    fn default() -> Self {
        HandshakeSizes { client_hello: 300, server_hello: 123, server_flight: 3000, client_finished: 52 }
    }
}

/// Which end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Opens the connection, sends the request, receives the response.
    Client,
    /// Answers, receives the request, sends the response.
    Server,
}

/// An endpoint's settings.
#[derive(Clone, Debug, PartialEq)]
pub struct EndpointConfig {
    /// Which end.
    pub role: Role,
    /// Run the handshake (else both ends start confirmed, application data only).
    pub handshake: bool,
    /// The handshake messages' sizes.
    pub sizes: HandshakeSizes,
    /// The request's bytes (the client's stream data; the server waits for all of it).
    pub request: u64,
    /// The response's bytes the server sends (`None`: unlimited). Ignored by the client.
    pub response: Option<u64>,
    /// How this end acknowledges (application data; Initial and Handshake packets are always
    /// acknowledged at once).
    pub ack_policy: AckPolicy,
    /// This end's receive window on the stream (`initial_max_data` / `initial_max_stream_data`
    /// and the MAX_DATA frames that follow; `None`: unlimited). The application reads at once,
    /// and the limit is raised to `delivered + window` whenever half a window has been
    /// delivered since the last raise (as quinn and quiche do).
    pub receive_window: Option<u64>,
    /// The peer's receive window, from its transport parameters.
    pub peer_receive_window: Option<u64>,
    /// The server asks the client, once the handshake is confirmed, to acknowledge with this
    /// ACK_FREQUENCY (draft-ietf-quic-ack-frequency; the sequence number is set here). `None`: RFC
    /// 9000's every-second-packet ACKs stay.
    pub request_ack_frequency: Option<AckFrequency>,
    /// The sending half's settings (its `size` and `pad_initial` are set here).
    pub sender: SenderConfig,
}

/// A QUIC endpoint.
///
/// `repr(C)`: the handshake's flags first, then what a packet's arrival reads (the peer's bytes
/// and packet numbers received, the application data space's last in each array, next to the
/// sending half's first fields), the configuration last.
#[derive(Debug)]
#[repr(C)]
pub struct Endpoint {
    /// Per space: its keys were discarded.
    discarded: [bool; 3],
    complete: bool,
    confirmed: bool,
    responding: bool,
    /// The receive limit last advertised.
    advertised: Option<u64>,
    /// When the handshake completed (client: its Finished went; server: the client's arrived).
    completed_at: Option<Time>,
    /// Per space: the peer's bytes received (CRYPTO data; the stream in application data).
    received: [RangeSet; 3],
    receivers: [Receiver; 3],
    sender: Sender,
    cfg: EndpointConfig,
}

impl Endpoint {
    /// An endpoint with `cfg` whose sending half drives `cc`.
    pub fn new(cfg: EndpointConfig, cc: Controller) -> Endpoint {
        let client = cfg.role == Role::Client;
        let mut sender = Sender::closed(SenderConfig { pad_initial: client, size: None, ..cfg.sender.clone() }, cc);
        sender.set_peer_max_data(cfg.peer_receive_window);
        let started = !cfg.handshake;
        if started {
            sender.loss_detection_mut().confirm_handshake();
            sender.open_space(Space::AppData, if client { Some(0) } else { cfg.response });
            if let Some(f) = cfg.request_ack_frequency.filter(|_| !client) {
                sender.queue_ack_frequency(AckFrequency { sequence: 0, ..f });
            }
        } else if client {
            sender.open_space(Space::Initial, Some(cfg.sizes.client_hello as u64));
            sender.loss_detection_mut().set_peer_awaits_validation(true);
        } else {
            // Nothing may leave before the client's first bytes arrive.
            sender.set_amplification(Some(0));
        }
        Endpoint {
            receivers: Space::ALL.map(|sp| Receiver::new(sp, cfg.ack_policy)),
            sender,
            received: Default::default(),
            discarded: [false; 3],
            complete: started,
            confirmed: started,
            responding: started && !client,
            completed_at: None,
            advertised: cfg.receive_window,
            cfg,
        }
    }

    /// The sending half.
    pub fn sender(&self) -> &Sender {
        &self.sender
    }
    /// The sending half, to change (the simulator's qlog output keeps its lost-packet log).
    pub fn sender_mut(&mut self) -> &mut Sender {
        &mut self.sender
    }
    /// The handshake is complete at this end.
    pub fn is_complete(&self) -> bool {
        self.complete
    }
    /// The handshake is confirmed at this end.
    pub fn is_confirmed(&self) -> bool {
        self.confirmed
    }
    /// When the handshake completed at this end.
    pub fn completed_at(&self) -> Option<Time> {
        self.completed_at
    }
    /// The peer's stream bytes received in order (the response, at a client).
    pub fn stream_received(&self) -> u64 {
        self.received[Space::AppData as usize].first().filter(|&(s, _)| s == 0).map_or(0, |(_, e)| e)
    }
    /// The server sends its response (every byte of the request is in).
    pub fn is_responding(&self) -> bool {
        self.responding
    }

    /// The next packet to send at `now`.
    pub fn poll_transmit(&mut self, now: Time) -> Option<Transmit> {
        let t = self.sender.poll_transmit(now)?;
        if self.cfg.role == Role::Client && t.space == Space::Handshake && !self.discarded[Space::Initial as usize] {
            self.discard(Space::Initial);
        }
        Some(t)
    }

    fn discard(&mut self, space: Space) {
        self.discarded[space as usize] = true;
        self.sender.discard(space);
    }

    /// A packet from the peer arrived at `now` with ECN codepoint `ecn`.
    pub fn on_packet(&mut self, now: Time, p: &Transmit, ecn: Ecn) {
        let si = p.space as usize;
        if self.discarded[si] {
            return;
        }
        let server = self.cfg.role == Role::Server;
        if server {
            // RFC 9000 §8.1: three times what was received.
            self.sender.add_amplification_credit(3 * p.size as u64);
        }
        let (_, ack) = self.receivers[si].on_packet(now, p.pn, p.ack_eliciting, ecn);
        if let Some(a) = ack {
            self.sender.queue_ack(a);
        }
        if let Some(a) = &p.ack {
            if a.space == Space::Handshake && !server {
                // The server acknowledged a Handshake packet: it has validated this address.
                self.sender.loss_detection_mut().set_peer_awaits_validation(false);
            }
            self.sender.on_ack(now, a);
        }
        if let Some((off, len)) = p.data {
            self.received[si].insert(off, off + len as u64, |_, _| {});
        }
        if let Some(m) = p.max_data {
            self.sender.set_peer_max_data(Some(m));
        }
        if let Some(f) = &p.ack_frequency {
            self.receivers[Space::AppData as usize].apply_frequency(f);
        }
        if let (Space::AppData, Some(window), Some(adv)) = (p.space, self.cfg.receive_window, self.advertised) {
            let delivered = self.stream_received();
            if delivered + window >= adv + window / 2 {
                self.advertised = Some(delivered + window);
                self.sender.queue_max_data(delivered + window);
            }
        }
        if server && p.space == Space::Handshake && !self.discarded[Space::Initial as usize] {
            // The client's address is validated; its Initial keys are no longer needed.
            self.sender.set_amplification(None);
            self.discard(Space::Initial);
        }
        if p.handshake_done && !server && !self.confirmed {
            self.confirmed = true;
            self.sender.loss_detection_mut().confirm_handshake();
            self.sender.loss_detection_mut().set_peer_awaits_validation(false);
            self.discard(Space::Handshake);
        }
        self.advance(now);
    }

    /// Moves the handshake on from what has been received.
    fn advance(&mut self, now: Time) {
        let sz = self.cfg.sizes;
        let has = |e: &Endpoint, sp: Space, n: u32| e.received[sp as usize].covers(0, n as u64) || n == 0;
        match self.cfg.role {
            Role::Server => {
                if !self.sender.is_open(Space::Initial) && !self.discarded[Space::Initial as usize] && has(self, Space::Initial, sz.client_hello) {
                    self.sender.open_space(Space::Initial, Some(sz.server_hello as u64));
                    self.sender.open_space(Space::Handshake, Some(sz.server_flight as u64));
                }
                if !self.complete && self.cfg.handshake && has(self, Space::Handshake, sz.client_finished) {
                    self.complete = true;
                    self.confirmed = true;
                    self.completed_at = Some(now);
                    self.sender.loss_detection_mut().confirm_handshake();
                    self.sender.open_space(Space::AppData, Some(0));
                    self.sender.queue_handshake_done();
                    if let Some(f) = self.cfg.request_ack_frequency {
                        self.sender.queue_ack_frequency(AckFrequency { sequence: 0, ..f });
                    }
                    self.discard(Space::Handshake);
                }
                let request_in = |e: &Endpoint| e.cfg.request == 0 || e.received[Space::AppData as usize].covers(0, e.cfg.request);
                if self.complete && !self.responding && request_in(self) {
                    self.responding = true;
                    self.sender.set_len(Space::AppData, self.cfg.response);
                    let rtt = self.sender.loss_detection().rtt().latest();
                    let queued = self.cfg.response;
                    self.sender.controller_mut().on_handshake(rtt.max(Dur(1)), queued);
                }
            }
            Role::Client => {
                if !self.sender.is_open(Space::Handshake) && !self.discarded[Space::Handshake as usize] && has(self, Space::Initial, sz.server_hello) {
                    // Handshake keys: acknowledge the server's flight as it arrives.
                    self.sender.open_space(Space::Handshake, Some(0));
                }
                if !self.complete && has(self, Space::Handshake, sz.server_flight) && self.sender.is_open(Space::Handshake) {
                    self.complete = true;
                    self.completed_at = Some(now);
                    self.sender.set_len(Space::Handshake, Some(sz.client_finished as u64));
                    self.sender.open_space(Space::AppData, Some(self.cfg.request));
                }
            }
        }
    }

    /// When [`Endpoint::on_timeout`] is due: the sending half's timers or a delayed ACK.
    pub fn next_timeout(&self, now: Time) -> Option<Time> {
        let acks = self.receivers.iter().enumerate().filter(|(i, _)| !self.discarded[*i]).filter_map(|(_, r)| r.ack_deadline());
        self.sender.next_timeout(now).into_iter().chain(acks).min()
    }

    /// A timer fired at `now`.
    pub fn on_timeout(&mut self, now: Time) {
        self.sender.on_timeout(now);
        for sp in Space::ALL {
            if self.discarded[sp as usize] {
                continue;
            }
            if let Some(a) = self.receivers[sp as usize].on_timer(now) {
                self.sender.queue_ack(a);
            }
        }
    }
}
