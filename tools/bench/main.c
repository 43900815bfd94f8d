/* shoal-bench: shoal against the host MPI, in one process and one run.
 *
 *   mpirun -np N shoal-bench allreduce -m 4:4194304
 *
 *   mpirun -np 2 shoal-bench shmem [-m MIN:MAX]   (OpenSHMEM one-sided, shmem_bench.c)
 *
 * See docs/BENCH.md for the methodology and tools/bench/report.py for the
 * pictures. Exit status: 0 when every result was right, 1 when any result of
 * either path failed validation, 2 on a usage or setup error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_run.h"
#include "core_config.h"
#include "thread_bench.h"

static void *alloc_touched(size_t bytes)
{
    void *buf = NULL;
    /* Page-aligned as OSU's buffers are, and touched so that first-touch
     * page faults stay out of the timed calls. */
    if (posix_memalign(&buf, 4096, bytes))
        return NULL;
    memset(buf, 0, bytes);
    return buf;
}

static int finish(int status)
{
    MPI_Finalize();
    return status;
}

int main(int argc, char **argv)
{
#if defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION < 5
    /* Open MPI 4.1's osc/rdma crashes in a 64-bit MPI_Compare_and_swap over
     * vader: the MPI-3 RMA that `shoal-bench shmem` compares with runs on
     * pt2pt or sm, as shoal's shmem_init asks too. */
    if (argc > 1 && !strcmp(argv[1], "shmem"))
        setenv("OMPI_MCA_osc", "pt2pt,sm", 0);
#endif
    if (argc > 1 && !strcmp(argv[1], "thread_latency"))
        return thread_latency_main(argc, argv);
    if (argc > 1 && !strcmp(argv[1], "thread_coll"))
        return thread_coll_main(argc, argv);
    /* Help needs no MPI: a singleton MPI_Init under Open MPI 5 leaves its
     * /dev/shm/sm_segment.* behind. */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            bench_print_usage(stdout);
            return 0;
        }
    }
    /* MPI_Init, not PMPI_Init: shoal sets itself up there. */
    MPI_Init(&argc, &argv);
    struct bench_context ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.comm = MPI_COMM_WORLD;
    PMPI_Comm_rank(ctx.comm, &ctx.rank);
    PMPI_Comm_size(ctx.comm, &ctx.nprocs);
    if (argc > 1 && !strcmp(argv[1], "shmem")) {
        machine_measure_core_latency(&ctx);
        return finish(bench_shmem_run(&ctx, argc, argv));
    }

    struct bench_options opt;
    char err[256];
    enum parse_result parsed = bench_parse_options(argc, argv, &opt, err, sizeof err);
    ctx.opt = &opt;
    if (parsed == PARSE_ERROR) {
        if (ctx.rank == 0) {
            fprintf(stderr, "shoal-bench: %s\n", err);
            bench_print_usage(stderr);
        }
        return finish(2);
    }
    machine_collect(&ctx, argc, argv);
    if (parsed == PARSE_EXIT) {
        if (ctx.rank == 0) {
            if (opt.help)
                bench_print_usage(stdout);
            else
                printf("shoal-bench %s (%s), shoal %s, host MPI: %s\n", ctx.facts.shoal_version, ctx.facts.shoal_commit,
                       ctx.facts.shoal_enabled ? "active" : "not active", ctx.facts.mpi_library_version);
        }
        return finish(0);
    }

    ctx.buf_bytes = measure_buffer_bytes(&opt, ctx.nprocs);
    ctx.send_buf = alloc_touched(ctx.buf_bytes);
    ctx.recv_buf = alloc_touched(ctx.buf_bytes);
    ctx.copy_src = alloc_touched(ctx.buf_bytes);
    ctx.copy_dst = alloc_touched(ctx.buf_bytes);
    ctx.keys = calloc((size_t)ctx.nprocs, sizeof *ctx.keys);
    ctx.counts = calloc((size_t)ctx.nprocs, sizeof *ctx.counts);
    int ok = ctx.send_buf && ctx.recv_buf && ctx.copy_src && ctx.copy_dst && ctx.keys && ctx.counts, all_ok;
    PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, ctx.comm);
    if (!all_ok) {
        if (ctx.rank == 0)
            fprintf(stderr, "shoal-bench: cannot allocate 4 buffers of %zu bytes; lower -m\n", ctx.buf_bytes);
        return finish(2);
    }

    if (opt.skew_us) {
        /* The late rank of each node: its first, or its second on rank 0's
         * node (rank 0 roots every rooted benchmark). */
        MPI_Comm node;
        int local, size, holds_zero = ctx.rank == 0, any_zero;
        PMPI_Comm_split_type(ctx.comm, MPI_COMM_TYPE_SHARED, ctx.rank, MPI_INFO_NULL, &node);
        PMPI_Comm_rank(node, &local);
        PMPI_Comm_size(node, &size);
        PMPI_Allreduce(&holds_zero, &any_zero, 1, MPI_INT, MPI_MAX, node);
        ctx.late = any_zero ? size > 1 && local == 1 : local == 0;
        PMPI_Comm_free(&node);
    }
    machine_measure_core_latency(&ctx);
    /* A communicator's first SHOAL_COMM_WARMUP collectives go to the host
     * MPI and the next sets shoal up on it (its node teams, between nodes
     * its leaders): untimed calls on shoal's path take both out of the
     * figures of whichever size a run starts at, however few its warm-ups. */
    if (ctx.facts.shoal_enabled)
        for (long i = 0; i <= core_config_get()->comm_warmup; i++)
            MPI_Barrier(ctx.comm);
    output_preamble(&ctx);
    for (int id = 0; id < BENCH_COUNT; id++)
        if (opt.selected[id])
            measure_benchmark(&ctx, id);

    int status = ctx.errors_total ? 1 : 0;
    if (ctx.rank == 0) {
        if (opt.json_path && output_json(&ctx, opt.json_path))
            status = 2;
        if (opt.csv_path && output_csv(&ctx, opt.csv_path))
            status = 2;
        if (ctx.errors_total)
            fprintf(stderr,
                    "shoal-bench: %ld result(s) failed validation: the rows marked FAILED are "
                    "wrong answers, not figures\n",
                    ctx.errors_total);
    }
    /* Every rank leaves with the same status, so the launcher reports it. */
    PMPI_Bcast(&status, 1, MPI_INT, 0, ctx.comm);
    for (int id = 0; id < BENCH_COUNT; id++)
        free(ctx.results[id].sizes);
    free(ctx.send_buf);
    free(ctx.recv_buf);
    free(ctx.copy_src);
    free(ctx.copy_dst);
    free(ctx.keys);
    free(ctx.counts);
    return finish(status);
}
