/* Paced Start (Hu & Steenkiste, ICNP 2003; ALGORITHMS.md §7), ported from startlab's `paced-start`
 * (crates/startlab-cc/src/startup/paced_start.rs) with its defaults: epsilon 5 %, RTT = the
 * smallest sample of each train's first ACK.
 *
 *   train 1 (PAIR): 2 back-to-back packets (4 with delayed ACKs)          -> g_B = g_d
 *   train 2 (N0):   g_s = 2 g_B
 *      not Q -> A:  g_s = 4/3 g_B;  not Q -> case 1: g = 8/7 g_B;  Q -> case 2: g = g_d
 *      Q     -> B:  g1 = g_d, g_s = 2 g1;  not Q -> case 3: g = g1
 *                   Q -> B2: g2 = g_d, g_s = 2 g2;  not Q -> case 4: g = g2;  Q -> case 5: g = 2 g_d
 *   Q <=> g_d > g_s (1 + epsilon); each train twice the last one's length
 *   rate found: cwnd = floor(RTT / g), one FILL train of cwnd packets at gap g; startup ends
 *   (ssthresh = cwnd) once its last packet has left
 *
 * g_d is measured from the train's ACKs (§7.7): the gap before an ACK counts when that ACK was
 * sent at once by the receiver (it covers one segment, or two with delayed ACKs, one or two with
 * Linux's quick ACKs): g_d = sum of those gaps / segments they cover.
 *
 * The frame runs it as a paced algorithm (SL_PACED): it owns the window and the pacing rate through
 * cong_control, the kernel paces each packet at sk_pacing_rate (internal pacing), and transmits
 * one segment at a time (min_tso_segs = 1).
 *
 * Compile-time parameters: EPSILON_PCT (5), ACK_COUNTING (0 one ACK per segment, 1 delayed ACKs,
 * 2 Linux quick ACKs, the default: the testbed's receivers are Linux).
 *
 * Departures from the Rust version, and why:
 * - Holding new data between trains: the Rust plug-in sets a send limit at the train's end; a
 *   congestion control has only the window, so during a probe train every ACK sets cwnd to the
 *   train's segments not yet acknowledged (the rest of the train may go, nothing beyond it). The
 *   window reported per ACK is therefore below the Rust one inside a train and equal at each
 *   decision.
 * - The FILL exit: the Rust controller ends startup the moment the FILL train's last packet leaves;
 *   a congestion control sees no send, so startup ends on the first ACK after it left (that ACK
 *   grows the window by nothing instead of by the avoidance's 1/cwnd).
 * - Clocks: ACK times and RTT samples are the kernel's µs (tcp_mstamp), gaps in ns from them; the
 *   Rust ones are ns. g_s is the nominal gap in both (§7.7's NOTE).
 * - Pacing counts payload bytes per second (the rate is SMSS / g_s); the kernel paces each skb by
 *   its length, which is the payload here (headers are added after the pacing decision).
 * - After a timeout the Rust plug-in sets ssthresh to half the last train; here the avoidance's
 *   ssthresh applies (the frame has no per-algorithm loss-ssthresh hook yet). The srtt option is
 *   not ported.
 * - Loss recovery: with cong_control the kernel's PRR does not run; the frame keeps cwnd = ssthresh
 *   in recovery (RFC 6675's rule), so recovery differs from the simulator's `linux` recovery.
 */
#include "startlab_ca.h"

#ifndef EPSILON_PCT
#define EPSILON_PCT 5
#endif
#ifndef ACK_COUNTING
#define ACK_COUNTING 2
#endif

#define SL_PACED 1
#define SL_START_WINDOW (ACK_COUNTING == 1 ? 4 : 2)

enum past_stage { PAST_PROBE, PAST_FILL, PAST_DONE };
enum past_node { NODE_PAIR, NODE_N0, NODE_A, NODE_B, NODE_B2 };

struct alg {
	__u8 stage;
	__u8 node;
	__u8 have_acks;    /* the current train's first ACK came */
	__u8 pair_placed;  /* the pair's sequence range is known (from its first ACK) */
	__u32 train_len;   /* segments */
	__u32 train_start; /* kernel sequence numbers */
	__u32 train_end;
	__u32 g_s_ns;      /* the train's source gap (0: back-to-back) */
	__u32 last_ack_us; /* the previous ACK of the train (low bits of tcp_mstamp) */
	__u32 gap_sum_us;  /* gaps before immediate ACKs */
	__u32 segs;        /* segments those ACKs cover */
	__u32 g_b_ns;
	__u32 g1_ns;
	__u32 g2_ns;
	__u32 rtt_min_us;  /* 0: none yet */
};

static void alg_init(struct sl *s)
{
	struct alg *p = sl_alg(s);
	p->stage = PAST_PROBE;
	p->node = NODE_PAIR;
	p->train_len = SL_START_WINDOW;
}

static __always_inline int past_immediate(__u32 n)
{
	if (ACK_COUNTING == 0)
		return n == 1;
	if (ACK_COUNTING == 1)
		return n == 2;
	return n == 1 || n == 2;
}

static __always_inline __u64 past_rate(__u32 mss, __u32 g_ns)
{
	return g_ns ? (__u64)mss * 1000000000ULL / g_ns : SL_UNPACED;
}

static __always_inline void past_train(struct alg *p, const struct sl_ack *a, struct sl_action *act, __u32 node, __u32 len, __u32 g_s_ns, __u32 from)
{
	p->stage = PAST_PROBE;
	p->node = node;
	p->train_len = len;
	p->train_start = from;
	p->train_end = from + len * a->mss;
	p->g_s_ns = g_s_ns;
	p->have_acks = 0;
	p->gap_sum_us = 0;
	p->segs = 0;
	act->set_cwnd = len;
	act->pacing_rate = past_rate(a->mss, g_s_ns);
}

static __always_inline void past_give_up(struct alg *p, struct sl_action *act)
{
	/* plain slow start from the train's window, unpaced */
	p->stage = PAST_DONE;
	act->set_cwnd = p->train_len;
	act->pacing_rate = SL_UNPACED;
}

static __always_inline void past_fill(struct alg *p, const struct sl_ack *a, struct sl_action *act, __u32 g_ns, __u32 from)
{
	__u64 pkts;
	if (!p->rtt_min_us || !g_ns) {
		past_give_up(p, act);
		return;
	}
	pkts = (__u64)p->rtt_min_us * 1000 / g_ns; /* §7.10: floor, at least two */
	if (pkts < 2)
		pkts = 2;
	if (pkts > 1000000)
		pkts = 1000000;
	p->stage = PAST_FILL;
	p->train_len = (__u32)pkts;
	p->train_start = from;
	p->train_end = from + (__u32)pkts * a->mss;
	act->set_cwnd = (__u32)pkts;
	act->pacing_rate = past_rate(a->mss, g_ns);
}

static __always_inline int past_queued(const struct alg *p, __u64 g_d_ns)
{
	return g_d_ns * 100 > (__u64)p->g_s_ns * (100 + EPSILON_PCT);
}

/* All ACKs of the probe train are in: one step of Figure 5's tree. */
static __always_inline void past_decide(struct alg *p, const struct sl_ack *a, struct sl_action *act, __u32 from)
{
	__u32 next = p->train_len * 2;
	__u32 g_d;
	if (!p->segs) {
		past_give_up(p, act);
		return;
	}
	g_d = (__u32)((__u64)p->gap_sum_us * 1000 / p->segs);
	switch (p->node) {
	case NODE_PAIR:
		p->g_b_ns = g_d;
		past_train(p, a, act, NODE_N0, next, 2 * g_d, from);
		break;
	case NODE_N0:
		if (past_queued(p, g_d)) {
			p->g1_ns = g_d;
			past_train(p, a, act, NODE_B, next, 2 * g_d, from);
		} else {
			past_train(p, a, act, NODE_A, next, p->g_b_ns * 4 / 3, from);
		}
		break;
	case NODE_A:
		if (past_queued(p, g_d))
			past_fill(p, a, act, g_d, from);
		else
			past_fill(p, a, act, p->g_b_ns * 8 / 7, from);
		break;
	case NODE_B:
		if (past_queued(p, g_d)) {
			p->g2_ns = g_d;
			past_train(p, a, act, NODE_B2, next, 2 * g_d, from);
		} else {
			past_fill(p, a, act, p->g1_ns, from);
		}
		break;
	default: /* NODE_B2 */
		if (past_queued(p, g_d))
			past_fill(p, a, act, 2 * g_d, from);
		else
			past_fill(p, a, act, p->g2_ns, from);
		break;
	}
}

static void alg_on_ack(struct sl *s, const struct sl_ack *a, struct sl_action *act)
{
	struct alg *p = sl_alg(s);
	__u32 now = (__u32)a->now_us, from;

	if (p->stage == PAST_DONE) {
		act->increase = (__u64)a->mss * SCALE; /* slow start: min(N, SMSS) */
		return;
	}
	if (p->stage == PAST_FILL) {
		/* startup ends once the FILL train's last packet has left */
		if (!sl_before(a->snd_nxt, p->train_end))
			act->exit = SL_RATE_FOUND;
		return;
	}
	if (p->node == NODE_PAIR && !p->pair_placed) {
		/* the pair is the connection's first data: it starts where this ACK's segments start */
		p->train_start = a->ack - a->acked * a->mss;
		p->train_end = p->train_start + p->train_len * a->mss;
		p->pair_placed = 1;
	}
	if (!sl_before(p->train_start, a->ack))
		return; /* an ACK of data before the train */
	if (!p->have_acks) {
		/* the first ACK of a train sees the least self-induced queueing (§7.6) */
		if (a->rtt_us > 0 && (!p->rtt_min_us || (__u32)a->rtt_us < p->rtt_min_us))
			p->rtt_min_us = a->rtt_us;
		p->have_acks = 1;
	} else if (past_immediate(a->acked)) {
		p->gap_sum_us += now - p->last_ack_us;
		p->segs += a->acked;
	}
	p->last_ack_us = now;
	if (!sl_before(a->ack, p->train_end)) {
		from = sl_before(a->ack, a->snd_nxt) ? a->snd_nxt : a->ack;
		past_decide(p, a, act, from);
		return;
	}
	/* hold new data: the rest of the train may go, nothing beyond it */
	act->set_cwnd = (p->train_end - a->ack + a->mss - 1) / a->mss;
}

static void alg_on_loss(struct sl *s)
{
	sl_alg(s)->stage = PAST_DONE;
}

#include "startlab_ops.h"
