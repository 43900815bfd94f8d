/* The planner's arithmetic: the lane model, fitting it back from synthetic
 * measurements with known figures, the tuning file (round trip, corrupt,
 * missing, unknown fields, another machine, another version), and choices
 * that follow the figures. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coll.h"
#include "plan.h"
#include "plan_fit.h"
#include "unit.h"

#define STRINGIFY(x) #x
#define TUNING_VERSION_OF(x) STRINGIFY(x)
#define TUNING_VERSION TUNING_VERSION_OF(PLAN_TUNING_VERSION)

static bool close_to(double a, double b, double rel) { return fabs(a - b) <= rel * fabs(b) + 1e-9; }

static void test_model_and_fit(void)
{
    lane_cost truth = {.latency_ns = 300, .overhead_ns = 700, .per_byte_ns = 0.02, .bw_dedicated = 3, .bw_shared = 6};
    /* time at 1 MB, alone: 1000 + 20972 + 1048576 / 9 */
    double t = plan_lane_time(&truth, 1 << 20, 1);
    CHECK(close_to(t, 1000 + 0.02 * (1 << 20) + (1 << 20) / 9.0, 1e-12), "lane time %g", t);
    CHECK(plan_lane_time(&truth, 1 << 20, 4) > t, "more movers must be slower");

    /* Exact samples: the fit recovers the figures. */
    plan_sample s[64];
    int n = 0;
    const int movers[] = {1, 2, 4, 8};
    const double sizes[] = {1024, 16384, 262144, 1048576, 4194304};
    for (int k = 0; k < 4; k++)
        for (int b = 0; b < 5; b++)
            s[n] = (plan_sample){sizes[b], movers[k], plan_lane_time(&truth, sizes[b], movers[k])}, n++;
    lane_cost fit;
    double err = plan_fit_lane(s, n, truth.latency_ns, &fit);
    CHECK(err >= 0 && err < 0.01, "fit error %g", err);
    CHECK(close_to(fit.overhead_ns, truth.overhead_ns, 0.05), "overhead %g", fit.overhead_ns);
    CHECK(close_to(fit.per_byte_ns, truth.per_byte_ns, 0.05), "per byte %g", fit.per_byte_ns);
    CHECK(close_to(fit.bw_dedicated, truth.bw_dedicated, 0.05), "dedicated %g", fit.bw_dedicated);
    CHECK(close_to(fit.bw_shared, truth.bw_shared, 0.05), "shared %g", fit.bw_shared);

    /* Noisy samples (+-3 %, fixed pattern): still close. */
    for (int i = 0; i < n; i++)
        s[i].ns *= 1 + 0.03 * ((i * 7919) % 5 - 2) / 2.0;
    err = plan_fit_lane(s, n, truth.latency_ns, &fit);
    CHECK(err >= 0 && err < 0.05, "noisy fit error %g", err);
    CHECK(close_to(fit.bw_dedicated + fit.bw_shared, 9, 0.15), "noisy total bandwidth %g",
          fit.bw_dedicated + fit.bw_shared);

    /* One mover only: no shared part can be told; the total is right. */
    n = 0;
    for (int b = 0; b < 5; b++)
        s[n] = (plan_sample){sizes[b], 1, plan_lane_time(&truth, sizes[b], 1)}, n++;
    err = plan_fit_lane(s, n, truth.latency_ns, &fit);
    CHECK(err >= 0 && err < 0.02, "single-k fit error %g", err);
    CHECK(fit.bw_shared == 0, "single-k shared %g", fit.bw_shared);

    /* A single size cannot be fitted. */
    s[0] = (plan_sample){1024, 1, 5000};
    CHECK(plan_fit_lane(s, 1, 100, &fit) < 0, "one sample fitted");
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

static void test_tuning_file(void)
{
    char path[] = "/tmp/shoal-test-tuning-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    char why[512];
    plan_model m, back;

    /* Round trip, with a calibration factor. */
    plan_model_defaults(&m);
    m.lane[LANE_CMA].bw_dedicated = 7.25;
    m.sync_ns = 123.5;
    plan_model_set_factor(&m, "allreduce/sliced/cma/large", 1.4);
    CHECK(plan_model_save(&m, path) == 0, "save");
    CHECK(plan_model_load(&back, path, true, why, sizeof why) == 0, "load: %s", why);
    CHECK(close_to(back.lane[LANE_CMA].bw_dedicated, 7.25, 1e-6), "cma bandwidth %g", back.lane[LANE_CMA].bw_dedicated);
    CHECK(close_to(back.sync_ns, 123.5, 1e-6), "sync %g", back.sync_ns);
    CHECK(close_to(plan_model_factor(&back, "allreduce/sliced/cma/large"), 1.4, 1e-6), "factor");
    CHECK(plan_model_factor(&back, "bcast/flat/cells/small") == 1.0, "absent factor is 1");
    m.copy_bw = 20, m.copy_mem_bw = 6.5;
    CHECK(plan_model_save(&m, path) == 0, "save");
    CHECK(plan_model_load(&back, path, true, why, sizeof why) == 0 && back.copy_bw == 20 && back.copy_mem_bw == 6.5,
          "copy rates %g, %g (%s)", back.copy_bw, back.copy_mem_bw, why);
    m.link_latency_ns = 1500, m.link_bw = 2.5;
    CHECK(plan_model_save(&m, path) == 0, "save");
    CHECK(plan_model_load(&back, path, true, why, sizeof why) == 0 && back.link_latency_ns == 1500 &&
              back.link_bw == 2.5,
          "link figures %g ns, %g B/ns (%s)", back.link_latency_ns, back.link_bw, why);
    write_file(path, "{\"shoal_tuning\": " TUNING_VERSION ", \"link_bw\": 0}");
    CHECK(plan_model_load(&back, path, false, why, sizeof why) != 0, "link_bw 0 accepted");

    /* A file from before copy_mem_bw existed prices every copy at its copy_bw, as it did then. */
    write_file(path, "{\"shoal_tuning\": " TUNING_VERSION ", \"copy_bw\": 17}");
    CHECK(plan_model_load(&back, path, false, why, sizeof why) == 0 && back.copy_mem_bw == 17,
          "copy_mem_bw of an older file: %g (%s)", back.copy_mem_bw, why);
    write_file(path, "{\"shoal_tuning\": " TUNING_VERSION ", \"copy_mem_bw\": 0}");
    CHECK(plan_model_load(&back, path, false, why, sizeof why) != 0, "copy_mem_bw 0 accepted");

    /* Corrupt: truncated JSON. */
    write_file(path, "{\"shoal_tuning\": " TUNING_VERSION ", \"lanes\": {\"cma\": {\"bw_dedicated\": ");
    CHECK(plan_model_load(&back, path, false, why, sizeof why) != 0, "corrupt file accepted");
    CHECK(strstr(why, "line") != NULL, "corrupt: no line in '%s'", why);
    CHECK(back.lane[LANE_CMA].bw_dedicated == lane_describe(LANE_CMA)->default_cost.bw_dedicated,
          "corrupt left figures");

    /* Missing. */
    CHECK(plan_model_load(&back, "/nonexistent/shoal/tuning.json", false, why, sizeof why) != 0,
          "missing file accepted");

    /* Unknown fields are ignored, missing ones keep defaults. */
    write_file(path, "{\"shoal_tuning\": " TUNING_VERSION ", \"future\": [1, 2, {\"x\": null}], \"sync_ns\": 99,"
                     " \"lanes\": {\"cells\": {\"bw_dedicated\": 5.5, \"colour\": \"blue\"}}}");
    CHECK(plan_model_load(&back, path, false, why, sizeof why) == 0, "unknown fields: %s", why);
    CHECK(back.sync_ns == 99 && back.lane[LANE_CELLS].bw_dedicated == 5.5, "unknown fields changed values");
    CHECK(back.lane[LANE_CELLS].latency_ns == lane_describe(LANE_CELLS)->default_cost.latency_ns,
          "missing field not default");

    /* Another machine, another version, impossible figures. */
    write_file(path, "{\"shoal_tuning\": " TUNING_VERSION ", \"machine\": \"a faraway computer, 1024 cores\"}");
    CHECK(plan_model_load(&back, path, true, why, sizeof why) != 0 && strstr(why, "faraway"),
          "foreign machine accepted: %s", why);
    CHECK(plan_model_load(&back, path, false, why, sizeof why) == 0, "machine check when not asked");
    write_file(path, "{\"shoal_tuning\": 99}");
    CHECK(plan_model_load(&back, path, false, why, sizeof why) != 0 && strstr(why, "version"),
          "other version accepted: %s", why);
    write_file(path, "{\"shoal_tuning\": " TUNING_VERSION
                     ", \"lanes\": {\"cma\": {\"bw_dedicated\": -3, \"bw_shared\": 0}}}");
    CHECK(plan_model_load(&back, path, false, why, sizeof why) != 0, "negative bandwidth accepted");
    write_file(path, "[1, 2, 3]");
    CHECK(plan_model_load(&back, path, false, why, sizeof why) != 0, "array accepted");
    unlink(path);
}

/* Choices follow the figures: with a slow single-copy lane, cells win large
 * messages; with a fast one, cma does. */
/* The planner reads its figures from a fresh temporary file at path (a
 * "/tmp/...XXXXXX" template), nothing forced; tuning_file_done undoes it. */
static void tuning_file_begin(char *path)
{
    int fd = mkstemp(path);
    close(fd);
    setenv("SHOAL_TUNING_FILE", path, 1);
    unsetenv("SHOAL_ALGO");
    unsetenv("SHOAL_LANES");
    core_config_reload();
}

static void tuning_file_done(const char *path)
{
    unlink(path);
    unsetenv("SHOAL_TUNING_FILE");
    core_config_reload();
    plan_model_reload();
}

static void test_choices(void)
{
    char path[] = "/tmp/shoal-test-tuning-XXXXXX";
    tuning_file_begin(path);
    plan_query q = {
        .coll = CORE_COLL_BCAST, .bytes = 4 << 20, .n = 4, .ppn = 4, .window = 128 << 10, .usable = {true, true, true}};
    plan_model m;
    plan_model_defaults(&m);
    m.lane[LANE_CMA].bw_dedicated = 0.1, m.lane[LANE_CMA].bw_shared = 0.1;
    plan_model_save(&m, path);
    plan_model_reload();
    CHECK(plan_choose(&q).lane == LANE_CELLS, "slow cma chosen");
    m.lane[LANE_CMA].bw_dedicated = 50, m.lane[LANE_CMA].bw_shared = 50;
    plan_model_save(&m, path);
    plan_model_reload();
    CHECK(plan_choose(&q).lane == LANE_CMA, "fast cma not chosen");
    /* Small messages go to the lane with the lowest latency. */
    q.bytes = 8;
    CHECK(plan_choose(&q).lane == LANE_CELLS, "8 bytes not on cells");
    /* A lane that is not usable is never chosen. */
    q.bytes = 4 << 20;
    q.usable[LANE_CMA] = false;
    CHECK(plan_choose(&q).lane != LANE_CMA, "unusable lane chosen");
    /* Every candidate is listed, cheapest first. */
    plan_candidate c[64];
    q.usable[LANE_CMA] = true;
    int k = plan_candidates(&q, c, 64);
    CHECK(k >= 4, "only %d candidates", k);
    for (int i = 1; i < k; i++)
        CHECK(c[i].excluded || c[i - 1].ns <= c[i].ns, "candidates not sorted at %d", i);
    /* Forcing restricts. */
    setenv("SHOAL_LANES", "host", 1);
    core_config_reload();
    CHECK(plan_choose(&q).lane == LANE_HOST, "SHOAL_LANES=host ignored");
    setenv("SHOAL_ALGO", "bcast:tree", 1);
    setenv("SHOAL_LANES", "cells", 1);
    core_config_reload();
    plan_choice ch = plan_choose(&q);
    CHECK(ch.algo == PLAN_BCAST_TREE && ch.lane == LANE_CELLS, "forced tree over cells not chosen");
    unsetenv("SHOAL_ALGO");
    unsetenv("SHOAL_LANES");
    core_config_reload();
    /* Calibration factors: by team size, the nearest calibrated one below,
     * else above; by size, interpolated between the nearest calibrated
     * sizes in log-log; kept sorted whatever the order they come in. */
    plan_model_defaults(&m);
    char key[64];
    plan_factor_key(key, sizeof key, CORE_COLL_BCAST, PLAN_BCAST_FLAT, LANE_CMA, LANE_COUNT, 4 << 20, 4);
    CHECK(!strcmp(key, "bcast/flat/cma/b22/n4"), "factor key %s", key);
    plan_model_set_factor(&m, key, 8.0);
    plan_factor_key(key, sizeof key, CORE_COLL_BCAST, PLAN_BCAST_FLAT, LANE_CMA, LANE_COUNT, 1 << 20, 4);
    plan_model_set_factor(&m, key, 2.0);
    plan_factor_key(key, sizeof key, CORE_COLL_BCAST, PLAN_BCAST_FLAT, LANE_CMA, LANE_COUNT, 4 << 20, 16);
    plan_model_set_factor(&m, key, 5.0);
    plan_model_set_factor(&m, "allreduce/flat/cells/b3/n2", 0.5);
    for (int i = 1; i < m.nfactors; i++)
        CHECK(strcmp(m.factors[i - 1].key, m.factors[i].key) < 0, "factors not sorted at %d", i);
    plan_model_save(&m, path);
    plan_model_reload();
    static const struct {
        int n;
        size_t bytes;
        double factor;
    } cases[] = {{2, 4 << 20, 8.0}, {3, 4 << 20, 8.0}, {8, 4 << 20, 8.0},   {9, 4 << 20, 5.0},  {64, 4 << 20, 5.0},
                 {4, 2 << 20, 4.0}, {4, 1 << 20, 2.0}, {4, 512 << 10, 2.0}, {4, 16 << 20, 8.0}, {4, 1 << 10, 1.0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        plan_query f = {.coll = CORE_COLL_BCAST,
                        .bytes = cases[i].bytes,
                        .n = cases[i].n,
                        .ppn = cases[i].n,
                        .window = 128 << 10,
                        .usable = {true, true, true}};
        plan_candidate fc[64];
        int nf = plan_candidates(&f, fc, 64);
        double got = -1;
        for (int j = 0; j < nf; j++)
            if (fc[j].algo == PLAN_BCAST_FLAT && fc[j].lane == LANE_CMA)
                got = fc[j].factor;
        CHECK(fabs(got - cases[i].factor) < 1e-9, "n=%d, %zu bytes: factor %g, expected %g", cases[i].n, cases[i].bytes,
              got, cases[i].factor);
    }
    /* A model put in use later is priced with its own factors (the parsed
     * table of them follows the model), then the file's again. */
    for (int round = 0; round < 2; round++) {
        plan_model other;
        plan_model_defaults(&other);
        plan_factor_key(key, sizeof key, CORE_COLL_BCAST, PLAN_BCAST_FLAT, LANE_CMA, LANE_COUNT, 4 << 20, 4);
        plan_model_set_factor(&other, key, 6.0);
        if (round == 0)
            plan_model_use(&other);
        else
            plan_model_reload();
        plan_query f = {.coll = CORE_COLL_BCAST,
                        .bytes = 4 << 20,
                        .n = 4,
                        .ppn = 4,
                        .window = 128 << 10,
                        .usable = {true, true, true}};
        plan_candidate fc[64];
        int nf = plan_candidates(&f, fc, 64);
        double got = -1, want = round == 0 ? 6.0 : 8.0;
        for (int j = 0; j < nf; j++)
            if (fc[j].algo == PLAN_BCAST_FLAT && fc[j].lane == LANE_CMA)
                got = fc[j].factor;
        CHECK(fabs(got - want) < 1e-9, "model %d in use: factor %g, expected %g", round, got, want);
    }
    /* Striping: large blocks of data movement may go over cma and host, the
     * host's share in proportion to its modelled throughput. */
    plan_model_defaults(&m);
    plan_model_save(&m, path);
    plan_model_reload();
    plan_query sq = {.coll = CORE_COLL_ALLGATHER,
                     .bytes = 1 << 20,
                     .n = 4,
                     .ppn = 4,
                     .window = 128 << 10,
                     .usable = {true, true, true}};
    plan_candidate sc[64];
    int ns = plan_candidates(&sq, sc, 64), striped = -1;
    for (int i = 0; i < ns; i++)
        if (sc[i].stripe == LANE_HOST)
            striped = i;
    CHECK(striped >= 0 && sc[striped].lane == LANE_CMA && sc[striped].algo == PLAN_MOVE_PULL, "no striped candidate");
    if (striped >= 0) {
        double th = 1 / plan_lane_time(&m.lane[LANE_HOST], 1 << 20, 4),
               tc = 1 / plan_lane_time(&m.lane[LANE_CMA], 1 << 20, 4);
        CHECK(fabs(sc[striped].stripe_share - th / (th + tc)) < 1e-9, "stripe share %g", sc[striped].stripe_share);
        CHECK(!strcmp(plan_lanes_label(sc[striped].lane, sc[striped].stripe), "cma+host"), "striped label");
    }
    sq.bytes = PLAN_STRIPE_MIN / 2;
    ns = plan_candidates(&sq, sc, 64);
    for (int i = 0; i < ns; i++)
        CHECK(sc[i].stripe == LANE_COUNT, "striped candidate for a small block");
    sq.bytes = 1 << 20;
    sq.usable[LANE_HOST] = false;
    ns = plan_candidates(&sq, sc, 64);
    for (int i = 0; i < ns; i++)
        CHECK(sc[i].stripe == LANE_COUNT, "striped candidate without the host lane");
    sq.usable[LANE_HOST] = true;
    setenv("SHOAL_LANES", "cma+host", 1);
    core_config_reload();
    plan_choice sch = plan_choose(&sq);
    CHECK(sch.lane == LANE_CMA && sch.stripe == LANE_HOST && sch.stripe_share > 0 && sch.stripe_share < 1,
          "SHOAL_LANES=cma+host not chosen");
    sq.coll = CORE_COLL_ALLREDUCE; /* does not stripe: the planner chooses, unstriped */
    CHECK(plan_choose(&sq).stripe == LANE_COUNT, "allreduce striped");
    unsetenv("SHOAL_LANES");
    core_config_reload();

    /* With the built-in figures the host MPI is only the fallback inside a
     * node: never chosen while a shared-memory lane is usable. */
    unlink(path);
    plan_model_reload();
    static const core_coll colls[] = {
        CORE_COLL_BCAST,     CORE_COLL_REDUCE,  CORE_COLL_ALLREDUCE, CORE_COLL_GATHER,
        CORE_COLL_ALLGATHER, CORE_COLL_SCATTER, CORE_COLL_ALLTOALL,  CORE_COLL_REDUCE_SCATTER_BLOCK};
    for (int cma = 0; cma < 2; cma++)
        for (int n = 2; n <= 16; n *= 2)
            for (size_t ci = 0; ci < sizeof colls / sizeof colls[0]; ci++)
                for (size_t bytes = 4; bytes <= (16u << 20); bytes *= 8) {
                    plan_query d = {.coll = colls[ci],
                                    .bytes = bytes,
                                    .n = n,
                                    .ppn = n,
                                    .window = 128 << 10,
                                    .usable = {true, cma, true}};
                    CHECK(plan_choose(&d).lane != LANE_HOST, "defaults chose host for %s of %zu on %d",
                          core_coll_name(colls[ci]), bytes, n);
                }
    tuning_file_done(path);
}

/* Modelled time of candidate (algo, lane) for q; negative when absent. */
static double candidate_ns(const plan_query *q, plan_algo algo, lane_id lane)
{
    plan_candidate c[64];
    int k = plan_candidates(q, c, 64);
    for (int i = 0; i < k; i++)
        if (c[i].algo == algo && c[i].lane == lane && c[i].stripe == LANE_COUNT)
            return c[i].formula_ns * c[i].factor;
    return -1;
}

/* A staged transfer over several windows overlaps its writer's copy of the
 * next window with its reader's of this one, where each side has a core: a
 * one-way 1 MiB bcast at np 2 through 128 KiB windows costs well under the
 * same bytes in one window (the two copies one after the other). An
 * exchange at np 2 on 2 cores (allgather) keeps both cores busy: no overlap. */
static void test_staged_overlap(void)
{
    plan_model_reload();
    plan_query q = {.coll = CORE_COLL_BCAST,
                    .bytes = 1 << 20,
                    .n = 2,
                    .ppn = 2,
                    .cores = 2,
                    .window = 128 << 10,
                    .usable = {true, true, true}};
    double rounds = candidate_ns(&q, PLAN_BCAST_FLAT, LANE_CELLS);
    q.window = 4 << 20;
    double one_window = candidate_ns(&q, PLAN_BCAST_FLAT, LANE_CELLS);
    CHECK(rounds > 0 && one_window > 0 && rounds < 0.7 * one_window,
          "bcast of 1 MiB over the cells: %g ns in 8 windows, %g in one", rounds, one_window);
    q = (plan_query){.coll = CORE_COLL_ALLGATHER,
                     .bytes = 1 << 20,
                     .n = 2,
                     .ppn = 2,
                     .cores = 2,
                     .window = 128 << 10,
                     .usable = {true, true, true}};
    rounds = candidate_ns(&q, PLAN_MOVE_PULL, LANE_CELLS);
    q.window = 4 << 20;
    one_window = candidate_ns(&q, PLAN_MOVE_PULL, LANE_CELLS);
    CHECK(rounds > 0 && rounds >= one_window, "allgather at np 2 on 2 cores: %g ns in 8 windows, %g in one", rounds,
          one_window);
}

/* More ranks than cores: transfers share the cores, and a step waiting on
 * one peer pays for that peer's wait for a core. */
static void test_oversubscription(void)
{
    CHECK(plan_cpu_share(8, 2) == 4 && plan_cpu_share(2, 2) == 1 && plan_cpu_share(8, 0) == 1, "cpu share");
    char path[] = "/tmp/shoal-test-tuning-XXXXXX";
    tuning_file_begin(path);
    plan_model m, back;
    plan_model_defaults(&m);
    m.oversub_step_ns = 2000;
    CHECK(plan_oversub_ns(&m, 8, 2) == 8000 && plan_oversub_ns(&m, 2, 2) == 0 && plan_oversub_ns(&m, 8, 0) == 0,
          "oversubscribed step");
    CHECK(plan_model_save(&m, path) == 0, "save");
    char why[512];
    CHECK(plan_model_load(&back, path, false, why, sizeof why) == 0 && close_to(back.oversub_step_ns, 2000, 1e-9),
          "oversub_step_ns round trip: %s", why);
    plan_model_reload();

    plan_query q = {
        .coll = CORE_COLL_BARRIER, .n = 8, .ppn = 8, .cores = 2, .window = 128 << 10, .usable = {true, true, true}};
    double flat = candidate_ns(&q, PLAN_BARRIER_FLAT, LANE_CELLS);
    double dissemination = candidate_ns(&q, PLAN_BARRIER_DISSEMINATION, LANE_CELLS);
    double release = candidate_ns(&q, PLAN_BARRIER_RELEASE, LANE_CELLS);
    /* Any exit order may leave rank 0 last, and a rooted call after it waits
     * for rank 0's turn on a core: one more wait for a core. */
    CHECK(close_to(dissemination, 3 * (m.sync_ns + 8000) + 8000, 1e-9),
          "dissemination: 3 steps, each waiting for a core, and the exit order: %g", dissemination);
    CHECK(close_to(release, flat - 8000 + m.sync_ns, 1e-9), "release: flat's wait, then a hand-off: %g against %g",
          release, flat);
    CHECK(plan_choose(&q).algo == PLAN_BARRIER_RELEASE && release < flat && flat < dissemination,
          "oversubscribed barrier not the release");
    q.cores = 8;
    CHECK(candidate_ns(&q, PLAN_BARRIER_DISSEMINATION, LANE_CELLS) < dissemination / 10,
          "a barrier with a core per rank priced as oversubscribed");
    CHECK(plan_choose(&q).algo == PLAN_BARRIER_FLAT, "a barrier with a core per rank: flat, one step");

    q = (plan_query){.coll = CORE_COLL_BCAST,
                     .bytes = 4 << 20,
                     .n = 8,
                     .ppn = 8,
                     .cores = 8,
                     .window = 128 << 10,
                     .usable = {true, true, true}};
    double own_cores = candidate_ns(&q, PLAN_BCAST_FLAT, LANE_CELLS);
    q.cores = 2;
    double shared = candidate_ns(&q, PLAN_BCAST_FLAT, LANE_CELLS);
    CHECK(shared > 3.5 * own_cores && shared < 4.5 * own_cores, "8 readers on 2 cores: %g vs %g on 8", shared,
          own_cores);

    /* A gather's push overlaps the root's own copy with the writers; its
     * pull copies, then reads. */
    q = (plan_query){.coll = CORE_COLL_GATHER,
                     .bytes = 4 << 20,
                     .n = 2,
                     .ppn = 2,
                     .cores = 2,
                     .window = 128 << 10,
                     .usable = {true, true, true}};
    CHECK(candidate_ns(&q, PLAN_MOVE_PUSH, LANE_CMA) < candidate_ns(&q, PLAN_MOVE_PULL, LANE_CMA),
          "4 MB gather: pull priced below push");
    tuning_file_done(path);
}

/* A reduce over the cells lane: the root reduces a round while the other
 * rank stages the next, so with a core each only the longer part shows; on
 * fewer cores than ranks all of that work shares them. */
static void test_staged_reduce(void)
{
    char path[] = "/tmp/shoal-test-tuning-XXXXXX";
    tuning_file_begin(path); /* an empty file: reported, and the built-in defaults used */
    plan_model_reload();
    plan_model m;
    plan_model_defaults(&m);
    double S = 4 << 20, stage = S / m.copy_bw, reduce = S / m.reduce_bw;
    plan_query q = {.coll = CORE_COLL_REDUCE,
                    .bytes = 4 << 20,
                    .n = 2,
                    .ppn = 2,
                    .cores = 2,
                    .window = 128 << 10,
                    .usable = {true, true, true}};
    double two = candidate_ns(&q, PLAN_REDUCE_FLAT, LANE_CELLS);
    CHECK(two > (stage > reduce ? stage : reduce) && two < 0.8 * (stage + reduce),
          "2 ranks on 2 cores: staging not overlapped with reducing: %g (stage %g, reduce %g)", two, stage, reduce);
    CHECK(plan_choose(&q).lane == LANE_CELLS, "4 MB reduce at np 2 not over cells");
    q.n = q.ppn = q.cores = 8;
    double own_cores = candidate_ns(&q, PLAN_REDUCE_FLAT, LANE_CELLS);
    q.cores = 2;
    double shared = candidate_ns(&q, PLAN_REDUCE_FLAT, LANE_CELLS);
    /* 7 stagers and the root's 7 reductions on 2 cores: (7 + 7) / 2 units of work. */
    CHECK(own_cores >= 7 * reduce && shared > (7 * stage + 7 * reduce) / 2 &&
              shared < 1.2 * (7 * stage + 7 * reduce) / 2,
          "8 ranks: %g on 8 cores, %g on 2", own_cores, shared);
    tuning_file_done(path);
}

/* A query of the unit grids: n ranks alone on their node's `cores`, every
 * lane usable, 128 KiB windows. */
static plan_query grid_query(core_coll c, size_t bytes, int n, int cores)
{
    return (plan_query){
        .coll = c, .bytes = bytes, .n = n, .ppn = n, .cores = cores, .window = 128 << 10, .usable = {true, true, true}};
}

/* An allgather's owner stages its block once for every reader; an
 * alltoall's owner stages a block per reader. Over the cells at n ranks the
 * allgather costs the alltoall's time less n-2 owner copies (each half a
 * transfer past its fixed part); at 2 ranks the two are the same, and single
 * copy, which stages nothing, prices them alike at every n. */
static void test_staged_once(void)
{
    plan_model_reload();
    const size_t sizes[] = {4 << 10, 64 << 10, 1 << 20};
    const int counts[] = {2, 3, 4, 8};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++) {
            int n = counts[j];
            plan_query all = grid_query(CORE_COLL_ALLGATHER, sizes[i], n, 2);
            plan_query each = grid_query(CORE_COLL_ALLTOALL, sizes[i], n, 2);
            double gathered = candidate_ns(&all, PLAN_MOVE_PULL, LANE_CELLS);
            double exchanged = candidate_ns(&each, PLAN_MOVE_PULL, LANE_CELLS);
            double cma_gathered = candidate_ns(&all, PLAN_MOVE_PULL, LANE_CMA);
            double cma_exchanged = candidate_ns(&each, PLAN_MOVE_PULL, LANE_CMA);
            CHECK(gathered > 0 && exchanged > 0, "allgather/alltoall of %zu bytes at n %d: priced %g and %g ns",
                  sizes[i], n, gathered, exchanged);
            if (n == 2)
                CHECK(fabs(gathered - exchanged) < 1e-6 * exchanged,
                      "at 2 ranks allgather (%g ns) and alltoall (%g) over the cells are one transfer", gathered,
                      exchanged);
            else
                CHECK(gathered < exchanged * (1 - 0.2 * (n - 2) / (n - 1)),
                      "allgather of %zu bytes at n %d over the cells: %g ns, alltoall %g; the owner stages once",
                      sizes[i], n, gathered, exchanged);
            CHECK(fabs(cma_gathered - cma_exchanged) < 1e-6 * cma_exchanged,
                  "single copy stages nothing: allgather %g ns, alltoall %g at n %d", cma_gathered, cma_exchanged, n);
        }
}

/* A staged reduction reads its inputs from the owners' cores: what the
 * cells lane's transfer costs beyond the owner's copy in. With the figures
 * the start-up probe measured on the 2-core VM in its fast spells (cores
 * exchange cache lines in 0.11 us) the cells keep reductions; with those of
 * its slow spells (0.38 us: cells 3.6 GB/s, cma unchanged) the crossing
 * makes a 256 KiB reduce and allreduce cheaper over cma, as measured (OSU,
 * np 2: reduce 0.56-0.98x of Open MPI over the cells, 0.89-1.39x over cma;
 * allreduce 1.1-2.1x, 1.8-3.4x). */
static void test_staged_crossing(void)
{
    char path[] = "/tmp/shoal-test-tuning-XXXXXX";
    tuning_file_begin(path);
    plan_model fast, slow;
    plan_model_defaults(&fast);
    fast.copy_bw = 38.4, fast.copy_mem_bw = 24.7, fast.reduce_bw = 26.9, fast.sync_ns = 120;
    fast.lane[LANE_CELLS] = (lane_cost){.latency_ns = 118, .bw_dedicated = 7.7, .bw_shared = 3.0};
    fast.lane[LANE_CMA] = (lane_cost){.latency_ns = 1192, .bw_dedicated = 8.4};
    slow = fast;
    slow.lane[LANE_CELLS] = (lane_cost){.latency_ns = 290, .bw_dedicated = 3.0, .bw_shared = 1.4};
    slow.lane[LANE_CMA] = (lane_cost){.latency_ns = 1950, .bw_dedicated = 7.0};
    const core_coll colls[] = {CORE_COLL_REDUCE, CORE_COLL_ALLREDUCE};
    for (int i = 0; i < 2; i++) {
        plan_query q = grid_query(colls[i], 256 << 10, 2, 2);
        q.inputs = PLAN_INPUTS_EITHER;
        plan_model_use(&fast);
        plan_choice in_fast = plan_choose(&q);
        double cells_fast = candidate_ns(&q, i ? PLAN_ALLREDUCE_FLAT : PLAN_REDUCE_FLAT, LANE_CELLS);
        plan_model_use(&slow);
        plan_choice in_slow = plan_choose(&q);
        double cells_slow = candidate_ns(&q, i ? PLAN_ALLREDUCE_FLAT : PLAN_REDUCE_FLAT, LANE_CELLS);
        CHECK(in_fast.lane == LANE_CELLS, "%s of 256 KiB, fast spell: %s over %s", core_coll_name(colls[i]),
              plan_algo_name(in_fast.algo), plan_lanes_label(in_fast.lane, in_fast.stripe));
        CHECK(in_slow.lane == LANE_CMA, "%s of 256 KiB, slow spell: %s over %s", core_coll_name(colls[i]),
              plan_algo_name(in_slow.algo), plan_lanes_label(in_slow.lane, in_slow.stripe));
        CHECK(cells_slow > 2 * cells_fast, "%s flat over cells: %g ns in the slow spell, %g in the fast",
              core_coll_name(colls[i]), cells_slow, cells_fast);
    }
    tuning_file_done(path);
}

/* With the start-up probe's figures of a slow spell at np 2 (cells 3.4
 * GB/s, 280 ns; cma 6.3 GB/s, 1949 ns to the first byte), single copy is
 * priced within the guard band of the cells for an 8 KiB scatter block,
 * but the band starts at 32 KiB: the cells keep it (over cma it ran 0.80x
 * of MPICH 4's, over the cells 1.00x). From 32 KiB the band holds. */
static void test_single_copy_band_floor(void)
{
    char path[] = "/tmp/shoal-test-tuning-XXXXXX";
    tuning_file_begin(path);
    plan_model slow;
    plan_model_defaults(&slow);
    slow.copy_bw = 37.7, slow.copy_mem_bw = 19.2, slow.reduce_bw = 26.0, slow.sync_ns = 240;
    slow.lane[LANE_CELLS] = (lane_cost){.latency_ns = 280, .bw_dedicated = 3.4};
    slow.lane[LANE_CMA] = (lane_cost){.latency_ns = 1949, .bw_dedicated = 6.3};
    plan_model_use(&slow);
    plan_query q = grid_query(CORE_COLL_SCATTER, 8 << 10, 2, 2);
    double cells = candidate_ns(&q, PLAN_MOVE_PULL, LANE_CELLS), cma = candidate_ns(&q, PLAN_MOVE_PULL, LANE_CMA);
    CHECK(cma > cells && cma <= cells * (1 + PLAN_SINGLE_COPY_BAND),
          "scatter of 8 KiB: cma %g ns against cells %g, no longer a case for the band", cma, cells);
    plan_choice ch = plan_choose(&q);
    CHECK(ch.lane == LANE_CELLS, "scatter of 8 KiB in a slow spell: %s over %s", plan_algo_name(ch.algo),
          plan_lanes_label(ch.lane, ch.stripe));
    tuning_file_done(path);
}

/* Gather by push and scatter by pull on cma: with a core per rank the root
 * moves a share of every other rank's block itself (flat bcast: writes 1/n
 * of the message into each rank); none where ranks take turns on cores,
 * and none on a lane that cannot put. */
static void test_root_share(void)
{
    char path[] = "/tmp/shoal-test-tuning-XXXXXX";
    tuning_file_begin(path);
    plan_model_reload();
    const core_coll colls[] = {CORE_COLL_GATHER, CORE_COLL_SCATTER, CORE_COLL_BCAST};
    const plan_algo algos[] = {PLAN_MOVE_PUSH, PLAN_MOVE_PULL, PLAN_BCAST_FLAT};
    const int sizes[] = {2, 3, 5};
    for (int c = 0; c < 3; c++)
        for (int i = 0; i < 3; i++) {
            int n = sizes[i];
            plan_query q = grid_query(colls[c], 1 << 20, n, n);
            plan_candidate cand[64];
            int k = plan_candidates(&q, cand, 64);
            double share = -1;
            for (int j = 0; j < k; j++) {
                if (cand[j].algo == algos[c] && cand[j].lane == LANE_CMA && cand[j].stripe == LANE_COUNT)
                    share = cand[j].root_share;
                else
                    CHECK(cand[j].root_share == 0, "%s n=%d: root share on %s over %s", core_coll_name(colls[c]), n,
                          plan_algo_name(cand[j].algo), plan_lanes_label(cand[j].lane, cand[j].stripe));
            }
            CHECK(share > 0 && share <= 0.5 && (colls[c] != CORE_COLL_BCAST || share == 1.0 / n),
                  "%s n=%d with a core each: root share %g", core_coll_name(colls[c]), n, share);
            plan_choice ch = plan_choose(&q);
            CHECK(ch.algo != algos[c] || ch.lane != LANE_CMA || ch.root_share == share, "chosen share %g, priced %g",
                  ch.root_share, share);
            q.cores = 1;
            k = plan_candidates(&q, cand, 64);
            for (int j = 0; j < k; j++)
                CHECK(cand[j].root_share == 0, "%s n=%d on one core: root share %g", core_coll_name(colls[c]), n,
                      cand[j].root_share);
        }
    tuning_file_done(path);
}

/* The guard band between lanes (PLAN_SINGLE_COPY_BAND): where collectives
 * only move blocks of PLAN_SINGLE_COPY_BAND_MIN or more, a staged choice
 * has no single-copy candidate within the band; elsewhere (smaller blocks,
 * bcast, reductions) the cheapest goes first. */
static void test_single_copy_band(void)
{
    char path[] = "/tmp/shoal-test-tuning-XXXXXX";
    tuning_file_begin(path);
    plan_model_reload();
    const core_coll colls[] = {CORE_COLL_GATHER, CORE_COLL_SCATTER, CORE_COLL_ALLGATHER, CORE_COLL_ALLTOALL,
                               CORE_COLL_BCAST,  CORE_COLL_REDUCE,  CORE_COLL_ALLREDUCE};
    int banded = 0;
    for (size_t ci = 0; ci < sizeof colls / sizeof colls[0]; ci++)
        for (int n = 2; n <= 8; n *= 2)
            for (size_t bytes = 1024; bytes <= 4 << 20; bytes *= 2) {
                plan_query q = grid_query(colls[ci], bytes, n, 2);
                plan_candidate c[64];
                int k = plan_candidates(&q, c, 64);
                double cheapest = HUGE_VAL;
                const plan_candidate *single = NULL;
                for (int i = 0; i < k; i++) {
                    if (c[i].excluded)
                        continue;
                    cheapest = fmin(cheapest, c[i].ns);
                    if (!single && c[i].stripe == LANE_COUNT && lane_can(c[i].lane, LANE_CAP_SINGLE_COPY) &&
                        !lane_can(c[i].lane, LANE_CAP_TWO_SIDED))
                        single = &c[i];
                }
                bool moves = plan_moves_blocks(colls[ci]) && bytes >= PLAN_SINGLE_COPY_BAND_MIN;
                if (!moves || c[0].ns == cheapest) {
                    CHECK(c[0].ns == cheapest, "%s %zu n %d: %s over %s first at %g, the cheapest %g",
                          core_coll_name(q.coll), bytes, n, plan_algo_name(c[0].algo), plan_lane_name(c[0].lane),
                          c[0].ns, cheapest);
                    CHECK(!moves || !lane_can(c[0].lane, LANE_CAP_STAGED) || !single ||
                              single->ns > cheapest * (1 + PLAN_SINGLE_COPY_BAND),
                          "%s %zu n %d: staged first with single copy at %g of it", core_coll_name(q.coll), bytes, n,
                          single ? single->ns / cheapest : 0);
                } else {
                    banded++;
                    CHECK(c[0].ns <= cheapest * (1 + PLAN_SINGLE_COPY_BAND) &&
                              lane_can(c[0].lane, LANE_CAP_SINGLE_COPY),
                          "%s %zu n %d: %s over %s first at %g of the cheapest", core_coll_name(q.coll), bytes, n,
                          plan_algo_name(c[0].algo), plan_lane_name(c[0].lane), c[0].ns / cheapest);
                    plan_choice ch = plan_choose(&q);
                    CHECK(ch.lane == c[0].lane && ch.algo == c[0].algo, "%s %zu n %d: chose %s over %s",
                          core_coll_name(q.coll), bytes, n, plan_algo_name(ch.algo), plan_lane_name(ch.lane));
                }
            }
    CHECK(banded > 0, "the band never took a single-copy candidate");
    tuning_file_done(path);
}

/* Single-copy transfers of many ranks into or out of one process queue on
 * its page tables (measured on a 16-core machine): a bcast's readers of one
 * root buffer, a gather's writers into one, a scatter's readers of one. */
static void test_crowded_single_copy(void)
{
    char path[] = "/tmp/shoal-test-tuning-XXXXXX";
    tuning_file_begin(path);
    plan_model_reload();
    plan_model m;
    plan_model_defaults(&m);
    double S = 1 << 20;
    plan_query q = {.coll = CORE_COLL_BCAST,
                    .bytes = 1 << 20,
                    .n = 16,
                    .ppn = 16,
                    .cores = 16,
                    .window = 128 << 10,
                    .usable = {true, true, true}};
    double alone = plan_lane_time(&m.lane[LANE_CMA], S * 15 / 16, 16);
    CHECK(candidate_ns(&q, PLAN_BCAST_FLAT, LANE_CMA) > 7 * alone,
          "15 readers of one 1 MiB buffer priced %g ns, one alone %g", candidate_ns(&q, PLAN_BCAST_FLAT, LANE_CMA),
          alone);
    plan_choice ch = plan_choose(&q);
    CHECK(!(ch.algo == PLAN_BCAST_FLAT && ch.lane == LANE_CMA), "1 MiB bcast at np 16: flat over cma");
    q.n = q.ppn = q.cores = 2; /* one reader: nothing to queue behind */
    CHECK(close_to(candidate_ns(&q, PLAN_BCAST_FLAT, LANE_CMA), plan_lane_time(&m.lane[LANE_CMA], S / 2, 2) + m.sync_ns,
                   1e-9),
          "one reader priced as crowded");

    q = (plan_query){.coll = CORE_COLL_GATHER,
                     .bytes = 4,
                     .n = 16,
                     .ppn = 16,
                     .cores = 16,
                     .window = 128 << 10,
                     .usable = {true, true, true}};
    CHECK(plan_choose(&q).lane == LANE_CELLS, "4 B gather at np 16 not over cells");
    /* Blocks of 4 MiB spread the root's buffer over 32 regions: the 15
     * writers no longer queue, and single copy wins. */
    q.bytes = 4 << 20;
    ch = plan_choose(&q);
    CHECK(ch.algo == PLAN_MOVE_PUSH && ch.lane == LANE_CMA, "4 MiB gather at np 16: %s over %s",
          plan_algo_name(ch.algo), plan_lanes_label(ch.lane, ch.stripe));
    q.coll = CORE_COLL_SCATTER;
    CHECK(plan_choose(&q).lane == LANE_CMA, "4 MiB scatter at np 16 not over cma");

    /* Gatherv: small blocks go with the headers over cells, large ones as
     * gather's large blocks would, by push over cma with its root share,
     * whatever size this rank sends. Forcing a lane keeps pull. */
    q.coll = CORE_COLL_GATHERV;
    plan_query big = q;
    big.coll = CORE_COLL_GATHER;
    big.bytes = 1 << 20;
    plan_choice plain = plan_choose(&big);
    for (size_t bytes = 0; bytes <= (4 << 20); bytes += 2 << 20) {
        q.bytes = bytes;
        ch = plan_choose(&q);
        CHECK(ch.algo == PLAN_MOVE_PULL && ch.lane == LANE_CELLS && ch.eager_limit > 0,
              "gatherv of %zu B: %s over %s before the sizes are known", bytes, plan_algo_name(ch.algo),
              plan_lane_name(ch.lane));
        CHECK(ch.large_lane == plain.lane && ch.large_algo == plain.algo && ch.root_share == plain.root_share,
              "gatherv's large blocks by %s over %s (root share %g); 1 MiB gather's by %s over %s (%g)",
              plan_algo_name(ch.large_algo), plan_lane_name(ch.large_lane), ch.root_share, plan_algo_name(plain.algo),
              plan_lane_name(plain.lane), plain.root_share);
    }
    CHECK(plain.algo == PLAN_MOVE_PUSH && plain.lane == LANE_CMA, "1 MiB gather at np 16: %s over %s",
          plan_algo_name(plain.algo), plan_lane_name(plain.lane));
    setenv("SHOAL_LANES", "cma", 1);
    core_config_reload();
    ch = plan_choose(&q);
    CHECK(ch.lane == LANE_CMA && ch.large_algo == PLAN_MOVE_PULL, "gatherv forced onto cma: %s, large by %s",
          plan_lane_name(ch.lane), plan_algo_name(ch.large_algo));
    unsetenv("SHOAL_LANES");
    core_config_reload();
    q.coll = CORE_COLL_SCATTERV;
    CHECK(plan_choose(&q).large_algo == PLAN_MOVE_PULL, "scatterv's large blocks not by pull");
    tuning_file_done(path);
}

/* A copy runs at copy_bw while its buffers fit the core's cache, and tends
 * to copy_mem_bw as they outgrow it; the machine's cache is where the model
 * says. The root of a gather by push, whose own copy slows down beyond the
 * cache, then takes a smaller share of the others' blocks. */
static void test_cache(void)
{
    size_t cache = plan_core_cache_bytes();
    plan_model m;
    plan_model_defaults(&m);
    CHECK(cache >= 4096 && m.cache_bytes == (double)cache, "cache %zu, model %g", cache, m.cache_bytes);
    CHECK(m.copy_mem_bw == m.copy_bw, "built-in figures: one copy rate (%g, %g)", m.copy_bw, m.copy_mem_bw);
    m.cache_bytes = 1 << 20, m.copy_bw = 20, m.copy_mem_bw = 5;
    CHECK(close_to(plan_copy_ns(&m, 256 << 10, 512 << 10), (256 << 10) / 20.0, 1e-12), "in cache");
    CHECK(close_to(plan_copy_ns(&m, 2 << 20, 4 << 20), (2 << 20) * (0.25 / 20 + 0.75 / 5), 1e-12), "a quarter cached");
    double far = plan_copy_ns(&m, 1 << 20, 64 << 20);
    CHECK(far < (1 << 20) / 5.0 && far > (1 << 20) / 5.2, "far beyond the cache: %g", far);
    m.copy_mem_bw = 20;
    CHECK(close_to(plan_copy_ns(&m, 8 << 20, 16 << 20), (8 << 20) / 20.0, 1e-12), "one rate");

    char path[] = "/tmp/shoal-test-tuning-XXXXXX";
    tuning_file_begin(path);
    plan_query q = {
        .coll = CORE_COLL_GATHER, .n = 2, .ppn = 2, .cores = 2, .window = 128 << 10, .usable = {true, true, true}};
    double share[2][2]; /* [copy_mem_bw below copy_bw?][beyond the cache?] */
    for (int slow = 0; slow < 2; slow++) {
        plan_model_defaults(&m);
        m.copy_bw = 20, m.copy_mem_bw = slow ? 5 : 20;
        CHECK(plan_model_save(&m, path) == 0, "save");
        plan_model_reload();
        for (int big = 0; big < 2; big++) {
            q.bytes = big ? 8 * cache : cache / 4;
            plan_candidate cand[64];
            int k = plan_candidates(&q, cand, 64);
            share[slow][big] = -1;
            for (int j = 0; j < k; j++)
                if (cand[j].algo == PLAN_MOVE_PUSH && cand[j].lane == LANE_CMA && cand[j].stripe == LANE_COUNT)
                    share[slow][big] = cand[j].root_share;
        }
    }
    CHECK(share[0][0] > 0 && fabs(share[0][0] - share[0][1]) <= 1.0 / 64,
          "one copy rate: the root's share %g in cache, %g beyond", share[0][0], share[0][1]);
    CHECK(share[1][0] == share[0][0] && share[1][1] < share[1][0],
          "memory slower than cache: the root's share %g in cache, %g beyond", share[1][0], share[1][1]);
    tuning_file_done(path);
}

/* Block-wise reads of a single-copy lane cost what its transfers cost: with
 * the built-in figures, 2 ranks with a core each reduce 1-4 MB flat over the
 * cells (with inputs written before each call, sliced over cma measured
 * 5-15 % slower there), and sliced over cma is priced above the lane's own
 * transfers of its two half-vectors. */
static void test_blockwise_reads(void)
{
    char path[] = "/tmp/shoal-test-tuning-XXXXXX";
    tuning_file_begin(path);
    plan_model m;
    plan_model_defaults(&m);
    CHECK(plan_model_save(&m, path) == 0, "save");
    plan_model_reload();
    for (size_t bytes = 1 << 20; bytes <= 4 << 20; bytes *= 2) {
        plan_query q = {.coll = CORE_COLL_ALLREDUCE,
                        .bytes = bytes,
                        .n = 2,
                        .ppn = 2,
                        .cores = 2,
                        .window = 128 << 10,
                        .usable = {true, true, true}};
        plan_choice ch = plan_choose(&q);
        CHECK(ch.algo == PLAN_ALLREDUCE_FLAT && ch.lane == LANE_CELLS, "allreduce %zu bytes: %s over %s", bytes,
              plan_algo_name(ch.algo), plan_lanes_label(ch.lane, ch.stripe));
        plan_candidate c[64];
        int k = plan_candidates(&q, c, 64);
        double sliced = -1;
        for (int j = 0; j < k; j++)
            if (c[j].algo == PLAN_ALLREDUCE_SLICED && c[j].lane == LANE_CMA)
                sliced = c[j].formula_ns;
        double halves = 2 * plan_lane_time(&m.lane[LANE_CMA], (double)bytes / 2, 2);
        CHECK(sliced >= halves, "sliced over cma %g ns, below its two transfers' %g ns", sliced, halves);
    }
    tuning_file_done(path);
}

/* A staged reduction past the cache, with the start-up probe's figures on
 * the 2-core Xeon VM (2 MiB of L2 a core; memory 4x slower than the cache;
 * the cells 7.7 + 2.0/ppn GB/s; cma 10.5 GB/s on bytes just written). The
 * cells' crossing keeps its rate per byte (the lane's figures hold a copy
 * in that stays in cache), and the input's copy into the cells streams
 * where it and the reduction's output outgrow the cache: fresh allreduce
 * flat over the cells took 150-165 us at 1 MiB, 310-336 at 2 and 611-696 at
 * 4, sliced over cma 160-173, 270-300 and 512-614; so the cells keep 1 MiB
 * and single copy takes 2 and 4. */
static void test_staged_past_cache(void)
{
    char path[] = "/tmp/shoal-test-tuning-XXXXXX";
    tuning_file_begin(path);
    plan_model m;
    plan_model_defaults(&m);
    m.cache_bytes = 2 << 20, m.copy_bw = 56.6, m.copy_mem_bw = 14.9, m.reduce_bw = 50.7, m.sync_ns = 143;
    m.lane[LANE_CELLS] = (lane_cost){.latency_ns = 85, .overhead_ns = 7.5, .bw_dedicated = 7.7, .bw_shared = 2.0};
    m.lane[LANE_CMA] = (lane_cost){.latency_ns = 883, .overhead_ns = 665, .bw_dedicated = 24.7};
    m.lane_written[LANE_CMA] = (lane_cost){.latency_ns = 883, .overhead_ns = 1782, .bw_dedicated = 10.5};
    plan_model_use(&m); /* a file would not keep the cache's size: the machine's is read */
    double per_byte[3];
    for (int i = 0; i < 3; i++) {
        size_t bytes = (size_t)1 << (20 + i);
        plan_query q = grid_query(CORE_COLL_ALLREDUCE, bytes, 2, 2);
        q.inputs = PLAN_INPUTS_FRESH;
        plan_choice ch = plan_choose(&q);
        bool cells = ch.algo == PLAN_ALLREDUCE_FLAT && ch.lane == LANE_CELLS;
        bool sliced_cma = ch.algo == PLAN_ALLREDUCE_SLICED && ch.lane == LANE_CMA;
        CHECK(i == 0 ? cells : sliced_cma, "fresh allreduce of %zu bytes at np 2: %s over %s", bytes,
              plan_algo_name(ch.algo), plan_lanes_label(ch.lane, ch.stripe));
        per_byte[i] = candidate_ns(&q, PLAN_ALLREDUCE_FLAT, LANE_CELLS) / (double)bytes;
    }
    CHECK(per_byte[1] >= per_byte[0] && per_byte[2] >= per_byte[1],
          "flat over the cells cheaper per byte past the cache: %g, %g, %g ns", per_byte[0], per_byte[1], per_byte[2]);
    tuning_file_done(path);
}

/* The algorithm table and the lane descriptions: every algorithm the planner
 * offers for a collective has a run function in the collectives layer, its
 * name is unique within the collective and found again by name; every
 * collective has an algorithm on the lane every team has; the lanes' ops
 * tables say what their descriptions say. */
/* A repeat is priced on fresh and on unchanged inputs: unchanged ones never
 * cost more; the choice is the candidate whose worse regret is least (and
 * at least 1); a reduction keeps the grouping of its first call; and with
 * memory slower than cache, some data movement that fresh inputs send over
 * the cells goes over a single-copy lane when repeated. */
static void test_repeats(void)
{
    char path[] = "/tmp/shoal-test-tuning-XXXXXX";
    tuning_file_begin(path);
    plan_model m;
    plan_model_defaults(&m);
    m.copy_bw = 40, m.copy_mem_bw = 10;
    CHECK(plan_model_save(&m, path) == 0, "save");
    plan_model_reload();
    const core_coll colls[] = {
        CORE_COLL_BCAST,   CORE_COLL_REDUCE,    CORE_COLL_ALLREDUCE, CORE_COLL_GATHER,
        CORE_COLL_SCATTER, CORE_COLL_ALLGATHER, CORE_COLL_ALLTOALL,  CORE_COLL_REDUCE_SCATTER_BLOCK};
    int moved = 0, checked = 0;
    for (size_t ci = 0; ci < sizeof colls / sizeof colls[0]; ci++)
        for (int n = 2; n <= 8; n *= 2)
            for (size_t bytes = 64; bytes <= 4 << 20; bytes *= 4) {
                plan_query q = grid_query(colls[ci], bytes, n, n);
                plan_candidate fresh[64], same[64], either[64];
                int kf = plan_candidates(&q, fresh, 64);
                q.inputs = PLAN_INPUTS_UNCHANGED;
                int ks = plan_candidates(&q, same, 64);
                q.inputs = PLAN_INPUTS_EITHER;
                int ke = plan_candidates(&q, either, 64);
                CHECK(kf == ks && kf == ke && kf > 0, "%s %zu n %d: %d, %d and %d candidates", core_coll_name(q.coll),
                      bytes, n, kf, ks, ke);
                /* The cheapest allowed of each state (the guard band may
                 * have put a single-copy candidate first). */
                double best_fresh = HUGE_VAL, best_same = HUGE_VAL, least = HUGE_VAL;
                for (int i = 0; i < kf; i++)
                    if (!fresh[i].excluded)
                        best_fresh = fmin(best_fresh, fresh[i].ns);
                for (int i = 0; i < ks; i++)
                    if (!same[i].excluded)
                        best_same = fmin(best_same, same[i].ns);
                for (int i = 0; i < ke; i++)
                    if (!either[i].excluded)
                        least = fmin(least, either[i].regret);
                for (int i = 0; i < ke; i++) {
                    const plan_candidate *c = &either[i];
                    CHECK(c->unchanged_ns <= c->ns * (1 + 1e-12), "%s %zu n %d: %s over %s unchanged %g > fresh %g",
                          core_coll_name(q.coll), bytes, n, plan_algo_name(c->algo), plan_lane_name(c->lane),
                          c->unchanged_ns, c->ns);
                    double want = fmax(c->ns / best_fresh, c->unchanged_ns / best_same);
                    CHECK(close_to(c->regret, want, 1e-9), "%s %zu n %d: regret %g, want %g", core_coll_name(q.coll),
                          bytes, n, c->regret, want);
                }
                /* The least regret first, or a single-copy candidate within
                 * the guard band of it where the collective only moves blocks. */
                bool banded = plan_moves_blocks(colls[ci]) && bytes >= PLAN_SINGLE_COPY_BAND_MIN &&
                              lane_can(either[0].lane, LANE_CAP_SINGLE_COPY) && either[0].stripe == LANE_COUNT;
                CHECK(either[0].regret == least ||
                          (banded && either[0].regret <= least * (1 + PLAN_SINGLE_COPY_BAND) * (1 + 1e-12)),
                      "%s %zu n %d: a candidate of less regret (%g < %g over %s)", core_coll_name(q.coll), bytes, n,
                      least, either[0].regret, plan_lane_name(either[0].lane));
                CHECK(either[0].regret >= 1 && !either[0].excluded, "%s %zu n %d: chosen regret %g",
                      core_coll_name(q.coll), bytes, n, either[0].regret);
                if (colls[ci] == CORE_COLL_REDUCE)
                    CHECK((either[0].algo == PLAN_REDUCE_TREE) == (fresh[0].algo == PLAN_REDUCE_TREE),
                          "reduce %zu n %d: a repeat by %s after a first call by %s", bytes, n,
                          plan_algo_name(either[0].algo), plan_algo_name(fresh[0].algo));
                plan_choice ch = plan_choose(&q);
                CHECK(ch.algo == either[0].algo && ch.lane == either[0].lane && ch.inputs == PLAN_INPUTS_EITHER,
                      "%s %zu n %d: plan_choose follows the least regret", core_coll_name(q.coll), bytes, n);
                moved += lane_can(fresh[0].lane, LANE_CAP_STAGED) && lane_can(either[0].lane, LANE_CAP_SINGLE_COPY);
                checked++;
            }
    CHECK(moved > 0, "no repeat of %d moved from the cells to a single-copy lane", checked);
    tuning_file_done(path);
}

/* On unchanged inputs a single-copy read saves what its copy gains from the
 * cache, and only that: the rest of the lane's time per byte (the pages it
 * pins) stays. A flat bcast over cma at np 2 makes one read of the message. */
static void test_unchanged_saves_one_copy(void)
{
    char path[] = "/tmp/shoal-test-tuning-XXXXXX";
    tuning_file_begin(path);
    plan_model m;
    plan_model_defaults(&m);
    m.copy_bw = 40, m.copy_mem_bw = 30;
    CHECK(plan_model_save(&m, path) == 0, "save");
    plan_model_reload();
    for (size_t bytes = 256 << 10; bytes <= 4 << 20; bytes *= 4) {
        plan_query q = {.coll = CORE_COLL_BCAST,
                        .bytes = bytes,
                        .n = 2,
                        .ppn = 2,
                        .cores = 2,
                        .window = 128 << 10,
                        .inputs = PLAN_INPUTS_EITHER,
                        .usable = {true, true, true}};
        plan_candidate either[64];
        int k = plan_candidates(&q, either, 64);
        const plan_candidate *flat_cma = NULL;
        for (int i = 0; i < k; i++)
            if (either[i].algo == PLAN_BCAST_FLAT && either[i].lane == LANE_CMA && either[i].stripe == LANE_COUNT)
                flat_cma = &either[i];
        CHECK(flat_cma != NULL, "bcast %zu: no flat candidate over cma", bytes);
        if (!flat_cma)
            continue;
        double one_copy_saves = (double)bytes / m.copy_mem_bw - (double)bytes / m.copy_bw;
        double saved = (flat_cma->ns - flat_cma->unchanged_ns) / flat_cma->factor;
        CHECK(saved > 0 && saved <= one_copy_saves * (1 + 1e-9),
              "bcast %zu over cma: unchanged inputs save %g ns, one copy in cache %g", bytes, saved, one_copy_saves);
    }
    tuning_file_done(path);
}

/* Whether a repeat finds its inputs in cache is judged by the call's size,
 * not by each transfer's: a sliced reduce reads slices smaller than the
 * message, in cache as much as flat's whole input. Below PLAN_UNCHANGED_MIN
 * no candidate is priced lower on unchanged inputs. */
static void test_unchanged_by_call_size(void)
{
    char path[] = "/tmp/shoal-test-tuning-XXXXXX";
    tuning_file_begin(path);
    plan_model m;
    plan_model_defaults(&m);
    m.copy_bw = 40, m.copy_mem_bw = 10;
    plan_model_use(&m);
    const size_t sizes[] = {32 << 10, 128 << 10}; /* either side of PLAN_UNCHANGED_MIN, 64 KiB */
    for (int si = 0; si < 2; si++) {
        plan_query q = grid_query(CORE_COLL_REDUCE, sizes[si], 2, 2);
        q.inputs = PLAN_INPUTS_EITHER;
        plan_candidate c[64];
        int k = plan_candidates(&q, c, 64), sliced_cma = 0;
        for (int i = 0; i < k; i++) {
            if (si == 0)
                CHECK(close_to(c[i].unchanged_ns, c[i].ns, 1e-12), "reduce %zu: %s over %s unchanged %g, fresh %g",
                      sizes[si], plan_algo_name(c[i].algo), plan_lane_name(c[i].lane), c[i].unchanged_ns, c[i].ns);
            if (c[i].algo == PLAN_REDUCE_SLICED && c[i].lane == LANE_CMA && c[i].stripe == LANE_COUNT) {
                sliced_cma++;
                if (si == 1)
                    CHECK(c[i].unchanged_ns < c[i].ns * 0.9, "reduce %zu sliced over cma: unchanged %g, fresh %g",
                          sizes[si], c[i].unchanged_ns, c[i].ns);
            }
        }
        CHECK(sliced_cma == 1, "reduce %zu: %d sliced candidates over cma", sizes[si], sliced_cma);
    }
    tuning_file_done(path);
}

static void test_tables(void)
{
    int count;
    const plan_algorithm *table = plan_algorithms(&count);
    CHECK(count == PLAN_ALGO_COUNT, "table of %d rows for %d algorithms", count, PLAN_ALGO_COUNT);
    for (int a = 0; a < count; a++) {
        CHECK(table[a].id == (plan_algo)a, "row %d holds algorithm %d", a, (int)table[a].id);
        CHECK(table[a].name && table[a].description && table[a].cost && table[a].colls, "row %d incomplete", a);
        for (int c = 0; c < CORE_COLL_COUNT; c++) {
            if (!(table[a].colls & (1u << c)))
                continue;
            CHECK(coll_runs((core_coll)c, (plan_algo)a), "%s:%s has no run function", core_coll_name((core_coll)c),
                  table[a].name);
            CHECK(plan_algo_from_name((core_coll)c, table[a].name, strlen(table[a].name)) == a,
                  "%s:%s not found by its name (another of that name first?)", core_coll_name((core_coll)c),
                  table[a].name);
        }
    }
    for (int c = 0; c < CORE_COLL_COUNT; c++) {
        bool any = false;
        for (int a = 0; a < count; a++)
            any = any || ((table[a].colls & (1u << c)) && lane_can(lane_every_team(), table[a].needs));
        CHECK(any, "%s has no algorithm on the lane every team has", core_coll_name((core_coll)c));
        CHECK(!coll_runs((core_coll)c, PLAN_ALGO_COUNT), "coll_runs accepts an id out of range");
    }
    const lane_ops *ops[] = {&lane_cells, &lane_cma};
    for (int i = 0; i < 2; i++) {
        const lane_desc *d = lane_describe(ops[i]->id);
        CHECK(!strcmp(d->name, ops[i]->name), "lane %s described as %s", ops[i]->name, d->name);
        CHECK(ops[i]->single_copy == lane_can(d->id, LANE_CAP_SINGLE_COPY) &&
                  ops[i]->two_sided == lane_can(d->id, LANE_CAP_TWO_SIDED) &&
                  (ops[i]->put != NULL) == lane_can(d->id, LANE_CAP_PUT) &&
                  (ops[i]->note_arrived != NULL) == lane_can(d->id, LANE_CAP_NOTES),
              "lane %s: ops table and description disagree", d->name);
        CHECK(lane_from_name(d->name, strlen(d->name)) == d->id, "lane %s not found by name", d->name);
    }
    CHECK(!strcmp(plan_lanes_label(LANE_CMA, LANE_HOST), "cma+host"), "striped label %s",
          plan_lanes_label(LANE_CMA, LANE_HOST));
}

/* The probe's plausibility rule: a lane's 1 MiB rate at 2 movers, computed
 * here from the formula, against a fifth of memcpy beyond the cache; a
 * lane is refused only where the built-in figures price it faster. */
static void test_plausibility(void)
{
    lane_cost slow = {.latency_ns = 100, .bw_dedicated = 2.0}; /* 2 GB/s */
    lane_cost fine = {.latency_ns = 100, .bw_dedicated = 12.0};
    lane_cost builtin = {.latency_ns = 100, .bw_dedicated = 5.0};
    double mib = 1 << 20;
    CHECK(fabs(plan_lane_rate(&slow, 2) - mib / (100 + mib / 2.0)) < 1e-9, "rate %g", plan_lane_rate(&slow, 2));
    lane_cost shared = {.bw_dedicated = 4.0, .bw_shared = 8.0}; /* 4 + 8/ppn GB/s */
    CHECK(fabs(plan_lane_rate(&shared, 2) - 8.0) < 1e-9 && fabs(plan_lane_rate(&shared, 4) - 6.0) < 1e-9,
          "shared part divided by the movers");
    CHECK(plan_lane_implausible(&slow, &builtin, 48.0), "2 GB/s against 48 GB/s memcpy: refused");
    CHECK(!plan_lane_implausible(&fine, &builtin, 48.0), "12 GB/s is plausible");
    CHECK(!plan_lane_implausible(&slow, &builtin, 8.0), "2 GB/s where memcpy does 8 is plausible");
    lane_cost slower_builtin = {.latency_ns = 100, .bw_dedicated = 1.0};
    CHECK(!plan_lane_implausible(&slow, &slower_builtin, 48.0), "kept where the built-in figures are slower still");
    /* An implausible rate that every try found alike is the node's now. */
    CHECK(plan_lane_steady(3.6, 3.4), "3.4-3.6 GB/s over the tries: steady");
    CHECK(plan_lane_steady(2.0, 2.0), "the same rate each time: steady");
    CHECK(!plan_lane_steady(3.6, 1.2), "1.2-3.6 GB/s: a moment of the machine");
    CHECK(!plan_lane_steady(3.6, 0), "a try that measured nothing: not steady");
    for (int l = 0; l < LANE_COUNT; l++)
        CHECK(plan_lane_rate(&lane_describe((lane_id)l)->default_cost, 2) > 0, "lane %d has a built-in rate", l);
    /* One core's rates: any machine's copy and sum pass, from a twentieth
     * of the built-in figures to 200 times them; a probe that met a
     * descheduled rank (0.05 GB/s) or a broken clock (5 TB/s) does not. */
    plan_model builtin_core, probed;
    plan_model_defaults(&builtin_core);
    probed = builtin_core;
    CHECK(!plan_core_rates_implausible(&probed, &builtin_core), "the built-in rates are plausible");
    probed.copy_bw = 48, probed.copy_mem_bw = 9, probed.reduce_bw = 1;
    CHECK(!plan_core_rates_implausible(&probed, &builtin_core), "48, 9 and 1 GB/s are plausible");
    probed.copy_mem_bw = 0.05;
    CHECK(plan_core_rates_implausible(&probed, &builtin_core), "a copy beyond the cache at 0.05 GB/s");
    probed.copy_mem_bw = 9, probed.copy_bw = 5000;
    CHECK(plan_core_rates_implausible(&probed, &builtin_core), "a copy at 5 TB/s");
    probed.copy_bw = 48, probed.reduce_bw = 0.1;
    CHECK(plan_core_rates_implausible(&probed, &builtin_core), "a float sum at 0.1 GB/s");
    probed.reduce_bw = NAN;
    CHECK(plan_core_rates_implausible(&probed, &builtin_core), "a rate that is not a number");
}

/* Long messages across nodes: each segment size priced as a pipeline of
 * its steps (overlapping only where every rank has a core), the cheapest
 * taken, SHOAL_NODE_SEGMENT forcing one, collectives that are never cut
 * given whole. */
static void test_node_segments(void)
{
    char path[] = "/tmp/shoal-test-tuning-XXXXXX";
    tuning_file_begin(path);
    plan_query node = {.n = 4, .ppn = 4, .cores = 16, .window = 128 * 1024, .usable = {true, true, true}};
    const size_t big = 8u << 20;
    plan_node_candidate k[48];
    const core_coll cut[] = {CORE_COLL_BCAST, CORE_COLL_REDUCE, CORE_COLL_ALLREDUCE};
    /* On the built-in link, a guess, a message goes whole. */
    for (int c = 0; c < 3; c++)
        CHECK(plan_node_segment(cut[c], big, 4, &node) == big, "%s cut on a guessed link", core_coll_name(cut[c]));
    /* The same figures, measured (shoal tune --link). */
    plan_model measured;
    plan_model_defaults(&measured);
    measured.link_bw_node = 2 * measured.link_bw;
    CHECK(plan_model_save(&measured, path) == 0, "save");
    plan_model_reload();
    for (int c = 0; c < 3; c++) {
        int count = plan_node_candidates(cut[c], big, 4, &node, k, 48), best = 0;
        CHECK(count > 2 && k[0].segment == big && k[0].segments == 1, "%s: %d candidates, the whole first",
              core_coll_name(cut[c]), count);
        for (int i = 0; i < count; i++) {
            double one = k[i].first_ns + k[i].between_ns + k[i].last_ns;
            double slowest = fmax(k[i].first_ns, fmax(k[i].between_ns, k[i].last_ns));
            CHECK(k[i].segments == (big + k[i].segment - 1) / k[i].segment && k[i].between_ns > 0 &&
                      close_to(k[i].ns, one + (double)(k[i].segments - 1) * slowest, 1e-9),
                  "%s segment %zu: %g ns is not its pipeline", core_coll_name(cut[c]), k[i].segment, k[i].ns);
            if (k[i].ns < k[best].ns)
                best = i;
        }
        CHECK(plan_node_segment(cut[c], big, 4, &node) == k[best].segment && k[best].segment < big,
              "%s of 8 MiB over a 10 GB/s link: the cheapest segment (%zu) is cut", core_coll_name(cut[c]),
              k[best].segment);
    }
    /* Ranks taking turns on cores: the segments run one after another. */
    plan_query crowded = node;
    crowded.cores = 2;
    int count = plan_node_candidates(CORE_COLL_BCAST, big, 2, &crowded, k, 48);
    for (int i = 0; i < count; i++)
        CHECK(close_to(k[i].ns, (k[i].first_ns + k[i].between_ns + k[i].last_ns) * (double)k[i].segments, 1e-9),
              "oversubscribed segment %zu overlaps", k[i].segment);
    /* A link whose every message costs 10 ms: never cut. */
    plan_model slow = measured;
    slow.link_latency_ns = 1e7;
    CHECK(plan_model_save(&slow, path) == 0, "save");
    plan_model_reload();
    CHECK(plan_node_segment(CORE_COLL_ALLREDUCE, big, 4, &node) == big, "cut on a 10 ms link");
    /* Small messages and collectives that are never cut. */
    CHECK(plan_node_candidates(CORE_COLL_GATHER, big, 4, &node, k, 48) == 1 &&
              plan_node_segment(CORE_COLL_GATHER, big, 4, &node) == big && !plan_node_cuts(CORE_COLL_GATHER),
          "gather cut");
    CHECK(plan_node_candidates(CORE_COLL_ALLTOALLV, big, 4, &node, k, 48) == 0, "alltoallv runs in two levels");
    CHECK(plan_node_candidates(CORE_COLL_BCAST, 64 * 1024, 4, &node, k, 48) == 1, "64 KiB cut");
    setenv("SHOAL_NODE_SEGMENT", "256K", 1);
    core_config_reload();
    CHECK(plan_node_segment(CORE_COLL_BCAST, big, 4, &node) == 256 * 1024 &&
              plan_node_segment(CORE_COLL_BCAST, 4096, 4, &node) == 4096,
          "SHOAL_NODE_SEGMENT=256K not followed");
    unsetenv("SHOAL_NODE_SEGMENT");
    /* Competitive bcasts: asked for (their claim costs a round trip when no
     * rank is late), never on a cut message. */
    CHECK(!plan_node_bcast_first(4096, 4096, 2) && !plan_node_bcast_first(big, big, 3),
          "competitive bcast without SHOAL_NODE_BCAST=first");
    setenv("SHOAL_NODE_BCAST", "first", 1);
    core_config_reload();
    CHECK(plan_node_bcast_first(4096, 4096, 8) && !plan_node_bcast_first(big, big / 8, 8), "SHOAL_NODE_BCAST=first");
    setenv("SHOAL_NODE_BCAST", "leader", 1);
    core_config_reload();
    CHECK(!plan_node_bcast_first(4096, 4096, 2), "SHOAL_NODE_BCAST=leaders");
    unsetenv("SHOAL_NODE_BCAST");
    tuning_file_done(path);
}

/* Two levels or the host MPI flat across nodes: flat only where its price
 * with the guard band is still below the two levels', on a measured link;
 * a guessed link keeps the two levels; alltoall above its measured
 * crossover is the host's either way; SHOAL_ACROSS_NODES=two keeps them
 * always. */
static void test_node_routes(void)
{
    char path[] = "/tmp/shoal-test-tuning-XXXXXX";
    tuning_file_begin(path);
    plan_query node = {.n = 2, .ppn = 2, .cores = 16, .window = 128 * 1024, .usable = {true, true, true}};
    const core_coll priced[] = {CORE_COLL_BARRIER, CORE_COLL_BCAST,   CORE_COLL_REDUCE,    CORE_COLL_ALLREDUCE,
                                CORE_COLL_GATHER,  CORE_COLL_SCATTER, CORE_COLL_ALLGATHER, CORE_COLL_ALLTOALL};
    const int npriced = (int)(sizeof priced / sizeof priced[0]);
    /* the built-in link, a guess */
    for (int c = 0; c < npriced; c++)
        for (size_t bytes = 1; bytes <= (4u << 20); bytes *= 4) {
            plan_node_route r = plan_node_price(priced[c], bytes, 4, &node);
            CHECK(r.flat_ns > 0 && r.two_level_ns > 0, "%s of %zu: priced both ways", core_coll_name(priced[c]), bytes);
            bool want = priced[c] == CORE_COLL_ALLTOALL && bytes > 32768;
            CHECK(r.flat == want && r.why, "%s of %zu on a guessed link: flat %d", core_coll_name(priced[c]), bytes,
                  r.flat);
        }
    CHECK(plan_node_price(CORE_COLL_ALLTOALLV, 1024, 4, &node).flat_ns < 0, "alltoallv has no flat price");
    CHECK(plan_node_price(CORE_COLL_BCAST, 1024, 1, &node).flat_ns < 0, "one node: nothing to price");

    /* A measured link as fast as the node: the flat run wins somewhere, and
     * exactly where its guarded price is the lower. */
    plan_model fast;
    plan_model_defaults(&fast);
    fast.link_latency_ns = 1500;
    fast.link_bw = 12;
    fast.link_bw_node = 24;
    CHECK(plan_model_save(&fast, path) == 0, "save");
    plan_model_reload();
    int flats = 0, twos = 0;
    for (int c = 0; c < npriced; c++)
        for (size_t bytes = 1; bytes <= (4u << 20); bytes *= 4) {
            plan_node_route r = plan_node_price(priced[c], bytes, 4, &node);
            bool above = priced[c] == CORE_COLL_ALLTOALL && bytes > 32768;
            double two_levels = r.rails ? r.rails_ns : r.two_level_ns;
            CHECK(r.flat == (above || r.flat_ns * PLAN_NODE_FLAT_GUARD < two_levels),
                  "%s of %zu: flat %d at %g / %g ns", core_coll_name(priced[c]), bytes, r.flat, r.flat_ns, two_levels);
            flats += r.flat;
            twos += !r.flat;
        }
    CHECK(flats > 0 && twos > 0, "a fast measured link: %d flat, %d in two levels", flats, twos);
    CHECK(plan_node_price(CORE_COLL_ALLGATHER, 1u << 20, 4, &node).flat, "allgather of 1 MiB on a fast link: flat");
    CHECK(!plan_node_price(CORE_COLL_BARRIER, 0, 4, &node).flat, "barrier: two levels");
    /* The same link ten times slower: the two levels save more of it. */
    fast.link_latency_ns *= 10;
    fast.link_bw /= 10;
    fast.link_bw_node /= 10;
    CHECK(plan_model_save(&fast, path) == 0, "save");
    plan_model_reload();
    CHECK(!plan_node_price(CORE_COLL_ALLGATHER, 1u << 20, 4, &node).flat, "allgather of 1 MiB on a slow link: flat");
    setenv("SHOAL_ACROSS_NODES", "two", 1);
    core_config_reload();
    for (int c = 0; c < npriced; c++)
        CHECK(!plan_node_price(priced[c], 1u << 20, 4, &node).flat, "%s flat under SHOAL_ACROSS_NODES=two",
              core_coll_name(priced[c]));
    unsetenv("SHOAL_ACROSS_NODES");
    core_config_reload();
    tuning_file_done(path);
}

/* What shoal tune --link timed on a layout routes that layout's calls, not
 * the prices: the timed class, the nearest timed one below an untimed
 * class (above, under the smallest), never alltoall above its crossover;
 * other layouts, and SHOAL_ACROSS_NODES=two, keep the prices. The letters
 * survive the file, and a malformed set makes the file refused. */
static void test_node_timed_routes(void)
{
    char path[] = "/tmp/shoal-test-tuning-XXXXXX";
    tuning_file_begin(path);
    plan_query node = {.n = 2, .ppn = 2, .cores = 16, .window = 128 * 1024, .usable = {true, true, true}};
    plan_model timed;
    plan_model_defaults(&timed);
    timed.link_latency_ns = 1500;
    timed.link_bw = 12;
    timed.link_bw_node = 24;
    snprintf(timed.link_layout, sizeof timed.link_layout, "2,2");
    for (int c = 0; c < CORE_COLL_COUNT; c++)
        timed.link_timed[c][0] = 0;
    /* bcast: two levels from 4 B, the host's at 1-2 KiB, two levels again
     * at 4 KiB, untimed above 64 KiB; allgather: the host's everywhere
     * timed; alltoall: two levels up to 32 KiB. */
    const char *bcast = "--ssssssssshhsssss-----------------------";
    const char *allgather = "--hhhhhhhhhhhhhhhhhhhhh------------------";
    const char *alltoall = "--sssssssssssssss------------------------";
    memcpy(timed.link_timed[CORE_COLL_BCAST], bcast, PLAN_LINK_CLASSES + 1);
    memcpy(timed.link_timed[CORE_COLL_ALLGATHER], allgather, PLAN_LINK_CLASSES + 1);
    memcpy(timed.link_timed[CORE_COLL_ALLTOALL], alltoall, PLAN_LINK_CLASSES + 1);
    CHECK(plan_model_save(&timed, path) == 0, "save");
    char why[512];
    plan_model back;
    CHECK(plan_model_load(&back, path, false, why, sizeof why) == 0 && !strcmp(back.link_layout, "2,2") &&
              !strcmp(back.link_timed[CORE_COLL_BCAST], bcast) &&
              !strcmp(back.link_timed[CORE_COLL_ALLTOALL], alltoall) && !back.link_timed[CORE_COLL_REDUCE][0],
          "timed letters round trip: %s", why);
    plan_model_reload();
    const int two_two[] = {2, 2};
    char layout[64];
    CHECK(plan_node_layout(layout, sizeof layout, two_two, 2) && !strcmp(layout, "2,2"), "layout named %s", layout);
    CHECK(!plan_node_layout(layout, 3, two_two, 2) && !layout[0], "a cut-off name: refused, empty");
    for (int k = 0; k <= 24; k++) {
        size_t bytes = (size_t)1 << k;
        int at = k < 2 ? 2 : k > 17 ? 17 : k; /* nearest timed: above under the smallest, below past the largest */
        plan_node_route r = plan_node_choose(CORE_COLL_BCAST, bytes, plan_node_layout_timed("2,2"), 2, &node);
        CHECK(r.flat == (bcast[at] == 'h') && strstr(r.why, "shoal tune --link"), "bcast of %zu: flat %d (%s)", bytes,
              r.flat, r.why);
        r = plan_node_choose(CORE_COLL_ALLGATHER, bytes, plan_node_layout_timed("2,2"), 2, &node);
        CHECK(r.flat, "allgather of %zu timed the host's", bytes);
        r = plan_node_choose(CORE_COLL_ALLTOALL, bytes, plan_node_layout_timed("2,2"), 2, &node);
        CHECK(r.flat == (bytes > PLAN_NODES_ALLTOALL_MAX_BLOCK), "alltoall of %zu: flat %d", bytes, r.flat);
        /* Untimed collective, other layout: the prices. */
        plan_node_route priced = plan_node_price(CORE_COLL_REDUCE, bytes, 2, &node);
        r = plan_node_choose(CORE_COLL_REDUCE, bytes, plan_node_layout_timed("2,2"), 2, &node);
        CHECK(r.flat == priced.flat && !strstr(r.why, "tune --link"), "reduce of %zu untimed: priced", bytes);
        priced = plan_node_price(CORE_COLL_ALLGATHER, bytes, 2, &node);
        r = plan_node_choose(CORE_COLL_ALLGATHER, bytes, plan_node_layout_timed("3,1"), 2, &node);
        CHECK(r.flat == priced.flat, "allgather of %zu on 3,1: priced", bytes);
    }
    setenv("SHOAL_ACROSS_NODES", "two", 1);
    core_config_reload();
    CHECK(!plan_node_choose(CORE_COLL_ALLGATHER, 1024, plan_node_layout_timed("2,2"), 2, &node).flat,
          "SHOAL_ACROSS_NODES=two wins");
    unsetenv("SHOAL_ACROSS_NODES");
    core_config_reload();

    /* Malformed letters: the whole file is refused, as a corrupt one. */
    FILE *f = fopen(path, "r");
    char text[1 << 16];
    size_t len = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f)
        fclose(f);
    text[len] = 0;
    char *at = strstr(text, "--ssssssssshh");
    CHECK(at != NULL, "letters in the file");
    if (at) {
        at[2] = 'x';
        f = fopen(path, "w");
        fputs(text, f);
        fclose(f);
        CHECK(plan_model_load(&back, path, false, why, sizeof why) != 0 && strstr(why, "link_timed"),
              "malformed letters refused: %s", why);
    }
    tuning_file_done(path);
}

/* Bcast, reduce and allreduce on rails across nodes: priced from one
 * element a rank on; on a guessed link the leaders' form stays; on a
 * measured one rails run exactly where priced below it, and they win a
 * long message where one rank drives a fraction of what its node's link
 * takes, unless the ranks share cores; each one's setting forces either.
 * Other collectives have no rails. */
static void test_node_rails(void)
{
    static const core_coll railed[] = {CORE_COLL_BCAST, CORE_COLL_REDUCE, CORE_COLL_ALLREDUCE};
    static const char *setting[] = {"SHOAL_NODE_BCAST", "SHOAL_NODE_REDUCE", "SHOAL_NODE_ALLREDUCE"};
    static const char *leaders[] = {"leader", "leaders", "leaders"};
    char path[] = "/tmp/shoal-test-tuning-XXXXXX";
    tuning_file_begin(path);
    plan_query node = {.n = 4, .ppn = 4, .cores = 16, .window = 128 * 1024, .usable = {true, true, true}};
    for (int c = 0; c < 3; c++) {
        const char *name = core_coll_name(railed[c]);
        for (size_t bytes = 4; bytes <= (16u << 20); bytes *= 4) {
            plan_node_route r = plan_node_price(railed[c], bytes, 4, &node);
            CHECK(r.rails_ns > 0 && !r.rails, "%s of %zu on a guessed link: rails %d at %g ns", name, bytes, r.rails,
                  r.rails_ns);
        }
        CHECK(plan_node_rails_ns(railed[c], 3, 4, &node) < 0, "%s: rails priced below one element a rank", name);
    }
    CHECK(plan_node_price(CORE_COLL_GATHER, 1u << 20, 4, &node).rails_ns < 0 &&
              plan_node_price(CORE_COLL_ALLGATHER, 1u << 20, 4, &node).rails_ns < 0 &&
              !plan_node_rails_for(CORE_COLL_ALLTOALL),
          "rails outside bcast, reduce and allreduce");

    plan_model link;
    plan_model_defaults(&link);
    link.link_latency_ns = 2000;
    link.link_bw = 3;       /* one sender drives a quarter ... */
    link.link_bw_node = 12; /* ... of what the node's link takes */
    CHECK(plan_model_save(&link, path) == 0, "save");
    plan_model_reload();
    plan_query crowded = node;
    crowded.cores = 2;
    for (int c = 0; c < 3; c++) {
        const char *name = core_coll_name(railed[c]);
        int rails = 0;
        for (size_t bytes = 4; bytes <= (16u << 20); bytes *= 4) {
            plan_node_route r = plan_node_price(railed[c], bytes, 4, &node);
            CHECK(r.rails == (r.rails_ns < r.two_level_ns), "%s of %zu: rails %d at %g against %g ns", name, bytes,
                  r.rails, r.rails_ns, r.two_level_ns);
            rails += r.rails;
        }
        CHECK(plan_node_price(railed[c], 16u << 20, 4, &node).rails, "%s: 16 MiB on a link one rank cannot fill", name);
        CHECK(rails > 0, "%s: no size on rails", name);
        /* Ranks taking turns on cores run the slices' host calls one after
         * the other: the rails gain less, and a reduction nothing (within a
         * few per cent of the leaders' form, whose node steps take turns as
         * well). A bcast's leaders' form is priced as segments that then
         * take turns too, and stays the dearer of the two. */
        plan_node_route own_cores = plan_node_price(railed[c], 16u << 20, 4, &node);
        plan_node_route shared = plan_node_price(railed[c], 16u << 20, 4, &crowded);
        CHECK(plan_node_rails_ns(railed[c], 16u << 20, 4, &crowded) >
                      plan_node_rails_ns(railed[c], 16u << 20, 4, &node) &&
                  (railed[c] == CORE_COLL_BCAST || shared.rails_ns > 0.95 * shared.two_level_ns) &&
                  shared.rails_ns / shared.two_level_ns > own_cores.rails_ns / own_cores.two_level_ns,
              "%s on rails on 4 ranks sharing 2 cores: %g against %g ns (own cores: %g against %g)", name,
              shared.rails_ns, shared.two_level_ns, own_cores.rails_ns, own_cores.two_level_ns);

        setenv(setting[c], leaders[c], 1);
        core_config_reload();
        CHECK(!plan_node_price(railed[c], 16u << 20, 4, &node).rails, "%s=%s", setting[c], leaders[c]);
        setenv(setting[c], "rails", 1);
        core_config_reload();
        CHECK(plan_node_price(railed[c], 8, 4, &node).rails && !plan_node_price(railed[c], 2, 4, &node).rails,
              "%s=rails from one element a rank", setting[c]);
        unsetenv(setting[c]);
        core_config_reload();
    }
    tuning_file_done(path);
}

/* The call the host-time tests price: bcast of 1 MiB on 4 ranks. */
static plan_query host_test_query(void)
{
    return (plan_query){.coll = CORE_COLL_BCAST,
                        .bytes = 1 << 20,
                        .n = 4,
                        .ppn = 4,
                        .cores = 16,
                        .window = 128 * 1024,
                        .usable = {true, true, true}};
}

/* The host MPI's own times (shoal tune): read back from the file, at the
 * call's own team size only, and a call goes to the host only where its
 * time, by the guard band, is below shoal's price and nothing is forced. */
static void test_host_times(void)
{
    char path[] = "/tmp/shoal-test-tuning-XXXXXX";
    tuning_file_begin(path);
    plan_query q = host_test_query();
    plan_choice ch = plan_choose(&q);
    CHECK(ch.host_ns < 0 && !ch.host_faster, "no host times: none priced");
    plan_model m;
    plan_model_defaults(&m);
    double shoal_ns = ch.model_ns;
    /* bcast at 1 MiB on 4 ranks: a tenth of shoal's price; at 2 MiB: twice it */
    plan_model_set_host_ns(&m, CORE_COLL_BCAST, 20, 4, shoal_ns / 10);
    plan_model_set_host_ns(&m, CORE_COLL_BCAST, 21, 4, 4 * shoal_ns);
    plan_model_set_host_ns(&m, CORE_COLL_BCAST, 20, 2, 1.0); /* 2 ranks: not for 4 */
    CHECK(plan_model_save(&m, path) == 0, "save");
    plan_model_reload();
    CHECK(plan_model_get()->nhost == 3, "%d host times read back", plan_model_get()->nhost);
    ch = plan_choose(&q);
    CHECK(ch.host_faster && close_to(ch.host_ns, shoal_ns / 10, 1e-3), "1 MiB: host %g ns against %g, faster %d",
          ch.host_ns, ch.model_ns, ch.host_faster);
    q.bytes = 2 << 20;
    ch = plan_choose(&q);
    CHECK(!ch.host_faster && ch.host_ns > ch.model_ns, "2 MiB: the host measured slower");
    q.bytes = 1 << 20;
    q.n = q.ppn = 8;
    ch = plan_choose(&q);
    CHECK(ch.host_ns < 0 && !ch.host_faster, "8 ranks: no host time at that team size");
    q.n = q.ppn = 4;
    setenv("SHOAL_ALGO", "bcast:flat", 1);
    core_config_reload();
    CHECK(!plan_choose(&q).host_faster, "a forced algorithm is shoal's to run");
    unsetenv("SHOAL_ALGO");
    core_config_reload();
    char key[64];
    plan_host_key(key, sizeof key, &plan_model_get()->host[0]);
    CHECK(!strcmp(key, "bcast/b20/n4"), "host key %s", key);
    tuning_file_done(path);
}

/* The host's times on unchanged inputs (shoal tune's host_repeat_ns and
 * shoal_repeat_ns): a repeat goes to the host where its repeat time, by
 * the guard band, is below shoal's (measured where the tune timed it, else
 * its unchanged price) and, where the host's fresh time is known, its worse
 * ratio over both kinds of input is below shoal's; a fresh call keeps the
 * fresh rule; a reduction on
 * more than two ranks and any forced choice never take the repeat rule;
 * files round-trip with the new fields and load as before without them. */
static void test_host_repeat_times(void)
{
    char path[] = "/tmp/shoal-test-tuning-XXXXXX";
    tuning_file_begin(path);
    plan_query q = host_test_query();
    double fresh_price = plan_choose(&q).model_ns;
    q.inputs = PLAN_INPUTS_EITHER;
    double unchanged_price = plan_choose(&q).shoal_repeat_ns;
    CHECK(unchanged_price < 0, "no host times: no repeat comparison (%g)", unchanged_price);
    plan_candidate either[64];
    CHECK(plan_candidates(&q, either, 64) > 0, "candidates");
    unchanged_price = either[0].unchanged_ns;

    /* A file as tuned before the repeat times existed: host_ns alone. */
    char machine[256];
    plan_machine_description(machine, sizeof machine);
    FILE *f = fopen(path, "w");
    fprintf(f, "{\"shoal_tuning\": %d, \"machine\": \"%s\", \"host_ns\": {\"bcast/b20/n4\": %.1f}}\n",
            PLAN_TUNING_VERSION, machine, fresh_price * 4);
    fclose(f);
    plan_model_reload();
    CHECK(plan_model_get()->nhost == 1 && plan_model_get()->host[0].repeat_ns == 0 &&
              plan_model_get()->host[0].shoal_repeat_ns == 0,
          "old file: %d host times, repeat %g", plan_model_get()->nhost, plan_model_get()->host[0].repeat_ns);
    plan_choice ch = plan_choose(&q);
    CHECK(!ch.host_faster && ch.host_repeat_ns < 0 && close_to(ch.host_ns, fresh_price * 4, 1e-3),
          "old file, a repeat: the fresh rule (host %g, repeat %g)", ch.host_ns, ch.host_repeat_ns);

    /* The host slower on fresh inputs, ten times faster than shoal's
     * unchanged price on unchanged ones. */
    plan_model m;
    plan_model_defaults(&m);
    plan_model_set_host_ns(&m, CORE_COLL_BCAST, 20, 4, fresh_price * 4);
    plan_model_set_repeat_ns(&m, CORE_COLL_BCAST, 20, 4, unchanged_price / 10, 0);
    plan_model_set_repeat_ns(&m, CORE_COLL_GATHER, 20, 4, 5.0, 0); /* no fresh time: a repeat time alone */
    CHECK(plan_model_save(&m, path) == 0, "save");
    plan_model_reload();
    const plan_model *got = plan_model_get();
    CHECK(got->nhost == 2 && close_to(got->host[0].repeat_ns, unchanged_price / 10, 1e-3) &&
              got->host[0].shoal_repeat_ns == 0 && got->host[1].ns == 0 && close_to(got->host[1].repeat_ns, 5, 1e-3),
          "repeat times read back: %d, %g", got->nhost, got->host[0].repeat_ns);
    q.inputs = PLAN_INPUTS_FRESH;
    ch = plan_choose(&q);
    CHECK(!ch.host_faster && ch.host_repeat_ns < 0, "a fresh call keeps the fresh rule");
    q.inputs = PLAN_INPUTS_EITHER;
    ch = plan_choose(&q);
    CHECK(ch.host_faster && close_to(ch.host_repeat_ns, unchanged_price / 10, 1e-3) &&
              close_to(ch.shoal_repeat_ns, unchanged_price, 1e-6),
          "a repeat: host %g against shoal's unchanged price %g, faster %d", ch.host_repeat_ns, ch.shoal_repeat_ns,
          ch.host_faster);
    q.inputs = PLAN_INPUTS_UNCHANGED;
    ch = plan_choose(&q);
    CHECK(ch.host_faster, "unchanged inputs: the repeat rule too");
    q.inputs = PLAN_INPUTS_EITHER;
    q.coll = CORE_COLL_GATHER;
    CHECK(plan_choose(&q).host_faster, "a repeat time without a fresh one still decides a repeat");
    q.coll = CORE_COLL_BCAST;
    setenv("SHOAL_LANES", "cells", 1);
    core_config_reload();
    CHECK(!plan_choose(&q).host_faster, "a forced lane is shoal's to run, repeat or not");
    unsetenv("SHOAL_LANES");
    core_config_reload();
    q.n = q.ppn = 8;
    ch = plan_choose(&q);
    CHECK(!ch.host_faster && ch.host_repeat_ns < 0, "8 ranks: no repeat time at that team size");
    q.n = q.ppn = 4;

    /* Shoal's own choice measured on unchanged buffers: compared instead of
     * its price, with the guard band. */
    plan_model_set_repeat_ns(&m, CORE_COLL_BCAST, 20, 4, 0, unchanged_price / 10 * 1.05);
    CHECK(plan_model_save(&m, path) == 0, "save");
    plan_model_reload();
    ch = plan_choose(&q);
    CHECK(!ch.host_faster && close_to(ch.shoal_repeat_ns, unchanged_price / 10 * 1.05, 1e-3),
          "within the guard band of shoal's measured repeat: shoal's (%g against %g)", ch.host_repeat_ns,
          ch.shoal_repeat_ns);
    /* Beyond the guard band on unchanged inputs, but the host 4x slower on
     * fresh ones: a repeat that may be either stays shoal's (the host's
     * worse ratio, 4, against shoal's, 1.2), known unchanged inputs go to
     * the host; shoal 5x slower on unchanged inputs outweighs the 4x. */
    plan_model_set_repeat_ns(&m, CORE_COLL_BCAST, 20, 4, 0, unchanged_price / 10 * 1.2);
    CHECK(plan_model_save(&m, path) == 0, "save");
    plan_model_reload();
    CHECK(!plan_choose(&q).host_faster, "a 1.2x win on unchanged inputs against a 4x loss on fresh: shoal's");
    q.inputs = PLAN_INPUTS_UNCHANGED;
    CHECK(plan_choose(&q).host_faster, "known unchanged inputs, beyond the guard band: the host's");
    q.inputs = PLAN_INPUTS_EITHER;
    plan_model_set_repeat_ns(&m, CORE_COLL_BCAST, 20, 4, 0, unchanged_price / 10 * 5);
    CHECK(plan_model_save(&m, path) == 0, "save");
    plan_model_reload();
    CHECK(plan_choose(&q).host_faster, "a 5x win on unchanged inputs against a 4x loss on fresh: the host's");

    /* Round trip: what was read is what is written again. */
    plan_model again = *plan_model_get();
    CHECK(plan_model_save(&again, path) == 0, "save again");
    plan_model_reload();
    got = plan_model_get();
    CHECK(got->nhost == again.nhost, "round trip: %d host times", got->nhost);
    for (int i = 0; i < got->nhost && i < again.nhost; i++)
        CHECK(got->host[i].coll == again.host[i].coll && got->host[i].size_b == again.host[i].size_b &&
                  got->host[i].team_b == again.host[i].team_b && close_to(got->host[i].ns, again.host[i].ns, 1e-3) &&
                  close_to(got->host[i].repeat_ns, again.host[i].repeat_ns, 1e-3) &&
                  close_to(got->host[i].shoal_repeat_ns, again.host[i].shoal_repeat_ns, 1e-3),
              "round trip of host time %d", i);

    /* Reductions: on two ranks (one grouping) a repeat may go to the host;
     * on four it keeps the first call's grouping, so the fresh rule. */
    q.coll = CORE_COLL_ALLREDUCE;
    plan_model_set_repeat_ns(&m, CORE_COLL_ALLREDUCE, 20, 4, 1.0, 0);
    plan_model_set_repeat_ns(&m, CORE_COLL_ALLREDUCE, 20, 2, 1.0, 0);
    CHECK(plan_model_save(&m, path) == 0, "save");
    plan_model_reload();
    ch = plan_choose(&q);
    CHECK(!ch.host_faster && ch.host_repeat_ns < 0, "allreduce on 4 ranks: a repeat keeps shoal's grouping");
    q.n = q.ppn = 2;
    ch = plan_choose(&q);
    CHECK(ch.host_faster && close_to(ch.host_repeat_ns, 1, 1e-3), "allreduce on 2 ranks: the host's repeat");
    tuning_file_done(path);
}

int main(void)
{
    test_tables();
    test_plausibility();
    test_model_and_fit();
    test_tuning_file();
    test_choices();
    test_oversubscription();
    test_staged_reduce();
    test_staged_crossing();
    test_root_share();
    test_single_copy_band();
    test_single_copy_band_floor();
    test_crowded_single_copy();
    test_cache();
    test_blockwise_reads();
    test_staged_past_cache();
    test_repeats();
    test_unchanged_saves_one_copy();
    test_unchanged_by_call_size();
    test_staged_overlap();
    test_staged_once();
    test_node_segments();
    test_node_routes();
    test_node_timed_routes();
    test_node_rails();
    test_host_times();
    test_host_repeat_times();
    return unit_done("test_planner");
}
