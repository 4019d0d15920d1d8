/* spec.c - "kind:key=val,key=val" strings, the shape of every spec. */
#include <stdio.h>
#include <string.h>
#include "topocc/core.h"

bool tc_list_has_empty(const char *s)
{
    return *s && (*s == ',' || strstr(s, ",,") || s[strlen(s) - 1] == ',');
}

tc_status tc_spec_parse(const char *s, tc_spec *sp, tc_err *err)
{
    memset(sp, 0, sizeof *sp);
    if (!s || !*s)
        return tc_fail(err, TC_EINVAL, "empty spec: expected KIND:key=value,... e.g. torus:dims=8x8");
    if (strlen(s) >= sizeof sp->storage)
        return tc_fail(err, TC_EINVAL, "spec too long (%zu characters, at most %zu)", strlen(s), sizeof sp->storage - 1);
    strcpy(sp->storage, s);
    char *colon = strchr(sp->storage, ':');
    sp->kind = sp->storage;
    if (!colon)
        return TC_OK;
    *colon = '\0';
    char *rest = colon + 1;
    if (!*rest)
        return tc_fail(err, TC_EINVAL, "malformed spec '%s': nothing after ':' (expected key=value,...)", s);
    /* an empty item anywhere (strtok_r would skip it): leading, doubled
     * or trailing comma */
    if (tc_list_has_empty(rest))
        return tc_fail(err, TC_EINVAL, "malformed spec '%s': empty key=value between commas", s);
    char *save = NULL;
    for (char *tok = strtok_r(rest, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok || !eq[1])
            return tc_fail(err, TC_EINVAL, "malformed spec '%s': '%s' is not key=value", s, tok);
        if (sp->nkv >= TC_SPEC_MAX_KV)
            return tc_fail(err, TC_EINVAL, "malformed spec '%s': more than %d keys", s, TC_SPEC_MAX_KV);
        *eq = '\0';
        for (int i = 0; i < sp->nkv; i++)
            if (strcmp(sp->key[i], tok) == 0)
                return tc_fail(err, TC_EINVAL, "malformed spec '%s': key '%s' given twice", s, tok);
        sp->key[sp->nkv] = tok;
        sp->val[sp->nkv] = eq + 1;
        sp->nkv++;
    }
    return TC_OK;
}

const char *tc_spec_get(tc_spec *sp, const char *key)
{
    for (int i = 0; i < sp->nkv; i++)
        if (strcmp(sp->key[i], key) == 0) {
            sp->used[i] = true;
            return sp->val[i];
        }
    return NULL;
}

tc_status tc_spec_check_unused(const tc_spec *sp, const char *what, const char *accepted, tc_err *err)
{
    for (int i = 0; i < sp->nkv; i++)
        if (!sp->used[i])
            return tc_fail(err, TC_EINVAL, "unknown key '%s' in %s spec: accepted keys are %s", sp->key[i], what, accepted);
    return TC_OK;
}

size_t tc_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63)
        return 64;
    size_t d[64][64];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            size_t c = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            size_t x = d[i - 1][j] + 1, y = d[i][j - 1] + 1;
            d[i][j] = c < x ? (c < y ? c : y) : (x < y ? x : y);
        }
    return d[la][lb];
}

bool tc_utf8_valid(const char *s, size_t *bad)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (u[i]) {
        unsigned c = u[i];
        size_t n = c < 0x80 ? 0 : (c & 0xe0) == 0xc0 ? 1 : (c & 0xf0) == 0xe0 ? 2 : (c & 0xf8) == 0xf0 ? 3 : 4;
        if (n == 4)
            goto fail;
        unsigned cp = n == 0 ? c : c & (0x3fu >> n);
        for (size_t k = 1; k <= n; k++) {
            if ((u[i + k] & 0xc0) != 0x80)
                goto fail;
            cp = cp << 6 | (u[i + k] & 0x3fu);
        }
        static const unsigned least[] = {0, 0x80, 0x800, 0x10000};
        if (cp < least[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            goto fail;
        i += n + 1;
    }
    return true;
fail:
    if (bad)
        *bad = i;
    return false;
}
