/* Collectives of a communicator spanning nodes, in two levels: steps inside
 * each node through shoal's own path on the node's part of the
 * communicator, steps between nodes on the host MPI over the leaders. */
#include <limits.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "shim_bytes.h"
#include "shim_coll.h"
#include "shim_init.h"
#include "shim_nodes.h"
#include "plan.h"
#include "shim_types.h"

/* Tag of the one point-to-point message (reduce's result to a root that is
 * not its node's leader): the node part is shoal's own communicator. */
#define NODES_TAG 7
/* Competitive bcasts on shoal's copy of the communicator: the root's
 * message to a node's first rank, and that rank's claim (tag: this plus
 * its node, so a node's claims reach the root in the order of its calls). */
#define NODES_DATA_TAG 8
#define NODES_CLAIM_TAG 100
/* Claim slots of a node: a rank reuses one only after every rank of the
 * node has read it, which it waits for (in practice never: a rank runs at
 * most a few bcasts ahead of its node's slowest). */
#define CLAIM_SLOTS 64

struct shim_node_claim {
    _Atomic uint64_t claim; /* bcast number << 16 | the claiming local rank */
    _Atomic uint64_t read;  /* ranks of the node that have read it, over all its uses */
};

MPI_Comm shim_node_part(MPI_Comm comm)
{
    MPI_Comm node = MPI_COMM_NULL;
    int rank;
    PMPI_Comm_rank(comm, &rank);
    /* Fails where comm's error handler returns errors and comm cannot
     * split (a communicator ULFM revoked): the caller leaves it alone. */
    if (PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node) != MPI_SUCCESS ||
        node == MPI_COMM_NULL)
        return MPI_COMM_NULL;
    long cliques = core_config_get()->node_cliques;
    if (cliques > 1) {
        int local, size;
        MPI_Comm clique;
        PMPI_Comm_rank(node, &local);
        PMPI_Comm_size(node, &size);
        bool blocks = core_config_get()->clique_order == CORE_CLIQUES_BLOCKS;
        PMPI_Comm_split(node, (int)(blocks ? local * cliques / size : local % cliques), local, &clique);
        PMPI_Comm_free(&node);
        node = clique;
    }
    return node;
}

/* The order of the leaders' all-to-all phases: rank 0 reads the mapping
 * file, if any, for every rank (nodes need not see the file, and all must
 * follow one order). */
static void agree_phases(shim_comm *sc)
{
    shim_nodes *nd = &sc->nodes;
    nd->phase_node = malloc(((size_t)nd->count + 1) * sizeof *nd->phase_node);
    nd->out_at = malloc(2 * ((size_t)nd->count + 1) * sizeof *nd->out_at);
    if (!nd->phase_node || !nd->out_at)
        core_fatal("out of memory for a communicator's node table");
    nd->in_at = nd->out_at + nd->count + 1;
    for (int i = 0; i < nd->count; i++)
        nd->phase_node[i] = i;
    const char *path = core_config_get()->alltoall_map;
    if (path[0]) {
        /* phase_node[count]: whether the file's mapping is taken. */
        nd->phase_node[nd->count] = 0;
        if (sc->rank == 0) {
            char why[512];
            int32_t *map = malloc((size_t)nd->count * sizeof *map);
            if (!map)
                core_fatal("out of memory for a mapping of %d nodes", nd->count);
            core_nodelist_status got =
                core_nodelist_read(path, nd->count, map, "SHOAL_ALLTOALL_MAP: mapping", why, sizeof why);
            if (got == CORE_NODELIST_OK) {
                for (int i = 0; i < nd->count; i++)
                    nd->phase_node[i] = map[i];
                nd->phase_node[nd->count] = 1;
            } else if (got == CORE_NODELIST_WRONG_COUNT) {
                /* A mapping of the job's nodes; this communicator spans others. */
                core_log_once("all-to-all phases of a communicator over %d nodes follow their own order: %s", nd->count,
                              why);
            } else {
                core_log_warn_once("%s; the leaders' all-to-all phases follow the nodes' own order", why);
            }
            free(map);
        }
        PMPI_Bcast(nd->phase_node, nd->count + 1, MPI_INT, 0, sc->comm);
        if (nd->phase_node[nd->count])
            core_log_once("all-to-all phases between %d nodes follow %s", nd->count, path);
    }
    for (int i = 0; i < nd->count; i++)
        if (nd->phase_node[i] == nd->my_node)
            nd->my_logical = i;
}

static const core_coll cut_colls[3] = {CORE_COLL_BCAST, CORE_COLL_REDUCE, CORE_COLL_ALLREDUCE};

/* Collectives priced flat on the host MPI or in two levels, per size class. */
static const core_coll priced_colls[] = {CORE_COLL_BARRIER, CORE_COLL_BCAST,   CORE_COLL_REDUCE,    CORE_COLL_ALLREDUCE,
                                         CORE_COLL_GATHER,  CORE_COLL_SCATTER, CORE_COLL_ALLGATHER, CORE_COLL_ALLTOALL,
                                         CORE_COLL_SCAN,    CORE_COLL_EXSCAN};

/* Segment sizes per size class, and which calls the host MPI runs flat,
 * priced by rank 0 with its node's figures (or as shoal tune --link timed
 * them on this layout) and sent to every rank: nodes may hold models of
 * their own (each probed itself), and every rank must cut and route a
 * message alike. Nodes are priced as if even: the mean of their ranks,
 * rounded up. */
static void agree_prices(shim_comm *sc)
{
    shim_nodes *nd = &sc->nodes;
    memset(nd->flat, 0, sizeof nd->flat);
    memset(nd->rails, 0, sizeof nd->rails);
    nd->timed = 0;
    if (sc->rank == 0) {
        int mean = (sc->size + nd->count - 1) / nd->count;
        plan_query node = {.n = mean,
                           .ppn = shim_node_ranks > mean ? shim_node_ranks : mean,
                           .cores = shim_node_cores,
                           .window = 128 * 1024,
                           .usable = {[LANE_CELLS] = true, [LANE_CMA] = true, [LANE_HOST] = true}};
        for (int i = 0; i < 3; i++)
            for (int k = 0; k < SHIM_NODES_CLASSES; k++) {
                size_t bytes = (size_t)1 << (SHIM_NODES_FIRST_CLASS + k);
                size_t segment = plan_node_segment(cut_colls[i], bytes, nd->count, &node);
                nd->segment[i][k] = segment < bytes ? segment : 0;
            }
        int *node_sizes = malloc((size_t)nd->count * sizeof *node_sizes);
        if (!node_sizes)
            core_fatal("out of memory for a communicator's node table");
        for (int i = 0; i < nd->count; i++)
            node_sizes[i] = nd->first[i + 1] - nd->first[i];
        char layout[sizeof plan_model_get()->link_layout];
        plan_node_layout(layout, sizeof layout, node_sizes, nd->count);
        free(node_sizes);
        nd->timed = plan_node_layout_timed(layout);
        for (size_t i = 0; i < sizeof priced_colls / sizeof priced_colls[0]; i++)
            for (int k = 0; k < 64; k++) {
                core_coll c = priced_colls[i];
                size_t bytes = c == CORE_COLL_BARRIER ? 0 : (size_t)1 << k;
                plan_node_route route = plan_node_choose(c, bytes, nd->timed, nd->count, &node);
                if (route.flat)
                    nd->flat[c] |= 1ull << k;
                else if (route.rails)
                    nd->rails[c] |= 1ull << k;
                if (c == CORE_COLL_BARRIER || k >= 40)
                    break; /* classes beyond 1 TiB a rank: priced as that */
            }
    }
    PMPI_Bcast(nd->segment, (int)(sizeof nd->segment / sizeof nd->segment[0][0]), MPI_UINT64_T, 0, sc->comm);
    PMPI_Bcast(nd->flat, CORE_COLL_COUNT, MPI_UINT64_T, 0, sc->comm);
    PMPI_Bcast(nd->rails, CORE_COLL_COUNT, MPI_UINT64_T, 0, sc->comm);
    PMPI_Bcast(&nd->timed, 1, MPI_UINT64_T, 0, sc->comm);
}

/* The size class of a call of `bytes` per rank in the per-class sets
 * (flat, rails): class k is 2^k to 2^(k+1)-1 bytes, 0 also none, 40 and
 * above. */
static int size_class(size_t bytes)
{
    int k = core_log2_floor(bytes);
    return k < 40 ? k : 40;
}

static bool class_bit(uint64_t bits, size_t bytes) { return bits >> size_class(bytes) & 1; }

/* Whether the host MPI runs collective c of `bytes` per rank flat, as
 * agreed; says so once under SHOAL_VERBOSE. */
static bool runs_flat(shim_comm *sc, core_coll c, size_t bytes)
{
    if (!class_bit(sc->nodes.flat[c], bytes))
        return false;
    int k = size_class(bytes);
    if (core_log_verbosity() < 1 || (sc->nodes.said_flat[c] >> k & 1))
        return true;
    sc->nodes.said_flat[c] |= 1ull << k;
    size_t klass = k ? (size_t)1 << k : 0;
    char why[96] = "as shoal tune --link timed it on this layout";
    if (!sc->nodes.timed)
        snprintf(why, sizeof why, "shoal explain %s %zu --nodes %d --ppn P says why", core_coll_name(c), klass,
                 sc->nodes.count);
    core_log_once(
        "%s of %zu bytes a rank or more on a communicator of %d ranks over %d nodes: the host MPI's, flat (%s)",
        core_coll_name(c), klass, sc->size, sc->nodes.count, why);
    return true;
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
    nd->rank_at = malloc(((size_t)sc->size + 2 * (size_t)nd->node_size) * sizeof *nd->rank_at);
    if (!nd->rank_at)
        core_fatal("out of memory for a communicator's node table");
    nd->local_counts = nd->rank_at + sc->size;
    nd->local_offsets = nd->local_counts + nd->node_size;
    nd->contiguous = true;
    nd->even = true;
    for (int i = 1; i < nd->count; i++)
        nd->even = nd->even && nd->first[i + 1] - nd->first[i] == nd->first[1];
    nd->rail = MPI_COMM_NULL;
    nd->tails = MPI_COMM_NULL;
    nd->tails_open = false;
    for (int r = 0; r < sc->size; r++) {
        int major = nd->first[nd->where[2 * r]] + nd->where[2 * r + 1];
        nd->rank_at[major] = r;
        nd->contiguous = nd->contiguous && major == r;
    }
    agree_prices(sc);
    agree_phases(sc);
    nd->p2p = MPI_COMM_NULL;
    nd->claim_window = MPI_WIN_NULL;
    nd->claims = NULL;
    nd->root_requests = NULL;
    nd->first_bcasts = 0;
    /* A rank waiting on a peer of its node keeps the host MPI's messages to
     * other nodes moving at every look, not once a period: Open MPI
     * completes an eager send once it is copied and holds it while the TCP
     * socket is full, so a rank waiting in a node step on a leader that
     * waits for that very message would otherwise hang. */
    core_flag_set_idle(shim_host_progress, 0);
    return true;
}

void shim_nodes_close(shim_nodes *nd)
{
    if (nd->claim_window != MPI_WIN_NULL)
        PMPI_Win_free(&nd->claim_window);
    if (nd->p2p != MPI_COMM_NULL)
        PMPI_Comm_free(&nd->p2p);
    if (nd->rail != MPI_COMM_NULL)
        PMPI_Comm_free(&nd->rail);
    if (nd->tails != MPI_COMM_NULL)
        PMPI_Comm_free(&nd->tails);
    free(nd->root_requests);
    free(nd->phase_node);
    free(nd->out_at);
    nd->root_requests = NULL;
    nd->phase_node = NULL;
    nd->out_at = nd->in_at = NULL;
    nd->claims = NULL;
    if (nd->leaders != MPI_COMM_NULL)
        PMPI_Comm_free(&nd->leaders);
    if (nd->node != MPI_COMM_NULL) {
        shim_comm_forget(nd->node);
        PMPI_Comm_free(&nd->node);
    }
    free(nd->where);
    free(nd->first);
    free(nd->rank_at);
    nd->where = NULL;
    nd->first = NULL;
    nd->rank_at = NULL;
    for (int i = 0; i < 5; i++) {
        free(nd->stage[i]);
        nd->stage[i] = NULL;
        nd->stage_size[i] = 0;
    }
}

static int node_of(const shim_nodes *nd, int rank) { return nd->where[2 * rank]; }
static int local_of(const shim_nodes *nd, int rank) { return nd->where[2 * rank + 1]; }
static bool leads(const shim_nodes *nd) { return nd->local == 0; }
/* Rank r's place in node-major order. */
static int major_of(const shim_nodes *nd, int r) { return nd->first[node_of(nd, r)] + local_of(nd, r); }

/* Per-call buffer i of at least size bytes (the communicator's packing
 * buffers hold the caller's packed data: these are the node steps' own). */
static char *stage(shim_nodes *nd, int i, size_t size)
{
    if (size > nd->stage_size[i]) {
        free(nd->stage[i]);
        nd->stage[i] = malloc(size);
        nd->stage_size[i] = nd->stage[i] ? size : 0;
        if (!nd->stage[i])
            core_fatal("out of memory for a %zu-byte buffer", size);
    }
    return nd->stage[i];
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

/* Blocks of bytes[r] at offs[r] (rank order) packed into major in node-major order. */
static void to_node_order_v(const shim_nodes *nd, int n, const char *base, const size_t *bytes, const size_t *offs,
                            char *major)
{
    size_t at = 0;
    for (int m = 0; m < n; m++) {
        int r = nd->rank_at[m];
        memcpy(major + at, base + offs[r], bytes[r]);
        at += bytes[r];
    }
}

/* And back, leaving out rank skip's block (-1: none), which is in place. */
static void from_node_order_v(const shim_nodes *nd, int n, const char *major, char *base, const size_t *bytes,
                              const size_t *offs, int skip)
{
    size_t at = 0;
    for (int m = 0; m < n; m++) {
        int r = nd->rank_at[m];
        if (r != skip)
            memcpy(base + offs[r], major + at, bytes[r]);
        at += bytes[r];
    }
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

/* The node part's scan (inclusive) or exscan of in (MPI_IN_PLACE: in rbuf). */
static void node_scan(shim_nodes *nd, const void *in, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                      bool inclusive)
{
    if (shim_scan_by_shoal(in, rbuf, count, type, op, nd->node, inclusive,
                           inclusive ? "a scan inside a node" : "an exscan inside a node"))
        return;
    if (inclusive)
        PMPI_Scan(in, rbuf, count, type, op, nd->node);
    else
        PMPI_Exscan(in, rbuf, count, type, op, nd->node);
}

/* counts[i] elements of the sum of every rank's in, from offsets[i], to
 * the node's rank i (each its slice into slice). */
static void node_reduce_scatter(shim_nodes *nd, const void *in, void *slice, const int *counts, MPI_Datatype type,
                                MPI_Op op)
{
    if (!shim_reduce_scatter_by_shoal(in, slice, SHIM_INTS(counts), type, op, nd->node,
                                      "a reduce_scatter inside a node"))
        PMPI_Reduce_scatter(in, slice, counts, type, op, nd->node);
}

/* Every rank's slice (counts[i] elements at offsets[i] for the node's rank
 * i; this rank's from mine) into all of buf. */
static void node_allgatherv(shim_nodes *nd, const void *mine, void *buf, const int *counts, const int *offsets,
                            MPI_Datatype type)
{
    if (!shim_allgatherv_by_shoal(mine, counts[nd->local], type, buf, SHIM_INTS(counts), SHIM_INTS(offsets), type,
                                  nd->node, "an allgatherv inside a node"))
        PMPI_Allgatherv(mine, counts[nd->local], type, buf, counts, offsets, type, nd->node);
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

/* This node's blocks, local_counts[l] bytes from local rank l, into
 * node_blocks at the leader at local_offsets[l] (both set by the caller). */
static void node_gatherv(shim_nodes *nd, const char *mine, char *node_blocks)
{
    int my_bytes = nd->local_counts[nd->local];
    if (leads(nd)) {
        if (mine != node_blocks)
            memcpy(node_blocks, mine, (size_t)my_bytes);
        if (!shim_gatherv_by_shoal(MPI_IN_PLACE, 0, MPI_BYTE, node_blocks, SHIM_INTS(nd->local_counts),
                                   SHIM_INTS(nd->local_offsets), MPI_BYTE, 0, nd->node, "a gatherv inside a node"))
            PMPI_Gatherv(MPI_IN_PLACE, 0, MPI_BYTE, node_blocks, nd->local_counts, nd->local_offsets, MPI_BYTE, 0,
                         nd->node);
    } else if (!shim_gatherv_by_shoal(mine, my_bytes, MPI_BYTE, NULL, SHIM_INTS(NULL), SHIM_INTS(NULL), MPI_BYTE, 0,
                                      nd->node, "a gatherv inside a node")) {
        PMPI_Gatherv(mine, my_bytes, MPI_BYTE, NULL, NULL, NULL, MPI_BYTE, 0, nd->node);
    }
}

/* From the leader's node_blocks (in local order), bytes to every rank of the node. */
static void node_scatter(shim_nodes *nd, const char *node_blocks, size_t bytes, char *into)
{
    if (!shim_scatter_by_shoal(node_blocks, (MPI_Count)bytes, MPI_BYTE, into, (MPI_Count)bytes, MPI_BYTE, 0, nd->node,
                               "a scatter inside a node"))
        PMPI_Scatter(node_blocks, (int)bytes, MPI_BYTE, into, (int)bytes, MPI_BYTE, 0, nd->node);
}

/* From the leader's node_slice, local_counts[l] elements at local_offsets[l]
 * to local rank l (both set by the caller). */
static void node_scatterv(shim_nodes *nd, const void *node_slice, void *into, MPI_Datatype type)
{
    int mine = nd->local_counts[nd->local];
    if (!shim_scatterv_by_shoal(node_slice, SHIM_INTS(nd->local_counts), SHIM_INTS(nd->local_offsets), type, into, mine,
                                type, 0, nd->node, "a scatterv inside a node"))
        PMPI_Scatterv(node_slice, nd->local_counts, nd->local_offsets, type, into, mine, type, 0, nd->node);
}

/* local_counts and local_offsets of this node's ranks, packed in local
 * order: sizes (bytes or elements) per rank of the communicator (by_rank),
 * else per local rank. */
static void node_local_spans(shim_nodes *nd, const size_t *sizes, bool by_rank)
{
    int at = 0, first = nd->first[nd->my_node];
    for (int l = 0; l < nd->node_size; l++) {
        nd->local_counts[l] = (int)sizes[by_rank ? nd->rank_at[first + l] : l];
        nd->local_offsets[l] = at;
        at += nd->local_counts[l];
    }
}

/* counts and offsets of every node (node-major, packed) for blocks of
 * per_rank[r]; false when the whole exceeds an int. packed: whether the
 * blocks at offs[r] (NULL: none given) already lie that way. */
static bool node_totals(shim_nodes *nd, const size_t *per_rank, const size_t *offs, size_t *total, bool *packed)
{
    size_t at = 0;
    bool in_order = nd->contiguous && offs;
    for (int i = 0; i < nd->count; i++) {
        nd->offsets[i] = (int)at;
        for (int m = nd->first[i]; m < nd->first[i + 1]; m++) {
            int r = nd->rank_at[m];
            if (per_rank[r] > (size_t)INT_MAX - at)
                return false;
            in_order = in_order && offs[r] == at;
            at += per_rank[r];
        }
        nd->counts[i] = (int)(at - (size_t)nd->offsets[i]);
    }
    *total = at;
    if (packed)
        *packed = in_order;
    return true;
}

/* ---- sizes only some ranks know: gatherv and scatterv ---- */

/* Point-to-point of n bytes that both ends know, in pieces within an int. */
#define PIECE_BYTES ((size_t)1 << 30)

static void send_all(const char *p, size_t n, int to, MPI_Comm comm)
{
    for (size_t k; n; p += k, n -= k) {
        k = n < PIECE_BYTES ? n : PIECE_BYTES;
        PMPI_Send(p, (int)k, MPI_BYTE, to, NODES_TAG, comm);
    }
}

static void recv_all(char *p, size_t n, int from, MPI_Comm comm)
{
    for (size_t k; n; p += k, n -= k) {
        k = n < PIECE_BYTES ? n : PIECE_BYTES;
        PMPI_Recv(p, (int)k, MPI_BYTE, from, NODES_TAG, comm, MPI_STATUS_IGNORE);
    }
}

_Static_assert(sizeof(size_t) == sizeof(uint64_t), "sizes travel as MPI_UINT64_T");

/* gatherv's and scatterv's scratch: every local rank's size, and the root's
 * view of every node (root_node_spans). */
static void sized_scratch(shim_nodes *nd, size_t **sizes, uint64_t **spans)
{
    *sizes = (size_t *)(void *)stage(nd, 1, ((size_t)nd->node_size + 2 * (size_t)nd->count) * sizeof(uint64_t));
    *spans = (uint64_t *)(*sizes + nd->node_size);
}

/* Every rank of the node learns every local rank's block size (a root's
 * counts are known to the root only); returns the node's total. */
static size_t node_learn_sizes(shim_nodes *nd, size_t mine, size_t *sizes)
{
    uint64_t me = mine;
    if (!shim_allgather_by_shoal(&me, 1, MPI_UINT64_T, sizes, 1, MPI_UINT64_T, nd->node, "an allgather inside a node"))
        PMPI_Allgather(&me, 1, MPI_UINT64_T, sizes, 1, MPI_UINT64_T, nd->node);
    size_t total = 0;
    for (int l = 0; l < nd->node_size; l++)
        total += sizes[l];
    return total;
}

/* node_gatherv for sizes of any total (every rank of the node knows them). */
static void node_gatherv_sized(shim_nodes *nd, const size_t *sizes, size_t total, const char *mine, char *node_blocks)
{
    if (total <= INT_MAX) {
        node_local_spans(nd, sizes, false);
        node_gatherv(nd, mine, node_blocks);
    } else if (leads(nd)) {
        memcpy(node_blocks, mine, sizes[0]);
        size_t at = sizes[0];
        for (int l = 1; l < nd->node_size; at += sizes[l], l++)
            recv_all(node_blocks + at, sizes[l], l, nd->node);
    } else {
        send_all(mine, sizes[nd->local], 0, nd->node);
    }
}

/* The mirror: from the leader's node_blocks, sizes[l] bytes to local rank l. */
static void node_scatterv_sized(shim_nodes *nd, const size_t *sizes, size_t total, const char *node_blocks, char *into)
{
    if (total <= INT_MAX) {
        node_local_spans(nd, sizes, false);
        node_scatterv(nd, node_blocks, into, MPI_BYTE);
    } else if (leads(nd)) {
        memcpy(into, node_blocks, sizes[0]);
        size_t at = sizes[0];
        for (int l = 1; l < nd->node_size; at += sizes[l], l++)
            send_all(node_blocks + at, sizes[l], l, nd->node);
    } else {
        recv_all(into, sizes[nd->local], 0, nd->node);
    }
}

/* At the root: every node's total and place in node-major order (of the
 * rank-order blocks bytes[r]), into the first 2 * count entries of spans. */
static size_t root_node_spans(const shim_nodes *nd, const size_t *bytes, uint64_t *spans)
{
    size_t at = 0;
    for (int i = 0; i < nd->count; i++) {
        spans[2 * i + 1] = at;
        for (int m = nd->first[i]; m < nd->first[i + 1]; m++)
            at += bytes[nd->rank_at[m]];
        spans[2 * i] = at - spans[2 * i + 1];
    }
    return at;
}

/* ---- the compositions ---- */

/* Elements per segment of a bcast, reduce or allreduce of count elements
 * `extent` bytes apart: count itself when it is not cut. */
static int segment_count(const shim_nodes *nd, core_coll c, int count, size_t extent)
{
    size_t bytes = (size_t)count * extent, forced = core_config_get()->node_segment, segment = forced;
    if (!extent)
        return count;
    if (!forced) {
        int k = -SHIM_NODES_FIRST_CLASS;
        for (size_t b = bytes; b > 1; b >>= 1)
            k++;
        if (k < 0)
            return count;
        int i = c == CORE_COLL_BCAST ? 0 : c == CORE_COLL_REDUCE ? 1 : 2;
        segment = nd->segment[i][k < SHIM_NODES_CLASSES ? k : SHIM_NODES_CLASSES - 1];
        if (!segment)
            return count;
    }
    size_t per = segment / extent;
    return per < 1 ? 1 : per < (size_t)count ? (int)per : count;
}

/* The pipelines: each leader keeps two segments' host calls in flight (in
 * the same order on every leader, as MPI orders non-blocking collectives)
 * while its node steps run on the segments beside them. */
typedef struct segments {
    int per, count; /* elements per segment, in all */
    size_t extent;
} segments;

static int segment_elements(const segments *sg, int k)
{
    return k * sg->per + sg->per <= sg->count ? sg->per : sg->count - k * sg->per;
}
static size_t segment_offset(const segments *sg, int k) { return (size_t)k * (size_t)sg->per * sg->extent; }
static int segment_total(const segments *sg) { return (sg->count + sg->per - 1) / sg->per; }

/* Both slots' host calls finished (a loop: MPICH's MPI_STATUSES_IGNORE
 * trips GCC's access checks on PMPI_Waitall). */
static void wait_both(MPI_Request req[2])
{
    for (int i = 0; i < 2; i++)
        PMPI_Wait(&req[i], MPI_STATUS_IGNORE);
}

static void bcast_in_segments(shim_nodes *nd, char *buf, MPI_Datatype type, const segments *sg, int root)
{
    int root_node = node_of(nd, root), total = segment_total(sg);
    MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    for (int k = 0; k < total; k++) {
        char *p = buf + segment_offset(sg, k);
        int n = segment_elements(sg, k);
        if (nd->my_node == root_node) {
            node_bcast(nd, p, n, type, local_of(nd, root));
            if (leads(nd)) {
                PMPI_Wait(&req[k % 2], MPI_STATUS_IGNORE);
                PMPI_Ibcast(p, n, type, root_node, nd->leaders, &req[k % 2]);
            }
            continue;
        }
        if (leads(nd)) {
            for (int j = k == 0 ? 0 : k + 1; j <= k + 1 && j < total; j++)
                PMPI_Ibcast(buf + segment_offset(sg, j), segment_elements(sg, j), type, root_node, nd->leaders,
                            &req[j % 2]);
            PMPI_Wait(&req[k % 2], MPI_STATUS_IGNORE);
        }
        node_bcast(nd, p, n, type, 0);
    }
    wait_both(req);
}

/* sbuf MPI_IN_PLACE: the input is in rbuf. */
static void allreduce_in_segments(shim_nodes *nd, const char *sbuf, char *rbuf, MPI_Datatype type, MPI_Op op,
                                  const segments *sg)
{
    int total = segment_total(sg);
    MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    for (int k = 0; k <= total; k++) {
        if (k < total) {
            size_t at = segment_offset(sg, k);
            int n = segment_elements(sg, k);
            if (leads(nd)) {
                node_reduce(nd, sbuf == MPI_IN_PLACE ? MPI_IN_PLACE : sbuf + at, rbuf + at, n, type, op);
                PMPI_Iallreduce(MPI_IN_PLACE, rbuf + at, n, type, op, nd->leaders, &req[k % 2]);
            } else {
                node_reduce(nd, (sbuf == MPI_IN_PLACE ? rbuf : sbuf) + at, NULL, n, type, op);
            }
        }
        if (k > 0) {
            PMPI_Wait(&req[(k - 1) % 2], MPI_STATUS_IGNORE);
            node_bcast(nd, rbuf + segment_offset(sg, k - 1), segment_elements(sg, k - 1), type, 0);
        }
    }
}

/* A leader's part: its node's sums into node_sum, the leaders' into sum at
 * the root node's leader (NULL elsewhere). */
static void reduce_in_segments(shim_nodes *nd, const char *in, char *node_sum, char *sum, MPI_Datatype type, MPI_Op op,
                               const segments *sg, int root_node)
{
    int total = segment_total(sg);
    MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    for (int k = 0; k < total; k++) {
        size_t at = segment_offset(sg, k);
        int n = segment_elements(sg, k);
        node_reduce(nd, in + at, node_sum + at, n, type, op);
        PMPI_Wait(&req[k % 2], MPI_STATUS_IGNORE);
        PMPI_Ireduce(node_sum + at, sum ? sum + at : NULL, n, type, op, root_node, nd->leaders, &req[k % 2]);
    }
    wait_both(req);
}

/* ---- competitive bcast ---- */

/* At the first competitive bcast (collective over the communicator). */
static void open_first_bcasts(shim_comm *sc)
{
    shim_nodes *nd = &sc->nodes;
    PMPI_Comm_dup(sc->comm, &nd->p2p);
    MPI_Aint size = nd->local == 0 ? CLAIM_SLOTS * (MPI_Aint)sizeof(struct shim_node_claim) : 0, got;
    int unit;
    void *base;
    PMPI_Win_allocate_shared(size, 1, MPI_INFO_NULL, nd->node, &base, &nd->claim_window);
    PMPI_Win_shared_query(nd->claim_window, 0, &got, &unit, &base);
    nd->claims = base;
    if (nd->local == 0)
        for (int i = 0; i < CLAIM_SLOTS; i++) {
            atomic_init(&nd->claims[i].claim, 0);
            atomic_init(&nd->claims[i].read, 0);
        }
    nd->root_requests = malloc(2 * (size_t)nd->count * sizeof *nd->root_requests);
    if (!nd->root_requests)
        core_fatal("out of memory for a communicator's requests");
    PMPI_Barrier(nd->node);
}

/* The local rank of this node that receives competitive bcast number
 * `index` (from 0, alike on the node's ranks): the first to get here. */
static int node_first(shim_nodes *nd, uint64_t index)
{
    struct shim_node_claim *slot = &nd->claims[index % CLAIM_SLOTS];
    uint64_t earlier_reads = index / CLAIM_SLOTS * (uint64_t)nd->node_size, number = index + 1;
    while (atomic_load_explicit(&slot->read, memory_order_acquire) < earlier_reads)
        sched_yield();
    uint64_t seen = atomic_load_explicit(&slot->claim, memory_order_acquire), mine = number << 16 | (uint64_t)nd->local;
    if (seen >> 16 != number && atomic_compare_exchange_strong(&slot->claim, &seen, mine))
        seen = mine;
    atomic_fetch_add_explicit(&slot->read, 1, memory_order_acq_rel);
    return (int)(seen & 0xffff);
}

/* Whether a bcast of `bytes` runs competitively here: the planner's rule,
 * within what the tags and claim slots can name. */
static bool bcast_first(const shim_nodes *nd, size_t bytes)
{
    return bytes <= INT_MAX && nd->node_size < 65536 && nd->count < 30000 &&
           plan_node_bcast_first(bytes, bytes, nd->count);
}

/* The root's node takes a node bcast from the root; elsewhere a node's
 * first rank to arrive claims the message from the root, which answers
 * claims as they come, and passes it on inside its node. */
static void bcast_to_first(shim_comm *sc, char *data, int bytes, int root)
{
    shim_nodes *nd = &sc->nodes;
    if (nd->p2p == MPI_COMM_NULL)
        open_first_bcasts(sc);
    core_log_once("bcast on a communicator of %d ranks over %d nodes: the first rank of each node to arrive "
                  "claims it from the root, then a node bcast",
                  sc->size, nd->count);
    uint64_t index = nd->first_bcasts++;
    int root_node = node_of(nd, root);
    if (nd->my_node != root_node) {
        int first = node_first(nd, index);
        if (first == nd->local) {
            PMPI_Send(NULL, 0, MPI_BYTE, root, NODES_CLAIM_TAG + nd->my_node, nd->p2p);
            PMPI_Recv(data, bytes, MPI_BYTE, root, NODES_DATA_TAG, nd->p2p, MPI_STATUS_IGNORE);
        }
        node_bcast(nd, data, bytes, MPI_BYTE, first);
        return;
    }
    if (sc->rank != root) {
        node_bcast(nd, data, bytes, MPI_BYTE, local_of(nd, root));
        return;
    }
    int others = nd->count - 1;
    MPI_Request *claims = nd->root_requests, *sends = claims + others;
    for (int j = 0, k = 0; j < nd->count; j++)
        if (j != root_node)
            PMPI_Irecv(NULL, 0, MPI_BYTE, MPI_ANY_SOURCE, NODES_CLAIM_TAG + j, nd->p2p, &claims[k++]);
    node_bcast(nd, data, bytes, MPI_BYTE, local_of(nd, root));
    for (int i = 0; i < others; i++) {
        int which;
        MPI_Status st;
        PMPI_Waitany(others, claims, &which, &st);
        PMPI_Isend(data, bytes, MPI_BYTE, st.MPI_SOURCE, NODES_DATA_TAG, nd->p2p, &sends[i]);
    }
    for (int i = 0; i < others; i++)
        PMPI_Wait(&sends[i], MPI_STATUS_IGNORE);
}

/* Says once under SHOAL_VERBOSE how collective c crosses the nodes: its
 * steps' text, or `text` where the call runs another form (rails). */
static void say_plan_once(shim_comm *sc, core_coll c, const char *text)
{
    if (core_log_verbosity() < 1)
        return;
    const plan_node_steps *steps = plan_node_steps_for(c, 0);
    if (!text)
        text = steps ? steps->text : "the host MPI's";
    if (sc->nodes.said_plan[c] == text)
        return;
    sc->nodes.said_plan[c] = text;
    core_log_once("%s on a communicator of %d ranks over %d nodes: %s", core_coll_name(c), sc->size, sc->nodes.count,
                  text);
}

bool shim_nodes_barrier(shim_comm *sc)
{
    shim_nodes *nd = &sc->nodes;
    if (runs_flat(sc, CORE_COLL_BARRIER, 0))
        return false;
    say_plan_once(sc, CORE_COLL_BARRIER, NULL);
    node_barrier(nd);
    if (leads(nd))
        PMPI_Barrier(nd->leaders);
    node_barrier(nd);
    return true;
}

/* ---- on rails ---- */

/* Whether collective c of count elements, `bytes` a rank, runs on rails:
 * as agreed for its size class, on nodes of equal rank counts, every rank
 * with a slice of at least one element. Alike on every rank. */
static bool on_rails(const shim_nodes *nd, core_coll c, MPI_Count count, size_t bytes)
{
    return nd->even && count >= nd->node_size && class_bit(nd->rails[c], bytes);
}

/* This rank's rail (the ranks of its place in every node, numbered by
 * node), made at the first call on rails; and the slices of count
 * elements, local rank i's counts[i] from offsets[i] (local_counts,
 * local_offsets). */
static MPI_Comm rail_slices(shim_comm *sc, int count)
{
    shim_nodes *nd = &sc->nodes;
    if (nd->rail == MPI_COMM_NULL)
        PMPI_Comm_split(sc->comm, nd->local, nd->my_node, &nd->rail);
    int *counts = nd->local_counts, *offsets = nd->local_offsets;
    for (int i = 0; i < nd->node_size; i++) {
        offsets[i] = (int)((size_t)count * (size_t)i / (size_t)nd->node_size);
        counts[i] = (int)((size_t)count * (size_t)(i + 1) / (size_t)nd->node_size) - offsets[i];
    }
    return nd->rail;
}

/* Allreduce on rails (plan_node_rails_ns): the node's rank i owns slice i;
 * it reduces that slice inside the node, allreduces it with the ranks
 * owning it on the other nodes, then the node gathers the slices. */
static void allreduce_on_rails(shim_comm *sc, const char *in, char *rbuf, int count, MPI_Datatype type, MPI_Op op,
                               size_t extent)
{
    shim_nodes *nd = &sc->nodes;
    MPI_Comm rail = rail_slices(sc, count);
    int *counts = nd->local_counts, *offsets = nd->local_offsets;
    /* The slice apart from rbuf: in may be rbuf (MPI_IN_PLACE), read whole
     * by the node's reduce_scatter. */
    char *slice = shim_comm_scratch(sc, 0, (size_t)counts[nd->local] * extent);
    node_reduce_scatter(nd, in, slice, counts, type, op);
    PMPI_Allreduce(MPI_IN_PLACE, slice, counts[nd->local], type, op, rail);
    node_allgatherv(nd, slice, rbuf, counts, offsets, type);
}

/* Reduce on rails: the node's rank i reduces slice i inside the node, the
 * ranks holding slice i reduce it into the root's node by the host MPI
 * (into the root's result at the root, apart at the others), and the
 * root's node gathers the slices to the root. */
static void reduce_on_rails(shim_comm *sc, const char *in, char *rbuf, int count, MPI_Datatype type, MPI_Op op,
                            size_t extent, int root)
{
    shim_nodes *nd = &sc->nodes;
    MPI_Comm rail = rail_slices(sc, count);
    int *counts = nd->local_counts, *offsets = nd->local_offsets, mine = counts[nd->local];
    bool is_root = sc->rank == root, roots_node = nd->my_node == node_of(nd, root);
    char *slice = shim_comm_scratch(sc, 0, (size_t)mine * extent);
    node_reduce_scatter(nd, in, slice, counts, type, op);
    char *sum = !roots_node ? NULL
                : is_root   ? rbuf + (size_t)offsets[nd->local] * extent
                            : shim_comm_scratch(sc, 1, (size_t)mine * extent);
    PMPI_Reduce(slice, sum, mine, type, op, node_of(nd, root), rail);
    if (!roots_node)
        return;
    const void *from = is_root ? MPI_IN_PLACE : sum;
    int to = local_of(nd, root);
    if (!shim_gatherv_by_shoal(from, mine, type, rbuf, SHIM_INTS(counts), SHIM_INTS(offsets), type, to, nd->node,
                               "a gatherv inside a node"))
        PMPI_Gatherv(from, mine, type, rbuf, counts, offsets, type, to, nd->node);
}

/* Bcast on rails, of `bytes` at data: the root's node scatters the
 * message (local rank i slice i), the ranks holding slice i bcast it from
 * the root's node by the host MPI, and every node gathers the slices. */
static void bcast_on_rails(shim_comm *sc, char *data, int bytes, int root)
{
    shim_nodes *nd = &sc->nodes;
    MPI_Comm rail = rail_slices(sc, bytes);
    int *counts = nd->local_counts, *offsets = nd->local_offsets, mine = counts[nd->local];
    char *slice = data + offsets[nd->local];
    if (nd->my_node == node_of(nd, root)) {
        void *into = sc->rank == root ? MPI_IN_PLACE : slice;
        int from = local_of(nd, root);
        if (!shim_scatterv_by_shoal(data, SHIM_INTS(counts), SHIM_INTS(offsets), MPI_BYTE, into, mine, MPI_BYTE, from,
                                    nd->node, "a scatterv inside a node"))
            PMPI_Scatterv(data, counts, offsets, MPI_BYTE, into, mine, MPI_BYTE, from, nd->node);
    }
    PMPI_Bcast(slice, mine, MPI_BYTE, node_of(nd, root), rail);
    if (!shim_allgatherv_by_shoal(MPI_IN_PLACE, 0, MPI_BYTE, data, SHIM_INTS(counts), SHIM_INTS(offsets), MPI_BYTE,
                                  nd->node, "an allgatherv inside a node"))
        PMPI_Allgatherv(MPI_IN_PLACE, 0, MPI_BYTE, data, counts, offsets, MPI_BYTE, nd->node);
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
    /* Segments are cut from the bytes: ranks may describe the same bytes
     * with different datatypes (only the type signatures must match). */
    size_t bytes = (size_t)count * l.size;
    if (runs_flat(sc, CORE_COLL_BCAST, bytes))
        return false;
    bool rails = bytes <= INT_MAX && on_rails(nd, CORE_COLL_BCAST, (MPI_Count)bytes, bytes);
    segments sg = {bytes <= INT_MAX ? segment_count(nd, CORE_COLL_BCAST, (int)bytes, 1) : 0, (int)bytes, 1};
    bool cut = !rails && sg.per && sg.per < sg.count, first = !rails && !cut && bcast_first(nd, bytes);
    if (!first)
        say_plan_once(sc, CORE_COLL_BCAST, rails ? plan_node_rails_for(CORE_COLL_BCAST)->text : NULL);
    if (rails || cut || first) {
        char *data = sc->rank == root ? (char *)shim_send_bytes(sc, 0, buf, count, type, &l, sc->comm)
                                      : shim_recv_bytes(sc, 0, buf, count, &l);
        if (rails)
            bcast_on_rails(sc, data, (int)bytes, root);
        else if (cut)
            bcast_in_segments(nd, data, MPI_BYTE, &sg, root);
        else
            bcast_to_first(sc, data, (int)bytes, root);
        if (sc->rank != root)
            shim_recv_finish(sc, 0, buf, count, type, &l, sc->comm);
        return true;
    }
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
    if (runs_flat(sc, CORE_COLL_REDUCE, (size_t)count * extent))
        return false;
    int n = (int)count, root_node = node_of(nd, root);
    const char *in = in_place ? rbuf : sbuf;
    if (on_rails(nd, CORE_COLL_REDUCE, count, (size_t)count * extent)) {
        say_plan_once(sc, CORE_COLL_REDUCE, plan_node_rails_for(CORE_COLL_REDUCE)->text);
        reduce_on_rails(sc, in, rbuf, n, type, op, extent, root);
        return true;
    }
    say_plan_once(sc, CORE_COLL_REDUCE, NULL);
    segments sg = {segment_count(nd, CORE_COLL_REDUCE, n, extent), n, extent};
    if (!leads(nd)) {
        for (int k = 0; k < segment_total(&sg); k++)
            node_reduce(nd, in + segment_offset(&sg, k), NULL, segment_elements(&sg, k), type, op);
        if (is_root)
            PMPI_Recv(rbuf, n, type, 0, NODES_TAG, nd->node, MPI_STATUS_IGNORE);
        return true;
    }
    /* A leader: its node's sum, then the leaders' into the root's node (not
     * in place: MPICH 4.0.2 crashes reducing in place at a root other than 0). */
    char *node_sum = shim_comm_scratch(sc, 0, (size_t)n * extent);
    char *sum = nd->my_node != root_node ? NULL : is_root ? rbuf : shim_comm_scratch(sc, 1, (size_t)n * extent);
    if (sg.per < sg.count) {
        reduce_in_segments(nd, in, node_sum, sum, type, op, &sg, root_node);
    } else {
        node_reduce(nd, in, node_sum, n, type, op);
        PMPI_Reduce(node_sum, sum, n, type, op, root_node, nd->leaders);
    }
    if (sum && !is_root)
        PMPI_Send(sum, n, type, local_of(nd, root), NODES_TAG, nd->node);
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
    if (runs_flat(sc, CORE_COLL_ALLREDUCE, (size_t)count * extent))
        return false;
    int n = (int)count;
    if (on_rails(nd, CORE_COLL_ALLREDUCE, count, (size_t)count * extent)) {
        say_plan_once(sc, CORE_COLL_ALLREDUCE, plan_node_rails_for(CORE_COLL_ALLREDUCE)->text);
        allreduce_on_rails(sc, sbuf == MPI_IN_PLACE ? rbuf : sbuf, rbuf, n, type, op, extent);
        return true;
    }
    say_plan_once(sc, CORE_COLL_ALLREDUCE, NULL);
    segments sg = {segment_count(nd, CORE_COLL_ALLREDUCE, n, extent), n, extent};
    if (sg.per < sg.count) {
        allreduce_in_segments(nd, sbuf, rbuf, type, op, &sg);
        return true;
    }
    if (leads(nd)) {
        node_reduce(nd, sbuf, rbuf, n, type, op);
        PMPI_Allreduce(MPI_IN_PLACE, rbuf, n, type, op, nd->leaders);
    } else {
        node_reduce(nd, sbuf == MPI_IN_PLACE ? rbuf : sbuf, NULL, n, type, op);
    }
    node_bcast(nd, rbuf, n, type, 0);
    return true;
}

/* ---- scans ---- */

bool shim_nodes_scan(shim_comm *sc, const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
                     bool inclusive)
{
    shim_nodes *nd = &sc->nodes;
    core_coll c = inclusive ? CORE_COLL_SCAN : CORE_COLL_EXSCAN;
    size_t extent;
    if (!reduction_ok(count, type, op, &extent) || rbuf == MPI_IN_PLACE || (count && (!rbuf || !sbuf || sbuf == rbuf)))
        return false;
    /* Where nodes interleave in the communicator's order, the ranks before
     * a rank are no prefix of every node's: the host's. */
    if (!nd->contiguous) {
        say_plan_once(sc, c, "the host MPI's (a node's ranks are not consecutive in the communicator)");
        return false;
    }
    if (count == 0)
        return true;
    size_t bytes = (size_t)count * extent;
    if (runs_flat(sc, c, bytes))
        return false;
    say_plan_once(sc, c, NULL);
    if (!nd->tails_open) {
        /* Every node's last rank, numbering the nodes as the leaders do. */
        bool last = nd->local == nd->node_size - 1;
        PMPI_Comm_split(sc->comm, last ? 0 : MPI_UNDEFINED, sc->rank, &nd->tails);
        nd->tails_open = true;
    }
    int n = (int)count;
    /* An exscan's first rank of a node: its result is the prefix alone
     * (on the first node, undefined: its buffer is left alone). */
    bool prefix_only = !inclusive && nd->local == 0;
    char *total = shim_comm_scratch(sc, 0, bytes);
    char *prefix = prefix_only && nd->my_node > 0 ? (char *)rbuf : shim_comm_scratch(sc, 1, bytes);
    if (!inclusive && nd->tails != MPI_COMM_NULL)
        memcpy(total, sbuf == MPI_IN_PLACE ? rbuf : sbuf, bytes); /* before an in-place step overwrites it */
    node_scan(nd, sbuf, rbuf, n, type, op, inclusive);
    if (nd->tails != MPI_COMM_NULL) {
        if (!inclusive && !prefix_only)
            PMPI_Reduce_local(rbuf, total, n, type, op); /* the node's ranks before this one, then its own */
        PMPI_Exscan(inclusive ? rbuf : total, prefix, n, type, op, nd->tails);
    }
    if (nd->my_node == 0)
        return true; /* no node before it */
    node_bcast(nd, prefix, n, type, nd->node_size - 1);
    if (!prefix_only)
        PMPI_Reduce_local(prefix, rbuf, n, type, op); /* the nodes before, then this node's part */
    return true;
}

bool shim_nodes_takes_bytes(shim_comm *sc, core_coll c, size_t bytes)
{
    size_t total;
    return !__builtin_mul_overflow(bytes, (size_t)sc->size, &total) && total <= INT_MAX && !runs_flat(sc, c, bytes);
}

void shim_nodes_allgather(shim_comm *sc, const char *sdata, size_t bytes, char *rdata)
{
    shim_nodes *nd = &sc->nodes;
    int n = sc->size;
    say_plan_once(sc, CORE_COLL_ALLGATHER, NULL);
    char *major = nd->contiguous ? rdata : stage(nd, 0, (size_t)n * bytes);
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
    say_plan_once(sc, CORE_COLL_GATHER, NULL);
    bool direct = nd->contiguous && is_root; /* the blocks land in the root's buffer as they are */
    char *major = direct ? rdata : stage(nd, 0, (size_t)n * bytes);
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
    say_plan_once(sc, CORE_COLL_SCATTER, NULL);
    /* Leaders and the root: blocks in node-major order, and a spare block
     * (the in-place root's copy from the node scatter, which it drops). */
    char *space = leads(nd) || is_root ? stage(nd, 0, all + bytes) : NULL;
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
    node_scatter(nd, node_blocks, bytes, rdata ? rdata : space + all);
}

bool shim_nodes_allgatherv(shim_comm *sc, const char *sdata, char *rbase, const size_t *rbytes, const size_t *roffs)
{
    shim_nodes *nd = &sc->nodes;
    int n = sc->size, me = sc->rank;
    size_t total;
    bool packed;
    if (!node_totals(nd, rbytes, roffs, &total, &packed))
        return false;
    if (!total)
        return true;
    say_plan_once(sc, CORE_COLL_ALLGATHERV, NULL);
    /* Every block in node-major order: straight into rbase where they lie so. */
    char *major = packed ? rbase : stage(nd, 0, total);
    node_local_spans(nd, rbytes, true);
    node_gatherv(nd, sdata ? sdata : rbase + roffs[me], major + nd->offsets[nd->my_node]);
    if (leads(nd))
        PMPI_Allgatherv(MPI_IN_PLACE, 0, MPI_BYTE, major, nd->counts, nd->offsets, MPI_BYTE, nd->leaders);
    node_bcast(nd, major, (int)total, MPI_BYTE, 0);
    if (!packed)
        from_node_order_v(nd, n, major, rbase, rbytes, roffs, sdata ? -1 : me);
    return true;
}

bool shim_nodes_reduce_scatter(shim_comm *sc, const void *sbuf, void *rbuf, const size_t *counts, const size_t *firsts,
                               MPI_Datatype type, MPI_Op op)
{
    shim_nodes *nd = &sc->nodes;
    size_t extent, total;
    if (!reduction_ok(0, type, op, &extent) || !node_totals(nd, counts, NULL, &total, NULL))
        return false;
    if (!total)
        return true;
    say_plan_once(sc, CORE_COLL_REDUCE_SCATTER, NULL);
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    node_local_spans(nd, counts, true);
    char *node_slice = NULL;
    if (leads(nd)) {
        char *node_sum = shim_comm_scratch(sc, 0, total * extent);
        node_reduce(nd, in, node_sum, (int)total, type, op);
        /* The leaders' reduce_scatter wants each node's blocks together. */
        char *major = node_sum;
        if (!nd->contiguous) {
            major = stage(nd, 0, total * extent);
            size_t at = 0;
            for (int m = 0; m < sc->size; m++) {
                int r = nd->rank_at[m];
                memcpy(major + at * extent, node_sum + firsts[r] * extent, counts[r] * extent);
                at += counts[r];
            }
        }
        node_slice = shim_comm_scratch(sc, 1, ((size_t)nd->counts[nd->my_node] + 1) * extent);
        PMPI_Reduce_scatter(major, node_slice, nd->counts, type, op, nd->leaders);
    } else {
        node_reduce(nd, in, NULL, (int)total, type, op);
    }
    node_scatterv(nd, node_slice, rbuf, type);
    return true;
}

/* out_n bytes to one peer while in_n come from another, in pieces within
 * an int; nothing travels where a size is 0 (the peers know the sizes). */
static void exchange_all(const char *out, size_t out_n, int to, char *in, size_t in_n, int from, MPI_Comm comm)
{
    while (out_n || in_n) {
        size_t k_out = out_n < PIECE_BYTES ? out_n : PIECE_BYTES, k_in = in_n < PIECE_BYTES ? in_n : PIECE_BYTES;
        MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
        if (k_in)
            PMPI_Irecv(in, (int)k_in, MPI_BYTE, from, NODES_TAG, comm, &req[0]);
        if (k_out)
            PMPI_Isend(out, (int)k_out, MPI_BYTE, to, NODES_TAG, comm, &req[1]);
        wait_both(req);
        out += k_out, out_n -= k_out, in += k_in, in_n -= k_in;
    }
}

/* The leaders' all-to-all: node j's part of out (from out_at[j] to
 * out_at[j + 1]) to node j, node i's part of in from node i, this node's
 * copied. In uniform-stride phases over the logical nodes: in phase k
 * logical node i sends to i + k and receives from i - k, so each leader
 * sends and receives one message at a time, in the order a mapping file
 * chose (SHOAL_ALLTOALL_MAP) or the nodes' own. */
static void leaders_exchange(shim_nodes *nd, const char *out, char *in)
{
    int nodes = nd->count, me = nd->my_node;
    memcpy(in + nd->in_at[me], out + nd->out_at[me], nd->out_at[me + 1] - nd->out_at[me]);
    for (int k = 1; k < nodes; k++) {
        int to = nd->phase_node[(nd->my_logical + k) % nodes];
        int from = nd->phase_node[(nd->my_logical - k + nodes) % nodes];
        exchange_all(out + nd->out_at[to], nd->out_at[to + 1] - nd->out_at[to], to, in + nd->in_at[from],
                     nd->in_at[from + 1] - nd->in_at[from], from, nd->leaders);
    }
}

bool shim_nodes_alltoall(shim_comm *sc, const char *sdata, size_t bytes, char *rdata)
{
    shim_nodes *nd = &sc->nodes;
    int n = sc->size, ns = nd->node_size;
    size_t row = (size_t)n * bytes, all;
    if (!plan_node_steps_for(CORE_COLL_ALLTOALL, bytes) || __builtin_mul_overflow(row, (size_t)n, &all) ||
        all > INT_MAX || runs_flat(sc, CORE_COLL_ALLTOALL, bytes))
        return false;
    say_plan_once(sc, CORE_COLL_ALLTOALL, NULL);
    /* rows: local rank l's row (its blocks for every rank) at l * row. */
    char *rows = leads(nd) ? stage(nd, 0, (size_t)ns * row) : NULL;
    node_gather(nd, sdata ? sdata : rdata, row, rows);
    if (leads(nd)) {
        /* To node j: [source local s][destination local k], and from node i
         * the same with node i's sources and this node's destinations. */
        char *out = stage(nd, 1, (size_t)ns * row), *in = stage(nd, 2, (size_t)ns * row);
        size_t at = 0, back = 0;
        for (int j = 0; j < nd->count; j++) {
            int size_j = nd->first[j + 1] - nd->first[j];
            nd->out_at[j] = at;
            for (int s = 0; s < ns; s++)
                for (int m = nd->first[j]; m < nd->first[j + 1]; m++, at += bytes)
                    memcpy(out + at, rows + (size_t)s * row + (size_t)nd->rank_at[m] * bytes, bytes);
            nd->in_at[j] = back;
            back += (size_t)size_j * (size_t)ns * bytes;
        }
        nd->out_at[nd->count] = at, nd->in_at[nd->count] = back;
        leaders_exchange(nd, out, in);
        /* Back into rows, now one per destination: row k's block from rank r. */
        for (int i = 0; i < nd->count; i++) {
            const char *from = in + nd->in_at[i];
            for (int m = nd->first[i]; m < nd->first[i + 1]; m++)
                for (int k = 0; k < ns; k++, from += bytes)
                    memcpy(rows + (size_t)k * row + (size_t)nd->rank_at[m] * bytes, from, bytes);
        }
    }
    node_scatter(nd, rows, row, rdata);
    return true;
}

bool shim_nodes_alltoallv(shim_comm *sc, const char *sbase, const size_t *sbytes, const size_t *soffs, char *rbase,
                          const size_t *rbytes, const size_t *roffs)
{
    shim_nodes *nd = &sc->nodes;
    int n = sc->size, ns = nd->node_size, nodes = nd->count;
    /* Where blocks are large, each crossing its node twice costs more than
     * the messages saved (alltoall's crossover): every rank must decide
     * alike, and only together do they know the sizes. */
    uint64_t sent = 0, most = 0;
    for (int d = 0; d < n; d++)
        sent += sbytes[d];
    sent /= (uint64_t)n;
    if (!shim_nodes_allreduce(sc, &sent, &most, 1, MPI_UINT64_T, MPI_MAX))
        PMPI_Allreduce(&sent, &most, 1, MPI_UINT64_T, MPI_MAX, sc->comm);
    if (!plan_node_steps_for(CORE_COLL_ALLTOALLV, (size_t)most))
        return false;
    say_plan_once(sc, CORE_COLL_ALLTOALLV, NULL);

    /* Sizes: every local rank's row totals, sent and received, on every
     * local rank; every local rank's blocks' sizes (2n: sent to each rank,
     * received from each) at the leader. */
    size_t words = 2 * (size_t)n + 3 * (size_t)ns + (leads(nd) ? (size_t)ns * 2 * (size_t)n : 0);
    uint64_t *mine = (uint64_t *)(void *)stage(nd, 0, words * sizeof(uint64_t)), *row_sizes = mine + 2 * n,
             *back_sizes = row_sizes + ns, *at_k = back_sizes + ns, *all = at_k + ns;
    size_t *out_at = nd->out_at, *in_at = nd->in_at;
    size_t row = 0, back = 0;
    for (int r = 0; r < n; r++) {
        mine[r] = sbytes[r], mine[n + r] = rbytes[r];
        row += sbytes[r], back += rbytes[r];
    }
    size_t rows_total = node_learn_sizes(nd, row, row_sizes), backs_total = node_learn_sizes(nd, back, back_sizes);
    node_gather(nd, (const char *)mine, 2 * (size_t)n * sizeof(uint64_t), (char *)all);

    /* This rank's row, its blocks in node-major order of their destinations,
     * to the leader. */
    char *my_row = stage(nd, 1, row ? row : 1), *rows = leads(nd) ? stage(nd, 2, rows_total ? rows_total : 1) : NULL;
    for (size_t m = 0, at = 0; m < (size_t)n; m++) {
        int d = nd->rank_at[m];
        memcpy(my_row + at, sbase + soffs[d], sbytes[d]);
        at += sbytes[d];
    }
    node_gatherv_sized(nd, row_sizes, rows_total, my_row, rows);

    char *backs = NULL;
    if (leads(nd)) {
        /* To node j: [source local s][destination of node j, in order];
         * from node i: [source of node i][destination local k], so what
         * each leader sends and receives follows from the sizes. */
        const uint64_t *sent_by = all, *got_by = all + n; /* local l: sent_by[2nl + d], got_by[2nl + s] */
        size_t out_total = 0, in_total = 0;
        for (int j = 0; j <= nodes; j++) {
            out_at[j] = out_total, in_at[j] = in_total;
            for (int l = 0; l < ns && j < nodes; l++)
                for (int m = nd->first[j]; m < nd->first[j + 1]; m++) {
                    out_total += sent_by[2 * (size_t)n * l + nd->rank_at[m]];
                    in_total += got_by[2 * (size_t)n * l + nd->rank_at[m]];
                }
        }
        char *out = stage(nd, 3, out_total ? out_total : 1), *in = stage(nd, 4, in_total ? in_total : 1);
        const char *from = rows;
        for (int l = 0; l < ns; l++)
            for (int m = 0; m < n; m++) {
                int d = nd->rank_at[m], j = node_of(nd, d);
                size_t size = sent_by[2 * (size_t)n * l + d];
                memcpy(out + out_at[j], from, size);
                out_at[j] += size, from += size;
            }
        /* out_at[j] now ends node j's part: back to its start. */
        for (int j = nodes - 1; j >= 0; j--)
            out_at[j] = j ? out_at[j - 1] : 0;
        leaders_exchange(nd, out, in);
        /* Regrouped per destination: local k's blocks from every rank, in
         * node-major order of their sources. */
        backs = stage(nd, 2, backs_total ? backs_total : 1);
        for (size_t l = 0, at = 0; l < (size_t)ns; l++) /* where local l's blocks go next */
            at_k[l] = at, at += back_sizes[l];
        const char *got = in;
        for (int m = 0; m < n; m++)
            for (int l = 0; l < ns; l++) {
                size_t size = got_by[2 * (size_t)n * l + nd->rank_at[m]];
                memcpy(backs + at_k[l], got, size);
                at_k[l] += size, got += size;
            }
    }
    char *my_back = stage(nd, 1, back ? back : 1);
    node_scatterv_sized(nd, back_sizes, backs_total, backs, my_back);
    for (size_t m = 0, at = 0; m < (size_t)n; m++) {
        int s = nd->rank_at[m];
        memcpy(rbase + roffs[s], my_back + at, rbytes[s]);
        at += rbytes[s];
    }
    return true;
}

bool shim_nodes_gatherv(shim_comm *sc, const char *sdata, size_t sbytes, char *rbase, const size_t *rbytes,
                        const size_t *roffs, int root)
{
    shim_nodes *nd = &sc->nodes;
    int n = sc->size, root_node = node_of(nd, root);
    bool is_root = sc->rank == root, on_root_node = nd->my_node == root_node;
    say_plan_once(sc, CORE_COLL_GATHERV, NULL);
    /* sizes: every local rank's; spans: the root's view of every node. */
    size_t *sizes;
    uint64_t *spans;
    sized_scratch(nd, &sizes, &spans);
    const char *mine = sdata ? sdata : rbase + roffs[root];
    size_t node_total = node_learn_sizes(nd, sdata ? sbytes : rbytes[root], sizes);
    size_t all = 0;
    if (is_root)
        all = root_node_spans(nd, rbytes, spans);
    if (on_root_node && !leads(nd) && is_root) {
        PMPI_Send(&all, 1, MPI_UINT64_T, 0, NODES_TAG, nd->node);
        PMPI_Send(spans, 2 * nd->count, MPI_UINT64_T, 0, NODES_TAG, nd->node);
    }
    if (on_root_node && leads(nd) && !is_root) {
        uint64_t got;
        PMPI_Recv(&got, 1, MPI_UINT64_T, local_of(nd, root), NODES_TAG, nd->node, MPI_STATUS_IGNORE);
        all = got;
        PMPI_Recv(spans, 2 * nd->count, MPI_UINT64_T, local_of(nd, root), NODES_TAG, nd->node, MPI_STATUS_IGNORE);
    }
    /* The leader of the root's node holds every block in node-major order;
     * the others their node's. */
    char *major = leads(nd) ? stage(nd, 0, (on_root_node ? all : node_total) + 1) : NULL;
    char *node_blocks = major && on_root_node ? major + spans[2 * root_node + 1] : major;
    node_gatherv_sized(nd, sizes, node_total, mine, node_blocks);
    if (leads(nd)) {
        if (on_root_node) {
            for (int i = 0; i < nd->count; i++)
                if (i != root_node)
                    recv_all(major + spans[2 * i + 1], spans[2 * i], i, nd->leaders);
        } else {
            send_all(major, node_total, root_node, nd->leaders);
        }
    }
    if (!on_root_node)
        return true;
    if (leads(nd) && !is_root)
        send_all(major, all, local_of(nd, root), nd->node);
    if (!is_root)
        return true;
    if (!leads(nd)) {
        major = stage(nd, 0, all + 1);
        recv_all(major, all, 0, nd->node);
    }
    from_node_order_v(nd, n, major, rbase, rbytes, roffs, sdata ? -1 : root);
    return true;
}

bool shim_nodes_scatterv(shim_comm *sc, const char *sbase, const size_t *sbytes, const size_t *soffs, char *rdata,
                         size_t rbytes, int root)
{
    shim_nodes *nd = &sc->nodes;
    int n = sc->size, root_node = node_of(nd, root);
    bool is_root = sc->rank == root, on_root_node = nd->my_node == root_node;
    say_plan_once(sc, CORE_COLL_SCATTERV, NULL);
    size_t *sizes;
    uint64_t *spans;
    sized_scratch(nd, &sizes, &spans);
    size_t node_total = node_learn_sizes(nd, rdata ? rbytes : sbytes[root], sizes);
    /* The root: every block in node-major order. */
    size_t all = 0;
    char *major = NULL;
    if (is_root) {
        all = root_node_spans(nd, sbytes, spans);
        major = stage(nd, 0, all + 1);
        to_node_order_v(nd, n, sbase, sbytes, soffs, major);
        if (!leads(nd)) {
            PMPI_Send(&all, 1, MPI_UINT64_T, 0, NODES_TAG, nd->node);
            PMPI_Send(spans, 2 * nd->count, MPI_UINT64_T, 0, NODES_TAG, nd->node);
            send_all(major, all, 0, nd->node);
        }
    } else if (on_root_node && leads(nd)) {
        uint64_t got;
        PMPI_Recv(&got, 1, MPI_UINT64_T, local_of(nd, root), NODES_TAG, nd->node, MPI_STATUS_IGNORE);
        all = got;
        PMPI_Recv(spans, 2 * nd->count, MPI_UINT64_T, local_of(nd, root), NODES_TAG, nd->node, MPI_STATUS_IGNORE);
        major = stage(nd, 0, all + 1);
        recv_all(major, all, local_of(nd, root), nd->node);
    }
    /* Each leader: its node's blocks. */
    const char *node_blocks = NULL;
    if (leads(nd)) {
        if (on_root_node) {
            for (int i = 0; i < nd->count; i++)
                if (i != root_node)
                    send_all(major + spans[2 * i + 1], spans[2 * i], i, nd->leaders);
            node_blocks = major + spans[2 * root_node + 1];
        } else {
            char *mine = stage(nd, 0, node_total + 1);
            recv_all(mine, node_total, root_node, nd->leaders);
            node_blocks = mine;
        }
    }
    /* An in-place root receives its own block into a spare place. */
    char *into = rdata ? rdata : stage(nd, 2, sbytes[root] + 1);
    node_scatterv_sized(nd, sizes, node_total, node_blocks, into);
    return true;
}
