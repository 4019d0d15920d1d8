/*
 * ps.c - a parameter server's push and pull as a schedule (docs/MODEL.md,
 * "Aggregation paths"): S servers colocated with the p workers, server s on
 * rank floor(s p / S) (spread evenly; with S = p every rank holds one, as
 * BytePS colocates a server with each worker machine), the buffer cut into
 * S shards. Step 0 (push): every rank sends shard s to server s's rank,
 * which adds it (its own shard a local copy). Step 1 (pull): server s's
 * rank sends its aggregated shard to every other rank. Push and pull carry
 * push / S and pull / S bytes per shard: a codec's pushed contributions and
 * pulled aggregate may differ in width (THC pushes b-bit indices and pulls
 * their integer sums). The effect is an all-reduce of nblk = S blocks of
 * pull / S bytes, which the data checker verifies when push = pull (it
 * holds a transfer to the bytes of the blocks it carries).
 *
 * With S = p both steps are complete exchanges (direct.c's reduce-scatter
 * and all-gather); with fewer servers they are GENERIC: a rank holding no
 * server sends S transfers and receives S, a server's rank receives p - 1
 * pushes and sends p - 1 pulls.
 */
#include <stdlib.h>
#include <string.h>
#include "coll/algos.h"

/* params[0] = S; the shard bytes are the phases' (push, pull). */
static uint32_t host_of(uint32_t s, uint32_t S, uint32_t p)
{
    return (uint32_t)((uint64_t)s * p / S);
}

static tc_status emit_ps(const tc_sched *s, uint32_t step, tc_xfers *x)
{
    uint32_t p = s->req.p, S = s->params[0];
    double b = s->phases[step].bytes;
    for (uint32_t k = 0; k < S; k++) {
        uint32_t h = host_of(k, S, p);
        for (uint32_t r = 0; r < p; r++) {
            if (r == h)
                continue;
            tc_xfers_add(x, step ? h : r, step ? r : h, b, step == 0);
            tc_xfers_seg(x, k, k, 1);
        }
    }
    return TC_OK;
}

/* The pattern of a step: a complete exchange with S = p (a shift on two
 * ranks), generic otherwise. */
static tc_phase *ps_phase(tc_sched *s, double bytes, uint32_t out, uint32_t in, const char *label)
{
    uint32_t p = s->req.p, S = s->params[0];
    tc_pattern pat = S < p ? TC_PAT_GENERIC : p == 2 ? TC_PAT_SHIFT : TC_PAT_ALL;
    tc_phase *ph = tc_sched_add_phase(s, 1, pat, pat == TC_PAT_SHIFT ? 1 : 0, bytes, label);
    if (ph) {
        tc_phase_set_fan(ph, out, in, bytes);
    }
    return ph;
}

tc_status tc_ps_build(uint32_t p, uint32_t S, double push, double pull, tc_sched **out, tc_err *err)
{
    *out = NULL;
    if (p < 2 || S < 1 || S > p)
        return tc_fail(err, TC_EINVAL, "a parameter server over %u ranks with %u servers: accepted are 2 or more "
                                       "ranks and 1 to %u servers (colocated on the ranks)", p, S, p < 2 ? 2 : p);
    if (!(push > 0) || !(pull > 0) || push > TC_MAX_BYTES || pull > TC_MAX_BYTES)
        return tc_fail(err, TC_EINVAL, "a parameter server's push (%g bytes) and pull (%g bytes) must be above 0 and "
                                       "at most 2^60", push, pull);
    tc_sched *s = tc_calloc(1, sizeof *s);
    if (!s)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    s->req = (tc_coll_req){.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_DIRECT, .p = p, .bytes = pull};
    s->algo = TC_ALGO_DIRECT;
    s->node_size = 1;
    s->params[0] = S;
    s->nblk = s->nslots = S;
    s->blk_bytes = pull / S;
    s->emit = emit_ps;
    /* a rank without a server pushes to all S, a server's rank to S - 1;
     * every server's rank takes p - 1 pushes; the pull mirrors it */
    uint32_t fan = S < p ? S : S - 1;
    if (!ps_phase(s, push / S, fan, p - 1, "ps push") || !ps_phase(s, pull / S, p - 1, fan, "ps pull")) {
        tc_sched_free(s);
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    *out = s;
    return TC_OK;
}
