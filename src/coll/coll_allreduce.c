/* Allreduce. Algorithms (priced by the planner's table, src/planner):
 *   flat      every rank reduces every input: one synchronisation, each
 *             input read n times.
 *   sliced    each rank reduces a slice of every input, then every rank
 *             gets every slice (on a lane that can put, written into each
 *             result while in cache): each element reduced once.
 *   gathered  every input moved to every rank, reduced there (the only
 *             way on two-sided lanes, which have no views).
 * Elements are combined in rank order (coll_reduction.h). */
#include <string.h>

#include "coll_reduction.h"
static void allreduce_gathered(coll_team *t, const lane_ops *lane, const char *src, char *dst, size_t count,
                               size_t esize, core_reduce_fn fn)
{
    char *all = coll_temp(t, count * esize * (size_t)t->n);
    coll_gather_inputs(t, lane, src, count * esize, 0, count * esize, -1, all);
    coll_reduce_local(t, all, count, esize, fn, dst);
}

/* Every rank reduces every input: one synchronisation, n-fold reading. */
static void allreduce_flat(coll_team *t, const lane_ops *lane, const char *src, char *dst, size_t count, size_t esize,
                           core_reduce_fn fn)
{
    src = coll_exposable_input(t, lane, src, dst, count * esize);
    size_t per = coll_round_elements(t, lane, count, esize, 1);
    uint64_t done = 0;
    for (size_t base = 0; base < count; base += per) {
        size_t k = min_size(per, count - base);
        done = coll_reduce_slot0_round(t, lane, src + base * esize, k * esize, 0, k, esize, fn, dst + base * esize);
    }
    if (lane->single_copy)
        coll_wait_all(t, done);
}

/* On a lane that can put: rank i reduces slice i of every input and writes
 * each finished block into every rank's result while it is in cache. Safe
 * in place: only the reducer of a slice reads that slice of any input, and
 * it has read a block before it writes the block's result. */
static void allreduce_sliced_put(coll_team *t, const lane_ops *lane, const char *src, char *dst, size_t count,
                                 size_t esize, core_reduce_fn fn)
{
    int n = t->n, me = t->me;
    coll_round_begin(t, true, false);
    lane->expose(&t->lane, 0, src, count * esize);
    lane->expose(&t->lane, 1, dst, count * esize);
    uint64_t exposed = coll_next_epoch(t);
    coll_post(t, exposed);
    coll_wait_all(t, exposed);
    size_t lo = coll_slice_lo(count, n, me), hi = coll_slice_lo(count, n, me + 1);
    coll_block_sink everyone = {-1, lo * esize};
    coll_reduce_ranks(t, lane, 0, lo * esize, hi - lo, esize, fn, dst + lo * esize, src, &everyone);
    uint64_t done = coll_next_epoch(t);
    coll_post(t, done);
    coll_wait_all(t, done); /* all slices are in my buffer; nobody reads mine */
    coll_round_end(t, done);
}

/* Reduce-scatter then allgather: rank i reduces slice i of every input and
 * the others copy it; every element is reduced once and written once per rank. */
static void allreduce_sliced(coll_team *t, const lane_ops *lane, const char *src, char *dst, size_t count, size_t esize,
                             core_reduce_fn fn)
{
    int n = t->n, me = t->me;
    if (lane->put) {
        allreduce_sliced_put(t, lane, src, dst, count, esize, fn);
        return;
    }
    /* A round exposes its chunk of input plus this rank's slice of it. */
    size_t per = coll_window_elements(t, lane, count, esize, 1);
    if (!lane->single_copy)
        per = per * (size_t)n / (size_t)(n + 1);
    if (per == 0)
        per = 1;
    uint64_t done = 0;
    for (size_t base = 0; base < count; base += per) {
        size_t k = min_size(per, count - base);
        coll_round_begin(t, true, false);
        lane->expose(&t->lane, 0, src + base * esize, k * esize);
        uint64_t exposed = coll_next_epoch(t);
        coll_post(t, exposed);
        size_t lo = coll_slice_lo(k, n, me), hi = coll_slice_lo(k, n, me + 1);
        coll_wait_all_exposed(t, lane, 0, exposed, lo * esize, (hi - lo) * esize);

        char *mine = dst + (base + lo) * esize;
        coll_reduce_ranks(t, lane, 0, lo * esize, hi - lo, esize, fn, mine, src + base * esize, NULL);
        lane->expose(&t->lane, 1, mine, (hi - lo) * esize);
        uint64_t reduced = coll_next_epoch(t);
        coll_post(t, reduced);

        for (int i = 1; i < n; i++) {
            int p = coll_rank_plus(me, i, n);
            size_t plo = coll_slice_lo(k, n, p), phi = coll_slice_lo(k, n, p + 1);
            coll_wait(t, p, reduced);
            lane->fetch(&t->lane, p, 1, 0, dst + (base + plo) * esize, (phi - plo) * esize);
        }
        done = coll_next_epoch(t);
        coll_post(t, done);
        coll_round_end(t, done);
    }
    if (lane->single_copy)
        coll_wait_all(t, done);
}

typedef void (*allreduce_fn)(coll_team *t, const lane_ops *lane, const char *src, char *dst, size_t count, size_t esize,
                             core_reduce_fn fn);
static const allreduce_fn allreduce_algorithms[PLAN_ALGO_COUNT] = {
    [PLAN_ALLREDUCE_FLAT] = allreduce_flat,
    [PLAN_ALLREDUCE_SLICED] = allreduce_sliced,
    [PLAN_ALLREDUCE_GATHERED] = allreduce_gathered,
};

bool coll_allreduce_runs(plan_algo a) { return allreduce_algorithms[a] != NULL; }

void coll_allreduce(coll_team *t, const void *sbuf, void *rbuf, size_t count, core_type type, core_op op)
{
    size_t esize = core_type_size(type);
    core_reduce_fn fn = core_reduce_kernel(type, op);
    const char *src = sbuf ? sbuf : rbuf;
    if (coll_reduce_trivially(t, src, rbuf, count, count * esize))
        return;
    const coll_choice *ch = coll_plan_reading(t, CORE_COLL_ALLREDUCE, count * esize, src, count * esize);
    allreduce_fn run = allreduce_algorithms[ch->plan.algo];
    if (ch->lane->two_sided) /* no views: the inputs must move */
        run = allreduce_gathered;
    (run ? run : allreduce_sliced)(t, ch->lane, src, rbuf, count, esize, fn);
}
