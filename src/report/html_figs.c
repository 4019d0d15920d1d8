/*
 * html_figs.c - which plots a report draws, read off the JSON documents
 * (docs/SCHEMA.md) rather than the typed outcomes, so that a fresh run, a
 * saved result and every point of a sweep are drawn by the same code.
 *
 * Per command (docs/REPORT.md): collective and compare, time and bus
 * bandwidth against size (one line per topology and algorithm, the lower
 * bound dashed); failures, the slowdown's histogram and its cumulative
 * share; train, the iteration's breakdown, communication per class and
 * memory; compress, time to accuracy with its interval, the bandwidth
 * sweep and the accuracy curves; train-accuracy, accuracy against step and
 * the steps ratios; codec-bench, throughputs; cluster, utilisation over
 * time and waiting; concurrent, each job shared against alone.
 *
 * A sweep: one plot per (axis, field). A field is a dotted path into a
 * point's result where "[]" takes every row of an array; the rows of one
 * point are told apart by the keys that differ among them (name, codec,
 * op, algorithm, size), and in a product sweep the other axes' values
 * make further lines. A numeric axis is drawn as lines, any other as
 * categories (bars).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "topocc/html.h"

/* ---- JSON helpers ---- */

static double num(const json_t *v)
{
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static double getn(const json_t *o, const char *k)
{
    return num(json_object_get(o, k));
}

static const char *gets(const json_t *o, const char *k, const char *dflt)
{
    const json_t *v = json_object_get(o, k);
    return json_is_string(v) ? json_string_value(v) : dflt;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* A value for a label: a string as it is, a number shortest, a size in
 * bytes as "1MiB" (bytes true), anything else as compact JSON; at most len. */
static void value_label(const json_t *v, bool bytes, char *buf, size_t len)
{
    char b[64];
    if (json_is_string(v))
        snprintf(buf, len, "%s", json_string_value(v));
    else if (json_is_number(v) && bytes)
        snprintf(buf, len, "%s", tc_fmt_size(json_number_value(v), b, sizeof b));
    else if (json_is_number(v))
        snprintf(buf, len, "%s", tc_fmt_shortest(json_number_value(v), b, sizeof b));
    else if (!v)
        snprintf(buf, len, "(none)");
    else {
        char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        snprintf(buf, len, "%s", s ? s : "?");
        free(s);
    }
}

/* "results[].time_s" -> "results-time-s": [a-z0-9-]. */
static void slug(const char *s, char *buf, size_t len)
{
    size_t k = 0;
    bool dash = false;
    for (; *s && k + 1 < len; s++) {
        char c = *s;
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
            if (dash && k)
                buf[k++] = '-';
            if (k + 1 < len)
                buf[k++] = c;
            dash = false;
        } else {
            dash = true;
        }
    }
    buf[k] = '\0';
    if (!k)
        snprintf(buf, len, "x");
}

/* ---- the list of plots ---- */

typedef struct figs {
    tc_plot *p;
    size_t n, max;
} figs;

static tc_plot *add(figs *F, tc_plot_kind kind, const char *name, const char *title, const char *xcol,
                    const char *ycol)
{
    if (F->n == F->max)
        return NULL;
    /* File names of [a-z0-9-], unique: a second "x" becomes "x-2". */
    char base[96], nm[96];
    slug(name, base, sizeof base);
    snprintf(nm, sizeof nm, "%s", base);
    for (int k = 2; k < 1000; k++) {
        bool used = false;
        for (size_t i = 0; i < F->n; i++)
            used |= strcmp(F->p[i].name, nm) == 0;
        if (!used)
            break;
        snprintf(nm, sizeof nm, "%.80s-%d", base, k);
    }
    tc_plot *p = &F->p[F->n++];
    tc_plot_init(p, kind, nm, title, xcol, ycol);
    return p;
}

/* Drops the plots without a point. */
static size_t prune(figs *F)
{
    size_t k = 0;
    for (size_t i = 0; i < F->n; i++) {
        if (tc_plot_count(&F->p[i]) == 0 && !F->p[i].oom) {
            tc_plot_free(&F->p[i]);
            continue;
        }
        if (k != i)
            F->p[k] = F->p[i];
        k++;
    }
    F->n = k;
    return k;
}

/* ---- collective and compare ---- */

static bool distinct_add(const char **seen, size_t *n, size_t max, const char *s)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp(seen[i], s) == 0)
            return false;
    if (*n < max)
        seen[(*n)++] = s;
    return true;
}

static bool has_x(const tc_plot_series *s, double x)
{
    for (size_t k = 0; k < s->n; k++)
        if (s->x[k] == x)
            return true;
    return false;
}

static const char *topo_of(const json_t *r)
{
    return gets(r, "name", gets(r, "topology", "?"));
}

static void label_of(const json_t *r, bool topo, bool algo, char *buf, size_t len)
{
    const char *a = gets(r, "algo_requested", gets(r, "algo", "?"));
    if (topo && algo)
        snprintf(buf, len, "%s %s", topo_of(r), a);
    else if (topo)
        snprintf(buf, len, "%s", topo_of(r));
    else
        snprintf(buf, len, "%s", a);
}

/* One operation's rows: time and bus bandwidth against size. */
static void net_op(figs *F, const json_t *rows, const char *op)
{
    const char *topos[64], *algos[64];
    size_t nt = 0, na = 0, ns = 0;
    double sizes[64];
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r) {
        if (strcmp(gets(r, "op", ""), op) != 0)
            continue;
        distinct_add(topos, &nt, 64, topo_of(r));
        distinct_add(algos, &na, 64, gets(r, "algo_requested", gets(r, "algo", "?")));
        double b = getn(r, "bytes");
        bool seen = false;
        for (size_t k = 0; k < ns; k++)
            seen |= sizes[k] == b;
        if (!seen && ns < 64)
            sizes[ns++] = b;
    }
    bool by_topo = nt > 1, by_algo = na > 1 || nt == 1;
    char name[96], title[256], lab[320];
    if (ns >= 2) {
        for (int busbw = 0; busbw < 2; busbw++) {
            snprintf(name, sizeof name, "%s-%s", busbw ? "busbw" : "time", op);
            snprintf(title, sizeof title, "%s: %s against size (dashed: the lower bound)", op,
                     busbw ? "bus bandwidth" : "completion time");
            tc_plot *p = add(F, TC_PLOT_LINES, name, title, "bytes", busbw ? "busbw_Bps" : "time_s");
            if (!p)
                return;
            snprintf(p->xlabel, sizeof p->xlabel, "size");
            snprintf(p->ylabel, sizeof p->ylabel, busbw ? "bus bandwidth" : "time");
            p->logx = p->logy = true;
            /* Lines first, then the bounds in their topology's colour. */
            json_array_foreach(rows, i, r) {
                if (strcmp(gets(r, "op", ""), op) != 0)
                    continue;
                label_of(r, by_topo, by_algo, lab, sizeof lab);
                tc_plot_point(p, tc_plot_series_of(p, lab), getn(r, "bytes"),
                              getn(r, busbw ? "busbw_Bps" : "time_s"), NAN, NAN);
            }
            json_array_foreach(rows, i, r) {
                if (strcmp(gets(r, "op", ""), op) != 0)
                    continue;
                double t = getn(r, "time_s"), lb = getn(r, "lower_bound_s"), b = getn(r, "bytes");
                if (!(lb > 0))
                    continue;
                /* Dashed, in the colour of the topology's line (one
                 * topology: black, under every algorithm's). */
                label_of(r, by_topo, by_algo, lab, sizeof lab);
                tc_plot_series *line = tc_plot_series_of(p, lab);
                int color = by_topo && line ? line->color : 0;
                snprintf(lab, sizeof lab, "lower bound%s%s", by_topo ? " " : "", by_topo ? topo_of(r) : "");
                tc_plot_series *s = tc_plot_series_of(p, lab);
                if (!s || has_x(s, b))
                    continue;
                if (s->n == 0) {
                    s->dashed = true;
                    s->color = color;
                }
                tc_plot_point(p, s, b, busbw ? getn(r, "busbw_Bps") * t / lb : lb, NAN, NAN);
            }
        }
        return;
    }
    /* One size: the algorithms (or topologies) side by side. */
    for (int busbw = 0; busbw < 2; busbw++) {
        snprintf(name, sizeof name, "%s-%s", busbw ? "busbw" : "time", op);
        snprintf(title, sizeof title, "%s at %s: %s", op,
                 tc_fmt_size(sizes[0], lab, sizeof lab), busbw ? "bus bandwidth" : "completion time and lower bound");
        tc_plot *p = add(F, TC_PLOT_BARS, name, title, by_topo && !by_algo ? "topology" : "algo",
                         busbw ? "busbw_Bps" : "time_s");
        if (!p)
            return;
        snprintf(p->ylabel, sizeof p->ylabel, busbw ? "bus bandwidth" : "time");
        tc_plot_series *s = tc_plot_series_of(p, busbw ? "bus bandwidth" : "time");
        tc_plot_series *b = busbw ? NULL : tc_plot_series_of(p, "lower bound");
        json_array_foreach(rows, i, r) {
            if (strcmp(gets(r, "op", ""), op) != 0)
                continue;
            label_of(r, by_topo, by_algo, lab, sizeof lab);
            double c = (double)tc_plot_category(p, lab);
            tc_plot_point(p, s, c, getn(r, busbw ? "busbw_Bps" : "time_s"), NAN, NAN);
            if (b)
                tc_plot_point(p, b, c, getn(r, "lower_bound_s"), NAN, NAN);
        }
    }
}

/* Bars of one field of an array's rows, a category per row. */
static void rows_bars(figs *F, const json_t *rows, const char *name, const char *title, const char *catkey,
                      const char *catcol, const char *field, const char *ylabel)
{
    if (!json_is_array(rows) || json_array_size(rows) == 0)
        return;
    tc_plot *p = add(F, TC_PLOT_BARS, name, title, catcol, field);
    if (!p)
        return;
    snprintf(p->ylabel, sizeof p->ylabel, "%s", ylabel);
    tc_plot_series *s = tc_plot_series_of(p, ylabel);
    size_t i;
    json_t *r;
    char lab[160];
    json_array_foreach(rows, i, r) {
        value_label(json_object_get(r, catkey), false, lab, sizeof lab);
        tc_plot_point(p, s, (double)tc_plot_category(p, lab), getn(r, field), NAN, NAN);
    }
}

static void net_plots(figs *F, const json_t *doc)
{
    const json_t *rows = json_object_get(doc, "results");
    if (json_is_array(rows)) {
        const char *ops[16];
        size_t nops = 0, i;
        json_t *r;
        json_array_foreach(rows, i, r) {
            const char *op = gets(r, "op", NULL);
            if (op)
                distinct_add(ops, &nops, 16, op);
        }
        for (size_t k = 0; k < nops; k++)
            net_op(F, rows, ops[k]);
        return;
    }
    /* One result: its phases (--phases) and its hottest links (flow). */
    const json_t *ph = json_object_get(doc, "phase_detail");
    if (json_is_array(ph) && json_array_size(ph) > 0) {
        tc_plot *p = add(F, TC_PLOT_BARS, "phases", "time of each phase", "phase", "time_s");
        if (p) {
            snprintf(p->ylabel, sizeof p->ylabel, "time");
            tc_plot_series *s = tc_plot_series_of(p, "time");
            size_t i;
            json_t *x;
            char lab[160];
            json_array_foreach(ph, i, x) {
                snprintf(lab, sizeof lab, "%zu %s", i, gets(x, "label", ""));
                tc_plot_point(p, s, (double)tc_plot_category(p, lab), getn(x, "time_s"), NAN, NAN);
            }
        }
    }
    rows_bars(F, json_object_get(json_object_get(doc, "flow"), "hot_links"), "hot-links",
              "the hottest links: bytes over bandwidth x makespan", "name", "link", "utilisation", "utilisation");
}

/* ---- failures ---- */

static void failures_plots(figs *F, const json_t *doc)
{
    const json_t *edges = json_object_get(doc, "histogram_edges"), *ts = json_object_get(doc, "topologies");
    if (!json_is_array(edges) || !json_is_array(ts))
        return;
    tc_plot *h = add(F, TC_PLOT_BARS, "slowdown-histogram",
                     "draws per slowdown bin (time over the healthy network's), and the draws that cut the job off",
                     "slowdown_bin", "draws");
    tc_plot *c = add(F, TC_PLOT_LINES, "slowdown-cdf", "share of the draws that ran with a slowdown below x",
                     "slowdown", "share");
    if (!h || !c)
        return;
    snprintf(h->xlabel, sizeof h->xlabel, "slowdown");
    snprintf(c->ylabel, sizeof c->ylabel, "share of the draws that ran");
    c->logx = true;
    size_t nb = json_array_size(edges);
    char lab[64], a[32], b[32];
    for (size_t k = 0; k + 1 < nb; k++) {
        double lo = num(json_array_get(edges, k)), hi = num(json_array_get(edges, k + 1));
        if (!isfinite(hi))
            snprintf(lab, sizeof lab, ">= %s", tc_fmt_shortest(lo, a, sizeof a));
        else if (lo == 0)
            snprintf(lab, sizeof lab, "< %s", tc_fmt_shortest(hi, b, sizeof b));
        else
            snprintf(lab, sizeof lab, "%s to %s", tc_fmt_shortest(lo, a, sizeof a), tc_fmt_shortest(hi, b, sizeof b));
        tc_plot_category(h, lab);
    }
    size_t cut = tc_plot_category(h, "cut off");
    size_t i;
    json_t *t;
    json_array_foreach(ts, i, t) {
        const char *name = gets(t, "name", "?");
        const json_t *hist = json_object_get(t, "histogram");
        tc_plot_series *s = tc_plot_series_of(h, name), *cs = tc_plot_series_of(c, name);
        double ran = getn(t, "ran"), sum = 0;
        for (size_t k = 0; k < json_array_size(hist) && k < cut; k++) {
            double n = num(json_array_get(hist, k));
            tc_plot_point(h, s, (double)k, n, NAN, NAN);
            sum += isfinite(n) ? n : 0;
            double edge = num(json_array_get(edges, k + 1));
            if (ran > 0 && isfinite(edge) && edge > 0)
                tc_plot_point(c, cs, edge, sum / ran, NAN, NAN);
        }
        tc_plot_point(h, s, (double)cut, getn(t, "cut_off"), NAN, NAN);
    }
}

/* ---- train ---- */

static void train_plots(figs *F, const json_t *doc)
{
    const json_t *splits = json_object_get(doc, "splits");
    char lab[160];
    if (json_is_array(splits)) {
        tc_plot *p = add(F, TC_PLOT_BARS, "splits", "iteration time of each split (the first 24, fastest first)",
                         "split", "time_s");
        if (!p)
            return;
        snprintf(p->ylabel, sizeof p->ylabel, "time");
        tc_plot_series *it = tc_plot_series_of(p, "iteration"), *ex = tc_plot_series_of(p, "exposed communication"),
                       *bu = tc_plot_series_of(p, "pipeline bubble");
        size_t i;
        json_t *x;
        json_array_foreach(splits, i, x) {
            if (i >= 24)
                break;
            char ep[32] = "";
            if (getn(x, "ep") > 1)
                snprintf(ep, sizeof ep, " ep%g", getn(x, "ep"));
            snprintf(lab, sizeof lab, "dp%g tp%g pp%g%s m%g%s", getn(x, "dp"), getn(x, "tp"), getn(x, "pp"), ep,
                     getn(x, "micro_batches"), json_is_false(json_object_get(x, "fits")) ? " (does not fit)" : "");
            double c = (double)tc_plot_category(p, lab);
            tc_plot_point(p, it, c, getn(x, "iter_s"), NAN, NAN);
            tc_plot_point(p, ex, c, getn(x, "exposed_s"), NAN, NAN);
            tc_plot_point(p, bu, c, getn(x, "bubble_s"), NAN, NAN);
        }
        return;
    }
    tc_plot *p = add(F, TC_PLOT_BARS, "breakdown", "one iteration: compute, exposed communication, bubble", "part",
                     "time_s");
    if (p) {
        snprintf(p->ylabel, sizeof p->ylabel, "time");
        tc_plot_series *s = tc_plot_series_of(p, "time");
        const struct {
            const char *label, *key;
        } parts[] = {
            {"iteration", "iter_s"},
            {"compute (incl. optimizer)", "compute_s"},
            {"optimizer step", "optimizer_s"},
            {"compute slowdown (contention)", "compute_slowdown_s"},
            {"exposed communication", "exposed_comm_s"},
            {"pipeline bubble", "bubble_s"},
            {"iteration without overlap", "serial_s"},
        };
        for (size_t k = 0; k < sizeof parts / sizeof parts[0]; k++)
            tc_plot_point(p, s, (double)tc_plot_category(p, parts[k].label), getn(doc, parts[k].key), NAN, NAN);
    }
    const json_t *comm = json_object_get(doc, "comm");
    if (json_is_object(comm) && (p = add(F, TC_PLOT_BARS, "communication",
                                         "communication per class and iteration (as evaluated, hidden or not)",
                                         "class", "time_s"))) {
        snprintf(p->ylabel, sizeof p->ylabel, "time");
        tc_plot_series *s = tc_plot_series_of(p, "time");
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)comm, k, v) {
            if (getn(v, "count") > 0)
                tc_plot_point(p, s, (double)tc_plot_category(p, k), getn(v, "time_s"), NAN, NAN);
        }
    }
    const json_t *mem = json_object_get(doc, "memory");
    if (json_is_object(mem) &&
        (p = add(F, TC_PLOT_BARS, "memory", "memory per device", "part", "bytes"))) {
        snprintf(p->ylabel, sizeof p->ylabel, "memory");
        tc_plot_series *s = tc_plot_series_of(p, "bytes");
        const char *keys[] = {"weights", "grads", "optimizer", "activations", "total", "capacity"};
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            snprintf(lab, sizeof lab, "%s_bytes", keys[k]);
            tc_plot_point(p, s, (double)tc_plot_category(p, keys[k]), getn(mem, lab), NAN, NAN);
        }
    }
}

/* ---- accuracy curves (train-accuracy; compress with its curves) ---- */

typedef struct accpt {
    const char *codec;
    double step, acc;
} accpt;

static int by_codec_step(const void *a, const void *b)
{
    const accpt *u = a, *v = b;
    int c = strcmp(u->codec, v->codec);
    return c ? c : (u->step < v->step ? -1 : u->step > v->step);
}

static void accuracy_plot(figs *F, const json_t *acc)
{
    const json_t *curves = json_object_get(acc, "curves");
    if (!json_is_array(curves) || json_array_size(curves) == 0)
        return;
    tc_plot *p = add(F, TC_PLOT_LINES, "accuracy",
                     "test accuracy against step, mean over the seeds (bars: lowest and highest seed)", "step",
                     "test_acc");
    if (!p)
        return;
    snprintf(p->ylabel, sizeof p->ylabel, "test accuracy");
    size_t n = 0, i, k;
    json_t *c, *x;
    json_array_foreach(curves, i, c) n += json_array_size(json_object_get(c, "points"));
    accpt *a = n ? malloc(n * sizeof *a) : NULL;
    if (!a) {
        p->oom = n > 0;
        return;
    }
    n = 0;
    json_array_foreach(curves, i, c) {
        json_array_foreach(json_object_get(c, "points"), k, x) {
            if (isfinite(getn(x, "step")))
                a[n++] = (accpt){gets(c, "codec", "?"), getn(x, "step"), getn(x, "test_acc")};
        }
    }
    /* The codecs in the curves' order, then each one's mean per step. */
    json_array_foreach(curves, i, c) tc_plot_series_of(p, gets(c, "codec", "?"));
    qsort(a, n, sizeof *a, by_codec_step);
    double seeds = getn(acc, "seeds");
    for (size_t s = 0; s < n;) {
        size_t e = s;
        double sum = 0, lo = INFINITY, hi = -INFINITY;
        size_t m = 0;
        while (e < n && (e == s || (strcmp(a[e].codec, a[s].codec) == 0 && a[e].step == a[s].step))) {
            if (isfinite(a[e].acc)) {
                sum += a[e].acc;
                lo = fmin(lo, a[e].acc);
                hi = fmax(hi, a[e].acc);
                m++;
            }
            e++;
        }
        if (m)
            tc_plot_point(p, tc_plot_series_of(p, a[s].codec), a[s].step, sum / (double)m,
                          seeds > 1 ? lo : NAN, seeds > 1 ? hi : NAN);
        s = e;
    }
    double target = getn(json_object_get(acc, "statistics"), "target"), x0 = INFINITY, x1 = -INFINITY;
    for (size_t j = 0; j < n; j++) {
        x0 = fmin(x0, a[j].step);
        x1 = fmax(x1, a[j].step);
    }
    free(a);
    if (isfinite(target) && x1 > x0) {
        tc_plot_series *t = tc_plot_series_of(p, "target");
        if (t) {
            t->dashed = true;
            t->color = 0;
            tc_plot_point(p, t, x0, target, NAN, NAN);
            tc_plot_point(p, t, x1, target, NAN, NAN);
        }
    }
}

/* Bars of a field with its interval (field_lo, field_hi; or the key's
 * own names given) per row. */
static void interval_bars(figs *F, const json_t *rows, const char *name, const char *title, const char *catkey,
                          const char *field, const char *lo, const char *hi, const char *ylabel)
{
    if (!json_is_array(rows) || !json_array_size(rows))
        return;
    tc_plot *p = add(F, TC_PLOT_BARS, name, title, catkey, field);
    if (!p)
        return;
    snprintf(p->ylabel, sizeof p->ylabel, "%s", ylabel);
    tc_plot_series *s = tc_plot_series_of(p, ylabel);
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r) {
        size_t c = tc_plot_category(p, gets(r, catkey, "?"));
        tc_plot_point(p, s, (double)c, getn(r, field), getn(r, lo), getn(r, hi));
    }
}

static void compress_plots(figs *F, const json_t *doc)
{
    interval_bars(F, json_object_get(doc, "results"), "time-to-accuracy",
                  "time to accuracy per codec, with its 95% interval (no bar: never reaches the target)", "codec",
                  "time_to_accuracy_s", "time_to_accuracy_lo_s", "time_to_accuracy_hi_s", "time to accuracy");
    const json_t *pts = json_object_get(json_object_get(doc, "sweep"), "points");
    if (json_is_array(pts) && json_array_size(pts) > 0) {
        tc_plot *t = add(F, TC_PLOT_LINES, "tta-vs-bandwidth", "time to accuracy against injection bandwidth",
                         "injection_Bps", "time_to_accuracy_s");
        tc_plot *s = add(F, TC_PLOT_LINES, "speedup-vs-bandwidth",
                         "speedup over bf16 against injection bandwidth, with its 95% interval", "injection_Bps",
                         "speedup_vs_bf16");
        if (t && s) {
            snprintf(t->xlabel, sizeof t->xlabel, "injection bandwidth per endpoint");
            snprintf(s->xlabel, sizeof s->xlabel, "injection bandwidth per endpoint");
            snprintf(t->ylabel, sizeof t->ylabel, "time to accuracy");
            snprintf(s->ylabel, sizeof s->ylabel, "speedup over bf16");
            t->logx = t->logy = s->logx = true;
            size_t i, k;
            json_t *pt, *c;
            json_array_foreach(pts, i, pt) {
                double bw = getn(pt, "injection_Bps");
                json_array_foreach(json_object_get(pt, "codecs"), k, c) {
                    const char *codec = gets(c, "codec", "?");
                    tc_plot_point(t, tc_plot_series_of(t, codec), bw, getn(c, "time_to_accuracy_s"), NAN, NAN);
                    tc_plot_point(s, tc_plot_series_of(s, codec), bw, getn(c, "speedup_vs_bf16"),
                                  getn(c, "speedup_vs_bf16_lo"), getn(c, "speedup_vs_bf16_hi"));
                }
            }
        }
    }
    const json_t *acc = json_object_get(json_object_get(json_object_get(doc, "scenario"), "compress"), "accuracy");
    if (json_is_object(acc))
        accuracy_plot(F, acc);
}

static void train_accuracy_plots(figs *F, const json_t *doc)
{
    accuracy_plot(F, doc);
    interval_bars(F, json_object_get(json_object_get(doc, "statistics"), "codecs"), "steps-ratio",
                  "steps to the target over bf16's, with its 95% interval", "codec", "steps_ratio", "steps_ratio_lo",
                  "steps_ratio_hi", "steps ratio");
}

static void codec_bench_plots(figs *F, const json_t *doc)
{
    const json_t *codecs = json_object_get(doc, "codecs");
    if (!json_is_array(codecs) || !json_array_size(codecs))
        return;
    tc_plot *p = add(F, TC_PLOT_BARS, "throughput",
                     "encode + decode throughput on this machine (bars: lowest and highest repetition) and the cost "
                     "model's prediction",
                     "codec", "throughput_Bps");
    if (!p)
        return;
    snprintf(p->ylabel, sizeof p->ylabel, "float32 input per second");
    tc_plot_series *m = tc_plot_series_of(p, "measured (median)"), *pr = tc_plot_series_of(p, "predicted");
    size_t i;
    json_t *c;
    json_array_foreach(codecs, i, c) {
        double k = (double)tc_plot_category(p, gets(c, "codec", "?"));
        const json_t *sp = json_object_get(c, "enc_dec_spread_Bps");
        tc_plot_point(p, m, k, getn(c, "enc_dec_Bps"), getn(sp, "min"), getn(sp, "max"));
        tc_plot_point(p, pr, k, getn(c, "predicted_Bps"), NAN, NAN);
    }
}

static void cluster_plots(figs *F, const json_t *doc)
{
    const json_t *ts = json_object_get(doc, "topologies");
    if (!json_is_array(ts))
        return;
    tc_plot *u = add(F, TC_PLOT_LINES, "utilisation",
                     "allocated share of the endpoints over time (each bin of the arrivals' span)", "time_s",
                     "utilisation");
    tc_plot *w = add(F, TC_PLOT_BARS, "wait", "waiting time of the jobs, start minus arrival", "statistic",
                     "wait_s");
    if (!u || !w)
        return;
    snprintf(u->xlabel, sizeof u->xlabel, "time");
    snprintf(w->ylabel, sizeof w->ylabel, "waiting time");
    const char *stats[] = {"mean", "p50", "p99", "max"};
    for (size_t k = 0; k < 4; k++)
        tc_plot_category(w, stats[k]);
    size_t i, k;
    json_t *t, *pt;
    json_array_foreach(ts, i, t) {
        const char *name = gets(t, "name", "?");
        tc_plot_series *s = tc_plot_series_of(u, name);
        json_array_foreach(json_object_get(t, "utilisation_series"), k, pt) {
            tc_plot_point(u, s, num(json_array_get(pt, 0)), num(json_array_get(pt, 1)), NAN, NAN);
        }
        s = tc_plot_series_of(w, name);
        for (k = 0; k < 4; k++)
            tc_plot_point(w, s, (double)k, getn(json_object_get(t, "wait_s"), stats[k]), NAN, NAN);
    }
}

static void concurrent_plots(figs *F, const json_t *doc)
{
    const json_t *jobs = json_object_get(doc, "jobs");
    if (json_is_array(jobs) && json_array_size(jobs)) {
        tc_plot *p = add(F, TC_PLOT_BARS, "jobs", "each job's time sharing the network and alone", "job", "time_s");
        if (p) {
            snprintf(p->ylabel, sizeof p->ylabel, "time");
            tc_plot_series *sh = tc_plot_series_of(p, "shared"), *al = tc_plot_series_of(p, "alone");
            size_t i;
            json_t *j;
            json_array_foreach(jobs, i, j) {
                double c = (double)tc_plot_category(p, gets(j, "name", "?"));
                tc_plot_point(p, sh, c, getn(j, "time_s"), NAN, NAN);
                tc_plot_point(p, al, c, getn(j, "alone_s"), NAN, NAN);
            }
        }
    }
    rows_bars(F, json_object_get(doc, "hot_links"), "hot-links", "the hottest links: bytes over bandwidth x makespan",
              "name", "link", "utilisation", "utilisation");
}

size_t tc_html_doc_plots(const json_t *doc, const char *command, tc_plot *out, size_t max)
{
    figs F = {out, 0, max};
    if (strcmp(command, "collective") == 0 || strcmp(command, "compare") == 0)
        net_plots(&F, doc);
    else if (strcmp(command, "failures") == 0)
        failures_plots(&F, doc);
    else if (strcmp(command, "train") == 0)
        train_plots(&F, doc);
    else if (strcmp(command, "compress") == 0)
        compress_plots(&F, doc);
    else if (strcmp(command, "train-accuracy") == 0)
        train_accuracy_plots(&F, doc);
    else if (strcmp(command, "codec-bench") == 0)
        codec_bench_plots(&F, doc);
    else if (strcmp(command, "cluster") == 0)
        cluster_plots(&F, doc);
    else if (strcmp(command, "concurrent") == 0)
        concurrent_plots(&F, doc);
    return prune(&F);
}

/* ---- sweeps ---- */

static const struct {
    const char *command;
    const char *fields[5];
} headlines[] = {
    {"collective", {"results[].time_s", "results[].busbw_Bps", "time_s", "busbw_Bps", NULL}},
    {"compare", {"results[].time_s", "results[].busbw_Bps", NULL}},
    {"concurrent", {"makespan_s", "jobs[].slowdown", NULL}},
    {"failures", {"topologies[].slowdown.p50", "topologies[].slowdown.p99", "topologies[].cut_off_share", NULL}},
    {"cluster", {"topologies[].wait_s.mean", "topologies[].utilisation", NULL}},
    {"train", {"iter_s", "exposed_comm_s", "mfu", NULL}},
    {"compress", {"results[].time_to_accuracy_s", "results[].speedup_vs_bf16", NULL}},
    {"codec-bench", {"codecs[].enc_dec_Bps", NULL}},
    {"train-accuracy", {"statistics.codecs[].steps_ratio", "statistics.codecs[].final_acc_mean", NULL}},
    {"topo", {"bisection_Bps", "diameter_links", NULL}},
};

const char *const *tc_html_headline_fields(const char *command)
{
    static const char *const none[] = {NULL};
    for (size_t i = 0; i < sizeof headlines / sizeof headlines[0]; i++)
        if (strcmp(headlines[i].command, command) == 0)
            return headlines[i].fields;
    return none;
}

/* What tells the rows of one point apart, in this order. */
static const char *const row_keys[] = {"name", "codec", "op", "algo_requested", "bytes", "job"};
#define NROWKEYS (sizeof row_keys / sizeof row_keys[0])

/* A list of strings (owned). */
typedef struct strs {
    char **s;
    size_t n, cap;
    bool oom;
} strs;

static bool strs_has(const strs *l, const char *s)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->s[i], s) == 0)
            return true;
    return false;
}

static void strs_add(strs *l, const char *s)
{
    if (strs_has(l, s))
        return;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 32;
        char **n = realloc(l->s, cap * sizeof *n);
        if (!n) {
            l->oom = true;
            return;
        }
        l->s = n;
        l->cap = cap;
    }
    if (!(l->s[l->n] = strdup(s)))
        l->oom = true;
    else
        l->n++;
}

static void strs_free(strs *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->s[i]);
    free(l->s);
    memset(l, 0, sizeof *l);
}

/* Every numeric field of a result, as a path with [] for arrays. */
static void fields_of(const json_t *v, const char *prefix, int depth, strs *out)
{
    char path[512];
    if (depth > 6)
        return;
    if (json_is_number(v)) {
        if (prefix[0] && strcmp(prefix, "schema_version") != 0)
            strs_add(out, prefix);
    } else if (json_is_object(v)) {
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)v, k, x) {
            snprintf(path, sizeof path, "%s%s%s", prefix, prefix[0] ? "." : "", k);
            fields_of(x, path, depth + 1, out);
        }
    } else if (json_is_array(v)) {
        snprintf(path, sizeof path, "%s[]", prefix);
        size_t n = json_array_size(v);
        for (size_t i = 0; i < n && i < 64; i++) {
            const json_t *x = json_array_get(v, i);
            if (json_is_object(x) || json_is_number(x))
                fields_of(x, path, depth + 1, out);
        }
    }
}

/* A value of field: (the row it came from, y). */
typedef struct yval {
    const json_t *row;
    double y;
} yval;

typedef struct yvals {
    yval *v;
    size_t n, cap;
    bool oom;
} yvals;

static void yvals_add(yvals *l, const json_t *row, double y)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        yval *n = realloc(l->v, cap * sizeof *n);
        if (!n) {
            l->oom = true;
            return;
        }
        l->v = n;
        l->cap = cap;
    }
    l->v[l->n++] = (yval){row, y};
}

/* The numbers at path in v ("a.b[].c"): one, or one per row of each []. */
static void field_values(const json_t *v, const char *path, const json_t *row, yvals *out)
{
    if (!*path) {
        if (json_is_number(v))
            yvals_add(out, row, json_number_value(v));
        return;
    }
    size_t seg = strcspn(path, ".");
    const char *rest = path[seg] == '.' ? path + seg + 1 : path + seg;
    char key[256];
    bool rows = seg >= 2 && path[seg - 2] == '[' && path[seg - 1] == ']';
    snprintf(key, sizeof key, "%.*s", (int)(rows ? seg - 2 : seg), path);
    const json_t *x = key[0] ? json_object_get(v, key) : v;
    if (!rows) {
        if (x)
            field_values(x, rest, row, out);
        return;
    }
    size_t i;
    json_t *e;
    json_array_foreach(x, i, e) field_values(e, rest, json_is_object(e) ? e : row, out);
}

/* The value at a key path ("network.topo[0]") of a scenario's JSON. */
static const json_t *path_get(const json_t *root, const char *path)
{
    char seg[256];
    const json_t *v = root;
    while (*path && v) {
        size_t n = strcspn(path, ".");
        snprintf(seg, sizeof seg, "%.*s", (int)n, path);
        path += n + (path[n] == '.');
        char *br = strchr(seg, '[');
        long idx = -1;
        if (br) {
            idx = strtol(br + 1, NULL, 10);
            *br = '\0';
        }
        v = json_object_get(v, seg);
        if (br)
            v = idx >= 0 ? json_array_get(v, (size_t)idx) : NULL;
    }
    return v;
}

/* A number, or an array of exactly one. */
static double scalar(const json_t *v)
{
    if (json_is_array(v) && json_array_size(v) == 1)
        v = json_array_get(v, 0);
    return num(v);
}

/* Point pt's value of axis as a number (NaN: not a number). A value with
 * its unit ("1MiB", "400Gbps") is read as the resolved scenario gives it. */
static double axis_x(const json_t *pt, const char *axis)
{
    const json_t *v = json_object_get(json_object_get(pt, "values"), axis);
    double x = scalar(v);
    if (isfinite(x))
        return x;
    x = scalar(path_get(json_object_get(pt, "scenario"), axis));
    if (isfinite(x))
        return x;
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        if (ends_with(axis, "_Bps") && tc_parse_rate(s, &x, NULL) == TC_OK)
            return x;
        if (ends_with(axis, "_s") && tc_parse_time(s, &x, NULL) == TC_OK)
            return x;
        if ((ends_with(axis, "sizes") || ends_with(axis, "bytes")) && tc_parse_size(s, &x, NULL) == TC_OK)
            return x;
        char *end;
        x = strtod(s, &end);
        if (end != s && !*end)
            return x;
    }
    return NAN;
}

static bool axis_bytes(const char *axis)
{
    return ends_with(axis, "sizes") || ends_with(axis, "bytes");
}

static void axis_label(const json_t *pt, const char *axis, char *buf, size_t len)
{
    value_label(json_object_get(json_object_get(pt, "values"), axis), axis_bytes(axis), buf, len);
}

static bool ok_point(const json_t *pt)
{
    return json_is_object(json_object_get(pt, "result"));
}

/* The edit distance of a and b (at most 255 bytes of each). */
static size_t distance(const char *a, const char *b)
{
    size_t n = strlen(a) < 255 ? strlen(a) : 255, m = strlen(b) < 255 ? strlen(b) : 255;
    size_t row[256];
    for (size_t j = 0; j <= m; j++)
        row[j] = j;
    for (size_t i = 1; i <= n; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= m; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            best = up + 1 < best ? up + 1 : best;
            best = row[j - 1] + 1 < best ? row[j - 1] + 1 : best;
            row[j] = best;
            diag = up;
        }
    }
    return row[m];
}

/* The valid names nearest to s first, comma-separated, at most max. */
static void nearest(const strs *valid, const char *s, size_t max, char *buf, size_t len)
{
    size_t n = valid->n, shown = 0;
    buf[0] = '\0';
    bool *used = calloc(n ? n : 1, 1);
    if (!used)
        return;
    while (shown < max && shown < n) {
        size_t best = n, bd = (size_t)-1;
        for (size_t i = 0; i < n; i++)
            if (!used[i] && distance(s, valid->s[i]) < bd) {
                bd = distance(s, valid->s[i]);
                best = i;
            }
        used[best] = true;
        size_t l = strlen(buf);
        snprintf(buf + l, len - l, "%s%s", shown ? ", " : "", valid->s[best]);
        shown++;
    }
    if (shown < n) {
        size_t l = strlen(buf);
        snprintf(buf + l, len - l, " (%zu in all)", n);
    }
    free(used);
}

static bool same(const json_t *a, const json_t *b)
{
    return a == b || (a && b && json_equal(a, b));
}

/* Which row keys tell the rows of field apart within a point; *index:
 * rows that none tells apart are numbered. */
static void row_keys_of(const tc_html_sweep *sw, const char *field, bool *use, bool *index)
{
    memset(use, 0, NROWKEYS * sizeof *use);
    *index = false;
    for (size_t p = 0; p < sw->npoints; p++) {
        const json_t *pt = sw->points[p];
        if (!ok_point(pt))
            continue;
        yvals yv = {0};
        field_values(json_object_get(pt, "result"), field, NULL, &yv);
        for (size_t k = 0; k < NROWKEYS; k++)
            for (size_t a = 1; a < yv.n && !use[k]; a++)
                use[k] = yv.v[a].row && yv.v[0].row && !same(json_object_get(yv.v[a].row, row_keys[k]),
                                                             json_object_get(yv.v[0].row, row_keys[k]));
        free(yv.v);
    }
    /* Several rows of a point that no key tells apart: numbered. */
    bool any = false;
    for (size_t k = 0; k < NROWKEYS; k++)
        any |= use[k];
    for (size_t p = 0; p < sw->npoints && !any; p++) {
        const json_t *pt = sw->points[p];
        yvals yv = {0};
        if (ok_point(pt))
            field_values(json_object_get(pt, "result"), field, NULL, &yv);
        *index |= yv.n > 1;
        free(yv.v);
    }
}

static void sweep_plot(figs *F, const tc_html_sweep *sw, const char *axis, bool numeric, const char *field)
{
    char name[96], a[64], b[64], title[256];
    slug(field, a, sizeof a);
    slug(axis, b, sizeof b);
    snprintf(name, sizeof name, "sweep-%.40s-vs-%.40s", a, b);
    snprintf(title, sizeof title, "%s against %s", field, axis);
    tc_plot *p = add(F, numeric ? TC_PLOT_LINES : TC_PLOT_BARS, name, title, axis, field);
    if (!p)
        return;
    p->logx = p->logy = true;
    if (!numeric) {
        /* The categories in the axis's order. */
        const json_t *vals = json_object_get(json_object_get(sw->header, "axes"), axis);
        size_t i;
        json_t *v;
        char lab[200];
        json_array_foreach(vals, i, v) {
            value_label(v, axis_bytes(axis), lab, sizeof lab);
            tc_plot_category(p, lab);
        }
        p->logy = false;
    }
    bool use[NROWKEYS], index;
    row_keys_of(sw, field, use, &index);
    bool product = strcmp(gets(sw->header, "mode", "product"), "zip") != 0;
    const json_t *axes = json_object_get(sw->header, "axes");
    for (size_t pi = 0; pi < sw->npoints; pi++) {
        const json_t *pt = sw->points[pi];
        if (!ok_point(pt))
            continue;
        char base[400] = "", lab[600], v[200];
        const char *k;
        json_t *x;
        if (product)
            json_object_foreach((json_t *)axes, k, x) {
                if (strcmp(k, axis) == 0)
                    continue;
                axis_label(pt, k, v, sizeof v);
                size_t l = strlen(base);
                snprintf(base + l, sizeof base - l, "%s%s=%.60s", l ? ", " : "", k, v);
            }
        yvals yv = {0};
        field_values(json_object_get(pt, "result"), field, NULL, &yv);
        double xv = numeric ? axis_x(pt, axis) : 0;
        if (!numeric) {
            axis_label(pt, axis, v, sizeof v);
            xv = (double)tc_plot_category(p, v);
        }
        for (size_t r = 0; r < yv.n; r++) {
            snprintf(lab, sizeof lab, "%s", base);
            for (size_t kk = 0; kk < NROWKEYS; kk++) {
                if (!use[kk] || !yv.v[r].row || !json_object_get(yv.v[r].row, row_keys[kk]))
                    continue;
                value_label(json_object_get(yv.v[r].row, row_keys[kk]), strcmp(row_keys[kk], "bytes") == 0, v,
                            sizeof v);
                size_t l = strlen(lab);
                snprintf(lab + l, sizeof lab - l, "%s%.60s", l ? ", " : "", v);
            }
            if (index) {
                size_t l = strlen(lab);
                snprintf(lab + l, sizeof lab - l, "%s#%zu", l ? ", " : "", r);
            }
            tc_plot_point(p, tc_plot_series_of(p, lab[0] ? lab : field), xv, yv.v[r].y, NAN, NAN);
        }
        p->oom |= yv.oom;
        free(yv.v);
    }
}

tc_status tc_html_sweep_plots(const tc_html_sweep *sw, const char *x, const char *y, tc_plot *out, size_t max,
                              size_t *n, tc_err *err)
{
    figs F = {out, 0, max};
    *n = 0;
    const json_t *axes = json_object_get(sw->header, "axes");
    strs axl = {0}, fl = {0}, want = {0};
    char near[400];
    tc_status st = TC_OK;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)axes, k, v) strs_add(&axl, k);
    size_t ok = 0;
    for (size_t i = 0; i < sw->npoints; i++)
        if (ok_point(sw->points[i]) && ok++ < 20)
            fields_of(json_object_get(sw->points[i], "result"), "", 0, &fl);
    if (axl.oom || fl.oom) {
        st = tc_fail(err, TC_EINTERNAL, "out of memory");
        goto out;
    }
    if (x && !strs_has(&axl, x)) {
        nearest(&axl, x, 8, near, sizeof near);
        st = tc_fail(err, TC_EINVAL, "--x %.100s: not an axis of this sweep; its axes: %s", x, near[0] ? near : "none");
        goto out;
    }
    if (y && !strs_has(&fl, y)) {
        if (!ok)
            st = tc_fail(err, TC_EINVAL, "--y %.100s: the sweep has no finished point to read fields from", y);
        else {
            nearest(&fl, y, 6, near, sizeof near);
            st = tc_fail(err, TC_EINVAL, "--y %.100s: not a numeric field of the points' results (a dotted path, [] "
                                         "for every row); nearest: %s",
                         y, near);
        }
        goto out;
    }
    /* Which axes are numbers at every finished point. */
    bool numeric[TC_HTML_MAX_PLOTS * 4] = {false};
    size_t nax = axl.n < sizeof numeric ? axl.n : sizeof numeric;
    for (size_t a = 0; a < nax; a++) {
        numeric[a] = ok > 0;
        for (size_t i = 0; i < sw->npoints && numeric[a]; i++)
            if (ok_point(sw->points[i]))
                numeric[a] = isfinite(axis_x(sw->points[i], axl.s[a]));
    }
    if (y)
        strs_add(&want, y);
    else {
        for (const char *const *h = tc_html_headline_fields(gets(json_object_get(sw->header, "scenario"), "command",
                                                                 ""));
             *h; h++)
            if (strs_has(&fl, *h))
                strs_add(&want, *h);
        for (size_t i = 0; i < fl.n && want.n < 2; i++)
            if (!strchr(fl.s[i], '[') && !strchr(fl.s[i], '.'))
                strs_add(&want, fl.s[i]);
    }
    bool any_numeric = false;
    for (size_t a = 0; a < nax; a++)
        any_numeric |= numeric[a];
    for (size_t a = 0; a < nax; a++) {
        if (x ? strcmp(x, axl.s[a]) != 0 : any_numeric && !numeric[a])
            continue;
        for (size_t f = 0; f < want.n; f++)
            sweep_plot(&F, sw, axl.s[a], numeric[a], want.s[f]);
    }
    *n = prune(&F);
    for (size_t i = 0; i < *n; i++)
        if (out[i].oom)
            st = tc_fail(err, TC_EINTERNAL, "out of memory");
out:
    strs_free(&axl);
    strs_free(&fl);
    strs_free(&want);
    if (st) {
        for (size_t i = 0; i < F.n; i++)
            tc_plot_free(&out[i]);
        *n = 0;
    }
    return st;
}
