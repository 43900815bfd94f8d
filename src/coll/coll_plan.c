/* The planner hook every collective calls: asks the planner for a call's
 * algorithm and lanes (through a small per-team cache of recent choices),
 * resolves the lanes on the team, prepares those that need it, and logs the
 * decision once under SHOAL_VERBOSE. Also coll_runs: which algorithms the
 * collectives' files can run. */
#include <string.h>

#include "coll_internal.h"

static CORE_THREAD_LOCAL coll_ran last_ran;
static CORE_THREAD_LOCAL bool have_last_ran;

const coll_ran *coll_last_choice(void) { return have_last_ran ? &last_ran : NULL; }
void coll_forget_choice(void) { have_last_ran = false; }

/* The first entry of the cache set that holds a key. The bytes are mixed
 * well: sizes are mostly powers of two, whose low bits are all zero. */
static coll_plan_entry *plan_set(coll_team *t, core_coll coll, size_t bytes, plan_inputs inputs)
{
    uint64_t h =
        ((uint64_t)bytes * 4 + (uint64_t)inputs) * 0x9e3779b97f4a7c15ull ^ ((uint64_t)coll + 1) * 0xbf58476d1ce4e5b9ull;
    h ^= h >> 31;
    h *= 0x94d049bb133111ebull;
    h ^= h >> 29;
    return &t->plan_cache[(h % COLL_PLAN_SETS) * COLL_PLAN_WAYS];
}

/* When an entry was last used; 0 if it is empty or was priced under other
 * settings or figures. */
static uint64_t last_use(const coll_plan_entry *e, unsigned gen) { return e->generation == gen ? e->used : 0; }

/* The planner's choice with its lanes resolved on t, the lanes that need
 * preparing listed once each: what a call does with it on every call is
 * worked out here, once per cache entry. */
static coll_choice resolved(const coll_team *t, const plan_choice *plan)
{
    coll_choice ch = {.plan = *plan};
    ch.lane = t->lanes[plan->lane];
    ch.large_lane = t->lanes[plan->large_lane];
    ch.stripe = plan->stripe < LANE_COUNT ? t->lanes[plan->stripe] : NULL;
    const lane_ops *used[3] = {ch.lane, ch.large_lane, ch.stripe};
    for (int i = 0; i < 3; i++) {
        bool again = false;
        for (int j = 0; j < i; j++)
            again = again || used[j] == used[i];
        if (used[i] && used[i]->prepare && !again)
            ch.prepare[ch.nprepare++] = used[i];
    }
    return ch;
}

/* Whether a repeat's choice depends on whether its inputs changed: then
 * the ranks are asked (coll_any) before it runs. Where the choices for
 * fresh and for unchanged inputs differ, the least-regret one loses in one
 * of the two states (on the 2-core Xeon VM, a scatter of 16 KiB over the
 * cells ran 0.6-0.8x Open MPI under OSU's loop, over cma 1.0-1.1x; with
 * inputs written anew it was the other way round), and asking costs a step
 * on the repeats that ask, fewer and fewer of them (coll_plan_reading). */
static bool worth_asking(const plan_query *q)
{
    if (q->bytes < COLL_ASK_INPUTS_MIN || q->coll == CORE_COLL_BARRIER)
        return false;
    plan_query fresh_q = *q, same_q = *q;
    fresh_q.inputs = PLAN_INPUTS_FRESH;
    same_q.inputs = PLAN_INPUTS_UNCHANGED;
    plan_choice fresh = plan_choose(&fresh_q), same = plan_choose(&same_q);
    return fresh.algo != same.algo || fresh.lane != same.lane || fresh.stripe != same.stripe;
}

/* The cached choice for inputs, valid until a plan on t replaces it (see
 * coll_plan). hot: a collective's own call, which its next call checks
 * first. */
static const coll_choice *planned(coll_team *t, core_coll coll, size_t bytes, plan_inputs inputs, bool hot_ok)
{
    /* Configuration and model generations start at 1 once read. */
    unsigned gen = core_config_generation() * 65599u + plan_model_generation() + 1;
    uint64_t now = ++t->plan_clock;
    size_t raw = bytes;
    coll_plan_entry *hot = &t->plan_cache[t->plan_hot[coll].entry];
    if (hot_ok && t->plan_hot[coll].bytes == raw && hot->generation == gen && hot->coll == coll &&
        hot->inputs == inputs) {
        hot->used = now; /* its size class is the one the same size had */
        return &hot->choice;
    }
    bytes = plan_size_class(bytes); /* the cache holds a choice per class, as the planner prices */
    coll_plan_entry *set = plan_set(t, coll, bytes, inputs), *victim = set;
    for (int w = 0; w < COLL_PLAN_WAYS; w++) {
        coll_plan_entry *e = &set[w];
        if (e->generation == gen && e->coll == coll && e->bytes == bytes && e->inputs == inputs) {
            e->used = now;
            if (hot_ok) {
                t->plan_hot[coll].entry = (int)(e - t->plan_cache);
                t->plan_hot[coll].bytes = raw;
            }
            return &e->choice;
        }
        if (last_use(e, gen) < last_use(victim, gen))
            victim = e;
    }
    plan_query q = {
        .coll = coll,
        .bytes = bytes,
        .n = t->n,
        .ppn = t->node_ranks,
        .cores = t->node_cores,
        .window = t->lane.stage_size,
        .inputs = inputs,
    };
    for (int l = 0; l < LANE_COUNT; l++)
        q.usable[l] = t->lanes[l] != NULL;
    plan_choice ch = plan_choose(&q);
    t->plans_priced++;
    /* The model may have been read just now: take its generation after. */
    *victim = (coll_plan_entry){
        core_config_generation() * 65599u + plan_model_generation() + 1, coll, bytes, inputs, now, resolved(t, &ch)};
    victim->choice.ask_inputs = inputs == PLAN_INPUTS_EITHER && worth_asking(&q);
    if (hot_ok) {
        t->plan_hot[coll].entry = (int)(victim - t->plan_cache);
        t->plan_hot[coll].bytes = raw;
    }
    return &victim->choice;
}

/* The cached choice for a call (planned). commit: this call runs, and the
 * next of the same size is a repeat; a look before the call
 * (coll_host_faster) leaves that to the call. */
static const coll_choice *choose(coll_team *t, core_coll coll, size_t bytes, bool commit)
{
    plan_inputs inputs = t->last_bytes[coll] == bytes + 1 ? PLAN_INPUTS_EITHER : PLAN_INPUTS_FRESH;
    if (commit)
        t->last_bytes[coll] = bytes + 1;
    return planned(t, coll, bytes, inputs, true);
}

/* A sample of a call's input: where it is, its length, and 16 words spread
 * over it, mixed. Two calls with the same sample most likely read the very
 * bytes (a program that writes its input anew writes other values). */
static uint64_t input_sample(const void *in, size_t len)
{
    const char *at = in;
    uint64_t h = ((uint64_t)(uintptr_t)in ^ len) * 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 16; i++) {
        uint64_t word;
        memcpy(&word, at + (len - sizeof word) / 15 * (size_t)i, sizeof word);
        h = (h ^ word) * 0xbf58476d1ce4e5b9ull;
        h ^= h >> 29;
    }
    return h;
}

/* The power of two at or below bytes (0 for 0): the size class a plan's
 * log line names. */
static size_t size_klass(size_t bytes) { return bytes ? (size_t)1 << core_log2_floor(bytes) : 0; }

/* Whether the log line of `said` (0: shoal's plan, 1: the host's run) for
 * this collective would say something its last few did not; remembers it.
 * The key mixes everything the lines print. */
static bool news_to_say(coll_team *t, int said, core_coll coll, const plan_choice *p, size_t klass)
{
    const double figures[] = {p->model_ns, p->host_ns, p->host_repeat_ns, p->shoal_repeat_ns};
    uint64_t key = (uint64_t)p->algo | (uint64_t)p->lane << 8 | (uint64_t)p->stripe << 16 | (uint64_t)p->inputs << 24 |
                   (uint64_t)p->large_algo << 32 | (uint64_t)p->large_lane << 40 | (uint64_t)(p->root_share > 0) << 48;
    key = (key * 0x9e3779b97f4a7c15ull ^ klass) * 0xbf58476d1ce4e5b9ull ^ p->eager_limit;
    for (size_t i = 0; i < sizeof figures / sizeof figures[0]; i++) {
        uint64_t bits;
        memcpy(&bits, &figures[i], sizeof bits);
        key = (key ^ bits) * 0x94d049bb133111ebull;
    }
    key |= 1; /* never 0, the key of nothing said yet */
    uint64_t *keys = t->said[said][coll];
    for (int i = 0; i < COLL_SAID_KEYS; i++)
        if (keys[i] == key)
            return false;
    memmove(keys + 1, keys, (COLL_SAID_KEYS - 1) * sizeof *keys);
    keys[0] = key;
    return true;
}

bool coll_host_faster(coll_team *t, core_coll coll, size_t bytes)
{
    if (plan_model_get()->nhost == 0)
        return false; /* no tune measured the host: no second look on every call */
    const plan_choice *ch = &choose(t, coll, bytes, false)->plan;
    if (ch->host_faster && core_log_verbosity() >= 1 && news_to_say(t, 1, coll, ch, plan_size_class(bytes))) {
        if (ch->host_repeat_ns > 0)
            core_log_once("%s of %zu bytes on %d local ranks, repeated: the host MPI's own, measured %.2f us on "
                          "unchanged inputs against shoal's %.2f (shoal tune)",
                          core_coll_name(coll), plan_size_class(bytes), t->n, ch->host_repeat_ns / 1e3,
                          ch->shoal_repeat_ns / 1e3);
        else
            core_log_once("%s of %zu bytes on %d local ranks: the host MPI's own, measured %.2f us against shoal's "
                          "%.2f (shoal tune)",
                          core_coll_name(coll), plan_size_class(bytes), t->n, ch->host_ns / 1e3, ch->model_ns / 1e3);
    }
    /* A call the host runs is the last call all the same: the next of its
     * size is a repeat, for the repeat times to decide (alike on every
     * rank). Not where the fresh rule decides repeats too: a reduction
     * left to the host stays the host's, with its grouping. */
    if (ch->host_faster && plan_repeat_rule(coll, t->n))
        t->last_bytes[coll] = bytes + 1;
    return ch->host_faster;
}

static const coll_choice *take_choice(coll_team *t, core_coll coll, size_t bytes, const coll_choice *ch);

const coll_choice *coll_plan_reading(coll_team *t, core_coll coll, size_t bytes, const void *in, size_t in_len)
{
    const coll_choice *ch = choose(t, coll, bytes, true);
    /* Where a repeat of this size would ask, every call leaves a sample of
     * its input for the next (a rank without one has nothing to change). */
    const coll_choice *repeat = ch->plan.inputs == PLAN_INPUTS_EITHER ? ch
                                : bytes >= COLL_ASK_INPUTS_MIN ? planned(t, coll, bytes, PLAN_INPUTS_EITHER, false)
                                                               : NULL;
    if (!repeat || !repeat->ask_inputs)
        return take_choice(t, coll, bytes, ch);
    bool changed = false;
    if (in && in_len >= sizeof(uint64_t)) {
        uint64_t sample = input_sample(in, in_len);
        changed = t->input_sample[coll] != sample;
        t->input_sample[coll] = sample;
    }
    if (ch != repeat) {
        t->asked[coll].skip = t->asked[coll].skipped = 0; /* a new size: ask at its first repeat */
        return take_choice(t, coll, bytes, ch);
    }
    /* Asking costs a step of every rank. Programs keep to one way (a
     * benchmark's unchanged buffers, a solver's vectors written anew), so
     * after the same answer twice the ranks skip asking for 1, 3, 7 ... up
     * to COLL_ASK_SKIP_MAX repeats, the last answer standing meanwhile, and
     * a different answer starts over. */
    if (t->asked[coll].skip > 0) {
        t->asked[coll].skip--;
    } else {
        bool any = coll_any(t, changed), same = any == t->asked[coll].changed;
        uint32_t skipped = t->asked[coll].skipped;
        t->asked[coll].skipped = !same ? 0 : skipped >= COLL_ASK_SKIP_MAX / 2 ? COLL_ASK_SKIP_MAX : 2 * skipped + 1;
        t->asked[coll].skip = t->asked[coll].skipped;
        t->asked[coll].changed = any;
    }
    ch = planned(t, coll, bytes, t->asked[coll].changed ? PLAN_INPUTS_FRESH : PLAN_INPUTS_UNCHANGED, false);
    return take_choice(t, coll, bytes, ch);
}

const coll_choice *coll_plan(coll_team *t, core_coll coll, size_t bytes)
{
    return take_choice(t, coll, bytes, choose(t, coll, bytes, true));
}

static const coll_choice *take_choice(coll_team *t, core_coll coll, size_t bytes, const coll_choice *ch)
{
    for (int i = 0; i < ch->nprepare; i++)
        ch->prepare[i]->prepare(&t->lane);
    last_ran = (coll_ran){ch->plan.algo, ch->plan.lane, ch->plan.stripe, ch->plan.inputs, ch->plan.model_ns};
    have_last_ran = true;
    size_t klass;
    if (core_log_verbosity() >= 1 && news_to_say(t, 0, coll, &ch->plan, klass = size_klass(bytes))) {
        /* Once per collective, size class (a power of two) and choice. */
        const char *repeat = ch->plan.inputs == PLAN_INPUTS_EITHER      ? ", repeated"
                             : ch->plan.inputs == PLAN_INPUTS_UNCHANGED ? ", repeated on unchanged inputs"
                                                                        : "";
        if (ch->plan.eager_limit) /* a v-variant: no size before the call; small and large blocks apart */
            core_log_once("%s on %d local ranks%s: up to %zu bytes a rank with the sizes by %s over %s, larger blocks "
                          "by %s over %s%s",
                          core_coll_name(coll), t->n, repeat, ch->plan.eager_limit, plan_algo_name(ch->plan.algo),
                          plan_lane_name(ch->plan.lane), plan_algo_name(ch->plan.large_algo),
                          plan_lane_name(ch->plan.large_lane),
                          ch->plan.root_share > 0 ? ", the root moving a share of each" : "");
        else
            core_log_once("%s of %s%zu bytes on %d local ranks%s: %s over %s%s (modelled %.2f us)",
                          core_coll_name(coll), bytes ? ">=" : "", klass, t->n, repeat, plan_algo_name(ch->plan.algo),
                          plan_lanes_label(ch->plan.lane, ch->plan.stripe),
                          ch->plan.root_share <= 0  ? ""
                          : coll == CORE_COLL_BCAST ? ", the root writing a share into each rank"
                                                    : ", the root moving a share of each block",
                          ch->plan.model_ns / 1e3);
    }
    return ch;
}

bool coll_runs(core_coll c, plan_algo a)
{
    if ((unsigned)a >= PLAN_ALGO_COUNT)
        return false;
    switch (c) {
    case CORE_COLL_BARRIER: return coll_barrier_runs(a);
    case CORE_COLL_BCAST: return coll_bcast_runs(a);
    case CORE_COLL_REDUCE: return coll_reduce_runs(a);
    case CORE_COLL_ALLREDUCE: return coll_allreduce_runs(a);
    case CORE_COLL_REDUCE_SCATTER_BLOCK:
    case CORE_COLL_REDUCE_SCATTER: return coll_reduce_scatter_runs(a);
    case CORE_COLL_SCAN:
    case CORE_COLL_EXSCAN: return coll_scan_runs(a);
    case CORE_COLL_GATHER: return coll_move_runs(a, true);
    default: return (unsigned)c < CORE_COLL_COUNT && coll_move_runs(a, false);
    }
}
