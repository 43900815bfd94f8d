/* The host lane: the host MPI's own point-to-point between the ranks of a
 * team, plugged into the collectives layer's lane table. Two-sided: readers
 * post PMPI_Irecv for what they request, owners PMPI_Isend what they are asked
 * for, everything completes before the round ends. Messages travel on a
 * private duplicate of the communicator, so they never meet the user's. */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#include "core.h"
#include "shim_host_lane.h"

/* One message carries at most this much (MPI counts are int). */
#define HOST_PIECE ((size_t)1 << 30)

static size_t host_window(const lane_ctx *ctx)
{
    (void)ctx;
    return SIZE_MAX;
}

static void host_prepare(lane_ctx *ctx)
{
    shim_host_state *st = ctx->host;
    if (st->comm == MPI_COMM_NULL)
        PMPI_Comm_dup(st->parent, &st->comm);
}

static MPI_Request *next_request(shim_host_state *st)
{
    if (st->nreqs == st->cap) {
        int cap = st->cap ? 2 * st->cap : 64;
        MPI_Request *more = realloc(st->reqs, (size_t)cap * sizeof *more);
        if (!more)
            core_fatal("out of memory for host-lane requests");
        st->reqs = more;
        st->cap = cap;
    }
    return &st->reqs[st->nreqs++];
}

static void host_expose(lane_ctx *ctx, int slot, const void *buf, size_t len)
{
    lane_slot *s = lane_slot_at(ctx, ctx->me, slot);
    s->addr = (uint64_t)(uintptr_t)buf;
    s->len = len;
}

static void host_request(lane_ctx *ctx, int peer, int slot, size_t off, void *dst, size_t len)
{
    shim_host_state *st = ctx->host;
    for (size_t done = 0; done < len; done += HOST_PIECE) {
        size_t piece = len - done < HOST_PIECE ? len - done : HOST_PIECE;
        int tag = lane_request_add(ctx, peer, slot, off + done, piece);
        PMPI_Irecv((char *)dst + done, (int)piece, MPI_BYTE, peer, tag, st->comm, next_request(st));
    }
}

static void host_serve(lane_ctx *ctx)
{
    shim_host_state *st = ctx->host;
    for (int i = 1; i < ctx->n; i++) {
        int p = (ctx->me + i) % ctx->n;
        uint32_t count;
        const lane_request *req = lane_requests_of(ctx, p, &count);
        for (uint32_t k = 0; k < count; k++) {
            if (req[k].owner != (uint32_t)ctx->me)
                continue;
            const lane_slot *s = lane_slot_at(ctx, ctx->me, (int)req[k].slot);
            PMPI_Isend((const char *)(uintptr_t)s->addr + req[k].off, (int)req[k].len, MPI_BYTE, p, (int)k, st->comm,
                       next_request(st));
        }
    }
}

static void host_complete(lane_ctx *ctx)
{
    shim_host_state *st = ctx->host;
    /* MPICH declares the statuses as an array of count elements; GCC then
     * takes MPI_STATUSES_IGNORE for an empty array. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpragmas"
#pragma GCC diagnostic ignored "-Wstringop-overflow"
    if (st->nreqs && st->reqs)
        PMPI_Waitall(st->nreqs, st->reqs, MPI_STATUSES_IGNORE);
#pragma GCC diagnostic pop
    st->nreqs = 0;
}

static _Noreturn void host_unsupported(void)
{
    core_fatal("internal: a one-sided operation on the two-sided host lane");
}

static void host_fetch(lane_ctx *ctx, int peer, int slot, size_t off, void *dst, size_t len)
{
    (void)ctx, (void)peer, (void)slot, (void)off, (void)dst, (void)len;
    host_unsupported();
}

static const void *host_view(lane_ctx *ctx, int peer, int slot, size_t off, size_t len, void *scratch)
{
    (void)ctx, (void)peer, (void)slot, (void)off, (void)len, (void)scratch;
    host_unsupported();
}

const lane_ops shim_host_lane = {
    .name = "host",
    .id = LANE_HOST,
    .single_copy = false, /* complete() has waited for every send */
    .two_sided = true,
    .window = host_window,
    .expose = host_expose,
    .fetch = host_fetch,
    .view = host_view,
    .put = NULL,
    .prepare = host_prepare,
    .request = host_request,
    .serve = host_serve,
    .complete = host_complete,
};

void shim_host_release(shim_host_state *st)
{
    if (st->comm != MPI_COMM_NULL)
        PMPI_Comm_free(&st->comm);
    free(st->reqs);
    st->reqs = NULL;
    st->cap = st->nreqs = 0;
}
