/* MPI_THREAD_MULTIPLE: several threads per rank, each on a communicator of
 * its own, call collectives at the same time; every result is compared with
 * the host MPI's (PMPI) on the same communicator.
 *   threads_check [--threads T] [--calls N] [--seed S] */
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "check_common.h"

enum { C_ALLREDUCE, C_BCAST, C_REDUCE, C_ALLGATHER, C_ALLTOALL, C_GATHER, C_SCATTER, C_BARRIER, C_COUNT };
static const char *const names[C_COUNT] = {"allreduce", "bcast",  "reduce",  "allgather",
                                           "alltoall",  "gather", "scatter", "barrier"};

typedef struct worker {
    int index;
    MPI_Comm comm;
    uint64_t seed;
    int calls;
    long failures;
    long checked;
} worker;

static void fill(double *p, size_t n, int rank, int salt)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (double)((rank + 1) * 1000 + salt) + (double)(i % 97) * 0.25;
}

static void one_case(worker *w, rng *r, int rank, int size)
{
    int c = rng_int(r, 0, C_COUNT - 1);
    /* 1 element to 128 Ki doubles (1 MiB): inline notes, staging, single copy. */
    size_t count = (size_t)1 << rng_int(r, 0, 17);
    count += (size_t)rng_int(r, 0, 3);
    int root = rng_int(r, 0, size - 1);
    size_t total =
        c == C_ALLGATHER || c == C_ALLTOALL || c == C_GATHER || c == C_SCATTER ? count * (size_t)size : count;
    double *in = malloc(sizeof(double) * total), *out = malloc(sizeof(double) * total),
           *ref = malloc(sizeof(double) * total);
    if (!in || !out || !ref)
        CHECK_FATAL("out of memory");
    fill(in, total, rank, w->index);
    memset(out, 0, sizeof(double) * total);
    memset(ref, 0, sizeof(double) * total);
    int n = (int)count;
    size_t compare = total;
    switch (c) {
    case C_ALLREDUCE:
        MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, w->comm);
        PMPI_Allreduce(in, ref, n, MPI_DOUBLE, MPI_SUM, w->comm);
        break;
    case C_BCAST:
        memcpy(out, in, sizeof(double) * count);
        memcpy(ref, in, sizeof(double) * count);
        MPI_Bcast(out, n, MPI_DOUBLE, root, w->comm);
        PMPI_Bcast(ref, n, MPI_DOUBLE, root, w->comm);
        break;
    case C_REDUCE:
        MPI_Reduce(in, out, n, MPI_DOUBLE, MPI_MAX, root, w->comm);
        PMPI_Reduce(in, ref, n, MPI_DOUBLE, MPI_MAX, root, w->comm);
        compare = rank == root ? count : 0;
        break;
    case C_ALLGATHER:
        MPI_Allgather(in, n, MPI_DOUBLE, out, n, MPI_DOUBLE, w->comm);
        PMPI_Allgather(in, n, MPI_DOUBLE, ref, n, MPI_DOUBLE, w->comm);
        break;
    case C_ALLTOALL:
        MPI_Alltoall(in, n, MPI_DOUBLE, out, n, MPI_DOUBLE, w->comm);
        PMPI_Alltoall(in, n, MPI_DOUBLE, ref, n, MPI_DOUBLE, w->comm);
        break;
    case C_GATHER:
        MPI_Gather(in, n, MPI_DOUBLE, out, n, MPI_DOUBLE, root, w->comm);
        PMPI_Gather(in, n, MPI_DOUBLE, ref, n, MPI_DOUBLE, root, w->comm);
        compare = rank == root ? total : 0;
        break;
    case C_SCATTER:
        MPI_Scatter(in, n, MPI_DOUBLE, out, n, MPI_DOUBLE, root, w->comm);
        PMPI_Scatter(in, n, MPI_DOUBLE, ref, n, MPI_DOUBLE, root, w->comm);
        compare = count;
        break;
    default:
        MPI_Barrier(w->comm);
        compare = 0;
        break;
    }
    if (memcmp(out, ref, sizeof(double) * compare)) {
        if (w->failures++ < 10)
            fprintf(stderr, "rank %d thread %d: FAIL %s of %zu doubles, root %d: differs from the host MPI\n", rank,
                    w->index, names[c], count, root);
    }
    w->checked++;
    free(in);
    free(out);
    free(ref);
}

static void *run(void *arg)
{
    worker *w = arg;
    int rank, size;
    MPI_Comm_rank(w->comm, &rank);
    MPI_Comm_size(w->comm, &size);
    rng r = rng_make(w->seed, (uint64_t)w->index, 17);
    for (int i = 0; i < w->calls; i++)
        one_case(w, &r, rank, size);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int threads = 3, calls = 150;
    uint64_t seed = (uint64_t)time(NULL);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--threads"))
            threads = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--calls"))
            calls = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--seed"))
            seed = strtoull(argv[i + 1], NULL, 10);
    }
    PMPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (provided < MPI_THREAD_MULTIPLE) {
        /* Nothing to check: say so rather than pass quietly. */
        if (rank == 0)
            printf("threads_check: the host MPI provides thread level %d only; skipped\n", provided);
        MPI_Finalize();
        return 77;
    }
    if (threads < 1 || threads > 16)
        threads = 3;
    if (rank == 0)
        printf("threads_check: %d ranks x %d threads, %d calls each, seed %llu (rerun with --seed %llu)\n", size,
               threads, calls, (unsigned long long)seed, (unsigned long long)seed);

    worker w[16];
    pthread_t tid[16];
    for (int t = 0; t < threads; t++) {
        w[t] = (worker){.index = t, .seed = seed, .calls = calls};
        MPI_Comm_dup(MPI_COMM_WORLD, &w[t].comm); /* one at a time: dup is collective on world */
    }
    for (int t = 0; t < threads; t++)
        if (pthread_create(&tid[t], NULL, run, &w[t]))
            CHECK_FATAL("pthread_create failed");
    long failures = 0, checked = 0;
    for (int t = 0; t < threads; t++) {
        pthread_join(tid[t], NULL);
        failures += w[t].failures;
        checked += w[t].checked;
        MPI_Comm_free(&w[t].comm);
    }
    long all;
    PMPI_Allreduce(&failures, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("threads_check: %ld calls checked per rank, %ld failures\n", checked, all);
    MPI_Finalize();
    return all ? 1 : 0;
}
