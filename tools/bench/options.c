/* Command line of shoal-bench. The short options are the ones the OSU
 * micro-benchmarks use (-m, -i, -x, -f, -W, -c, -h, -v), so that a user who
 * knows `osu_allreduce -m 4:1048576 -i 1000` can type the same here. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* OSU defaults per kind of benchmark: iterations and warm-up for small
 * messages, then for messages above BENCH_LARGE_MESSAGE_SIZE. */
static const struct {
    int iterations, warmup, iterations_large, warmup_large;
    long long min_size, max_size;
} kind_defaults[] = {
    [KIND_COLLECTIVE] = {1000, 200, 100, 10, 1, BENCH_DEFAULT_MAX_SIZE},
    [KIND_LATENCY] = {10000, 100, 1000, 10, 0, 4u << 20},
    [KIND_BANDWIDTH] = {100, 10, 20, 2, 0, 4u << 20},
};

void bench_print_usage(FILE *out)
{
    fputs("usage: shoal-bench [options] [benchmark...]\n"
          "\n"
          "Times every size twice in the same run, alternating the host MPI (PMPI_*)\n"
          "and shoal (MPI_*), next to the memcpy bound of the bytes one rank must move.\n"
          "\n"
          "benchmarks: barrier bcast reduce allreduce gather allgather scatter alltoall\n"
          "            reduce_scatter_block reduce_scatter scan exscan latency bw, or: all (default), collectives,\n"
          "            pt2pt\n"
          "            thread_latency, thread_coll (alone, first: thread ranks of one process against as\n"
          "            many process ranks; options -m, -i, -x)\n"
          "\n"
          "options (the short ones as the OSU micro-benchmarks name them):\n"
          "  -m, --message-size [MIN:]MAX  sizes in bytes, doubling; K, M, G suffixes allowed\n"
          "                                (default 1:1M for collectives, 0:4M for latency, bw)\n"
          "  -i, --iterations N            timed iterations per size (default: OSU's, 1000\n"
          "                                for collectives, 100 above 8 KiB)\n"
          "  -x, --warmup N                untimed warm-up iterations per size (default 200, 10)\n"
          "      --iterations-large N      timed iterations for sizes above 8 KiB\n"
          "      --warmup-large N          warm-up iterations for sizes above 8 KiB\n"
          "  -W, --window-size N           bw: messages in flight per iteration (default 64)\n"
          "  -f, --full                    also print min and max across ranks, iterations\n"
          "  -c, --validation              check every result against a reference (default)\n"
          "      --no-validate             do not check results\n"
          "      --method fresh|osu        collectives: fresh (default) writes a new input before\n"
          "                                every call and checks every result; osu reuses the\n"
          "                                same buffers untouched, a barrier after each call\n"
          "                                (before each reduce), as the OSU micro-benchmarks 7.4\n"
          "                                do (results checked after each block of calls)\n"
          "      --skew US                 collectives: on every node one rank (the first, or the\n"
          "                                second on rank 0's node) enters each call US\n"
          "                                microseconds late; the others' time in the call shows\n"
          "                                what a late rank costs them (fresh method)\n"
          "      --json FILE               write machine facts and every figure as JSON\n"
          "      --csv FILE                write every figure as CSV\n"
          "  -h, --help                    this text\n"
          "  -v, --version                 shoal and MPI versions\n",
          out);
}

static void set_error(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* "4096", "4K", "1M", "2G": binary multiples. */
static int parse_size(const char *text, long long *out)
{
    if (!isdigit((unsigned char)text[0]))
        return -1;
    errno = 0;
    char *end;
    unsigned long long value = strtoull(text, &end, 10);
    if (errno)
        return -1;
    unsigned long long scale = 1;
    switch (*end) {
    case 'k':
    case 'K':
        scale = 1ull << 10;
        end++;
        break;
    case 'm':
    case 'M':
        scale = 1ull << 20;
        end++;
        break;
    case 'g':
    case 'G':
        scale = 1ull << 30;
        end++;
        break;
    default: break;
    }
    if (*end != '\0' || value > BENCH_SIZE_LIMIT / scale)
        return -1;
    *out = (long long)(value * scale);
    return 0;
}

static int parse_count(const char *text, int minimum, int *out)
{
    if (!isdigit((unsigned char)text[0]))
        return -1;
    errno = 0;
    char *end;
    long value = strtol(text, &end, 10);
    if (errno || *end != '\0' || value < minimum || value > INT_MAX)
        return -1;
    *out = (int)value;
    return 0;
}

/* OSU's -m: "MAX", "MIN:MAX" or "MIN:". */
static int parse_size_range(const char *text, struct bench_options *opt)
{
    const char *colon = strchr(text, ':');
    if (!colon)
        return parse_size(text, &opt->max_size);
    char min_text[64];
    size_t min_len = (size_t)(colon - text);
    if (min_len == 0 || min_len >= sizeof min_text)
        return -1;
    memcpy(min_text, text, min_len);
    min_text[min_len] = '\0';
    if (parse_size(min_text, &opt->min_size))
        return -1;
    if (colon[1] == '\0')
        return 0;
    return parse_size(colon + 1, &opt->max_size);
}

static bool select_benchmarks(const char *name, struct bench_options *opt)
{
    if (strcmp(name, "all") == 0) {
        for (int id = 0; id < BENCH_COUNT; id++)
            opt->selected[id] = true;
        return true;
    }
    if (strcmp(name, "collectives") == 0 || strcmp(name, "pt2pt") == 0) {
        bool want_collectives = name[0] == 'c';
        for (int id = 0; id < BENCH_COUNT; id++)
            if ((bench_kind_of(id) == KIND_COLLECTIVE) == want_collectives)
                opt->selected[id] = true;
        return true;
    }
    int id = bench_from_name(name);
    if (id < 0)
        return false;
    opt->selected[id] = true;
    return true;
}

/* Options that take a value accept "-m 64", "-m64", "--message-size 64" and
 * "--message-size=64". Returns the value, or NULL when it is missing. */
static const char *option_value(int argc, char **argv, int *index, const char *arg, size_t name_len)
{
    if (arg[1] != '-' && arg[2] != '\0') /* -m64 */
        return arg + 2;
    if (arg[1] == '-' && arg[name_len] == '=') /* --message-size=64 */
        return arg + name_len + 1;
    if (*index + 1 >= argc)
        return NULL;
    return argv[++*index];
}

enum parse_result bench_parse_options(int argc, char **argv, struct bench_options *opt, char *err, size_t errlen)
{
    memset(opt, 0, sizeof *opt);
    opt->min_size = opt->max_size = BENCH_UNSET;
    opt->iterations = opt->warmup = BENCH_UNSET;
    opt->iterations_large = opt->warmup_large = BENCH_UNSET;
    opt->window_size = 64;
    opt->validate = true;
    bool any_selected = false;
    err[0] = '\0';

    static const struct {
        char short_name;
        const char *long_name;
        bool takes_value;
    } known[] = {
        {'m', "--message-size", true}, {'i', "--iterations", true},
        {'x', "--warmup", true},       {0, "--iterations-large", true},
        {0, "--warmup-large", true},   {'W', "--window-size", true},
        {'f', "--full", false},        {'c', "--validation", false},
        {0, "--no-validate", false},   {0, "--method", true},
        {0, "--json", true},           {0, "--csv", true},
        {'h', "--help", false},        {'v', "--version", false},
        {0, "--debug-corrupt", true},  {0, "--skew", true},
    };

    for (int index = 1; index < argc; index++) {
        const char *arg = argv[index];
        if (arg[0] != '-' || arg[1] == '\0') {
            if (!select_benchmarks(arg, opt)) {
                set_error(err, errlen, "unknown benchmark '%s'", arg);
                return PARSE_ERROR;
            }
            any_selected = true;
            continue;
        }
        int which = -1;
        size_t name_len = 0;
        for (size_t k = 0; k < sizeof known / sizeof known[0]; k++) {
            if (arg[1] == '-') {
                size_t len = strlen(known[k].long_name);
                if (strncmp(arg, known[k].long_name, len) == 0 &&
                    (arg[len] == '\0' || (arg[len] == '=' && known[k].takes_value))) {
                    which = (int)k;
                    name_len = len;
                    break;
                }
            } else if (known[k].short_name && arg[1] == known[k].short_name &&
                       (known[k].takes_value || arg[2] == '\0')) {
                which = (int)k;
                break;
            }
        }
        if (which < 0) {
            set_error(err, errlen, "unknown option '%s'", arg);
            return PARSE_ERROR;
        }
        const char *value = NULL;
        if (known[which].takes_value) {
            value = option_value(argc, argv, &index, arg, name_len);
            if (!value) {
                set_error(err, errlen, "option '%s' needs a value", arg);
                return PARSE_ERROR;
            }
        }
        const char *name = known[which].long_name;
        int bad = 0;
        if (strcmp(name, "--message-size") == 0)
            bad = parse_size_range(value, opt);
        else if (strcmp(name, "--iterations") == 0)
            bad = parse_count(value, 1, &opt->iterations);
        else if (strcmp(name, "--warmup") == 0)
            bad = parse_count(value, 0, &opt->warmup);
        else if (strcmp(name, "--iterations-large") == 0)
            bad = parse_count(value, 1, &opt->iterations_large);
        else if (strcmp(name, "--warmup-large") == 0)
            bad = parse_count(value, 0, &opt->warmup_large);
        else if (strcmp(name, "--window-size") == 0)
            bad = parse_count(value, 1, &opt->window_size);
        else if (strcmp(name, "--full") == 0)
            opt->full = true;
        else if (strcmp(name, "--validation") == 0)
            opt->validate = true;
        else if (strcmp(name, "--no-validate") == 0)
            opt->validate = false;
        else if (strcmp(name, "--method") == 0) {
            if (strcmp(value, "fresh") == 0)
                opt->method = METHOD_FRESH;
            else if (strcmp(value, "osu") == 0)
                opt->method = METHOD_OSU;
            else
                bad = 1;
        } else if (strcmp(name, "--skew") == 0)
            bad = parse_count(value, 0, &opt->skew_us);
        else if (strcmp(name, "--json") == 0)
            opt->json_path = value;
        else if (strcmp(name, "--csv") == 0)
            opt->csv_path = value;
        else if (strcmp(name, "--help") == 0)
            opt->help = true;
        else if (strcmp(name, "--version") == 0)
            opt->version = true;
        else if (strcmp(name, "--debug-corrupt") == 0) {
            if (strcmp(value, "host") == 0)
                opt->corrupt = CORRUPT_HOST;
            else if (strcmp(value, "shoal") == 0)
                opt->corrupt = CORRUPT_SHOAL;
            else
                bad = 1;
        }
        if (bad) {
            set_error(err, errlen, "bad value '%s' for %s", value, name);
            return PARSE_ERROR;
        }
    }

    if (opt->help || opt->version)
        return PARSE_EXIT;
    if (opt->min_size != BENCH_UNSET && opt->max_size != BENCH_UNSET && opt->min_size > opt->max_size) {
        set_error(err, errlen, "message size range %lld:%lld is empty", opt->min_size, opt->max_size);
        return PARSE_ERROR;
    }
    if (opt->skew_us && opt->method == METHOD_OSU) {
        set_error(err, errlen, "--skew times the fresh method's calls; not with --method osu");
        return PARSE_ERROR;
    }
    if (opt->window_size > 1024) {
        set_error(err, errlen, "window size %d is above 1024", opt->window_size);
        return PARSE_ERROR;
    }
    if (!any_selected)
        select_benchmarks("all", opt);
    return PARSE_OK;
}

void bench_size_range(const struct bench_options *opt, enum bench_id id, size_t *min, size_t *max)
{
    enum bench_kind kind = bench_kind_of(id);
    long long lo = opt->min_size != BENCH_UNSET ? opt->min_size : kind_defaults[kind].min_size;
    long long hi = opt->max_size != BENCH_UNSET ? opt->max_size : kind_defaults[kind].max_size;
    /* One bound given and the other defaulted can cross: "-m 2M:" for a
     * collective (default maximum 1M) runs 2M, "-m 0" runs size 0 only. */
    if (lo > hi) {
        if (opt->max_size == BENCH_UNSET)
            hi = lo;
        else
            lo = hi;
    }
    *min = (size_t)lo;
    *max = (size_t)hi;
}

size_t bench_next_size(size_t size) { return size == 0 ? 1 : size * 2; }

void bench_counts(const struct bench_options *opt, enum bench_id id, size_t size, int *iterations, int *warmup)
{
    enum bench_kind kind = bench_kind_of(id);
    bool large = size > BENCH_LARGE_MESSAGE_SIZE;
    /* -i and -x set every size, as OSU's do; the -large options then
     * override the large sizes only. */
    int small_iterations = opt->iterations != BENCH_UNSET ? opt->iterations : kind_defaults[kind].iterations;
    int small_warmup = opt->warmup != BENCH_UNSET ? opt->warmup : kind_defaults[kind].warmup;
    if (!large) {
        *iterations = small_iterations;
        *warmup = small_warmup;
        return;
    }
    if (opt->iterations_large != BENCH_UNSET)
        *iterations = opt->iterations_large;
    else if (opt->iterations != BENCH_UNSET)
        *iterations = opt->iterations;
    else
        *iterations = kind_defaults[kind].iterations_large;
    if (opt->warmup_large != BENCH_UNSET)
        *warmup = opt->warmup_large;
    else if (opt->warmup != BENCH_UNSET)
        *warmup = opt->warmup;
    else
        *warmup = kind_defaults[kind].warmup_large;
}
