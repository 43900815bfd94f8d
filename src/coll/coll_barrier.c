/* Barrier. Algorithms (priced by the planner's table, src/planner):
 *   flat           everyone posts, then waits for all: one step, n-1 reads each.
 *   dissemination  round k: post, wait for the rank 2^k below: log2 n steps.
 *   release        everyone posts, rank 0 waits for all and posts again, the
 *                  others wait for that: two steps, and rank 0 leaves first.
 * No data moves, so no lane is used. */
#include "coll_internal.h"

/* Everyone posts, everyone waits for all: one step, n-1 reads each. */
static void barrier_flat(coll_team *t)
{
    uint64_t e = coll_next_epoch(t);
    coll_post(t, e);
    coll_wait_all(t, e);
}

/* Round k: post, then wait for the rank 2^k below. log2(n) steps. */
static void barrier_dissemination(coll_team *t)
{
    for (int dist = 1; dist < t->n; dist <<= 1) {
        uint64_t e = coll_next_epoch(t);
        coll_post(t, e);
        coll_wait(t, coll_rank_plus(t->me, t->n - dist, t->n), e);
    }
}

/* Everyone posts; rank 0 waits for all, then posts the release the others
 * wait for (and post too, so every flag ends at the same epoch). Rank 0,
 * the usual root, leaves first: where ranks take turns on cores, a rooted
 * collective after the barrier then finds its root's data there instead of
 * waiting for the root to be scheduled. */
static void barrier_release(coll_team *t)
{
    uint64_t arrived = coll_next_epoch(t), released = coll_next_epoch(t);
    coll_post(t, arrived);
    if (t->me == 0)
        coll_wait_all(t, arrived);
    else
        coll_wait(t, 0, released);
    coll_post(t, released);
}

typedef void (*barrier_fn)(coll_team *t);
static const barrier_fn barrier_algorithms[PLAN_ALGO_COUNT] = {
    [PLAN_BARRIER_FLAT] = barrier_flat,
    [PLAN_BARRIER_DISSEMINATION] = barrier_dissemination,
    [PLAN_BARRIER_RELEASE] = barrier_release,
};

bool coll_barrier_runs(plan_algo a) { return barrier_algorithms[a] != NULL; }

void coll_barrier(coll_team *t)
{
    if (t->n == 1)
        return;
    const coll_choice *ch = coll_plan(t, CORE_COLL_BARRIER, 0);
    barrier_fn run = barrier_algorithms[ch->plan.algo];
    (run ? run : barrier_flat)(t);
}
