/*
 * rep_trainiter.c - the renderings of topocc train (docs/SCHEMA.md): one
 * iteration's breakdown (compute, exposed communication, bubble, the
 * optimizer), its overlap efficiency and MFU, each class of communication,
 * and the memory per device.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "topocc/render.h"

static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* A time of the busiest rank: what floating-point noise leaves of an
 * empty interval (below 1e-12 of the iteration) reads as 0. */
static double clean(double v, double iter)
{
    return fabs(v) <= 1e-12 * iter ? 0 : v;
}

static json_t *comm_json(const tc_ti_comm *c)
{
    return json_pack("{s:o, s:o, s:I}", "time_s", num(c->nominal_s), "bytes", num(c->bytes), "count",
                     (json_int_t)c->count);
}

json_t *tc_trainiter_json(const tc_trainiter_out *o, const tc_scenario *s)
{
    const tc_ti_result *r = &o->res;
    const tc_mem *m = &r->mem;
    json_t *j = json_object();
    json_object_set_new(j, "schema_version", json_integer(TC_SCHEMA_VERSION));
    json_object_set_new(j, "command", json_string("train"));
    json_object_set_new(j, "model", json_string(o->model));
    json_object_set_new(j, "accel", json_string(o->accel));
    json_object_set_new(j, "topology", json_string(o->net.topo[0]->spec));
    json_object_set_new(j, "ranks", json_integer(o->ranks));
    if (o->search)
        goto search;
    json_object_set_new(j, "dp", json_integer(o->cfg.dp));
    json_object_set_new(j, "tp", json_integer(o->cfg.tp));
    json_object_set_new(j, "pp", json_integer(o->cfg.pp));
    json_object_set_new(j, "ep", json_integer(o->cfg.ep > 1 ? o->cfg.ep : 1));
    json_object_set_new(j, "order", json_string(o->order));
    json_object_set_new(j, "cosimulated", json_boolean(o->cosim));
    json_object_set_new(j, "tp_in_node", json_boolean(o->tp_in_node));
    json_object_set_new(j, "achievable", num(o->achievable));
    json_object_set_new(j, "profile_achievable", o->profile_achievable > 0 ? num(o->profile_achievable) : json_null());
    json_object_set_new(j, "copy_engines", o->copy_engines ? json_integer(o->copy_engines) : json_null());
    json_object_set_new(j, "iter_s", num(r->iter_s));
    json_object_set_new(j, "serial_s", num(r->serial_s));
    json_object_set_new(j, "compute_s", num(r->compute_s));
    json_object_set_new(j, "compute_slowdown_s", num(clean(r->slowdown_s, r->iter_s)));
    json_object_set_new(j, "exposed_comm_s", num(r->exposed_s));
    json_object_set_new(j, "bubble_s", num(clean(r->bubble_s, r->iter_s)));
    json_object_set_new(j, "optimizer_s", num(r->optimizer_s));
    json_object_set_new(j, "overlap_efficiency", num(r->efficiency));
    json_object_set_new(j, "compute_slowdown", num(r->slowdown));
    json_object_set_new(j, "mfu", num(r->mfu));
    json_object_set_new(j, "tokens_per_s", num(r->tokens_per_s));
    json_object_set_new(j, "comm", json_pack("{s:o, s:o, s:o, s:o}", "tp", comm_json(&r->tp), "dp", comm_json(&r->dp),
                                            "pp", comm_json(&r->pp), "ep", comm_json(&r->ep)));
    json_object_set_new(j, "memory",
                        json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:b}", "weights_bytes", num(m->weights),
                                  "grads_bytes", num(m->grads), "optimizer_bytes", num(m->optim), "activations_bytes",
                                  num(m->activations), "total_bytes", num(m->total), "capacity_bytes",
                                  num(m->capacity), "headroom_bytes", num(m->headroom), "fits", r->fits));
    const tc_sync_out *y = &o->sync;
    json_t *sj = json_object();
    json_object_set_new(sj, "strategy", json_string(y->strategy));
    json_object_set_new(sj, "replicas", json_integer(y->replicas));
    json_object_set_new(sj, "inner_steps", json_integer(y->inner_steps));
    json_object_set_new(sj, "fragments", json_integer(y->fragments));
    json_object_set_new(sj, "overlap_steps", json_integer(y->overlap_steps));
    json_object_set_new(sj, "outer_dtype", json_string(y->dtype));
    json_object_set_new(sj, "outer_bytes", num(y->outer_bytes));
    json_object_set_new(sj, "outer_allreduce_s", num(y->outer_ar_s));
    json_object_set_new(sj, "outer_allgather_s", num(y->outer_ag_s));
    json_object_set_new(sj, "outer_s", num(y->outer_s));
    json_object_set_new(sj, "step_s", num(y->step_s));
    json_object_set_new(sj, "cross_replica_bytes_per_step", num(y->cross_bytes_step));
    json_object_set_new(sj, "outer_steps", json_integer(y->outer_steps));
    json_object_set_new(sj, "run_s", y->outer_steps ? num(y->run_s) : json_null());
    json_object_set_new(sj, "loss_vs_ddp", y->penalty_known ? num(y->penalty) : json_null());
    json_object_set_new(sj, "loss_rule", json_string(y->penalty_known && strcmp(y->strategy, "ddp")
                                                         ? "derived from arXiv 2503.09799v1 Table 4, 2501.18512v1 "
                                                           "Table 6, 2502.12996v1 Table 2 (docs/MODEL.md)"
                                                         : strcmp(y->strategy, "ddp") ? "none cited" : "ddp"));
    json_object_set_new(sj, "loss_rule_outside_tables", json_boolean(y->penalty_outside));
    json_t *ha = json_array();
    for (uint32_t i = 0; i < y->nh; i++)
        json_array_append_new(ha, json_pack("{s:i, s:o, s:o, s:o, s:b}", "inner_steps", (json_int_t)y->h[i].H, "step_s",
                                            num(y->h[i].step_s), "cross_replica_bytes_per_step",
                                            num(y->h[i].cross_bytes_step), "loss_vs_ddp",
                                            y->penalty_known ? num(y->h[i].penalty) : json_null(), "outside",
                                            y->h[i].outside));
    json_object_set_new(sj, "h_tradeoff", ha);
    json_object_set_new(j, "sync", sj);
    static const char *ck[3] = {"dp", "pp", "ep"};
    json_t *cj = json_object();
    for (int k = 0; k < 3; k++) {
        const tc_ti_codec_out *q = &o->codec[k];
        if (q->requested)
            json_object_set_new(cj, ck[k], json_pack("{s:s, s:b, s:o, s:o}", "codec", q->codec, "applied", q->applied,
                                                     "with_s", num(q->with_s), "without_s", num(q->without_s)));
    }
    json_object_set_new(j, "compression", cj);
    json_t *aj = json_array();
    for (uint32_t i = 0; i < o->nalgos; i++) {
        const tc_ti_algo_use *u = &o->algos[i];
        json_array_append_new(aj, json_pack("{s:s, s:s, s:s, s:b, s:s, s:i}", "class", tc_ti_group_name(u->g), "op",
                                            tc_op_name(u->op), "algo", u->name, "auto", u->chosen, "policy",
                                            u->library ? "library" : u->chosen ? "auto" : "named", "sizes",
                                            (json_int_t)u->sizes));
    }
    json_object_set_new(j, "algorithms", aj);
    if (o->have_blame) {
        json_t *bj = json_object();
        for (uint32_t g = 0; g < TC_TI_NCLASSES; g++) {
            const tc_ti_blame *b = &o->blame[g];
            if (!(b->sent_s > 0))
                continue;
            json_t *links = json_array();
            for (uint32_t k = 0; k < b->nlinks; k++) {
                char nm[96];
                json_t *with = json_array();
                for (uint32_t h = 0; h < TC_TI_NCLASSES; h++)
                    if (b->shared_with[k] & (1u << h))
                        json_array_append_new(with, json_string(tc_ti_group_name((tc_ti_group)h)));
                json_array_append_new(links, json_pack("{s:i, s:s, s:o, s:o}", "link", (json_int_t)b->link[k], "name",
                                                       tc_topo_link_name(o->net.topo[0], b->link[k], nm, sizeof nm),
                                                       "lost_flow_s", num(b->link_lost_s[k]), "shared_with", with));
            }
            json_object_set_new(bj, tc_ti_group_name((tc_ti_group)g),
                                json_pack("{s:o, s:o, s:o}", "sent_flow_s", num(b->sent_s), "lost_flow_s",
                                          num(b->lost_s), "links", links));
        }
        json_object_set_new(j, "link_blame", bj);
        json_object_set_new(j, "cosim",
                            json_pack("{s:I, s:I, s:I, s:b}", "flow_jobs", (json_int_t)o->cosim_jobs, "timed_alone",
                                      (json_int_t)o->cosim_alone, "alone_simulations",
                                      (json_int_t)o->cosim_alone_sims, "retried", o->cosim_retried));
    }
search:
    json_object_set_new(j, "evaluations", json_integer(o->evaluations));
    if (o->search) {
        json_t *a = json_array();
        for (size_t i = 0; i < o->nsplits; i++) {
            const tc_ti_split *x = &o->splits[i];
            json_array_append_new(a, json_pack("{s:i, s:i, s:i, s:i, s:i, s:o, s:o, s:o, s:o, s:o, s:b}", "dp", x->dp,
                                               "tp", x->tp, "pp", x->pp, "ep", x->ep, "micro_batches", x->m, "iter_s",
                                               num(x->iter_s),
                                               "exposed_s", num(x->exposed_s), "bubble_s", num(clean(x->bubble_s, x->iter_s)), "mfu",
                                               num(x->mfu), "memory_bytes", num(x->mem_bytes), "fits", x->fits));
        }
        json_object_set_new(j, "global_batch", json_integer((json_int_t)o->global_batch));
        json_object_set_new(j, "splits", a);
    }
    tc_report_add_scenario(j, s);
    return j;
}

static void splits_table(const tc_trainiter_out *o, tc_rtable *t)
{
    tc_rtable_init(t, "splits");
    int c_dp = tc_rtable_col(t, "dp", "dp", TC_COL_COUNT, NULL, 0);
    int c_tp = tc_rtable_col(t, "tp", "tp", TC_COL_COUNT, NULL, 0);
    int c_pp = tc_rtable_col(t, "pp", "pp", TC_COL_COUNT, NULL, 0);
    int c_ep = tc_rtable_col(t, "ep", "ep", TC_COL_COUNT, NULL, 0);
    int c_m = tc_rtable_col(t, "micro_batches", "m", TC_COL_COUNT, NULL, 0);
    int c_it = tc_rtable_col(t, "iter_s", "iteration", TC_COL_SECONDS, NULL, 0);
    int c_ex = tc_rtable_col(t, "exposed_s", "exposed", TC_COL_SECONDS, NULL, 0);
    int c_bu = tc_rtable_col(t, "bubble_s", "bubble", TC_COL_SECONDS, NULL, 0);
    int c_mfu = tc_rtable_col(t, "mfu", "MFU", TC_COL_NUM, "%.3g%%", 100);
    int c_mem = tc_rtable_col(t, "memory_gib", "memory GiB", TC_COL_NUM, "%.4g", 0);
    int c_fit = tc_rtable_col(t, "fits", "fits", TC_COL_TEXT, NULL, 0);
    for (size_t i = 0; i < o->nsplits; i++) {
        const tc_ti_split *x = &o->splits[i];
        size_t r = tc_rtable_row(t);
        tc_rtable_num(t, r, c_dp, x->dp);
        tc_rtable_num(t, r, c_tp, x->tp);
        tc_rtable_num(t, r, c_pp, x->pp);
        tc_rtable_num(t, r, c_ep, x->ep);
        tc_rtable_num(t, r, c_m, x->m);
        tc_rtable_num(t, r, c_it, x->iter_s);
        tc_rtable_num(t, r, c_ex, x->exposed_s);
        tc_rtable_num(t, r, c_bu, clean(x->bubble_s, x->iter_s));
        tc_rtable_num(t, r, c_mfu, x->mfu);
        tc_rtable_num(t, r, c_mem, x->mem_bytes / 1073741824.0);
        tc_rtable_text(t, r, c_fit, x->fits ? "yes" : "no");
    }
}

size_t tc_trainiter_tables(const tc_trainiter_out *o, const tc_scenario *s, tc_rtable *tabs, size_t max)
{
    (void)s;
    if (max < 1)
        return 0;
    if (o->search) {
        splits_table(o, &tabs[0]);
        return 1;
    }
    const tc_ti_result *r = &o->res;
    tc_rtable *t = &tabs[0];
    tc_rtable_init(t, "iteration");
    int c_what = tc_rtable_col(t, "part", "part", TC_COL_TEXT, NULL, 0);
    int c_t = tc_rtable_col(t, "time_s", "time", TC_COL_SECONDS, NULL, 0);
    int c_sh = tc_rtable_col(t, "share", "of the iteration", TC_COL_NUM, "%.3g%%", 100);
    const struct {
        const char *name;
        double v;
    } rows[] = {
        {"iteration", r->iter_s},
        {"compute (nominal, incl. optimizer)", r->compute_s},
        {"optimizer step", r->optimizer_s},
        {"compute slowdown (contention)", clean(r->slowdown_s, r->iter_s)},
        {"exposed communication", r->exposed_s},
        {"pipeline bubble", clean(r->bubble_s, r->iter_s)},
        {"iteration without overlap", r->serial_s},
        {"TP collectives (nominal)", r->tp.nominal_s},
        {"DP collectives (nominal)", r->dp.nominal_s},
        {"PP sends (nominal)", r->pp.nominal_s},
        {"EP all-to-alls (nominal)", r->ep.nominal_s},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        size_t row = tc_rtable_row(t);
        tc_rtable_text(t, row, c_what, rows[i].name);
        tc_rtable_num(t, row, c_t, rows[i].v);
        tc_rtable_num(t, row, c_sh, r->iter_s > 0 ? rows[i].v / r->iter_s : NAN);
    }
    return 1;
}

static const char *gib(double b, char *buf, size_t len)
{
    snprintf(buf, len, "%.2f GiB", b / 1073741824.0);
    return buf;
}

/* The classes' comma-separated names in mask (a bit per tc_ti_group). */
static const char *classes(uint32_t mask, char *buf, size_t len)
{
    size_t k = 0;
    buf[0] = '\0';
    for (uint32_t h = 0; h < TC_TI_NCLASSES; h++)
        if (mask & (1u << h)) {
            int w = snprintf(buf + k, len - k, "%s%s", k ? ", " : "", tc_ti_group_name((tc_ti_group)h));
            if (w < 0 || (size_t)w >= len - k)
                break;
            k += (size_t)w;
        }
    return buf;
}

/* Compression per traffic class: what was asked, what was applied. */
static void codec_print(const tc_trainiter_out *o, FILE *f)
{
    static const char *cls[3] = {"dp gradients", "pp activations", "ep tokens"};
    for (int k = 0; k < 3; k++) {
        const tc_ti_codec_out *q = &o->codec[k];
        if (!q->requested)
            continue;
        char a[32], b[32];
        fprintf(f, "compression of %s: %s %s (the iteration %s with it, %s without%s)\n", cls[k], q->codec,
                q->applied ? "applied" : "not applied", tc_fmt_time(q->with_s, a, sizeof a),
                tc_fmt_time(q->without_s, b, sizeof b),
                q->applied ? "" : ": off the critical path, or its codec costs more than it saves");
    }
}

/* The algorithms the collectives ran, by class and operation. */
static void algos_print(const tc_trainiter_out *o, FILE *f)
{
    if (!o->nalgos)
        return;
    fprintf(f, "algorithms:");
    for (uint32_t i = 0; i < o->nalgos; i++) {
        const tc_ti_algo_use *u = &o->algos[i];
        fprintf(f, "%s %s %s %s%s", i ? ";" : "", tc_ti_group_name(u->g), tc_op_name(u->op), u->name,
                u->library ? " (library)" : u->chosen ? " (auto)" : "");
    }
    fprintf(f, "\n");
}

/* Co-simulated: which links held back which class of communication. */
static void blame_print(const tc_trainiter_out *o, FILE *f)
{
    if (!o->have_blame)
        return;
    fprintf(f, "co-simulation: %llu flow jobs, %llu of them timed alone on their links (%llu simulations of one "
               "job)%s\n",
            (unsigned long long)o->cosim_jobs, (unsigned long long)o->cosim_alone,
            (unsigned long long)o->cosim_alone_sims,
            o->cosim_retried ? "; the overlapped run made again event by event: a flow came onto the links of a job timed "
                                "alone"
                              : "");
    fprintf(f, "waiting on links (co-simulation): each class's flow time lost to sharing a link (1 - rate / rate "
               "alone), and the links that cost it most\n");
    bool any = false;
    for (uint32_t g = 0; g < TC_TI_NCLASSES; g++) {
        const tc_ti_blame *b = &o->blame[g];
        if (!(b->sent_s > 0))
            continue;
        any = true;
        fprintf(f, "  %-5s %.3g%% of %.4g flow-s lost", tc_ti_group_name((tc_ti_group)g),
                100 * b->lost_s / b->sent_s, b->sent_s);
        for (uint32_t k = 0; k < b->nlinks; k++) {
            char nm[96], sw[64];
            tc_topo_link_name(o->net.topo[0], b->link[k], nm, sizeof nm);
            fprintf(f, "%s link %u (%s) %.3g%% %s%s", k ? ";" : ":", b->link[k], nm,
                    100 * b->link_lost_s[k] / b->lost_s, b->shared_with[k] ? "with " : "(its own flows only)",
                    classes(b->shared_with[k], sw, sizeof sw));
        }
        fprintf(f, "\n");
    }
    if (!any)
        fprintf(f, "  nothing crossed the network\n");
}

/* The replicas' synchronisation, when there is more than one replica. */
static void sync_print(const tc_trainiter_out *o, FILE *f)
{
    const tc_sync_out *y = &o->sync;
    if (y->replicas < 2)
        return;
    char b1[32], b2[32], b3[32], b4[32];
    bool ddp = strcmp(y->strategy, "ddp") == 0;
    fprintf(f, "sync: %s over %u replicas of %u ranks", y->strategy, y->replicas, o->ranks / y->replicas);
    if (ddp) {
        fprintf(f, " (gradients all-reduced over every replica each step)\n");
    } else {
        fprintf(f, ", H = %u inner steps", y->inner_steps);
        if (strcmp(y->strategy, "streaming-diloco") == 0)
            fprintf(f, ", %u fragments, each overlapping %u inner steps", y->fragments, y->overlap_steps);
        fprintf(f, "\n  outer step: all-reduce of %s (%s) across replicas %s, all-gather inside a replica %s: %s%s\n",
                tc_fmt_size(y->outer_bytes, b1, sizeof b1), y->dtype, tc_fmt_time(y->outer_ar_s, b2, sizeof b2),
                tc_fmt_time(y->outer_ag_s, b3, sizeof b3), tc_fmt_time(y->outer_s, b4, sizeof b4),
                strcmp(y->strategy, "streaming-diloco") == 0 ? " per fragment" : "");
    }
    fprintf(f, "  per step: %s, across replicas %s per rank (all-reduce size)\n", tc_fmt_time(y->step_s, b1, sizeof b1),
            tc_fmt_size(y->cross_bytes_step, b2, sizeof b2));
    if (y->outer_steps)
        fprintf(f, "  run: %u outer steps x %u = %llu steps in %s\n", y->outer_steps, y->inner_steps,
                (unsigned long long)y->outer_steps * y->inner_steps, tc_fmt_time(y->run_s, b1, sizeof b1));
    if (!ddp) {
        if (y->penalty_known)
            fprintf(f, "  loss vs DDP at equal steps: %+.2f%% (a rule derived from the DiLoCo papers' tables, not "
                       "stated by them: docs/MODEL.md%s)\n",
                    100 * y->penalty, y->penalty_outside ? "; outside the tables, the nearest entry used" : "");
        else
            fprintf(f, "  loss vs DDP: not estimated (no cited rule for %s)\n", y->strategy);
        if (y->nh) {
            fprintf(f, "  H trade-off (the same inner step and outer synchronisation):\n  %8s %12s %16s %12s\n", "H",
                    "per step", "across/step", "loss vs DDP");
            for (uint32_t i = 0; i < y->nh; i++) {
                char pen[32];
                if (y->penalty_known)
                    snprintf(pen, sizeof pen, "%+.2f%%%s", 100 * y->h[i].penalty, y->h[i].outside ? "*" : "");
                else
                    snprintf(pen, sizeof pen, "-");
                fprintf(f, "  %8u %12s %16s %12s%s\n", y->h[i].H, tc_fmt_time(y->h[i].step_s, b1, sizeof b1),
                        tc_fmt_size(y->h[i].cross_bytes_step, b2, sizeof b2), pen,
                        y->h[i].H == y->inner_steps ? "  <- given" : "");
            }
            if (y->penalty_known)
                fprintf(f, "  (loss: the derived rule; * outside its tables)\n");
        }
    }
}

static void search_print(const tc_trainiter_out *o, FILE *f)
{
    bool cnn = o->cnn;
    fprintf(f, "train --search: %s on %u x %s, global batch %llu %s in micro-batches of %u, ZeRO %d: %zu splits, "
               "%zu fit in memory%s (the fastest first; %u collectives evaluated)\n",
            o->model, o->ranks, o->accel, (unsigned long long)o->global_batch, cnn ? "samples" : "sequences",
            o->cfg.micro_batch, o->cfg.zero, o->nsplits, o->nfit,
            o->mem_unknown ? " (memory not checked: the profile gives no capacity)" : "", o->evaluations);
    fprintf(f, "topology: %s\n", o->net.topo[0]->spec);
    tc_rtable t;
    splits_table(o, &t);
    tc_rtable_print(&t, f);
    tc_rtable_free(&t);
}

void tc_trainiter_print(const tc_trainiter_out *o, const tc_scenario *s, FILE *f)
{
    if (o->search) {
        search_print(o, f);
        return;
    }
    const tc_ti_result *r = &o->res;
    const tc_mem *m = &r->mem;
    char epb[32] = "", rp[48] = "";
    if (o->cfg.ep > 1)
        snprintf(epb, sizeof epb, " (ep %u)", o->cfg.ep);
    if (o->sync.replicas > 1 && strcmp(o->sync.strategy, "ddp"))
        snprintf(rp, sizeof rp, "%u replicas of ", o->sync.replicas);
    fprintf(f, "train: %s on %u x %s, %sdp %u%s x tp %u x pp %u, %u micro-batches of %u, ZeRO %d%s%s\n", o->model,
            o->ranks, o->accel, rp, o->cfg.dp, epb, o->cfg.tp, o->cfg.pp, o->cfg.micro_batches, o->cfg.micro_batch,
            o->cfg.zero, o->cfg.seq_parallel ? ", sequence parallel" : "",
            o->cfg.overlap ? "" : ", overlap off");
    bool from_profile = s->achievable < 0;
    fprintf(f, "compute: roofline at %.3g of peak FLOP/s (%s", o->achievable,
            from_profile ? "the profile's achievable_fraction" : "--achievable; 0.7 assumed by default");
    if (o->profile_achievable > 0 && !from_profile)
        fprintf(f, "; the profile gives %.3g: --achievable profile", o->profile_achievable);
    fprintf(f, ")\n");
    fprintf(f, "contention: compute at 1/(1+%g) while %s in flight, collectives at 1/(1+%g) while compute runs\n",
            o->cfg.dma ? o->cfg.contention.s_c_dma : o->cfg.contention.s_c,
            o->cfg.dma ? "copy-engine (--dma) collectives are" : "a collective is",
            o->cfg.dma ? o->cfg.contention.s_m_dma : o->cfg.contention.s_m);
    fprintf(f, "topology: %s (rank r on endpoint r; order %s, innermost first)\n", o->net.topo[0]->spec, o->order);
    if (o->cosim)
        fprintf(f, "network: co-simulated (flow): every group's collectives and sends share the links while compute "
                   "runs; the nominal times below are each collective alone (steps)\n");
    if (!o->tp_in_node)
        fprintf(f, "note: a TP group of %u spans more than one scale-up node of %u\n", o->cfg.tp,
                o->net.topo[0]->node_size);
    tc_rtable tabs[1];
    size_t n = tc_trainiter_tables(o, s, tabs, 1);
    if (n)
        tc_rtable_print(&tabs[0], f);
    fprintf(f, "overlap efficiency %.3g (1: all hidden; below 0: overlap slower than serial), compute slowdown %.3g%%, "
               "MFU %.3g%%, %.4g %s/s\n",
            r->efficiency, 100 * r->slowdown, 100 * r->mfu, r->tokens_per_s,
            o->cnn ? "samples" : "tokens");
    char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32];
    fprintf(f, "memory per device: weights %s, gradients %s, optimizer %s, activations %s: %s",
            gib(m->weights, b1, sizeof b1), gib(m->grads, b2, sizeof b2), gib(m->optim, b3, sizeof b3),
            gib(m->activations, b4, sizeof b4), gib(m->total, b5, sizeof b5));
    if (o->mem_unknown)
        fprintf(f, ", not checked (the accelerator's profile gives no capacity)\n");
    else
        fprintf(f, " of %s, %s\n", gib(m->capacity, b6, sizeof b6), r->fits ? "fits" : "does NOT fit");
    if (!r->fits && m->capacity > 0) {
        char b7[32];
        fprintf(f, "  short by %s\n", gib(-m->headroom, b7, sizeof b7));
    }
    for (size_t k = 0; k < n; k++)
        tc_rtable_free(&tabs[k]);
    algos_print(o, f);
    codec_print(o, f);
    blame_print(o, f);
    sync_print(o, f);
}
