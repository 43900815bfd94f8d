/* shoal-bench thread_coll: allreduce (float sum) and bcast (root 0) on N
 * thread ranks of one process (a thread communicator of N threads of world
 * rank 0) against the same call on N process ranks (MPI_COMM_WORLD, which
 * shoal's own process path serves), in one run. A call's time is rank 0's
 * (thread 0's), from a barrier to the call's return, the median over the
 * iterations. Every result is checked.
 *
 *   mpirun -np N shoal-bench thread_coll [-m MIN:MAX] [-i ITERS] [-x WARMUP] */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_sys.h"
#include "mpix_threadcomm.h"
#include "thread_bench.h"

enum { OP_ALLREDUCE, OP_BCAST };

typedef struct run {
    int op;
    MPI_Comm comm;
    int count, iterations, warmup;
    double *times; /* rank 0's, per timed iteration */
    _Atomic long errors;
} run;

/* Input of rank r for iteration i, element k: small integers, so that a
 * sum of them is exact in any order. */
static float input(int r, int i, int k) { return (float)((r + 1) * 3 + (i + k) % 5); }

/* The iterations of one rank (process or thread) of comm. */
static void ranks_loop(run *x, int rank, int size)
{
    float *in = malloc(sizeof(float) * (size_t)x->count), *out = malloc(sizeof(float) * (size_t)x->count);
    long bad = 0;
    for (int i = 0; i < x->warmup + x->iterations; i++) {
        for (int k = 0; k < x->count; k++)
            in[k] = input(rank, i, k);
        MPI_Barrier(x->comm);
        double start = MPI_Wtime();
        if (x->op == OP_ALLREDUCE)
            MPI_Allreduce(in, out, x->count, MPI_FLOAT, MPI_SUM, x->comm);
        else
            MPI_Bcast(in, x->count, MPI_FLOAT, 0, x->comm);
        double took = MPI_Wtime() - start;
        if (rank == 0 && i >= x->warmup)
            x->times[i - x->warmup] = took;
        for (int k = 0; k < x->count; k += 1 + x->count / 16) {
            float want = 0;
            if (x->op == OP_ALLREDUCE)
                for (int r = 0; r < size; r++)
                    want += input(r, i, k);
            else
                want = input(0, i, k);
            bad += (x->op == OP_ALLREDUCE ? out[k] : in[k]) != want;
        }
    }
    x->errors += bad;
    free(in);
    free(out);
}

static run *shared;

static void *thread_main(void *arg)
{
    (void)arg;
    run *x = shared;
    MPIX_Threadcomm_start(x->comm);
    int rank, size;
    MPI_Comm_rank(x->comm, &rank);
    MPI_Comm_size(x->comm, &size);
    ranks_loop(x, rank, size);
    MPIX_Threadcomm_finish(x->comm);
    return NULL;
}

static void time_threads(run *x, int threads)
{
    MPIX_Threadcomm_init(MPI_COMM_SELF, threads, &x->comm);
    shared = x;
    pthread_t *ids = malloc(sizeof *ids * (size_t)threads);
    for (int t = 0; t < threads; t++)
        pthread_create(&ids[t], NULL, thread_main, NULL);
    for (int t = 0; t < threads; t++)
        pthread_join(ids[t], NULL);
    free(ids);
    MPIX_Threadcomm_free(&x->comm);
}

int thread_coll_main(int argc, char **argv)
{
    int provided, rank, nprocs;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    size_t min = 4, max = 1u << 20;
    int iterations = 200, warmup = 20;
    if (!thread_bench_options(argc, argv, &min, &max, &iterations, &warmup) || nprocs < 2 || min < 4) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -np N shoal-bench thread_coll [-m MIN:MAX] [-i ITERS] [-x WARMUP] "
                            "(N >= 2, MIN >= 4)\n");
        MPI_Finalize();
        return 2;
    }
    if (rank == 0)
        printf("# shoal-bench thread_coll: %d thread ranks of one process against %d process ranks; time per call "
               "(us), barrier to return on rank 0, the median of %d calls (+%d warm-up)\n",
               nprocs, nprocs, iterations, warmup);
    double *times = malloc(sizeof *times * (size_t)iterations);
    long errors = 0;
    for (int op = OP_ALLREDUCE; op <= OP_BCAST; op++) {
        if (rank == 0)
            printf("# %s\n%-10s %14s %14s %10s\n",
                   op == OP_ALLREDUCE ? "MPI_Allreduce (float sum)" : "MPI_Bcast (root 0)", "# bytes", "processes",
                   "threads", "proc/thr");
        for (size_t size = min;; size *= 2) {
            if (size > max)
                size = max;
            run procs = {.op = op,
                         .comm = MPI_COMM_WORLD,
                         .count = (int)(size / 4),
                         .iterations = iterations,
                         .warmup = warmup,
                         .times = times};
            ranks_loop(&procs, rank, nprocs);
            double p = rank == 0 ? core_median(times, iterations) : 0, t = 0;
            errors += procs.errors;
            if (rank == 0) {
                run threads = {
                    .op = op, .count = (int)(size / 4), .iterations = iterations, .warmup = warmup, .times = times};
                time_threads(&threads, nprocs);
                t = core_median(times, iterations);
                errors += threads.errors;
                printf("%-10zu %14.2f %14.2f %10.2f\n", size, 1e6 * p, 1e6 * t, t > 0 ? p / t : 0);
                fflush(stdout);
            }
            thread_bench_quiet_barrier(); /* the others sleep while rank 0's threads run */
            if (size == max)
                break;
        }
    }
    long all = 0;
    PMPI_Allreduce(&errors, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all)
        fprintf(stderr, "shoal-bench thread_coll: %ld wrong results\n", all);
    free(times);
    MPI_Finalize();
    return all ? 1 : 0;
}
