/* cmd_collective.c - `topocc collective`: one collective, one topology, one result. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"

static const char *help =
    "usage: topocc collective --topo SPEC --op OP --size BYTES [--algo ALGO[:key=val,..]]\n"
    "                         [--ranks N] [--mode formula|steps|flow] [--routing R]\n"
    "                         [--equalize injection=RATE] [--degrade link:ID=FACTOR]...\n"
    "                         [--format table|csv|json]\n"
    "       flow mode: [--rate-cap RATE] [--multipath route|spray] [--deps rendezvous|fifo|recv]\n"
    "                  [--event-budget N] [--trace FILE]\n"
    "\n"
    "OP:    allreduce, reducescatter, allgather, alltoall, broadcast, reduce\n"
    "ALGO:  ring, biring, rd, rhd, binomial, dbtree, bruck, pairwise, direct, torus,\n"
    "       torus-bi, torus-mp, swing, hier, auto (default: the fastest valid one)\n"
    "       parameters: chunks=N (pipelining), root=R (broadcast/reduce)\n"
    "BYTES: nccl-tests convention (whole buffer; all-gather output; reduce-scatter\n"
    "       input; all-to-all: what one rank sends), e.g. 64MiB\n"
    "N:     ranks on endpoints 0..N-1 (default: every endpoint)\n"
    "mode:  formula (closed forms, default), steps (phase by phase on the graph) or\n"
    "       flow (event-driven, max-min fair sharing, dependencies per rank)\n"
    "R:     Clos ecmp (default) or dmodk; torus dor (default) or dor-positive\n"
    "--degrade link:ID=FACTOR scales one directed link (IDs from topocc topo SPEC --links)\n"
    "--rate-cap caps every flow (NIC or protocol efficiency); --multipath spray splits\n"
    "each flow over all equal-cost paths; --trace writes a Chrome trace (Perfetto)\n"
    "of the run, one track per rank; --event-budget bounds the simulation\n"
    "(default 200000000 events).\n"
    "\n"
    "example:\n"
    "  topocc collective --topo clos:down=8x8,up=1x8,bw=400Gbps,lat=1us \\\n"
    "      --op allreduce --algo ring --size 1GiB --mode steps --format json\n"
    "  topocc collective --topo clos:down=8x8,up=1x4 --op alltoall --size 16MiB \\\n"
    "      --mode flow --trace a2a.json\n";

static const char *accepted = "--topo --op --algo --size --ranks --mode --routing --equalize --degrade --rate-cap "
                              "--multipath --deps --event-budget --trace --format --help";

tc_status cli_common(const cli_args *a, tc_coll_req *req, tc_eval_opts *o, tc_format *fmt, tc_err *err)
{
    tc_status st;
    memset(req, 0, sizeof *req);
    memset(o, 0, sizeof *o);
    req->algo = TC_ALGO_AUTO;
    if (a->algo && (st = tc_algo_parse(a->algo, req, err)))
        return st;
    if (a->mode && (st = tc_mode_parse(a->mode, &o->mode, err)))
        return st;
    *fmt = TC_FMT_TABLE;
    if (a->format && (st = tc_format_parse(a->format, fmt, err)))
        return st;
    if (a->ranks && (st = tc_parse_u32(a->ranks, &req->p, err)))
        return tc_fail(err, TC_EINVAL, "invalid --ranks '%s': expected a positive integer", a->ranks);
    return TC_OK;
}

/* What the flow simulator adds to a result. */
typedef struct flow_extra {
    bool have;
    tc_flow_result fr;
    const tc_flow_opts *fo;
} flow_extra;

/* Runs the chosen algorithm once more through tc_flow_run for the details
 * (events, rank finish spread, hottest links, trace). */
static tc_status flow_detail(const tc_topo *t, const tc_coll_req *req, const tc_result *r, const tc_eval_opts *o,
                             flow_extra *fx, tc_err *err)
{
    tc_coll_req q = *req;
    q.algo = r->algo;
    if (req->algo == TC_ALGO_AUTO)
        q.chunks = 0;
    tc_sched *s = NULL;
    tc_status st = tc_coll_build(&q, t, &s, err);
    if (st)
        return st;
    tc_flow_opts fo = *o->flow;
    fo.routing = o->routing;
    tc_flow_job job = {.sched = s, .rank_map = NULL, .start_s = 0};
    st = tc_flow_run(t, &job, 1, &fo, &fx->fr, err);
    fx->have = st == TC_OK;
    fx->fo = o->flow;
    tc_sched_free(s);
    return st;
}

static const char *multipath_name(tc_multipath m)
{
    return m == TC_MULTIPATH_SPRAY ? "spray" : "route";
}

static const char *deps_name(tc_flow_deps d)
{
    return d == TC_DEPS_FIFO ? "fifo" : d == TC_DEPS_RECV ? "recv" : "rendezvous";
}

static json_t *flow_json(const tc_topo *t, const flow_extra *fx)
{
    json_t *f = json_object();
    const tc_flow_result *fr = &fx->fr;
    json_object_set_new(f, "events", json_integer((json_int_t)fr->events));
    json_object_set_new(f, "batches", json_integer((json_int_t)fr->batches));
    json_object_set_new(f, "multipath", json_string(multipath_name(fx->fo->multipath)));
    json_object_set_new(f, "deps", json_string(deps_name(fx->fo->deps)));
    json_object_set_new(f, "rate_cap_Bps", fx->fo->rate_cap_Bps > 0 ? json_real(fx->fo->rate_cap_Bps) : json_null());
    json_object_set_new(f, "rank_finish_min_s", json_real(fr->jobs[0].rank_finish_min_s));
    json_object_set_new(f, "rank_finish_median_s", json_real(fr->jobs[0].rank_finish_median_s));
    json_object_set_new(f, "rank_finish_max_s", json_real(fr->jobs[0].rank_finish_max_s));
    json_object_set_new(f, "mean_link_utilisation", json_real(fr->mean_utilisation));
    json_t *hot = tc_report_hot_links_json(t, &fx->fr);
    json_object_set_new(f, "hot_links", hot);
    json_object_set_new(f, "trace_slices", json_integer((json_int_t)fr->trace_slices));
    json_object_set_new(f, "trace_truncated", json_boolean(fr->trace_truncated));
    return f;
}

static void print_result(const tc_result *r, const tc_topo *t, tc_routing routing, tc_format fmt, const flow_extra *fx)
{
    char b[64], b2[64], b3[64], line[1024];
    tc_table tb;
    tc_table_init(&tb, 2);
    const char *hdr[2] = {"field", "value"};
    tc_table_row(&tb, hdr);
#define ROW(k, ...)                                  \
    do {                                             \
        snprintf(line, sizeof line, __VA_ARGS__);    \
        const char *row_[2] = {k, line};             \
        tc_table_row(&tb, row_);                     \
    } while (0)
    ROW("topology", "%s", t->spec);
    ROW("op", "%s", tc_op_name(r->op));
    if (r->algo_requested == TC_ALGO_AUTO)
        ROW("algorithm", "%s (chosen by auto)", tc_algo_name(r->algo));
    else
        ROW("algorithm", "%s", tc_algo_name(r->algo));
    ROW("ranks", "%u", r->ranks);
    ROW("size", "%s", tc_fmt_size(r->bytes, b, sizeof b));
    ROW("mode", "%s (routing %s)", tc_mode_name(r->mode), tc_routing_name(routing, t));
    ROW("time", "%s", tc_fmt_time(r->time_s, b, sizeof b));
    ROW("algbw", "%s", tc_fmt_rate(r->algbw_Bps, b, sizeof b));
    ROW("busbw", "%s", tc_fmt_rate(r->busbw_Bps, b, sizeof b));
    ROW("lower bound", "%s (time is %.3gx the bound)", tc_fmt_time(r->lower_bound_s, b, sizeof b),
        r->lower_bound_s > 0 ? r->time_s / r->lower_bound_s : 0);
    ROW("phases", "%u (%u step%s)", r->phases, r->steps, r->steps == 1 ? "" : "s");
    if (fx && fx->have) {
        const tc_flow_result *fr = &fx->fr;
        ROW("flow", "multipath %s, deps %s, rate cap %s", multipath_name(fx->fo->multipath), deps_name(fx->fo->deps),
            fx->fo->rate_cap_Bps > 0 ? tc_fmt_rate(fx->fo->rate_cap_Bps, b, sizeof b) : "none");
        ROW("events", "%llu (%llu rate recomputations)", (unsigned long long)fr->events,
            (unsigned long long)fr->batches);
        ROW("rank finish", "min %s, median %s, max %s", tc_fmt_time(fr->jobs[0].rank_finish_min_s, b, sizeof b),
            tc_fmt_time(fr->jobs[0].rank_finish_median_s, b2, sizeof b2),
            tc_fmt_time(fr->jobs[0].rank_finish_max_s, b3, sizeof b3));
        ROW("links", "mean utilisation %.1f%% over the links that carried traffic", 100 * fr->mean_utilisation);
        for (size_t i = 0; i < fr->nhot && i < 5; i++) {
            char name[128];
            ROW(i ? "" : "hottest links", "%s (link %u): %s, %.1f%% busy", tc_topo_link_name(t, fr->hot[i].link, name, sizeof name),
                fr->hot[i].link, tc_fmt_size(fr->hot[i].bytes, b, sizeof b), 100 * fr->hot[i].utilisation);
        }
        if (fx->fo->trace_path)
            ROW("trace", "%s: %llu slices%s", fx->fo->trace_path, (unsigned long long)fr->trace_slices,
                fr->trace_truncated ? " (cut at the cap; raise it in the library's trace_max_slices)" : "");
    }
#undef ROW
    if (fmt == TC_FMT_CSV)
        tc_table_print_csv(&tb, stdout);
    else
        tc_table_print(&tb, stdout);
    tc_table_free(&tb);
}

int cmd_collective(int argc, char **argv)
{
    cli_args a;
    tc_err err = {{0}};
    tc_status st = cli_parse(argc, argv, 2, "collective", accepted, &a, &err);
    if (st)
        return cli_exit(st, &err);
    if (a.help) {
        fputs(help, stdout);
        return 0;
    }
    if (a.npositional)
        return cli_exit(tc_fail(&err, TC_EINVAL, "unexpected argument '%s' (see topocc collective --help)",
                                a.positional[0]), &err);
    if (a.ntopo != 1 || !a.op || !a.size)
        return cli_exit(tc_fail(&err, TC_EINVAL,
                                "collective needs --topo SPEC (once), --op OP and --size BYTES (see topocc collective --help)"),
                        &err);
    tc_coll_req req;
    tc_eval_opts o;
    tc_format fmt;
    tc_flow_opts fo;
    if ((st = cli_common(&a, &req, &o, &fmt, &err)) || (st = cli_flow_opts(&a, o.mode, &fo, &err)) ||
        (st = tc_op_parse(a.op, &req.op, &err)) || (st = tc_parse_size(a.size, &req.bytes, &err)))
        return cli_exit(st, &err);
    o.flow = &fo;
    tc_topo *t = NULL;
    if ((st = cli_topo(a.topo[0], &a, &t, &err)))
        return cli_exit(st, &err);
    if (a.routing)
        st = tc_routing_parse(a.routing, t, &o.routing, &err);
    if (!req.p)
        req.p = t->n_endpoints;
    tc_result r;
    flow_extra fx;
    memset(&fx, 0, sizeof fx);
    if (st == TC_OK)
        st = tc_evaluate(t, &req, &o, &r, &err);
    if (st == TC_OK && o.mode == TC_MODE_FLOW)
        st = flow_detail(t, &req, &r, &o, &fx, &err);
    if (st == TC_OK) {
        if (fmt == TC_FMT_JSON) {
            json_t *j = tc_report_result_json(&r, t, o.routing);
            if (fx.have)
                json_object_set_new(j, "flow", flow_json(t, &fx));
            st = tc_write_json(j, NULL, &err);
            json_decref(j);
        } else {
            print_result(&r, t, o.routing, fmt, &fx);
        }
    }
    if (fx.have)
        tc_flow_result_free(&fx.fr);
    tc_topo_free(t);
    return cli_exit(st, &err);
}
