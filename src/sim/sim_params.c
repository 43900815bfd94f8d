#include "sim_params.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define OFF(field) offsetof(sim_params, field)
#define BIG INT64_C(1000000000000000)

/* One row per parameter. The docs (docs/SIM.md) and `shoal-sim params` are
 * generated from these strings, so they are the single source of truth. */
static const sim_param_desc table[] = {
    /* network */
    {"topo", SIM_PT_STR, OFF(topo), "torus:8x8", 0, 0, NULL, "",
     "network: torus:AxBx..., mesh:AxBx..., ring:K, torus:K^n, fattree:k,n (k-ary n-tree)"},
    {"tie", SIM_PT_ENUM, OFF(tie), "parity", 0, 0, "parity|positive|node", "",
     "direction at distance exactly K/2 on a ring: parity = by the parity of the coordinate where the "
     "packet starts moving in that dimension (even +, odd -); positive = always +; node = by the "
     "parity of the source node number"},
    {"dateline", SIM_PT_BOOL, OFF(dateline), "on", 0, 0, NULL, "",
     "tori: split the VCs into two classes, switching class on the wrap link, so rings cannot deadlock"},
    {"updown", SIM_PT_ENUM, OFF(updown), "dmodk", 0, 0, "dmodk|smodk", "",
     "fat trees: up port chosen by a digit of the destination (dmodk) or of the source (smodk)"},
    /* links and packets */
    {"flit_size", SIM_PT_SIZE, OFF(flit_size), "8", 1, 65536, NULL, "bytes", "bytes per flit"},
    {"packet_flits", SIM_PT_INT, OFF(packet_flits), "64", 1, 1 << 20, NULL, "flits",
     "flits per packet (messages are cut into packets of this size, the last may be short)"},
    {"link_width", SIM_PT_SIZE, OFF(link_width), "8", 1, 65536, NULL, "bytes/cycle",
     "bytes a link carries per cycle; must be a multiple or a divisor of flit_size"},
    {"link_latency", SIM_PT_INT, OFF(link_latency), "1", 1, 1 << 20, NULL, "cycles",
     "cycles a flit spends on a router-to-router link"},
    {"inject_latency", SIM_PT_INT, OFF(inject_latency), "1", 1, 1 << 20, NULL, "cycles",
     "cycles on the link from a node's injection queue to its router"},
    {"eject_latency", SIM_PT_INT, OFF(eject_latency), "1", 1, 1 << 20, NULL, "cycles",
     "cycles on the link from the last router to the node's ejection queue"},
    {"credit_latency", SIM_PT_INT, OFF(credit_latency), "1", 1, 1 << 20, NULL, "cycles",
     "cycles a credit takes to travel back upstream"},
    /* router */
    {"router_stages", SIM_PT_INT, OFF(router_stages), "4", 1, 1 << 16, NULL, "cycles",
     "router pipeline depth: cycles from a flit entering an input buffer to it leaving the output "
     "buffer onto the link, at zero load (route, VC allocation, switch allocation, traversal)"},
    {"vcs", SIM_PT_INT, OFF(vcs), "8", 1, 32, NULL, "", "virtual channels per input port"},
    {"vc_depth", SIM_PT_INT, OFF(vc_depth), "32", 1, 65535, NULL, "flits", "input buffer per virtual channel"},
    {"out_depth", SIM_PT_INT, OFF(out_depth), "4", 1, 1 << 20, NULL, "flits",
     "output buffer per output port (between crossbar and link)"},
    {"flow_control", SIM_PT_ENUM, OFF(flow_control), "wormhole", 0, 0, "wormhole|vct", "",
     "wormhole: a head needs a free VC downstream; vct (virtual cut-through): it also needs room for "
     "the whole packet"},
    /* traffic and run */
    {"msg", SIM_PT_SIZE, OFF(msg), "32K", 1, BIG, NULL, "bytes",
     "bytes each rank sends to each other rank (all-to-all) or per message (stride, perm)"},
    {"barrier", SIM_PT_BOOL, OFF(barrier), "on", 0, 0, NULL, "",
     "all-to-all: a barrier between phases (phases run independently, in parallel) or none (one run)"},
    {"barrier_latency", SIM_PT_INT, OFF(barrier_latency), "0", 0, BIG, NULL, "cycles",
     "cycles added per barrier between two phases"},
    {"phases", SIM_PT_STR, OFF(phases), "all", 0, 0, NULL, "",
     "all-to-all phases to simulate at flit level: all, or a list like 1-7,9,every:8 (every 8th)"},
    {"threads", SIM_PT_INT, OFF(threads), "1", 1, 1024, NULL, "",
     "worker threads for independent phases, load points and mapper evaluations"},
    {"seed", SIM_PT_INT, OFF(seed), "1", 0, INT64_MAX, NULL, "",
     "seed of every random choice (random traffic, mapper)"},
    {"deadlock_window", SIM_PT_INT, OFF(deadlock_window), "10000", 1, BIG, NULL, "cycles",
     "stop and report a deadlock when no flit has moved for this many cycles"},
    {"max_cycles", SIM_PT_INT, OFF(max_cycles), "1000000000", 1, 2000000000, NULL, "cycles",
     "stop any single simulation that runs longer (at most 2e9: cycle stamps are 32-bit)"},
    /* uniform random traffic */
    {"loads", SIM_PT_STR, OFF(loads), "0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9", 0, 0, NULL, "flits/cycle/node",
     "offered loads of the random command: a list, or FIRST:LAST:STEP"},
    {"warmup", SIM_PT_INT, OFF(warmup), "2000", 0, BIG, NULL, "cycles",
     "random traffic: cycles before packets are measured"},
    {"measure", SIM_PT_INT, OFF(measure), "10000", 1, BIG, NULL, "cycles",
     "random traffic: cycles during which created packets are measured"},
    {"drain", SIM_PT_INT, OFF(drain), "100000", 0, BIG, NULL, "cycles",
     "random traffic: longest wait for measured packets after the window; beyond it the point is "
     "reported saturated"},
    /* mapper */
    {"map_iters", SIM_PT_INT, OFF(map_iters), "100000", 0, BIG, NULL, "moves",
     "mapper: simulated-annealing swap moves per chain"},
    {"map_t0", SIM_PT_REAL, OFF(map_t0), "0.5", 0, 0, NULL, "",
     "mapper: start temperature (in units of one phase's max link weight)"},
    {"map_t1", SIM_PT_REAL, OFF(map_t1), "0.01", 0, 0, NULL, "", "mapper: final temperature"},
    {"map_greedy", SIM_PT_BOOL, OFF(map_greedy), "on", 0, 0, NULL, "",
     "mapper: also build a greedy start and anneal from the better of it and the given mapping"},
    {"map_chains", SIM_PT_INT, OFF(map_chains), "4", 1, 1024, NULL, "",
     "mapper: independent annealing chains (seeds seed, seed+1*c, ...), run on the threads; the best wins"},
    {"map_near", SIM_PT_REAL, OFF(map_near), "1", 0, 0, NULL, "",
     "mapper: share of moves that swap the ranks of two neighbouring nodes (tori and meshes; the rest swap "
     "two random ranks)"},
    {NULL, SIM_PT_INT, 0, NULL, 0, 0, NULL, NULL, NULL},
};

const sim_param_desc *sim_param_table(void) { return table; }

static const sim_param_desc *find(const char *key)
{
    for (const sim_param_desc *d = table; d->name; d++)
        if (strcmp(d->name, key) == 0)
            return d;
    return NULL;
}

void sim_params_default(sim_params *p)
{
    memset(p, 0, sizeof *p);
    for (const sim_param_desc *d = table; d->name; d++) {
        sim_err err;
        if (sim_param_set(p, d->name, d->def, &err) != 0)
            abort(); /* a bad default is a bug */
    }
}

int sim_parse_size(const char *text, int64_t *bytes)
{
    while (isspace((unsigned char)*text))
        text++;
    if (!isdigit((unsigned char)*text))
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno)
        return -1;
    int64_t mult = 1;
    if (*end == 'k' || *end == 'K')
        mult = INT64_C(1) << 10, end++;
    else if (*end == 'm' || *end == 'M')
        mult = INT64_C(1) << 20, end++;
    else if (*end == 'g' || *end == 'G')
        mult = INT64_C(1) << 30, end++;
    if (mult > 1 && (*end == 'i' || *end == 'I'))
        end++;
    if (*end == 'b' || *end == 'B')
        end++;
    while (isspace((unsigned char)*end))
        end++;
    if (*end)
        return -1;
    if (v > (unsigned long long)(INT64_MAX / mult))
        return -1;
    *bytes = (int64_t)v * mult;
    return 0;
}

static int parse_int(const char *text, int64_t *out)
{
    while (isspace((unsigned char)*text))
        text++;
    if (!*text)
        return -1;
    errno = 0;
    char *end;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text)
        return -1;
    /* accept 1e6 style for big counts */
    if (*end == 'e' || *end == 'E') {
        char *e2;
        long ex = strtol(end + 1, &e2, 10);
        if (e2 == end + 1 || ex < 0 || ex > 18)
            return -1;
        for (long i = 0; i < ex; i++) {
            if (v > INT64_MAX / 10 || v < INT64_MIN / 10)
                return -1;
            v *= 10;
        }
        end = e2;
    }
    while (isspace((unsigned char)*end))
        end++;
    if (*end)
        return -1;
    *out = v;
    return 0;
}

int sim_param_set(sim_params *p, const char *key, const char *value, sim_err *err)
{
    const sim_param_desc *d = find(key);
    if (!d)
        return sim_fail(err, SIM_EINVAL, "unknown field '%s' (`shoal-sim params` lists them all)", key);
    char *base = (char *)p;
    switch (d->type) {
    case SIM_PT_INT:
    case SIM_PT_SIZE: {
        int64_t v;
        int bad = d->type == SIM_PT_SIZE ? sim_parse_size(value, &v) : parse_int(value, &v);
        if (bad)
            return sim_fail(err, SIM_EINVAL, "field '%s': expected %s, got '%s'", key,
                            d->type == SIM_PT_SIZE ? "a size like 512, 32K or 1M" : "an integer", value);
        if (v < d->min || v > d->max)
            return sim_fail(err, SIM_EINVAL, "field '%s': %" PRId64 " is outside [%" PRId64 ", %" PRId64 "]%s%s", key,
                            v, d->min, d->max, d->unit[0] ? " " : "", d->unit);
        *(int64_t *)(base + d->offset) = v;
        return 0;
    }
    case SIM_PT_BOOL: {
        int64_t v;
        if (!strcmp(value, "on") || !strcmp(value, "1") || !strcmp(value, "yes") || !strcmp(value, "true"))
            v = 1;
        else if (!strcmp(value, "off") || !strcmp(value, "0") || !strcmp(value, "no") || !strcmp(value, "false"))
            v = 0;
        else
            return sim_fail(err, SIM_EINVAL, "field '%s': expected on or off, got '%s'", key, value);
        *(int64_t *)(base + d->offset) = v;
        return 0;
    }
    case SIM_PT_ENUM: {
        const char *c = d->choices;
        size_t n = strlen(value);
        for (int64_t idx = 0; *c; idx++) {
            const char *bar = strchr(c, '|');
            size_t len = bar ? (size_t)(bar - c) : strlen(c);
            if (len == n && strncmp(c, value, n) == 0) {
                *(int64_t *)(base + d->offset) = idx;
                return 0;
            }
            c += len + (bar ? 1 : 0);
        }
        return sim_fail(err, SIM_EINVAL, "field '%s': '%s' is not one of %s", key, value, d->choices);
    }
    case SIM_PT_STR: {
        if (strlen(value) >= SIM_STR_LEN)
            return sim_fail(err, SIM_EINVAL, "field '%s': value longer than %d characters", key, SIM_STR_LEN - 1);
        snprintf(base + d->offset, SIM_STR_LEN, "%s", value);
        return 0;
    }
    case SIM_PT_REAL: {
        char *end;
        errno = 0;
        double v = strtod(value, &end);
        while (isspace((unsigned char)*end))
            end++;
        if (errno || end == value || *end || !(v >= 0))
            return sim_fail(err, SIM_EINVAL, "field '%s': expected a non-negative number, got '%s'", key, value);
        *(double *)(base + d->offset) = v;
        return 0;
    }
    }
    return sim_fail(err, SIM_EINVAL, "field '%s': internal type error", key);
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = 0;
    return s;
}

int sim_param_set_kv(sim_params *p, const char *kv, sim_err *err)
{
    char buf[2 * SIM_STR_LEN];
    if (strlen(kv) >= sizeof buf)
        return sim_fail(err, SIM_EINVAL, "setting '%.40s...' is too long", kv);
    strcpy(buf, kv);
    char *eq = strchr(buf, '=');
    if (!eq)
        return sim_fail(err, SIM_EINVAL, "setting '%s': expected key=value", kv);
    *eq = 0;
    return sim_param_set(p, trim(buf), trim(eq + 1), err);
}

int sim_params_load(sim_params *p, const char *path, sim_err *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return sim_fail(err, SIM_EIO, "config file '%s': cannot open it", path);
    char line[4 * SIM_STR_LEN];
    int lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            fclose(f);
            return sim_fail(err, SIM_EINVAL, "config file '%s' line %d: line too long", path, lineno);
        }
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        char *s = trim(line);
        if (!*s)
            continue;
        char *eq = strchr(s, '=');
        if (!eq) {
            fclose(f);
            return sim_fail(err, SIM_EINVAL, "config file '%s' line %d: expected 'key = value', got '%s'", path, lineno,
                            s);
        }
        *eq = 0;
        sim_err inner;
        if (sim_param_set(p, trim(s), trim(eq + 1), &inner) != 0) {
            fclose(f);
            return sim_fail(err, SIM_EINVAL, "config file '%s' line %d: %s", path, lineno, inner.msg);
        }
    }
    fclose(f);
    return 0;
}

void sim_param_format(const sim_params *p, const sim_param_desc *d, char *buf, size_t len)
{
    const char *base = (const char *)p;
    switch (d->type) {
    case SIM_PT_INT:
    case SIM_PT_SIZE: snprintf(buf, len, "%" PRId64, *(const int64_t *)(base + d->offset)); break;
    case SIM_PT_BOOL: snprintf(buf, len, "%s", *(const int64_t *)(base + d->offset) ? "on" : "off"); break;
    case SIM_PT_ENUM: {
        int64_t idx = *(const int64_t *)(base + d->offset);
        const char *c = d->choices;
        for (int64_t i = 0; i < idx && strchr(c, '|'); i++)
            c = strchr(c, '|') + 1;
        const char *bar = strchr(c, '|');
        int n = bar ? (int)(bar - c) : (int)strlen(c);
        snprintf(buf, len, "%.*s", n, c);
        break;
    }
    case SIM_PT_STR: snprintf(buf, len, "%s", base + d->offset); break;
    case SIM_PT_REAL: snprintf(buf, len, "%g", *(const double *)(base + d->offset)); break;
    }
}

void sim_params_write(const sim_params *p, FILE *out)
{
    char buf[SIM_STR_LEN + 32];
    for (const sim_param_desc *d = table; d->name; d++) {
        sim_param_format(p, d, buf, sizeof buf);
        fprintf(out, "%-16s = %s\n", d->name, buf);
    }
}

int64_t sim_msg_flits(const sim_params *p, int64_t msg_bytes) { return (msg_bytes + p->flit_size - 1) / p->flit_size; }
