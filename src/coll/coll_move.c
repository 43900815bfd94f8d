/* The data-movement engine, and the collectives that only move bytes. */
#include <string.h>

#include "coll_internal.h"

coll_out *coll_outs(coll_team *t) { return t->outs; }
coll_xfer *coll_xfers(coll_team *t) { return t->xfers; }

static size_t min_size(size_t a, size_t b) { return a < b ? a : b; }
static size_t max_size(size_t a, size_t b) { return a > b ? a : b; }

/* Slot holding a rank's header in coll_move_v: {fits, longest slot}. */
static int header_slot(const coll_team *t) { return t->lane.nslots - 1; }

/* Transfers the part of each xfer that lies in [lo, hi) of its slot; the
 * slot's bytes from lo on are what the owner exposed this round. */
static void run_xfers(coll_team *t, const lane_ops *lane, const coll_moves *m, size_t lo, size_t hi,
                      uint64_t exposed)
{
    for (int i = 0; i < m->nxfer; i++) {
        const coll_xfer *x = &m->xfer[i];
        size_t a = max_size(x->off, lo), b = min_size(x->off + x->len, hi);
        if (a >= b)
            continue;
        coll_wait_exposed(t, lane, x->peer, x->slot, exposed);
        char *local = (char *)x->buf + (a - x->off);
        if (m->push)
            lane->put(&t->lane, x->peer, x->slot, a - lo, local, b - a);
        else
            lane->fetch(&t->lane, x->peer, x->slot, a - lo, local, b - a);
    }
}

/* The part of a striped transfer that goes first, on the stripe lane:
 * `share` of it in whole cache lines; all of it when share is 1. */
static size_t stripe_head(size_t len, double share)
{
    return share >= 1 ? len : (size_t)((double)len * share) / CORE_CACHELINE * CORE_CACHELINE;
}

/* Two-sided lanes: the head (`share`, 1: all) of every transfer of this
 * rank becomes a request, made before the round's post so that owners see
 * it after. */
static void request_xfers(coll_team *t, const lane_ops *lane, const coll_moves *m, double share)
{
    lane_requests_begin(&t->lane);
    for (int i = 0; i < m->nxfer; i++) {
        const coll_xfer *x = &m->xfer[i];
        size_t head = stripe_head(x->len, share);
        if (head)
            lane->request(&t->lane, x->peer, x->slot, x->off, x->buf, head);
    }
}

static void copy_self(const coll_moves *m)
{
    if (m->self_len && m->self_src != m->self_dst)
        memcpy(m->self_dst, m->self_src, m->self_len);
}

/* Single-copy lanes: the owner's buffers stay in use until its readers
 * (or writers) are done. */
static void outwait_peers(coll_team *t, const lane_ops *lane, const coll_moves *m, uint64_t done)
{
    if (!lane->single_copy || m->nout == 0)
        return;
    if (m->only_peer >= 0)
        coll_wait(t, m->only_peer, done);
    else
        coll_wait_all(t, done);
}

void coll_move(coll_team *t, const lane_ops *lane, const coll_moves *m)
{
    size_t window = lane->window(&t->lane);
    size_t chunk = SIZE_MAX;
    size_t rounds = 1;
    if (window != SIZE_MAX) {
        size_t share = m->max_out > 1 ? window / (size_t)m->max_out : window; /* most moves expose one slot */
        chunk = share / CORE_CACHELINE * CORE_CACHELINE;
        if (m->max_len > chunk)
            rounds = (m->max_len + chunk - 1) / chunk;
    }
    /* One post where one says it all: a rank that reads nothing is done as
     * soon as it has exposed, one that exposes nothing has nothing to
     * announce before it is done. A second store to the flag line would
     * take it back from the peer that polls it. */
    bool reads = m->nxfer > 0 || lane->two_sided;
    bool exposes = m->nout > 0 || lane->two_sided;
    uint64_t done = 0;
    for (size_t r = 0; r < rounds; r++) {
        size_t lo = r * (chunk == SIZE_MAX ? 0 : chunk);
        size_t hi = chunk == SIZE_MAX ? SIZE_MAX : lo + chunk;
        coll_round_begin(t, m->nout > 0 || (lane->two_sided && m->nxfer > 0));
        for (int i = 0; i < m->nout; i++) {
            const coll_out *o = &m->out[i];
            size_t part = o->len > lo ? min_size(o->len - lo, hi - lo) : 0;
            lane->expose(&t->lane, o->slot, part ? (const char *)o->buf + lo : o->buf, part);
        }
        if (lane->two_sided)
            request_xfers(t, lane, m, 1);
        uint64_t exposed = coll_next_epoch(t);
        done = coll_next_epoch(t);
        if (!reads)
            coll_post(t, done);
        else if (exposes)
            coll_post(t, exposed);
        if (r == 0)
            copy_self(m);
        if (lane->two_sided) {
            /* Every peer's requests are visible once it has posted. */
            coll_wait_all(t, exposed);
            lane->serve(&t->lane);
            lane->complete(&t->lane);
        } else {
            run_xfers(t, lane, m, lo, hi, exposed);
        }
        if (reads)
            coll_post(t, done);
        coll_round_end(t, done);
    }
    outwait_peers(t, lane, m, done);
}

/* Striped pull: the stripe lane (two-sided, reading the same published
 * addresses) carries the head of every transfer, the single-copy lane the
 * tail. Each reader splits its own ranges, so owners need not agree. */
static void move_striped(coll_team *t, const lane_ops *lane, const lane_ops *stripe, double share,
                         const coll_moves *m)
{
    coll_round_begin(t, true);
    for (int i = 0; i < m->nout; i++)
        lane->expose(&t->lane, m->out[i].slot, m->out[i].buf, m->out[i].len);
    request_xfers(t, stripe, m, share);
    uint64_t exposed = coll_next_epoch(t);
    coll_post(t, exposed);
    copy_self(m);
    coll_wait_all(t, exposed); /* every peer's requests are visible */
    stripe->serve(&t->lane);
    for (int i = 0; i < m->nxfer; i++) {
        const coll_xfer *x = &m->xfer[i];
        size_t head = stripe_head(x->len, share);
        if (x->len > head)
            lane->fetch(&t->lane, x->peer, x->slot, x->off + head, (char *)x->buf + head, x->len - head);
    }
    stripe->complete(&t->lane);
    uint64_t done = coll_next_epoch(t);
    coll_post(t, done);
    coll_round_end(t, done);
    outwait_peers(t, lane, m, done);
}

void coll_move_chosen(coll_team *t, const coll_choice *ch, const coll_moves *m)
{
    if (ch->stripe && ch->lane->single_copy && !ch->lane->two_sided && ch->stripe->two_sided && !m->push)
        move_striped(t, ch->lane, ch->stripe, ch->plan.stripe_share, m);
    else
        coll_move(t, ch->lane, m);
}

void coll_move_v(coll_team *t, const coll_choice *ch, const coll_moves *m)
{
    /* Lanes without a window need no agreement on rounds. */
    if (ch->lane->single_copy || ch->lane->two_sided) {
        coll_move(t, ch->lane, m);
        return;
    }
    /* Header round: every rank publishes its longest slot and, when all of
     * its data is small, the data itself. */
    size_t need = 0, longest = 0;
    for (int i = 0; i < m->nout; i++) {
        need += core_align_up(m->out[i].len, CORE_CACHELINE);
        longest = max_size(longest, m->out[i].len);
    }
    bool eager = need + CORE_CACHELINE <= min_size(ch->plan.eager_limit, ch->lane->window(&t->lane));
    coll_round_begin(t, true);
    if (eager)
        for (int i = 0; i < m->nout; i++)
            ch->lane->expose(&t->lane, m->out[i].slot, m->out[i].buf, m->out[i].len);
    lane_slot *hdr = lane_slot_at(&t->lane, t->me, header_slot(t));
    hdr->addr = eager;
    hdr->len = longest;
    uint64_t exposed = coll_next_epoch(t);
    coll_post(t, exposed);
    copy_self(m);
    coll_wait_all(t, exposed);

    bool all_eager = true;
    size_t max_len = 0;
    for (int p = 0; p < t->n; p++) {
        const lane_slot *h = lane_slot_at(&t->lane, p, header_slot(t));
        all_eager = all_eager && h->addr;
        max_len = max_size(max_len, h->len);
    }
    if (all_eager)
        run_xfers(t, ch->lane, m, 0, SIZE_MAX, exposed);
    uint64_t done = coll_next_epoch(t);
    coll_post(t, done);
    coll_round_end(t, done);
    if (all_eager)
        return;

    coll_moves sized = *m;
    sized.max_len = max_len;
    sized.self_len = 0; /* done above */
    coll_move(t, ch->large_lane, &sized);
}

void coll_exchange(coll_team *t, lane_id lane, int peer, const void *send, void *recv, size_t len)
{
    const lane_ops *ops = t->lanes[lane];
    if (!ops)
        core_fatal("internal: lane %d is not usable on this team", (int)lane);
    if (ops->prepare)
        ops->prepare(&t->lane);
    coll_out out = {0, send, len};
    coll_xfer xf = {peer, 0, 0, recv, len};
    coll_moves m = {.out = &out, .nout = peer >= 0, .xfer = &xf, .nxfer = peer >= 0 && recv, .max_out = 1,
                    .max_len = len, .only_peer = peer};
    coll_move(t, ops, &m);
}

/* ---- bcast ---- */

/* Flat on a lane that can put: instead of idling while every rank reads its
 * buffer, the root writes the last 1/n of the message into each rank while
 * they read the rest from it, so every core copies about as much. */
static void bcast_flat_shared(coll_team *t, const lane_ops *lane, void *buf, size_t bytes, int root)
{
    int n = t->n;
    size_t split = bytes / (size_t)n * (size_t)(n - 1) / CORE_CACHELINE * CORE_CACHELINE;
    coll_round_begin(t, true);
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

/* A k-ary tree pipelined in chunks; fanout n-1 is the flat algorithm. */
void coll_bcast(coll_team *t, void *buf, size_t bytes, int root)
{
    if (bytes == 0 || t->n == 1)
        return;
    coll_choice ch = coll_plan(t, CORE_COLL_BCAST, bytes);
    if (ch.plan.algo == PLAN_BCAST_FLAT && ch.lane->single_copy && ch.lane->put) {
        bcast_flat_shared(t, ch.lane, buf, bytes, root);
        return;
    }
    if (ch.lane->two_sided) {
        /* Every rank asks the root for the message. */
        coll_out *out = coll_outs(t);
        coll_xfer *xf = coll_xfers(t);
        coll_moves m = {.out = out, .xfer = xf, .max_out = 1, .max_len = bytes, .only_peer = -1};
        if (t->me == root)
            out[m.nout++] = (coll_out){0, buf, bytes};
        else
            xf[m.nxfer++] = (coll_xfer){root, 0, 0, buf, bytes};
        coll_move(t, ch.lane, &m);
        return;
    }
    int n = t->n, k = ch.plan.algo == PLAN_BCAST_FLAT ? n - 1 : ch.plan.fanout;
    int rel = coll_rank_plus(t->me, n - root, n);
    int parent = rel ? coll_rank_plus(k >= n - 1 ? 0 : (rel - 1) / k, root, n) : -1; /* flat: no divide */
    int first_child = rel * k + 1;
    bool has_children = first_child < n;
    const lane_ops *lane = ch.lane;

    size_t window = lane->window(&t->lane);
    size_t chunk = lane->single_copy ? (k >= n - 1 ? bytes : ch.plan.chunk) : min_size(window, ch.plan.chunk);
    size_t nchunks = bytes <= chunk ? 1 : (bytes + chunk - 1) / chunk;
    uint64_t base = t->epoch;

    if (lane->single_copy) {
        coll_round_begin(t, true);
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
        coll_round_begin(t, has_children);
        if (parent >= 0) {
            coll_wait_exposed(t, lane, parent, 0, t->epoch + 1);
            lane->fetch(&t->lane, parent, 0, 0, (char *)buf + off, len);
        }
        if (has_children)
            lane->expose(&t->lane, 0, (char *)buf + off, len);
        uint64_t e = coll_next_epoch(t);
        coll_post(t, e);
        coll_round_end(t, e);
    }
}

/* ---- gather / gatherv ---- */

/* The tail of a block the root moves itself (plan_choice.root_share), in
 * whole cache lines. */
static size_t root_part(size_t bytes, double share)
{
    return share > 0 ? (size_t)((double)bytes * share) / CORE_CACHELINE * CORE_CACHELINE : 0;
}

static void gather_common(coll_team *t, core_coll coll, const void *sbuf, size_t sbytes, void *rbuf,
                          const size_t *rbytes, const size_t *roffs, int root, size_t plan_bytes)
{
    coll_choice ch = coll_plan(t, coll, plan_bytes);
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

    if (ch.plan.algo == PLAN_MOVE_PUSH && !v) {
        /* The root exposes one slot per rank's place; every rank writes its
         * own, all of it or the head, whose tail the root reads itself. */
        size_t head = sbytes - root_part(sbytes, ch.plan.root_share);
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
        coll_move_v(t, &ch, &m);
    } else {
        m.max_len = plan_bytes;
        coll_move_chosen(t, &ch, &m);
    }
}

void coll_gather(coll_team *t, const void *sbuf, size_t bytes, void *rbuf, int root)
{
    if (bytes == 0)
        return;
    size_t *sizes = coll_temp(t, 2 * (size_t)t->n * sizeof(size_t));
    size_t *offs = sizes + t->n;
    for (int p = 0; p < t->n; p++) {
        sizes[p] = bytes;
        offs[p] = (size_t)p * bytes;
    }
    gather_common(t, CORE_COLL_GATHER, sbuf, bytes, rbuf, sizes, offs, root, bytes);
}

void coll_gatherv(coll_team *t, const void *sbuf, size_t sbytes, void *rbuf, const size_t *rbytes,
                  const size_t *roffs, int root)
{
    /* Sizes differ per rank and only the root knows them all: the planner
     * sees what this rank sends, and the engine agrees on rounds itself. */
    gather_common(t, CORE_COLL_GATHERV, sbuf, sbytes, rbuf, rbytes, roffs, root, 0);
}

/* ---- allgather / allgatherv ---- */

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
    coll_choice ch = coll_plan(t, coll, longest);
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
    coll_move_chosen(t, &ch, &m);
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
    size_t *sizes = coll_temp(t, 2 * (size_t)t->n * sizeof(size_t));
    size_t *offs = sizes + t->n;
    for (int p = 0; p < t->n; p++) {
        sizes[p] = bytes;
        offs[p] = (size_t)p * bytes;
    }
    allgather_common(t, CORE_COLL_ALLGATHER, sbuf, bytes, rbuf, sizes, offs);
}

/* ---- scatter / scatterv ---- */

static void scatter_common(coll_team *t, core_coll coll, const void *sbuf, const size_t *sbytes,
                           const size_t *soffs, void *rbuf, size_t rbytes, int root, size_t plan_bytes)
{
    coll_choice ch = coll_plan(t, coll, plan_bytes);
    int n = t->n, me = t->me;
    coll_out *out = coll_outs(t);
    coll_xfer *xf = coll_xfers(t);
    coll_moves m = {.out = out, .xfer = xf, .max_out = n, .max_len = plan_bytes, .only_peer = -1};
    /* When the root's whole buffer fits one round, it goes out as one slot
     * (slot 0: found through its note, small ones inside it) and readers
     * take their block at its offset; else one slot per rank, so rounds
     * share the window fairly. */
    bool one_slot = coll == CORE_COLL_SCATTER &&
                    (ch.lane->single_copy || plan_bytes * (size_t)n + CORE_CACHELINE <= ch.lane->window(&t->lane));
    if (one_slot)
        m.max_out = 1, m.max_len = plan_bytes * (size_t)n;
    /* With a root share, the root also writes the tail of every block into
     * its rank's buffer (slot 0 there), and that rank reads the head. */
    size_t tail = one_slot ? root_part(plan_bytes, ch.plan.root_share) : 0;
    if (me == root) {
        if (rbuf && sbytes[me])
            m.self_src = (const char *)sbuf + soffs[me], m.self_dst = rbuf, m.self_len = sbytes[me];
        if (one_slot)
            out[m.nout++] = (coll_out){0, sbuf, plan_bytes * (size_t)n};
        else
            for (int p = 0; p < n; p++)
                out[m.nout++] = (coll_out){p, (const char *)sbuf + soffs[p], p == me ? 0 : sbytes[p]};
        for (int p = 0; tail && p < n; p++)
            if (p != root)
                xf[m.nxfer++] = (coll_xfer){p, 0, plan_bytes - tail, (char *)sbuf + soffs[p] + plan_bytes - tail, tail};
        m.push = tail > 0;
    } else if (rbytes) {
        xf[m.nxfer++] = one_slot ? (coll_xfer){root, 0, soffs[me], rbuf, rbytes - tail}
                                 : (coll_xfer){root, me, 0, rbuf, rbytes};
        if (tail) {
            out[m.nout++] = (coll_out){0, rbuf, rbytes};
            m.only_peer = root;
        }
    }
    if (coll == CORE_COLL_SCATTERV)
        coll_move_v(t, &ch, &m);
    else
        coll_move_chosen(t, &ch, &m);
}

void coll_scatter(coll_team *t, const void *sbuf, size_t bytes, void *rbuf, int root)
{
    if (bytes == 0)
        return;
    size_t *sizes = coll_temp(t, 2 * (size_t)t->n * sizeof(size_t));
    size_t *offs = sizes + t->n;
    for (int p = 0; p < t->n; p++) {
        sizes[p] = bytes;
        offs[p] = (size_t)p * bytes;
    }
    scatter_common(t, CORE_COLL_SCATTER, sbuf, sizes, offs, rbuf, bytes, root, bytes);
}

void coll_scatterv(coll_team *t, const void *sbuf, const size_t *sbytes, const size_t *soffs, void *rbuf,
                   size_t rbytes, int root)
{
    scatter_common(t, CORE_COLL_SCATTERV, sbuf, sbytes, soffs, rbuf, rbytes, root, 0);
}

/* ---- alltoall / alltoallv ---- */

static void alltoall_common(coll_team *t, core_coll coll, const void *sbuf, const size_t *sbytes,
                            const size_t *soffs, void *rbuf, const size_t *rbytes, const size_t *roffs,
                            size_t plan_bytes)
{
    coll_choice ch = coll_plan(t, coll, plan_bytes);
    int n = t->n, me = t->me;
    coll_out *out = coll_outs(t);
    coll_xfer *xf = coll_xfers(t);
    coll_moves m = {.out = out, .xfer = xf, .max_out = n, .max_len = plan_bytes, .only_peer = -1};
    /* As for scatter: the whole send buffer as slot 0 when it fits a round. */
    bool one_slot = coll == CORE_COLL_ALLTOALL &&
                    (ch.lane->single_copy || plan_bytes * (size_t)n + CORE_CACHELINE <= ch.lane->window(&t->lane));
    if (one_slot) {
        m.max_out = 1, m.max_len = plan_bytes * (size_t)n;
        out[m.nout++] = (coll_out){0, sbuf, plan_bytes * (size_t)n};
    }
    if (rbytes[me])
        m.self_src = (const char *)sbuf + soffs[me], m.self_dst = (char *)rbuf + roffs[me], m.self_len = rbytes[me];
    for (int i = 0; i < n; i++) {
        int p = coll_rank_plus(me, i, n);
        if (!one_slot)
            out[m.nout++] = (coll_out){p, (const char *)sbuf + soffs[p], p == me ? 0 : sbytes[p]};
        if (p != me && rbytes[p])
            xf[m.nxfer++] = one_slot ? (coll_xfer){p, 0, (size_t)me * plan_bytes, (char *)rbuf + roffs[p], rbytes[p]}
                                     : (coll_xfer){p, me, 0, (char *)rbuf + roffs[p], rbytes[p]};
    }
    if (coll == CORE_COLL_ALLTOALLV)
        coll_move_v(t, &ch, &m);
    else
        coll_move_chosen(t, &ch, &m);
}

void coll_alltoall(coll_team *t, const void *sbuf, size_t bytes, void *rbuf)
{
    if (bytes == 0)
        return;
    size_t total = bytes * (size_t)t->n;
    size_t *sizes = coll_temp(t, 2 * (size_t)t->n * sizeof(size_t) + (sbuf ? 0 : total));
    size_t *offs = sizes + t->n;
    if (!sbuf) {
        /* In place: peers read my blocks while I overwrite them; send a copy. */
        void *copy = offs + t->n;
        memcpy(copy, rbuf, total);
        sbuf = copy;
    }
    for (int p = 0; p < t->n; p++) {
        sizes[p] = bytes;
        offs[p] = (size_t)p * bytes;
    }
    alltoall_common(t, CORE_COLL_ALLTOALL, sbuf, sizes, offs, rbuf, sizes, offs, bytes);
}

void coll_alltoallv(coll_team *t, const void *sbuf, const size_t *sbytes, const size_t *soffs, void *rbuf,
                    const size_t *rbytes, const size_t *roffs)
{
    alltoall_common(t, CORE_COLL_ALLTOALLV, sbuf, sbytes, soffs, rbuf, rbytes, roffs, 0);
}
