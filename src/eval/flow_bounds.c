/*
 * flow_bounds.c - the flow simulation's time bounded without simulating
 * it, for a schedule of one step (tc_flow_opts.bounds; docs/MODEL.md,
 * "Bounds instead of a simulation").
 *
 * A direct all-to-all posts all p (p - 1) messages at once. Under ECMP
 * its simulation is exact but every end moves most rates (some F^1.8 in
 * the flows F: hours at 4,096 ranks), and it holds every flow. Yet the
 * time it computes is pinned between two figures that need only the
 * flows' paths added up per link, two passes over the step:
 *
 *   the simulation's rule (flow.h): the k-th message a rank sends starts
 *   at s = k alpha (its overhead slots; every rank has reached the one
 *   step at time 0, so no message waits for its receiver), sends its
 *   bytes b at its max-min rate, and is delivered lat later (its path's
 *   latency);
 *
 *   lower: a link L of capacity c carries every byte routed over it; the
 *   bytes of the messages that start at tau or later leave after
 *   tau + B_L(>= tau) / c, and the last of them is delivered at least the
 *   least path latency of L's flows later. Also a message alone: s + b /
 *   (its rate alone) + lat.
 *
 *   upper: progressive filling freezes a flow f when a link L on its path
 *   fills; L's frozen flows run no faster than the level x it fills at,
 *   so c <= x W_L, with W_L the flows' path fractions summed over L (the
 *   flow count, routed): every flow runs at least min(cap, min over its
 *   links of c / W_L), whatever else is in flight, and is delivered by
 *   s + b / that + lat.
 *
 * With equal messages released at once the two meet (the most loaded
 * link's drain); between them lie the senders' overhead slots and what
 * the max-min rates leave idle. Memory: a few numbers per link and per
 * release bin, a part of the step's transfers at a time.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "eval/flow_sim.h"
#include "eval/eval_int.h"

/* Bins: a link's lower figure is taken over the messages that start in a
 * bin of slots or later and whose path latency lies in a bin of latencies
 * or above, at the bins' lower edges (valid for every message in them):
 * at most BD_BINS release bins and BD_LATS latency bins, and at most
 * BD_ENTRIES (link, release bin, latency bin) counters. */
#define BD_BINS 64
#define BD_LATS 8
#define BD_ENTRIES ((size_t)1 << 22)
/* The transfers emitted at a time (an all-pairs step is emitted by
 * ranges of senders). */
#define BD_CHUNK ((size_t)1 << 18)

typedef struct bd {
    fl_sim S;            /* for tc_fl_route only: t, o, cap, path, pw */
    const tc_flow_job *job;
    uint32_t p, nb, width, nl;
    double lat_lo, lat_hi; /* the messages' path latencies, least and most */
    double alpha, cap_rate; /* the per-flow rate cap (0: none) */
    double gamma;        /* seconds per byte a rank reduces (tc_eval_gamma): refused */
    uint32_t *slots;     /* per rank: messages it has sent so far */
    double *bins;        /* n_links x nb x nl: bytes routed over the link, by the bins of their start and latency */
    double *weight;      /* per link: path fractions summed over its flows (W_L) */
    double *bytes;       /* per link: bytes carried */
    double lower, upper; /* the messages' own figures */
    uint64_t transfers;
} bd;

/* Latency bins nl (as many as fit, up to BD_LATS), then release bins. */
static void bd_nbins(const tc_topo *t, uint32_t fanout, double alpha, uint32_t *nb, uint32_t *nl)
{
    size_t fit = BD_ENTRIES / (t->n_links ? t->n_links : 1);
    size_t l = fit < BD_LATS ? fit : BD_LATS;
    if (l < 1)
        l = 1;
    size_t b = !(alpha > 0) || fanout <= 1 ? 1 : BD_BINS;
    if (b > fanout)
        b = fanout;
    if (b > fit / l)
        b = fit / l;
    *nb = b ? (uint32_t)b : 1;
    *nl = (uint32_t)l;
}

static size_t bd_chunk_senders(const tc_sched *s)
{
    return tc_sched_part_senders(s, &s->phases[0], BD_CHUNK);
}

/* What a one-step schedule must be; TC_OK when it can be bounded. */
static tc_status bd_check(const tc_topo *t, const tc_flow_job *jobs, size_t njobs, const tc_flow_opts *o,
                          tc_err *err)
{
    if (njobs != 1)
        return tc_fail(err, TC_EINVAL,
                       "flow bounds time one job alone; %zu jobs share this run (simulate them: no --flow-bounds)",
                       njobs);
    const tc_sched *s = jobs[0].sched;
    if (s->proto)
        return tc_fail(err, TC_EINVAL,
                       "flow bounds take MPI-style schedules; %s runs NCCL's protocols (credits, step latencies): "
                       "simulate it (no --flow-bounds)",
                       tc_algo_name(s->algo));
    if (s->nsteps != 1 || s->nphases != 1)
        return tc_fail(err, TC_EINVAL,
                       "flow bounds take a schedule of one step (direct all-to-all: every message at once); %s "
                       "has %u steps, whose dependencies only a simulation follows (no --flow-bounds)",
                       tc_algo_name(s->algo), s->nsteps);
    if (o->trace_path)
        return tc_fail(err, TC_EINVAL, "a trace records a simulation; --flow-bounds simulates nothing");
    if (!(o->eager_limit_bytes >= 0))
        return tc_fail(err, TC_EINVAL, "flow: eager limit %g bytes: expected 0 (the default, %g bytes) or more",
                       o->eager_limit_bytes, TC_FLOW_DEFAULT_EAGER_LIMIT);
    if (o->multipath == TC_MULTIPATH_SPRAY && t->kind == TC_TOPO_MULTIDC)
        return tc_fail(err, TC_EINVAL, "flow: multipath spray splits over a Clos's or a torus's equal-cost "
                                       "paths; a multidc topology takes its routed paths (multipath route)");
    uint32_t stride = tc_fl_max_incidences(t, o->multipath);
    if (stride > 65535)
        return tc_fail(err, TC_EINVAL,
                       "flow: spraying over this topology needs %u links per transfer; at most 65535 are "
                       "supported, use multipath route",
                       stride);
    return TC_OK;
}

static void bd_free(bd *B)
{
    free(B->S.cap);
    free(B->S.path);
    free(B->S.pw);
    free(B->slots);
    free(B->bins);
    free(B->weight);
    free(B->bytes);
}

static tc_status bd_init(bd *B, const tc_topo *t, const tc_flow_job *job, const tc_flow_opts *o, tc_err *err)
{
    memset(B, 0, sizeof *B);
    B->S.t = t;
    B->S.o = *o;
    B->S.err = err;
    B->job = job;
    const tc_sched *s = job->sched;
    B->p = s->req.p;
    B->alpha = t->alpha > 0 ? t->alpha : 0;
    B->cap_rate = o->rate_cap_Bps > 0 ? o->rate_cap_Bps : 0;
    B->gamma = tc_eval_gamma(t, s);
    uint32_t fanout = s->phases[0].fanout;
    bd_nbins(t, fanout, B->alpha, &B->nb, &B->nl);
    B->width = fanout > B->nb ? (fanout + B->nb - 1) / B->nb : 1;
    B->lat_lo = INFINITY;
    B->lat_hi = 0;
    size_t L = t->n_links ? t->n_links : 1;
    uint32_t stride = tc_fl_max_incidences(t, o->multipath);
    B->S.stride = stride;
    B->S.cap = malloc(L * sizeof *B->S.cap);
    B->S.path = malloc(stride * sizeof *B->S.path);
    B->S.pw = malloc(stride * sizeof *B->S.pw);
    B->slots = calloc(B->p ? B->p : 1, sizeof *B->slots);
    B->bins = calloc(L * B->nb * B->nl, sizeof *B->bins);
    B->weight = calloc(L, sizeof *B->weight);
    B->bytes = calloc(L, sizeof *B->bytes);
    if (!B->S.cap || !B->S.path || !B->S.pw || !B->slots || !B->bins || !B->weight || !B->bytes)
        return tc_fail(err, TC_EINTERNAL, "flow bounds: out of memory");
    for (uint32_t l = 0; l < t->n_links; l++)
        B->S.cap[l] = t->links[l].bw > 0 ? t->links[l].bw : 0;
    return TC_OK;
}

static double bd_latedge(const bd *B, uint32_t j)
{
    return B->lat_lo + (B->lat_hi - B->lat_lo) * j / B->nl;
}

static uint32_t bd_ep(const bd *B, uint32_t r)
{
    return B->job->rank_map ? B->job->rank_map[r] : r;
}

/* The latency bin of a message: its lower edge is at most lat. */
static uint32_t bd_latbin(const bd *B, double lat)
{
    if (B->nl <= 1 || !(B->lat_hi > B->lat_lo))
        return 0;
    double u = (lat - B->lat_lo) / (B->lat_hi - B->lat_lo) * B->nl;
    uint32_t j = u <= 0 ? 0 : u >= B->nl ? B->nl - 1 : (uint32_t)u;
    while (j > 0 && lat < bd_latedge(B, j))
        j--;
    return j;
}

/* One message: pass 0 adds it up per link (its share of each link) and
 * takes its lower figure alone; pass 1 takes its upper figure from the
 * links' shares and puts its bytes in the links' bins. */
static tc_status bd_message(bd *B, int pass, const tc_xfer *x, tc_err *err)
{
    const tc_topo *t = B->S.t;
    uint32_t a = bd_ep(B, x->src), b = bd_ep(B, x->dst);
    if (pass == 0)
        B->transfers++;
    if (a == b)
        return TC_OK; /* a local copy: instantaneous, no overhead (flow.h) */
    /* A reduction cost (reduce_bw=): a receiver reduces its messages one
     * after another as they arrive, which the links' figures do not see
     * (the simulation's time would lie above the upper end). */
    if (pass == 0 && B->gamma > 0 && x->reduce)
        return tc_fail(err, TC_EINVAL,
                       "flow bounds take no reduction cost: with reduce_bw= rank %u reduces what rank %u sends it, "
                       "one message after another, which only a simulation times (no --flow-bounds)",
                       x->dst, x->src);
    uint32_t slot = ++B->slots[x->src];
    double start = slot * B->alpha;
    uint32_t n = tc_fl_route(&B->S, a, b);
    if (n == 0) {
        tc_routing r = tc_eval_routing(TC_MODE_FLOW, t, B->S.o.routing);
        return tc_fail(err, TC_EINVAL,
                       "the failures cut endpoint %u off from endpoint %u: no surviving path under routing %s; the "
                       "job cannot run as placed%s",
                       a, b, tc_routing_name(r, t), tc_eval_cut_hint(t, r, a, b));
    }
    const uint32_t *path = B->S.path;
    const double *pw = B->S.pw;
    double lat = 0;
    for (uint32_t k = 0; k < n; k++)
        lat += pw[k] * t->links[path[k]].lat;
    double rate = B->cap_rate > 0 ? B->cap_rate : INFINITY;
    if (pass == 0) {
        for (uint32_t k = 0; k < n; k++) {
            uint32_t l = path[k];
            B->weight[l] += pw[k];
            B->bytes[l] += pw[k] * x->bytes;
            rate = fmin(rate, B->S.cap[l] / pw[k]);
        }
        B->lower = fmax(B->lower, start + (x->bytes > 0 ? x->bytes / rate : 0) + lat);
        B->lat_lo = fmin(B->lat_lo, lat);
        B->lat_hi = fmax(B->lat_hi, lat);
    } else {
        uint32_t bin = (slot - 1) / B->width;
        if (bin >= B->nb)
            bin = B->nb - 1;
        size_t cell = (size_t)bin * B->nl + bd_latbin(B, lat);
        for (uint32_t k = 0; k < n; k++) {
            uint32_t l = path[k];
            rate = fmin(rate, B->S.cap[l] / B->weight[l]);
            B->bins[(size_t)l * B->nb * B->nl + cell] += pw[k] * x->bytes;
        }
        B->upper = fmax(B->upper, start + (x->bytes > 0 ? x->bytes / rate : 0) + lat);
    }
    return TC_OK;
}

/* The step's transfers, a range of senders at a time, in the order the
 * schedule emits them (a sender's slots follow it, as in the simulation). */
static tc_status bd_pass(bd *B, int pass, tc_err *err)
{
    const tc_sched *s = B->job->sched;
    uint32_t per = (uint32_t)bd_chunk_senders(s);
    memset(B->slots, 0, (B->p ? B->p : 1) * sizeof *B->slots);
    tc_xfers xf;
    tc_xfers_init(&xf, false);
    tc_status st = TC_OK;
    for (uint32_t lo = 0; lo < B->p && st == TC_OK; lo += per) {
        uint32_t hi = B->p - lo > per ? lo + per : B->p;
        st = per >= B->p ? tc_sched_emit(s, 0, &xf) : tc_sched_emit_part(s, 0, lo, hi, &xf);
        if (st || xf.oom)
            st = xf.oom ? tc_fail(err, TC_EINTERNAL, "flow bounds: out of memory")
                        : tc_fail(err, TC_EINTERNAL, "flow bounds: schedule %s: emitting its step failed",
                                  tc_algo_name(s->algo));
        for (size_t i = 0; i < xf.n && st == TC_OK; i++) {
            const tc_xfer *x = &xf.v[i];
            if (x->src >= B->p || x->dst >= B->p)
                st = tc_fail(err, TC_EINVAL,
                             "job 0: step 0 has a transfer from rank %u to rank %u, but the schedule has ranks "
                             "0..%u only",
                             x->src, x->dst, B->p - 1);
            else
                st = bd_message(B, pass, x, err);
        }
    }
    tc_xfers_free(&xf);
    return st;
}

/* The lower figure of each link: the bytes of the messages that start in
 * release bin k or later with a latency in bin j or above leave after bin
 * k's first slot, at the link's bandwidth, and the last of them is
 * delivered at least bin j's lower edge later. Sums of bytes, never
 * differences: a set without bytes stays 0 and bounds nothing. */
static double bd_links_lower(const bd *B, double *acc)
{
    double lower = 0;
    const tc_topo *t = B->S.t;
    uint32_t nl = B->nl;
    for (uint32_t l = 0; l < t->n_links; l++) {
        if (!(B->bytes[l] > 0) || !(B->S.cap[l] > 0))
            continue;
        const double *cell = B->bins + (size_t)l * B->nb * nl;
        for (uint32_t j = 0; j < nl; j++)
            acc[j] = 0; /* acc[j]: bytes of bins (>= k, >= j) */
        for (uint32_t k = B->nb; k-- > 0;) {
            double row = 0; /* bins (k, >= j) */
            double from = (1.0 + (double)k * B->width) * B->alpha;
            for (uint32_t j = nl; j-- > 0;) {
                row += cell[(size_t)k * nl + j];
                acc[j] += row;
                if (acc[j] > 0)
                    lower = fmax(lower, from + acc[j] / B->S.cap[l] + bd_latedge(B, j));
            }
        }
    }
    return lower;
}

/* flow_sim.h */
tc_status tc_fl_bounds_run(const tc_topo *t, const tc_flow_job *jobs, size_t njobs, const tc_flow_opts *o,
                        tc_flow_result *res, tc_err *err)
{
    tc_status st = bd_check(t, jobs, njobs, o, err);
    if (st)
        return st;
    bd B;
    st = bd_init(&B, t, &jobs[0], o, err);
    if (st == TC_OK)
        st = bd_pass(&B, 0, err);
    if (st == TC_OK && !(B.lat_lo <= B.lat_hi))
        B.lat_lo = B.lat_hi = 0; /* no message over the network */
    if (st == TC_OK)
        st = bd_pass(&B, 1, err);
    if (st == TC_OK && !(res->jobs = calloc(1, sizeof *res->jobs)))
        st = tc_fail(err, TC_EINTERNAL, "flow bounds: out of memory");
    if (st == TC_OK) {
        double acc[BD_LATS];
        double lower = fmax(B.lower, bd_links_lower(&B, acc));
        /* the two figures are computed apart, each rounded: the interval
         * never reads inverted */
        double upper = fmax(B.upper, lower);
        res->njobs = 1;
        tc_flow_job_result *x = &res->jobs[0];
        x->start_s = jobs[0].start_s;
        x->finish_s = jobs[0].start_s + lower;
        x->time_s = lower;
        x->transfers = B.transfers;
        res->makespan_s = lower;
        res->bounded = true;
        res->upper_s = upper;
        tc_fl_hot_links(t, B.bytes, B.S.cap, lower, res);
    }
    bd_free(&B);
    return st;
}

/* flow_sim.h */
double tc_fl_bounds_mem(const tc_topo *t, const tc_flow_job *job, const tc_flow_opts *o)
{
    const tc_sched *s = job->sched;
    if (!s || s->nphases < 1)
        return 0;
    double L = t->n_links ? t->n_links : 1;
    uint32_t nb, nl;
    bd_nbins(t, s->phases[0].fanout, t->alpha, &nb, &nl);
    double stride = tc_fl_max_incidences(t, o->multipath);
    double part = (double)bd_chunk_senders(s) * s->phases[0].fanout;
    return L * ((double)nb * nl + 3) * sizeof(double) + (double)s->req.p * sizeof(uint32_t) +
           stride * (sizeof(uint32_t) + sizeof(double)) + part * sizeof(tc_xfer);
}
