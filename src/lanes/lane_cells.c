/* cells lane: copy-in / copy-out through the shared segment. */
#include <stddef.h>
#include <string.h>

#include "core.h"
#include "lane.h"

static size_t cells_window(const lane_ctx *ctx) { return ctx->stage_size; }

/* Per round buffer, in the flag's own line: where slot 0's bytes are (tag:
 * length + 1 when inline, 0 when in the staging area at staged_at cache
 * lines from its start: exposures are line-aligned), and up to
 * 8 of them; 9 to 16 bytes go to the line paired with the flag's, which
 * comes along for a few nanoseconds more. A reader of slot 0 touches only
 * the flag's pair of lines unless the data is larger. */
#define NEAR_MAX 8
typedef struct slot0_where {
    uint8_t tag[LANE_ROUNDS];
    uint32_t staged_at[LANE_ROUNDS];
    _Alignas(8) unsigned char near[LANE_ROUNDS][NEAR_MAX];
} slot0_where;
typedef struct slot0_data {
    _Alignas(16) unsigned char bytes[LANE_ROUNDS][LANE_INLINE_MAX];
} slot0_data;
_Static_assert(sizeof(slot0_where) <= sizeof(((core_flag *)0)->payload), "slot-0 header fits the flag line");
_Static_assert(sizeof(slot0_data) <= sizeof(((core_flag *)0)->payload_near), "inline data fits the paired line");

static slot0_where *where_of(const lane_ctx *ctx, int rank) { return (slot0_where *)(void *)ctx->flags[rank].payload; }

/* Where len inline bytes of rank's slot 0 live this round. */
static unsigned char *inline_of(const lane_ctx *ctx, int rank, size_t len)
{
    if (len <= NEAR_MAX)
        return where_of(ctx, rank)->near[ctx->parity];
    return ((slot0_data *)(void *)ctx->flags[rank].payload_near)->bytes[ctx->parity];
}

static void cells_expose(lane_ctx *ctx, int slot, const void *buf, size_t len)
{
    if (slot == 0) {
        slot0_where *where = where_of(ctx, ctx->me);
        if (len <= LANE_INLINE_MAX) {
            if (len)
                memcpy(inline_of(ctx, ctx->me, len), buf, len);
            where->tag[ctx->parity] = (uint8_t)(len + 1);
            return;
        }
        where->tag[ctx->parity] = 0;
        where->staged_at[ctx->parity] = (uint32_t)(ctx->stage_used / CORE_CACHELINE);
    }
    if (ctx->stage_used + len > ctx->stage_size)
        core_fatal("internal: %zu bytes exposed on the cells lane exceed its %zu-byte window",
                   ctx->stage_used + len, ctx->stage_size);
    char *dst = lane_staging_of(ctx, ctx->me) + ctx->stage_used;
    if (len)
        memcpy(dst, buf, len);
    if (slot != 0) { /* slot 0 is found through the flag line */
        lane_slot *s = lane_slot_at(ctx, ctx->me, slot);
        s->addr = ctx->stage_used;
        s->len = len;
    }
    /* Keep each exposed piece on its own cache lines. */
    ctx->stage_used += core_align_up(len, CORE_CACHELINE);
}

static const void *cells_view(lane_ctx *ctx, int peer, int slot, size_t off, size_t len, void *scratch)
{
    (void)len;
    (void)scratch;
    if (slot == 0) {
        const slot0_where *where = where_of(ctx, peer);
        if (where->tag[ctx->parity])
            return inline_of(ctx, peer, where->tag[ctx->parity] - 1u) + off;
        return lane_staging_of(ctx, peer) + (size_t)where->staged_at[ctx->parity] * CORE_CACHELINE + off;
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
    /* A 2-core x86 VM: a handoff of ~0.25 us, two memcpys at ~10 GB/s. */
    .default_cost = {.latency_ns = 250, .overhead_ns = 30, .per_byte_ns = 0, .bw_dedicated = 3.0, .bw_shared = 4.0},
    .single_copy = false,
    .two_sided = false,
    .window = cells_window,
    .expose = cells_expose,
    .fetch = cells_fetch,
    .view = cells_view,
    .put = NULL,
};

/* Request tables belong to no lane in particular: every two-sided lane uses them. */
int lane_request_add(lane_ctx *ctx, int owner, int slot, size_t off, size_t len)
{
    uint32_t *count = &ctx->nreq[(size_t)ctx->me * LANE_ROUNDS + (size_t)ctx->parity];
    if ((int)*count >= ctx->nrequests)
        core_fatal("internal: more than %d requests in one round", ctx->nrequests);
    lane_request *r = &ctx->requests[((size_t)ctx->me * LANE_ROUNDS + (size_t)ctx->parity) * (size_t)ctx->nrequests +
                                     *count];
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
