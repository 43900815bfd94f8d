/* shoal tune: measures this machine, fits the cost model, calibrates the
 * algorithm formulas and writes the tuning file.
 *
 *   1. one core's copy and reduction bandwidth;
 *   2. synchronisation: a barrier between two ranks, and among all;
 *   3. every usable lane: one rank reads from another, sizes over the lane's
 *      range, with 1, 2, 4 ... up to all ranks moving data at once (pairs of
 *      ranks exchanging); fitted per lane (src/planner/plan_fit.h);
 *      steps 1 to 3 are the library's (shim_probe_core, shim_probe_lanes),
 *      which MPI_Init's probe runs briefly where no tuning file exists;
 *   4. every candidate (algorithm, lane) of every collective, forced, at a
 *      few sizes per size class: measured over modelled is its calibration
 *      factor (geometric mean over the class's sizes).
 * Rank 0 computes the model and gives it to all, so every rank plans alike.
 * With --link, run across nodes, it measures the link between them instead
 * (tune_link.c) and adds it to the file; a later tune on one node keeps it. */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_sys.h"
#include "measure.h"
#include "plan_fit.h"
#include "shim_comm.h"
#include "shim_probe.h"
#include "shoal_cli.h"
#include "tune_link.h"

/* Whether both ranks of a tuning pair are bound so that they have no two
 * CPUs between them (core_cpus_apart); false outside a pair (pair NULL) or
 * where a mask cannot be read. Collective over pair. */
static bool pair_on_one_cpu(MPI_Comm pair)
{
    if (pair == MPI_COMM_NULL)
        return false;
    cpu_set_t masks[2], mine;
    if (sched_getaffinity(0, sizeof mine, &mine) != 0)
        CPU_ZERO(&mine);
    PMPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, masks, (int)sizeof mine, MPI_BYTE, pair);
    int a, b;
    return CPU_COUNT(&masks[0]) > 0 && CPU_COUNT(&masks[1]) > 0 &&
           !core_cpus_apart(&masks[0], -1, &masks[1], -1, &a, &b);
}

#define MAX_SAMPLES 512
#define MAX_CALIB 4096

typedef struct calib_point {
    char key[64];
    size_t bytes;
    double measured_ns, formula_ns;
} calib_point;

#define MAX_HOST 512
typedef struct host_point {
    core_coll coll;
    size_t bytes;
    double ns;
} host_point;

typedef struct tuner {
    shim_timing mo;
    bool quick;
    int size, rank;
    shim_comm *world; /* MPI_COMM_WORLD's team */
    /* Steps 1 to 3, every rank of the job in pairs: this rank's pair's
     * team (NULL for an odd rank out), the lanes usable on every pair, and
     * every lane timing (into samples) for --samples. */
    shim_node_probe probe;
    shim_lane_sample samples[MAX_SAMPLES];
    calib_point calib[MAX_CALIB];
    int ncalib;
    host_point host[MAX_HOST]; /* the host MPI's own run of each collective and size */
    int nhost;
} tuner;

static void measure_lanes(tuner *tn, plan_model *m)
{
    bool fitted[LANE_COUNT];
    shim_probe_lanes(&tn->probe, m, fitted);
    for (int l = 0; l < LANE_COUNT && tn->rank == 0; l++) {
        if (!tn->probe.lanes[l])
            continue;
        if (!fitted[l]) {
            printf("  %-5s could not be fitted; keeping its defaults\n", plan_lane_name((lane_id)l));
            continue;
        }
        const lane_cost *c = &m->lane[l];
        double err = m->fit_error[l];
        printf("  %-5s latency %.0f ns, overhead %.0f ns, set-up %.4f ns/B, bandwidth %.2f + %.2f/ppn GB/s"
               " (fit: %.1f%% rms)%s\n",
               plan_lane_name((lane_id)l), c->latency_ns, c->overhead_ns, c->per_byte_ns, c->bw_dedicated, c->bw_shared,
               100 * err, err > 0.25 ? "  <- poor fit: timings were noisy" : "");
    }
}

/* ---- calibration ---- */

/* Times every candidate of every collective at each size, forced, on all
 * ranks. A smaller team inside this job would wait and share cores unlike a
 * job of its size: other sizes come from runs at those sizes (--merge), and
 * the planner takes the nearest (plan_factor_key). */
static void calibrate_world(tuner *tn, const size_t *sizes, int nsizes, coll_buffers *b)
{
    for (int ci = 0; ci < measure_ncolls; ci++) {
        core_coll coll = measure_colls[ci];
        for (int si = 0; si < nsizes; si++) {
            size_t bytes = coll == CORE_COLL_BARRIER ? 0 : sizes[si];
            plan_query q = world_query(tn->world, coll, bytes);
            plan_candidate c[MEASURE_MAX_CANDIDATES];
            int k = distinct_candidates(&q, c, MEASURE_MAX_CANDIDATES);
            bool ran[MEASURE_MAX_CANDIDATES];
            double t[MEASURE_MAX_CANDIDATES], model[MEASURE_MAX_CANDIDATES];
            double host = -1;
            measure_candidates(&tn->mo, coll, c, k, bytes, b, ran, t, model, &host);
            if (tn->rank == 0 && tn->nhost < MAX_HOST && host > 0)
                tn->host[tn->nhost++] = (host_point){coll, bytes, host};
            for (int i = 0; i < k; i++)
                if (ran[i] && tn->rank == 0 && tn->ncalib < MAX_CALIB && model[i] > 0) {
                    calib_point *p = &tn->calib[tn->ncalib++];
                    plan_factor_key(p->key, sizeof p->key, coll, c[i].algo, c[i].lane, c[i].stripe, bytes, tn->size);
                    p->bytes = bytes;
                    p->measured_ns = t[i];
                    p->formula_ns = model[i];
                }
            if (coll == CORE_COLL_BARRIER)
                break;
        }
    }
    measure_force(NULL, NULL);
}

/* The raw factor of key's size bucket moved by delta ("../b17/n4" and
 * -1: "../b16/n4"), if that size was calibrated. */
static bool neighbour_factor(char (*keys)[64], const double *raw, int nkeys, const char *key, int delta, double *out)
{
    const char *b = NULL;
    for (const char *p = strstr(key, "/b"); p; p = strstr(p + 1, "/b"))
        b = p;
    int bucket;
    char rest[32], want[64];
    if (!b || sscanf(b, "/b%d%31s", &bucket, rest) != 2)
        return false;
    snprintf(want, sizeof want, "%.*s/b%d%s", (int)(b - key), key, bucket + delta, rest);
    for (int i = 0; i < nkeys; i++)
        if (!strcmp(keys[i], want)) {
            *out = raw[i];
            return true;
        }
    return false;
}

static double median3(double a, double b, double c)
{
    return a > b ? (b > c ? b : a > c ? c : a) : (a > c ? a : b > c ? c : b);
}

static void calibrate(tuner *tn, plan_model *m)
{
    /* Every power of two: the planner interpolates between neighbours, and
     * a regime change (a window filled, a lane overtaking another) is at
     * most a factor of two away from a calibrated size on either side. */
    static const size_t quick[] = {32, 2048, 131072, 2 << 20};
    size_t full[21];
    for (int i = 0; i < 21; i++)
        full[i] = (size_t)8 << i; /* 8 B .. 8 MB */
    const size_t *sizes = tn->quick ? quick : full;
    int nsizes = tn->quick ? 4 : 21;
    coll_buffers b = {0};
    coll_buffers_reserve(&b, sizes[nsizes - 1], tn->size);
    calibrate_world(tn, sizes, nsizes, &b);
    coll_buffers_free(&b);

    /* Geometric mean of measured/modelled per key, kept within [1/8, 8]:
     * beyond that the formula is wrong, not uncalibrated. */
    static char keys[MAX_CALIB][64];
    static double raw[MAX_CALIB];
    int nkeys = 0;
    for (int i = 0; i < tn->ncalib; i++) {
        bool done = false;
        for (int j = 0; j < i && !done; j++)
            done = !strcmp(tn->calib[j].key, tn->calib[i].key);
        if (done)
            continue;
        double logsum = 0;
        int n = 0;
        for (int j = i; j < tn->ncalib; j++)
            if (!strcmp(tn->calib[j].key, tn->calib[i].key)) {
                logsum += log(tn->calib[j].measured_ns / tn->calib[j].formula_ns);
                n++;
            }
        double f = exp(logsum / n);
        snprintf(keys[nkeys], sizeof keys[nkeys], "%s", tn->calib[i].key);
        raw[nkeys++] = f < 0.125 ? 0.125 : f > 8 ? 8 : f;
    }
    /* One timing disturbed by the machine must not steer a choice: where a
     * size has calibrated neighbours at half and twice its size, its factor
     * is the median of the three. A real change of regime spans two sizes
     * or more and stays. */
    for (int i = 0; i < nkeys; i++) {
        double below, above, f = raw[i];
        if (neighbour_factor(keys, raw, nkeys, keys[i], -1, &below) &&
            neighbour_factor(keys, raw, nkeys, keys[i], +1, &above))
            f = median3(below, raw[i], above);
        plan_model_set_factor(m, keys[i], f);
    }
    /* The host's own times, for the planner to leave it the calls it runs
     * faster (plan_choice.host_faster). */
    for (int i = 0; i < tn->nhost; i++)
        plan_model_set_host_ns(m, tn->host[i].coll, plan_size_bucket(tn->host[i].bytes), plan_team_bucket(tn->size),
                               tn->host[i].ns);
}

/* The repeat times of c at size bucket b and team bucket team, both
 * measured; NULL if not. */
static plan_host_time *repeat_times(plan_model *m, int c, int b, int team)
{
    for (int i = 0; i < m->nhost; i++) {
        plan_host_time *t = &m->host[i];
        if (t->coll == c && t->size_b == b && t->team_b == team && t->repeat_ns > 0 && t->shoal_repeat_ns > 0)
            return t;
    }
    return NULL;
}

/* As for the factors: one timing disturbed by the machine must not send a
 * repeat to the host. Where a size has both neighbours (half and twice),
 * the ratio of shoal's repeat time to the host's is the median of the
 * three; shoal's time carries it. */
static void smooth_repeats(plan_model *m, int team)
{
    double ratio[PLAN_MAX_HOST_TIMES];
    for (int i = 0; i < m->nhost; i++) {
        const plan_host_time *t = &m->host[i];
        plan_host_time *below = repeat_times(m, t->coll, t->size_b - 1, team);
        plan_host_time *above = repeat_times(m, t->coll, t->size_b + 1, team);
        bool both = t->team_b == team && t->repeat_ns > 0 && t->shoal_repeat_ns > 0;
        ratio[i] = both && below && above
                       ? median3(below->shoal_repeat_ns / below->repeat_ns, t->shoal_repeat_ns / t->repeat_ns,
                                 above->shoal_repeat_ns / above->repeat_ns)
                       : -1;
    }
    for (int i = 0; i < m->nhost; i++)
        if (ratio[i] > 0)
            m->host[i].shoal_repeat_ns = ratio[i] * m->host[i].repeat_ns;
}

/* Shoal's choice for a repeat (the calibrated model's, now in use) and
 * the host MPI's own run, each timed on unchanged buffers, as OSU's
 * benchmarks call (the same buffers call after call): a repeat goes to
 * the host where its time, by the guard band, is below shoal's
 * (plan_choose). Into m on rank 0. */
static void time_repeats(tuner *tn, plan_model *m)
{
    size_t sizes[21];
    int nsizes = 0;
    for (int i = 0; i < tn->nhost; i++) {
        bool seen = false;
        for (int j = 0; j < nsizes; j++)
            seen = seen || sizes[j] == tn->host[i].bytes;
        if (!seen && nsizes < 21 && tn->host[i].coll != CORE_COLL_BARRIER)
            sizes[nsizes++] = tn->host[i].bytes;
    }
    int n = 0;
    uint64_t t0 = core_now_ns();
    PMPI_Bcast(&nsizes, 1, MPI_INT, 0, MPI_COMM_WORLD); /* rank 0 kept the host points */
    PMPI_Bcast(sizes, (int)sizeof sizes, MPI_BYTE, 0, MPI_COMM_WORLD);
    /* Two candidates a point, so more batches than the calibration's for
     * the same time: a choice of the host rests on them alone. */
    shim_timing timing = tn->mo;
    timing.batches = timing.batches < 9 ? 9 : timing.batches;
    coll_buffers b = {0};
    for (int si = 0; si < nsizes; si++)
        coll_buffers_reserve(&b, sizes[si], tn->size);
    for (int ci = 0; ci < measure_ncolls; ci++) {
        core_coll coll = measure_colls[ci];
        for (int si = 0; si < nsizes && coll != CORE_COLL_BARRIER; si++) {
            plan_query q = world_query(tn->world, coll, sizes[si]);
            q.inputs = PLAN_INPUTS_EITHER;
            plan_candidate choice;
            if (distinct_candidates(&q, &choice, 1) < 1)
                continue;
            double shoal_ns = -1, host_ns = -1;
            if (!measure_repeats(&timing, coll, &choice, sizes[si], &b, &shoal_ns, &host_ns))
                shoal_ns = -1;
            if (tn->rank == 0) {
                plan_model_set_repeat_ns(m, coll, plan_size_bucket(sizes[si]), plan_team_bucket(tn->size), host_ns,
                                         shoal_ns);
                n++;
            }
        }
    }
    coll_buffers_free(&b);
    if (tn->rank == 0)
        smooth_repeats(m, plan_team_bucket(tn->size));
    if (tn->rank == 0)
        printf("  repeats: shoal's choice and the host's own timed on unchanged buffers at %d points (%.1f s)\n", n,
               (double)(core_now_ns() - t0) / 1e9);
}

/* ---- output ---- */

static void write_samples(const tuner *tn, const plan_model *m, const char *path)
{
    int cores = tn->world->team.node_cores;
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "shoal tune: cannot write %s: %s\n", path, strerror(errno));
        return;
    }
    char machine[256];
    plan_machine_description(machine, sizeof machine);
    fprintf(f, "{\n  \"shoal_tune_samples\": 1,\n  \"machine\": \"%s\",\n  \"np\": %d,\n", machine, tn->size);
    fprintf(f,
            "  \"copy_bw\": %.4f, \"copy_mem_bw\": %.4f, \"reduce_bw\": %.4f, \"sync_ns\": %.2f, "
            "\"sync_per_peer_ns\": %.2f,\n",
            m->copy_bw, m->copy_mem_bw, m->reduce_bw, m->sync_ns, m->sync_per_peer_ns);
    fprintf(f, "  \"lanes\": [");
    for (int i = 0; i < tn->probe.nsamples; i++) {
        const shim_lane_sample *s = &tn->samples[i];
        fprintf(f,
                "%s\n    {\"lane\": \"%s\", \"bytes\": %.0f, \"movers\": %d, \"measured_ns\": %.1f, "
                "\"modelled_ns\": %.1f}",
                i ? "," : "", plan_lane_name(s->lane), s->s.bytes, s->s.movers, s->s.ns,
                plan_lane_time(&m->lane[s->lane], s->s.bytes, s->s.movers) * plan_cpu_share(s->s.movers, cores));
    }
    fprintf(f, "\n  ],\n  \"calibration\": [");
    for (int i = 0; i < tn->ncalib; i++)
        fprintf(f, "%s\n    {\"key\": \"%s\", \"bytes\": %zu, \"measured_ns\": %.1f, \"formula_ns\": %.1f}",
                i ? "," : "", tn->calib[i].key, tn->calib[i].bytes, tn->calib[i].measured_ns, tn->calib[i].formula_ns);
    fprintf(f, "\n  ]\n}\n");
    fclose(f);
}

static void usage_error(const char *msg, const char *arg)
{
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        fprintf(stderr,
                "shoal tune: %s%s%s\nusage: mpirun -np N shoal tune [-o FILE] [--quick] [--merge] [--samples FILE]\n"
                "       mpirun -np N --host A,B shoal tune --link [--quick] [-o FILE]   (after a tune on one node)\n",
                msg, arg ? ": " : "", arg ? arg : "");
}

/* A barrier on t (NULL: this rank sits out) with the algorithm forced. */
static double barrier_ns(tuner *tn, coll_team *t, const char *algo)
{
    measure_force(algo, NULL);
    double ns = shim_time_ns(&tn->mo, shim_time_barrier, t, t != NULL);
    measure_force(NULL, NULL);
    return ns;
}

/* Among all ranks: what a flat barrier costs per rank beyond two, and, when
 * the ranks outnumber the cores, what a step waiting on one peer costs
 * beyond sync_ns (a dissemination barrier is nothing but such steps). */
static void measure_world_sync(tuner *tn, plan_model *m)
{
    if (tn->size <= 2)
        return;
    coll_team *world = &tn->world->team;
    double share = plan_cpu_share(world->node_ranks, world->node_cores);
    if (share > 1) {
        double dissemination = barrier_ns(tn, world, "barrier:dissemination");
        double extra = dissemination / ceil(log2(tn->size)) - m->sync_ns;
        m->oversub_step_ns = extra > 0 ? extra / share : 0;
    }
    double flat = barrier_ns(tn, world, "barrier:flat");
    double one = m->sync_ns + plan_oversub_ns(m, world->node_ranks, world->node_cores);
    m->sync_per_peer_ns = flat > one ? (flat - one) / (tn->size - 2) : 0;
    if (tn->rank == 0 && share > 1)
        printf("  sync  %d ranks on %d cores: a step waiting on one peer takes %.0f ns more per ranks/cores\n",
               world->node_ranks, world->node_cores, m->oversub_step_ns);
}

/* Relative rms error of the calibrated model over the calibration points. */
static double calibrated_error(const tuner *tn, const plan_model *m)
{
    double e = 0;
    for (int i = 0; i < tn->ncalib; i++) {
        const calib_point *p = &tn->calib[i];
        double r = (p->formula_ns * plan_model_factor(m, p->key) - p->measured_ns) / p->measured_ns;
        e += r * r;
    }
    return tn->ncalib ? sqrt(e / tn->ncalib) : 0;
}

/* A file's link figures measured by tune --link survive a new tune on one
 * node, which cannot measure them (rank 0 reads the file). */
static void keep_link(plan_model *m, const char *path)
{
    plan_model old;
    char why[512];
    if (plan_model_load(&old, path, true, why, sizeof why) == 0 && old.link_bw_node > 0) {
        m->link_latency_ns = old.link_latency_ns;
        m->link_bw = old.link_bw;
        m->link_bw_node = old.link_bw_node;
        memcpy(m->link_layout, old.link_layout, sizeof m->link_layout);
        memcpy(m->link_timed, old.link_timed, sizeof m->link_timed);
    }
}

/* tune --link: the file at out (else the usual place) must exist and be
 * this machine's; its link figures are measured and it is written back. */
static int tune_link_into(tuner *tn, const char *out)
{
    char path[512], why[512] = "";
    if (out)
        snprintf(path, sizeof path, "%s", out);
    else
        plan_tuning_path(path, sizeof path);
    plan_model m;
    int bad = tn->rank == 0 ? plan_model_load(&m, path, true, why, sizeof why) : 0;
    PMPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (bad)
        measure_fail_all("tune --link: %s is not a usable tuning file (%s); run shoal tune on one node first", path,
                         why);
    if (tn->rank == 0) {
        printf("shoal tune --link: %d ranks, adding the link between nodes to %s\n", tn->size, path);
        fflush(stdout);
    }
    /* Every rank times the collectives with rank 0's model, as a job that
     * reads this file will run them. */
    PMPI_Bcast(&m, (int)sizeof m, MPI_BYTE, 0, MPI_COMM_WORLD);
    tune_link(&m, tn->quick);
    if (tn->rank != 0)
        return 0;
    int err = plan_model_save(&m, path);
    if (err) {
        fprintf(stderr, "shoal tune: cannot write %s: %s\n", path, strerror(err));
        return 1;
    }
    printf("wrote %s\n", path);
    return 0;
}

int tune_main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tuner *tn = calloc(1, sizeof *tn);
    if (!tn)
        measure_fail("out of memory");
    PMPI_Comm_size(MPI_COMM_WORLD, &tn->size);
    PMPI_Comm_rank(MPI_COMM_WORLD, &tn->rank);
    /* Batches as long as shoal evaluate's: under oversubscription the
     * median of short batches and of long ones differ, and the factors
     * must describe what is evaluated. */
    tn->mo = measure_timing(5, 1e6);
    const char *out = NULL, *samples = NULL;
    bool merge = false, link = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            out = argv[++i];
        } else if (!strcmp(argv[i], "--samples") && i + 1 < argc) {
            samples = argv[++i];
        } else if (!strcmp(argv[i], "--merge")) {
            merge = true;
        } else if (!strcmp(argv[i], "--link")) {
            link = true;
        } else if (!strcmp(argv[i], "--quick")) {
            tn->quick = true;
            tn->mo = measure_timing(3, 5e5);
        } else {
            usage_error("unknown option", argv[i]);
            MPI_Finalize();
            return 2;
        }
    }
    if (tn->size < 2) {
        usage_error("needs at least 2 ranks on one node (mpirun -np 2 or more)", NULL);
        MPI_Finalize();
        return 2;
    }
    if (link) {
        int rc = tune_link_into(tn, out);
        free(tn);
        MPI_Finalize();
        return rc;
    }
    tn->world = shim_comm_team_now(MPI_COMM_WORLD);
    if (!tn->world)
        measure_fail_all("tune: shoal does not handle MPI_COMM_WORLD here (SHOAL_DISABLE set, ranks on several "
                         "nodes, or no shared memory); run it on one node with shoal enabled");
    /* Ranks sharing cores time with more spread: more batches for the median. */
    if (!tn->quick && plan_cpu_share(tn->world->team.node_ranks, tn->world->team.node_cores) > 1)
        tn->mo.batches = 9;
    shim_node_probe *p = &tn->probe;
    *p = (shim_node_probe){
        .timing = tn->mo,
        .depth = tn->quick ? SHIM_PROBE_QUICK : SHIM_PROBE_FULL,
        .rank = tn->rank,
        .pair_index = tn->rank / 2,
        .cores = tn->world->team.node_cores,
        .max_movers = tn->size,
        .samples = tn->samples,
        .max_samples = MAX_SAMPLES,
    };
    bool odd_out = tn->size % 2 && tn->rank == tn->size - 1;
    MPI_Comm pair_comm;
    PMPI_Comm_split(MPI_COMM_WORLD, odd_out ? MPI_UNDEFINED : p->pair_index, tn->rank, &pair_comm);
    if (!odd_out) {
        p->pair = shim_comm_team_now(pair_comm);
        if (!p->pair)
            measure_fail("tune: shoal does not handle a two-rank communicator here");
    }
    int first_stuck = pair_on_one_cpu(pair_comm) ? tn->rank : tn->size;
    PMPI_Allreduce(MPI_IN_PLACE, &first_stuck, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first_stuck < tn->size)
        measure_fail_all(
            "tune: ranks %d and %d may run only on one CPU between them, so their transfers would time "
            "the scheduler's hand-offs, not the lanes; bind one rank to each core (or none) and tune again",
            first_stuck / 2 * 2, first_stuck / 2 * 2 + 1);
    for (int l = 0; l < LANE_COUNT; l++) {
        int mine = tn->world->team.lanes[l] && (!p->pair || p->pair->team.lanes[l]), all = 0;
        PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
        p->lanes[l] = all;
    }

    char machine[256];
    plan_machine_description(machine, sizeof machine);
    if (tn->rank == 0)
        printf("shoal tune: %s, %d ranks%s\n", machine, tn->size, tn->quick ? " (quick)" : "");

    char path[512];
    if (out)
        snprintf(path, sizeof path, "%s", out);
    else
        plan_tuning_path(path, sizeof path);

    plan_model m;
    if (merge) {
        /* Keep the file's figures and other team sizes' factors; calibrate
         * this team size against the figures alone. */
        char why[512] = "";
        int bad = tn->rank == 0 ? plan_model_load(&m, path, true, why, sizeof why) : 0;
        PMPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (bad)
            measure_fail_all("tune --merge: %s is not a usable tuning file (%s)", path, why);
        PMPI_Bcast(&m, (int)sizeof m, MPI_BYTE, 0, MPI_COMM_WORLD);
        measure_world_sync(tn, &m);
        if (tn->rank == 0)
            printf("  merging into %s: its figures kept, factors for %d ranks measured\n", path, tn->size);
    } else {
        plan_model_defaults(&m);
        keep_link(&m, path);
        m.origin = PLAN_ORIGIN_MEASURED;
        shim_probe_core(&tn->probe, &m);
        measure_world_sync(tn, &m);
        if (tn->rank == 0)
            printf("  core  copy %.2f GB/s (%.2f beyond its %zu KiB cache), float sum %.2f GB/s;"
                   " sync %.0f ns + %.0f ns per extra rank\n",
                   m.copy_bw, m.copy_mem_bw, plan_core_cache_bytes() >> 10, m.reduce_bw, m.sync_ns, m.sync_per_peer_ns);
        measure_lanes(tn, &m);
        /* Every rank saw the same (reduced) timings; rank 0's model is the law. */
        PMPI_Bcast(&m, (int)sizeof m, MPI_BYTE, 0, MPI_COMM_WORLD);
    }
    plan_model bare = m;
    bare.nfactors = 0;
    bare.nhost = 0; /* every candidate runs as forced, none is left to the host */
    plan_model_use(&bare);

    calibrate(tn, &m);
    PMPI_Bcast(&m, (int)sizeof m, MPI_BYTE, 0, MPI_COMM_WORLD);
    plan_model_use(&m);
    time_repeats(tn, &m);
    PMPI_Bcast(&m, (int)sizeof m, MPI_BYTE, 0, MPI_COMM_WORLD);
    plan_model_use(&m);

    int rc = 0;
    if (tn->rank == 0) {
        double before = 0;
        for (int i = 0; i < tn->ncalib; i++) {
            double r = (tn->calib[i].formula_ns - tn->calib[i].measured_ns) / tn->calib[i].measured_ns;
            before += r * r;
        }
        before = tn->ncalib ? sqrt(before / tn->ncalib) : 0;
        /* In-sample, the factors fit by construction; what matters is how far
         * the formulas alone were, and what the clamps (formula wrong) and
         * the smoothing (a disturbed timing) leave. */
        printf("  calibration: %d timed collectives; the formulas alone were %.0f%% rms off; %d factors in the file; "
               "%.0f%% rms off after (clamped or smoothed factors)\n",
               tn->ncalib, 100 * before, m.nfactors, 100 * calibrated_error(tn, &m));
        int err = plan_model_save(&m, path);
        if (err) {
            fprintf(stderr, "shoal tune: cannot write %s: %s\n", path, strerror(err));
            rc = 1;
        } else {
            printf("wrote %s%s\n", path,
                   out && !core_config_get()->tuning_file[0]
                       ? " (set SHOAL_TUNING_FILE to it for the library to read it)"
                       : "");
        }
        if (samples)
            write_samples(tn, &m, samples);
    }
    if (pair_comm != MPI_COMM_NULL)
        MPI_Comm_free(&pair_comm);
    free(tn);
    MPI_Finalize();
    return rc;
}
