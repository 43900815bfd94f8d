/* The planner's figures at MPI_Init, and the ranks' agreement on them.
 *
 *   probe_check probe      no tuning file: MPI_Init probed the node; the
 *                          figures are measured, plausible and the same on
 *                          every rank, and shoal runs collectives with them
 *   probe_check defaults   SHOAL_PROBE=0: the built-in figures
 *   probe_check file       a tuning file each rank writes before MPI_Init:
 *                          its figures, no probe
 *   probe_check settings   one rank has another SHOAL_ALGO: shoal is off on
 *                          every rank, nothing hangs, results are right
 *   probe_check disable    SHOAL_DISABLE=1 on one rank only: the same
 *   probe_check apart      (4 ranks or more) ranks 0 and 1 keep to one CPU,
 *                          the others to another, before MPI_Init: the probe
 *                          times rank 0 with rank 2, which runs beside it
 *                          (SHOAL_VERBOSE says which ranks; the test reads it)
 *   probe_check onecpu     every rank keeps to one CPU: no probe (no two
 *                          ranks can run at once), the built-in figures
 *   probe_check model      after MPI_Init one rank plans with other figures:
 *                          a communicator made then goes to the host MPI on
 *                          every rank; one made once they agree again is
 *                          shoal's
 * Every collective result is compared with the host MPI's. Linked with
 * shoal's internals (shoal_mpi), as the shoal command is, to read and set the
 * model. */
#include <math.h>
#include <mpi.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plan_model.h"
#include "shoal.h"

static int failures;

static void expect(bool ok, int rank, const char *what)
{
    if (!ok) {
        fprintf(stderr, "rank %d: FAIL %s\n", rank, what);
        failures++;
    }
}

/* The rank the launcher gave this process, before MPI_Init can tell. */
static int launcher_rank(void)
{
    const char *names[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"};
    for (int i = 0; i < 3; i++) {
        const char *v = getenv(names[i]);
        if (v && *v)
            return atoi(v);
    }
    fprintf(stderr, "probe_check: the launcher names no rank (OMPI_COMM_WORLD_RANK, PMI_RANK)\n");
    exit(2);
}

/* Bcast, allreduce and allgather of a few sizes up to 1 MiB on comm, each
 * against the host's; returns how many of them shoal ran. */
static int check_collectives(MPI_Comm comm)
{
    int rank, size, by_shoal = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    static const int counts[] = {1, 1000, 1 << 18}; /* floats: 4 B, 4 KB, 1 MiB */
    for (int c = 0; c < 3; c++) {
        int n = counts[c];
        float *in = malloc(sizeof(float) * (size_t)n), *out = malloc(sizeof(float) * (size_t)n * (size_t)size),
              *ref = malloc(sizeof(float) * (size_t)n * (size_t)size);
        for (int i = 0; i < n; i++)
            in[i] = (float)((i * 7 + rank * 13) % 101);

        memcpy(out, in, sizeof(float) * (size_t)n);
        MPI_Bcast(out, n, MPI_FLOAT, size - 1, comm);
        by_shoal += shoal_last_choice(NULL, NULL);
        memcpy(ref, in, sizeof(float) * (size_t)n);
        PMPI_Bcast(ref, n, MPI_FLOAT, size - 1, comm);
        expect(!memcmp(out, ref, sizeof(float) * (size_t)n), rank, "bcast result");

        MPI_Allreduce(in, out, n, MPI_FLOAT, MPI_MAX, comm);
        by_shoal += shoal_last_choice(NULL, NULL);
        PMPI_Allreduce(in, ref, n, MPI_FLOAT, MPI_MAX, comm);
        expect(!memcmp(out, ref, sizeof(float) * (size_t)n), rank, "allreduce result");

        MPI_Allgather(in, n, MPI_FLOAT, out, n, MPI_FLOAT, comm);
        by_shoal += shoal_last_choice(NULL, NULL);
        PMPI_Allgather(in, n, MPI_FLOAT, ref, n, MPI_FLOAT, comm);
        expect(!memcmp(out, ref, sizeof(float) * (size_t)n * (size_t)size), rank, "allgather result");
        free(in);
        free(out);
        free(ref);
    }
    return by_shoal;
}

/* Collectives on a fresh duplicate of MPI_COMM_WORLD; how many shoal ran. */
static int on_a_dup(void)
{
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    int ran = check_collectives(dup);
    MPI_Comm_free(&dup);
    return ran;
}

/* Before MPI_Init: this process keeps to the first of the CPUs it may run
 * on if first_cpu, else to the second (CPUs 0 and 1 where the launcher bound
 * it to one); exits 77 (skipped) where it cannot. */
static void keep_to_cpu(bool first_cpu)
{
    cpu_set_t mask, one;
    if (sched_getaffinity(0, sizeof mask, &mask) != 0 || CPU_COUNT(&mask) < 2) {
        CPU_ZERO(&mask);
        CPU_SET(0, &mask);
        CPU_SET(1, &mask);
    }
    int seen = 0;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, &mask) || seen++ != (first_cpu ? 0 : 1))
            continue;
        CPU_ZERO(&one);
        CPU_SET(c, &one);
        if (sched_setaffinity(0, sizeof one, &one) != 0) {
            fprintf(stderr, "probe_check: skipped, cannot keep to CPU %d\n", c);
            exit(77);
        }
        return;
    }
}

/* Every rank plans with the built-in figures. */
static void check_builtin(int rank, const char *why)
{
    const plan_model *m = plan_model_get();
    plan_model defaults;
    plan_model_defaults(&defaults);
    expect(m->origin == PLAN_ORIGIN_DEFAULTS, rank, why);
    expect(plan_model_fingerprint(m) == plan_model_fingerprint(&defaults), rank, "the figures are the built-in ones");
    expect(on_a_dup() == 9, rank, "shoal runs every checked collective");
}

static bool plausible(double v, double lo, double hi) { return isfinite(v) && v >= lo && v <= hi; }

/* Every rank's model has the same fingerprint as this one's. */
static bool same_everywhere(const plan_model *m)
{
    uint64_t mine = plan_model_fingerprint(m), lo = 0, hi = 0;
    PMPI_Allreduce(&mine, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
    PMPI_Allreduce(&mine, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    return lo == mine && hi == mine;
}

static void check_probe(int rank)
{
    const plan_model *m = plan_model_get();
    expect(m->origin == PLAN_ORIGIN_MEASURED, rank, "the figures were probed at MPI_Init");
    expect(strstr(m->source, "probed") != NULL, rank, "the model says where its figures come from");
    expect(same_everywhere(m), rank, "every rank plans with the same probed figures");
    plan_model defaults;
    plan_model_defaults(&defaults);
    expect(plan_model_fingerprint(m) != plan_model_fingerprint(&defaults), rank,
           "probed figures replace the built-in ones");
    /* Rates in bytes per ns (GB/s), times in ns: wide bounds, any machine. */
    expect(plausible(m->copy_bw, 0.1, 2000) && plausible(m->copy_mem_bw, 0.1, 2000) &&
               plausible(m->reduce_bw, 0.1, 2000),
           rank, "core rates between 0.1 and 2000 GB/s");
    expect(plausible(m->sync_ns, 1, 1e7), rank, "a sync between 1 ns and 10 ms");
    const lane_cost *cells = &m->lane[LANE_CELLS];
    expect(plausible(cells->bw_dedicated + cells->bw_shared, 0.05, 2000) && plausible(cells->latency_ns, 0, 1e7) &&
               plausible(cells->overhead_ns, 0, 1e7),
           rank, "cells lane figures plausible");
    const lane_cost *cma = &m->lane[LANE_CMA];
    expect(plausible(cma->bw_dedicated + cma->bw_shared, 0.05, 2000) && plausible(cma->latency_ns, 0, 1e7), rank,
           "cma lane figures plausible");
    const lane_cost *host = &m->lane[LANE_HOST];
    expect(!memcmp(host, &defaults.lane[LANE_HOST], sizeof *host), rank, "the host lane keeps its built-in figures");
    expect(on_a_dup() == 9, rank, "shoal runs every checked collective with probed figures");
}

/* Before MPI_Init: a tuning file with figures unlike the defaults, one per
 * process (same contents), named in SHOAL_TUNING_FILE; in the working
 * directory (the build tree), removed at the end. */
static void write_tuning_file(char *path, size_t len)
{
    plan_model m;
    plan_model_defaults(&m);
    m.copy_bw = 12.5;
    m.lane[LANE_CELLS].bw_dedicated = 7.25;
    snprintf(path, len, "probe-check-%d.tuning.json", (int)getpid());
    if (plan_model_save(&m, path) != 0) {
        fprintf(stderr, "probe_check: cannot write %s\n", path);
        exit(2);
    }
    setenv("SHOAL_TUNING_FILE", path, 1);
}

static void check_file(int rank, const char *path)
{
    const plan_model *m = plan_model_get();
    expect(m->origin == PLAN_ORIGIN_FILE, rank, "the tuning file's figures are used");
    expect(!strcmp(m->source, path), rank, "the model names the file");
    expect(m->copy_bw == 12.5 && m->lane[LANE_CELLS].bw_dedicated == 7.25, rank, "the file's figures, not probed ones");
    expect(on_a_dup() == 9, rank, "shoal runs every checked collective");
}

static void check_off(int rank)
{
    expect(!shoal_enabled(), rank, "shoal is off when the ranks' settings differ");
    expect(on_a_dup() == 0, rank, "every collective goes to the host MPI");
}

static void check_model(int rank)
{
    expect(shoal_enabled(), rank, "shoal is on");
    plan_model saved = *plan_model_get(), other = saved;
    if (rank == 1) {
        other.copy_bw *= 2;
        plan_model_use(&other);
    }
    expect(on_a_dup() == 0, rank, "a communicator whose ranks plan differently goes to the host MPI");
    if (rank == 1)
        plan_model_use(&saved);
    expect(on_a_dup() == 9, rank, "once they plan alike again, shoal runs a new communicator");
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    char path[512] = "";
    if (!strcmp(mode, "file")) {
        write_tuning_file(path, sizeof path);
    } else if (!strcmp(mode, "settings")) {
        if (launcher_rank() == 1)
            setenv("SHOAL_ALGO", "bcast:tree", 1);
    } else if (!strcmp(mode, "apart")) {
        keep_to_cpu(launcher_rank() < 2);
    } else if (!strcmp(mode, "onecpu")) {
        keep_to_cpu(true);
    } else if (!strcmp(mode, "disable")) {
        if (launcher_rank() == 1)
            setenv("SHOAL_DISABLE", "1", 1);
    }
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        if (rank == 0)
            fprintf(stderr, "probe_check: needs 2 ranks or more\n");
        MPI_Finalize();
        return 2;
    }
    if (!strcmp(mode, "probe") || !strcmp(mode, "apart"))
        check_probe(rank);
    else if (!strcmp(mode, "defaults"))
        check_builtin(rank, "SHOAL_PROBE=0 leaves the built-in figures");
    else if (!strcmp(mode, "onecpu"))
        check_builtin(rank, "ranks on one CPU leave the built-in figures");
    else if (!strcmp(mode, "file"))
        check_file(rank, path);
    else if (!strcmp(mode, "settings") || !strcmp(mode, "disable"))
        check_off(rank);
    else if (!strcmp(mode, "model"))
        check_model(rank);
    else {
        if (rank == 0)
            fprintf(stderr, "usage: probe_check probe|apart|onecpu|defaults|file|settings|disable|model\n");
        MPI_Finalize();
        return 2;
    }
    if (path[0])
        unlink(path);
    int total = 0;
    PMPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("probe_check %s: %d ranks, %d failures\n", mode, size, total);
    MPI_Finalize();
    return total ? 1 : 0;
}
