/* The hooks of a startlab BPF congestion control: included last by each algorithm's file, after
 * its `struct alg` and its alg_init / alg_on_ack / alg_on_loss (startlab_ca.h). */
#ifndef STARTLAB_OPS_H
#define STARTLAB_OPS_H

_Static_assert(sizeof(struct alg) <= sizeof(((struct sl *)0)->priv), "struct alg must fit the state's priv words");

#ifdef AVOID_CUBIC
#include "cubic_avoidance.h"
#else
#include "reno_avoidance.h"
#endif

SEC("struct_ops/sl_init")
void BPF_PROG(sl_init, struct sock *sk)
{
	struct sl *s = sl_state(sk);
	__builtin_memset(s, 0, sizeof(*s));
	s->in_startup = 1;
	s->rtt_us = -1;
#ifdef INITIAL_SSTHRESH
	/* A finite initial ssthresh, segments (the kernel takes a route's only from its metrics
	 * cache): the conformance test's tcp.initial_ssthresh. */
	sl_tp(sk)->snd_ssthresh = INITIAL_SSTHRESH;
#endif
	alg_init(s);
	avoid_init(s);
#ifdef SL_PACED
	/* The kernel's own pacing (no fq needed), at rates this algorithm sets; back-to-back until
	 * it does. The first flight is the algorithm's (SL_START_WINDOW segments) where it sets one. */
	sk->sk_pacing_status = SK_PACING_NEEDED;
	sk->sk_pacing_rate = ~0UL;
#ifdef SL_START_WINDOW
	sl_tp(sk)->snd_cwnd = SL_START_WINDOW;
#endif
#endif
}

/* The RTT sample of the ACK being processed (tcp_ack calls pkts_acked before cong_avoid). */
SEC("struct_ops/sl_pkts_acked")
void BPF_PROG(sl_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct sl *s = sl_state(sk);
	s->rtt_us = sample->rtt_us;
	if (sample->rtt_us > 0 && (!s->min_rtt_us || (__u32)sample->rtt_us < s->min_rtt_us))
		s->min_rtt_us = sample->rtt_us;
}

/* The Rust controller's on_ack: slow start (cwnd < ssthresh) asks the startup algorithm, in the
 * first startup and in every later slow start (after a timeout); congestion avoidance asks the
 * avoidance algorithm. `acked`: segments newly acknowledged. */
static __always_inline void sl_on_ack(struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = sl_tp(sk);
	struct sl *s = sl_state(sk);
	struct sl_ack a = {};
	struct sl_action act = {};
	__u32 new_round = 0;
	__u64 seg, inc;

	/* §0.3: a round ends on the first ACK that covers the SND.NXT of its start; the first ACK
	 * fixes the first round's end. */
	if (!s->has_round_end) {
		s->round_end = tp->snd_nxt;
		s->has_round_end = 1;
	} else if (sl_before(s->round_end, ack)) {
		s->round++;
		s->round_end = tp->snd_nxt;
		new_round = 1;
	}
	if (tp->snd_cwnd >= tp->snd_ssthresh) {
		if (s->in_startup) {
			s->in_startup = 0;
			s->exit_reason = SL_SSTHRESH;
		}
		avoid_on_ack(tp, s, acked);
		s->rtt_us = -1;
		return;
	}
	seg = (__u64)tp->mss_cache * SCALE;
	a.now_us = tp->tcp_mstamp;
	a.acked = acked;
	a.rtt_us = s->rtt_us;
	a.mss = tp->mss_cache;
	a.cwnd = tp->snd_cwnd;
	a.cwnd_units = (__u64)tp->snd_cwnd * seg + s->frac;
	a.ssthresh = tp->snd_ssthresh;
	a.round = s->round;
	a.new_round = new_round;
	a.min_rtt_us = s->min_rtt_us;
	a.in_flight = sl_in_flight(tp);
	a.ack = ack;
	a.snd_nxt = tp->snd_nxt;
	s->rtt_us = -1;
	alg_on_ack(s, &a, &act);
	/* An increase that crosses ssthresh adds at most one SMSS beyond it (the Rust controller). */
	inc = act.increase;
	if (tp->snd_ssthresh < INFINITE_SSTHRESH) {
		__u64 limit = (__u64)tp->snd_ssthresh * seg;
		if (a.cwnd_units + inc > limit) {
			__u64 capped = a.cwnd_units + (inc < seg ? inc : seg);
			inc = (capped > limit ? capped : limit) - a.cwnd_units;
		}
	}
	sl_grow(tp, s, inc);
	if (act.set_cwnd) {
		tp->snd_cwnd = act.set_cwnd;
		s->frac = 0;
	}
#ifdef SL_PACED
	if (act.pacing_rate)
		sk->sk_pacing_rate = act.pacing_rate == SL_UNPACED ? ~0UL : act.pacing_rate;
#endif
	if (act.set_ssthresh)
		tp->snd_ssthresh = act.set_ssthresh < 2 ? 2 : act.set_ssthresh;
	if (act.exit) {
		if (!act.set_ssthresh)
			tp->snd_ssthresh = tp->snd_cwnd > 2 ? tp->snd_cwnd : 2;
		if (s->in_startup) {
			s->in_startup = 0;
			s->exit_reason = act.exit;
		}
	} else if (tp->snd_cwnd >= tp->snd_ssthresh && s->in_startup) {
		s->in_startup = 0;
		s->exit_reason = SL_SSTHRESH;
	}
#ifdef SL_PACED
	if (!s->in_startup)
		sk->sk_pacing_rate = ~0UL; /* pacing is startup's (ALGORITHMS.md §0.6) */
#endif
}

#ifdef SL_PACED
/* A paced algorithm owns the window and the pacing rate (the kernel calls tcp_update_pacing_rate,
 * which overwrites the rate after every ACK, only without cong_control). In loss recovery and CWR
 * the window is ssthresh, sent into as the pipe falls below it (RFC 6675's rule; the kernel's PRR
 * runs only without cong_control). */
SEC("struct_ops/sl_cong_control")
void BPF_PROG(sl_cong_control, struct sock *sk, __u32 ack, int flag, const struct rate_sample *rs)
{
	struct tcp_sock *tp = sl_tp(sk);
	struct sl *s = sl_state(sk);
	/* cong_control also runs for the SYN-ACK (it acknowledges the SYN, one "segment"); the Rust
	 * controller sees data ACKs only (cong_avoid is not called for it) */
	if (sk->__sk_common.skc_state != TCP_ESTABLISHED)
		return;
	if (s->ca_state == TCP_CA_Recovery || s->ca_state == TCP_CA_CWR) {
		tp->snd_cwnd = tp->snd_ssthresh > 2 ? tp->snd_ssthresh : 2;
		s->rtt_us = -1;
		return;
	}
	if (rs->acked_sacked > 0)
		sl_on_ack(sk, ack, (__u32)rs->acked_sacked);
}

/* One segment per transmission, so that the pacing gap is a packet's. */
SEC("struct_ops/sl_min_tso_segs")
__u32 BPF_PROG(sl_min_tso_segs, struct sock *sk)
{
	return 1;
}
#else
/* The kernel calls this only while the sender is cwnd-limited. */
SEC("struct_ops/sl_cong_avoid")
void BPF_PROG(sl_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	sl_on_ack(sk, ack, acked);
}
#endif

/* A congestion signal: the kernel calls this before it enters Recovery (a loss), Loss (a timeout)
 * or CWR (an ECN echo), and set_state just after; the kind is known only there. */
SEC("struct_ops/sl_ssthresh")
__u32 BPF_PROG(sl_ssthresh, struct sock *sk)
{
	struct tcp_sock *tp = sl_tp(sk);
	struct sl *s = sl_state(sk);
	s->pending = tp->snd_cwnd < tp->snd_ssthresh;
	s->frac = 0;
#ifdef SL_LOSS_WINDOW
	/* An algorithm that raised cwnd ahead of the data sent (SUSS) reduces from the flight. */
	if (s->pending) {
		__u32 w = alg_loss_window(s, sl_in_flight(tp));
		if (w && w < tp->snd_cwnd)
			tp->snd_cwnd = w;
	}
#endif
	return avoid_ssthresh(tp, s);
}

SEC("struct_ops/sl_undo_cwnd")
__u32 BPF_PROG(sl_undo_cwnd, struct sock *sk)
{
	struct tcp_sock *tp = sl_tp(sk);
	return tp->snd_cwnd > tp->prior_cwnd ? tp->snd_cwnd : tp->prior_cwnd;
}

SEC("struct_ops/sl_set_state")
void BPF_PROG(sl_set_state, struct sock *sk, __u8 new_state)
{
	struct sl *s = sl_state(sk);
	__u32 kind;
#ifdef SL_RECOVERY_HOOKS
	/* an algorithm that sets the window at a congestion signal and at the end of its recovery
	 * (Careful Resume's Safe Retreat) */
	__u8 old_state = s->ca_state;
	if (new_state == TCP_CA_Open && (old_state == TCP_CA_Recovery || old_state == TCP_CA_CWR))
		alg_recovered(sl_tp(sk), s);
#endif
	s->ca_state = new_state;
	if (new_state == TCP_CA_Loss) {
		kind = SL_TIMEOUT;
		s->frac = 0;
		avoid_on_timeout(s);
		/* a timeout in recovery: the ssthresh hook did not run, slow start was already over */
		if (!s->pending)
			return;
	} else if (new_state == TCP_CA_Recovery || new_state == TCP_CA_CWR) {
		if (!s->pending)
			return;
		kind = new_state == TCP_CA_CWR ? SL_ECN : SL_LOSS;
	} else {
		return;
	}
	s->pending = 0;
	s->loss_kind = kind;
	if (s->in_startup) {
		s->in_startup = 0;
		s->exit_reason = kind;
	}
	alg_on_loss(s);
#ifdef SL_RECOVERY_HOOKS
	alg_loss_window(sl_tp(sk), s);
#endif
}

SEC(".struct_ops")
struct tcp_congestion_ops OPS = {
	.init = (void *)sl_init,
	.pkts_acked = (void *)sl_pkts_acked,
#ifdef SL_PACED
	.cong_control = (void *)sl_cong_control,
	.min_tso_segs = (void *)sl_min_tso_segs,
#else
	.cong_avoid = (void *)sl_cong_avoid,
#endif
	.ssthresh = (void *)sl_ssthresh,
	.undo_cwnd = (void *)sl_undo_cwnd,
	.set_state = (void *)sl_set_state,
	.name = CA_NAME,
};

#endif
