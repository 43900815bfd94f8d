/* cells lane: copy-in / copy-out through the shared segment. */
#include <stddef.h>
#include <string.h>

#include "core.h"
#include "lane.h"

static size_t cells_window(const lane_ctx *ctx) { return ctx->stage_size; }

/* The flag payload, per round parity: where slot 0's bytes are (tag: length
 * + 1 when inline, 0 when in the staging area at staged_at), and 16 bytes of
 * inline data at a 16-byte aligned offset of the line. A reader of slot 0
 * touches only the flag line it already waited on, and the data. */
typedef struct inline_area {
    uint32_t tag[2];
    uint32_t staged_at[2];
    _Alignas(16) unsigned char data[2][LANE_INLINE_MAX];
} inline_area;
_Static_assert(8 + sizeof(inline_area) <= sizeof(((core_flag *)0)->payload), "inline area fits the flag line");
_Static_assert(offsetof(core_flag, payload) % 8 == 0, "payload alignment");

static inline_area *inline_of(const lane_ctx *ctx, int rank)
{
    /* The payload starts 8 bytes into a 64-byte aligned line; the area
     * starts 16 bytes in, so its data sits at offsets 32 and 48. */
    return (inline_area *)(void *)(ctx->flags[rank].payload + 8);
}

static void cells_expose(lane_ctx *ctx, int slot, const void *buf, size_t len)
{
    if (slot == 0) {
        inline_area *in = inline_of(ctx, ctx->me);
        if (len <= LANE_INLINE_MAX) {
            if (len)
                memcpy(in->data[ctx->parity], buf, len);
            in->tag[ctx->parity] = (uint32_t)len + 1;
            return;
        }
        in->tag[ctx->parity] = 0;
        in->staged_at[ctx->parity] = (uint32_t)ctx->stage_used;
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
        const inline_area *in = inline_of(ctx, peer);
        if (in->tag[ctx->parity])
            return in->data[ctx->parity] + off;
        return lane_staging_of(ctx, peer) + in->staged_at[ctx->parity] + off;
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
    .single_copy = false,
    .window = cells_window,
    .expose = cells_expose,
    .fetch = cells_fetch,
    .view = cells_view,
    .put = NULL,
};
