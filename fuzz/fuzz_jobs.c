/*
 * fuzz_jobs.c - the jobs reader of concurrent (the key concurrent.jobs,
 * tc_scn_jobs_from_json in scenario/keys.c), as --jobs FILE feeds it: the
 * input is a jobs file {"jobs": [...]} (or the list alone). Jobs that read
 * are placed on two small networks by resolution (their endpoints checked
 * against each topology, their placement policies run), and must come back
 * from the scenario's JSON unchanged.
 */
#include <jansson.h>
#include "fuzz.h"
#include "scenario/keys.h"

static const char *const topos[] = {"clos:down=4x8,up=1x4,node=4", "torus:dims=4x4x2"};

static void place(const tc_scenario *read, const char *topo)
{
    tc_scenario *s = tc_scenario_clone(read);
    fz_expect(s != NULL, "tc_scenario_clone");
    json_t *v = json_pack("[s]", topo);
    tc_err err = {{0}};
    fz_expect(tc_scn_set_key(s, "network.topo", v, "network.topo", &err) == TC_OK, "network.topo");
    json_decref(v);
    tc_status st = tc_scenario_resolve(s, &err);
    fz_check(st, &err, "tc_scenario_resolve (concurrent.jobs)");
    if (st == TC_OK) {
        /* The jobs written and read back are the same jobs. */
        json_t *j = tc_scenario_to_json(s);
        const json_t *jobs = json_object_get(json_object_get(j, "concurrent"), "jobs");
        tc_scenario *s2 = tc_scenario_new(TC_CMD_CONCURRENT);
        st = tc_scn_jobs_from_json(s2, jobs, "the jobs written back", &err);
        json_t *j2 = st == TC_OK ? tc_scenario_to_json(s2) : NULL;
        const json_t *jobs2 = json_object_get(json_object_get(j2, "concurrent"), "jobs");
        if (st != TC_OK || !json_equal(jobs, jobs2)) {
            char *a = json_dumps(jobs, JSON_COMPACT), *b = jobs2 ? json_dumps(jobs2, JSON_COMPACT) : NULL;
            fprintf(stderr, "written:\n%s\nread back:\n%s\n%s\n", a ? a : "?", b ? b : "-", st ? err.msg : "");
            fz_fail("jobs read back to themselves", NULL);
        }
        json_decref(j);
        json_decref(j2);
        tc_scenario_free(s2);
    }
    tc_scenario_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FZ_MAX_INPUT)
        return -1;
    json_error_t je;
    json_t *root = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return 0;
    const json_t *jobs = json_is_object(root) ? json_object_get(root, "jobs") : root;
    tc_scenario *s = tc_scenario_new(TC_CMD_CONCURRENT);
    fz_expect(s != NULL, "tc_scenario_new");
    tc_err err = {{0}};
    tc_status st = tc_scn_jobs_from_json(s, jobs ? jobs : json_null(), "fuzz jobs", &err);
    fz_check(st, &err, "tc_scn_jobs_from_json");
    if (st == TC_OK) {
        fz_expect(s->njobs >= 1 && s->jobs != NULL, "jobs read");
        for (size_t i = 0; i < sizeof topos / sizeof *topos; i++)
            place(s, topos[i]);
    }
    tc_scenario_free(s);
    json_decref(root);
    return 0;
}
