/* Smooth-start (Wang, Xin, Reeves & Shin; ALGORITHMS.md §6) as startlab's `smooth-start`
 * (crates/startlab-cc/src/startup/smooth_start.rs) with its defaults: preset "none", grain number
 * K = 3, depth number D = 2 (= Fine-4), packet counting, no packet-pair estimator.
 *
 * Below the separator smsthresh = ssthresh / 2^D it is slow start (the "pouring sub-phase"); from
 * there each ACK adds SMSS/n with n = K + j, the state-free rule of ALGORITHMS.md §6.4 (`divisor()`):
 *
 *   base = smsthresh * 2^p, the largest such value <= cwnd with 0 <= p <= D-1
 *   j    = floor(K * (cwnd/base - 1)), clamped to 0..K-1
 *   n    = K + j
 *
 * Everything is exact rational arithmetic on the frame's window in 1/SCALE bytes (cwnd_units): with
 * Y = ssthresh * SMSS * SCALE, base = Y / 2^q for q = D - p, so "base <= cwnd" is
 * cwnd_units << q >= Y and j = floor(K * ((cwnd_units << q) - Y) / Y); SMSS*SCALE/n is exact for
 * n <= 16 (SCALE = lcm(1..16)), i.e. for every K <= 8.
 *
 * ssthresh is the kernel's tp->snd_ssthresh (segments). It is finite only when something set it: a
 * route's `ssthresh` metric (ip route ... ssthresh N) or an earlier congestion event. With the
 * kernel's infinite ssthresh (TCP_INFINITE_SSTHRESH) the separator is infinite and this is slow
 * start, as in the Rust version (whose scenario reader refuses that combination; the kernel cannot
 * refuse it, so it runs slow start).
 *
 * Compile-time parameters: K (grain number, >= 1; 1 = slow start), D (depth number, 0..30;
 * 0 = slow start), BYTE_COUNTING (0: the Rust `counting = "packet"`, one increment opportunity per
 * ACK; 1: `counting = "byte"`, the segments the ACK covers, at most L = 2).
 *
 * Departures from the Rust version, and why:
 * - The Rust divisor() works on f64 windows with a relative tolerance of 1e-9 at the boundaries
 *   (BOUNDARY_EPSILON) so that a float sum that should land on base*(k+j)/k is not read as just
 *   below it. Here the sums are exact, so a window is on a boundary exactly when the fluid model
 *   says so; the two agree whenever the exact window is not within 1e-9 (relative) below a
 *   boundary, which for K = 3, D = 2 (windows and boundaries multiples of 1/60 segment) needs
 *   cwnd > 1.6e7 segments.
 * - For K > 8 the divisor n can exceed 16 and SMSS*SCALE/n is rounded down (by less than 1/SCALE
 *   byte per ACK).
 * - If ssthresh * SMSS exceeds 2^63 / (K + 1) / SCALE bytes (about 4 TB for K = 3, 50 GB for
 *   K = 255), both sides of the comparisons are shifted right until the products fit 64 bits
 *   (BPF has no 128-bit arithmetic); the divisor is then exact up to that rounding.
 * - ssthresh_estimator = "packet-pair" (Hoe's estimate, startup/hoe.rs) is not ported: ssthresh is
 *   the kernel's.
 * - Packet counting credits one SMSS per ACK that reaches cong_avoid; the kernel's `acked` (which
 *   the frame passes) counts newly SACKed segments too, the Rust newly_acked only the cumulative
 *   advance. That only matters for BYTE_COUNTING.
 * - Smooth-start "runs again in every slow start" in the Rust controller (after a timeout, with the
 *   new ssthresh); the frame (startlab_ops.h) calls the algorithm only in the initial startup, so
 *   later slow starts are the frame's business, not this file's.
 */
#include "startlab_ca.h"

#ifndef K
#define K 3
#endif
#ifndef D
#define D 2
#endif
#ifndef BYTE_COUNTING
#define BYTE_COUNTING 0
#endif

_Static_assert(K >= 1, "K (grain number) must be at least 1");
_Static_assert(D <= 30, "D (depth number) must be 0 to 30");

/* RFC 3465 L for byte counting, segments (smooth_start.rs `L`). */
#define SMOOTH_L 2

/* Y = ssthresh * SMSS * SCALE stays below this, so that 2*Y and K*Y fit 64 bits. */
#define SMOOTH_Y_LIMIT ((1ULL << 63) / ((__u64)K + 1))

struct alg {
	__u32 unused; /* the rule is state-free (ALGORITHMS.md §6.4) */
};

static void alg_init(struct sl *s)
{
}

/* ALGORITHMS.md §6.4: the number of ACKs per one-segment increment at window `cwnd_units`
 * (1/SCALE bytes) below ssthresh `ssthresh` (segments), 0 in the pouring sub-phase. */
static __always_inline __u32 smooth_divisor(__u64 cwnd_units, __u32 ssthresh, __u32 mss)
{
	__u64 p, x, y, r, j;
	__u32 sh = 0, q;

	if (D == 0 || K <= 1)
		return 0;
	/* Y = ssthresh * SMSS * SCALE in 64 bits (shifted with the window when it would not fit) */
	p = (__u64)ssthresh * mss;
	for (int i = 0; i < 48; i++) {
		if (p <= SMOOTH_Y_LIMIT / SCALE)
			break;
		p >>= 1;
		sh++;
	}
	y = p * SCALE;
	x = cwnd_units >> sh;
	if (!y)
		return 0;
	/* cwnd >= ssthresh: base stops at ssthresh/2 and j is clamped to K-1 */
	if (x >= y)
		return 2 * K - 1;
	/* the smallest q >= 1 with cwnd >= ssthresh / 2^q; none up to D: below the separator. While
	 * the loop goes on, x << q < y, so x << q never exceeds 2y. */
	for (q = 1; q <= D; q++) {
		if ((x << q) >= y)
			break;
	}
	if (q > D)
		return 0;
	/* j = floor(K * (cwnd / base - 1)) = floor(K * ((x << q) - y) / y), with (x << q) - y < y */
	r = (x << q) - y;
	j = ((__u64)K * r) / y;
	if (j > K - 1)
		j = K - 1;
	return K + (__u32)j;
}

static void alg_on_ack(struct sl *s, const struct sl_ack *a, struct sl_action *act)
{
	__u64 counted;
	__u32 n = 0;

	if (!a->acked) /* the Rust controller never calls the startup without newly acked data */
		return;
	/* units * SMSS: "units = 1 (PerAck mode) | N / SMSS (ByteCount mode, capped at L)" */
	if (BYTE_COUNTING)
		counted = (__u64)(a->acked < SMOOTH_L ? a->acked : SMOOTH_L) * a->mss * SCALE;
	else
		counted = (__u64)a->mss * SCALE;
	/* An infinite separator: slow start. */
	if (a->ssthresh < INFINITE_SSTHRESH)
		n = smooth_divisor(a->cwnd_units, a->ssthresh, a->mss);
	/* "if cwnd_pkts < smsthresh: cwnd += units * SMSS", else "cwnd += units * SMSS / n" */
	act->increase = n ? counted / n : counted;
}

static void alg_on_loss(struct sl *s)
{
	/* A later slow start smooths towards the new ssthresh; nothing to forget. */
}

#include "startlab_ops.h"
