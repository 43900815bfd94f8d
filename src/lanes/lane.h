/* lanes: ways of moving bytes between two ranks of one node.
 *
 * Owns: the lane interface and its implementations, and each lane's default
 * cost figures. A rank *exposes* a local buffer under a slot number for the
 * current round; a peer then *fetches* a range of it, or takes a read-only
 * *view* of a range, and on lanes that can, *puts* bytes into a range the
 * owner exposed.
 *
 *   cells  exposing copies the bytes into the owner's staging area in the
 *          node segment (two copies in all, no system call: lowest latency);
 *          a view is a pointer into that area. At most window() bytes per
 *          rank per round, so large transfers take several rounds.
 *   cma    exposing publishes the buffer's address; fetch and put are
 *          process_vm_readv / process_vm_writev straight between the user
 *          buffers (one copy), one system call a transfer. No window.
 *          The owner must wait for its readers before it returns, since
 *          they read its own memory.
 *   host   the host MPI's point-to-point (implemented by the MPI layer, which
 *          plugs it in). Two-sided: a reader *requests* a range before the
 *          round's synchronisation, the owner *serves* every request after it,
 *          and both *complete* before the round ends. No views, no puts.
 *
 * Slot 0 of the cells lane also has a *note* per rank and round buffer: where
 * its bytes are (small ones inside the note) and the epoch the owner posts
 * them under, written last. A reader that finds that epoch in the note has
 * the data in the same pair of cache lines, without reading the owner's
 * flag (lanes that can tell say so through `note_arrived`).
 *
 * Staging areas, slot tables and request tables exist LANE_ROUNDS times, one
 * per round modulo LANE_ROUNDS, so a rank can expose the next rounds while
 * peers still read earlier ones. Keeping rounds in step is the caller's job
 * (src/coll/coll_team.h).
 *
 * May call: core. */
#ifndef SHOAL_LANE_H
#define SHOAL_LANE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef enum { LANE_CELLS, LANE_CMA, LANE_HOST, LANE_COUNT } lane_id;

typedef struct lane_slot {
    uint64_t addr; /* cells: offset in the owner's staging area; cma, host: address */
    uint64_t len;
} lane_slot;

/* A reader's request on a two-sided lane: bytes [off, off+len) of owner's slot. */
typedef struct lane_request {
    uint32_t owner;
    uint32_t slot;
    uint64_t off;
    uint64_t len;
} lane_request;

/* The cost model's figures for one lane (src/planner/plan_model.h): moving
 * s bytes with ppn processes of the node moving data at once takes
 *   latency_ns + overhead_ns + s * per_byte_ns + s / (bw_dedicated + bw_shared / ppn)
 * nanoseconds (bandwidths in bytes per nanosecond, i.e. GB/s). */
typedef struct lane_cost {
    double latency_ns;   /* a zero-byte transfer, the handoff between the two ranks included */
    double overhead_ns;  /* o: fixed cost of a call (a system call, a message header) */
    double per_byte_ns;  /* g: per-byte set-up (page pinning, registration) */
    double bw_dedicated; /* what each process has to itself */
    double bw_shared;    /* what the processes of the node share */
} lane_cost;

/* Round buffers: a rank reuses one only when every peer is done with the
 * round that used it LANE_ROUNDS rounds before. More buffers make a rank that
 * runs ahead (a root that only sends) check its readers less often. */
#define LANE_ROUNDS 4

/* Slot 0 of the cells lane, per rank and round buffer: four 128-byte pairs
 * of lines (x86 cores fetch a pair together). Up to 496 bytes ride in the
 * note itself: the small blocks of a scatter or gather at a few ranks
 * (128-256 B) then cost no staging area, whose lines the reader last held. */
#define LANE_INLINE_MAX 496
#define LANE_NOTE_HEAD 48 /* bytes[] in the first line: a staged slot's head is copied there too */
typedef struct lane_note {
    _Alignas(128) _Atomic uint64_t stamp; /* the epoch that makes the rest valid; stored last */
    uint32_t inline_len;                  /* length + 1 when the bytes are here, 0: staged */
    uint32_t staged_at;                   /* else their cache line in the staging area */
    unsigned char bytes[LANE_INLINE_MAX];
} lane_note;
_Static_assert(sizeof(lane_note) == 512, "a note fills four pairs of lines");
_Static_assert(offsetof(lane_note, bytes) + LANE_NOTE_HEAD == 64, "the head ends with the first line");

/* The node segment as lanes see it; filled in by the team that owns it. */
typedef struct lane_ctx {
    int n, me;
    const uint64_t *epoch; /* the team's last epoch: exposures made now are posted with the next */
    lane_note *notes;      /* [n][LANE_ROUNDS] */
    const pid_t *pids;     /* [n] process ids of the local ranks */
    lane_slot *slots;      /* [n][LANE_ROUNDS][nslots] */
    int nslots;
    char *staging;          /* [n][LANE_ROUNDS][stage_size], each area page-aligned */
    size_t stage_stride;    /* bytes between two staging areas */
    size_t stage_size;      /* usable bytes of one staging area */
    int parity;             /* the current round's buffer: round % LANE_ROUNDS */
    bool idle_after_round;  /* this rank reads nothing more in this call, and the readers of the next
                               round's buffer are known done with it (coll_round_begin) */
    size_t stage_used;      /* bytes of my staging area taken this round */
    lane_request *requests; /* [n][LANE_ROUNDS][nrequests] two-sided lanes' requests */
    uint32_t *nreq;         /* [n][LANE_ROUNDS] requests made this round */
    int nrequests;
    void *host; /* the host lane's own state, owned by the MPI layer */
} lane_ctx;

/* What a lane can do, as the planner prices it (lane_describe). A new lane
 * describes itself with these; no cost formula names a lane. */
typedef enum {
    LANE_CAP_STAGED = 1u << 0,             /* copies through the node segment's staging areas, a window per round;
                                       reductions read what peers staged in place */
    LANE_CAP_SINGLE_COPY = 1u << 1,        /* readers touch the owner's own buffers (one copy in all) */
    LANE_CAP_KERNEL_COPY = 1u << 2,        /* each transfer is a system call on another process's memory: transfers
                                       into or out of one process at once queue on its page tables */
    LANE_CAP_PUT = 1u << 3,                /* writes into what a peer exposed */
    LANE_CAP_VIEW = 1u << 4,               /* a reader takes a view of a peer's exposure (no request first) */
    LANE_CAP_TWO_SIDED = 1u << 5,          /* request before the round, served after it: no view, no put */
    LANE_CAP_NOTES = 1u << 6,              /* slot 0 readable through its note, without the owner's flag */
    LANE_CAP_SEGMENT = 1u << 7,            /* needs the node's shared segment */
    LANE_CAP_CROSSES_NODES = 1u << 8,      /* reaches ranks of other nodes too */
    LANE_CAP_SAME_ADDRESS_SPACE = 1u << 9, /* ranks share one address space (threads) */
    LANE_CAP_EVERY_TEAM = 1u << 10,        /* usable on every team: where no data moves, and the fallback */
} lane_cap;

/* A lane as the planner and the cost model know it, whether its code is in
 * this layer (cells, cma) or plugged in from above (host, the MPI layer). */
typedef struct lane_desc {
    lane_id id;
    const char *name;       /* as SHOAL_LANES, tuning files and shoal explain write it */
    unsigned caps;          /* lane_cap bits */
    lane_cost default_cost; /* until a tuning file or the start-up probe says otherwise */
} lane_desc;

/* The description of lane l (l < LANE_COUNT). */
const lane_desc *lane_describe(lane_id l);
/* Whether lane l has every capability in caps. */
static inline bool lane_can(lane_id l, unsigned caps) { return (lane_describe(l)->caps & caps) == caps; }
/* The lane every team has (LANE_CAP_EVERY_TEAM). */
lane_id lane_every_team(void);
/* The lane named `name` (length len), or LANE_COUNT. */
lane_id lane_from_name(const char *name, size_t len);

typedef struct lane_ops {
    const char *name;
    lane_id id;
    /* Readers touch the owner's own buffers (the owner must outwait them). */
    bool single_copy;
    /* request/serve/complete instead of fetch; no view, no put. */
    bool two_sided;
    /* Bytes one rank may expose in one round. */
    size_t (*window)(const lane_ctx *ctx);
    void (*expose)(lane_ctx *ctx, int slot, const void *buf, size_t len);
    /* Slot 0 written in place, for an owner that assembles it from pieces:
     * expose_area gives len writable bytes where readers will find them,
     * expose_commit(len) then exposes what was written, as expose(0, ...)
     * would have. NULL on lanes whose readers take the owner's buffer. */
    void *(*expose_area)(lane_ctx *ctx, size_t len);
    void (*expose_commit)(lane_ctx *ctx, size_t len);
    void (*fetch)(lane_ctx *ctx, int peer, int slot, size_t off, void *dst, size_t len);
    /* True when what peer exposed in slot 0 for the post of `epoch` is
     * readable already, its note carrying that epoch, without waiting for
     * the post. Slot 0 only: other slots have no note. NULL: no notes.
     * [off, off+len): the bytes the reader takes next (len 0: not known),
     * which the lane may start fetching while the note is not there. */
    bool (*note_arrived)(const lane_ctx *ctx, int peer, uint64_t epoch, size_t off, size_t len);
    /* Pointer to len readable bytes: into the segment, or scratch once filled. */
    const void *(*view)(lane_ctx *ctx, int peer, int slot, size_t off, size_t len, void *scratch);
    /* Writes into what peer exposed; NULL on lanes that cannot. */
    void (*put)(lane_ctx *ctx, int peer, int slot, size_t off, const void *src, size_t len);
    /* Collective over the team: every rank calls it before the lane's first
     * use in a call (NULL where nothing needs preparing). */
    void (*prepare)(lane_ctx *ctx);
    /* Two-sided lanes. request: before the round's synchronisation, ask for
     * bytes of peer's slot, to land in dst. serve: after it, send whatever
     * peers asked of this rank. complete: wait until both are done. */
    void (*request)(lane_ctx *ctx, int peer, int slot, size_t off, void *dst, size_t len);
    void (*serve)(lane_ctx *ctx);
    void (*complete)(lane_ctx *ctx);
} lane_ops;

extern const lane_ops lane_cells;
extern const lane_ops lane_cma;

/* Records a request in this rank's table for the round; returns its index
 * (unique for the round), for two-sided lanes to tag their messages. */
int lane_request_add(lane_ctx *ctx, int owner, int slot, size_t off, size_t len);
/* The request table of rank for the current round, and its length. */
const lane_request *lane_requests_of(const lane_ctx *ctx, int rank, uint32_t *count);

static inline lane_slot *lane_slot_at(const lane_ctx *ctx, int rank, int slot)
{
    return &ctx->slots[((size_t)rank * LANE_ROUNDS + (size_t)ctx->parity) * (size_t)ctx->nslots + (size_t)slot];
}

static inline char *lane_staging_of(const lane_ctx *ctx, int rank)
{
    return ctx->staging + ((size_t)rank * LANE_ROUNDS + (size_t)ctx->parity) * ctx->stage_stride;
}

/* The next round's copy of a per-round area, for `at` in this round's
 * (the areas lie `stride` bytes apart, LANE_ROUNDS of them in a row: a
 * rank's notes, its staging areas). */
static inline const char *lane_next_round_at(const lane_ctx *ctx, const char *at, size_t stride)
{
    return ctx->parity + 1 < LANE_ROUNDS ? at + stride : at - (LANE_ROUNDS - 1) * stride;
}

/* Starts a round on the given buffer: my staging area is empty again. */
static inline void lane_begin_round(lane_ctx *ctx, int parity)
{
    ctx->parity = parity;
    ctx->stage_used = 0;
}

/* Two-sided lanes: this rank's request table for the round starts empty
 * (called in each round that requests, before any request). */
static inline void lane_requests_begin(lane_ctx *ctx)
{
    ctx->nreq[(size_t)ctx->me * LANE_ROUNDS + (size_t)ctx->parity] = 0;
}

/* 0 when this process may read pid's memory with process_vm_readv: reads
 * 8 bytes at addr and checks they equal expect. Else the errno seen (EPERM
 * in containers that forbid ptrace, ENOSYS where seccomp removed the call). */
int lane_cma_probe(pid_t pid, const void *addr, uint64_t expect);

#endif
