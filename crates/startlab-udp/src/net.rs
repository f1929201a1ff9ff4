//! Socket set-up: address resolution, binding, buffers, ECN codepoints.

use crate::NetError;
use nix::sys::socket::{setsockopt, sockopt};
use std::net::{SocketAddr, ToSocketAddrs, UdpSocket};

/// ECT(0) in the IP header's ECN field (RFC 3168 §5).
pub(crate) const ECT0: u8 = 0b10;
/// CE in the IP header's ECN field.
pub(crate) const CE: u8 = 0b11;

/// Resolves `host:port` to one address (the first the resolver gives).
pub(crate) fn resolve(what: &'static str, given: &str) -> Result<SocketAddr, NetError> {
    let err = |message: String| NetError::Address { what, given: given.to_string(), message };
    let mut addrs = given.to_socket_addrs().map_err(|e| err(format!("{e}; expected host:port such as 10.203.2.1:5000 or [::1]:5000")))?;
    addrs.next().ok_or_else(|| err("resolves to no address".into()))
}

/// A non-blocking UDP socket bound to `addr` with buffers of `buffer` bytes asked for (forced
/// beyond the system maximum when the process may, else as large as the maximum allows).
pub(crate) fn bind(addr: SocketAddr, buffer: usize) -> Result<UdpSocket, NetError> {
    let sock = UdpSocket::bind(addr).map_err(|source| NetError::Bind { addr: addr.to_string(), source })?;
    sock.set_nonblocking(true).map_err(|source| NetError::Io { context: "making the socket non-blocking".into(), source })?;
    if buffer > 0 {
        // The kernel doubles the value for its bookkeeping; asking for `buffer` gives that much
        // payload room. Without CAP_NET_ADMIN the forced options fail and rmem_max/wmem_max cap.
        if setsockopt(&sock, sockopt::RcvBufForce, &buffer).is_err() {
            let _ = setsockopt(&sock, sockopt::RcvBuf, &buffer);
        }
        if setsockopt(&sock, sockopt::SndBufForce, &buffer).is_err() {
            let _ = setsockopt(&sock, sockopt::SndBuf, &buffer);
        }
    }
    Ok(sock)
}

/// Sets the ECN field of the datagrams `sock` sends (ECT(0) or not-ECT).
pub(crate) fn set_ecn(sock: &UdpSocket, v6: bool, ect: bool) -> nix::Result<()> {
    let tos = if ect { ECT0 as i32 } else { 0 };
    if v6 {
        setsockopt(sock, sockopt::Ipv6TClass, &tos)
    } else {
        setsockopt(sock, sockopt::Ipv4Tos, &tos)
    }
}

/// Asks for the IP TOS / traffic class (for CE), the receive-queue drop counter and the kernel's
/// arrival time (`SO_TIMESTAMPNS`) with every datagram.
pub(crate) fn enable_receive_info(sock: &UdpSocket, v6: bool) -> nix::Result<()> {
    if v6 {
        setsockopt(sock, sockopt::Ipv6RecvTClass, &true)?;
    } else {
        setsockopt(sock, sockopt::IpRecvTos, &true)?;
    }
    setsockopt(sock, sockopt::RxqOvfl, &1)?;
    setsockopt(sock, sockopt::ReceiveTimestampns, &true)
}
