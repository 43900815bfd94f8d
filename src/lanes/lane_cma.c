/* cma lane: single copy between user buffers with process_vm_readv/writev. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>

#include "core.h"
#include "lane.h"

static size_t cma_window(const lane_ctx *ctx)
{
    (void)ctx;
    return SIZE_MAX;
}

static void cma_expose(lane_ctx *ctx, int slot, const void *buf, size_t len)
{
    lane_slot *s = lane_slot_at(ctx, ctx->me, slot);
    s->addr = (uint64_t)(uintptr_t)buf;
    s->len = len;
}

/* Moves len bytes in one call, looping over the partial transfers the
 * kernel may do. */
static void cma_transfer(const lane_ctx *ctx, int peer, char *local, uint64_t remote, size_t len, bool write)
{
    pid_t pid = ctx->pids[peer];
    while (len) {
        struct iovec l = {.iov_base = local, .iov_len = len};
        struct iovec r = {.iov_base = (void *)(uintptr_t)remote, .iov_len = len};
        ssize_t done = write ? process_vm_writev(pid, &l, 1, &r, 1, 0) : process_vm_readv(pid, &l, 1, &r, 1, 0);
        if (done < 0) {
            if (errno == EINTR)
                continue;
            if (errno == ESRCH)
                core_fatal("local rank %d (pid %d) is gone during a single-copy transfer; ending the job", peer,
                           (int)pid);
            core_fatal("process_vm_%s with local rank %d (pid %d) failed: %s (a buffer passed to the MPI call is "
                       "not valid memory?)",
                       write ? "writev" : "readv", peer, (int)pid, strerror(errno));
        }
        if (done == 0)
            core_fatal("process_vm_%s with local rank %d moved no bytes", write ? "writev" : "readv", peer);
        local += done;
        remote += (uint64_t)done;
        len -= (size_t)done;
    }
}

static void cma_fetch(lane_ctx *ctx, int peer, int slot, size_t off, void *dst, size_t len)
{
    const lane_slot *s = lane_slot_at(ctx, peer, slot);
    if (!len)
        return;
    if (peer == ctx->me)
        memcpy(dst, (const char *)(uintptr_t)s->addr + off, len);
    else
        cma_transfer(ctx, peer, dst, s->addr + off, len, false);
}

static const void *cma_view(lane_ctx *ctx, int peer, int slot, size_t off, size_t len, void *scratch)
{
    const lane_slot *s = lane_slot_at(ctx, peer, slot);
    if (peer == ctx->me)
        return (const char *)(uintptr_t)s->addr + off;
    cma_transfer(ctx, peer, scratch, s->addr + off, len, false);
    return scratch;
}

static void cma_put(lane_ctx *ctx, int peer, int slot, size_t off, const void *src, size_t len)
{
    const lane_slot *s = lane_slot_at(ctx, peer, slot);
    if (!len)
        return;
    if (peer == ctx->me)
        memcpy((char *)(uintptr_t)s->addr + off, src, len);
    else
        cma_transfer(ctx, peer, (char *)(uintptr_t)src, s->addr + off, len, true);
}

const lane_ops lane_cma = {
    .name = "cma",
    .id = LANE_CMA,
    .single_copy = true,
    .two_sided = false,
    .window = cma_window,
    .expose = cma_expose,
    .fetch = cma_fetch,
    .view = cma_view,
    .put = cma_put,
};

int lane_cma_probe(pid_t pid, const void *addr, uint64_t expect)
{
    uint64_t got = 0;
    struct iovec l = {.iov_base = &got, .iov_len = sizeof got};
    struct iovec r = {.iov_base = (void *)(uintptr_t)addr, .iov_len = sizeof got};
    ssize_t done = process_vm_readv(pid, &l, 1, &r, 1, 0);
    if (done < 0)
        return errno;
    if (done != (ssize_t)sizeof got || got != expect)
        return EIO;
    return 0;
}
