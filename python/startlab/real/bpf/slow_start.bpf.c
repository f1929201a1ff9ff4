/* Standard slow start (RFC 5681 §3.1) as startlab's `slow-start`
 * (crates/startlab-cc/src/startup/slow_start.rs): cwnd += min(N, SMSS) per ACK, packet counting. */
#include "startlab_ca.h"

struct alg {
	__u32 unused;
};

static void alg_init(struct sl *s)
{
}

static void alg_on_ack(struct sl *s, const struct sl_ack *a, struct sl_action *act)
{
	act->increase = (__u64)a->mss * SCALE; /* min(N, SMSS): every ACK here acknowledges data */
}

static void alg_on_loss(struct sl *s)
{
}

#include "startlab_ops.h"
