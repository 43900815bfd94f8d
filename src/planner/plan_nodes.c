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
        return NULL; /* alltoallv: the host MPI's */
    if (c == CORE_COLL_ALLTOALL && bytes > NODES_ALLTOALL_MAX_BLOCK)
        return NULL;
    return &steps[c];
}
