/*
 * corpus.c - the fortunes corpus of the chartf proxy (chartf.h).
 *
 * Why this corpus: the Debian package fortunes (source fortune-mod, in
 * main, with fortunes-min that it depends on) installs the fortune cookie
 * files under /usr/share/games/fortunes: English prose, quotations, short
 * poems and dialogue, plain text, about 2.5 MB, a file set that has changed
 * little for decades, so a character-level model trained on it sees natural
 * language and the data stay the same across Debian releases. As installed
 * by fortunes 1:1.99.1-7.3 (Debian bookworm) the files read here are 43
 * files, 2,576,674 bytes, 15,217 fortunes; the training text is 2,314,000
 * symbols, the test text 262,676 (at context 64: 36,156 training and 4,104
 * test samples; the most common test target, the space, is 15.7% of them).
 * Only the regular files of the directory itself are read: not the .dat
 * indexes, not the .u8 links, not the offensive fortunes (the off/
 * directory of fortunes-off).
 *
 * Each fortune is kept as its lines followed by the separator line "%"
 * (the model sees where fortunes end), the bytes mapped to 97 symbols.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "workload/chartf.h"

const char tc_fortunes_dir[] = "/usr/share/games/fortunes";

#define CORPUS_TEST_EVERY 10u  /* fortune k is a test fortune if k % 10 == 9 */

uint8_t tc_corpus_symbol(uint8_t byte)
{
    if (byte >= 32 && byte <= 126)
        return (uint8_t)(byte - 32);
    return byte == '\n' ? TC_CORPUS_NEWLINE : TC_CORPUS_OTHER;
}

char tc_corpus_char(uint8_t sym)
{
    if (sym < 95)
        return (char)(sym + 32);
    return sym == TC_CORPUS_NEWLINE ? '\n' : '?';
}

/* ---- the files ---------------------------------------------------------- */

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), t = strlen(tail);
    return n >= t && strcmp(s + n - t, tail) == 0;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void free_names(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

static bool is_fortune_file(const char *dir, const char *name)
{
    if (name[0] == '.' || ends_with(name, ".dat") || ends_with(name, ".u8"))
        return false;
    char path[4096];
    struct stat st;
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path)
        return false;
    return lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static tc_status not_installed(const char *dir, tc_err *err)
{
    return tc_fail(err, TC_EINVAL, "the fortunes corpus is not installed in %s: install the Debian package fortunes",
                   dir);
}

/* Appends a copy of name to the list v of *k names (grown by doubling). */
static bool push_name(char ***v, size_t *k, const char *name)
{
    if ((*k & (*k - 1)) == 0) { /* 0, 1, 2, 4, ...: full */
        char **w = realloc(*v, (*k ? 2 * *k : 1) * sizeof *w);
        if (!w)
            return false;
        *v = w;
    }
    return ((*v)[*k] = strdup(name)) && ++*k;
}

/* The fortune files of dir, sorted: *names (n of them) to free with free_names. */
static tc_status list_files(const char *dir, char ***names, size_t *n, tc_err *err)
{
    DIR *dp = opendir(dir);
    if (!dp)
        return not_installed(dir, err);
    char **v = NULL;
    size_t k = 0;
    bool ok = true;
    struct dirent *e;
    while (ok && (e = readdir(dp)))
        ok = !is_fortune_file(dir, e->d_name) || push_name(&v, &k, e->d_name);
    closedir(dp);
    if (!ok || k == 0) {
        free_names(v, k);
        return ok ? not_installed(dir, err) : tc_fail(err, TC_EINTERNAL, "out of memory for the files of %s", dir);
    }
    qsort(v, k, sizeof *v, cmp_names);
    *names = v;
    *n = k;
    return TC_OK;
}

/* ---- the texts ---------------------------------------------------------- */

typedef struct text {
    uint8_t *s;
    uint64_t len, cap;
} text;

/* Room for n more symbols. */
static bool text_grow(text *t, uint64_t n)
{
    if (t->len + n <= t->cap)
        return true;
    uint64_t cap = t->cap ? t->cap : 65536;
    while (cap < t->len + n)
        cap *= 2;
    uint8_t *s = realloc(t->s, cap);
    if (!s)
        return false;
    t->s = s;
    t->cap = cap;
    return true;
}

/* Appends the n bytes p as symbols. */
static bool text_put(text *t, const char *p, size_t n)
{
    if (!text_grow(t, n))
        return false;
    for (size_t i = 0; i < n; i++)
        t->s[t->len + i] = tc_corpus_symbol((uint8_t)p[i]);
    t->len += n;
    return true;
}

/* The state of the split while the files are read. */
typedef struct reader {
    text train, test;
    uint32_t fortunes;   /* fortunes completed */
    text cur;            /* the fortune being read, as symbols */
} reader;

/* Ends the current fortune (if it has text): appended to its split with
 * the separator line. */
static bool end_fortune(reader *r)
{
    if (r->cur.len == 0)
        return true;
    text *to = r->fortunes % CORPUS_TEST_EVERY == CORPUS_TEST_EVERY - 1 ? &r->test : &r->train;
    if (!text_grow(to, r->cur.len))
        return false;
    memcpy(to->s + to->len, r->cur.s, r->cur.len);
    to->len += r->cur.len;
    r->cur.len = 0;
    r->fortunes++;
    return text_put(to, "%\n", 2);
}

/* One line (without its newline) of a fortune file. */
static bool add_line(reader *r, const char *line, size_t n)
{
    if (n == 1 && line[0] == '%')
        return end_fortune(r);
    return text_put(&r->cur, line, n) && text_put(&r->cur, "\n", 1);
}

/* Reads the fortune file path into r; its size into *bytes. */
static tc_status read_file(reader *r, const char *path, uint64_t *bytes, tc_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return tc_fail(err, TC_EINVAL, "cannot read the fortune file %s: %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    bool ok = true;
    while (ok && (n = getline(&line, &cap, f)) > 0) {
        *bytes += (uint64_t)n;
        ok = add_line(r, line, (size_t)n - (line[n - 1] == '\n'));
    }
    bool bad = ferror(f);
    if (ok && !bad && !feof(f))
        ok = false; /* getline out of memory, not at the end */
    free(line);
    fclose(f);
    if (ok && !end_fortune(r))
        ok = false;
    if (!ok)
        return tc_fail(err, TC_EINTERNAL, "out of memory for the fortunes corpus");
    return bad ? tc_fail(err, TC_EINVAL, "cannot read the fortune file %s", path) : TC_OK;
}

/* ---- samples ------------------------------------------------------------ */

/* The split's samples from its text t (kept: the first max, 0: all). */
static tc_status make_split(const text *t, uint32_t context, uint32_t max, const char *what, tc_corpus_split *s,
                            tc_err *err)
{
    uint64_t n = t->len > context ? (t->len - 1) / context : 0;
    s->len = t->len;
    if (max > n)
        return tc_fail(err, TC_EINVAL, "subset of %u %s samples asked, the fortunes corpus has %llu at context %u",
                       max, what, (unsigned long long)n, context);
    s->n = max ? max : (uint32_t)(n < UINT32_MAX ? n : UINT32_MAX);
    size_t k = (size_t)s->n * context;
    s->x = malloc(k ? k : 1);
    s->y = malloc(k ? k : 1);
    if (!s->x || !s->y)
        return tc_fail(err, TC_EINTERNAL, "out of memory for %u %s samples", s->n, what);
    memcpy(s->x, t->s, k);
    memcpy(s->y, t->s + 1, k);
    return TC_OK;
}

/* A fixed permutation of the training targets (Fisher-Yates on a counter
 * stream): the symbols keep their frequencies and lose their contexts. */
static void shuffle_targets(tc_corpus_split *s, uint32_t context)
{
    uint64_t n = (uint64_t)s->n * context;
    for (uint64_t i = n - 1; n > 1 && i > 0; i--) {
        uint64_t r = tc_mix64(0x666f7274756e6573ULL + i);
        uint64_t j = r % (i + 1); /* bias below 2^-40 */
        uint8_t t = s->y[i];
        s->y[i] = s->y[j];
        s->y[j] = t;
    }
}

double tc_corpus_majority(const tc_corpus_split *s, uint32_t context)
{
    uint64_t count[256] = {0}, best = 0, n = (uint64_t)s->n * context;
    for (uint64_t i = 0; i < n; i++)
        count[s->y[i]]++;
    for (int c = 0; c < 256; c++)
        best = count[c] > best ? count[c] : best;
    return n ? (double)best / (double)n : 0.0;
}

void tc_corpus_free(tc_corpus *c)
{
    free(c->train.x);
    free(c->train.y);
    free(c->test.x);
    free(c->test.y);
    memset(c, 0, sizeof *c);
}

/* Reads every fortune file of dir into r. */
static tc_status read_dir(const char *dir, reader *r, tc_corpus *c, tc_err *err)
{
    char **names = NULL;
    size_t n = 0;
    tc_status st = list_files(dir, &names, &n, err);
    for (size_t i = 0; st == TC_OK && i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        st = read_file(r, path, &c->bytes, err);
    }
    if (names)
        free_names(names, n);
    c->files = (uint32_t)n;
    c->fortunes = r->fortunes;
    return st;
}

tc_status tc_corpus_load(const char *dir, uint32_t context, uint32_t train_max, uint32_t test_max, bool shuffled,
                         tc_corpus *c, tc_err *err)
{
    memset(c, 0, sizeof *c);
    c->context = context;
    if (context == 0)
        return tc_fail(err, TC_EINVAL, "context 0: expected at least 1 character");
    reader r = {0};
    tc_status st = read_dir(dir, &r, c, err);
    if (st == TC_OK && (r.train.len <= context || r.test.len <= context))
        st = tc_fail(err, TC_EINVAL, "the fortunes corpus in %s has %llu training and %llu test characters: too "
                     "few for a sample of %u", dir, (unsigned long long)r.train.len, (unsigned long long)r.test.len,
                     context + 1);
    if (st == TC_OK)
        st = make_split(&r.train, context, train_max, "training", &c->train, err);
    if (st == TC_OK)
        st = make_split(&r.test, context, test_max, "test", &c->test, err);
    free(r.train.s);
    free(r.test.s);
    free(r.cur.s);
    if (st) {
        tc_corpus_free(c);
        return st;
    }
    c->context = context;
    if (shuffled)
        shuffle_targets(&c->train, context);
    return TC_OK;
}

/* ---- the proxy's data set ----------------------------------------------- */

tc_status tc_fortunes_load(const tc_train_opts *o, tc_proxy_data *d, tc_err *err)
{
    tc_corpus *c = calloc(1, sizeof *c);
    if (!c)
        return tc_fail(err, TC_EINTERNAL, "out of memory for the data set");
    const char *dir = o->data_dir && o->data_dir[0] ? o->data_dir : tc_fortunes_dir;
    uint32_t context = o->context ? o->context : TC_CHARTF_CONTEXT;
    tc_status st = tc_corpus_load(dir, context, o->train_subset, o->test_subset, o->shuffled_labels, c, err);
    if (st) {
        free(c);
        return st;
    }
    d->n_train = c->train.n;
    d->n_test = c->test.n;
    d->chance = tc_corpus_majority(&c->test, context);
    d->impl = c;
    return TC_OK;
}

void tc_fortunes_unload(tc_proxy_data *d)
{
    tc_corpus *c = d->impl;
    if (c) {
        tc_corpus_free(c);
        free(c);
    }
    d->impl = NULL;
}
