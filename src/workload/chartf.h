/*
 * chartf.h - the internals of the chartf proxy: the fortunes corpus as
 * samples of symbols (corpus.c) and the transformer's entry points that the
 * tests use besides its tc_proxy_ops (chartf.c).
 */
#ifndef TOPOCC_CHARTF_H
#define TOPOCC_CHARTF_H

#include "workload/proxy.h"

/* The model's defaults (tc_train_opts width, layers, heads, context 0). */
#define TC_CHARTF_WIDTH 32
#define TC_CHARTF_LAYERS 2
#define TC_CHARTF_HEADS 2
#define TC_CHARTF_CONTEXT 32

/* The alphabet: printable ASCII 32..126 are symbols 0..94, newline is 95,
 * every other byte (tabs, backspaces of overstruck text, bytes of UTF-8
 * sequences) is the one symbol 96. */
#define TC_CORPUS_VOCAB 97u
#define TC_CORPUS_NEWLINE 95u
#define TC_CORPUS_OTHER 96u

/* Where the Debian package fortunes installs its files. */
extern const char tc_fortunes_dir[];

/* One split as samples: sample i has the inputs x[i*context .. +context)
 * and, at every position, the target y[i*context .. +context) (the next
 * symbol of the text, or with shuffled labels a permuted one). */
typedef struct tc_corpus_split {
    uint32_t n;        /* samples */
    uint64_t len;      /* symbols of the split's text */
    uint8_t *x, *y;    /* n * context each */
} tc_corpus_split;

typedef struct tc_corpus {
    uint32_t context;
    uint32_t files, fortunes;  /* fortune files read, fortunes in them */
    uint64_t bytes;            /* bytes of those files */
    tc_corpus_split train, test;
} tc_corpus;

/* The symbol of a byte and a printable character for a symbol ('?' for
 * TC_CORPUS_OTHER). */
uint8_t tc_corpus_symbol(uint8_t byte);
char tc_corpus_char(uint8_t sym);

/* Reads the fortune files of dir: every regular file whose name does not
 * start with '.' or end in ".dat" or ".u8", in sorted name order, split
 * into fortunes at lines holding only "%". Fortune k (counted over all the
 * files) goes to the test text if k % 10 == 9, else to the training text,
 * each followed by the separator line "%\n". Samples are windows of
 * context + 1 symbols at stride context; train_max / test_max keep the
 * first samples (0: all); shuffled permutes the training targets (of the
 * samples kept) with a fixed seed. TC_EINVAL for a missing directory or one
 * without fortune files ("install the Debian package fortunes"), too
 * little text for one sample of each split, or a subset larger than the
 * split. */
tc_status tc_corpus_load(const char *dir, uint32_t context, uint32_t train_max, uint32_t test_max, bool shuffled,
                         tc_corpus *c, tc_err *err);
void tc_corpus_free(tc_corpus *c);
/* The frequency of the most common target symbol of the split. */
double tc_corpus_majority(const tc_corpus_split *s, uint32_t context);

/* tc_proxy_ops load / unload: the corpus of o->data_dir (NULL or "": the
 * package's) at o->context; d->impl points to a tc_corpus. */
tc_status tc_fortunes_load(const tc_train_opts *o, tc_proxy_data *d, tc_err *err);
void tc_fortunes_unload(tc_proxy_data *d);

/* The logits of B samples of m (inputs x[0 .. B*context)) into
 * logits[0 .. B*context*TC_CORPUS_VOCAB), position by position. */
void tc_chartf_logits(tc_proxy *m, const uint8_t *x, uint32_t B, float *logits);
/* The gradient of the mean cross-entropy of B samples given as symbols
 * (inputs x, targets y, B*context each) into grad; returns that loss. The
 * proxy's grad is this on the corpus's training samples. */
double tc_chartf_grad(tc_proxy *m, const uint8_t *x, const uint8_t *y, uint32_t B, float *grad);

#endif
