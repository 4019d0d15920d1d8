/*
 * sched.c - the schedule IR: transfer lists, phases, and the plumbing every
 * algorithm shares (names, parsing, validity, dispatch).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "coll/algos.h"

void tc_xfers_init(tc_xfers *x, bool with_data)
{
    memset(x, 0, sizeof *x);
    x->with_data = with_data;
}

void tc_xfers_clear(tc_xfers *x)
{
    x->n = 0;
    x->nseg = 0;
    x->oom = false; /* a failure of the last step's emission is not the next one's */
}

void tc_xfers_free(tc_xfers *x)
{
    free(x->v);
    free(x->segs);
    bool wd = x->with_data;
    memset(x, 0, sizeof *x);
    x->with_data = wd;
}

bool tc_xfers_grow(tc_xfers *x)
{
    size_t cap = x->cap ? 2 * x->cap : 256;
    tc_xfer *v = realloc(x->v, cap * sizeof *v);
    if (!v) {
        x->oom = true;
        return false;
    }
    x->v = v;
    x->cap = cap;
    return true;
}

bool tc_xfers_reserve(tc_xfers *x, size_t n)
{
    if (n <= x->cap)
        return true;
    tc_xfer *v = x->n ? realloc(x->v, n * sizeof *v) : malloc(n * sizeof *v);
    if (!v) {
        x->oom = true;
        return false;
    }
    if (!x->n)
        free(x->v);
    x->v = v;
    x->cap = n;
    return true;
}

bool tc_xfers_add_copies(tc_xfers *x, tc_xfer t, size_t n)
{
    while (x->cap - x->n < n)
        if (!tc_xfers_grow(x))
            return false;
    tc_xfer *v = x->v + x->n;
    for (size_t i = 0; i < n; i++) {
        v[i].src = t.src;
        v[i].dst = t.dst;
        v[i].bytes = t.bytes;
        v[i].seg_off = (uint32_t)x->nseg;
        v[i].seg_cnt = 0;
        v[i].reduce = t.reduce;
        v[i].lane = t.lane;
        v[i].piped = t.piped;
    }
    x->n += n;
    return true;
}

void tc_xfers_seg(tc_xfers *x, uint32_t src_slot, uint32_t dst_slot, uint32_t count)
{
    if (!x->with_data || x->n == 0 || count == 0)
        return;
    /* A run that continues the transfer's last segment extends it: block
     * sets built one block at a time stay a few segments. */
    tc_xfer *t = &x->v[x->n - 1];
    if (t->seg_cnt > 0) {
        tc_seg *g = &x->segs[x->nseg - 1];
        if (g->src_slot + g->count == src_slot && g->dst_slot + g->count == dst_slot) {
            g->count += count;
            return;
        }
    }
    if (x->nseg == x->segcap) {
        size_t cap = x->segcap ? 2 * x->segcap : 256;
        tc_seg *v = realloc(x->segs, cap * sizeof *v);
        if (!v) {
            x->oom = true;
            return;
        }
        x->segs = v;
        x->segcap = cap;
    }
    x->segs[x->nseg++] = (tc_seg){src_slot, dst_slot, count};
    x->v[x->n - 1].seg_cnt++;
}

tc_phase *tc_sched_add_phase(tc_sched *s, uint32_t repeat, tc_pattern pat, int64_t arg,
                             double bytes, const char *label)
{
    if (repeat == 0)
        return NULL;
    if (s->nphases == s->phase_cap) {
        uint32_t cap = s->phase_cap ? 2 * s->phase_cap : 8;
        tc_phase *v = realloc(s->phases, cap * sizeof *v);
        if (!v)
            return NULL;
        s->phases = v;
        s->phase_cap = cap;
    }
    tc_phase *ph = &s->phases[s->nphases++];
    memset(ph, 0, sizeof *ph);
    ph->first_step = s->nsteps;
    ph->repeat = repeat;
    ph->pat = pat;
    ph->arg = arg;
    /* The common case: every rank sends and receives at most one transfer,
     * of the phase's largest size. Algorithms override what differs. */
    ph->fanout = 1;
    ph->fanin = 1;
    ph->bytes = bytes;
    ph->rank_bytes = bytes;
    ph->rank_bytes_in = bytes;
    if (label) {
        strncpy(ph->label, label, sizeof ph->label - 1);
        ph->label[sizeof ph->label - 1] = '\0';
    }
    s->nsteps += repeat;
    return ph;
}

double tc_sched_scale(const tc_sched *s, double bytes)
{
    if (!s->req.elt)
        return s->req.bytes > 0 ? bytes / s->req.bytes : 1;
    return s->blk_bytes > 0 ? tc_block_bytes(bytes, s->req.elt, s->nblk) / s->blk_bytes : 1;
}

void tc_sched_set_bytes(tc_sched *s, double bytes)
{
    double f = tc_sched_scale(s, bytes);
    s->req.bytes = bytes;
    s->blk_bytes *= f;
    for (uint32_t i = 0; i < s->nphases; i++) {
        s->phases[i].bytes *= f;
        s->phases[i].rank_bytes *= f;
        s->phases[i].rank_bytes_in *= f;
    }
}

const tc_phase *tc_sched_phase_of(const tc_sched *s, uint32_t step)
{
    /* Binary search: phases are in step order. */
    uint32_t lo = 0, hi = s->nphases;
    while (hi - lo > 1) {
        uint32_t mid = (lo + hi) / 2;
        if (s->phases[mid].first_step <= step)
            lo = mid;
        else
            hi = mid;
    }
    return s->nphases ? &s->phases[lo] : NULL;
}

tc_status tc_sched_emit(const tc_sched *s, uint32_t step, tc_xfers *out)
{
    tc_xfers_clear(out);
    if (step >= s->nsteps)
        return TC_EINTERNAL;
    tc_status st = s->emit(s, step, out);
    if (st == TC_OK && out->oom)
        st = TC_EINTERNAL;
    return st;
}

uint32_t tc_sched_part_senders(const tc_sched *s, const tc_phase *ph, size_t chunk)
{
    uint32_t p = s->req.p;
    /* a sender's transfers: its fan-out and, in all-to-all, its own block */
    uint64_t per = (uint64_t)ph->fanout + 1, n = chunk / per;
    if (!s->emit_part || (uint64_t)p * per <= chunk)
        return p;
    return n < 1 ? 1 : n > p ? p : (uint32_t)n;
}

tc_status tc_sched_emit_part(const tc_sched *s, uint32_t step, uint32_t lo, uint32_t hi, tc_xfers *out)
{
    tc_xfers_clear(out);
    if (step >= s->nsteps || !s->emit_part || lo > hi || hi > s->req.p)
        return TC_EINTERNAL;
    tc_status st = s->emit_part(s, step, lo, hi, out);
    if (st == TC_OK && out->oom)
        st = TC_EINTERNAL;
    return st;
}

tc_status tc_sched_count(const tc_sched *s, uint64_t *transfers, double *bytes, tc_err *err)
{
    /* The IR guarantees that the steps of a phase carry identical traffic
     * (the data checker, coll/check.c, verifies it step by step): a phase is its first step
     * times its repeat, counted in 64 bits (a ring all-reduce on 65,536
     * ranks has 2 x 65,535 x 65,536 transfers, above 2^32). */
    *transfers = 0;
    *bytes = 0;
    tc_xfers x;
    tc_xfers_init(&x, false);
    tc_status st = TC_OK;
    for (uint32_t i = 0; i < s->nphases && st == TC_OK; i++) {
        const tc_phase *ph = &s->phases[i];
        if (!ph->repeat)
            continue;
        if (ph->blk_xfers) {
            *transfers += ph->blk_xfers * ph->repeat;
            *bytes += (double)ph->blk_xfers * tc_phase_xfer_bytes(s, ph) * ph->repeat;
            continue;
        }
        /* the step in parts of senders where it is all-pairs (parts of
         * 256 Ki transfers, 8 MiB: counting keeps nothing of them) */
        uint32_t p = s->req.p, nps = tc_sched_part_senders(s, ph, (size_t)1 << 18);
        uint64_t n = 0;
        double b = 0;
        for (uint32_t lo = 0; lo < p && st == TC_OK; lo += nps) {
            uint32_t hi = p - lo > nps ? lo + nps : p;
            if ((st = nps >= p ? tc_sched_emit(s, ph->first_step, &x)
                               : tc_sched_emit_part(s, ph->first_step, lo, hi, &x))) {
                st = x.oom ? tc_fail(err, TC_EINTERNAL, "out of memory")
                           : tc_fail(err, TC_EINTERNAL, "schedule %s: emitting step %u failed", tc_algo_name(s->algo),
                                     ph->first_step);
                break;
            }
            for (size_t k = 0; k < x.n; k++)
                b += x.v[k].bytes;
            n += x.n;
        }
        *transfers += n * ph->repeat;
        *bytes += b * ph->repeat;
    }
    tc_xfers_free(&x);
    return st;
}

void tc_sched_free(tc_sched *s)
{
    if (!s)
        return;
    if (s->free_state)
        s->free_state(s->state);
    else
        free(s->state);
    free(s->phases);
    free(s->lat_pairs);
    free(s->sw_rank);
    free(s->sw_level);
    free(s->sw_pick);
    free(s);
}

bool tc_algo_per_size(tc_algo a)
{
    return tc_algo_is_nccl(a) || a == TC_ALGO_MPICH;
}

bool tc_req_per_size(const tc_coll_req *req, tc_algo a)
{
    return tc_algo_per_size(a) ||
           ((a == TC_ALGO_DBTREE || a == TC_ALGO_DBTREE_FA) && req->chunk_bytes > 0 && req->chunks == 0);
}

bool tc_algo_is_nccl(tc_algo a)
{
    return a == TC_ALGO_NCCL_RING || a == TC_ALGO_NCCL || a == TC_ALGO_NCCL_TREE || a == TC_ALGO_NCCL_NVLS ||
           a == TC_ALGO_NCCL_NVLS_TREE || a == TC_ALGO_NCCL_PAT || a == TC_ALGO_NCCL_A2A ||
           a == TC_ALGO_NCCL_COLLNET_CHAIN || a == TC_ALGO_NCCL_COLLNET_DIRECT;
}

const char *tc_nccl_algo_label(tc_algo impl)
{
    switch (impl) {
    case TC_ALGO_NCCL_TREE: return "Tree";
    case TC_ALGO_NCCL_NVLS: return "NVLS";
    case TC_ALGO_NCCL_NVLS_TREE: return "NVLSTree";
    case TC_ALGO_NCCL_PAT: return "PAT";
    case TC_ALGO_NCCL_A2A: return "AllToAll";
    case TC_ALGO_NCCL_COLLNET_CHAIN: return "CollNetChain";
    case TC_ALGO_NCCL_COLLNET_DIRECT: return "CollNetDirect";
    default: return "Ring";
    }
}

const char *tc_nccl_op_label(tc_algo impl, tc_op op)
{
    return impl == TC_ALGO_NCCL_A2A && op == TC_OP_SENDRECV ? "SendRecv" : tc_nccl_algo_label(impl);
}

/* ---- names ---- */

static const char *op_names[TC_OP_COUNT] = {
    "allreduce", "reducescatter", "allgather", "alltoall", "broadcast", "reduce", "sendrecv"};

static const char *algo_names[TC_ALGO_COUNT] = {
    "ring", "biring", "rd", "rhd", "binomial", "dbtree", "bruck", "pairwise", "direct",
    "torus", "torus-bi", "torus-mp", "swing", "hier", "shift", "scatter-ring", "rsg", "neighbor", "segring",
    "hier-dc", "scattered", "scatter-rd", "auto", "nccl-ring", "nccl", "nccl-tree", "nccl-nvls", "nccl-nvls-tree", "nccl-pat", "nccl-a2a",
    "nccl-collnet-chain", "nccl-collnet-direct", "ring-fa", "torus-fa", "torus-bi-fa", "torus-mp-fa",
    "dbtree-fa", "mpich"};

const char *tc_op_name(tc_op op)
{
    return (unsigned)op < TC_OP_COUNT ? op_names[op] : "?";
}

const char *tc_algo_name(tc_algo a)
{
    return (unsigned)a < TC_ALGO_COUNT ? algo_names[a] : "?";
}

tc_status tc_op_parse(const char *s, tc_op *out, tc_err *err)
{
    for (int i = 0; i < TC_OP_COUNT; i++)
        if (s && strcmp(s, op_names[i]) == 0) {
            *out = (tc_op)i;
            return TC_OK;
        }
    return tc_fail(err, TC_EINVAL,
                   "unknown operation '%s': accepted are allreduce, reducescatter, allgather, alltoall, broadcast, reduce, "
                   "sendrecv",
                   s ? s : "");
}

double tc_op_busbw_factor(tc_op op, uint32_t p)
{
    /* sendrecv: nccl-tests' SendRecvGetBw, factor 1 whatever the ranks
     * (v2.13.10 src/sendrecv.cu:38-44) */
    if (p <= 1)
        return op == TC_OP_BROADCAST || op == TC_OP_REDUCE || op == TC_OP_SENDRECV ? 1.0 : 0.0;
    switch (op) {
    case TC_OP_ALLREDUCE: return 2.0 * (p - 1) / p;
    case TC_OP_REDUCESCATTER:
    case TC_OP_ALLGATHER:
    case TC_OP_ALLTOALL: return (double)(p - 1) / p;
    default: return 1.0;
    }
}

/* The element types, in tc_dtype_code's order: topocc's name, bytes,
 * nccl-tests' name (test_typenames, src/common.cu of NVIDIA/nccl-tests v2.13.10;
 * f8e4m3 and f8e5m2 from v2.15.0). */
static const struct {
    const char *name;
    uint32_t size;
    const char *nccl;
} dtypes[] = {{"float32", 4, "float"}, {"fp16", 2, "half"},     {"bf16", 2, "bfloat16"}, {"fp8", 1, "f8e4m3"},
              {"int8", 1, "int8"},     {"fp64", 8, "double"},   {"uint8", 1, "uint8"},   {"int32", 4, "int32"},
              {"uint32", 4, "uint32"}, {"int64", 8, "int64"},   {"uint64", 8, "uint64"}, {"fp8e5m2", 1, "f8e5m2"}};
#define NDTYPES (sizeof dtypes / sizeof *dtypes)

uint8_t tc_dtype_code(const char *name)
{
    for (size_t i = 0; name && i < NDTYPES; i++)
        if (strcmp(name, dtypes[i].name) == 0)
            return (uint8_t)i;
    return 0;
}

const char *tc_dtype_name(uint8_t code)
{
    return code < NDTYPES ? dtypes[code].name : "float32";
}

uint32_t tc_dtype_size(const char *name)
{
    for (size_t i = 0; name && i < NDTYPES; i++)
        if (strcmp(name, dtypes[i].name) == 0)
            return dtypes[i].size;
    return 0;
}

const char *tc_dtype_nccl_name(const char *name)
{
    for (size_t i = 0; name && i < NDTYPES; i++)
        if (strcmp(name, dtypes[i].name) == 0)
            return dtypes[i].nccl;
    return "float";
}

static const char *const redops[] = {"sum", "prod", "min", "max", "avg"};

bool tc_redop_parse(const char *name, tc_redop *out)
{
    for (size_t i = 0; name && i < sizeof redops / sizeof *redops; i++)
        if (strcmp(name, redops[i]) == 0) {
            *out = (tc_redop)i;
            return true;
        }
    return false;
}

const char *tc_redop_name(tc_redop op)
{
    return (unsigned)op < sizeof redops / sizeof *redops ? redops[op] : "sum";
}

bool tc_op_reduces(tc_op op)
{
    return op == TC_OP_ALLREDUCE || op == TC_OP_REDUCESCATTER || op == TC_OP_REDUCE;
}

const char *tc_redop_column(tc_op op, uint8_t redop)
{
    /* sendrecv: nccl-tests passes its -o (sum by default) to TimeTest,
     * which prints it (v2.13.10 src/sendrecv.cu:103, src/common.cu:73) */
    return tc_op_reduces(op) || op == TC_OP_SENDRECV
               ? tc_redop_name((tc_redop)redop)
               : "none";
}

bool tc_nccl_nvls_redop_ok(uint8_t dtype, uint8_t redop)
{
    const char *n = dtype < NDTYPES ? dtypes[dtype].name : "float32";
    /* ncclAvg is PreMulSum (floating point) or SumPostDiv (integers),
     * ncclProd is Prod: neither has an NVLS kernel */
    bool sum = redop == TC_REDOP_SUM, minmax = redop == TC_REDOP_MIN || redop == TC_REDOP_MAX;
    if (!strcmp(n, "int32") || !strcmp(n, "uint32") || !strcmp(n, "int64") || !strcmp(n, "uint64") ||
        !strcmp(n, "fp16") || !strcmp(n, "bf16"))
        return sum || minmax;
    if (!strcmp(n, "float32") || !strcmp(n, "fp64"))
        return sum;
    return false; /* int8, uint8 and the 8-bit floats: no NVLS kernel */
}

static bool per_rank_count(tc_op op)
{
    return op == TC_OP_ALLGATHER || op == TC_OP_REDUCESCATTER || op == TC_OP_ALLTOALL;
}

double tc_coll_rounded_bytes(tc_op op, uint32_t p, double bytes, uint32_t elt)
{
    if (elt == 0 || !(bytes > 0))
        return bytes;
    uint64_t count = (uint64_t)(bytes / elt);
    if (per_rank_count(op) && p > 0) {
        uint64_t align = elt < 16 ? 16 / elt : 1;
        count = (count / p) & ~(align - 1);
        count *= p;
    }
    return (double)count * elt;
}

tc_status tc_coll_round(tc_coll_req *req, tc_err *err)
{
    double b = tc_coll_rounded_bytes(req->op, req->p, req->bytes, req->elt);
    if (req->elt && !(b > 0)) {
        uint64_t align = req->elt < 16 ? 16 / req->elt : 1;
        double least = per_rank_count(req->op) ? (double)align * req->p * req->elt : req->elt;
        return tc_fail(err, TC_EINVAL,
                       "%s of %g bytes over %u ranks is zero whole elements of %u bytes%s: give at least %.0f bytes",
                       tc_op_name(req->op), req->bytes, req->p, req->elt,
                       per_rank_count(req->op) ? " per rank after nccl-tests' 16-byte rounding" : "", least);
    }
    req->bytes = b;
    return TC_OK;
}

double tc_block_bytes(double bytes, uint32_t elt, uint32_t nblk)
{
    if (nblk == 0)
        return 0;
    if (elt == 0)
        return bytes / nblk;
    uint64_t count = (uint64_t)(bytes / elt);
    return (double)((count + nblk - 1) / nblk) * elt;
}

tc_status tc_algo_parse(const char *s, tc_coll_req *req, tc_err *err)
{
    tc_spec sp;
    tc_status st = tc_spec_parse(s, &sp, err);
    if (st)
        return st;
    int found = -1;
    for (int i = 0; i < TC_ALGO_COUNT; i++)
        if (strcmp(sp.kind, algo_names[i]) == 0)
            found = i;
    if (found < 0) {
        /* the nearest name, and where the list is: all of them do not fit
         * in one error line */
        const char *best = algo_names[0];
        size_t bd = (size_t)-1;
        for (int i = 0; i < TC_ALGO_COUNT; i++) {
            /* NCCL's algorithms by their NCCL names (nvls, pat, ...):
             * topocc's carry the nccl- prefix */
            size_t d = strncmp(algo_names[i], "nccl-", 5) == 0 && strcmp(sp.kind, algo_names[i] + 5) == 0
                           ? 0
                           : tc_edit_distance(sp.kind, algo_names[i]);
            if (d < bd)
                bd = d, best = algo_names[i];
        }
        return tc_fail(err, TC_EINVAL,
                       "unknown algorithm '%s' (did you mean '%s'? topocc collective --help lists all %d: ring, rhd, "
                       "dbtree, direct, ..., nccl, mpich)",
                       sp.kind, best, TC_ALGO_COUNT);
    }
    req->algo = (tc_algo)found;
    const char *v = tc_spec_get(&sp, "chunks");
    if (v) {
        uint32_t c;
        if (tc_parse_u32(v, &c, NULL) != TC_OK || c > 65536)
            return tc_fail(err, TC_EINVAL, "invalid chunks '%s' in algorithm '%s': expected an integer from 1 to 65536", v, s);
        req->chunks = c;
    }
    v = tc_spec_get(&sp, "root");
    if (v) {
        uint32_t r;
        if (strcmp(v, "0") == 0)
            r = 0;
        else if (tc_parse_u32(v, &r, NULL) != TC_OK)
            return tc_fail(err, TC_EINVAL, "invalid root '%s' in algorithm '%s': expected a rank number", v, s);
        req->root = r;
    }
    req->variant = TC_VARIANT_DEFAULT;
    v = tc_spec_get(&sp, "order");
    if (v) {
        if (req->algo != TC_ALGO_RHD)
            return tc_fail(err, TC_EINVAL, "order= in algorithm '%s': only rhd has it (rhd:order=near|far)", s);
        if (strcmp(v, "near") == 0)
            req->variant = TC_VARIANT_NEAR;
        else if (strcmp(v, "far") == 0)
            req->variant = TC_VARIANT_FAR;
        else
            return tc_fail(err, TC_EINVAL, "invalid order '%s' in algorithm '%s': accepted are near, far", v, s);
    }
    v = tc_spec_get(&sp, "tree");
    if (v) {
        if (req->algo != TC_ALGO_BINOMIAL)
            return tc_fail(err, TC_EINVAL, "tree= in algorithm '%s': only binomial has it (binomial:tree=lowbit|highbit)",
                           s);
        if (strcmp(v, "lowbit") == 0)
            req->variant = TC_VARIANT_LOWBIT;
        else if (strcmp(v, "highbit") == 0)
            req->variant = TC_VARIANT_HIGHBIT;
        else
            return tc_fail(err, TC_EINVAL, "invalid tree '%s' in algorithm '%s': accepted are lowbit, highbit", v, s);
    }
    req->channels = req->min_channels = req->max_channels = req->min_ctas = req->max_ctas = 0;
    req->proto = TC_PROTO_NONE;
    req->proto_mask = 0;
    req->buffsize = 0;
    bool nccl = tc_algo_is_nccl(req->algo);
    static const char *const counts[] = {"channels", "minch", "maxch", "mincta", "maxcta"};
    uint32_t *cdst[] = {&req->channels, &req->min_channels, &req->max_channels, &req->min_ctas, &req->max_ctas};
    for (int k = 0; k < 5; k++) {
        v = tc_spec_get(&sp, counts[k]);
        if (!v)
            continue;
        uint32_t c = 0;
        if (!nccl)
            return tc_fail(err, TC_EINVAL, "%s= in algorithm '%s': only nccl-ring and nccl have it", counts[k], s);
        /* a minimum of 0 asks for nothing, as NCCL_MIN_NCHANNELS=0 does */
        bool is_min = k == 1 || k == 3;
        if (!(is_min && strcmp(v, "0") == 0) && (tc_parse_u32(v, &c, NULL) != TC_OK || c < 1 || c > 32))
            return tc_fail(err, TC_EINVAL, "invalid %s '%s' in algorithm '%s': expected %s to 32", counts[k], v, s,
                           is_min ? "0" : "1");
        *cdst[k] = c;
    }
    v = tc_spec_get(&sp, "buffsize");
    if (v) {
        double b;
        tc_err e2;
        if (!nccl)
            return tc_fail(err, TC_EINVAL, "buffsize= in algorithm '%s': only nccl-ring and nccl have it", s);
        if (tc_parse_size(v, &b, &e2) != TC_OK || b < 65536 || b > 1073741824.0)
            return tc_fail(err, TC_EINVAL, "invalid buffsize '%s' in algorithm '%s': expected 64KiB to 1GiB", v, s);
        req->buffsize = b;
    }
    req->throttle = 0;
    v = tc_spec_get(&sp, "throttle");
    if (v) {
        uint32_t k;
        if (req->algo != TC_ALGO_SCATTERED && req->algo != TC_ALGO_MPICH)
            return tc_fail(err, TC_EINVAL,
                           "throttle= in algorithm '%s': only scattered and mpich have it (scattered:throttle=K)", s);
        if (strcmp(v, "0") == 0)
            k = TC_THROTTLE_ALL;
        else if (tc_parse_u32(v, &k, NULL) != TC_OK || k > 1048576)
            return tc_fail(err, TC_EINVAL,
                           "invalid throttle '%s' in algorithm '%s': expected 0 (all at once) or 1 to 1048576", v, s);
        req->throttle = k;
    }
    req->pxn = 0;
    v = tc_spec_get(&sp, "pxn");
    if (v) {
        if (req->algo != TC_ALGO_NCCL_A2A && req->algo != TC_ALGO_NCCL)
            return tc_fail(err, TC_EINVAL, "pxn= in algorithm '%s': only nccl-a2a and nccl (all-to-all) have it", s);
        if (strcmp(v, "0") && strcmp(v, "1"))
            return tc_fail(err, TC_EINVAL, "invalid pxn '%s' in algorithm '%s': accepted are 0 and 1 (1: through the "
                                           "NIC of the destination's rail, NCCL's default)",
                           v, s);
        req->pxn = v[0] == '1' ? 1 : 2;
    }
    req->nvls_off = false;
    v = tc_spec_get(&sp, "nvls");
    if (v) {
        if (req->algo != TC_ALGO_NCCL)
            return tc_fail(err, TC_EINVAL, "nvls= in algorithm '%s': only nccl has it (nccl:nvls=0)", s);
        if (strcmp(v, "0") && strcmp(v, "1"))
            return tc_fail(err, TC_EINVAL, "invalid nvls '%s' in algorithm '%s': accepted are 0 (NCCL_NVLS_ENABLE=0) "
                                           "and 1 (NCCL's default)",
                           v, s);
        req->nvls_off = v[0] == '0';
    }
    req->algo_mask = 0;
    v = tc_spec_get(&sp, "algo");
    if (v) {
        if (req->algo != TC_ALGO_NCCL)
            return tc_fail(err, TC_EINVAL, "algo= in algorithm '%s': only nccl has it (nccl:algo=Ring|Tree)", s);
        st = tc_nccl_algo_parse(v, &req->algo_mask, err);
        if (st) {
            char m[TC_ERR_LEN];
            snprintf(m, sizeof m, "%s", err->msg);
            return tc_fail(err, st, "algorithm '%s': %s", s, m);
        }
    }
    v = tc_spec_get(&sp, "proto");
    if (v) {
        if (!nccl)
            return tc_fail(err, TC_EINVAL, "proto= in algorithm '%s': only nccl-ring and nccl have it", s);
        st = tc_proto_parse(v, req->algo == TC_ALGO_NCCL, &req->proto, &req->proto_mask, err);
        if (st) {
            char m[TC_ERR_LEN];
            snprintf(m, sizeof m, "%s", err->msg);
            return tc_fail(err, st, "algorithm '%s': %s", s, m);
        }
    }
    if (nccl && req->chunks)
        return tc_fail(err, TC_EINVAL, "chunks= in algorithm '%s': NCCL chunks as its protocol does", s);
    if (req->algo == TC_ALGO_MPICH && req->chunks)
        return tc_fail(err, TC_EINVAL, "chunks= in algorithm '%s': mpich runs MPICH's algorithms as MPICH does", s);
    return tc_spec_check_unused(&sp, "algorithm",
                                "chunks (pipelining chunks), root (broadcast/reduce root rank), order (rhd: near, far), "
                                "tree (binomial: lowbit, highbit), throttle (scattered, mpich); nccl-ring and nccl: proto, channels, minch, maxch, "
                                "mincta, maxcta, buffsize; nccl: algo, nvls; nccl-a2a and nccl: pxn",
                                err);
}

/* Whether spec ("NAME:k=v,...") sets option key (root=0 sets no field). */
static bool spec_sets(const char *spec, const char *key)
{
    const char *p = spec ? strchr(spec, ':') : NULL;
    size_t kl = strlen(key);
    while (p) {
        p++;
        if (strncmp(p, key, kl) == 0 && p[kl] == '=')
            return true;
        p = strchr(p, ',');
    }
    return false;
}

tc_status tc_algo_check_options(const tc_coll_req *req, const char *spec, const tc_op *ops, int n, tc_err *err)
{
    static const tc_algo chunked[] = {TC_ALGO_RING,     TC_ALGO_BIRING,   TC_ALGO_DBTREE,      TC_ALGO_DBTREE_FA,
                                      TC_ALGO_HIER,     TC_ALGO_HIER_DC,  TC_ALGO_SEGRING,     TC_ALGO_TORUS,
                                      TC_ALGO_TORUS_BI, TC_ALGO_TORUS_MP, TC_ALGO_TORUS_FA,    TC_ALGO_TORUS_BI_FA,
                                      TC_ALGO_TORUS_MP_FA};
    bool takes = false;
    for (size_t i = 0; i < sizeof chunked / sizeof *chunked; i++)
        takes |= req->algo == chunked[i];
    if (req->chunks && !takes)
        return tc_fail(err, TC_EINVAL,
                       "chunks= in algorithm '%s': %s does not pipeline (ring, biring, dbtree, dbtree-fa, hier, hier-dc, "
                       "segring and the torus rings take chunks)",
                       spec, tc_algo_name(req->algo));
    bool rooted = false;
    for (int i = 0; i < n; i++)
        rooted |= ops[i] == TC_OP_BROADCAST || ops[i] == TC_OP_REDUCE;
    if ((req->root || spec_sets(spec, "root")) && n > 0 && !rooted)
        return tc_fail(err, TC_EINVAL, "root= in algorithm '%s': only broadcast and reduce have a root", spec);
    return TC_OK;
}

const char *tc_variant_name(tc_variant v)
{
    switch (v) {
    case TC_VARIANT_NEAR: return "order=near";
    case TC_VARIANT_FAR: return "order=far";
    case TC_VARIANT_LOWBIT: return "tree=lowbit";
    case TC_VARIANT_HIGHBIT: return "tree=highbit";
    default: return "";
    }
}

/* Appends ":opt" (the first option) or ",opt" to buf at *n. */
static void append_opt(char *buf, size_t len, size_t *n, bool *first, const char *opt)
{
    if (*n < len) {
        int k = snprintf(buf + *n, len - *n, "%s%s", *first ? ":" : ",", opt);
        if (k > 0)
            *n += (size_t)k;
    }
    *first = false;
}

char *tc_algo_format(const tc_coll_req *req, char *buf, size_t len)
{
    if (!len)
        return buf;
    int k = snprintf(buf, len, "%s", tc_algo_name(req->algo));
    size_t n = k > 0 ? (size_t)k : 0;
    bool first = true;
    char opt[32];
    if (req->chunks) {
        snprintf(opt, sizeof opt, "chunks=%u", req->chunks);
        append_opt(buf, len, &n, &first, opt);
    }
    if (req->root) {
        snprintf(opt, sizeof opt, "root=%u", req->root);
        append_opt(buf, len, &n, &first, opt);
    }
    if (req->variant != TC_VARIANT_DEFAULT)
        append_opt(buf, len, &n, &first, tc_variant_name(req->variant));
    if (req->throttle) {
        snprintf(opt, sizeof opt, "throttle=%u", req->throttle == TC_THROTTLE_ALL ? 0 : req->throttle);
        append_opt(buf, len, &n, &first, opt);
    }
    if (req->channels) {
        snprintf(opt, sizeof opt, "channels=%u", req->channels);
        append_opt(buf, len, &n, &first, opt);
    }
    if (req->pxn)
        append_opt(buf, len, &n, &first, req->pxn == 1 ? "pxn=1" : "pxn=0");
    if (req->nvls_off)
        append_opt(buf, len, &n, &first, "nvls=0");
    if (req->proto) {
        snprintf(opt, sizeof opt, "proto=%s", tc_proto_name(req->proto));
        append_opt(buf, len, &n, &first, opt);
    } else if (req->proto_mask) {
        /* as a list joined by '|' */
        size_t k = (size_t)snprintf(opt, sizeof opt, "proto=");
        for (int p = TC_PROTO_LL; p <= TC_PROTO_SIMPLE; p++)
            if (req->proto_mask & 1u << p)
                k += (size_t)snprintf(opt + k, sizeof opt - k, "%s%s", k > 6 ? "|" : "", tc_proto_name((tc_proto)p));
        append_opt(buf, len, &n, &first, opt);
    }
    if (req->algo_mask && req->algo_mask != 127) {
        /* NCCL_ALGO's syntax, '|' between names (',' separates options) */
        static const char *const names[7] = {"Ring", "Tree", "NVLS", "NVLSTree", "PAT", "CollNetDirect", "CollNetChain"};
        char list[96] = "algo=";
        for (int b = 0, k = 0; b < 7; b++)
            if (req->algo_mask & 1u << b)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", k++ ? "|" : "", names[b]);
        append_opt(buf, len, &n, &first, list);
    }
    const char *const bound[] = {"minch", "maxch", "mincta", "maxcta"};
    const uint32_t bval[] = {req->min_channels, req->max_channels, req->min_ctas, req->max_ctas};
    for (int b = 0; b < 4; b++)
        if (bval[b]) {
            snprintf(opt, sizeof opt, "%s=%u", bound[b], bval[b]);
            append_opt(buf, len, &n, &first, opt);
        }
    if (req->buffsize) {
        snprintf(opt, sizeof opt, "buffsize=%.0f", req->buffsize);
        append_opt(buf, len, &n, &first, opt);
    }
    return buf;
}

char *tc_algo_variant_name(tc_algo a, tc_variant v, char *buf, size_t len)
{
    tc_coll_req req = {.algo = a, .variant = v};
    return tc_algo_format(&req, buf, len);
}

/* ---- validity and dispatch ---- */

const tc_algo_impl *tc_algo_impl_of(tc_algo a)
{
    static const tc_algo_impl *table[TC_ALGO_COUNT] = {
        [TC_ALGO_RING] = &tc_impl_ring,         [TC_ALGO_BIRING] = &tc_impl_biring,
        [TC_ALGO_RD] = &tc_impl_rd,             [TC_ALGO_RHD] = &tc_impl_rhd,
        [TC_ALGO_BINOMIAL] = &tc_impl_binomial, [TC_ALGO_DBTREE] = &tc_impl_dbtree,
        [TC_ALGO_BRUCK] = &tc_impl_bruck,       [TC_ALGO_PAIRWISE] = &tc_impl_pairwise,
        [TC_ALGO_DIRECT] = &tc_impl_direct,     [TC_ALGO_TORUS] = &tc_impl_torus,
        [TC_ALGO_TORUS_BI] = &tc_impl_torus_bi, [TC_ALGO_TORUS_MP] = &tc_impl_torus_mp,
        [TC_ALGO_SWING] = &tc_impl_swing,       [TC_ALGO_HIER] = &tc_impl_hier,
        [TC_ALGO_SHIFT] = &tc_impl_shift,       [TC_ALGO_SCATTER_RING] = &tc_impl_scatter_ring,
        [TC_ALGO_RSG] = &tc_impl_rsg,           [TC_ALGO_NEIGHBOR] = &tc_impl_neighbor,
        [TC_ALGO_SEGRING] = &tc_impl_segring,   [TC_ALGO_HIER_DC] = &tc_impl_hier_dc, [TC_ALGO_SCATTERED] = &tc_impl_scattered, [TC_ALGO_SCATTER_RD] = &tc_impl_scatter_rd,
        [TC_ALGO_NCCL_RING] = &tc_impl_nccl_ring,
        [TC_ALGO_NCCL] = &tc_impl_nccl,         [TC_ALGO_NCCL_TREE] = &tc_impl_nccl_tree,
        [TC_ALGO_NCCL_NVLS] = &tc_impl_nccl_nvls, [TC_ALGO_NCCL_NVLS_TREE] = &tc_impl_nccl_nvls_tree,
        [TC_ALGO_NCCL_COLLNET_CHAIN] = &tc_impl_nccl_collnet_chain,
        [TC_ALGO_NCCL_COLLNET_DIRECT] = &tc_impl_nccl_collnet_direct,
        [TC_ALGO_RING_FA] = &tc_impl_ring_fa,   [TC_ALGO_TORUS_FA] = &tc_impl_torus_fa,
        [TC_ALGO_TORUS_BI_FA] = &tc_impl_torus_bi_fa, [TC_ALGO_TORUS_MP_FA] = &tc_impl_torus_mp_fa,
        [TC_ALGO_DBTREE_FA] = &tc_impl_dbtree_fa, [TC_ALGO_MPICH] = &tc_impl_mpich,
        [TC_ALGO_NCCL_PAT] = &tc_impl_nccl_pat,   [TC_ALGO_NCCL_A2A] = &tc_impl_nccl_a2a,
    };
    return (unsigned)a < TC_ALGO_COUNT ? table[a] : NULL;
}

void tc_coll_candidates(const tc_coll_req *req, int *lo, int *hi)
{
    *lo = req->algo == TC_ALGO_AUTO ? 0 : (int)req->algo;
    *hi = req->algo == TC_ALGO_AUTO ? TC_ALGO_AUTO : (int)req->algo + 1;
}

tc_coll_req tc_coll_candidate(const tc_coll_req *req, tc_algo a, double bytes)
{
    tc_coll_req r = *req;
    r.algo = a;
    r.bytes = bytes;
    if (req->algo == TC_ALGO_AUTO) {
        r.chunks = 0;
        r.variant = TC_VARIANT_DEFAULT;
    }
    return r;
}

void tc_phase_set_fan(tc_phase *ph, uint32_t fanout, uint32_t fanin, double each)
{
    ph->fanout = fanout;
    ph->fanin = fanin;
    ph->rank_bytes = fanout * each;
    ph->rank_bytes_in = fanin * each;
}

tc_status tc_sched_add_copy_phase(tc_sched *s, tc_err *err)
{
    tc_phase *ph = tc_sched_add_phase(s, 1, TC_PAT_GENERIC, 0, 0, "local copy");
    if (!ph)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    ph->fanout = ph->fanin = 0;
    return TC_OK;
}

/* sendrecv is point-to-point, no collective: only the algorithms that send
 * one message per peer run it (direct, MPI-style; nccl-a2a, NCCL's grouped
 * point-to-point; nccl, which runs nccl-a2a for it). The others' own
 * validity rules know collectives only. */
static bool runs_sendrecv(tc_algo a)
{
    return a == TC_ALGO_DIRECT || a == TC_ALGO_NCCL_A2A || a == TC_ALGO_NCCL;
}

/* Whether algorithm a's implementation takes (op, p, topo). */
static bool impl_valid(tc_op op, tc_algo a, uint32_t p, const tc_topo *topo, tc_err *err)
{
    const tc_algo_impl *im = tc_algo_impl_of(a);
    if (!im)
        return false;
    if (op == TC_OP_SENDRECV && !runs_sendrecv(a)) {
        tc_fail(err, TC_EINVAL, "sendrecv is point-to-point, one message from each rank to the next");
        return false;
    }
    if (topo && topo->kind == TC_TOPO_FULL && tc_algo_is_nccl(a)) {
        tc_fail(err, TC_EINVAL, "NCCL's algorithms model GPUs that reach other nodes through NICs on a Clos or "
                                "torus fabric, and a full mesh has no NICs");
        return false;
    }
    return im->valid(op, p, topo, err);
}

/* Lists the algorithms valid for (op, p, topo) into buf. */
static void list_valid(tc_op op, uint32_t p, const tc_topo *topo, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int a = 0; a < TC_ALGO_AUTO; a++) {
        if (impl_valid(op, (tc_algo)a, p, topo, NULL) && n < len)
            n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", algo_names[a]);
    }
    if (!buf[0])
        snprintf(buf, len, "none");
}

bool tc_coll_valid(tc_op op, tc_algo algo, uint32_t p, const tc_topo *topo, tc_err *err)
{
    if ((unsigned)op >= TC_OP_COUNT) {
        tc_fail(err, TC_EINVAL, "unknown operation");
        return false;
    }
    if (p == 0) {
        tc_fail(err, TC_EINVAL, "invalid rank count 0: expected at least 1");
        return false;
    }
    if (algo == TC_ALGO_AUTO) {
        for (int a = 0; a < TC_ALGO_AUTO; a++)
            if (impl_valid(op, (tc_algo)a, p, topo, NULL))
                return true;
        tc_fail(err, TC_EINVAL, "no algorithm implements %s on %u ranks", op_names[op], p);
        return false;
    }
    tc_err why;
    why.msg[0] = '\0';
    if (impl_valid(op, algo, p, topo, &why))
        return true;
    char list[256];
    list_valid(op, p, topo, list, sizeof list);
    if (op == TC_OP_SENDRECV && !runs_sendrecv(algo)) {
        /* list_valid names the MPI-style ones only: NCCL's too */
        tc_fail(err, TC_EINVAL, "algorithm '%s' does not run sendrecv (%s): the algorithms that can are direct, "
                                "nccl-a2a and nccl",
                tc_algo_name(algo), why.msg);
        return false;
    }
    if (why.msg[0])
        tc_fail(err, TC_EINVAL, "algorithm '%s' does not fit %s on %u ranks (%s): valid here are %s",
                tc_algo_name(algo), op_names[op], p, why.msg, list);
    else
        tc_fail(err, TC_EINVAL, "algorithm '%s' does not fit %s on %u ranks: valid here are %s",
                tc_algo_name(algo), op_names[op], p, list);
    return false;
}

tc_status tc_coll_build(const tc_coll_req *req, const tc_topo *topo, tc_sched **out, tc_err *err)
{
    *out = NULL;
    if (!(req->bytes > 0) || req->bytes > TC_MAX_BYTES)
        return tc_fail(err, TC_EINVAL, "invalid size %g bytes: must be above 0 and at most 2^60", req->bytes);
    if (req->algo == TC_ALGO_AUTO)
        return tc_fail(err, TC_EINTERNAL, "tc_coll_build: auto must be resolved by the evaluator");
    if ((req->op == TC_OP_BROADCAST || req->op == TC_OP_REDUCE) && req->root >= req->p)
        return tc_fail(err, TC_EINVAL, "invalid root %u: expected a rank from 0 to %u", req->root, req->p - 1);
    if (!tc_coll_valid(req->op, req->algo, req->p, topo, err))
        return TC_EINVAL;
    tc_sched *s = tc_calloc(1, sizeof *s);
    if (!s)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    s->req = *req;
    s->algo = req->algo;
    if (topo) {
        if (topo->kind == TC_TOPO_TORUS) {
            s->ndims = topo->ndims;
            memcpy(s->dims, topo->dims, sizeof s->dims);
            memcpy(s->wrap, topo->wrap, sizeof s->wrap);
        }
        s->node_size = topo->node_size > 1 ? topo->node_size : 1;
    } else {
        s->node_size = 1;
    }
    tc_status st = tc_algo_impl_of(req->algo)->build(req, topo, s, err);
    if (st == TC_OK && ((s->nphases == 0 && req->p > 1) || !s->emit || s->nblk == 0 || s->nslots < s->nblk))
        st = tc_fail(err, TC_EINTERNAL, "algorithm %s built an incomplete schedule", tc_algo_name(req->algo));
    if (st) {
        tc_sched_free(s);
        return st;
    }
    *out = s;
    return TC_OK;
}
