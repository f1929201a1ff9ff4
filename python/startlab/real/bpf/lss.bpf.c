/* Limited Slow-Start (RFC 3742) as startlab's `lss` (crates/startlab-cc/src/startup/lss.rs):
 * cwnd += SMSS per ACK up to max_ssthresh, then int(SMSS/K) bytes with
 * K = int(cwnd / (0.5 max_ssthresh)). MAX_SSTHRESH is in segments (default 100, the RFC's). */
#include "startlab_ca.h"

#ifndef MAX_SSTHRESH
#define MAX_SSTHRESH 100
#endif

struct alg {
	__u32 unused;
};

static void alg_init(struct sl *s)
{
}

static void alg_on_ack(struct sl *s, const struct sl_ack *a, struct sl_action *act)
{
	__u64 max_units = (__u64)MAX_SSTHRESH * a->mss * SCALE;
	__u64 k;
	if (a->cwnd_units <= max_units) {
		act->increase = (__u64)a->mss * SCALE;
		return;
	}
	/* K = int(cwnd / (0.5 max_ssthresh)) = int(2 cwnd / max_ssthresh) */
	k = (2 * a->cwnd_units) / max_units;
	if (!k)
		k = 1;
	act->increase = (a->mss / k) * SCALE;
}

static void alg_on_loss(struct sl *s)
{
}

#include "startlab_ops.h"
