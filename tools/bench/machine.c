/* Machine facts for the report, and the one calibration that is not done
 * per size: the one-way latency of a cache line between two cores, the
 * floor under any operation that needs one rank to hear from another. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#endif
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_run.h"
#include "core_sys.h"
#include "shoal.h"

static void read_cpu_model(char *out, size_t len)
{
    snprintf(out, len, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) != 0)
            continue;
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        char *value = colon + 1;
        while (*value == ' ' || *value == '\t')
            value++;
        value[strcspn(value, "\n")] = '\0';
        snprintf(out, len, "%s", value);
        break;
    }
    fclose(f);
}

/* "Open MPI v4.1.4, package: ..." or "MPICH Version:\t4.0.2\n...". */
static void parse_mpi_name(struct machine_facts *facts)
{
    const char *text = facts->mpi_library_version;
    const char *version_start = NULL;
    if (strstr(text, "Open MPI")) {
        snprintf(facts->mpi_name, sizeof facts->mpi_name, "Open MPI");
        const char *v = strstr(text, "Open MPI v");
        if (v)
            version_start = v + strlen("Open MPI v");
    } else if (strstr(text, "MPICH")) {
        snprintf(facts->mpi_name, sizeof facts->mpi_name, "MPICH");
        const char *v = strstr(text, "Version:");
        if (v) {
            v += strlen("Version:");
            while (*v == ' ' || *v == '\t')
                v++;
            version_start = v;
        }
    } else {
        size_t word = strcspn(text, " \t\n,");
        snprintf(facts->mpi_name, sizeof facts->mpi_name, "%.*s", (int)word, text);
    }
    if (version_start) {
        size_t len = strcspn(version_start, " \t\n,");
        snprintf(facts->mpi_version, sizeof facts->mpi_version, "%.*s", (int)len, version_start);
    } else {
        snprintf(facts->mpi_version, sizeof facts->mpi_version, "unknown");
    }
}

void machine_collect(struct bench_context *ctx, int argc, char **argv)
{
    struct machine_facts *facts = &ctx->facts;
    gethostname(facts->hostname, sizeof facts->hostname - 1);
    read_cpu_model(facts->cpu_model, sizeof facts->cpu_model);
    facts->cores_online = (int)sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t mask;
    facts->cores_usable = sched_getaffinity(0, sizeof mask, &mask) == 0 ? CPU_COUNT(&mask) : -1;

    int len = 0;
    PMPI_Get_library_version(facts->mpi_library_version, &len);
    /* Trailing newlines make the JSON and the table header ugly. */
    while (len > 0 && (facts->mpi_library_version[len - 1] == '\n' || facts->mpi_library_version[len - 1] == ' '))
        facts->mpi_library_version[--len] = '\0';
    parse_mpi_name(facts);
    PMPI_Get_version(&facts->mpi_standard_major, &facts->mpi_standard_minor);

    facts->shoal_version = shoal_version();
    facts->shoal_commit = shoal_commit();
    facts->shoal_enabled = shoal_enabled() != 0;
    facts->nprocs = ctx->nprocs;

    /* Nodes: the ranks that can share memory with each other. */
    MPI_Comm node;
    PMPI_Comm_split_type(ctx->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int node_rank, node_size;
    PMPI_Comm_rank(node, &node_rank);
    PMPI_Comm_size(node, &node_size);
    int is_leader = node_rank == 0;
    PMPI_Allreduce(&is_leader, &facts->nodes, 1, MPI_INT, MPI_SUM, ctx->comm);
    PMPI_Allreduce(&node_size, &facts->max_procs_per_node, 1, MPI_INT, MPI_MAX, ctx->comm);
    facts->single_node = facts->nodes == 1;
    PMPI_Comm_free(&node);

    time_t now = time(NULL);
    struct tm utc;
    gmtime_r(&now, &utc);
    strftime(facts->date_utc, sizeof facts->date_utc, "%Y-%m-%dT%H:%M:%SZ", &utc);

    size_t used = 0;
    facts->command_line[0] = '\0';
    for (int k = 0; k < argc && used + 2 < sizeof facts->command_line; k++) {
        int wrote =
            snprintf(facts->command_line + used, sizeof facts->command_line - used, "%s%s", k ? " " : "", argv[k]);
        if (wrote < 0)
            break;
        used += (size_t)wrote;
    }
    if (used >= sizeof facts->command_line)
        facts->command_line[sizeof facts->command_line - 1] = '\0';
}

/* Ping-pong on two cache lines of a shared window: world rank 0 stores a
 * count in one line, a rank of its node waits for it and echoes it in the
 * other. The minimum over batches of half a round trip is the one-way
 * latency. The waits give up after a deadline (ranks oversubscribed, or
 * descheduled), in which case the latency is unknown and the bound leaves
 * it out. */
#define LATENCY_BATCHES 20
#define LATENCY_ROUND_TRIPS 500
#define LATENCY_DEADLINE_S 2.0
#define CACHE_LINE 64

struct pingpong_lines {
    _Atomic uint64_t ping;
    char pad1[2 * CACHE_LINE - sizeof(uint64_t)]; /* two lines: adjacent-line prefetch */
    _Atomic uint64_t pong;
    char pad2[2 * CACHE_LINE - sizeof(uint64_t)];
    _Atomic uint64_t give_up;
};

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Spins until *word == value; false if the partner gave up or the deadline passed. */
static bool wait_for(_Atomic uint64_t *word, uint64_t value, struct pingpong_lines *lines, double deadline)
{
    for (unsigned spins = 0;; spins++) {
        if (atomic_load_explicit(word, memory_order_acquire) == value)
            return true;
        if ((spins & 0x3ff) == 0x3ff) {
            if (atomic_load_explicit(&lines->give_up, memory_order_relaxed))
                return false;
            if (now_seconds() > deadline) {
                atomic_store_explicit(&lines->give_up, 1, memory_order_relaxed);
                return false;
            }
            /* If the two ranks share a core, let the other one run. */
            if ((spins & 0xffff) == 0xffff)
                sched_yield();
        }
    }
}

void machine_measure_core_latency(struct bench_context *ctx)
{
    ctx->facts.core_latency_us = 0;
    if (ctx->nprocs < 2)
        return;
    MPI_Comm node;
    PMPI_Comm_split_type(ctx->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int node_rank, node_size;
    PMPI_Comm_rank(node, &node_rank);
    PMPI_Comm_size(node, &node_size);
    /* World rank 0 (node rank 0 of its node) and a rank of its node that
     * can run on another CPU (core_cpus_partner): where ranks outnumber
     * cores, world rank 1 may be bound to rank 0's core, and the ping-pong
     * then timed the scheduler (23 us for 4 ranks on a 2-core VM). Where
     * their masks overlap, the two keep to a CPU each while they measure. */
    cpu_set_t *masks = calloc((size_t)node_size, sizeof *masks), saved;
    if (!masks) {
        fprintf(stderr, "shoal-bench: out of memory\n");
        PMPI_Abort(ctx->comm, 2);
    }
    if (sched_getaffinity(0, sizeof saved, &saved) != 0)
        CPU_ZERO(&saved);
    PMPI_Allgather(&saved, (int)sizeof saved, MPI_BYTE, masks, (int)sizeof saved, MPI_BYTE, node);
    int partner = core_cpus_partner(masks, node_size);
    int cpu[2] = {-1, -1};
    if (partner > 0 && (core_cpus_disjoint(&masks[0], &masks[partner]) ||
                        !core_cpus_apart(&masks[0], -1, &masks[partner], -1, &cpu[0], &cpu[1])))
        cpu[0] = cpu[1] = -1;
    free(masks);
    bool pinned = false;
    int pair_rank = node_rank == 0 ? 0 : node_rank == partner ? 1 : -1;
    if (pair_rank >= 0 && cpu[pair_rank] >= 0) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu[pair_rank], &one);
        pinned = sched_setaffinity(0, sizeof one, &one) == 0;
    }
    /* World rank 0 is the node's rank 0 on its node only. */
    int world_rank0_here = ctx->rank == 0;
    PMPI_Allreduce(MPI_IN_PLACE, &world_rank0_here, 1, MPI_INT, MPI_MAX, node);
    bool measures = world_rank0_here && pair_rank >= 0 && partner > 0;

    struct pingpong_lines *lines = NULL;
    MPI_Win win;
    MPI_Aint bytes = node_rank == 0 ? (MPI_Aint)sizeof *lines : 0;
    PMPI_Win_allocate_shared(bytes, 1, MPI_INFO_NULL, node, &lines, &win);
    MPI_Aint size;
    int unit;
    PMPI_Win_shared_query(win, 0, &size, &unit, &lines);
    if (node_rank == 0) {
        atomic_store(&lines->ping, 0);
        atomic_store(&lines->pong, 0);
        atomic_store(&lines->give_up, 0);
    }
    PMPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    PMPI_Win_sync(win);
    PMPI_Barrier(ctx->comm);

    double best = -1;
    if (measures) {
        double deadline = now_seconds() + LATENCY_DEADLINE_S;
        uint64_t count = 0;
        bool ok = true;
        for (int batch = 0; batch < LATENCY_BATCHES && ok; batch++) {
            double start = now_seconds();
            for (int k = 0; k < LATENCY_ROUND_TRIPS && ok; k++) {
                count++;
                if (pair_rank == 0) {
                    atomic_store_explicit(&lines->ping, count, memory_order_release);
                    ok = wait_for(&lines->pong, count, lines, deadline);
                } else {
                    ok = wait_for(&lines->ping, count, lines, deadline);
                    atomic_store_explicit(&lines->pong, count, memory_order_release);
                }
            }
            double one_way = (now_seconds() - start) / LATENCY_ROUND_TRIPS / 2;
            if (ok && (best < 0 || one_way < best))
                best = one_way;
        }
        if (!ok)
            best = -1;
    }
    PMPI_Win_unlock_all(win);
    if (pinned)
        sched_setaffinity(0, sizeof saved, &saved);
    PMPI_Barrier(ctx->comm);
    PMPI_Win_free(&win);
    PMPI_Comm_free(&node);
    /* Rank 0's figure is the machine's. */
    PMPI_Bcast(&best, 1, MPI_DOUBLE, 0, ctx->comm);
    ctx->facts.core_latency_us = best > 0 ? 1e6 * best : 0;
}
