/* shmem_bench_rma: `shoal-bench shmem`, the OpenSHMEM benchmark of
 * shmem_bench.c with the host MPI's own MPI-3 RMA beside it: MPI_Put /
 * MPI_Get + MPI_Win_flush on an MPI_Win_allocate window in lock_all, the
 * atomics as MPI_Fetch_and_op, MPI_Accumulate and MPI_Compare_and_swap.
 *
 *   mpirun -np 2 shoal-bench shmem [-m MIN:MAX] [--batches B]
 *
 * Ends OpenSHMEM; the caller ends MPI. Calls: PMPI (the host MPI, past
 * shoal), shmem_bench.c. */
#include <shmem.h>
#include <stdio.h>
#include <string.h>

#include "bench_run.h"
#include "shmem_bench.h"

typedef struct rma_path {
    MPI_Win win;
    char *base; /* a put area, a get area (the pattern of salt 2), a counter */
    size_t max_bytes;
} rma_path;

static double rma_batch(void *state, shmem_bench_op op, size_t bytes, int iterations, char *local)
{
    rma_path *r = state;
    int me;
    PMPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (me != 0)
        return 0;
    MPI_Aint get_at = (MPI_Aint)r->max_bytes, counter_at = (MPI_Aint)(2 * r->max_bytes);
    double start = 0;
    int warmup = iterations / 10 + 1, n = (int)bytes;
    for (int i = -warmup; i < iterations; i++) {
        if (i == 0)
            start = shmem_bench_now_us();
        long one = 1, zero = 0, old;
        switch (op) {
        case SHMEM_BENCH_PUT: PMPI_Put(local, n, MPI_BYTE, 1, 0, n, MPI_BYTE, r->win); break;
        case SHMEM_BENCH_GET: PMPI_Get(local, n, MPI_BYTE, 1, get_at, n, MPI_BYTE, r->win); break;
        case SHMEM_BENCH_PUT_RATE:
            for (int k = 0; k < SHMEM_BENCH_MR_WINDOW; k++)
                PMPI_Put(local, n, MPI_BYTE, 1, 0, n, MPI_BYTE, r->win);
            break;
        case SHMEM_BENCH_PUT_BLOCKING_RATE: /* the origin buffer reusable after each */
            for (int k = 0; k < SHMEM_BENCH_MR_WINDOW; k++) {
                PMPI_Put(local, n, MPI_BYTE, 1, 0, n, MPI_BYTE, r->win);
                PMPI_Win_flush_local(1, r->win);
            }
            break;
        case SHMEM_BENCH_FETCH_ADD: PMPI_Fetch_and_op(&one, &old, MPI_LONG, 1, counter_at, MPI_SUM, r->win); break;
        case SHMEM_BENCH_ADD: PMPI_Accumulate(&one, 1, MPI_LONG, 1, counter_at, 1, MPI_LONG, MPI_SUM, r->win); break;
        case SHMEM_BENCH_CSWAP: PMPI_Compare_and_swap(&zero, &zero, &old, MPI_LONG, 1, counter_at, r->win); break;
        case SHMEM_BENCH_SWAP: PMPI_Fetch_and_op(&zero, &old, MPI_LONG, 1, counter_at, MPI_REPLACE, r->win); break;
        default: PMPI_Fetch_and_op(NULL, &old, MPI_LONG, 1, counter_at, MPI_NO_OP, r->win); break;
        }
        PMPI_Win_flush(1, r->win);
    }
    double per_op = (shmem_bench_now_us() - start) / iterations;
    return shmem_bench_is_rate(op) ? per_op / SHMEM_BENCH_MR_WINDOW : per_op;
}

static bool rma_check(void *state, shmem_bench_op op, size_t bytes, const char *local, int me)
{
    rma_path *r = state;
    /* The origin flushed; after the barrier the target syncs its public
     * and private copies (MPI's separate memory model needs it). */
    PMPI_Barrier(MPI_COMM_WORLD);
    PMPI_Win_sync(r->win);
    if ((op == SHMEM_BENCH_PUT || shmem_bench_is_rate(op)) && me == 1)
        return shmem_bench_holds(r->base, bytes, 1);
    if (op == SHMEM_BENCH_GET && me == 0)
        return shmem_bench_holds(local, bytes, 2);
    return true;
}

int bench_shmem_run(struct bench_context *ctx, int argc, char **argv)
{
    shmem_bench_options opt = {.min = 8,
                               .max = (size_t)1 << 20,
                               .batches = 5,
                               .title = "shoal-bench shmem",
                               .core_latency_us = ctx->facts.core_latency_us};
    if (!shmem_bench_parse(argc, argv, 2, &opt)) {
        if (ctx->rank == 0)
            fprintf(stderr, "usage: shoal-bench shmem [-m MIN:MAX] [--batches B]\n");
        return 2;
    }
    shmem_init();
    rma_path r = {.max_bytes = opt.max};
    MPI_Aint window_bytes = (MPI_Aint)(2 * opt.max + sizeof(long));
    PMPI_Win_allocate(window_bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &r.base, &r.win);
    memset(r.base, 0, (size_t)window_bytes);
    shmem_bench_fill(r.base + opt.max, opt.max, 2);
    PMPI_Win_lock_all(MPI_MODE_NOCHECK, r.win);
    PMPI_Barrier(MPI_COMM_WORLD);
    shmem_bench_peer peer = {.column = "mpi_rma_us",
                             .what = "the host MPI's MPI-3 RMA (MPI_Put/MPI_Get + MPI_Win_flush)",
                             .state = &r,
                             .batch = rma_batch,
                             .check = rma_check};
    int status = shmem_bench_run(&opt, &peer);
    PMPI_Win_unlock_all(r.win);
    PMPI_Win_free(&r.win);
    shmem_finalize();
    return status;
}
