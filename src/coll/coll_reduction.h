/* The reduction machinery shared by the reducing collectives' files
 * (coll_reduce.c, coll_allreduce.c, coll_reduce_scatter.c, coll_scan.c); not part of the
 * layer's API. Every element is combined in rank order, ((x0 op x1) op x2)
 * ..., so results never depend on timing. */
#ifndef SHOAL_COLL_REDUCTION_H
#define SHOAL_COLL_REDUCTION_H

#include "coll_internal.h"

/* Where coll_reduce_ranks also puts each finished block, while it is still in
 * cache: slot 1 of rank `rank` (-1: of every other rank), from byte `off` on. */
typedef struct coll_block_sink {
    int rank;
    size_t off;
} coll_block_sink;

/* Handles the calls with nothing to reduce: no elements (total 0), or a team
 * of one (own bytes of src copied to rbuf unless they are the same). True
 * when it did, and the caller returns. */
bool coll_reduce_trivially(coll_team *t, const char *src, void *rbuf, size_t total, size_t own);

/* out[0, count) = in_0 op in_1 op ... op in_{n-1}, where in_j is rank j's
 * slot `slot` from byte offset `off`, block by block; with a sink each block
 * is also put there (out NULL: only there). */
void coll_reduce_ranks(coll_team *t, const lane_ops *lane, int slot, size_t off, size_t count, size_t esize,
                       core_reduce_fn fn, void *out, const char *mine, const coll_block_sink *sink);
/* The same over the first `ranks` ranks alone (1 <= ranks <= n), without a
 * sink; a lone peer's input (exscan) is fetched straight into out. */
void coll_reduce_first_ranks(coll_team *t, const lane_ops *lane, int slot, size_t off, size_t count, size_t esize,
                             core_reduce_fn fn, void *out, const char *mine, int ranks);
/* The input to expose on lane for a result written to dst: src, or where a
 * single-copy lane's readers would read it while the result overwrites it
 * (in place), a copy of its `bytes` in the team's temporary. */
const char *coll_exposable_input(coll_team *t, const lane_ops *lane, const char *src, const char *dst, size_t bytes);
/* Elements per round when each rank exposes `pieces` buffers of that many. */
size_t coll_window_elements(coll_team *t, const lane_ops *lane, size_t count, size_t esize, size_t pieces);
/* The same for callers that only cap their rounds with it (no divides when all fits). */
size_t coll_round_elements(coll_team *t, const lane_ops *lane, size_t count, size_t esize, size_t pieces);
/* One round: every rank exposes `in` as slot 0, reduces k elements from byte
 * `off` of every exposure into out; returns the round's done epoch. */
uint64_t coll_reduce_slot0_round(coll_team *t, const lane_ops *lane, const char *in, size_t in_bytes, size_t off,
                                 size_t k, size_t esize, core_reduce_fn fn, char *out);
/* out = all[0] op ... op all[n-1], each `count` elements. */
void coll_reduce_local(coll_team *t, const char *all, size_t count, size_t esize, core_reduce_fn fn, char *out);
/* The same over all[0 .. ranks-1] (1 <= ranks <= n). */
void coll_reduce_local_first(coll_team *t, const char *all, size_t count, size_t esize, core_reduce_fn fn, char *out,
                             int ranks);
/* Moves `bytes` from byte `mine` of every rank's slot 0 into all[p * bytes];
 * only `to` reads when >= 0. */
void coll_gather_inputs(coll_team *t, const lane_ops *lane, const char *src, size_t exposed, size_t mine, size_t bytes,
                        int to, char *all);

#endif
