/* sim_map: the rank mapper. Searches a mapping of logical ranks to physical
 * nodes that lowers W (the mean over all-to-all phases of the largest link
 * weight): an optional greedy construction (ranks placed one by one where
 * they add the least weight), then simulated annealing over swaps of two
 * ranks, seeded and reproducible. Link weights of every phase are kept up to
 * date incrementally (a swap touches at most four messages per phase), with a
 * histogram per phase so the phase maximum is maintained in O(1).
 * Owns: sim_map_result, the search.
 * May call: sim_load (evaluation), sim_route, sim_traffic, sim_params, sim_rng, pthreads. */
#ifndef SIM_MAP_H
#define SIM_MAP_H

#include "sim_route.h"

typedef struct {
    double W_start;  /* W of the mapping given to the search */
    double W_greedy; /* W of the greedy construction, 0 when skipped */
    double W_final;  /* W of the result; never above W_start */
    int64_t moves, accepted, improved;
    int started_from_greedy;
    int greedy_skipped; /* network too large for the greedy step */
    int best_chain;     /* the annealing chain whose mapping won */
    double seconds;
} sim_map_result;

/* Mean W of an all-to-all under map (link-load engine). */
int sim_map_eval(const sim_topo *t, const sim_params *p, const int32_t *map, double *W, sim_err *err);

/* Improves map in place. Uses p->map_iters, map_t0, map_t1, map_greedy,
 * map_chains (independent annealing chains, spread over p->threads), seed.
 * The result depends on seed and map_chains only, never on threads. */
int sim_map_search(const sim_topo *t, const sim_params *p, int32_t *map, sim_map_result *res, sim_err *err);

/* Test hook: makes `moves` random swaps from the identity and compares the
 * fast energy-change evaluation with applying the swap; returns the number of
 * disagreements (the first described in err), or -1 on error. */
int sim_map_selfcheck(const sim_topo *t, const sim_params *p, int moves, uint64_t seed, sim_err *err);

#endif
