//! Startup plug-ins: how the window grows while `cwnd < ssthresh`, and whether startup ends early.
//!
//! Each algorithm lives in its own file: it implements [`StartupAlgorithm`] and declares itself
//! (`DECL`: name, summary, source, typed parameters, how it is built); it is listed once in the
//! `startups!` table below, which generates the [`Startup`] enum, its dispatch and [`DECLS`]. A plug-in owns
//! only its private state, sees a read-only [`CcView`], and *returns* a [`StartupAction`]; it never
//! writes cwnd or ssthresh. Time comes in with each event; plug-ins read no clock.
//!
//! A congestion signal normally ends startup. A plug-in may instead ride a loss recovery out
//! ([`StartupAlgorithm::keeps_startup_on_loss`], BBRv3, whose STARTUP ends on an excessive loss
//! rate, not on a loss): the endpoint's recovery repairs the losses at the window the loss found
//! (no reduction), the plug-in sees the recovery's ACKs ([`StartupAlgorithm::on_recovery_ack`])
//! and every retransmission ([`StartupAlgorithm::on_retransmit`]), and when the recovery ends
//! startup goes on, unless the plug-in ended it meanwhile. A timeout still ends startup.

mod hystart;
mod hystart_linux;
mod hystartpp;
mod slow_start;
mod lss;
mod abc;
mod bc;
mod dbc;
mod smooth_start;
mod hoe;
mod vegas;
mod packet_pair;
mod astart;
mod delay_ss;
mod search;
mod bbr_common;
mod bbr_startup;
mod bbrv3;
mod initial_start;
mod jump_start;
mod more_start;
mod paced_start;
mod quick_start;
mod careful_resume;
mod suss;
pub mod plugin;

pub use vegas::{Vegas, VegasConfig, VegasDiff};
pub use packet_pair::{PacketPair, PacketPairConfig};
pub use astart::{Astart, AstartConfig, AstartEstimator};
pub use delay_ss::{DelaySlowStart, DelaySlowStartConfig};
pub use search::{Search, SearchConfig};
pub use bbr_startup::{BbrStartup, BbrStartupConfig};
pub use bbrv3::{BbrV3, BbrV3Config, FullBwCheck};
pub use initial_start::{InitialStart, INITIAL_WINDOW as INITIAL_START_WINDOW};
pub use jump_start::{JumpStart, JumpStartConfig};
pub use more_start::{MoreStart, MoreStartConfig};
pub use paced_start::{AckCounting, PacedStart, PacedStartConfig, PastRtt};
pub use quick_start::{
    qs_code_for, qs_lower_nonce, qs_nonce_mask, qs_rate_bps, QsOutcome, QsReport, QsRequest, QsVariant, QuickStart,
    QuickStartConfig, QuickStartEvent, INITIAL_IP_TTL, QS_MAX_CODE, QS_MIN_RATE_BPS, QS_NONCE_BITS, QS_OPTION_BYTES, QS_RATE_UNIT_BPS,
    RATE as QUICK_START_RATE, VARIANT as QUICK_START_VARIANT,
};
pub use careful_resume::{CarefulResume, CarefulResumeConfig, CrPhase, PathMemory, SavedPath};
pub use hystart::{HyStart, HyStartConfig};
pub use hystart_linux::{HyStartDetect, HyStartLinux, HyStartLinuxConfig, RoundReset};
pub use hystartpp::{HyStartPlusPlus, HyStartPlusPlusConfig};
pub use suss::{Suss, SussConfig};
pub use slow_start::SlowStart;
pub use lss::{Lss, LssConfig};
pub use abc::{Abc, AbcConfig};
pub use bc::Bc;
pub use dbc::{Dbc, DbcConfig};
pub use smooth_start::{Counting, SmoothStart, SmoothStartConfig, Strategy};
pub use hoe::{Hoe, PacketPairEstimator};
pub use plugin::{PluginFactory, PluginStartup};

use crate::decl::{AlgorithmInfo, Check, FlowContext, Params};
use crate::{AckEvent, CcView, CongestionEvent, Dur, ExitReason, Time};

/// What a startup plug-in decided on one ACK.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StartupAction {
    /// Bytes to add to cwnd (suspended by the controller while the sender is not cwnd-limited).
    pub increase: f64,
    /// Replace cwnd (bytes) after the increase, e.g. Vegas shrinking the window when it exits.
    pub set_cwnd: Option<f64>,
    /// Set ssthresh (bytes) without ending startup by itself (e.g. Hoe's packet-pair estimate);
    /// startup then ends normally once `cwnd >= ssthresh`.
    pub set_ssthresh: Option<f64>,
    /// End startup now with this reason; ssthresh becomes `set_ssthresh` if given, else cwnd.
    pub exit: Option<ExitReason>,
    /// Pace transmissions at this rate (bytes of payload per second) from now on, until another
    /// action changes it or startup ends (ALGORITHMS.md §0.6). `None` leaves the rate unchanged;
    /// `Some(0.0)` stops pacing without ending startup (Jump-Start after its first flight).
    pub pacing_rate: Option<f64>,
    /// With a pacing rate in force, the next segment leaves no earlier than this time (Linux's
    /// `tcp_wstamp_ns`); later ones follow at the rate. SUSS starts its paced data a guard
    /// interval after the round's ACK-clocked data.
    pub pacing_start: Option<Time>,
    /// Hold new data: `Upto(seq)` lets no byte at or beyond `seq` (data bytes counted from 0) leave
    /// until a later action moves the limit; `Open` removes it. Retransmissions are never held.
    /// Paced Start sends one train, then waits for all of its ACKs (ALGORITHMS.md §7.4).
    pub send_limit: Option<SendLimit>,
    /// End startup (ssthresh = cwnd, congestion avoidance) as soon as new data up to this sequence
    /// number has been sent: Paced Start's startup ends when its FILL train's last packet leaves.
    pub exit_when_sent: Option<(u64, ExitReason)>,
}

/// A hold on new data set by a startup plug-in (see [`StartupAction::send_limit`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendLimit {
    /// No hold.
    Open,
    /// New data may be sent only below this sequence number.
    Upto(u64),
}

/// The window a startup plug-in resumes with when loss recovery ends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RecoveryWindow {
    /// cwnd in bytes.
    pub cwnd: f64,
    /// ssthresh in bytes; `None` keeps the one the loss set.
    pub ssthresh: Option<f64>,
}

/// A value a startup plug-in reports about its run, for the per-flow results (e.g. Paced Start's
/// exit case and exit gap).
#[derive(Clone, Debug, PartialEq)]
pub enum Detail {
    /// A number.
    Num(f64),
    /// A name.
    Text(&'static str),
}

impl StartupAction {
    /// Grow by `bytes`, nothing else.
    pub fn grow(bytes: f64) -> Self {
        StartupAction { increase: bytes, ..Self::default() }
    }
    /// End startup with `reason` (ssthresh = cwnd).
    pub fn exit(reason: ExitReason) -> Self {
        StartupAction { exit: Some(reason), ..Self::default() }
    }
}

/// The interface every startup algorithm implements. Only `on_ack` is required.
pub trait StartupAlgorithm: std::fmt::Debug {
    /// An ACK that advanced `SND.UNA` while in slow start. `view.new_round` is true on the ACK that
    /// ended a round (ALGORITHMS.md §0.3); the round counter has already advanced.
    fn on_ack(&mut self, view: &CcView, ack: &AckEvent) -> StartupAction;

    /// The SYN-ACK of a never-retransmitted SYN arrived: `rtt` is the handshake RTT sample and
    /// `queued` the application data waiting to be sent (`None`: unlimited). Called at most once,
    /// before any data leaves, while in slow start; the action is applied as an ACK's (without
    /// `increase` or `exit`). Jump-Start and More-Start size and pace their first flight here.
    fn on_handshake(&mut self, _view: &CcView, _rtt: Dur, _queued: Option<u64>) -> StartupAction {
        StartupAction::default()
    }

    /// A response starts after an idle period on a connection that runs its fast startup per
    /// response (`tcp.startup_after_idle`, docs/algorithms/quick-start.md, jump-start.md, more-start.md): `rtt` is the smoothed
    /// RTT, `queued` the response's bytes and `snd_max` where its first byte goes. Applied like
    /// [`StartupAlgorithm::on_handshake`]. Jump-Start and More-Start pace the response's first
    /// flight again; Quick-Start forgets its earlier verdict (a new request rides on the response's
    /// first segment). Default: nothing (slow start from the restart window).
    fn on_restart(&mut self, _view: &CcView, _rtt: Dur, _queued: Option<u64>, _snd_max: u64) -> StartupAction {
        StartupAction::default()
    }

    /// The sender's verdict on its Quick-Start request (RFC 4782) arrived: with the SYN-ACK, or with
    /// the ACK of the first data segment when there is no handshake. Called at most once, and only
    /// for a sender configured to request Quick-Start; applied like
    /// [`StartupAlgorithm::on_handshake`] (and not at all once startup has ended).
    fn on_quick_start(&mut self, _view: &CcView, _ev: &QuickStartEvent) -> StartupAction {
        StartupAction::default()
    }

    /// The controller was built: the plug-in may shape the very first flight (Paced Start sends a
    /// packet pair instead of the initial window). Applied like [`StartupAlgorithm::on_handshake`].
    fn on_start(&mut self, _view: &CcView) -> StartupAction {
        StartupAction::default()
    }

    /// New data up to `snd_max` left at `now` while in slow start, and `flight` bytes are now out
    /// (`snd_max` less the last cumulative ACK). Applied like [`StartupAlgorithm::on_handshake`];
    /// SUSS grows cwnd in its paced periods as the data leaves, as its `tcp_output.c` does.
    fn on_send(&mut self, _view: &CcView, _now: Time, _snd_max: u64, _flight: u64) -> StartupAction {
        StartupAction::default()
    }

    /// A congestion signal arrived (after which the controller leaves startup).
    fn on_congestion(&mut self, _view: &CcView, _ev: &CongestionEvent) {}

    /// The window (bytes) a congestion signal in startup reduces from, instead of cwnd; asked
    /// before [`StartupAlgorithm::on_congestion`]. SUSS, which raises cwnd to a round's target at
    /// once where its kernel code grows it as the paced data leaves, gives the data in flight (its
    /// `tcp_input.c` sets cwnd to the packets in flight before the reduction).
    fn loss_window(&mut self, _view: &CcView, _ev: &CongestionEvent) -> Option<f64> {
        None
    }

    /// The slow-start threshold (bytes) after a congestion signal in startup, instead of the
    /// avoidance plug-in's; `retransmitted` is the bytes retransmitted so far on the connection.
    /// Paced Start: half of the last train after a timeout (ALGORITHMS.md §7.6).
    fn loss_ssthresh(&mut self, _view: &CcView, _ev: &CongestionEvent, _retransmitted: u64) -> Option<f64> {
        None
    }

    /// Loss recovery ended; `retransmitted` is the bytes retransmitted so far on the connection.
    /// The window to resume with, instead of the recovery's: Jump-Start sets
    /// `cwnd = ssthresh = max((D − R)/2, 2)` (§10.2); Quick-Start after losing Quick-Start data sets
    /// cwnd = IW and keeps the loss's ssthresh, so it slow-starts up to it (§10.1).
    fn after_recovery(&mut self, _view: &CcView, _retransmitted: u64) -> Option<RecoveryWindow> {
        None
    }

    /// Values for the per-flow results (name, value); names carry the algorithm's prefix.
    fn report(&self) -> Vec<(&'static str, Detail)> {
        Vec::new()
    }

    /// The current values of the declared signals ([`StartupDecl::signals`]), in their order,
    /// appended to `out` (NaN for one not known yet). Asked after every ACK in startup when the
    /// `[trace] startup` trace is on.
    fn signals(&self, _out: &mut Vec<f64>) {}

    /// Whether startup survives a fast retransmit. Default false: the loss ends startup (reason
    /// `loss`). True (BBRv3): the controller rides the recovery out. It calls
    /// [`StartupAlgorithm::on_congestion`], keeps startup running and enters recovery with
    /// ssthresh = cwnd, so that the endpoint repairs the losses without reducing the window.
    /// During the recovery the plug-in gets [`StartupAlgorithm::on_recovery_ack`], and when the
    /// recovery ends startup resumes with the ssthresh it had before the loss. A timeout still ends
    /// startup, and so does a fast retransmit once startup has ended. ECN echoes follow the
    /// declaration's [`CeRule`] as before.
    fn keeps_startup_on_loss(&self) -> bool {
        false
    }

    /// An ACK that advanced `SND.UNA` during a loss recovery that startup rides out (only for a
    /// plug-in whose [`StartupAlgorithm::keeps_startup_on_loss`] is true). `view.new_round` marks a
    /// round's end as in [`StartupAlgorithm::on_ack`]; the rounds go on counting through the
    /// recovery. The endpoint's recovery owns the window, so the action's `increase`, `set_cwnd`
    /// and `send_limit` are ignored. `pacing_rate` applies. `exit` ends startup now, with ssthresh
    /// = `set_ssthresh` (else cwnd): the recovery goes on and ends with that window, as after a
    /// loss that ended startup.
    fn on_recovery_ack(&mut self, _view: &CcView, _ack: &AckEvent) -> StartupAction {
        StartupAction::default()
    }

    /// `len` bytes at sequence number `seq` (data bytes counted from 0) were retransmitted while in
    /// startup, a recovery that startup rides out included. BBRv3 counts a round's lost bytes and
    /// its discontiguous lost ranges from them.
    fn on_retransmit(&mut self, _seq: u64, _len: u64) {}

    /// An ACK in congestion avoidance (outside recovery). A threshold above cwnd re-opens slow
    /// start with it as ssthresh (Astart: "if ssthresh_est > ssthresh: ssthresh = ssthresh_est  #
    /// re-open slow start"); the recorded end of startup stays the first one.
    fn reopen(&mut self, _view: &CcView, _ack: &AckEvent) -> Option<f64> {
        None
    }

    /// What this connection leaves for the next connection on its path (the saved CC parameters
    /// of Careful Resume, RFC 9959 §3.1), read when it ends; `None`: the algorithm keeps nothing
    /// across connections.
    fn retained(&self) -> Option<PathMemory> {
        None
    }

    /// Before the connection starts: what the previous connection on its path left
    /// ([`StartupAlgorithm::retained`]; `None`: no saved set). Called only when one did.
    fn seed(&mut self, _saved: Option<SavedPath>) {}
}

/// What a startup algorithm does on a CE mark while in startup (its declaration's `on_ce`). Each
/// algorithm states it: from its paper, or where the paper is silent from its own implementation
/// (docs/algorithms/NAME.md says which). The signal is the ECE echo for a classic ECN flow and the
/// CE-marked bytes of an ACK (`AckEvent::ce_bytes`, Accurate ECN) for an L4S flow; either reaches
/// the controller as a [`CongestionKind::Ecn`](crate::CongestionKind::Ecn) event at most once per
/// window of data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CeRule {
    /// Startup ends as on a loss (RFC 3168 §6.1.2: the sender "MUST react ... as it would to a
    /// dropped packet"): ssthresh from the algorithm's loss rule or the avoidance, `cwnd =
    /// ssthresh`, no retransmission, exit reason `ecn`.
    ExitAsLoss,
    /// The echo does not end startup: the algorithm applies its own rule to the CE-marked bytes of
    /// each ACK (and may exit with reason `ecn`); a classic ECE echo changes nothing in startup.
    OwnRule,
}

impl CeRule {
    /// The rule's name in `startlab algorithms --json`.
    pub fn name(self) -> &'static str {
        match self {
            CeRule::ExitAsLoss => "exit-as-loss",
            CeRule::OwnRule => "own-rule",
        }
    }
}

/// How an algorithm is declared, in its own file next to its state machine: what the registry
/// lists, how it is built from its parameters, and the checks its parameter ranges cannot say.
/// The scenario check, `startlab algorithms`, the docs table and the simulator's construction are
/// derived from [`DECLS`].
#[derive(Clone, Copy, Debug)]
pub struct StartupDecl {
    /// Name, summary, source and parameters.
    pub info: AlgorithmInfo,
    /// How the plug-in is built for these (checked) parameters on this flow.
    pub build: Build,
    /// Checks between parameters, or against the flow's TCP settings.
    pub check: Check,
    /// A fast startup that may run again per response after idle (`tcp.startup_after_idle`,
    /// `tcp.startup_min_response`).
    pub per_response: bool,
    /// It asks the routers on the path to approve a rate (Quick-Start): the simulator builds its
    /// routers' Quick-Start state and the sender carries the request; startlab-udp's path has no
    /// such routers.
    pub router_approval: bool,
    /// Its parameters set the flow's initial window (`tcp.initial_window` is refused beside it,
    /// and it cannot be one of a mix of algorithms that share one `tcp` table).
    pub sets_initial_window: bool,
    /// What it does on a CE mark in startup (the controller applies it).
    pub on_ce: CeRule,
    /// The variables it decides on, as `[trace] startup` records them after every ACK in startup
    /// ([`StartupAlgorithm::signals`] gives their values in this order).
    pub signals: &'static [Signal],
}

/// A decision variable of a startup algorithm (`[trace] startup`, docs/RESULTS.md).
#[derive(Clone, Copy, Debug)]
pub struct Signal {
    /// Name, unique within the algorithm.
    pub name: &'static str,
    /// Unit: `s`, `bytes`, `bytes/s`, `pkts`, `acks`, `rounds` or `-` (a number or a state).
    pub unit: &'static str,
    /// What it is, one line.
    pub help: &'static str,
}

impl Signal {
    /// A declared signal.
    pub const fn new(name: &'static str, unit: &'static str, help: &'static str) -> Signal {
        Signal { name, unit, help }
    }
}

/// How a declared algorithm is built.
#[derive(Clone, Copy, Debug)]
pub enum Build {
    /// A built-in algorithm: a function of its checked parameters and the flow.
    Native(fn(&Params<'_>, &FlowContext) -> Startup),
    /// A plug-in registered at run time ([`plugin::register`]; a Python class through the bindings).
    Plugin(&'static dyn PluginFactory),
}

impl StartupDecl {
    /// The algorithm for these (checked) parameters on this flow.
    pub fn instantiate(&self, params: &Params<'_>, cx: &FlowContext) -> Startup {
        match self.build {
            Build::Native(build) => build(params, cx),
            Build::Plugin(factory) => Startup::Plugin(PluginStartup::new(self.info.name, factory.build(params, cx), self.on_ce, self.signals)),
        }
    }

    /// A plug-in registered at run time rather than a built-in algorithm.
    pub fn is_plugin(&self) -> bool {
        matches!(self.build, Build::Plugin(_))
    }
}

/// The declared startup algorithm named `name`: a built-in one, else a registered plug-in.
pub fn decl(name: &str) -> Option<&'static StartupDecl> {
    DECLS.iter().copied().find(|d| d.info.name == name).or_else(|| plugin::get(name))
}

macro_rules! startups {
    ($($(#[$doc:meta])* $variant:ident($ty:ty) = $module:ident,)*) => {
        /// The built-in startup algorithms.
        #[derive(Debug)]
        #[allow(clippy::large_enum_variant, reason = "one per flow, built once; boxing buys nothing")]
        pub enum Startup {
            $($(#[$doc])* $variant($ty),)*
            /// A plug-in registered at run time (`plugin::register`).
            Plugin(PluginStartup),
        }

        /// Every built-in algorithm's declaration, in registry order.
        pub static DECLS: &[&StartupDecl] = &[$(&$module::DECL),*];

        impl Startup {
            /// Every built-in algorithm's scenario name, in registry order.
            pub const NAMES: &'static [&'static str] = &[$($module::DECL.info.name),*];

            /// The name used in scenarios and results.
            pub fn name(&self) -> &'static str {
                match self {
                    $(Startup::$variant(_) => $module::DECL.info.name,)*
                    Startup::Plugin(p) => p.name(),
                }
            }

            /// What the algorithm does on a CE mark in startup (its declaration's `on_ce`).
            pub fn on_ce(&self) -> CeRule {
                match self {
                    $(Startup::$variant(_) => $module::DECL.on_ce,)*
                    Startup::Plugin(p) => p.on_ce(),
                }
            }

            /// The declared decision variables (`[trace] startup`).
            pub fn signal_decls(&self) -> &'static [Signal] {
                match self {
                    $(Startup::$variant(_) => $module::DECL.signals,)*
                    Startup::Plugin(p) => p.signals(),
                }
            }

            /// The plug-in behind the enum, read-only.
            fn inner_ref(&self) -> &dyn StartupAlgorithm {
                match self {
                    $(Startup::$variant(a) => a,)*
                    Startup::Plugin(p) => p.algorithm(),
                }
            }

            /// The plug-in behind the enum.
            fn inner(&mut self) -> &mut dyn StartupAlgorithm {
                match self {
                    $(Startup::$variant(a) => a,)*
                    Startup::Plugin(p) => p.algorithm_mut(),
                }
            }
        }
    };
}

startups! {
    /// Standard slow start (RFC 5681).
    SlowStart(SlowStart) = slow_start,
    /// Limited Slow-Start (RFC 3742).
    Lss(Lss) = lss,
    /// Appropriate Byte Counting with limit L (RFC 3465).
    Abc(Abc) = abc,
    /// Uncapped byte counting in the first slow start (Barakat & Altman's BC).
    Bc(Bc) = bc,
    /// Decreasing Byte Counting (Barakat & Altman §4.3).
    Dbc(Dbc) = dbc,
    /// Smooth-start (Wang, Xin, Reeves & Shin).
    SmoothStart(SmoothStart) = smooth_start,
    /// Slow start to Hoe's packet-pair ssthresh (ns-2 NewReno startup).
    Hoe(Hoe) = hoe,
    /// Hybrid Slow Start, the paper's Algorithm 1 (Ha & Rhee 2008).
    HyStart(HyStart) = hystart,
    /// Hybrid Slow Start as in Linux `tcp_cubic.c` today.
    HyStartLinux(HyStartLinux) = hystart_linux,
    /// HyStart++ with Conservative Slow Start (RFC 9406).
    HyStartPlusPlus(HyStartPlusPlus) = hystartpp,
    /// Vegas modified slow start (Brakmo & Peterson 1995).
    Vegas(Vegas) = vegas,
    /// Packet-pair slow start: a Hoe-style BDP estimate from ACK spacing.
    PacketPair(PacketPair) = packet_pair,
    /// Westwood+ Adaptive Start (Wang et al. 2004).
    Astart(Astart) = astart,
    /// Delay-based slow start: Limited Slow Start once queueing delay exceeds tau0 (Leith et al. 2007).
    DelaySlowStart(DelaySlowStart) = delay_ss,
    /// SEARCH: exit when delivered bytes fall behind those sent one RTT earlier (draft-chung-ccwg-search).
    Search(Search) = search,
    /// BBR STARTUP: pace at 2.885 x the max delivery rate until it stops growing 25 % a round (ALGORITHMS.md §12).
    BbrStartup(BbrStartup) = bbr_startup,
    /// BBRv3's STARTUP and DRAIN, then the flow's avoidance (draft-ietf-ccwg-bbr-06, Linux BBRv3).
    BbrV3(BbrV3) = bbrv3,
    /// Initial-Start: slow start from a large initial window (Scharf; ALGORITHMS.md §10.4).
    InitialStart(InitialStart) = initial_start,
    /// Jump-Start: the first min(queued, u) bytes paced over the handshake RTT (ALGORITHMS.md §10.2).
    JumpStart(JumpStart) = jump_start,
    /// More-Start: the first RTT paced at an application-given rate (Scharf; ALGORITHMS.md §10.3).
    MoreStart(MoreStart) = more_start,
    /// Paced Start: doubling paced trains and a binary search on the rate (Hu & Steenkiste; ALGORITHMS.md §7).
    PacedStart(PacedStart) = paced_start,
    /// Quick-Start: the first window paced at a rate the routers approved (RFC 4782; ALGORITHMS.md §10.1).
    QuickStart(QuickStart) = quick_start,
    /// Careful Resume: a paced jump to half the capacity an earlier connection saved (RFC 9959).
    CarefulResume(CarefulResume) = careful_resume,
    /// SUSS: Linux HyStart whose ACK-clock prediction quadruples cwnd in early rounds, the extra paced (Arghavani et al. 2024).
    Suss(Suss) = suss,
}

impl Startup {
    /// Dispatches an ACK.
    pub fn on_ack(&mut self, view: &CcView, ack: &AckEvent) -> StartupAction {
        self.inner().on_ack(view, ack)
    }
    /// Dispatches the handshake RTT sample.
    pub fn on_handshake(&mut self, view: &CcView, rtt: Dur, queued: Option<u64>) -> StartupAction {
        self.inner().on_handshake(view, rtt, queued)
    }
    /// Dispatches a per-response restart after idle.
    pub fn on_restart(&mut self, view: &CcView, rtt: Dur, queued: Option<u64>, snd_max: u64) -> StartupAction {
        self.inner().on_restart(view, rtt, queued, snd_max)
    }
    /// Dispatches the Quick-Start verdict.
    pub fn on_quick_start(&mut self, view: &CcView, ev: &QuickStartEvent) -> StartupAction {
        self.inner().on_quick_start(view, ev)
    }
    /// Dispatches the start of the connection.
    pub fn on_start(&mut self, view: &CcView) -> StartupAction {
        self.inner().on_start(view)
    }
    /// Dispatches a congestion signal.
    pub fn on_congestion(&mut self, view: &CcView, ev: &CongestionEvent) {
        self.inner().on_congestion(view, ev)
    }
    /// Dispatches new data sent in slow start.
    pub fn on_send(&mut self, view: &CcView, now: Time, snd_max: u64, flight: u64) -> StartupAction {
        self.inner().on_send(view, now, snd_max, flight)
    }
    /// Dispatches the window a congestion signal in startup reduces from.
    pub fn loss_window(&mut self, view: &CcView, ev: &CongestionEvent) -> Option<f64> {
        self.inner().loss_window(view, ev)
    }
    /// Dispatches the ssthresh override after a congestion signal in startup.
    pub fn loss_ssthresh(&mut self, view: &CcView, ev: &CongestionEvent, retransmitted: u64) -> Option<f64> {
        self.inner().loss_ssthresh(view, ev, retransmitted)
    }
    /// Dispatches the end of loss recovery.
    pub fn after_recovery(&mut self, view: &CcView, retransmitted: u64) -> Option<RecoveryWindow> {
        self.inner().after_recovery(view, retransmitted)
    }
    /// The plug-in's values for the results.
    pub fn report(&self) -> Vec<(&'static str, Detail)> {
        self.inner_ref().report()
    }
    /// The declared signals' current values, appended to `out`.
    pub fn signals(&self, out: &mut Vec<f64>) {
        self.inner_ref().signals(out)
    }
    /// Dispatches an ACK in congestion avoidance; `Some(ssthresh)` re-opens slow start.
    pub fn reopen(&mut self, view: &CcView, ack: &AckEvent) -> Option<f64> {
        self.inner().reopen(view, ack)
    }
    /// Whether startup survives a fast retransmit (the plug-in rides the recovery out).
    pub fn keeps_startup_on_loss(&self) -> bool {
        self.inner_ref().keeps_startup_on_loss()
    }
    /// Dispatches an ACK of a recovery that startup rides out.
    pub fn on_recovery_ack(&mut self, view: &CcView, ack: &AckEvent) -> StartupAction {
        self.inner().on_recovery_ack(view, ack)
    }
    /// Dispatches a retransmission in startup.
    pub fn on_retransmit(&mut self, seq: u64, len: u64) {
        self.inner().on_retransmit(seq, len)
    }
    /// What the connection leaves for the next one on its path.
    pub fn retained(&self) -> Option<PathMemory> {
        self.inner_ref().retained()
    }
    /// Hands the plug-in what the previous connection on its path left.
    pub fn seed(&mut self, saved: Option<SavedPath>) {
        self.inner().seed(saved)
    }
}
