/* Barrier, and the planner hook shared by every algorithm file. */
#include "coll_internal.h"

plan_choice coll_plan(coll_team *t, core_coll coll, size_t bytes)
{
    plan_query q = {
        .coll = coll,
        .bytes = bytes,
        .n = t->n,
        .cma_usable = t->cma_usable,
        .window = t->lane.stage_size,
    };
    plan_choice ch = plan_choose(&q);
    if (core_log_verbosity() >= 1) {
        /* Once per collective, size class (a power of two) and choice. */
        unsigned klass = 0;
        while (klass < 63 && (1ull << (klass + 1)) <= bytes)
            klass++;
        core_log_once("%s of %s%zu bytes on %d local ranks: %s over %s", core_coll_name(coll),
                      bytes ? ">=" : "", bytes ? (size_t)1 << klass : 0, t->n, plan_algo_name(ch.algo),
                      ch.lane->name);
    }
    return ch;
}

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
        coll_wait(t, (t->me - dist + t->n) % t->n, e);
    }
}

void coll_barrier(coll_team *t)
{
    if (t->n == 1)
        return;
    plan_choice ch = coll_plan(t, CORE_COLL_BARRIER, 0);
    if (ch.algo == PLAN_BARRIER_DISSEMINATION)
        barrier_dissemination(t);
    else
        barrier_flat(t);
}
