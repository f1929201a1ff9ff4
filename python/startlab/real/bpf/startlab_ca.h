/* The frame every startlab BPF congestion control is built on (docs/KERNEL-BPF.md).
 *
 * An algorithm's file includes this header, defines its private state (`struct alg`, at most 48
 * bytes) and three functions, then includes startlab_ops.h, which turns them into a
 * `tcp_congestion_ops` registered under CA_NAME (the build passes -DCA_NAME="sl_lss_r"
 * -DOPS=sl_lss_r, and -DAVOID_CUBIC for CUBIC-like avoidance):
 *
 *   static void alg_init(struct sl *s);
 *   static void alg_on_ack(struct sl *s, const struct sl_ack *a, struct sl_action *act);
 *   static void alg_on_loss(struct sl *s);      // a congestion signal in slow start (s->loss_kind)
 *
 * The state mirrors startlab's controller (crates/startlab-cc/src/controller.rs), so that the same
 * ACKs give the same window as the sans-IO Rust algorithm: the window is snd_cwnd whole segments
 * plus `frac`, a fraction of a segment in units of 1/SCALE byte (SCALE = 720720 = lcm(1..16), so
 * that SMSS/n is exact for every n up to 16); rounds end on the first ACK beyond the SND.NXT of the
 * round's start (ALGORITHMS.md §0.3); the startup's action is an increase in those units, an exit
 * with a reason, or a new ssthresh. Everything here is integer arithmetic: BPF has no floating
 * point. */
#ifndef STARTLAB_CA_H
#define STARTLAB_CA_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char _license[] SEC("license") = "GPL";

#define SCALE 720720ULL
#define INFINITE_SSTHRESH 0x7fffffffU

/* Exit reasons, numbered as startlab's ExitReason (crates/startlab-cc/src/lib.rs). */
enum sl_exit { SL_NONE, SL_SSTHRESH, SL_LOSS, SL_TIMEOUT, SL_DELAY_INCREASE, SL_ACK_TRAIN, SL_CSS_DONE, SL_RATE_FOUND = 10, SL_ECN = 12 };

/* One ACK as the startup sees it (the Rust AckEvent's fields the ported algorithms read). */
struct sl_ack {
	__u64 now_us;        /* the kernel's per-ACK clock, tp->tcp_mstamp */
	__u32 acked;         /* segments newly acknowledged */
	__s32 rtt_us;        /* the ACK's RTT sample, -1 when Karn's rule forbids one */
	__u32 mss;           /* SMSS, bytes */
	__u32 cwnd;          /* whole segments */
	__u64 cwnd_units;    /* the window in 1/SCALE bytes: cwnd * mss * SCALE + frac */
	__u32 ssthresh;      /* segments (INFINITE_SSTHRESH: not set) */
	__u32 round;         /* completed rounds */
	__u32 new_round;     /* this ACK ended a round */
	__u32 min_rtt_us;    /* smallest sample so far, 0 before the first */
	__u32 in_flight;     /* segments in flight after the ACK */
	__u32 ack;           /* the ACK's cumulative point (a kernel sequence number) */
	__u32 snd_nxt;       /* SND.NXT when it arrived */
};

struct sl_action {
	__u64 increase;      /* in 1/SCALE bytes */
	__u32 exit;          /* enum sl_exit; SL_NONE: stay in startup */
	__u32 set_ssthresh;  /* segments; 0: unchanged */
	__u32 set_cwnd;      /* segments, replacing the window after the increase; 0: unchanged */
	__u64 pacing_rate;   /* bytes of payload per second from now on (paced algorithms, SL_PACED);
	                      * 0: unchanged; SL_UNPACED: back-to-back */
};

#define SL_UNPACED (~0ULL)

struct alg;

/* The per-connection state, in icsk_ca_priv (104 bytes). */
struct sl {
	__u64 frac;          /* the window's fraction of a segment, 1/SCALE bytes */
	__u64 w_est;         /* CUBIC-like avoidance: the Reno-friendly estimate W_est, 1/2^20 segments */
	__u32 round;
	__u32 round_end;     /* SND.NXT of the round's start; valid when has_round_end */
	__u8 has_round_end;
	__u8 in_startup;     /* 1 until startup first ends (the Rust controller's exit record) */
	__u8 pending;        /* the ssthresh hook ran in slow start; set_state tells the kind */
	__u8 loss_kind;      /* SL_LOSS, SL_TIMEOUT or SL_ECN: the congestion signal alg_on_loss sees */
	__u8 exit_reason;    /* enum sl_exit once startup ended */
	__u8 ca_state;       /* the kernel's TCP_CA_* state, as set_state last told it */
	__u16 unused;
	__s32 rtt_us;        /* the last pkts_acked sample, for the cong_avoid that follows */
	__u32 min_rtt_us;
	/* CUBIC-like avoidance (cubic_avoidance.h); windows in 1/1024 segments */
	__u32 epoch_start;   /* the stage's start, ms of tcp_mstamp plus one (0: no stage) */
	__u32 w_max;         /* W_max (0: none remembered) */
	__u32 k_ms;          /* K, ms */
	__u32 cwnd_prior;    /* cwnd at the last congestion event (0: none) */
	__u32 priv[12];      /* the algorithm's own state (struct alg) */
};

_Static_assert(sizeof(struct sl) <= 104, "the state must fit icsk_ca_priv");

static __always_inline struct tcp_sock *sl_tp(struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

static __always_inline struct sl *sl_state(struct sock *sk)
{
	return (struct sl *)((struct inet_connection_sock *)sk)->icsk_ca_priv;
}

static __always_inline struct alg *sl_alg(struct sl *s)
{
	return (struct alg *)s->priv;
}

static __always_inline int sl_before(__u32 a, __u32 b)
{
	return (__s32)(a - b) < 0;
}

/* Adds `units` (1/SCALE bytes) to the window: whole segments to snd_cwnd, the rest to frac. */
static __always_inline void sl_grow(struct tcp_sock *tp, struct sl *s, __u64 units)
{
	__u64 seg = (__u64)tp->mss_cache * SCALE;
	__u64 total;
	if (!seg)
		return;
	total = s->frac + units;
	tp->snd_cwnd = tp->snd_cwnd + (__u32)(total / seg);
	s->frac = total % seg;
	if (tp->snd_cwnd > tp->snd_cwnd_clamp)
		tp->snd_cwnd = tp->snd_cwnd_clamp;
}

static __always_inline __u32 sl_in_flight(const struct tcp_sock *tp)
{
	return tp->packets_out - (tp->sacked_out + tp->lost_out) + tp->retrans_out;
}

#endif
