//! CUBIC congestion avoidance (RFC 9438, ALGORITHMS.md §9) through the whole simulator: the window
//! after a loss follows `W_cubic(t) = C·(t − K)³ + W_max`, and on a long fat path it refills the
//! pipe far sooner than Reno.
//!
//! The path is 100 Mbps, 100 ms, a one-BDP drop-tail queue (BDP ≈ 1202 packets of 1000 + 40 B).
//! The flow's first loss is not left to slow start: with an infinite ssthresh that loss comes from
//! the overshoot (2–4 BDP), a W_max CUBIC never sees again. Instead slow start ends at
//! `initial_ssthresh = 600pkt` (half a BDP, no queue), and the 15000th data packet (t ≈ 3.1 s,
//! cwnd ≈ 624 segments) is dropped on purpose. The regrowth then stays below the BDP for the whole
//! cubic cycle, so the RTT is a constant 100 ms and the window is CUBIC's alone.

mod common;
use common::{flow, run, single};
use startlab_sim::Simulation;

const C: f64 = 0.4;
const BETA: f64 = 0.7;
const MSS: f64 = 1000.0;

fn path(avoidance: &str) -> Simulation {
    let tcp = format!(
        r#"congestion_avoidance = "{avoidance}", recovery = "sack", mss = "1000B", ack = "every-packet", initial_ssthresh = "600pkt""#
    );
    let scenario = single("100Mbps", "100ms", "1200pkt", &tcp, "infinite", "30s", "drops = [15000]");
    run(&(scenario + "[trace]\nseq = false\nqueue = false\n"))
}

/// The cwnd trace of flow 0 in segments: `(time s, cwnd, ssthresh)`, every change (no decimation).
fn trace(sim: &Simulation) -> Vec<(f64, f64, f64)> {
    let r = sim.results();
    let t = &r.traces.cwnd;
    (0..t.time.len()).filter(|&i| t.flow[i] == 0).map(|i| (t.time[i], t.cwnd[i] / MSS, t.ssthresh[i] / MSS)).collect()
}

/// cwnd (segments) at time `t`: the last change at or before it.
fn cwnd_at(tr: &[(f64, f64, f64)], t: f64) -> f64 {
    tr.iter().take_while(|p| p.0 <= t).last().expect("trace starts at 0").1
}

#[test]
fn after_a_loss_the_window_regrows_concave_then_convex_and_is_back_at_w_max_after_k() {
    let sim = path("cubic");
    let tr = trace(&sim);
    // The loss: the first change of ssthresh after slow start ended at 600 segments.
    let i = tr.iter().position(|p| p.2 != 600.0).expect("the forced drop is detected");
    let (t_loss, ssthresh) = (tr[i].0, tr[i].2);
    let w_max = tr[i - 1].1;
    assert!((2.9..3.4).contains(&t_loss), "the 15000th packet is lost at about 3.1 s, detected at {t_loss:.3} s");
    assert!((ssthresh - BETA * w_max).abs() < 1e-9, "ssthresh {ssthresh:.2} should be β·cwnd = 0.7 × {w_max:.2}");
    // No earlier loss, so no fast convergence: W_max is the window at the loss.
    let k = (w_max * (1.0 - BETA) / C).cbrt();
    // The stage starts when recovery ends, about one RTT after the loss: the window grows again.
    let j = i + tr[i..].iter().position(|p| p.1 > p.2).expect("growth resumes");
    let t_epoch = tr[j].0;
    assert!((0.09..0.3).contains(&(t_epoch - t_loss)), "recovery took {:.3} s, about one RTT", t_epoch - t_loss);

    // The window tracks W_cubic(t), t counted from the stage's start.
    let w_cubic = |t: f64| C * (t - k).powi(3) + w_max;
    for t in [0.5, 1.0, 2.0, 4.0, 6.0, k, k + 2.0, k + 4.0, k + 6.0] {
        let (got, want) = (cwnd_at(&tr, t_epoch + t), w_cubic(t));
        assert!((got - want).abs() <= 0.01 * want, "{t:.2} s into the stage: cwnd {got:.1} segments, W_cubic {want:.1}");
    }
    // "Back at W_max about K seconds after the loss".
    let back = tr[j..].iter().find(|p| p.1 >= w_max).expect("cwnd reaches W_max again").0 - t_loss;
    assert!((back - k).abs() < 0.5, "cwnd is back at W_max = {w_max:.1} {back:.2} s after the loss; K = {k:.2} s");
    // Concave, a plateau at W_max, then convex: segments gained per second.
    let gain = |t: f64| cwnd_at(&tr, t_epoch + t + 0.5) - cwnd_at(&tr, t_epoch + t - 0.5);
    let (early, plateau, late) = (gain(1.0), gain(k), gain(k + 6.0));
    assert!(
        early > 20.0 * plateau.max(0.1) && late > 20.0 * plateau.max(0.1),
        "growth per second {early:.1} (t = 1 s), {plateau:.2} (t = K), {late:.1} (t = K + 6 s): concave then convex"
    );
    assert!(gain(2.0) < early && gain(k + 4.0) < late, "growth slows towards K and speeds up after it");

    // The convex probe finds the path's capacity: the next loss comes at about BDP + queue.
    let next = tr[j..].iter().position(|p| p.2 != ssthresh).map(|n| tr[j + n - 1].1).expect("a second loss");
    let capacity = 100e6 * 0.1 / 8.0 / 1040.0 + 1200.0;
    assert!((next - capacity).abs() < 0.05 * capacity, "second loss at cwnd {next:.0}, the path holds {capacity:.0} segments");
}

#[test]
fn cubic_moves_more_data_than_reno_on_a_long_fat_path_over_30_s() {
    // After the loss at about 624 segments Reno restarts at 312 and adds one segment per RTT: it
    // never refills the 1202-segment pipe in 30 s. CUBIC restarts at 437 and is back at 624 after
    // K = 7.8 s, then probes convexly up to the path's capacity.
    let cubic = flow(&path("cubic"), 0);
    let reno = flow(&path("reno"), 0);
    assert_eq!((cubic.congestion_avoidance.as_str(), reno.congestion_avoidance.as_str()), ("cubic", "reno"));
    let (c, r) = (cubic.throughput.unwrap(), reno.throughput.unwrap());
    assert!(c >= r, "CUBIC {:.1} Mbit/s should be at least Reno's {:.1} Mbit/s", c / 1e6, r / 1e6);
    assert!(c > 1.5 * r, "on a long fat path CUBIC {:.1} Mbit/s should beat Reno {:.1} Mbit/s clearly", c / 1e6, r / 1e6);
}
