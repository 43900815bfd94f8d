/* The data-movement engine: a rank's exposures and transfers (coll_moves)
 * run on one lane in as many rounds as its window needs, striped over two
 * lanes, or with sizes unknown beforehand (v-variants); and coll_exchange,
 * one transfer on a given lane for measuring lanes. Gather, scatter,
 * allgather and alltoall describe their moves and hand them to it. */
#include <string.h>

#include "coll_internal.h"

bool coll_move_runs(plan_algo a, bool push_described)
{
    return a == PLAN_MOVE_PULL || (push_described && a == PLAN_MOVE_PUSH);
}

coll_out *coll_outs(coll_team *t) { return t->outs; }

size_t *coll_uniform_blocks(coll_team *t, size_t bytes, size_t extra)
{
    size_t *sizes = coll_temp(t, 2 * (size_t)t->n * sizeof(size_t) + extra);
    size_t *offs = sizes + t->n;
    for (int p = 0; p < t->n; p++) {
        sizes[p] = bytes;
        offs[p] = (size_t)p * bytes;
    }
    return sizes;
}
coll_xfer *coll_xfers(coll_team *t) { return t->xfers; }

/* Bytes a rank may expose in coll_move_v's and coll_move_packed's header round. */
static size_t eager_room(const coll_team *t, const coll_choice *ch)
{
    return min_size(ch->plan.eager_limit, ch->lane->window(&t->lane));
}

/* Transfers the part of each xfer that lies in [lo, hi) of its slot; the
 * slot's bytes from lo on are what the owner exposed this round. */
static void run_xfers(coll_team *t, const lane_ops *lane, const coll_moves *m, size_t lo, size_t hi, uint64_t exposed)
{
    for (int i = 0; i < m->nxfer; i++) {
        const coll_xfer *x = &m->xfer[i];
        size_t a = max_size(x->off, lo), b = min_size(x->off + x->len, hi);
        if (a >= b)
            continue;
        coll_wait_exposed(t, lane, x->peer, x->slot, exposed, a - lo, b - a);
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

/* A round's two epochs, and its first post: one post where one says it
 * all. A rank that reads nothing is done as soon as it has exposed, one that
 * exposes nothing has nothing to announce before it is done; a second store
 * to the flag line would take it back from the peer that polls it. */
static void post_exposed(coll_team *t, bool exposes, bool reads, uint64_t *exposed, uint64_t *done)
{
    *exposed = coll_next_epoch(t);
    *done = coll_next_epoch(t);
    if (!reads)
        coll_post(t, *done);
    else if (exposes)
        coll_post(t, *exposed);
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
    bool reads = m->nxfer > 0 || lane->two_sided;
    bool exposes = m->nout > 0 || lane->two_sided;
    uint64_t done = 0;
    for (size_t r = 0; r < rounds; r++) {
        size_t lo = r * (chunk == SIZE_MAX ? 0 : chunk);
        size_t hi = chunk == SIZE_MAX ? SIZE_MAX : lo + chunk;
        coll_round_begin(t, m->nout > 0 || (lane->two_sided && m->nxfer > 0), r + 1 == rounds && !reads);
        for (int i = 0; i < m->nout; i++) {
            const coll_out *o = &m->out[i];
            size_t part = o->len > lo ? min_size(o->len - lo, hi - lo) : 0;
            lane->expose(&t->lane, o->slot, part ? (const char *)o->buf + lo : o->buf, part);
        }
        if (lane->two_sided)
            request_xfers(t, lane, m, 1);
        uint64_t exposed;
        post_exposed(t, exposes, reads, &exposed, &done);
        if (r == 0)
            copy_self(m);
        if (lane->two_sided) {
            /* Every peer's requests are visible once it has posted. */
            coll_wait_all(t, exposed);
            lane->serve(&t->lane);
            lane->complete(&t->lane);
        } else if (m->nxfer) {
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
static void move_striped(coll_team *t, const lane_ops *lane, const lane_ops *stripe, double share, const coll_moves *m)
{
    coll_round_begin(t, true, m->nxfer == 0);
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

void coll_move_paired(coll_team *t, const coll_choice *ch, const coll_moves *small, const coll_moves *large)
{
    const lane_ops *lane = ch->lane, *big = ch->large_lane;
    bool exposes = small->nout > 0 || large->nout > 0;
    bool reads = small->nxfer > 0 || large->nxfer > 0;
    coll_round_begin(t, exposes, !reads);
    for (int i = 0; i < small->nout; i++)
        lane->expose(&t->lane, small->out[i].slot, small->out[i].buf, small->out[i].len);
    for (int i = 0; i < large->nout; i++)
        big->expose(&t->lane, large->out[i].slot, large->out[i].buf, large->out[i].len);
    uint64_t exposed, done;
    post_exposed(t, exposes, reads, &exposed, &done);
    copy_self(small);
    run_xfers(t, lane, small, 0, SIZE_MAX, exposed);
    run_xfers(t, big, large, 0, SIZE_MAX, exposed);
    if (reads)
        coll_post(t, done);
    coll_round_end(t, done);
    outwait_peers(t, big, large, done);
}

/* The word a header round publishes: (longest block << 1) | the blocks
 * went with it; else a sized move of the longest block follows. */
typedef uint64_t size_header;
static size_header size_header_of(size_t longest, bool with_blocks) { return (size_header)longest << 1 | with_blocks; }
static bool header_with_blocks(size_header h) { return h & 1; }
static size_t header_longest(size_header h) { return (size_t)(h >> 1); }

bool coll_fits_eager(const coll_team *t, const coll_choice *ch, size_t len)
{
    return core_align_up(len, CORE_CACHELINE) + CORE_CACHELINE <= eager_room(t, ch);
}

void coll_move_v(coll_team *t, const coll_choice *ch, const coll_moves *m, int root)
{
    /* Lanes without a window need no agreement on rounds. */
    if (ch->lane->single_copy || ch->lane->two_sided) {
        coll_move(t, ch->lane, m);
        return;
    }
    const lane_ops *lane = ch->lane;
    bool is_root = t->me == root;
    /* Header round: a rank whose block fits it exposes it at once; the root,
     * which knows every size, exposes its verdict in its note: whether all
     * of them fit, so have arrived, or a sized move follows. */
    size_header verdict = 0;
    coll_round_begin(t, true, false);
    if (is_root) {
        verdict = size_header_of(m->max_len, coll_fits_eager(t, ch, m->max_len));
        lane->expose(&t->lane, 0, &verdict, sizeof verdict);
    } else if (m->nout == 1 && coll_fits_eager(t, ch, m->out[0].len)) {
        lane->expose(&t->lane, m->out[0].slot, m->out[0].buf, m->out[0].len);
    }
    /* One post where one says it all, as in coll_move: a root that reads
     * nothing (every other block empty) is done at once. */
    bool reads = !is_root || m->nxfer > 0;
    uint64_t exposed = coll_next_epoch(t), done = coll_next_epoch(t);
    coll_post(t, reads ? exposed : done);
    copy_self(m);
    if (!is_root) {
        coll_wait_exposed(t, lane, root, 0, exposed, 0, sizeof verdict);
        lane->fetch(&t->lane, root, 0, 0, &verdict, sizeof verdict);
    }
    bool eager = header_with_blocks(verdict);
    if (eager)
        run_xfers(t, lane, m, 0, SIZE_MAX, exposed);
    if (reads)
        coll_post(t, done);
    coll_round_end(t, done);
    if (eager)
        return;

    coll_moves sized = *m;
    sized.max_len = header_longest(verdict);
    sized.self_len = 0; /* done above */
    coll_move(t, ch->large_lane, &sized);
}

/* coll_move_packed's slot 0: a size_header (with blocks: they follow
 * packed); then one offset per slot (where its block starts in slot 0, 32
 * bits, so that a packed slot stays below 4 GiB; slots without a block
 * keep whatever was there, no reader asks for them); then the blocks.
 * At 2 ranks a 32-byte block still fits a note's first line. */
static size_t packed_table_bytes(int n) { return sizeof(size_header) + (size_t)n * sizeof(uint32_t); }

/* Packs this rank's exposures into slot 0 and exposes it; returns its
 * header. small_max SIZE_MAX: all of them where they fit, else none (the
 * header says which); else each of at most small_max bytes (they fit:
 * split_small_max), the others exposed elsewhere by the caller. */
static size_header expose_packed(coll_team *t, const coll_choice *ch, const coll_moves *m, size_t small_max)
{
    bool split = small_max != SIZE_MAX;
    size_t table = packed_table_bytes(t->n), blocks = 0, longest = 0;
    for (int i = 0; i < m->nout; i++) {
        blocks += m->out[i].len <= small_max ? m->out[i].len : 0;
        longest = max_size(longest, m->out[i].len);
    }
    bool packed = split || (table + blocks + CORE_CACHELINE <= eager_room(t, ch) && table + blocks <= UINT32_MAX);
    size_header h = size_header_of(longest, packed);
    /* Assembled where readers find it (every lane that comes here, one
     * with a window, can): a copy through a temporary would move every
     * block twice. */
    const lane_ops *lane = ch->lane;
    size_t len = table + (packed ? blocks : 0);
    char *slot = lane->expose_area(&t->lane, len);
    memcpy(slot, &h, sizeof h);
    size_t at = table;
    for (int i = 0; i < m->nout; i++) {
        const coll_out *o = &m->out[i]; /* slot o->slot: rank o->slot's block */
        bool in = packed && o->len <= small_max;
        uint32_t offset = (uint32_t)at;
        memcpy(slot + sizeof h + (size_t)o->slot * sizeof offset, &offset, sizeof offset);
        if (in && o->len)
            memcpy(slot + at, o->buf, o->len);
        at += in ? o->len : 0;
    }
    lane->expose_commit(&t->lane, len);
    return h;
}

/* A word of peer's slot 0 (a header, an offset), through the lane's view:
 * a load from the line just polled rather than a fetch and a call to copy
 * a few bytes. */
static inline void read_field(coll_team *t, const lane_ops *lane, int peer, size_t off, void *dst, size_t len)
{
    const void *at = lane->view(&t->lane, peer, 0, off, len, dst);
    if (at != dst)
        memcpy(dst, at, len);
}

/* The largest block that goes packed where blocks are split by size: as
 * many as a rank exposes (n - 1 beside its own), each of that size, still
 * fit its slot 0 with the table. */
static size_t split_small_max(const coll_team *t, const coll_choice *ch)
{
    size_t fixed = packed_table_bytes(t->n) + CORE_CACHELINE, room = eager_room(t, ch);
    return t->n > 1 && room > fixed ? (room - fixed) / (size_t)(t->n - 1) : 0;
}

/* coll_move_packed where the large lane is single-copy: both ends of a
 * block know its size, so each goes packed in slot 0 if small, else on the
 * large lane, in one round: no rank waits for another's header to learn
 * whether a sized round follows (at 4 ranks on 2 cores, alltoallv from
 * 128 KiB ran 0.68-0.90x of Open MPI's with that second round). */
static void move_packed_split(coll_team *t, const coll_choice *ch, const coll_moves *m, int root)
{
    const lane_ops *lane = ch->lane, *big = ch->large_lane;
    size_t small_max = split_small_max(t, ch);
    bool exposes = root < 0 || t->me == root, reads = root < 0 || t->me != root, exposes_big = false;
    coll_round_begin(t, exposes, !reads);
    if (exposes) {
        expose_packed(t, ch, m, small_max);
        for (int i = 0; i < m->nout; i++)
            if (m->out[i].len > small_max) {
                big->expose(&t->lane, m->out[i].slot, m->out[i].buf, m->out[i].len);
                exposes_big = true;
            }
    }
    uint64_t exposed, done;
    post_exposed(t, exposes, reads, &exposed, &done);
    copy_self(m);
    for (int i = 0; reads && i < m->nxfer; i++) {
        const coll_xfer *x = &m->xfer[i];
        if (x->len <= small_max) {
            uint32_t at;
            coll_wait_exposed(t, lane, x->peer, 0, exposed, 0, sizeof(size_header));
            read_field(t, lane, x->peer, sizeof(size_header) + (size_t)x->slot * sizeof at, &at, sizeof at);
            lane->fetch(&t->lane, x->peer, 0, at + x->off, x->buf, x->len);
        } else {
            coll_wait_exposed(t, big, x->peer, x->slot, exposed, x->off, x->len);
            big->fetch(&t->lane, x->peer, x->slot, x->off, x->buf, x->len);
        }
    }
    if (reads)
        coll_post(t, done);
    coll_round_end(t, done);
    /* Single copy: the big blocks' readers read this rank's own memory. */
    if (exposes_big && m->only_peer >= 0)
        coll_wait(t, m->only_peer, done);
    else if (exposes_big)
        coll_wait_all(t, done);
}

void coll_move_packed(coll_team *t, const coll_choice *ch, const coll_moves *m, int root)
{
    if (coll_splits_by_size(ch)) {
        move_packed_split(t, ch, m, root);
        return;
    }
    if (ch->lane->single_copy || ch->lane->two_sided) {
        coll_move(t, ch->lane, m);
        return;
    }
    const lane_ops *lane = ch->lane;
    int n = t->n, me = t->me;
    bool exposes = root < 0 || me == root, reads = root < 0 || me != root;
    /* What every header says together: all packed, and the longest block;
     * every rank reads the same headers (its own included), so all agree. */
    bool packed = true;
    size_t longest = 0;
    coll_round_begin(t, exposes, false);
    if (exposes) {
        size_header h = expose_packed(t, ch, m, SIZE_MAX);
        packed = header_with_blocks(h), longest = header_longest(h);
    }
    uint64_t exposed, done;
    post_exposed(t, exposes, reads, &exposed, &done);
    copy_self(m);
    if (reads) {
        for (int i = 1; i < n; i++) {
            int p = root < 0 ? coll_rank_plus(me, i, n) : root;
            size_header h;
            coll_wait_exposed(t, lane, p, 0, exposed, 0, sizeof h);
            read_field(t, lane, p, 0, &h, sizeof h);
            packed = packed && header_with_blocks(h);
            longest = max_size(longest, header_longest(h));
            if (root >= 0)
                break;
        }
        for (int i = 0; packed && i < m->nxfer; i++) {
            const coll_xfer *x = &m->xfer[i];
            uint32_t at;
            read_field(t, lane, x->peer, sizeof(size_header) + (size_t)x->slot * sizeof at, &at, sizeof at);
            lane->fetch(&t->lane, x->peer, 0, at + x->off, x->buf, x->len);
        }
        coll_post(t, done);
    }
    coll_round_end(t, done);
    if (packed)
        return;
    /* Every rank learnt the longest block from the headers. */
    coll_moves sized = *m;
    sized.max_len = longest;
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
    coll_moves m = {.out = &out,
                    .nout = peer >= 0,
                    .xfer = &xf,
                    .nxfer = peer >= 0 && recv,
                    .max_out = 1,
                    .max_len = len,
                    .only_peer = peer};
    coll_move(t, ops, &m);
}
