/* shoal-bench: shared declarations.
 *
 * The program is split so that the parts that need no MPI (option parsing,
 * the data patterns and their reference results, the bound's byte counts)
 * can be unit-tested without a launcher. */
#ifndef SHOAL_BENCH_H
#define SHOAL_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- benchmarks ------------------------------------------------------- */

enum bench_id {
    BENCH_BARRIER,
    BENCH_BCAST,
    BENCH_REDUCE,
    BENCH_ALLREDUCE,
    BENCH_GATHER,
    BENCH_ALLGATHER,
    BENCH_SCATTER,
    BENCH_ALLTOALL,
    BENCH_REDUCE_SCATTER_BLOCK,
    BENCH_REDUCE_SCATTER, /* blocks of their own sizes: rank i's grows with i + 1 */
    BENCH_SCAN,
    BENCH_EXSCAN,
    BENCH_LATENCY, /* OSU osu_latency: ping-pong between ranks 0 and 1 */
    BENCH_BW,      /* OSU osu_bw: windows of non-blocking sends, 0 -> 1 */
    BENCH_COUNT
};

enum bench_kind { KIND_COLLECTIVE, KIND_LATENCY, KIND_BANDWIDTH };

const char *bench_name(enum bench_id id);
enum bench_kind bench_kind_of(enum bench_id id);
/* -1 when the name is not a benchmark. */
int bench_from_name(const char *name);
/* Reductions work on MPI_FLOAT elements (as the OSU reductions do), the
 * other benchmarks on MPI_CHAR bytes. */
bool bench_is_reduction(enum bench_id id);

/* Bytes that one rank must at least copy for one operation of `size` bytes
 * among `nprocs` ranks: the total bytes that must be written into output
 * buffers (or folded into a reduction), spread evenly over the ranks that
 * take part. docs/BENCH.md derives each line. */
double bench_bound_bytes(enum bench_id id, size_t size, int nprocs);
/* The same rule written as a formula, for the JSON and the report. */
const char *bench_bound_formula(enum bench_id id);
/* false when `size` cannot be run by this benchmark (a float reduction
 * below 4 bytes, a reduce_scatter_block block below one float, a
 * collective of 0 bytes). */
bool bench_size_supported(enum bench_id id, size_t size, int nprocs);
/* reduce_scatter's blocks: of an s-byte vector of floats, rank r gets the
 * floats from reduce_scatter_first(s, n, r) to reduce_scatter_first(s, n,
 * r + 1), a share that grows with r + 1 (so they differ, the last being
 * the largest; small vectors leave the first blocks empty). */
size_t bench_reduce_scatter_first(size_t size, int nprocs, int rank);

/* ---- options ---------------------------------------------------------- */

/* OSU conventions: sizes above this use the "large" iteration counts. */
#define BENCH_LARGE_MESSAGE_SIZE 8192
#define BENCH_DEFAULT_MAX_SIZE (1u << 20)
#define BENCH_SIZE_LIMIT ((size_t)1 << 30)

enum bench_path { PATH_HOST, PATH_SHOAL };
enum bench_corrupt { CORRUPT_NONE, CORRUPT_HOST, CORRUPT_SHOAL };
/* How collective inputs are treated between calls. fresh: a new input is
 * written before each call and every result checked (a halo, a gradient:
 * the inputs come from memory the program just wrote). osu: the OSU
 * micro-benchmarks' way, the same buffers call after call, untouched, a
 * barrier after each call (a solver's small residual: inputs hot in cache). */
enum bench_method { METHOD_FRESH, METHOD_OSU };
const char *bench_method_name(enum bench_method m);

/* A count or size left at -1 (BENCH_UNSET) takes the OSU default of the
 * benchmark's kind; bench_size_range() and bench_counts() resolve them. */
#define BENCH_UNSET (-1)

struct bench_options {
    long long min_size, max_size; /* -m [MIN:]MAX */
    int iterations;               /* -i: timed iterations per size (all sizes, as OSU) */
    int warmup;                   /* -x: untimed iterations per size (all sizes, as OSU) */
    int iterations_large;         /* --iterations-large: sizes > BENCH_LARGE_MESSAGE_SIZE */
    int warmup_large;             /* --warmup-large */
    int window_size;              /* bw: messages in flight per iteration (-W) */
    bool full;                    /* -f: also min/max across ranks and iterations */
    bool validate;                /* on unless --no-validate */
    enum bench_method method;     /* --method fresh|osu (collectives) */
    int skew_us;                  /* --skew US: one rank per node enters each timed call this late (fresh) */
    const char *json_path;        /* NULL: no JSON */
    const char *csv_path;         /* NULL: no CSV */
    bool selected[BENCH_COUNT];
    enum bench_corrupt corrupt; /* hidden test hook, see docs/BENCH.md */
    bool help, version;
};

enum parse_result { PARSE_OK, PARSE_ERROR, PARSE_EXIT };

/* Fills `opt` from argv. On PARSE_ERROR `err` holds one line saying what was
 * wrong. PARSE_EXIT means --help or --version was asked for. Needs no MPI. */
enum parse_result bench_parse_options(int argc, char **argv, struct bench_options *opt, char *err, size_t errlen);
void bench_print_usage(FILE *out);
/* The sizes a benchmark runs: from *min to *max, doubling (0 is followed by 1). */
void bench_size_range(const struct bench_options *opt, enum bench_id id, size_t *min, size_t *max);
size_t bench_next_size(size_t size);
/* Timed and warm-up iterations for one benchmark at one size. */
void bench_counts(const struct bench_options *opt, enum bench_id id, size_t size, int *iterations, int *warmup);

/* ---- patterns: inputs and the independently computed reference -------- */

/* A key names one block of data: which call (seed), which source rank,
 * which block. Every call gets a fresh seed, so a result left over from an
 * earlier call (or from the other path) never passes validation. */
uint64_t pattern_key(uint64_t seed, int source_rank, int block);

void pattern_fill_bytes(void *buf, size_t len, uint64_t key);
/* Offset of the first byte that differs from the pattern, or -1. */
long pattern_check_bytes(const void *buf, size_t len, uint64_t key);
uint8_t pattern_expected_byte(uint64_t key, size_t offset);

/* Float elements hold small integers (0..4095), so a sum over up to 4096
 * ranks is exact in single precision whatever order the MPI adds them in. */
void pattern_fill_floats(float *buf, size_t count, uint64_t key);
float pattern_float(uint64_t key, size_t element);
/* Checks buf[e] == sum over r of pattern_float(keys[r], first_element + e).
 * Returns the first bad element, or -1; *expected gets its reference. */
long pattern_check_float_sum(const float *buf, size_t count, const uint64_t *keys, int nkeys, size_t first_element,
                             float *expected);

#endif
