/* Gather and gatherv, by the movement engine (coll_move.c). Algorithms:
 *   pull  the root copies its own block, then reads every other rank's:
 *         n-1 transfers on the root, one after the other.
 *   push  (lanes that can put; gather only) every rank writes its block
 *         into the root's buffer at once; the root reads the tail of each
 *         itself (plan_choice.root_share) while they write the heads. */
#include <string.h>

#include "coll_internal.h"
static void gather_common(coll_team *t, core_coll coll, const void *sbuf, size_t sbytes, void *rbuf,
                          const size_t *rbytes, const size_t *roffs, int root, size_t plan_bytes)
{
    const coll_choice *ch = coll_plan(t, coll, plan_bytes);
    int n = t->n, me = t->me;
    bool v = coll == CORE_COLL_GATHERV;
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
