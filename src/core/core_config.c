#include "core_config.h"

#include <ctype.h>
#include <stddef.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_log.h"
#include "core_sys.h"

static const char *const coll_names[CORE_COLL_COUNT] = {
    "barrier",
    "bcast",
    "reduce",
    "allreduce",
    "gather",
    "gatherv",
    "allgather",
    "allgatherv",
    "scatter",
    "scatterv",
    "alltoall",
    "alltoallv",
    "reduce_scatter_block",
    "reduce_scatter",
    "scan",
    "exscan",
};

const char *core_coll_name(core_coll c) { return (unsigned)c < CORE_COLL_COUNT ? coll_names[c] : "?"; }

int core_coll_from_name(const char *name)
{
    for (int c = 0; c < CORE_COLL_COUNT; c++)
        if (strcmp(name, coll_names[c]) == 0)
            return c;
    return -1;
}

bool core_parse_size(const char *text, size_t *out)
{
    if (!text || !isdigit((unsigned char)*text))
        return false;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno)
        return false;
    unsigned long long mul = 1;
    switch (toupper((unsigned char)*end)) {
    case 0: break;
    case 'K':
        mul = 1ull << 10;
        end++;
        break;
    case 'M':
        mul = 1ull << 20;
        end++;
        break;
    case 'G':
        mul = 1ull << 30;
        end++;
        break;
    case 'T':
        mul = 1ull << 40;
        end++;
        break;
    default: return false;
    }
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end || v > (~0ull) / mul)
        return false;
    *out = (size_t)(v * mul);
    return true;
}

#define FIELD(f) offsetof(core_config, f), sizeof(((core_config *)0)->f)

static const core_setting_word cma_words[] = {
    {"auto", CORE_CMA_AUTO}, {"on", CORE_CMA_AUTO}, {"1", CORE_CMA_AUTO},
    {"off", CORE_CMA_OFF},   {"0", CORE_CMA_OFF},   {NULL, 0},
};

static const core_setting_word across_nodes_words[] = {
    {"1", CORE_ACROSS_NODES_PRICED},
    {"on", CORE_ACROSS_NODES_PRICED},
    {"auto", CORE_ACROSS_NODES_PRICED},
    {"two", CORE_ACROSS_NODES_TWO},
    {"0", CORE_ACROSS_NODES_OFF},
    {"off", CORE_ACROSS_NODES_OFF},
    {NULL, 0},
};

static const core_setting_word clique_order_words[] = {
    {"modulo", CORE_CLIQUES_MODULO},
    {"blocks", CORE_CLIQUES_BLOCKS},
    {NULL, 0},
};

/* `leaders` names the fixed leaders alike in the three node forms; the
 * singular, bcast's first spelling, reads the same in all three. */
static const core_setting_word node_bcast_words[] = {
    {"auto", CORE_NODE_BCAST_AUTO},   {"leaders", CORE_NODE_BCAST_LEADER}, {"leader", CORE_NODE_BCAST_LEADER},
    {"first", CORE_NODE_BCAST_FIRST}, {"rails", CORE_NODE_BCAST_RAILS},    {NULL, 0},
};

static const core_setting_word node_form_words[] = {
    {"auto", CORE_NODE_FORM_AUTO},
    {"leaders", CORE_NODE_FORM_LEADERS},
    {"leader", CORE_NODE_FORM_LEADERS},
    {"rails", CORE_NODE_FORM_RAILS},
    {NULL, 0},
};

/* Every SHOAL_* variable the library reads, in README's order. */
static const core_setting settings[] = {
    {.name = "SHOAL_DISABLE",
     .kind = CORE_SETTING_BOOL,
     FIELD(disabled),
     .value = 0,
     .shared = true,
     .default_text = "`0`",
     .description = "`1`: pure pass-through, every call goes to the host MPI"},
    {.name = "SHOAL_DISABLE_COLL",
     .kind = CORE_SETTING_COLLS,
     FIELD(disabled_colls),
     .shared = true,
     .default_text = "empty",
     .description = "collectives to pass through, e.g. `bcast,allreduce`"},
    {.name = "SHOAL_VERBOSE",
     .kind = CORE_SETTING_INT,
     FIELD(verbose),
     .value = 0,
     .lo = 0,
     .hi = 9,
     .default_text = "`0`",
     .description = "`1`: log each decision once (which algorithm and lane per collective and size class, "
                    "fallbacks); `2`: more"},
    {.name = "SHOAL_SHM_SIZE",
     .kind = CORE_SETTING_SIZE,
     FIELD(shm_size),
     .value = 0,
     .fallback = "using the automatic size",
     .default_text = "automatic",
     .description = "bytes of shared memory per node-local communicator (`64M`, `1G`); automatic is 512 KiB of "
                    "staging per rank (four round buffers of 128 KiB) plus control data"},
    {.name = "SHOAL_COMM_WARMUP",
     .kind = CORE_SETTING_INT,
     FIELD(comm_warmup),
     .value = CORE_COMM_WARMUP_DEFAULT,
     .lo = 0,
     .hi = 1L << 30,
     .shared = true,
     .default_text = "`8`",
     .description = "a communicator's first N collectives go to the host MPI; shoal builds its shared memory for "
                    "it at the next, so communicators used only a few times cost nothing (`0`: from the first). A "
                    "floating-point reduction ends the warm-up at once"},
    {.name = "SHOAL_ACROSS_NODES",
     .kind = CORE_SETTING_CHOICE,
     FIELD(across_nodes),
     .value = CORE_ACROSS_NODES_PRICED,
     .words = across_nodes_words,
     .expects = "1, two or 0",
     .shared = true,
     .default_text = "`1`",
     .description =
         "a communicator spanning several nodes runs its barrier, bcast, reduce, allreduce, reduce_scatter(_block), "
         "gather(v), allgather(v), scatter(v), alltoall(v), scan and exscan (where each node's ranks are consecutive; "
         "on a guessed link with more ranks than cores, the host's) in two levels (inside each node on shoal's "
         "lanes, between nodes by the host MPI on one rank per node) where the cost model prices that below the host "
         "MPI's own flat run (`shoal explain COLL SIZE --nodes N --ppn P` shows both); `two`: in two levels "
         "wherever shoal has a form (alltoallv up to 32 KiB a pair); `0`: the host MPI runs them whole"},
    {.name = "SHOAL_NODE_CLIQUES",
     .kind = CORE_SETTING_INT,
     FIELD(node_cliques),
     .value = 1,
     .lo = 1,
     .hi = 1024,
     .shared = true,
     .default_text = "`1`",
     .description = "for tests: split each node's ranks of a communicator into this many pretend nodes (local "
                    "rank modulo N), so the two-level collectives run on one host, as MPICH's "
                    "`MPIR_CVAR_NUM_CLIQUES` does"},
    {.name = "SHOAL_NODE_CLIQUE_ORDER",
     .kind = CORE_SETTING_CHOICE,
     FIELD(clique_order),
     .value = CORE_CLIQUES_MODULO,
     .words = clique_order_words,
     .expects = "modulo or blocks",
     .shared = true,
     .default_text = "`modulo`",
     .description = "for tests: which ranks each of SHOAL_NODE_CLIQUES's pretend nodes holds: `modulo`, local "
                    "rank modulo N (no pretend node's ranks are consecutive), or `blocks`, N runs of consecutive "
                    "local ranks (as `mpirun` places ranks on real nodes: the layout scans need for their two "
                    "levels)"},
    {.name = "SHOAL_NODE_BCAST",
     .kind = CORE_SETTING_CHOICE,
     FIELD(node_bcast),
     .value = CORE_NODE_BCAST_AUTO,
     .words = node_bcast_words,
     .expects = "auto, leaders, first or rails",
     .shared = true,
     .default_text = "`auto`",
     .description = "across nodes, which ranks of a node receive a bcast from the others: `first`, the first of its "
                    "ranks to arrive (competitive: a late rank delays only itself, but the claim costs a round "
                    "trip between nodes when all arrive together; for programs whose ranks arrive unevenly), "
                    "`leaders`, its first rank in the communicator, or `rails`, on nodes of equal rank counts every "
                    "rank a slice (the root's node scatters the message, the ranks of one slice on every node "
                    "bcast it by the host MPI, each over its own link, and each node gathers the slices); `auto`: "
                    "rails where the planner prices them cheaper on a link `shoal tune --link` measured, else "
                    "`leaders`. A message cut into segments goes through the leaders, also under `first`"},
    {.name = "SHOAL_NODE_REDUCE",
     .kind = CORE_SETTING_CHOICE,
     FIELD(node_reduce),
     .value = CORE_NODE_FORM_AUTO,
     .words = node_form_words,
     .expects = "auto, leaders or rails",
     .shared = true,
     .default_text = "`auto`",
     .description = "across nodes of equal rank counts, how a reduce crosses them: `rails` (each rank of a node "
                    "reduces a slice of the vector inside its node, the ranks of one slice on every node reduce it "
                    "to the root's node by the host MPI, each over its own link, and the root's node gathers the "
                    "slices to the root), `leaders` (a node reduce to each node's first rank, the leaders' reduce), "
                    "or `auto`: as the planner prices them on a link `shoal tune --link` measured, else `leaders`"},
    {.name = "SHOAL_NODE_ALLREDUCE",
     .kind = CORE_SETTING_CHOICE,
     FIELD(node_allreduce),
     .value = CORE_NODE_FORM_AUTO,
     .words = node_form_words,
     .expects = "auto, leaders or rails",
     .shared = true,
     .default_text = "`auto`",
     .description = "across nodes of equal rank counts, how an allreduce crosses them: `rails` (each rank of a node "
                    "reduces a slice of the vector inside its node, the ranks of one slice on every node allreduce "
                    "it by the host MPI, each over its own link, and the node gathers the slices), `leaders` (a node "
                    "reduce to each node's first rank, the leaders' allreduce, a node bcast), or `auto`: as the "
                    "planner prices them on a link `shoal tune --link` measured, else `leaders`"},
    {.name = "SHOAL_NODE_SEGMENT",
     .kind = CORE_SETTING_SIZE,
     FIELD(node_segment),
     .value = 0,
     .shared = true,
     .fallback = "segments as the planner prices them",
     .default_text = "automatic",
     .description = "across nodes, a long bcast, reduce or allreduce is cut into segments of this many bytes so "
                    "that the steps inside the nodes overlap the host MPI's transfers between them (`1M`); "
                    "automatic: the planner prices each segment size with the link's figures and takes the "
                    "cheapest, which may be the whole message"},
    {.name = "SHOAL_ALLTOALL_MAP",
     .kind = CORE_SETTING_TEXT,
     FIELD(alltoall_map),
     .default_text = "empty",
     .description = "across nodes, a mapping file as `shoal-sim map` writes it (line i: the node that holds logical "
                    "rank i; nodes numbered in the order of the communicator's ranks) that orders the leaders' "
                    "all-to-all phases: in phase k logical node i sends to logical node i + k. Rank 0 reads it "
                    "for the whole job; a file that does not fit the job is reported and the nodes' own order "
                    "kept. Empty: the nodes' own order"},
    {.name = "SHOAL_CMA",
     .kind = CORE_SETTING_CHOICE,
     FIELD(cma),
     .value = CORE_CMA_AUTO,
     .words = cma_words,
     .expects = "auto or off",
     .default_text = "`auto`",
     .description = "`off`: never use single copy (process_vm_readv); `auto`: use it where the kernel allows"},
    {.name = "SHOAL_SPIN",
     .kind = CORE_SETTING_INT,
     FIELD(spin),
     .value = -1,
     .lo = -1,
     .hi = 1L << 30,
     .default_text = "automatic",
     .description = "polls before a waiting rank yields its core; automatic depends on ranks per core"},
    {.name = "SHOAL_TIMEOUT",
     .kind = CORE_SETTING_SECONDS,
     FIELD(timeout_s),
     .value = 0,
     .fallback = "waiting without limit",
     .default_text = "`0`",
     .description = "seconds without progress from a peer before shoal ends the job with a message; `0`: wait as "
                    "long as the peer lives"},
    {.name = "SHOAL_LANES",
     .kind = CORE_SETTING_TEXT,
     FIELD(lanes),
     .shared = true,
     .default_text = "planner",
     .description = "force a lane for every collective: `cells`, `cma`, `host`, or `cma+host` (large blocks of "
                    "gather, scatter, allgather, alltoall striped over both) (experiments, tests)"},
    {.name = "SHOAL_ALGO",
     .kind = CORE_SETTING_TEXT,
     FIELD(algo),
     .shared = true,
     .default_text = "planner",
     .description = "force algorithms, e.g. "
                    "`allreduce:sliced,bcast:tree,reduce:flat,barrier:dissemination,gather:push`"},
    {.name = "SHOAL_TUNING_FILE",
     .kind = CORE_SETTING_TEXT,
     FIELD(tuning_file),
     .default_text = "`$XDG_CACHE_HOME/shoal/tuning.json`",
     .description = "the cost model's measured figures, written by `shoal tune` (else "
                    "`~/.cache/shoal/tuning.json`; absent: MPI_Init probes the node)"},
    {.name = "SHOAL_PROBE",
     .kind = CORE_SETTING_BOOL,
     FIELD(probe),
     .value = 1,
     .shared = true,
     .default_text = "`1`",
     .description = "without a tuning file, MPI_Init measures the node's copy and lane rates (a few ms, node rank 0 "
                    "and a rank on another CPU); `0`: the built-in figures"},
    {.name = "SHOAL_SHMEM_GLOBALS",
     .kind = CORE_SETTING_BOOL,
     FIELD(shmem_globals),
     .value = 1,
     .default_text = "`1`",
     .description = "OpenSHMEM (libshoal-shmem): shmem_init moves the program's global and static data into "
                    "shared memory, so that other PEs of the node put, get and run atomics on it with loads and "
                    "stores; `0` keeps it private (then only the symmetric heap is remotely accessible)"},
    {.name = "SHOAL_THREAD_HANDOFF_BYTES",
     .kind = CORE_SETTING_SIZE,
     FIELD(thread_handoff),
     .value = 4096,
     .fallback = "4096",
     .default_text = "`4096`",
     .description = "thread ranks (MPIX_Threadcomm): a message between threads of one process at least this long "
                    "whose receive is not posted yet is handed over by address, its sender waiting until the "
                    "receiver has copied it (one copy); a shorter one is copied aside so that its send returns at "
                    "once (two copies). A receive posted first always copies from the sender's buffer"},
};

#define SETTINGS_COUNT ((int)(sizeof settings / sizeof settings[0]))

_Static_assert(sizeof(core_cma_mode) == sizeof(int), "CHOICE settings fill int-sized fields");

const core_setting *core_settings(int *count)
{
    *count = SETTINGS_COUNT;
    return settings;
}

const core_setting *core_setting_find(const char *name)
{
    for (int i = 0; i < SETTINGS_COUNT; i++)
        if (!strcmp(settings[i].name, name))
            return &settings[i];
    return NULL;
}

/* INT settings fill int or long fields. */
static void store_int(const core_setting *s, void *field, long v)
{
    if (s->size == sizeof(int))
        *(int *)field = (int)v;
    else
        *(long *)field = v;
}

static long load_int(const core_setting *s, const void *field)
{
    return s->size == sizeof(int) ? (long)*(const int *)field : *(const long *)field;
}

static void set_default(const core_setting *s, core_config *c)
{
    void *field = (char *)c + s->offset;
    switch (s->kind) {
    case CORE_SETTING_BOOL: *(bool *)field = s->value != 0; break;
    case CORE_SETTING_INT: store_int(s, field, (long)s->value); break;
    case CORE_SETTING_SIZE: *(size_t *)field = (size_t)s->value; break;
    case CORE_SETTING_SECONDS: *(double *)field = s->value; break;
    case CORE_SETTING_CHOICE: *(int *)field = (int)s->value; break;
    case CORE_SETTING_COLLS: *(unsigned *)field = 0; break;
    case CORE_SETTING_TEXT: memset(field, 0, s->size); break;
    }
}

static bool read_bool(const char *text, bool *out)
{
    static const char *const yes[] = {"1", "yes", "on", "true"}, *const no[] = {"0", "no", "off", "false"};
    for (int i = 0; i < 4; i++) {
        if (!strcasecmp(text, yes[i]) || !strcasecmp(text, no[i])) {
            *out = !strcasecmp(text, yes[i]);
            return true;
        }
    }
    return false;
}

static bool read_long(const char *text, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

static bool read_seconds(const char *text, double *out)
{
    char *end;
    double v = strtod(text, &end);
    if (*end || !(v >= 0))
        return false;
    *out = v;
    return true;
}

static bool read_choice(const core_setting_word *words, const char *text, int *out)
{
    for (const core_setting_word *w = words; w->word; w++)
        if (!strcmp(text, w->word)) {
            *out = w->value;
            return true;
        }
    return false;
}

/* Unknown names are reported one by one and the rest kept. */
static unsigned read_colls(const char *name, const char *text)
{
    unsigned bits = 0;
    char *copy = strdup(text);
    if (!copy)
        return 0;
    for (char *save, *tok = strtok_r(copy, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
        if (!strcmp(tok, "all")) {
            bits = (1u << CORE_COLL_COUNT) - 1;
            continue;
        }
        int c = core_coll_from_name(tok);
        if (c < 0)
            core_log_warn_once("%s: '%s' is not a collective shoal handles; ignored", name, tok);
        else
            bits |= 1u << c;
    }
    free(copy);
    return bits;
}

void core_setting_format(const core_setting *s, const core_config *c, char *buf, size_t len)
{
    const void *field = (const char *)c + s->offset;
    switch (s->kind) {
    case CORE_SETTING_BOOL: snprintf(buf, len, "%d", *(const bool *)field); break;
    case CORE_SETTING_INT: snprintf(buf, len, "%ld", load_int(s, field)); break;
    case CORE_SETTING_SIZE: snprintf(buf, len, "%zu", *(const size_t *)field); break;
    case CORE_SETTING_SECONDS: snprintf(buf, len, "%g", *(const double *)field); break;
    case CORE_SETTING_CHOICE: {
        int v = *(const int *)field;
        const char *word = "?";
        for (const core_setting_word *w = s->words; w->word; w++)
            if (w->value == v) {
                word = w->word;
                break;
            }
        snprintf(buf, len, "%s", word);
        break;
    }
    case CORE_SETTING_COLLS: {
        unsigned bits = *(const unsigned *)field;
        size_t used = 0;
        if (len)
            buf[0] = 0;
        for (int i = 0; i < CORE_COLL_COUNT && used < len; i++)
            if (bits & (1u << i))
                used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? "," : "", coll_names[i]);
        break;
    }
    case CORE_SETTING_TEXT: snprintf(buf, len, "%s", (const char *)field); break;
    }
}

/* What a malformed value of s is told it is not. */
static void describe_expected(const core_setting *s, char *buf, size_t len)
{
    if (s->expects) {
        snprintf(buf, len, "%s", s->expects);
        return;
    }
    switch (s->kind) {
    case CORE_SETTING_BOOL: snprintf(buf, len, "a boolean"); break;
    case CORE_SETTING_INT: snprintf(buf, len, "an integer in [%ld, %ld]", s->lo, s->hi); break;
    case CORE_SETTING_SIZE: snprintf(buf, len, "a size (like 64M)"); break;
    case CORE_SETTING_SECONDS: snprintf(buf, len, "a number of seconds"); break;
    default: snprintf(buf, len, "valid"); break;
    }
}

/* Parses one setting's text into c; empty or unset keeps the default. */
static void parse_setting(const core_setting *s, const char *text, core_config *c)
{
    set_default(s, c);
    if (!text || !*text)
        return;
    void *field = (char *)c + s->offset;
    bool ok = true;
    switch (s->kind) {
    case CORE_SETTING_BOOL: ok = read_bool(text, (bool *)field); break;
    case CORE_SETTING_INT: {
        long v;
        if ((ok = read_long(text, s->lo, s->hi, &v)))
            store_int(s, field, v);
        break;
    }
    case CORE_SETTING_SIZE: ok = core_parse_size(text, (size_t *)field); break;
    case CORE_SETTING_SECONDS: ok = read_seconds(text, (double *)field); break;
    case CORE_SETTING_CHOICE: ok = read_choice(s->words, text, (int *)field); break;
    case CORE_SETTING_COLLS: *(unsigned *)field = read_colls(s->name, text); break;
    case CORE_SETTING_TEXT:
        if (strlen(text) >= s->size) {
            core_log_warn_once("%s is %zu characters long, more than the %zu shoal reads; ignored", s->name,
                               strlen(text), s->size - 1);
            return;
        }
        memcpy(field, text, strlen(text) + 1);
        break;
    }
    if (ok)
        return;
    set_default(s, c);
    char expects[96], fallback[96];
    describe_expected(s, expects, sizeof expects);
    if (s->fallback)
        snprintf(fallback, sizeof fallback, "%s", s->fallback);
    else {
        char value[64];
        core_setting_format(s, c, value, sizeof value);
        snprintf(fallback, sizeof fallback, "using %s", value);
    }
    core_log_warn_once("%s=%s is not %s; %s", s->name, text, expects, fallback);
}

void core_settings_markdown(FILE *out)
{
    fprintf(out, "| variable | default | meaning |\n|---|---|---|\n");
    for (int i = 0; i < SETTINGS_COUNT; i++) {
        const core_setting *s = &settings[i];
        fprintf(out, "| `%s` | %s | %s", s->name, s->default_text, s->description);
        if (s->kind == CORE_SETTING_COLLS) {
            fprintf(out, " (`all` for every one; names:");
            for (int c = 0; c < CORE_COLL_COUNT; c++)
                fprintf(out, "%s %s", c ? "," : "", coll_names[c]);
            fprintf(out, ")");
        }
        fprintf(out, " |\n");
    }
}

static core_config config;
static pthread_once_t config_once = PTHREAD_ONCE_INIT;
static _Atomic unsigned generation;

unsigned core_config_generation(void) { return atomic_load_explicit(&generation, memory_order_acquire); }

void core_config_reload(void)
{
    core_config c = {0};
    for (int i = 0; i < SETTINGS_COUNT; i++)
        parse_setting(&settings[i], getenv(settings[i].name), &c);
    core_log_set_verbosity(c.verbose);
    c.fingerprint = core_config_fingerprint(&c);
    config = c;
    atomic_fetch_add(&generation, 1);
}

static void config_init(void) { core_config_reload(); }

uint64_t core_config_fingerprint(const core_config *c)
{
    uint64_t h = CORE_HASH_START;
    char value[sizeof c->algo + 64];
    for (int i = 0; i < SETTINGS_COUNT; i++) {
        if (!settings[i].shared)
            continue;
        core_setting_format(&settings[i], c, value, sizeof value);
        h = core_hash(h, settings[i].name, strlen(settings[i].name) + 1);
        h = core_hash(h, value, strlen(value) + 1);
    }
    return h;
}

const core_config *core_config_get(void)
{
    /* Every MPI call asks: past the first, one load instead of a call. */
    if (!atomic_load_explicit(&generation, memory_order_acquire))
        pthread_once(&config_once, config_init);
    return &config;
}
