/* Careful Resume (RFC 9959, draft-ietf-tsvwg-careful-resume-24), ported from startlab's
 * `careful-resume` (crates/startlab-cc/src/startup/careful_resume.rs; docs/algorithms/careful-resume.md).
 *
 *   Reconnaissance: slow start; on the ACK covering the initial data, with nothing saved, a
 *     Reconnaissance min RTT <= SAVED_RTT/2 or > 10 SAVED_RTT, or jump_cwnd not above the window:
 *     normal CC; else PipeSize = flight, cwnd = jump_cwnd = min(MAX_JUMP, saved_cwnd/2), paced at
 *     jump_cwnd per current RTT                                                   -> Unvalidated
 *   Unvalidated: cwnd held; PipeSize += unvalidated segments ACKed
 *     an RTT sample <= SAVED_RTT/2                                                -> Safe Retreat
 *     window full / first unvalidated segment ACKed / more than one RTT in the phase:
 *       flight < IW or flight <= PipeSize: cwnd = max(PipeSize, IW), normal CC
 *       else cwnd = flight                                                        -> Validating
 *   Validating: slow start; the ACK of the last segment sent while Unvalidated   -> normal CC
 *   a loss or CE in Unvalidated/Validating: ssthresh = cwnd = PipeSize/2          -> Safe Retreat
 *     its end (the recovery's or CWR's): PipeSize += the unvalidated segments outstanding at the
 *     signal less those retransmitted; ssthresh = PipeSize x BETA_PCT/100, cwnd kept
 *   a timeout: normal CC (the avoidance's ssthresh)
 *
 * The saved set is "state saved by the test harness": compile-time parameters SAVED_RATE (bit/s of
 * payload; 0: nothing saved, plain slow start), SAVED_RTT_US (µs), MAX_JUMP (segments, 0: no cap),
 * BETA_PCT (50) and INITIAL_WINDOW (10, the first flight). The kernel keeps nothing across
 * connections here: every connection of a loaded object resumes from the same compiled-in set.
 *
 * The frame runs it as a paced algorithm (SL_PACED): the jump is paced by the kernel at
 * sk_pacing_rate through cong_control, one segment per transmission, and back-to-back otherwise.
 * Safe Retreat needs the window at a congestion signal and at the end of the recovery, which the
 * frame reaches through SL_RECOVERY_HOOKS (alg_loss_window, alg_recovered in startlab_ops.h).
 *
 * Departures from the Rust version, and why:
 * - Segments, not bytes: PipeSize, jump_cwnd and the retreat window are whole segments (the Rust
 *   window is compared in whole segments; jump_cwnd is the floor of the Rust bytes).
 * - No rate-limited deferral (§4.2): the Rust plug-in confirms the path only on an ACK that finds
 *   the sender cwnd-limited; the kernel's flag is a bitfield out of reach here, so the path is
 *   confirmed on the ACK of the initial data (the conformance peer keeps the sender full).
 * - No Lifetime (the compiled-in set is as fresh as the object) and no observing: saving is the
 *   harness's.
 * - A path change (an RTT sample <= SAVED_RTT/2 after the jump) is a Safe Retreat ended on the ACK
 *   of the data sent so far, as in Rust; a CE echo's retreat ends with the kernel's CWR, when
 *   everything outstanding at the echo is ACKed, rather than on the Rust ACK-by-ACK count, and the
 *   window stays PipeSize/2 during it (the Rust avoidance may add a segment).
 * - Loss recovery: with cong_control the frame holds cwnd = ssthresh in recovery (RFC 6675's
 *   rule), which is the Rust `sack` recovery's retreat window.
 * - Clocks: µs (tcp_mstamp); the Rust ones are ns.
 */
#include "startlab_ca.h"

#ifndef SAVED_RATE
#define SAVED_RATE 0
#endif
#ifndef SAVED_RTT_US
#define SAVED_RTT_US 0
#endif
#ifndef MAX_JUMP
#define MAX_JUMP 0
#endif
#ifndef BETA_PCT
#define BETA_PCT 50
#endif
#ifndef INITIAL_WINDOW
#define INITIAL_WINDOW 10
#endif

#define SL_PACED 1
#define SL_START_WINDOW INITIAL_WINDOW
#define SL_RECOVERY_HOOKS 1

enum cr_phase { CR_RECON, CR_UNVALIDATED, CR_VALIDATING, CR_RETREAT, CR_NORMAL };

struct alg {
	__u8 phase;
	__u8 have_initial;   /* initial_end is set */
	__u8 retreat_ack;    /* the retreat ends on an ACK (a path change), not with a recovery */
	__u8 unused;
	__u32 initial_end;   /* SND.NXT on the first ACK: the initial data ends there */
	__u32 pipesize;      /* segments */
	__u32 retreat_cwnd;  /* segments */
	__u32 first_unval;   /* SND.NXT at the jump */
	__u32 last_unval;    /* SND.NXT when the Unvalidated Phase ended */
	__u32 entered_us;    /* low bits of tcp_mstamp at the jump */
	__u32 cur_rtt_us;    /* the latest RTT sample */
	__u32 retreat_from;  /* the unvalidated data outstanding at the signal: [from, end) */
	__u32 retreat_end;
	__u32 rtx_at_signal; /* tp->total_retrans then */
};

static void alg_init(struct sl *s)
{
	sl_alg(s)->phase = (SAVED_RATE && SAVED_RTT_US) ? CR_RECON : CR_NORMAL;
}

/* jump_cwnd in bytes: min(MAX_JUMP, half of SAVED_RATE/8 x SAVED_RTT_US/1e6). */
static __always_inline __u64 cr_jump(__u32 mss)
{
	__u64 jump = (__u64)SAVED_RATE * SAVED_RTT_US / 16000000ULL;
	if (MAX_JUMP && jump > (__u64)MAX_JUMP * mss)
		jump = (__u64)MAX_JUMP * mss;
	return jump;
}

/* jump_cwnd per current RTT, bytes per second. */
static __always_inline __u64 cr_rate(const struct alg *p, __u32 mss, __u32 fallback_us)
{
	__u32 rtt = p->cur_rtt_us ? p->cur_rtt_us : fallback_us;
	return cr_jump(mss) * 1000000ULL / (rtt ? rtt : 1);
}

/* Segments of this ACK's newly acknowledged data sent at or after the jump. */
static __always_inline __u32 cr_validated(const struct alg *p, const struct sl_ack *a)
{
	__u32 before = a->ack - a->acked * a->mss;
	__u32 from = sl_before(before, p->first_unval) ? p->first_unval : before;
	return sl_before(from, a->ack) ? (a->ack - from) / a->mss : 0;
}

static __always_inline __u32 cr_at_least_2(__u32 segments)
{
	return segments > 2 ? segments : 2;
}

/* §3.2 "Path confirmed": the checks, then the jump or normal CC. */
static __always_inline void cr_confirm(struct alg *p, const struct sl_ack *a, struct sl_action *act)
{
	__u64 seg_units = (__u64)a->mss * SCALE;
	__u64 jump = cr_jump(a->mss);
	__u32 min_rtt = a->min_rtt_us;
	act->increase = seg_units;
	if (!min_rtt)
		return; /* no RTT sample yet: wait for one */
	if ((__u64)min_rtt * 2 <= SAVED_RTT_US || (__u64)min_rtt > 10ULL * SAVED_RTT_US || jump * SCALE <= a->cwnd_units + seg_units ||
	    (a->ssthresh < INFINITE_SSTHRESH && jump >= (__u64)a->ssthresh * a->mss)) {
		p->phase = CR_NORMAL;
		return;
	}
	p->phase = CR_UNVALIDATED;
	p->pipesize = a->in_flight;
	p->first_unval = a->snd_nxt;
	p->entered_us = (__u32)a->now_us;
	act->increase = 0;
	act->set_cwnd = (__u32)(jump / a->mss);
	act->pacing_rate = cr_rate(p, a->mss, min_rtt);
}

/* An ACK in the Unvalidated Phase (§3.3). */
static __always_inline void cr_unvalidated(struct alg *p, const struct sl_ack *a, struct sl_action *act)
{
	__u32 flight = a->in_flight;
	p->pipesize += cr_validated(p, a);
	if (a->rtt_us > 0 && (__u64)a->rtt_us * 2 <= SAVED_RTT_US) {
		/* the path changed: Safe Retreat until the data sent so far is ACKed */
		p->phase = CR_RETREAT;
		p->retreat_ack = 1;
		p->retreat_end = a->snd_nxt;
		p->retreat_cwnd = cr_at_least_2(p->pipesize / 2);
		act->set_cwnd = p->retreat_cwnd;
		act->pacing_rate = SL_UNPACED;
		return;
	}
	/* not yet: the window not full, the first unvalidated segment not ACKed, within one RTT */
	if (((__u64)(flight + a->acked) + 1) * a->mss <= cr_jump(a->mss) && !sl_before(p->first_unval, a->ack) &&
	    (!p->cur_rtt_us || (__u32)a->now_us - p->entered_us <= p->cur_rtt_us)) {
		act->pacing_rate = cr_rate(p, a->mss, a->min_rtt_us);
		return;
	}
	act->pacing_rate = SL_UNPACED;
	if (flight < INITIAL_WINDOW || flight <= p->pipesize) {
		/* rate-limited: cwnd = PipeSize, not below IW; normal CC */
		p->phase = CR_NORMAL;
		act->set_cwnd = p->pipesize > INITIAL_WINDOW ? p->pipesize : INITIAL_WINDOW;
		return;
	}
	p->phase = CR_VALIDATING;
	p->last_unval = a->snd_nxt;
	act->set_cwnd = flight;
}

static void alg_on_ack(struct sl *s, const struct sl_ack *a, struct sl_action *act)
{
	struct alg *p = sl_alg(s);
	__u64 seg_units = (__u64)a->mss * SCALE;

	if (a->rtt_us > 0)
		p->cur_rtt_us = a->rtt_us;
	switch (p->phase) {
	case CR_RECON:
		if (!p->have_initial) {
			p->initial_end = a->snd_nxt;
			p->have_initial = 1;
		}
		if (sl_before(a->ack, p->initial_end))
			act->increase = seg_units;
		else
			cr_confirm(p, a, act);
		return;
	case CR_UNVALIDATED:
		cr_unvalidated(p, a, act);
		return;
	case CR_VALIDATING:
		p->pipesize += cr_validated(p, a);
		if (!sl_before(a->ack, p->last_unval))
			p->phase = CR_NORMAL;
		act->increase = seg_units;
		return;
	case CR_RETREAT:
		if (!p->retreat_ack) {
			/* an ACK outside recovery while the retreat waited for its end: a timeout took over */
			p->phase = CR_NORMAL;
			act->increase = seg_units;
			return;
		}
		/* §3.5: the window is not increased; the retreat ends with the data sent before it */
		p->pipesize += cr_validated(p, a);
		if (!sl_before(a->ack, p->retreat_end)) {
			p->phase = CR_NORMAL;
			act->set_ssthresh = cr_at_least_2(p->pipesize * BETA_PCT / 100);
		}
		return;
	default:
		act->increase = seg_units; /* normal slow start: min(N, SMSS) */
		return;
	}
}

static void alg_on_loss(struct sl *s)
{
}

/* After alg_on_loss, with the socket (SL_RECOVERY_HOOKS): a congestion signal in slow start. */
static __always_inline void alg_loss_window(struct tcp_sock *tp, struct sl *s)
{
	struct alg *p = sl_alg(s);
	__u32 una = tp->snd_una;
	if (p->phase == CR_RECON) {
		p->phase = CR_NORMAL; /* §3.2: normal CC reacts */
		return;
	}
	if (p->phase == CR_NORMAL)
		return;
	if (s->loss_kind == SL_TIMEOUT) {
		p->phase = CR_NORMAL; /* §3.6: normal CC's timeout response */
		return;
	}
	if (p->phase != CR_RETREAT)
		p->retreat_cwnd = cr_at_least_2(p->pipesize / 2);
	p->phase = CR_RETREAT;
	p->retreat_ack = 0;
	p->retreat_from = sl_before(una, p->first_unval) ? p->first_unval : una;
	p->retreat_end = tp->snd_nxt;
	p->rtx_at_signal = tp->total_retrans;
	tp->snd_ssthresh = p->retreat_cwnd;
	tp->snd_cwnd = p->retreat_cwnd;
	s->frac = 0;
}

/* The recovery (or CWR) that began a Safe Retreat ended (SL_RECOVERY_HOOKS). */
static __always_inline void alg_recovered(struct tcp_sock *tp, struct sl *s)
{
	struct alg *p = sl_alg(s);
	__u32 mss = tp->mss_cache, delivered = 0, rtx = tp->total_retrans - p->rtx_at_signal;
	if (p->phase != CR_RETREAT || p->retreat_ack || !mss)
		return;
	if (sl_before(p->retreat_from, p->retreat_end))
		delivered = (p->retreat_end - p->retreat_from) / mss;
	p->pipesize += delivered > rtx ? delivered - rtx : 0;
	p->phase = CR_NORMAL;
	tp->snd_ssthresh = cr_at_least_2(p->pipesize * BETA_PCT / 100);
	if (tp->snd_cwnd > p->retreat_cwnd)
		tp->snd_cwnd = p->retreat_cwnd;
	s->frac = 0;
}

#include "startlab_ops.h"
