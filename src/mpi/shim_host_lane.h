/* shim_host_lane: the `host` lane (shim_host_lane.c), two-sided transfers by
 * PMPI_Isend/Irecv on a private duplicate of the team's communicator,
 * which the MPI layer plugs into each team it builds.
 *
 * May call: every lower layer, and PMPI. */
#ifndef SHOAL_SHIM_HOST_LANE_H
#define SHOAL_SHIM_HOST_LANE_H

#include <mpi.h>

#include "lane.h"

/* The host lane's state for one team. */
typedef struct shim_host_state {
    MPI_Comm parent; /* the user's communicator */
    MPI_Comm comm;   /* its private duplicate, made at the lane's first use */
    MPI_Request *reqs;
    int nreqs, cap;
} shim_host_state;

extern const lane_ops shim_host_lane;
/* Frees the private communicator (collective) and the request list. */
void shim_host_release(shim_host_state *st);

#endif
