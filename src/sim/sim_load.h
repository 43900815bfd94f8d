/* sim_load: the link-load (analytic) engine. For a set of messages it counts
 * how many messages cross every directed router-to-router link (a link's
 * weight); for a phase, W_i is the largest weight; for an all-to-all, W is the
 * mean of W_i over the N-1 phases and 1/W the throughput bound. Two ways to
 * count: tracing every path hop by hop through sim_route (any topology) and
 * difference arrays along each ring (tori and meshes, O(dimensions) per
 * message); they must agree, and the tests check that they do.
 * Owns: sim_load_ctx, sim_load_phase, the closed-form estimate.
 * May call: sim_route, sim_topo, sim_traffic, sim_common, pthreads. */
#ifndef SIM_LOAD_H
#define SIM_LOAD_H

#include "sim_route.h"

typedef struct {
    int phase;           /* stride of the phase (1..N-1), or 0 for a free pattern */
    int nmsg;            /* messages that enter the network */
    int32_t W;           /* largest link weight; at least 1 when nmsg > 0 (every injection link carries one) */
    int32_t nmax;        /* links that carry W messages */
    int64_t hops;        /* router-to-router link traversals, summed over messages */
    int32_t max_routers; /* most routers on one message's path (ideal time of the phase) */
} sim_load_phase;

typedef struct {
    const sim_router_fn *rf;
    int fast;      /* 1 when difference arrays apply (tori and meshes) */
    int32_t *load; /* weight of every router-to-router link, dense index (topo->ninter) */
    int32_t *diff; /* difference arrays: per dimension and direction, per line, K+1 entries */
    int64_t diff_off[2 * SIM_MAX_DIMS + 1];
    int32_t *path; /* scratch for traced paths */
    int path_max;
} sim_load_ctx;

int sim_load_ctx_init(sim_load_ctx *c, const sim_router_fn *rf, sim_err *err);
void sim_load_ctx_free(sim_load_ctx *c);

/* Counts the messages src[i] -> dst[i] (physical nodes) into c->load and
 * summarises them. Uses difference arrays where they apply. */
void sim_load_pairs(sim_load_ctx *c, int nmsg, const int32_t *src, const int32_t *dst, sim_load_phase *out);
/* The same by tracing each path hop by hop (the reference). */
void sim_load_pairs_traced(sim_load_ctx *c, int nmsg, const int32_t *src, const int32_t *dst, sim_load_phase *out);

/* Every phase of an all-to-all under `map` (logical -> physical): phases[s-1]
 * for stride s = 1..N-1. chan_total (topo->ninter entries, may be NULL)
 * receives the number of messages per link summed over all phases. Phases are
 * shared among `threads` threads. */
int sim_load_alltoall(const sim_router_fn *rf, const int32_t *map, int threads, sim_load_phase *phases,
                      int64_t *chan_total, sim_err *err);

/* The source paper's closed-form uniform-stride throughput estimate for a
 * k-ary n-cube, min(4/K, 1), with K the largest radix; 1 for fat trees. It
 * counts links only and is not a bound under dimension-order routing. */
double sim_load_paper_estimate(const sim_topo *t);

/* Average-load bound of one phase: W_i can never be below hops / links, so
 * the throughput of the phase is at most min(1, links / hops). */
double sim_load_avg_bound(const sim_topo *t, const sim_load_phase *ph);

#endif
