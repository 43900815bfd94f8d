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
#include "plan_fit.h"

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
static inline bool shim_wants(core_coll c) { return shim_active && !(core_config_get()->disabled_colls & (1u << c)); }

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

/* ---- measuring the node (shim_probe.c) ---- */

/* The cost model's figures are measured, never guessed: `shoal tune` measures
 * them thoroughly and writes the tuning file; without one, MPI_Init probes
 * the node briefly (shim_probe_startup). Both measure with what follows. */

/* Timing alike on every rank of comm: batches of iterations, all ranks
 * starting together; a batch's time per iteration is the slowest rank's.
 * Ranks that are not active never call fn and wait asleep rather than
 * polling, so that with more ranks than cores the cores go to the measured. */
typedef struct shim_timing {
    MPI_Comm comm;
    int batches;     /* timed batches per point (1 to SHIM_MAX_BATCHES); the median is kept */
    double batch_ns; /* aimed length of one batch */
    bool fastest;    /* keep the fastest batch instead: for short probes, which noise only slows */
    bool idle_polls; /* ranks sitting out poll instead of sleeping: every rank has a core */
} shim_timing;
#define SHIM_MAX_BATCHES 64
typedef void (*shim_timed_fn)(void *arg);

/* A timed function: one barrier on the coll_team `team` points to (NULL:
 * this rank sits out). */
void shim_time_barrier(void *team);

/* Median (or fastest) batch time of fn (collective over o->comm; the same
 * on every rank). */
double shim_time_ns(const shim_timing *o, shim_timed_fn fn, void *arg, bool active);
/* Its parts: iterations per batch of about o->batch_ns, one batch's time per
 * iteration, the batch count, the median (reorders v). */
long shim_time_iters(const shim_timing *o, shim_timed_fn fn, void *arg, bool active);
double shim_time_batch(const shim_timing *o, shim_timed_fn fn, void *arg, long iters, bool active);
int shim_time_batches(const shim_timing *o);
double shim_median(double *v, int n);

/* How much to measure: MPI_Init's probe (milliseconds), shoal tune --quick,
 * shoal tune. */
typedef enum { SHIM_PROBE_STARTUP, SHIM_PROBE_QUICK, SHIM_PROBE_FULL } shim_probe_depth;

typedef struct shim_lane_sample {
    lane_id lane;
    plan_sample s;
} shim_lane_sample;

/* A measurement of the node by the ranks of timing.comm, which pair up:
 * ranks 2k and 2k+1 of it form pair k. */
typedef struct shim_node_probe {
    shim_timing timing;
    shim_probe_depth depth;
    int rank;        /* in timing.comm */
    shim_comm *pair; /* this rank's pair's team; NULL: an odd rank out */
    int pair_index;
    int cores;                 /* cores the node's ranks run on */
    int max_movers;            /* lanes are timed with 1, 2, 4 ... up to this many ranks moving at once
                                 (MPI_Init's probe: 2 only, the latency with 1) */
    bool lanes[LANE_COUNT];    /* the lanes to measure (usable on every pair) */
    shim_lane_sample *samples; /* every lane timing, when not NULL (shoal tune --samples) */
    int nsamples, max_samples;
} shim_node_probe;

/* One core's copy rates (in cache, and beyond it) and float-sum rate, timed
 * on rank 0; sync_ns, a barrier of pair 0. Collective over timing.comm; the
 * figures are the same on every rank. */
void shim_probe_core(shim_node_probe *p, plan_model *m);
/* Times every lane in p->lanes over its sizes and fits its figures into m;
 * fitted[l] says whether lane l could be fitted (else m keeps its figures).
 * Collective over timing.comm; the same result on every rank. */
void shim_probe_lanes(shim_node_probe *p, plan_model *m, bool fitted[LANE_COUNT]);

/* MPI_Init's probe: when no tuning file was read (SHOAL_PROBE), ranks 0 and
 * 1 of the node measure the core and the shared-memory lanes and every rank
 * of the node plans with those figures. Collective over node. */
void shim_probe_startup(MPI_Comm node);

/* ---- datatypes and operations (shim_types.c) ---- */

void shim_types_init(void);

/* Memory layout of count elements of a datatype as shoal moves them. */
typedef struct shim_layout {
    size_t size;     /* bytes of data per element (MPI_Type_size) */
    MPI_Aint extent; /* distance between consecutive elements */
    MPI_Aint lb;     /* where an element's bytes begin, from its address */
    bool dense;      /* an element is its size bytes at lb, elements abut */
} shim_layout;

/* False for MPI_DATATYPE_NULL or a handle MPI rejects. */
bool shim_layout_of(MPI_Datatype type, shim_layout *out);

/* Reductions: the core type and op for a predefined datatype and a
 * predefined operation valid on it (MPI 5.9.2); false otherwise. */
bool shim_reduction_of(MPI_Datatype type, MPI_Op op, core_type *ctype, core_op *cop);

#endif
