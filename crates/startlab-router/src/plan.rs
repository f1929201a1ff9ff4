//! From a scenario to the two channels the router applies.

use serde::Serialize;
use startlab_scenario::{QueueSpec, Scenario, Topology};
use startlab_sim::build::network;
use startlab_sim::net::Channel;
use startlab_units::Dur;

/// What the router will emulate, for the report.
#[derive(Clone, Debug, Serialize)]
pub struct PathSummary {
    /// Bottleneck rate (bit/s), both directions.
    pub rate_bps: f64,
    /// One-way delay each direction adds (bottleneck plus both access links), seconds.
    pub one_way_delay_s: f64,
    /// Base RTT of the path (twice the one-way delay), seconds.
    pub rtt_s: f64,
    /// The bottleneck queue as the scenario gives it (`droptail`/`red`, limit).
    pub queue: String,
    /// The queue limit: packets or bytes.
    pub limit: String,
    /// Impairments on the bottleneck (`forward`: data direction, `reverse`: ACKs).
    pub impairments: Vec<String>,
    /// Access-link serialisation the router leaves out (seconds per 1500-byte packet): the
    /// testbed's veth links are not rate-limited.
    pub access_tx_s: f64,
}

/// The two directions of the bottleneck, ready to run.
pub struct Plan {
    /// Data direction (sender side to receiver side): the scenario's forward bottleneck channel.
    pub forward: Channel,
    /// ACK direction.
    pub reverse: Channel,
    /// Delay added after the bottleneck in the data direction (the access links).
    pub extra_forward: Dur,
    /// Same, ACK direction.
    pub extra_reverse: Dur,
    /// Summary.
    pub summary: PathSummary,
}

/// The router's plan for a scenario: a dumbbell with one RTT (one bottleneck between one
/// sender and one receiver host); `[[cross]]` traffic is refused, since the testbed generates none.
pub fn plan(s: &Scenario) -> Result<Plan, String> {
    let Topology::Dumbbell(d) = &s.topology else {
        return Err("topology: the testbed emulates a dumbbell (`kind = \"dumbbell\"`) with one bottleneck; a graph topology cannot be run".to_string());
    };
    if d.rtts.len() != 1 {
        return Err(format!(
            "topology.rtts: the testbed has one sender and one receiver namespace, so one RTT; got {} (use `rtt = \"...\"`)",
            d.rtts.len()
        ));
    }
    if !s.cross.is_empty() {
        return Err(format!("cross: the testbed generates no cross traffic; remove the {} [[cross]] table(s)", s.cross.len()));
    }
    let net = network(s);
    // Channels 0 and 1 are the bottleneck's forward (left -> right) and reverse directions; the
    // path of pair 0 adds its two access links.
    let (src, dst) = net.pair_hosts[0];
    let beside = |from: u32, to: u32, bottleneck: u32| -> Result<u64, String> {
        let path = net.path(from, to).ok_or("topology: no route between the dumbbell's hosts")?;
        Ok(path.iter().filter(|&&c| c != bottleneck).map(|&c| net.channels[c as usize].delay.as_nanos()).sum())
    };
    let (extra_forward, extra_reverse) = (beside(src, dst, 0)?, beside(dst, src, 1)?);
    let mut channels = net.channels;
    let reverse = channels.swap_remove(1);
    let forward = channels.swap_remove(0);
    let one_way = forward.delay.as_nanos() + extra_forward;
    let ecn = match d.queue {
        QueueSpec::Droptail { .. } => false,
        QueueSpec::Red { ecn, .. } | QueueSpec::Codel { ecn, .. } | QueueSpec::FqCodel { ecn, .. } | QueueSpec::Pie { ecn, .. } | QueueSpec::DualPi2 { ecn, .. } => ecn,
    };
    let (queue, limit) = (format!("{}{}", d.queue.kind(), if ecn { "+ecn" } else { "" }), format!("{:?}", d.queue.limit()));
    let impairments = s
        .impairments
        .iter()
        .filter(|i| i.link == "bottleneck")
        .flat_map(|i| [(i.forward, "forward"), (i.reverse, "reverse")].into_iter().filter(|(on, _)| *on).map(move |(_, dir)| format!("{dir}: {}", kinds(i))))
        .collect();
    let summary = PathSummary {
        rate_bps: d.bottleneck_rate.bps() as f64,
        one_way_delay_s: one_way as f64 / 1e9,
        rtt_s: 2.0 * one_way as f64 / 1e9,
        queue,
        limit,
        impairments,
        access_tx_s: d.access_rate.tx_time(1500).as_secs_f64(),
    };
    Ok(Plan { forward, reverse, extra_forward: Dur(extra_forward), extra_reverse: Dur(extra_reverse), summary })
}

/// The kinds of impairment a spec sets, e.g. `loss+jitter`.
fn kinds(i: &startlab_scenario::ImpairmentSpec) -> String {
    let set = [
        (i.loss.is_some(), "loss"),
        (i.jitter.is_some(), "jitter"),
        (i.aggregate.is_some(), "aggregate"),
        (i.coalesce.is_some(), "coalesce"),
        (!i.rate.is_empty(), "rate schedule"),
        (i.rate_trace.is_some(), "rate trace"),
    ];
    set.iter().filter(|(on, _)| *on).map(|(_, k)| *k).collect::<Vec<_>>().join("+")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(topology: &str, extra: &str) -> Scenario {
        let text = format!(
            "seed = 1\nduration = \"5s\"\n[topology]\naccess_rate = \"1Gbps\"\nqueue = {{ kind = \"droptail\", limit = \"67pkt\" }}\n{topology}\n[[flows]]\nname = \"a\"\ntcp = {{ mss = \"1448B\" }}\nstartup = {{ algorithm = \"slow-start\" }}\nsize = \"infinite\"\n{extra}"
        );
        startlab_scenario::from_toml(&text).unwrap()
    }

    #[test]
    fn dumbbell_delay_is_the_whole_one_way_path() {
        let s = scenario("kind = \"dumbbell\"\nbottleneck_rate = \"20Mbps\"\nrtt = \"40ms\"", "");
        let p = plan(&s).unwrap();
        assert!((p.summary.rtt_s - 0.040).abs() < 1e-9, "{}", p.summary.rtt_s);
        assert_eq!(p.forward.rate.bps(), 20_000_000);
        assert_eq!(p.summary.limit, "Packets(67)");
        assert_eq!(p.forward.delay + p.extra_forward, Dur::from_millis(20));
        let split = scenario("kind = \"dumbbell\"\nbottleneck_rate = \"20Mbps\"\nrtt = \"40ms\"\nbottleneck_delay = \"5ms\"", "");
        let p = plan(&split).unwrap();
        assert_eq!((p.forward.delay, p.extra_forward, p.extra_reverse), (Dur::from_millis(5), Dur::from_millis(15), Dur::from_millis(15)));
    }

    #[test]
    fn refuses_what_it_cannot_emulate() {
        let two = scenario("kind = \"dumbbell\"\nbottleneck_rate = \"20Mbps\"\nrtts = [\"40ms\", \"80ms\"]\npairs = 2", "");
        assert!(plan(&two).err().unwrap().contains("one RTT"));
        let cross = scenario("kind = \"dumbbell\"\nbottleneck_rate = \"20Mbps\"\nrtt = \"40ms\"", "[[cross]]\nkind = \"cbr\"\nrate = \"1Mbps\"\npacket_size = \"1000B\"\n");
        assert!(plan(&cross).err().unwrap().contains("cross traffic"));
    }
}
