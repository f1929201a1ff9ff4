//! The real clock, the wait for "a datagram or the next deadline", the thread's timer slack, and
//! the pacing gap statistics.
//!
//! NOTE: the wait uses `ppoll(2)` (an hrtimer, nanosecond timeout) rather than
//! `UdpSocket::set_read_timeout`: Linux converts `SO_RCVTIMEO` to jiffies and rounds up, so a
//! 100 µs read timeout sleeps 4–8 ms on a `HZ=250` kernel (measured on the lab machine: 8 ms),
//! which would wreck pacing at 100 Mbit/s (a segment every 116 µs).

use nix::poll::{PollFd, PollFlags};
use nix::sys::time::TimeSpec;
use startlab_units::{Dur, Time};
use std::io;
use std::net::UdpSocket;
use std::os::fd::AsFd;
use std::time::Duration;

/// The connection's monotonic clock: [`Time`] is nanoseconds since [`Clock::start`], read from
/// `CLOCK_MONOTONIC` — the clock of Python's `time.monotonic()`, of the testbed router's drop log
/// and of the kernel's `mono` trace clock, so that all of them line up.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Clock {
    origin_ns: u64,
}

fn monotonic_ns() -> u64 {
    // CLOCK_MONOTONIC cannot fail for a valid clock id on Linux.
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC).map_or(0, |t| t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64)
}

impl Clock {
    pub(crate) fn start() -> Clock {
        Clock { origin_ns: monotonic_ns() }
    }

    pub(crate) fn now(&self) -> Time {
        Time(monotonic_ns().saturating_sub(self.origin_ns))
    }

    /// A kernel timestamp on `CLOCK_REALTIME` (`SO_TIMESTAMPNS`) as a [`Time`] of this clock: now
    /// minus the stamp's age, so a step of the wall clock between two readings cannot move it by
    /// more than the age. A stamp "in the future" (a step back) is now.
    pub(crate) fn time_of_stamp(&self, stamp: TimeSpec) -> Time {
        let ns = |t: TimeSpec| t.tv_sec().max(0) as u64 * 1_000_000_000 + t.tv_nsec().max(0) as u64;
        let real = nix::time::clock_gettime(nix::time::ClockId::CLOCK_REALTIME).map_or(0, ns);
        let mono = monotonic_ns();
        let age = real.saturating_sub(ns(stamp));
        Time(mono.saturating_sub(age).saturating_sub(self.origin_ns))
    }

    /// `CLOCK_MONOTONIC` at `t`, seconds.
    pub(crate) fn monotonic_s(&self, t: Time) -> f64 {
        (self.origin_ns + t.as_nanos()) as f64 / 1e9
    }
}

/// Waits until `sock` has a datagram to read (true) or `timeout` has passed (false); a signal
/// ends the wait early (false). `None` waits without a limit.
pub(crate) fn wait_readable(sock: &UdpSocket, timeout: Option<Dur>) -> io::Result<bool> {
    wait(sock, PollFlags::POLLIN, timeout)
}

/// After a send found the socket buffer full: waits up to 5 s for room, else an error naming
/// `whom` the datagram was for.
pub(crate) fn wait_to_send(sock: &UdpSocket, whom: &str) -> Result<(), crate::NetError> {
    let writable = wait_writable(sock, Dur::from_secs(5)).map_err(|source| crate::NetError::Io { context: "waiting to send".into(), source })?;
    if writable {
        Ok(())
    } else {
        Err(crate::NetError::Io {
            context: format!("sending to {whom}"),
            source: io::Error::new(io::ErrorKind::TimedOut, "the socket buffer stayed full for 5 s"),
        })
    }
}

/// Waits until `sock` can take a datagram (true) or `timeout` has passed (false).
pub(crate) fn wait_writable(sock: &UdpSocket, timeout: Dur) -> io::Result<bool> {
    wait(sock, PollFlags::POLLOUT, Some(timeout))
}

fn wait(sock: &UdpSocket, events: PollFlags, timeout: Option<Dur>) -> io::Result<bool> {
    let mut fds = [PollFd::new(sock.as_fd(), events)];
    let ts = timeout.map(|d| TimeSpec::from_duration(Duration::from_nanos(d.as_nanos())));
    match nix::poll::ppoll(&mut fds, ts, None) {
        Ok(n) => Ok(n > 0),
        Err(nix::errno::Errno::EINTR) => Ok(false),
        Err(e) => Err(io::Error::from(e)),
    }
}

/// Sets the calling thread's timer slack to 1 µs (so that ppoll wakes within a microsecond of
/// its deadline instead of the default 50 µs) and restores the previous slack when dropped.
pub(crate) struct TimerSlack {
    previous: Option<u64>,
    /// The slack in force while this guard lives (ns), if it could be read.
    pub(crate) in_force: Option<u64>,
}

impl TimerSlack {
    const WANTED_NS: u64 = 1_000;

    pub(crate) fn fine() -> TimerSlack {
        let previous = nix::sys::prctl::get_timerslack().ok().and_then(|v| u64::try_from(v).ok());
        let set = nix::sys::prctl::set_timerslack(Self::WANTED_NS as _).is_ok();
        let in_force = if set { Some(Self::WANTED_NS) } else { previous };
        TimerSlack { previous: previous.filter(|_| set), in_force }
    }
}

impl Drop for TimerSlack {
    fn drop(&mut self) {
        if let Some(p) = self.previous {
            let _ = nix::sys::prctl::set_timerslack(p as _);
        }
    }
}

/// CPU time (user + system) the calling thread has used so far.
pub(crate) fn thread_cpu() -> Option<Duration> {
    use nix::sys::resource::{getrusage, UsageWho};
    let u = getrusage(UsageWho::RUSAGE_THREAD).ok()?;
    let us = |t: nix::sys::time::TimeVal| t.tv_sec() as u64 * 1_000_000 + t.tv_usec() as u64;
    Some(Duration::from_micros(us(u.user_time()) + us(u.system_time())))
}

/// How late the pacer's releases were: a histogram of 1 µs buckets up to 10 ms (allocated once;
/// recording allocates nothing), with the exact sum and maximum.
#[derive(Debug)]
pub(crate) struct GapStats {
    buckets: Vec<u32>,
    over: u64,
    count: u64,
    sum_ns: u128,
    max_ns: u64,
}

impl GapStats {
    const BUCKET_NS: u64 = 1_000;
    const BUCKETS: usize = 10_000;

    pub(crate) fn new() -> GapStats {
        GapStats { buckets: vec![0; Self::BUCKETS], over: 0, count: 0, sum_ns: 0, max_ns: 0 }
    }

    pub(crate) fn record(&mut self, late: Dur) {
        let ns = late.as_nanos();
        match self.buckets.get_mut((ns / Self::BUCKET_NS) as usize) {
            Some(b) => *b = b.saturating_add(1),
            None => self.over += 1,
        }
        self.count += 1;
        self.sum_ns += ns as u128;
        self.max_ns = self.max_ns.max(ns);
    }

    pub(crate) fn report(&self) -> crate::PacingReport {
        let us = |ns: f64| ns / 1_000.0;
        let p99 = (self.count > 0).then(|| {
            // The smallest bucket bound below which at least 99 % of the releases lie.
            let need = (self.count * 99).div_ceil(100);
            let mut seen = 0u64;
            for (i, &c) in self.buckets.iter().enumerate() {
                seen += c as u64;
                if seen >= need {
                    return us(((i as u64 + 1) * Self::BUCKET_NS).min(self.max_ns) as f64);
                }
            }
            us(self.max_ns as f64)
        });
        crate::PacingReport {
            count: self.count,
            mean_us: (self.count > 0).then(|| us(self.sum_ns as f64 / self.count as f64)),
            p99_us: p99,
            max_us: (self.count > 0).then(|| us(self.max_ns as f64)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gap_statistics_give_mean_p99_and_max() {
        let mut g = GapStats::new();
        assert_eq!(g.report().count, 0);
        assert_eq!(g.report().mean_us, None);
        for _ in 0..99 {
            g.record(Dur(2_500)); // 2.5 µs late
        }
        g.record(Dur(20_000_000)); // 20 ms late: beyond the histogram
        let r = g.report();
        assert_eq!(r.count, 100);
        assert_eq!(r.p99_us, Some(3.0), "99 of 100 are in the 2–3 µs bucket");
        assert_eq!(r.max_us, Some(20_000.0));
        let mean = r.mean_us.unwrap();
        assert!((mean - (99.0 * 2.5 + 20_000.0) / 100.0).abs() < 1e-9, "exact mean, got {mean}");
    }

    #[test]
    fn the_timer_slack_is_restored() {
        let before = nix::sys::prctl::get_timerslack().ok();
        {
            let s = TimerSlack::fine();
            if s.in_force == Some(TimerSlack::WANTED_NS) {
                assert_eq!(nix::sys::prctl::get_timerslack().ok(), Some(1_000));
            }
        }
        assert_eq!(nix::sys::prctl::get_timerslack().ok(), before);
    }
}
