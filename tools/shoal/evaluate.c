/* shoal evaluate: the data of the choice-quality report. For every
 * collective and size of a grid it times every candidate (algorithm, lane),
 * forced, and records which one the planner chooses with the model in use
 * (the tuning file) and which with the built-in defaults. JSON on rank 0;
 * tools/shoal/tune_report.py turns it into tables and figures. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure.h"
#include "shim_comm.h"
#include "shim_probe.h"
#include "shoal_cli.h"

static bool wanted(const char *list, core_coll c)
{
    if (!list)
        return true;
    const char *name = core_coll_name(c);
    size_t len = strlen(name);
    for (const char *p = list; p && *p;) {
        if (!strncmp(p, name, len) && (p[len] == ',' || p[len] == 0))
            return true;
        p = strchr(p, ',');
        if (p)
            p++;
    }
    return false;
}

static plan_choice choice_under(const plan_model *m, const plan_query *q)
{
    plan_model_use(m);
    return plan_choose(q);
}

static int fail_usage(int rank, const char *msg, const char *arg)
{
    if (rank == 0)
        fprintf(stderr,
                "shoal evaluate: %s%s%s\nusage: mpirun -np N shoal evaluate [--json FILE] [-m MIN:MAX] "
                "[--colls LIST] [--batches N]\n",
                msg, arg ? ": " : "", arg ? arg : "");
    MPI_Finalize();
    return 2;
}

int evaluate_main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size, rank;
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *json = NULL, *colls = NULL;
    size_t lo = 4, hi = 4 << 20;
    shim_timing mo = measure_timing(5, 1e6);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json") && i + 1 < argc) {
            json = argv[++i];
        } else if (!strcmp(argv[i], "--colls") && i + 1 < argc) {
            colls = argv[++i];
        } else if (!strcmp(argv[i], "--batches") && i + 1 < argc) {
            mo.batches = atoi(argv[++i]);
            if (mo.batches < 1)
                return fail_usage(rank, "--batches needs a positive count", argv[i]);
        } else if (!strcmp(argv[i], "-m") && i + 1 < argc) {
            char a[32] = "", b[32] = "";
            const char *colon = strchr(argv[++i], ':');
            if (!colon || colon - argv[i] >= 32 || strlen(colon + 1) >= 32)
                return fail_usage(rank, "-m needs MIN:MAX", argv[i]);
            memcpy(a, argv[i], (size_t)(colon - argv[i]));
            strcpy(b, colon + 1);
            if (!core_parse_size(a, &lo) || !core_parse_size(b, &hi) || lo < 4 || hi < lo)
                return fail_usage(rank, "-m needs sizes 4 <= MIN <= MAX", argv[i]);
        } else {
            return fail_usage(rank, "unknown option", argv[i]);
        }
    }
    shim_comm *world = shim_comm_team_now(MPI_COMM_WORLD);
    if (!world)
        measure_fail_all("evaluate: shoal does not handle MPI_COMM_WORLD here (SHOAL_DISABLE, several nodes, or "
                         "no shared memory)");
    plan_model tuned = *plan_model_get(), defaults;
    plan_model_defaults(&defaults);

    FILE *f = NULL;
    if (rank == 0) {
        f = json ? fopen(json, "w") : stdout;
        if (!f)
            measure_fail("evaluate: cannot write %s", json);
        char machine[256];
        plan_machine_description(machine, sizeof machine);
        fprintf(f, "{\n  \"shoal_evaluate\": 1,\n  \"machine\": \"%s\",\n  \"np\": %d,\n  \"model\": \"%s\",\n",
                machine, size, tuned.source);
        fprintf(f, "  \"points\": [");
    }
    coll_buffers b = {0};
    coll_buffers_reserve(&b, hi, size);
    int points = 0;
    for (int ci = 0; ci < measure_ncolls; ci++) {
        core_coll coll = measure_colls[ci];
        if (!wanted(colls, coll))
            continue;
        for (size_t bytes = lo; bytes <= hi; bytes *= 4) {
            size_t payload = coll == CORE_COLL_BARRIER ? 0 : bytes;
            plan_query q = world_query(world, coll, payload);
            plan_choice with_default = choice_under(&defaults, &q);
            plan_choice with_tuned = choice_under(&tuned, &q);
            plan_candidate cand[MEASURE_MAX_CANDIDATES];
            int k = distinct_candidates(&q, cand, MEASURE_MAX_CANDIDATES);
            if (rank == 0)
                fprintf(f,
                        "%s\n    {\"coll\": \"%s\", \"bytes\": %zu, \"chosen\": {\"algo\": \"%s\", \"lane\": \"%s\"}, "
                        "\"default_choice\": {\"algo\": \"%s\", \"lane\": \"%s\"},\n     \"candidates\": [",
                        points++ ? "," : "", core_coll_name(coll), payload, plan_algo_name(with_tuned.algo),
                        plan_lanes_label(with_tuned.lane, with_tuned.stripe), plan_algo_name(with_default.algo),
                        plan_lanes_label(with_default.lane, with_default.stripe));
            int written = 0;
            bool ran[MEASURE_MAX_CANDIDATES];
            double t[MEASURE_MAX_CANDIDATES];
            measure_candidates(&mo, coll, cand, k, payload, &b, ran, t, NULL, NULL);
            for (int i = 0; i < k; i++) {
                if (!ran[i])
                    continue;
                if (rank == 0)
                    fprintf(f,
                            "%s\n       {\"algo\": \"%s\", \"lane\": \"%s\", \"measured_ns\": %.1f, "
                            "\"modelled_ns\": %.1f}",
                            written++ ? "," : "", plan_algo_name(cand[i].algo),
                            plan_lanes_label(cand[i].lane, cand[i].stripe), t[i], cand[i].ns);
            }
            if (rank == 0) {
                fprintf(f, "]}");
                fflush(f);
            }
            if (coll == CORE_COLL_BARRIER)
                break;
        }
    }
    if (rank == 0) {
        fprintf(f, "\n  ]\n}\n");
        if (f != stdout)
            fclose(f);
    }
    coll_buffers_free(&b);
    MPI_Finalize();
    return 0;
}
