/* plan_nodes: how a collective runs on a communicator that spans nodes, as
 * steps inside each node and one step between nodes on the host MPI. The
 * MPI layer runs the steps (shim_nodes.c); SHOAL_VERBOSE and shoal explain
 * print them from here. */
#include "plan.h"

#include <stdio.h>
#include <string.h>

#include "core_sys.h"

#define NONE CORE_COLL_COUNT

static const plan_node_steps steps[CORE_COLL_COUNT] = {
    [CORE_COLL_BARRIER] = {CORE_COLL_BARRIER, "barrier", CORE_COLL_BARRIER,
                           "node barrier, leaders' barrier by the host MPI, node barrier"},
    [CORE_COLL_BCAST] = {CORE_COLL_BCAST, "bcast", CORE_COLL_BCAST,
                         "node bcast from the root, leaders' bcast by the host MPI, node bcast elsewhere"},
    [CORE_COLL_REDUCE] = {CORE_COLL_REDUCE, "reduce", NONE,
                          "node reduce to each leader, leaders' reduce by the host MPI, to the root"},
    [CORE_COLL_ALLREDUCE] = {CORE_COLL_REDUCE, "allreduce", CORE_COLL_BCAST,
                             "node reduce to each leader, leaders' allreduce by the host MPI, node bcast"},
    [CORE_COLL_GATHER] = {CORE_COLL_GATHER, "gatherv", NONE,
                          "node gather to each leader, leaders' gatherv by the host MPI, to the root"},
    [CORE_COLL_GATHERV] = {CORE_COLL_GATHERV, "point-to-point", NONE,
                           "node gatherv to each leader, the leaders' blocks to the root's leader, to the root"},
    [CORE_COLL_ALLGATHER] = {CORE_COLL_GATHER, "allgatherv", CORE_COLL_BCAST,
                             "node gather to each leader, leaders' allgatherv by the host MPI, node bcast"},
    [CORE_COLL_ALLGATHERV] = {CORE_COLL_GATHERV, "allgatherv", CORE_COLL_BCAST,
                              "node gatherv to each leader, leaders' allgatherv by the host MPI, node bcast"},
    [CORE_COLL_SCATTER] = {NONE, "scatterv", CORE_COLL_SCATTER,
                           "to the root's leader, leaders' scatterv by the host MPI, node scatter"},
    [CORE_COLL_SCATTERV] = {NONE, "point-to-point", CORE_COLL_SCATTERV,
                            "to the root's leader, its blocks to each leader, node scatterv"},
    [CORE_COLL_ALLTOALL] = {CORE_COLL_GATHER, "alltoallv", CORE_COLL_SCATTER,
                            "node gather of every row to each leader, leaders' alltoallv by the host MPI (one "
                            "message per pair of nodes), node scatter"},
    [CORE_COLL_ALLTOALLV] = {CORE_COLL_GATHERV, "point-to-point", CORE_COLL_SCATTERV,
                             "node gatherv of every row to each leader, the leaders' exchange point-to-point in "
                             "uniform-stride phases (one message per pair of nodes), node scatterv"},
    [CORE_COLL_REDUCE_SCATTER_BLOCK] = {CORE_COLL_REDUCE, "reduce_scatter", CORE_COLL_SCATTERV,
                                        "node reduce to each leader, leaders' reduce_scatter by the host MPI, "
                                        "node scatterv"},
    [CORE_COLL_REDUCE_SCATTER] = {CORE_COLL_REDUCE, "reduce_scatter", CORE_COLL_SCATTERV,
                                  "node reduce to each leader, leaders' reduce_scatter by the host MPI, node "
                                  "scatterv"},
    /* Scans need each node's ranks consecutive in the communicator, nodes
     * in order (else the host's); the last rank holds its node's total. */
    [CORE_COLL_SCAN] = {CORE_COLL_SCAN, "exscan", CORE_COLL_BCAST,
                        "node scan, the node totals' exscan by the host MPI over each node's last rank, node bcast "
                        "of that prefix, combined with each rank's own",
                        "nodes' last ranks"},
    [CORE_COLL_EXSCAN] = {CORE_COLL_EXSCAN, "exscan", CORE_COLL_BCAST,
                          "node exscan, the node totals' exscan by the host MPI over each node's last rank, node "
                          "bcast of that prefix, combined with each rank's own",
                          "nodes' last ranks"},
};

const plan_node_steps *plan_node_steps_for(core_coll c, size_t bytes)
{
    if ((int)c < 0 || c >= CORE_COLL_COUNT || !steps[c].text)
        return NULL;
    /* alltoallv: bytes is the largest of the ranks' mean blocks */
    if (c == CORE_COLL_ALLTOALLV && bytes > PLAN_NODES_ALLTOALL_MAX_BLOCK)
        return NULL;
    return &steps[c];
}

/* ---- long messages in segments ---- */

/* The smallest segment: below it, a segment's latencies on every step cost
 * more than the overlap saves. */
#define NODES_SEGMENT_MIN (64 * 1024)

bool plan_node_cuts(core_coll c) { return c == CORE_COLL_BCAST || c == CORE_COLL_REDUCE || c == CORE_COLL_ALLREDUCE; }

static double tree_depth(int n)
{
    int depth = 0;
    while ((1 << depth) < n)
        depth++;
    return depth;
}

/* Bytes per ns a node's link gives each of `senders` ranks of the node
 * sending across it at once: the one-sender rate, shared out once the
 * node's measured total (shoal tune --link) is reached; unmeasured, the
 * senders share the one-sender rate. */
static double link_rate(const plan_model *m, int senders)
{
    if (senders <= 1)
        return m->link_bw;
    double each = (m->link_bw_node > 0 ? m->link_bw_node : m->link_bw) / senders;
    return each < m->link_bw ? each : m->link_bw;
}

/* One message of s bytes between nodes while `senders` ranks of the node
 * send at once. */
static double link_ns(const plan_model *m, double s, int senders)
{
    return m->link_latency_ns + s / link_rate(m, senders);
}

/* One message of s bytes inside a node by the host MPI, ppn ranks moving. */
static double host_ns(const plan_model *m, double s, int ppn) { return plan_lane_time(&m->lane[LANE_HOST], s, ppn); }

/* An allreduce of s bytes a rank over `nodes` ranks, one a node, while
 * `senders` ranks of each node cross its link at once: the cheaper of
 * recursive doubling and reduce-scatter then allgather. */
static double allreduce_between_ns(const plan_model *m, double s, int nodes, int senders)
{
    double depth = tree_depth(nodes), hop = m->link_latency_ns, move = s / link_rate(m, senders);
    double fold = s / m->reduce_bw, share = (double)(nodes - 1) / nodes;
    double doubling = depth * (hop + move + fold), halving = 2 * depth * hop + share * (2 * move + fold);
    return doubling < halving ? doubling : halving;
}

/* The leaders' step on the host MPI for s bytes per rank over `nodes`
 * leaders of `ppn` ranks each (one sender per node), as MPIs usually run
 * it: a binomial tree for bcast and reduce; for allreduce the cheaper of
 * recursive doubling and reduce-scatter then allgather; a ring for
 * allgatherv; a gatherv or scatterv of every node's blocks at the root's
 * leader; the leaders' all-to-all one message per pair of nodes. */
static double between_ns(const plan_model *m, core_coll c, double s, int nodes, int ppn)
{
    double depth = tree_depth(nodes), hop = m->link_latency_ns, move = s / m->link_bw, fold = s / m->reduce_bw;
    double others = (double)(nodes - 1) * ppn * s;
    switch (c) {
    case CORE_COLL_BARRIER: return depth * hop;
    case CORE_COLL_BCAST: return depth * (hop + move);
    case CORE_COLL_REDUCE: return depth * (hop + move + fold);
    case CORE_COLL_ALLREDUCE: return allreduce_between_ns(m, s, nodes, 1);
    case CORE_COLL_GATHER:
    case CORE_COLL_SCATTER: return depth * hop + others / m->link_bw;
    case CORE_COLL_ALLGATHER: return (nodes - 1) * hop + others / m->link_bw;
    case CORE_COLL_ALLTOALL: return (nodes - 1) * (hop + ppn * ppn * s / m->link_bw);
    case CORE_COLL_SCAN:
    case CORE_COLL_EXSCAN: return depth * (hop + move + fold) + fold; /* and each rank's own combine */
    default: return 0;
    }
}

/* A step inside every node, as the planner would run it on the node. */
static double node_step_ns(core_coll step, size_t s, const plan_query *node)
{
    if (step == CORE_COLL_COUNT || node->n < 2)
        return 0;
    plan_query q = *node;
    q.coll = step;
    q.bytes = s;
    q.inputs = PLAN_INPUTS_FRESH;
    return plan_choose(&q).model_ns;
}

static plan_node_candidate priced(core_coll c, size_t bytes, size_t segment, int nodes, const plan_query *node)
{
    const plan_node_steps *st = &steps[c];
    plan_node_candidate k = {.segment = segment, .segments = (bytes + segment - 1) / segment};
    k.first_ns = node_step_ns(st->first, segment, node);
    k.between_ns = between_ns(plan_model_get(), c, (double)segment, nodes, node->n);
    k.last_ns = node_step_ns(st->last, segment, node);
    double one = k.first_ns + k.between_ns + k.last_ns, slowest = k.first_ns;
    if (k.between_ns > slowest)
        slowest = k.between_ns;
    if (k.last_ns > slowest)
        slowest = k.last_ns;
    /* Steps overlap only where every rank has a core to run on; else the
     * segments run one after the other. */
    bool overlap = node->cores <= 0 || node->ppn <= node->cores;
    k.ns = overlap ? one + (double)(k.segments - 1) * slowest : one * (double)k.segments;
    return k;
}

int plan_node_candidates(core_coll c, size_t bytes, int nodes, const plan_query *node, plan_node_candidate *out,
                         int max)
{
    if (!plan_node_steps_for(c, bytes) || bytes == 0 || max < 1)
        return 0;
    int k = 0;
    out[k++] = priced(c, bytes, bytes, nodes, node);
    for (size_t s = NODES_SEGMENT_MIN; plan_node_cuts(c) && s <= bytes / 2 && k < max; s *= 2)
        out[k++] = priced(c, bytes, s, nodes, node);
    return k;
}

size_t plan_node_segment(core_coll c, size_t bytes, int nodes, const plan_query *node)
{
    size_t forced = core_config_get()->node_segment;
    if (!plan_node_cuts(c) || bytes == 0)
        return bytes;
    if (forced)
        return forced < bytes ? forced : bytes;
    /* The segments' prices rest on the link's figures: on a guess (no shoal
     * tune --link) the message goes whole. Across two namespace hosts (TCP,
     * a link of 0.37 GB/s against the guess's 10) segments chosen on the
     * guess made reduce of 2-4 MiB 1.6-2x slower than whole; priced on
     * the measured link the whole message wins there. */
    if (plan_model_get()->link_bw_node <= 0)
        return bytes;
    plan_node_candidate k[48];
    int count = plan_node_candidates(c, bytes, nodes, node, k, 48), best = 0;
    for (int i = 1; i < count; i++)
        if (k[i].ns < k[best].ns)
            best = i;
    return count ? k[best].segment : bytes;
}

/* ---- two levels or the host MPI flat ---- */

/* The host MPI's own run of the call over every rank of `nodes` nodes of
 * `ppn` ranks, ranks placed node by node, as MPIs usually run it: rounds
 * of a tree or of recursive doubling cross the link in log2(nodes) of
 * them and stay inside a node in log2(ppn); where every rank of a node
 * sends across the link at once (recursive doubling's, the pairwise
 * exchange's rounds between nodes) they share it. */
static double flat_ns(const plan_model *m, core_coll c, double s, int nodes, int ppn)
{
    int ranks = nodes * ppn;
    double across = tree_depth(nodes), inside = tree_depth(ppn), all = tree_depth(ranks);
    double fold = s / m->reduce_bw, others = (double)(ranks - 1) * s;
    switch (c) {
    case CORE_COLL_BARRIER: return all * m->link_latency_ns; /* every round has a pair across nodes */
    case CORE_COLL_BCAST: return across * link_ns(m, s, 1) + inside * host_ns(m, s, ppn);
    case CORE_COLL_REDUCE: return across * (link_ns(m, s, 1) + fold) + inside * (host_ns(m, s, ppn) + fold);
    case CORE_COLL_ALLREDUCE: {
        double doubling = across * (link_ns(m, s, ppn) + fold) + inside * (host_ns(m, s, ppn) + fold);
        double halving =
            2 * all * m->link_latency_ns + (double)(ranks - 1) / ranks * (2 * s / link_rate(m, ppn) + fold);
        return doubling < halving ? doubling : halving;
    }
    case CORE_COLL_GATHER:
    case CORE_COLL_SCATTER:
        /* a binomial tree: the root's node takes every other node's blocks over the link */
        return across * m->link_latency_ns + (double)(nodes - 1) * ppn * s / m->link_bw + inside * host_ns(m, 0, ppn) +
               (double)(ppn - 1) * (host_ns(m, s, ppn) - host_ns(m, 0, ppn));
    case CORE_COLL_ALLGATHER: {
        /* a ring: every step crosses the link at each node's edge */
        double ring = (double)(ranks - 1) * link_ns(m, s, 1);
        double doubling = inside * host_ns(m, s, ppn) + across * m->link_latency_ns +
                          (double)(nodes - 1) * ppn * s / link_rate(m, ppn);
        return ring < doubling ? ring : doubling;
    }
    case CORE_COLL_SCAN:
    case CORE_COLL_EXSCAN:
        /* recursive doubling (MPICH's; Open MPI's linear chain is slower) */
        return across * (link_ns(m, s, ppn) + fold) + inside * (host_ns(m, s, ppn) + fold);
    case CORE_COLL_ALLTOALL: {
        /* pairwise exchange; small blocks: Bruck's log2 rounds of half the rows */
        double pairwise = (double)(ranks - ppn) * link_ns(m, s, ppn) + (double)(ppn - 1) * host_ns(m, s, ppn);
        double bruck = all * link_ns(m, others / 2, ppn);
        return pairwise < bruck ? pairwise : bruck;
    }
    default: return -1;
    }
}

/* ---- on rails ---- */

static const plan_node_steps rails_forms[CORE_COLL_COUNT] = {
    [CORE_COLL_BCAST] = {CORE_COLL_SCATTER, "bcast", CORE_COLL_ALLGATHER,
                         "on rails: the root's node scatters the message (each rank a slice), every slice's bcast "
                         "by the host MPI among the ranks holding it on every node, node allgather"},
    [CORE_COLL_REDUCE] = {CORE_COLL_REDUCE_SCATTER_BLOCK, "reduce", CORE_COLL_GATHER,
                          "on rails: node reduce_scatter (each rank a slice), every slice's reduce by the host MPI "
                          "among the ranks holding it on every node, the root's node gathers the slices"},
    [CORE_COLL_ALLREDUCE] = {CORE_COLL_REDUCE_SCATTER_BLOCK, "allreduce", CORE_COLL_ALLGATHER,
                             "on rails: node reduce_scatter (each rank a slice), every slice's allreduce by the "
                             "host MPI among the ranks holding it on every node, node allgather"},
};

const plan_node_steps *plan_node_rails_for(core_coll c)
{
    return (int)c >= 0 && c < CORE_COLL_COUNT && rails_forms[c].text ? &rails_forms[c] : NULL;
}

/* One rail's host call on a slice of s bytes over `nodes` ranks, one a
 * node, while `senders` ranks of each node cross its link at once: a
 * binomial tree for bcast and reduce, allreduce_between_ns's for
 * allreduce. */
static double rail_between_ns(const plan_model *m, core_coll c, double s, int nodes, int senders)
{
    if (c == CORE_COLL_ALLREDUCE)
        return allreduce_between_ns(m, s, nodes, senders);
    double fold = c == CORE_COLL_REDUCE ? s / m->reduce_bw : 0;
    return tree_depth(nodes) * (m->link_latency_ns + s / link_rate(m, senders) + fold);
}

double plan_node_rails_ns(core_coll c, size_t bytes, int nodes, const plan_query *node)
{
    const plan_node_steps *st = plan_node_rails_for(c);
    int ppn = node->n;
    if (!st || ppn < 2 || nodes < 2 || bytes < (size_t)ppn)
        return -1;
    size_t slice = (bytes + (size_t)ppn - 1) / (size_t)ppn;
    const plan_model *m = plan_model_get();
    /* The slices' host calls run at once only where every rank has a core
     * (the host's progress, and on a kernel's TCP its copies, need one);
     * else one after the other, each at one sender's rate. */
    bool crowded = node->cores > 0 && node->ppn > node->cores;
    double between = crowded ? ppn * rail_between_ns(m, c, (double)slice, nodes, 1)
                             : rail_between_ns(m, c, (double)slice, nodes, ppn);
    return node_step_ns(st->first, slice, node) + between + node_step_ns(st->last, slice, node);
}

core_node_form plan_node_form_asked(core_coll c)
{
    const core_config *cfg = core_config_get();
    switch (c) {
    case CORE_COLL_REDUCE: return cfg->node_reduce;
    case CORE_COLL_ALLREDUCE: return cfg->node_allreduce;
    case CORE_COLL_BCAST:
        return cfg->node_bcast == CORE_NODE_BCAST_RAILS  ? CORE_NODE_FORM_RAILS
               : cfg->node_bcast == CORE_NODE_BCAST_AUTO ? CORE_NODE_FORM_AUTO
                                                         : CORE_NODE_FORM_LEADERS;
    default: return CORE_NODE_FORM_LEADERS;
    }
}

/* Whether collective c, whose two-level forms cost leaders_ns and
 * rails_ns, runs on rails: as its setting asks, else where its price is
 * lower on a measured link (on a guess the leaders' form stays, as the
 * segments and the flat run do). */
static bool takes_rails(core_coll c, double leaders_ns, double rails_ns)
{
    core_node_form asked = plan_node_form_asked(c);
    if (rails_ns < 0 || asked == CORE_NODE_FORM_LEADERS)
        return false;
    if (asked == CORE_NODE_FORM_RAILS)
        return true;
    return plan_model_get()->link_bw_node > 0 && rails_ns < leaders_ns;
}

plan_node_route plan_node_price(core_coll c, size_t bytes, int nodes, const plan_query *node)
{
    plan_node_route r = {.flat_ns = -1, .two_level_ns = -1, .rails_ns = -1, .why = "two levels (no flat price)"};
    const plan_node_steps *st = plan_node_steps_for(c, bytes);
    if (!st || nodes < 2 || node->n < 2)
        return r;
    const plan_model *m = plan_model_get();
    r.flat_ns = flat_ns(m, c, (double)bytes, nodes, node->n);
    if (plan_node_cuts(c)) {
        r.two_level_ns = priced(c, bytes, plan_node_segment(c, bytes, nodes, node), nodes, node).ns;
    } else {
        /* What each node step moves per rank: alltoall's rows and
         * allgather's whole result are every rank's blocks. */
        size_t all = bytes * (size_t)nodes * (size_t)node->n;
        bool rows = c == CORE_COLL_ALLTOALL, whole = rows || c == CORE_COLL_ALLGATHER;
        r.two_level_ns = node_step_ns(st->first, rows ? all : bytes, node) +
                         between_ns(m, c, (double)bytes, nodes, node->n) +
                         node_step_ns(st->last, whole ? all : bytes, node);
    }
    if (plan_node_rails_for(c)) {
        r.rails_ns = plan_node_rails_ns(c, bytes, nodes, node);
        r.rails = takes_rails(c, r.two_level_ns, r.rails_ns);
    }
    double two_levels = r.rails ? r.rails_ns : r.two_level_ns;
    /* Alltoall above the measured crossover stays the host's whatever the
     * prices say: on a measured link they may only move it down. */
    bool above_crossover = c == CORE_COLL_ALLTOALL && bytes > PLAN_NODES_ALLTOALL_MAX_BLOCK;
    if (core_config_get()->across_nodes == CORE_ACROSS_NODES_TWO) {
        r.why = "two levels (SHOAL_ACROSS_NODES=two)";
    } else if (above_crossover) {
        r.flat = true;
        r.why = "the host MPI runs it flat (alltoall above 32 KiB a pair)";
    } else if (m->link_bw_node <= 0 && (c == CORE_COLL_SCAN || c == CORE_COLL_EXSCAN) && node->cores > 0 &&
               node->ppn > node->cores) {
        /* A scan's two levels trade the host's chain of messages inside
         * each node for two node steps, each a hand-over between ranks that
         * take turns on cores where they outnumber them: across namespace
         * hosts (TCP, 2 cores; 2+2, 1+3, 1+2+1, 4+4 ranks) they took
         * 1.1-1.6x the host's flat scan up to 256 B a rank. */
        r.flat = true;
        r.why = "the host MPI runs it flat (a scan where ranks outnumber cores, on a guessed link: shoal tune --link "
                "times both)";
    } else if (m->link_bw_node <= 0) {
        /* The flat price rests on the link's figures: a guess (no shoal
         * tune --link) decides nothing. */
        r.why = "two levels (the link is a guess: shoal tune --link measures it)";
    } else {
        r.flat = r.flat_ns >= 0 && r.flat_ns * PLAN_NODE_FLAT_GUARD < two_levels;
        r.why = r.flat ? "the host MPI runs it flat" : "two levels";
    }
    return r;
}

bool plan_node_layout(char *buf, size_t len, const int *node_sizes, int nodes)
{
    size_t at = 0;
    for (int i = 0; i < nodes && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%d", i ? "," : "", node_sizes[i]);
    if (at >= len || !nodes) {
        buf[0] = 0;
        return false;
    }
    return true;
}

/* What shoal tune --link timed for c in the class of `bytes`: 'h', 's', or
 * 0 where it timed nothing of c. */
static char timed_verdict(const plan_model *m, core_coll c, size_t bytes)
{
    const char *timed = m->link_timed[c];
    if (!timed[0])
        return 0;
    int k = core_log2_floor(bytes);
    k = k < PLAN_LINK_CLASSES ? k : PLAN_LINK_CLASSES - 1;
    for (int i = k; i >= 0; i--)
        if (timed[i] != '-')
            return timed[i];
    for (int i = k + 1; i < PLAN_LINK_CLASSES; i++)
        if (timed[i] != '-')
            return timed[i];
    return 0;
}

bool plan_node_layout_timed(const char *layout)
{
    const char *timed = plan_model_get()->link_layout;
    return layout[0] && timed[0] && !strcmp(layout, timed);
}

plan_node_route plan_node_choose(core_coll c, size_t bytes, bool timed_layout, int nodes, const plan_query *node)
{
    plan_node_route r = plan_node_price(c, bytes, nodes, node);
    if (!timed_layout || core_config_get()->across_nodes == CORE_ACROSS_NODES_TWO || r.two_level_ns < 0 ||
        (c == CORE_COLL_ALLTOALL && bytes > PLAN_NODES_ALLTOALL_MAX_BLOCK))
        return r;
    char verdict = timed_verdict(plan_model_get(), c, bytes);
    if (verdict) {
        r.flat = verdict == 'h';
        r.why = r.flat ? "the host MPI runs it flat (timed faster on this layout by shoal tune --link)"
                       : "two levels (timed faster on this layout by shoal tune --link)";
    }
    return r;
}

bool plan_node_bcast_first(size_t bytes, size_t segment, int nodes)
{
    core_node_bcast forced = core_config_get()->node_bcast;
    if (segment < bytes || nodes < 2)
        return false;
    /* Where ranks arrive together the claim costs a round trip over the
     * link before the message moves (across 2 namespace hosts, TCP: a 4 B
     * to 32 KiB bcast took 32-39 us against the fixed leaders' 8-10), and
     * no rank can know that the others will be late: a program that knows
     * its skew asks for it. The root sends to every other node in turn, so
     * beyond 3 nodes it takes more hops than the host's tree. */
    return forced == CORE_NODE_BCAST_FIRST;
}
