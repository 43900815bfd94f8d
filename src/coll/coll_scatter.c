/* Scatter and scatterv, by the movement engine (coll_move.c). Algorithm:
 *   pull  every rank reads its block from the root at once; on a lane that
 *         can put, the root writes the tail of each block
 *         (plan_choice.root_share) while the ranks read the heads. */
#include <string.h>

#include "coll_internal.h"
static void scatter_common(coll_team *t, core_coll coll, const void *sbuf, const size_t *sbytes, const size_t *soffs,
                           void *rbuf, size_t rbytes, int root, size_t plan_bytes)
{
    /* Scatterv's sizes differ by rank: no one input size to compare. */
    const coll_choice *ch =
        coll == CORE_COLL_SCATTER
            ? coll_plan_reading(t, coll, plan_bytes, t->me == root ? sbuf : NULL, plan_bytes * (size_t)t->n)
            : coll_plan(t, coll, plan_bytes);
    int n = t->n, me = t->me;
    coll_out *out = coll_outs(t);
    coll_xfer *xf = coll_xfers(t);
    coll_moves m = {.out = out, .xfer = xf, .max_out = n, .max_len = plan_bytes, .only_peer = -1};
    /* When the root's whole buffer fits one round, it goes out as one slot
     * (slot 0: found through its note, small ones inside it) and readers
     * take their block at its offset; else one slot per rank, so rounds
     * share the window fairly. */
    bool one_slot = coll == CORE_COLL_SCATTER &&
                    (ch->lane->single_copy || plan_bytes * (size_t)n + CORE_CACHELINE <= ch->lane->window(&t->lane));
    /* The part of the root's buffer in the slot, [lo, hi): all of it but
     * the root's own block where that lies at either end (root 0, mostly),
     * which no one reads: at 2 ranks half the bytes, and small blocks stay
     * inside the note. */
    size_t lo = 0, hi = plan_bytes * (size_t)n;
    if (one_slot && n > 1) {
        if (root == 0)
            lo = plan_bytes;
        else if (root == n - 1)
            hi -= plan_bytes;
        m.max_out = 1, m.max_len = hi - lo;
    }
    /* With a root share, the root also writes the tail of every block into
     * its rank's buffer (slot 0 there), and that rank reads the head. */
    size_t tail = one_slot ? coll_root_part(plan_bytes, ch->plan.root_share) : 0;
    if (me == root) {
        if (rbuf && sbytes[me])
            m.self_src = (const char *)sbuf + soffs[me], m.self_dst = rbuf, m.self_len = sbytes[me];
        if (one_slot)
            out[m.nout++] = (coll_out){0, (const char *)sbuf + lo, hi - lo};
        else
            for (int p = 0; p < n; p++)
                out[m.nout++] = (coll_out){p, (const char *)sbuf + soffs[p], p == me ? 0 : sbytes[p]};
        for (int p = 0; tail && p < n; p++)
            if (p != root)
                xf[m.nxfer++] = (coll_xfer){p, 0, plan_bytes - tail, (char *)sbuf + soffs[p] + plan_bytes - tail, tail};
        m.push = tail > 0;
    } else if (rbytes) {
        xf[m.nxfer++] = one_slot ? (coll_xfer){root, 0, soffs[me] - lo, rbuf, rbytes - tail}
                                 : (coll_xfer){root, me, 0, rbuf, rbytes};
        if (tail) {
            out[m.nout++] = (coll_out){0, rbuf, rbytes};
            m.only_peer = root;
        }
    }
    if (coll == CORE_COLL_SCATTERV) {
        coll_move_packed(t, ch, &m, root);
    } else {
        coll_move_chosen(t, ch, &m);
    }
}

void coll_scatter(coll_team *t, const void *sbuf, size_t bytes, void *rbuf, int root)
{
    if (bytes == 0)
        return;
    size_t *sizes = coll_uniform_blocks(t, bytes, 0);
    size_t *offs = sizes + t->n;
    scatter_common(t, CORE_COLL_SCATTER, sbuf, sizes, offs, rbuf, bytes, root, bytes);
}

void coll_scatterv(coll_team *t, const void *sbuf, const size_t *sbytes, const size_t *soffs, void *rbuf, size_t rbytes,
                   int root)
{
    scatter_common(t, CORE_COLL_SCATTERV, sbuf, sbytes, soffs, rbuf, rbytes, root, 0);
}
