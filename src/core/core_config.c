#include "core_config.h"

#include <ctype.h>
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

static bool parse_bool(const char *name, const char *text, bool fallback)
{
    if (!text || !*text)
        return fallback;
    if (!strcmp(text, "1") || !strcasecmp(text, "yes") || !strcasecmp(text, "on") || !strcasecmp(text, "true"))
        return true;
    if (!strcmp(text, "0") || !strcasecmp(text, "no") || !strcasecmp(text, "off") || !strcasecmp(text, "false"))
        return false;
    core_log_warn_once("%s=%s is not a boolean; using %d", name, text, fallback);
    return fallback;
}

static long parse_long(const char *name, const char *text, long fallback, long lo, long hi)
{
    if (!text || !*text)
        return fallback;
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || *end || v < lo || v > hi) {
        core_log_warn_once("%s=%s is not an integer in [%ld, %ld]; using %ld", name, text, lo, hi, fallback);
        return fallback;
    }
    return v;
}

static unsigned parse_coll_list(const char *text)
{
    unsigned bits = 0;
    char buf[512];
    if (!text)
        return 0;
    strncpy(buf, text, sizeof buf - 1);
    buf[sizeof buf - 1] = 0;
    for (char *save, *tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
        if (!strcmp(tok, "all")) {
            bits = (1u << CORE_COLL_COUNT) - 1;
            continue;
        }
        int c = core_coll_from_name(tok);
        if (c < 0)
            core_log_warn_once("SHOAL_DISABLE_COLL: '%s' is not a collective shoal handles; ignored", tok);
        else
            bits |= 1u << c;
    }
    return bits;
}

static core_config config;
static pthread_once_t config_once = PTHREAD_ONCE_INIT;
static _Atomic unsigned generation;

unsigned core_config_generation(void) { return atomic_load_explicit(&generation, memory_order_acquire); }

void core_config_reload(void)
{
    core_config c = {0};
    c.verbose = (int)parse_long("SHOAL_VERBOSE", getenv("SHOAL_VERBOSE"), 0, 0, 9);
    core_log_set_verbosity(c.verbose);
    c.disabled = parse_bool("SHOAL_DISABLE", getenv("SHOAL_DISABLE"), false);
    c.disabled_colls = parse_coll_list(getenv("SHOAL_DISABLE_COLL"));

    const char *shm = getenv("SHOAL_SHM_SIZE");
    if (shm && *shm && !core_parse_size(shm, &c.shm_size)) {
        core_log_warn_once("SHOAL_SHM_SIZE=%s is not a size (like 64M); using the automatic size", shm);
        c.shm_size = 0;
    }

    const char *cma = getenv("SHOAL_CMA");
    c.cma = CORE_CMA_AUTO;
    if (cma && *cma) {
        if (!strcmp(cma, "off") || !strcmp(cma, "0"))
            c.cma = CORE_CMA_OFF;
        else if (strcmp(cma, "auto") && strcmp(cma, "1") && strcmp(cma, "on"))
            core_log_warn_once("SHOAL_CMA=%s is not auto or off; using auto", cma);
    }

    c.spin = parse_long("SHOAL_SPIN", getenv("SHOAL_SPIN"), -1, -1, 1L << 30);
    c.comm_warmup = parse_long("SHOAL_COMM_WARMUP", getenv("SHOAL_COMM_WARMUP"), CORE_COMM_WARMUP_DEFAULT, 0, 1L << 30);

    const char *timeout = getenv("SHOAL_TIMEOUT");
    c.timeout_s = 0;
    if (timeout && *timeout) {
        char *end;
        double v = strtod(timeout, &end);
        if (*end || v < 0)
            core_log_warn_once("SHOAL_TIMEOUT=%s is not a number of seconds; waiting without limit", timeout);
        else
            c.timeout_s = v;
    }

    const char *lanes = getenv("SHOAL_LANES");
    if (lanes)
        strncpy(c.lanes, lanes, sizeof c.lanes - 1);
    const char *algo = getenv("SHOAL_ALGO");
    if (algo)
        strncpy(c.algo, algo, sizeof c.algo - 1);
    c.probe = parse_bool("SHOAL_PROBE", getenv("SHOAL_PROBE"), true);
    c.fingerprint = core_config_fingerprint(&c);
    config = c;
    atomic_fetch_add(&generation, 1);
}

static void config_init(void) { core_config_reload(); }

uint64_t core_config_fingerprint(const core_config *c)
{
    char text[512];
    snprintf(text, sizeof text, "%d|%u|%ld|%s|%s|%d", c->disabled, c->disabled_colls, c->comm_warmup, c->lanes, c->algo,
             c->probe);
    return core_hash(CORE_HASH_START, text, strlen(text));
}

const core_config *core_config_get(void)
{
    pthread_once(&config_once, config_init);
    return &config;
}
