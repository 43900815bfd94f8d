/* shoal tune --link: measures the link between nodes as the host MPI's
 * point-to-point crosses it, and adds it to the tuning file.
 *
 * Run with ranks on at least two nodes. The first rank of the first two
 * nodes ping-pong over sizes from 8 bytes to 4 MiB (latency and bandwidth
 * of one sender per node, what the leaders' steps of the two-level
 * collectives see); then every rank of the first node with its peer of the
 * same local rank on the second, all at once (what a node's link gives
 * when ppn ranks send). Rank 0 keeps the rest of the file (made by shoal
 * tune on one node) and writes it back with the link's figures. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_sys.h"
#include "measure.h"
#include "shim_nodes.h"
#include "tune_link.h"

#define LINK_SIZES 10
#define LINK_BATCHES 5
/* From this size on, a message's time is its bandwidth's (the fit's slope). */
#define LINK_BANDWIDTH_MIN (64 * 1024)
#define LINK_ALL_BYTES (1 << 20)

static const size_t link_sizes[LINK_SIZES] = {8, 64, 512, 4096, 16384, 65536, 262144, 1 << 20, 2 << 20, 4 << 20};

/* Round trips per batch: about a millisecond of small messages, fewer
 * large ones. */
static int trips_for(size_t bytes) { return bytes <= 4096 ? 200 : bytes <= 262144 ? 20 : 4; }

/* One-way time of `bytes` between the two ranks of pair (rank 0 sends
 * first): the median batch of round trips, halved. Both ranks return it. */
static double one_way_ns(MPI_Comm pair, int me, char *buf, size_t bytes)
{
    int trips = trips_for(bytes), peer = 1 - me;
    double batch[LINK_BATCHES];
    for (int b = -1; b < LINK_BATCHES; b++) { /* batch -1 warms up */
        PMPI_Barrier(pair);
        double t0 = PMPI_Wtime();
        for (int i = 0; i < trips; i++) {
            if (me == 0) {
                PMPI_Send(buf, (int)bytes, MPI_BYTE, peer, 0, pair);
                PMPI_Recv(buf, (int)bytes, MPI_BYTE, peer, 0, pair, MPI_STATUS_IGNORE);
            } else {
                PMPI_Recv(buf, (int)bytes, MPI_BYTE, peer, 0, pair, MPI_STATUS_IGNORE);
                PMPI_Send(buf, (int)bytes, MPI_BYTE, peer, 0, pair);
            }
        }
        if (b >= 0)
            batch[b] = (PMPI_Wtime() - t0) * 1e9 / trips / 2;
    }
    double mid = core_median(batch, LINK_BATCHES);
    PMPI_Bcast(&mid, 1, MPI_DOUBLE, 0, pair);
    return mid;
}

/* Least squares of t = latency + bytes / bw over the sizes from
 * LINK_BANDWIDTH_MIN; the latency is the smallest message's time. */
static void fit_link(const double *ns, double *latency_ns, double *bw)
{
    double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int i = 0; i < LINK_SIZES; i++) {
        if (link_sizes[i] < LINK_BANDWIDTH_MIN)
            continue;
        double x = (double)link_sizes[i];
        n++, sx += x, sy += ns[i], sxx += x * x, sxy += x * ns[i];
    }
    double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
    *latency_ns = ns[0];
    /* A slope that noise made flat or negative: the largest message's rate. */
    *bw = slope > 0 ? 1 / slope : (double)link_sizes[LINK_SIZES - 1] / ns[LINK_SIZES - 1];
}

void tune_link(plan_model *m)
{
    int rank;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm node = shim_node_part(MPI_COMM_WORLD), leaders;
    if (node == MPI_COMM_NULL)
        measure_fail("tune --link: MPI_COMM_WORLD cannot be split by node");
    int local, node_size, node_index = 0, nodes = 0;
    PMPI_Comm_rank(node, &local);
    PMPI_Comm_size(node, &node_size);
    PMPI_Comm_split(MPI_COMM_WORLD, local == 0 ? 0 : MPI_UNDEFINED, rank, &leaders);
    if (local == 0) {
        PMPI_Comm_rank(leaders, &node_index);
        PMPI_Comm_size(leaders, &nodes);
        PMPI_Comm_free(&leaders);
    }
    PMPI_Bcast(&node_index, 1, MPI_INT, 0, node);
    PMPI_Bcast(&nodes, 1, MPI_INT, 0, node);
    PMPI_Comm_free(&node);
    if (nodes < 2)
        measure_fail_all("tune --link: every rank is on one node; run it with ranks on at least two nodes "
                         "(mpirun --host a,b or --map-by node)");

    /* Pairs: local rank i of node 0 with local rank i of node 1. */
    int sizes[2] = {node_index == 0 ? node_size : 0, node_index == 1 ? node_size : 0}, both[2];
    PMPI_Allreduce(sizes, both, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    int pairs = both[0] < both[1] ? both[0] : both[1];
    bool paired = node_index < 2 && local < pairs;
    MPI_Comm pair;
    PMPI_Comm_split(MPI_COMM_WORLD, paired ? local : MPI_UNDEFINED, node_index, &pair);
    char *buf = calloc(1, link_sizes[LINK_SIZES - 1]);
    if (!buf)
        measure_fail("tune --link: out of memory");

    double ns[LINK_SIZES] = {0}, all_ns = 0;
    if (paired && local == 0)
        for (int i = 0; i < LINK_SIZES; i++)
            ns[i] = one_way_ns(pair, node_index, buf, link_sizes[i]);
    PMPI_Barrier(MPI_COMM_WORLD);
    if (paired)
        all_ns = one_way_ns(pair, node_index, buf, LINK_ALL_BYTES);
    double slowest = 0;
    PMPI_Allreduce(&all_ns, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    /* Rank 0 leads the first pair: it holds the sweep. */
    PMPI_Bcast(ns, LINK_SIZES, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (pair != MPI_COMM_NULL)
        PMPI_Comm_free(&pair);
    free(buf);

    fit_link(ns, &m->link_latency_ns, &m->link_bw);
    m->link_bw_node = (double)pairs * LINK_ALL_BYTES / slowest;
    if (rank == 0) {
        printf("  link  one sender a node: latency %.2f us, %.2f GB/s (4 MiB in %.0f us)\n", m->link_latency_ns / 1e3,
               m->link_bw, ns[LINK_SIZES - 1] / 1e3);
        printf("  link  %d senders a node at once: %.2f GB/s a node (1 MiB each in %.0f us)\n", pairs, m->link_bw_node,
               slowest / 1e3);
    }
}
