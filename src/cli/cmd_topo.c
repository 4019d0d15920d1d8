/* cmd_topo.c - `topocc topo SPEC [--links]`: what a topology is made of. */
#include <stdio.h>
#include <string.h>
#include "cli/cli.h"

static const char *help =
    "usage: topocc topo SPEC [--links] [--equalize injection=RATE] [--degrade link:ID=FACTOR]\n"
    "                        [--format table|csv|json]\n"
    "\n"
    "Prints endpoints, switches, links, diameter, bisection bandwidth, injection\n"
    "bandwidth per endpoint and, for a Clos, the oversubscription of each level.\n"
    "--links lists every directed link with its stable ID (the IDs other\n"
    "commands use to name a link).\n"
    "\n"
    "example:\n"
    "  topocc topo clos:down=8x8,up=1x8,bw=400Gbps,lat=1us\n"
    "  topocc topo torus:dims=4x4,wrap=1x0 --links\n";

static void add2(tc_table *tb, const char *k, const char *v)
{
    const char *row[2] = {k, v};
    tc_table_row(tb, row);
}

static void print_table(const tc_topo *t, bool links, bool csv)
{
    tc_topo_info in;
    tc_topo_get_info(t, &in);
    char b1[64], b2[64], line[512];
    tc_table tb;
    tc_table_init(&tb, 2);
    add2(&tb, "field", "value");
    add2(&tb, "topology", t->spec);
    if (t->kind == TC_TOPO_CLOS)
        snprintf(line, sizeof line, "clos (%d switch levels)", t->levels);
    else
        snprintf(line, sizeof line, "torus (%d dimensions)", t->ndims);
    add2(&tb, "kind", line);
    snprintf(line, sizeof line, "%u", in.endpoints);
    add2(&tb, "endpoints", line);
    snprintf(line, sizeof line, "%u", in.switches);
    add2(&tb, "switches", line);
    snprintf(line, sizeof line, "%u directed (%u cables)", in.links, in.links / 2);
    add2(&tb, "links", line);
    snprintf(line, sizeof line, "%u links", in.diameter);
    add2(&tb, "diameter", line);
    snprintf(line, sizeof line, "%s per direction", tc_fmt_rate(in.bisection_Bps, b1, sizeof b1));
    add2(&tb, "bisection", line);
    snprintf(line, sizeof line, "%s per endpoint (%u fabric port%s)", tc_fmt_rate(in.injection_Bps, b1, sizeof b1),
             in.ports_per_endpoint, in.ports_per_endpoint == 1 ? "" : "s");
    add2(&tb, "injection", line);
    snprintf(line, sizeof line, "%s min, %s max", tc_fmt_time(in.min_latency_s, b1, sizeof b1),
             tc_fmt_time(in.max_latency_s, b2, sizeof b2));
    add2(&tb, "path latency", line);
    if (t->kind == TC_TOPO_CLOS) {
        size_t n = 0;
        line[0] = '\0';
        for (int i = 1; i < t->levels; i++)
            n += (size_t)snprintf(line + n, sizeof line - n, "%slevel %d %.3g:1", i > 1 ? ", " : "", i, in.oversub[i]);
        add2(&tb, "oversubscription", t->levels > 1 ? line : "none (one level)");
    }
    if (t->node_size > 1) {
        snprintf(line, sizeof line, "%u endpoints per node, %s, %s", t->node_size,
                 tc_fmt_rate(t->node_bw, b1, sizeof b1), tc_fmt_time(t->node_lat, b2, sizeof b2));
        add2(&tb, "scale-up node", line);
    }
    if (csv)
        tc_table_print_csv(&tb, stdout);
    else
        tc_table_print(&tb, stdout);
    tc_table_free(&tb);
    if (!links)
        return;
    tc_table_init(&tb, 5);
    tb.right[0] = true;
    const char *hdr[5] = {"id", "link", "bandwidth", "latency", "kind"};
    tc_table_row(&tb, hdr);
    for (uint32_t i = 0; i < t->n_links; i++) {
        const tc_link *l = &t->links[i];
        char id[16], name[128];
        snprintf(id, sizeof id, "%u", i);
        const char *row[5] = {id, tc_topo_link_name(t, i, name, sizeof name), tc_fmt_rate(l->bw, b1, sizeof b1),
                              tc_fmt_time(l->lat, b2, sizeof b2), l->kind == TC_LINK_NODE ? "node" : "fabric"};
        tc_table_row(&tb, row);
    }
    fputc('\n', stdout);
    if (csv)
        tc_table_print_csv(&tb, stdout);
    else
        tc_table_print(&tb, stdout);
    tc_table_free(&tb);
}

int cmd_topo(int argc, char **argv)
{
    cli_args a;
    tc_err err = {{0}};
    tc_status st = cli_parse(argc, argv, 2, "topo", "--links --equalize --degrade --format --help", &a, &err);
    if (st)
        return cli_exit(st, &err);
    if (a.help) {
        fputs(help, stdout);
        return 0;
    }
    if (a.npositional != 1)
        return cli_exit(tc_fail(&err, TC_EINVAL, "expected one topology spec, e.g. topocc topo clos:down=8x8,up=1x8"),
                        &err);
    tc_format fmt = TC_FMT_TABLE;
    if (a.format && (st = tc_format_parse(a.format, &fmt, &err)))
        return cli_exit(st, &err);
    tc_topo *t = NULL;
    if ((st = cli_topo(a.positional[0], &a, &t, &err)))
        return cli_exit(st, &err);
    if (fmt == TC_FMT_JSON) {
        json_t *j = tc_report_topo_json(t, a.links);
        st = tc_write_json(j, NULL, &err);
        json_decref(j);
    } else {
        print_table(t, a.links, fmt == TC_FMT_CSV);
    }
    tc_topo_free(t);
    return cli_exit(st, &err);
}
