/*
 * collective.c - topocc as a library: one scenario of `topocc collective`
 * built from flags, run, and its result read from the typed outcome.
 *
 *   cc collective.c $(pkg-config --cflags --libs topocc) -o collective
 *   ./collective [TOPO [SIZE [MODE]]]
 *
 * prints, for each algorithm, its time in seconds and busbw in GB/s; the
 * same numbers as `topocc collective --topo TOPO --op allreduce --size SIZE
 * --algo ring,rhd,dbtree --mode MODE`. docs/LIBRARY.md walks through it.
 */
#include <stdio.h>
#include <stdlib.h>

#include <topocc/outcome.h>
#include <topocc/render.h>
#include <topocc/scenario.h>

/* One flag with one value, as the command line gives it. */
static tc_status flag(tc_scenario *s, const char *name, const char *value, tc_err *err)
{
    return tc_scenario_set_flag(s, name, &value, 1, err);
}

int main(int argc, char **argv)
{
    const char *topo = argc > 1 ? argv[1] : "clos:hosts=64,radix=16,tiers=2,bw=400Gbps,lat=500ns";
    const char *size = argc > 2 ? argv[2] : "64MiB";
    const char *mode = argc > 3 ? argv[3] : "flow";
    tc_err err = {{0}};
    tc_scenario *s = tc_scenario_new(TC_CMD_COLLECTIVE);
    if (!s) {
        fprintf(stderr, "collective: out of memory\n");
        return 1;
    }
    /* Flags as on the command line; then the checks the CLI makes: the
     * scenario resolved (defaults explicit, specs canonical), every key
     * given applies, and the run's own checks. */
    tc_status st = flag(s, "--topo", topo, &err);
    if (st == TC_OK)
        st = flag(s, "--op", "allreduce", &err);
    if (st == TC_OK)
        st = flag(s, "--size", size, &err);
    if (st == TC_OK)
        st = flag(s, "--algo", "ring,rhd,dbtree", &err);
    if (st == TC_OK)
        st = flag(s, "--mode", mode, &err);
    if (st == TC_OK)
        st = tc_scenario_resolve(s, &err);
    if (st == TC_OK)
        st = tc_scenario_check_given(s, &err);
    if (st == TC_OK)
        st = tc_scenario_check_run(s, &err);
    tc_outcome o = {0};
    if (st == TC_OK)
        st = tc_scenario_run(s, NULL, &o, &err);   /* NULL: no progress reports, no memory limit */
    if (st != TC_OK) {
        fprintf(stderr, "collective: %s\n", err.msg);
        tc_scenario_free(s);
        return st == TC_EINVAL ? 2 : 1;
    }
    /* The outcome of a collective scenario is a tc_collective_out: one row
     * per algorithm requested, one result per row and size. */
    const tc_collective_out *c = o.value;
    printf("%u ranks, %s mode, on %s\n", c->ranks, mode, topo);
    for (size_t a = 0; a < c->nalgos; a++) {
        const tc_result *r = tc_collective_at(c, a, 0);
        printf("%-8s %.9g s  busbw %.6g GB/s\n", c->rows[a].requested, r->time_s, r->busbw_Bps / 1e9);
    }
    /* The whole result as the CLI's --format json writes it (the scenario
     * included): what a sweep or a report reads back. */
    if (getenv("COLLECTIVE_JSON") && tc_outcome_write(&o, s, TC_FMT_JSON, stdout, &err) != TC_OK) {
        fprintf(stderr, "collective: %s\n", err.msg);
        st = TC_EINTERNAL;
    }
    tc_outcome_free(&o);
    tc_scenario_free(s);
    return st == TC_OK ? 0 : 1;
}
