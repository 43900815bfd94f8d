/* Shared by the algorithm files of src/coll; not part of the layer's API. */
#ifndef SHOAL_COLL_INTERNAL_H
#define SHOAL_COLL_INTERNAL_H

#include "coll.h"
#include "plan.h"

static inline size_t min_size(size_t a, size_t b) { return a < b ? a : b; }
static inline size_t max_size(size_t a, size_t b) { return a > b ? a : b; }

/* Asks the planner (through the team's cache), prepares the lanes the
 * choice uses, and logs the decision once under SHOAL_VERBOSE. The choice
 * stays valid for the whole call: a plan made inside it (another
 * collective on the team) replaces a less recently used entry. */
const coll_choice *coll_plan(coll_team *t, core_coll coll, size_t bytes);
/* The same for a call that reads in_len bytes at `in` on this rank (NULL:
 * none of its own). A repeat of the size the collective's last call had
 * may read the very bytes that call read, still in the readers' caches, or
 * bytes written anew; where the planner's choices for the two differ (from
 * COLL_ASK_INPUTS_MIN bytes), every rank says whether its input changed
 * since the last call (a sample of it differs), and the call takes the
 * choice for what they say. */
const coll_choice *coll_plan_reading(coll_team *t, core_coll coll, size_t bytes, const void *in, size_t in_len);
#define COLL_ASK_INPUTS_MIN 4096
#define COLL_ASK_SKIP_MAX 63

/* One exposed buffer of this rank. */
typedef struct coll_out {
    int slot;
    const void *buf;
    size_t len;
} coll_out;

/* One transfer this rank makes: fetch bytes [off, off+len) of peer's slot into
 * buf, or with push put buf there. */
typedef struct coll_xfer {
    int peer;
    int slot;
    size_t off;
    void *buf;
    size_t len;
} coll_xfer;

typedef struct coll_moves {
    const coll_out *out;
    int nout;
    const coll_xfer *xfer;
    int nxfer;
    bool push;      /* xfer entries are puts (single-copy lanes only) */
    int max_out;    /* most slots any rank exposes: alike on every rank */
    size_t max_len; /* longest slot any rank exposes: alike on every rank */
    int only_peer;  /* the one peer that touches my exposures, or -1: any */
    /* This rank's own block, copied once its exposures are published, so
     * that the copy overlaps the peers' transfers. */
    const void *self_src;
    void *self_dst;
    size_t self_len;
} coll_moves;

/* Runs the moves; on windowed lanes in as many rounds as max_len needs. */
void coll_move(coll_team *t, const lane_ops *lane, const coll_moves *m);
/* Runs the moves as the choice says: on its lane, or striped (pull only):
 * every transfer's first plan.stripe_share on the two-sided stripe lane, the
 * rest on the single-copy lane, both in one round. */
void coll_move_chosen(coll_team *t, const coll_choice *ch, const coll_moves *m);
/* The same where the sizes are not known to every rank: every rank but the
 * root exposes at most one slot, and the root alone knows them all,
 * m->max_len valid there (gatherv where the large lane has a window; where
 * it is single-copy, coll_move_paired). They travel first, with the blocks
 * where those are small (see plan_choice.eager_limit): the root publishes
 * its verdict in its note, so that the others wait for it alone. */
void coll_move_v(coll_team *t, const coll_choice *ch, const coll_moves *m, int root);
/* Two sets of moves in one round, where every rank knows which of its
 * blocks goes in which: `small` on ch->lane, every slot of it within one
 * round's window, and `large` on ch->large_lane, single-copy without a
 * window. A slot is exposed on one lane only, so their tables do not
 * clash. No rank waits for another's sizes (gatherv). */
void coll_move_paired(coll_team *t, const coll_choice *ch, const coll_moves *small, const coll_moves *large);
/* Whether one block of len bytes goes with the size headers of the moves
 * above (plan_choice.eager_limit and the lane's window): alike on the rank
 * that exposes it and on the root that knows its size. */
bool coll_fits_eager(const coll_team *t, const coll_choice *ch, size_t len);
/* Whether a choice moves blocks whose sizes differ in one round, each by
 * its size: small ones within the windowed lane's round, large ones on a
 * single-copy large lane without a window (coll_move_paired, and
 * coll_move_packed's split form). */
static inline bool coll_splits_by_size(const coll_choice *ch)
{
    return !ch->lane->single_copy && !ch->lane->two_sided && ch->large_lane->single_copy && !ch->large_lane->two_sided;
}
/* The same where each exposing rank exposes one block per slot and no rank
 * knows every size beforehand: on a windowed lane the rank's slot 0 carries
 * its sizes and, where they fit, its blocks packed, so that a reader reads
 * one note (small blocks sit inside it); else a sized move follows. root:
 * the one rank that exposes (scatterv, slot p holding rank p's block), or
 * -1: every rank exposes and reads every other (alltoallv). */
void coll_move_packed(coll_team *t, const coll_choice *ch, const coll_moves *m, int root);

/* The largest of sizes[0..n) but sizes[skip]'s: what a root's peers move. */
static inline size_t coll_longest_but(const size_t *sizes, int n, int skip)
{
    size_t longest = 0;
    for (int p = 0; p < n; p++)
        if (p != skip)
            longest = max_size(longest, sizes[p]);
    return longest;
}

/* Every rank a block of bytes, rank p's at p * bytes: n sizes, then n
 * offsets, then extra bytes for the caller, in the team's temporary space. */
size_t *coll_uniform_blocks(coll_team *t, size_t bytes, size_t extra);

/* The tail of a block the root moves itself (plan_choice.root_share), in
 * whole cache lines: gather by push and scatter by pull. */
static inline size_t coll_root_part(size_t bytes, double share)
{
    return share > 0 ? (size_t)((double)bytes * share) / CORE_CACHELINE * CORE_CACHELINE : 0;
}

/* Whether each collective's file has a run function for algorithm a
 * (coll_runs asks them). The movement engine runs pull for every data
 * movement collective, and push where a collective describes it (gather). */
bool coll_barrier_runs(plan_algo a);
bool coll_bcast_runs(plan_algo a);
bool coll_reduce_runs(plan_algo a);
bool coll_allreduce_runs(plan_algo a);
bool coll_reduce_scatter_runs(plan_algo a);
bool coll_scan_runs(plan_algo a);
bool coll_move_runs(plan_algo a, bool push_described);

/* Buffers for the out and xfer lists, n + 1 entries each. */
coll_out *coll_outs(coll_team *t);
coll_xfer *coll_xfers(coll_team *t);

#endif
