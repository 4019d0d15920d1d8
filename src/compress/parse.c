/*
 * parse.c - codec names, defaults and specs ("topk:ratio=0.01,ef=0").
 * Defaults: ratio 0.01, rank 4 (the DDP hook's default is 1; 4 is the
 * paper's usual setting), start 1000 and min_rate 2 (PowerSGDState's
 * start_powerSGD_iter and min_compression_rate, PyTorch v1.13.1), thc bits
 * 4, seed 1, error feedback on for the biased codecs (topk, topk-shared,
 * randk, powersgd, powersgd-batched, signsgd).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "compress/codec_int.h"

static const char *const names[TC_CODEC_COUNT] = {"fp32", "fp16",  "bf16", "int8",     "int4",
                                                   "thc",  "topk", "topk-shared", "randk", "powersgd",
                                                   "powersgd-batched", "signsgd"};

/* keys each kind accepts, for parsing and for the messages */
static const char *const keys_of[TC_CODEC_COUNT] = {"path, servers, ef",
                                                     "path, servers, ef",
                                                     "path, servers, ef",
                                                     "path, servers, seed, ef",
                                                     "path, servers, seed, ef",
                                                     "bits, path, servers, seed, ef",
                                                     "ratio, path, seed, ef",
                                                     "ratio, path, seed, ef",
                                                     "ratio, path, seed, ef",
                                                     "rank, start, min_rate, path, seed, ef",
                                                     "rank, start, path, seed, ef",
                                                     "path, ef"};

static const char *const path_names[TC_PATH_COUNT] = {"allreduce", "requant-ring", "requant-tree", "ps", "switch"};

/* Paths per kind, bit 1 << path (docs/MODEL.md, "Aggregation paths"):
 * re-quantizing needs a quantizer whose partial sums can be re-encoded
 * (casts, int8, int4); ps needs contributions a server can add (fp32, the
 * casts, the quantizers, THC's integers); switch needs an integer sum
 * (int8 and int4 on the shared scale, THC's table indices). */
#define P_(x) (1u << TC_PATH_##x)
static const unsigned paths_of[TC_CODEC_COUNT] = {
    P_(ALLREDUCE) | P_(PS),
    P_(ALLREDUCE) | P_(REQUANT_RING) | P_(REQUANT_TREE) | P_(PS),
    P_(ALLREDUCE) | P_(REQUANT_RING) | P_(REQUANT_TREE) | P_(PS),
    P_(ALLREDUCE) | P_(REQUANT_RING) | P_(REQUANT_TREE) | P_(PS) | P_(SWITCH),
    P_(ALLREDUCE) | P_(REQUANT_RING) | P_(REQUANT_TREE) | P_(PS) | P_(SWITCH),
    P_(ALLREDUCE) | P_(PS) | P_(SWITCH),
    P_(ALLREDUCE), P_(ALLREDUCE), P_(ALLREDUCE), P_(ALLREDUCE), P_(ALLREDUCE), P_(ALLREDUCE)};
#undef P_

#define ACCEPTED_CODECS \
    "fp32, fp16, bf16, int8, int4, thc, topk, topk-shared, randk, powersgd, powersgd-batched, signsgd"
#define PSGD_START 1000u /* PowerSGDState(start_powerSGD_iter=1_000) */
#define PSGD_MIN_RATE 2.0 /* PowerSGDState(min_compression_rate=2) */

const char *tc_codec_kind_name(tc_codec_kind k)
{
    return (unsigned)k < TC_CODEC_COUNT ? names[k] : "?";
}

const char *tc_codec_path_name(tc_codec_path p)
{
    return (unsigned)p < TC_PATH_COUNT ? path_names[p] : "?";
}

bool tc_codec_path_valid(tc_codec_kind k, tc_codec_path p)
{
    return (unsigned)k < TC_CODEC_COUNT && (unsigned)p < TC_PATH_COUNT && (paths_of[k] >> p & 1u);
}

void tc_codec_paths_of(tc_codec_kind k, char *buf, size_t len)
{
    size_t at = 0;
    if (len)
        buf[0] = '\0';
    for (int p = 0; p < TC_PATH_COUNT && at < len; p++)
        if (tc_codec_path_valid(k, (tc_codec_path)p)) {
            int w = snprintf(buf + at, len - at, "%s%s", at ? ", " : "", path_names[p]);
            at += w > 0 ? (size_t)w : 0;
        }
}

uint32_t tc_codec_servers(const tc_codec_spec *c, uint32_t n)
{
    return c->path != TC_PATH_PS ? 0 : c->servers ? c->servers : n;
}

uint32_t tc_codec_server_worker(uint32_t s, uint32_t S, uint32_t n)
{
    return S ? (uint32_t)((uint64_t)s * n / S) : 0;
}

/* A spec made by hand may not have been through tc_codec_parse: the path
 * against the kind too. A switch sums integers of b + ceil(log2 n) bits;
 * one wider than its 32-bit integers (assumed) would overflow, which b <= 8
 * and n <= 2^24 never reach. */
tc_status tc_codec_check_workers(const tc_codec_spec *c, uint32_t n, tc_err *err)
{
    const char *name = tc_codec_kind_name(c->kind);
    if (!tc_codec_path_valid(c->kind, c->path)) {
        char ok[128];
        tc_codec_paths_of(c->kind, ok, sizeof ok);
        return tc_fail(err, TC_EINVAL, "%s: path=%s is not accepted: accepted paths for %s are %s", name,
                       tc_codec_path_name(c->path), name, ok);
    }
    uint32_t lg = 0;
    while (lg < 32 && (1ull << lg) < n)
        lg++;
    if (c->path == TC_PATH_SWITCH && c->bits + lg > 32)
        return tc_fail(err, TC_EINVAL, "%s: path=switch over %u workers sums %u-bit integers: a switch's 32-bit sums "
                                       "would overflow (accepted: bits + ceil(log2 workers) <= 32)",
                       c->name, n, c->bits + lg);
    if (c->path == TC_PATH_PS && c->servers > n)
        return tc_fail(err, TC_EINVAL,
                       "%s: servers=%u but only %u workers: accepted are 1 to %u servers (colocated on the workers' "
                       "endpoints)", c->name, c->servers, n, n);
    return TC_OK;
}

static bool biased(tc_codec_kind k)
{
    return k == TC_CODEC_TOPK || k == TC_CODEC_TOPK_SHARED || k == TC_CODEC_RANDK || k == TC_CODEC_POWERSGD ||
           k == TC_CODEC_POWERSGD_BATCHED || k == TC_CODEC_SIGNSGD;
}

static bool has_key(tc_codec_kind k, const char *key)
{
    const char *p = keys_of[k];
    size_t n = strlen(key);
    for (const char *q = strstr(p, key); q; q = strstr(q + 1, key))
        if ((q == p || q[-1] == ' ') && (q[n] == ',' || q[n] == '\0'))
            return true;
    return false;
}

void tc_codec_defaults(tc_codec_kind k, tc_codec_spec *out)
{
    memset(out, 0, sizeof *out);
    out->kind = k;
    out->ratio = tc_cx_is_sparse(k) ? 0.01 : 0;
    bool psgd = k == TC_CODEC_POWERSGD || k == TC_CODEC_POWERSGD_BATCHED;
    out->rank = psgd ? 4 : 0;
    out->start = psgd ? PSGD_START : 0;
    out->min_rate = k == TC_CODEC_POWERSGD ? PSGD_MIN_RATE : 0;
    out->bits = k == TC_CODEC_THC ? 4 : k == TC_CODEC_INT8 ? 8 : k == TC_CODEC_INT4 ? 4 : 0;
    out->error_feedback = biased(k);
    out->seed = 1;
    tc_codec_spec_name(out);
}

void tc_codec_spec_name(tc_codec_spec *c)
{
    char buf[sizeof c->name];
    size_t n = (size_t)snprintf(buf, sizeof buf, "%s", tc_codec_kind_name(c->kind));
    char sep = ':';
#define ADD(...)                                                                   \
    do {                                                                           \
        if (n < sizeof buf)                                                        \
            n += (size_t)snprintf(buf + n, sizeof buf - n, "%c", sep);             \
        if (n < sizeof buf)                                                        \
            n += (size_t)snprintf(buf + n, sizeof buf - n, __VA_ARGS__);           \
        sep = ',';                                                                 \
    } while (0)
    if ((unsigned)c->kind < TC_CODEC_COUNT) {
        if (has_key(c->kind, "ratio"))
            ADD("ratio=%g", c->ratio);
        if (has_key(c->kind, "rank"))
            ADD("rank=%u", c->rank);
        if (has_key(c->kind, "bits"))
            ADD("bits=%u", c->bits);
        if (has_key(c->kind, "start") && c->start != PSGD_START)
            ADD("start=%u", c->start);
        if (has_key(c->kind, "min_rate") && c->min_rate != PSGD_MIN_RATE)
            ADD("min_rate=%g", c->min_rate);
        if (c->path != TC_PATH_ALLREDUCE)
            ADD("path=%s", tc_codec_path_name(c->path));
        if (c->path == TC_PATH_PS && c->servers)
            ADD("servers=%u", c->servers);
        if (has_key(c->kind, "seed") && c->seed != 1)
            ADD("seed=%llu", (unsigned long long)c->seed);
        if (c->error_feedback != biased(c->kind))
            ADD("ef=%d", c->error_feedback ? 1 : 0);
    }
#undef ADD
    memcpy(c->name, buf, sizeof c->name);
    c->name[sizeof c->name - 1] = '\0';
}

static tc_status parse_uint(const char *codec, const char *key, const char *v, uint64_t lo, uint64_t hi,
                            const char *accepted, uint64_t *out, tc_err *err)
{
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (v[0] < '0' || v[0] > '9' || *end || errno || x < lo || x > hi)
        return tc_fail(err, TC_EINVAL, "%s: %s=%s is out of range: accepted are %s", codec, key, v, accepted);
    *out = x;
    return TC_OK;
}

/* path= and servers= (docs/MODEL.md, "Aggregation paths"). */
static tc_status parse_path(tc_spec *sp, tc_codec_spec *c, tc_err *err)
{
    const char *name = names[c->kind], *v;
    char ok[128];
    tc_codec_paths_of(c->kind, ok, sizeof ok);
    if ((v = tc_spec_get(sp, "path"))) {
        int p = -1;
        for (int k = 0; k < TC_PATH_COUNT; k++)
            if (strcmp(v, path_names[k]) == 0)
                p = k;
        if (p < 0 || !tc_codec_path_valid(c->kind, (tc_codec_path)p))
            return tc_fail(err, TC_EINVAL, "%s: path=%s is %s: accepted paths for %s are %s", name, v,
                           p < 0 ? "unknown" : "not accepted", name, ok);
        c->path = (tc_codec_path)p;
    }
    if (has_key(c->kind, "servers") && (v = tc_spec_get(sp, "servers"))) {
        uint64_t u;
        tc_status st = parse_uint(name, "servers", v, 1, 1u << 24, "1 to the workers (path=ps)", &u, err);
        if (st)
            return st;
        if (c->path != TC_PATH_PS)
            return tc_fail(err, TC_EINVAL, "%s: servers=%s applies to path=ps only (path=%s here)", name, v,
                           path_names[c->path]);
        c->servers = (uint32_t)u;
    }
    if (c->error_feedback && (c->path == TC_PATH_REQUANT_RING || c->path == TC_PATH_REQUANT_TREE))
        return tc_fail(err, TC_EINVAL,
                       "%s: ef=1 with path=%s: a re-quantized partial sum's error belongs to no single worker; "
                       "accepted is ef=0 (or another path: %s)", name, path_names[c->path], ok);
    return TC_OK;
}

tc_status tc_codec_parse(const char *s, tc_codec_spec *out, tc_err *err)
{
    tc_spec sp;
    tc_status st = tc_spec_parse(s, &sp, err);
    if (st)
        return st;
    int kind = -1;
    for (int k = 0; k < TC_CODEC_COUNT; k++)
        if (strcmp(sp.kind, names[k]) == 0)
            kind = k;
    if (kind < 0)
        return tc_fail(err, TC_EINVAL, "unknown codec '%s': accepted are " ACCEPTED_CODECS, sp.kind);
    tc_codec_spec c;
    tc_codec_defaults((tc_codec_kind)kind, &c);
    const char *name = names[kind];
    uint64_t u;
    const char *v;
    if (has_key(c.kind, "ratio") && (v = tc_spec_get(&sp, "ratio"))) {
        char *end;
        double r = strtod(v, &end);
        if (*end || !(r > 0) || !(r <= 1))
            return tc_fail(err, TC_EINVAL, "%s: ratio=%s is out of range: accepted are 0 < ratio <= 1, e.g. ratio=0.01",
                           name, v);
        c.ratio = r;
    }
    if (has_key(c.kind, "rank") && (v = tc_spec_get(&sp, "rank"))) {
        if ((st = parse_uint(name, "rank", v, 1, 1u << 20, c.kind == TC_CODEC_POWERSGD_BATCHED
                                 ? "integers >= 1 (at most the bucket matrix's smaller side)"
                                 : "integers >= 1 (each tensor gets at most its smaller side)",
                             &u, err)))
            return st;
        c.rank = (uint32_t)u;
    }
    if (has_key(c.kind, "start") && (v = tc_spec_get(&sp, "start"))) {
        if ((st = parse_uint(name, "start", v, 0, UINT32_MAX,
                             "0 to 2^32 - 1 steps of plain all-reduce before compressing (default 1000)", &u, err)))
            return st;
        c.start = (uint32_t)u;
    }
    if (has_key(c.kind, "min_rate") && (v = tc_spec_get(&sp, "min_rate"))) {
        char *end;
        double r = strtod(v, &end);
        if (end == v || *end || !(r >= 0) || !(r <= 1e9))
            return tc_fail(err, TC_EINVAL, "%s: min_rate=%s is out of range: accepted are 0 to 1e9, e.g. min_rate=2",
                           name, v);
        c.min_rate = r;
    }
    if (has_key(c.kind, "bits") && (v = tc_spec_get(&sp, "bits"))) {
        if ((st = parse_uint(name, "bits", v, 1, 8, "1 to 8", &u, err)))
            return st;
        c.bits = (uint32_t)u;
    }
    if (has_key(c.kind, "seed") && (v = tc_spec_get(&sp, "seed"))) {
        if ((st = parse_uint(name, "seed", v, 0, UINT64_MAX, "unsigned 64-bit integers", &u, err)))
            return st;
        c.seed = u;
    }
    if ((v = tc_spec_get(&sp, "ef"))) {
        if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0)
            return tc_fail(err, TC_EINVAL, "%s: ef=%s: accepted are 0 (off) and 1 (on)", name, v);
        c.error_feedback = v[0] == '1';
    }
    if ((st = parse_path(&sp, &c, err)))
        return st;
    char what[64];
    snprintf(what, sizeof what, "%s codec", name);
    if ((st = tc_spec_check_unused(&sp, what, keys_of[kind], err)))
        return st;
    tc_codec_spec_name(&c);
    *out = c;
    return TC_OK;
}
