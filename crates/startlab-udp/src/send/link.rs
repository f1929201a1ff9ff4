//! What both transports' sending sides share: the connected socket, the clock, the buffers, the
//! waits, and the timing of what arrives.

use crate::timing::{wait_readable, wait_to_send, Clock, GapStats};
use crate::wire::MAX_DATAGRAM;
use crate::NetError;
use nix::sys::socket::{recvmsg, ControlMessageOwned, MsgFlags};
use nix::sys::time::TimeSpec;
use startlab_units::{Dur, Time};
use std::io::{self, IoSliceMut};
use std::net::UdpSocket;
use std::os::fd::AsRawFd;

/// The sending side's socket and its counters.
pub(super) struct Link {
    pub(super) sock: UdpSocket,
    pub(super) clock: Clock,
    pub(super) tx: Vec<u8>,
    pub(super) rx: Vec<u8>,
    cmsg: Vec<u8>,
    /// The latest time handed to the endpoint: an arrival stamp never goes back before it.
    pub(super) floor: Time,
    /// How long after its arrival each stamped datagram was handed to the endpoint.
    pub(super) ack_lag: GapStats,
    /// Datagrams that came without an arrival stamp (timed when read).
    pub(super) unstamped: u64,
    pub(super) datagrams_sent: u64,
    pub(super) datagrams_received: u64,
    pub(super) bytes_sent: u64,
    pub(super) bytes_received: u64,
    pub(super) send_blocked: u64,
    pub(super) icmp_unreachable: u64,
    pub(super) spin: Dur,
}

impl Link {
    pub(super) fn new(sock: UdpSocket, spin: Dur) -> Link {
        Link {
            sock,
            clock: Clock::start(),
            tx: vec![0; MAX_DATAGRAM],
            rx: vec![0; 1 << 16],
            cmsg: nix::cmsg_space!(i32, i32, TimeSpec),
            floor: Time::ZERO,
            ack_lag: GapStats::new(),
            unstamped: 0,
            datagrams_sent: 0,
            datagrams_received: 0,
            bytes_sent: 0,
            bytes_received: 0,
            send_blocked: 0,
            icmp_unreachable: 0,
            spin,
        }
    }

    /// Sleeps until a datagram arrives or `deadline`; the last `spin` before it is a busy wait.
    pub(super) fn wait(&mut self, deadline: Option<Time>) -> Result<(), NetError> {
        let now = self.clock.now();
        let remaining = deadline.map(|d| d.saturating_since(now));
        match remaining {
            Some(r) if r == Dur::ZERO => Ok(()),
            Some(r) if r <= self.spin => {
                std::hint::spin_loop();
                Ok(())
            }
            _ => {
                let sleep = remaining.map(|r| Dur(r.as_nanos() - self.spin.as_nanos()));
                wait_readable(&self.sock, sleep).map(|_| ()).map_err(|source| NetError::Io { context: "waiting for the socket".into(), source })
            }
        }
    }

    /// Reads one waiting datagram into `rx`: its length, the ECN bits of its IP header (0 unless
    /// the socket asked for them with `IP_RECVTOS`) and the kernel's arrival stamp
    /// (`CLOCK_REALTIME`), if the socket gives one; `None` when there is none.
    pub(super) fn recv(&mut self) -> Result<Option<(usize, u8, Option<TimeSpec>)>, NetError> {
        loop {
            let mut iov = [IoSliceMut::new(&mut self.rx)];
            match recvmsg::<()>(self.sock.as_raw_fd(), &mut iov, Some(&mut self.cmsg), MsgFlags::empty()) {
                Ok(msg) => {
                    let (mut ecn, mut stamp) = (0, None);
                    if let Ok(cmsgs) = msg.cmsgs() {
                        for c in cmsgs {
                            match c {
                                ControlMessageOwned::Ipv4Tos(tos) => ecn = tos & 0b11,
                                ControlMessageOwned::Ipv6TClass(tc) => ecn = (tc & 0b11) as u8,
                                ControlMessageOwned::ScmTimestampns(ts) => stamp = Some(ts),
                                _ => {}
                            }
                        }
                    }
                    let n = msg.bytes;
                    self.datagrams_received += 1;
                    self.bytes_received += n as u64;
                    return Ok(Some((n, ecn, stamp)));
                }
                Err(nix::errno::Errno::EAGAIN) => return Ok(None),
                Err(nix::errno::Errno::EINTR) => {}
                // An earlier datagram met a closed port (the server is not there yet, or gone).
                Err(nix::errno::Errno::ECONNREFUSED) => self.icmp_unreachable += 1,
                Err(e) => return Err(NetError::Io { context: "receiving from the server".into(), source: e.into() }),
            }
        }
    }

    /// Sends `tx[..n]`, waiting while the socket buffer is full.
    pub(super) fn transmit(&mut self, n: usize) -> Result<(), NetError> {
        let mut refused = 0;
        loop {
            match self.sock.send(&self.tx[..n]) {
                Ok(_) => {
                    self.datagrams_sent += 1;
                    self.bytes_sent += n as u64;
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.send_blocked += 1;
                    wait_to_send(&self.sock, "the server")?;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // The report of an earlier datagram's ICMP error; this one was not sent yet. After a
                // few in a row the datagram is given up (the network lost it).
                Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
                    self.icmp_unreachable += 1;
                    refused += 1;
                    if refused > 3 {
                        return Ok(());
                    }
                }
                Err(source) => return Err(NetError::Io { context: "sending to the server".into(), source }),
            }
        }
    }

    /// The time to give the endpoint (TCP sender, QUIC server) for a datagram the kernel received at `arrived` (`None`:
    /// unstamped) and the server held for `delay` before sending: when the server's kernel got
    /// the data that caused it, as near as this host can tell, not when this thread got round to
    /// reading it. On a busy host both ends are often descheduled while packets arrive; timed on
    /// reading, a batch of ACKs looks back to back (ACK compression the path did not cause),
    /// which gap- and delay-measuring startups (Paced Start, HyStart's ACK train) read as a
    /// faster path. A kernel TCP receiver ACKs in softirq and adds no such delay. The result is
    /// kept between the latest time the sender was already given and now, so the sender's time
    /// never goes backwards.
    pub(super) fn event_time(&mut self, arrived: Option<Time>, delay: Dur) -> Time {
        let now = self.clock.now();
        let at = match arrived {
            Some(t) => {
                self.ack_lag.record(now.saturating_since(t));
                Time(t.as_nanos().saturating_sub(delay.as_nanos())).clamp(self.floor, now)
            }
            None => {
                self.unstamped += 1;
                now
            }
        };
        self.floor = at;
        at
    }
}
