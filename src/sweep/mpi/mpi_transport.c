/*
 * mpi_transport.c - the sweep's transport over MPI (topocc/sweep.h),
 * built as a module of its own (libtopocc_mpi.so) so that only a sweep
 * started by an MPI launcher loads MPI.
 *
 * The shared counter is one 64-bit integer in a window on rank 0, taken
 * with MPI_Fetch_and_op (MPI_SUM of 1) under a passive-target lock_all
 * epoch: a rank that finishes a point takes the next without any rank's
 * help (self-scheduling). Lines go to rank 0 by MPI_Isend, so a worker
 * never waits for rank 0 to finish a point of its own; the buffers are
 * freed as their sends complete. A zero-length message of its own tag
 * says a worker is done; MPI keeps messages between two ranks in order,
 * so it comes after that worker's lines.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include "sweep/sweep_int.h"

#define TAG_LINE 1
#define TAG_DONE 2

typedef struct mctx {
    MPI_Win win;
    int64_t *counter;
    MPI_Request *req;
    char **buf;
    size_t n, cap;
} mctx;

static int64_t m_next(void *ctx)
{
    mctx *c = ctx;
    int64_t one = 1, got = -1;
    if (MPI_Fetch_and_op(&one, &got, MPI_INT64_T, 0, 0, MPI_SUM, c->win) != MPI_SUCCESS ||
        MPI_Win_flush(0, c->win) != MPI_SUCCESS)
        return -1;
    return got;
}

/* Frees the buffers of completed sends. */
static void reap(mctx *c)
{
    size_t k = 0;
    for (size_t i = 0; i < c->n; i++) {
        int done = 0;
        MPI_Test(&c->req[i], &done, MPI_STATUS_IGNORE);
        if (done) {
            free(c->buf[i]);
        } else {
            c->req[k] = c->req[i];
            c->buf[k++] = c->buf[i];
        }
    }
    c->n = k;
}

static int m_send(void *ctx, char *line, size_t len)
{
    mctx *c = ctx;
    reap(c);
    if (len > INT_MAX) {
        free(line);
        return -1;
    }
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 16;
        MPI_Request *r = realloc(c->req, cap * sizeof *r);
        if (r)
            c->req = r;
        char **b = realloc(c->buf, cap * sizeof *b);
        if (b)
            c->buf = b;
        if (!r || !b) {
            free(line);
            return -1;
        }
        c->cap = cap;
    }
    if (MPI_Isend(line, (int)len, MPI_CHAR, 0, TAG_LINE, MPI_COMM_WORLD, &c->req[c->n]) != MPI_SUCCESS) {
        free(line);
        return -1;
    }
    c->buf[c->n++] = line;
    return 0;
}

static int m_recv(void *ctx, bool wait, char **line, size_t *len, bool *done)
{
    (void)ctx;
    *line = NULL;
    *len = 0;
    *done = false;
    MPI_Status s;
    int flag = 1;
    if (wait ? MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &s)
             : MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &s))
        return -1;
    if (!flag)
        return 0;
    int n = 0;
    MPI_Get_count(&s, MPI_CHAR, &n);
    char *b = malloc((size_t)n + 1);
    if (!b)
        return -1;
    if (MPI_Recv(b, n, MPI_CHAR, s.MPI_SOURCE, s.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
        free(b);
        return -1;
    }
    if (s.MPI_TAG == TAG_DONE) {
        free(b);
        *done = true;
        return 0;
    }
    b[n] = '\0';
    *line = b;
    *len = (size_t)n;
    return 0;
}

static int m_done(void *ctx)
{
    (void)ctx;
    return MPI_Send(NULL, 0, MPI_CHAR, 0, TAG_DONE, MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -1;
}

static int m_bcast(void *ctx, void *buf, size_t len)
{
    (void)ctx;
    char *p = buf;
    while (len > 0) {
        int n = len > (1u << 30) ? 1 << 30 : (int)len;
        if (MPI_Bcast(p, n, MPI_BYTE, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int m_min_u64(void *ctx, uint64_t *v)
{
    (void)ctx;
    return MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -1;
}

static void m_finish(void *ctx)
{
    mctx *c = ctx;
    for (size_t i = 0; i < c->n; i++) {
        MPI_Wait(&c->req[i], MPI_STATUS_IGNORE);
        free(c->buf[i]);
    }
    free(c->req);
    free(c->buf);
    MPI_Win_unlock_all(c->win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&c->win);
    MPI_Finalize();
    free(c);
}

static void m_abort(void *ctx, int code)
{
    (void)ctx;
    MPI_Abort(MPI_COMM_WORLD, code);
}

int tc_sweep_mpi_module_open(int *argc, char ***argv, tc_sweep_transport *out, char *msg, size_t len);

int tc_sweep_mpi_module_open(int *argc, char ***argv, tc_sweep_transport *out, char *msg, size_t len)
{
    if (MPI_Init(argc, argv) != MPI_SUCCESS) {
        snprintf(msg, len, "MPI_Init failed");
        return -1;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    mctx *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(msg, len, "out of memory");
        return -1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &out->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &out->size);
    MPI_Aint bytes = out->rank == 0 ? (MPI_Aint)sizeof(int64_t) : 0;
    if (MPI_Win_allocate(bytes, sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &c->counter, &c->win) !=
        MPI_SUCCESS) {
        snprintf(msg, len, "MPI_Win_allocate failed");
        return -1;
    }
    if (out->rank == 0) {
        int64_t zero = 0;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, c->win);
        MPI_Put(&zero, 1, MPI_INT64_T, 0, 0, 1, MPI_INT64_T, c->win);
        MPI_Win_unlock(0, c->win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, c->win);
    out->ctx = c;
    out->next = m_next;
    out->send = m_send;
    out->recv = m_recv;
    out->done = m_done;
    out->bcast = m_bcast;
    out->min_u64 = m_min_u64;
    out->finish = m_finish;
    out->abort = m_abort;
    return 0;
}
