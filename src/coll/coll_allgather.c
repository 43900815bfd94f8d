/* Allgather and allgatherv, by the movement engine (coll_move.c). Algorithm:
 *   pull  every rank exposes its block and reads the n-1 others: n-1
 *         transfers per rank, all ranks at once; its own copy overlaps them. */
#include <string.h>

#include "coll_internal.h"
/* Every rank knows every size here, so allgatherv plans like allgather with
 * its longest block; each keeps its own name for the planner's factors. */
static void allgather_common(coll_team *t, core_coll coll, const void *sbuf, size_t sbytes, void *rbuf,
                             const size_t *rbytes, const size_t *roffs)
{
    int n = t->n, me = t->me;
    size_t longest = 0;
    for (int p = 0; p < n; p++)
        longest = max_size(longest, rbytes[p]);
    if (longest == 0)
        return;
    const coll_choice *ch = coll_plan_reading(t, coll, longest, sbuf ? sbuf : (char *)rbuf + roffs[me], rbytes[me]);
    coll_out *out = coll_outs(t);
    coll_xfer *xf = coll_xfers(t);
    coll_moves m = {.out = out, .nout = 1, .xfer = xf, .max_out = 1, .max_len = longest, .only_peer = -1};
    /* Peers read my block from my send buffer, or from its place in rbuf
     * when in place, while I copy it there myself. */
    out[0] = (coll_out){0, sbuf ? sbuf : (char *)rbuf + roffs[me], rbytes[me]};
    if (sbuf)
        m.self_src = sbuf, m.self_dst = (char *)rbuf + roffs[me], m.self_len = sbytes;
    for (int i = 1; i < n; i++) {
        int p = coll_rank_plus(me, i, n);
        if (rbytes[p])
            xf[m.nxfer++] = (coll_xfer){p, 0, 0, (char *)rbuf + roffs[p], rbytes[p]};
    }
    coll_move_chosen(t, ch, &m);
}

void coll_allgatherv(coll_team *t, const void *sbuf, size_t sbytes, void *rbuf, const size_t *rbytes,
                     const size_t *roffs)
{
    allgather_common(t, CORE_COLL_ALLGATHERV, sbuf, sbytes, rbuf, rbytes, roffs);
}

void coll_allgather(coll_team *t, const void *sbuf, size_t bytes, void *rbuf)
{
    if (bytes == 0)
        return;
    size_t *sizes = coll_uniform_blocks(t, bytes, 0);
    size_t *offs = sizes + t->n;
    allgather_common(t, CORE_COLL_ALLGATHER, sbuf, bytes, rbuf, sizes, offs);
}
