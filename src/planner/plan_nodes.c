/* plan_nodes: how a collective runs on a communicator that spans nodes, as
 * steps inside each node and one step between nodes on the host MPI. The
 * MPI layer runs the steps (shim_nodes.c); SHOAL_VERBOSE and shoal explain
 * print them from here. */
#include "plan.h"

/* Above this many bytes per pair of ranks, every alltoall block crossing its
 * node twice (to the leader and from it) costs more than the messages saved:
 * across 2 hosts of 2 ranks (TCP, 2 cores) the leaders' exchange tied the
 * host's alltoall at 64 KiB and took twice its time from 256 KiB. */
#define NODES_ALLTOALL_MAX_BLOCK 32768

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
};

const plan_node_steps *plan_node_steps_for(core_coll c, size_t bytes)
{
    if ((int)c < 0 || c >= CORE_COLL_COUNT || !steps[c].text)
        return NULL;
    /* alltoallv: bytes is the largest of the ranks' mean blocks */
    if ((c == CORE_COLL_ALLTOALL || c == CORE_COLL_ALLTOALLV) && bytes > NODES_ALLTOALL_MAX_BLOCK)
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

/* The leaders' step on the host MPI for s bytes over `nodes` leaders, as
 * MPIs usually run it: a binomial tree for bcast and reduce; for allreduce
 * the cheaper of recursive doubling and reduce-scatter then allgather. */
static double between_ns(const plan_model *m, core_coll c, double s, int nodes)
{
    double depth = tree_depth(nodes), hop = m->link_latency_ns, move = s / m->link_bw, fold = s / m->reduce_bw;
    double share = (double)(nodes - 1) / nodes;
    switch (c) {
    case CORE_COLL_BCAST: return depth * (hop + move);
    case CORE_COLL_REDUCE: return depth * (hop + move + fold);
    case CORE_COLL_ALLREDUCE: {
        double doubling = depth * (hop + move + fold), halving = 2 * depth * hop + share * (2 * move + fold);
        return doubling < halving ? doubling : halving;
    }
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
    k.between_ns = between_ns(plan_model_get(), c, (double)segment, nodes);
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
    plan_node_candidate k[48];
    int count = plan_node_candidates(c, bytes, nodes, node, k, 48), best = 0;
    for (int i = 1; i < count; i++)
        if (k[i].ns < k[best].ns)
            best = i;
    return count ? k[best].segment : bytes;
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
