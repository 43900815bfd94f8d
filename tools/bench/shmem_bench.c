/* shoal-bench shmem: OpenSHMEM one-sided figures with the OSU methodology
 * (osu_oshm_put, _get, _put_mr, _atomics), beside the same operations
 * through the host MPI's own MPI-3 RMA (MPI_Put/MPI_Get + MPI_Win_flush on
 * an MPI_Win_allocate window, lock_all), interleaved batch by batch in one
 * run. PE 0 is the origin, PE 1 the target (which calls nothing meanwhile:
 * a put completes without it). Every figure's batch is checked: the target's
 * bytes (put) or the origin's (get) must be the pattern sent.
 *
 *   mpirun -np 2 shoal-bench shmem [-m MIN:MAX] [--batches B]
 *
 * Printed per size: the median over batches of the time per operation (us)
 * for shoal and for MPI RMA, their ratio, and the physical limits beside
 * them: the cache-line transfer between two cores (small sizes) and
 * memcpy of the size (large ones). Ends OpenSHMEM; the caller ends MPI. */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_sys.h"
#include "bench_run.h"

#define MR_WINDOW 64 /* puts between two quiets in the message rate (OSU's window) */

typedef enum { OP_PUT, OP_GET, OP_PUT_RATE, OP_FETCH_ADD, OP_ADD, OP_CSWAP, OP_SWAP, OP_FETCH, OP_COUNT } shmem_op;
static const char *const op_names[OP_COUNT] = {"put", "get",          "put_mr", "fetch_add",
                                               "add", "compare_swap", "swap",   "fetch"};

typedef struct shmem_bench {
    char *heap_dst, *heap_src; /* symmetric: shoal's path */
    char *win_base;            /* the MPI window's memory */
    MPI_Win win;
    char *local; /* the origin's private buffer */
    long *counter;
    size_t max_bytes;
} shmem_bench;

static void fill(char *buf, size_t bytes, int salt)
{
    for (size_t i = 0; i < bytes; i++)
        buf[i] = (char)(i * 13 + (size_t)salt);
}

static bool holds(const char *buf, size_t bytes, int salt)
{
    for (size_t i = 0; i < bytes; i++)
        if (buf[i] != (char)(i * 13 + (size_t)salt))
            return false;
    return true;
}

/* One batch of iterations of op at bytes on one path; the time per
 * operation in us, as PE 0 measured it (the others get 0). */
static double run_batch(shmem_bench *b, shmem_op op, size_t bytes, int iterations, bool via_shoal, int me)
{
    double start = 0;
    if (me == 0) {
        int warmup = iterations / 10 + 1;
        for (int i = -warmup; i < iterations; i++) {
            if (i == 0)
                start = MPI_Wtime();
            long one = 1, old;
            switch (op) {
            case OP_PUT:
                if (via_shoal) {
                    shmem_putmem(b->heap_dst, b->local, bytes, 1);
                    shmem_quiet();
                } else {
                    PMPI_Put(b->local, (int)bytes, MPI_BYTE, 1, 0, (int)bytes, MPI_BYTE, b->win);
                    PMPI_Win_flush(1, b->win);
                }
                break;
            case OP_GET:
                if (via_shoal) {
                    shmem_getmem(b->local, b->heap_src, bytes, 1);
                } else {
                    PMPI_Get(b->local, (int)bytes, MPI_BYTE, 1, (MPI_Aint)b->max_bytes, (int)bytes, MPI_BYTE, b->win);
                    PMPI_Win_flush(1, b->win);
                }
                break;
            case OP_PUT_RATE:
                for (int k = 0; k < MR_WINDOW; k++) {
                    if (via_shoal)
                        shmem_putmem_nbi(b->heap_dst, b->local, bytes, 1);
                    else
                        PMPI_Put(b->local, (int)bytes, MPI_BYTE, 1, 0, (int)bytes, MPI_BYTE, b->win);
                }
                if (via_shoal)
                    shmem_quiet();
                else
                    PMPI_Win_flush(1, b->win);
                break;
            default: {
                MPI_Aint counter_at = (MPI_Aint)(2 * b->max_bytes);
                if (via_shoal) {
                    if (op == OP_FETCH_ADD)
                        old = shmem_long_atomic_fetch_add(b->counter, one, 1);
                    else if (op == OP_ADD)
                        shmem_long_atomic_add(b->counter, one, 1);
                    else if (op == OP_CSWAP)
                        old = shmem_long_atomic_compare_swap(b->counter, 0, 0, 1);
                    else if (op == OP_SWAP)
                        old = shmem_long_atomic_swap(b->counter, 0, 1);
                    else
                        old = shmem_long_atomic_fetch(b->counter, 1);
                } else {
                    long zero = 0;
                    if (op == OP_FETCH_ADD)
                        PMPI_Fetch_and_op(&one, &old, MPI_LONG, 1, counter_at, MPI_SUM, b->win);
                    else if (op == OP_ADD)
                        PMPI_Accumulate(&one, 1, MPI_LONG, 1, counter_at, 1, MPI_LONG, MPI_SUM, b->win);
                    else if (op == OP_CSWAP)
                        PMPI_Compare_and_swap(&zero, &zero, &old, MPI_LONG, 1, counter_at, b->win);
                    else if (op == OP_SWAP)
                        PMPI_Fetch_and_op(&zero, &old, MPI_LONG, 1, counter_at, MPI_REPLACE, b->win);
                    else
                        PMPI_Fetch_and_op(NULL, &old, MPI_LONG, 1, counter_at, MPI_NO_OP, b->win);
                    PMPI_Win_flush(1, b->win);
                }
                (void)old;
            }
            }
        }
    }
    double per_op = me == 0 ? (MPI_Wtime() - start) * 1e6 / iterations : 0;
    if (op == OP_PUT_RATE)
        per_op /= MR_WINDOW;
    return per_op;
}

/* After a batch: the bytes the path moved are the pattern. */
static bool batch_right(shmem_bench *b, shmem_op op, size_t bytes, bool via_shoal, int me)
{
    int ok = 1;
    /* The origin flushed; after the barrier the target syncs its public
     * and private copies (MPI's separate memory model needs it). */
    PMPI_Barrier(MPI_COMM_WORLD);
    PMPI_Win_sync(b->win);
    if ((op == OP_PUT || op == OP_PUT_RATE) && me == 1)
        ok = holds(via_shoal ? b->heap_dst : b->win_base, bytes, 1);
    else if (op == OP_GET && me == 0)
        ok = holds(b->local, bytes, 2);
    if (!ok)
        fprintf(stderr, "PE %d: %s %s of %zu bytes: the bytes are not what was sent\n", me,
                via_shoal ? "shoal" : "MPI RMA", op_names[op], bytes);
    PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return ok;
}

static double memcpy_us(size_t bytes)
{
    char *a = malloc(bytes), *b = malloc(bytes);
    fill(a, bytes, 3);
    memcpy(b, a, bytes);
    int reps = bytes < 65536 ? 2000 : 50;
    double start = MPI_Wtime();
    for (int i = 0; i < reps; i++) {
        a[0] = (char)i;
        memcpy(b, a, bytes);
    }
    double us = (MPI_Wtime() - start) * 1e6 / reps;
    free(a);
    free(b);
    return us;
}

int bench_shmem_run(struct bench_context *ctx, int argc, char **argv)
{
    size_t min = 8, max = (size_t)1 << 20;
    int batches = 5;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "-m") && i + 1 < argc)
            sscanf(argv[++i], "%zu:%zu", &min, &max);
        else if (!strcmp(argv[i], "--batches") && i + 1 < argc)
            batches = atoi(argv[++i]);
    }
    if (batches < 1 || batches > 99)
        batches = 5;
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    if (npes < 2) {
        if (me == 0)
            fprintf(stderr, "shoal-bench shmem: needs 2 PEs (origin and target)\n");
        shmem_finalize();
        return 2;
    }
    shmem_bench b = {.max_bytes = max};
    b.heap_dst = shmem_malloc(max);
    b.heap_src = shmem_malloc(max);
    b.counter = shmem_calloc(1, sizeof(long));
    b.local = malloc(max);
    /* The window: a put area, a get area, a counter. */
    PMPI_Win_allocate((MPI_Aint)(2 * max + sizeof(long)), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &b.win_base, &b.win);
    memset(b.win_base, 0, 2 * max + sizeof(long));
    fill(b.heap_src, max, 2);
    fill(b.win_base + max, max, 2);
    PMPI_Win_lock_all(MPI_MODE_NOCHECK, b.win);
    shmem_barrier_all();

    if (me == 0) {
        printf("# shoal-bench shmem: %d PEs, origin PE 0, target PE 1 (%s)\n", npes,
               shmem_ptr(b.heap_dst, 1) ? "same node: loads and stores" : "another node: MPI-3 RMA");
        printf("# OSU methodology: per size, %d batches alternating shoal and the host MPI's MPI-3 RMA "
               "(MPI_Put/MPI_Get + MPI_Win_flush); medians of the batches' time per operation\n",
               batches);
        if (ctx->facts.core_latency_us > 0)
            printf("# cache-line transfer between two cores (one way): %.3f us\n", ctx->facts.core_latency_us);
        printf("# %-12s %10s %12s %12s %9s %12s %s\n", "op", "bytes", "shoal_us", "mpi_rma_us", "speedup", "memcpy_us",
               "checked");
    }
    int errors = 0;
    for (int op = 0; op < OP_COUNT; op++) {
        bool sized = op == OP_PUT || op == OP_GET || op == OP_PUT_RATE;
        for (size_t bytes = sized ? min : 8; bytes <= (sized ? max : 8); bytes *= 2) {
            if (op == OP_PUT_RATE && bytes > 65536)
                break;
            int iterations = bytes <= 8192 ? 2000 : bytes <= 131072 ? 300 : 60;
            if (op == OP_PUT_RATE)
                iterations /= 8;
            double shoal_times[99], host_times[99];
            bool right = true;
            fill(b.local, bytes, 1);
            for (int k = 0; k < batches; k++) {
                shmem_barrier_all();
                shoal_times[k] = run_batch(&b, (shmem_op)op, bytes, iterations, true, me);
                right &= batch_right(&b, (shmem_op)op, bytes, true, me);
                fill(b.local, bytes, 1);
                host_times[k] = run_batch(&b, (shmem_op)op, bytes, iterations, false, me);
                right &= batch_right(&b, (shmem_op)op, bytes, false, me);
                fill(b.local, bytes, 1);
            }
            errors += !right;
            if (me == 0) {
                double s = core_median(shoal_times, batches), h = core_median(host_times, batches);
                printf("  %-12s %10zu %12.3f %12.3f %8.2fx %12.3f %s\n", op_names[op], bytes, s, h, h / s,
                       sized ? memcpy_us(bytes) : 0.0, right ? "ok" : "FAILED");
                fflush(stdout);
            }
        }
    }
    PMPI_Win_unlock_all(b.win);
    PMPI_Win_free(&b.win);
    free(b.local);
    shmem_free(b.counter);
    shmem_free(b.heap_src);
    shmem_free(b.heap_dst);
    shmem_finalize();
    return errors ? 1 : 0;
}
