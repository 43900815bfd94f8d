/* Unit tests of shoal-bench's MPI-free parts: option parsing (OSU names and
 * defaults), the patterns and their reference (a spoiled byte or element
 * must be found where it was spoiled), and the bound's byte counts. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"

static int passed, failed;

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (cond) {                                                            \
            passed++;                                                          \
        } else {                                                               \
            failed++;                                                          \
            fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                      \
    } while (0)

/* Parses a command line given as one string (words split on spaces). */
static enum parse_result parse(const char *line, struct bench_options *opt, char *err)
{
    static char buffer[512];
    static char *argv[64];
    snprintf(buffer, sizeof buffer, "shoal-bench %s", line);
    int argc = 0;
    for (char *word = strtok(buffer, " "); word && argc < 63; word = strtok(NULL, " "))
        argv[argc++] = word;
    argv[argc] = NULL;
    return bench_parse_options(argc, argv, opt, err, 256);
}

static int selected_count(const struct bench_options *opt)
{
    int count = 0;
    for (int id = 0; id < BENCH_COUNT; id++)
        count += opt->selected[id];
    return count;
}

static void test_defaults(void)
{
    struct bench_options opt;
    char err[256];
    CHECK(parse("", &opt, err) == PARSE_OK);
    CHECK(selected_count(&opt) == BENCH_COUNT); /* no name: everything */
    CHECK(opt.validate);
    CHECK(!opt.full);
    CHECK(opt.window_size == 64);
    CHECK(opt.json_path == NULL && opt.csv_path == NULL);
    CHECK(opt.corrupt == CORRUPT_NONE);

    size_t min, max;
    bench_size_range(&opt, BENCH_ALLREDUCE, &min, &max);
    CHECK(min == 1 && max == 1u << 20); /* OSU collectives: up to 1 MiB */
    bench_size_range(&opt, BENCH_LATENCY, &min, &max);
    CHECK(min == 0 && max == 4u << 20); /* OSU pt2pt: 0 to 4 MiB */

    int iterations, warmup;
    bench_counts(&opt, BENCH_ALLREDUCE, 8192, &iterations, &warmup);
    CHECK(iterations == 1000 && warmup == 200);
    bench_counts(&opt, BENCH_ALLREDUCE, 8193, &iterations, &warmup);
    CHECK(iterations == 100 && warmup == 10); /* fewer for large sizes */
    bench_counts(&opt, BENCH_LATENCY, 4, &iterations, &warmup);
    CHECK(iterations == 10000 && warmup == 100);
    bench_counts(&opt, BENCH_LATENCY, 1 << 20, &iterations, &warmup);
    CHECK(iterations == 1000 && warmup == 10);
    bench_counts(&opt, BENCH_BW, 4, &iterations, &warmup);
    CHECK(iterations == 100 && warmup == 10);
    bench_counts(&opt, BENCH_BW, 1 << 20, &iterations, &warmup);
    CHECK(iterations == 20 && warmup == 2);
}

static void test_osu_options(void)
{
    struct bench_options opt;
    char err[256];
    size_t min, max;
    int iterations, warmup;

    CHECK(parse("allreduce -m 4:4194304", &opt, err) == PARSE_OK);
    CHECK(selected_count(&opt) == 1 && opt.selected[BENCH_ALLREDUCE]);
    bench_size_range(&opt, BENCH_ALLREDUCE, &min, &max);
    CHECK(min == 4 && max == 4194304);

    CHECK(parse("-m 64 bcast", &opt, err) == PARSE_OK); /* -m MAX keeps the default MIN */
    bench_size_range(&opt, BENCH_BCAST, &min, &max);
    CHECK(min == 1 && max == 64);

    CHECK(parse("-m64", &opt, err) == PARSE_OK);
    bench_size_range(&opt, BENCH_BCAST, &min, &max);
    CHECK(max == 64);

    CHECK(parse("--message-size=1K:8K", &opt, err) == PARSE_OK);
    bench_size_range(&opt, BENCH_GATHER, &min, &max);
    CHECK(min == 1024 && max == 8192);

    CHECK(parse("--message-size 2M:", &opt, err) == PARSE_OK); /* MIN: only */
    bench_size_range(&opt, BENCH_ALLTOALL, &min, &max);
    CHECK(min == 2u << 20 && max == 2u << 20);
    bench_size_range(&opt, BENCH_LATENCY, &min, &max);
    CHECK(min == 2u << 20 && max == 4u << 20);

    /* -i and -x set every size, as OSU's do. */
    CHECK(parse("-i 50 -x 5", &opt, err) == PARSE_OK);
    bench_counts(&opt, BENCH_ALLREDUCE, 1 << 20, &iterations, &warmup);
    CHECK(iterations == 50 && warmup == 5);
    bench_counts(&opt, BENCH_LATENCY, 4, &iterations, &warmup);
    CHECK(iterations == 50 && warmup == 5);

    CHECK(parse("-i 50 -x 5 --iterations-large 7 --warmup-large=1", &opt, err) == PARSE_OK);
    bench_counts(&opt, BENCH_ALLREDUCE, 64, &iterations, &warmup);
    CHECK(iterations == 50 && warmup == 5);
    bench_counts(&opt, BENCH_ALLREDUCE, 1 << 20, &iterations, &warmup);
    CHECK(iterations == 7 && warmup == 1);

    CHECK(parse("--iterations-large 3", &opt, err) == PARSE_OK);
    bench_counts(&opt, BENCH_ALLREDUCE, 64, &iterations, &warmup);
    CHECK(iterations == 1000); /* small sizes keep OSU's default */
    bench_counts(&opt, BENCH_ALLREDUCE, 65536, &iterations, &warmup);
    CHECK(iterations == 3 && warmup == 10);

    CHECK(parse("-x 0 -i 1", &opt, err) == PARSE_OK); /* no warm-up is allowed */
    CHECK(opt.warmup == 0 && opt.iterations == 1);

    CHECK(parse("-f -W 16 --no-validate --json out.json --csv out.csv bw", &opt, err) == PARSE_OK);
    CHECK(opt.full && opt.window_size == 16 && !opt.validate);
    CHECK(opt.json_path && strcmp(opt.json_path, "out.json") == 0);
    CHECK(opt.csv_path && strcmp(opt.csv_path, "out.csv") == 0);
    CHECK(selected_count(&opt) == 1 && opt.selected[BENCH_BW]);

    CHECK(parse("-c", &opt, err) == PARSE_OK && opt.validate);

    CHECK(parse("collectives", &opt, err) == PARSE_OK);
    CHECK(selected_count(&opt) == 12 && !opt.selected[BENCH_LATENCY] && !opt.selected[BENCH_BW]);
    CHECK(parse("pt2pt", &opt, err) == PARSE_OK);
    CHECK(selected_count(&opt) == 2 && opt.selected[BENCH_LATENCY] && opt.selected[BENCH_BW]);
    CHECK(parse("alltoall reduce_scatter_block barrier", &opt, err) == PARSE_OK);
    CHECK(selected_count(&opt) == 3 && opt.selected[BENCH_REDUCE_SCATTER_BLOCK]);

    CHECK(parse("--debug-corrupt=shoal", &opt, err) == PARSE_OK && opt.corrupt == CORRUPT_SHOAL);
    CHECK(parse("--debug-corrupt host", &opt, err) == PARSE_OK && opt.corrupt == CORRUPT_HOST);

    CHECK(parse("--help", &opt, err) == PARSE_EXIT && opt.help);
    CHECK(parse("-h", &opt, err) == PARSE_EXIT);
    CHECK(parse("-v", &opt, err) == PARSE_EXIT && opt.version);
}

static void test_bad_options(void)
{
    struct bench_options opt;
    char err[256];
    static const char *bad[] = {
        "-m 8:4",   /* empty range */
        "-m abc",   /* not a size */
        "-m 4:",    /* fine... */
        "-m :64",   /* no MIN before the colon */
        "-m 2G:4G", /* above the 1 GiB limit */
        "-m 4X",    /* unknown suffix */
        "-m -4",    /* negative */
        "-i 0",     /* at least one timed iteration */
        "-i -3",
        "-i 10x",
        "-x -1",
        "-W 0",
        "-W 4096", /* more requests than shoal-bench keeps */
        "--bogus",
        "-q",
        "-m", /* value missing */
        "--json",
        "allreduce nosuchbench",
        "--debug-corrupt=maybe",
        "-fz",        /* a flag with a tail */
        "--full=yes", /* a flag given a value */
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        enum parse_result r = parse(bad[k], &opt, err);
        if (strcmp(bad[k], "-m 4:") == 0) {
            CHECK(r == PARSE_OK);
            continue;
        }
        if (r != PARSE_ERROR)
            fprintf(stderr, "accepted bad command line: %s\n", bad[k]);
        CHECK(r == PARSE_ERROR);
        CHECK(err[0] != '\0'); /* a message says what was wrong */
    }
    CHECK(parse("-m 8:4", &opt, err) == PARSE_ERROR && strstr(err, "8:4"));
    CHECK(parse("nosuchbench", &opt, err) == PARSE_ERROR && strstr(err, "nosuchbench"));
}

static void test_sizes(void)
{
    CHECK(bench_next_size(0) == 1);
    CHECK(bench_next_size(1) == 2);
    CHECK(bench_next_size(4096) == 8192);
    CHECK(bench_from_name("allreduce") == BENCH_ALLREDUCE);
    CHECK(bench_from_name("reduce_scatter_block") == BENCH_REDUCE_SCATTER_BLOCK);
    CHECK(bench_from_name("exscan") == BENCH_EXSCAN);
    CHECK(bench_from_name("osu_allreduce") == -1);
    for (int id = 0; id < BENCH_COUNT; id++)
        CHECK(bench_from_name(bench_name(id)) == id);

    CHECK(!bench_size_supported(BENCH_BCAST, 0, 2));
    CHECK(bench_size_supported(BENCH_BCAST, 1, 2));
    CHECK(!bench_size_supported(BENCH_ALLREDUCE, 2, 2)); /* below one float */
    CHECK(bench_size_supported(BENCH_ALLREDUCE, 4, 2));
    CHECK(!bench_size_supported(BENCH_REDUCE_SCATTER_BLOCK, 4, 2)); /* block of 0 floats */
    CHECK(bench_size_supported(BENCH_REDUCE_SCATTER_BLOCK, 8, 2));
    CHECK(!bench_size_supported(BENCH_REDUCE_SCATTER_BLOCK, 8, 3));
    CHECK(bench_size_supported(BENCH_REDUCE_SCATTER, 4, 3)); /* blocks may be empty */
    CHECK(!bench_size_supported(BENCH_REDUCE_SCATTER, 6, 3));
    CHECK(bench_size_supported(BENCH_LATENCY, 0, 2));
    CHECK(bench_size_supported(BENCH_BARRIER, 0, 2));
}

/* reduce_scatter's blocks tile the vector and grow with the rank (give or
 * take a float of rounding). */
static void test_reduce_scatter_blocks(void)
{
    CHECK(bench_from_name("reduce_scatter") == BENCH_REDUCE_SCATTER);
    const size_t sizes[] = {4, 12, 1024, 1000, 4 << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (int n = 1; n <= 9; n++) {
            size_t floats = sizes[i] / sizeof(float), prev = 0;
            CHECK(bench_reduce_scatter_first(sizes[i], n, 0) == 0);
            CHECK(bench_reduce_scatter_first(sizes[i], n, n) == floats);
            for (int r = 1; r <= n; r++) {
                size_t block =
                    bench_reduce_scatter_first(sizes[i], n, r) - bench_reduce_scatter_first(sizes[i], n, r - 1);
                CHECK(block + 1 >= prev);
                prev = block;
            }
            CHECK(prev >= 1); /* the last rank's block, which the corruption test spoils */
        }
    /* 1024 bytes on 3 ranks: 256 floats in shares 1:2:3. */
    CHECK(bench_reduce_scatter_first(1024, 3, 1) == 42 && bench_reduce_scatter_first(1024, 3, 2) == 128);
}

static void test_bound_bytes(void)
{
    const size_t s = 1024;
    CHECK(bench_bound_bytes(BENCH_BARRIER, s, 2) == 0);
    CHECK(bench_bound_bytes(BENCH_BCAST, s, 2) == 512);
    CHECK(bench_bound_bytes(BENCH_REDUCE, s, 2) == 512);
    CHECK(bench_bound_bytes(BENCH_ALLREDUCE, s, 2) == 1024);
    CHECK(bench_bound_bytes(BENCH_ALLREDUCE, s, 4) == 1536); /* 2 * 3/4 * s */
    CHECK(bench_bound_bytes(BENCH_GATHER, s, 8) == 1024);
    CHECK(bench_bound_bytes(BENCH_SCATTER, s, 8) == 1024);
    CHECK(bench_bound_bytes(BENCH_ALLGATHER, s, 4) == 4096);
    CHECK(bench_bound_bytes(BENCH_ALLTOALL, s, 2) == 2048);
    CHECK(bench_bound_bytes(BENCH_REDUCE_SCATTER_BLOCK, s, 2) == 512);
    /* 3 ranks: 1024 bytes = 256 floats, 85 per block, 255 used. */
    CHECK(fabs(bench_bound_bytes(BENCH_REDUCE_SCATTER_BLOCK, s, 3) - 2.0 * 255 * 4 / 3) < 1e-9);
    CHECK(bench_bound_bytes(BENCH_REDUCE_SCATTER, s, 4) == 768);
    CHECK(bench_bound_bytes(BENCH_SCAN, s, 4) == 768 && bench_bound_bytes(BENCH_EXSCAN, s, 2) == 512);
    CHECK(bench_bound_bytes(BENCH_LATENCY, s, 2) == 512);
    CHECK(bench_bound_bytes(BENCH_BW, s, 16) == 512); /* always two ranks */
    for (int id = 0; id < BENCH_COUNT; id++)
        CHECK(bench_bound_formula(id)[0] != '\0');
}

static void test_byte_patterns(void)
{
    unsigned char buf[1100], other[1100];
    uint64_t key = pattern_key(42, 1, 3);
    for (size_t len = 0; len <= 20; len++) {
        pattern_fill_bytes(buf, len, key);
        CHECK(pattern_check_bytes(buf, len, key) == -1);
        for (size_t k = 0; k < len; k++)
            CHECK(buf[k] == pattern_expected_byte(key, k));
    }
    pattern_fill_bytes(buf, 1000, key);
    CHECK(pattern_check_bytes(buf, 1000, key) == -1);
    /* Every spoiled byte is found where it was spoiled. */
    const size_t spoil_at[] = {0, 7, 8, 500, 991, 999};
    for (size_t k = 0; k < sizeof spoil_at / sizeof spoil_at[0]; k++) {
        memcpy(other, buf, 1000);
        other[spoil_at[k]] ^= 1;
        CHECK(pattern_check_bytes(other, 1000, key) == (long)spoil_at[k]);
    }
    /* Data of another call, rank or block is wrong data. */
    CHECK(pattern_check_bytes(buf, 1000, pattern_key(43, 1, 3)) >= 0);
    CHECK(pattern_check_bytes(buf, 1000, pattern_key(42, 0, 3)) >= 0);
    CHECK(pattern_check_bytes(buf, 1000, pattern_key(42, 1, 2)) >= 0);
    CHECK(pattern_key(1, 0, 1) != pattern_key(1, 1, 0));
    /* A block shifted by one word is wrong too. */
    memmove(other, buf + 8, 992);
    CHECK(pattern_check_bytes(other, 992, key) >= 0);
}

static void test_float_patterns(void)
{
    enum { COUNT = 300, RANKS = 3 };
    float inputs[RANKS][COUNT], sum[COUNT];
    uint64_t keys[RANKS];
    for (int r = 0; r < RANKS; r++) {
        keys[r] = pattern_key(7, r, 0);
        pattern_fill_floats(inputs[r], COUNT, keys[r]);
    }
    for (int e = 0; e < COUNT; e++) {
        sum[e] = 0;
        for (int r = RANKS - 1; r >= 0; r--) /* any order: integers are exact */
            sum[e] += inputs[r][e];
        CHECK(inputs[0][e] == floorf(inputs[0][e]) && inputs[0][e] >= 0 && inputs[0][e] < 4096);
    }
    float expected;
    CHECK(pattern_check_float_sum(sum, COUNT, keys, RANKS, 0, &expected) == -1);
    /* A block of the sum, as reduce_scatter_block delivers it. */
    CHECK(pattern_check_float_sum(sum + 100, 100, keys, RANKS, 100, &expected) == -1);
    CHECK(pattern_check_float_sum(sum + 100, 100, keys, RANKS, 0, &expected) >= 0);
    /* A sum that misses one rank, or one element off by one, is caught. */
    CHECK(pattern_check_float_sum(sum, COUNT, keys, RANKS - 1, 0, &expected) >= 0);
    sum[123] += 1.0f;
    CHECK(pattern_check_float_sum(sum, COUNT, keys, RANKS, 0, &expected) == 123);
    CHECK(expected == sum[123] - 1.0f);
    CHECK(pattern_float(keys[0], 5) == inputs[0][5]);
}

int main(void)
{
    test_defaults();
    test_osu_options();
    test_bad_options();
    test_sizes();
    test_reduce_scatter_blocks();
    test_bound_bytes();
    test_byte_patterns();
    test_float_patterns();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
