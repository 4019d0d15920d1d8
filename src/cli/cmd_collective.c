/* cmd_collective.c - `topocc collective`: one collective, one topology, one result. */
#include <stdio.h>
#include <string.h>
#include "cli/cli.h"

static const char *help =
    "usage: topocc collective --topo SPEC --op OP --size BYTES [--algo ALGO[:key=val,..]]\n"
    "                         [--ranks N] [--mode formula|steps] [--routing R]\n"
    "                         [--equalize injection=RATE] [--format table|csv|json]\n"
    "\n"
    "OP:    allreduce, reducescatter, allgather, alltoall, broadcast, reduce\n"
    "ALGO:  ring, biring, rd, rhd, binomial, dbtree, bruck, pairwise, direct, torus,\n"
    "       torus-bi, torus-mp, swing, hier, auto (default: the fastest valid one)\n"
    "       parameters: chunks=N (pipelining), root=R (broadcast/reduce)\n"
    "BYTES: nccl-tests convention (whole buffer; all-gather output; reduce-scatter\n"
    "       input; all-to-all: what one rank sends), e.g. 64MiB\n"
    "N:     ranks on endpoints 0..N-1 (default: every endpoint)\n"
    "mode:  formula (closed forms, default) or steps (phase by phase on the graph)\n"
    "R:     Clos ecmp (default) or dmodk; torus dor (default) or dor-positive\n"
    "\n"
    "example:\n"
    "  topocc collective --topo clos:down=8x8,up=1x8,bw=400Gbps,lat=1us \\\n"
    "      --op allreduce --algo ring --size 1GiB --mode steps --format json\n";

static const char *accepted =
    "--topo --op --algo --size --ranks --mode --routing --equalize --format --help";

/* Resolves the shared options of collective and compare. */
tc_status cli_common(const cli_args *a, tc_coll_req *req, tc_eval_opts *o, tc_format *fmt, tc_err *err);

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

static void print_result(const tc_result *r, const tc_topo *t, tc_routing routing, tc_format fmt)
{
    char b[64], line[1024];
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
    if ((st = cli_common(&a, &req, &o, &fmt, &err)) || (st = tc_op_parse(a.op, &req.op, &err)) ||
        (st = tc_parse_size(a.size, &req.bytes, &err)))
        return cli_exit(st, &err);
    tc_topo *t = NULL;
    if ((st = cli_topo(a.topo[0], a.equalize, &t, &err)))
        return cli_exit(st, &err);
    if (a.routing)
        st = tc_routing_parse(a.routing, t, &o.routing, &err);
    if (!req.p)
        req.p = t->n_endpoints;
    tc_result r;
    if (st == TC_OK)
        st = tc_evaluate(t, &req, &o, &r, &err);
    if (st == TC_OK) {
        if (fmt == TC_FMT_JSON) {
            json_t *j = tc_report_result_json(&r, t, o.routing);
            st = tc_write_json(j, NULL, &err);
            json_decref(j);
        } else {
            print_result(&r, t, o.routing, fmt);
        }
    }
    tc_topo_free(t);
    return cli_exit(st, &err);
}
