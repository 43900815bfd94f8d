/* Reduce_scatter_block and reduce_scatter (blocks of their own sizes,
 * planned at the mean block). Algorithms (priced by the planner's table):
 *   own       each rank reduces its own block where the inputs are: on a
 *             windowed lane an input that fits one round goes out whole as
 *             slot 0 and each rank reads its block at its offset.
 *   gathered  each block moved to its rank, reduced there (the only way on
 *             two-sided lanes, which have no views).
 * Both take a flag, not a function: own and gathered share their set-up. */
#include <string.h>

#include "coll_reduction.h"
static void rsb_gathered(coll_team *t, const lane_ops *lane, const char *src, char *dst, size_t count, size_t esize,
                         core_reduce_fn fn)
{
    char *all = coll_temp(t, count * esize * (size_t)t->n);
    coll_gather_inputs(t, lane, src, count * esize * (size_t)t->n, (size_t)t->me * count * esize, count * esize, -1,
                       all);
    coll_reduce_local(t, all, count, esize, fn, dst);
}

/* Rank i reduces block i of every input into out, in rounds that take up to
 * what fits the window of every block. Block b: counts[b] elements from
 * element firsts[b] of the input, or (counts NULL) `uniform` elements from
 * b * uniform. */
static void reduce_own_blocks(coll_team *t, const lane_ops *lane, const char *src, char *out, const size_t *counts,
                              const size_t *firsts, size_t uniform, size_t esize, core_reduce_fn fn)
{
    int n = t->n, me = t->me;
#define BLOCK_COUNT(b) (counts ? counts[b] : uniform)
#define BLOCK_FIRST(b) (firsts ? firsts[b] : (size_t)(b)*uniform)
    /* When a whole input fits one round of a windowed lane, it goes out as
     * one slot (slot 0: found through its note, small ones inside it) and
     * each rank reads its block at its offset, as scatter's readers do: the
     * note spares the slot tables and the flag waits of one slot per block. */
    size_t total_bytes = (BLOCK_FIRST(n - 1) + BLOCK_COUNT(n - 1)) * esize, window = lane->window(&t->lane);
    if (window != SIZE_MAX && total_bytes + CORE_CACHELINE <= window) {
        coll_reduce_slot0_round(t, lane, src, total_bytes, BLOCK_FIRST(me) * esize, BLOCK_COUNT(me), esize, fn, out);
        return;
    }
    size_t largest = 0;
    for (int b = 0; b < n; b++)
        if (BLOCK_COUNT(b) > largest)
            largest = BLOCK_COUNT(b);
    size_t per = coll_round_elements(t, lane, largest, esize, (size_t)n);
    uint64_t done = 0;
    for (size_t base = 0; base < largest; base += per) {
        coll_round_begin(t, true, false);
        for (int b = 0; b < n; b++) {
            size_t k = base < BLOCK_COUNT(b) ? min_size(per, BLOCK_COUNT(b) - base) : 0;
            lane->expose(&t->lane, b, k ? src + (BLOCK_FIRST(b) + base) * esize : src, k * esize);
        }
        uint64_t exposed = coll_next_epoch(t);
        done = coll_next_epoch(t);
        /* A rank whose block has ended reads nothing this round: one post
         * says it has exposed and is done (on a single-copy lane its
         * readers are waited for after the last round). */
        if (base < BLOCK_COUNT(me)) {
            coll_post(t, exposed);
            coll_wait_all(t, exposed);
            coll_reduce_ranks(t, lane, me, 0, min_size(per, BLOCK_COUNT(me) - base), esize, fn, out + base * esize,
                              src + (BLOCK_FIRST(me) + base) * esize, NULL);
        }
        coll_post(t, done);
        coll_round_end(t, done);
    }
#undef BLOCK_COUNT
#undef BLOCK_FIRST
    if (lane->single_copy)
        coll_wait_all(t, done);
}

/* The algorithms of both collectives; an absent row is own. */
static const bool rs_algorithms[PLAN_ALGO_COUNT] = {
    [PLAN_RSB_OWN] = true,
    [PLAN_RSB_GATHERED] = true,
};

bool coll_reduce_scatter_runs(plan_algo a) { return rs_algorithms[a]; }

/* Gathered, or on a two-sided lane (no views: the inputs must move). */
static bool reduces_gathered(const coll_choice *ch)
{
    return ch->plan.algo == PLAN_RSB_GATHERED || ch->lane->two_sided;
}

/* Rank i reduces block i of every input. */
void coll_reduce_scatter_block(coll_team *t, const void *sbuf, void *rbuf, size_t count, core_type type, core_op op)
{
    size_t esize = core_type_size(type);
    core_reduce_fn fn = core_reduce_kernel(type, op);
    const char *src = sbuf ? sbuf : rbuf;
    if (coll_reduce_trivially(t, src, rbuf, count, count * esize))
        return;
    const coll_choice *ch =
        coll_plan_reading(t, CORE_COLL_REDUCE_SCATTER_BLOCK, count * esize, src, count * esize * (size_t)t->n);
    const lane_ops *lane = ch->lane;
    if (reduces_gathered(ch)) {
        rsb_gathered(t, lane, src, rbuf, count, esize, fn);
        return;
    }
    /* In place on a single-copy lane, peers read block 0 of my buffer while
     * I would write my result there: reduce into a temporary first. */
    bool deferred = lane->single_copy && src == rbuf;
    char *out = deferred ? coll_temp(t, count * esize) : rbuf;
    reduce_own_blocks(t, lane, src, out, NULL, NULL, count, esize, fn);
    if (deferred)
        memcpy(rbuf, out, count * esize);
}

/* ---- reduce_scatter: blocks of different sizes ---- */

static void rs_gathered(coll_team *t, const lane_ops *lane, const char *src, char *dst, const size_t *counts,
                        const size_t *firsts, size_t total, size_t esize, core_reduce_fn fn)
{
    size_t mine = counts[t->me];
    char *all = coll_temp(t, mine * esize * (size_t)t->n + 1);
    coll_gather_inputs(t, lane, src, total * esize, firsts[t->me] * esize, mine * esize, -1, all);
    coll_reduce_local(t, all, mine, esize, fn, dst);
}

/* As reduce_scatter_block, with blocks of their own sizes. */
void coll_reduce_scatter(coll_team *t, const void *sbuf, void *rbuf, const size_t *counts, const size_t *firsts,
                         core_type type, core_op op)
{
    int n = t->n, me = t->me;
    size_t esize = core_type_size(type), total = firsts[n - 1] + counts[n - 1];
    core_reduce_fn fn = core_reduce_kernel(type, op);
    const char *src = sbuf ? sbuf : rbuf;
    if (coll_reduce_trivially(t, src, rbuf, total, counts[0] * esize))
        return;
    /* Priced at the mean block, in whole elements: a vector shorter than
     * the team must not look like no data at all (cma would be free). */
    const coll_choice *ch = coll_plan(t, CORE_COLL_REDUCE_SCATTER, (total + (size_t)n - 1) / (size_t)n * esize);
    const lane_ops *lane = ch->lane;
    if (reduces_gathered(ch)) {
        /* Nobody reads my input once it is gathered: in place is safe. */
        rs_gathered(t, lane, src, rbuf, counts, firsts, total, esize, fn);
        return;
    }
    /* In place, my result would overwrite the start of my input while peers
     * still read blocks there: reduce into a temporary first. */
    bool deferred = src == rbuf;
    char *out = deferred ? coll_temp(t, counts[me] * esize + 1) : rbuf;
    reduce_own_blocks(t, lane, src, out, counts, firsts, 0, esize, fn);
    if (deferred)
        memcpy(rbuf, out, counts[me] * esize);
}
