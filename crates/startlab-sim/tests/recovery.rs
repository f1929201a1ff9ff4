//! The loss recoveries of issue 16 through the whole simulator: what each does with a lost
//! retransmission, a lost tail and a loss burst (docs/algorithms/recovery.md).

mod common;
use common::{flow, run, single};
use startlab_sim::{FlowResult, Simulation};

const ALL: [&str; 6] = ["sack", "prr", "rack-tlp", "linux", "sack1", "ns3-prr"];

/// A Reno flow in congestion avoidance at a window of 20 segments on an uncongested path, 200
/// segments in all, with the data transmissions numbered in `drops` (1-based) discarded.
fn window_of_20(recovery: &str, drops: &[u64]) -> (Simulation, FlowResult) {
    let tcp = format!(
        r#"recovery = "{recovery}", mss = "1000B", initial_window = 2, initial_ssthresh = "20pkt", ack = "every-packet", rto_min = "1s""#
    );
    let list = drops.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
    let sim = run(&single("10Mbps", "100ms", "1000pkt", &tcp, "200pkt", "60s", &format!("drops = [{list}]")));
    let f = flow(&sim, 0);
    assert!(f.completed, "{recovery} {drops:?}: the transfer completes");
    (sim, f)
}

/// The number (1-based, among data transmissions) of the first retransmission of the segment
/// that transmission `n` carried.
fn retransmission_of(sim: &Simulation, n: u64) -> u64 {
    let r = sim.results();
    let t = &r.traces.seq;
    let sends: Vec<(u8, u64)> = (0..t.time.len()).filter(|&i| t.flow[i] == 0 && t.event[i] <= 1).map(|i| (t.event[i], t.seq[i])).collect();
    let seq = sends[n as usize - 1].1;
    let k = sends.iter().enumerate().skip(n as usize).find(|(_, &(e, s))| e == 1 && s == seq).expect("it is retransmitted").0;
    k as u64 + 1
}

#[test]
fn a_retransmission_lost_again_waits_for_the_timer_unless_rack_finds_it() {
    for recovery in ALL {
        let (sim, _) = window_of_20(recovery, &[40]);
        let again = retransmission_of(&sim, 40);
        let (_, f) = window_of_20(recovery, &[40, again]);
        assert_eq!((f.drops, f.retransmissions_lost), (2, 1), "{recovery}: the original and its retransmission");
        if recovery == "rack-tlp" || recovery == "linux" {
            assert_eq!(f.timeouts, 0, "{recovery}: RACK sees the retransmission lost and sends it again");
        } else {
            assert_eq!(f.timeouts, 1, "{recovery}: only the retransmission timer finds a lost retransmission");
        }
        assert!(f.recovery_time > 0.0, "{recovery}: time in recovery is counted");
    }
}

#[test]
fn a_lost_tail_is_probed_by_tlp_instead_of_timing_out() {
    for recovery in ALL {
        // Transmission 200 carries the last segment (no loss before it).
        let (_, f) = window_of_20(recovery, &[200]);
        if recovery == "rack-tlp" || recovery == "linux" {
            assert_eq!((f.tlp_probes, f.timeouts), (1, 0), "{recovery}: the probe repairs the tail");
            assert_eq!(f.recovery_episodes, 1, "{recovery}: a repaired probe reduces the window once");
        } else {
            assert_eq!((f.tlp_probes, f.timeouts), (0, 1), "{recovery}: without a probe only the timer is left");
        }
    }
}

#[test]
fn every_recovery_repairs_scattered_drops_and_counts_one_episode() {
    for recovery in ALL {
        let (_, f) = window_of_20(recovery, &[40, 42, 44]);
        assert_eq!((f.drops, f.retransmissions, f.timeouts, f.recovery_episodes), (3, 3, 0, 1), "{recovery}");
    }
}

/// The Paced Start paper's path with CUBIC after plain slow start: the overshoot loses about a
/// buffer's worth at once. RACK-TLP alone refills the pipe to ssthresh as soon as it marks the
/// burst lost and overflows the queue again; with PRR (Linux) the repair goes at the pace of
/// what is delivered, and it ends without the timeout that RFC 6675 needs.
#[test]
fn on_a_slow_start_burst_linux_repairs_without_a_timeout_and_prr_paces_rack() {
    let burst = |recovery: &str| {
        let tcp = format!(r#"recovery = "{recovery}", mss = "1448B", initial_window = 10, ack = "every-packet", handshake = true, congestion_avoidance = "cubic""#);
        let cross = "\n[[cross]]\nkind = \"cbr\"\nrate = \"40Mbps\"\npacket_size = \"1000B\"\n";
        let toml = single("100Mbps", "80ms", "1000pkt", &tcp, "infinite", "10s", "") + cross;
        flow(&run(&toml), 0)
    };
    let (sack, rack, linux) = (burst("sack"), burst("rack-tlp"), burst("linux"));
    assert!(sack.timeouts >= 1, "RFC 6675 ends the burst's recovery with a timeout ({} RTOs)", sack.timeouts);
    assert_eq!(linux.timeouts, 0, "RACK-TLP + PRR repairs the burst without a timeout");
    assert!(linux.drops < rack.drops, "PRR paces the repair: {} drops against RACK-TLP alone {}", linux.drops, rack.drops);
    assert!(linux.retransmissions_lost < rack.retransmissions_lost);
}

/// Issue 31: with Reno's FlightSize/2, `rack-tlp` on the Paced Start path once raised ssthresh at
/// every episode (1 180, 1 964, 5 035 segments: SND.UNA stuck behind a lost retransmission while
/// RACK sent on) and dropped 62 822 packets in 10 s. Every congestion event of every recovery now
/// sets ssthresh at most to the window it found (the cwnd trace's rows marked as congestion
/// events), and `rack-tlp` and `linux` halve that window.
#[test]
fn on_the_burst_no_congestion_event_raises_ssthresh_under_any_recovery() {
    for recovery in ["tahoe", "reno", "newreno", "sack", "prr", "rack-tlp", "linux", "sack1", "ns3-prr"] {
        let tcp = format!(r#"recovery = "{recovery}", mss = "1448B", initial_window = 10, ack = "every-packet""#);
        let cross = "\n[[cross]]\nkind = \"cbr\"\nrate = \"40Mbps\"\npacket_size = \"1000B\"\n";
        let sim = run(&(single("100Mbps", "80ms", "1000pkt", &tcp, "infinite", "10s", "") + cross));
        let r = sim.results();
        let t = &r.traces.cwnd;
        let mut events = 0;
        for i in 1..t.time.len() {
            if t.cause[i] == 0 {
                continue;
            }
            events += 1;
            // The row before holds the window the event found (the trace has a row per change).
            let (found, set) = (t.cwnd[i - 1], t.ssthresh[i]);
            assert!(set <= found.max(2.0 * 1448.0) || set <= t.ssthresh[i - 1], "{recovery} at {:.4} s: ssthresh {set} above cwnd {found}", t.time[i]);
            if recovery == "rack-tlp" && t.cause[i] == 1 {
                assert!(set <= found / 2.0 + 1.0, "rack-tlp at {:.4} s: ssthresh {set} from cwnd {found}", t.time[i]);
            }
        }
        let f = flow(&sim, 0);
        assert!(events >= 1, "{recovery}: the burst is a congestion event");
        if recovery == "rack-tlp" {
            assert!(f.drops < 5_000, "rack-tlp drops {} in 10 s", f.drops);
        }
    }
}
