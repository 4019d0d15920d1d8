/*
 * cmd_concurrent.c - `topocc concurrent`: several collectives (jobs, or
 * groups of one job) at once on one network, through the flow simulator;
 * each gets its own result and its slowdown against running alone.
 *
 * The jobs file (JSON, docs/SCHEMA.md):
 *   {"jobs": [{"name": "A", "op": "allreduce", "algo": "ring", "size": "1GiB",
 *              "endpoints": "0-63" | [0, 4, 8], "start": "0us",
 *              "chunks": 8, "root": 0}, ...]}
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"

static const char *help =
    "usage: topocc concurrent --topo SPEC --jobs FILE [--routing R] [--equalize injection=RATE]\n"
    "                         [--degrade link:ID=FACTOR]... [--rate-cap RATE] [--multipath route|spray]\n"
    "                         [--deps rendezvous|fifo|recv] [--event-budget N] [--trace FILE]\n"
    "                         [--format table|csv|json]\n"
    "\n"
    "Runs every job of FILE at once in the flow simulator (max-min fair sharing of\n"
    "every link) and prints each job's time, its time alone and the slowdown.\n"
    "FILE is JSON:\n"
    "  {\"jobs\": [\n"
    "    {\"name\": \"A\", \"op\": \"allreduce\", \"algo\": \"ring\", \"size\": \"256MiB\",\n"
    "     \"endpoints\": \"0-31\", \"start\": \"0us\"},\n"
    "    {\"name\": \"B\", \"op\": \"alltoall\", \"size\": \"64MiB\", \"endpoints\": [32, 40, 48, 56]}]}\n"
    "op, size and endpoints are required; endpoints is a list or ranges \"a-b,c\" (rank i\n"
    "runs on the i-th endpoint listed); algo defaults to auto (chosen by the formula\n"
    "evaluator for the job alone); start defaults to 0; chunks and root are optional.\n"
    "\n"
    "example:\n"
    "  topocc concurrent --topo clos:down=8x8,up=1x2 --jobs jobs.json --trace run.json\n";

static const char *accepted = "--topo --jobs --routing --equalize --degrade --rate-cap --multipath --deps "
                              "--event-budget --trace --format --help";

typedef struct job {
    char name[64];
    tc_coll_req req;
    uint32_t *map;
    double start;
    tc_sched *s;
} job;

typedef struct jobs {
    job *v;
    size_t n;
} jobs;

static void jobs_free(jobs *js)
{
    for (size_t i = 0; i < js->n; i++) {
        free(js->v[i].map);
        tc_sched_free(js->v[i].s);
    }
    free(js->v);
}

/* "0-63,128,130-131" */
static tc_status parse_ranges(const char *s, uint32_t **map, uint32_t *n, const char *where, tc_err *err)
{
    size_t cap = 64, k = 0;
    uint32_t *v = malloc(cap * sizeof *v);
    if (!v)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    const char *p = s;
    while (*p) {
        char *end;
        if (!isdigit((unsigned char)*p))
            goto bad;
        unsigned long a = strtoul(p, &end, 10), b = a;
        p = end;
        if (*p == '-') {
            if (!isdigit((unsigned char)p[1]))
                goto bad;
            b = strtoul(p + 1, &end, 10);
            p = end;
        }
        if (b < a || b > UINT32_MAX || b - a > 100000000UL)
            goto bad;
        for (unsigned long x = a; x <= b; x++) {
            if (k == cap) {
                uint32_t *w = realloc(v, 2 * cap * sizeof *w);
                if (!w) {
                    free(v);
                    return tc_fail(err, TC_EINTERNAL, "out of memory");
                }
                v = w, cap *= 2;
            }
            v[k++] = (uint32_t)x;
        }
        if (*p == ',')
            p++;
        else if (*p)
            goto bad;
    }
    if (k == 0)
        goto bad;
    *map = v;
    *n = (uint32_t)k;
    return TC_OK;
bad:
    free(v);
    return tc_fail(err, TC_EINVAL, "%s.endpoints: '%s' is not a list of endpoint ranges such as \"0-63,128\"", where, s);
}

static tc_status parse_endpoints(json_t *e, job *j, const char *where, const tc_topo *t, tc_err *err)
{
    uint32_t n = 0;
    tc_status st;
    if (json_is_string(e)) {
        if ((st = parse_ranges(json_string_value(e), &j->map, &n, where, err)))
            return st;
    } else if (json_is_array(e) && json_array_size(e) > 0) {
        n = (uint32_t)json_array_size(e);
        j->map = malloc(n * sizeof *j->map);
        if (!j->map)
            return tc_fail(err, TC_EINTERNAL, "out of memory");
        for (uint32_t i = 0; i < n; i++) {
            json_t *x = json_array_get(e, i);
            if (!json_is_integer(x) || json_integer_value(x) < 0 || json_integer_value(x) > UINT32_MAX)
                return tc_fail(err, TC_EINVAL, "%s.endpoints[%u]: expected an endpoint number", where, i);
            j->map[i] = (uint32_t)json_integer_value(x);
        }
    } else {
        return tc_fail(err, TC_EINVAL, "%s.endpoints: expected a non-empty list of endpoints or a string of ranges such as \"0-63\"", where);
    }
    /* Distinct endpoints inside the topology. */
    uint8_t *seen = tc_calloc(t->n_endpoints, 1);
    if (!seen)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    for (uint32_t i = 0; i < n; i++) {
        if (j->map[i] >= t->n_endpoints) {
            free(seen);
            return tc_fail(err, TC_EINVAL, "%s.endpoints: endpoint %u does not exist (the topology has 0 to %u)", where,
                           j->map[i], t->n_endpoints - 1);
        }
        if (seen[j->map[i]]++) {
            free(seen);
            return tc_fail(err, TC_EINVAL, "%s.endpoints: endpoint %u listed twice", where, j->map[i]);
        }
    }
    free(seen);
    j->req.p = n;
    return TC_OK;
}

static const char *str_field(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static tc_status parse_job(json_t *o, size_t i, job *j, const tc_topo *t, const char *file, tc_err *err)
{
    char where[320];
    snprintf(where, sizeof where, "jobs file '%s': jobs[%zu]", file, i);
    if (!json_is_object(o))
        return tc_fail(err, TC_EINVAL, "%s: expected an object with op, size and endpoints", where);
    static const char *keys[] = {"name", "op", "algo", "size", "endpoints", "start", "chunks", "root", NULL};
    const char *key;
    json_t *val;
    json_object_foreach(o, key, val) {
        bool known = false;
        for (int k = 0; keys[k]; k++)
            known = known || strcmp(key, keys[k]) == 0;
        if (!known)
            return tc_fail(err, TC_EINVAL, "%s: unknown key '%s': accepted are name, op, algo, size, endpoints, start, chunks, root",
                           where, key);
    }
    tc_err e2;
    const char *name = str_field(o, "name");
    snprintf(j->name, sizeof j->name, "%s", name ? name : "");
    if (!name)
        snprintf(j->name, sizeof j->name, "job%zu", i);
    j->req.algo = TC_ALGO_AUTO;
    const char *op = str_field(o, "op"), *size = str_field(o, "size"), *algo = str_field(o, "algo");
    if (!op)
        return tc_fail(err, TC_EINVAL, "%s.op: missing (a string such as \"allreduce\")", where);
    if (tc_op_parse(op, &j->req.op, &e2))
        return tc_fail(err, TC_EINVAL, "%s.op: %s", where, e2.msg);
    json_t *sz = json_object_get(o, "size");
    if (json_is_number(sz)) {
        j->req.bytes = json_number_value(sz);
        if (!(j->req.bytes > 0) || j->req.bytes > TC_MAX_BYTES)
            return tc_fail(err, TC_EINVAL, "%s.size: must be above 0 and at most 2^60 bytes", where);
    } else if (!size) {
        return tc_fail(err, TC_EINVAL, "%s.size: missing (bytes, or a string such as \"64MiB\")", where);
    } else if (tc_parse_size(size, &j->req.bytes, &e2)) {
        return tc_fail(err, TC_EINVAL, "%s.size: %s", where, e2.msg);
    }
    if (algo && tc_algo_parse(algo, &j->req, &e2))
        return tc_fail(err, TC_EINVAL, "%s.algo: %s", where, e2.msg);
    json_t *c = json_object_get(o, "chunks"), *r = json_object_get(o, "root");
    if (c && (!json_is_integer(c) || json_integer_value(c) < 1 || json_integer_value(c) > 65536))
        return tc_fail(err, TC_EINVAL, "%s.chunks: expected an integer from 1 to 65536", where);
    if (c)
        j->req.chunks = (uint32_t)json_integer_value(c);
    if (r && (!json_is_integer(r) || json_integer_value(r) < 0))
        return tc_fail(err, TC_EINVAL, "%s.root: expected a rank number", where);
    if (r)
        j->req.root = (uint32_t)json_integer_value(r);
    const char *start = str_field(o, "start");
    if (json_object_get(o, "start") && !start)
        return tc_fail(err, TC_EINVAL, "%s.start: expected a time string such as \"10us\"", where);
    if (start && tc_parse_time(start, &j->start, &e2))
        return tc_fail(err, TC_EINVAL, "%s.start: %s", where, e2.msg);
    json_t *eps = json_object_get(o, "endpoints");
    if (!eps)
        return tc_fail(err, TC_EINVAL, "%s.endpoints: missing (a list of endpoints or ranges such as \"0-63\")", where);
    tc_status st = parse_endpoints(eps, j, where, t, err);
    if (st)
        return st;
    if (j->req.root >= j->req.p && (j->req.op == TC_OP_BROADCAST || j->req.op == TC_OP_REDUCE))
        return tc_fail(err, TC_EINVAL, "%s.root: rank %u but the job has %u ranks", where, j->req.root, j->req.p);
    if (!tc_coll_valid(j->req.op, j->req.algo, j->req.p, t, &e2))
        return tc_fail(err, TC_EINVAL, "%s: %s", where, e2.msg);
    /* auto: the fastest valid algorithm for the job alone, by the formula
     * evaluator on its endpoints. */
    if (j->req.algo == TC_ALGO_AUTO) {
        tc_eval_opts o2;
        memset(&o2, 0, sizeof o2);
        o2.rank_map = j->map;
        tc_result res;
        if ((st = tc_evaluate(t, &j->req, &o2, &res, err)))
            return st;
        j->req.algo = res.algo;
        j->req.chunks = 0;
    }
    return tc_coll_build(&j->req, t, &j->s, err);
}

static tc_status load_jobs(const char *file, const tc_topo *t, jobs *js, tc_err *err)
{
    json_error_t je;
    json_t *root = json_load_file(file, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        if (je.line <= 0)
            return tc_fail(err, TC_EINVAL, "jobs file '%s': %s", file, je.text);
        return tc_fail(err, TC_EINVAL, "jobs file '%s' line %d, column %d: %s", file, je.line, je.column, je.text);
    }
    tc_status st = TC_OK;
    json_t *arr = json_object_get(root, "jobs");
    const char *key;
    json_t *val;
    if (json_is_object(root))
        json_object_foreach(root, key, val) if (strcmp(key, "jobs") != 0 && st == TC_OK) st =
            tc_fail(err, TC_EINVAL, "jobs file '%s': unknown top-level key '%s': accepted is jobs", file, key);
    if (st == TC_OK && (!json_is_array(arr) || json_array_size(arr) == 0))
        st = tc_fail(err, TC_EINVAL, "jobs file '%s': expected {\"jobs\": [ ... ]} with at least one job", file);
    if (st == TC_OK && json_array_size(arr) > 1024)
        st = tc_fail(err, TC_EINVAL, "jobs file '%s': %zu jobs, at most 1024", file, json_array_size(arr));
    if (st == TC_OK) {
        js->v = tc_calloc(json_array_size(arr), sizeof *js->v);
        if (!js->v)
            st = tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    for (size_t i = 0; st == TC_OK && i < json_array_size(arr); i++) {
        js->n++;
        st = parse_job(json_array_get(arr, i), i, &js->v[i], t, file, err);
    }
    json_decref(root);
    return st;
}

static void report(const jobs *js, const tc_flow_result *fr, const double *alone, const tc_topo *t,
                   const tc_flow_opts *fo, tc_format fmt)
{
    if (fmt == TC_FMT_JSON) {
        json_t *o = json_object();
        json_object_set_new(o, "schema_version", json_integer(TC_SCHEMA_VERSION));
        json_object_set_new(o, "command", json_string("concurrent"));
        json_object_set_new(o, "topology", json_string(t->spec));
        json_object_set_new(o, "routing", json_string(tc_routing_name(fo->routing, t)));
        json_object_set_new(o, "events", json_integer((json_int_t)fr->events));
        json_object_set_new(o, "makespan_s", json_real(fr->makespan_s));
        json_t *arr = json_array();
        for (size_t i = 0; i < js->n; i++) {
            const tc_flow_job_result *r = &fr->jobs[i];
            json_t *e = json_object();
            json_object_set_new(e, "name", json_string(js->v[i].name));
            json_object_set_new(e, "op", json_string(tc_op_name(js->v[i].req.op)));
            json_object_set_new(e, "algo", json_string(tc_algo_name(js->v[i].req.algo)));
            json_object_set_new(e, "ranks", json_integer(js->v[i].req.p));
            json_object_set_new(e, "bytes", json_real(js->v[i].req.bytes));
            json_object_set_new(e, "start_s", json_real(r->start_s));
            json_object_set_new(e, "finish_s", json_real(r->finish_s));
            json_object_set_new(e, "time_s", json_real(r->time_s));
            json_object_set_new(e, "alone_s", json_real(alone[i]));
            json_object_set_new(e, "slowdown", json_real(alone[i] > 0 ? r->time_s / alone[i] : 1.0));
            json_object_set_new(e, "rank_finish_min_s", json_real(r->rank_finish_min_s));
            json_object_set_new(e, "rank_finish_median_s", json_real(r->rank_finish_median_s));
            json_object_set_new(e, "rank_finish_max_s", json_real(r->rank_finish_max_s));
            json_array_append_new(arr, e);
        }
        json_object_set_new(o, "jobs", arr);
        json_t *hot = tc_report_hot_links_json(t, fr);
        json_object_set_new(o, "hot_links", hot);
        tc_write_json(o, NULL, NULL);
        json_decref(o);
        return;
    }
    tc_table tb;
    tc_table_init(&tb, 10);
    for (int c = 3; c < 10; c++)
        tb.right[c] = true;
    const char *hdr[10] = {"job", "op", "algo", "ranks", "size", "start", "time", "alone", "slowdown", "rank finish min/median/max"};
    tc_table_row(&tb, hdr);
    for (size_t i = 0; i < js->n; i++) {
        const tc_flow_job_result *r = &fr->jobs[i];
        char c[10][96], a1[32], a2[32], a3[32];
        snprintf(c[0], 96, "%s", js->v[i].name);
        snprintf(c[1], 96, "%s", tc_op_name(js->v[i].req.op));
        snprintf(c[2], 96, "%s", tc_algo_name(js->v[i].req.algo));
        snprintf(c[3], 96, "%u", js->v[i].req.p);
        tc_fmt_size(js->v[i].req.bytes, c[4], 96);
        tc_fmt_time(r->start_s, c[5], 96);
        tc_fmt_time(r->time_s, c[6], 96);
        tc_fmt_time(alone[i], c[7], 96);
        snprintf(c[8], 96, "%.3fx", alone[i] > 0 ? r->time_s / alone[i] : 1.0);
        snprintf(c[9], 96, "%s / %s / %s", tc_fmt_time(r->rank_finish_min_s, a1, sizeof a1),
                 tc_fmt_time(r->rank_finish_median_s, a2, sizeof a2), tc_fmt_time(r->rank_finish_max_s, a3, sizeof a3));
        const char *row[10] = {c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9]};
        tc_table_row(&tb, row);
    }
    if (fmt == TC_FMT_CSV) {
        tc_table_print_csv(&tb, stdout);
        tc_table_free(&tb);
        return;
    }
    printf("topology %s, flow simulation (routing %s)\n\n", t->spec, tc_routing_name(fo->routing, t));
    tc_table_print(&tb, stdout);
    tc_table_free(&tb);
    char b1[32], b2[32];
    printf("\nmakespan %s, %llu events; hottest links:\n", tc_fmt_time(fr->makespan_s, b1, sizeof b1),
           (unsigned long long)fr->events);
    for (size_t i = 0; i < fr->nhot && i < 5; i++) {
        char name[128];
        printf("  %s (link %u): %s, %.1f%% busy\n", tc_topo_link_name(t, fr->hot[i].link, name, sizeof name),
               fr->hot[i].link, tc_fmt_size(fr->hot[i].bytes, b2, sizeof b2), 100 * fr->hot[i].utilisation);
    }
    if (fo->trace_path)
        printf("trace %s: %llu slices%s\n", fo->trace_path, (unsigned long long)fr->trace_slices,
               fr->trace_truncated ? " (cut at the cap)" : "");
}

int cmd_concurrent(int argc, char **argv)
{
    cli_args a;
    tc_err err = {{0}};
    tc_status st = cli_parse(argc, argv, 2, "concurrent", accepted, &a, &err);
    if (st)
        return cli_exit(st, &err);
    if (a.help) {
        fputs(help, stdout);
        return 0;
    }
    if (a.npositional)
        return cli_exit(tc_fail(&err, TC_EINVAL, "unexpected argument '%s' (see topocc concurrent --help)",
                                a.positional[0]), &err);
    if (a.ntopo != 1 || !a.jobs)
        return cli_exit(tc_fail(&err, TC_EINVAL, "concurrent needs --topo SPEC (once) and --jobs FILE (see topocc concurrent --help)"),
                        &err);
    tc_format fmt = TC_FMT_TABLE;
    tc_flow_opts fo;
    if ((a.format && (st = tc_format_parse(a.format, &fmt, &err))) ||
        (st = cli_flow_opts(&a, TC_MODE_FLOW, &fo, &err)))
        return cli_exit(st, &err);
    tc_topo *t = NULL;
    if ((st = cli_topo(a.topo[0], &a, &t, &err)))
        return cli_exit(st, &err);
    if (a.routing)
        st = tc_routing_parse(a.routing, t, &fo.routing, &err);
    jobs js;
    memset(&js, 0, sizeof js);
    if (st == TC_OK)
        st = load_jobs(a.jobs, t, &js, &err);
    tc_flow_job *fj = st == TC_OK ? tc_calloc(js.n, sizeof *fj) : NULL;
    double *alone = st == TC_OK ? tc_calloc(js.n, sizeof *alone) : NULL;
    if (st == TC_OK && (!fj || !alone))
        st = tc_fail(&err, TC_EINTERNAL, "out of memory");
    for (size_t i = 0; st == TC_OK && i < js.n; i++)
        fj[i] = (tc_flow_job){.sched = js.v[i].s, .rank_map = js.v[i].map, .start_s = js.v[i].start};
    tc_flow_result fr;
    memset(&fr, 0, sizeof fr);
    bool have = false;
    if (st == TC_OK)
        st = tc_flow_alone(t, fj, js.n, &fo, alone, &err);
    if (st == TC_OK)
        have = (st = tc_flow_run(t, fj, js.n, &fo, &fr, &err)) == TC_OK;
    if (st == TC_OK)
        report(&js, &fr, alone, t, &fo, fmt);
    if (have)
        tc_flow_result_free(&fr);
    free(fj);
    free(alone);
    jobs_free(&js);
    tc_topo_free(t);
    return cli_exit(st, &err);
}
