/* plan_algorithms: the planner's table of algorithms, a row each: its id,
 * name and description, the collectives it serves, the lane capabilities it
 * needs, and its cost formula (the critical path of the slowest rank, built
 * from plan_cost.h's blocks; where a rank leaves early, as in a flat reduce
 * that reads whole, the mean of the ranks' times). Names, each collective's
 * options, explain's candidates, SHOAL_ALGO and the unit tests' lists all
 * come from the table; the run functions are the collectives layer's
 * (src/coll, one file per collective, indexed by the same ids; coll_runs
 * checks they exist).
 *
 * May call: core, lanes, plan_model. */
#include <string.h>

#include "plan_cost.h"

/* Gather by push and scatter by pull on a lane that can put as well: the
 * root, which otherwise only copies its own block, may move share r of
 * every other rank's block itself (reading what they push, writing what
 * they pull) while they move the rest. The two sides run at once. */
static double root_side_ns(const pricing *p, lane_id l, double r)
{
    double S = (double)p->q->bytes;
    return buffer_copy_ns(p, S) + (p->q->n - 1) * xfer(p, l, r * S, team_ppn(p->q));
}
static double others_side_ns(const pricing *p, lane_id l, double r)
{
    double S = (double)p->q->bytes;
    return xfer_crowded(p, l, (1 - r) * S, team_ppn(p->q), p->q->n - 1, S * p->q->n);
}
static double root_shared_ns(const pricing *p, lane_id l, double r)
{
    double t = maxd(root_side_ns(p, l, r), others_side_ns(p, l, r));
    return r > 0 ? t + step_ns(p) : t; /* the root waits for their buffers, they for its reads */
}

/* The root's share that evens out the two sides (the root's grows with r,
 * the others' shrinks), in 64ths; 0 where sharing does not pay for its
 * extra step, or where ranks take turns on cores (the same work, spread
 * differently, finishes no sooner). */
double plan_root_share(const pricing *p, plan_algo a, lane_id l)
{
    const plan_query *q = p->q;
    /* Flat bcast: the root writes the last 1/n into each rank while they
     * read the rest (coll_bcast.c), for a core of its own that would idle;
     * taking turns on cores, that only adds two waits on every rank (at 4
     * ranks on 2 cores, 16-64 KiB: 16-32 us against 7-16 without). */
    if (a == PLAN_BCAST_FLAT)
        return lane_can(l, LANE_CAP_PUT) && q->n > 1 && node_share(p) <= 1 ? 1.0 / q->n : 0;
    bool shares =
        lane_can(l, LANE_CAP_PUT) && q->n > 1 &&
        ((a == PLAN_MOVE_PUSH && q->coll == CORE_COLL_GATHER) || (a == PLAN_MOVE_PULL && q->coll == CORE_COLL_SCATTER));
    if (!shares || node_share(p) > 1)
        return 0;
    /* The share is balanced on the figures for bytes read before, whatever
     * the inputs: both sides cross lines between the cores (the readers the
     * writer's, the writer into the readers' buffers), so fresh bytes slow
     * both alike. (Balanced on the figures for bytes just written, the
     * root of a 1 MiB gather or scatter at np 2 took 42 % and ran 10-20 %
     * slower than at the 27 % of the other figures, with fresh inputs and
     * under OSU's loop: 2-core Xeon VM.) */
    plan_query same_q = *q;
    same_q.inputs = PLAN_INPUTS_UNCHANGED;
    pricing same = {&same_q, p->m};
    if (plan_lane_measured(&p->m->lane_written[l]))
        p = &same;
    /* The largest k below 32 at which the root's side still ends first at
     * share k/64: a bisection over whole 64ths, as each call of this size
     * that misses the plan cache pays for it. */
    if (root_side_ns(p, l, 0) >= others_side_ns(p, l, 0))
        return 0;
    int lo = 0, hi = 32;
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (root_side_ns(p, l, mid / 64.0) < others_side_ns(p, l, mid / 64.0))
            lo = mid;
        else
            hi = mid;
    }
    double r = lo / 64.0;
    return root_shared_ns(p, l, r) < root_shared_ns(p, l, 0) ? r : 0;
}

/* Data movement by pull on lane l, or striped (`share` of every transfer on
 * lane `stripe`, the rest on l, one after the other on the reader; owners
 * send their two-sided shares themselves). */
double plan_pull_ns(const pricing *p, lane_id l, lane_id stripe, double share)
{
    const plan_query *q = p->q;
    double S = (double)q->bytes, n = q->n;
    int ppn = team_ppn(q);
    switch (q->coll) {
    case CORE_COLL_GATHER:
    case CORE_COLL_GATHERV: { /* the root copies its own block, then reads every other */
        /* On the cells lane the others stage their blocks meanwhile: half of
         * the root's own copy hides behind that, when every rank has a core. */
        double own = lane_can(l, LANE_CAP_STAGED) && stripe == LANE_COUNT && node_share(p) <= 1 ? 0.5 : 1;
        return (n - 1) * xfer_striped(p, l, stripe, share, S, 1) + own * buffer_copy_ns(p, S);
    }
    case CORE_COLL_SCATTER:
    case CORE_COLL_SCATTERV:      /* every rank reads its block from the root */
        if (stripe != LANE_COUNT) /* the root sends every striped share */
            return maxd(maxd(xfer_striped(p, l, stripe, share, S, ppn), (n - 1) * xfer(p, stripe, S * share, 1)),
                        buffer_copy_ns(p, S));
        if (lane_can(l, LANE_CAP_STAGED)) /* the root stages every other block in its cells, a window at a time */
            return maxd(root_shared_ns(p, l, 0),
                        buffer_copy_ns(p, S) + copy_ns(p, (n - 1) * S, (n - 1) * S) + window_handoffs_ns(p, n * S));
        /* on a two-sided lane the root sends every other block itself */
        return root_shared_ns(p, l, 0) + (lane_can(l, LANE_CAP_TWO_SIDED) && n > 2 ? (n - 2) * xfer(p, l, S, 1) : 0);
    default: { /* allgather, alltoall: every rank reads n-1 blocks; its own copy half overlaps */
        double own = buffer_copy_ns(p, S) * 0.5 * node_share(p);
        bool one_block = q->coll == CORE_COLL_ALLGATHER || q->coll == CORE_COLL_ALLGATHERV;
        if (one_block && stripe == LANE_COUNT) /* every reader reads the block each rank exposes */
            return xfer_shared_block(p, l, S, ppn, (int)n - 1) + own;
        return (n - 1) * xfer_striped(p, l, stripe, share, S, ppn) + own;
    }
    }
}

/* ---- one formula per algorithm (c: the candidate's fanout, chunk, root share) ---- */

/* A barrier that lets ranks leave in any order may let rank 0, the usual
 * root, leave last: where ranks take turns on cores, the rooted collective
 * that so often follows then waits for it to get a core (OSU's loop at 4
 * ranks on 2 cores: small bcast and scatter 0.41-0.84x of Open MPI after
 * the flat barrier, 3.1-7.2x after the release one). */
static double exit_order_ns(const pricing *p) { return node_share(p) > 1 ? oversub_ns(p) : 0; }

static double barrier_flat_ns(const pricing *p, lane_id l, const plan_candidate *c)
{
    (void)l, (void)c;
    return sync_all(p, p->q->n) + exit_order_ns(p);
}

static double barrier_dissemination_ns(const pricing *p, lane_id l, const plan_candidate *c)
{
    (void)l, (void)c;
    return log_ceil(p->q->n, 2) * step_ns(p) + exit_order_ns(p);
}

/* The release's second step is a hand-off: the others are waiting already,
 * their turn for a core paid in the first. */
static double barrier_release_ns(const pricing *p, lane_id l, const plan_candidate *c)
{
    (void)l, (void)c;
    return sync_all(p, p->q->n) + p->m->sync_ns;
}

static double bcast_flat_ns(const pricing *p, lane_id l, const plan_candidate *c)
{
    const plan_query *q = p->q;
    double S = (double)q->bytes, n = q->n;
    if (lane_can(l, LANE_CAP_TWO_SIDED)) /* the root sends every copy itself */
        return (n - 1) * xfer(p, l, S, 1);
    if (c->root_share > 0) /* readers read (n-1)/n, all from the root's buffer; the root writes the rest into each */
        return xfer_crowded(p, l, S * (1 - c->root_share), team_ppn(q), q->n - 1, S) + step_ns(p);
    if (lane_can(l, LANE_CAP_SINGLE_COPY)) /* all of it from the root's buffer; the root outwaits them */
        return xfer_crowded(p, l, S, team_ppn(q), q->n - 1, S) + oversub_ns(p);
    /* one way: the root stages once while the n-1 readers copy out (a
     * lane's movers are transfers at once, each with both its copies) */
    return xfer(p, l, S, q->n - 1);
}

static double bcast_tree_ns(const pricing *p, lane_id l, const plan_candidate *c)
{
    const plan_query *q = p->q;
    double S = (double)q->bytes;
    double depth = log_ceil(q->n, c->fanout), chunk = c->chunk < S ? (double)c->chunk : S;
    double chunks = ceil(S / chunk);
    /* a parent's children read each chunk of it at once */
    int readers = c->fanout < q->n - 1 ? c->fanout : q->n - 1;
    return (depth + chunks - 1) * (xfer_crowded(p, l, chunk, team_ppn(q), readers, chunk) + oversub_ns(p));
}

size_t plan_reduce_flat_unit(const pricing *p, lane_id l)
{
    double S = (double)p->q->bytes;
    bool whole = p->q->n == 2 && lane_can(l, LANE_CAP_SINGLE_COPY) && !lane_can(l, LANE_CAP_TWO_SIDED) &&
                 3 * S <= p->m->cache_bytes;
    return whole ? PLAN_READ_WHOLE : PLAN_REDUCE_BLOCK;
}

static double reduce_flat_ns(const pricing *p, lane_id l, const plan_candidate *c)
{
    const plan_query *q = p->q;
    double S = (double)q->bytes, n = q->n;
    if (lane_can(l, LANE_CAP_STAGED)) /* the others stage at once; the root waits for all, reduces from the cells */
        return sync_all(p, q->n) +
               staged_reduce_ns(p, l, S, q->n - 1, 1, (n - 1) * maxd(reduce_ns(p, S), staged_crossing_ns(p, l, S, 1)));
    /* The root reads the other's input whole, which may then leave, and
     * reduces after: priced at the mean of the two ranks' times, what each
     * spends in the call (what OSU and shoal-bench report; the ranks of the
     * other algorithms all work to the end, where their mean is their
     * slowest). At np 2 under OSU's loop, Open MPI 4.1.4, 16-256 KiB: 1.1-1.4x
     * of the host's reduce, where reading block by block made the other
     * rank wait for the root's reduction too (0.82-1.0x; 2-core Xeon VM). */
    if (c->chunk == PLAN_READ_WHOLE)
        return sync_all(p, q->n) + xfer(p, l, S, 1) + reduce_ns(p, S) / 2;
    /* the root reads every input alone, block by block, each reduced after
     * it (priced as one transfer, flat over cma looked as cheap as sliced
     * at 512 KiB on unchanged inputs and took 1.5x its time) */
    return sync_all(p, q->n) + reduce_inputs_ns(p, l, S, S, n - 1, 1);
}

/* A level: wait for the children, stage or read their partials, reduce. */
static double reduce_tree_ns(const pricing *p, lane_id l, const plan_candidate *c)
{
    (void)c;
    const plan_query *q = p->q;
    double S = (double)q->bytes, n = q->n;
    if (lane_can(l, LANE_CAP_STAGED)) { /* level k: a child stages for each of n / 2^(k+1) parents */
        double t = 0;
        for (int span = 2; span / 2 < q->n; span *= 2)
            t += step_ns(p) +
                 staged_reduce_ns(p, l, S, 1, ceil(n / span), maxd(reduce_ns(p, S), staged_crossing_ns(p, l, S, 1)));
        return t;
    }
    return log_ceil(q->n, 2) * (step_ns(p) + reduce_inputs_ns(p, l, S, S, 1, team_ppn(q)));
}

static double reduce_sliced_ns(const pricing *p, lane_id l, const plan_candidate *c)
{
    (void)c;
    const plan_query *q = p->q;
    double S = (double)q->bytes, n = q->n;
    int ppn = team_ppn(q);
    double root = S * 3 / (2 * n + 1), other = S * 2 / (2 * n + 1);
    double t_root = reduce_inputs_ns(p, l, S, root, n - 1, ppn);
    double t_other = reduce_inputs_ns(p, l, S, other, n - 1, ppn);
    if (lane_can(l, LANE_CAP_PUT))
        t_other += xfer_blocks(p, l, other, ppn);
    else
        t_root += (n - 1) * xfer(p, l, other, 1);
    return maxd(t_root, t_other) + 2 * sync_all(p, q->n);
}

static double reduce_gathered_ns(const pricing *p, lane_id l, const plan_candidate *c)
{
    (void)c;
    double S = (double)p->q->bytes, n = p->q->n;
    return (n - 1) * (xfer(p, l, S, 1) + reduce_ns(p, S) + reread_ns(p, S)) + sync_all(p, p->q->n);
}

static double allreduce_flat_ns(const pricing *p, lane_id l, const plan_candidate *c)
{
    (void)c;
    double S = (double)p->q->bytes, n = p->q->n;
    return sync_all(p, p->q->n) + reduce_inputs_ns(p, l, S, S, n - 1, team_ppn(p->q));
}

/* Scan: rank r reads the inputs of the r ranks before it and reduces them
 * (exscan: one fewer), all ranks at once but rank 0; the last rank's n - 1
 * inputs take longest, read while n - 1 ranks read. (Priced as allreduce's
 * flat, where every rank reads, two ranks' scan and exscan of 4 MiB went
 * single copy and ran 1.5-1.6x as long as over the cells: 2-core Xeon VM.) */
static double scan_flat_ns(const pricing *p, lane_id l, const plan_candidate *c)
{
    (void)c;
    double S = (double)p->q->bytes, n = p->q->n;
    return sync_all(p, p->q->n) + reduce_inputs_ns(p, l, S, S, n - 1, p->q->n - 1);
}

static double allreduce_sliced_ns(const pricing *p, lane_id l, const plan_candidate *c)
{
    (void)c;
    double S = (double)p->q->bytes, n = p->q->n;
    int ppn = team_ppn(p->q);
    bool put = lane_can(l, LANE_CAP_PUT);
    double s = S / n;
    double reduce_phase = reduce_inputs_ns(p, l, S, s, n - 1, ppn);
    double spread_phase = (n - 1) * (put ? xfer_blocks(p, l, s, ppn) : xfer(p, l, s, ppn));
    return reduce_phase + spread_phase + (put ? 2 : 3) * sync_all(p, p->q->n);
}

/* allreduce and reduce_scatter(_block) gathered: every rank moves the inputs it reduces. */
static double gathered_everywhere_ns(const pricing *p, lane_id l, const plan_candidate *c)
{
    (void)c;
    double S = (double)p->q->bytes, n = p->q->n;
    int ppn = team_ppn(p->q), readers = (int)n - 1;
    if (p->q->coll != CORE_COLL_REDUCE_SCATTER_BLOCK && p->q->coll != CORE_COLL_REDUCE_SCATTER)
        /* allreduce and scan: every rank reads every rank's one input */
        return sync_all(p, p->q->n) + xfer_shared_block(p, l, S, ppn, readers) +
               readers * (reduce_all_ns(p, S) + reread_ns(p, S));
    /* reduce_scatter: each reader moves its block of every input. Each
     * owner exposes its whole input (coll_gather_inputs), which a staged
     * lane copies into its cells whole, its own block too, a window at a
     * time. The reduction reads the temporary back while it streams
     * through the own block and the result as well: past the cache, the
     * temporary's every byte goes to memory and back. (Priced on the
     * temporary alone, gathered over cma and the cells at np 2 with 1 MiB
     * blocks came to 151-157 us against own's 155, and ran 290-435 us
     * against own's 190-209: 2-core Xeon VM, fresh inputs.) */
    double moves = readers * xfer(p, l, S, ppn);
    if (lane_can(l, LANE_CAP_STAGED))
        moves += staging_ns(p, S, n * S, ppn) + window_handoffs_ns(p, n * S) - window_handoffs_ns(p, S);
    double reread = copy_ns(p, readers * S, (2 * n + 1) * S) * node_share(p);
    return sync_all(p, p->q->n) + moves + readers * reduce_all_ns(p, S) + reread;
}

static double rsb_own_ns(const pricing *p, lane_id l,
                         const plan_candidate *c) /* staged: every rank stages all n blocks */
{
    (void)c;
    double S = (double)p->q->bytes, n = p->q->n;
    return sync_all(p, p->q->n) + reduce_inputs_ns(p, l, S * n, S, n - 1, team_ppn(p->q));
}

static double move_pull_ns(const pricing *p, lane_id l, const plan_candidate *c)
{
    return c->root_share > 0 ? root_shared_ns(p, l, c->root_share) : plan_pull_ns(p, l, LANE_COUNT, 0);
}

/* every rank writes (its part of) its block into the root at once */
static double move_push_ns(const pricing *p, lane_id l, const plan_candidate *c)
{
    return root_shared_ns(p, l, c->root_share);
}

/* ---- the table ---- */

#define COLL(c) (1u << CORE_COLL_##c)
#define REDUCE_SCATTERS (COLL(REDUCE_SCATTER_BLOCK) | COLL(REDUCE_SCATTER)) /* priced at the mean block */
#define SCANS (COLL(SCAN) | COLL(EXSCAN))
#define MOVERS                                                                                            \
    (COLL(GATHER) | COLL(GATHERV) | COLL(SCATTER) | COLL(SCATTERV) | COLL(ALLGATHER) | COLL(ALLGATHERV) | \
     COLL(ALLTOALL) | COLL(ALLTOALLV))

/* In plan_algo order, which is each collective's order of candidates. A
 * lane a row needs nothing of is any lane: LANE_CAP_VIEW keeps two-sided
 * lanes (no views) out, LANE_CAP_PUT keeps lanes that cannot put out. */
static const plan_algorithm table[PLAN_ALGO_COUNT] = {
    {PLAN_BARRIER_FLAT, "flat", "everyone posts, everyone waits for all", COLL(BARRIER), 0, false, barrier_flat_ns},
    {PLAN_BARRIER_DISSEMINATION, "dissemination", "log2(n) rounds, one peer each", COLL(BARRIER), 0, false,
     barrier_dissemination_ns},
    {PLAN_BARRIER_RELEASE, "release", "rank 0 waits for all, then releases the others: it leaves first", COLL(BARRIER),
     0, false, barrier_release_ns},
    {PLAN_BCAST_FLAT, "flat", "every rank reads from the root (single copy: the root writes a share)", COLL(BCAST), 0,
     false, bcast_flat_ns},
    {PLAN_BCAST_TREE, "tree", "k-ary tree, pipelined in chunks", COLL(BCAST), LANE_CAP_VIEW, true, bcast_tree_ns},
    {PLAN_REDUCE_FLAT, "flat", "the root reduces every input", COLL(REDUCE), LANE_CAP_VIEW, false, reduce_flat_ns},
    {PLAN_REDUCE_TREE, "tree", "binomial tree over contiguous rank ranges", COLL(REDUCE), LANE_CAP_VIEW, false,
     reduce_tree_ns},
    {PLAN_REDUCE_SLICED, "sliced", "each rank reduces a slice, the root collects", COLL(REDUCE), LANE_CAP_VIEW, false,
     reduce_sliced_ns},
    {PLAN_REDUCE_GATHERED, "gathered", "inputs moved to the root, reduced there", COLL(REDUCE), 0, false,
     reduce_gathered_ns},
    {PLAN_ALLREDUCE_FLAT, "flat", "every rank reduces every input", COLL(ALLREDUCE), LANE_CAP_VIEW, false,
     allreduce_flat_ns},
    {PLAN_ALLREDUCE_SLICED, "sliced", "each rank reduces a slice, everyone gets every slice", COLL(ALLREDUCE),
     LANE_CAP_VIEW, false, allreduce_sliced_ns},
    {PLAN_ALLREDUCE_GATHERED, "gathered", "every input moved to every rank, reduced there", COLL(ALLREDUCE), 0, false,
     gathered_everywhere_ns},
    {PLAN_RSB_OWN, "own", "each rank reduces its own block where the inputs are", REDUCE_SCATTERS, LANE_CAP_VIEW, false,
     rsb_own_ns},
    {PLAN_RSB_GATHERED, "gathered", "each block moved to its rank, reduced there", REDUCE_SCATTERS, 0, false,
     gathered_everywhere_ns},
    {PLAN_MOVE_PULL, "pull", "data movement: readers fetch", MOVERS, 0, false, move_pull_ns},
    {PLAN_MOVE_PUSH, "push", "data movement: writers put into the root", COLL(GATHER), LANE_CAP_PUT, false,
     move_push_ns},
    {PLAN_SCAN_FLAT, "flat", "each rank reduces the inputs up to its own where they are", SCANS, LANE_CAP_VIEW, false,
     scan_flat_ns},
    {PLAN_SCAN_GATHERED, "gathered", "every input moved to every rank, reduced there", SCANS, 0, false,
     gathered_everywhere_ns},
};

const plan_algorithm *plan_algorithms(int *count)
{
    *count = PLAN_ALGO_COUNT;
    return table;
}

const plan_algorithm *plan_algorithm_of(plan_algo a) { return (unsigned)a < PLAN_ALGO_COUNT ? &table[a] : NULL; }

const char *plan_algo_name(plan_algo a) { return (unsigned)a < PLAN_ALGO_COUNT ? table[a].name : "?"; }

int plan_algo_from_name(core_coll c, const char *name, size_t len)
{
    for (int a = 0; a < PLAN_ALGO_COUNT; a++)
        if ((table[a].colls & (1u << c)) && strlen(table[a].name) == len && !strncmp(name, table[a].name, len))
            return a;
    return -1;
}
