/* Reno avoidance as startlab's `reno` (crates/startlab-cc/src/avoidance/reno.rs): cwnd grows by
 * SMSS*SMSS/cwnd bytes per ACK (kept exactly in 1/SCALE bytes), ssthresh after a loss is
 * max(FlightSize/2, 2 segments) (reno_ssthresh_from = "flight-size", the default). */
#ifndef STARTLAB_RENO_AVOIDANCE_H
#define STARTLAB_RENO_AVOIDANCE_H

static __always_inline void avoid_init(struct sl *s)
{
}

static __always_inline void avoid_on_ack(struct tcp_sock *tp, struct sl *s, __u32 acked)
{
	__u64 mss = tp->mss_cache;
	__u64 cwnd_units = (__u64)tp->snd_cwnd * mss * SCALE + s->frac;
	if (!cwnd_units)
		return;
	/* SMSS*SMSS/cwnd bytes = mss^2 * SCALE^2 / cwnd_units units (fits 64 bits for mss <= 9000:
	 * 8.1e7 * 5.2e11 = 4.2e19 would not, so divide once by SCALE first). */
	sl_grow(tp, s, (mss * mss * SCALE) / (cwnd_units / SCALE ? cwnd_units / SCALE : 1));
}

static __always_inline __u32 avoid_ssthresh(struct tcp_sock *tp, struct sl *s)
{
	__u32 half = sl_in_flight(tp) / 2;
	return half > 2 ? half : 2;
}

static __always_inline void avoid_on_timeout(struct sl *s)
{
}

#endif
