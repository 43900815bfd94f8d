/* shoal explain: what the planner would do with one call, and why. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core_sys.h"
#include "plan.h"
#include "shoal_cli.h"

/* What choosing q costs the library on a plan-cache miss: the median of a
 * few hundred choices, in us. */
static double planning_us(const plan_query *q)
{
    enum { TIMES = 201 };
    double us[TIMES];
    for (int i = 0; i < TIMES; i++) {
        uint64_t t0 = core_now_ns();
        volatile plan_algo a = plan_choose(q).algo;
        (void)a;
        us[i] = (double)(core_now_ns() - t0) / 1e3;
    }
    return core_median(us, TIMES);
}

/* Whether the MPI layer leaves collective c of `bytes` a rank to the host
 * whatever the plan: a scan above PLAN_SCAN_MAX_BYTES. */
static bool scan_left_to_host(int c, size_t bytes)
{
    return (c == CORE_COLL_SCAN || c == CORE_COLL_EXSCAN) && bytes > PLAN_SCAN_MAX_BYTES;
}

/* The host MPI's own run of q: where shoal tune measured it, and where the
 * MPI layer leaves it to the host. */
static void host_line(const plan_query *q)
{
    if (scan_left_to_host(q->coll, q->bytes))
        printf("the host MPI's own: the MPI layer leaves scans above %d KiB a rank to it (on inputs still in cache "
               "the host's single copy ran faster)\n",
               PLAN_SCAN_MAX_BYTES / 1024);
    plan_choice ch = plan_choose(q);
    size_t sized = plan_size_class(q->bytes);
    double shoal_repeat, host_repeat = q->n > 1 ? plan_host_repeat_ns(q->coll, sized, q->n, &shoal_repeat) : -1;
    bool on_repeat = ch.host_repeat_ns > 0; /* the repeat's times decided */
    /* A repeat that may be fresh or unchanged weighs both kinds of input. */
    bool both = on_repeat && q->inputs != PLAN_INPUTS_UNCHANGED && ch.host_ns > 0;
    const char *verdict = !ch.host_faster ? (both ? ": over both kinds of input shoal's worse ratio is the smaller, "
                                                    "so shoal runs it"
                                                  : "")
                          : both          ? ": over both kinds of input the host's worse ratio is the smaller by the "
                                            "guard band, so the host runs it"
                                          : ": faster by the guard band, so the host runs it";
    if (ch.host_ns > 0)
        printf("the host MPI's own: measured %.3f us on fresh inputs (shoal tune)%s\n", ch.host_ns / 1e3,
               on_repeat ? "" : verdict);
    if (host_repeat > 0) {
        printf("the host MPI's own on unchanged inputs (the same buffers call after call): measured %.3f us",
               host_repeat / 1e3);
        if (shoal_repeat > 0)
            printf(", shoal's choice for a repeat %.3f", shoal_repeat / 1e3);
        printf(" (shoal tune%s)%s\n",
               on_repeat                        ? ""
               : q->inputs == PLAN_INPUTS_FRESH ? "; it decides a repeat: --inputs repeat"
                                                : "; not for this repeat: a reduction on more than two ranks keeps "
                                                  "its first call's grouping",
               on_repeat ? verdict : "");
    }
}

static int fail(const char *msg, const char *arg)
{
    fprintf(stderr, "shoal explain: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
    return 2;
}

/* ---- the whole grid: every collective, size, team and lane set ----
 *
 * One line per query: the choice plan_choose makes and every candidate
 * plan_candidates prices, with its modelled time. Printed on a model whose
 * cache size is fixed (not this machine's), so the output depends only on
 * the planner and the figures: tests compare it with a recorded copy to
 * show that a change of the code changed no choice and no modelled time. */

static const size_t grid_sizes[] = {0, 1, 8, 100, 1024, 4096, 16384, 65536, 100000, 262144, 1048576, 4194304, 16777216};
static const int grid_ranks[] = {1, 2, 3, 4, 8, 16};
static const char *const grid_lane_sets[] = {"cells,cma,host", "cells", "cells,cma", "cells,host"};
#define GRID_CACHE_BYTES (1024.0 * 1024)

static void grid_line(const plan_query *q, const char *lanes)
{
    printf("%s %zu n%d ppn%d cores%d %s w%zu |", core_coll_name(q->coll), q->bytes, q->n, q->ppn, q->cores, lanes,
           q->window);
    plan_choice ch = plan_choose(q);
    printf(" %s/%s", plan_algo_name(ch.algo), plan_lanes_label(ch.lane, ch.stripe));
    if (ch.stripe != LANE_COUNT)
        printf(" stripe %.6g", ch.stripe_share);
    if (ch.root_share > 0)
        printf(" root %.6g", ch.root_share);
    if (ch.algo == PLAN_BCAST_TREE)
        printf(" k%d c%zu", ch.fanout, ch.chunk);
    if (ch.eager_limit)
        printf(" eager %zu large %s%s", ch.eager_limit, plan_lane_name(ch.large_lane),
               ch.large_algo == PLAN_MOVE_PUSH ? " by push" : "");
    printf(" %.6g |", ch.model_ns);
    plan_candidate c[64];
    int k = plan_candidates(q, c, 64);
    for (int i = 0; i < k; i++) {
        printf(" %s/%s", plan_algo_name(c[i].algo), plan_lanes_label(c[i].lane, c[i].stripe));
        if (c[i].algo == PLAN_BCAST_TREE)
            printf("/k%d/c%zu", c[i].fanout, c[i].chunk);
        printf("=%.6g*%.6g%s", c[i].formula_ns, c[i].factor, c[i].excluded ? "x" : "");
    }
    printf("\n");
}

static int explain_grid(const char *tuning)
{
    plan_model m;
    plan_model_defaults(&m);
    if (tuning) {
        char why[256];
        if (plan_model_load(&m, tuning, false, why, sizeof why) != 0)
            return fail(why, tuning);
    }
    m.cache_bytes = GRID_CACHE_BYTES;
    plan_model_use(&m);
    printf("# shoal explain --grid%s%s: collective bytes ranks ppn cores lanes window | choice | candidates\n",
           tuning ? " --tuning " : "", tuning ? "(file)" : "");
    for (int c = 0; c < CORE_COLL_COUNT; c++)
        for (size_t s = 0; s < sizeof grid_sizes / sizeof *grid_sizes; s++)
            for (size_t r = 0; r < sizeof grid_ranks / sizeof *grid_ranks; r++)
                for (size_t l = 0; l < sizeof grid_lane_sets / sizeof *grid_lane_sets; l++) {
                    int n = grid_ranks[r];
                    /* every rank with a core; oversubscribed on 2; twice the team on the node */
                    const int ppn_cores[3][2] = {{n, 64}, {n, 2}, {2 * n, 16}};
                    for (int pc = 0; pc < 3; pc++) {
                        plan_query q = {.coll = (core_coll)c,
                                        .bytes = grid_sizes[s],
                                        .n = n,
                                        .ppn = ppn_cores[pc][0],
                                        .cores = ppn_cores[pc][1],
                                        .window = 128 * 1024};
                        for (int lane = 0; lane < LANE_COUNT; lane++)
                            q.usable[lane] = strstr(grid_lane_sets[l], plan_lane_name((lane_id)lane)) != NULL;
                        grid_line(&q, grid_lane_sets[l]);
                    }
                }
    return 0;
}

/* ---- a communicator spanning nodes: the steps, and each node step's plan ---- */

static void node_step_line(const char *when, core_coll c, size_t bytes, const plan_query *node)
{
    if (c == CORE_COLL_COUNT || node->n < 2) {
        printf("  %-8s -\n", when);
        return;
    }
    plan_query q = *node;
    q.coll = c;
    q.bytes = bytes;
    /* The v-steps are planned as their even forms. */
    if (c == CORE_COLL_GATHERV)
        q.coll = CORE_COLL_GATHER;
    if (c == CORE_COLL_SCATTERV)
        q.coll = CORE_COLL_SCATTER;
    plan_choice ch = plan_choose(&q);
    if (scan_left_to_host(c, bytes))
        printf("  %-8s %s on the node's %d ranks: the host MPI's (above %d KiB a rank)\n", when, core_coll_name(c),
               node->n, PLAN_SCAN_MAX_BYTES / 1024);
    else
        printf("  %-8s %s on the node's %d ranks: %s over %s, modelled %.3f us\n", when, core_coll_name(c), node->n,
               plan_algo_name(ch.algo), plan_lanes_label(ch.lane, ch.stripe), ch.model_ns / 1e3);
}

/* Every segment size of a long bcast, reduce or allreduce, priced. */
static void node_segments_table(core_coll c, size_t bytes, int nodes, const plan_query *node)
{
    plan_node_candidate k[48];
    int count = plan_node_candidates(c, bytes, nodes, node, k, 48);
    size_t chosen = plan_node_segment(c, bytes, nodes, node);
    bool overlap = node->ppn <= node->cores;
    printf("segments, modelled per segment and in all (%s):\n",
           overlap ? "the steps of neighbouring segments overlap"
                   : "ranks outnumber cores: segments run one after another");
    printf("  %10s %8s %10s %10s %10s %11s\n", "bytes", "count", "first us", "between us", "last us", "total us");
    const char *mark = core_config_get()->node_segment       ? "  <- forced (SHOAL_NODE_SEGMENT)"
                       : plan_model_get()->link_bw_node <= 0 ? "  <- chosen (the link is a guess: whole)"
                                                             : "  <- chosen";
    bool listed = false;
    for (int i = 0; i < count; i++) {
        listed = listed || k[i].segment == chosen;
        printf("  %10zu %8zu %10.2f %10.2f %10.2f %11.2f%s\n", k[i].segment, k[i].segments, k[i].first_ns / 1e3,
               k[i].between_ns / 1e3, k[i].last_ns / 1e3, k[i].ns / 1e3, k[i].segment == chosen ? mark : "");
    }
    if (!listed)
        printf("  %10zu %8zu %10s %10s %10s %11s%s\n", chosen, (bytes + chosen - 1) / chosen, "", "", "", "", mark);
}

static int explain_nodes(int argc, char **argv, int coll, int nodes)
{
    size_t bytes;
    int ppn = 0;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int cores = online > 0 ? (int)online : 1;
    if (coll < 0)
        return fail("not a collective", argv[1]);
    if (!core_parse_size(argv[2], &bytes))
        return fail("not a size", argv[2]);
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "--nodes") && i + 1 < argc)
            i++;
        else if (!strcmp(argv[i], "--ppn") && i + 1 < argc)
            ppn = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--cores") && i + 1 < argc)
            cores = atoi(argv[++i]);
        else
            return fail("with --nodes, only --ppn and --cores", argv[i]);
    }
    if (nodes < 1 || ppn < 1 || cores < 1)
        return fail("--nodes, --ppn and --cores must be at least 1", NULL);
    printf("%s of %zu bytes on %d nodes of %d ranks (%d cores a node)\n", argv[1], bytes, nodes, ppn, cores);
    const plan_node_steps *steps = plan_node_steps_for((core_coll)coll, bytes);
    if (nodes == 1) {
        printf("one node: shoal explain %s %s -np %d\n", argv[1], argv[2], ppn);
        return 0;
    }
    if (ppn == 1 || !steps || core_config_get()->across_nodes == CORE_ACROSS_NODES_OFF) {
        printf("the host MPI runs it whole: %s\n", ppn == 1 ? "one rank per node"
                                                   : !steps ? "no two-level form of this call at this size"
                                                            : "SHOAL_ACROSS_NODES=0");
        return 0;
    }
    const plan_model *m = plan_model_get();
    plan_query node = {.n = ppn, .ppn = ppn, .cores = cores, .window = 128 * 1024, .usable = {true, true, true}};
    printf("two levels: %s\n", steps->text);
    /* What each node step moves per rank: alltoall's rows and allgather's
     * whole result are every rank's blocks. */
    size_t all = bytes * (size_t)nodes * (size_t)ppn;
    bool rows = coll == CORE_COLL_ALLTOALL || coll == CORE_COLL_ALLTOALLV,
         whole = rows || coll == CORE_COLL_ALLGATHER || coll == CORE_COLL_ALLGATHERV;
    node_step_line("first", steps->first, rows ? all : bytes, &node);
    char every[64] = "";
    if (m->link_bw_node > 0)
        snprintf(every, sizeof every, "; %.2f GB/s a node while all its ranks send", m->link_bw_node);
    printf("  %-8s %s by the host MPI on %d %s (link: %.2f us a message + %.3f ns a byte%s; %s)\n", "between",
           steps->between, nodes, steps->by ? steps->by : "leaders", m->link_latency_ns / 1e3, 1 / m->link_bw, every,
           m->link_bw_node > 0 ? m->source : "built-in guess, shoal tune --link measures it");
    node_step_line("last", steps->last, whole ? all : bytes, &node);
    if (plan_node_cuts((core_coll)coll))
        node_segments_table((core_coll)coll, bytes, nodes, &node);
    int *node_sizes = malloc((size_t)nodes * sizeof *node_sizes);
    if (!node_sizes)
        return fail("out of memory", NULL);
    for (int i = 0; i < nodes; i++)
        node_sizes[i] = ppn;
    char layout[sizeof plan_model_get()->link_layout];
    plan_node_layout(layout, sizeof layout, node_sizes, nodes);
    free(node_sizes);
    plan_node_route r = plan_node_choose((core_coll)coll, bytes, plan_node_layout_timed(layout), nodes, &node);
    if (r.flat_ns < 0) {
        printf("runs in two levels (no model of the host MPI's flat run of it)\n");
        return 0;
    }
    const plan_node_steps *rails = plan_node_rails_for((core_coll)coll);
    if (r.rails_ns >= 0 && rails) {
        size_t slice = (bytes + (size_t)ppn - 1) / (size_t)ppn;
        printf("or %s:\n", rails->text);
        node_step_line("first", rails->first, slice, &node);
        printf("  %-8s %s of %zu bytes by the host MPI on each of %d rails of %d ranks, %s\n", "between",
               rails->between, slice, ppn, nodes,
               ppn > cores ? "one after another (ranks share cores)" : "all at once");
        node_step_line("last", rails->last, slice, &node);
        const char *setting = coll == CORE_COLL_BCAST    ? "SHOAL_NODE_BCAST"
                              : coll == CORE_COLL_REDUCE ? "SHOAL_NODE_REDUCE"
                                                         : "SHOAL_NODE_ALLREDUCE";
        core_node_form forced = plan_node_form_asked((core_coll)coll);
        char asked[64] = "";
        if (forced != CORE_NODE_FORM_AUTO) {
            char word[16]; /* the setting's value as `shoal settings` prints it */
            core_setting_format(core_setting_find(setting), core_config_get(), word, sizeof word);
            snprintf(asked, sizeof asked, " (%s=%s)", setting, word);
        }
        printf("the leaders' form modelled %.2f us, rails %.2f us: %s%s\n", r.two_level_ns / 1e3, r.rails_ns / 1e3,
               forced == CORE_NODE_FORM_RAILS     ? "rails"
               : forced == CORE_NODE_FORM_LEADERS ? "the leaders'"
               : m->link_bw_node <= 0             ? "the leaders' (the link is a guess)"
               : r.rails                          ? "rails"
                                                  : "the leaders'",
               asked);
    }
    printf("two levels modelled %.2f us; the host MPI flat on all %d ranks %.2f us (x%.2f guard band): %s%s\n",
           (r.rails ? r.rails_ns : r.two_level_ns) / 1e3, nodes * ppn, r.flat_ns / 1e3, PLAN_NODE_FLAT_GUARD, r.why,
           r.rails && !r.flat ? ", on rails" : "");
    return 0;
}

int explain_main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "--grid")) {
        if (argc == 2)
            return explain_grid(NULL);
        if (argc == 4 && !strcmp(argv[2], "--tuning"))
            return explain_grid(argv[3]);
        return fail("usage: shoal explain --grid [--tuning FILE]", NULL);
    }
    if (argc < 3)
        return fail(
            "usage: shoal explain COLLECTIVE SIZE [-np N] [--ppn P] [--cores C] [--lanes LIST] [--window BYTES] "
            "[--inputs fresh|unchanged|repeat] | COLLECTIVE SIZE --nodes N --ppn P [--cores C]",
            NULL);
    int coll = core_coll_from_name(argv[1]);
    for (int i = 3; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--nodes"))
            return explain_nodes(argc, argv, coll, atoi(argv[i + 1]));
    if (coll < 0 || coll == CORE_COLL_GATHERV || coll == CORE_COLL_SCATTERV || coll == CORE_COLL_ALLGATHERV ||
        coll == CORE_COLL_ALLTOALLV)
        return fail("not a collective shoal plans by size (barrier bcast reduce allreduce gather allgather scatter "
                    "alltoall reduce_scatter_block)",
                    argv[1]);
    size_t bytes;
    if (!core_parse_size(argv[2], &bytes))
        return fail("not a size", argv[2]);
    plan_query q = {
        .coll = (core_coll)coll, .bytes = bytes, .n = 2, .window = 128 * 1024, .usable = {true, true, true}};
    int ppn = 0;
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "-np") && i + 1 < argc) {
            q.n = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--ppn") && i + 1 < argc) {
            ppn = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--cores") && i + 1 < argc) {
            q.cores = atoi(argv[++i]);
            if (q.cores < 1)
                return fail("--cores must be at least 1", argv[i]);
        } else if (!strcmp(argv[i], "--window") && i + 1 < argc) {
            if (!core_parse_size(argv[++i], &q.window))
                return fail("--window needs a size", argv[i]);
        } else if (!strcmp(argv[i], "--inputs") && i + 1 < argc) {
            const char *v = argv[++i];
            if (!strcmp(v, "fresh"))
                q.inputs = PLAN_INPUTS_FRESH;
            else if (!strcmp(v, "unchanged"))
                q.inputs = PLAN_INPUTS_UNCHANGED;
            else if (!strcmp(v, "repeat"))
                q.inputs = PLAN_INPUTS_EITHER;
            else
                return fail("--inputs is fresh, unchanged or repeat", v);
        } else if (!strcmp(argv[i], "--lanes") && i + 1 < argc) {
            const char *list = argv[++i];
            for (int l = 0; l < LANE_COUNT; l++)
                q.usable[l] = strstr(list, plan_lane_name((lane_id)l)) != NULL;
        } else {
            return fail("unknown option", argv[i]);
        }
    }
    if (q.n < 1)
        return fail("-np must be at least 1", NULL);
    q.ppn = ppn > q.n ? ppn : q.n;
    if (!q.cores) {
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        q.cores = online > 0 ? (int)online : 1;
    }

    const plan_model *m = plan_model_get();
    printf("%s of %zu bytes on %d ranks (%d processes of the node moving data at once, on %d cores%s)\n", argv[1],
           bytes, q.n, q.ppn, q.cores, q.ppn > q.cores ? ": oversubscribed" : "");
    printf("figures: %s%s%s\n", m->source, m->machine[0] ? ", measured on " : "", m->machine);
    const core_config *cfg = core_config_get();
    if (!m->machine[0] && cfg->probe) /* the job's start-up probe replaces some of these */
        printf("  (a job without a tuning file measures its node's lanes at MPI_Init and may choose otherwise;\n"
               "   `shoal tune` writes figures that it and shoal explain both read)\n");
    if (cfg->lanes[0] || cfg->algo[0])
        printf("forced: SHOAL_LANES=%s SHOAL_ALGO=%s\n", cfg->lanes, cfg->algo);

    plan_candidate c[64];
    int k = plan_candidates(&q, c, 64);
    if (k == 0) {
        printf("no candidate: no usable lane\n");
        return 1;
    }
    bool either = c[0].regret > 0; /* a repeat, priced on both kinds of input */
    if (q.inputs != PLAN_INPUTS_FRESH)
        printf("inputs: %s\n", either ? "a repeat: fresh or unchanged, the least regret is chosen"
                               : q.inputs == PLAN_INPUTS_UNCHANGED ? "unchanged since the last call"
                                                                   : "fresh");
    printf("\n  %-10s %-8s %6s %9s %13s %8s %13s%s\n", "algorithm", "lane", "fanout", "chunk", "formula (us)", "factor",
           "modelled (us)", either ? " unchanged (us)   regret" : "");
    for (int i = 0; i < k; i++) {
        bool tree = c[i].algo == PLAN_BCAST_TREE;
        char fanout[16] = "", chunk[32] = "";
        if (tree) {
            snprintf(fanout, sizeof fanout, "%d", c[i].fanout);
            snprintf(chunk, sizeof chunk, "%zuK", c[i].chunk >> 10);
        } else if (c[i].algo == PLAN_REDUCE_FLAT && c[i].chunk == PLAN_READ_WHOLE) {
            snprintf(chunk, sizeof chunk, "whole"); /* the root reads the other's input at once */
        } else if (c[i].stripe != LANE_COUNT) {     /* the striped lane's share */
            snprintf(chunk, sizeof chunk, "%s %.0f%%", plan_lane_name(c[i].stripe), 100 * c[i].stripe_share);
        } else if (c[i].root_share > 0) { /* what the root moves of each other block */
            snprintf(chunk, sizeof chunk, "root %.0f%%", 100 * c[i].root_share);
        }
        char both[40] = "";
        if (either)
            snprintf(both, sizeof both, " %14.3f %8.2f", c[i].unchanged_ns / 1e3, c[i].regret);
        printf("%c %-10s %-8s %6s %9s %13.3f %8.3f %13.3f%s%s%s\n", i == 0 && !c[i].excluded ? '*' : ' ',
               plan_algo_name(c[i].algo), plan_lanes_label(c[i].lane, c[i].stripe), fanout, chunk,
               c[i].formula_ns / 1e3, c[i].factor, c[i].ns / 1e3, both, c[i].excluded ? "   excluded by " : "",
               c[i].excluded ? c[i].excluded : "");
    }
    if (c[0].excluded) {
        printf("\nevery candidate is excluded\n");
        return 1;
    }
    int next = 1;
    while (next < k && (c[next].excluded ||
                        (c[next].algo == c[0].algo && c[next].lane == c[0].lane && c[next].stripe == c[0].stripe)))
        next++;
    /* The guard band's pick (single copy where blocks only move) may be
     * dearer than a staged candidate it passed over. */
    int passed = -1;
    for (int i = 1; i < k && passed < 0; i++)
        if (!c[i].excluded && (either ? c[i].regret < c[0].regret : c[i].ns < c[0].ns))
            passed = i;
    if (passed >= 0) {
        printf("\nchosen: %s over %s, modelled %.3f us: single copy, taken within the %.0f %% guard band of %s over "
               "%s (%.3f us%s): the staged lane's rate follows how fast the cores exchange cache lines, which the "
               "model cannot foresee.\n",
               plan_algo_name(c[0].algo), plan_lanes_label(c[0].lane, c[0].stripe), c[0].ns / 1e3,
               100 * PLAN_SINGLE_COPY_BAND, plan_algo_name(c[passed].algo),
               plan_lanes_label(c[passed].lane, c[passed].stripe), c[passed].ns / 1e3,
               either ? ", the least regret" : "");
        host_line(&q);
        printf("planning: %.2f us, once per size a communicator has not used lately\n", planning_us(&q));
        return 0;
    }
    if (either) {
        printf("\nchosen: %s over %s, modelled %.3f us on fresh inputs and %.3f on unchanged ones: at most %.2fx "
               "the cheapest of either, the least regret of %d candidates",
               plan_algo_name(c[0].algo), plan_lanes_label(c[0].lane, c[0].stripe), c[0].ns / 1e3,
               c[0].unchanged_ns / 1e3, c[0].regret, k);
        if (next < k)
            printf("; the next, %s over %s, risks %.2fx", plan_algo_name(c[next].algo),
                   plan_lanes_label(c[next].lane, c[next].stripe), c[next].regret);
        printf(".\n");
        host_line(&q);
        printf("planning: %.2f us, once per size a communicator has not used lately\n", planning_us(&q));
        return 0;
    }
    printf("\nchosen: %s over %s, modelled %.3f us: the cheapest of %d candidates", plan_algo_name(c[0].algo),
           plan_lanes_label(c[0].lane, c[0].stripe), c[0].ns / 1e3, k);
    if (next < k)
        printf("; the next, %s over %s, is modelled %.2fx slower", plan_algo_name(c[next].algo),
               plan_lanes_label(c[next].lane, c[next].stripe), c[next].ns / c[0].ns);
    printf(".\n");
    host_line(&q);
    printf("planning: %.2f us, once per size a communicator has not used lately\n", planning_us(&q));
    return 0;
}
