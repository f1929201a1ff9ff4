//! Seeded random streams, one per component.
//!
//! Every consumer of randomness gets its own PCG stream (`rand_pcg::Pcg64`, 128-bit state, with a
//! stream selector), derived from the scenario's seed and a fixed component identifier — never from
//! the order in which components are built or run. Adding a random consumer therefore never
//! perturbs the draws of another, and the same scenario and seed give the same draws everywhere.

use rand_pcg::Pcg64;

/// Component kinds with random behaviour (part of the stream identifier).
#[derive(Clone, Copy, Debug)]
#[repr(u64)]
pub enum Component {
    /// A TCP flow's start-time jitter.
    FlowStart = 1,
    /// A flow's Quick-Start request: its random QS TTL and nonce.
    QuickStartRequest = 2,
    /// A Quick-Start router's fresh nonce bits when it lowers a rate (instance = node index).
    QuickStartRouter = 3,
    /// A link direction's impairments: loss and jitter draws (instance = channel index).
    Impairment = 4,
    /// Arrival times of an `[[arrivals]]` process.
    ArrivalTimes = 10,
    /// Flow sizes of an `[[arrivals]]` process.
    ArrivalSizes = 11,
    /// Hosts of the flows of an `[[arrivals]]` process.
    ArrivalEnds = 12,
    /// Startup algorithm choice of an `[[arrivals]]` process.
    ArrivalMix = 13,
    /// A Poisson or on/off cross-traffic source.
    Cross = 14,
    /// Response sizes of a request/response flow.
    AppSizes = 15,
    /// Think times of a request/response flow.
    AppThink = 16,
    /// A RED queue's drop/mark decisions (instance = channel index).
    Red = 5,
    /// Transfer sizes of a `[[users]]` user (instance = group << 32 | user).
    UserSizes = 17,
    /// Think times of a `[[users]]` user.
    UserThink = 18,
    /// Hosts of the users of a `[[users]]` group (instance = group).
    UserEnds = 19,
    /// Startup algorithm choice of the users of a `[[users]]` group.
    UserMix = 20,
    /// A dequeue-time queue discipline's random decisions (PIE, DualPI2; instance = channel).
    Aqm = 21,
}

/// The random stream of component `kind`, instance `index`, under `seed`.
pub fn stream(seed: u64, kind: Component, index: u64) -> Pcg64 {
    // The state mixes the seed with a constant; the stream selector names the component.
    let state = (seed as u128) << 64 | 0x5354_4152_544c_4142; // "STARTLAB"
    let selector = (kind as u64 as u128) << 64 | index as u128;
    Pcg64::new(state, selector)
}
