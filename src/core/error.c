/* error.c - errors as values: tc_fail formats the one-line message. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "topocc/core.h"

/* One line whatever it quotes: a control character of a name or a value
 * (a newline in a file name) is shown as '?'. */
static void one_line(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            *s = '?';
}

tc_status tc_fail(tc_err *err, tc_status code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        one_line(err->msg);
    }
    return code;
}

void *tc_calloc(size_t n, size_t size)
{
    if (n == 0 || size == 0)
        n = size = 1;
    return calloc(n, size);
}

static tc_note_fn note_fn = tc_note_stderr;
static void *note_ud;

void tc_set_note_handler(tc_note_fn fn, void *ud)
{
    note_fn = fn;
    note_ud = ud;
}

void tc_note_stderr(void *ud, const char *text)
{
    (void)ud;
    fprintf(stderr, "topocc: note: %s\n", text);
}

void tc_note(const char *fmt, ...)
{
    if (!note_fn)
        return;
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    one_line(text);
    note_fn(note_ud, text);
}
