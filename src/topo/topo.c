/*
 * topo.c - building a topology from its spec (the keys every kind shares,
 * the scale-up nodes, the CSR index, the canonical spec), routing dispatch,
 * summary figures and link edits.
 */
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "topo_int.h"

#define COMMON_KEYS                                                                                                    \
    "hop_lat, alpha, reduce_bw, seed, node, node_bw, node_lat, node_hop_lat, node_reduce, arch, transport, nic_path, " \
    "p2p_bw, p2p_net_bw"
#define CLOS_KEYS_BEFORE "down, up, links, hosts, radix, tiers, oversub, bw, "
#define CLOS_KEYS_AFTER "rail, nics, gpus_per_nic, nic_bw, nic_lat, sharp, net_lat, net_eff, " COMMON_KEYS
#define CLOS_KEYS CLOS_KEYS_BEFORE "bw1..bw6, lat, lat1..lat6, " CLOS_KEYS_AFTER
#define TORUS_KEYS "dims, wrap, bw, lat, " COMMON_KEYS
#define FULL_KEYS "hosts, bw, lat, " COMMON_KEYS

/* ---- spec helpers ---- */

static tc_status keyed(tc_err *err, const char *kind, const char *key, const tc_err *inner)
{
    return tc_fail(err, TC_EINVAL, "%s key '%s': %s", kind, key, inner->msg);
}

tc_status tc_topo_get_rate(tc_spec *sp, const char *kind, const char *key, double *out, bool *given, tc_err *err)
{
    const char *v = tc_spec_get(sp, key);
    tc_err e;
    if (!v)
        return TC_OK;
    if (tc_parse_rate(v, out, &e) != TC_OK)
        return keyed(err, kind, key, &e);
    if (given)
        *given = true;
    return TC_OK;
}

tc_status tc_topo_get_time(tc_spec *sp, const char *kind, const char *key, double *out, bool *given, tc_err *err)
{
    const char *v = tc_spec_get(sp, key);
    tc_err e;
    if (!v)
        return TC_OK;
    if (tc_parse_time(v, out, &e) != TC_OK)
        return keyed(err, kind, key, &e);
    if (given)
        *given = true;
    return TC_OK;
}

tc_status tc_topo_get_u32(tc_spec *sp, const char *kind, const char *key, uint32_t *out, bool *given, tc_err *err)
{
    const char *v = tc_spec_get(sp, key);
    tc_err e;
    if (!v)
        return TC_OK;
    if (tc_parse_u32(v, out, &e) != TC_OK)
        return keyed(err, kind, key, &e);
    if (given)
        *given = true;
    return TC_OK;
}

tc_status tc_topo_get_list(tc_spec *sp, const char *kind, const char *key, uint32_t *vals, int max, int *n, tc_err *err)
{
    const char *v = tc_spec_get(sp, key);
    tc_err e;
    if (!v)
        return TC_OK;
    if (tc_parse_dims(v, vals, max, n, &e) != TC_OK)
        return keyed(err, kind, key, &e);
    return TC_OK;
}

void tc_topo_put(char *buf, size_t len, const char *fmt, ...)
{
    size_t off = strlen(buf);
    if (off + 1 >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + off, len - off, fmt, ap);
    va_end(ap);
}

const char *tc_topo_rate_str(double Bps, char *buf, size_t len)
{
    snprintf(buf, len, "%.12gGbps", Bps * 8 / 1e9);
    return buf;
}

const char *tc_topo_time_str(double s, char *buf, size_t len)
{
    if (s < 1e-6)
        snprintf(buf, len, "%.12gns", s * 1e9);
    else
        snprintf(buf, len, "%.12gus", s * 1e6);
    return buf;
}

const char *tc_topo_list_str(const uint32_t *v, int n, char *buf, size_t len)
{
    buf[0] = '\0';
    for (int i = 0; i < n; i++)
        tc_topo_put(buf, len, "%s%u", i ? "x" : "", v[i]);
    return buf;
}

/* Unknown keys are reported before anything else so that a typo is named
 * as such rather than as a missing key. */
static bool accepted_key(const char *kind, const char *key)
{
    static const char *common[] = {"hop_lat",      "alpha",       "reduce_bw", "seed",     "node",     "node_bw",
                                   "node_lat",     "node_hop_lat", "node_reduce", "arch", "transport", "nic_path",
                                   "p2p_bw",       "p2p_net_bw",  NULL};
    static const char *clos[] = {"down", "up",  "links", "hosts", "radix",        "tiers",  "oversub", "bw",
                                 "lat",  "rail", "nics", "gpus_per_nic", "nic_bw", "nic_lat", "sharp", "net_lat", "net_eff", NULL};
    static const char *torus[] = {"dims", "wrap", "bw", "lat", NULL};
    static const char *full[] = {"hosts", "bw", "lat", NULL};
    for (const char **k = common; *k; k++)
        if (strcmp(*k, key) == 0)
            return true;
    bool is_clos = strcmp(kind, "clos") == 0;
    for (const char **k = is_clos ? clos : strcmp(kind, "full") == 0 ? full : torus; *k; k++)
        if (strcmp(*k, key) == 0)
            return true;
    if (is_clos && (strncmp(key, "bw", 2) == 0 || strncmp(key, "lat", 3) == 0)) {
        const char *d = key + (key[0] == 'b' ? 2 : 3);
        return d[0] >= '1' && d[0] <= '0' + TC_MAX_LEVELS && d[1] == '\0';
    }
    return false;
}

static tc_status check_keys(const tc_spec *sp, tc_err *err)
{
    const char *list = strcmp(sp->kind, "clos") == 0 ? CLOS_KEYS : strcmp(sp->kind, "full") == 0 ? FULL_KEYS : TORUS_KEYS;
    for (int i = 0; i < sp->nkv; i++)
        if (!accepted_key(sp->kind, sp->key[i]))
            return tc_fail(err, TC_EINVAL, "unknown key '%s' in %s spec: accepted keys are %s", sp->key[i], sp->kind,
                           list);
    return TC_OK;
}

static tc_status read_seed(tc_spec *sp, uint64_t *seed, tc_err *err)
{
    const char *v = tc_spec_get(sp, "seed");
    if (!v)
        return TC_OK;
    for (const char *c = v; *c; c++)
        if (!isdigit((unsigned char)*c))
            return tc_fail(err, TC_EINVAL, "invalid seed '%s': expected a non-negative integer, e.g. seed=7", v);
    errno = 0;
    unsigned long long s = strtoull(v, NULL, 10);
    if (errno == ERANGE)
        return tc_fail(err, TC_EINVAL, "invalid seed '%s': expected a non-negative integer below 2^64", v);
    *seed = s;
    return TC_OK;
}

/* rail=R: R divides the node's host slots S (its G endpoints, or its K
 * NICs with nics=), and a rail's N S / R ports (N nodes) fill whole leaves,
 * or a leaf holds whole rails: otherwise a leaf would mix rails in part,
 * which is no rail-optimized fabric. */
static tc_status read_rails(tc_spec *sp, tc_topo *t, uint32_t g, bool has_node, tc_err *err)
{
    uint32_t R = 0;
    bool has_rail = false;
    tc_status st = tc_topo_get_u32(sp, sp->kind, "rail", &R, &has_rail, err);
    if (st != TC_OK || !has_rail)
        return st;
    if (!has_node || g < 2)
        return tc_fail(err, TC_EINVAL, "clos rail=%u needs node=G (GPUs per node, G >= 2) with R dividing G, e.g. node=8,rail=8",
                       R);
    uint32_t S = t->nics ? t->nics : g;
    if (R == 0 || S % R != 0) {
        if (t->nics)
            return tc_fail(err, TC_EINVAL, "clos rail=%u does not divide the %u NICs of a node: give a divisor of %u (%u: "
                                           "one rail per NIC)",
                           R, S, S, S);
        return tc_fail(err, TC_EINVAL, "clos rail=%u does not divide the node of %u endpoints: give a divisor of %u (%u: one rail per endpoint)",
                       R, g, g, g);
    }
    uint32_t nodes = t->n_endpoints / g, per_rail = nodes * (S / R), D = t->down[1];
    if (per_rail % D != 0 && D % per_rail != 0)
        return tc_fail(err, TC_EINVAL,
                       "clos rail=%u: a rail has %u ports (%u nodes x %u), which neither fill whole leaves of %u ports "
                       "nor fit a leaf a whole number of times: change the node count or the leaf size",
                       R, per_rail, nodes, S / R, D);
    t->rails = R;
    return TC_OK;
}

static const char *arch_names[] = {"", "volta", "ampere", "hopper", "blackwell"};

const char *tc_arch_name(tc_arch a)
{
    return (unsigned)a < sizeof arch_names / sizeof *arch_names && a ? arch_names[a] : "-";
}

/* key=NAME, one of names[from..n) (its index into *out; unchanged when the
 * key is absent); accepted lists them. */
static tc_status read_name(tc_spec *sp, const char *key, const char *const *names, unsigned from, unsigned n,
                           const char *accepted, uint8_t *out, tc_err *err)
{
    const char *v = tc_spec_get(sp, key);
    if (!v)
        return TC_OK;
    for (unsigned i = from; i < n; i++)
        if (strcmp(v, names[i]) == 0) {
            *out = (uint8_t)i;
            return TC_OK;
        }
    return tc_fail(err, TC_EINVAL, "%s spec: %s='%s': accepted are %s", sp->kind, key, v, accepted);
}

static const char *transport_names[] = {"ib", "efa", "efa-sendrecv"};

const char *tc_transport_name(tc_transport n)
{
    return (unsigned)n < sizeof transport_names / sizeof *transport_names ? transport_names[n] : "-";
}

static const char *nic_path_names[] = {"pxb", "pix", "pxn", "phb", "sys"};

const char *tc_nic_path_name(tc_nic_path p)
{
    return (unsigned)p < sizeof nic_path_names / sizeof *nic_path_names ? nic_path_names[p] : "-";
}

int tc_nic_path_level(tc_nic_path p)
{
    static const int level[] = {4, 3, 5, 6, 7};
    return (unsigned)p < sizeof level / sizeof *level ? level[p] : 7;
}

static tc_status read_common(tc_spec *sp, tc_topo *t, tc_err *err)
{
    const char *kind = sp->kind;
    uint32_t g = 0;
    bool has_node = false, has_bw = false, has_lat = false, has_hop = false;
    t->node_bw = TC_TOPO_DEFAULT_NODE_BW;
    t->node_lat = TC_TOPO_DEFAULT_NODE_LAT;
    t->node_hop_lat = TC_TOPO_DEFAULT_NODE_HOP_LAT;
    /* a full mesh's links end at their endpoints: no switch or router
     * between them (hop_lat= then prices an endpoint that forwards) */
    t->hop_lat = t->kind == TC_TOPO_FULL ? 0 : TC_TOPO_DEFAULT_HOP_LAT;
    t->alpha = TC_TOPO_DEFAULT_ALPHA;
    tc_status st = tc_topo_get_time(sp, kind, "hop_lat", &t->hop_lat, NULL, err);
    if (st == TC_OK)
        st = tc_topo_get_time(sp, kind, "alpha", &t->alpha, NULL, err);
    if (st == TC_OK)
        st = tc_topo_get_rate(sp, kind, "reduce_bw", &t->reduce_bw, NULL, err);
    if (st == TC_OK)
        st = read_seed(sp, &t->seed, err);
    if (st == TC_OK)
        st = read_name(sp, "arch", arch_names, 1, sizeof arch_names / sizeof *arch_names,
                       "volta, ampere, hopper, blackwell", &t->arch, err);
    if (st == TC_OK)
        st = read_name(sp, "transport", transport_names, 0, sizeof transport_names / sizeof *transport_names,
                       "ib, efa, efa-sendrecv", &t->transport, err);
    if (st == TC_OK)
        st = read_name(sp, "nic_path", nic_path_names, 0, sizeof nic_path_names / sizeof *nic_path_names,
                       "pix, pxb, pxn, phb, sys", &t->nic_path, err);
    if (st == TC_OK)
        st = tc_topo_get_u32(sp, kind, "node", &g, &has_node, err);
    if (st == TC_OK)
        st = tc_topo_get_rate(sp, kind, "node_bw", &t->node_bw, &has_bw, err);
    if (st == TC_OK)
        st = tc_topo_get_time(sp, kind, "node_lat", &t->node_lat, &has_lat, err);
    if (st == TC_OK)
        st = tc_topo_get_time(sp, kind, "node_hop_lat", &t->node_hop_lat, &has_hop, err);
    bool has_p2p = false;
    if (st == TC_OK)
        st = tc_topo_get_rate(sp, kind, "p2p_bw", &t->p2p_bw, &has_p2p, err);
    if (st == TC_OK)
        st = tc_topo_get_rate(sp, kind, "p2p_net_bw", &t->p2p_net_bw, NULL, err);
    if (st != TC_OK)
        return st;
    if (has_p2p && !has_node)
        return tc_fail(err, TC_EINVAL, "%s spec: p2p_bw= (a point-to-point channel's rate inside a scale-up node) "
                                       "needs node=G (endpoints per scale-up node), e.g. node=8",
                       kind);
    uint32_t red = 0;
    bool has_red = false;
    st = tc_topo_get_u32(sp, kind, "node_reduce", &red, &has_red, err);
    if (st != TC_OK)
        return st;
    if (has_red && red > 1)
        return tc_fail(err, TC_EINVAL, "%s spec: node_reduce=%u: accepted are 0 and 1 (1: the node switch reduces and "
                                       "multicasts, as NVLink SHARP)",
                       kind, red);
    if ((has_bw || has_lat || has_hop || red) && !has_node)
        return tc_fail(err, TC_EINVAL,
                       "%s spec: node_bw=, node_lat=, node_hop_lat= and node_reduce= need node=G (endpoints per scale-up "
                       "node), e.g. node=8",
                       kind);
    t->node_reduce = red == 1;
    if (has_node && t->n_endpoints % g != 0)
        return tc_fail(err, TC_EINVAL, "%s spec: node=%u does not divide the %u endpoints: give a divisor of %u", kind, g,
                       t->n_endpoints, t->n_endpoints);
    t->node_size = g > 1 ? g : 0;
    uint32_t sharp = 0;
    bool has_sharp = false;
    if (strcmp(kind, "clos") == 0 && (st = tc_topo_get_u32(sp, kind, "sharp", &sharp, &has_sharp, err)) != TC_OK)
        return st;
    if (has_sharp && sharp > 1)
        return tc_fail(err, TC_EINVAL, "clos spec: sharp=%u: accepted are 0 and 1 (1: the fabric switches reduce and "
                                       "multicast, as InfiniBand SHARP)",
                       sharp);
    t->sharp = sharp == 1;
    if (t->sharp && TC_TRANSPORT_IS_EFA(t->transport))
        return tc_fail(err, TC_EINVAL, "clos spec: sharp=1 with transport=%s: SHARP is InfiniBand's in-network "
                                       "reduction, EFA has none; give transport=ib or sharp=0",
                       tc_transport_name((tc_transport)t->transport));
    return read_rails(sp, t, g, has_node, err);
}

/* ---- building ---- */

tc_status tc_topo_build_csr(tc_topo *t)
{
    t->out_off = tc_calloc((size_t)t->n_vertices + 1, sizeof *t->out_off);
    t->out_link = tc_calloc(t->n_links, sizeof *t->out_link);
    if (!t->out_off || !t->out_link)
        return TC_EINTERNAL;
    for (uint32_t l = 0; l < t->n_links; l++)
        t->out_off[t->links[l].src + 1]++;
    for (uint32_t v = 0; v < t->n_vertices; v++)
        t->out_off[v + 1] += t->out_off[v];
    /* Fill by advancing each vertex's start, then shift the starts back. */
    for (uint32_t l = 0; l < t->n_links; l++)
        t->out_link[t->out_off[t->links[l].src]++] = l;
    for (uint32_t v = t->n_vertices; v > 0; v--)
        t->out_off[v] = t->out_off[v - 1];
    t->out_off[0] = 0;
    return TC_OK;
}

static void fill_nodes(tc_topo *t)
{
    if (t->node_size < 2)
        return;
    tc_link *l = t->links + t->node_lbase;
    for (uint32_t e = 0; e < t->n_endpoints; e++) {
        uint32_t sw = t->node_vbase + e / t->node_size;
        /* The link into the node switch carries its traversal (topo.h, "Latency"). */
        *l++ = (tc_link){e, sw, t->node_bw, t->node_lat + t->node_hop_lat, TC_LINK_NODE, 0, +1};
        *l++ = (tc_link){sw, e, t->node_bw, t->node_lat, TC_LINK_NODE, 0, -1};
    }
}

/* Host slots. Endpoint e = node n, index i in the node (G per node) is
 * behind slot i' = i / (G / S) of its node's S slots (S = K NICs, or G).
 * Rail-optimized (k = S / R slots per rail and node): rail j = i' / k,
 * slot j (N k) + n k + i' mod k; otherwise slot n S + i'. */
static bool fill_slots(tc_topo *t)
{
    if (!t->rails && !t->nics)
        return true;
    t->hslot = tc_calloc(t->n_endpoints, sizeof *t->hslot);
    if (!t->hslot)
        return false;
    uint32_t g = t->node_size, S = t->nics ? t->nics : g, per = g / S, nodes = t->n_endpoints / g;
    uint32_t k = t->rails ? S / t->rails : S;
    for (uint32_t e = 0; e < t->n_endpoints; e++) {
        uint32_t n = e / g, i = e % g / per;
        t->hslot[e] = t->rails ? i / k * (nodes * k) + n * k + i % k : n * S + i;
    }
    return true;
}

/* An endpoint's link to its NIC, each way nic_bw (or the NIC's fabric
 * bandwidth) and nic_lat. */
static void fill_nics(tc_topo *t)
{
    if (!t->nics)
        return;
    double bw = t->nic_bw_given ? t->nic_bw : t->up[1] * t->level_bw[1];
    tc_link *l = t->links + t->nic_lbase;
    for (uint32_t e = 0; e < t->n_endpoints; e++) {
        uint32_t nic = t->nic_vbase + t->hslot[e];
        *l++ = (tc_link){e, nic, bw, t->nic_lat, TC_LINK_NIC, 0, +1};
        *l++ = (tc_link){nic, e, bw, t->nic_lat, TC_LINK_NIC, 0, -1};
    }
}

static void canonical_spec(tc_topo *t)
{
    char a[64];
    t->spec[0] = '\0';
    if (t->kind == TC_TOPO_CLOS)
        tc_clos_spec(t, t->spec, sizeof t->spec);
    else if (t->kind == TC_TOPO_FULL)
        tc_full_spec(t, t->spec, sizeof t->spec);
    else
        tc_torus_spec(t, t->spec, sizeof t->spec);
    /* Every latency is stated, defaults included: a spec read back, or read
     * by a later version with other defaults, builds the same network. */
    tc_topo_put(t->spec, sizeof t->spec, ",hop_lat=%s", tc_topo_time_str(t->hop_lat, a, sizeof a));
    if (t->node_size > 1) {
        tc_topo_put(t->spec, sizeof t->spec, ",node=%u,node_bw=%.12gGB/s", t->node_size, t->node_bw / 1e9);
        tc_topo_put(t->spec, sizeof t->spec, ",node_lat=%s", tc_topo_time_str(t->node_lat, a, sizeof a));
        tc_topo_put(t->spec, sizeof t->spec, ",node_hop_lat=%s", tc_topo_time_str(t->node_hop_lat, a, sizeof a));
        if (t->node_reduce)
            tc_topo_put(t->spec, sizeof t->spec, ",node_reduce=1");
        if (t->nics) {
            tc_topo_put(t->spec, sizeof t->spec, ",nics=%u", t->nics);
            if (t->nic_bw_given)
                tc_topo_put(t->spec, sizeof t->spec, ",nic_bw=%s", tc_topo_rate_str(t->nic_bw, a, sizeof a));
            if (t->nic_lat != 0)
                tc_topo_put(t->spec, sizeof t->spec, ",nic_lat=%s", tc_topo_time_str(t->nic_lat, a, sizeof a));
        }
        if (t->rails)
            tc_topo_put(t->spec, sizeof t->spec, ",rail=%u", t->rails);
    }
    if (t->sharp)
        tc_topo_put(t->spec, sizeof t->spec, ",sharp=1");
    if (t->arch)
        tc_topo_put(t->spec, sizeof t->spec, ",arch=%s", tc_arch_name((tc_arch)t->arch));
    if (t->transport)
        tc_topo_put(t->spec, sizeof t->spec, ",transport=%s", tc_transport_name((tc_transport)t->transport));
    if (t->nic_path)
        tc_topo_put(t->spec, sizeof t->spec, ",nic_path=%s", tc_nic_path_name((tc_nic_path)t->nic_path));
    if (t->kind == TC_TOPO_CLOS && t->net_lat_given) {
        char b1[64], b2[64];
        tc_topo_put(t->spec, sizeof t->spec, ",net_lat=%s/%s/%s", tc_topo_time_str(t->net_lat[0], a, sizeof a),
                    tc_topo_time_str(t->net_lat[1], b1, sizeof b1), tc_topo_time_str(t->net_lat[2], b2, sizeof b2));
    }
    if (t->kind == TC_TOPO_CLOS && t->net_eff != 1)
        tc_topo_put(t->spec, sizeof t->spec, ",net_eff=%.12g", t->net_eff);
    if (t->p2p_bw > 0)
        tc_topo_put(t->spec, sizeof t->spec, ",p2p_bw=%.12gGB/s", t->p2p_bw / 1e9);
    if (t->p2p_net_bw > 0)
        tc_topo_put(t->spec, sizeof t->spec, ",p2p_net_bw=%.12gGB/s", t->p2p_net_bw / 1e9);
    tc_topo_put(t->spec, sizeof t->spec, ",alpha=%s", tc_topo_time_str(t->alpha, a, sizeof a));
    if (t->reduce_bw > 0)
        tc_topo_put(t->spec, sizeof t->spec, ",reduce_bw=%.12gGB/s", t->reduce_bw / 1e9);
    if (t->seed)
        tc_topo_put(t->spec, sizeof t->spec, ",seed=%llu", (unsigned long long)t->seed);
}

/* A configured Clos's keys left unread: refused with the per-level keys of
 * its h switch levels (bw1..bwh, lat1..lath), not the six a spec may
 * have. */
static tc_status clos_check_unused(const tc_spec *sp, int h, tc_err *err)
{
    char lv[64];
    if (h == 1)
        snprintf(lv, sizeof lv, "bw1, lat, lat1");
    else
        snprintf(lv, sizeof lv, "bw1..bw%d, lat, lat1..lat%d", h, h);
    for (int i = 0; i < sp->nkv; i++)
        if (!sp->used[i]) {
            const char *k = sp->key[i];
            char why[64] = "";
            if (strncmp(k, "bw", 2) == 0 || strncmp(k, "lat", 3) == 0)
                snprintf(why, sizeof why, ": this Clos has %d switch level%s", h, h == 1 ? "" : "s");
            return tc_fail(err, TC_EINVAL,
                           "unknown key '%s' in clos spec%s; accepted keys are " CLOS_KEYS_BEFORE "%s, " CLOS_KEYS_AFTER,
                           k, why, lv);
        }
    return TC_OK;
}

static tc_status configure(tc_spec *sp, tc_topo *t, uint64_t *fabric_links, tc_err *err)
{
    bool clos = strcmp(sp->kind, "clos") == 0, torus = strcmp(sp->kind, "torus") == 0,
         full = strcmp(sp->kind, "full") == 0;
    if (!clos && !torus && !full)
        return tc_fail(err, TC_EINVAL,
                       "unknown topology kind '%s': expected clos, torus or full, or multidc (pods of clos or torus "
                       "joined by long-haul links), e.g. clos:down=8x8,up=1x8, torus:dims=8x8x8, full:hosts=8 or "
                       "multidc:pods=2,pod=clos,hosts=64,radix=16,wan_bw=400Gbps,wan_lat=20ms",
                       sp->kind);
    tc_status st = check_keys(sp, err);
    if (st != TC_OK)
        return st;
    st = clos    ? tc_clos_configure(sp, t, fabric_links, err)
         : full ? tc_full_configure(sp, t, fabric_links, err)
                : tc_torus_configure(sp, t, fabric_links, err);
    if (st == TC_OK)
        st = read_common(sp, t, err);
    if (st == TC_OK && clos)
        st = clos_check_unused(sp, t->levels, err);
    if (st == TC_OK)
        st = tc_spec_check_unused(sp, sp->kind, clos ? CLOS_KEYS : full ? FULL_KEYS : TORUS_KEYS, err);
    return st;
}

/* The graph of a configured topology (t's structural fields and
 * *fabric* fabric links): the links, the scale-up nodes and NICs, the CSR
 * index and the canonical spec. On failure t is freed. */
static tc_status assemble(tc_topo *t, uint64_t fabric, tc_topo **out, tc_err *err)
{
    if (!t->n_slots)
        t->n_slots = t->n_endpoints;
    uint32_t nodes = t->node_size > 1 ? t->n_endpoints / t->node_size : 0;
    uint64_t links = fabric + (nodes ? 2ull * t->n_endpoints : 0) + (t->nics ? 2ull * t->n_endpoints : 0);
    uint64_t vertices = (uint64_t)t->n_endpoints + t->n_switches + nodes + (t->nics ? t->n_slots : 0);
    if (links > TC_TOPO_MAX_LINKS || vertices > TC_TOPO_MAX_VERTICES) {
        free(t);
        return tc_fail(err, TC_EINVAL, "topology too large: %llu vertices and %llu links, at most %u and %u",
                       (unsigned long long)vertices, (unsigned long long)links, TC_TOPO_MAX_VERTICES, TC_TOPO_MAX_LINKS);
    }
    t->n_links = (uint32_t)links;
    t->n_vertices = (uint32_t)vertices;
    t->node_vbase = t->n_endpoints + t->n_switches;
    t->node_lbase = (uint32_t)fabric;
    t->nic_vbase = t->node_vbase + nodes;
    t->nic_lbase = t->node_lbase + (nodes ? 2 * t->n_endpoints : 0);
    t->links = tc_calloc(t->n_links, sizeof *t->links);
    if (!t->links) {
        tc_topo_free(t);
        return tc_fail(err, TC_EINTERNAL, "out of memory for %llu links", (unsigned long long)links);
    }
    if (!fill_slots(t)) {
        uint32_t n = t->n_endpoints;
        tc_topo_free(t);
        return tc_fail(err, TC_EINTERNAL, "out of memory for the host slots of %u endpoints", n);
    }
    if (t->kind == TC_TOPO_CLOS)
        tc_clos_fill(t);
    else if (t->kind == TC_TOPO_FULL)
        tc_full_fill(t);
    else
        tc_torus_fill(t);
    fill_nodes(t);
    fill_nics(t);
    if (tc_topo_build_csr(t) != TC_OK) {
        tc_topo_free(t);
        return tc_fail(err, TC_EINTERNAL, "out of memory for the adjacency of %llu vertices", (unsigned long long)vertices);
    }
    canonical_spec(t);
    *out = t;
    return TC_OK;
}

tc_status tc_topo_build(const char *spec, tc_topo **out, tc_err *err)
{
    if (!out)
        return tc_fail(err, TC_EINVAL, "tc_topo_build: no place for the result");
    *out = NULL;
    tc_spec sp;
    tc_status st = tc_spec_parse(spec, &sp, err);
    if (st != TC_OK)
        return st;
    if (strcmp(sp.kind, "multidc") == 0)
        return tc_multidc_build(&sp, out, err);
    tc_topo *t = tc_calloc(1, sizeof *t);
    if (!t)
        return tc_fail(err, TC_EINTERNAL, "out of memory building '%s'", spec);
    t->net_eff = 1; /* a Clos's net_eff= may lower it */
    uint64_t fabric = 0;
    st = configure(&sp, t, &fabric, err);
    if (st != TC_OK) {
        free(t);
        return st;
    }
    return assemble(t, fabric, out, err);
}

/* ---- a box of a torus as a torus of its own ---- */

/* The parent's stride of its dimension pd (a box keeps the parent's sizes). */
static uint32_t parent_stride(const tc_topo *box, int pd)
{
    uint32_t st = 1;
    for (int d = 0; d < pd; d++)
        st *= box->box_pdims[d];
    return st;
}

static tc_status fail_arrays(tc_topo *t, tc_err *err);
static void fail_one(tc_topo *t, uint32_t l);

/* Box endpoint b in the parent (box_link not yet needed). */
static uint32_t box_to_parent(const tc_topo *box, uint32_t b)
{
    uint32_t e = 0;
    for (int pd = 0; pd < box->box_pndims; pd++)
        e += box->box_origin[pd] * parent_stride(box, pd);
    for (int k = 0; k < box->ndims; k++)
        e += b / box->stride[k] % box->dims[k] * parent_stride(box, box->box_pdim[k]);
    return e;
}

uint32_t tc_topo_box_parent_endpoint(const tc_topo *box, uint32_t b)
{
    return box->box_link ? box_to_parent(box, b) : b;
}

uint32_t tc_topo_box_endpoint(const tc_topo *box, uint32_t e)
{
    if (!box->box_link)
        return e;
    uint32_t b = 0;
    for (int pd = 0; pd < box->box_pndims; pd++) {
        uint32_t c = e / parent_stride(box, pd) % box->box_pdims[pd], o = box->box_origin[pd];
        int k = -1;
        for (int j = 0; j < box->ndims; j++)
            if (box->box_pdim[j] == pd)
                k = j;
        uint32_t ext = k < 0 ? 1 : box->dims[k];
        if (c < o || c - o >= ext)
            return UINT32_MAX;
        if (k >= 0)
            b += (c - o) * box->stride[k];
    }
    return b;
}

uint32_t tc_topo_box_parent_link(const tc_topo *box, uint32_t l)
{
    if (!box->box_link)
        return l;
    return l < box->n_links ? box->box_link[l] : UINT32_MAX;
}

/* node=G on a box: every G consecutive endpoints of the box are one node of
 * the parent (so the box holds whole nodes, in the parent's order). */
static bool box_whole_nodes(const tc_topo *box, uint32_t G)
{
    if (box->n_endpoints % G)
        return false;
    for (uint32_t b = 0; b < box->n_endpoints; b++)
        if (box_to_parent(box, b) / G != box_to_parent(box, b - b % G) / G)
            return false;
    return true;
}

/* The parent's state of every link and vertex the box shares with it. */
static tc_status box_copy_state(tc_topo *box, const tc_topo *pt, tc_err *err)
{
    uint32_t G = box->node_size;
    bool any_failed = pt->n_failed || pt->vertex_failed;
    if (any_failed && fail_arrays(box, err))
        return TC_EINTERNAL;
    for (uint32_t l = 0; l < box->n_links; l++) {
        tc_link *k = &box->links[l];
        uint32_t pl = UINT32_MAX;
        if (k->kind == TC_LINK_FABRIC) {
            /* the parent's link out of the same vertex along the same
             * dimension and direction, if it ends where this one does */
            int d = box->box_pdim[k->level - 1];
            uint32_t ps = tc_topo_box_parent_endpoint(box, k->src), pd = tc_topo_box_parent_endpoint(box, k->dst);
            uint32_t c = tc_topo_torus_link(pt, ps, d, k->dir);
            if (c != UINT32_MAX && pt->links[c].dst == pd)
                pl = c;
        } else if (k->kind == TC_LINK_NODE) {
            uint32_t b = (l - box->node_lbase) / 2;
            pl = pt->node_lbase + 2 * tc_topo_box_parent_endpoint(box, b) + (l & 1u);
        }
        box->box_link[l] = pl;
        if (pl == UINT32_MAX)
            continue;
        k->bw = pt->links[pl].bw;
        k->lat = pt->links[pl].lat;
        if (tc_topo_link_failed(pt, pl)) {
            box->link_failed[l] = 1;
            box->n_failed++;
        }
    }
    for (uint32_t v = 0; any_failed && pt->vertex_failed && v < box->n_vertices; v++) {
        uint32_t pv = v < box->n_endpoints
                          ? tc_topo_box_parent_endpoint(box, v)
                          : pt->node_vbase + tc_topo_box_parent_endpoint(box, (v - box->node_vbase) * G) / G;
        if (!pt->vertex_failed[pv])
            continue;
        box->vertex_failed[v] = 1; /* and every link at it, the optical circuits too */
        for (uint32_t j = box->out_off[v]; j < box->out_off[v + 1]; j++) {
            uint32_t l = box->out_link[j];
            fail_one(box, l);
            fail_one(box, l ^ 1u);
        }
    }
    for (uint32_t l = 0; l < box->n_links; l++) {
        const tc_link *k = &box->links[l];
        double nominal = k->kind == TC_LINK_NODE ? box->node_bw : box->torus_bw;
        if (!tc_topo_link_failed(box, l) && k->bw != nominal)
            box->n_degraded++;
    }
    return TC_OK;
}

tc_status tc_topo_torus_box(const tc_topo *pt, const uint32_t *origin, const uint32_t *extent, bool wrap_all,
                            tc_topo **out, tc_err *err)
{
    *out = NULL;
    if (!pt || pt->kind != TC_TOPO_TORUS)
        return tc_fail(err, TC_EINVAL, "a box of a topology needs a torus");
    int k = 0;
    for (int d = 0; d < pt->ndims; d++) {
        if (extent[d] < 1 || origin[d] >= pt->dims[d] || extent[d] > pt->dims[d] - origin[d])
            return tc_fail(err, TC_EINVAL, "box: dimension %d from %u over %u does not fit the torus's %u", d,
                           origin[d], extent[d], pt->dims[d]);
        k += extent[d] > 1;
    }
    if (k == 0)
        return tc_fail(err, TC_EINVAL, "box: a single endpoint is no torus (every extent is 1)");
    tc_topo *t = tc_calloc(1, sizeof *t);
    if (!t)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    t->kind = TC_TOPO_TORUS;
    t->box_pndims = pt->ndims;
    for (int d = 0; d < pt->ndims; d++) {
        t->box_pdims[d] = pt->dims[d];
        t->box_origin[d] = origin[d];
        if (extent[d] < 2)
            continue;
        t->box_pdim[t->ndims] = (uint8_t)d;
        t->dims[t->ndims] = extent[d];
        t->wrap[t->ndims] = wrap_all || (extent[d] == pt->dims[d] && pt->wrap[d]);
        t->ndims++;
    }
    uint64_t fabric = 0;
    tc_status st = tc_torus_layout(t, &fabric, err);
    if (st) {
        free(t);
        return st;
    }
    t->torus_bw = pt->torus_bw;
    t->torus_lat = pt->torus_lat;
    t->hop_lat = pt->hop_lat;
    t->alpha = pt->alpha;
    t->reduce_bw = pt->reduce_bw;
    t->seed = pt->seed;
    t->arch = pt->arch;
    t->transport = pt->transport;
    t->nic_path = pt->nic_path;
    t->net_lat_given = pt->net_lat_given;
    memcpy(t->net_lat, pt->net_lat, sizeof t->net_lat);
    t->net_eff = pt->net_eff;
    t->p2p_net_bw = pt->p2p_net_bw;
    if (pt->node_size > 1) {
        if (!box_whole_nodes(t, pt->node_size)) {
            char e[96], o[96] = "(";
            for (int d = 0; d < pt->ndims; d++)
                tc_topo_put(o, sizeof o, "%s%u", d ? "," : "", origin[d]);
            tc_topo_put(o, sizeof o, ")");
            uint32_t G = pt->node_size;
            free(t);
            return tc_fail(err, TC_EINVAL, "the box %s at %s cuts the topology's scale-up nodes (node=%u): a torus of "
                                           "its own needs whole nodes, every %u consecutive endpoints of the box "
                                           "(first dimension fastest) one node",
                           tc_topo_list_str(extent, pt->ndims, e, sizeof e), o, G, G);
        }
        t->node_size = pt->node_size;
        t->node_bw = pt->node_bw;
        t->node_lat = pt->node_lat;
        t->node_hop_lat = pt->node_hop_lat;
        t->node_reduce = pt->node_reduce;
        t->p2p_bw = pt->p2p_bw;
    }
    if ((st = assemble(t, fabric, out, err)))
        return st;
    t->box_link = tc_calloc(t->n_links, sizeof *t->box_link);
    if (!t->box_link) {
        tc_topo_free(t);
        *out = NULL;
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    if ((st = box_copy_state(t, pt, err))) {
        tc_topo_free(t);
        *out = NULL;
    }
    return st;
}

void tc_topo_free(tc_topo *t)
{
    if (!t)
        return;
    if (t->kind == TC_TOPO_MULTIDC)
        tc_multidc_free(t);
    free(t->links);
    free(t->box_link);
    free(t->hslot);
    free(t->link_failed);
    free(t->vertex_failed);
    free(t->out_off);
    free(t->out_link);
    free(t);
}

/* ---- edits ---- */

static double injection(const tc_topo *t)
{
    tc_topo_info info;
    tc_topo_get_info(t, &info);
    return info.injection_Bps;
}

double tc_topo_equalize_base(const tc_topo *t)
{
    if (t->kind == TC_TOPO_TORUS) {
        /* A mesh's endpoints differ: the interior ones, with 2 ports per
         * dimension of size above 2 (1 for size 2), inject R, so that a mesh
         * and a torus compare at equal link bandwidth (the corner, which the
         * injection figure is, has fewer). A torus: the same figure. */
        double ports = 0;
        for (int d = 0; d < t->ndims; d++)
            ports += t->dims[d] > 2 ? 2 : t->dims[d] == 2 ? 1 : 0;
        if (ports > 0)
            return ports * t->torus_bw;
    }
    return injection(t);
}

tc_status tc_topo_equalize_injection(tc_topo *t, double rate, tc_err *err)
{
    if (!t)
        return tc_fail(err, TC_EINVAL, "equalize injection: no topology");
    if (!(rate > 0) || !isfinite(rate))
        return tc_fail(err, TC_EINVAL, "equalize injection: rate must be positive, e.g. 400Gbps");
    if (t->kind == TC_TOPO_MULTIDC) /* every pod's own fabric; the gateway and long-haul links as given */
        return tc_multidc_equalize(t, rate, err);
    double f = rate / tc_topo_equalize_base(t);
    for (uint32_t l = 0; l < t->n_links; l++)
        if (t->links[l].kind == TC_LINK_FABRIC || (t->links[l].kind == TC_LINK_NIC && !t->nic_bw_given))
            t->links[l].bw *= f;
    for (int i = 1; i <= t->levels; i++)
        t->level_bw[i] *= f;
    t->torus_bw *= f;
    canonical_spec(t); /* the spec states the equalized bandwidths */
    return TC_OK;
}

tc_status tc_topo_degrade_link(tc_topo *t, uint32_t link, double factor, tc_err *err)
{
    if (!t)
        return tc_fail(err, TC_EINVAL, "degrade link: no topology");
    if (link >= t->n_links)
        return tc_fail(err, TC_EINVAL, "degrade link: link %u does not exist (the topology has links 0..%u)", link,
                       t->n_links - 1);
    if (!(factor > 0) || !isfinite(factor))
        return tc_fail(err, TC_EINVAL, "degrade link: factor %g must be above 0 (0.5 halves the bandwidth)", factor);
    t->links[link].bw *= factor;
    if (factor != 1)
        t->n_degraded++;
    uint32_t k, pl;
    if (t->kind == TC_TOPO_MULTIDC && tc_multidc_pod_link(t, link, &k, &pl)) {
        t->pod[k]->links[pl].bw = t->links[link].bw;
        if (factor != 1)
            t->pod[k]->n_degraded++;
    }
    return TC_OK;
}

/* ---- failures ---- */

static tc_status fail_arrays(tc_topo *t, tc_err *err)
{
    if (!t->link_failed)
        t->link_failed = tc_calloc(t->n_links, 1);
    if (!t->vertex_failed)
        t->vertex_failed = tc_calloc(t->n_vertices, 1);
    if (!t->link_failed || !t->vertex_failed || (t->kind == TC_TOPO_MULTIDC && !tc_multidc_fail_arrays(t)))
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    return TC_OK;
}

tc_status tc_topo_fail_save(tc_topo *t, tc_fail_state *fs, tc_err *err)
{
    memset(fs, 0, sizeof *fs);
    tc_status st = fail_arrays(t, err);
    if (st)
        return st;
    fs->bw = tc_calloc(t->n_links, sizeof *fs->bw);
    fs->lf = tc_calloc(t->n_links, 1);
    fs->vf = tc_calloc(t->n_vertices, 1);
    if (!fs->bw || !fs->lf || !fs->vf)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    for (uint32_t l = 0; l < t->n_links; l++)
        fs->bw[l] = t->links[l].bw;
    memcpy(fs->lf, t->link_failed, t->n_links);
    memcpy(fs->vf, t->vertex_failed, t->n_vertices);
    fs->nf = t->n_failed;
    return TC_OK;
}

void tc_topo_fail_restore(tc_topo *t, const tc_fail_state *fs)
{
    for (uint32_t l = 0; l < t->n_links; l++)
        if (t->link_failed[l] != fs->lf[l])
            t->links[l].bw = fs->bw[l];
    memcpy(t->link_failed, fs->lf, t->n_links);
    memcpy(t->vertex_failed, fs->vf, t->n_vertices);
    t->n_failed = fs->nf;
    if (t->kind == TC_TOPO_MULTIDC)
        tc_multidc_sync_all(t);
}

void tc_fail_state_free(tc_fail_state *fs)
{
    free(fs->bw), free(fs->lf), free(fs->vf);
    memset(fs, 0, sizeof *fs);
}

static void fail_one(tc_topo *t, uint32_t l)
{
    if (t->link_failed[l])
        return;
    t->link_failed[l] = 1;
    t->links[l].bw = 0;
    t->n_failed++;
    if (t->kind == TC_TOPO_MULTIDC) /* the pods route inside themselves around it */
        tc_multidc_sync_link(t, l);
}

tc_status tc_topo_fail_link(tc_topo *t, uint32_t link, bool both, tc_err *err)
{
    if (!t || link >= t->n_links)
        return tc_fail(err, TC_EINVAL, "fail %slink:%u: no such link (the topology has links 0 to %u, as topocc topo "
                                       "SPEC --links prints them)",
                       both ? "" : "d", link, t ? t->n_links - 1 : 0);
    tc_status st = fail_arrays(t, err);
    if (st)
        return st;
    fail_one(t, link);
    if (both)
        fail_one(t, link ^ 1u); /* every cable is a pair of links 2k, 2k + 1 */
    return TC_OK;
}

/* Fails vertex v and every link at it. */
static tc_status fail_vertex(tc_topo *t, uint32_t v, tc_err *err)
{
    tc_status st = fail_arrays(t, err);
    if (st)
        return st;
    t->vertex_failed[v] = 1;
    if (t->kind == TC_TOPO_MULTIDC)
        tc_multidc_sync_vertex(t, v);
    for (uint32_t k = t->out_off[v]; k < t->out_off[v + 1]; k++) {
        uint32_t l = t->out_link[k];
        fail_one(t, l);
        fail_one(t, l ^ 1u);
    }
    return TC_OK;
}

tc_status tc_topo_fail_switch(tc_topo *t, uint32_t vertex, tc_err *err)
{
    if (t->kind == TC_TOPO_MULTIDC) {
        /* the pods' fabric switches (torus: routers, the endpoints' vertices) and the gateways */
        bool torus = tc_topo_fabric_kind(t) == TC_TOPO_TORUS;
        uint32_t lo = torus ? 0 : t->n_endpoints, hi = t->n_endpoints + t->n_switches;
        if (vertex < lo || vertex >= hi)
            return tc_fail(err, TC_EINVAL, "fail switch:%u: the %s and gateways are vertices %u to %u (the gateways "
                                           "from %u, as topocc topo SPEC --links prints them)",
                           vertex, torus ? "routers" : "fabric switches", lo, hi - 1, t->gw_vbase);
        return fail_vertex(t, vertex, err);
    }
    if (t->kind == TC_TOPO_FULL)
        return tc_fail(err, TC_EINVAL, "fail switch:%u: a full mesh has no switches (every pair of endpoints is joined "
                                       "directly): fail host:ID or link:ID instead",
                       vertex);
    if (t->kind == TC_TOPO_TORUS) {
        if (vertex >= t->n_endpoints)
            return tc_fail(err, TC_EINVAL, "fail switch:%u: a torus's routers are its endpoints 0 to %u", vertex,
                           t->n_endpoints - 1);
        return fail_vertex(t, vertex, err);
    }
    if (vertex < t->n_endpoints || vertex >= t->n_endpoints + t->n_switches)
        return tc_fail(err, TC_EINVAL, "fail switch:%u: the fabric switches are vertices %u to %u (as topocc topo SPEC "
                                       "--links prints them; node:ID fails a scale-up node)",
                       vertex, t->n_endpoints, t->n_endpoints + t->n_switches - 1);
    return fail_vertex(t, vertex, err);
}

tc_status tc_topo_fail_host(tc_topo *t, uint32_t endpoint, tc_err *err)
{
    if (endpoint >= t->n_endpoints)
        return tc_fail(err, TC_EINVAL, "fail host:%u: the endpoints are 0 to %u", endpoint, t->n_endpoints - 1);
    return fail_vertex(t, endpoint, err);
}

tc_status tc_topo_fail_node(tc_topo *t, uint32_t node, tc_err *err)
{
    uint32_t G = t->node_size;
    if (G < 2)
        return tc_fail(err, TC_EINVAL, "fail node:%u: the topology has no scale-up nodes (node=G): fail host:ID instead",
                       node);
    if (node >= t->n_endpoints / G)
        return tc_fail(err, TC_EINVAL, "fail node:%u: the scale-up nodes are 0 to %u", node, t->n_endpoints / G - 1);
    tc_status st = fail_vertex(t, t->node_vbase + node, err);
    for (uint32_t e = node * G; e < (node + 1) * G && st == TC_OK; e++)
        st = fail_vertex(t, e, err);
    return st;
}

uint32_t tc_topo_fabric_cables(const tc_topo *t, bool host, bool scaleup, uint32_t *out)
{
    uint32_t n = 0;
    for (uint32_t l = 0; l < t->n_links; l += 2) {
        const tc_link *k = &t->links[l];
        bool take;
        if (k->kind == TC_LINK_NODE)
            take = scaleup;
        else if (k->kind == TC_LINK_NIC)
            take = host;
        else if (k->kind == TC_LINK_GW || k->kind == TC_LINK_WAN)
            take = true;
        else if (tc_topo_fabric_kind(t) == TC_TOPO_CLOS)
            take = k->level > 1 || host; /* level 1: host slot (endpoint or NIC) to leaf */
        else
            take = true;
        if (take)
            out[n++] = l;
    }
    return n;
}

/* ---- routing ---- */

#define KIND_BIT(k) (1u << (k))
static const struct {
    const char *name;
    tc_routing r;
    unsigned kinds; /* KIND_BIT of each kind it fits */
} routings[] = {
    {"ecmp", TC_ROUTE_ECMP, KIND_BIT(TC_TOPO_CLOS)},
    {"dmodk", TC_ROUTE_DMODK, KIND_BIT(TC_TOPO_CLOS)},
    {"dor", TC_ROUTE_DOR, KIND_BIT(TC_TOPO_TORUS)},
    {"dor-positive", TC_ROUTE_DOR_POSITIVE, KIND_BIT(TC_TOPO_TORUS)},
    {"detour", TC_ROUTE_DETOUR, KIND_BIT(TC_TOPO_TORUS) | KIND_BIT(TC_TOPO_FULL)},
    {"line", TC_ROUTE_LINE, KIND_BIT(TC_TOPO_TORUS)},
    {"direct", TC_ROUTE_DIRECT, KIND_BIT(TC_TOPO_FULL)},
};
#define N_ROUTINGS (sizeof routings / sizeof *routings)

static const char *kind_routings(tc_topo_kind k)
{
    return k == TC_TOPO_CLOS ? "ecmp or dmodk" : k == TC_TOPO_FULL ? "direct or detour" : "dor, dor-positive, detour or line";
}

/* Whether routing r applies to a fabric of kind k. */
static bool routing_fits(tc_routing r, tc_topo_kind k)
{
    for (size_t i = 0; i < N_ROUTINGS; i++)
        if (routings[i].r == r)
            return (routings[i].kinds & KIND_BIT(k)) != 0;
    return false;
}

tc_status tc_routing_parse(const char *s, const tc_topo *t, tc_routing *out, tc_err *err)
{
    if (s && strcmp(s, "default") == 0) {
        *out = TC_ROUTE_DEFAULT;
        return TC_OK;
    }
    for (size_t i = 0; s && i < N_ROUTINGS; i++) {
        if (strcmp(s, routings[i].name) != 0)
            continue;
        if (t && !(routings[i].kinds & KIND_BIT(tc_topo_fabric_kind(t)))) {
            tc_topo_kind k = tc_topo_fabric_kind(t);
            return tc_fail(err, TC_EINVAL, "routing '%s' does not fit a %s%s: use %s", s,
                           k == TC_TOPO_FULL ? "full mesh" : tc_topo_kind_name(k),
                           t->kind == TC_TOPO_MULTIDC ? " pod" : "", kind_routings(k));
        }
        *out = routings[i].r;
        return TC_OK;
    }
    return tc_fail(err, TC_EINVAL,
                   "unknown routing '%s': expected ecmp or dmodk (clos), dor, dor-positive, detour or line (torus), "
                   "direct or detour (full)",
                   s ? s : "");
}

static tc_routing resolve(tc_routing r, const tc_topo *t)
{
    tc_topo_kind k = tc_topo_fabric_kind(t);
    if (r == TC_ROUTE_DEFAULT || !routing_fits(r, k))
        return k == TC_TOPO_CLOS ? TC_ROUTE_ECMP
               : t->n_failed     ? TC_ROUTE_DETOUR
               : k == TC_TOPO_FULL ? TC_ROUTE_DIRECT
                                   : TC_ROUTE_DOR;
    return r;
}

const char *tc_routing_name(tc_routing r, const tc_topo *t)
{
    if (t)
        r = resolve(r, t);
    for (size_t i = 0; i < N_ROUTINGS; i++)
        if (routings[i].r == r)
            return routings[i].name;
    return "default";
}

uint32_t tc_topo_max_path(const tc_topo *t)
{
    if (t->kind == TC_TOPO_MULTIDC)
        return tc_multidc_max_path(t);
    tc_topo_info info;
    tc_topo_get_info(t, &info);
    uint32_t fabric = t->kind == TC_TOPO_CLOS ? 2 * (uint32_t)t->top_level + (t->nics ? 2 : 0) : info.diameter;
    if (t->kind == TC_TOPO_FULL && t->n_failed)
        fabric = 2; /* detour: through one other endpoint */
    if (t->kind == TC_TOPO_TORUS && t->n_failed) {
        /* detour: 3 links for a hop; line: the longer way round */
        fabric = 0;
        for (int d = 0; d < t->ndims; d++)
            fabric += 3 * (t->dims[d] - 1);
    }
    return t->node_size > 1 && fabric < 2 ? 2 : fabric;
}

uint32_t tc_topo_node_of(const tc_topo *t, uint32_t v)
{
    if (t->node_size < 2)
        return UINT32_MAX;
    if (v < t->n_endpoints)
        return v / t->node_size;
    uint32_t nodes = t->n_endpoints / t->node_size;
    return v >= t->node_vbase && v - t->node_vbase < nodes ? v - t->node_vbase : UINT32_MAX;
}

bool tc_topo_same_node(const tc_topo *t, uint32_t a, uint32_t b)
{
    uint32_t na = tc_topo_node_of(t, a);
    return na != UINT32_MAX && na == tc_topo_node_of(t, b);
}

/* Whether none of the n links is failed. */
static bool route_alive(const tc_topo *t, const uint32_t *links, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (t->link_failed[links[i]])
            return false;
    return true;
}


uint32_t tc_topo_route(const tc_topo *t, tc_routing r, uint32_t src, uint32_t dst, uint32_t *links)
{
    if (t->kind == TC_TOPO_MULTIDC)
        return tc_multidc_route(t, r, src, dst, links, t->n_failed != 0);
    if (!t->n_failed)
        return tc_topo_route_healthy(t, r, src, dst, links);
    if (src == dst)
        return 0;
    if (tc_topo_vertex_failed(t, src) || tc_topo_vertex_failed(t, dst))
        return TC_NO_ROUTE;
    r = resolve(r, t);
    bool fabric = src < t->n_endpoints && dst < t->n_endpoints &&
                  !(t->node_size > 1 && src / t->node_size == dst / t->node_size);
    if (fabric && t->kind == TC_TOPO_CLOS)
        return tc_clos_route_ft(t, r, src, dst, links);
    if (fabric && t->kind == TC_TOPO_FULL)
        return tc_full_route_ft(t, r, src, dst, links);
    if (fabric && (r == TC_ROUTE_DETOUR || r == TC_ROUTE_LINE))
        return tc_torus_route_ft(t, r, src, dst, links);
    /* plain dimension order, a node or a tree hop: no alternative */
    uint32_t n = tc_topo_route_healthy(t, r, src, dst, links);
    return n != TC_NO_ROUTE && route_alive(t, links, n) ? n : TC_NO_ROUTE;
}

uint32_t tc_topo_route_healthy(const tc_topo *t, tc_routing r, uint32_t src, uint32_t dst, uint32_t *links)
{
    if (t->kind == TC_TOPO_MULTIDC)
        return tc_multidc_route(t, r, src, dst, links, false);
    if (src == dst)
        return 0;
    if (src >= t->n_endpoints || dst >= t->n_endpoints) {
        /* a fabric switch and an endpoint or switch below it (in-network
         * reduction in the fabric): the tree's path between them */
        uint32_t f = t->n_endpoints + t->n_switches;
        if (t->kind == TC_TOPO_CLOS && ((src >= t->n_endpoints && src < f) || (dst >= t->n_endpoints && dst < f)))
            return tc_clos_route_vertical(t, src, dst, links);
        /* an endpoint and its own node switch: the node link between them */
        uint32_t e = src < t->n_endpoints ? src : dst, sw = src < t->n_endpoints ? dst : src;
        if (e >= t->n_endpoints || tc_topo_node_of(t, sw) != tc_topo_node_of(t, e) || tc_topo_node_of(t, e) == UINT32_MAX)
            return 0;
        links[0] = t->node_lbase + 2 * e + (src == sw);
        return 1;
    }
    if (t->node_size > 1 && src / t->node_size == dst / t->node_size) {
        links[0] = t->node_lbase + 2 * src;
        links[1] = t->node_lbase + 2 * dst + 1;
        return 2;
    }
    if (t->kind == TC_TOPO_FULL)
        return tc_full_route(t, src, dst, links);
    r = resolve(r, t);
    return t->kind == TC_TOPO_CLOS ? tc_clos_route(t, r, src, dst, links) : tc_torus_route(t, r, src, dst, links);
}

/* ---- figures and names ---- */

const char *tc_topo_kind_name(tc_topo_kind k)
{
    return k == TC_TOPO_CLOS      ? "clos"
           : k == TC_TOPO_TORUS   ? "torus"
           : k == TC_TOPO_MULTIDC ? "multidc"
           : k == TC_TOPO_FULL    ? "full"
                                  : "?";
}

const char *tc_link_kind_name(tc_link_kind k)
{
    static const char *names[] = {"fabric", "node", "nic", "gw", "wan"};
    return (unsigned)k < sizeof names / sizeof *names ? names[k] : "?";
}

void tc_topo_get_info_as_is(const tc_topo *t, tc_topo_info *info)
{
    tc_topo_get_info(t, info);
    if (!t->n_failed && !t->n_degraded)
        return;
    if (t->kind == TC_TOPO_CLOS)
        tc_clos_info_as_is(t, info);
    else if (t->kind == TC_TOPO_TORUS)
        info->bisection_Bps = tc_torus_bisection_as_is(t);
    else if (t->kind == TC_TOPO_FULL)
        info->bisection_Bps = tc_full_bisection_as_is(t);
}

void tc_topo_get_info(const tc_topo *t, tc_topo_info *info)
{
    memset(info, 0, sizeof *info);
    info->endpoints = t->n_endpoints;
    info->switches = t->n_switches;
    info->links = t->n_links;
    if (t->kind == TC_TOPO_MULTIDC) {
        tc_multidc_info(t, info);
        return;
    }
    if (t->kind == TC_TOPO_CLOS)
        tc_clos_info(t, info);
    else if (t->kind == TC_TOPO_FULL)
        tc_full_info(t, info);
    else
        tc_torus_info(t, info);
    uint32_t g = t->node_size;
    if (g < 2)
        return;
    info->node_switches = t->n_endpoints / g;
    double node = 2 * t->node_lat + t->node_hop_lat;
    if (node < info->min_latency_s)
        info->min_latency_s = node;
    if (g == t->n_endpoints) {
        /* One node holds everything: the fabric carries no route. */
        info->diameter = 2;
        info->max_latency_s = node;
    } else if (node > info->max_latency_s) {
        info->max_latency_s = node;
    }
}

const char *tc_topo_link_name(const tc_topo *t, uint32_t id, char *buf, size_t len)
{
    if (!t || id >= t->n_links) {
        snprintf(buf, len, "no link %u", id);
        return buf;
    }
    const tc_link *l = &t->links[id];
    if (l->kind == TC_LINK_NIC) {
        uint32_t e = (id - t->nic_lbase) / 2, nic = t->hslot[e];
        if (l->dir > 0)
            snprintf(buf, len, "ep %u -> nic %u", e, nic);
        else
            snprintf(buf, len, "nic %u -> ep %u", nic, e);
        return buf;
    }
    if (l->kind == TC_LINK_NODE) {
        uint32_t e = tc_topo_box_parent_endpoint(t, (id - t->node_lbase) / 2), node = e / t->node_size;
        if (l->dir > 0)
            snprintf(buf, len, "ep %u -> node %u", e, node);
        else
            snprintf(buf, len, "node %u -> ep %u", node, e);
        return buf;
    }
    if (t->kind == TC_TOPO_MULTIDC)
        return tc_multidc_link_name(t, id, buf, len);
    char a[96], b[96];
    if (t->kind == TC_TOPO_FULL)
        snprintf(buf, len, "ep %u -> ep %u", l->src, l->dst);
    else if (t->kind == TC_TOPO_CLOS)
        snprintf(buf, len, "%s -> %s", tc_clos_vertex_name(t, l->src, a, sizeof a),
                 tc_clos_vertex_name(t, l->dst, b, sizeof b));
    else /* a box's links by the parent's coordinates and dimensions */
        snprintf(buf, len, "%s -> %s dim %d%c%s", tc_torus_vertex_name(t, l->src, a, sizeof a),
                 tc_torus_vertex_name(t, l->dst, b, sizeof b),
                 t->box_link ? t->box_pdim[l->level - 1] : l->level - 1, l->dir > 0 ? '+' : '-',
                 t->box_link && t->box_link[id] == UINT32_MAX ? " (optical circuit)" : "");
    return buf;
}
