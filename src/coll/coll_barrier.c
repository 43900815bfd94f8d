/* Barrier, and the planner hook shared by every algorithm file. */
#include "coll_internal.h"

static CORE_THREAD_LOCAL plan_choice last_choice;
static CORE_THREAD_LOCAL bool have_last_choice;

const plan_choice *coll_last_choice(void) { return have_last_choice ? &last_choice : NULL; }
void coll_forget_choice(void) { have_last_choice = false; }

/* The cached choice: a pointer into the team's cache, valid until the next
 * call (returning the struct would copy it once more on every call). */
static const plan_choice *choose(coll_team *t, core_coll coll, size_t bytes)
{
    /* Configuration and model generations start at 1 once read. */
    unsigned gen = core_config_generation() * 65599u + plan_model_generation() + 1;
    size_t slot = ((size_t)coll * 2654435761u ^ bytes * 40503u ^ (bytes >> 12)) % COLL_PLAN_CACHE;
    coll_plan_entry *e = &t->plan_cache[slot];
    if (e->generation == gen && e->coll == coll && e->bytes == bytes)
        return &e->choice;
    plan_query q = {
        .coll = coll,
        .bytes = bytes,
        .n = t->n,
        .ppn = t->node_ranks,
        .cores = t->node_cores,
        .window = t->lane.stage_size,
    };
    for (int l = 0; l < LANE_COUNT; l++)
        q.usable[l] = t->lanes[l] != NULL;
    plan_choice ch = plan_choose(&q);
    /* The model may have been read just now: take its generation after. */
    *e = (coll_plan_entry){core_config_generation() * 65599u + plan_model_generation() + 1, coll, bytes, ch};
    return &e->choice;
}

coll_choice coll_plan(coll_team *t, core_coll coll, size_t bytes)
{
    coll_choice ch = {.plan = *choose(t, coll, bytes)};
    ch.lane = t->lanes[ch.plan.lane];
    ch.large_lane = t->lanes[ch.plan.large_lane];
    ch.stripe = ch.plan.stripe < LANE_COUNT ? t->lanes[ch.plan.stripe] : NULL;
    if (t->lanes[LANE_HOST] && t->lanes[LANE_HOST]->prepare &&
        (ch.plan.lane == LANE_HOST || ch.plan.large_lane == LANE_HOST || ch.plan.stripe == LANE_HOST))
        t->lanes[LANE_HOST]->prepare(&t->lane);
    last_choice = ch.plan;
    have_last_choice = true;
    if (core_log_verbosity() >= 1) {
        /* Once per collective, size class (a power of two) and choice. */
        unsigned klass = 0;
        while (klass < 63 && (1ull << (klass + 1)) <= bytes)
            klass++;
        core_log_once("%s of %s%zu bytes on %d local ranks: %s over %s%s (modelled %.2f us)", core_coll_name(coll),
                      bytes ? ">=" : "", bytes ? (size_t)1 << klass : 0, t->n, plan_algo_name(ch.plan.algo),
                      plan_lanes_label(ch.plan.lane, ch.plan.stripe),
                      ch.plan.root_share > 0 ? ", the root moving a share of each block" : "", ch.plan.model_ns / 1e3);
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
        coll_wait(t, coll_rank_plus(t->me, t->n - dist, t->n), e);
    }
}

void coll_barrier(coll_team *t)
{
    if (t->n == 1)
        return;
    coll_choice ch = coll_plan(t, CORE_COLL_BARRIER, 0);
    if (ch.plan.algo == PLAN_BARRIER_DISSEMINATION)
        barrier_dissemination(t);
    else
        barrier_flat(t);
}
