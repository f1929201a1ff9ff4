//! FQ-CoDel (RFC 8290): packets are hashed by flow into `flows` queues, each with its own CoDel;
//! a deficit round robin with `quantum` bytes serves the queues, queues that just became active
//! ("new") before the others ("old") — the sparse-flow priority a starting flow meets — and when
//! the buffer is over its limit, packets are dropped from the head of the queue holding the most
//! bytes, up to half of its backlog or `drop_batch` packets.
//!
//! Choices where RFC 8290 leaves room (docs/QUEUES.md compares them with ns-3 3.44): every arrival
//! is accepted and the limit is enforced afterwards by the fat-flow drop (Linux; ns-3 3.44 also
//! gives each flow's queue the whole limit, so one flow alone is tail-dropped there first); a queue
//! emptied while on the new list moves to
//! the end of the old list, one emptied on the old list is removed (RFC 8290 §4.2; Linux also
//! removes a new queue when the old list is empty); each queue's CoDel checks its own backlog
//! against the MTU (ns-3; Linux checks the whole qdisc's backlog). Buckets are made when a flow
//! first hashes to them, so memory follows the active flows, not `flows`.

use super::codel::{CoDel, CoDelParams};
use super::{DropCause, Events, Fifo, QPacket};
use startlab_units::Time;
use std::collections::VecDeque;

/// FQ-CoDel's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FqCoDelParams {
    /// Each queue's CoDel (target, interval, MTU, ECN marking).
    pub codel: CoDelParams,
    /// Number of flow queues the hash maps into (collisions share a queue).
    pub flows: u32,
    /// Bytes a queue may send per round of the deficit round robin.
    pub quantum: u32,
    /// Most packets held in all queues together.
    pub limit: u64,
    /// Most bytes held in all queues together (Linux's `memory_limit`; `u64::MAX`: none).
    pub memory_limit: u64,
    /// Most packets one overflow drops from the fattest queue.
    pub drop_batch: u32,
    /// Salt of the flow hash (Linux's perturbation).
    pub salt: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    Inactive,
    New,
    Old,
}

/// One flow queue. 128-byte aligned: its state and its head packet are one pair of cache lines
/// (what the hardware fetches together), the only memory an enqueue or a dequeue of a flow with
/// at most one packet waiting touches.
#[derive(Clone, Debug)]
#[repr(align(128))]
struct Bucket {
    fifo: Fifo,
    codel: CoDel,
    deficit: i64,
    status: Status,
}

/// An FQ-CoDel queue discipline.
#[derive(Clone, Debug)]
pub struct FqCoDel {
    p: FqCoDelParams,
    /// Bucket of each hash value (`u32::MAX`: none yet).
    index: Vec<u32>,
    buckets: Vec<Bucket>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    pkts: u64,
    bytes: u64,
}

/// A 64-bit mix (SplitMix64's finaliser): a flow key spread over the buckets.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl FqCoDel {
    /// An empty discipline.
    pub fn new(p: FqCoDelParams) -> Self {
        debug_assert!(p.flows > 0 && p.quantum > 0 && p.drop_batch > 0);
        FqCoDel { p, index: vec![u32::MAX; p.flows as usize], buckets: Vec::new(), new_flows: VecDeque::new(), old_flows: VecDeque::new(), pkts: 0, bytes: 0 }
    }

    /// The queue a flow key hashes to.
    pub fn bucket_of(&self, flow: u64) -> u32 {
        let (h, n) = (mix(flow ^ self.p.salt), self.p.flows as u64);
        // The same remainder; a mask instead of a 64-bit division for the usual power of two.
        (if n.is_power_of_two() { h & (n - 1) } else { h % n }) as u32
    }

    /// Packets waiting in all queues.
    pub fn len_pkts(&self) -> u64 {
        self.pkts
    }

    /// Bytes waiting in all queues.
    pub fn len_bytes(&self) -> u64 {
        self.bytes
    }

    /// Flow queues holding packets.
    pub fn active_queues(&self) -> usize {
        self.new_flows.len() + self.old_flows.len()
    }

    /// Every packet waiting, queue by queue.
    pub fn packets(&self) -> impl Iterator<Item = &QPacket> + '_ {
        self.buckets.iter().flat_map(|b| b.fifo.iter())
    }

    /// Takes a packet into its flow's queue; over the limit, drops from the fattest queue (the
    /// drops go to `ev`; the arriving packet may be among them).
    pub fn enqueue(&mut self, p: QPacket, ev: &mut Events) {
        let h = self.bucket_of(p.flow) as usize;
        let b = match self.index[h] {
            u32::MAX => {
                self.buckets.push(Bucket { fifo: Fifo::default(), codel: CoDel::default(), deficit: 0, status: Status::Inactive });
                self.index[h] = (self.buckets.len() - 1) as u32;
                self.index[h]
            }
            b => b,
        };
        let bucket = &mut self.buckets[b as usize];
        if bucket.status == Status::Inactive {
            bucket.status = Status::New;
            bucket.deficit = self.p.quantum as i64;
            self.new_flows.push_back(b);
        }
        self.pkts += 1;
        self.bytes += p.size as u64;
        bucket.fifo.push(p);
        if self.pkts > self.p.limit || self.bytes > self.p.memory_limit {
            self.drop_from_fattest(ev);
        }
    }

    /// RFC 8290 §4.1: drop from the head of the queue with the largest backlog until half of
    /// it is gone or `drop_batch` packets are.
    fn drop_from_fattest(&mut self, ev: &mut Events) {
        let Some((fat, _)) = self.buckets.iter().enumerate().max_by_key(|(i, b)| (b.fifo.bytes(), std::cmp::Reverse(*i))) else {
            return;
        };
        let bucket = &mut self.buckets[fat];
        let threshold = bucket.fifo.bytes() / 2;
        let (mut dropped, mut count) = (0u64, 0u32);
        while let Some(p) = bucket.fifo.pop() {
            dropped += p.size as u64;
            count += 1;
            self.pkts -= 1;
            self.bytes -= p.size as u64;
            ev.drops.push((p, DropCause::Overflow));
            if count >= self.p.drop_batch || dropped >= threshold {
                break;
            }
        }
    }

    /// RFC 8290 §4.2: the next packet to send (CoDel's drops on the way go to `ev`).
    pub fn dequeue(&mut self, now: Time, ev: &mut Events) -> Option<QPacket> {
        loop {
            let (b, from_new) = loop {
                if let Some(&b) = self.new_flows.front() {
                    let bucket = &mut self.buckets[b as usize];
                    if bucket.deficit <= 0 {
                        bucket.deficit += self.p.quantum as i64;
                        bucket.status = Status::Old;
                        self.new_flows.pop_front();
                        self.old_flows.push_back(b);
                        continue;
                    }
                    break (b, true);
                }
                let &b = self.old_flows.front()?;
                let bucket = &mut self.buckets[b as usize];
                if bucket.deficit <= 0 {
                    bucket.deficit += self.p.quantum as i64;
                    self.old_flows.pop_front();
                    self.old_flows.push_back(b);
                    continue;
                }
                break (b, false);
            };
            let bucket = &mut self.buckets[b as usize];
            let before = (bucket.fifo.len() as u64, bucket.fifo.bytes());
            let got = bucket.codel.dequeue(&self.p.codel, &mut bucket.fifo, now, ev);
            let after = (bucket.fifo.len() as u64, bucket.fifo.bytes());
            self.pkts -= before.0 - after.0;
            self.bytes -= before.1 - after.1;
            match got {
                Some(p) => {
                    bucket.deficit -= p.size as i64;
                    return Some(p);
                }
                None => {
                    if from_new {
                        bucket.status = Status::Old;
                        self.new_flows.pop_front();
                        self.old_flows.push_back(b);
                    } else {
                        bucket.status = Status::Inactive;
                        self.old_flows.pop_front();
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::Ecn;
    use startlab_units::Dur;

    fn params(limit: u64) -> FqCoDelParams {
        FqCoDelParams {
            codel: CoDelParams { target: Dur::from_millis(5), interval: Dur::from_millis(100), mtu: 1500, ecn: false },
            flows: 1024,
            quantum: 1500,
            limit,
            memory_limit: u64::MAX,
            drop_batch: 64,
            salt: 0,
        }
    }

    fn pkt(id: u32, flow: u64, size: u32) -> QPacket {
        QPacket { pkt: id, size, flow, ecn: Ecn::NotEct, enqueued: Time::ZERO }
    }

    /// Two flow keys that do not collide.
    fn distinct(q: &FqCoDel) -> (u64, u64) {
        let a = 1;
        let b = (2..).find(|&k| q.bucket_of(k) != q.bucket_of(a)).unwrap();
        (a, b)
    }

    #[test]
    fn a_new_flow_goes_before_a_backlogged_one() {
        let mut q = FqCoDel::new(params(10_000));
        let mut ev = Events::default();
        let (bulk, fresh) = distinct(&q);
        for i in 0..100 {
            q.enqueue(pkt(i, bulk, 1500), &mut ev);
        }
        // The bulk flow has used its first quantum: it is on the old list now.
        assert_eq!(q.dequeue(Time::ZERO, &mut ev).unwrap().pkt, 0);
        assert_eq!(q.dequeue(Time::ZERO, &mut ev).unwrap().pkt, 1);
        q.enqueue(pkt(1000, fresh, 1500), &mut ev);
        assert_eq!(q.dequeue(Time::ZERO, &mut ev).unwrap().pkt, 1000, "the sparse flow is served first");
        assert_eq!(q.dequeue(Time::ZERO, &mut ev).unwrap().pkt, 2);
        assert!(ev.drops.is_empty());
    }

    #[test]
    fn backlogged_flows_share_bytes_by_quantum() {
        let mut q = FqCoDel::new(params(10_000));
        let mut ev = Events::default();
        let (a, b) = distinct(&q);
        // Flow a sends 1500-byte packets, flow b 500-byte ones: per round a gets 1, b gets 3.
        for i in 0..60 {
            q.enqueue(pkt(i, a, 1500), &mut ev);
            q.enqueue(pkt(1000 + i, b, 500), &mut ev);
        }
        let mut bytes = [0u64; 2];
        for _ in 0..40 {
            let p = q.dequeue(Time::ZERO, &mut ev).unwrap();
            bytes[(p.flow == b) as usize] += p.size as u64;
        }
        let (x, y) = (bytes[0] as f64, bytes[1] as f64);
        assert!((x / y - 1.0).abs() < 0.15, "{bytes:?}");
    }

    #[test]
    fn overflow_drops_half_the_fattest_queue_from_its_head() {
        let mut q = FqCoDel::new(params(100));
        let mut ev = Events::default();
        let (fat, thin) = distinct(&q);
        for i in 0..90 {
            q.enqueue(pkt(i, fat, 1500), &mut ev);
        }
        for i in 0..10 {
            q.enqueue(pkt(500 + i, thin, 1500), &mut ev);
        }
        assert!(ev.drops.is_empty());
        q.enqueue(pkt(999, thin, 1500), &mut ev);
        // 101 > 100: half of the fat queue's 135 000 bytes is 67 500 = 45 packets, from its head.
        let dropped: Vec<u32> = ev.drops.iter().map(|(p, _)| p.pkt).collect();
        assert_eq!(dropped, (0..45).collect::<Vec<_>>());
        assert!(ev.drops.iter().all(|(_, c)| *c == DropCause::Overflow));
        assert_eq!((q.len_pkts(), q.len_bytes()), (56, 56 * 1500));
    }

    #[test]
    fn a_drop_batch_caps_one_overflow() {
        let mut p = params(100);
        p.drop_batch = 8;
        let mut q = FqCoDel::new(p);
        let mut ev = Events::default();
        for i in 0..101 {
            q.enqueue(pkt(i, 7, 1500), &mut ev);
        }
        assert_eq!(ev.drops.len(), 8);
    }

    #[test]
    fn an_emptied_new_queue_goes_to_the_old_list_and_an_emptied_old_one_leaves() {
        let mut q = FqCoDel::new(params(10_000));
        let mut ev = Events::default();
        let (a, _) = distinct(&q);
        q.enqueue(pkt(1, a, 100), &mut ev);
        assert_eq!(q.dequeue(Time::ZERO, &mut ev).unwrap().pkt, 1);
        // Empty now, but still on the new list until a dequeue finds it empty.
        assert_eq!(q.dequeue(Time::ZERO, &mut ev), None);
        assert_eq!(q.old_flows.len(), 0, "found empty on the old list after the move: removed");
        assert_eq!(q.active_queues(), 0);
        // Its next packet makes it new again (sparse flows keep their priority).
        q.enqueue(pkt(2, a, 100), &mut ev);
        assert_eq!(q.new_flows.len(), 1);
    }

    #[test]
    fn each_queue_runs_its_own_codel() {
        // A standing queue in one flow is dropped from; a sparse flow's packets never are.
        let mut q = FqCoDel::new(params(100_000));
        let mut ev = Events::default();
        let (bulk, sparse) = distinct(&q);
        let mut t = Time::ZERO;
        let mut id = 0;
        for step in 0..2000u64 {
            // Bulk: two arrivals per 1 ms of service; sparse: one packet every 20 ms.
            for _ in 0..2 {
                q.enqueue(QPacket { pkt: id, size: 1500, flow: bulk, ecn: Ecn::NotEct, enqueued: t }, &mut ev);
                id += 1;
            }
            if step % 20 == 0 {
                q.enqueue(QPacket { pkt: 1_000_000 + id, size: 100, flow: sparse, ecn: Ecn::NotEct, enqueued: t }, &mut ev);
            }
            let _ = q.dequeue(t, &mut ev);
            t += Dur::from_millis(1);
        }
        assert!(!ev.drops.is_empty());
        assert!(ev.drops.iter().all(|(p, c)| p.flow == bulk && *c == DropCause::Aqm));
    }
}
