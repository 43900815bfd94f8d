/* shim_probe: measuring the node (shim_probe.c): timing alike on every rank
 * of a communicator, the core's and the lanes' figures, and MPI_Init's
 * probe, which `shoal tune` and the library share.
 *
 * The cost model's figures are measured, never guessed: `shoal tune` measures
 * them thoroughly and writes the tuning file; without one, MPI_Init probes
 * the node briefly (shim_probe_startup). Both measure with what follows.
 *
 * May call: every lower layer, and PMPI. */
#ifndef SHOAL_SHIM_PROBE_H
#define SHOAL_SHIM_PROBE_H

#include <mpi.h>
#include <sched.h>
#include <stdbool.h>

#include "lane.h"
#include "plan_fit.h"
#include "shim_comm.h"

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

/* MPI_Init's probe: when no tuning file was read (SHOAL_PROBE), node rank 0
 * and a rank that can run beside it on another CPU measure the core and the
 * shared-memory lanes, and every rank of the node plans with those figures.
 * masks: every node rank's affinity mask, in node rank order. Collective
 * over node. */
void shim_probe_startup(MPI_Comm node, const cpu_set_t *masks);

#endif
