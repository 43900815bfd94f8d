/* shim: the MPI interposition layer.
 *
 * Owns: the MPI_* entry points shoal exports (through the PMPI profiling
 * interface), per-communicator state cached as an MPI attribute, the mapping
 * of MPI datatypes and operations to core types, argument checks, and the
 * pass-through to PMPI for whatever shoal does not handle.
 *
 * Rule: a call goes to PMPI unchanged unless every argument is valid and
 * shoal handles the case; then the host MPI never sees it. Invalid
 * arguments therefore meet the host MPI's own error handling.
 *
 * May call: every lower layer, and PMPI. */
#ifndef SHOAL_SHIM_H
#define SHOAL_SHIM_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

#include "coll.h"
#include "core.h"

/* ---- process-wide state (shim_init.c) ---- */

/* True between a successful MPI_Init* and MPI_Finalize, unless SHOAL_DISABLE. */
extern bool shim_active;
/* Ranks of MPI_COMM_WORLD on this node, and the cores they may use. */
extern int shim_node_ranks, shim_node_cores;

/* Turns shoal on once the host MPI is initialised (once per process; a
 * collective over MPI_COMM_WORLD), and off before it is finalised. */
void shim_start(void);
void shim_stop(void);

/* True when shoal should try to handle this collective at all. */
static inline bool shim_wants(core_coll c)
{
    return shim_active && !(core_config_get()->disabled_colls & (1u << c));
}

/* ---- communicators (shim_comm.c) ---- */

/* WARMING: the first SHOAL_COMM_WARMUP collectives, counted in `calls`,
 * go to the host MPI; shoal builds its state at the next one. */
typedef enum { SHIM_WARMING, SHIM_PASS, SHIM_TEAM } shim_mode;

/* The host lane's state for one team (shim_host_lane.c). */
typedef struct shim_host_state {
    MPI_Comm parent; /* the user's communicator */
    MPI_Comm comm;   /* its private duplicate, made at the lane's first use */
    MPI_Request *reqs;
    int nreqs, cap;
} shim_host_state;

extern const lane_ops shim_host_lane;
/* Frees the private communicator (collective) and the request list. */
void shim_host_release(shim_host_state *st);

typedef struct shim_comm {
    shim_mode mode;
    long calls; /* intercepted collectives so far, while WARMING */
    MPI_Comm comm;
    int size, rank;
    coll_team team;
    uint64_t team_id; /* names the team alike on its ranks, for parking */
    shim_host_state host;
    /* per-call scratch owned by the wrappers */
    size_t *sizes;        /* 4 * size entries for v-variants */
    void *pack[2];        /* packing buffers for non-dense datatypes */
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

/* ---- datatypes and operations (shim_types.c) ---- */

void shim_types_init(void);

/* Memory layout of count elements of a datatype as shoal moves them. */
typedef struct shim_layout {
    size_t size;      /* bytes of data per element (MPI_Type_size) */
    MPI_Aint extent;  /* distance between consecutive elements */
    MPI_Aint lb;      /* where an element's bytes begin, from its address */
    bool dense;       /* an element is its size bytes at lb, elements abut */
} shim_layout;

/* False for MPI_DATATYPE_NULL or a handle MPI rejects. */
bool shim_layout_of(MPI_Datatype type, shim_layout *out);

/* Reductions: the core type and op for a predefined datatype and a
 * predefined operation valid on it (MPI 5.9.2); false otherwise. */
bool shim_reduction_of(MPI_Datatype type, MPI_Op op, core_type *ctype, core_op *cop);

#endif
