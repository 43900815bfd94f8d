/* planner: chooses, per call, the algorithm and the lane of a collective.
 *
 * Owns every threshold and cost formula; no other layer compares a size
 * against a constant. For a call it enumerates every candidate (algorithm,
 * lane, chunk size, tree fanout), prices each with the measured cost model
 * (plan_model.h) and takes the cheapest. The price depends only on what every
 * rank of the call knows alike (the collective, the bytes, the rank count,
 * the lanes usable on the team), so all ranks choose the same. SHOAL_ALGO and
 * SHOAL_LANES restrict the candidates.
 *
 * May call: core, lanes. */
#ifndef SHOAL_PLAN_H
#define SHOAL_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "core.h"
#include "lane.h"
#include "plan_model.h"

typedef enum {
    PLAN_BARRIER_FLAT,          /* everyone posts, everyone waits for all */
    PLAN_BARRIER_DISSEMINATION, /* log2(n) rounds, one peer each */
    PLAN_BARRIER_RELEASE,       /* rank 0 waits for all, then releases the others: it leaves first */
    PLAN_BCAST_FLAT,            /* every rank reads from the root (the root may write a share: root_share) */
    PLAN_BCAST_TREE,            /* k-ary tree, pipelined in chunks */
    PLAN_REDUCE_FLAT,           /* the root reduces every input */
    PLAN_REDUCE_TREE,           /* binomial tree over contiguous rank ranges */
    PLAN_REDUCE_SLICED,         /* each rank reduces a slice, the root collects */
    PLAN_REDUCE_GATHERED,       /* inputs moved to the root, reduced there */
    PLAN_ALLREDUCE_FLAT,        /* every rank reduces every input */
    PLAN_ALLREDUCE_SLICED,      /* each rank reduces a slice, everyone gets every slice */
    PLAN_ALLREDUCE_GATHERED,    /* every input moved to every rank, reduced there */
    PLAN_RSB_OWN,               /* each rank reduces its own block where the inputs are */
    PLAN_RSB_GATHERED,          /* each block moved to its rank, reduced there */
    PLAN_MOVE_PULL,             /* data movement: readers fetch */
    PLAN_MOVE_PUSH,             /* data movement: writers put (lanes that can) */
    PLAN_SCAN_FLAT,             /* each rank reduces the inputs up to its own where they are */
    PLAN_SCAN_GATHERED,         /* every input moved to every rank, reduced there */
    PLAN_ALGO_COUNT
} plan_algo;

/* An algorithm as the planner knows it: a row of the table in
 * plan_algorithms.c. Its run function is the collectives layer's, under the
 * same id (src/coll). */
struct pricing;
struct plan_candidate;
typedef double (*plan_cost_fn)(const struct pricing *p, lane_id lane, const struct plan_candidate *c);
typedef struct plan_algorithm {
    plan_algo id;
    const char *name; /* as SHOAL_ALGO, tuning files and shoal explain write it */
    const char *description;
    unsigned colls;    /* bit per core_coll it serves */
    unsigned needs;    /* lane_cap bits a lane must have to carry it */
    bool pipelined;    /* priced at several fanouts and chunk sizes */
    plan_cost_fn cost; /* its formula: the critical path of the slowest rank */
} plan_algorithm;

/* The table, in plan_algo order (each collective's candidates in that order). */
const plan_algorithm *plan_algorithms(int *count);
/* Row a, or NULL. */
const plan_algorithm *plan_algorithm_of(plan_algo a);
/* The algorithm of collective c named name (length len), or -1. */
int plan_algo_from_name(core_coll c, const char *name, size_t len);

const char *plan_algo_name(plan_algo a);
const char *plan_lane_name(lane_id l);
/* "cma", or "cma+host" for a striped choice: what SHOAL_LANES takes. */
const char *plan_lanes_label(lane_id lane, lane_id stripe);

/* What a call's inputs are likely to be. A reader that fetched a peer's
 * block by single copy in the last call still holds it in its cache when
 * the block is unchanged and fits: then the copy runs at cache speed, while
 * a staged lane copies it through its cells as always. Fresh inputs (just
 * written by their owner) cost what the lanes' figures say. */
typedef enum {
    PLAN_INPUTS_FRESH,     /* priced as written anew: a first call, or a known fresh input */
    PLAN_INPUTS_UNCHANGED, /* priced as the very bytes the last call moved */
    PLAN_INPUTS_EITHER,    /* a repeat (the team's last call of this collective had this size):
                              no rank knows whether the inputs changed, so the choice is the
                              candidate whose worse regret over the two states is least */
} plan_inputs;

typedef struct plan_query {
    core_coll coll;
    size_t bytes; /* the per-rank payload: message (bcast, reduce, allreduce),
                           block per rank (gather, allgather, scatter, alltoall, rsb);
                           0 for the v-variants, whose sizes no rank knows in full */
    int n;        /* ranks in the team */
    int ppn;      /* processes of the node that move data at once (>= n) */
    int cores;    /* cores those processes run on; 0: as many as they need */
    bool usable[LANE_COUNT];
    size_t window; /* cells lane window per round */
    plan_inputs inputs;
} plan_query;

/* Striping: a transfer split across two lanes in proportion to their
 * modelled bandwidth. Data movement (pull) of large blocks may put a share
 * of every block on the host lane and the rest on cma. */
#define PLAN_STRIPE_MIN (64 * 1024)

typedef struct plan_choice {
    plan_algo algo;
    lane_id lane;
    lane_id stripe; /* second lane carrying stripe_share of every transfer; LANE_COUNT: none */
    double stripe_share;
    /* Gather by push, scatter by pull on a lane that can also put: the
     * share of every other rank's block the root moves itself, after its
     * own copy, while those ranks move the rest; 0: they move it all.
     * Flat bcast on such a lane: 1/n where the root writes the last 1/n
     * into each rank while they read the rest, else 0. */
    double root_share;
    int fanout;         /* trees: children per node */
    size_t chunk;       /* pipelining unit, bytes */
    double model_ns;    /* the modelled time of the choice (on fresh inputs, or
                                on unchanged ones where they were priced so) */
    plan_inputs inputs; /* what the inputs were priced as */
    /* v-variants: a rank whose data is at most eager_limit bytes sends it
     * with the size headers on `lane`; larger data moves on large_lane, by
     * large_algo (gatherv: push where the plain gather of large blocks
     * would, with its root_share; else pull). */
    size_t eager_limit;
    lane_id large_lane;
    plan_algo large_algo;
    /* The host MPI's own run of the call, as shoal tune measured it (-1:
     * not measured), and whether it is faster than the choice by
     * PLAN_HOST_GUARD: then the MPI layer leaves the call to the host. */
    double host_ns;
    bool host_faster;
    /* A repeat (inputs not PLAN_INPUTS_FRESH) where the tune timed the host
     * on unchanged buffers: that time, and shoal's it is compared with
     * (the tune's timing of shoal's choice so, else the unchanged price);
     * host_faster then says whether the host takes the repeat: on inputs
     * that may be unchanged or fresh, where its worse ratio to shoal over
     * both states (host_ns against model_ns, and these two) stays below
     * shoal's worse ratio by PLAN_HOST_GUARD. -1: not so compared. */
    double host_repeat_ns, shoal_repeat_ns;
} plan_choice;

/* How much faster the host's measured time must be than shoal's priced one
 * for the call to go to the host: within 10 % both are a tie, and shoal's
 * price is calibrated from the same tune's timings. A fresh call compares
 * the host's time on fresh inputs; a repeat (the team's last call of the
 * collective had this size: alike on every rank) its times on both
 * kinds of input, where the tune measured them, except for a reduction on more than
 * two ranks (the first call's grouping keeps its bits). */
#define PLAN_HOST_GUARD 1.1
/* The host MPI's time for collective c of `bytes` on n ranks, interpolated
 * in size from the tuning file's measurements at n's team bucket (tune at
 * each process count, --merge); -1 where there are none near. */
double plan_host_ns(core_coll c, size_t bytes, int n);
/* The host's time for the same call on unchanged inputs (the same buffers
 * call after call, as OSU's benchmarks run), and in shoal_ns (when not
 * NULL) shoal's own choice timed beside it; -1 where not measured. */
double plan_host_repeat_ns(core_coll c, size_t bytes, int n, double *shoal_ns);
/* Whether a repeat of collective c on n ranks is decided by the repeat
 * times. A reduction on more than two ranks is not: its first call ran
 * one grouping, and another's on the same input could give other bits
 * (two ranks have one grouping). Nor a barrier, which moves no data. */
bool plan_repeat_rule(core_coll c, int n);
/* The buckets tuning files key sizes and team sizes by: log2 of bytes
 * rounded, and the smallest power of two >= n. */
int plan_size_bucket(size_t bytes);
int plan_team_bucket(int n);

/* A call is priced at its size class: the size rounded down to an eighth
 * of its power of two (exact below 16 bytes; powers of two are their own
 * class), so that a communicator whose sizes vary call by call plans each
 * class once (the plan caches key on it) and every size of a class gets
 * the same choice. */
size_t plan_size_class(size_t bytes);
plan_choice plan_choose(const plan_query *q);

/* One priced candidate, for shoal explain. */
typedef struct plan_candidate {
    plan_algo algo;
    lane_id lane;
    lane_id stripe; /* LANE_COUNT: none */
    double stripe_share;
    double root_share; /* as in plan_choice */
    int fanout;
    size_t chunk;
    double formula_ns; /* what the cost formula gives */
    double factor;     /* the tuning file's calibration for it */
    double ns;         /* formula_ns * factor */
    /* PLAN_INPUTS_EITHER: ns is the fresh price, unchanged_ns the price on
     * unchanged inputs, and regret the worse of each over its state's
     * cheapest allowed candidate (1: the best in both). Else 0. */
    double unchanged_ns;
    double regret;
    const char *excluded; /* why it may not be chosen (forced choices), or NULL */
} plan_candidate;

/* The tuning file's key for a calibration factor: collective, algorithm,
 * lane, bytes rounded to the nearest power of two, and team size n rounded
 * up to a power of two. The planner interpolates between the nearest
 * calibrated sizes (log-log, within 16x) of the nearest calibrated team size. */
void plan_factor_key(char *buf, size_t len, core_coll c, plan_algo a, lane_id l, lane_id stripe, size_t bytes, int n);

/* Every candidate for q, cheapest allowed first (PLAN_INPUTS_EITHER: least
 * regret first; a reduction keeps the grouping of the algorithm the fresh
 * price chooses, so that a repeat on the same input gives the same bits),
 * but for the guard band below; returns how many (<= max). */
int plan_candidates(const plan_query *q, plan_candidate *out, int max);
/* The guard band between lanes where collectives only move blocks (gather,
 * scatter, allgather, alltoall and their v-variants): a single-copy
 * candidate priced (or, for a repeat, regretted) within this share of the
 * cheapest when that one is on a staged lane goes first instead. A staged
 * lane copies every byte twice, and each of its lines crosses from the
 * core that writes it to the core that reads it on every call; single copy
 * reads the owner's buffer once, as the host MPI's large transfers do. The
 * staged lane's rate swung 2-3x from one period to the next with the
 * machine's core-to-core latency (2-core EPYC VM, 0.034 against 0.11 us:
 * OSU's gather, scatter, allgather and alltoall at np 2 from 32 KiB ran
 * 0.42-2.7x of Open MPI's over the cells, 0.96-2.0x over cma), and the
 * start-up probe's figures cannot see which period a job will run in. */
#define PLAN_SINGLE_COPY_BAND 0.15
/* Blocks below this keep the cheapest lane: below it single copy's fixed
 * cost (a system call, 1.2-2 us to its first byte on the VM) is most of
 * its time, which a slow period does not change. With the probe's
 * slow-period figures (cells 3.4 GB/s) the band took single copy for an
 * 8 KiB scatter at np 2 that then ran 0.80x of MPICH 4's, where the cells
 * ran 1.00x. At 16 KiB the probe's start-to-start spread (cma's first byte
 * 1.1-1.6 us) decided between the lanes: OSU 7.4's scatter, alltoall and
 * allgatherv at np 2 ran 0.70-0.84x of Open MPI 4.1 in starts that took
 * the cells (2.0 us a scatter, single copy 1.4-1.7), and 0.97-1.40x with
 * the band from 16 KiB; fresh inputs and np 4 kept their ratios (2-core
 * Xeon VM). */
#define PLAN_SINGLE_COPY_BAND_MIN (16 * 1024)
/* Whether collective c only moves blocks (each read by one rank): the
 * collectives the guard band above applies to. */
bool plan_moves_blocks(core_coll c);

/* Bytes reduced per step: inputs of this size stay in the core's cache. */
#define PLAN_REDUCE_BLOCK (64 * 1024)
/* plan_choice.chunk of a flat reduce whose root reads the other rank's
 * input whole, in one transfer, before it reduces (two ranks on a
 * single-copy lane, while both inputs and the result fit a core's cache);
 * else the root reads and reduces it block by block. */
#define PLAN_READ_WHOLE SIZE_MAX

/* Scans of more bytes a rank the MPI layer leaves to the host (explain
 * says so): there the host's single copy of inputs still in cache (a loop
 * on the same buffers, as OSU's) ran 1.3-3x faster than shoal's exscan
 * over the cells from 16 KiB and its scan of 1 MiB, where with inputs
 * written anew shoal's were 1.2-2x faster (np 2, Open MPI 4.1.4, 2-core
 * Xeon VM): the planner cannot tell the two apart on a first call, and a
 * scan is rarely long. */
#define PLAN_SCAN_MAX_BYTES (8 * 1024)

/* ---- communicators spanning nodes ----
 * A collective over several nodes: a step inside each node (a collective of
 * shoal's on the node's ranks), the leaders' step on the host MPI, a last
 * step inside each node. */
typedef struct plan_node_steps {
    core_coll first;     /* inside each node before the leaders' step (CORE_COLL_COUNT: none) */
    const char *between; /* the leaders' call to the host MPI */
    core_coll last;      /* inside each node after it (CORE_COLL_COUNT: none, or to the root alone) */
    const char *text;    /* the whole, in words (SHOAL_VERBOSE, shoal explain) */
    const char *by;      /* who runs the step between: NULL, the leaders */
} plan_node_steps;

/* How collective c of `bytes` per rank (or per pair) runs across nodes;
 * NULL: the host MPI runs it whole. Alike on every rank. */
const plan_node_steps *plan_node_steps_for(core_coll c, size_t bytes);

/* A long bcast, reduce or allreduce across nodes is cut into segments, so
 * that the leaders' host call on one segment is in flight while the node
 * steps run on its neighbours. Each segment size is priced: the node steps
 * as the planner runs them on a node (`node`: its n, ppn, cores, lanes and
 * window), the leaders' step with the model's link figures. */
typedef struct plan_node_candidate {
    size_t segment;                       /* bytes per segment; the message's size: not cut */
    size_t segments;                      /* how many */
    double first_ns, between_ns, last_ns; /* one segment's steps */
    double ns;                            /* the whole call */
} plan_node_candidate;

/* Whether collective c is ever cut into segments across nodes. */
bool plan_node_cuts(core_coll c);
/* Every segment size for c of `bytes` over `nodes` nodes, the whole message
 * first; returns how many (<= max; 0: c does not run in two levels). */
int plan_node_candidates(core_coll c, size_t bytes, int nodes, const plan_query *node, plan_node_candidate *out,
                         int max);
/* The cheapest candidate's segment (SHOAL_NODE_SEGMENT forces one);
 * `bytes` itself: not cut, as on a link shoal tune --link has not
 * measured. */
size_t plan_node_segment(core_coll c, size_t bytes, int nodes, const plan_query *node);

/* Above this many bytes per pair of ranks, every all-to-all block crossing
 * its node twice (to the leader and from it) costs more than the messages
 * saved: across 2 hosts of 2 ranks (TCP, 2 cores) the leaders' exchange
 * tied the host's alltoall at 64 KiB and took twice its time from 256 KiB.
 * The limit of alltoallv, and of alltoall, whose prices on a measured link
 * may move its crossover down (plan_node_price), as may what shoal tune
 * --link times up to it (plan_node_choose). */
#define PLAN_NODES_ALLTOALL_MAX_BLOCK 32768

/* Two levels or the host MPI flat: each priced for c of `bytes` per rank
 * (or per pair) over `nodes` nodes of node->n ranks; the host MPI runs it
 * flat where its price, times PLAN_NODE_FLAT_GUARD, is still below the two
 * levels' (a guard band: the two levels are what was measured to win, the
 * flat price is a model of another library's algorithms), and only on a
 * measured link (shoal tune --link; the built-in figures are a guess).
 * Prices -1: not priced (no two-level form, or no flat model of it). */
#define PLAN_NODE_FLAT_GUARD 1.25
typedef struct plan_node_route {
    double flat_ns, two_level_ns; /* two levels through the leaders */
    double rails_ns;              /* on rails (plan_node_rails_ns); -1: not priced */
    bool flat;                    /* the host MPI runs it flat */
    bool rails;                   /* else it runs on rails, not through the leaders */
    const char *why;              /* the choice, in words */
} plan_node_route;
plan_node_route plan_node_price(core_coll c, size_t bytes, int nodes, const plan_query *node);
/* "4,4,4,4": the layout (node_sizes[i] ranks on node i, in node order) as
 * tuning files name it; false (buf empty) where it does not fit in len, so
 * that no cut-off name matches another's. */
bool plan_node_layout(char *buf, size_t len, const int *node_sizes, int nodes);
/* Whether shoal tune --link timed the calls of the layout so named. */
bool plan_node_layout_timed(const char *layout);
/* The route a call takes: plan_node_price's, but on a layout shoal tune
 * --link timed (timed_layout: plan_node_layout_timed of its name) the
 * timing decides, not the prices: the host's flat run where it was as fast
 * or faster, else two levels. A size class it did not time takes the
 * nearest timed one below (above, where none is below): past its largest,
 * a call is as bandwidth-bound as the largest was. */
plan_node_route plan_node_choose(core_coll c, size_t bytes, bool timed_layout, int nodes, const plan_query *node);

/* A bcast, reduce or allreduce of `bytes` on rails, over `nodes` nodes of
 * node->n ranks each: every rank of a node owns one slice of the message;
 * the ranks holding the same slice on every node (a rail) run the host
 * MPI's call on it (node->n calls at once, each rank over its own share of
 * its node's link; one after another where the node's ranks outnumber its
 * cores), between a step inside the nodes that hands out the slices (the
 * root node's scatter; a reduce_scatter) and one that gathers them (an
 * allgather; the root node's gather). It keeps every rank's core and link
 * busy where the leaders' form has one rank a node cross the link with the
 * whole message. plan_node_rails_for: its steps, NULL for a collective
 * with no form on rails; plan_node_rails_ns: its price, -1 below one
 * element a rank. */
const plan_node_steps *plan_node_rails_for(core_coll c);
double plan_node_rails_ns(core_coll c, size_t bytes, int nodes, const plan_query *node);
/* What collective c's setting asks for (SHOAL_NODE_BCAST, SHOAL_NODE_REDUCE,
 * SHOAL_NODE_ALLREDUCE): rails, the leaders' form, or the planner's pick. */
core_node_form plan_node_form_asked(core_coll c);

/* A competitive bcast across nodes: the first rank of each node to arrive
 * asks the root for the message and passes it on inside its node, so a
 * late rank (a fixed leader descheduled, a rank still computing) delays
 * only itself. Whether a bcast of `bytes`, cut into `segment`s, over
 * `nodes` nodes runs so: where SHOAL_NODE_BCAST=first asks for it, and the
 * message is not cut (cut messages keep the fixed leaders' pipeline). */
bool plan_node_bcast_first(size_t bytes, size_t segment, int nodes);

#endif
