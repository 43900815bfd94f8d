/* Scan and exscan. Algorithms (priced by the planner's table, src/planner):
 *   flat      rank r reduces the inputs of ranks 0 .. r (exscan: 0 .. r-1)
 *             where they are exposed: one wait, r reductions, the last
 *             rank's the longest.
 *   gathered  every input moved to every rank, the first r+1 (exscan: r)
 *             reduced there (the only way on two-sided lanes, which have
 *             no views).
 * Elements are combined in rank order, ((x0 op x1) op x2) ..., the order
 * MPI defines for a scan, so results never depend on timing. Rank 0's
 * result of an exscan is undefined in MPI: its buffer is left alone. */
#include "coll_reduction.h"

/* The inputs this rank combines: ranks 0 .. ranks-1. */
static int scan_ranks(const coll_team *t, bool inclusive) { return inclusive ? t->me + 1 : t->me; }

static void scan_gathered(coll_team *t, const lane_ops *lane, const char *src, char *dst, size_t count, size_t esize,
                          core_reduce_fn fn, bool inclusive)
{
    char *all = coll_temp(t, count * esize * (size_t)t->n);
    coll_gather_inputs(t, lane, src, count * esize, 0, count * esize, -1, all);
    int ranks = scan_ranks(t, inclusive);
    if (ranks > 0)
        coll_reduce_local_first(t, all, count, esize, fn, dst, ranks);
}

/* Each rank reads the earlier ranks' inputs where they are exposed; the
 * last rank's input is read by nobody, so it exposes nothing. */
static void scan_flat(coll_team *t, const lane_ops *lane, const char *src, char *dst, size_t count, size_t esize,
                      core_reduce_fn fn, bool inclusive)
{
    int me = t->me, ranks = scan_ranks(t, inclusive);
    bool exposes = me < t->n - 1;
    if (exposes)
        src = coll_exposable_input(t, lane, src, dst, count * esize);
    size_t per = coll_round_elements(t, lane, count, esize, 1);
    uint64_t done = 0;
    for (size_t base = 0; base < count; base += per) {
        size_t k = min_size(per, count - base), bytes = k * esize;
        /* Rank 0 reads nothing through the lane. */
        coll_round_begin(t, exposes, base + per >= count && me == 0);
        if (exposes)
            lane->expose(&t->lane, 0, src + base * esize, bytes);
        uint64_t exposed = coll_next_epoch(t);
        done = coll_next_epoch(t);
        if (exposes)
            coll_post(t, exposed);
        for (int p = 0; p < me; p++)
            coll_wait_exposed(t, lane, p, 0, exposed, 0, bytes);
        if (ranks > 0)
            coll_reduce_first_ranks(t, lane, 0, 0, k, esize, fn, dst + base * esize, src + base * esize, ranks);
        coll_post(t, done);
        coll_round_end(t, done);
    }
    /* My input stays readable until every later rank has read it. */
    if (lane->single_copy && exposes)
        for (int p = me + 1; p < t->n; p++)
            coll_wait(t, p, done);
}

typedef void (*scan_fn)(coll_team *t, const lane_ops *lane, const char *src, char *dst, size_t count, size_t esize,
                        core_reduce_fn fn, bool inclusive);
static const scan_fn scan_algorithms[PLAN_ALGO_COUNT] = {
    [PLAN_SCAN_FLAT] = scan_flat,
    [PLAN_SCAN_GATHERED] = scan_gathered,
};

bool coll_scan_runs(plan_algo a) { return scan_algorithms[a] != NULL; }

void coll_scan(coll_team *t, const void *sbuf, void *rbuf, size_t count, core_type type, core_op op, bool inclusive)
{
    size_t esize = core_type_size(type);
    core_reduce_fn fn = core_reduce_kernel(type, op);
    const char *src = sbuf ? sbuf : rbuf;
    if (t->n == 1 && !inclusive)
        return;
    if (coll_reduce_trivially(t, src, rbuf, count, count * esize))
        return;
    core_coll coll = inclusive ? CORE_COLL_SCAN : CORE_COLL_EXSCAN;
    const coll_choice *ch = coll_plan_reading(t, coll, count * esize, src, count * esize);
    scan_fn run = scan_algorithms[ch->plan.algo];
    if (ch->lane->two_sided || !run) /* no views: the inputs must move */
        run = scan_gathered;
    run(t, ch->lane, src, rbuf, count, esize, fn, inclusive);
}
