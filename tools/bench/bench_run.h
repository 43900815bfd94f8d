/* shoal-bench: the parts that run under MPI (measurement, machine facts,
 * output). Everything the benchmark itself needs from MPI (its barriers
 * between iterations, gathering figures) goes through PMPI_*, so that shoal
 * only ever sees the calls being measured on its path. */
#ifndef SHOAL_BENCH_RUN_H
#define SHOAL_BENCH_RUN_H

#include <mpi.h>

#include "bench.h"

/* Figures of one path at one size. For latency benchmarks: microseconds,
 * the per-rank average over iterations, then its average, minimum and
 * maximum across ranks (OSU). For bw: MB/s seen by rank 0, in all three. */
struct path_figures {
    double avg, min, max;
};

struct size_result {
    size_t size;
    int iterations, warmup;
    struct path_figures host, shoal;
    double bound_bytes; /* bench_bound_bytes() for this size */
    double memcpy_us;   /* measured memcpy of bound_bytes (per message for pt2pt) */
    double bound;       /* us, or MB/s for bw: see docs/BENCH.md */
    double speedup;     /* > 1: shoal faster than the host MPI */
    double times_bound; /* >= 1: how many times slower than the bound shoal is */
    /* Paired comparison: host time - shoal time per operation (us), averaged
     * over the pairs of adjacent calls, and the half-width of its 95 %
     * confidence interval. A difference inside it is noise. For pt2pt a pair
     * is two adjacent chunks, per message (latency) or per window (bw). */
    double difference_us, difference_ci95_us;
    /* Pairs in all, and those where shoal was faster or slower: a sign test. */
    int pairs, pairs_shoal_faster, pairs_shoal_slower;
    double median_speedup;          /* median over pairs of host time / shoal time */
    long errors_host, errors_shoal; /* results that failed validation, all ranks */
    char shoal_path[48];            /* what shoal ran: "sliced/cma", or "host MPI" */
};

struct bench_result {
    bool ran;
    int nsizes;
    struct size_result *sizes;
    const char *validation_note; /* NULL, or why a check was not possible */
};

struct machine_facts {
    char hostname[256];
    char cpu_model[256];
    int cores_online; /* sysconf(_SC_NPROCESSORS_ONLN) */
    int cores_usable; /* in this process's affinity mask */
    char mpi_library_version[MPI_MAX_LIBRARY_VERSION_STRING];
    char mpi_name[64];    /* "Open MPI", "MPICH", or the first word */
    char mpi_version[64]; /* "4.1.4" */
    int mpi_standard_major, mpi_standard_minor;
    const char *shoal_version, *shoal_commit;
    bool shoal_enabled;
    int nprocs, nodes, max_procs_per_node;
    bool single_node;
    double core_latency_us; /* one-way cache-line transfer, <= 0: unknown */
    char date_utc[32];
    char command_line[1024];
};

struct bench_context {
    const struct bench_options *opt;
    MPI_Comm comm;
    int rank, nprocs;
    struct machine_facts facts;
    unsigned char *send_buf, *recv_buf; /* operands of both paths */
    unsigned char *copy_src, *copy_dst; /* the bound's memcpy */
    size_t buf_bytes;
    uint64_t *keys;              /* nprocs reference keys for reductions */
    int *counts;                 /* nprocs block counts for reduce_scatter */
    uint64_t calls;              /* seeds: same count on every rank */
    bool corrupted[BENCH_COUNT]; /* the test hook fired for this benchmark */
    long errors_total;
    char last_shoal_path[48]; /* shoal_last_choice() after the last shoal-path call */
    bool late;                /* --skew: this rank is its node's late one */
    struct bench_result results[BENCH_COUNT];
};

/* machine.c */
void machine_collect(struct bench_context *ctx, int argc, char **argv);
void machine_measure_core_latency(struct bench_context *ctx);

/* measure.c */
void measure_benchmark(struct bench_context *ctx, enum bench_id id);
size_t measure_buffer_bytes(const struct bench_options *opt, int nprocs);

/* output.c */
void output_preamble(const struct bench_context *ctx);
void output_table_header(const struct bench_context *ctx, enum bench_id id);
void output_table_row(const struct bench_context *ctx, enum bench_id id, const struct size_result *row);
int output_json(const struct bench_context *ctx, const char *path);
int output_csv(const struct bench_context *ctx, const char *path);

/* shoal-bench shmem (shmem_bench.c): OpenSHMEM put, get, message rate and
 * atomics beside MPI-3 RMA; its own arguments after "shmem". Ends
 * OpenSHMEM (not MPI); returns the exit status. */
int bench_shmem_run(struct bench_context *ctx, int argc, char **argv);

#endif
