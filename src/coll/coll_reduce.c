/* Reduce. Algorithms (priced by the planner's table, src/planner):
 *   flat      the root reduces every input: n-1 inputs on one core (at
 *             two ranks on single copy, reading the other's whole first).
 *   tree      binomial tree over contiguous rank ranges: log2 n levels,
 *             each a wait, a read of the child's partial and a reduction.
 *   sliced    each rank reduces a slice of every input, the root collects
 *             the slices (on a lane that can put, they write into it).
 *   gathered  the inputs moved to the root, reduced there (the only way on
 *             two-sided lanes, which have no views).
 * Elements are combined in rank order (coll_reduction.h; the tree in a
 * fixed grouping of rank ranges), so results never depend on timing. */
#include <string.h>

#include "coll_reduction.h"
static void reduce_gathered(coll_team *t, const coll_choice *ch, const char *src, char *dst, size_t count, size_t esize,
                            core_reduce_fn fn, int root)
{
    const lane_ops *lane = ch->lane;
    char *all = t->me == root ? coll_temp(t, count * esize * (size_t)t->n) : NULL;
    coll_gather_inputs(t, lane, src, count * esize, 0, count * esize, root, all);
    if (t->me == root)
        coll_reduce_local(t, all, count, esize, fn, dst);
}

/* At two ranks, the root of a whole-input plan (PLAN_READ_WHOLE) reads the
 * other rank's input in one transfer into its result (or, reducing in
 * place, a temporary), lets that rank go, then reduces in place: the other
 * leaves after the transfer, as it leaves the host MPI's reduce once its
 * message is received, instead of after the root's reduction too. Operands
 * in rank order. */
static void reduce_read_whole(coll_team *t, const lane_ops *lane, const char *src, char *dst, size_t count,
                              size_t esize, core_reduce_fn fn, int root)
{
    size_t bytes = count * esize;
    coll_round_begin(t, t->me != root, t->me != root);
    if (t->me != root)
        lane->expose(&t->lane, 0, src, bytes);
    uint64_t exposed = coll_next_epoch(t), done = coll_next_epoch(t);
    if (t->me == root) {
        char *other = src == dst ? coll_temp(t, bytes) : dst;
        coll_wait_all_exposed(t, lane, 0, exposed, 0, bytes);
        lane->fetch(&t->lane, 1 - root, 0, 0, other, bytes);
        coll_post(t, done);
        fn(dst, root == 0 ? src : other, root == 0 ? other : src, count);
    } else {
        coll_post(t, done);
        coll_wait(t, root, done);
    }
    coll_round_end(t, done);
}

/* The root reduces every input. */
static void reduce_flat(coll_team *t, const coll_choice *ch, const char *src, char *dst, size_t count, size_t esize,
                        core_reduce_fn fn, int root)
{
    const lane_ops *lane = ch->lane;
    if (ch->plan.chunk == PLAN_READ_WHOLE && t->n == 2 && lane->single_copy) {
        reduce_read_whole(t, lane, src, dst, count, esize, fn, root);
        return;
    }
    size_t per = coll_round_elements(t, lane, count, esize, 1);
    uint64_t done = 0;
    for (size_t base = 0; base < count; base += per) {
        size_t k = min_size(per, count - base);
        /* The root reads its own input where it is: exposing it would be a
         * wasted copy into the cells. */
        coll_round_begin(t, t->me != root, base + per >= count && t->me != root);
        if (t->me != root)
            lane->expose(&t->lane, 0, src + base * esize, k * esize);
        uint64_t exposed = coll_next_epoch(t);
        done = coll_next_epoch(t);
        if (t->me == root) {
            /* The root exposes nothing: its first post would tell nobody
             * anything, only take its flag line back from a polling peer. */
            coll_wait_all_exposed(t, lane, 0, exposed, 0, k * esize);
            coll_reduce_ranks(t, lane, 0, 0, k, esize, fn, dst + base * esize, src + base * esize, NULL);
        }
        /* Non-roots read nothing: exposed and done at once. */
        coll_post(t, done);
        coll_round_end(t, done);
    }
    if (lane->single_copy && t->me != root)
        coll_wait(t, root, done);
}

/* Binomial tree over contiguous rank ranges, rooted at rank 0: rank r
 * combines its input with the partial results of r+1, r+2, r+4, ... (the
 * ranges [r+1], [r+2, r+4), [r+4, r+8) ...), in that order, and exposes the
 * result to its parent r - lowbit(r). A root other than 0 fetches rank 0's. */
static void reduce_tree(coll_team *t, const coll_choice *ch, const char *src, char *dst, size_t count, size_t esize,
                        core_reduce_fn fn, int root)
{
    const lane_ops *lane = ch->lane;
    int n = t->n, me = t->me;
    int span = me ? me & -me : n; /* my range is [me, me + span) */
    bool has_children = me + 1 < n && span > 1;
    bool exposes = me != 0 || root != 0;
    size_t per = coll_round_elements(t, lane, count, esize, 1);
    char *partial = has_children ? coll_temp(t, min_size(per, count) * esize) : NULL;
    size_t block = PLAN_REDUCE_BLOCK / esize * esize;
    uint64_t done = 0;
    for (size_t base = 0; base < count; base += per) {
        size_t k = min_size(per, count - base), bytes = k * esize;
        const char *mine = src + base * esize;
        uint64_t ready = t->epoch + 1;
        coll_round_begin(t, exposes, base + per >= count && !has_children);
        if (has_children) {
            /* Rank 0 as the root writes straight into the result. */
            char *acc = me == root ? dst + base * esize : partial;
            for (int step = 1; step < span && me + step < n; step <<= 1) {
                int child = me + step;
                coll_wait_exposed(t, lane, child, 0, ready, 0, bytes);
                for (size_t off = 0; off < bytes; off += block) {
                    size_t len = min_size(block, bytes - off);
                    const void *b = lane->view(&t->lane, child, 0, off, len, t->block[2]);
                    fn(acc + off, step == 1 ? mine + off : acc + off, b, len / esize);
                }
            }
            mine = acc;
        }
        if (exposes)
            lane->expose(&t->lane, 0, mine, bytes);
        coll_post(t, coll_next_epoch(t));
        if (me == root && root != 0) {
            coll_wait_exposed(t, lane, 0, 0, ready, 0, bytes);
            lane->fetch(&t->lane, 0, 0, 0, dst + base * esize, bytes);
        }
        done = coll_next_epoch(t);
        coll_post(t, done);
        coll_round_end(t, done);
    }
    /* Whoever reads my exposure (my parent; for rank 0 the root) must be done. */
    if (lane->single_copy && exposes)
        coll_wait(t, me ? me - (me & -me) : root, done);
}

/* Slice i of a sliced reduce: non-roots also deliver their slice to the
 * root, a third step besides reading the inputs and reducing them, so the
 * root takes a larger slice (weight 3 against 2) and nobody waits idle. */
static void reduce_slice(size_t count, int n, int root, int i, size_t *lo, size_t *hi)
{
    size_t total = 2 * (size_t)n + 1, before = 2 * (size_t)i + (i > root ? 1 : 0);
    size_t mine = i == root ? 3 : 2;
    *lo = count * before / total;
    *hi = count * (before + mine) / total;
}

/* Each rank reduces one slice of the vector; the root collects the slices,
 * by putting them into its buffer on lanes that can, else by reading them. */
static void reduce_sliced(coll_team *t, const coll_choice *ch, const char *src, char *dst, size_t count, size_t esize,
                          core_reduce_fn fn, int root)
{
    const lane_ops *lane = ch->lane;
    int n = t->n, me = t->me;
    bool push = lane->put != NULL;
    size_t per = coll_window_elements(t, lane, count, esize, 1);
    if (!lane->single_copy)
        per = per * (size_t)n / (size_t)(n + 1);
    if (per == 0)
        per = 1;
    char *slice_buf =
        me == root || push ? NULL : coll_temp(t, (min_size(per, count) * 2 / (2 * (size_t)n + 1) + 2) * esize);
    uint64_t done = 0;
    for (size_t base = 0; base < count; base += per) {
        size_t k = min_size(per, count - base);
        coll_round_begin(t, true, false);
        lane->expose(&t->lane, 0, src + base * esize, k * esize);
        if (push && me == root)
            lane->expose(&t->lane, 1, dst + base * esize, k * esize);
        uint64_t exposed = coll_next_epoch(t);
        coll_post(t, exposed);
        size_t lo, hi;
        reduce_slice(k, n, root, me, &lo, &hi);
        size_t bytes = (hi - lo) * esize;
        coll_wait_all_exposed(t, lane, 0, exposed, lo * esize, bytes);

        if (me == root) {
            coll_reduce_ranks(t, lane, 0, lo * esize, hi - lo, esize, fn, dst + (base + lo) * esize, src + base * esize,
                              NULL);
        } else if (push) {
            /* Each block goes to the root while it is still in cache. */
            coll_block_sink sink = {root, lo * esize};
            coll_reduce_ranks(t, lane, 0, lo * esize, hi - lo, esize, fn, NULL, src + base * esize, &sink);
        } else {
            coll_reduce_ranks(t, lane, 0, lo * esize, hi - lo, esize, fn, slice_buf, src + base * esize, NULL);
            lane->expose(&t->lane, 1, slice_buf, bytes);
        }
        uint64_t reduced = coll_next_epoch(t);
        coll_post(t, reduced);
        if (me == root && !push) {
            for (int p = 0; p < n; p++) {
                if (p == root)
                    continue;
                size_t plo, phi;
                reduce_slice(k, n, root, p, &plo, &phi);
                coll_wait(t, p, reduced);
                lane->fetch(&t->lane, p, 1, 0, dst + (base + plo) * esize, (phi - plo) * esize);
            }
        }
        done = coll_next_epoch(t);
        coll_post(t, done);
        coll_round_end(t, done);
    }
    /* Everyone read everyone's input; the root also received every slice. */
    if (lane->single_copy)
        coll_wait_all(t, push ? done - 1 : done);
}

typedef void (*reduce_fn)(coll_team *t, const coll_choice *ch, const char *src, char *dst, size_t count, size_t esize,
                          core_reduce_fn fn, int root);
static const reduce_fn reduce_algorithms[PLAN_ALGO_COUNT] = {
    [PLAN_REDUCE_FLAT] = reduce_flat,
    [PLAN_REDUCE_TREE] = reduce_tree,
    [PLAN_REDUCE_SLICED] = reduce_sliced,
    [PLAN_REDUCE_GATHERED] = reduce_gathered,
};

bool coll_reduce_runs(plan_algo a) { return reduce_algorithms[a] != NULL; }

void coll_reduce(coll_team *t, const void *sbuf, void *rbuf, size_t count, core_type type, core_op op, int root)
{
    size_t esize = core_type_size(type);
    core_reduce_fn fn = core_reduce_kernel(type, op);
    const char *src = sbuf ? sbuf : rbuf;
    if (coll_reduce_trivially(t, src, rbuf, count, count * esize))
        return;
    const coll_choice *ch = coll_plan_reading(t, CORE_COLL_REDUCE, count * esize, src, count * esize);
    reduce_fn run = reduce_algorithms[ch->plan.algo];
    if (ch->lane->two_sided) /* no views: the inputs must move */
        run = reduce_gathered;
    (run ? run : reduce_sliced)(t, ch, src, rbuf, count, esize, fn, root);
}
