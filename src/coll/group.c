/*
 * group.c - collectives over sub-groups: one schedule run by every group of
 * a partition of the job's ranks at once (docs/MODEL.md, "Sub-groups").
 *
 * The wrapper holds one group's schedule (the inner schedule, on the
 * group's q ranks) and the groups' members. Its step s is the inner step s
 * emitted once and copied for every group with inner rank i mapped to the
 * group's i-th job rank; its phases are the inner ones with the pattern
 * GENERIC, so that no closed form (which reads a pattern as one over all p
 * ranks) applies and the formula evaluator routes every phase on the graph,
 * the groups contending. Groups are disjoint, so a phase's figures (bytes,
 * fan-out, fan-in, bytes per rank) are the inner phase's, still exact.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "topocc/coll.h"
#include "coll/algos.h"

typedef struct grp_state {
    tc_sched *inner;
    uint32_t ngroups, size;
    uint32_t *members;    /* ngroups x size */
    tc_xfers tmp;         /* one inner step */
} grp_state;

static void grp_free(void *p)
{
    grp_state *g = p;
    if (!g)
        return;
    tc_sched_free(g->inner);
    free(g->members);
    tc_xfers_free(&g->tmp);
    free(g);
}

tc_status tc_groups_check(const tc_groups *g, tc_err *err)
{
    if (!g || g->p == 0 || g->ngroups == 0 || !g->members)
        return tc_fail(err, TC_EINVAL, "sub-groups: no groups");
    if (g->size < 2)
        return tc_fail(err, TC_EINVAL, "sub-groups: a group of %u rank does not run a collective: groups need at least "
                                       "2 ranks",
                       g->size);
    if ((uint64_t)g->ngroups * g->size != g->p)
        return tc_fail(err, TC_EINVAL, "sub-groups: %u groups of %u ranks do not partition the job's %u ranks",
                       g->ngroups, g->size, g->p);
    uint8_t *seen = tc_calloc(g->p, 1);
    if (!seen)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    tc_status st = TC_OK;
    for (uint32_t i = 0; i < g->p && st == TC_OK; i++) {
        uint32_t r = g->members[i];
        if (r >= g->p)
            st = tc_fail(err, TC_EINVAL, "sub-groups: rank %u of group %u is beyond the job's %u ranks", r,
                         i / g->size, g->p);
        else if (seen[r]++)
            st = tc_fail(err, TC_EINVAL, "sub-groups: rank %u is in two groups", r);
    }
    free(seen);
    if (st == TC_OK && g->ndims > 0) {
        uint64_t n = 1;
        for (int d = 0; d < g->ndims && d < TC_MAX_DIMS; d++)
            n *= g->dims[d];
        if (g->ndims > TC_MAX_DIMS || n != g->size)
            st = tc_fail(err, TC_EINVAL, "sub-groups: the groups' torus dimensions do not multiply to their %u ranks",
                         g->size);
    }
    return st;
}

const tc_topo *tc_groups_inner_topo(const tc_groups *g, tc_topo *buf)
{
    if (!g || g->ndims <= 0)
        return NULL;
    memset(buf, 0, sizeof *buf);
    buf->kind = TC_TOPO_TORUS;
    buf->n_endpoints = g->size;
    buf->ndims = g->ndims;
    uint32_t stride = 1;
    for (int d = 0; d < g->ndims && d < TC_MAX_DIMS; d++) {
        buf->dims[d] = g->dims[d];
        buf->wrap[d] = g->wrap[d];
        buf->stride[d] = stride;
        stride *= g->dims[d];
    }
    buf->node_size = 1;
    snprintf(buf->spec, sizeof buf->spec, "(a group's torus)");
    return buf;
}

bool tc_coll_valid_groups(tc_op op, tc_algo algo, const tc_groups *g, tc_err *err)
{
    if (tc_algo_is_nccl(algo))
        return true; /* checked on the groups' NCCL view, which needs the topology */
    tc_topo buf;
    return tc_coll_valid(op, algo, g->size, tc_groups_inner_topo(g, &buf), err);
}

tc_status tc_groups_nccl_view(const tc_groups *g, const tc_topo *t, const uint32_t *map, tc_topo **out, tc_err *err)
{
    *out = NULL;
    if (t->kind == TC_TOPO_FULL)
        return tc_fail(err, TC_EINVAL, "NCCL's algorithms over sub-groups of a full mesh: NCCL's model takes GPUs "
                                       "that reach other nodes through NICs on a Clos or torus fabric, and a full "
                                       "mesh has no NICs");
    /* The view is one Clos: across a multidc's long-haul links NCCL's
     * latency model (constants, the deepest tree path) would leave their
     * latency out, so groups must stay inside pods there. */
    for (uint32_t gi = 0; t->kind == TC_TOPO_MULTIDC && gi < g->ngroups; gi++) {
        const uint32_t *m = g->members + (size_t)gi * g->size;
        uint32_t k0 = (map ? map[m[0]] : m[0]) / t->pod_endpoints;
        for (uint32_t i = 1; i < g->size; i++) {
            uint32_t k = (map ? map[m[i]] : m[i]) / t->pod_endpoints;
            if (k != k0)
                return tc_fail(err, TC_EINVAL, "NCCL's algorithms over sub-groups that span pods of a multidc "
                                               "topology are not modelled (group %u has ranks in pods %u and %u): "
                                               "use groups inside pods or the MPI-style algorithms",
                               gi, k0, k);
        }
    }
    uint32_t G = t->node_size > 1 ? t->node_size : 1, Gv = 0;
    /* every group: runs of Gv consecutive members on one node, each node once */
    for (uint32_t gi = 0; G > 1 && gi < g->ngroups; gi++) {
        const uint32_t *m = g->members + (size_t)gi * g->size;
        uint32_t run = 0, node = UINT32_MAX;
        for (uint32_t i = 0; i <= g->size; i++) {
            uint32_t nd = i < g->size ? (map ? map[m[i]] : m[i]) / G : UINT32_MAX;
            if (i < g->size && nd == node) {
                run++;
                continue;
            }
            if (i > 0) {
                if (Gv == 0)
                    Gv = run;
                if (run != Gv)
                    return tc_fail(err, TC_EINVAL, "NCCL's algorithms over these groups: group %u holds %u ranks of one "
                                                   "node and %u of another; a communicator needs equal shares of "
                                                   "its nodes, each node's ranks consecutive in the group",
                                   gi, Gv, run);
            }
            node = nd;
            run = 1;
        }
    }
    if (Gv == 0)
        Gv = 1;
    const tc_topo *f = t->kind == TC_TOPO_MULTIDC ? t->pod[0] : t; /* a multidc: its pods' cables */
    double lat = f->kind == TC_TOPO_CLOS ? f->level_lat[1] : f->torus_lat;
    char spec[512];
    /* the line rate with net_eff= beside it, as the topology has them */
    int n = snprintf(spec, sizeof spec, "clos:down=%u,up=1,bw=%.17gGB/s,lat=%.17gns,hop_lat=%.17gns,alpha=%.17gns", g->size,
                     tc_nccl_nic_line_Bps(t) / 1e9, lat * 1e9, t->hop_lat * 1e9, t->alpha * 1e9);
    if (t->net_eff != 1 && n > 0 && (size_t)n < sizeof spec)
        n += snprintf(spec + n, sizeof spec - (size_t)n, ",net_eff=%.17g", t->net_eff);
    if (Gv > 1 && n > 0 && (size_t)n < sizeof spec)
        n += snprintf(spec + n, sizeof spec - (size_t)n, ",node=%u,node_bw=%.17gGB/s,node_lat=%.17gns,node_hop_lat=%.17gns%s",
                      Gv, t->node_bw / 1e9, t->node_lat * 1e9, t->node_hop_lat * 1e9,
                      t->node_reduce ? ",node_reduce=1" : "");
    if (Gv > 1 && t->rails && n > 0 && (size_t)n < sizeof spec)
        n += snprintf(spec + n, sizeof spec - (size_t)n, ",rail=%u", Gv);
    if (t->arch && n > 0 && (size_t)n < sizeof spec)
        n += snprintf(spec + n, sizeof spec - (size_t)n, ",arch=%s", tc_arch_name((tc_arch)t->arch));
    if (t->transport && n > 0 && (size_t)n < sizeof spec)
        n += snprintf(spec + n, sizeof spec - (size_t)n, ",transport=%s", tc_transport_name((tc_transport)t->transport));
    if (t->nic_path && n > 0 && (size_t)n < sizeof spec)
        n += snprintf(spec + n, sizeof spec - (size_t)n, ",nic_path=%s", tc_nic_path_name((tc_nic_path)t->nic_path));
    /* the calibrated step latency rides along */
    if (t->net_lat_given && n > 0 && (size_t)n < sizeof spec)
        snprintf(spec + n, sizeof spec - (size_t)n, ",net_lat=%.17gns/%.17gns/%.17gns", t->net_lat[0] * 1e9,
                 t->net_lat[1] * 1e9, t->net_lat[2] * 1e9);
    return tc_topo_build(spec, out, err);
}

static tc_status grp_emit(const tc_sched *s, uint32_t step, tc_xfers *out)
{
    grp_state *g = s->state;
    /* The wrapper's size reaches the inner schedule here: a sweep rescales
     * the wrapper (tc_sched_set_bytes), which cannot see its state. */
    if (g->inner->req.bytes != s->req.bytes)
        tc_sched_set_bytes(g->inner, s->req.bytes);
    g->tmp.with_data = out->with_data;
    tc_status st = tc_sched_emit(g->inner, step, &g->tmp);
    if (st) {
        out->oom |= g->tmp.oom; /* the caller tells memory from other failures */
        return st;
    }
    const tc_xfers *x = &g->tmp;
    uint32_t ip = g->inner->req.p, isw = g->inner->nsw, jp = s->req.p;
    for (uint32_t gi = 0; gi < g->ngroups; gi++) {
        const uint32_t *m = g->members + (size_t)gi * g->size;
        for (size_t i = 0; i < x->n; i++) {
            const tc_xfer *t = &x->v[i];
            /* ranks to the group's job ranks; the group's switches after the job's ranks, group by group */
            uint32_t a = t->src < ip ? m[t->src] : jp + gi * isw + (t->src - ip);
            uint32_t b = t->dst < ip ? m[t->dst] : jp + gi * isw + (t->dst - ip);
            size_t k = tc_xfers_add(out, a, b, t->bytes, t->reduce);
            if (out->oom)
                return TC_EINTERNAL;
            out->v[k].lane = t->lane;
            out->v[k].piped = t->piped;
            for (uint32_t j = 0; j < t->seg_cnt; j++) {
                const tc_seg *sg = &x->segs[t->seg_off + j];
                tc_xfers_seg(out, sg->src_slot, sg->dst_slot, sg->count);
            }
        }
    }
    return out->oom ? TC_EINTERNAL : TC_OK;
}

tc_status tc_sched_group(tc_sched *inner, const tc_groups *g, tc_sched **out, tc_err *err)
{
    *out = NULL;
    tc_status st = tc_groups_check(g, err);
    if (st == TC_OK && inner->req.p != g->size)
        st = tc_fail(err, TC_EINTERNAL, "sub-groups: a schedule of %u ranks for groups of %u", inner->req.p, g->size);
    for (uint32_t i = 0; st == TC_OK && inner->sw_level && i < inner->nsw; i++)
        if (inner->sw_level[i])
            st = tc_fail(err, TC_EINVAL, "%s over sub-groups: reduction in fabric switches (SHARP) is not modelled "
                                         "for sub-groups",
                         tc_algo_name(inner->algo));
    if (st) {
        tc_sched_free(inner);
        return st;
    }
    tc_sched *s = tc_calloc(1, sizeof *s);
    grp_state *gs = tc_calloc(1, sizeof *gs);
    uint32_t *m = malloc((size_t)g->p * sizeof *m);
    if (!s || !gs || !m) {
        free(s);
        free(gs);
        free(m);
        tc_sched_free(inner);
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    memcpy(m, g->members, (size_t)g->p * sizeof *m);
    gs->inner = inner;
    gs->ngroups = g->ngroups;
    gs->size = g->size;
    gs->members = m;
    tc_xfers_init(&gs->tmp, false);
    s->req = inner->req;
    s->req.p = g->p;
    s->algo = inner->algo;
    s->nblk = inner->nblk;
    s->nslots = inner->nslots;
    s->blk_bytes = inner->blk_bytes;
    s->emit = grp_emit;
    s->state = gs;
    s->free_state = grp_free;
    s->node_size = 1;
    s->lanes = inner->lanes;
    /* an NCCL schedule's costs, the same for every group */
    s->proto = inner->proto;
    s->base_s = inner->base_s;
    s->lat_intra_s = inner->lat_intra_s;
    s->lat_inter_s = inner->lat_inter_s;
    s->wire = inner->wire;
    s->rate_cap_Bps = inner->rate_cap_Bps;
    s->credit_steps = inner->credit_steps;
    s->credit_steps_inter = inner->credit_steps_inter;
    s->send_in_order = inner->send_in_order;
    s->wire_in_order = inner->wire_in_order;
    s->credit_in_order = inner->credit_in_order;
    /* every group's pipelines in turn (grp_emit: group by group) */
    s->pipe_hops = inner->pipe_hops;
    s->pipe_chunks = inner->pipe_chunks;
    s->pipe_lanes = inner->pipe_hops ? g->ngroups * inner->pipe_lanes : 0;
    s->channels = inner->channels;
    s->nccl_impl = inner->nccl_impl;
    if (inner->nsw) {
        /* node switches: each group's own, standing beside its ranks */
        s->nsw = g->ngroups * inner->nsw;
        s->sw_rank = malloc((size_t)s->nsw * sizeof *s->sw_rank);
        if (!s->sw_rank) {
            tc_sched_free(s);
            return tc_fail(err, TC_EINTERNAL, "out of memory");
        }
        for (uint32_t gi = 0; gi < g->ngroups; gi++)
            for (uint32_t i = 0; i < inner->nsw; i++)
                s->sw_rank[gi * inner->nsw + i] = m[(size_t)gi * g->size + inner->sw_rank[i]];
    }
    for (uint32_t i = 0; i < inner->nphases; i++) {
        const tc_phase *ip = &inner->phases[i];
        tc_phase *ph = tc_sched_add_phase(s, ip->repeat, TC_PAT_GENERIC, 0, ip->bytes, ip->label);
        if (!ph && ip->repeat) {
            tc_sched_free(s);
            return tc_fail(err, TC_EINTERNAL, "out of memory");
        }
        if (!ph)
            continue;
        ph->fanout = ip->fanout;
        ph->fanin = ip->fanin;
        ph->rank_bytes = ip->rank_bytes;
        ph->rank_bytes_in = ip->rank_bytes_in;
    }
    if (s->nsteps != inner->nsteps) {
        tc_sched_free(s);
        return tc_fail(err, TC_EINTERNAL, "sub-groups: the inner schedule's phases do not cover its steps");
    }
    *out = s;
    return TC_OK;
}

tc_status tc_coll_build_groups(const tc_coll_req *req, const tc_groups *g, tc_sched **out, tc_err *err)
{
    *out = NULL;
    tc_status st = tc_groups_check(g, err);
    if (st)
        return st;
    if (req->p != g->size)
        return tc_fail(err, TC_EINTERNAL, "sub-groups: a request for %u ranks for groups of %u", req->p, g->size);
    if (!tc_coll_valid_groups(req->op, req->algo, g, err))
        return TC_EINVAL;
    tc_topo buf;
    tc_sched *inner = NULL;
    if ((st = tc_coll_build(req, tc_groups_inner_topo(g, &buf), &inner, err)))
        return st;
    return tc_sched_group(inner, g, out, err);
}

tc_sched *tc_sched_group_inner(const tc_sched *s)
{
    return s && s->emit == grp_emit ? ((grp_state *)s->state)->inner : NULL;
}

const uint32_t *tc_sched_group_members(const tc_sched *s, uint32_t *ngroups, uint32_t *size)
{
    if (!s || s->emit != grp_emit)
        return NULL;
    const grp_state *g = s->state;
    *ngroups = g->ngroups;
    *size = g->size;
    return g->members;
}

/* ---- verification ---- */

/* One group's view of a wrapper: the wrapper's transfers between ranks of
 * group g, renumbered to inner ranks. */
typedef struct view_state {
    const tc_sched *w;
    uint32_t g;
    const uint32_t *gof, *loc;   /* job rank -> its group, its inner rank */
    tc_xfers tmp;
} view_state;

static tc_status view_emit(const tc_sched *s, uint32_t step, tc_xfers *out)
{
    view_state *v = s->state;
    v->tmp.with_data = out->with_data;
    tc_status st = tc_sched_emit(v->w, step, &v->tmp);
    if (st) {
        out->oom |= v->tmp.oom; /* the caller tells memory from other failures */
        return st;
    }
    for (size_t i = 0; i < v->tmp.n; i++) {
        const tc_xfer *t = &v->tmp.v[i];
        if (v->gof[t->src] != v->g)
            continue;
        tc_xfers_add(out, v->loc[t->src], v->loc[t->dst], t->bytes, t->reduce);
        if (out->oom)
            return TC_EINTERNAL;
        for (uint32_t j = 0; j < t->seg_cnt; j++) {
            const tc_seg *sg = &v->tmp.segs[t->seg_off + j];
            tc_xfers_seg(out, sg->src_slot, sg->dst_slot, sg->count);
        }
    }
    return out->oom ? TC_EINTERNAL : TC_OK;
}

tc_status tc_sched_check_groups(const tc_sched *s, tc_err *err)
{
    tc_sched *inner = tc_sched_group_inner(s);
    if (!inner)
        return tc_fail(err, TC_EINVAL, "not a schedule over sub-groups");
    const grp_state *gs = s->state;
    uint32_t p = s->req.p;
    uint32_t *gof = malloc((size_t)p * sizeof *gof), *loc = malloc((size_t)p * sizeof *loc);
    tc_xfers x;
    tc_xfers_init(&x, false);
    tc_status st = gof && loc ? TC_OK : tc_fail(err, TC_EINTERNAL, "out of memory");
    for (uint32_t i = 0; i < p && st == TC_OK; i++) {
        gof[gs->members[i]] = i / gs->size;
        loc[gs->members[i]] = i % gs->size;
    }
    /* Every transfer stays inside its group. */
    for (uint32_t step = 0; step < s->nsteps && st == TC_OK; step++) {
        if (tc_sched_emit(s, step, &x)) {
            st = x.oom ? tc_fail(err, TC_EINTERNAL, "out of memory")
                       : tc_fail(err, TC_EINTERNAL, "sub-groups: emitting step %u failed", step);
            break;
        }
        for (size_t i = 0; i < x.n && st == TC_OK; i++) {
            const tc_xfer *t = &x.v[i];
            if (t->src >= p || t->dst >= p)
                st = tc_fail(err, TC_EINTERNAL, "sub-groups: step %u: a transfer %u -> %u beyond the %u ranks", step,
                             t->src, t->dst, p);
            else if (gof[t->src] != gof[t->dst])
                st = tc_fail(err, TC_EINTERNAL, "sub-groups: step %u: transfer %u -> %u crosses groups %u and %u", step,
                             t->src, t->dst, gof[t->src], gof[t->dst]);
        }
    }
    tc_xfers_free(&x);
    /* Every group's view runs the data checker: its own collective's
     * result on every rank, the inner phases' figures exact. */
    for (uint32_t g = 0; g < gs->ngroups && st == TC_OK; g++) {
        if (inner->req.bytes != s->req.bytes)
            tc_sched_set_bytes(inner, s->req.bytes);
        view_state v = {.w = s, .g = g, .gof = gof, .loc = loc};
        tc_xfers_init(&v.tmp, true);
        tc_sched view = *inner;
        view.emit = view_emit;
        view.emit_part = NULL;
        view.state = &v;
        view.free_state = NULL;
        st = tc_sched_check(&view, err);
        if (st) {
            char m[TC_ERR_LEN];
            snprintf(m, sizeof m, "%s", err ? err->msg : "");
            st = tc_fail(err, st, "sub-groups: group %u: %s", g, m);
        }
        tc_xfers_free(&v.tmp);
    }
    free(gof);
    free(loc);
    return st;
}
