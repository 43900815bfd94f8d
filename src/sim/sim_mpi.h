/* sim_mpi: the optional multi-machine driver. The same command line runs on
 * one process or under the host MPI's launcher; with more than one rank the
 * selected all-to-all phases are dealt out round-robin to the ranks (each using
 * its own threads) and the results are summed at rank 0. The engines never
 * call MPI; this file is the only one that does.
 * Owns: MPI start-up detection, the phase reduction.
 * May call: sim_run, MPI. */
#ifndef SIM_MPI_H
#define SIM_MPI_H

#include "sim_run.h"

/* 1 when the process was started by an MPI launcher (mpirun/mpiexec). */
int sim_mpi_launched(void);

/* Initialises MPI when launched by one; otherwise rank 0 of 1. */
void sim_mpi_start(int *argc, char ***argv, int *rank, int *size);
void sim_mpi_stop(void);

/* sim_run_alltoall over every rank; rank 0 ends with the whole result. An
 * error on any rank fails every rank with that rank's message. */
int sim_mpi_alltoall(const sim_topo *t, const sim_params *p, const int32_t *map, int flit_level,
                     sim_alltoall_result *res, sim_err *err);

/* Rank 0's mapping (and its status) to every rank; no-op without MPI. */
void sim_mpi_bcast_map(int32_t *map, int n, int *rc);

#endif
