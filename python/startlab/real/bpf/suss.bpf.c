/* SUSS, Speeding Up Slow Start (Arghavani, Zhang, Eyers & Arghavani, SIGCOMM 2024), ported from
 * startlab's `suss` (crates/startlab-cc/src/startup/suss.rs; docs/algorithms/suss.md) with its
 * defaults, and with the Linux HyStart it runs on (`hystart-linux`, today's kernels: the round
 * reset before the low-window gate), both on the kernel's µs clock (tcp_mstamp).
 *
 * Per slow-start ACK, in this order (as the Rust):
 *   HyStart (ACKs with an RTT sample): delay_min = min(delay_min, RTT), remembering SUSS's round
 *     when it fell; unless found: a round starts past end_seq; from cwnd >= LOW_WINDOW the train
 *     test, then the delay test (curr_rtt > delay_min + clamp(delay_min/8, 4 ms, 16 ms) after
 *     MIN_SAMPLES samples). While SUSS is on its cap replaces the train test: on the blue ACKs
 *     within ACK_DELTA_US of the last, once (now - round_start) << jumps > (delay_min +
 *     ACK_DELAY_US)/2, cap = cwnd + blue_acked * (2^jumps - 1) and no more speed-up; slow start
 *     ends once cwnd > cap. An exit after two or more fourfold rounds sets cwnd to the flight.
 *   SUSS (on, no cap): the first ACK beyond head_seq starts a round (pacing stops); the ACK that
 *     completes the blue part measures dtBAT = blue * elapsed / (2 * blue_acked), blue =
 *     INITIAL_WINDOW << (round - 1), and decides: round 2 if delay_min > MIN_RTT_US and dtBAT <
 *     delay_min/4 (else SUSS is off); round r >= 3 if r < ACCELERATED_ROUNDS + 2, the predicted
 *     next train (dtBAT << (r-2))^2 / (prev << (r-3)) fits in delay_min, and (k+1) curr_rtt <=
 *     (k+1) delay_min + k delay_min * DELAY_MARGIN_NUM / DELAY_MARGIN_DEN. Then red =
 *     blue (2^(r-1) - 1) segments at red * SMSS / (delay_min (1 - 2^-(r-1))), and the window
 *     cwnd + acked + red - red_acks. Red ACKs in a paced period add nothing.
 *   A congestion signal turns SUSS off; a timeout also resets HyStart.
 *
 * Compile-time parameters: ACCELERATED_ROUNDS (3), MIN_RTT_US (10000), DELAY_MARGIN_NUM /
 * DELAY_MARGIN_DEN (1/8), INITIAL_WINDOW (10, the source's TCP_INIT_CWND: give the route's
 * initcwnd), and HyStart's LOW_WINDOW (16), ACK_DELTA_US (2000), MIN_SAMPLES (8), ACK_DELAY_US (0).
 *
 * The frame runs it as a paced algorithm (SL_PACED: cong_control, the kernel's own pacing,
 * one segment per transmission).
 *
 * Departures from the Rust version, and why:
 * - The window of a paced period: the Rust grows cwnd as the paced data leaves (the source's
 *   tcp_output.c hook); a congestion control sees no send, so here cwnd is raised to the period's
 *   target on the ACK that decides it, and the kernel's pacing spaces the data. The window the
 *   Rust's sends would have grown (two segments above the most data seen out before an ACK, once
 *   that filled the window of the decision) is kept beside it: the tests and exits use it, and the
 *   next round's first ACK sets cwnd to it. Inside a paced period the windows differ on purpose;
 *   from the next round's start they are the same.
 * - SUSS's round is HyStart's here (one start time and one end sequence, to fit the state in 48
 *   bytes): both start on the same ACK whenever it carries an RTT sample, which every ACK does
 *   before a loss; an ACK without one starts both here where the Rust starts only SUSS's.
 * - The guard: the Rust (and the source) start the paced data (delay_min/2^(r-1) - dtBAT)/2
 *   after that ACK by setting the socket's next departure time; a BPF congestion control cannot
 *   write tcp_wstamp_ns, so the paced data starts at once. For the same reason the second
 *   segment that ACK clocks out is already paced (one gap later); the Rust sends both first.
 * - The loss window (the source's cwnd = packets in flight before the reduction) is applied in
 *   the ssthresh hook, which the kernel calls for a timeout too: the Rust applies it to a fast
 *   retransmit and an ECN echo only. Recovery is the frame's (cwnd = ssthresh, RFC 6675's rule),
 *   not the kernel's PRR.
 * - Times are the kernel's µs; the Rust's are ns floored to µs, the same integers when the ACK
 *   times are the kernel's. `acked` is the kernel's segments; blue counts are in segments (the
 *   Rust's bytes divided by SMSS, the same quotients). The Rust's 128-bit product in the
 *   prediction is replaced by the equivalent division.
 * - Only today's round reset (round_reset = "ungated") and detect = both, unpaced, are ported.
 */
#include "startlab_ca.h"

#ifndef ACCELERATED_ROUNDS
#define ACCELERATED_ROUNDS 3
#endif
#ifndef MIN_RTT_US
#define MIN_RTT_US 10000
#endif
#ifndef DELAY_MARGIN_NUM
#define DELAY_MARGIN_NUM 1
#endif
#ifndef DELAY_MARGIN_DEN
#define DELAY_MARGIN_DEN 8
#endif
#ifndef INITIAL_WINDOW
#define INITIAL_WINDOW 10
#endif
#ifndef LOW_WINDOW
#define LOW_WINDOW 16
#endif
#ifndef ACK_DELTA_US
#define ACK_DELTA_US 2000
#endif
#ifndef MIN_SAMPLES
#define MIN_SAMPLES 8
#endif
#ifndef ACK_DELAY_US
#define ACK_DELAY_US 0
#endif

_Static_assert(ACCELERATED_ROUNDS >= 1 && ACCELERATED_ROUNDS <= 10, "ACCELERATED_ROUNDS: 1 to 10");
_Static_assert(MIN_SAMPLES <= 15, "MIN_SAMPLES: at most 15");
_Static_assert(DELAY_MARGIN_DEN > 0 && DELAY_MARGIN_NUM <= DELAY_MARGIN_DEN, "DELAY_MARGIN: 0 to 1");
_Static_assert(INITIAL_WINDOW >= 1 && INITIAL_WINDOW <= 1000, "INITIAL_WINDOW: 1 to 1000");

#define SL_PACED 1
#define SL_LOSS_WINDOW 1

/* HYSTART_DELAY_MIN / HYSTART_DELAY_MAX, µs */
#define DELAY_THRESH_MIN 4000
#define DELAY_THRESH_MAX 16000

enum suss_part { PART_RED, PART_BLUE, PART_TAIL };

struct alg {
	/* The round, HyStart's and SUSS's: both start on the first ACK beyond the SND.NXT of the
	 * previous start (HyStart's end_seq, SUSS's head_seq). */
	__u32 round_start;    /* µs (low 32 bits of tcp_mstamp) */
	__u32 end_seq;        /* a kernel sequence number; valid when has_end */
	/* HyStart (hystart-linux) */
	__u32 last_ack;       /* µs */
	__u32 curr_rtt;       /* µs; 0: none (the kernel's ~0U) */
	__u32 delay_min;      /* µs; 0: none */
	/* SUSS */
	__u32 tail_end;       /* the blue part is complete once the ACK reaches it */
	__u32 blue_acked;     /* segments acknowledged in the blue part before its last ACK */
	__u32 prev_dt;        /* the previous fourfold round's dtBAT, µs */
	__u32 cap;            /* segments; 0: no cap */
	__u32 c_tail;         /* a paced period: the window at its decision (segments) */
	__u32 peak;           /* a paced period: the most data seen in flight before an ACK */
	__u8 round;           /* SUSS's round, 1 before the first ACK */
	__u8 r_minupdate;     /* the round in which delay_min last fell */
	__u16 sample_cnt : 4, jumps : 4, found : 1, has_end : 1, on : 1, growing : 1, pacing : 1, part : 2, unused : 1;
};

static void alg_init(struct sl *s)
{
	struct alg *h = sl_alg(s);
	/* cubictcp_init: round 1, SUSS on (a paced socket is not: PACED is not ported) */
	h->round = 1;
	h->on = 1;
	h->growing = 1;
}

static __always_inline __u32 suss_shl(__u32 x, __u32 n)
{
	return n >= 32 ? 0 : x << n;
}

/* SUSS off for the connection (the source's state 10, or 9 after a loss). */
static __always_inline void suss_off(struct alg *h)
{
	h->on = 0;
	h->growing = 0;
	h->pacing = 0;
}

/* suss_speedup: 1 if this round grows fourfold; 0 (and SUSS off in round 2) if not. */
static __always_inline int suss_speedup(struct alg *h, __u64 dt)
{
	__u64 delay_min = h->delay_min, delta_t, prev, mu, k, curr;
	__u32 r = h->round;

	if (r == 2) {
		if (delay_min <= MIN_RTT_US || dt >= (delay_min >> 2)) {
			suss_off(h);
			return 0;
		}
		return 1;
	}
	if (r >= ACCELERATED_ROUNDS + 2 || r > 40)
		return 0;
	delta_t = dt << (r - 2);
	prev = (__u64)h->prev_dt << (r - 3);
	if (!prev)
		return 0;
	/* condition 1: the next train, predicted from this one's growth, fits in delay_min:
	 * (mu * delta_t) >> 9 <= delay_min, i.e. mu < ceil(((delay_min + 1) << 9) / delta_t), without
	 * the 128-bit product */
	mu = (delta_t << 10) / (prev << 1);
	if (delta_t && mu >= (((delay_min + 1) << 9) + delta_t - 1) / delta_t)
		return 0;
	/* condition 2: the round's minimum RTT has not risen */
	k = r > h->r_minupdate ? r - h->r_minupdate : 0;
	curr = h->curr_rtt ? h->curr_rtt : 0xffffffffULL;
	if ((k + 1) * curr > (k + 1) * delay_min + delay_min * k * DELAY_MARGIN_NUM / DELAY_MARGIN_DEN)
		return 0;
	return 1;
}

/* The tail of the blue part: measure dtBAT and decide; a fourfold round raises cwnd to its
 * target and sets the pacing rate. `cwnd`: the window after this ACK's increase. */
static __always_inline void suss_decide(struct alg *h, const struct sl_ack *a, struct sl_action *act, __u32 elapsed, __u64 blue, __u32 cwnd)
{
	__u64 dt, red, blue_acks, red_acks, pacing_us, delay_min = h->delay_min;
	__u32 r = h->round;

	if (!h->blue_acked) {
		/* the whole blue part in one ACK: no train to time */
		if (r == 2)
			suss_off(h);
		else
			h->growing = 0;
		return;
	}
	dt = blue * elapsed / (2 * (__u64)h->blue_acked);
	if (!suss_speedup(h, dt)) {
		h->growing = 0;
		return;
	}
	h->prev_dt = dt > 0xffffffffULL ? 0xffffffffU : (__u32)dt;
	red = (blue << (r - 1)) - blue;
	blue_acks = blue / 2;
	red_acks = (blue_acks << (r - 2)) - blue_acks;
	pacing_us = delay_min - (delay_min >> (r - 1));
	if (delay_min - pacing_us <= dt || !pacing_us) {
		h->growing = 0; /* no room for the blue data: the speed-up ends */
		return;
	}
	act->set_cwnd = (__u32)(cwnd + red - red_acks);
	act->pacing_rate = red * a->mss * 1000000ULL / pacing_us;
	if (!act->pacing_rate)
		act->pacing_rate = 1;
	h->c_tail = cwnd;
	h->peak = 0;
	h->pacing = 1;
	h->jumps++;
}

/* In a paced period the Rust's window is the one its sends have grown: two segments above the
 * most data it has seen out, once that filled the window of the decision, up to the target (the
 * kernel's cwnd, raised to it at the decision). */
static __always_inline __u32 suss_window(const struct alg *h, __u32 limit)
{
	__u32 w;
	if (h->peak < h->c_tail)
		return h->c_tail;
	w = h->peak + 2;
	return w < limit ? w : limit;
}

/* An exit while SUSS is on: after two or more fourfold rounds cwnd becomes the flight; in a
 * paced period, the window its sends have grown. */
static __always_inline void suss_exit(struct alg *h, const struct sl_ack *a, struct sl_action *act, __u32 reason, __u32 cwnd)
{
	act->increase = 0;
	act->exit = reason;
	if (h->on && h->jumps > 1 && a->in_flight)
		act->set_cwnd = a->in_flight;
	else if (h->pacing)
		act->set_cwnd = cwnd;
	suss_off(h);
}

static void alg_on_ack(struct sl *s, const struct sl_ack *a, struct sl_action *act)
{
	struct alg *h = sl_alg(s);
	__u64 seg = (__u64)a->mss * SCALE;
	__u64 cwnd_units = a->cwnd_units;
	__u32 now = (__u32)a->now_us;
	__u32 cwnd = a->cwnd, delay = 0, threshold, thresh;
	int head;

	if (!a->acked) /* the Rust controller never calls the startup without newly acked data */
		return;
	act->increase = (__u64)a->acked * seg;
	if (h->pacing) {
		/* the data out before this ACK, as the Rust's sends saw it */
		__u32 before = a->in_flight + a->acked;
		if (before > h->peak)
			h->peak = before;
		cwnd = suss_window(h, a->cwnd);
		cwnd_units = (__u64)cwnd * seg;
	}
	head = h->round == 1 || !h->has_end || sl_before(h->end_seq, a->ack);

	/* cubictcp_acked and hystart_update */
	if (a->rtt_us >= 0) {
		delay = a->rtt_us ? (__u32)a->rtt_us : 1;
		if (!h->delay_min || delay < h->delay_min) {
			h->r_minupdate = h->round;
			h->delay_min = delay;
		}
	}
	if (a->rtt_us >= 0 && !h->found) {
		if (head) {
			/* bictcp_hystart_reset (and SUSS's head below, on the same ACK) */
			h->round_start = now;
			h->last_ack = now;
			h->end_seq = a->snd_nxt;
			h->has_end = 1;
			h->curr_rtt = 0;
			h->sample_cnt = 0;
		}
		if (cwnd_units >= (__u64)LOW_WINDOW * seg) {
			/* the ACK-train test, or SUSS's cap in its place */
			if (h->on && h->cap) {
				if (cwnd_units > (__u64)h->cap * seg) {
					h->found = 1;
					suss_exit(h, a, act, SL_ACK_TRAIN, cwnd);
					return;
				}
			} else if ((__u32)(now - h->last_ack) <= ACK_DELTA_US) {
				if (h->on && h->part != PART_RED) {
					h->last_ack = now;
					threshold = (h->delay_min + ACK_DELAY_US) >> 1;
					if (((__u64)(now - h->round_start) << h->jumps) > threshold) {
						h->cap = cwnd + h->blue_acked * (suss_shl(1, h->jumps) - 1);
						h->growing = 0;
					}
				} else if (!h->on) {
					h->last_ack = now;
					threshold = (h->delay_min + ACK_DELAY_US) >> 1;
					if ((__u32)(now - h->round_start) > threshold) {
						h->found = 1;
						act->increase = 0;
						act->exit = SL_ACK_TRAIN;
						return;
					}
				}
			}
			/* the delay test */
			if (!h->curr_rtt || delay < h->curr_rtt)
				h->curr_rtt = delay;
			if (h->sample_cnt < MIN_SAMPLES) {
				h->sample_cnt++;
			} else {
				thresh = h->delay_min >> 3;
				if (thresh < DELAY_THRESH_MIN)
					thresh = DELAY_THRESH_MIN;
				if (thresh > DELAY_THRESH_MAX)
					thresh = DELAY_THRESH_MAX;
				if (h->curr_rtt > h->delay_min + thresh) {
					h->found = 1;
					suss_exit(h, a, act, SL_DELAY_INCREASE, cwnd);
					return;
				}
			}
		}
	}

	/* suss_measurements (cong_avoid), while SUSS is on and no cap is set */
	if (!h->on || h->cap)
		return;
	if (h->part == PART_TAIL)
		h->part = PART_RED;
	if (head) {
		h->part = PART_BLUE;
		h->blue_acked = 0;
		if (h->round < 255)
			h->round++;
		if (a->rtt_us < 0) {
			/* no RTT sample: HyStart's reset waits, the round starts for SUSS */
			h->round_start = now;
			h->end_seq = a->snd_nxt;
			h->has_end = 1;
		}
		if (h->round == 2) /* from the data's first byte: the initial window */
			h->tail_end = a->ack - a->acked * a->mss + INITIAL_WINDOW * a->mss;
		if (h->pacing) {
			/* back to the ACK clock, from the window the paced period's sends grew */
			h->pacing = 0;
			act->pacing_rate = SL_UNPACED;
			act->set_cwnd = cwnd + a->acked;
		}
	}
	if (h->round >= 2 && !sl_before(a->ack, h->tail_end)) {
		__u64 blue = h->round - 1 < 32 ? (__u64)INITIAL_WINDOW << (h->round - 1) : ~0ULL >> 8;
		h->part = PART_TAIL;
		h->tail_end = h->end_seq + (__u32)(blue * a->mss);
		if (h->growing && !h->pacing)
			suss_decide(h, a, act, now - h->round_start, blue, cwnd + a->acked);
	}
	if (h->part != PART_RED)
		h->blue_acked += a->acked;
	/* a red ACK in a paced period adds nothing ("snd_cwnd -= acked") */
	if (h->part == PART_RED && h->pacing)
		act->increase = 0;
}

/* The window a congestion signal in slow start reduces from (the ssthresh hook): the flight
 * while SUSS is on. */
static __always_inline __u32 alg_loss_window(struct sl *s, __u32 in_flight)
{
	struct alg *h = sl_alg(s);
	return h->on ? in_flight : 0;
}

/* A congestion signal: SUSS off; a timeout resets HyStart (bictcp_reset). */
static void alg_on_loss(struct sl *s)
{
	struct alg *h = sl_alg(s);
	suss_off(h);
	if (s->loss_kind == SL_TIMEOUT) {
		h->found = 0;
		h->delay_min = 0;
		h->has_end = 0;
		h->curr_rtt = 0;
		h->sample_cnt = 0;
		h->round_start = 0;
		h->last_ack = 0;
	}
}

#include "startlab_ops.h"
