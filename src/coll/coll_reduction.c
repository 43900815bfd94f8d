/* The reduction machinery that reduce, allreduce, reduce_scatter(_block)
 * and scan share: reducing the ranks' exposures block by block in rank
 * order, the round and window arithmetic, the one-slot round, and the
 * gathered path (move the inputs, reduce locally). The algorithms are in
 * their collectives' files. */
#include <string.h>

#include "coll_reduction.h"

bool coll_reduce_trivially(coll_team *t, const char *src, void *rbuf, size_t total, size_t own)
{
    if (total == 0)
        return true;
    if (t->n == 1) {
        if (src != rbuf)
            memcpy(rbuf, src, own);
        return true;
    }
    return false;
}

/* Elements per cache-sized reduction block: all count when they fit one
 * (the divide only when needed: it costs tens of cycles on small calls). */
static size_t block_elements(size_t count, size_t esize)
{
    return count * esize <= PLAN_REDUCE_BLOCK ? count : PLAN_REDUCE_BLOCK / esize;
}

/* out[0, count) = in_0 op in_1 op ... op in_{ranks-1}, where in_j is rank
 * j's slot `slot` from byte offset `off`. Works block by block so the
 * inputs stay in cache, and writes each element of out once. With a sink,
 * each block is also put there (out NULL: only there). */
static void reduce_first_ranks(coll_team *t, const lane_ops *lane, int slot, size_t off, size_t count, size_t esize,
                               core_reduce_fn fn, void *out, const char *mine, int ranks, const coll_block_sink *sink)
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
        if (ranks == 1) {
            if (a != dst_final)
                memmove(dst_final, a, bytes);
            continue;
        }
        for (int j = 1; j < ranks; j++) {
            const void *b = VIEW(j, sb);
            void *dst = j == ranks - 1 ? dst_final : acc;
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

void coll_reduce_ranks(coll_team *t, const lane_ops *lane, int slot, size_t off, size_t count, size_t esize,
                       core_reduce_fn fn, void *out, const char *mine, const coll_block_sink *sink)
{
    reduce_first_ranks(t, lane, slot, off, count, esize, fn, out, mine, t->n, sink);
}

void coll_reduce_first_ranks(coll_team *t, const lane_ops *lane, int slot, size_t off, size_t count, size_t esize,
                             core_reduce_fn fn, void *out, const char *mine, int ranks)
{
    if (ranks == 1 && t->me != 0) /* a peer's input alone (exscan): one transfer, straight into the result */
        lane->fetch(&t->lane, 0, slot, off, out, count * esize);
    else
        reduce_first_ranks(t, lane, slot, off, count, esize, fn, out, mine, ranks, NULL);
}

const char *coll_exposable_input(coll_team *t, const lane_ops *lane, const char *src, const char *dst, size_t bytes)
{
    if (!lane->single_copy || src != dst)
        return src;
    char *copy = coll_temp(t, bytes);
    memcpy(copy, src, bytes);
    return copy;
}

/* Elements per round on a lane: everything on single-copy lanes, else what
 * fits the window when each rank exposes `pieces` buffers of that many
 * elements. */
size_t coll_window_elements(coll_team *t, const lane_ops *lane, size_t count, size_t esize, size_t pieces)
{
    size_t window = lane->window(&t->lane);
    if (window == SIZE_MAX)
        return count ? count : 1;
    size_t usable = window > pieces * CORE_CACHELINE ? window - pieces * CORE_CACHELINE : 0;
    size_t per = (pieces > 1 ? usable / pieces : usable) / esize;
    return per ? per : 1;
}

/* For callers that only cap their rounds with it: count itself when all of
 * it fits one round (the same rounds, without coll_window_elements' divides). */
size_t coll_round_elements(coll_team *t, const lane_ops *lane, size_t count, size_t esize, size_t pieces)
{
    size_t window = lane->window(&t->lane), bytes;
    if (count && window > pieces * CORE_CACHELINE && !__builtin_mul_overflow(count * esize, pieces, &bytes) &&
        bytes <= window - pieces * CORE_CACHELINE)
        return count;
    return coll_window_elements(t, lane, count, esize, pieces);
}

/* One round in which every rank exposes `in` (in_bytes) as slot 0 and
 * reduces k elements from byte `off` of every rank's exposure into out.
 * Returns the round's done epoch. */
uint64_t coll_reduce_slot0_round(coll_team *t, const lane_ops *lane, const char *in, size_t in_bytes, size_t off,
                                 size_t k, size_t esize, core_reduce_fn fn, char *out)
{
    coll_round_begin(t, true, false);
    lane->expose(&t->lane, 0, in, in_bytes);
    uint64_t exposed = coll_next_epoch(t), done = coll_next_epoch(t);
    /* A rank with nothing to reduce (a reduce_scatter block of 0 elements)
     * is done once its input is out, where the lane copied it: one post
     * says both, and it waits for no one. */
    if (k > 0 || lane->single_copy) {
        coll_post(t, exposed);
        coll_wait_all_exposed(t, lane, 0, exposed, off, k * esize);
        if (k)
            coll_reduce_ranks(t, lane, 0, off, k, esize, fn, out, in, NULL);
    }
    coll_post(t, done);
    coll_round_end(t, done);
    return done;
}

/* ---- gathered: move the inputs, reduce locally ---- */

/* out = all[0] op all[1] op ... op all[ranks-1], each `count` elements, in cache-sized blocks. */
void coll_reduce_local_first(coll_team *t, const char *all, size_t count, size_t esize, core_reduce_fn fn, char *out,
                             int ranks)
{
    size_t per = block_elements(count, esize), stride = count * esize;
    for (size_t done = 0; done < count; done += per) {
        size_t k = min_size(per, count - done), o = done * esize;
        if (ranks == 1) {
            memmove(out + o, all + o, k * esize);
            continue;
        }
        const char *a = all + o;
        for (int j = 1; j < ranks; j++) {
            char *dst = j == ranks - 1 ? out + o : t->block[0];
            fn(dst, a, all + (size_t)j * stride + o, k);
            a = dst;
        }
    }
}

void coll_reduce_local(coll_team *t, const char *all, size_t count, size_t esize, core_reduce_fn fn, char *out)
{
    coll_reduce_local_first(t, all, count, esize, fn, out, t->n);
}

/* Moves `bytes` from byte `mine` of every rank's slot 0 (the `exposed`
 * bytes at src) into all[p * bytes]; only `to` reads when >= 0. */
void coll_gather_inputs(coll_team *t, const lane_ops *lane, const char *src, size_t exposed, size_t mine, size_t bytes,
                        int to, char *all)
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
