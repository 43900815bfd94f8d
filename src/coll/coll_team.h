/* coll_team: the ranks of one node-local group and the segment they share.
 *
 * Segment layout (computed alike by every rank from n and the staging size):
 *   header | flags [n] | slot-0 notes [n][R] | rank info [n] | slot tables [n][R][n+1] | staging [n][R]
 * (R = LANE_ROUNDS round buffers)
 *
 * Synchronisation is by epochs: every rank owns one flag and posts growing
 * epoch numbers on it. Every algorithm consumes the same number of epochs on
 * every rank (it depends only on what all ranks know alike), so "rank p has
 * reached epoch e" means the same step everywhere. A post means "everything I
 * do up to this step is done"; a wait is "until that rank's flag >= e".
 *
 * Rounds cycle through LANE_ROUNDS buffers of staging areas and slot tables.
 * A rank that exposes data in a round first waits until every peer is done
 * with what it exposed LANE_ROUNDS rounds before (coll_round_begin).
 *
 * Building a team (coll_team_create) takes the caller's own out-of-band means
 * of reaching its ranks (coll_oob: PMPI calls on a communicator for the MPI
 * layer, anything else for callers without MPI), never MPI itself.
 *
 * May call: core, lanes, planner. Never MPI. */
#ifndef SHOAL_COLL_TEAM_H
#define SHOAL_COLL_TEAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core.h"
#include "lane.h"
#include "plan.h"

typedef struct coll_rank_info {
    int32_t pid;
    int32_t cma_errno;   /* this rank's CMA probe result over all peers */
    uint64_t probe_addr; /* a word in this rank's memory, for the probe */
    uint64_t probe_value;
    /* coll_any's answers, alternating (a rank starts the vote after next
     * only once every peer has answered the next, so has read this one):
     * the vote's epoch << 1 | the answer. */
    _Atomic uint64_t vote[2];
    char pad[128 - 40];
} coll_rank_info;

struct coll_out;
struct coll_xfer;

/* The planner's recent decisions on this team: pricing every candidate costs
 * more than a small collective (microseconds), and programs repeat their
 * sizes. Sets of COLL_PLAN_WAYS entries, the least recently used replaced:
 * a benchmark or a solver alternates a few calls, which must not evict each
 * other (direct-mapped, OSU's gather of 16 KiB and the barrier between its
 * calls shared a slot, and both were priced anew on every call). */
#define COLL_PLAN_SETS 16
#define COLL_PLAN_WAYS 4
_Static_assert(COLL_PLAN_WAYS >= 2, "the entry in use is never the least recently used one");

/* The planner's choice with its lanes resolved on this team, as cached, so
 * that a call takes it as it is. */
typedef struct coll_choice {
    plan_choice plan;
    const lane_ops *lane;
    const lane_ops *large_lane;
    const lane_ops *stripe;     /* NULL unless transfers are striped (plan.stripe) */
    const lane_ops *prepare[3]; /* the lanes above that need preparing, once each */
    int nprepare;
    /* A repeat's choice (plan.inputs PLAN_INPUTS_EITHER) where the choices
     * on fresh and on unchanged inputs differ: the call asks every rank
     * whether its input changed (coll_plan_reading). */
    bool ask_inputs;
} coll_choice;

typedef struct coll_plan_entry {
    unsigned generation; /* of configuration and model together; 0: empty */
    core_coll coll;
    size_t bytes;
    plan_inputs inputs;
    uint64_t used; /* the team's plan_clock at its last use */
    coll_choice choice;
} coll_plan_entry;

#define COLL_SAID_KEYS 4

typedef struct coll_team {
    int n, me;
    core_segment seg;
    core_flag *flags;     /* [n], each owned by its rank */
    coll_rank_info *info; /* [n] */
    pid_t *pids;          /* [n], private copy for the lanes */
    uint64_t *seen;       /* [n], the highest epoch seen on each flag:
                                  a wait it already proves costs no shared read */
    uint64_t all_seen;    /* an epoch every peer is known to have reached */
    lane_ctx lane;
    bool cma_usable;                   /* every rank can read every other with CMA */
    const lane_ops *lanes[LANE_COUNT]; /* usable lanes, NULL where not (host: when plugged in) */
    uint64_t epoch;                    /* last epoch this rank posted or skipped */
    uint64_t votes;                    /* coll_any calls made, alike on every rank */
    uint64_t round;                    /* rounds started */
    uint64_t reuse_epoch[LANE_ROUNDS]; /* peers are done with buffer b once they reach it */
    core_wait_policy wait;
    int node_ranks; /* ranks of the whole job on this node (ppn) */
    int node_cores; /* cores those ranks run on */
    coll_plan_entry plan_cache[COLL_PLAN_SETS * COLL_PLAN_WAYS];
    uint64_t plan_clock;   /* cache lookups made */
    uint64_t plans_priced; /* lookups that missed and asked the planner */
    /* The size of each collective's last call, plus one (0: none yet), the
     * same on every rank (every rank plans every collective of the team):
     * a call of the same size is a repeat, whose inputs may be the very
     * bytes the last one moved (plan_inputs). Per collective, so that the
     * barrier between a benchmark's calls, or a solver's other collectives,
     * do not hide it. */
    size_t last_bytes[CORE_COLL_COUNT];
    /* Each collective's last input sample (coll_plan_reading), where a
     * repeat of its size asks whether the inputs changed; and what its
     * ranks last answered, how many repeats to go before they are asked
     * again, and how many were skipped the last time (alike on every
     * rank: they follow the answers). */
    uint64_t input_sample[CORE_COLL_COUNT];
    struct {
        bool changed;
        uint32_t skip, skipped;
    } asked[CORE_COLL_COUNT];
    /* The entry each collective's last call took, and that call's size: a
     * repeat checks it before hashing its size class into a set. */
    struct {
        int entry;
        size_t bytes;
    } plan_hot[CORE_COLL_COUNT];
    /* What SHOAL_VERBOSE last said of each collective's plans, as keys
     * (coll_plan.c): a call planned like one of the last few skips
     * formatting its line, which took a microsecond, four times a 1 KiB
     * gather. [0]: shoal's plan, [1]: the host's run of the call. */
    uint64_t said[2][CORE_COLL_COUNT][COLL_SAID_KEYS];
    const char *doing; /* the MPI call in progress, for messages */
    /* private scratch: reduction blocks and temporary copies */
    char *block[3]; /* PLAN_REDUCE_BLOCK bytes each */
    void *temp;
    size_t temp_size;
    struct coll_out *outs;   /* n + 1 entries, for the movement engine */
    struct coll_xfer *xfers; /* n + 1 entries */
    uint64_t probe_word;
} coll_team;

/* Segment bytes for n ranks; shm_size 0 picks the default. */
size_t coll_segment_size(int n, size_t shm_size);
/* Called by the creator once, before anyone attaches. */
void coll_segment_format(void *base, size_t size, int n);

/* How the ranks of a group reach each other before they share memory: the
 * caller's own means (PMPI calls on a communicator, shared memory between
 * forked processes, ...). n ranks, this one is me. Each function is
 * collective over the n ranks, like its MPI namesake. */
typedef struct coll_oob {
    void *ctx;
    int n, me;
    /* root's len bytes at buf into every rank's buf */
    void (*bcast)(void *ctx, void *buf, size_t len, int root);
    /* every rank's len bytes at in, in rank order, into every rank's out (n * len bytes) */
    void (*allgather)(void *ctx, const void *in, void *out, size_t len);
    void (*barrier)(void *ctx);
} coll_oob;

/* coll_team_create's outcome, the same on every rank. */
typedef enum coll_team_outcome {
    COLL_TEAM_MADE = 0,
    COLL_TEAM_NO_ROOM, /* rank 0 could not create the segment: the caller may free
                          segments it holds and call again */
    COLL_TEAM_NO_MAP,  /* some rank could not map it */
} coll_team_outcome;

/* What coll_team_create tells its caller, for its messages and bookkeeping. */
typedef struct coll_team_made {
    int err;     /* errno value: NO_ROOM, rank 0's (alike on every rank);
                    NO_MAP, this rank's (0 where it mapped the segment) */
    size_t size; /* segment bytes asked for */
    uint64_t id; /* MADE: random, odd, the same on every rank: names the team */
} coll_team_made;

/* Builds a team over the ranks oob reaches (all call it): rank 0 creates and
 * formats the segment (coll_segment_size(n, shm_size) bytes), its name goes
 * out by oob->bcast, every rank maps it, the ranks agree on the outcome
 * (oob->allgather), and the name is unlinked once all have mapped it; then
 * coll_team_open. On any failure every rank fails alike, holding nothing.
 * made may be NULL. */
coll_team_outcome coll_team_create(coll_team *t, const coll_oob *oob, int node_ranks, int node_cores, size_t shm_size,
                                   bool try_cma, coll_team_made *made);

/* Opens the team on a mapped segment that every rank of the group has mapped
 * (all ranks call it). node_ranks and node_cores describe the whole node, for
 * the waiting policy. Synchronises the ranks and probes CMA between them.
 * Returns 0, or -1 when the segment is not what the layout expects. */
int coll_team_open(coll_team *t, const core_segment *seg, int n, int me, int node_ranks, int node_cores, bool try_cma);
void coll_team_close(coll_team *t);
/* Moves an open team to another place (from is left empty). Its epochs go
 * on where they were, so a team its ranks move together, from a freed
 * communicator to a new one of the same ranks in the same order, carries on
 * as if the calls were on one communicator. */
void coll_team_move(coll_team *to, coll_team *from);

/* The MPI layer plugs in the host lane (its point-to-point) with its state. */
void coll_team_set_host_lane(coll_team *t, const lane_ops *host, void *state);

/* ---- epochs ---- */

static inline uint64_t coll_next_epoch(coll_team *t) { return ++t->epoch; }

static inline void coll_post(coll_team *t, uint64_t e) { core_flag_post(&t->flags[t->me], e, &t->wait); }

/* The flag wait; `spun`: the caller has already polled for as long as a
 * wait spins, so go straight to yielding and sleeping. */
static inline void coll_wait_flag(coll_team *t, int peer, uint64_t e, bool spun)
{
    if (t->seen[peer] >= e)
        return;
    const core_flag *f = &t->flags[peer];
    uint64_t v = core_flag_read(f);
    if (v < e) {
        core_waiter w = {&t->wait, t->pids[peer], peer, t->doing};
        if (spun)
            core_flag_wait_sleep(f, e, &w);
        else
            core_flag_wait_slow(f, e, &w);
        v = core_flag_read(f);
    }
    t->seen[peer] = v;
}

static inline void coll_wait(coll_team *t, int peer, uint64_t e) { coll_wait_flag(t, peer, e, false); }

void coll_wait_all(coll_team *t, uint64_t e);

/* Whether `mine` is true on any rank: one step in which every rank posts
 * its answer and reads every other's. Collective over t. */
bool coll_any(coll_team *t, bool mine);

/* Until what peer exposed in slot for the post of epoch e is readable: for
 * slot 0 on lanes with notes (cells) by polling the note, the data's own
 * lines, which saves the reader a cache miss on the flag and leaves the
 * flag's line with its owner; else, and once polling has gone on for as
 * long as a wait would spin, by waiting for the post. [off, off+len): the
 * bytes of the slot the caller reads next (len 0: not known), which the
 * lane may start fetching while it polls. */
static inline void coll_wait_exposed(coll_team *t, const lane_ops *lane, int peer, int slot, uint64_t e, size_t off,
                                     size_t len)
{
    if (t->seen[peer] >= e)
        return;
    if (slot != 0 || !lane->note_arrived) {
        coll_wait(t, peer, e);
        return;
    }
    for (long i = 0; i <= t->wait.spin; i++) {
        if (lane->note_arrived(&t->lane, peer, e, off, len))
            return;
        core_cpu_relax();
    }
    coll_wait_flag(t, peer, e, true);
}

/* coll_wait_exposed for every peer. */
void coll_wait_all_exposed(coll_team *t, const lane_ops *lane, int slot, uint64_t e, size_t off, size_t len);

/* ---- rounds ---- */

/* idle_after: the call's last round, in which this rank reads nothing: it
 * has time to spare before it next writes a round buffer, in a later call
 * (lane_ctx.idle_after_round). */
void coll_round_begin(coll_team *t, bool exposing, bool idle_after);
/* readers_done: the epoch at which every reader of this round has finished. */
static inline void coll_round_end(coll_team *t, uint64_t readers_done)
{
    t->reuse_epoch[t->round % LANE_ROUNDS] = readers_done;
    t->round++;
}

/* Rank (r + i) mod n for 0 <= r, i < n, without a divide (tens of cycles,
 * in every loop over the peers of a small collective). */
static inline int coll_rank_plus(int r, int i, int n) { return r + i < n ? r + i : r + i - n; }

/* A private buffer of at least size bytes, valid until the next call. */
void *coll_temp(coll_team *t, size_t size);

/* Elements [lo, hi) of count split into n nearly equal slices. */
static inline size_t coll_slice_lo(size_t count, int n, int i) { return count * (size_t)i / (size_t)n; }

#endif
