//! The resolved workloads: flow arrival processes, closed-loop users, replayed connection
//! vectors, request/response applications, and the size and think-time laws they draw from.

use crate::*;
use serde::Serialize;
use startlab_units::Dur;

/// A group of closed-loop users (`[[users]]`, docs/SCENARIOS.md).
#[derive(Clone, Debug, Serialize)]
pub struct UserSpec {
    /// Group name; user `k` runs on flow slot `name/k`.
    pub name: String,
    /// Number of users.
    pub count: u64,
    /// Each user's first transfer starts at `start` plus one think time.
    pub start: Dur,
    /// No transfer starts at or after this time.
    pub stop: Dur,
    /// At most this many transfers per user.
    pub transfers: Option<u64>,
    /// Transfer (or response) sizes.
    pub size: SizeSpec,
    /// The think time before each transfer.
    pub think: Think,
    /// `None`: a new connection per transfer; `Some(request)`: one persistent connection per
    /// user, each transfer a request of this many bytes answered by a response of `size`.
    pub persistent: Option<u64>,
    /// Where each user runs (drawn once per user, as `[[arrivals]]` draws per flow).
    pub ends: ArrivalEnds,
    /// TCP options of every connection.
    pub tcp: TcpSpec,
    /// Startup algorithms with their probabilities (one drawn per user).
    pub mix: Vec<(StartupSpec, f64)>,
}

/// One connection of a connection-vector file: tmix's a-t1-b-t2 epochs.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct VectorConnection {
    /// The file's connection id.
    pub id: u64,
    /// When the connection opens.
    pub start: Dur,
    /// The dumbbell pair it runs on.
    pub rtt_class: usize,
    /// The file's line of its first epoch.
    pub line: usize,
    /// Per epoch: request bytes, the client's think time before the request, response bytes.
    pub epochs: Vec<(u64, Dur, u64)>,
}

/// `[[replay]]`: a connection-vector file replayed over persistent request/response connections.
#[derive(Clone, Debug, Serialize)]
pub struct ReplaySpec {
    /// Group name; connection `id` runs as flow `name-id`.
    pub name: String,
    /// The file as written in the scenario (its digest enters sweep run keys).
    pub file: String,
    /// The connections read from it.
    #[serde(skip)]
    pub connections: Vec<VectorConnection>,
    /// Connections and epochs read.
    pub count: (usize, usize),
    /// Servers on the right side (`d{class}`), clients on the left.
    pub reverse: bool,
    /// TCP options of every connection.
    pub tcp: TcpSpec,
    /// Startup algorithm of every connection.
    pub startup: StartupSpec,
}

/// A Poisson process of TCP flows with random sizes, ends and startup algorithms.
#[derive(Clone, Debug, Serialize)]
pub struct ArrivalSpec {
    /// Group name; its flows are `name-0`, `name-1`, ... in arrival order.
    pub name: String,
    /// Mean arrivals per second.
    pub rate: f64,
    /// First possible arrival.
    pub start: Dur,
    /// No arrival at or after this time.
    pub stop: Dur,
    /// At most this many flows.
    pub count: Option<u64>,
    /// Transfer sizes.
    pub size: SizeSpec,
    /// Where each flow runs.
    pub ends: ArrivalEnds,
    /// TCP options of every flow.
    pub tcp: TcpSpec,
    /// Startup algorithms with their probabilities (summing to 1).
    pub mix: Vec<(StartupSpec, f64)>,
}

/// A distribution of transfer sizes (bytes).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "dist", rename_all = "snake_case")]
pub enum SizeSpec {
    /// Always `value` bytes.
    Fixed {
        /// Bytes.
        value: u64,
    },
    /// Exponential with mean `mean` bytes.
    Exponential {
        /// Bytes.
        mean: u64,
    },
    /// Bounded Pareto: shape, truncated at `cutoff` bytes, scaled to mean `mean` bytes.
    Pareto {
        /// Bytes.
        mean: u64,
        /// α.
        shape: f64,
        /// Bytes.
        cutoff: u64,
    },
    /// Zipf: rank k of 1..=ranks with probability ∝ k^-exponent, size k·unit bytes.
    Zipf {
        /// s.
        exponent: f64,
        /// Number of ranks.
        ranks: u64,
        /// Bytes per rank.
        unit: u64,
    },
    /// Uniform on `[min, max]` bytes (Barakat & Altman's U[100 KB, 1 MB]).
    Uniform {
        /// Bytes.
        min: u64,
        /// Bytes.
        max: u64,
    },
    /// Lognormal: `ln(size)` is normal with mean `mu` and standard deviation `sigma` (SURGE's body
    /// of file sizes: μ = 9.357, σ = 1.318).
    Lognormal {
        /// Mean of ln(bytes).
        mu: f64,
        /// Standard deviation of ln(bytes).
        sigma: f64,
    },
    /// An empirical CDF read from `file`: `bytes,probability` lines; sizes between two points are
    /// interpolated linearly (as ns-2's EmpiricalRandomVariable).
    Empirical {
        /// The file as written in the scenario (its digest enters sweep run keys).
        file: String,
        /// (bytes, cumulative probability), both non-decreasing, the last probability 1.
        #[serde(skip)]
        points: Vec<(u64, f64)>,
        /// Points read.
        count: usize,
    },
}

/// How the flows of an arrival process pick their hosts.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ArrivalEnds {
    /// Dumbbell: a uniformly random sender host `s{i}` and receiver host `d{j}`; with
    /// `both_directions` each flow runs left-to-right or right-to-left with probability 1/2; with
    /// `reverse` every flow runs right to left (from `d{j}` to `s{i}`).
    Dumbbell {
        /// Random direction per flow.
        both_directions: bool,
        /// Every flow from the right side to the left (left out of the resolved scenario when
        /// false, so the scenarios and sweep keys of the other directions are as before).
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        reverse: bool,
    },
    /// Graph: a uniformly random host of `from` and of `to` (node indices), never the same host and
    /// never two hosts hanging on the same router.
    Graph {
        /// Candidate senders.
        from: Vec<usize>,
        /// Candidate receivers.
        to: Vec<usize>,
    },
}

/// The think time of a request/response application.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Think {
    /// Exponential with this mean.
    Mean(Dur),
    /// Exponential with the mean that makes this connection offer this fraction of its
    /// bottleneck's rate: `mean = E[response] · 8 / (load · rate)` (transfer times neglected).
    Load(f64),
    /// Always this long.
    Fixed(Dur),
    /// Uniform on `[min, max]` (Barakat & Altman's U[0, 5 s] between connections).
    Uniform {
        /// Shortest.
        min: Dur,
        /// Longest.
        max: Dur,
    },
    /// A size law over nanoseconds: bounded Pareto, lognormal (`mu` of ln(ns) = ln(s) + ln(1e9)),
    /// Zipf (`unit` in ns) or an empirical CDF (`seconds,probability` lines, kept in ns).
    Law(SizeSpec),
}

/// A request/response application over one persistent connection (Scharf's web model): after a
/// think time the client (the flow's receiving host) sends a request of `request` bytes; the
/// server (the sending host) answers with a response drawn from `response`; `count` exchanges.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AppSpec {
    /// Request size on the wire (one packet), bytes.
    pub request: u64,
    /// Response sizes.
    pub response: SizeSpec,
    /// The think time before each request after the first.
    pub think: Think,
    /// Number of exchanges.
    pub count: u64,
}
