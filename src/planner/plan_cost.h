/* plan_cost: the building blocks of the algorithms' cost formulas (internal
 * to the planner): copies, lane transfers (crowded, block-wise, striped),
 * staging, synchronisation steps, reductions, and what sharing cores adds.
 * They ask a lane what it can do (lane_can), never which lane it is, so a
 * new lane is priced by its capabilities and figures. Inline: the search
 * prices every candidate of a call through them.
 *
 * May call: core, lanes, plan_model. */
#ifndef SHOAL_PLAN_COST_H
#define SHOAL_PLAN_COST_H

#include <math.h>

#include "plan.h"

/* A call being priced: the query and the model's figures. */
typedef struct pricing {
    const plan_query *q;
    const plan_model *m;
} pricing;

static inline double maxd(double a, double b) { return a > b ? a : b; }
/* One core copies `bytes` while streaming through `footprint` bytes of buffers. */
static inline double copy_ns(const pricing *p, double bytes, double footprint)
{
    return plan_copy_ns(p->m, bytes, footprint);
}
/* A copy from one user buffer to another. */
static inline double buffer_copy_ns(const pricing *p, double bytes) { return copy_ns(p, bytes, 2 * bytes); }

static inline int team_ppn(const plan_query *q) { return q->ppn > q->n ? q->ppn : q->n; }

/* Beyond sync_ns, what a step waiting on one peer costs: the peer's wait
 * for a core when the node is oversubscribed. */
static inline double oversub_ns(const pricing *p) { return plan_oversub_ns(p->m, team_ppn(p->q), p->q->cores); }

/* One rank sees one peer's post. */
static inline double step_ns(const pricing *p) { return p->m->sync_ns + oversub_ns(p); }

/* The cells lane hands over its window once per extra round. */
static inline double window_handoffs_ns(const pricing *p, double bytes)
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
static inline double crowding(lane_id l, int movers, double region)
{
    if (!lane_can(l, LANE_CAP_KERNEL_COPY) || movers <= 1)
        return 1;
    double regions = maxd(1, floor(region / CROWD_REGION_BYTES));
    return maxd(1, (movers + 1) / (2 * regions));
}

/* Below this call size (the query's bytes), a single-copy transfer's fixed
 * costs (a system call, the pages it pins) hide what the cache saves: on the
 * 16-core Xeon, repeated bcast, scatter and gather of 16-32 KiB at np 2 ran
 * 0.65-0.97x of MPICH over cma where the cells had run 1.0-1.5x. The call's
 * size, not each transfer's: a sliced reduce of 128 KiB at np 2 reads
 * slices of 51 and 77 KiB, in cache on a repeat as much as flat's whole
 * input; judged per transfer, flat looked 1.5x cheaper on unchanged inputs
 * and was taken at 64-512 KiB, where under OSU's method it ran 0.71-0.92x of
 * Open MPI and sliced 0.98-1.08x (2-core Xeon VM). */
#define PLAN_UNCHANGED_MIN (64 * 1024)

/* Lane l moving `bytes` with `movers` at once. On unchanged inputs
 * (PLAN_INPUTS_UNCHANGED) a single-copy lane's reader finds what it read in
 * the last call still in its cache, as far as what the call touches there
 * fits (each of n blocks read and written): its copy runs at the cache's
 * rate instead of memory's, and only that is saved. The rest of the lane's
 * time per byte (the kernel pinning each page, walking the peer's page
 * tables) stays: priced as a copy between the reader's own buffers, a 1 MiB
 * bcast over cma at np 2 came to 6.9 us against 37 fresh, where OSU's loop
 * measured 34-44 us, and the cells it displaced 18-22 (2-core EPYC VM, Open
 * MPI 4.1.4 and MPICH 5). A staged lane copies through its cells either way. */
static inline double lane_time(const pricing *p, lane_id l, double bytes, int movers)
{
    const lane_cost *c = &p->m->lane[l], *w = &p->m->lane_written[l];
    double fresh = plan_lane_time(c, bytes, movers);
    bool unchanged =
        p->q->inputs == PLAN_INPUTS_UNCHANGED && lane_can(l, LANE_CAP_SINGLE_COPY) && !lane_can(l, LANE_CAP_TWO_SIDED);
    if (plan_lane_measured(w)) {
        /* Fresh bytes at the figures timed on bytes just written; unchanged
         * ones at the lane's own, timed on bytes the reader still caches,
         * at every size: in OSU's loop on the 2-core Xeon VM, single copy
         * of unchanged bytes kept most of its cached rate far past the
         * reader's own cache (bcast of 1 MiB at 24 GB/s a side, 2 MiB at
         * 14.5, 4 MiB at 10, bytes just written at 9.6), and the choices
         * between lanes held there (flat over cma 2.0-3.0x Open MPI, the
         * cells 1.0-1.3x). */
        double written = plan_lane_time(w, bytes, movers);
        return unchanged ? fmin(fresh, written) : written;
    }
    double footprint = 2 * bytes * (p->q->n > 2 ? p->q->n : 2);
    if (!unchanged || p->q->bytes < PLAN_UNCHANGED_MIN)
        return fresh;
    double cache_saves = copy_ns(p, bytes, HUGE_VAL) - copy_ns(p, bytes, footprint);
    double least = c->latency_ns + c->overhead_ns + bytes * c->per_byte_ns + copy_ns(p, bytes, footprint);
    return maxd(least, fresh - maxd(0, cache_saves));
}

/* Moving bytes on lane l while `movers` processes move data at once, on
 * the cores they share, `crowd` of them into or out of `region` bytes of
 * one process. */
static inline double xfer_crowded(const pricing *p, lane_id l, double bytes, int movers, int crowd, double region)
{
    if (bytes <= 0)
        return 0;
    double slowdown = maxd(plan_cpu_share(movers, p->q->cores), crowding(l, crowd, region));
    double t = lane_time(p, l, bytes, movers) * slowdown;
    if (!lane_can(l, LANE_CAP_STAGED))
        return t;
    /* A staged transfer longer than the window takes rounds, and the
     * writer fills the next while the reader drains this one (LANE_ROUNDS
     * areas): where the two sides have cores of their own, the copying past
     * the first window overlaps, half its time hidden. The lane's figures,
     * timed within one window, are the two copies one after the other. (A
     * 1 MiB bcast over the cells at np 2: 27-34 us priced so, 18-22
     * measured; 17 priced with the overlap.) Past half the cache the two
     * copies stream through memory and contend for it instead: fresh bcast
     * over the cells at np 2 ran 1.8x Open MPI at 1 MiB, 1.6x at 2 and
     * 1.4x at 4, gather 1.3, 1.0 and 0.9x, where single copy held 1.4-2.1x
     * (2-core Xeon VM, 2 MiB L2). */
    double window = (double)p->q->window;
    if (window > 0 && bytes > window && plan_cpu_share(2 * movers, p->q->cores) <= 1) {
        double first = lane_time(p, l, window, movers) * slowdown;
        double streams = maxd(window, p->m->cache_bytes / 2), overlapped = fmin(bytes, streams);
        double upto = overlapped < bytes ? lane_time(p, l, overlapped, movers) * slowdown : t;
        t = first + (upto - first) / 2 + (t - upto);
    }
    return t + window_handoffs_ns(p, bytes);
}

/* The same, each mover in memory of its own. */
static inline double xfer(const pricing *p, lane_id l, double bytes, int movers)
{
    return xfer_crowded(p, l, bytes, movers, 1, 0);
}

/* `readers` transfers of one block that its owner exposed once (allgather,
 * every input of a gathered allreduce), each reader moving it with `movers`
 * at once. A staged lane's transfer is two copies of the block, the owner's
 * into its cells and the reader's out of them, each about half of what the
 * transfer costs past its fixed part; the owner makes its copy once, not once
 * per reader. (Priced once per reader, allgather of 16-128 KiB blocks over
 * the cells at 4 ranks on 2 cores came to 1.1x single copy's price where it
 * ran in 0.5-0.8x of its time, 2-core EPYC VM, Open MPI 4.1.4.) */
static inline double xfer_shared_block(const pricing *p, lane_id l, double bytes, int movers, int readers)
{
    double one = xfer(p, l, bytes, movers);
    if (bytes <= 0 || !lane_can(l, LANE_CAP_STAGED) || readers <= 1)
        return readers * one;
    const lane_cost *c = &p->m->lane[l];
    double fixed =
        (c->latency_ns + c->overhead_ns) * plan_cpu_share(movers, p->q->cores) + window_handoffs_ns(p, bytes);
    return readers * one - (readers - 1) * maxd(0, one - fixed) / 2;
}

/* Reductions read (and sliced ones write) a lane block by block
 * (PLAN_REDUCE_BLOCK): a call per block. The block stays in cache, but the
 * other end is a buffer that its owner has just written (an input) or reads
 * right after (a result), so each block costs what the lane's transfers
 * cost on fresh inputs. (Pricing it at half, as if only the far end went
 * to memory, held for calls back to back on unchanged buffers only: with
 * inputs written before each call, sliced allreduce over cma measured 5-15 %
 * slower than flat over cells at np 2 from 1 MB, which the half price had
 * reversed. Unchanged inputs are lane_time's.) */
static inline double xfer_blocks(const pricing *p, lane_id l, double bytes, int movers)
{
    if (bytes <= 0)
        return 0;
    const lane_cost *c = &p->m->lane[l];
    double share = plan_cpu_share(movers, p->q->cores), call = c->latency_ns + c->overhead_ns;
    double calls = ceil(bytes / PLAN_REDUCE_BLOCK);
    return (calls * call + lane_time(p, l, bytes, movers) - call) * share;
}

/* Reductions read a staged lane (cells) in place (lane view): each owner's
 * `staged` bytes cost it one copy into its cells, all owners at once. The
 * cells stay in cache, but the input they are copied from competes for it
 * with the `output` the reduction writes: past the cache the copy streams. */
static inline double staging_ns(const pricing *p, double staged, double output, int movers)
{
    return copy_ns(p, staged, staged + output) * plan_cpu_share(movers, p->q->cores);
}
static inline double staging_fixed_ns(const pricing *p, lane_id l, double staged)
{
    return p->m->lane[l].latency_ns + window_handoffs_ns(p, staged);
}

/* The cores this team may count on: its share of the node's when other
 * ranks of the node are busy too. */
static inline double team_cores(const pricing *p)
{
    double cores = p->q->cores > 0 ? p->q->cores : team_ppn(p->q);
    return cores * p->q->n / team_ppn(p->q);
}

/* `pairs` groups at once, each of `stagers` ranks staging `staged` bytes
 * on staged lane l for one rank that reduces them (`reduce` ns alone on a
 * core). The reducer works on a round while the stagers fill the next (and,
 * in a loop of calls, the next call's), so on enough cores only the longer
 * part shows, plus a round of the shorter; on fewer cores, all the work
 * shares them. */
static inline double staged_reduce_ns(const pricing *p, lane_id l, double staged, int stagers, double pairs,
                                      double reduce)
{
    double stage = copy_ns(p, staged, staged), shorter = stage < reduce ? stage : reduce;
    double rounds = p->q->window ? ceil(staged / (double)p->q->window) : 1;
    double busy = pairs * (stagers + 1), cores = team_cores(p);
    double overlapped = maxd(maxd(stage, reduce), pairs * (stagers * stage + reduce) / (busy < cores ? busy : cores));
    return staging_fixed_ns(p, l, staged) + overlapped + shorter / (rounds + 1);
}

/* A transfer striped: share of it on lane `stripe`, the rest on l, one
 * after the other on the reader. */
static inline double xfer_striped(const pricing *p, lane_id l, lane_id stripe, double share, double bytes, int movers)
{
    if (stripe == LANE_COUNT)
        return xfer(p, l, bytes, movers);
    return xfer(p, stripe, bytes * share, movers) + xfer(p, l, bytes * (1 - share), movers);
}

/* One step in which a rank waits for every other rank of n. */
static inline double sync_all(const pricing *p, int n)
{
    return n <= 1 ? 0 : step_ns(p) + p->m->sync_per_peer_ns * (n - 2);
}

static inline double reduce_ns(const pricing *p, double bytes) { return bytes / p->m->reduce_bw; }
/* How much longer work that every rank of the node does at once takes, on
 * the cores they share. */
static inline double node_share(const pricing *p) { return plan_cpu_share(team_ppn(p->q), p->q->cores); }
/* Gathered reductions move whole inputs into a temporary, then reduce it:
 * unlike the block-wise ones, they read those inputs back a second time. */
static inline double reread_ns(const pricing *p, double bytes)
{
    return copy_ns(p, bytes, bytes * p->q->n) * node_share(p); /* the temporary holds n inputs */
}
/* A reduction every rank of the node does at once. */
static inline double reduce_all_ns(const pricing *p, double bytes) { return reduce_ns(p, bytes) * node_share(p); }

/* A reducer's read of one peer's `bytes` staged on lane l, in place, alone
 * on a core: the lines cross from the owner's core, freshly written; the
 * lane's transfer less its fixed cost and the owner's copy in (staging_ns)
 * is that crossing. It is most of a staged reduction's time, and what a
 * VM's slow spells make dearer: on the 2-core VM a 256 KiB reduce over the
 * cells took 24 us where its cores exchange lines in 0.11 us and 59 us
 * where they take 0.38 us, against 36-37 us over cma in both (the probe's
 * cells figures follow: 9 GB/s, then 3.6). */
static inline double staged_crossing_ns(const pricing *p, lane_id l, double bytes, int movers)
{
    /* The lane's figures are timed on transfers whose copy in stays in
     * cache, so that is the copy they hold: less one that streams, taken
     * away past the cache, they priced a 4 MiB crossing at half a 1 MiB
     * one's rate. */
    const lane_cost *c = &p->m->lane[l];
    return maxd(0, plan_lane_time(c, bytes, movers) - c->latency_ns - c->overhead_ns - copy_ns(p, bytes, 0));
}

/* The inputs a reducer reads, `peers` of `per_peer` bytes, and their
 * reduction. Staged on a staged lane (`staged` bytes by each owner), read
 * in place: the sum runs on the lines as they arrive, the longer of the two
 * counts. Else transfers block by block, each reduced after it. */
static inline double reduce_inputs_ns(const pricing *p, lane_id l, double staged, double per_peer, double peers,
                                      int movers)
{
    double reduce = peers * reduce_all_ns(p, per_peer);
    if (!lane_can(l, LANE_CAP_STAGED))
        return peers * xfer_blocks(p, l, per_peer, movers) + reduce;
    return staging_fixed_ns(p, l, staged) + staging_ns(p, staged, per_peer, movers) +
           maxd(reduce, peers * staged_crossing_ns(p, l, per_peer, movers) * node_share(p));
}
static inline double log_ceil(int n, int base)
{
    double d = 0;
    for (long reach = 1; reach < n; reach *= base)
        d++;
    return d;
}

/* Shared by the table's formulas and the search (plan_algorithms.c). */
/* The share of every other rank's block the root of a gather by push or a
 * scatter by pull moves itself on a lane that can put, or of the message
 * a flat bcast's root writes into each rank; 0: none. */
double plan_root_share(const pricing *p, plan_algo a, lane_id l);
/* What a flat reduce's root reads of another rank's input at once on lane
 * l: PLAN_READ_WHOLE or PLAN_REDUCE_BLOCK. */
size_t plan_reduce_flat_unit(const pricing *p, lane_id l);
/* Data movement by pull on lane l, or striped (`share` of every transfer on
 * two-sided lane `stripe`, the rest on l; LANE_COUNT: not striped). */
double plan_pull_ns(const pricing *p, lane_id l, lane_id stripe, double share);

#endif
