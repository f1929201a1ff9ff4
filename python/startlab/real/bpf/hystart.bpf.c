/* HyStart as the paper's Algorithm 1 (Ha & Rhee, "Hybrid Slow Start for High-Bandwidth and
 * Long-Distance Networks", PFLDnet 2008; ALGORITHMS.md §8.2), ported from startlab's `hystart`
 * (crates/startlab-cc/src/startup/hystart.rs) with its defaults: low_ssthresh 16 segments,
 * nSampling 8, gate_low_window = true.
 *
 * Clock: the paper's jiffies with HZ = 1000, i.e. whole milliseconds: Jiffies = floor(now / 1 ms)
 * of the kernel's per-ACK clock tp->tcp_mstamp (µs); an RTT sample is rounded to the nearest ms,
 * at least 1 ms ("RTT <- usecs_to_jiffies(RTT_us)", §8.2 RESOLVED). Per ACK:
 *
 *   at the start of each round (and on the first ACK), if !found and cwnd <= ssthresh:
 *       roundStart = lastJiffies = Jiffies; lastRTT = curRTT; curRTT = inf; samplingCnt = nSampling
 *   growth: every newly acknowledged segment (Linux tcp_slow_start: byte counting, no cap)
 *   no RTT sample (Karn): growth only
 *   dMin = min(dMin, RTT)
 *   if !found and cwnd <= ssthresh and cwnd > low_ssthresh (the gate, §20 item 9):
 *       if Jiffies - lastJiffies < 2: lastJiffies = Jiffies; if 2 (Jiffies - roundStart) >= dMin: found = ACK train
 *       if samplingCnt: curRTT = min(curRTT, RTT); samplingCnt--
 *       if !samplingCnt and curRTT >= lastRTT + max(2, ceil(lastRTT/16)): found = delay increase
 *       if found and cwnd > low_ssthresh: exit (ssthresh = cwnd); the deciding ACK adds nothing
 *   timeout: found = 0; dMin = inf (a fast retransmit changes nothing)
 *
 * Compile-time parameters: LOW_SSTHRESH (segments, default 16; the Rust `low_ssthresh` is a window
 * in bytes, "16pkt"), N_SAMPLING (default 8), GATE_LOW_WINDOW (1, default: skip detection while
 * cwnd <= low_ssthresh; 0: the literal reading, a detection at or below it latches `found`).
 *
 * Departures from the Rust version, and why:
 * - The Rust clock is nanoseconds; the kernel's tcp_mstamp and RTT samples are microseconds. Jiffies
 *   and the rounded RTT are the same integer milliseconds whenever the times are whole µs.
 * - Absolute time: Jiffies counts ms since boot here, from 0 in the simulator; only differences of
 *   Jiffies enter the tests, but floor() makes them depend on the phase of the clock within a ms
 *   exactly as two simulator runs offset by a fraction of a ms would.
 * - "Timeout": the frame calls alg_on_loss for a congestion signal in slow start with its kind in
 *   s->loss_kind (told by set_state, which the kernel calls after the ssthresh hook); found and
 *   dMin are reset only for SL_TIMEOUT, and HyStart runs again in the slow start that follows, as
 *   in the Rust controller.
 * - The kernel's `acked` (segments, including newly SACKed ones) stands for the Rust newly_acked
 *   bytes / SMSS.
 */
#include "startlab_ca.h"

#ifndef LOW_SSTHRESH
#define LOW_SSTHRESH 16
#endif
#ifndef N_SAMPLING
#define N_SAMPLING 8
#endif
#ifndef GATE_LOW_WINDOW
#define GATE_LOW_WINDOW 1
#endif

/* "if Jiffies - lastJiffies < msecs_to_jiffies(2)": ms */
#define ACK_SPACING_JIFFIES 2
/* eta = max(2, ceil(lastRTT / 16)), ms */
#define ETA_MIN_JIFFIES 2
#define ETA_DIVISOR 16

struct alg {
	__u64 round_start;  /* roundStart, ms; valid when has_round_start */
	__u64 last_jiffies; /* lastJiffies, ms */
	__u32 found;        /* 0, SL_ACK_TRAIN or SL_DELAY_INCREASE */
	__u32 d_min;        /* dMin, ms; 0 = infinity (samples are at least 1 ms) */
	__u32 last_rtt;     /* lastRTT, ms; 0 = infinity */
	__u32 cur_rtt;      /* curRTT, ms; 0 = infinity */
	__u32 sampling_cnt; /* samplingCnt */
	__u32 has_round_start;
};

static void alg_init(struct sl *s)
{
	/* the frame zeroed the state: found = 0, dMin = lastRTT = curRTT = infinity, no round yet */
}

/* Algorithm 1's slow-start guard "cwnd <= ssthresh" (kept literally, as in the Rust). */
static __always_inline int hystart_in_slow_start(const struct sl_ack *a)
{
	__u64 seg = (__u64)a->mss * SCALE;
	if (a->ssthresh >= INFINITE_SSTHRESH || a->ssthresh > (~0ULL >> 2) / (seg ? seg : 1))
		return 1;
	return a->cwnd_units <= (__u64)a->ssthresh * seg;
}

static void alg_on_ack(struct sl *s, const struct sl_ack *a, struct sl_action *act)
{
	struct alg *h = sl_alg(s);
	__u64 low = (__u64)LOW_SSTHRESH * a->mss * SCALE;
	__u64 grow, now, round_start, eta;
	__u32 rtt;
	int in_ss;

	if (!a->acked) /* the Rust controller never calls the startup without newly acked data */
		return;
	grow = (__u64)a->acked * a->mss * SCALE;
	act->increase = grow;
	now = a->now_us / 1000;
	in_ss = hystart_in_slow_start(a);

	/* "At the start of each RTT round: if !found and cwnd <= ssthresh then roundStart <-
	 * lastJiffies <- Jiffies; lastRTT <- curRTT; curRTT <- inf; samplingCnt <- nSampling"; the
	 * first round's clock starts at its first ACK. */
	if ((a->new_round || !h->has_round_start) && !h->found && in_ss) {
		h->round_start = now;
		h->has_round_start = 1;
		h->last_jiffies = now;
		h->last_rtt = h->cur_rtt;
		h->cur_rtt = 0;
		h->sampling_cnt = N_SAMPLING;
	}

	/* no sample (Karn): no part in detection */
	if (a->rtt_us < 0)
		return;
	/* rounded to the nearest ms, at least 1 */
	rtt = ((__u32)a->rtt_us + 500) / 1000;
	if (!rtt)
		rtt = 1;
	/* "dMin <- min(dMin, RTT)" */
	if (!h->d_min || rtt < h->d_min)
		h->d_min = rtt;

	/* "if !found and cwnd <= ssthresh then" */
	if (h->found || !in_ss)
		return;
	if (GATE_LOW_WINDOW && a->cwnd_units <= low)
		return;
	round_start = h->has_round_start ? h->round_start : now;

	/* "if Jiffies - lastJiffies < msecs_to_jiffies(2) then lastJiffies <- Jiffies;
	 *  if Jiffies - roundStart >= dMin/2 then found <- 1" (dMin/2 exact: 2 (J - roundStart) >= dMin) */
	if ((now > h->last_jiffies ? now - h->last_jiffies : 0) < ACK_SPACING_JIFFIES) {
		h->last_jiffies = now;
		if (2 * (now > round_start ? now - round_start : 0) >= h->d_min)
			h->found = SL_ACK_TRAIN;
	}

	/* "if samplingCnt then curRTT <- min(curRTT, RTT); samplingCnt <- samplingCnt - 1" */
	if (h->sampling_cnt > 0) {
		if (!h->cur_rtt || rtt < h->cur_rtt)
			h->cur_rtt = rtt;
		h->sampling_cnt--;
	}
	/* "eta <- max(2, ceil(lastRTT/16)); if !samplingCnt and curRTT >= lastRTT + eta then found <- 2";
	 * with lastRTT = inf (the first round) the test cannot hold */
	if (h->last_rtt && h->cur_rtt && !h->sampling_cnt) {
		eta = ((__u64)h->last_rtt + ETA_DIVISOR - 1) / ETA_DIVISOR;
		if (eta < ETA_MIN_JIFFIES)
			eta = ETA_MIN_JIFFIES;
		if ((__u64)h->cur_rtt >= h->last_rtt + eta)
			h->found = SL_DELAY_INCREASE;
	}

	/* "if found and cwnd > low_ssthresh then ssthresh <- cwnd": the deciding ACK adds nothing */
	if (h->found && a->cwnd_units > low) {
		act->increase = 0;
		act->exit = h->found;
	}
}

/* "Timeout: found <- 0; dMin <- inf". A fast retransmit leaves the state alone. */
static void alg_on_loss(struct sl *s)
{
	struct alg *h = sl_alg(s);
	if (s->loss_kind == SL_TIMEOUT) {
		h->found = 0;
		h->d_min = 0;
	}
}

#include "startlab_ops.h"
