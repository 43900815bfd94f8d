/* shoal-bench thread_latency: OSU-style one-way latency (half a ping-pong
 * round trip) and bandwidth (osu_bw's method: a window of 64 non-blocking
 * sends of one size, answered by one short acknowledgement; the window's
 * bytes over its time) between two thread ranks of one process (a thread
 * communicator, MPIX_Threadcomm, of 2 threads of world rank 0) and between
 * two process ranks of the host MPI (world ranks 0 and 1, PMPI_*), in the
 * same run, each the median of its repetitions; under an MPICH with its own
 * thread communicators (4.2 and later) also the host's latency, through
 * PMPIX_Threadcomm_*. Every message received is checked.
 *
 *   mpirun -np 2 shoal-bench thread_latency [-m MIN:MAX] [-i ITERS] [-x WARMUP] */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core_sys.h"
#include "mpix_threadcomm.h"
#include "thread_bench.h"

#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION >= 40200000
#define HOST_THREADCOMM 1
#endif

typedef struct pingpong {
    MPI_Comm comm;
    size_t size;
    int iterations, warmup;
    char *buf[2];
    double seconds; /* median round trip */
    double *trips;  /* per timed iteration */
    long errors;
    int (*start)(MPI_Comm), (*finish)(MPI_Comm);
    void (*run)(struct pingpong *, int rank, bool host); /* side or window_side */
} pingpong;

static void fill(char *buf, size_t size, int who) { memset(buf, 'a' + who, size); }

static long check(const char *buf, size_t size, int from)
{
    long bad = 0;
    for (size_t i = 0; i < size; i += 1 + size / 64)
        bad += buf[i] != 'a' + from;
    return bad + (size && buf[size - 1] != 'a' + from);
}

/* One side of the ping-pong, rank 0 or 1 of pp->comm. */
static void side(pingpong *pp, int rank, bool host)
{
    int s = (int)pp->size, peer = 1 - rank;
    char *mine = pp->buf[rank], *got = pp->buf[rank] + pp->size;
    fill(mine, pp->size, rank);
    memset(got, 0, pp->size);
    int (*send)(const void *, int, MPI_Datatype, int, int, MPI_Comm) = host ? PMPI_Send : MPI_Send;
    int (*recv)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status *) = host ? PMPI_Recv : MPI_Recv;
    for (int i = 0; i < pp->warmup + pp->iterations; i++) {
        double start = MPI_Wtime();
        if (rank == 0) {
            send(mine, s, MPI_CHAR, peer, 1, pp->comm);
            recv(got, s, MPI_CHAR, peer, 1, pp->comm, MPI_STATUS_IGNORE);
            if (i >= pp->warmup)
                pp->trips[i - pp->warmup] = MPI_Wtime() - start;
        } else {
            recv(got, s, MPI_CHAR, peer, 1, pp->comm, MPI_STATUS_IGNORE);
            send(mine, s, MPI_CHAR, peer, 1, pp->comm);
        }
    }
    if (rank == 0) {
        pp->seconds = core_median(pp->trips, pp->iterations);
    }
    long bad = check(got, pp->size, peer);
    __atomic_add_fetch(&pp->errors, bad, __ATOMIC_RELAXED);
}

/* osu_bw's window: rank 0 posts WINDOW non-blocking sends of one buffer,
 * rank 1 as many receives, then answers with one byte; pp->seconds is the
 * median window. */
#define WINDOW 64
static void window_side(pingpong *pp, int rank, bool host)
{
    int s = (int)pp->size, peer = 1 - rank;
    char *mine = pp->buf[rank], *got = pp->buf[rank] + pp->size, ack = 0;
    fill(mine, pp->size, rank);
    memset(got, 0, pp->size);
    int (*isend)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *) = host ? PMPI_Isend : MPI_Isend;
    int (*irecv)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *) = host ? PMPI_Irecv : MPI_Irecv;
    int (*waitall)(int, MPI_Request[], MPI_Status[]) = host ? PMPI_Waitall : MPI_Waitall;
    int (*send)(const void *, int, MPI_Datatype, int, int, MPI_Comm) = host ? PMPI_Send : MPI_Send;
    int (*recv)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status *) = host ? PMPI_Recv : MPI_Recv;
    MPI_Request reqs[WINDOW];
    for (int i = 0; i < pp->warmup + pp->iterations; i++) {
        double start = MPI_Wtime();
        if (rank == 0) {
            for (int w = 0; w < WINDOW; w++)
                isend(mine, s, MPI_CHAR, peer, 2, pp->comm, &reqs[w]);
            waitall(WINDOW, reqs, MPI_STATUSES_IGNORE);
            recv(&ack, 1, MPI_CHAR, peer, 3, pp->comm, MPI_STATUS_IGNORE);
            if (i >= pp->warmup)
                pp->trips[i - pp->warmup] = MPI_Wtime() - start;
        } else {
            for (int w = 0; w < WINDOW; w++)
                irecv(got, s, MPI_CHAR, peer, 2, pp->comm, &reqs[w]);
            waitall(WINDOW, reqs, MPI_STATUSES_IGNORE);
            send(&ack, 1, MPI_CHAR, peer, 3, pp->comm);
        }
    }
    if (rank == 0)
        pp->seconds = core_median(pp->trips, pp->iterations);
    else
        __atomic_add_fetch(&pp->errors, check(got, pp->size, peer), __ATOMIC_RELAXED);
}

/* Megabytes (10^6 bytes) a second of a window of size-byte messages. */
static double bandwidth(size_t size, double seconds) { return seconds > 0 ? WINDOW * (double)size / seconds / 1e6 : 0; }

static pingpong *shared;
static bool host_threads;

static void *thread_side(void *arg)
{
    (void)arg;
    pingpong *pp = shared;
    /* A new thread starts on its creator's core; the scheduler moves it to
     * an idle one only once both are busy for a while. Until then every
     * round trip waits for a yield (0.9 us instead of 0.16 at 8 B on the
     * 2-core VM, at 1000 round trips a size): spin first. */
    for (double until = MPI_Wtime() + 0.02; MPI_Wtime() < until;)
        core_cpu_relax();
    pp->start(pp->comm);
    int rank;
    MPI_Comm_rank(pp->comm, &rank);
    pp->run(pp, rank, host_threads);
    pp->finish(pp->comm);
    return NULL;
}

/* Two threads of this process, ranks of a thread communicator. */
static double time_threads(pingpong *pp, bool host)
{
    int (*init)(MPI_Comm, int, MPI_Comm *) = MPIX_Threadcomm_init;
    int (*release)(MPI_Comm *) = MPIX_Threadcomm_free;
    pp->start = MPIX_Threadcomm_start;
    pp->finish = MPIX_Threadcomm_finish;
#ifdef HOST_THREADCOMM
    if (host) {
        init = PMPIX_Threadcomm_init;
        release = PMPIX_Threadcomm_free;
        pp->start = PMPIX_Threadcomm_start;
        pp->finish = PMPIX_Threadcomm_finish;
    }
#endif
    if (init(MPI_COMM_SELF, 2, &pp->comm) != MPI_SUCCESS)
        return -1;
    shared = pp;
    host_threads = host;
    pthread_t id[2];
    for (int t = 0; t < 2; t++)
        pthread_create(&id[t], NULL, thread_side, NULL);
    for (int t = 0; t < 2; t++)
        pthread_join(id[t], NULL);
    release(&pp->comm);
    return pp->seconds;
}

void thread_bench_quiet_barrier(void)
{
    MPI_Request request;
    int done = 0;
    PMPI_Ibarrier(MPI_COMM_WORLD, &request);
    while (PMPI_Test(&request, &done, MPI_STATUS_IGNORE), !done)
        nanosleep(&(struct timespec){.tv_nsec = 200000}, NULL);
}

static bool parse_range(const char *text, size_t *min, size_t *max)
{
    char *end;
    unsigned long long a = strtoull(text, &end, 10), b = a;
    if (*end == ':')
        b = strtoull(end + 1, &end, 10);
    if (*end || a > b)
        return false;
    *min = (size_t)a;
    *max = (size_t)b;
    return true;
}

bool thread_bench_options(int argc, char **argv, size_t *min, size_t *max, int *iterations, int *warmup)
{
    bool ok = true;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "-m") && i + 1 < argc)
            ok &= parse_range(argv[++i], min, max);
        else if (!strcmp(argv[i], "-i") && i + 1 < argc)
            *iterations = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-x") && i + 1 < argc)
            *warmup = atoi(argv[++i]);
        else
            ok = false;
    }
    return ok && *iterations >= 1 && *warmup >= 0;
}

int thread_latency_main(int argc, char **argv)
{
    int provided, rank, nprocs;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    size_t min = 0, max = 4u << 20;
    int iterations = 1000, warmup = 100;
    if (!thread_bench_options(argc, argv, &min, &max, &iterations, &warmup) || nprocs < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -np 2 shoal-bench thread_latency [-m MIN:MAX] [-i ITERS] [-x WARMUP]\n");
        MPI_Finalize();
        return 2;
    }
    bool host_native = false;
#ifdef HOST_THREADCOMM
    host_native = true;
#endif
    if (rank == 0) {
        printf("# shoal-bench thread_latency: one-way latency (us): the median over %d ping-pong round trips "
               "(+%d warm-up; a tenth of both from 1 MiB), halved; the median, not OSU's mean, since on a shared or "
               "oversubscribed machine a few preempted round trips make the mean\n",
               iterations, warmup);
        printf("# processes: world ranks 0 and 1 of the host MPI; threads: 2 thread ranks of world rank 0 "
               "(MPIX_Threadcomm of MPI_COMM_SELF)%s\n",
               host_native ? "; host threads: the same through the host's own PMPIX_Threadcomm_*" : "");
        printf("# bandwidth (MB/s, 10^6 bytes): osu_bw's, a window of %d non-blocking sends answered by one byte, "
               "the median over %d windows (+%d warm-up; a tenth of both from 1 MiB)\n",
               WINDOW, (iterations + 9) / 10, (warmup + 9) / 10);
        printf("%-10s %14s %14s %s %10s %14s %14s %10s\n", "# size", "processes", "threads",
               host_native ? "  host threads" : "", "proc/thr", "proc MB/s", "thread MB/s", "thr/proc");
    }
    char *buf = malloc(4 * (max ? max : 1));
    double *trips = malloc(sizeof *trips * (size_t)(iterations > 3 ? iterations : 3)); /* or 3 windows */
    long errors = 0;
    for (size_t size = min;; size = size ? size * 2 : 1) {
        if (size > max)
            size = max;
        int iters = size >= (1u << 20) ? (iterations + 9) / 10 : iterations;
        int warm = size >= (1u << 20) ? (warmup + 9) / 10 : warmup;
        /* Windows: a tenth of the round trips, at least 3. */
        int windows = (iters + 9) / 10 > 3 ? (iters + 9) / 10 : 3, warm_windows = (warm + 9) / 10;
        pingpong procs = {.comm = MPI_COMM_WORLD,
                          .size = size,
                          .iterations = iters,
                          .warmup = warm,
                          .buf = {buf, buf},
                          .trips = trips,
                          .run = side};
        pingpong procs_bw = procs;
        procs_bw.iterations = windows;
        procs_bw.warmup = warm_windows;
        procs_bw.run = window_side;
        PMPI_Barrier(MPI_COMM_WORLD);
        if (rank < 2) {
            side(&procs, rank, true);
            PMPI_Barrier(MPI_COMM_WORLD);
            window_side(&procs_bw, rank, true);
        } else {
            PMPI_Barrier(MPI_COMM_WORLD);
        }
        double t_threads = 0, t_host = -1, bw_threads = 0;
        if (rank == 0) {
            pingpong threads = {.size = size,
                                .iterations = iters,
                                .warmup = warm,
                                .buf = {buf, buf + 2 * (max ? max : 1)},
                                .trips = trips,
                                .run = side};
            t_threads = time_threads(&threads, false);
            errors += threads.errors;
            pingpong threads_bw = threads;
            threads_bw.errors = 0;
            threads_bw.iterations = windows;
            threads_bw.warmup = warm_windows;
            threads_bw.run = window_side;
            bw_threads = bandwidth(size, time_threads(&threads_bw, false));
            errors += threads_bw.errors;
            if (host_native) {
                pingpong native = threads;
                native.errors = 0;
                t_host = time_threads(&native, true);
                errors += native.errors;
            }
        }
        thread_bench_quiet_barrier(); /* rank 1 sleeps while rank 0's threads run */
        errors += procs.errors + procs_bw.errors;
        if (rank == 0) {
            double p = 1e6 * procs.seconds / 2.0, t = 1e6 * t_threads / 2.0;
            double bw_procs = bandwidth(size, procs_bw.seconds);
            char host_col[32] = "";
            if (host_native)
                snprintf(host_col, sizeof host_col, " %14.2f", 1e6 * t_host / 2.0);
            printf("%-10zu %14.2f %14.2f%s %10.2f %14.1f %14.1f %10.2f\n", size, p, t, host_col, t > 0 ? p / t : 0,
                   bw_procs, bw_threads, bw_procs > 0 ? bw_threads / bw_procs : 0);
            fflush(stdout);
        }
        if (size == max)
            break;
    }
    long all = 0;
    PMPI_Allreduce(&errors, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all)
        fprintf(stderr, "shoal-bench thread_latency: %ld wrong bytes received\n", all);
    free(buf);
    free(trips);
    MPI_Finalize();
    return all ? 1 : 0;
}
