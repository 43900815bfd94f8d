/* Bcast. Algorithms (the planner's table prices them, src/planner):
 *   flat  every rank reads the whole message from the root: one step, the
 *         root's buffer read n-1 times; on a lane that can put, the root
 *         writes the last 1/n into each rank while they read the rest
 *         (plan_choice.root_share; not where ranks take turns on cores).
 *   tree  a k-ary tree pipelined in chunks: depth + chunks - 1 steps of one
 *         chunk each, each parent's chunk read by its k children at once.
 * On a two-sided lane every rank asks the root for the message. */
#include <string.h>

#include "coll_internal.h"
/* Flat on a lane that can put: instead of idling while every rank reads its
 * buffer, the root writes the last 1/n of the message into each rank while
 * they read the rest from it, so every core copies about as much. */
static void bcast_flat_shared(coll_team *t, const lane_ops *lane, void *buf, size_t bytes, int root)
{
    int n = t->n;
    size_t split = bytes / (size_t)n * (size_t)(n - 1) / CORE_CACHELINE * CORE_CACHELINE;
    coll_round_begin(t, true, false);
    lane->expose(&t->lane, 0, buf, bytes);
    uint64_t exposed = coll_next_epoch(t), done = coll_next_epoch(t);
    coll_post(t, exposed);
    if (t->me == root) {
        for (int i = 1; i < n; i++) {
            int p = coll_rank_plus(root, i, n);
            coll_wait(t, p, exposed);
            lane->put(&t->lane, p, 0, split, (char *)buf + split, bytes - split);
        }
        coll_post(t, done);
        coll_wait_all(t, done); /* they have read my buffer */
    } else {
        coll_wait(t, root, exposed);
        lane->fetch(&t->lane, root, 0, 0, buf, split);
        coll_post(t, done);
        coll_wait(t, root, done); /* the root has written my tail */
    }
    coll_round_end(t, done);
}

/* A two-sided lane (no views, no puts): every rank asks the root for the message. */
static void bcast_requested(coll_team *t, const coll_choice *ch, void *buf, size_t bytes, int root)
{
    coll_out *out = coll_outs(t);
    coll_xfer *xf = coll_xfers(t);
    coll_moves m = {.out = out, .xfer = xf, .max_out = 1, .max_len = bytes, .only_peer = -1};
    if (t->me == root)
        out[m.nout++] = (coll_out){0, buf, bytes};
    else
        xf[m.nxfer++] = (coll_xfer){root, 0, 0, buf, bytes};
    coll_move(t, ch->lane, &m);
}

/* A k-ary tree pipelined in chunks (k = n - 1: every rank reads the root). */
static void bcast_k_ary(coll_team *t, const coll_choice *ch, void *buf, size_t bytes, int root, int k)
{
    int n = t->n;
    int rel = coll_rank_plus(t->me, n - root, n);
    int parent = rel ? coll_rank_plus(k >= n - 1 ? 0 : (rel - 1) / k, root, n) : -1; /* flat: no divide */
    int first_child = rel * k + 1;
    bool has_children = first_child < n;
    const lane_ops *lane = ch->lane;

    size_t window = lane->window(&t->lane);
    size_t chunk = lane->single_copy ? (k >= n - 1 ? bytes : ch->plan.chunk) : min_size(window, ch->plan.chunk);
    size_t nchunks = bytes <= chunk ? 1 : (bytes + chunk - 1) / chunk;
    uint64_t base = t->epoch;

    if (lane->single_copy) {
        coll_round_begin(t, true, false);
        lane->expose(&t->lane, 0, buf, bytes);
        if (parent < 0) {
            coll_post(t, base + nchunks);
        } else {
            for (size_t c = 0; c < nchunks; c++) {
                size_t off = c * chunk, len = min_size(chunk, bytes - off);
                coll_wait(t, parent, base + 1 + c);
                lane->fetch(&t->lane, parent, 0, off, (char *)buf + off, len);
                coll_post(t, base + 1 + c);
            }
        }
        t->epoch = base + nchunks;
        coll_round_end(t, t->epoch);
        for (int c = first_child; c < n && c < first_child + k; c++)
            coll_wait(t, coll_rank_plus(c, root, n), t->epoch);
        return;
    }

    for (size_t c = 0; c < nchunks; c++) {
        size_t off = c * chunk, len = min_size(chunk, bytes - off);
        coll_round_begin(t, has_children, c + 1 == nchunks && parent < 0);
        if (parent >= 0) {
            coll_wait_exposed(t, lane, parent, 0, t->epoch + 1, 0, len);
            lane->fetch(&t->lane, parent, 0, 0, (char *)buf + off, len);
        }
        if (has_children)
            lane->expose(&t->lane, 0, (char *)buf + off, len);
        uint64_t e = coll_next_epoch(t);
        coll_post(t, e);
        coll_round_end(t, e);
    }
}

/* Flat: every rank reads the message from the root; on a lane that can put,
 * the root writes a share of it into each where the plan says so (ranks
 * with cores of their own). */
static void bcast_flat(coll_team *t, const coll_choice *ch, void *buf, size_t bytes, int root)
{
    if (ch->lane->single_copy && ch->lane->put && ch->plan.root_share > 0)
        bcast_flat_shared(t, ch->lane, buf, bytes, root);
    else if (ch->lane->two_sided)
        bcast_requested(t, ch, buf, bytes, root);
    else
        bcast_k_ary(t, ch, buf, bytes, root, t->n - 1);
}

static void bcast_tree(coll_team *t, const coll_choice *ch, void *buf, size_t bytes, int root)
{
    if (ch->lane->two_sided)
        bcast_requested(t, ch, buf, bytes, root);
    else
        bcast_k_ary(t, ch, buf, bytes, root, ch->plan.fanout);
}

typedef void (*bcast_fn)(coll_team *t, const coll_choice *ch, void *buf, size_t bytes, int root);
static const bcast_fn bcast_algorithms[PLAN_ALGO_COUNT] = {
    [PLAN_BCAST_FLAT] = bcast_flat,
    [PLAN_BCAST_TREE] = bcast_tree,
};

bool coll_bcast_runs(plan_algo a) { return bcast_algorithms[a] != NULL; }

void coll_bcast(coll_team *t, void *buf, size_t bytes, int root)
{
    if (bytes == 0 || t->n == 1)
        return;
    const coll_choice *ch = coll_plan_reading(t, CORE_COLL_BCAST, bytes, t->me == root ? buf : NULL, bytes);
    bcast_fn run = bcast_algorithms[ch->plan.algo];
    (run ? run : bcast_tree)(t, ch, buf, bytes, root);
}
