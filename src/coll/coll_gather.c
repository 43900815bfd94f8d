/* Gather and gatherv, by the movement engine (coll_move.c). Algorithms:
 *   pull  the root copies its own block, then reads every other rank's:
 *         n-1 transfers on the root, one after the other.
 *   push  (lanes that can put) every rank writes its block into the root's
 *         buffer at once; the root reads the tail of each itself
 *         (plan_choice.root_share) while they write the heads. Gatherv's
 *         large blocks only (plan_choice.large_algo). */
#include <string.h>

#include "coll_internal.h"

/* Gatherv where the large lane is single-copy: a block that fits the
 * header round's room goes on the small lane, a larger one on the large
 * lane, in the same round (the root, which knows every size, asks the same
 * of each). No rank waits for a verdict of the root's on the sizes: a rank
 * with a small block is done once it has exposed it, as in gather (at 4
 * ranks on 2 cores that wait cost a wake-up a call). */
static void gatherv_split(coll_team *t, const coll_choice *ch, const void *sbuf, size_t sbytes, void *rbuf,
                          const size_t *rbytes, const size_t *roffs, int root)
{
    int n = t->n, me = t->me;
    coll_out *out = coll_outs(t);
    coll_xfer *xf = coll_xfers(t);
    bool push = ch->plan.large_algo == PLAN_MOVE_PUSH;
    coll_moves eager = {.out = out, .xfer = xf, .max_out = 1, .only_peer = -1};
    coll_moves sized = {.max_out = push ? n : 1, .only_peer = -1};
    if (me == root) {
        if (sbuf && rbytes[me]) {
            eager.self_src = sbuf;
            eager.self_dst = (char *)rbuf + roffs[me];
            eager.self_len = rbytes[me];
        }
        /* One pass over the blocks: the small ones' reads fill the xfer
         * array from its start, the large ones' from its end (n + 1
         * entries: a block is in one list); the root exposes only large
         * blocks' places, pushed into. */
        coll_xfer *large_end = xf + n + 1, *large = large_end;
        for (int p = 0; p < n; p++) {
            if (p == root || !rbytes[p])
                continue;
            char *dst = (char *)rbuf + roffs[p];
            if (coll_fits_eager(t, ch, rbytes[p])) {
                xf[eager.nxfer++] = (coll_xfer){p, 0, 0, dst, rbytes[p]};
                continue;
            }
            size_t head = push ? rbytes[p] - coll_root_part(rbytes[p], ch->plan.root_share) : 0;
            if (push)
                out[sized.nout++] = (coll_out){p, dst, rbytes[p]};
            if (head < rbytes[p])
                *--large = (coll_xfer){p, 0, head, dst + head, rbytes[p] - head};
        }
        sized.out = out;
        sized.xfer = large;
        sized.nxfer = (int)(large_end - large);
    } else if (sbytes && coll_fits_eager(t, ch, sbytes)) {
        out[eager.nout++] = (coll_out){0, sbuf, sbytes};
        eager.only_peer = root;
    } else if (sbytes) {
        /* The large block goes alone: its lists follow the (empty) small ones. */
        size_t head = push ? sbytes - coll_root_part(sbytes, ch->plan.root_share) : 0;
        sized.out = out;
        sized.xfer = xf;
        if (push) {
            sized.push = true;
            xf[sized.nxfer++] = (coll_xfer){root, me, 0, (void *)sbuf, head};
        }
        if (head < sbytes) {
            out[sized.nout++] = (coll_out){0, sbuf, sbytes};
            sized.only_peer = root;
        }
    }
    coll_move_paired(t, ch, &eager, &sized);
}
static void gather_common(coll_team *t, core_coll coll, const void *sbuf, size_t sbytes, void *rbuf,
                          const size_t *rbytes, const size_t *roffs, int root, size_t plan_bytes)
{
    /* Gatherv's sizes differ by rank: no one input size to compare. */
    const coll_choice *ch = coll == CORE_COLL_GATHER ? coll_plan_reading(t, coll, plan_bytes, sbuf, sbuf ? sbytes : 0)
                                                     : coll_plan(t, coll, plan_bytes);
    int n = t->n, me = t->me;
    bool v = coll == CORE_COLL_GATHERV;
    if (v && coll_splits_by_size(ch)) {
        gatherv_split(t, ch, sbuf, sbytes, rbuf, rbytes, roffs, root);
        return;
    }
    coll_out *out = coll_outs(t);
    coll_xfer *xf = coll_xfers(t);
    coll_moves m = {.out = out, .xfer = xf, .max_out = 1, .only_peer = -1};

    if (me == root && sbuf && rbytes[me]) {
        m.self_src = sbuf;
        m.self_dst = (char *)rbuf + roffs[me];
        m.self_len = rbytes[me];
    }

    if (ch->plan.algo == PLAN_MOVE_PUSH && !v) {
        /* The root exposes one slot per rank's place; every rank writes its
         * own, all of it or the head, whose tail the root reads itself. */
        size_t head = sbytes - coll_root_part(sbytes, ch->plan.root_share);
        m.max_out = n;
        if (me == root) {
            for (int p = 0; p < n; p++) {
                out[m.nout++] = (coll_out){p, (char *)rbuf + roffs[p], rbytes[p]};
                if (p != root && head < rbytes[p])
                    xf[m.nxfer++] = (coll_xfer){p, 0, head, (char *)rbuf + roffs[p] + head, rbytes[p] - head};
            }
        } else if (sbytes) {
            m.push = true;
            xf[m.nxfer++] = (coll_xfer){root, me, 0, (void *)sbuf, head};
            if (head < sbytes) {
                out[m.nout++] = (coll_out){0, sbuf, sbytes};
                m.only_peer = root;
            }
        }
    } else {
        if (me == root) {
            for (int p = 0; p < n; p++)
                if (p != root && rbytes[p])
                    xf[m.nxfer++] = (coll_xfer){p, 0, 0, (char *)rbuf + roffs[p], rbytes[p]};
        } else {
            out[m.nout++] = (coll_out){0, sbuf, sbytes};
            m.only_peer = root;
        }
    }
    if (v) {
        if (me == root)
            m.max_len = coll_longest_but(rbytes, n, root);
        coll_move_v(t, ch, &m, root);
    } else {
        m.max_len = plan_bytes;
        coll_move_chosen(t, ch, &m);
    }
}

void coll_gather(coll_team *t, const void *sbuf, size_t bytes, void *rbuf, int root)
{
    if (bytes == 0)
        return;
    /* Only the root reads the table of blocks. */
    size_t *sizes = t->me == root ? coll_uniform_blocks(t, bytes, 0) : NULL;
    gather_common(t, CORE_COLL_GATHER, sbuf, bytes, rbuf, sizes, sizes ? sizes + t->n : NULL, root, bytes);
}

void coll_gatherv(coll_team *t, const void *sbuf, size_t sbytes, void *rbuf, const size_t *rbytes, const size_t *roffs,
                  int root)
{
    /* Sizes differ per rank and only the root knows them all: the planner
     * sees what this rank sends, and the engine agrees on rounds itself. */
    gather_common(t, CORE_COLL_GATHERV, sbuf, sbytes, rbuf, rbytes, roffs, root, 0);
}
