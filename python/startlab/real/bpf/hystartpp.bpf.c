/* HyStart++ (RFC 9406 §4; ALGORITHMS.md §8.5), ported from startlab's `hystart++`
 * (crates/startlab-cc/src/startup/hystartpp.rs) with its defaults: MIN_RTT_THRESH 4 ms,
 * MAX_RTT_THRESH 16 ms, MIN_RTT_DIVISOR 8, N_RTT_SAMPLE 8, CSS_GROWTH_DIVISOR 4, CSS_ROUNDS 5,
 * L = 8 (not paced), no low-window gate.
 *
 * Per ACK, in this order (as the Rust):
 *   DONE (after its own exit or a congestion signal): standard slow start, cwnd += min(N, SMSS)
 *   on the ACK that ends a round (frame rounds, §0.3 = the RFC's windowEnd):
 *       lastRoundMinRTT = currentRoundMinRTT; currentRoundMinRTT = inf; rttSampleCount = 0
 *       in CSS: cssRounds += 1; at CSS_ROUNDS: exit css-done (ssthresh = cwnd), this ACK adds nothing
 *   increase = min(N, L*SMSS) in slow start, min(N, L*SMSS) / CSS_GROWTH_DIVISOR in CSS (decided
 *       before this ACK's sample is looked at; a quarter segment is exact in 1/SCALE bytes)
 *   an RTT sample (none under Karn's rule: growth only): currentRoundMinRTT = min(.., RTT);
 *       rttSampleCount += 1
 *   with rttSampleCount >= N_RTT_SAMPLE:
 *       slow start, both minima known: RttThresh = clamp(lastRoundMinRTT / 8, 4 ms, 16 ms);
 *           currentRoundMinRTT >= lastRoundMinRTT + RttThresh: cssBaselineMinRtt = current,
 *           CSS, cssRounds = 0 (the round of entry counts as the first CSS round, §20 item 10)
 *       CSS: currentRoundMinRTT < cssBaselineMinRtt: spurious, back to slow start
 *   loss or timeout in startup: DONE (HyStart++ only in the initial slow start, §8.5 (b))
 *
 * Compile-time parameters (the Rust's): PACED (0; 1: L = infinity), LOW_WINDOW_GATE (0; 1: no CSS
 * entry while cwnd < 16 segments).
 *
 * Departures from the Rust version, and why:
 * - RTTs are the kernel's microsecond samples (nanoseconds in the Rust). RttThresh =
 *   lastRoundMinRTT / 8 is compared exactly: in nanoseconds it is 125 * lastRoundMinRTT_us, an
 *   integer, so the test currentRoundMinRTT >= lastRoundMinRTT + RttThresh is the Rust's for
 *   whole-µs samples.
 * - N is the kernel's `acked` segments (including newly SACKed ones) times SMSS; the Rust N is the
 *   cumulative advance in bytes.
 * - The DONE branch (standard slow start in later slow starts) is kept, but the frame calls the
 *   algorithm only during the initial startup, so it does not run today.
 */
#include "startlab_ca.h"

#ifndef PACED
#define PACED 0
#endif
#ifndef LOW_WINDOW_GATE
#define LOW_WINDOW_GATE 0
#endif

#define MIN_RTT_THRESH_NS 4000000ULL
#define MAX_RTT_THRESH_NS 16000000ULL
#define MIN_RTT_DIVISOR 8
#define N_RTT_SAMPLE 8
#define CSS_GROWTH_DIVISOR 4
#define CSS_ROUNDS 5
#define HSPP_L 8
#define LOW_WINDOW 16

_Static_assert(SCALE % CSS_GROWTH_DIVISOR == 0, "CSS growth must be exact in 1/SCALE bytes");
_Static_assert(1000 % MIN_RTT_DIVISOR == 0, "RttThresh in ns must be an integer for µs samples");

#define HSPP_INF 0xffffffffU

enum hspp_phase { HSPP_SS, HSPP_CSS, HSPP_DONE };

struct alg {
	__u32 phase;                 /* enum hspp_phase */
	__u32 last_round_min_rtt;    /* µs; HSPP_INF = infinity */
	__u32 current_round_min_rtt; /* µs; HSPP_INF = infinity */
	__u32 rtt_sample_count;
	__u32 css_baseline_min_rtt;  /* µs; HSPP_INF = infinity (outside CSS) */
	__u32 css_rounds;            /* CSS rounds ended, the entry round included */
};

static void alg_init(struct sl *s)
{
	struct alg *h = sl_alg(s);
	h->phase = HSPP_SS;
	h->last_round_min_rtt = HSPP_INF;
	h->current_round_min_rtt = HSPP_INF;
	h->rtt_sample_count = 0;
	h->css_baseline_min_rtt = HSPP_INF;
	h->css_rounds = 0;
}

/* RttThresh = max(MIN_RTT_THRESH, min(lastRoundMinRTT / MIN_RTT_DIVISOR, MAX_RTT_THRESH)), ns */
static __always_inline __u64 hspp_rtt_thresh_ns(__u32 last_us)
{
	__u64 t = (__u64)last_us * (1000 / MIN_RTT_DIVISOR);
	if (t < MIN_RTT_THRESH_NS)
		t = MIN_RTT_THRESH_NS;
	if (t > MAX_RTT_THRESH_NS)
		t = MAX_RTT_THRESH_NS;
	return t;
}

static void alg_on_ack(struct sl *s, const struct sl_ack *a, struct sl_action *act)
{
	struct alg *h = sl_alg(s);
	__u64 seg = (__u64)a->mss * SCALE;
	__u32 limited;
	__u64 increase;
	int enough;

	if (!a->acked) /* the Rust controller never calls the startup without newly acked data */
		return;
	if (h->phase == HSPP_DONE) {
		/* standard slow start (RFC 5681 §3.1) for every slow start after the initial one */
		act->increase = seg;
		return;
	}

	/* "At the start of each round during standard slow start and CSS: lastRoundMinRTT =
	 * currentRoundMinRTT; currentRoundMinRTT = infinity; rttSampleCount = 0" */
	if (a->new_round) {
		h->last_round_min_rtt = h->current_round_min_rtt;
		h->current_round_min_rtt = HSPP_INF;
		h->rtt_sample_count = 0;
		if (h->phase == HSPP_CSS) {
			/* "If CSS_ROUNDS rounds are complete, enter congestion avoidance by setting the
			 * ssthresh to the current cwnd"; this ACK adds nothing */
			h->css_rounds++;
			if (h->css_rounds >= CSS_ROUNDS) {
				h->phase = HSPP_DONE;
				act->exit = SL_CSS_DONE;
				return;
			}
		}
	}

	/* "cwnd = cwnd + min(N, L*SMSS)" in slow start, "(min(N, L*SMSS) / CSS_GROWTH_DIVISOR)" in CSS */
	limited = (PACED || a->acked < HSPP_L) ? a->acked : HSPP_L;
	increase = (__u64)limited * seg;
	if (h->phase == HSPP_CSS)
		increase /= CSS_GROWTH_DIVISOR;

	/* "currentRoundMinRTT = min(currentRoundMinRTT, currRTT); rttSampleCount += 1"; an ACK without
	 * a sample (Karn) counts nothing */
	if (a->rtt_us >= 0) {
		if ((__u32)a->rtt_us < h->current_round_min_rtt)
			h->current_round_min_rtt = (__u32)a->rtt_us;
		h->rtt_sample_count++;
	}
	enough = h->rtt_sample_count >= N_RTT_SAMPLE;

	if (enough && h->phase == HSPP_SS && h->current_round_min_rtt != HSPP_INF && h->last_round_min_rtt != HSPP_INF) {
		/* "if (currentRoundMinRTT >= (lastRoundMinRTT + RttThresh)) cssBaselineMinRtt =
		 * currentRoundMinRTT; exit slow start and enter CSS" */
		int gated = LOW_WINDOW_GATE && a->cwnd_units < (__u64)LOW_WINDOW * seg;
		if (!gated && (__u64)h->current_round_min_rtt * 1000 >=
				      (__u64)h->last_round_min_rtt * 1000 + hspp_rtt_thresh_ns(h->last_round_min_rtt)) {
			h->css_baseline_min_rtt = h->current_round_min_rtt;
			h->phase = HSPP_CSS;
			h->css_rounds = 0;
		}
	} else if (enough && h->phase == HSPP_CSS && h->current_round_min_rtt != HSPP_INF &&
		   h->css_baseline_min_rtt != HSPP_INF && h->current_round_min_rtt < h->css_baseline_min_rtt) {
		/* "if (currentRoundMinRTT < cssBaselineMinRtt) cssBaselineMinRtt = infinity; resume slow
		 * start including HyStart++" */
		h->css_baseline_min_rtt = HSPP_INF;
		h->phase = HSPP_SS;
	}
	act->increase = increase;
}

/* "If loss or ECN-marking is observed anytime during standard slow start or CSS, ... enter
 * congestion avoidance": HyStart++ is not used again. */
static void alg_on_loss(struct sl *s)
{
	sl_alg(s)->phase = HSPP_DONE;
}

#include "startlab_ops.h"
