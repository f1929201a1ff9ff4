/* HyStart++ (RFC 9406 §4; ALGORITHMS.md §8.5), ported from startlab's `hystart++`
 * (crates/startlab-cc/src/startup/hystartpp.rs) with its parameters and presets: by default
 * MIN_RTT_THRESH 4 ms, MAX_RTT_THRESH 16 ms, MIN_RTT_DIVISOR 8, N_RTT_SAMPLE 8,
 * CSS_GROWTH_DIVISOR 4, CSS_ROUNDS 5, L = 8 (not paced), no low-window gate, and the RFC's
 * choices where the QUIC stacks differ.
 *
 * Per ACK, three steps (ACK_ORDER sets their order; the RFC's is R, G, S):
 *   R, on the ACK that ends a round (frame rounds, §0.3 = the RFC's windowEnd):
 *       lastRoundMinRTT = currentRoundMinRTT; currentRoundMinRTT = inf; rttSampleCount = 0
 *       in CSS: cssRounds += 1; at CSS_ROUNDS: exit css-done (ssthresh = cwnd)
 *   G, the increase: min(N, L*SMSS) in slow start, min(N, L*SMSS) / CSS_GROWTH_DIVISOR in CSS
 *       (with the phase at that step; a quarter segment is exact in 1/SCALE bytes)
 *   S, the RTT samples (one, or one per segment with RTT_SAMPLES; none under Karn's rule):
 *       currentRoundMinRTT = min(.., RTT); rttSampleCount += 1, then the tests:
 *       slow start, rttSampleCount >= N_RTT_SAMPLE, both minima known: RttThresh =
 *           clamp(lastRoundMinRTT / 8, 4 ms, 16 ms); currentRoundMinRTT >= lastRoundMinRTT +
 *           RttThresh: cssBaselineMinRtt = current, CSS, cssRounds = 0 (the round of entry counts
 *           as the first CSS round, §20 item 10)
 *       CSS (when CSS_CHECK says): currentRoundMinRTT < cssBaselineMinRtt: spurious, slow start
 *   loss or timeout in startup: DONE, standard slow start afterwards, cwnd += min(N, SMSS)
 *       (or HyStart++ afresh in the next slow start with LATER_SLOW_STARTS)
 *
 * Compile-time parameters (the Rust's, docs/KERNEL-BPF.md), each defaulting to the PRESET's value:
 *   PRESET              0 rfc9406, 1 quiche, 2 msquic, 3 neqo, 4 ngtcp2 (hystartpp/decl.rs)
 *   PACED               0; 1: L = infinity
 *   LOW_WINDOW_GATE     0; 1: no CSS entry while cwnd < 16 segments
 *   MIN_RTT_THRESH_US   4000     MAX_RTT_THRESH_US 16000     MIN_RTT_DIVISOR 8 (divides 1000)
 *   N_RTT_SAMPLE        8        CSS_GROWTH_DIVISOR 4 (2..16)  CSS_ROUNDS 5
 *   RTT_SAMPLES         0 per-ack; 1 per-segment (at most 128 an ACK)
 *   ROUND_MIN           0 all-samples; 1 first-n (needs CSS_CHECK 0)
 *   CSS_CHECK           0 n-samples; 1 every-sample; 2 every-nth-sample; 3 n-after-entry
 *   CSS_BASELINE        0 entry-min; 1 entry-threshold
 *   ACK_ORDER           0 round-growth-sample; 1 growth-sample-round; 2 sample-round-growth;
 *                       3 growth-round-sample
 *   LATER_SLOW_STARTS   0 standard; 1 hystart++
 *
 * Departures from the Rust version, and why:
 * - RTTs are the kernel's microsecond samples (nanoseconds in the Rust). RttThresh =
 *   lastRoundMinRTT / MIN_RTT_DIVISOR is compared exactly: in nanoseconds it is
 *   lastRoundMinRTT_us * (1000 / MIN_RTT_DIVISOR), an integer, so the tests are the Rust's for
 *   whole-µs samples; the entry-threshold baseline is kept in ns for the same reason.
 * - N is the kernel's `acked` segments (including newly SACKed ones) times SMSS; the Rust N is the
 *   cumulative advance in bytes. Per-segment samples stop at 128 an ACK (a bounded loop for the
 *   verifier); the Rust has no limit.
 * - CSS_GROWTH_DIVISOR is an integer from 2 to 16, so that the CSS increase is exact in 1/SCALE
 *   bytes; the Rust takes any number >= 2.
 */
#include "startlab_ca.h"

#ifndef PRESET
#define PRESET 0
#endif

/* The presets: the values hystartpp/decl.rs declares for them; a parameter given overrides. */
#if PRESET == 1 /* quiche 0.29.3 */
#ifndef PACED
#define PACED 1
#endif
#ifndef RTT_SAMPLES
#define RTT_SAMPLES 1
#endif
#ifndef CSS_CHECK
#define CSS_CHECK 2
#endif
#ifndef ACK_ORDER
#define ACK_ORDER 1
#endif
#ifndef LATER_SLOW_STARTS
#define LATER_SLOW_STARTS 1
#endif
#elif PRESET == 2 /* msquic 2.6.0-rc */
#ifndef PACED
#define PACED 1
#endif
#ifndef ROUND_MIN
#define ROUND_MIN 1
#endif
#ifndef ACK_ORDER
#define ACK_ORDER 2
#endif
#elif PRESET == 3 /* neqo 0.30.1 */
#ifndef PACED
#define PACED 1
#endif
#ifndef CSS_CHECK
#define CSS_CHECK 3
#endif
#ifndef ACK_ORDER
#define ACK_ORDER 2
#endif
#ifndef LATER_SLOW_STARTS
#define LATER_SLOW_STARTS 1
#endif
#elif PRESET == 4 /* ngtcp2 1.25.0 */
#ifndef PACED
#define PACED 1
#endif
#ifndef CSS_ROUNDS
#define CSS_ROUNDS 4
#endif
#ifndef CSS_CHECK
#define CSS_CHECK 1
#endif
#ifndef ACK_ORDER
#define ACK_ORDER 3
#endif
#ifndef LATER_SLOW_STARTS
#define LATER_SLOW_STARTS 1
#endif
#elif PRESET != 0
#error "PRESET: 0 rfc9406, 1 quiche, 2 msquic, 3 neqo, 4 ngtcp2"
#endif

/* RFC 9406's values for whatever the preset left unset. */
#ifndef PACED
#define PACED 0
#endif
#ifndef LOW_WINDOW_GATE
#define LOW_WINDOW_GATE 0
#endif
#ifndef MIN_RTT_THRESH_US
#define MIN_RTT_THRESH_US 4000
#endif
#ifndef MAX_RTT_THRESH_US
#define MAX_RTT_THRESH_US 16000
#endif
#ifndef MIN_RTT_DIVISOR
#define MIN_RTT_DIVISOR 8
#endif
#ifndef N_RTT_SAMPLE
#define N_RTT_SAMPLE 8
#endif
#ifndef CSS_GROWTH_DIVISOR
#define CSS_GROWTH_DIVISOR 4
#endif
#ifndef CSS_ROUNDS
#define CSS_ROUNDS 5
#endif
#ifndef RTT_SAMPLES
#define RTT_SAMPLES 0
#endif
#ifndef ROUND_MIN
#define ROUND_MIN 0
#endif
#ifndef CSS_CHECK
#define CSS_CHECK 0
#endif
#ifndef CSS_BASELINE
#define CSS_BASELINE 0
#endif
#ifndef ACK_ORDER
#define ACK_ORDER 0
#endif
#ifndef LATER_SLOW_STARTS
#define LATER_SLOW_STARTS 0
#endif

#define HSPP_L 8
#define LOW_WINDOW 16
#define MAX_SAMPLES_PER_ACK 128

_Static_assert(CSS_GROWTH_DIVISOR >= 2 && SCALE % CSS_GROWTH_DIVISOR == 0, "CSS_GROWTH_DIVISOR: an integer from 2 to 16 (the CSS growth must be exact in 1/SCALE bytes)");
_Static_assert(MIN_RTT_DIVISOR >= 1 && 1000 % MIN_RTT_DIVISOR == 0, "MIN_RTT_DIVISOR must divide 1000 (RttThresh in ns an integer for µs samples)");
_Static_assert(MIN_RTT_THRESH_US <= MAX_RTT_THRESH_US, "MIN_RTT_THRESH_US is above MAX_RTT_THRESH_US");
_Static_assert(N_RTT_SAMPLE >= 1 && CSS_ROUNDS >= 1, "N_RTT_SAMPLE and CSS_ROUNDS: at least 1");
_Static_assert(RTT_SAMPLES <= 1 && ROUND_MIN <= 1 && CSS_CHECK <= 3 && CSS_BASELINE <= 1 && ACK_ORDER <= 3 && LATER_SLOW_STARTS <= 1,
	       "a choice parameter is out of range (see the file's header)");
_Static_assert(!ROUND_MIN || CSS_CHECK == 0, "ROUND_MIN 1 (first-n) needs CSS_CHECK 0 (n-samples)");

#define HSPP_INF 0xffffffffU

enum hspp_phase { HSPP_SS, HSPP_CSS, HSPP_DONE };

struct alg {
	__u32 phase;                 /* enum hspp_phase */
	__u32 last_round_min_rtt;    /* µs; HSPP_INF = infinity */
	__u32 current_round_min_rtt; /* µs; HSPP_INF = infinity */
	__u32 rtt_sample_count;
	__u32 css_rounds;            /* CSS rounds ended, the entry round included */
	__u32 unused;
	__u64 css_baseline_ns;       /* cssBaselineMinRtt, ns; 0 = infinity (outside CSS) */
};

static void alg_init(struct sl *s)
{
	struct alg *h = sl_alg(s);
	h->phase = HSPP_SS;
	h->last_round_min_rtt = HSPP_INF;
	h->current_round_min_rtt = HSPP_INF;
	h->rtt_sample_count = 0;
	h->css_rounds = 0;
	h->css_baseline_ns = 0;
}

/* RttThresh = max(MIN_RTT_THRESH, min(lastRoundMinRTT / MIN_RTT_DIVISOR, MAX_RTT_THRESH)), ns */
static __always_inline __u64 hspp_rtt_thresh_ns(__u32 last_us)
{
	__u64 t = (__u64)last_us * (1000 / MIN_RTT_DIVISOR);
	if (t > (__u64)MAX_RTT_THRESH_US * 1000)
		t = (__u64)MAX_RTT_THRESH_US * 1000;
	if (t < (__u64)MIN_RTT_THRESH_US * 1000)
		t = (__u64)MIN_RTT_THRESH_US * 1000;
	return t;
}

/* R: the round that ends on this ACK; 1 when it completes the CSS rounds ("If CSS_ROUNDS rounds
 * are complete, enter congestion avoidance by setting the ssthresh to the current cwnd"). */
static __always_inline int hspp_end_round(struct alg *h)
{
	h->last_round_min_rtt = h->current_round_min_rtt;
	h->current_round_min_rtt = HSPP_INF;
	h->rtt_sample_count = 0;
	if (h->phase == HSPP_CSS) {
		h->css_rounds++;
		return h->css_rounds >= CSS_ROUNDS;
	}
	return 0;
}

/* G: "cwnd = cwnd + min(N, L*SMSS)" in slow start, "(min(N, L*SMSS) / CSS_GROWTH_DIVISOR)" in CSS */
static __always_inline __u64 hspp_growth(const struct alg *h, const struct sl_ack *a)
{
	__u32 limited = (PACED || a->acked < HSPP_L) ? a->acked : HSPP_L;
	__u64 increase = (__u64)limited * a->mss * SCALE;
	if (h->phase == HSPP_CSS)
		increase /= CSS_GROWTH_DIVISOR;
	return increase;
}

/* The delay test in slow start, the spurious-entry test in CSS. */
static __always_inline void hspp_tests(struct alg *h, const struct sl_ack *a)
{
	int enough = h->rtt_sample_count >= N_RTT_SAMPLE;
	__u64 seg = (__u64)a->mss * SCALE;

	if (h->phase == HSPP_SS && enough && h->current_round_min_rtt != HSPP_INF && h->last_round_min_rtt != HSPP_INF) {
		/* "if (currentRoundMinRTT >= (lastRoundMinRTT + RttThresh)) cssBaselineMinRtt =
		 * currentRoundMinRTT; exit slow start and enter CSS" */
		int gated = LOW_WINDOW_GATE && a->cwnd_units < (__u64)LOW_WINDOW * seg;
		__u64 last_ns = (__u64)h->last_round_min_rtt * 1000;
		__u64 thresh = hspp_rtt_thresh_ns(h->last_round_min_rtt);
		if (!gated && (__u64)h->current_round_min_rtt * 1000 >= last_ns + thresh) {
			h->css_baseline_ns = CSS_BASELINE ? last_ns + thresh : (__u64)h->current_round_min_rtt * 1000;
			h->phase = HSPP_CSS;
			h->css_rounds = 0;
			if (CSS_CHECK == 3) /* n-after-entry (neqo) */
				h->rtt_sample_count = 0;
		}
	} else if (h->phase == HSPP_CSS && h->current_round_min_rtt != HSPP_INF) {
		/* "if (currentRoundMinRTT < cssBaselineMinRtt) cssBaselineMinRtt = infinity; resume slow
		 * start including HyStart++" */
		if (CSS_CHECK != 1 && !enough)
			return;
		if (CSS_CHECK == 2) /* every-nth-sample (quiche) */
			h->rtt_sample_count = 0;
		if (h->css_baseline_ns && (__u64)h->current_round_min_rtt * 1000 < h->css_baseline_ns) {
			h->css_baseline_ns = 0;
			h->phase = HSPP_SS;
		}
	}
}

/* One RTT sample, then the tests ("currentRoundMinRTT = min(currentRoundMinRTT, currRTT);
 * rttSampleCount += 1"); with ROUND_MIN the minimum keeps the first N_RTT_SAMPLE and the tests run
 * on the later samples (msquic). */
static __always_inline void hspp_sample(struct alg *h, const struct sl_ack *a, __u32 rtt)
{
	if (ROUND_MIN && h->rtt_sample_count >= N_RTT_SAMPLE) {
		hspp_tests(h, a);
		return;
	}
	if (rtt < h->current_round_min_rtt)
		h->current_round_min_rtt = rtt;
	h->rtt_sample_count++;
	if (!ROUND_MIN)
		hspp_tests(h, a);
}

/* S: the ACK's samples. An ACK without one (Karn) counts nothing; the RFC's tests still run. */
static __always_inline void hspp_samples(struct alg *h, const struct sl_ack *a)
{
	if (a->rtt_us < 0) {
		if (!ROUND_MIN)
			hspp_tests(h, a);
		return;
	}
#if RTT_SAMPLES
	{
		__u32 n = a->acked ? a->acked : 1, i;
		for (i = 0; i < MAX_SAMPLES_PER_ACK && i < n; i++)
			hspp_sample(h, a, (__u32)a->rtt_us);
	}
#else
	hspp_sample(h, a, (__u32)a->rtt_us);
#endif
}

static void alg_on_ack(struct sl *s, const struct sl_ack *a, struct sl_action *act)
{
	struct alg *h = sl_alg(s);
	__u64 increase = 0;
	int complete = 0;

	if (!a->acked) /* the Rust controller never calls the startup without newly acked data */
		return;
	if (h->phase == HSPP_DONE) {
		if (!LATER_SLOW_STARTS) {
			/* standard slow start (RFC 5681 §3.1) for every slow start after the initial one */
			act->increase = (__u64)a->mss * SCALE;
			return;
		}
		alg_init(s); /* a later slow start: HyStart++ afresh */
	}

#if ACK_ORDER == 0 /* R, G, S: the ACK that completes CSS adds nothing */
	if (a->new_round && hspp_end_round(h)) {
		h->phase = HSPP_DONE;
		act->exit = SL_CSS_DONE;
		return;
	}
	increase = hspp_growth(h, a);
	hspp_samples(h, a);
#elif ACK_ORDER == 1 /* G, S, R (quiche): the ACK that completes CSS grows */
	increase = hspp_growth(h, a);
	hspp_samples(h, a);
	if (a->new_round && hspp_end_round(h)) {
		h->phase = HSPP_DONE;
		act->exit = SL_CSS_DONE;
	}
#elif ACK_ORDER == 2 /* S, R, G (msquic, neqo): the ACK that completes CSS adds nothing */
	hspp_samples(h, a);
	if (a->new_round && hspp_end_round(h)) {
		h->phase = HSPP_DONE;
		act->exit = SL_CSS_DONE;
		return;
	}
	increase = hspp_growth(h, a);
#else /* G, R, S (ngtcp2): CSS ends after the sample, unless it found the entry spurious */
	increase = hspp_growth(h, a);
	complete = a->new_round && hspp_end_round(h);
	hspp_samples(h, a);
	if (complete && h->phase == HSPP_CSS) {
		h->phase = HSPP_DONE;
		act->exit = SL_CSS_DONE;
	}
#endif
	(void)complete;
	act->increase = increase;
}

/* "If loss or ECN-marking is observed anytime during standard slow start or CSS, ... enter
 * congestion avoidance": HyStart++ is not used again, unless LATER_SLOW_STARTS starts it afresh. */
static void alg_on_loss(struct sl *s)
{
	sl_alg(s)->phase = HSPP_DONE;
}

#include "startlab_ops.h"
