/* cells lane: copy-in / copy-out through the shared segment. */
#include <stddef.h>
#include <string.h>

#include "core.h"
#include "lane.h"

static size_t cells_window(const lane_ctx *ctx) { return ctx->stage_size; }

static lane_note *note_of(const lane_ctx *ctx, int rank)
{
    return &ctx->notes[(size_t)rank * LANE_ROUNDS + (size_t)ctx->parity];
}

/* Most bytes of an exposure whose lines the next round claims ahead: in
 * any round, and in one after which the rank is idle until a later call. */
#define CELLS_CLAIM_MAX 4096
#define CELLS_CLAIM_IDLE_MAX 65536

/* Asks for the lines the next round will write where this one wrote len
 * bytes at `at` (in a note, or in this round's staging area), in a writable
 * state: a peer read them LANE_ROUNDS rounds before, and this rank's stores
 * into them would otherwise wait for their invalidation in the next call,
 * the store queue stalled behind each (0.2-0.3 us of a 256-byte scatter's
 * root where a line crosses the machine in 0.37 us). Where lines cross
 * cores slowly that stall outweighs the copy: on a 2-core Xeon VM, bcast,
 * scatter and gather of 8-64 KiB over the cells ran 1.2-1.6x faster under
 * OSU's loop with the claim beyond 4 KiB. But a claim competes with what
 * the rank does next: before a read of its own (allgather, alltoall) or the
 * next round of the same call it cost 5-15 %, so beyond CELLS_CLAIM_MAX
 * only a rank idle after the round (lane_ctx.idle_after_round) claims. */
static void claim_next_round(const lane_ctx *ctx, const char *at, size_t len, size_t round_stride)
{
    if (len > (ctx->idle_after_round ? CELLS_CLAIM_IDLE_MAX : CELLS_CLAIM_MAX))
        return;
    const char *next = lane_next_round_at(ctx, at, round_stride);
    for (size_t l = 0; l < len; l += CORE_CACHELINE)
        core_prefetch_for_write(next + l);
}

/* Most bytes of an exposure whose lines are handed to the shared cache:
 * beyond, the reader streams them and the hints cost more than they save. */
#define CELLS_DEMOTE_MAX 512

/* Hands the lines of len bytes at `at`, just written, to the shared cache,
 * where the reader takes them from sooner than from this core's. */
static void demote_written(const char *at, size_t len)
{
    if (len > CELLS_DEMOTE_MAX)
        return;
    for (size_t l = 0; l < len; l += CORE_CACHELINE)
        core_cache_demote(at + l);
}

/* Where this round's staging area is free, with room for len bytes. */
static char *staging_room(lane_ctx *ctx, size_t len)
{
    if (ctx->stage_used + len > ctx->stage_size)
        core_fatal("internal: %zu bytes exposed on the cells lane exceed its %zu-byte window", ctx->stage_used + len,
                   ctx->stage_size);
    return lane_staging_of(ctx, ctx->me) + ctx->stage_used;
}

/* Where slot 0's len bytes go: inside the note when they fit, else staged. */
static void *cells_expose_area(lane_ctx *ctx, size_t len)
{
    return len <= LANE_INLINE_MAX ? (void *)note_of(ctx, ctx->me)->bytes : staging_room(ctx, len);
}

static void cells_expose_commit(lane_ctx *ctx, size_t len)
{
    lane_note *note = note_of(ctx, ctx->me);
    const char *staged = NULL;
    if (len <= LANE_INLINE_MAX) {
        note->inline_len = (uint32_t)len + 1;
    } else {
        /* The head goes into the note's first line too: a reader whose
         * bytes lie there (a table at the front, a small block) takes them
         * from the line it has just polled. */
        staged = lane_staging_of(ctx, ctx->me) + ctx->stage_used;
        memcpy(note->bytes, staged, LANE_NOTE_HEAD);
        note->inline_len = 0;
        note->staged_at = (uint32_t)(ctx->stage_used / CORE_CACHELINE);
        ctx->stage_used += core_align_up(len, CORE_CACHELINE);
    }
    /* Last: the stamp makes the rest valid. */
    atomic_store_explicit(&note->stamp, *ctx->epoch + 1, memory_order_release);
    size_t note_used = staged ? CORE_CACHELINE : offsetof(lane_note, bytes) + len;
    demote_written((const char *)note, note_used);
    claim_next_round(ctx, (const char *)note, note_used, sizeof *note);
    if (staged) {
        demote_written(staged, len);
        claim_next_round(ctx, staged, len, ctx->stage_stride);
    }
}

static void cells_expose(lane_ctx *ctx, int slot, const void *buf, size_t len)
{
    if (slot == 0) { /* slot 0 is found through the note */
        void *area = cells_expose_area(ctx, len);
        if (len)
            memcpy(area, buf, len);
        cells_expose_commit(ctx, len);
        return;
    }
    char *at = staging_room(ctx, len);
    if (len)
        memcpy(at, buf, len);
    demote_written(at, len);
    claim_next_round(ctx, at, len, ctx->stage_stride);
    lane_slot *s = lane_slot_at(ctx, ctx->me, slot);
    s->addr = ctx->stage_used;
    s->len = len;
    /* Keep each exposed piece on its own cache lines. */
    ctx->stage_used += core_align_up(len, CORE_CACHELINE);
}

/* Most bytes a reader starts fetching while it polls: beyond, its copy
 * streams and the first line's wait is a small part of it. */
#define CELLS_EARLY_FETCH_MAX 256

static bool cells_note_arrived(const lane_ctx *ctx, int peer, uint64_t epoch, size_t off, size_t len)
{
    if (atomic_load_explicit(&note_of(ctx, peer)->stamp, memory_order_acquire) == epoch)
        return true;
    /* Bytes that cannot all be in the note are staged, from the start of
     * the area where slot 0 was the round's first exposure (it mostly is):
     * asking for their lines now, while the owner writes them, overlaps
     * their transfer with the note's instead of following it. A wrong
     * guess costs only the prefetches. */
    if (off + len > LANE_INLINE_MAX && len <= CELLS_EARLY_FETCH_MAX) {
        const char *at = lane_staging_of(ctx, peer) + off;
        for (size_t l = 0; l < len; l += CORE_CACHELINE)
            __builtin_prefetch(at + l);
        __builtin_prefetch(at + len - 1);
    }
    return false;
}

static const void *cells_view(lane_ctx *ctx, int peer, int slot, size_t off, size_t len, void *scratch)
{
    (void)scratch;
    if (slot == 0) {
        const lane_note *note = note_of(ctx, peer);
        if (note->inline_len || off + len <= LANE_NOTE_HEAD)
            return note->bytes + off;
        return lane_staging_of(ctx, peer) + (size_t)note->staged_at * CORE_CACHELINE + off;
    }
    const lane_slot *s = lane_slot_at(ctx, peer, slot);
    return lane_staging_of(ctx, peer) + s->addr + off;
}

static void cells_fetch(lane_ctx *ctx, int peer, int slot, size_t off, void *dst, size_t len)
{
    if (len)
        memcpy(dst, cells_view(ctx, peer, slot, off, len, NULL), len);
}

const lane_ops lane_cells = {
    .name = "cells",
    .id = LANE_CELLS,
    .single_copy = false,
    .two_sided = false,
    .window = cells_window,
    .expose = cells_expose,
    .expose_area = cells_expose_area,
    .expose_commit = cells_expose_commit,
    .fetch = cells_fetch,
    .note_arrived = cells_note_arrived,
    .view = cells_view,
    .put = NULL,
};

/* Request tables belong to no lane in particular: every two-sided lane uses them. */
int lane_request_add(lane_ctx *ctx, int owner, int slot, size_t off, size_t len)
{
    uint32_t *count = &ctx->nreq[(size_t)ctx->me * LANE_ROUNDS + (size_t)ctx->parity];
    if ((int)*count >= ctx->nrequests)
        core_fatal("internal: more than %d requests in one round", ctx->nrequests);
    lane_request *r =
        &ctx->requests[((size_t)ctx->me * LANE_ROUNDS + (size_t)ctx->parity) * (size_t)ctx->nrequests + *count];
    r->owner = (uint32_t)owner;
    r->slot = (uint32_t)slot;
    r->off = off;
    r->len = len;
    return (int)(*count)++;
}

const lane_request *lane_requests_of(const lane_ctx *ctx, int rank, uint32_t *count)
{
    *count = ctx->nreq[(size_t)rank * LANE_ROUNDS + (size_t)ctx->parity];
    return &ctx->requests[((size_t)rank * LANE_ROUNDS + (size_t)ctx->parity) * (size_t)ctx->nrequests];
}
