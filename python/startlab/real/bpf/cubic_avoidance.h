/* CUBIC-like avoidance after startlab's `cubic` (RFC 9438; crates/startlab-cc/src/avoidance/cubic.rs)
 * with its defaults: C = 0.4, beta = 0.7, fast convergence, ssthresh = beta * cwnd. In fixed point
 * (windows in 1/1024 segments, times in ms): W_cubic(t) = C (t - K)^3 + W_max with
 * K = cbrt((W_max - cwnd_epoch) / C); in the Reno-friendly region (W_cubic(t) < W_est) cwnd becomes
 * W_est, which grows by alpha * acked / cwnd (alpha = 3(1-beta)/(1+beta) until W_est reaches the
 * cwnd of the last congestion event, then 1); otherwise cwnd grows by (target - cwnd)/cwnd per
 * segment acknowledged toward target = W_cubic(t + min RTT), bounded to [cwnd, 1.5 cwnd]. */
#ifndef STARTLAB_CUBIC_AVOIDANCE_H
#define STARTLAB_CUBIC_AVOIDANCE_H

#define FP 1024ULL
/* W_est is kept finer (1/2^20 segments): it grows by about 1/cwnd segment per ACK, which 1/1024
 * would truncate by several per cent. */
#define WFP (1ULL << 20)
/* alpha_cubic = 3 (1 - 0.7) / (1 + 0.7) = 0.5294, in 1/1024 */
#define ALPHA_CUBIC_FP 542ULL

static __always_inline void avoid_init(struct sl *s)
{
}

/* floor(cbrt(x)) for x < 2^63: Newton's iteration from above, y <- min(y, (2y + x/y^2)/3), a
 * fixed number of times. Bisection would be shorter, but its bounds are constants along each of
 * its 2^22 paths, which the verifier explores one by one; here y depends on x from the first step,
 * so the verifier's states merge. From 2^21 each step cuts y by about a third until it is near
 * the root, so 48 steps reach it for every x (floor(cbrt(x)): checked against exact roots in
 * tests/test_kernel_bpf.py's model of this function). */
static __always_inline __u64 sl_cbrt(__u64 x)
{
	__u64 y = 1ULL << 21;
	for (int i = 0; i < 48; i++) {
		__u64 next = (2 * y + x / (y * y)) / 3;
		y = next < y ? next : y;
	}
	if (y && y * y * y > x) /* never taken in a test of 190 000 values; kept as a guard */
		y--;
	return y;
}

/* W_cubic after `t_ms` (signed distance to K), 1/1024 segments, floored at 0. */
static __always_inline __u64 sl_w_cubic(__s64 d_ms, __u64 w_max)
{
	__u64 m, term;
	if (d_ms > 100000)
		d_ms = 100000;
	if (d_ms < -100000)
		d_ms = -100000;
	/* 0.4 * d^3 s^3 = 4 d^3 / 10^10 segments (d in ms); in 1/1024: 4096 d^3 / 10^10 (BPF has
	 * only unsigned division: the magnitude is divided, the sign applied after) */
	m = (__u64)(d_ms < 0 ? -d_ms : d_ms);
	term = (4096 * m * m * m) / 10000000000ULL;
	if (d_ms >= 0)
		return w_max + term;
	return term < w_max ? w_max - term : 0;
}

static __always_inline void avoid_on_ack(struct tcp_sock *tp, struct sl *s, __u32 acked)
{
	__u64 mss = tp->mss_cache;
	__u64 seg = mss * SCALE;
	__u64 cwnd, now_ms, t_ms, target, wc;
	if (!seg)
		return;
	cwnd = (__u64)tp->snd_cwnd * FP + s->frac * FP / seg;
	if (!cwnd)
		return;
	now_ms = tp->tcp_mstamp / 1000;
	if (!s->epoch_start) {
		/* §4.8/§4.10: no W_max above the window: K = 0 and W_max = cwnd_epoch */
		if (s->w_max > cwnd)
			s->k_ms = (__u32)sl_cbrt((s->w_max - cwnd) * 2441406ULL); /* cbrt(dW/1024/0.4 s^3) ms */
		else {
			s->w_max = (__u32)cwnd;
			s->k_ms = 0;
		}
		s->epoch_start = (__u32)now_ms + 1;
		s->w_est = cwnd * (WFP / FP);
	}
	t_ms = (__u32)now_ms + 1 - s->epoch_start;
	/* W_est += alpha * acked / cwnd */
	s->w_est += ((!s->cwnd_prior || s->w_est >= (__u64)s->cwnd_prior * WFP) ? FP : ALPHA_CUBIC_FP) * acked * WFP / cwnd;
	wc = sl_w_cubic((__s64)t_ms - s->k_ms, s->w_max);
	if (wc * (WFP / FP) < s->w_est) {
		/* the Reno-friendly region: cwnd = max(W_est, cwnd), in 1/SCALE bytes */
		__u64 w_est_units = s->w_est * SCALE / WFP * mss;
		__u64 cwnd_units = (__u64)tp->snd_cwnd * seg + s->frac;
		if (w_est_units > cwnd_units)
			sl_grow(tp, s, w_est_units - cwnd_units);
		return;
	}
	target = sl_w_cubic((__s64)t_ms + s->min_rtt_us / 1000 - s->k_ms, s->w_max);
	if (target < cwnd)
		target = cwnd;
	if (target > cwnd + cwnd / 2)
		target = cwnd + cwnd / 2;
	sl_grow(tp, s, (target - cwnd) * SCALE / cwnd * acked * mss);
}

static __always_inline __u32 avoid_ssthresh(struct tcp_sock *tp, struct sl *s)
{
	__u64 cwnd = (__u64)tp->snd_cwnd * FP;
	__u32 ss;
	/* §4.7 fast convergence */
	if (s->w_max && cwnd < s->w_max)
		s->w_max = (__u32)(cwnd * 17 / 20); /* cwnd (1 + 0.7) / 2 */
	else
		s->w_max = (__u32)cwnd;
	s->cwnd_prior = tp->snd_cwnd;
	s->epoch_start = 0;
	ss = tp->snd_cwnd * 7 / 10; /* beta * cwnd */
	return ss > 2 ? ss : 2;
}

static __always_inline void avoid_on_timeout(struct sl *s)
{
	/* §4.8: the first stage after a timeout takes K = 0 and W_max = its first window */
	s->w_max = 0;
	s->epoch_start = 0;
}

#endif
