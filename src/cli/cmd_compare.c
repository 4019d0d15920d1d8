/*
 * cmd_compare.c - `topocc compare`: topologies side by side over message
 * sizes, the best algorithm per cell, ratio columns and a plain summary of
 * where each topology wins.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"

static const char *help =
    "usage: topocc compare --topo A --topo B [...] --op OP[,OP...] --sizes MIN:MAX[:FACTOR]\n"
    "                      [--names a,b,..] [--algo auto] [--ranks N] [--mode formula|steps|flow]\n"
    "                      [--routing R] [--equalize injection=RATE] [--degrade link:ID=FACTOR]\n"
    "                      [--rate-cap RATE] [--multipath route|spray] [--deps rendezvous|fifo|recv]\n"
    "                      [--event-budget N] [--format table|csv|json] [--out FILE]\n"
    "       topocc compare --default\n"
    "\n"
    "Times each operation on each topology for sizes MIN, MIN*FACTOR, ... up to MAX\n"
    "(factor 4 by default) with the requested algorithm (auto: the fastest valid one,\n"
    "reported per cell), prints the ratios against the first topology and says where\n"
    "each topology wins. --equalize gives every endpoint of every topology the same\n"
    "total fabric injection bandwidth. --out writes the JSON result to FILE as well.\n"
    "\n"
    "--default runs the built-in scenario ('make run'): 4,096 endpoints at 400 Gb/s\n"
    "injection each, 1 us per link: a non-blocking 3-tier Clos, the same Clos 2:1\n"
    "oversubscribed at the leaf, and a 16x16x16 torus at equal injection bandwidth;\n"
    "allreduce, reducescatter, allgather, alltoall from 1 KiB to 4 GiB.\n"
    "\n"
    "example:\n"
    "  topocc compare --topo clos:down=8x8,up=1x8 --topo torus:dims=8x8 \\\n"
    "      --equalize injection=400Gbps --op allreduce,alltoall --sizes 1KiB:1GiB:16\n";

static const char *accepted = "--topo --names --op --algo --sizes --ranks --mode --routing --equalize --degrade "
                              "--rate-cap --multipath --deps --event-budget --format --out --default --help";

#define MAX_OPS TC_OP_COUNT

typedef struct cmp {
    int ntopo, nops, nsizes;
    tc_topo *topo[CLI_MAX_TOPOS];
    char name[CLI_MAX_TOPOS][32];
    tc_routing routing[CLI_MAX_TOPOS];
    tc_op ops[MAX_OPS];
    double *sizes;
    tc_result *res; /* [op][size][topo] */
} cmp;

static tc_result *cell(cmp *c, int op, int size, int topo)
{
    return &c->res[((size_t)op * (size_t)c->nsizes + (size_t)size) * (size_t)c->ntopo + (size_t)topo];
}

static tc_status parse_ops(const char *s, cmp *c, tc_err *err)
{
    char buf[256];
    if (strlen(s) >= sizeof buf)
        return tc_fail(err, TC_EINVAL, "--op list too long");
    strcpy(buf, s);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (c->nops >= MAX_OPS)
            return tc_fail(err, TC_EINVAL, "--op lists more than %d operations", MAX_OPS);
        tc_status st = tc_op_parse(tok, &c->ops[c->nops], err);
        if (st)
            return st;
        for (int i = 0; i < c->nops; i++)
            if (c->ops[i] == c->ops[c->nops])
                return tc_fail(err, TC_EINVAL, "operation '%s' listed twice in --op", tok);
        c->nops++;
    }
    if (!c->nops)
        return tc_fail(err, TC_EINVAL, "--op needs at least one operation, e.g. allreduce,alltoall");
    return TC_OK;
}

static tc_status parse_names(const char *s, cmp *c, tc_err *err)
{
    for (int i = 0; i < c->ntopo; i++)
        snprintf(c->name[i], sizeof c->name[i], "%c", 'A' + i);
    if (!s)
        return TC_OK;
    char buf[512];
    if (strlen(s) >= sizeof buf)
        return tc_fail(err, TC_EINVAL, "--names too long");
    strcpy(buf, s);
    int n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (n >= c->ntopo || strlen(tok) >= sizeof c->name[0])
            return tc_fail(err, TC_EINVAL, "--names needs one short name (under 32 characters) per --topo, comma-separated");
        strcpy(c->name[n++], tok);
    }
    if (n != c->ntopo)
        return tc_fail(err, TC_EINVAL, "--names lists %d names for %d topologies", n, c->ntopo);
    return TC_OK;
}

static void print_tables(cmp *c, FILE *f)
{
    char b[64];
    for (int oi = 0; oi < c->nops; oi++) {
        int nc = 1 + 2 * c->ntopo + (c->ntopo - 1);
        tc_table tb;
        tc_table_init(&tb, nc);
        for (int i = 0; i < nc; i++)
            tb.right[i] = true;
        char hdr[3 * CLI_MAX_TOPOS + 1][48];
        const char *row[3 * CLI_MAX_TOPOS + 1];
        snprintf(hdr[0], sizeof hdr[0], "size");
        for (int t = 0; t < c->ntopo; t++) {
            snprintf(hdr[1 + 2 * t], sizeof hdr[0], "%s", c->name[t]);
            snprintf(hdr[2 + 2 * t], sizeof hdr[0], "algo");
            tb.right[2 + 2 * t] = false;
        }
        for (int t = 1; t < c->ntopo; t++)
            snprintf(hdr[2 * c->ntopo + t], sizeof hdr[0], "%s/%s", c->name[t], c->name[0]);
        for (int i = 0; i < nc; i++)
            row[i] = hdr[i];
        tc_table_row(&tb, row);
        for (int si = 0; si < c->nsizes; si++) {
            tc_fmt_size(c->sizes[si], hdr[0], sizeof hdr[0]);
            for (int t = 0; t < c->ntopo; t++) {
                tc_result *r = cell(c, oi, si, t);
                tc_fmt_time(r->time_s, hdr[1 + 2 * t], sizeof hdr[0]);
                snprintf(hdr[2 + 2 * t], sizeof hdr[0], "%s", tc_algo_name(r->algo));
            }
            for (int t = 1; t < c->ntopo; t++)
                snprintf(hdr[2 * c->ntopo + t], sizeof hdr[0], "%.3g",
                         cell(c, oi, si, t)->time_s / cell(c, oi, si, 0)->time_s);
            tc_table_row(&tb, row);
        }
        fprintf(f, "%s%s (time per operation; ratio > 1: slower than %s)\n", oi ? "\n" : "", tc_op_name(c->ops[oi]),
                c->name[0]);
        tc_table_print(&tb, f);
        tc_table_free(&tb);
    }
    (void)b;
}

/* The topologies within 0.1% of the fastest in one cell, as a bit mask. */
static unsigned winners(cmp *c, int oi, int si, double *best, double *second)
{
    *best = INFINITY;
    for (int t = 0; t < c->ntopo; t++)
        *best = fmin(*best, cell(c, oi, si, t)->time_s);
    unsigned m = 0;
    *second = INFINITY;
    for (int t = 0; t < c->ntopo; t++) {
        double v = cell(c, oi, si, t)->time_s;
        if (v <= *best * 1.001)
            m |= 1u << t;
        else
            *second = fmin(*second, v);
    }
    return m;
}

static void print_summary(cmp *c, FILE *f)
{
    char b1[32], b2[32];
    if (c->ntopo < 2)
        return;
    fprintf(f, "\nwhere each topology wins:\n");
    for (int oi = 0; oi < c->nops; oi++) {
        fprintf(f, "  %s:", tc_op_name(c->ops[oi]));
        int si = 0;
        bool first = true;
        while (si < c->nsizes) {
            double best, second;
            unsigned m = winners(c, oi, si, &best, &second);
            double gain = second / best;
            int sj = si;
            while (sj + 1 < c->nsizes) {
                double b, s;
                if (winners(c, oi, sj + 1, &b, &s) != m)
                    break;
                sj++;
                gain = fmax(gain, s / b);
            }
            fprintf(f, "%s ", first ? "" : ";");
            first = false;
            int k = 0;
            for (int t = 0; t < c->ntopo; t++)
                if (m & (1u << t))
                    fprintf(f, "%s%s", k++ ? " = " : "", c->name[t]);
            fprintf(f, " %s %s", k > 1 ? "tie" : "fastest", si == sj ? "at" : "from");
            fprintf(f, " %s", tc_fmt_size(c->sizes[si], b1, sizeof b1));
            if (sj > si)
                fprintf(f, " to %s", tc_fmt_size(c->sizes[sj], b2, sizeof b2));
            if (isfinite(gain))
                fprintf(f, " (up to %.2fx faster than the next)", gain);
            si = sj + 1;
        }
        fputc('\n', f);
        /* How each other topology compares with the first, over all sizes. */
        for (int t = 1; t < c->ntopo; t++) {
            double lo = INFINITY, hi = 0;
            int at_lo = 0, at_hi = 0;
            for (int k = 0; k < c->nsizes; k++) {
                double r = cell(c, oi, k, t)->time_s / cell(c, oi, k, 0)->time_s;
                if (r < lo)
                    lo = r, at_lo = k;
                if (r > hi)
                    hi = r, at_hi = k;
            }
            fprintf(f, "    %s takes %.2fx (at %s) to %.2fx (at %s) the time of %s\n", c->name[t], lo,
                    tc_fmt_size(c->sizes[at_lo], b1, sizeof b1), hi, tc_fmt_size(c->sizes[at_hi], b2, sizeof b2),
                    c->name[0]);
        }
    }
}

static json_t *to_json(cmp *c)
{
    json_t *o = json_object();
    json_object_set_new(o, "schema_version", json_integer(TC_SCHEMA_VERSION));
    json_object_set_new(o, "command", json_string("compare"));
    json_t *ts = json_array();
    for (int t = 0; t < c->ntopo; t++) {
        json_t *e = json_object();
        json_object_set_new(e, "name", json_string(c->name[t]));
        json_object_set_new(e, "topology", json_string(c->topo[t]->spec));
        json_array_append_new(ts, e);
    }
    json_object_set_new(o, "topologies", ts);
    json_t *rs = json_array();
    for (int oi = 0; oi < c->nops; oi++)
        for (int si = 0; si < c->nsizes; si++)
            for (int t = 0; t < c->ntopo; t++) {
                json_t *e = tc_report_result_json(cell(c, oi, si, t), c->topo[t], c->routing[t]);
                json_object_del(e, "schema_version");
                json_object_set_new(e, "name", json_string(c->name[t]));
                json_object_set_new(e, "ratio_to_first", json_real(cell(c, oi, si, t)->time_s /
                                                                   cell(c, oi, si, 0)->time_s));
                json_array_append_new(rs, e);
            }
    json_object_set_new(o, "results", rs);
    return o;
}

static void print_csv(cmp *c)
{
    printf("op,bytes,name,topology,algo,time_s,algbw_Bps,busbw_Bps,lower_bound_s,ratio_to_first\n");
    for (int oi = 0; oi < c->nops; oi++)
        for (int si = 0; si < c->nsizes; si++)
            for (int t = 0; t < c->ntopo; t++) {
                tc_result *r = cell(c, oi, si, t);
                printf("%s,%.17g,%s,\"%s\",%s,%.9g,%.9g,%.9g,%.9g,%.6g\n", tc_op_name(r->op), r->bytes, c->name[t],
                       c->topo[t]->spec, tc_algo_name(r->algo), r->time_s, r->algbw_Bps, r->busbw_Bps,
                       r->lower_bound_s, r->time_s / cell(c, oi, si, 0)->time_s);
            }
}

static void apply_default(cli_args *a)
{
    static const char *topos[] = {
        "clos:down=16x16x16,up=1x16x16,bw=400Gbps,lat=1us",
        "clos:down=16x16x16,up=1x8x16,bw=400Gbps,lat=1us",
        "torus:dims=16x16x16,lat=1us",
    };
    for (int i = 0; i < 3; i++)
        a->topo[i] = topos[i];
    a->ntopo = 3;
    a->names = "clos,clos-2:1,torus";
    a->op = "allreduce,reducescatter,allgather,alltoall";
    a->sizes = "1KiB:4GiB:4";
    a->equalize = "injection=400Gbps";
}

static tc_status run(cli_args *a, cmp *c, tc_err *err)
{
    tc_coll_req req;
    tc_eval_opts o;
    tc_format fmt;
    tc_status st;
    if (a->dflt) {
        if (a->ntopo || a->op || a->sizes || a->names || a->equalize)
            return tc_fail(err, TC_EINVAL, "--default sets the topologies, operations and sizes itself: drop --topo, --op, --sizes, --names and --equalize");
        apply_default(a);
    }
    if (a->npositional)
        return tc_fail(err, TC_EINVAL, "unexpected argument '%s' (see topocc compare --help)", a->positional[0]);
    if (a->ntopo < 1 || !a->op || !a->sizes)
        return tc_fail(err, TC_EINVAL, "compare needs --topo SPEC (one or more), --op OP[,OP] and --sizes MIN:MAX[:FACTOR], or --default");
    tc_flow_opts fo;
    if ((st = cli_common(a, &req, &o, &fmt, err)) || (st = cli_flow_opts(a, o.mode, &fo, err)) ||
        (st = parse_ops(a->op, c, err)) ||
        (st = cli_sizes(a->sizes, &c->sizes, &c->nsizes, err)))
        return st;
    for (int t = 0; t < a->ntopo; t++) {
        if ((st = cli_topo(a->topo[t], a, &c->topo[t], err)))
            return st;
        c->ntopo++;
        if (a->routing && (st = tc_routing_parse(a->routing, c->topo[t], &c->routing[t], err)))
            return st;
    }
    if ((st = parse_names(a->names, c, err)))
        return st;
    c->res = tc_calloc((size_t)c->nops * (size_t)c->nsizes * (size_t)c->ntopo, sizeof *c->res);
    if (!c->res)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    tc_result *tmp = tc_calloc((size_t)c->nsizes, sizeof *tmp);
    if (!tmp)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    for (int oi = 0; oi < c->nops && st == TC_OK; oi++)
        for (int t = 0; t < c->ntopo && st == TC_OK; t++) {
            tc_coll_req r = req;
            r.op = c->ops[oi];
            if (!r.p)
                r.p = c->topo[t]->n_endpoints;
            tc_eval_opts ot = o;
            ot.routing = c->routing[t];
            ot.flow = &fo;
            if ((st = tc_evaluate_sweep(c->topo[t], &r, c->sizes, (size_t)c->nsizes, &ot, tmp, err))) {
                char msg[TC_ERR_LEN];
                snprintf(msg, sizeof msg, "%s", err->msg);
                tc_fail(err, st, "%s on %s: %s", tc_op_name(r.op), c->name[t], msg);
                break;
            }
            for (int si = 0; si < c->nsizes; si++)
                *cell(c, oi, si, t) = tmp[si];
        }
    free(tmp);
    if (st)
        return st;
    json_t *j = NULL;
    if (fmt == TC_FMT_JSON || a->out)
        j = to_json(c);
    if (a->out && (st = tc_write_json(j, a->out, err))) {
        json_decref(j);
        return st;
    }
    if (fmt == TC_FMT_JSON)
        st = tc_write_json(j, NULL, err);
    else if (fmt == TC_FMT_CSV)
        print_csv(c);
    else {
        printf("topologies:\n");
        for (int t = 0; t < c->ntopo; t++) {
            tc_topo_info in;
            tc_topo_get_info(c->topo[t], &in);
            char b1[32];
            printf("  %-10s %s  (%u endpoints, injection %s)\n", c->name[t], c->topo[t]->spec, in.endpoints,
                   tc_fmt_rate(in.injection_Bps, b1, sizeof b1));
        }
        printf("mode %s, algorithm %s%s\n\n", tc_mode_name(o.mode), a->algo ? a->algo : "auto",
               req.algo == TC_ALGO_AUTO ? " (fastest valid per cell)" : "");
        print_tables(c, stdout);
        print_summary(c, stdout);
    }
    json_decref(j);
    return st;
}

int cmd_compare(int argc, char **argv)
{
    cli_args a;
    tc_err err = {{0}};
    tc_status st = cli_parse(argc, argv, 2, "compare", accepted, &a, &err);
    if (st)
        return cli_exit(st, &err);
    if (a.help) {
        fputs(help, stdout);
        return 0;
    }
    cmp c;
    memset(&c, 0, sizeof c);
    st = run(&a, &c, &err);
    for (int t = 0; t < c.ntopo; t++)
        tc_topo_free(c.topo[t]);
    free(c.sizes);
    free(c.res);
    return cli_exit(st, &err);
}
