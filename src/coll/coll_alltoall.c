/* Alltoall and alltoallv, by the movement engine (coll_move.c). Algorithm:
 *   pull  every rank exposes its n blocks and reads its block of every
 *         other rank: n-1 transfers per rank, all ranks at once. */
#include <string.h>

#include "coll_internal.h"
static void alltoall_common(coll_team *t, core_coll coll, const void *sbuf, const size_t *sbytes, const size_t *soffs,
                            void *rbuf, const size_t *rbytes, const size_t *roffs, size_t plan_bytes)
{
    /* Alltoallv's sizes differ by rank: no one input size to compare. */
    const coll_choice *ch = coll == CORE_COLL_ALLTOALL
                                ? coll_plan_reading(t, coll, plan_bytes, sbuf ? sbuf : rbuf, plan_bytes * (size_t)t->n)
                                : coll_plan(t, coll, plan_bytes);
    int n = t->n, me = t->me;
    coll_out *out = coll_outs(t);
    coll_xfer *xf = coll_xfers(t);
    coll_moves m = {.out = out, .xfer = xf, .max_out = n, .max_len = plan_bytes, .only_peer = -1};
    /* As for scatter: the whole send buffer as slot 0 when it fits a round. */
    bool one_slot = coll == CORE_COLL_ALLTOALL &&
                    (ch->lane->single_copy || plan_bytes * (size_t)n + CORE_CACHELINE <= ch->lane->window(&t->lane));
    if (one_slot) {
        m.max_out = 1, m.max_len = plan_bytes * (size_t)n;
        out[m.nout++] = (coll_out){0, sbuf, plan_bytes * (size_t)n};
    }
    if (rbytes[me])
        m.self_src = (const char *)sbuf + soffs[me], m.self_dst = (char *)rbuf + roffs[me], m.self_len = rbytes[me];
    for (int i = 0; i < n; i++) {
        int p = coll_rank_plus(me, i, n);
        if (!one_slot && p != me) /* my own block is copied, not read */
            out[m.nout++] = (coll_out){p, (const char *)sbuf + soffs[p], sbytes[p]};
        if (p != me && rbytes[p])
            xf[m.nxfer++] = one_slot ? (coll_xfer){p, 0, (size_t)me * plan_bytes, (char *)rbuf + roffs[p], rbytes[p]}
                                     : (coll_xfer){p, me, 0, (char *)rbuf + roffs[p], rbytes[p]};
    }
    if (coll == CORE_COLL_ALLTOALLV)
        coll_move_packed(t, ch, &m, -1);
    else
        coll_move_chosen(t, ch, &m);
}

void coll_alltoall(coll_team *t, const void *sbuf, size_t bytes, void *rbuf)
{
    if (bytes == 0)
        return;
    size_t total = bytes * (size_t)t->n;
    size_t *sizes = coll_uniform_blocks(t, bytes, sbuf ? 0 : total);
    size_t *offs = sizes + t->n;
    if (!sbuf) {
        /* In place: peers read my blocks while I overwrite them; send a copy. */
        void *copy = offs + t->n;
        memcpy(copy, rbuf, total);
        sbuf = copy;
    }
    alltoall_common(t, CORE_COLL_ALLTOALL, sbuf, sizes, offs, rbuf, sizes, offs, bytes);
}

void coll_alltoallv(coll_team *t, const void *sbuf, const size_t *sbytes, const size_t *soffs, void *rbuf,
                    const size_t *rbytes, const size_t *roffs)
{
    alltoall_common(t, CORE_COLL_ALLTOALLV, sbuf, sbytes, soffs, rbuf, rbytes, roffs, 0);
}
