/* cells lane: copy-in / copy-out through the shared segment. */
#include <string.h>

#include "core.h"
#include "lane.h"

static size_t cells_window(const lane_ctx *ctx) { return ctx->stage_size; }

static void cells_expose(lane_ctx *ctx, int slot, const void *buf, size_t len)
{
    if (ctx->stage_used + len > ctx->stage_size)
        core_fatal("internal: %zu bytes exposed on the cells lane exceed its %zu-byte window",
                   ctx->stage_used + len, ctx->stage_size);
    char *dst = lane_staging_of(ctx, ctx->me) + ctx->stage_used;
    if (len)
        memcpy(dst, buf, len);
    lane_slot *s = lane_slot_at(ctx, ctx->me, slot);
    s->addr = ctx->stage_used;
    s->len = len;
    /* Keep each exposed piece on its own cache lines. */
    ctx->stage_used += core_align_up(len, CORE_CACHELINE);
}

static const void *cells_view(lane_ctx *ctx, int peer, int slot, size_t off, size_t len, void *scratch)
{
    (void)len;
    (void)scratch;
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
    .single_copy = false,
    .window = cells_window,
    .expose = cells_expose,
    .fetch = cells_fetch,
    .view = cells_view,
    .put = NULL,
};
