//! Cross-traffic sources (`[[cross]]`): CBR, Poisson, on/off and packet trains, their ends and
//! names.

use super::*;

/// Every `[[cross]]` source; its name joins `names` (flows and sources share one list of names).
pub(super) fn sources(list: &[raw::Cross], topo: &Topology, duration: Dur, names: &mut std::collections::BTreeSet<String>) -> R<Vec<CrossSpec>> {
    let mut cross = Vec::new();
    for (j, c) in list.iter().enumerate() {
        let p = format!("cross[{j}]");
        let train_keys = [("packets", c.packets.is_some()), ("gaps", c.gaps.is_some()), ("interval", c.interval.is_some())];
        if c.kind != "train" {
            if let Some(key) = train_keys.iter().find(|k| k.1) {
                return err(format!("{p}.{}", key.0), format!("is a key of kind = \"train\", not {:?}", c.kind));
            }
        }
        let mut gaps = Vec::new();
        let process = match c.kind.as_str() {
            "train" => {
                if let Some(key) = [("on", c.on.is_some()), ("off", c.off.is_some()), ("rate", c.rate.is_some())].iter().find(|k| k.1) {
                    return err(format!("{p}.{}", key.0), "is not a key of kind = \"train\": its gaps set when packets leave");
                }
                let packets = c.packets.ok_or_else(|| missing(&format!("{p}.packets")))?;
                if !(2..=100_000).contains(&packets) {
                    return err(format!("{p}.packets"), format!("{packets} packets per train; expected 2 to 100000 (a train needs two packets for one gap)"));
                }
                let list = c.gaps.as_ref().ok_or_else(|| missing(&format!("{p}.gaps")))?;
                if list.is_empty() {
                    return err(format!("{p}.gaps"), "is empty; expected one source gap per train, such as [\"0.5ms\", \"1ms\"]");
                }
                for (i, g) in list.iter().enumerate() {
                    if g.0 == Dur::ZERO {
                        return err(format!("{p}.gaps[{i}]"), "must be longer than 0s");
                    }
                    gaps.push(g.0);
                }
                let interval = c.interval.map_or(Dur::from_secs(1), |d| d.0);
                let longest = gaps.iter().max().copied().unwrap_or(Dur::ZERO);
                if interval.as_nanos() <= longest.as_nanos() * (packets - 1) {
                    return err(format!("{p}.interval"), format!("{interval} is not longer than the longest train ({packets} packets {longest} apart); trains would overlap"));
                }
                CrossProcess::Train { packets: packets as u32, interval }
            }
            "cbr" | "poisson" => {
                if let Some(key) = [("on", c.on.is_some()), ("off", c.off.is_some())].iter().find(|k| k.1) {
                    return err(format!("{p}.{}", key.0), format!("is a key of kind = \"onoff\", not {:?}", c.kind));
                }
                if c.kind == "cbr" { CrossProcess::Cbr } else { CrossProcess::Poisson }
            }
            "onoff" => {
                let on = c.on.ok_or_else(|| missing(&format!("{p}.on")))?.0;
                let off = c.off.ok_or_else(|| missing(&format!("{p}.off")))?.0;
                if on == Dur::ZERO {
                    return err(format!("{p}.on"), "the mean on period must be longer than 0s");
                }
                CrossProcess::OnOff { on, off }
            }
            other => {
                return err(format!("{p}.kind"), format!("{other:?} is not a known cross-traffic source; expected \"cbr\", \"poisson\", \"onoff\" or \"train\""))
            }
        };
        // A rate of 0 is a source that sends nothing: the zero point of a sweep over cross load.
        let rate = match (&process, c.rate) {
            (CrossProcess::Train { packets, interval }, _) => {
                // The mean rate over the trains (for the flows' available rate).
                startlab_units::Rate(((*packets as u128 * c.packet_size.0 as u128 * 8 * 1_000_000_000 / interval.as_nanos().max(1) as u128) as u64).max(1))
            }
            (_, Some(r)) => r.0,
            (_, None) => return err(p.clone(), "missing field `rate`"),
        };
        if c.packet_size.0 == 0 || c.packet_size.0 > 65_535 {
            return err(format!("{p}.packet_size"), "must be between 1B and 65535B");
        }
        let start = c.start.map_or(Dur::ZERO, |d| d.0);
        if start >= duration {
            return err(format!("{p}.start"), format!("{start} is not before the run's duration {}", duration));
        }
        let stop = c.stop.map_or(duration, |d| d.0);
        if stop <= start {
            return err(format!("{p}.stop"), "must be after start");
        }
        let ends = match &topo {
            Topology::Dumbbell(_) => {
                if c.from.is_some() || c.to.is_some() {
                    return err(format!("{p}.from"), "a dumbbell gives each cross-traffic source its own hosts; from/to are for kind = \"graph\"");
                }
                Ends::Cross(j)
            }
            Topology::Graph(g) => graph_ends(&p, g, c.from.as_deref(), c.to.as_deref())?,
        };
        // Cross sources and flows share one list of names in the traces and tables (the packet
        // trace's `flow` names either): a repeated name is refused here, not after the run.
        let name = c.name.clone().unwrap_or_else(|| format!("{}{j}", c.kind));
        if name.is_empty() {
            return err(format!("{p}.name"), "must not be empty");
        }
        if !names.insert(name.clone()) {
            let what = if c.name.is_some() { "" } else { " (the default name of this source; give it its own `name`)" };
            return err(format!("{p}.name"), format!("{name:?} is already the name of a flow or cross-traffic source{what}"));
        }
        cross.push(CrossSpec { name, ends, process, rate, packet_size: c.packet_size.0, start, stop, gaps });
    }
    Ok(cross)
}
