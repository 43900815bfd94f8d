/* shmem_bench: the OpenSHMEM one-sided benchmark of shmem_bench.h (OSU's
 * methodology), on the OpenSHMEM API alone, with an optional second path
 * interleaved batch by batch.
 *
 * Printed per size: the median over batches of the time per operation
 * (us), the second path's beside it with their ratio, and memcpy of the
 * size on one core (the physical limit of a put inside a node).
 * Calls: the OpenSHMEM API, libc. */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shmem_bench.h"

const char *const shmem_bench_op_names[SHMEM_BENCH_OPS] = {"put", "get",          "put_mr", "put_bl_mr", "fetch_add",
                                                           "add", "compare_swap", "swap",   "fetch"};

/* The symmetric objects of a run. */
typedef struct shmem_bench {
    char *heap_dst, *heap_src; /* put target, get source */
    char *local;               /* the origin's private buffer */
    long *counter;
    int *verdicts; /* [n_pes] on PE 0: each PE's check of a batch */
} shmem_bench;

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Not core_median: this file is also built by another OpenSHMEM's
 * compiler (scripts/shmem-peer-bench.sh), with nothing of shoal's. */
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, compare_doubles);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void shmem_bench_fill(char *buf, size_t bytes, int salt)
{
    for (size_t i = 0; i < bytes; i++)
        buf[i] = (char)(i * 13 + (size_t)salt);
}

bool shmem_bench_holds(const char *buf, size_t bytes, int salt)
{
    for (size_t i = 0; i < bytes; i++)
        if (buf[i] != (char)(i * 13 + (size_t)salt))
            return false;
    return true;
}

double shmem_bench_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

bool shmem_bench_parse(int argc, char **argv, int first, shmem_bench_options *opt)
{
    for (int i = first; i < argc; i++) {
        if (!strcmp(argv[i], "-m") && i + 1 < argc)
            sscanf(argv[++i], "%zu:%zu", &opt->min, &opt->max);
        else if (!strcmp(argv[i], "--batches") && i + 1 < argc)
            opt->batches = atoi(argv[++i]);
        else
            return false;
    }
    if (opt->batches < 1 || opt->batches > 99)
        opt->batches = 5;
    if (opt->min < 1 || opt->max < opt->min)
        opt->min = 8, opt->max = (size_t)1 << 20;
    return true;
}

/* One batch of iterations of op at bytes (after a tenth as many to warm
 * up); the time per operation in us as PE 0 measured it. */
static double run_batch(shmem_bench *b, shmem_bench_op op, size_t bytes, int iterations, int me)
{
    if (me != 0)
        return 0;
    double start = 0;
    int warmup = iterations / 10 + 1;
    for (int i = -warmup; i < iterations; i++) {
        if (i == 0)
            start = shmem_bench_now_us();
        long old = 0;
        switch (op) {
        case SHMEM_BENCH_PUT:
            shmem_putmem(b->heap_dst, b->local, bytes, 1);
            shmem_quiet();
            break;
        case SHMEM_BENCH_GET: shmem_getmem(b->local, b->heap_src, bytes, 1); break;
        case SHMEM_BENCH_PUT_RATE:
            for (int k = 0; k < SHMEM_BENCH_MR_WINDOW; k++)
                shmem_putmem_nbi(b->heap_dst, b->local, bytes, 1);
            shmem_quiet();
            break;
        case SHMEM_BENCH_PUT_BLOCKING_RATE:
            for (int k = 0; k < SHMEM_BENCH_MR_WINDOW; k++)
                shmem_putmem(b->heap_dst, b->local, bytes, 1);
            shmem_quiet();
            break;
        case SHMEM_BENCH_FETCH_ADD: old = shmem_long_atomic_fetch_add(b->counter, 1, 1); break;
        case SHMEM_BENCH_ADD: shmem_long_atomic_add(b->counter, 1, 1); break;
        case SHMEM_BENCH_CSWAP: old = shmem_long_atomic_compare_swap(b->counter, 0, 0, 1); break;
        case SHMEM_BENCH_SWAP: old = shmem_long_atomic_swap(b->counter, 0, 1); break;
        default: old = shmem_long_atomic_fetch(b->counter, 1); break;
        }
        (void)old;
    }
    double per_op = (shmem_bench_now_us() - start) / iterations;
    return shmem_bench_is_rate(op) ? per_op / SHMEM_BENCH_MR_WINDOW : per_op;
}

/* This PE's check of a batch of the OpenSHMEM path. */
static bool shmem_batch_right(shmem_bench *b, shmem_bench_op op, size_t bytes, int me)
{
    shmem_barrier_all();
    if ((op == SHMEM_BENCH_PUT || shmem_bench_is_rate(op)) && me == 1)
        return shmem_bench_holds(b->heap_dst, bytes, 1);
    if (op == SHMEM_BENCH_GET && me == 0)
        return shmem_bench_holds(b->local, bytes, 2);
    return true;
}

/* Every PE's check, as PE 0 learns it. */
static bool all_right(shmem_bench *b, bool mine, int me, int npes, const char *path, shmem_bench_op op, size_t bytes)
{
    if (!mine)
        fprintf(stderr, "PE %d: %s %s of %zu bytes: the bytes are not what was sent\n", me, path,
                shmem_bench_op_names[op], bytes);
    shmem_int_p(&b->verdicts[me], mine, 0);
    shmem_barrier_all();
    bool all = true;
    for (int pe = 0; me == 0 && pe < npes; pe++)
        all &= b->verdicts[pe] != 0;
    return all;
}

/* memcpy of bytes on one core, warm: the median of single copies (a
 * loaded machine's preemptions stay out of it). */
static double memcpy_us(size_t bytes)
{
    char *a = malloc(bytes), *c = malloc(bytes);
    shmem_bench_fill(a, bytes, 3);
    memcpy(c, a, bytes);
    enum { REPS = 31 };
    double us[REPS];
    int per = bytes < 65536 ? 64 : 2;
    for (int r = 0; r < REPS; r++) {
        double start = shmem_bench_now_us();
        for (int i = 0; i < per; i++) {
            a[0] = (char)i;
            memcpy(c, a, bytes);
        }
        us[r] = (shmem_bench_now_us() - start) / per;
    }
    free(a);
    free(c);
    return median(us, REPS);
}

static void print_header(const shmem_bench_options *opt, const shmem_bench *b, const shmem_bench_peer *peer, int npes)
{
    printf("# %s: %d PEs, origin PE 0, target PE 1 (%s)\n", opt->title, npes,
           shmem_ptr(b->heap_dst, 1) ? "same node: loads and stores" : "not mapped here: the network path");
    if (peer)
        printf("# OSU methodology: per size, %d batches alternating OpenSHMEM and %s; medians of the batches' "
               "time per operation\n",
               opt->batches, peer->what);
    else
        printf("# OSU methodology: per size, %d batches; the median of the batches' time per operation\n",
               opt->batches);
    if (opt->core_latency_us > 0)
        printf("# cache-line transfer between two cores (one way): %.3f us\n", opt->core_latency_us);
    if (peer)
        printf("# %-12s %10s %12s %12s %9s %12s %s\n", "op", "bytes", "shoal_us", peer->column, "speedup", "memcpy_us",
               "checked");
    else
        printf("# %-12s %10s %12s %12s %s\n", "op", "bytes", "shmem_us", "memcpy_us", "checked");
    fflush(stdout);
}

int shmem_bench_run(const shmem_bench_options *opt, shmem_bench_peer *peer)
{
    int me = shmem_my_pe(), npes = shmem_n_pes();
    if (npes < 2) {
        if (me == 0)
            fprintf(stderr, "%s: needs 2 PEs (origin and target)\n", opt->title);
        return 2;
    }
    size_t max = opt->max;
    shmem_bench b = {.heap_dst = shmem_malloc(max),
                     .heap_src = shmem_malloc(max),
                     .counter = shmem_calloc(1, sizeof(long)),
                     .verdicts = shmem_calloc((size_t)npes, sizeof(int)),
                     .local = malloc(max)};
    if (!b.heap_dst || !b.heap_src || !b.counter || !b.verdicts || !b.local) {
        if (me == 0)
            fprintf(stderr, "%s: no room for 2 x %zu bytes in the symmetric heap (SHMEM_SYMMETRIC_SIZE)\n", opt->title,
                    max);
        return 2;
    }
    shmem_bench_fill(b.heap_src, max, 2);
    shmem_barrier_all();
    if (me == 0)
        print_header(opt, &b, peer, npes);
    int errors = 0;
    for (int op = 0; op < SHMEM_BENCH_OPS; op++) {
        bool sized = op == SHMEM_BENCH_PUT || op == SHMEM_BENCH_GET || shmem_bench_is_rate((shmem_bench_op)op);
        for (size_t bytes = sized ? opt->min : 8; bytes <= (sized ? max : 8); bytes *= 2) {
            if (shmem_bench_is_rate((shmem_bench_op)op) && bytes > 65536)
                break;
            int iterations = bytes <= 8192 ? 2000 : bytes <= 131072 ? 300 : 60;
            if (shmem_bench_is_rate((shmem_bench_op)op))
                iterations /= 8;
            double times[99], peer_times[99];
            bool right = true;
            shmem_bench_fill(b.local, bytes, 1);
            for (int k = 0; k < opt->batches; k++) {
                shmem_barrier_all();
                times[k] = run_batch(&b, (shmem_bench_op)op, bytes, iterations, me);
                right &= all_right(&b, shmem_batch_right(&b, (shmem_bench_op)op, bytes, me), me, npes, "OpenSHMEM",
                                   (shmem_bench_op)op, bytes);
                shmem_bench_fill(b.local, bytes, 1);
                if (!peer)
                    continue;
                shmem_barrier_all();
                peer_times[k] = peer->batch(peer->state, (shmem_bench_op)op, bytes, iterations, b.local);
                right &= all_right(&b, peer->check(peer->state, (shmem_bench_op)op, bytes, b.local, me), me, npes,
                                   peer->column, (shmem_bench_op)op, bytes);
                shmem_bench_fill(b.local, bytes, 1);
            }
            errors += !right;
            if (me != 0)
                continue;
            double s = median(times, opt->batches), mc = sized ? memcpy_us(bytes) : 0.0;
            if (peer) {
                double p = median(peer_times, opt->batches);
                printf("  %-12s %10zu %12.3f %12.3f %8.2fx %12.3f %s\n", shmem_bench_op_names[op], bytes, s, p, p / s,
                       mc, right ? "ok" : "FAILED");
            } else {
                printf("  %-12s %10zu %12.3f %12.3f %s\n", shmem_bench_op_names[op], bytes, s, mc,
                       right ? "ok" : "FAILED");
            }
            fflush(stdout);
        }
    }
    shmem_barrier_all();
    free(b.local);
    shmem_free(b.verdicts);
    shmem_free(b.counter);
    shmem_free(b.heap_src);
    shmem_free(b.heap_dst);
    return errors ? 1 : 0;
}
