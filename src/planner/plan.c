#include "plan.h"

#include <string.h>

static const char *const algo_names[PLAN_ALGO_COUNT] = {
    [PLAN_BARRIER_FLAT] = "flat", [PLAN_BARRIER_DISSEMINATION] = "dissemination",
    [PLAN_BCAST_FLAT] = "flat", [PLAN_BCAST_TREE] = "tree",
    [PLAN_REDUCE_FLAT] = "flat", [PLAN_REDUCE_TREE] = "tree", [PLAN_REDUCE_SLICED] = "sliced",
    [PLAN_ALLREDUCE_FLAT] = "flat", [PLAN_ALLREDUCE_SLICED] = "sliced",
    [PLAN_MOVE_PULL] = "pull", [PLAN_MOVE_PUSH] = "push",
};

const char *plan_algo_name(plan_algo a) { return (unsigned)a < PLAN_ALGO_COUNT ? algo_names[a] : "?"; }

/* ---- the thresholds (measured on a 2-core x86 node; the tuner of the
 * cost-model issue replaces them with figures measured per machine) ---- */

/* Below this many bytes per transfer the cells lane beats a system call. */
#define CELLS_MAX_BYTES (16 * 1024)
/* Every rank reducing everything beats two synchronisations below this. */
#define ALLREDUCE_FLAT_MAX_BYTES (8 * 1024)
#define REDUCE_FLAT_MAX_BYTES (16 * 1024)
/* Flat barrier / bcast / reduce up to this many ranks, trees above. */
#define FLAT_MAX_RANKS 8
#define TREE_FANOUT 4
#define PIPELINE_CHUNK (256 * 1024)

/* Algorithms that are valid for a collective, for SHOAL_ALGO. */
static bool algo_fits(core_coll c, plan_algo a)
{
    switch (c) {
    case CORE_COLL_BARRIER: return a == PLAN_BARRIER_FLAT || a == PLAN_BARRIER_DISSEMINATION;
    case CORE_COLL_BCAST: return a == PLAN_BCAST_FLAT || a == PLAN_BCAST_TREE;
    case CORE_COLL_REDUCE: return a == PLAN_REDUCE_FLAT || a == PLAN_REDUCE_TREE || a == PLAN_REDUCE_SLICED;
    case CORE_COLL_ALLREDUCE: return a == PLAN_ALLREDUCE_FLAT || a == PLAN_ALLREDUCE_SLICED;
    case CORE_COLL_REDUCE_SCATTER_BLOCK: return false;
    default: return a == PLAN_MOVE_PULL || a == PLAN_MOVE_PUSH;
    }
}

/* SHOAL_ALGO="allreduce:flat,bcast:tree": the forced algorithm for c, or -1. */
static int forced_algo(core_coll c)
{
    const char *spec = core_config_get()->algo;
    const char *name = core_coll_name(c);
    size_t len = strlen(name);
    for (const char *p = spec; p && *p;) {
        if (!strncmp(p, name, len) && p[len] == ':') {
            const char *v = p + len + 1;
            size_t vlen = strcspn(v, ",");
            for (int a = 0; a < PLAN_ALGO_COUNT; a++)
                if (strlen(algo_names[a]) == vlen && !strncmp(v, algo_names[a], vlen) && algo_fits(c, a))
                    return a;
            core_log_warn_once("SHOAL_ALGO: '%.*s' is not an algorithm of %s; ignored", (int)vlen, v, name);
            return -1;
        }
        p = strchr(p, ',');
        if (p)
            p++;
    }
    return -1;
}

static const lane_ops *forced_lane(bool cma_usable)
{
    const char *lanes = core_config_get()->lanes;
    if (!lanes[0])
        return NULL;
    if (!strcmp(lanes, "cells"))
        return &lane_cells;
    if (!strcmp(lanes, "cma")) {
        if (cma_usable)
            return &lane_cma;
        core_log_warn_once("SHOAL_LANES=cma but single copy is not usable here; using the planner's choice");
        return NULL;
    }
    core_log_warn_once("SHOAL_LANES=%s is not a lane (cells, cma); ignored", lanes);
    return NULL;
}

plan_choice plan_choose(const plan_query *q)
{
    plan_choice ch = {.algo = PLAN_MOVE_PULL, .lane = &lane_cells, .fanout = TREE_FANOUT, .chunk = PIPELINE_CHUNK};
    bool big = q->cma_usable && q->bytes > CELLS_MAX_BYTES;
    if (big)
        ch.lane = &lane_cma;

    switch (q->coll) {
    case CORE_COLL_BARRIER:
        ch.algo = q->n <= FLAT_MAX_RANKS ? PLAN_BARRIER_FLAT : PLAN_BARRIER_DISSEMINATION;
        break;
    case CORE_COLL_BCAST:
        ch.algo = q->n <= FLAT_MAX_RANKS ? PLAN_BCAST_FLAT : PLAN_BCAST_TREE;
        break;
    case CORE_COLL_REDUCE:
        if (q->bytes <= REDUCE_FLAT_MAX_BYTES)
            ch.algo = q->n <= FLAT_MAX_RANKS ? PLAN_REDUCE_FLAT : PLAN_REDUCE_TREE;
        else
            ch.algo = PLAN_REDUCE_SLICED;
        break;
    case CORE_COLL_ALLREDUCE:
        ch.algo = q->bytes <= ALLREDUCE_FLAT_MAX_BYTES ? PLAN_ALLREDUCE_FLAT : PLAN_ALLREDUCE_SLICED;
        break;
    case CORE_COLL_GATHER:
    case CORE_COLL_GATHERV:
        ch.algo = ch.lane->put ? PLAN_MOVE_PUSH : PLAN_MOVE_PULL;
        break;
    default:
        ch.algo = PLAN_MOVE_PULL;
        break;
    }

    const lane_ops *lane = forced_lane(q->cma_usable);
    if (lane)
        ch.lane = lane;
    if (q->coll == CORE_COLL_GATHERV || q->coll == CORE_COLL_SCATTERV || q->coll == CORE_COLL_ALLTOALLV) {
        ch.lane = lane ? lane : &lane_cells;
        ch.large_lane = lane ? lane : (q->cma_usable ? &lane_cma : &lane_cells);
        ch.eager_limit = lane == &lane_cells ? q->window : CELLS_MAX_BYTES;
    }
    int algo = forced_algo(q->coll);
    if (algo >= 0)
        ch.algo = (plan_algo)algo;
    if (ch.algo == PLAN_MOVE_PUSH && !ch.lane->put)
        ch.algo = PLAN_MOVE_PULL;
    return ch;
}
