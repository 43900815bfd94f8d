/* Reductions: reduce, allreduce, reduce_scatter_block. Every element is
 * combined in rank order, ((x0 op x1) op x2) ... (the tree variant in a fixed
 * grouping of rank ranges), so results never depend on timing. */
#include <string.h>

#include "coll_internal.h"

static size_t min_size(size_t a, size_t b) { return a < b ? a : b; }

/* Where reduce_ranks also puts each finished block, while it is still in
 * cache: slot 1 of rank `rank` (-1: of every other rank), from byte `off` on. */
typedef struct block_sink {
    int rank;
    size_t off;
} block_sink;

/* Elements per cache-sized reduction block: all count when they fit one
 * (the divide only when needed: it costs tens of cycles on small calls). */
static size_t block_elements(size_t count, size_t esize)
{
    return count * esize <= PLAN_REDUCE_BLOCK ? count : PLAN_REDUCE_BLOCK / esize;
}

/* out[0, count) = in_0 op in_1 op ... op in_{n-1}, where in_j is rank j's
 * slot `slot` from byte offset `off`. Works block by block so the inputs
 * stay in cache, and writes each element of out once. With a sink, each
 * block is also put there (out NULL: only there). */
static void reduce_ranks(coll_team *t, const lane_ops *lane, int slot, size_t off, size_t count, size_t esize,
                         core_reduce_fn fn, void *out, const char *mine, const block_sink *sink)
{
    size_t per = block_elements(count, esize);
    char *acc = t->block[0], *sa = t->block[1], *sb = t->block[2];
    for (size_t done = 0; done < count; done += per) {
        size_t k = min_size(per, count - done), bytes = k * esize, o = off + done * esize;
        char *dst_final = out ? (char *)out + done * esize : acc;
        /* This rank's own input is read where it is, not through the lane. */
#define VIEW(rank, scratch) \
    ((rank) == t->me && mine ? (const void *)(mine + o) : lane->view(&t->lane, (rank), slot, o, bytes, (scratch)))
        const void *a = VIEW(0, sa);
        if (t->n == 1) {
            if (a != dst_final)
                memmove(dst_final, a, bytes);
            continue;
        }
        for (int j = 1; j < t->n; j++) {
            const void *b = VIEW(j, sb);
            void *dst = j == t->n - 1 ? dst_final : acc;
            fn(dst, a, b, k);
            a = dst;
        }
#undef VIEW
        if (!sink)
            continue;
        for (int i = 1; i < t->n; i++) {
            int p = coll_rank_plus(t->me, i, t->n);
            if (sink->rank < 0 || sink->rank == p)
                lane->put(&t->lane, p, 1, sink->off + done * esize, dst_final, bytes);
        }
    }
}

/* Elements per round on a lane: everything on single-copy lanes, else what
 * fits the window when each rank exposes `pieces` buffers of that many
 * elements. */
static size_t window_elements(coll_team *t, const lane_ops *lane, size_t count, size_t esize, size_t pieces)
{
    size_t window = lane->window(&t->lane);
    if (window == SIZE_MAX)
        return count ? count : 1;
    size_t usable = window > pieces * CORE_CACHELINE ? window - pieces * CORE_CACHELINE : 0;
    size_t per = (pieces > 1 ? usable / pieces : usable) / esize;
    return per ? per : 1;
}

/* For callers that only cap their rounds with it: count itself when all of
 * it fits one round (the same rounds, without window_elements' divides). */
static size_t round_elements(coll_team *t, const lane_ops *lane, size_t count, size_t esize, size_t pieces)
{
    size_t window = lane->window(&t->lane), bytes;
    if (count && window > pieces * CORE_CACHELINE && !__builtin_mul_overflow(count * esize, pieces, &bytes) &&
        bytes <= window - pieces * CORE_CACHELINE)
        return count;
    return window_elements(t, lane, count, esize, pieces);
}

/* One round in which every rank exposes `in` (in_bytes) as slot 0 and
 * reduces k elements from byte `off` of every rank's exposure into out.
 * Returns the round's done epoch. */
static uint64_t reduce_slot0_round(coll_team *t, const lane_ops *lane, const char *in, size_t in_bytes, size_t off,
                                   size_t k, size_t esize, core_reduce_fn fn, char *out)
{
    coll_round_begin(t, true);
    lane->expose(&t->lane, 0, in, in_bytes);
    uint64_t exposed = coll_next_epoch(t);
    coll_post(t, exposed);
    coll_wait_all_exposed(t, lane, 0, exposed);
    if (k)
        reduce_ranks(t, lane, 0, off, k, esize, fn, out, in, NULL);
    uint64_t done = coll_next_epoch(t);
    coll_post(t, done);
    coll_round_end(t, done);
    return done;
}

/* ---- gathered: move the inputs, reduce locally (every lane, the only
 * way on two-sided lanes, which have no views) ---- */

/* out = all[0] op all[1] op ... op all[n-1], each `count` elements, in cache-sized blocks. */
static void reduce_local(coll_team *t, const char *all, size_t count, size_t esize, core_reduce_fn fn, char *out)
{
    size_t per = block_elements(count, esize), stride = count * esize;
    for (size_t done = 0; done < count; done += per) {
        size_t k = min_size(per, count - done), o = done * esize;
        if (t->n == 1) {
            memmove(out + o, all + o, k * esize);
            continue;
        }
        const char *a = all + o;
        for (int j = 1; j < t->n; j++) {
            char *dst = j == t->n - 1 ? out + o : t->block[0];
            fn(dst, a, all + (size_t)j * stride + o, k);
            a = dst;
        }
    }
}

/* Moves `bytes` from byte `mine` of every rank's slot 0 (the `exposed`
 * bytes at src) into all[p * bytes]; only `to` reads when >= 0. */
static void gather_inputs(coll_team *t, const lane_ops *lane, const char *src, size_t exposed, size_t mine,
                          size_t bytes, int to, char *all)
{
    int n = t->n, me = t->me;
    coll_out *out = coll_outs(t);
    coll_xfer *xf = coll_xfers(t);
    coll_moves m = {.out = out, .xfer = xf, .max_out = 1, .max_len = exposed, .only_peer = to};
    if (to < 0 || me != to)
        out[m.nout++] = (coll_out){0, src, exposed};
    if (to < 0 || me == to) {
        for (int i = 1; i < n; i++) {
            int p = coll_rank_plus(me, i, n);
            xf[m.nxfer++] = (coll_xfer){p, 0, mine, all + (size_t)p * bytes, bytes};
        }
        m.self_src = src + mine, m.self_dst = all + (size_t)me * bytes, m.self_len = bytes;
    }
    coll_move(t, lane, &m);
}

static void allreduce_gathered(coll_team *t, const lane_ops *lane, const char *src, char *dst, size_t count,
                               size_t esize, core_reduce_fn fn)
{
    char *all = coll_temp(t, count * esize * (size_t)t->n);
    gather_inputs(t, lane, src, count * esize, 0, count * esize, -1, all);
    reduce_local(t, all, count, esize, fn, dst);
}

static void reduce_gathered(coll_team *t, const lane_ops *lane, const char *src, char *dst, size_t count,
                            size_t esize, core_reduce_fn fn, int root)
{
    char *all = t->me == root ? coll_temp(t, count * esize * (size_t)t->n) : NULL;
    gather_inputs(t, lane, src, count * esize, 0, count * esize, root, all);
    if (t->me == root)
        reduce_local(t, all, count, esize, fn, dst);
}

static void rsb_gathered(coll_team *t, const lane_ops *lane, const char *src, char *dst, size_t count,
                         size_t esize, core_reduce_fn fn)
{
    char *all = coll_temp(t, count * esize * (size_t)t->n);
    gather_inputs(t, lane, src, count * esize * (size_t)t->n, (size_t)t->me * count * esize, count * esize, -1, all);
    reduce_local(t, all, count, esize, fn, dst);
}

/* ---- allreduce ---- */

/* Every rank reduces every input: one synchronisation, n-fold reading. */
static void allreduce_flat(coll_team *t, const lane_ops *lane, const char *src, char *dst, size_t count,
                           size_t esize, core_reduce_fn fn)
{
    if (lane->single_copy && src == dst) {
        /* Peers read my input while I write my result over it: send a copy. */
        char *copy = coll_temp(t, count * esize);
        memcpy(copy, src, count * esize);
        src = copy;
    }
    size_t per = round_elements(t, lane, count, esize, 1);
    uint64_t done = 0;
    for (size_t base = 0; base < count; base += per) {
        size_t k = min_size(per, count - base);
        done = reduce_slot0_round(t, lane, src + base * esize, k * esize, 0, k, esize, fn, dst + base * esize);
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
    coll_round_begin(t, true);
    lane->expose(&t->lane, 0, src, count * esize);
    lane->expose(&t->lane, 1, dst, count * esize);
    uint64_t exposed = coll_next_epoch(t);
    coll_post(t, exposed);
    coll_wait_all(t, exposed);
    size_t lo = coll_slice_lo(count, n, me), hi = coll_slice_lo(count, n, me + 1);
    block_sink everyone = {-1, lo * esize};
    reduce_ranks(t, lane, 0, lo * esize, hi - lo, esize, fn, dst + lo * esize, src, &everyone);
    uint64_t done = coll_next_epoch(t);
    coll_post(t, done);
    coll_wait_all(t, done); /* all slices are in my buffer; nobody reads mine */
    coll_round_end(t, done);
}

/* Reduce-scatter then allgather: rank i reduces slice i of every input and
 * the others copy it; every element is reduced once and written once per rank. */
static void allreduce_sliced(coll_team *t, const lane_ops *lane, const char *src, char *dst, size_t count,
                             size_t esize, core_reduce_fn fn)
{
    int n = t->n, me = t->me;
    if (lane->put) {
        allreduce_sliced_put(t, lane, src, dst, count, esize, fn);
        return;
    }
    /* A round exposes its chunk of input plus this rank's slice of it. */
    size_t per = window_elements(t, lane, count, esize, 1);
    if (!lane->single_copy)
        per = per * (size_t)n / (size_t)(n + 1);
    if (per == 0)
        per = 1;
    uint64_t done = 0;
    for (size_t base = 0; base < count; base += per) {
        size_t k = min_size(per, count - base);
        coll_round_begin(t, true);
        lane->expose(&t->lane, 0, src + base * esize, k * esize);
        uint64_t exposed = coll_next_epoch(t);
        coll_post(t, exposed);
        coll_wait_all_exposed(t, lane, 0, exposed);

        size_t lo = coll_slice_lo(k, n, me), hi = coll_slice_lo(k, n, me + 1);
        char *mine = dst + (base + lo) * esize;
        reduce_ranks(t, lane, 0, lo * esize, hi - lo, esize, fn, mine, src + base * esize, NULL);
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

void coll_allreduce(coll_team *t, const void *sbuf, void *rbuf, size_t count, core_type type, core_op op)
{
    size_t esize = core_type_size(type);
    core_reduce_fn fn = core_reduce_kernel(type, op);
    if (count == 0)
        return;
    const char *src = sbuf ? sbuf : rbuf;
    if (t->n == 1) {
        if (src != rbuf)
            memcpy(rbuf, src, count * esize);
        return;
    }
    coll_choice ch = coll_plan(t, CORE_COLL_ALLREDUCE, count * esize);
    if (ch.plan.algo == PLAN_ALLREDUCE_GATHERED || ch.lane->two_sided)
        allreduce_gathered(t, ch.lane, src, rbuf, count, esize, fn);
    else if (ch.plan.algo == PLAN_ALLREDUCE_FLAT)
        allreduce_flat(t, ch.lane, src, rbuf, count, esize, fn);
    else
        allreduce_sliced(t, ch.lane, src, rbuf, count, esize, fn);
}

/* ---- reduce ---- */

/* The root reduces every input. */
static void reduce_flat(coll_team *t, const lane_ops *lane, const char *src, char *dst, size_t count,
                        size_t esize, core_reduce_fn fn, int root)
{
    size_t per = round_elements(t, lane, count, esize, 1);
    uint64_t done = 0;
    for (size_t base = 0; base < count; base += per) {
        size_t k = min_size(per, count - base);
        /* The root reads its own input where it is: exposing it would be a
         * wasted copy into the cells. */
        coll_round_begin(t, t->me != root);
        if (t->me != root)
            lane->expose(&t->lane, 0, src + base * esize, k * esize);
        uint64_t exposed = coll_next_epoch(t);
        done = coll_next_epoch(t);
        if (t->me == root) {
            /* The root exposes nothing: its first post would tell nobody
             * anything, only take its flag line back from a polling peer. */
            coll_wait_all_exposed(t, lane, 0, exposed);
            reduce_ranks(t, lane, 0, 0, k, esize, fn, dst + base * esize, src + base * esize, NULL);
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
static void reduce_tree(coll_team *t, const lane_ops *lane, const char *src, char *dst, size_t count,
                        size_t esize, core_reduce_fn fn, int root)
{
    int n = t->n, me = t->me;
    int span = me ? me & -me : n; /* my range is [me, me + span) */
    bool has_children = me + 1 < n && span > 1;
    bool exposes = me != 0 || root != 0;
    size_t per = round_elements(t, lane, count, esize, 1);
    char *partial = has_children ? coll_temp(t, min_size(per, count) * esize) : NULL;
    size_t block = PLAN_REDUCE_BLOCK / esize * esize;
    uint64_t done = 0;
    for (size_t base = 0; base < count; base += per) {
        size_t k = min_size(per, count - base), bytes = k * esize;
        const char *mine = src + base * esize;
        uint64_t ready = t->epoch + 1;
        coll_round_begin(t, exposes);
        if (has_children) {
            /* Rank 0 as the root writes straight into the result. */
            char *acc = me == root ? dst + base * esize : partial;
            for (int step = 1; step < span && me + step < n; step <<= 1) {
                int child = me + step;
                coll_wait_exposed(t, lane, child, 0, ready);
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
            coll_wait_exposed(t, lane, 0, 0, ready);
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
static void reduce_sliced(coll_team *t, const lane_ops *lane, const char *src, char *dst, size_t count,
                          size_t esize, core_reduce_fn fn, int root)
{
    int n = t->n, me = t->me;
    bool push = lane->put != NULL;
    size_t per = window_elements(t, lane, count, esize, 1);
    if (!lane->single_copy)
        per = per * (size_t)n / (size_t)(n + 1);
    if (per == 0)
        per = 1;
    char *slice_buf = me == root || push ? NULL : coll_temp(t, (min_size(per, count) * 2 / (2 * (size_t)n + 1) + 2) * esize);
    uint64_t done = 0;
    for (size_t base = 0; base < count; base += per) {
        size_t k = min_size(per, count - base);
        coll_round_begin(t, true);
        lane->expose(&t->lane, 0, src + base * esize, k * esize);
        if (push && me == root)
            lane->expose(&t->lane, 1, dst + base * esize, k * esize);
        uint64_t exposed = coll_next_epoch(t);
        coll_post(t, exposed);
        coll_wait_all_exposed(t, lane, 0, exposed);

        size_t lo, hi;
        reduce_slice(k, n, root, me, &lo, &hi);
        size_t bytes = (hi - lo) * esize;
        if (me == root) {
            reduce_ranks(t, lane, 0, lo * esize, hi - lo, esize, fn, dst + (base + lo) * esize, src + base * esize,
                         NULL);
        } else if (push) {
            /* Each block goes to the root while it is still in cache. */
            block_sink sink = {root, lo * esize};
            reduce_ranks(t, lane, 0, lo * esize, hi - lo, esize, fn, NULL, src + base * esize, &sink);
        } else {
            reduce_ranks(t, lane, 0, lo * esize, hi - lo, esize, fn, slice_buf, src + base * esize, NULL);
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

void coll_reduce(coll_team *t, const void *sbuf, void *rbuf, size_t count, core_type type, core_op op, int root)
{
    size_t esize = core_type_size(type);
    core_reduce_fn fn = core_reduce_kernel(type, op);
    if (count == 0)
        return;
    const char *src = sbuf ? sbuf : rbuf;
    if (t->n == 1) {
        if (src != rbuf)
            memcpy(rbuf, src, count * esize);
        return;
    }
    coll_choice ch = coll_plan(t, CORE_COLL_REDUCE, count * esize);
    if (ch.plan.algo == PLAN_REDUCE_GATHERED || ch.lane->two_sided)
        reduce_gathered(t, ch.lane, src, rbuf, count, esize, fn, root);
    else if (ch.plan.algo == PLAN_REDUCE_FLAT)
        reduce_flat(t, ch.lane, src, rbuf, count, esize, fn, root);
    else if (ch.plan.algo == PLAN_REDUCE_TREE)
        reduce_tree(t, ch.lane, src, rbuf, count, esize, fn, root);
    else
        reduce_sliced(t, ch.lane, src, rbuf, count, esize, fn, root);
}

/* ---- reduce_scatter_block ---- */

/* Rank i reduces block i of every input into out, in rounds that take up to
 * what fits the window of every block. Block b: counts[b] elements from
 * element firsts[b] of the input, or (counts NULL) `uniform` elements from
 * b * uniform. */
static void reduce_own_blocks(coll_team *t, const lane_ops *lane, const char *src, char *out, const size_t *counts,
                              const size_t *firsts, size_t uniform, size_t esize, core_reduce_fn fn)
{
    int n = t->n, me = t->me;
#define BLOCK_COUNT(b) (counts ? counts[b] : uniform)
#define BLOCK_FIRST(b) (firsts ? firsts[b] : (size_t)(b) * uniform)
    /* When a whole input fits one round of a windowed lane, it goes out as
     * one slot (slot 0: found through its note, small ones inside it) and
     * each rank reads its block at its offset, as scatter's readers do: the
     * note spares the slot tables and the flag waits of one slot per block. */
    size_t total_bytes = (BLOCK_FIRST(n - 1) + BLOCK_COUNT(n - 1)) * esize, window = lane->window(&t->lane);
    if (window != SIZE_MAX && total_bytes + CORE_CACHELINE <= window) {
        reduce_slot0_round(t, lane, src, total_bytes, BLOCK_FIRST(me) * esize, BLOCK_COUNT(me), esize, fn, out);
        return;
    }
    size_t largest = 0;
    for (int b = 0; b < n; b++)
        if (BLOCK_COUNT(b) > largest)
            largest = BLOCK_COUNT(b);
    size_t per = round_elements(t, lane, largest, esize, (size_t)n);
    uint64_t done = 0;
    for (size_t base = 0; base < largest; base += per) {
        coll_round_begin(t, true);
        for (int b = 0; b < n; b++) {
            size_t k = base < BLOCK_COUNT(b) ? min_size(per, BLOCK_COUNT(b) - base) : 0;
            lane->expose(&t->lane, b, k ? src + (BLOCK_FIRST(b) + base) * esize : src, k * esize);
        }
        uint64_t exposed = coll_next_epoch(t);
        coll_post(t, exposed);
        coll_wait_all(t, exposed);
        if (base < BLOCK_COUNT(me))
            reduce_ranks(t, lane, me, 0, min_size(per, BLOCK_COUNT(me) - base), esize, fn, out + base * esize,
                         src + (BLOCK_FIRST(me) + base) * esize, NULL);
        done = coll_next_epoch(t);
        coll_post(t, done);
        coll_round_end(t, done);
    }
#undef BLOCK_COUNT
#undef BLOCK_FIRST
    if (lane->single_copy)
        coll_wait_all(t, done);
}

/* Rank i reduces block i of every input. */
void coll_reduce_scatter_block(coll_team *t, const void *sbuf, void *rbuf, size_t count, core_type type,
                               core_op op)
{
    size_t esize = core_type_size(type);
    core_reduce_fn fn = core_reduce_kernel(type, op);
    if (count == 0)
        return;
    const char *src = sbuf ? sbuf : rbuf;
    if (t->n == 1) {
        if (src != rbuf)
            memcpy(rbuf, src, count * esize);
        return;
    }
    coll_choice ch = coll_plan(t, CORE_COLL_REDUCE_SCATTER_BLOCK, count * esize);
    const lane_ops *lane = ch.lane;
    if (ch.plan.algo == PLAN_RSB_GATHERED || lane->two_sided) {
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
    gather_inputs(t, lane, src, total * esize, firsts[t->me] * esize, mine * esize, -1, all);
    reduce_local(t, all, mine, esize, fn, dst);
}

/* As reduce_scatter_block, with blocks of their own sizes. */
void coll_reduce_scatter(coll_team *t, const void *sbuf, void *rbuf, const size_t *counts, const size_t *firsts,
                         core_type type, core_op op)
{
    int n = t->n, me = t->me;
    size_t esize = core_type_size(type), total = firsts[n - 1] + counts[n - 1];
    core_reduce_fn fn = core_reduce_kernel(type, op);
    if (total == 0)
        return;
    const char *src = sbuf ? sbuf : rbuf;
    if (n == 1) {
        if (src != rbuf)
            memcpy(rbuf, src, counts[0] * esize);
        return;
    }
    /* Priced at the mean block, in whole elements: a vector shorter than
     * the team must not look like no data at all (cma would be free). */
    coll_choice ch = coll_plan(t, CORE_COLL_REDUCE_SCATTER, (total + (size_t)n - 1) / (size_t)n * esize);
    const lane_ops *lane = ch.lane;
    if (ch.plan.algo == PLAN_RSB_GATHERED || lane->two_sided) {
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
