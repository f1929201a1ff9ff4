//! The TCP endpoints of a scenario's flow: controller (startup and avoidance), sender and receiver, as
//! the simulator, startlab-udp and the bindings build them.

use super::*;

pub(super) fn cc_for(spec: &startlab_scenario::TcpSpec, startup: &StartupSpec) -> Controller {
    let mss = spec.mss;
    let cfg = CcConfig {
        mss,
        initial_window: spec.initial_window * mss,
        initial_ssthresh: match spec.initial_ssthresh {
            SsthreshSpec::Infinite => Ssthresh::Infinite,
            SsthreshSpec::Bytes(b) => Ssthresh::Bytes(b as f64),
        },
        loss_window: mss,
        cwnd_validation: spec.cwnd_validation,
        linux_ss_clamp: spec.linux_ss_clamp,
    };
    let startup = startup_for(startup, spec);
    Controller::new(cfg, startup, avoidance_for(spec))
}

/// The avoidance plug-in a scenario names (`tcp.congestion_avoidance`), built by its declaration
/// from its resolved parameters (`startlab_cc::avoidance::DECLS`).
pub(super) fn avoidance_for(spec: &startlab_scenario::TcpSpec) -> Avoidance {
    spec.avoidance.decl().instantiate(&spec.avoidance.params(), &spec.flow_context())
}

/// The startup plug-in a scenario names, built by its declaration from its resolved parameters
/// (`startlab_cc::startup::DECLS`).
pub(super) fn startup_for(spec: &StartupSpec, tcp: &startlab_scenario::TcpSpec) -> Startup {
    spec.decl().instantiate(&spec.params(), &tcp.flow_context())
}

/// The sender and receiver the simulator builds for the scenario's `[[flows]]` entry `i` (its own
/// TCP, startup and avoidance settings, its `size`), for a driver other than the simulator: the
/// real-clock UDP transport (startlab-udp) runs exactly these endpoints. `None` if there is no
/// flow `i`.
pub fn flow_endpoints(scenario: &Scenario, i: usize) -> Option<(Sender, Receiver)> {
    let f = scenario.flows.get(i)?;
    Some(endpoints(scenario, f, i, 0, f.size, false))
}

/// The congestion controller (startup and avoidance algorithms, initial window and ssthresh) the
/// simulator builds for the scenario's `[[flows]]` entry `i`, for a driver that feeds it ACKs
/// itself: the BPF conformance test (docs/KERNEL-BPF.md) replays a kernel's ACKs through it.
/// `None` if there is no flow `i`. For a QUIC flow (a `quic` table), the controller of its server:
/// the QUIC initial window, RFC 9002's minimum window, byte-counting slow start.
pub fn flow_controller(scenario: &Scenario, i: usize) -> Option<Controller> {
    let f = scenario.flows.get(i)?;
    Some(match &f.quic {
        Some(q) => super::quic::quic_controller(f, q),
        None => cc_for(&f.tcp, &f.startup),
    })
}

/// The sender and receiver of flow `i`'s connection `conn` (a `[[users]]` slot opens one
/// connection per transfer; each draws its own Quick-Start nonce).
pub(super) fn endpoints(scenario: &Scenario, f: &FlowSpec, i: usize, conn: u32, size: Option<u64>, app_limited: bool) -> (Sender, Receiver) {
    let t = &f.tcp;
    let recovery = match t.recovery {
        RecoverySpec::Tahoe => Recovery::Tahoe,
        RecoverySpec::Reno => Recovery::Reno,
        RecoverySpec::Newreno => Recovery::NewReno,
        RecoverySpec::Sack => Recovery::Sack,
        RecoverySpec::Prr => Recovery::Prr(match t.prr_bound {
            PrrBoundSpec::Ssrb => PrrBound::SlowStart,
            PrrBoundSpec::Crb => PrrBound::Conservative,
            PrrBoundSpec::SafeAck => PrrBound::SafeAck,
        }),
        RecoverySpec::RackTlp => Recovery::RackTlp,
        RecoverySpec::Linux => Recovery::Linux,
        RecoverySpec::Sack1 => Recovery::Sack1,
        RecoverySpec::Ns3Prr => Recovery::Ns3Prr,
    };
    let sender = Sender::new(
        SenderConfig {
            mss: t.mss as u32,
            size,
            recovery,
            rto: RtoConfig {
                initial: t.rto_initial,
                min: t.rto_min,
                max: t.rto_max,
                granularity: t.clock_granularity,
                policy: if t.rto_linux { RtoPolicy::Linux } else { RtoPolicy::Rfc6298 },
            },
            limited_transmit: t.limited_transmit,
            dupthresh: t.dupthresh as u32,
            handshake: t.handshake,
            newreno_impatient: t.newreno_impatient,
            pacing: t.pacing,
            app_limited,
            idle_restart: match t.idle_restart {
                IdleRestartSpec::Rfc5681 => IdleRestart::Rfc5681,
                IdleRestartSpec::Rfc2861 => IdleRestart::Rfc2861,
                IdleRestartSpec::Off => IdleRestart::Off,
            },
            startup_after_idle: t.startup_after_idle,
            startup_min_response: t.startup_min_response,
            ecn: match t.ecn {
                EcnSpec::Off => EcnMode::Off,
                EcnSpec::Classic => EcnMode::Classic,
                EcnSpec::L4s => EcnMode::L4s,
            },
            quick_start: f.startup.decl().router_approval.then(|| {
                // RFC 4782 §3.1: QS TTL and QS Nonce are random, from the flow's own stream.
                let mut rng = rng::stream(scenario.seed, rng::Component::QuickStartRequest, (conn as u64) << 32 | i as u64);
                QsRequest {
                    code: qs_code_for(f.startup.params().get(&startlab_cc::startup::QUICK_START_RATE)),
                    qs_ttl: rng.random::<u8>(),
                    nonce: rng.random::<u32>() & ((1 << QS_NONCE_BITS) - 1),
                }
            }),
        },
        cc_for(t, &f.startup),
    );
    let policy = match t.ack {
        AckSpec::EveryPacket => AckPolicy::EveryPacket,
        AckSpec::Delayed { timeout } => AckPolicy::Delayed { timeout },
        AckSpec::Quickack { segments, timeout } => AckPolicy::QuickAck { budget: segments as u32, timeout },
    };
    let receiver = Receiver::new(ReceiverConfig {
        policy,
        sack: recovery.uses_sack(),
        max_sack_blocks: t.sack_blocks as usize,
        rwnd: t.rwnd.unwrap_or(u64::MAX),
        mss: t.mss,
        // An L4S flow asks for Accurate ECN feedback (RFC 9768) and its receiver implements it.
        accecn: t.ecn == EcnSpec::L4s,
    });
    (sender, receiver)
}
