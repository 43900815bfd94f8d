#include "sim_mpi.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int started;

int sim_mpi_launched(void)
{
    static const char *vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS", "PMI_RANK", NULL};
    for (int i = 0; vars[i]; i++)
        if (getenv(vars[i]))
            return 1;
    return 0;
}

void sim_mpi_start(int *argc, char ***argv, int *rank, int *size)
{
    *rank = 0;
    *size = 1;
    if (!sim_mpi_launched())
        return;
    MPI_Init(argc, argv);
    started = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
}

void sim_mpi_stop(void)
{
    if (started)
        MPI_Finalize();
    started = 0;
}

int sim_mpi_alltoall(const sim_topo *t, const sim_params *p, const int32_t *map, int flit_level,
                     sim_alltoall_result *res, sim_err *err)
{
    int rank = 0, size = 1;
    if (started) {
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &size);
    }
    sim_run_opts opts = {flit_level, rank, size};
    sim_err local;
    memset(&local, 0, sizeof local);
    int rc = sim_run_alltoall(t, p, map, &opts, res, &local);
    if (size == 1) {
        if (rc && err)
            *err = local;
        return rc;
    }
    /* agree on failure first, so no rank waits in a reduction that never comes */
    int bad_rank = rc ? rank : size, first_bad;
    MPI_Allreduce(&bad_rank, &first_bad, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first_bad < size) {
        char msg[SIM_ERR_LEN];
        snprintf(msg, sizeof msg, "%s", local.msg);
        MPI_Bcast(msg, SIM_ERR_LEN, MPI_CHAR, first_bad, MPI_COMM_WORLD);
        if (!rc)
            sim_alltoall_result_free(res);
        return sim_fail(err, SIM_EINVAL, "rank %d: %s", first_bad, msg);
    }
    int np = res->nphases, nchan = sim_topo_nchan(t);
    int64_t *buf = calloc((size_t)np * 3, sizeof *buf), *sum = calloc((size_t)np * 3, sizeof *sum);
    int64_t *chan = calloc((size_t)nchan, sizeof *chan);
    if (!buf || !sum || !chan) {
        free(buf), free(sum), free(chan);
        MPI_Abort(MPI_COMM_WORLD, 1); /* cannot agree on anything without memory */
    }
    for (int i = 0; i < np; i++) {
        buf[3 * i] = res->ph[i].simulated;
        buf[3 * i + 1] = res->ph[i].cycles;
        buf[3 * i + 2] = res->ph[i].flit_hops;
    }
    MPI_Reduce(buf, sum, np * 3, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(res->chan_flits, chan, nchan, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    int64_t total = res->total_cycles, total_max = 0;
    MPI_Reduce(&total, &total_max, 1, MPI_INT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
    double wall = res->wall_seconds, wall_max = 0;
    MPI_Reduce(&wall, &wall_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int i = 0; i < np; i++) {
            res->ph[i].simulated = (int)sum[3 * i];
            res->ph[i].cycles = sum[3 * i + 1];
            res->ph[i].flit_hops = sum[3 * i + 2];
        }
        memcpy(res->chan_flits, chan, sizeof *chan * (size_t)nchan);
        res->total_cycles = total_max;
        res->wall_seconds = wall_max;
        sim_alltoall_summarise(p, res);
    }
    free(buf), free(sum), free(chan);
    return 0;
}

void sim_mpi_bcast_map(int32_t *map, int n, int *rc)
{
    if (!started)
        return;
    MPI_Bcast(rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (*rc == 0)
        MPI_Bcast(map, n, MPI_INT32_T, 0, MPI_COMM_WORLD);
}
