/*
 * html.c - the report's page: index.html with the scenario, every plot
 * (an <img> of its SVG, a link to its CSV) and the result's tables, each
 * string from the document escaped.
 *
 * The tables are read off the JSON document, not the typed outcome, so a
 * saved result renders as a fresh one does: the document's scalars (and
 * its objects of scalars, by dotted path) make one summary table, and each
 * array of objects a table of its own, a column per key (an object's keys
 * flattened one level); an array of objects inside the rows of another
 * becomes a table whose rows repeat their parent's scalars. Values are
 * formatted by their key's unit (_s, _Bps, bytes) with the exact number in
 * the cell's title. Long tables stop at MAX_ROWS: the whole document is
 * beside the page (result.json).
 *
 * The page works offline from a file:// URL: every link relative, its
 * style and one small script inline. The script checks, once the page has
 * loaded, that every image rendered and nothing failed, and records it on
 * the body (data-images-ok="7/7", data-errors="0") where a test can read
 * it.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "topocc/html.h"

#define MAX_ROWS 200
#define MAX_COLS 48
#define MAX_TABLES 48

void tc_html_escape(const char *s, FILE *f)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: fputc(*s, f);
        }
    }
}

static void esc(FILE *f, const char *s)
{
    tc_html_escape(s, f);
}

tc_status tc_html_prepare_dir(const char *dir, tc_err *err)
{
    if (!dir || !*dir)
        return tc_fail(err, TC_EINVAL, "the report's directory is empty: -o DIR");
    if (strlen(dir) > 4000)
        return tc_fail(err, TC_EINVAL, "the report's directory name is too long (at most 4000 bytes)");
    tc_status made = tc_make_dirs(dir, err);
    if (made)
        return made;
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return tc_fail(err, TC_EINVAL, "cannot write the report into '%s': not a directory", dir);
    char probe[4200];
    snprintf(probe, sizeof probe, "%s/index.html", dir);
    tc_atomic_file af;
    tc_status st = tc_atomic_open(&af, probe, err);
    if (st == TC_OK)
        tc_atomic_abort(&af);
    return st;
}

/* ---- values ---- */

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

typedef enum { K_PLAIN = 0, K_TIME, K_RATE, K_SIZE } vkind;

static vkind kind_of(const char *key)
{
    if (!key)
        return K_PLAIN;
    if (ends_with(key, "_Bps"))
        return K_RATE;
    if (ends_with(key, "_per_s"))
        return K_PLAIN;
    if (ends_with(key, "_s") || strcmp(key, "seconds") == 0)
        return K_TIME;
    if (strstr(key, "bytes") || ends_with(key, "sizes"))
        return K_SIZE;
    return K_PLAIN;
}

/* A number for people, by the unit of its key (or of its parent's). */
static const char *fmt_num(const char *key, const char *parent, double v, char *buf, size_t len)
{
    vkind k = kind_of(key);
    if (k == K_PLAIN)
        k = kind_of(parent);
    if (!isfinite(v))
        snprintf(buf, len, "-");
    else if (k == K_TIME)
        tc_fmt_time(v, buf, len);
    else if (k == K_RATE)
        tc_fmt_rate(v, buf, len);
    else if (k == K_SIZE)
        tc_fmt_size(v, buf, len);
    else if (v == floor(v) && fabs(v) < 1e15)
        snprintf(buf, len, "%.0f", v);
    else
        snprintf(buf, len, "%.4g", v);
    return buf;
}

static bool is_scalar(const json_t *v)
{
    return v && !json_is_object(v) && !json_is_array(v);
}

static bool scalars_only(const json_t *a)
{
    size_t i;
    json_t *x;
    json_array_foreach(a, i, x) {
        if (!is_scalar(x))
            return false;
    }
    return true;
}

static bool objects_array(const json_t *a)
{
    if (!json_is_array(a) || json_array_size(a) == 0)
        return false;
    size_t i;
    json_t *x;
    json_array_foreach(a, i, x) {
        if (!json_is_object(x))
            return false;
    }
    return true;
}

/* One value as escaped HTML text. */
static void put_value(FILE *f, const char *key, const char *parent, const json_t *v)
{
    char b[64];
    if (!v || json_is_null(v))
        fputs("-", f);
    else if (json_is_string(v))
        esc(f, json_string_value(v));
    else if (json_is_boolean(v))
        fputs(json_is_true(v) ? "yes" : "no", f);
    else if (json_is_integer(v) && kind_of(key) == K_PLAIN && kind_of(parent) == K_PLAIN)
        fprintf(f, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    else if (json_is_number(v))
        fputs(fmt_num(key, parent, json_number_value(v), b, sizeof b), f);
    else if (json_is_array(v) && scalars_only(v)) {
        size_t n = json_array_size(v);
        if (!n)
            fputs("-", f);
        for (size_t i = 0; i < n && i < 16; i++) {
            fputs(i ? ", " : "", f);
            put_value(f, key, parent, json_array_get(v, i));
        }
        if (n > 16)
            fprintf(f, ", ... (%zu in all)", n);
    } else if (json_is_array(v))
        fprintf(f, "(%zu entries)", json_array_size(v));
    else {
        char *s = json_dumps(v, JSON_COMPACT);
        if (s && strlen(s) > 160)
            strcpy(s + 157, "...");
        esc(f, s ? s : "(object)");
        free(s);
    }
}

/* A cell: the value, with the exact number in its title where the text
 * rounds or scales it. */
static void put_cell(FILE *f, const char *key, const char *parent, const json_t *v)
{
    char b[40];
    if (json_is_integer(v))
        fprintf(f, "<td class=\"n\" title=\"%" JSON_INTEGER_FORMAT "\">", json_integer_value(v));
    else if (json_is_number(v) && isfinite(json_number_value(v)))
        fprintf(f, "<td class=\"n\" title=\"%s\">", tc_fmt_shortest(json_number_value(v), b, sizeof b));
    else if ((json_is_string(v) && json_string_length(v) > 40) || json_is_array(v) || json_is_object(v))
        fputs("<td class=\"l\">", f);
    else
        fputs("<td>", f);
    put_value(f, key, parent, v);
    fputs("</td>", f);
}

/* ---- tables ---- */

typedef struct tabref {
    char *path;                  /* its title: the array's path */
    json_t *rows;                /* a new reference */
    size_t total;                /* rows in the document (rows may hold the first MAX_ROWS) */
} tabref;

typedef struct tabs {
    tabref t[MAX_TABLES];
    size_t n;
} tabs;

static void tabs_add(tabs *T, const char *path, json_t *rows, size_t total)
{
    if (T->n == MAX_TABLES || !rows) {
        json_decref(rows);
        return;
    }
    T->t[T->n].path = strdup(path);
    T->t[T->n].rows = rows;
    T->t[T->n].total = total;
    if (!T->t[T->n].path) {
        json_decref(rows);
        return;
    }
    T->n++;
}

static void tabs_free(tabs *T)
{
    for (size_t i = 0; i < T->n; i++) {
        free(T->t[i].path);
        json_decref(T->t[i].rows);
    }
    T->n = 0;
}

typedef struct col {
    const char *key, *sub;
} col;

static size_t add_col(col *cols, size_t n, const char *key, const char *sub)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(cols[i].key, key) == 0 && (sub ? cols[i].sub && strcmp(cols[i].sub, sub) == 0 : !cols[i].sub))
            return n;
    if (n < MAX_COLS)
        cols[n++] = (col){key, sub};
    return n;
}

static const json_t *cell_of(const json_t *row, const col *c)
{
    const json_t *v = json_object_get(row, c->key);
    return c->sub ? (json_is_object(v) ? json_object_get(v, c->sub) : NULL) : v;
}

/* The rows of an array of objects inside each row of rows, each with its
 * parent's scalars first (a new array; NULL when there is none). */
static json_t *child_rows(const json_t *rows, const char *key, size_t *total)
{
    json_t *out = json_array();
    *total = 0;
    size_t i, k;
    json_t *r, *c;
    json_array_foreach(rows, i, r) {
        const json_t *kids = json_object_get(r, key);
        if (!objects_array(kids))
            continue;
        json_array_foreach(kids, k, c) {
            if ((*total)++ >= MAX_ROWS)
                continue;
            json_t *o = json_object();
            const char *pk;
            json_t *pv;
            json_object_foreach(r, pk, pv) {
                if (is_scalar(pv))
                    json_object_set(o, pk, pv);
            }
            json_object_update(o, c);
            json_array_append_new(out, o);
        }
    }
    if (json_array_size(out) == 0) {
        json_decref(out);
        return NULL;
    }
    return out;
}

static void put_table(FILE *f, const char *title, const json_t *rows, size_t total, const char *whole,
                      tabs *more)
{
    col cols[MAX_COLS];
    size_t nc = 0, i;
    json_t *r;
    json_array_foreach(rows, i, r) {
        const char *k;
        json_t *v;
        json_object_foreach(r, k, v) {
            if (is_scalar(v) || (json_is_array(v) && scalars_only(v)))
                nc = add_col(cols, nc, k, NULL);
            else if (json_is_object(v)) {
                const char *s;
                json_t *x;
                json_object_foreach(v, s, x) {
                    if (is_scalar(x) || (json_is_array(x) && scalars_only(x)))
                        nc = add_col(cols, nc, k, s);
                }
            }
        }
    }
    /* Columns with one value in every row: said once, above the table. */
    bool same[MAX_COLS] = {false};
    size_t nrows = json_array_size(rows), nsame = 0;
    for (size_t c = 0; c < nc && nrows > 1; c++) {
        const json_t *first = cell_of(json_array_get(rows, 0), &cols[c]);
        same[c] = true;
        json_array_foreach(rows, i, r) {
            const json_t *v = cell_of(r, &cols[c]);
            if (!(v == first || (v && first && json_equal(v, first)))) {
                same[c] = false;
                break;
            }
        }
        nsame += same[c];
    }
    if (nsame == nc)
        memset(same, 0, sizeof same);
    fputs("<h3>", f);
    esc(f, title);
    fputs("</h3>\n", f);
    if (nsame && nsame < nc) {
        fputs("<p class=\"note\">In every row: ", f);
        bool first = true;
        for (size_t c = 0; c < nc; c++) {
            if (!same[c])
                continue;
            fputs(first ? "" : "; ", f);
            first = false;
            fputs("<code>", f);
            esc(f, cols[c].key);
            if (cols[c].sub) {
                fputs(".", f);
                esc(f, cols[c].sub);
            }
            fputs("</code> ", f);
            const json_t *v = cell_of(json_array_get(rows, 0), &cols[c]);
            if (cols[c].sub)
                put_value(f, cols[c].sub, cols[c].key, v);
            else
                put_value(f, cols[c].key, NULL, v);
        }
        fputs(".</p>\n", f);
    }
    size_t shown = json_array_size(rows) < MAX_ROWS ? json_array_size(rows) : MAX_ROWS;
    if (total > shown)
        fprintf(f, "<p class=\"note\">The first %zu of %zu rows; every row is in %s.</p>\n", shown, total, whole);
    fputs("<div class=\"scroll\"><table>\n<thead><tr>", f);
    for (size_t c = 0; c < nc; c++) {
        if (same[c])
            continue;
        fputs("<th>", f);
        esc(f, cols[c].key);
        if (cols[c].sub) {
            fputs(".", f);
            esc(f, cols[c].sub);
        }
        fputs("</th>", f);
    }
    fputs("</tr></thead>\n<tbody>\n", f);
    json_array_foreach(rows, i, r) {
        if (i >= MAX_ROWS)
            break;
        fputs("<tr>", f);
        for (size_t c = 0; c < nc; c++) {
            if (same[c])
                continue;
            if (cols[c].sub)
                put_cell(f, cols[c].sub, cols[c].key, cell_of(r, &cols[c]));
            else
                put_cell(f, cols[c].key, NULL, cell_of(r, &cols[c]));
        }
        fputs("</tr>\n", f);
    }
    fputs("</tbody></table></div>\n", f);
    /* Arrays of objects in the rows: tables of their own. */
    const char *seen[MAX_COLS];
    size_t ns = 0;
    json_array_foreach(rows, i, r) {
        const char *k;
        json_t *v;
        json_object_foreach(r, k, v) {
            bool dup = false;
            for (size_t s = 0; s < ns; s++)
                dup |= strcmp(seen[s], k) == 0;
            if (dup || !objects_array(v) || ns == MAX_COLS)
                continue;
            seen[ns++] = k;
            char path[512];
            snprintf(path, sizeof path, "%s[].%s", title, k);
            size_t n;
            json_t *kids = child_rows(rows, k, &n);
            if (kids)
                tabs_add(more, path, kids, n);
        }
    }
}

/* The summary: every scalar by its dotted path; arrays of objects are
 * set aside as tables. */
static void summary_rows(FILE *f, const json_t *o, const char *prefix, int depth, tabs *T)
{
    const char *k;
    json_t *v;
    char path[512];
    json_object_foreach((json_t *)o, k, v) {
        if (depth == 0 && (strcmp(k, "scenario") == 0 || strcmp(k, "schema_version") == 0))
            continue;
        snprintf(path, sizeof path, "%s%s%s", prefix, prefix[0] ? "." : "", k);
        if (objects_array(v)) {
            tabs_add(T, path, json_incref(v), json_array_size(v));
            continue;
        }
        if (json_is_object(v) && depth < 3 && json_object_size(v) > 0) {
            summary_rows(f, v, path, depth + 1, T);
            continue;
        }
        fputs("<tr><th>", f);
        esc(f, path);
        fputs("</th>", f);
        put_cell(f, k, prefix[0] ? strrchr(prefix, '.') ? strrchr(prefix, '.') + 1 : prefix : NULL, v);
        fputs("</tr>\n", f);
    }
}

static void put_tables(FILE *f, const json_t *doc, const char *whole)
{
    tabs T = {.n = 0};
    fputs("<section id=\"tables\">\n<h2>Tables</h2>\n<h3>summary</h3>\n<div class=\"scroll\"><table class=\"kv\">\n",
          f);
    summary_rows(f, doc, "", 0, &T);
    fputs("</table></div>\n", f);
    for (size_t i = 0; i < T.n; i++)
        put_table(f, T.t[i].path, T.t[i].rows, T.t[i].total, whole, &T);
    tabs_free(&T);
    fputs("</section>\n", f);
}

/* ---- the page ---- */

static const char *style =
    "body{font-family:sans-serif;margin:1.5em auto;max-width:1100px;padding:0 1em;color:#222;line-height:1.4}\n"
    "h1{font-size:1.5em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}h3{font-size:1.05em}\n"
    "nav a{margin-right:1em}.meta{color:#555}.note{color:#555;font-size:.9em}\n"
    "figure{margin:1.5em 0}figure img{max-width:100%;height:auto;border:1px solid #eee}\n"
    "figcaption{font-size:.9em;color:#444}\n"
    ".scroll{overflow-x:auto}table{border-collapse:collapse;font-size:.85em;margin:.5em 0}\n"
    "th,td{border:1px solid #ddd;padding:.2em .5em;text-align:left;vertical-align:top}\n"
    "thead th{background:#f3f3f3;position:sticky;top:0}td.n{text-align:right;font-variant-numeric:tabular-nums}\n"
    "table.kv th{background:#f8f8f8;font-weight:normal;font-family:monospace}code{font-size:.95em}\n"
    "td{white-space:nowrap}td.l{white-space:normal;min-width:22em;max-width:40em;overflow-wrap:anywhere}\n"
    "pre{background:#f6f6f6;border:1px solid #ddd;padding:.8em;overflow-x:auto;font-size:.85em}\n";

/* In the head, so that it sees every error: once the page has loaded,
 * how many images rendered and how many errors there were (scripts, or
 * resources that failed to load), on the body. */
static const char *script =
    "<script>\n"
    "(function () {\n"
    "  var errors = 0;\n"
    "  window.addEventListener(\"error\", function () { errors++; }, true);\n"
    "  window.addEventListener(\"load\", function () {\n"
    "    var imgs = document.getElementsByTagName(\"img\"), ok = 0;\n"
    "    for (var i = 0; i < imgs.length; i++)\n"
    "      if (imgs[i].complete && imgs[i].naturalWidth > 0)\n"
    "        ok++;\n"
    "    document.body.setAttribute(\"data-images-ok\", ok + \"/\" + imgs.length);\n"
    "    document.body.setAttribute(\"data-errors\", String(errors));\n"
    "  });\n"
    "})();\n"
    "</script>\n";

static void page_head(FILE *f, const char *title)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
          f);
    esc(f, title);
    fprintf(f, "</title>\n<style>\n%s</style>\n%s</head>\n<body data-images-ok=\"pending\">\n<h1>", style, script);
    esc(f, title);
    fputs("</h1>\n", f);
}

static void page_meta(FILE *f, const tc_html_opts *o, const json_t *scn)
{
    const json_t *who = json_object_get(scn, "topocc");
    const json_t *ver = json_object_get(who, "version"), *com = json_object_get(who, "commit");
    fputs("<p class=\"meta\">", f);
    if (o->origin)
        esc(f, o->origin);
    if (json_is_string(ver)) {
        fputs(o->origin ? "; " : "", f);
        fputs("written by topocc ", f);
        esc(f, json_string_value(ver));
        if (json_is_string(com)) {
            fputs(" (", f);
            esc(f, json_string_value(com));
            fputs(")", f);
        }
    }
    fputs("</p>\n<nav><a href=\"#plots\">Plots</a><a href=\"#tables\">Tables</a><a href=\"#scenario\">Scenario</a>"
          "<a href=\"#files\">Files</a></nav>\n",
          f);
}

static void put_plots(FILE *f, const tc_plot *p, size_t n, const int *w, const int *h)
{
    fputs("<section id=\"plots\">\n<h2>Plots</h2>\n", f);
    if (!n)
        fputs("<p class=\"note\">No plot for this result: its tables follow.</p>\n", f);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "<figure id=\"plot-%s\">\n<img src=\"%s.svg\" width=\"%d\" height=\"%d\" alt=\"", p[i].name,
                p[i].name, w[i], h[i]);
        esc(f, p[i].title);
        fputs("\">\n<figcaption>", f);
        esc(f, p[i].title);
        fprintf(f, ". Data: <a href=\"%s.csv\">%s.csv</a>", p[i].name, p[i].name);
        if (p[i].nseries > TC_PLOT_MAX_SERIES)
            fprintf(f, " (the first %d of %zu lines are drawn; the CSV has them all)", TC_PLOT_MAX_SERIES,
                    p[i].nseries);
        fputs(".</figcaption>\n</figure>\n", f);
    }
    fputs("</section>\n", f);
}

/* The scenario to show: what it embeds for replay (hardware profiles,
 * accuracy curves) said in one line, as the text header says it. */
static json_t *shown_scenario(const json_t *scn, const char *whole)
{
    json_t *c = json_deep_copy(scn);
    json_t *net = json_object_get(c, "network"), *cmp = json_object_get(c, "compress");
    json_t *prof = json_object_get(net, "profiles"), *acc = json_object_get(cmp, "accuracy");
    char note[600];
    if (json_is_object(prof) && json_object_size(prof)) {
        size_t l = (size_t)snprintf(note, sizeof note, "(embedded:");
        const char *k;
        json_t *v;
        json_object_foreach(prof, k, v) {
            if (l < sizeof note)
                l += (size_t)snprintf(note + l, sizeof note - l, " %.60s", k);
        }
        if (l < sizeof note)
            snprintf(note + l, sizeof note - l, "; whole in %s)", whole);
        json_object_set_new(net, "profiles", json_string(note));
    }
    if (json_is_object(acc)) {
        snprintf(note, sizeof note, "(embedded: %zu accuracy curves; whole in %s)",
                 json_array_size(json_object_get(acc, "curves")), whole);
        json_object_set_new(cmp, "accuracy", json_string(note));
    }
    return c;
}

static void put_scenario(FILE *f, const json_t *scn, const char *what, const char *whole)
{
    fputs("<section id=\"scenario\">\n<h2>Scenario</h2>\n<p class=\"note\">", f);
    esc(f, what);
    fputs("</p>\n<pre>", f);
    char *buf = NULL;
    size_t len = 0;
    json_t *shown = scn ? shown_scenario(scn, whole) : NULL;
    FILE *m = shown ? open_memstream(&buf, &len) : NULL;
    if (m) {
        tc_json_dumpf(shown, m);
        fclose(m);
        esc(f, buf);
    } else
        fputs("(none)", f);
    free(buf);
    json_decref(shown);
    fputs("</pre>\n</section>\n", f);
}

static void put_files(FILE *f, const tc_plot *p, size_t n, bool result)
{
    fputs("<section id=\"files\">\n<h2>Files</h2>\n<ul>\n", f);
    if (result)
        fputs("<li><a href=\"result.json\">result.json</a>: the whole result (topocc replay runs it again)</li>\n", f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "<li><a href=\"%s.svg\">%s.svg</a>, <a href=\"%s.csv\">%s.csv</a></li>\n", p[i].name, p[i].name,
                p[i].name, p[i].name);
    fputs("</ul>\n</section>\n", f);
}

/* Renders the plots, then opens index.html. */
static tc_status begin(const tc_html_opts *o, tc_plot *p, size_t n, int *w, int *h, tc_atomic_file *af,
                       tc_err *err)
{
    tc_status st = tc_html_prepare_dir(o->dir, err);
    if (st == TC_OK && n)
        st = tc_plot_check(err);
    for (size_t i = 0; i < n && st == TC_OK; i++)
        st = tc_plot_render(&p[i], o->dir, &w[i], &h[i], err);
    char path[4200];
    snprintf(path, sizeof path, "%.4000s/index.html", o->dir);
    if (st == TC_OK)
        st = tc_atomic_open(af, path, err);
    return st;
}

static tc_status finish(tc_atomic_file *af, tc_err *err)
{
    fputs("</body>\n</html>\n", af->f);
    return tc_atomic_commit(af, err);
}

tc_status tc_html_report_doc(const json_t *doc, const char *command, const tc_html_opts *o, tc_err *err)
{
    tc_plot plots[TC_HTML_MAX_PLOTS];
    int w[TC_HTML_MAX_PLOTS], h[TC_HTML_MAX_PLOTS];
    size_t n = tc_html_doc_plots(doc, command, plots, TC_HTML_MAX_PLOTS);
    tc_atomic_file af;
    tc_status st = begin(o, plots, n, w, h, &af, err);
    char path[4200];
    snprintf(path, sizeof path, "%.4000s/result.json", o->dir);
    if (st == TC_OK && (st = tc_json_write(doc, path, err)) != TC_OK)
        tc_atomic_abort(&af);
    if (st == TC_OK) {
        FILE *f = af.f;
        char title[128];
        snprintf(title, sizeof title, "topocc report: %s", command);
        page_head(f, title);
        const json_t *scn = json_object_get(doc, "scenario");
        page_meta(f, o, scn);
        put_plots(f, plots, n, w, h);
        put_tables(f, doc, "result.json");
        put_scenario(f, scn,
                     "The scenario that produced this result, canonical (topocc replay result.json runs it again):",
                     "result.json");
        put_files(f, plots, n, true);
        st = finish(&af, err);
    }
    for (size_t i = 0; i < n; i++)
        tc_plot_free(&plots[i]);
    return st;
}

/* The points as rows: number, each axis's value, seed, elapsed time, the
 * headline fields that are one number, the error of a failed point. */
static json_t *point_rows(const tc_html_sweep *sw)
{
    json_t *rows = json_array();
    const json_t *axes = json_object_get(sw->header, "axes");
    const char *command = json_string_value(json_object_get(json_object_get(sw->header, "scenario"), "command"));
    for (size_t i = 0; i < sw->npoints && i < MAX_ROWS; i++) {
        const json_t *pt = sw->points[i], *vals = json_object_get(pt, "values"), *res = json_object_get(pt, "result");
        json_t *r = json_object();
        json_object_set(r, "point", json_object_get(pt, "point"));
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)axes, k, v) json_object_set(r, k, json_object_get(vals, k));
        json_object_set(r, "seed", json_object_get(pt, "seed"));
        json_object_set(r, "elapsed_s", json_object_get(pt, "elapsed_s"));
        for (const char *const *hf = tc_html_headline_fields(command ? command : ""); *hf; hf++)
            if (!strchr(*hf, '[') && json_is_object(res)) {
                const json_t *x = res;
                char seg[128];
                for (const char *p = *hf; *p && x;) {
                    size_t l = strcspn(p, ".");
                    snprintf(seg, sizeof seg, "%.*s", (int)l, p);
                    x = json_object_get(x, seg);
                    p += l + (p[l] == '.');
                }
                if (json_is_number(x))
                    json_object_set(r, *hf, (json_t *)x);
            }
        if (json_object_get(pt, "error"))
            json_object_set(r, "error", json_object_get(pt, "error"));
        json_array_append_new(rows, r);
    }
    return rows;
}

tc_status tc_html_report_sweep(const tc_html_sweep *sw, const tc_html_opts *o, tc_err *err)
{
    tc_plot plots[TC_HTML_MAX_PLOTS];
    int w[TC_HTML_MAX_PLOTS], h[TC_HTML_MAX_PLOTS];
    size_t n = 0;
    tc_status st = tc_html_sweep_plots(sw, o->x, o->y, plots, TC_HTML_MAX_PLOTS, &n, err);
    if (st)
        return st;
    tc_atomic_file af;
    if ((st = begin(o, plots, n, w, h, &af, err)) == TC_OK) {
        FILE *f = af.f;
        const json_t *hd = sw->header, *scn = json_object_get(hd, "scenario");
        char title[128];
        snprintf(title, sizeof title, "topocc report: sweep of %s",
                 json_string_value(json_object_get(scn, "command")));
        page_head(f, title);
        page_meta(f, o, json_object_get(hd, "topocc") ? hd : scn);
        fprintf(f, "<p>%zu of %lld points finished", sw->npoints - sw->failed,
                (long long)json_integer_value(json_object_get(hd, "points")));
        if (sw->failed)
            fprintf(f, ", %zu failed", sw->failed);
        fputs("; mode ", f);
        put_value(f, "mode", NULL, json_object_get(hd, "mode"));
        fputs(", seeds ", f);
        put_value(f, "seeds", NULL, json_object_get(hd, "seeds"));
        fputs(" (seed ", f);
        put_value(f, "seed", NULL, json_object_get(hd, "seed"));
        fputs("), hash ", f);
        put_value(f, "hash", NULL, json_object_get(hd, "hash"));
        fputs(".", f);
        if (sw->duplicates)
            fprintf(f, " %zu further line%s of points already read (each point's first result is used).",
                    sw->duplicates, sw->duplicates == 1 ? "" : "s");
        if (sw->torn_line)
            fprintf(f, " The last line (%zu) was incomplete and is left out.", sw->torn_line);
        fputs("</p>\n<h3>axes</h3>\n<div class=\"scroll\"><table class=\"kv\">\n", f);
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)json_object_get(hd, "axes"), k, v) {
            fputs("<tr><th>", f);
            esc(f, k);
            fputs("</th>", f);
            put_cell(f, k, NULL, v);
            fputs("</tr>\n", f);
        }
        fputs("</table></div>\n", f);
        put_plots(f, plots, n, w, h);
        fputs("<section id=\"tables\">\n<h2>Tables</h2>\n", f);
        json_t *rows = point_rows(sw);
        tabs T = {.n = 0};
        put_table(f, "points", rows, sw->npoints, "the results file", &T);
        tabs_free(&T);
        json_decref(rows);
        fputs("</section>\n", f);
        put_scenario(f, scn, "The sweep's base scenario (each point sets its axes' values in it):",
                     "the results file");
        put_files(f, plots, n, false);
        st = finish(&af, err);
    }
    for (size_t i = 0; i < n; i++)
        tc_plot_free(&plots[i]);
    return st;
}
