/* coll: collective algorithms on a node team.
 *
 * Owns: each collective as a small named function over the lanes, chosen by
 * the planner. Sizes are bytes, or element counts with a core_type. A NULL
 * send buffer (or, for scatter, receive buffer) means "in place", with MPI's
 * meaning for that collective. Results never depend on timing: reductions run
 * in rank order.
 *
 * May call: core, lanes, planner. Never MPI. */
#ifndef SHOAL_COLL_H
#define SHOAL_COLL_H

#include <stddef.h>

#include "coll_team.h"
#include "core.h"

/* What the planner chose for the last collective this thread ran through
 * shoal, NULL after coll_forget_choice() (the call went to the host MPI). */
typedef struct coll_ran {
    plan_algo algo;
    lane_id lane, stripe;
    plan_inputs inputs; /* what the inputs were priced as */
    double model_ns;
} coll_ran;
const coll_ran *coll_last_choice(void);
void coll_forget_choice(void);

/* Whether the host MPI's own run of collective c of `bytes` on t was
 * measured faster than shoal's choice (plan_choice.host_faster): the MPI
 * layer asks before it calls, and leaves such a call to the host. Alike on
 * every rank; the call's plan is cached for the call that follows. */
bool coll_host_faster(coll_team *t, core_coll c, size_t bytes);

/* Whether this layer can run algorithm a of collective c: every algorithm
 * the planner offers for c must (tests/unit/test_planner.c checks). */
bool coll_runs(core_coll c, plan_algo a);

void coll_barrier(coll_team *t);

/* One transfer on a given lane, for measuring lanes (shoal tune): this rank
 * exposes len bytes of send and, when recv is not NULL, takes len bytes from
 * peer's exposure into recv. Called by every rank of the team with the same
 * lane and len; ranks outside the exchange pass peer -1. */
void coll_exchange(coll_team *t, lane_id lane, int peer, const void *send, void *recv, size_t len);
void coll_bcast(coll_team *t, void *buf, size_t bytes, int root);

/* sbuf == NULL at the root: the root's input is in rbuf. rbuf only at root. */
void coll_reduce(coll_team *t, const void *sbuf, void *rbuf, size_t count, core_type type, core_op op, int root);
/* sbuf == NULL: the input is in rbuf. */
void coll_allreduce(coll_team *t, const void *sbuf, void *rbuf, size_t count, core_type type, core_op op);
/* count elements per rank; sbuf == NULL: the n*count input is in rbuf. */
void coll_reduce_scatter_block(coll_team *t, const void *sbuf, void *rbuf, size_t count, core_type type, core_op op);
/* Block i is counts[i] elements from element firsts[i] of the input (the
 * blocks back to back, as MPI_Reduce_scatter lays them); rank i gets block
 * i's reduction. sbuf == NULL: the input is in rbuf. */
void coll_reduce_scatter(coll_team *t, const void *sbuf, void *rbuf, const size_t *counts, const size_t *firsts,
                         core_type type, core_op op);

/* rbuf = the inputs of ranks 0 .. me reduced in rank order (inclusive, as
 * MPI_Scan), or of ranks 0 .. me-1 (as MPI_Exscan: rank 0's rbuf is left
 * alone). sbuf == NULL: the input is in rbuf. */
void coll_scan(coll_team *t, const void *sbuf, void *rbuf, size_t count, core_type type, core_op op, bool inclusive);

/* sbuf == NULL at the root: its block is already at rbuf + root * bytes. */
void coll_gather(coll_team *t, const void *sbuf, size_t bytes, void *rbuf, int root);
/* rbytes/roffs: per-rank sizes and byte offsets in rbuf, read at the root only.
 * sbuf == NULL at the root: its block is already in place. */
void coll_gatherv(coll_team *t, const void *sbuf, size_t sbytes, void *rbuf, const size_t *rbytes, const size_t *roffs,
                  int root);
/* sbuf == NULL: my block is already at rbuf + me * bytes. */
void coll_allgather(coll_team *t, const void *sbuf, size_t bytes, void *rbuf);
void coll_allgatherv(coll_team *t, const void *sbuf, size_t sbytes, void *rbuf, const size_t *rbytes,
                     const size_t *roffs);
/* rbuf == NULL at the root: it keeps its block in sbuf. */
void coll_scatter(coll_team *t, const void *sbuf, size_t bytes, void *rbuf, int root);
void coll_scatterv(coll_team *t, const void *sbuf, const size_t *sbytes, const size_t *soffs, void *rbuf, size_t rbytes,
                   int root);
/* sbuf == NULL: the send blocks are in rbuf and are replaced. */
void coll_alltoall(coll_team *t, const void *sbuf, size_t bytes, void *rbuf);
void coll_alltoallv(coll_team *t, const void *sbuf, const size_t *sbytes, const size_t *soffs, void *rbuf,
                    const size_t *rbytes, const size_t *roffs);

#endif
