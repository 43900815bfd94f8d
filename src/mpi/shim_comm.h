/* shim_comm: per-communicator state (shim_comm.c), cached as an MPI
 * attribute: the warm-up count, the team once built (through coll_team_create
 * with PMPI calls as its out-of-band means), the parking of freed
 * communicators' teams for later communicators of the same ranks, and the
 * ranks' agreement that they plan alike.
 *
 * May call: every lower layer, and PMPI. */
#ifndef SHOAL_SHIM_COMM_H
#define SHOAL_SHIM_COMM_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coll.h"
#include "shim_host_lane.h"

/* WARMING: the first SHOAL_COMM_WARMUP collectives, counted in `calls`,
 * go to the host MPI; shoal builds its state at the next one. */
typedef enum { SHIM_WARMING, SHIM_PASS, SHIM_TEAM } shim_mode;

typedef struct shim_comm {
    shim_mode mode;
    long calls; /* intercepted collectives so far, while WARMING */
    MPI_Comm comm;
    int size, rank;
    coll_team team;
    uint64_t team_id; /* names the team alike on its ranks, for parking */
    shim_host_state host;
    /* per-call scratch owned by the wrappers */
    size_t *sizes; /* 4 * size entries for v-variants */
    void *pack[2]; /* packing buffers for non-dense datatypes */
    size_t pack_size[2];
    struct shim_comm *next;
} shim_comm;

/* The state of comm, created at its first intercepted collective and built
 * up after SHOAL_COMM_WARMUP of them (collective over comm: every rank
 * counts the same calls). NULL when this call goes to the host MPI. */
shim_comm *shim_comm_team(MPI_Comm comm);
/* The same without the warm-up (tools that measure the team itself). */
shim_comm *shim_comm_team_now(MPI_Comm comm);
void shim_comm_setup_keyval(void);
void shim_comm_release_all(void);
/* Drops comm's cached state, if any (before MPI frees comm). */
void shim_comm_forget(MPI_Comm comm);
/* Grow-only scratch buffer i of the communicator. */
void *shim_comm_scratch(shim_comm *sc, int i, size_t size);

/* Ranks must plan alike: the fingerprint of this rank's settings and model
 * (cached where each is read), and whether each of n values is the same on
 * every rank of comm (one MPI_Allreduce; collective). */
uint64_t shim_plans_fingerprint(void);
void shim_all_alike(const uint64_t *values, bool *alike, int n, MPI_Comm comm);

#endif
