/* The mapper and mapping files: the result is a permutation, W never gets
 * worse than the start, the reported W matches an independent evaluation, the
 * same seed gives the same mapping, and mapping files are validated on read. */
#include "sim_map.h"
#include "sim_rng.h"
#include "sim_test.h"
#include "sim_traffic.h"

#include <unistd.h>

static void shuffle(int32_t *map, int n, uint64_t seed)
{
    sim_rng rng;
    sim_rng_seed(&rng, seed);
    sim_mapping_identity(map, n);
    for (int i = n - 1; i > 0; i--) {
        int j = (int)sim_rng_below(&rng, (uint32_t)(i + 1));
        int32_t tmp = map[i];
        map[i] = map[j];
        map[j] = tmp;
    }
}

static void search_case(const char *spec, int64_t iters, int greedy, uint64_t start_seed, double *w_after)
{
    sim_topo t;
    sim_err err;
    REQUIRE(sim_topo_parse(spec, &t, &err) == 0, "%s", err.msg);
    sim_params p;
    sim_params_default(&p);
    p.map_iters = iters;
    p.map_greedy = greedy;
    p.map_chains = 2;
    p.threads = 2;
    p.seed = 5;
    int n = t.nnodes;
    int32_t *map = malloc(sizeof(int32_t) * (size_t)n), *again = malloc(sizeof(int32_t) * (size_t)n);
    if (start_seed)
        shuffle(map, n, start_seed);
    else
        sim_mapping_identity(map, n);
    memcpy(again, map, sizeof(int32_t) * (size_t)n);
    double w_start;
    REQUIRE(sim_map_eval(&t, &p, map, &w_start, &err) == 0, "%s", err.msg);
    sim_map_result r;
    REQUIRE(sim_map_search(&t, &p, map, &r, &err) == 0, "%s: %s", spec, err.msg);
    CHECK(sim_check_permutation(map, n, "mapper result", &err) == 0, "%s: %s", spec, err.msg);
    CHECK(r.W_start == w_start, "%s: mapper's start W %.4f, evaluation %.4f", spec, r.W_start, w_start);
    CHECK(r.W_final <= r.W_start, "%s: W got worse, %.4f -> %.4f", spec, r.W_start, r.W_final);
    double w_check;
    REQUIRE(sim_map_eval(&t, &p, map, &w_check, &err) == 0, "%s", err.msg);
    CHECK(w_check == r.W_final, "%s: mapper reports W %.4f, evaluation of its mapping gives %.4f", spec, r.W_final,
          w_check);
    /* same seed and chains, same start: the same mapping, whatever the threads */
    sim_map_result r2;
    p.threads = 1;
    REQUIRE(sim_map_search(&t, &p, again, &r2, &err) == 0, "%s", err.msg);
    CHECK(!memcmp(map, again, sizeof(int32_t) * (size_t)n) && r2.W_final == r.W_final,
          "%s: seed %lld gave different mappings with 2 threads and 1", spec, (long long)p.seed);
    printf("%s start %s: W %.4f -> %.4f (greedy %.4f), %lld moves, %.2f s\n", spec,
           start_seed ? "shuffled" : "identity", r.W_start, r.W_final, r.W_greedy, (long long)r.moves, r.seconds);
    if (w_after)
        *w_after = r.W_final;
    free(map), free(again);
    sim_topo_free(&t);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    REQUIRE(f != NULL, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

static void mapping_files(void)
{
    char dir[] = "/tmp/shoal-sim-test-XXXXXX";
    REQUIRE(mkdtemp(dir) != NULL, "mkdtemp");
    char path[256];
    snprintf(path, sizeof path, "%s/map.txt", dir);
    int32_t map[16], back[16];
    shuffle(map, 16, 9);
    sim_err err;
    REQUIRE(sim_mapping_write(path, map, 16, "a header\nof two lines", &err) == 0, "%s", err.msg);
    CHECK(sim_mapping_read(path, 16, back, &err) == 0 && !memcmp(map, back, sizeof map), "round trip: %s", err.msg);
    CHECK(sim_mapping_read(path, 15, back, &err) != 0, "16 entries for 15 nodes must be rejected");
    CHECK(sim_mapping_read(path, 17, back, &err) != 0 && strstr(err.msg, "16 entries, but the topology has 17"),
          "too short for 17 nodes: %s", err.msg);
    write_text(path, "0\n1\n2\n3\n0\n");
    CHECK(sim_mapping_read(path, 4, back, &err) != 0 && strstr(err.msg, "line 5: more than 4 entries"), "too long: %s",
          err.msg);
    write_text(path, "0\n1\n2\n1\n");
    CHECK(sim_mapping_read(path, 4, back, &err) != 0 && strstr(err.msg, "line 4") &&
              strstr(err.msg, "already used by logical rank 1"),
          "duplicate: %s", err.msg);
    write_text(path, "0\n1\n4\n2\n");
    CHECK(sim_mapping_read(path, 4, back, &err) != 0 && strstr(err.msg, "line 3") && strstr(err.msg, "outside 0..3"),
          "out of range: %s", err.msg);
    write_text(path, "0\n1\nthree\n2\n");
    CHECK(sim_mapping_read(path, 4, back, &err) != 0 && strstr(err.msg, "line 3") && strstr(err.msg, "not a node"),
          "garbage: %s", err.msg);
    write_text(path, "# comment\n\n3 # trailing comment\n2\n1\n0\n");
    CHECK(sim_mapping_read(path, 4, back, &err) == 0 && back[0] == 3 && back[3] == 0, "comments: %s", err.msg);
    CHECK(sim_mapping_read("/nonexistent/map.txt", 4, back, &err) != 0 && strstr(err.msg, "cannot open"),
          "missing file: %s", err.msg);
    int32_t bad[4] = {0, 2, 2, 3};
    CHECK(sim_check_permutation(bad, 4, "mapping", &err) != 0 && strstr(err.msg, "entries 1 and 2"), "%s", err.msg);
    unlink(path);
    rmdir(dir);
}

/* The annealing prices a swap without applying it; that price must equal
 * the change measured by applying the swap, move after move. */
static void delta_selfcheck(int quick)
{
    const char *nets[] = {"torus:8x8", "torus:4x4x4", "ring:8", "mesh:4x4", "fattree:2,4", "torus:5x3"};
    for (size_t i = 0; i < sizeof nets / sizeof *nets; i++) {
        sim_topo t;
        sim_err err;
        REQUIRE(sim_topo_parse(nets[i], &t, &err) == 0, "%s", err.msg);
        sim_params p;
        sim_params_default(&p);
        int bad = sim_map_selfcheck(&t, &p, quick ? 300 : 3000, 7 + i, &err);
        CHECK(bad == 0, "%s: %d swaps priced wrong; first: %s", nets[i], bad, bad ? err.msg : "");
        sim_topo_free(&t);
    }
}

int main(int argc, char **argv)
{
    int quick = sim_test_quick(argc, argv), full = sim_test_full(argc, argv);
    mapping_files();
    delta_selfcheck(quick);
    double w;
    /* 4x4 in row-major order is already conflict-free: nothing to gain, nothing lost */
    search_case("torus:4x4", quick ? 2000 : 20000, 1, 0, &w);
    CHECK(w == 1.0, "torus:4x4 stays at W = 1, got %.4f", w);
    /* a shuffled 4x4 is worse than row-major; the search must bring it back down */
    search_case("torus:4x4", quick ? 5000 : 40000, 0, 3, &w);
    CHECK(w < 1.3, "shuffled torus:4x4: W %.4f after the search", w);
    if (!quick) {
        search_case("torus:8x8", full ? 200000 : 15000, 1, 0, &w);
        CHECK(w < 2.5079, "torus:8x8: the search should improve on row-major (2.5079), got %.4f", w);
        search_case("ring:8", 5000, 1, 0, &w);
        search_case("mesh:4x4", 10000, 1, 0, NULL);
        search_case("fattree:2,4", 20000, 0, 4, &w);
        CHECK(w == 1.0, "a shuffled fat tree maps back to W = 1, got %.4f", w);
    }
    if (full)
        search_case("torus:4x4x4", 200000, 1, 0, NULL);
    return sim_test_finish("test_sim_map");
}
