/* Collectives of a communicator spanning nodes, in two levels: steps inside
 * each node through shoal's own path on the node's part of the
 * communicator, steps between nodes on the host MPI over the leaders. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "shim_bytes.h"
#include "shim_coll.h"
#include "shim_nodes.h"
#include "shim_types.h"

/* Tag of the one point-to-point message (reduce's result to a root that is
 * not its node's leader): the node part is shoal's own communicator. */
#define NODES_TAG 7

MPI_Comm shim_node_part(MPI_Comm comm)
{
    MPI_Comm node;
    int rank;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    long cliques = core_config_get()->node_cliques;
    if (cliques > 1) {
        int local;
        MPI_Comm clique;
        PMPI_Comm_rank(node, &local);
        PMPI_Comm_split(node, (int)(local % cliques), local, &clique);
        PMPI_Comm_free(&node);
        node = clique;
    }
    return node;
}

/* The idle hook of shoal's waits while a communicator spans nodes: a rank
 * waiting on a peer of its node keeps the host MPI's messages to other nodes
 * moving. Open MPI completes an eager send once it is copied, and holds it
 * while the TCP socket is full: a rank that then waited in a node step
 * without progress, on a leader that waits for that very message, would
 * hang. An Iprobe drives progress in every MPI and receives nothing. */
static void host_progress(void)
{
    int arrived;
    PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &arrived, MPI_STATUS_IGNORE);
}

bool shim_nodes_open(shim_comm *sc, MPI_Comm node)
{
    shim_nodes *nd = &sc->nodes;
    int local;
    PMPI_Comm_rank(node, &local);
    PMPI_Comm_size(node, &nd->node_size);
    int most = 0;
    PMPI_Allreduce(&nd->node_size, &most, 1, MPI_INT, MPI_MAX, sc->comm);
    if (most == 1) {
        PMPI_Comm_free(&node);
        return false;
    }
    /* A node's first rank (in comm's order) leads it; leaders are numbered
     * by their rank in comm, which numbers the nodes. */
    PMPI_Comm_split(sc->comm, local == 0 ? 0 : MPI_UNDEFINED, sc->rank, &nd->leaders);
    int mine[2] = {0, local};
    if (local == 0) {
        PMPI_Comm_rank(nd->leaders, &mine[0]);
        PMPI_Comm_size(nd->leaders, &nd->count);
    }
    PMPI_Bcast(&nd->count, 1, MPI_INT, 0, node);
    PMPI_Bcast(&mine[0], 1, MPI_INT, 0, node);
    nd->where = malloc(2 * (size_t)sc->size * sizeof *nd->where);
    if (!nd->where)
        core_fatal("out of memory for a communicator's node table");
    PMPI_Allgather(mine, 2, MPI_INT, nd->where, 2, MPI_INT, sc->comm);
    nd->node = node;
    nd->my_node = mine[0];
    nd->local = local;
    nd->first = calloc(3 * ((size_t)nd->count + 1), sizeof *nd->first);
    if (!nd->first)
        core_fatal("out of memory for a communicator's node table");
    nd->counts = nd->first + nd->count + 1;
    nd->offsets = nd->counts + nd->count + 1;
    for (int r = 0; r < sc->size; r++)
        nd->first[nd->where[2 * r] + 1]++;
    for (int i = 0; i < nd->count; i++)
        nd->first[i + 1] += nd->first[i];
    nd->contiguous = true;
    for (int r = 0; r < sc->size; r++)
        nd->contiguous = nd->contiguous && nd->first[nd->where[2 * r]] + nd->where[2 * r + 1] == r;
    core_flag_set_idle(host_progress);
    return true;
}

void shim_nodes_close(shim_nodes *nd)
{
    if (nd->leaders != MPI_COMM_NULL)
        PMPI_Comm_free(&nd->leaders);
    if (nd->node != MPI_COMM_NULL) {
        shim_comm_forget(nd->node);
        PMPI_Comm_free(&nd->node);
    }
    free(nd->where);
    free(nd->first);
    free(nd->stage);
    nd->where = NULL;
    nd->first = NULL;
    nd->stage = NULL;
}

static int node_of(const shim_nodes *nd, int rank) { return nd->where[2 * rank]; }
static int local_of(const shim_nodes *nd, int rank) { return nd->where[2 * rank + 1]; }
static bool leads(const shim_nodes *nd) { return nd->local == 0; }
/* Rank r's place in node-major order. */
static int major_of(const shim_nodes *nd, int r) { return nd->first[node_of(nd, r)] + local_of(nd, r); }

static char *stage(shim_nodes *nd, size_t size)
{
    if (size > nd->stage_size) {
        free(nd->stage);
        nd->stage = malloc(size);
        nd->stage_size = nd->stage ? size : 0;
        if (!nd->stage)
            core_fatal("out of memory for a %zu-byte buffer", size);
    }
    return nd->stage;
}

/* Blocks of `bytes` from the communicator's order to node-major order. */
static void to_node_order(const shim_nodes *nd, int n, const char *in, char *major, size_t bytes)
{
    for (int r = 0; r < n; r++)
        memcpy(major + (size_t)major_of(nd, r) * bytes, in + (size_t)r * bytes, bytes);
}

/* Blocks of `bytes` from node-major order to the communicator's. */
static void to_rank_order(const shim_nodes *nd, int n, const char *major, char *out, size_t bytes)
{
    for (int r = 0; r < n; r++)
        memcpy(out + (size_t)r * bytes, major + (size_t)major_of(nd, r) * bytes, bytes);
}

/* The leaders' v-collectives: node i's blocks, in bytes. */
static void node_spans(shim_nodes *nd, size_t bytes)
{
    for (int i = 0; i < nd->count; i++) {
        nd->counts[i] = (int)((size_t)(nd->first[i + 1] - nd->first[i]) * bytes);
        nd->offsets[i] = (int)((size_t)nd->first[i] * bytes);
    }
}

/* ---- steps inside a node: shoal's path on the node part, else the host's ---- */

static void node_barrier(shim_nodes *nd)
{
    if (!shim_barrier_by_shoal(nd->node, "a barrier inside a node"))
        PMPI_Barrier(nd->node);
}

static void node_bcast(shim_nodes *nd, void *buf, int count, MPI_Datatype type, int root)
{
    if (!shim_bcast_by_shoal(buf, count, type, root, nd->node, "a bcast inside a node"))
        PMPI_Bcast(buf, count, type, root, nd->node);
}

/* To the node's leader; sbuf MPI_IN_PLACE at the leader: its input is in rbuf. */
static void node_reduce(shim_nodes *nd, const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op)
{
    if (!shim_reduce_by_shoal(sbuf, rbuf, count, type, op, 0, nd->node, "a reduce inside a node"))
        PMPI_Reduce(sbuf, rbuf, count, type, op, 0, nd->node);
}

/* This node's blocks into node_blocks at the leader; mine: this rank's. */
static void node_gather(shim_nodes *nd, const char *mine, size_t bytes, char *node_blocks)
{
    if (leads(nd)) {
        if (mine != node_blocks)
            memcpy(node_blocks, mine, bytes);
        if (!shim_gather_by_shoal(MPI_IN_PLACE, 0, MPI_BYTE, node_blocks, (MPI_Count)bytes, MPI_BYTE, 0, nd->node,
                                  "a gather inside a node"))
            PMPI_Gather(MPI_IN_PLACE, 0, MPI_BYTE, node_blocks, (int)bytes, MPI_BYTE, 0, nd->node);
    } else if (!shim_gather_by_shoal(mine, (MPI_Count)bytes, MPI_BYTE, NULL, 0, MPI_BYTE, 0, nd->node,
                                     "a gather inside a node")) {
        PMPI_Gather(mine, (int)bytes, MPI_BYTE, NULL, 0, MPI_BYTE, 0, nd->node);
    }
}

/* ---- the compositions ---- */

static void say_plan_once(const shim_comm *sc, const char *coll, const char *steps)
{
    core_log_once("%s on a communicator of %d ranks over %d nodes: %s", coll, sc->size, sc->nodes.count, steps);
}

bool shim_nodes_barrier(shim_comm *sc)
{
    shim_nodes *nd = &sc->nodes;
    say_plan_once(sc, "barrier", "node barrier, leaders' barrier by the host MPI, node barrier");
    node_barrier(nd);
    if (leads(nd))
        PMPI_Barrier(nd->leaders);
    node_barrier(nd);
    return true;
}

bool shim_nodes_bcast(shim_comm *sc, void *buf, MPI_Count count, MPI_Datatype type, int root)
{
    shim_nodes *nd = &sc->nodes;
    shim_layout l;
    if (root < 0 || root >= sc->size || count > INT_MAX || !shim_layout_of(type, &l) || !shim_takes(&l, count) ||
        buf == MPI_IN_PLACE || shim_bad_pointer(buf, &l, count))
        return false;
    if (count == 0)
        return true;
    say_plan_once(sc, "bcast", "node bcast from the root, leaders' bcast by the host MPI, node bcast elsewhere");
    int root_node = node_of(nd, root);
    if (nd->my_node == root_node)
        node_bcast(nd, buf, (int)count, type, local_of(nd, root));
    if (leads(nd))
        PMPI_Bcast(buf, (int)count, type, root_node, nd->leaders);
    if (nd->my_node != root_node)
        node_bcast(nd, buf, (int)count, type, 0);
    return true;
}

/* The arguments of a reduction shoal runs in two levels: a predefined type
 * and operation (commutative, so the node grouping may combine in any order
 * MPI allows) and a count within an int. */
static bool reduction_ok(MPI_Count count, MPI_Datatype type, MPI_Op op, size_t *extent)
{
    core_type ct;
    core_op cop;
    MPI_Aint lb, ext;
    if (!shim_reduction_of(type, op, &ct, &cop) || count < 0 || count > INT_MAX)
        return false;
    PMPI_Type_get_extent(type, &lb, &ext);
    *extent = (size_t)ext;
    return true;
}

bool shim_nodes_reduce(shim_comm *sc, const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
                       int root)
{
    shim_nodes *nd = &sc->nodes;
    size_t extent;
    bool is_root = sc->rank == root, in_place = sbuf == MPI_IN_PLACE;
    if (root < 0 || root >= sc->size || !reduction_ok(count, type, op, &extent) || (in_place && !is_root) ||
        (count && (!(in_place ? rbuf : sbuf) || (is_root && (!rbuf || rbuf == MPI_IN_PLACE)))) ||
        (is_root && count && sbuf == rbuf))
        return false;
    if (count == 0)
        return true;
    say_plan_once(sc, "reduce", "node reduce to each leader, leaders' reduce by the host MPI, to the root");
    int n = (int)count, root_node = node_of(nd, root);
    const void *in = in_place ? rbuf : sbuf;
    if (!leads(nd)) {
        node_reduce(nd, in, NULL, n, type, op);
        if (is_root)
            PMPI_Recv(rbuf, n, type, 0, NODES_TAG, nd->node, MPI_STATUS_IGNORE);
        return true;
    }
    /* A leader: its node's sum, then the leaders' into the root's node (not
     * in place: MPICH 4.0.2 crashes reducing in place at a root other than 0). */
    void *node_sum = shim_comm_scratch(sc, 0, (size_t)n * extent);
    node_reduce(nd, in, node_sum, n, type, op);
    if (nd->my_node == root_node) {
        void *sum = is_root ? rbuf : shim_comm_scratch(sc, 1, (size_t)n * extent);
        PMPI_Reduce(node_sum, sum, n, type, op, root_node, nd->leaders);
        if (!is_root)
            PMPI_Send(sum, n, type, local_of(nd, root), NODES_TAG, nd->node);
    } else {
        PMPI_Reduce(node_sum, NULL, n, type, op, root_node, nd->leaders);
    }
    return true;
}

bool shim_nodes_allreduce(shim_comm *sc, const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op)
{
    shim_nodes *nd = &sc->nodes;
    size_t extent;
    if (!reduction_ok(count, type, op, &extent) || rbuf == MPI_IN_PLACE || (count && (!rbuf || !sbuf || sbuf == rbuf)))
        return false;
    if (count == 0)
        return true;
    say_plan_once(sc, "allreduce", "node reduce to each leader, leaders' allreduce by the host MPI, node bcast");
    int n = (int)count;
    if (leads(nd)) {
        node_reduce(nd, sbuf, rbuf, n, type, op);
        PMPI_Allreduce(MPI_IN_PLACE, rbuf, n, type, op, nd->leaders);
    } else {
        node_reduce(nd, sbuf == MPI_IN_PLACE ? rbuf : sbuf, NULL, n, type, op);
    }
    node_bcast(nd, rbuf, n, type, 0);
    return true;
}

bool shim_nodes_takes_bytes(const shim_comm *sc, size_t total) { return total <= INT_MAX && sc->size <= INT_MAX; }

void shim_nodes_allgather(shim_comm *sc, const char *sdata, size_t bytes, char *rdata)
{
    shim_nodes *nd = &sc->nodes;
    int n = sc->size;
    say_plan_once(sc, "allgather", "node gather to each leader, leaders' allgatherv by the host MPI, node bcast");
    char *major = nd->contiguous ? rdata : stage(nd, (size_t)n * bytes);
    node_gather(nd, sdata ? sdata : rdata + (size_t)sc->rank * bytes, bytes,
                major + (size_t)nd->first[nd->my_node] * bytes);
    if (leads(nd)) {
        node_spans(nd, bytes);
        PMPI_Allgatherv(MPI_IN_PLACE, 0, MPI_BYTE, major, nd->counts, nd->offsets, MPI_BYTE, nd->leaders);
        if (!nd->contiguous)
            to_rank_order(nd, n, major, rdata, bytes);
    }
    node_bcast(nd, rdata, (int)((size_t)n * bytes), MPI_BYTE, 0);
}

void shim_nodes_gather(shim_comm *sc, const char *sdata, size_t bytes, char *rdata, int root)
{
    shim_nodes *nd = &sc->nodes;
    int n = sc->size, root_node = node_of(nd, root);
    bool is_root = sc->rank == root;
    say_plan_once(sc, "gather", "node gather to each leader, leaders' gatherv by the host MPI, to the root");
    bool direct = nd->contiguous && is_root; /* the blocks land in the root's buffer as they are */
    char *major = direct ? rdata : stage(nd, (size_t)n * bytes);
    const char *mine = sdata ? sdata : rdata + (size_t)root * bytes;
    char *node_blocks = major + (size_t)nd->first[nd->my_node] * bytes;
    node_gather(nd, mine, bytes, node_blocks);
    if (leads(nd)) {
        node_spans(nd, bytes);
        if (nd->my_node == root_node)
            PMPI_Gatherv(MPI_IN_PLACE, 0, MPI_BYTE, major, nd->counts, nd->offsets, MPI_BYTE, root_node, nd->leaders);
        else
            PMPI_Gatherv(node_blocks, nd->counts[nd->my_node], MPI_BYTE, NULL, NULL, NULL, MPI_BYTE, root_node,
                         nd->leaders);
    }
    if (nd->my_node != root_node)
        return;
    if (leads(nd) && !is_root)
        PMPI_Send(major, (int)((size_t)n * bytes), MPI_BYTE, local_of(nd, root), NODES_TAG, nd->node);
    if (is_root && !leads(nd))
        PMPI_Recv(major, (int)((size_t)n * bytes), MPI_BYTE, 0, NODES_TAG, nd->node, MPI_STATUS_IGNORE);
    if (is_root && !direct)
        to_rank_order(nd, n, major, rdata, bytes);
}

void shim_nodes_scatter(shim_comm *sc, const char *sdata, size_t bytes, char *rdata, int root)
{
    shim_nodes *nd = &sc->nodes;
    int n = sc->size, root_node = node_of(nd, root);
    bool is_root = sc->rank == root;
    size_t all = (size_t)n * bytes;
    say_plan_once(sc, "scatter", "to the root's leader, leaders' scatterv by the host MPI, node scatter");
    /* Leaders and the root: blocks in node-major order, and a spare block
     * (the in-place root's copy from the node scatter, which it drops). */
    char *space = leads(nd) || is_root ? stage(nd, all + bytes) : NULL;
    /* The root's node leader holds every block in node-major order. */
    const char *major = NULL;
    if (nd->my_node == root_node) {
        if (is_root && nd->contiguous) {
            major = sdata;
        } else if (is_root) {
            to_node_order(nd, n, sdata, space, bytes);
            major = space;
        }
        if (is_root && !leads(nd))
            PMPI_Send(major, (int)all, MPI_BYTE, 0, NODES_TAG, nd->node);
        if (leads(nd) && !is_root) {
            PMPI_Recv(space, (int)all, MPI_BYTE, local_of(nd, root), NODES_TAG, nd->node, MPI_STATUS_IGNORE);
            major = space;
        }
    }
    /* Each leader's node blocks, then the node scatter from it. */
    const char *node_blocks = NULL;
    if (leads(nd)) {
        node_spans(nd, bytes);
        if (nd->my_node == root_node) {
            node_blocks = major + (size_t)nd->first[root_node] * bytes;
            PMPI_Scatterv(major, nd->counts, nd->offsets, MPI_BYTE, MPI_IN_PLACE, 0, MPI_BYTE, root_node, nd->leaders);
        } else {
            PMPI_Scatterv(NULL, NULL, NULL, MPI_BYTE, space, nd->counts[nd->my_node], MPI_BYTE, root_node, nd->leaders);
            node_blocks = space;
        }
    }
    char *into = rdata ? rdata : space + all;
    if (!shim_scatter_by_shoal(node_blocks, (MPI_Count)bytes, MPI_BYTE, into, (MPI_Count)bytes, MPI_BYTE, 0, nd->node,
                               "a scatter inside a node"))
        PMPI_Scatter(node_blocks, (int)bytes, MPI_BYTE, into, (int)bytes, MPI_BYTE, 0, nd->node);
}
