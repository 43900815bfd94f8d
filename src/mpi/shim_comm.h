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
 * go to the host MPI; shoal builds its state at the next one. TEAM: the
 * communicator lies within a node and has a team; NODES: it spans nodes
 * (shim_nodes.h). */
typedef enum { SHIM_WARMING, SHIM_PASS, SHIM_TEAM, SHIM_NODES } shim_mode;

/* Size classes of long messages across nodes, powers of two of their
 * bytes from SHIM_NODES_FIRST_CLASS, each with the segment size its
 * bcast, reduce and allreduce are cut into. */
#define SHIM_NODES_FIRST_CLASS 17
#define SHIM_NODES_CLASSES 18

/* A communicator spanning nodes: its node part and its leaders. */
typedef struct shim_nodes {
    MPI_Comm node;    /* this rank's node part, in the communicator's order */
    MPI_Comm leaders; /* every node's first rank, numbering the nodes; MPI_COMM_NULL on the others */
    int count;        /* nodes */
    int my_node, local, node_size;
    int *where; /* per rank of the communicator: its node, its rank in that node's part */
    /* Node-major order: node by node, each node's ranks in order. Node i's
     * first rank there is first[i] (first[count]: the rank count); counts
     * and offsets are per-call scratch for the leaders' v-collectives. */
    int *first, *counts, *offsets;
    int *rank_at;                      /* per place in node-major order: the rank there */
    int *local_counts, *local_offsets; /* per rank of this node: per-call scratch for node v-steps */
    bool contiguous;                   /* node-major order is the communicator's */
    char *stage[5];                    /* per-call buffers: blocks in node-major order, regrouped ones */
    size_t stage_size[5];
    /* Per size class, bytes per segment of a bcast, reduce and allreduce
     * (0: not cut), alike on every rank (agreed when the state is built). */
    uint64_t segment[3][SHIM_NODES_CLASSES];
    /* Per collective, bit k: a call of 2^k to 2^(k+1)-1 bytes per rank (bit
     * 0: also none) is the host MPI's, flat, as priced or as shoal tune
     * --link timed it on this layout (plan_node_choose); alike on every
     * rank. timed: the latter (rank 0's model has this layout's timings). */
    uint64_t flat[CORE_COLL_COUNT];
    uint64_t timed;
    /* What SHOAL_VERBOSE has said on this communicator, so that a call
     * does not format a line again (a microsecond each): bit k of
     * said_flat as in flat; said_plan the text said of each collective. */
    uint64_t said_flat[CORE_COLL_COUNT];
    const char *said_plan[CORE_COLL_COUNT];
    /* Per collective (bcast, reduce, allreduce), bit k as in flat: it runs
     * on rails (plan_node_price) where every node holds as many ranks
     * (even); rail: the ranks of this rank's place in every node, numbered
     * by node, made at the first such call. */
    uint64_t rails[CORE_COLL_COUNT];
    bool even;
    MPI_Comm rail;
    /* Every node's last rank, numbered by node (scans), made at the first
     * scan (tails_open); MPI_COMM_NULL on the other ranks. */
    MPI_Comm tails;
    bool tails_open;
    /* Competitive bcasts, from the first on: shoal's own copy of the
     * communicator for their messages, a ring of claim slots in memory the
     * node's ranks share (an MPI shared window), requests for the root. */
    MPI_Comm p2p;
    MPI_Win claim_window;
    struct shim_node_claim *claims;
    MPI_Request *root_requests;
    uint64_t first_bcasts; /* competitive bcasts so far */
    /* The leaders' all-to-all: the node of each logical node (a mapping:
     * SHOAL_ALLTOALL_MAP, else the nodes' order), this node's logical
     * number, and per-call offsets of what goes to and comes from each
     * node (count + 1 each). */
    int *phase_node, my_logical;
    size_t *out_at, *in_at;
} shim_nodes;

typedef struct shim_comm {
    shim_mode mode;
    long calls; /* intercepted collectives so far, while WARMING */
    MPI_Comm comm;
    int size, rank;
    coll_team team;
    uint64_t team_id; /* names the team alike on its ranks, for parking */
    shim_host_state host;
    shim_nodes nodes; /* NODES */
    /* per-call scratch owned by the wrappers */
    size_t *sizes; /* 4 * size entries for v-variants */
    void *pack[2]; /* packing buffers for non-dense datatypes */
    size_t pack_size[2];
    struct shim_comm *next;
} shim_comm;

/* The state of comm, created at its first intercepted collective and taken
 * over after SHOAL_COMM_WARMUP of them (at once if at_once; collective over
 * comm: every rank counts the same calls): mode TEAM or NODES. NULL when
 * this call goes to the host MPI. */
shim_comm *shim_comm_taken(MPI_Comm comm, bool at_once);
/* comm's team, taken over now: NULL unless comm lies within one node
 * (tools that measure the team itself). */
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
