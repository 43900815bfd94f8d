/* planner: chooses, per call, the algorithm and the lane of a collective.
 *
 * Owns every threshold; no other layer compares a size against a constant.
 * The choice depends only on what every rank of the call knows alike (the
 * collective, the bytes, the rank count, the lanes usable on the team), so
 * all ranks choose the same. SHOAL_ALGO and SHOAL_LANES force a choice.
 *
 * May call: core, lanes. */
#ifndef SHOAL_PLAN_H
#define SHOAL_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "core.h"
#include "lane.h"

typedef enum {
    PLAN_BARRIER_FLAT,          /* everyone posts, everyone waits for all */
    PLAN_BARRIER_DISSEMINATION, /* log2(n) rounds, one peer each */
    PLAN_BCAST_FLAT,            /* every rank reads from the root */
    PLAN_BCAST_TREE,            /* k-ary tree, pipelined in chunks */
    PLAN_REDUCE_FLAT,           /* the root reduces every input */
    PLAN_REDUCE_TREE,           /* binomial tree over contiguous rank ranges */
    PLAN_REDUCE_SLICED,         /* each rank reduces a slice, the root collects */
    PLAN_ALLREDUCE_FLAT,        /* every rank reduces every input */
    PLAN_ALLREDUCE_SLICED,      /* reduce-scatter then allgather */
    PLAN_MOVE_PULL,             /* data movement: readers fetch */
    PLAN_MOVE_PUSH,             /* data movement: writers put (single-copy lanes) */
    PLAN_ALGO_COUNT
} plan_algo;

const char *plan_algo_name(plan_algo a);

typedef struct plan_query {
    core_coll coll;
    size_t bytes;       /* the per-rank payload: message (bcast, reduce, allreduce),
                           block per rank (gather, allgather, scatter, alltoall, rsb) */
    int n;              /* ranks in the team */
    bool cma_usable;    /* the single-copy lane works on this team */
    size_t window;      /* cells lane window per round */
} plan_query;

typedef struct plan_choice {
    plan_algo algo;
    const lane_ops *lane;
    int fanout;         /* trees: children per node */
    size_t chunk;       /* pipelining / cache blocking unit, bytes */
    /* v-variants, whose sizes no rank knows in full beforehand: a rank whose
     * data is at most eager_limit bytes sends it with the size headers on
     * `lane`; if any rank's data is larger, all move it on large_lane. */
    size_t eager_limit;
    const lane_ops *large_lane;
} plan_choice;

plan_choice plan_choose(const plan_query *q);

/* Bytes reduced per step: inputs of this size stay in the core's cache. */
#define PLAN_REDUCE_BLOCK (65536)

#endif
