//! Cross-traffic sources (CBR, Poisson, on/off, packet trains) and the probe records of trains.

use super::*;

pub(super) struct CrossState {
    pub(super) src: u32,
    pub(super) dst: u32,
    pub(super) size: u32,
    pub(super) bits_ns: u128,
    pub(super) rate: u128,
    pub(super) start: Time,
    pub(super) stop: Time,
    pub(super) k: u64,
    pub(super) process: CrossProcess,
    /// Poisson and on/off sources: their own random stream.
    pub(super) rng: Option<rand_pcg::Pcg64>,
    /// On/off: the current on period ends here.
    pub(super) on_until: Time,
    /// Packet trains: each train's source gap.
    pub(super) gaps: Vec<Dur>,
}

/// One packet of a packet-train probe (`[[cross]] kind = "train"`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ProbeRecord {
    pub source: u32,
    pub train: u32,
    pub index: u32,
    pub sent: Time,
    pub received: Option<Time>,
}

impl Simulation {
    pub(super) fn cross_emit(&mut self, j: u32) {
        let c = &mut self.cross[j as usize];
        let (src, dst, size) = (c.src, c.dst, c.size);
        let mut seq = 0;
        if let CrossProcess::Train { packets, .. } = c.process {
            // The packet carries its record's index to the receiver.
            seq = self.probe.len() as u64;
            let k = c.k;
            self.probe.push(ProbeRecord { source: j, train: (k / packets as u64) as u32, index: (k % packets as u64) as u32, sent: self.now, received: None });
        }
        let gap = Dur((c.bits_ns / c.rate) as u64);
        let next = match (c.process, c.rng.as_mut()) {
            (CrossProcess::Train { packets, interval }, _) => {
                // Exact schedule: packet i of train t leaves at start + t·interval + i·gaps[t].
                c.k += 1;
                let (t, i) = ((c.k / packets as u64) as usize, c.k % packets as u64);
                match c.gaps.get(t) {
                    Some(g) => c.start + Dur(t as u64 * interval.as_nanos() + i * g.as_nanos()),
                    None => Time(u64::MAX), // the last train was sent
                }
            }
            (CrossProcess::Poisson, Some(rng)) => self.now + exp_dur(rng, gap.as_secs_f64()),
            (CrossProcess::OnOff { on, off }, Some(rng)) => {
                let mut next = self.now + gap;
                while next >= c.on_until {
                    // The on period ended: an off period, then the next on period.
                    next = c.on_until + exp_dur(rng, off.as_secs_f64());
                    c.on_until = next + exp_dur(rng, on.as_secs_f64());
                }
                next
            }
            _ => {
                // Exact schedule: packet k leaves at start + k * size / rate, no drift.
                c.k += 1;
                c.start + Dur((c.k as u128 * c.bits_ns / c.rate) as u64)
            }
        };
        if next < c.stop {
            self.q.push(next, Source::Cross(j));
        }
        let pkt = self.arena.alloc(Packet {
            kind: PktKind::Cross,
            flow: j,
            dst,
            size,
            seq,
            len: 0,
            flags: 0,
            ttl: INITIAL_IP_TTL,
            qs: None,
            conn: 0,
        });
        self.forward(src, pkt);
    }
}
