/* shoal tune --link: measures the link between nodes as the host MPI's
 * point-to-point crosses it, and adds it to the tuning file.
 *
 * Run with ranks on at least two nodes. The first rank of the first two
 * nodes ping-pong over sizes from 8 bytes to 4 MiB (latency and bandwidth
 * of one sender per node, what the leaders' steps of the two-level
 * collectives see); then every rank of the first node with its peer of the
 * same local rank on the second, all at once (what a node's link gives
 * when ppn ranks send). Then, with those figures in use, every collective
 * the node routes price, on every rank, from 4 B to 4 MiB a rank: the host
 * MPI's flat run and shoal's two levels alternately, so that a job on this
 * layout routes each call by what was timed rather than by prices (the
 * flat price models another library's algorithms, and on some links it is
 * far off). Rank 0 keeps the rest of the file (made by shoal tune on one
 * node) and writes it back with the link's figures. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_config.h"
#include "core_sys.h"
#include "measure.h"
#include "plan.h"
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

/* ---- the collectives, both ways, on this layout ---- */

/* What the node routes price (shim_nodes.c), each timed here. */
static const core_coll timed_colls[] = {CORE_COLL_BARRIER, CORE_COLL_BCAST,   CORE_COLL_REDUCE,    CORE_COLL_ALLREDUCE,
                                        CORE_COLL_GATHER,  CORE_COLL_SCATTER, CORE_COLL_ALLGATHER, CORE_COLL_ALLTOALL,
                                        CORE_COLL_SCAN,    CORE_COLL_EXSCAN};
#define CALLS_FIRST_CLASS 2 /* 4 B: a float */
#define CALLS_LAST_CLASS 22 /* 4 MiB */
#define CALLS_ROUNDS 5
#define CALLS_QUICK_ROUNDS 3
#define CALLS_QUICK_STRIDE 4 /* --quick: classes 4 B, 64 B, 1 KiB, ... 4 MiB */
/* Larger classes of a collective are not timed once its flat run takes
 * this long a call: they are as bandwidth-bound as this one. */
#define CALLS_LONGEST_NS 20e6
/* Nor where a rank's buffers would exceed this (two of them a rank, every
 * rank of a node at once: 8 GiB on a node of 64 ranks). */
#define CALLS_MAX_BUFFER ((size_t)64 << 20)
/* Two levels are taken where they were timed at least this much faster
 * than the flat run: a tie goes to the host MPI. */
#define CALLS_TWO_LEVELS_BELOW 0.97
/* Each path's calls of a round last about this long. */
#define CALLS_ROUND_NS 2e6

/* The host path calls PMPI_<fn>, shoal's MPI_<fn>, which shoal intercepts
 * (as shoal-bench does). */
#define ON_PATH(host, fn, ...) ((host) ? P##fn(__VA_ARGS__) : fn(__VA_ARGS__))

static void call_once(core_coll c, bool host, size_t bytes, char *s, char *r, MPI_Comm comm)
{
    int n = (int)bytes, floats = (int)(bytes / sizeof(float));
    switch (c) {
    case CORE_COLL_BARRIER: ON_PATH(host, MPI_Barrier, comm); break;
    case CORE_COLL_BCAST: ON_PATH(host, MPI_Bcast, s, n, MPI_BYTE, 0, comm); break;
    case CORE_COLL_REDUCE: ON_PATH(host, MPI_Reduce, s, r, floats, MPI_FLOAT, MPI_SUM, 0, comm); break;
    case CORE_COLL_ALLREDUCE: ON_PATH(host, MPI_Allreduce, s, r, floats, MPI_FLOAT, MPI_SUM, comm); break;
    case CORE_COLL_GATHER: ON_PATH(host, MPI_Gather, s, n, MPI_BYTE, r, n, MPI_BYTE, 0, comm); break;
    case CORE_COLL_SCATTER: ON_PATH(host, MPI_Scatter, s, n, MPI_BYTE, r, n, MPI_BYTE, 0, comm); break;
    case CORE_COLL_ALLGATHER: ON_PATH(host, MPI_Allgather, s, n, MPI_BYTE, r, n, MPI_BYTE, comm); break;
    case CORE_COLL_ALLTOALL: ON_PATH(host, MPI_Alltoall, s, n, MPI_BYTE, r, n, MPI_BYTE, comm); break;
    case CORE_COLL_SCAN: ON_PATH(host, MPI_Scan, s, r, floats, MPI_FLOAT, MPI_SUM, comm); break;
    case CORE_COLL_EXSCAN: ON_PATH(host, MPI_Exscan, s, r, floats, MPI_FLOAT, MPI_SUM, comm); break;
    default: break;
    }
}

/* One path's mean time a call over `calls` calls, each after a barrier
 * (as OSU times them), averaged over the ranks. */
static double path_ns(core_coll c, bool host, size_t bytes, int calls, char *s, char *r, MPI_Comm comm)
{
    double sum = 0, all = 0;
    int size;
    PMPI_Comm_size(comm, &size);
    for (int i = 0; i < calls; i++) {
        PMPI_Barrier(comm);
        double t0 = PMPI_Wtime();
        call_once(c, host, bytes, s, r, comm);
        sum += PMPI_Wtime() - t0;
    }
    sum = sum * 1e9 / calls;
    PMPI_Allreduce(&sum, &all, 1, MPI_DOUBLE, MPI_SUM, comm);
    return all / size;
}

/* Times c both ways at every size class on comm (shoal's path in two
 * levels) into timed (one letter a class, as plan_model's link_timed);
 * prints the letters timed. */
static void time_calls(core_coll c, MPI_Comm comm, char *s, char *r, char *timed, int rank, bool quick)
{
    int size;
    PMPI_Comm_size(comm, &size);
    memset(timed, '-', PLAN_LINK_CLASSES);
    timed[PLAN_LINK_CLASSES] = 0;
    int first = c == CORE_COLL_BARRIER ? 0 : CALLS_FIRST_CLASS, last = c == CORE_COLL_BARRIER ? 0 : CALLS_LAST_CLASS;
    double last_ns = 10e3;
    int rounds = quick ? CALLS_QUICK_ROUNDS : CALLS_ROUNDS;
    for (int k = first; k <= last; k += quick ? CALLS_QUICK_STRIDE : 1) {
        size_t bytes = c == CORE_COLL_BARRIER ? 0 : (size_t)1 << k;
        bool rows = c != CORE_COLL_BCAST && c != CORE_COLL_REDUCE && c != CORE_COLL_ALLREDUCE && c != CORE_COLL_SCAN &&
                    c != CORE_COLL_EXSCAN;
        if ((rows && bytes * (size_t)size > CALLS_MAX_BUFFER) || last_ns > CALLS_LONGEST_NS ||
            (c == CORE_COLL_ALLTOALL && bytes > PLAN_NODES_ALLTOALL_MAX_BLOCK))
            break;
        int calls = (int)(CALLS_ROUND_NS / last_ns);
        int most = quick ? 10 : 50;
        calls = calls < 1 ? 1 : calls > most ? most : calls;
        PMPI_Bcast(&calls, 1, MPI_INT, 0, comm);
        double ns[2][CALLS_ROUNDS];
        path_ns(c, true, bytes, 2, s, r, comm); /* warm-up, both */
        path_ns(c, false, bytes, 2, s, r, comm);
        for (int round = 0; round < rounds; round++)
            for (int i = 0; i < 2; i++) {
                bool host = (round + i) % 2 == 0; /* each path first in turn */
                ns[host ? 0 : 1][round] = path_ns(c, host, bytes, calls, s, r, comm);
            }
        double host_ns = core_median(ns[0], rounds), two_ns = core_median(ns[1], rounds);
        timed[k] = two_ns < host_ns * CALLS_TWO_LEVELS_BELOW ? 's' : 'h';
        last_ns = host_ns;
    }
    if (rank == 0) {
        int from = first;
        while (from < PLAN_LINK_CLASSES && timed[from] == '-')
            from++;
        int to = PLAN_LINK_CLASSES - 1;
        while (to > from && timed[to] == '-')
            to--;
        if (c == CORE_COLL_BARRIER)
            printf("    %-10s %c\n", core_coll_name(c), timed[0]);
        else
            printf("    %-10s %.*s  (%zu B..%zu KiB)\n", core_coll_name(c), to - from + 1, timed + from,
                   (size_t)1 << from, ((size_t)1 << to) >> 10);
    }
}

/* Times every priced collective both ways on MPI_COMM_WORLD's layout,
 * with m's figures in use, into m's link_timed. */
static void time_layout(plan_model *m, int node_index, int node_size, int nodes, int rank, bool quick)
{
    int *node_sizes = malloc((size_t)nodes * sizeof *node_sizes);
    int world;
    PMPI_Comm_size(MPI_COMM_WORLD, &world);
    int *all = malloc(2 * (size_t)world * sizeof *all), mine[2] = {node_index, node_size};
    if (!node_sizes || !all)
        measure_fail("tune --link: out of memory");
    PMPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < world; i++)
        node_sizes[all[2 * i]] = all[2 * i + 1];
    free(all);
    int most = 0;
    for (int i = 0; i < nodes; i++)
        most = node_sizes[i] > most ? node_sizes[i] : most;
    bool named = plan_node_layout(m->link_layout, sizeof m->link_layout, node_sizes, nodes);
    free(node_sizes);
    memset(m->link_timed, 0, sizeof m->link_timed);
    if (most == 1 || !named) {
        /* Nothing runs in two levels on the first; the second no job could
         * be told apart from another. */
        m->link_layout[0] = 0;
        if (rank == 0)
            printf("  calls: %s; none timed\n", most == 1 ? "every node holds one rank, so every call is the host MPI's"
                                                          : "the layout's name is too long to keep");
        return;
    }

    /* Shoal's path in two levels at every size (SHOAL_ACROSS_NODES=two),
     * taken over at the first call, with this run's link figures. */
    char *was_across = getenv("SHOAL_ACROSS_NODES"), *was_warmup = getenv("SHOAL_COMM_WARMUP");
    was_across = was_across ? strdup(was_across) : NULL;
    was_warmup = was_warmup ? strdup(was_warmup) : NULL;
    setenv("SHOAL_ACROSS_NODES", "two", 1);
    setenv("SHOAL_COMM_WARMUP", "0", 1);
    core_config_reload();
    plan_model_use(m);
    size_t largest = (size_t)1 << CALLS_LAST_CLASS;
    size_t buffer = largest * (size_t)world < CALLS_MAX_BUFFER ? largest * (size_t)world : CALLS_MAX_BUFFER;
    buffer = buffer > largest ? buffer : largest;
    char *s = malloc(buffer), *r = malloc(buffer);
    if (!s || !r)
        measure_fail("tune --link: out of memory for %zu bytes", buffer);
    memset(s, 1, buffer);
    memset(r, 0, buffer);
    MPI_Comm comm;
    PMPI_Comm_dup(MPI_COMM_WORLD, &comm);
    if (rank == 0)
        printf("  calls on this layout (%s), each class 'h' where the host MPI's flat run was as fast or faster, 's'"
               " where shoal's two levels were:\n",
               m->link_layout);
    for (size_t i = 0; i < sizeof timed_colls / sizeof timed_colls[0]; i++) {
        time_calls(timed_colls[i], comm, s, r, m->link_timed[timed_colls[i]], rank, quick);
        fflush(stdout);
    }
    MPI_Comm_free(&comm);
    free(s);
    free(r);
    if (was_across)
        setenv("SHOAL_ACROSS_NODES", was_across, 1);
    else
        unsetenv("SHOAL_ACROSS_NODES");
    if (was_warmup)
        setenv("SHOAL_COMM_WARMUP", was_warmup, 1);
    else
        unsetenv("SHOAL_COMM_WARMUP");
    free(was_across);
    free(was_warmup);
    core_config_reload();
    plan_model_use(m);
}

void tune_link(plan_model *m, bool quick)
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
        fflush(stdout);
    }
    time_layout(m, node_index, node_size, nodes, rank, quick);
}
