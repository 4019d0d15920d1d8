/*
 * clos.c - generalised fat trees XGFT(h; m_1..m_h; w_1..w_h) (Ohring, Ibel,
 * Das, Kumar, IPPS 1995), the hosts/radix/tiers/oversub shortcut that expands
 * into one, and their arithmetic routing (ecmp, D-mod-k).
 *
 * Model: level 0 holds the hosts, levels 1..h the switches. A level-i node is
 * labelled (a_h..a_{i+1}, b_i..b_1) with a_j < m_j and b_j < w_j; its parents
 * replace a_{i+1} by each b_{i+1} < w_{i+1}. Two hosts whose labels agree
 * above level L meet at level L, and every route between them climbs exactly
 * to L: the climb picks one b per level, the descent is then unique.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "topo_int.h"

/* "1", "1.5", "3": a plain positive decimal. */
static bool parse_positive(const char *s, double *out)
{
    if (!s || !isdigit((unsigned char)s[0]))
        return false;
    for (const char *c = s; *c; c++)
        if (!isdigit((unsigned char)*c) && *c != '.')
            return false;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end || errno == ERANGE || !isfinite(v) || v <= 0)
        return false;
    *out = v;
    return true;
}

/* The shortcut splits a radix-k leaf into k s/(s+1) down and k/(s+1) up
 * ports, so s is valid exactly when s + 1 divides k (for integer s). The
 * valid values nearest s, below and above, come from k's divisors, taken in
 * pairs up to sqrt(k): at most 65,536 steps whatever k and s (a search
 * counting from s would take up to k steps, and s may be any number). */
static tc_status oversub_error(uint32_t k, double s, tc_err *err)
{
    long lo = 0, hi = 0;
    for (uint64_t d = 1; d * d <= k; d++) {
        if (k % d)
            continue;
        long c[2] = {(long)d - 1, (long)(k / d) - 1};
        for (int i = 0; i < 2; i++) {
            if (c[i] >= 1 && (double)c[i] < s && c[i] > lo)
                lo = c[i];
            if (c[i] >= 1 && (double)c[i] > s && (!hi || c[i] < hi))
                hi = c[i];
        }
    }
    char near[96];
    if (lo && hi)
        snprintf(near, sizeof near, "nearest valid oversub values are %ld and %ld", lo, hi);
    else if (lo || hi)
        snprintf(near, sizeof near, "nearest valid oversub value is %ld", lo ? lo : hi);
    else
        snprintf(near, sizeof near, "no oversub value fits this radix");
    return tc_fail(err, TC_EINVAL,
                   "clos oversub=%g does not split radix %u into whole ports (radix*oversub/(oversub+1) down, "
                   "radix/(oversub+1) up): %s",
                   s, k, near);
}

/* Expands hosts/radix/tiers/oversub into XGFT parameters (see tc_topo_build
 * and docs): 2 tiers: down = D x L, up = 1 x U, L = ceil(N/D) <= k leaves,
 * U spines of L ports; 3 tiers (k-ary fat tree pods): down = D x k/2 x P,
 * up = 1 x U x k/2, U aggregation switches per pod with k/2 ports each way,
 * U*k/2 spines of P <= k ports, P = ceil(N/(D k/2)) pods. D = k s/(s+1),
 * U = k/(s+1). */
static tc_status expand_shortcut(tc_spec *sp, uint32_t hosts, uint32_t per_slot, int *h, uint32_t *m, uint32_t *w,
                                 tc_err *err)
{
    uint32_t k = 0, tiers = 0;
    bool has_tiers = false;
    tc_status st = tc_topo_get_u32(sp, "clos", "radix", &k, NULL, err);
    if (st == TC_OK)
        st = tc_topo_get_u32(sp, "clos", "tiers", &tiers, &has_tiers, err);
    if (st != TC_OK)
        return st;
    if (k == 0)
        return tc_fail(err, TC_EINVAL, "clos shortcut needs radix=K (switch ports), e.g. clos:hosts=4096,radix=32,tiers=3");
    if (has_tiers && tiers != 2 && tiers != 3)
        return tc_fail(err, TC_EINVAL, "clos tiers=%u: expected tiers=2 or tiers=3", tiers);
    double s = 1;
    const char *os = tc_spec_get(sp, "oversub");
    if (os && !parse_positive(os, &s))
        return tc_fail(err, TC_EINVAL, "clos oversub='%s': expected a positive number such as 1, 3 or 1.5", os);
    double u = k / (s + 1);
    double ur = floor(u + 0.5);
    if (fabs(u - ur) > 1e-9 * u || ur < 1 || ur >= k)
        return oversub_error(k, s, err);
    uint32_t U = (uint32_t)ur, D = k - U;
    uint64_t max2 = (uint64_t)D * k;
    uint64_t max3 = k % 2 == 0 ? (uint64_t)D * (k / 2) * k : 0;
    if (!has_tiers)
        tiers = hosts <= max2 ? 2 : 3;
    if (tiers == 3 && k % 2)
        return tc_fail(err, TC_EINVAL,
                       "clos tiers=3 needs an even radix (aggregation switches have radix/2 ports each way), radix=%u given", k);
    uint64_t max = tiers == 2 ? max2 : max3;
    if (hosts > max)
        return tc_fail(err, TC_EINVAL,
                       "clos radix=%u with oversub=%g and %u tiers reaches at most %llu hosts, hosts=%llu given: %s",
                       k, s, tiers, (unsigned long long)(max * per_slot), (unsigned long long)hosts * per_slot,
                       tiers == 2 ? "use tiers=3 or a larger radix" : "use a larger radix");
    if (tiers == 2) {
        *h = 2;
        m[1] = D, m[2] = (hosts + D - 1) / D;
        w[1] = 1, w[2] = U;
    } else {
        uint32_t pod = D * (k / 2);
        *h = 3;
        m[1] = D, m[2] = k / 2, m[3] = (hosts + pod - 1) / pod;
        w[1] = 1, w[2] = U, w[3] = k / 2;
    }
    return TC_OK;
}

/* nics=K or gpus_per_nic=k (with node=G): the endpoints behind one NIC,
 * G / K; 1 without NICs. */
static tc_status read_nics(tc_spec *sp, tc_topo *t, uint32_t *per_slot, tc_err *err)
{
    uint32_t g = 0, K = 0, k = 0;
    bool has_node = false, has_k = false, has_gk = false;
    tc_status st = tc_topo_get_u32(sp, "clos", "node", &g, &has_node, err);
    if (st == TC_OK)
        st = tc_topo_get_u32(sp, "clos", "nics", &K, &has_k, err);
    if (st == TC_OK)
        st = tc_topo_get_u32(sp, "clos", "gpus_per_nic", &k, &has_gk, err);
    if (st == TC_OK)
        st = tc_topo_get_rate(sp, "clos", "nic_bw", &t->nic_bw, &t->nic_bw_given, err);
    if (st == TC_OK)
        st = tc_topo_get_time(sp, "clos", "nic_lat", &t->nic_lat, NULL, err);
    if (st != TC_OK)
        return st;
    *per_slot = 1;
    if (!has_k && !has_gk) {
        if (t->nic_bw_given || tc_spec_get(sp, "nic_lat"))
            return tc_fail(err, TC_EINVAL, "clos nic_bw= and nic_lat= need nics=K (NICs per node), e.g. node=8,nics=4");
        return TC_OK;
    }
    const char *key = has_k ? "nics" : "gpus_per_nic";
    if (has_k && has_gk)
        return tc_fail(err, TC_EINVAL, "clos spec gives both nics= and gpus_per_nic=: give one (nics=K NICs per node, or "
                                       "gpus_per_nic=k with K = G / k)");
    if (!has_node || g < 2)
        return tc_fail(err, TC_EINVAL, "clos %s= needs node=G (GPUs per node, G >= 2), e.g. node=8,nics=4", key);
    uint32_t v = has_k ? K : k;
    if (v == 0 || g % v != 0)
        return tc_fail(err, TC_EINVAL, "clos %s=%u does not fit a node of %u GPUs: give a divisor of %u", key, v, g, g);
    t->nics = has_k ? K : g / k;
    *per_slot = g / t->nics;
    return TC_OK;
}

static tc_status read_structure(tc_spec *sp, tc_topo *t, uint32_t per_slot, uint32_t *hosts, bool *has_hosts,
                                tc_err *err)
{
    tc_status st = tc_topo_get_u32(sp, "clos", "hosts", hosts, has_hosts, err);
    if (st != TC_OK)
        return st;
    if (*has_hosts && *hosts % per_slot != 0)
        return tc_fail(err, TC_EINVAL, "clos hosts=%u is not a whole number of NICs of %u endpoints each: give a "
                                       "multiple of %u",
                       *hosts, per_slot, per_slot);
    *hosts /= per_slot; /* host slots: NICs */
    bool shortcut = tc_spec_get(sp, "radix") || tc_spec_get(sp, "tiers") || tc_spec_get(sp, "oversub");
    bool xgft = tc_spec_get(sp, "down") || tc_spec_get(sp, "up") || tc_spec_get(sp, "links");
    if (shortcut && xgft)
        return tc_fail(err, TC_EINVAL,
                       "clos spec mixes two forms: give down=,up=[,links=][,hosts=] or hosts=,radix=[,tiers=][,oversub=]");
    for (int i = 0; i <= TC_MAX_LEVELS; i++)
        t->par[i] = 1;
    if (shortcut) {
        if (!*has_hosts)
            return tc_fail(err, TC_EINVAL, "clos shortcut needs hosts=N, e.g. clos:hosts=4096,radix=32,tiers=3");
        return expand_shortcut(sp, *hosts, per_slot, &t->levels, t->down, t->up, err);
    }
    if (!xgft || !tc_spec_get(sp, "down") || !tc_spec_get(sp, "up"))
        return tc_fail(err, TC_EINVAL,
                       "clos spec needs down=m1x..xmH,up=w1x..xwH (e.g. clos:down=8x8,up=1x8) "
                       "or hosts=N,radix=K (e.g. clos:hosts=4096,radix=32,tiers=3)");
    int nd = 0, nu = 0, np = 0;
    st = tc_topo_get_list(sp, "clos", "down", t->down + 1, TC_MAX_LEVELS, &nd, err);
    if (st == TC_OK)
        st = tc_topo_get_list(sp, "clos", "up", t->up + 1, TC_MAX_LEVELS, &nu, err);
    if (st == TC_OK && tc_spec_get(sp, "links"))
        st = tc_topo_get_list(sp, "clos", "links", t->par + 1, TC_MAX_LEVELS, &np, err);
    if (st != TC_OK)
        return st;
    if (nd != nu)
        return tc_fail(err, TC_EINVAL,
                       "clos down= has %d levels but up= has %d: give one value per switch level in both, e.g. down=8x8,up=1x8",
                       nd, nu);
    if (np && np != nd)
        return tc_fail(err, TC_EINVAL, "clos links= has %d values for %d levels: give one per level, e.g. links=1x2", np,
                       nd);
    t->levels = nd;
    return TC_OK;
}

static tc_status too_large(tc_err *err, const char *what, uint64_t n, uint64_t max)
{
    return tc_fail(err, TC_EINVAL, "clos too large: %llu %s, at most %llu", (unsigned long long)n, what,
                   (unsigned long long)max);
}

/* hosts: the populated host slots (NICs with nics=), per_slot endpoints each. */
static tc_status size_tree(tc_topo *t, uint32_t hosts, bool has_hosts, uint32_t per_slot, uint64_t *fabric_links,
                           tc_err *err)
{
    int h = t->levels;
    uint64_t span = 1, wp = 1;
    t->span[0] = t->wprod[0] = 1;
    for (int i = 1; i <= h; i++) {
        span *= t->down[i];
        wp *= t->up[i];
        if (span > TC_TOPO_MAX_VERTICES)
            return too_large(err, "host slots", span, TC_TOPO_MAX_VERTICES);
        if (wp > TC_TOPO_MAX_VERTICES)
            return too_large(err, "switches at one level", wp, TC_TOPO_MAX_VERTICES);
        t->span[i] = (uint32_t)span, t->wprod[i] = (uint32_t)wp;
    }
    if (!has_hosts)
        hosts = (uint32_t)span;
    else if (hosts > span)
        return tc_fail(err, TC_EINVAL, "clos hosts=%llu exceeds the %llu host slots (the product of down=%s): raise down= or lower hosts",
                       (unsigned long long)hosts * per_slot, (unsigned long long)span * per_slot,
                       per_slot > 1 ? ", times the endpoints per NIC" : "");
    if ((uint64_t)hosts * per_slot > TC_TOPO_MAX_VERTICES)
        return too_large(err, "endpoints", (uint64_t)hosts * per_slot, TC_TOPO_MAX_VERTICES);
    t->n_slots = hosts;
    t->n_endpoints = hosts * per_slot;
    t->level_count[0] = (uint32_t)span;
    uint64_t vertices = t->n_endpoints, links = 0;
    for (int i = 1; i <= h; i++) {
        uint64_t count = (uint64_t)(t->span[h] / t->span[i]) * t->wprod[i];
        uint64_t children = i == 1 ? hosts : t->level_count[i - 1];
        vertices += count;
        if (vertices > TC_TOPO_MAX_VERTICES)
            return too_large(err, "vertices", vertices, TC_TOPO_MAX_VERTICES);
        t->level_count[i] = (uint32_t)count;
        t->up_lbase[i] = (uint32_t)links;
        t->down_lbase[i] = (uint32_t)links + 1;
        links += 2 * children * t->up[i];
        if (links > TC_TOPO_MAX_LINKS)
            return too_large(err, "links", links, TC_TOPO_MAX_LINKS);
    }
    t->level_vbase[1] = t->n_endpoints;
    for (int i = 2; i <= h; i++)
        t->level_vbase[i] = t->level_vbase[i - 1] + t->level_count[i - 1];
    t->n_switches = (uint32_t)(vertices - t->n_endpoints);
    t->top_level = 0;
    while (t->top_level < h && t->span[t->top_level] < hosts)
        t->top_level++;
    *fabric_links = links;
    return TC_OK;
}

/* net_lat=L or net_lat=LL/LL128/SIMPLE (times): the seconds an NCCL
 * algorithm's network step takes with each protocol, one value for all
 * three or one each. */
static tc_status read_net_lat(tc_spec *sp, tc_topo *t, tc_err *err)
{
    const char *v = tc_spec_get(sp, "net_lat");
    if (!v)
        return TC_OK;
    int slashes = 0;
    for (const char *c = v; *c; c++)
        slashes += *c == '/';
    if (slashes != 0 && slashes != 2)
        return tc_fail(err, TC_EINVAL, "clos key 'net_lat': '%s': expected one time or three, LL/LL128/SIMPLE, e.g. "
                                       "net_lat=30us/30us/40us",
                       v);
    char buf[128];
    int n = 0;
    const char *p = v;
    while (n < 3) {
        const char *slash = strchr(p, '/');
        size_t k = slash ? (size_t)(slash - p) : strlen(p);
        tc_err e;
        double s = 0;
        if (k >= sizeof buf) /* cut, its end would go unread */
            return tc_fail(err, TC_EINVAL, "clos key 'net_lat': a time of %zu characters, at most %zu (net_lat=LL/LL128/"
                                           "SIMPLE, e.g. net_lat=30us/30us/40us, or one time for all three)",
                           k, sizeof buf - 1);
        memcpy(buf, p, k);
        buf[k] = '\0';
        if (tc_parse_time(buf, &s, &e) != TC_OK)
            return tc_fail(err, TC_EINVAL, "clos key 'net_lat': '%s': %s (net_lat=LL/LL128/SIMPLE, e.g. "
                                           "net_lat=30us/30us/40us, or one time for all three)",
                           v, e.msg);
        t->net_lat[n++] = s;
        if (!slash)
            break;
        p = slash + 1;
    }
    if (n == 1)
        t->net_lat[1] = t->net_lat[2] = t->net_lat[0];
    t->net_lat_given = true;
    return TC_OK;
}

static tc_status read_links(tc_spec *sp, tc_topo *t, tc_err *err)
{
    double bw = TC_TOPO_DEFAULT_BW, lat = TC_TOPO_DEFAULT_LAT;
    tc_status st = read_net_lat(sp, t, err);
    const char *ev = st == TC_OK ? tc_spec_get(sp, "net_eff") : NULL;
    if (ev) {
        char *end;
        double f = strtod(ev, &end);
        /* a decimal number as bw='s figures are (no space, no hex) */
        bool plain = (isdigit((unsigned char)ev[0]) || ev[0] == '.') && !strpbrk(ev, "xX");
        if (end == ev || *end || !plain || !(f > 0 && f <= 1))
            return tc_fail(err, TC_EINVAL, "clos key 'net_eff': '%s': expected a fraction above 0 and at most 1 (the "
                                           "share of the fabric links' line rate the transport reaches), e.g. "
                                           "net_eff=0.9",
                           ev);
        t->net_eff = f;
    }
    if (st == TC_OK)
        st = tc_topo_get_rate(sp, "clos", "bw", &bw, NULL, err);
    if (st == TC_OK)
        st = tc_topo_get_time(sp, "clos", "lat", &lat, NULL, err);
    for (int i = 1; st == TC_OK && i <= t->levels; i++) {
        char key[16];
        double b = bw, l = lat;
        snprintf(key, sizeof key, "bw%d", i);
        st = tc_topo_get_rate(sp, "clos", key, &b, NULL, err);
        snprintf(key, sizeof key, "lat%d", i);
        if (st == TC_OK)
            st = tc_topo_get_time(sp, "clos", key, &l, NULL, err);
        /* the rate reached is a rate too: at least 1 bit/s (tc_parse_rate) */
        if (st == TC_OK && !(b * t->net_eff >= 0.125))
            return tc_fail(err, TC_EINVAL,
                           "clos key 'net_eff': '%s': leaves level %d's links below 1bps (%gbps of %gbps); a rate "
                           "reached is from 1bps, a share of at least %g there",
                           tc_spec_get(sp, "net_eff"), i, b * t->net_eff * 8, b * 8, 0.125 / b);
        /* p parallel cables between the same pair of switches carry what one
         * cable of p times the bandwidth would: they are merged into one. */
        t->level_bw[i] = b * t->par[i] * t->net_eff;
        t->level_lat[i] = l;
    }
    return st;
}

tc_status tc_clos_configure(tc_spec *sp, tc_topo *t, uint64_t *fabric_links, tc_err *err)
{
    uint32_t hosts = 0, per_slot = 1;
    bool has_hosts = false;
    t->kind = TC_TOPO_CLOS;
    tc_status st = read_nics(sp, t, &per_slot, err);
    if (st == TC_OK)
        st = read_structure(sp, t, per_slot, &hosts, &has_hosts, err);
    if (st == TC_OK)
        st = size_tree(t, hosts, has_hosts, per_slot, fabric_links, err);
    if (st == TC_OK)
        st = read_links(sp, t, err);
    return st;
}

/* The vertex at host slot c: its NIC, or the endpoint there (the inverse
 * of topo.c's fill_slots). */
static uint32_t slot_vertex(const tc_topo *t, uint32_t c)
{
    if (t->nics)
        return t->nic_vbase + c;
    if (!t->rails)
        return c;
    uint32_t g = t->node_size, k = g / t->rails, nk = t->n_endpoints / g * k;
    uint32_t j = c / nk, rem = c % nk;
    return rem / k * g + j * k + rem % k;
}

void tc_clos_fill(tc_topo *t)
{
    for (int i = 1; i <= t->levels; i++) {
        uint32_t children = i == 1 ? t->n_slots : t->level_count[i - 1];
        uint32_t cbase = i == 1 ? 0 : t->level_vbase[i - 1];
        uint32_t m = t->down[i], w = t->up[i], wc = t->wprod[i - 1], wp = t->wprod[i];
        /* A link carries the traversal of the switch it enters: every up
         * link, and every down link but those into a host (topo.h, "Latency"). */
        double bw = t->level_bw[i], up_lat = t->level_lat[i] + t->hop_lat;
        double down_lat = t->level_lat[i] + (i > 1 ? t->hop_lat : 0);
        tc_link *l = t->links + t->up_lbase[i];
        for (uint32_t c = 0; c < children; c++) {
            uint32_t bc = c % wc, a = c / wc / m;
            /* Level 1: child c is host slot c, the vertex of its endpoint or NIC. */
            uint32_t v = i == 1 ? slot_vertex(t, c) : cbase + c;
            for (uint32_t b = 0; b < w; b++) {
                uint32_t parent = t->level_vbase[i] + bc + wc * b + wp * a;
                *l++ = (tc_link){v, parent, bw, up_lat, TC_LINK_FABRIC, (uint8_t)i, +1};
                *l++ = (tc_link){parent, v, bw, down_lat, TC_LINK_FABRIC, (uint8_t)i, -1};
            }
        }
    }
}

static uint32_t pick_parent(const tc_topo *t, tc_routing r, uint32_t src, uint32_t dst, int level)
{
    uint32_t w = t->up[level];
    if (w == 1)
        return 0;
    if (r == TC_ROUTE_DMODK)
        return dst / t->wprod[level - 1] % w;
    uint64_t key = tc_mix64(((uint64_t)src << 32 | dst) ^ tc_mix64(t->seed));
    return (uint32_t)(tc_mix64(key + (uint64_t)level) % w);
}

uint32_t tc_clos_route(const tc_topo *t, tc_routing r, uint32_t src, uint32_t dst, uint32_t *links)
{
    uint32_t n = 0;
    if (t->nics)
        links[n++] = t->nic_lbase + 2 * src; /* to its NIC, and from the other NIC at the end */
    uint32_t e_dst = dst;
    src = tc_topo_slot(t, src);
    dst = tc_topo_slot(t, dst);
    int top = 1;
    while (src / t->span[top] != dst / t->span[top])
        top++;
    uint32_t a = src, b = 0, idx = src;
    for (int i = 1; i <= top; i++) {
        uint32_t p = pick_parent(t, r, src, dst, i);
        links[n++] = t->up_lbase[i] + 2 * (idx * t->up[i] + p);
        b += t->wprod[i - 1] * p;
        a /= t->down[i];
        idx = b + t->wprod[i] * a;
    }
    for (int i = top; i >= 1; i--) {
        uint32_t p = b / t->wprod[i - 1];
        b %= t->wprod[i - 1];
        uint32_t child = b + t->wprod[i - 1] * (dst / t->span[i - 1]);
        links[n++] = t->down_lbase[i] + 2 * (child * t->up[i] + p);
    }
    if (t->nics)
        links[n++] = t->nic_lbase + 2 * e_dst + 1;
    return n;
}

/* A vertex's place in the tree: level 0 and its host slot for an
 * endpoint, the level and index of a fabric switch; -1 for anything else. */
static int tree_place(const tc_topo *t, uint32_t v, uint32_t *idx)
{
    if (v < t->n_endpoints) {
        *idx = tc_topo_slot(t, v);
        return 0;
    }
    for (int i = 1; i <= t->levels; i++)
        if (v >= t->level_vbase[i] && v - t->level_vbase[i] < t->level_count[i]) {
            *idx = v - t->level_vbase[i];
            return i;
        }
    return -1;
}

uint32_t tc_clos_route_vertical(const tc_topo *t, uint32_t src, uint32_t dst, uint32_t *links)
{
    uint32_t is, id;
    int ls = tree_place(t, src, &is), ld = tree_place(t, dst, &id);
    if (ls < 0 || ld < 0 || ls == ld)
        return 0;
    bool up = ls < ld;
    uint32_t lo = up ? src : dst, c = up ? is : id, target = up ? id : is;
    int l0 = up ? ls : ld, L = up ? ld : ls;
    uint32_t n = 0;
    if (l0 == 0 && t->nics)
        links[n++] = t->nic_lbase + 2 * lo; /* the endpoint to its NIC */
    uint32_t B = target % t->wprod[L];
    for (int i = l0 + 1; i <= L; i++) {
        uint32_t wc = t->wprod[i - 1], b = B / wc % t->up[i];
        links[n++] = t->up_lbase[i] + 2 * (c * t->up[i] + b);
        c = c % wc + wc * b + t->wprod[i] * (c / wc / t->down[i]);
    }
    if (c != target)
        return 0; /* not an ancestor */
    if (!up) {
        /* the same cables downwards, in the reverse order */
        for (uint32_t i = 0; i < n / 2; i++) {
            uint32_t x = links[i];
            links[i] = links[n - 1 - i];
            links[n - 1 - i] = x;
        }
        for (uint32_t i = 0; i < n; i++)
            links[i] += 1;
    }
    return n;
}

/* Where a route's choice at level i failed, the index that spreads the
 * routes displaced from it over the survivors: ECMP a second hash of the
 * flow (hardware rehashing the flows of a failed port over the surviving
 * ones); D-mod-k, still one port per destination at each switch, the
 * destination's next digit plus the deciding node's index is (a subnet
 * manager's recomputed tables balancing the destinations that lost their
 * port, and different switches sending one destination different ways). */
static uint32_t spread_index(const tc_topo *t, tc_routing r, uint32_t src, uint32_t dst, int level, uint32_t is)
{
    uint32_t w = t->up[level];
    if (r == TC_ROUTE_DMODK)
        return dst / t->wprod[level - 1] / w + is;
    uint64_t key = tc_mix64(((uint64_t)dst << 32 | src) ^ tc_mix64(t->seed ^ 0x5bd1e995u));
    return (uint32_t)(tc_mix64(key + (uint64_t)level) >> 11);
}

/* Whether level i's choice p leaves a surviving up-link from the source
 * side's node (is) and down-link into the destination side's (id). */
static bool choice_survives(const tc_topo *t, int i, uint32_t is, uint32_t id, uint32_t p)
{
    uint32_t w = t->up[i];
    return !tc_topo_link_failed(t, t->up_lbase[i] + 2 * (is * w + p)) &&
           !tc_topo_link_failed(t, t->down_lbase[i] + 2 * (id * w + p));
}

static bool clos_search(const tc_topo *t, tc_routing r, uint32_t ss, uint32_t sd, int top, int i, uint32_t is,
                        uint32_t id, uint32_t b, uint32_t *digit);

/* Level i's choice p, and the levels above it. */
static bool clos_try(const tc_topo *t, tc_routing r, uint32_t ss, uint32_t sd, int top, int i, uint32_t b,
                     uint32_t p, uint32_t *digit)
{
    uint32_t nb = b + t->wprod[i - 1] * p;
    uint32_t ns = nb + t->wprod[i] * (ss / t->span[i]), nd = nb + t->wprod[i] * (sd / t->span[i]);
    digit[i] = p;
    return clos_search(t, r, ss, sd, top, i + 1, ns, nd, nb, digit);
}

/* Fault-aware search for the up-link choices b_i .. b_top: level i's
 * choice must survive (choice_survives); the ECMP hash's or D-mod-k's
 * choice first; where it does not survive (or leads nowhere above), the
 * other survivors s_0 < s_1 < ... < s_{S-1} from s_j, j = spread_index mod
 * S, on cyclically, backtracking: the routes a failure displaces spread
 * evenly over the survivors. */
static bool clos_search(const tc_topo *t, tc_routing r, uint32_t ss, uint32_t sd, int top, int i, uint32_t is,
                        uint32_t id, uint32_t b, uint32_t *digit)
{
    if (i > top)
        return true;
    uint32_t w = t->up[i], first = pick_parent(t, r, ss, sd, i);
    if (choice_survives(t, i, is, id, first) && clos_try(t, r, ss, sd, top, i, b, first, digit))
        return true;
    uint32_t S = 0;
    for (uint32_t p = 0; p < w; p++)
        S += p != first && choice_survives(t, i, is, id, p);
    if (S == 0)
        return false;
    uint32_t j0 = spread_index(t, r, ss, sd, i, is) % S;
    /* survivors j0 .. S - 1, then 0 .. j0 - 1 */
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t p = 0, j = 0; p < w; p++) {
            if (p == first || !choice_survives(t, i, is, id, p))
                continue;
            bool mine = pass == 0 ? j >= j0 : j < j0;
            j++;
            if (mine && clos_try(t, r, ss, sd, top, i, b, p, digit))
                return true;
        }
    return false;
}

uint32_t tc_clos_route_ft(const tc_topo *t, tc_routing r, uint32_t src, uint32_t dst, uint32_t *links)
{
    uint32_t n = 0, e_src = src, e_dst = dst;
    if (t->nics) {
        if (tc_topo_link_failed(t, t->nic_lbase + 2 * src) || tc_topo_link_failed(t, t->nic_lbase + 2 * dst + 1))
            return TC_NO_ROUTE;
        links[n++] = t->nic_lbase + 2 * e_src;
    }
    uint32_t ss = tc_topo_slot(t, src), sd = tc_topo_slot(t, dst);
    int top = 1;
    while (ss / t->span[top] != sd / t->span[top])
        top++;
    uint32_t digit[TC_MAX_LEVELS + 1];
    if (!clos_search(t, r, ss, sd, top, 1, ss, sd, 0, digit))
        return TC_NO_ROUTE;
    uint32_t b = 0, idx = ss;
    for (int i = 1; i <= top; i++) {
        links[n++] = t->up_lbase[i] + 2 * (idx * t->up[i] + digit[i]);
        b += t->wprod[i - 1] * digit[i];
        idx = b + t->wprod[i] * (ss / t->span[i]);
    }
    for (int i = top; i >= 1; i--) {
        b %= t->wprod[i - 1];
        uint32_t child = b + t->wprod[i - 1] * (sd / t->span[i - 1]);
        links[n++] = t->down_lbase[i] + 2 * (child * t->up[i] + digit[i]);
    }
    if (t->nics)
        links[n++] = t->nic_lbase + 2 * e_dst + 1;
    return n;
}

double tc_topo_clos_path_lat(const tc_topo *t, int L)
{
    if (!t || t->kind != TC_TOPO_CLOS || L <= 0)
        return 0;
    if (L > t->levels)
        L = t->levels;
    double lat = 0;
    for (int i = 1; i <= L; i++)
        lat += 2 * t->level_lat[i];
    return lat + (2 * L - 1) * t->hop_lat;
}

void tc_clos_info(const tc_topo *t, tc_topo_info *info)
{
    uint32_t n = t->n_slots, per_slot = t->n_endpoints / t->n_slots;
    bool nic = t->nics != 0;
    info->diameter = 2 * (uint32_t)t->top_level + (nic ? 2 : 0);
    info->ports_per_endpoint = t->up[1];
    /* Behind a shared NIC an endpoint's share of it: its fabric ports over
     * the endpoints there, at most its own link to the NIC. */
    info->injection_Bps = t->up[1] * t->level_bw[1] / per_slot;
    if (nic && t->nic_bw_given && t->nic_bw < info->injection_Bps)
        info->injection_Bps = t->nic_bw;
    /* Bisection: cutting below level j separates whole level-(j-1)
     * subtrees, and n/2 hosts then own n/2 / span[j-1] of them, each with
     * wprod[j] up-links of level_bw[j]; the cut is the cheapest such level
     * among those routes use: (n/2) * min_j wprod[j] level_bw[j] / span[j-1].
     * Exact when n/2 is a multiple of the subtree sizes (a full XGFT with an
     * even top fan-out), a proportional share otherwise. */
    double per_host = 0;
    for (int j = 1; j <= t->top_level; j++) {
        double c = t->wprod[j] * t->level_bw[j] / t->span[j - 1];
        if (j == 1 || c < per_host)
            per_host = c;
    }
    info->bisection_Bps = (n / 2) * per_host;
    /* Slots 0 and 1 meet at the lowest level whose subtree holds two slots. */
    int low = 0;
    while (n >= 2 && low < t->levels && t->span[low] < 2)
        low++;
    double nl = nic ? 2 * t->nic_lat : 0;
    info->min_latency_s = (low ? nl : 0) + tc_topo_clos_path_lat(t, low);
    info->max_latency_s = nl + tc_topo_clos_path_lat(t, t->top_level);
    for (int i = 1; i < t->levels; i++)
        info->oversub[i] = (t->down[i] * t->level_bw[i]) / (t->up[i + 1] * t->level_bw[i + 1]);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The least sum of k of v's n values, k possibly fractional (the next
 * value's share); sorts v. */
static double least_sum(double *v, uint32_t n, double k)
{
    qsort(v, n, sizeof *v, cmp_double);
    double s = 0;
    for (uint32_t i = 0; i < n && k > 0; i++, k -= 1)
        s += v[i] * (k >= 1 ? 1 : k);
    return s;
}

void tc_clos_info_as_is(const tc_topo *t, tc_topo_info *info)
{
    uint32_t n = t->n_slots;
    /* Bisection: as tc_clos_info's cuts below level j, the half's level-(j-1)
     * subtrees the weakest ones: per direction, the least sum of
     * (n/2) / span[j-1] of the subtrees' up-link (down-link) capacities. */
    double bis = INFINITY;
    for (int j = 1; j <= t->top_level; j++) {
        uint32_t m = n / t->span[j - 1], wc = t->wprod[j - 1], w = t->up[j];
        double *up = calloc(m ? m : 1, sizeof *up), *dn = calloc(m ? m : 1, sizeof *dn);
        if (!up || !dn) {
            free(up), free(dn);
            return; /* out of memory: the healthy figures stay */
        }
        for (uint32_t a = 0; a < m; a++)
            for (uint32_t b = 0; b < wc; b++)
                for (uint32_t p = 0; p < w; p++) {
                    uint32_t l = t->up_lbase[j] + 2 * ((b + wc * a) * w + p);
                    up[a] += t->links[l].bw, dn[a] += t->links[l + 1].bw;
                }
        double k = (n / 2) / (double)t->span[j - 1];
        bis = fmin(bis, fmin(least_sum(up, m, k), least_sum(dn, m, k)));
        free(up), free(dn);
    }
    if (isfinite(bis))
        info->bisection_Bps = bis;
    /* Oversubscription at level i: the worst level-i switch's capacity
     * down to its children over its capacity up (infinite where every
     * up-link failed). */
    for (int i = 1; i < t->levels; i++) {
        uint32_t cnt = t->level_count[i], wc = t->wprod[i - 1], w = t->up[i], wu = t->up[i + 1];
        double *down = calloc(cnt ? cnt : 1, sizeof *down);
        if (!down)
            return;
        uint32_t children = i == 1 ? t->n_slots : t->level_count[i - 1]; /* hosts= fills n_slots slots */
        for (uint32_t c = 0; c < children; c++)
            for (uint32_t p = 0; p < w; p++) {
                uint32_t parent = c % wc + wc * p + t->wprod[i] * (c / wc / t->down[i]);
                if (parent < cnt)
                    down[parent] += t->links[t->up_lbase[i] + 2 * (c * w + p) + 1].bw;
            }
        double worst = 0;
        for (uint32_t c = 0; c < cnt; c++) {
            double upc = 0;
            for (uint32_t p = 0; p < wu; p++)
                upc += t->links[t->up_lbase[i + 1] + 2 * (c * wu + p)].bw;
            double r = upc > 0 ? down[c] / upc : (down[c] > 0 ? INFINITY : 0);
            worst = fmax(worst, r);
        }
        info->oversub[i] = worst;
        free(down);
    }
}

/* Levels that all share one value collapse into bw= / lat=. */
static void put_levels(const tc_topo *t, char *buf, size_t len, bool rate)
{
    char v[64];
    int h = t->levels;
    bool same = true;
    for (int i = 2; i <= h; i++)
        same &= rate ? t->level_bw[i] / t->par[i] == t->level_bw[1] / t->par[1] : t->level_lat[i] == t->level_lat[1];
    for (int i = 1; i <= (same ? 1 : h); i++) {
        const char *s = rate ? tc_topo_rate_str(t->level_bw[i] / t->par[i] / t->net_eff, v, sizeof v)
                             : tc_topo_time_str(t->level_lat[i], v, sizeof v);
        if (same)
            tc_topo_put(buf, len, ",%s=%s", rate ? "bw" : "lat", s);
        else
            tc_topo_put(buf, len, ",%s%d=%s", rate ? "bw" : "lat", i, s);
    }
}

void tc_clos_spec(const tc_topo *t, char *buf, size_t len)
{
    char a[96], b[96];
    int h = t->levels;
    tc_topo_put(buf, len, "clos:down=%s,up=%s", tc_topo_list_str(t->down + 1, h, a, sizeof a),
                tc_topo_list_str(t->up + 1, h, b, sizeof b));
    bool par = false;
    for (int i = 1; i <= h; i++)
        par |= t->par[i] != 1;
    if (par)
        tc_topo_put(buf, len, ",links=%s", tc_topo_list_str(t->par + 1, h, a, sizeof a));
    if (t->n_slots != t->level_count[0])
        tc_topo_put(buf, len, ",hosts=%u", t->n_endpoints);
    put_levels(t, buf, len, true);
    put_levels(t, buf, len, false);
}

const char *tc_clos_vertex_name(const tc_topo *t, uint32_t v, char *buf, size_t len)
{
    if (v < t->n_endpoints) {
        snprintf(buf, len, "host %u", v);
        return buf;
    }
    if (t->nics && v >= t->nic_vbase) {
        snprintf(buf, len, "nic %u", v - t->nic_vbase);
        return buf;
    }
    for (int i = 1; i <= t->levels; i++)
        if (v < t->level_vbase[i] + t->level_count[i]) {
            if (i == 1)
                snprintf(buf, len, "leaf %u", v - t->level_vbase[i]);
            else
                snprintf(buf, len, "L%d %u", i, v - t->level_vbase[i]);
            return buf;
        }
    snprintf(buf, len, "vertex %u", v);
    return buf;
}
