#include "plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const algo_names[PLAN_ALGO_COUNT] = {
    [PLAN_BARRIER_FLAT] = "flat", [PLAN_BARRIER_DISSEMINATION] = "dissemination",
    [PLAN_BCAST_FLAT] = "flat", [PLAN_BCAST_TREE] = "tree",
    [PLAN_REDUCE_FLAT] = "flat", [PLAN_REDUCE_TREE] = "tree", [PLAN_REDUCE_SLICED] = "sliced",
    [PLAN_REDUCE_GATHERED] = "gathered",
    [PLAN_ALLREDUCE_FLAT] = "flat", [PLAN_ALLREDUCE_SLICED] = "sliced", [PLAN_ALLREDUCE_GATHERED] = "gathered",
    [PLAN_RSB_OWN] = "own", [PLAN_RSB_GATHERED] = "gathered",
    [PLAN_MOVE_PULL] = "pull", [PLAN_MOVE_PUSH] = "push",
};
static const char *const lane_names[LANE_COUNT] = {"cells", "cma", "host"};

const char *plan_algo_name(plan_algo a) { return (unsigned)a < PLAN_ALGO_COUNT ? algo_names[a] : "?"; }
const char *plan_lane_name(lane_id l) { return (unsigned)l < LANE_COUNT ? lane_names[l] : "?"; }

const char *plan_lanes_label(lane_id lane, lane_id stripe)
{
    if (lane == LANE_CMA && stripe == LANE_HOST)
        return "cma+host";
    return plan_lane_name(lane);
}

/* v-variants: below this many bytes a rank's data travels with the sizes. */
#define EAGER_BYTES (16 * 1024)
/* The size at which a v-variant's lane for large data is priced. */
#define V_LARGE_BYTES (1 << 20)

/* ---- the building blocks of the formulas ---- */

typedef struct pricing {
    const plan_query *q;
    const plan_model *m;
} pricing;

static double maxd(double a, double b) { return a > b ? a : b; }
/* One core copies `bytes` while streaming through `footprint` bytes of buffers. */
static double copy_ns(const pricing *p, double bytes, double footprint)
{
    return plan_copy_ns(p->m, bytes, footprint);
}
/* A copy from one user buffer to another. */
static double buffer_copy_ns(const pricing *p, double bytes) { return copy_ns(p, bytes, 2 * bytes); }

static int team_ppn(const plan_query *q) { return q->ppn > q->n ? q->ppn : q->n; }

/* Beyond sync_ns, what a step waiting on one peer costs: the peer's wait
 * for a core when the node is oversubscribed. */
static double oversub_ns(const pricing *p) { return plan_oversub_ns(p->m, team_ppn(p->q), p->q->cores); }

/* One rank sees one peer's post. */
static double step_ns(const pricing *p) { return p->m->sync_ns + oversub_ns(p); }

/* The cells lane hands over its window once per extra round. */
static double window_handoffs_ns(const pricing *p, double bytes)
{
    return p->q->window ? (ceil(bytes / (double)p->q->window) - 1) * step_ns(p) : 0;
}

/* Single-copy transfers into or out of one process's memory at once queue
 * on its page tables. On a 16-core VM, 3, 7 and 15 ranks reading one root's
 * buffer with process_vm_readv, or writing into it, took 2, 4 and 7.5 times
 * as long as one transfer alone (bcast of 1 MiB at np 16: 1.8 ms; gather
 * push of 4 B: 12 us), and less once the buffer spanned several 2 MiB
 * regions (a page-table page each): about (movers + 1) / 2 times as long
 * per region touched. */
#define CROWD_REGION_BYTES (2.0 * 1024 * 1024)
static double crowding(lane_id l, int movers, double region)
{
    if (l != LANE_CMA || movers <= 1)
        return 1;
    double regions = maxd(1, floor(region / CROWD_REGION_BYTES));
    return maxd(1, (movers + 1) / (2 * regions));
}

/* Moving bytes on lane l while `movers` processes move data at once, on
 * the cores they share, `crowd` of them into or out of `region` bytes of
 * one process. */
static double xfer_crowded(const pricing *p, lane_id l, double bytes, int movers, int crowd, double region)
{
    if (bytes <= 0)
        return 0;
    double slowdown = maxd(plan_cpu_share(movers, p->q->cores), crowding(l, crowd, region));
    double t = plan_lane_time(&p->m->lane[l], bytes, movers) * slowdown;
    return l == LANE_CELLS ? t + window_handoffs_ns(p, bytes) : t;
}

/* The same, each mover in memory of its own. */
static double xfer(const pricing *p, lane_id l, double bytes, int movers)
{
    return xfer_crowded(p, l, bytes, movers, 1, 0);
}

/* Reductions read (and sliced ones write) a lane block by block
 * (PLAN_REDUCE_BLOCK): a call per block. The block stays in cache, but the
 * other end is a buffer that its owner has just written (an input) or reads
 * right after (a result), so each block costs what the lane's transfers
 * cost. (Pricing it at half, as if only the far end went to memory, held
 * for calls back to back on the same buffers only: with inputs written
 * before each call, sliced allreduce over cma measured 5-15 % slower than
 * flat over cells at np 2 from 1 MB, which the half price had reversed.) */
static double xfer_blocks(const pricing *p, lane_id l, double bytes, int movers)
{
    if (bytes <= 0)
        return 0;
    const lane_cost *c = &p->m->lane[l];
    double share = plan_cpu_share(movers, p->q->cores), call = c->latency_ns + c->overhead_ns;
    double calls = ceil(bytes / PLAN_REDUCE_BLOCK);
    return (calls * call + plan_lane_time(c, bytes, movers) - call) * share;
}

/* Reductions read the cells lane in place (lane view): each owner's
 * `staged` bytes cost it one copy into its cells, all owners at once. */
static double staging_ns(const pricing *p, double staged, int movers)
{
    return copy_ns(p, staged, staged) * plan_cpu_share(movers, p->q->cores); /* the cells stay in cache */
}
static double staging_fixed_ns(const pricing *p, double staged)
{
    return p->m->lane[LANE_CELLS].latency_ns + window_handoffs_ns(p, staged);
}

/* The inputs a reducer reads: staged on the cells lane, else `peers`
 * transfers of `per_peer` bytes. */
static double inputs_ns(const pricing *p, lane_id l, double staged, double per_peer, double peers, int movers)
{
    if (l != LANE_CELLS)
        return peers * xfer_blocks(p, l, per_peer, movers);
    return staging_fixed_ns(p, staged) + staging_ns(p, staged, movers);
}

/* The cores this team may count on: its share of the node's when other
 * ranks of the node are busy too. */
static double team_cores(const pricing *p)
{
    double cores = p->q->cores > 0 ? p->q->cores : team_ppn(p->q);
    return cores * p->q->n / team_ppn(p->q);
}

/* `pairs` groups at once, each of `stagers` ranks staging `staged` bytes
 * on the cells lane for one rank that reduces them (`reduce` ns alone on a
 * core). The reducer works on a round while the stagers fill the next (and,
 * in a loop of calls, the next call's), so on enough cores only the longer
 * part shows, plus a round of the shorter; on fewer cores, all the work
 * shares them. */
static double staged_reduce_ns(const pricing *p, double staged, int stagers, double pairs, double reduce)
{
    double stage = copy_ns(p, staged, staged), shorter = stage < reduce ? stage : reduce;
    double rounds = p->q->window ? ceil(staged / (double)p->q->window) : 1;
    double busy = pairs * (stagers + 1), cores = team_cores(p);
    double overlapped = maxd(maxd(stage, reduce), pairs * (stagers * stage + reduce) / (busy < cores ? busy : cores));
    return staging_fixed_ns(p, staged) + overlapped + shorter / (rounds + 1);
}

/* A transfer striped: share of it on lane `stripe`, the rest on l, one
 * after the other on the reader. */
static double xfer_striped(const pricing *p, lane_id l, lane_id stripe, double share, double bytes, int movers)
{
    if (stripe == LANE_COUNT)
        return xfer(p, l, bytes, movers);
    return xfer(p, stripe, bytes * share, movers) + xfer(p, l, bytes * (1 - share), movers);
}

/* One step in which a rank waits for every other rank of n. */
static double sync_all(const pricing *p, int n)
{
    return n <= 1 ? 0 : step_ns(p) + p->m->sync_per_peer_ns * (n - 2);
}

static double reduce_ns(const pricing *p, double bytes) { return bytes / p->m->reduce_bw; }
/* How much longer work that every rank of the node does at once takes, on
 * the cores they share. */
static double node_share(const pricing *p) { return plan_cpu_share(team_ppn(p->q), p->q->cores); }
/* Gathered reductions move whole inputs into a temporary, then reduce it:
 * unlike the block-wise ones, they read those inputs back a second time. */
static double reread_ns(const pricing *p, double bytes)
{
    return copy_ns(p, bytes, bytes * p->q->n) * node_share(p); /* the temporary holds n inputs */
}
/* A reduction every rank of the node does at once. */
static double reduce_all_ns(const pricing *p, double bytes) { return reduce_ns(p, bytes) * node_share(p); }
static double log_ceil(int n, int base)
{
    double d = 0;
    for (long reach = 1; reach < n; reach *= base)
        d++;
    return d;
}

/* ---- one formula per algorithm: the critical path of the slowest rank ---- */

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
static double root_share(const pricing *p, plan_algo a, lane_id l)
{
    const plan_query *q = p->q;
    bool shares = l == LANE_CMA && q->n > 1 &&
                  ((a == PLAN_MOVE_PUSH && q->coll == CORE_COLL_GATHER) ||
                   (a == PLAN_MOVE_PULL && q->coll == CORE_COLL_SCATTER));
    if (!shares || node_share(p) > 1)
        return 0;
    double lo = 0, hi = 0.5;
    if (root_side_ns(p, l, lo) >= others_side_ns(p, l, lo))
        return 0;
    for (int i = 0; i < 20; i++) {
        double mid = (lo + hi) / 2;
        if (root_side_ns(p, l, mid) < others_side_ns(p, l, mid))
            lo = mid;
        else
            hi = mid;
    }
    double r = floor(lo * 64) / 64;
    return root_shared_ns(p, l, r) < root_shared_ns(p, l, 0) ? r : 0;
}

/* Data movement by pull on lane l, or striped (`share` of every transfer on
 * lane `stripe`, the rest on l, one after the other on the reader; owners
 * send their two-sided shares themselves). */
static double pull_ns(const pricing *p, lane_id l, lane_id stripe, double share)
{
    const plan_query *q = p->q;
    double S = (double)q->bytes, n = q->n;
    int ppn = team_ppn(q);
    switch (q->coll) {
    case CORE_COLL_GATHER:
    case CORE_COLL_GATHERV: { /* the root copies its own block, then reads every other */
        /* On the cells lane the others stage their blocks meanwhile: half of
         * the root's own copy hides behind that, when every rank has a core. */
        double own = l == LANE_CELLS && stripe == LANE_COUNT && node_share(p) <= 1 ? 0.5 : 1;
        return (n - 1) * xfer_striped(p, l, stripe, share, S, 1) + own * buffer_copy_ns(p, S);
    }
    case CORE_COLL_SCATTER:
    case CORE_COLL_SCATTERV: /* every rank reads its block from the root */
        if (stripe != LANE_COUNT) /* the root sends every striped share */
            return maxd(maxd(xfer_striped(p, l, stripe, share, S, ppn), (n - 1) * xfer(p, stripe, S * share, 1)),
                        buffer_copy_ns(p, S));
        if (l == LANE_CELLS) /* the root stages every other block in its cells, a window at a time */
            return maxd(root_shared_ns(p, l, 0),
                        buffer_copy_ns(p, S) + copy_ns(p, (n - 1) * S, (n - 1) * S) + window_handoffs_ns(p, n * S));
        return root_shared_ns(p, l, 0) + (l == LANE_HOST && n > 2 ? (n - 2) * xfer(p, l, S, 1) : 0);
    default: /* allgather, alltoall: every rank reads n-1 blocks; its own copy half overlaps */
        return (n - 1) * xfer_striped(p, l, stripe, share, S, ppn) + buffer_copy_ns(p, S) * 0.5 * node_share(p);
    }
}

/* root_r: the candidate's root_share (0 where it has none). */
static double price(const pricing *p, plan_algo a, lane_id l, int fanout, size_t chunk, double root_r)
{
    const plan_query *q = p->q;
    double S = (double)q->bytes, n = q->n;
    int ppn = team_ppn(q);
    bool put = l == LANE_CMA;
    switch (a) {
    case PLAN_BARRIER_FLAT: return sync_all(p, q->n);
    case PLAN_BARRIER_DISSEMINATION: return log_ceil(q->n, 2) * step_ns(p);

    case PLAN_BCAST_FLAT:
        if (l == LANE_HOST) /* the root sends every copy itself */
            return (n - 1) * xfer(p, l, S, 1);
        if (put) /* readers read (n-1)/n, all from the root's buffer; the root writes the rest into each */
            return xfer_crowded(p, l, S * (n - 1) / n, ppn, q->n - 1, S) + step_ns(p);
        /* one way: the root stages once while the n-1 readers copy out (a
         * lane's movers are transfers at once, each with both its copies) */
        return xfer(p, l, S, q->n - 1);
    case PLAN_BCAST_TREE: {
        double depth = log_ceil(q->n, fanout), c = chunk < S ? (double)chunk : S;
        double chunks = ceil(S / c);
        /* a parent's children read each chunk of it at once */
        int readers = fanout < q->n - 1 ? fanout : q->n - 1;
        return (depth + chunks - 1) * (xfer_crowded(p, l, c, ppn, readers, c) + oversub_ns(p));
    }

    case PLAN_REDUCE_FLAT:
        if (l == LANE_CELLS) /* the others stage at once; the root waits for all, reduces from the cells */
            return sync_all(p, q->n) + staged_reduce_ns(p, S, q->n - 1, 1, (n - 1) * reduce_ns(p, S));
        /* the root reads every input alone */
        return sync_all(p, q->n) + (n - 1) * (xfer(p, l, S, 1) + reduce_ns(p, S));
    case PLAN_REDUCE_TREE: /* a level: wait for the children, stage or read their partials, reduce */
        if (l == LANE_CELLS) { /* level k: a child stages for each of n / 2^(k+1) parents */
            double t = 0;
            for (int span = 2; span / 2 < q->n; span *= 2)
                t += step_ns(p) + staged_reduce_ns(p, S, 1, ceil(n / span), reduce_ns(p, S));
            return t;
        }
        return log_ceil(q->n, 2) * (step_ns(p) + inputs_ns(p, l, S, S, 1, ppn) + reduce_all_ns(p, S));
    case PLAN_REDUCE_SLICED: {
        double root = S * 3 / (2 * n + 1), other = S * 2 / (2 * n + 1);
        double t_root = inputs_ns(p, l, S, root, n - 1, ppn) + (n - 1) * reduce_all_ns(p, root);
        double t_other = inputs_ns(p, l, S, other, n - 1, ppn) + (n - 1) * reduce_all_ns(p, other);
        if (put)
            t_other += xfer_blocks(p, l, other, ppn);
        else
            t_root += (n - 1) * xfer(p, l, other, 1);
        return maxd(t_root, t_other) + 2 * sync_all(p, q->n);
    }
    case PLAN_REDUCE_GATHERED:
        return (n - 1) * (xfer(p, l, S, 1) + reduce_ns(p, S) + reread_ns(p, S)) + sync_all(p, q->n);

    case PLAN_ALLREDUCE_FLAT:
        return sync_all(p, q->n) + inputs_ns(p, l, S, S, n - 1, ppn) + (n - 1) * reduce_all_ns(p, S);
    case PLAN_ALLREDUCE_SLICED: {
        double s = S / n;
        double reduce_phase = inputs_ns(p, l, S, s, n - 1, ppn) + (n - 1) * reduce_all_ns(p, s);
        double spread_phase = (n - 1) * (put ? xfer_blocks(p, l, s, ppn) : xfer(p, l, s, ppn));
        return reduce_phase + spread_phase + (put ? 2 : 3) * sync_all(p, q->n);
    }
    case PLAN_ALLREDUCE_GATHERED:
        return sync_all(p, q->n) + (n - 1) * (xfer(p, l, S, ppn) + reduce_all_ns(p, S) + reread_ns(p, S));

    case PLAN_RSB_OWN: /* on cells every rank stages all n blocks */
        return sync_all(p, q->n) + inputs_ns(p, l, S * n, S, n - 1, ppn) + (n - 1) * reduce_all_ns(p, S);
    case PLAN_RSB_GATHERED:
        return sync_all(p, q->n) + (n - 1) * (xfer(p, l, S, ppn) + reduce_all_ns(p, S) + reread_ns(p, S));

    case PLAN_MOVE_PULL: return root_r > 0 ? root_shared_ns(p, l, root_r) : pull_ns(p, l, LANE_COUNT, 0);
    case PLAN_MOVE_PUSH: /* every rank writes (its part of) its block into the root at once */
        return root_shared_ns(p, l, root_r);
    default: return 1e300;
    }
}


/* The host lane's share of a striped transfer: its part of the two lanes'
 * modelled throughput for large blocks at this ppn. */
static double stripe_share(const pricing *p)
{
    int ppn = team_ppn(p->q);
    double big = 1 << 20;
    double t_host = plan_lane_time(&p->m->lane[LANE_HOST], big, ppn);
    double t_cma = plan_lane_time(&p->m->lane[LANE_CMA], big, ppn);
    return t_host > 0 && t_cma > 0 ? (1 / t_host) / (1 / t_host + 1 / t_cma) : 0.5;
}

static bool stripes(const plan_query *q)
{
    bool pull_coll = q->coll == CORE_COLL_GATHER || q->coll == CORE_COLL_SCATTER || q->coll == CORE_COLL_ALLGATHER ||
                     q->coll == CORE_COLL_ALLGATHERV || q->coll == CORE_COLL_ALLTOALL;
    return pull_coll && q->n > 1 && q->bytes >= PLAN_STRIPE_MIN && q->usable[LANE_CMA] && q->usable[LANE_HOST];
}

/* ---- which algorithms and lanes a collective has ---- */

typedef struct option {
    plan_algo algo;
    unsigned lanes; /* bit per lane_id */
} option;

#define CELLS (1u << LANE_CELLS)
#define CMA (1u << LANE_CMA)
#define HOST (1u << LANE_HOST)
#define ALL (CELLS | CMA | HOST)

static int options_for(core_coll c, option *o)
{
    int k = 0;
    switch (c) {
    case CORE_COLL_BARRIER:
        o[k++] = (option){PLAN_BARRIER_FLAT, ALL};
        o[k++] = (option){PLAN_BARRIER_DISSEMINATION, ALL};
        break;
    case CORE_COLL_BCAST:
        o[k++] = (option){PLAN_BCAST_FLAT, ALL};
        o[k++] = (option){PLAN_BCAST_TREE, CELLS | CMA};
        break;
    case CORE_COLL_REDUCE:
        o[k++] = (option){PLAN_REDUCE_FLAT, CELLS | CMA};
        o[k++] = (option){PLAN_REDUCE_TREE, CELLS | CMA};
        o[k++] = (option){PLAN_REDUCE_SLICED, CELLS | CMA};
        o[k++] = (option){PLAN_REDUCE_GATHERED, ALL};
        break;
    case CORE_COLL_ALLREDUCE:
        o[k++] = (option){PLAN_ALLREDUCE_FLAT, CELLS | CMA};
        o[k++] = (option){PLAN_ALLREDUCE_SLICED, CELLS | CMA};
        o[k++] = (option){PLAN_ALLREDUCE_GATHERED, ALL};
        break;
    case CORE_COLL_REDUCE_SCATTER_BLOCK:
    case CORE_COLL_REDUCE_SCATTER: /* priced at its mean block */
        o[k++] = (option){PLAN_RSB_OWN, CELLS | CMA};
        o[k++] = (option){PLAN_RSB_GATHERED, ALL};
        break;
    case CORE_COLL_GATHER:
        o[k++] = (option){PLAN_MOVE_PULL, ALL};
        o[k++] = (option){PLAN_MOVE_PUSH, CMA};
        break;
    default:
        o[k++] = (option){PLAN_MOVE_PULL, ALL};
        break;
    }
    return k;
}

/* ---- forced choices ---- */

/* SHOAL_ALGO="allreduce:flat,bcast:tree": the forced algorithm for c, or -1. */
static int forced_algo(core_coll c)
{
    const char *spec = core_config_get()->algo;
    const char *name = core_coll_name(c);
    size_t len = strlen(name);
    for (const char *p = spec; p && *p;) {
        if (!strncmp(p, name, len) && p[len] == ':') {
            const char *v = p + len + 1;
            size_t vlen = strcspn(v, ",");
            option o[8];
            int k = options_for(c, o);
            for (int i = 0; i < k; i++)
                if (strlen(algo_names[o[i].algo]) == vlen && !strncmp(v, algo_names[o[i].algo], vlen))
                    return o[i].algo;
            core_log_warn_once("SHOAL_ALGO: '%.*s' is not an algorithm of %s; ignored", (int)vlen, v, name);
            return -1;
        }
        p = strchr(p, ',');
        if (p)
            p++;
    }
    return -1;
}

/* SHOAL_LANES=cma+host: only striped candidates. */
#define FORCED_STRIPE LANE_COUNT

/* SHOAL_LANES: the forced lane, FORCED_STRIPE, or -1. */
static int forced_lane(const plan_query *q)
{
    const char *lanes = core_config_get()->lanes;
    if (!lanes[0])
        return -1;
    if (!strcmp(lanes, "cma+host")) {
        if (q->usable[LANE_CMA] && q->usable[LANE_HOST])
            return FORCED_STRIPE;
        core_log_warn_once("SHOAL_LANES=%s but a lane of it is not usable here; the planner chooses", lanes);
        return -1;
    }
    for (int l = 0; l < LANE_COUNT; l++)
        if (!strcmp(lanes, lane_names[l])) {
            if (q->usable[l])
                return l;
            core_log_warn_once("SHOAL_LANES=%s but that lane is not usable here; the planner chooses", lanes);
            return -1;
        }
    core_log_warn_once("SHOAL_LANES=%s is not a lane (cells, cma, host, cma+host); ignored", lanes);
    return -1;
}

/* ---- enumeration ---- */

/* Team sizes are calibrated in powers of two: the smallest one >= n. */
static int team_bucket(int n)
{
    int b = 2;
    while (b < n && b < 1024)
        b *= 2;
    return b;
}

/* Sizes are calibrated at powers of two: the nearest one, log2 rounded. */
static int size_bucket(size_t bytes)
{
    return bytes ? (int)lround(log2((double)bytes)) : 0;
}

static void factor_key(char *buf, size_t len, core_coll c, plan_algo a, const char *lanes, int size_b, int team_b)
{
    snprintf(buf, len, "%s/%s/%s/b%d/n%d", core_coll_name(c), algo_names[a], lanes, size_b, team_b);
}

void plan_factor_key(char *buf, size_t len, core_coll c, plan_algo a, lane_id l, lane_id stripe, size_t bytes, int n)
{
    factor_key(buf, len, c, a, plan_lanes_label(l, stripe), size_bucket(bytes), team_bucket(n));
}

/* Within one team size: the factors of the nearest calibrated sizes below
 * and above (at most 16x away), interpolated in log-log; false if neither. */
#define FACTOR_REACH 4
static bool factor_at_team(const plan_model *m, core_coll c, plan_algo a, const char *l, size_t bytes, int team_b,
                           double *out)
{
    char key[64];
    double x = bytes ? log2((double)bytes) : 0, f_lo = 0, f_hi = 0;
    int lo = -1, hi = -1, below = (int)floor(x), above = (int)ceil(x);
    for (int d = 0; d <= FACTOR_REACH && lo < 0; d++) {
        factor_key(key, sizeof key, c, a, l, below - d, team_b);
        if (below - d >= 0 && plan_model_find_factor(m, key, &f_lo))
            lo = below - d;
    }
    for (int d = 0; d <= FACTOR_REACH && hi < 0; d++) {
        factor_key(key, sizeof key, c, a, l, above + d, team_b);
        if (plan_model_find_factor(m, key, &f_hi))
            hi = above + d;
    }
    if (lo < 0 && hi < 0)
        return false;
    if (lo < 0 || hi == lo)
        *out = hi >= 0 ? f_hi : f_lo;
    else if (hi < 0)
        *out = f_lo;
    else
        *out = exp(log(f_lo) + (log(f_hi) - log(f_lo)) * (x - lo) / (hi - lo));
    return true;
}

/* The factor for the nearest calibrated team size below n, else above. */
static double factor_for(const plan_model *m, core_coll c, plan_algo a, lane_id lane, lane_id stripe, size_t bytes,
                         int n)
{
    if (m->nfactors == 0)
        return 1.0;
    const char *l = plan_lanes_label(lane, stripe);
    double f;
    int own = team_bucket(n);
    for (int b = own; b >= 2; b /= 2)
        if (factor_at_team(m, c, a, l, bytes, b, &f))
            return f;
    for (int b = own * 2; b <= 1024; b *= 2)
        if (factor_at_team(m, c, a, l, bytes, b, &f))
            return f;
    return 1.0;
}

static int enumerate(const plan_query *q, plan_candidate *out, int max, int want_lane, int want_algo)
{
    pricing p = {q, plan_model_get()};
    option o[8];
    int nopt = options_for(q->coll, o), k = 0;
    bool barrier = q->coll == CORE_COLL_BARRIER;
    for (int i = 0; i < nopt; i++)
        for (int l = 0; l < LANE_COUNT; l++) {
            /* A barrier, or any collective of one rank, moves no data
             * between ranks: it is priced once, on the cells lane. */
            bool no_lane = barrier || q->n <= 1;
            if (!(o[i].lanes & (1u << l)) || !q->usable[l] || (no_lane && l != LANE_CELLS))
                continue;
            int fanouts[2] = {4, 2}, nfan = o[i].algo == PLAN_BCAST_TREE ? 2 : 1;
            size_t chunks[2] = {256 * 1024, 64 * 1024};
            int nchunk = o[i].algo == PLAN_BCAST_TREE && q->bytes > 64 * 1024 ? 2 : 1;
            for (int f = 0; f < nfan; f++)
                for (int c = 0; c < nchunk && k < max; c++) {
                    plan_candidate *cand = &out[k++];
                    *cand = (plan_candidate){.algo = o[i].algo, .lane = (lane_id)l, .stripe = LANE_COUNT,
                                             .fanout = fanouts[f], .chunk = chunks[c]};
                    cand->root_share = root_share(&p, o[i].algo, (lane_id)l);
                    cand->formula_ns = price(&p, o[i].algo, (lane_id)l, fanouts[f], chunks[c], cand->root_share);
                    cand->factor = factor_for(p.m, q->coll, o[i].algo, (lane_id)l, LANE_COUNT, q->bytes, q->n);
                    cand->ns = cand->formula_ns * cand->factor;
                    if (want_lane >= 0 && l != want_lane && !no_lane)
                        cand->excluded = "SHOAL_LANES";
                    else if (want_algo >= 0 && (int)o[i].algo != want_algo)
                        cand->excluded = "SHOAL_ALGO";
                }
            /* Large blocks may also be striped over cma and host. */
            if (o[i].algo == PLAN_MOVE_PULL && l == LANE_CMA && stripes(q) && k < max) {
                plan_candidate *cand = &out[k++];
                double share = stripe_share(&p);
                *cand = (plan_candidate){.algo = PLAN_MOVE_PULL, .lane = LANE_CMA, .stripe = LANE_HOST,
                                         .stripe_share = share, .fanout = 4, .chunk = 256 * 1024};
                cand->formula_ns = pull_ns(&p, LANE_CMA, LANE_HOST, share);
                cand->factor = factor_for(p.m, q->coll, PLAN_MOVE_PULL, LANE_CMA, LANE_HOST, q->bytes, q->n);
                cand->ns = cand->formula_ns * cand->factor;
                if (want_lane >= 0 && want_lane != FORCED_STRIPE)
                    cand->excluded = "SHOAL_LANES";
                else if (want_algo >= 0 && want_algo != PLAN_MOVE_PULL)
                    cand->excluded = "SHOAL_ALGO";
            }
        }
    /* Forced striping excludes every candidate that does not stripe. */
    for (int i = 0; i < k && want_lane == FORCED_STRIPE; i++)
        if (out[i].stripe == LANE_COUNT && !out[i].excluded && !(barrier || q->n <= 1))
            out[i].excluded = "SHOAL_LANES";
    return k;
}

static int by_price(const void *a, const void *b)
{
    const plan_candidate *x = a, *y = b;
    if (!x->excluded != !y->excluded)
        return x->excluded ? 1 : -1;
    return x->ns < y->ns ? -1 : x->ns > y->ns;
}

int plan_candidates(const plan_query *q, plan_candidate *out, int max)
{
    int lane = forced_lane(q), algo = forced_algo(q->coll);
    int k = enumerate(q, out, max, lane, algo);
    bool any = false;
    for (int i = 0; i < k; i++)
        any = any || !out[i].excluded;
    if (!any && lane == FORCED_STRIPE) {
        /* Striping is for large blocks of data movement only. */
        core_log_once("SHOAL_LANES=cma+host: %s of %zu bytes does not stripe; the planner chooses",
                      core_coll_name(q->coll), q->bytes);
        lane = -1;
        k = enumerate(q, out, max, lane, algo);
        for (int i = 0; i < k; i++)
            any = any || !out[i].excluded;
    }
    if (!any && algo >= 0) {
        /* The forced algorithm has no candidate on the forced lane. */
        core_log_warn_once("SHOAL_ALGO=%s:%s cannot run on lane %s; the planner chooses among that lane's",
                           core_coll_name(q->coll), algo_names[algo], lane >= 0 ? lane_names[lane] : "any");
        k = enumerate(q, out, max, lane, -1);
    }
    qsort(out, (size_t)k, sizeof *out, by_price);
    return k;
}

static bool is_v(core_coll c)
{
    return c == CORE_COLL_GATHERV || c == CORE_COLL_SCATTERV || c == CORE_COLL_ALLTOALLV;
}

static core_coll non_v(core_coll c)
{
    return c == CORE_COLL_GATHERV ? CORE_COLL_GATHER : c == CORE_COLL_SCATTERV ? CORE_COLL_SCATTER : CORE_COLL_ALLTOALL;
}

plan_choice plan_choose(const plan_query *q)
{
    plan_candidate cand[64];
    plan_choice ch = {.lane = LANE_CELLS, .stripe = LANE_COUNT, .fanout = 4, .chunk = 256 * 1024,
                      .large_lane = LANE_CELLS};
    if (is_v(q->coll)) {
        /* No rank knows every size: small data goes with the size headers on
         * the cells lane (or the forced lane); the lane for large data is
         * priced as the plain collective at a large size. */
        int forced = forced_lane(q);
        plan_query big = *q;
        big.coll = non_v(q->coll);
        big.bytes = V_LARGE_BYTES;
        int k = plan_candidates(&big, cand, 64);
        ch.algo = PLAN_MOVE_PULL;
        ch.lane = forced >= 0 && forced != FORCED_STRIPE ? (lane_id)forced : LANE_CELLS;
        ch.large_lane = k ? cand[0].lane : ch.lane;
        ch.eager_limit = forced == LANE_CELLS ? q->window : EAGER_BYTES;
        return ch;
    }
    int k = plan_candidates(q, cand, 64);
    if (k == 0)
        return ch;
    ch.algo = cand[0].algo;
    ch.lane = cand[0].lane;
    ch.stripe = cand[0].stripe;
    ch.stripe_share = cand[0].stripe_share;
    ch.root_share = cand[0].root_share;
    ch.fanout = cand[0].fanout;
    ch.chunk = cand[0].chunk;
    ch.model_ns = cand[0].ns;
    /* Data movement by puts only where the lane can put. */
    if (ch.algo == PLAN_MOVE_PUSH && ch.lane != LANE_CMA)
        ch.algo = PLAN_MOVE_PULL;
    return ch;
}
