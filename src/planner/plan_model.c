#include "plan_model.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void plan_model_defaults(plan_model *m)
{
    memset(m, 0, sizeof *m);
    for (int l = 0; l < LANE_COUNT; l++)
        m->lane[l] = lane_describe((lane_id)l)->default_cost;
    m->sync_ns = 150;
    m->sync_per_peer_ns = 40;
    m->oversub_step_ns = 1000; /* about a scheduler hand-over on Linux */
    m->copy_bw = 10;
    m->copy_mem_bw = 10; /* one rate: the built-in figures price every copy alike */
    m->cache_bytes = (double)plan_core_cache_bytes();
    m->reduce_bw = 8;
    /* A cluster's usual link (100 Gb/s InfiniBand or RoCE through the MPI):
     * a guess until `shoal tune` runs across nodes. */
    m->link_latency_ns = 3000;
    m->link_bw = 10;
    snprintf(m->source, sizeof m->source, "built-in defaults");
}

uint64_t plan_model_fingerprint(const plan_model *m)
{
    uint64_t h = core_hash(CORE_HASH_START, m->lane, sizeof m->lane);
    h = core_hash(h, m->lane_written, sizeof m->lane_written);
    const double figures[] = {m->sync_ns,     m->sync_per_peer_ns, m->oversub_step_ns, m->copy_bw, m->copy_mem_bw,
                              m->cache_bytes, m->reduce_bw,        m->link_latency_ns, m->link_bw};
    h = core_hash(h, figures, sizeof figures);
    for (int i = 0; i < m->nfactors; i++) {
        h = core_hash(h, m->factors[i].key, strlen(m->factors[i].key) + 1);
        h = core_hash(h, &m->factors[i].factor, sizeof m->factors[i].factor);
    }
    h = core_hash(h, m->host, (size_t)m->nhost * sizeof m->host[0]);
    return h;
}

double plan_lane_time(const lane_cost *c, double bytes, int ppn)
{
    if (ppn < 1)
        ppn = 1;
    double bw = c->bw_dedicated + c->bw_shared / ppn;
    return c->latency_ns + c->overhead_ns + bytes * c->per_byte_ns + (bw > 0 ? bytes / bw : 0);
}

double plan_lane_rate(const lane_cost *c, int ppn)
{
    double mib = (double)(1 << 20), t = plan_lane_time(c, mib, ppn);
    return t > 0 ? mib / t : 0;
}

bool plan_lane_implausible(const lane_cost *measured, const lane_cost *builtin, double copy_mem_bw)
{
    double rate = plan_lane_rate(measured, 2);
    return rate < PLAN_PLAUSIBLE_SHARE_OF_COPY * copy_mem_bw && plan_lane_rate(builtin, 2) > rate;
}

bool plan_lane_steady(double best_rate, double low_rate)
{
    return low_rate > 0 && best_rate >= low_rate && best_rate <= PLAN_STEADY_SPREAD * low_rate;
}

static bool rate_implausible(double measured, double builtin)
{
    return !(measured >= builtin / PLAN_PLAUSIBLE_CORE_SPREAD && measured <= builtin * 10 * PLAN_PLAUSIBLE_CORE_SPREAD);
}

bool plan_core_rates_implausible(const plan_model *measured, const plan_model *builtin)
{
    return rate_implausible(measured->copy_bw, builtin->copy_bw) ||
           rate_implausible(measured->copy_mem_bw, builtin->copy_mem_bw) ||
           rate_implausible(measured->reduce_bw, builtin->reduce_bw);
}

double plan_copy_ns(const plan_model *m, double bytes, double footprint)
{
    double cached = footprint > m->cache_bytes ? m->cache_bytes / footprint : 1;
    return bytes * (cached / m->copy_bw + (1 - cached) / m->copy_mem_bw);
}

/* The size file of one sysfs cache index ("1024K"), in bytes; 0 if none. */
static size_t sysfs_cache_size(int index, int *level)
{
    char path[96], text[32];
    size_t bytes = 0;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", index);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    *level = fgets(text, sizeof text, f) ? atoi(text) : 0;
    fclose(f);
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", index);
    if ((f = fopen(path, "r"))) {
        char *end;
        if (fgets(text, sizeof text, f)) {
            bytes = strtoul(text, &end, 10);
            if (*end == 'K')
                bytes <<= 10;
            else if (*end == 'M')
                bytes <<= 20;
        }
        fclose(f);
    }
    return bytes;
}

size_t plan_core_cache_bytes(void)
{
    static _Atomic size_t cached; /* the same answer whoever asks first */
    if (cached)
        return cached;
    size_t l2 = 0, largest = 0;
    for (int i = 0; i < 8; i++) {
        int level = 0;
        size_t bytes = sysfs_cache_size(i, &level);
        if (level == 2 && bytes > l2)
            l2 = bytes;
        if (bytes > largest)
            largest = bytes;
    }
    cached = l2 ? l2 : largest ? largest : (size_t)1 << 20;
    return cached;
}

double plan_cpu_share(int movers, int cores) { return cores > 0 && movers > cores ? (double)movers / cores : 1; }

double plan_oversub_ns(const plan_model *m, int ppn, int cores)
{
    return cores > 0 && ppn > cores ? m->oversub_step_ns * ppn / cores : 0;
}

/* Index of key in the sorted factors, or where it would go (negated - 1). */
static int factor_index(const plan_model *m, const char *key)
{
    int lo = 0, hi = m->nfactors - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2, c = strcmp(m->factors[mid].key, key);
        if (c == 0)
            return mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -lo - 1;
}

bool plan_model_find_factor(const plan_model *m, const char *key, double *factor)
{
    int i = factor_index(m, key);
    if (i < 0)
        return false;
    *factor = m->factors[i].factor;
    return true;
}

double plan_model_factor(const plan_model *m, const char *key)
{
    double f = 1.0;
    plan_model_find_factor(m, key, &f);
    return f;
}

void plan_model_set_factor(plan_model *m, const char *key, double factor)
{
    int i = factor_index(m, key);
    if (i >= 0) {
        m->factors[i].factor = factor;
        return;
    }
    if (m->nfactors >= PLAN_MAX_FACTORS || strlen(key) >= sizeof m->factors[0].key)
        return;
    i = -i - 1;
    memmove(&m->factors[i + 1], &m->factors[i], (size_t)(m->nfactors - i) * sizeof m->factors[0]);
    snprintf(m->factors[i].key, sizeof m->factors[i].key, "%s", key);
    m->factors[i].factor = factor;
    m->nfactors++;
}

/* The entry of c at (size_b, team_b), made empty if there is none; NULL
 * when the table is full. */
static plan_host_time *host_entry(plan_model *m, core_coll c, int size_b, int team_b)
{
    for (int i = 0; i < m->nhost; i++)
        if (m->host[i].coll == (int)c && m->host[i].size_b == size_b && m->host[i].team_b == team_b)
            return &m->host[i];
    if (m->nhost >= PLAN_MAX_HOST_TIMES)
        return NULL;
    m->host[m->nhost] = (plan_host_time){.coll = (int)c, .size_b = size_b, .team_b = team_b};
    return &m->host[m->nhost++];
}

void plan_model_set_host_ns(plan_model *m, core_coll c, int size_b, int team_b, double ns)
{
    plan_host_time *t = host_entry(m, c, size_b, team_b);
    if (t)
        t->ns = ns;
}

void plan_model_set_repeat_ns(plan_model *m, core_coll c, int size_b, int team_b, double host_ns, double shoal_ns)
{
    plan_host_time *t = host_entry(m, c, size_b, team_b);
    if (t && host_ns > 0)
        t->repeat_ns = host_ns;
    if (t && shoal_ns > 0)
        t->shoal_repeat_ns = shoal_ns;
}

void plan_host_key(char *buf, size_t len, const plan_host_time *t)
{
    snprintf(buf, len, "%s/b%d/n%d", core_coll_name((core_coll)t->coll), t->size_b, t->team_b);
}

/* "bcast/b17/n2" into host; false if it is not such a key. */
static bool parse_host_key(const char *key, plan_host_time *t)
{
    const char *slash = strchr(key, '/');
    char name[64];
    if (!slash || slash - key >= (ptrdiff_t)sizeof name)
        return false;
    memcpy(name, key, (size_t)(slash - key));
    name[slash - key] = 0;
    int c = core_coll_from_name(name), n = 0;
    return c >= 0 && sscanf(slash, "/b%d/n%d%n", &t->size_b, &t->team_b, &n) == 2 && slash[n] == 0 && t->size_b >= 0 &&
           t->team_b >= 1 && (t->coll = c, true);
}

void plan_machine_description(char *buf, size_t len)
{
    char model[200] = "unknown cpu";
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[512];
        while (fgets(line, sizeof line, f))
            if (!strncmp(line, "model name", 10)) {
                const char *colon = strchr(line, ':');
                if (colon) {
                    snprintf(model, sizeof model, "%s", colon + 2);
                    model[strcspn(model, "\n")] = 0;
                }
                break;
            }
        fclose(f);
    }
    for (char *c = model; *c; c++)
        if (*c == '"' || *c == '\\' || (unsigned char)*c < 0x20)
            *c = ' '; /* the description goes into JSON */
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    snprintf(buf, len, "%s, %ld cores", model, online);
}

void plan_tuning_path(char *buf, size_t len)
{
    const char *explicit = core_config_get()->tuning_file;
    if (*explicit) {
        snprintf(buf, len, "%s", explicit);
        return;
    }
    const char *cache = getenv("XDG_CACHE_HOME");
    if (cache && *cache) {
        snprintf(buf, len, "%s/shoal/tuning.json", cache);
        return;
    }
    const char *home = getenv("HOME");
    snprintf(buf, len, "%s/.cache/shoal/tuning.json", home && *home ? home : ".");
}

static bool positive(double v) { return v > 0 && v < 1e12; }

/* A lane's figures from its object in the file, each missing one as in
 * dflt; false when they are impossible. */
static bool read_lane(const core_json *c, const lane_cost *dflt, lane_cost *out)
{
    lane_cost v = {
        .latency_ns = core_json_number(c, "latency_ns", dflt->latency_ns),
        .overhead_ns = core_json_number(c, "overhead_ns", dflt->overhead_ns),
        .per_byte_ns = core_json_number(c, "per_byte_ns", dflt->per_byte_ns),
        .bw_dedicated = core_json_number(c, "bw_dedicated", dflt->bw_dedicated),
        .bw_shared = core_json_number(c, "bw_shared", dflt->bw_shared),
    };
    *out = v;
    return v.latency_ns >= 0 && v.overhead_ns >= 0 && v.per_byte_ns >= 0 && v.bw_dedicated >= 0 && v.bw_shared >= 0 &&
           positive(v.bw_dedicated + v.bw_shared);
}

/* What shoal tune --link timed ("link_timed"), into m: false where the
 * object is there but malformed (absent: nothing timed). Collectives this
 * shoal does not know are skipped. */
static bool read_link_timed(const core_json *t, plan_model *m)
{
    if (!t)
        return true;
    const char *layout = core_json_string(t, "layout");
    if (t->kind != CORE_JSON_OBJECT || !layout || !layout[0] || strlen(layout) >= sizeof m->link_layout ||
        strspn(layout, "0123456789,") != strlen(layout))
        return false;
    for (const core_json *f = t->child; f; f = f->next) {
        int c = core_coll_from_name(f->key);
        if (!strcmp(f->key, "layout") || c < 0)
            continue;
        if (f->kind != CORE_JSON_STRING || strlen(f->string) != PLAN_LINK_CLASSES ||
            strspn(f->string, "hs-") != PLAN_LINK_CLASSES)
            return false;
        memcpy(m->link_timed[c], f->string, PLAN_LINK_CLASSES + 1);
    }
    snprintf(m->link_layout, sizeof m->link_layout, "%s", layout);
    return true;
}

int plan_model_load(plan_model *m, const char *path, bool check_machine, char *why, size_t whylen)
{
    char err[200];
    plan_model_defaults(m);
    core_json *root = core_json_parse_file(path, err, sizeof err);
    if (!root) {
        snprintf(why, whylen, "%s", err);
        return -1;
    }
    int rc = -1;
    double version = core_json_number(root, "shoal_tuning", -1);
    const char *machine = core_json_string(root, "machine");
    char here[256];
    plan_machine_description(here, sizeof here);
    if (root->kind != CORE_JSON_OBJECT || version < 0) {
        snprintf(why, whylen, "not a shoal tuning file (no \"shoal_tuning\" version)");
    } else if ((int)version != PLAN_TUNING_VERSION) {
        snprintf(why, whylen, "written by tuning version %d, this shoal reads version %d: run shoal tune again",
                 (int)version, PLAN_TUNING_VERSION);
    } else if (check_machine && (!machine || strcmp(machine, here))) {
        snprintf(why, whylen, "measured on \"%s\", this is \"%s\": run shoal tune here", machine ? machine : "?", here);
    } else {
        rc = 0;
        const core_json *lanes = core_json_get(root, "lanes");
        for (int l = 0; l < LANE_COUNT && rc == 0; l++) {
            const core_json *c = core_json_get(lanes, lane_describe((lane_id)l)->name);
            if (!c)
                continue;
            const core_json *written = core_json_get(c, "written");
            if (!read_lane(c, &m->lane[l], &m->lane[l]) ||
                (written && !read_lane(written, &m->lane_written[l], &m->lane_written[l]))) {
                snprintf(why, whylen, "lane %s has impossible figures", lane_describe((lane_id)l)->name);
                rc = -1;
            }
            m->fit_error[l] = core_json_number(c, "fit_rel_error", 0);
        }
        m->sync_ns = core_json_number(root, "sync_ns", m->sync_ns);
        m->sync_per_peer_ns = core_json_number(root, "sync_per_peer_ns", m->sync_per_peer_ns);
        m->oversub_step_ns = core_json_number(root, "oversub_step_ns", m->oversub_step_ns);
        m->copy_bw = core_json_number(root, "copy_bw", m->copy_bw);
        m->copy_mem_bw = core_json_number(root, "copy_mem_bw", m->copy_bw);
        m->reduce_bw = core_json_number(root, "reduce_bw", m->reduce_bw);
        m->link_latency_ns = core_json_number(root, "link_latency_ns", m->link_latency_ns);
        m->link_bw = core_json_number(root, "link_bw", m->link_bw);
        m->link_bw_node = core_json_number(root, "link_bw_node", 0);
        if (rc == 0 && !read_link_timed(core_json_get(root, "link_timed"), m)) {
            snprintf(why, whylen, "\"link_timed\" is malformed");
            rc = -1;
        }
        if (rc == 0 && (!positive(m->sync_ns) || !positive(m->copy_bw) || !positive(m->copy_mem_bw) ||
                        !positive(m->reduce_bw) || !positive(m->link_bw) || m->link_latency_ns < 0 ||
                        m->link_bw_node < 0 || m->sync_per_peer_ns < 0 || m->oversub_step_ns < 0)) {
            snprintf(why, whylen, "machine figures are impossible");
            rc = -1;
        }
        const core_json *factors = core_json_get(root, "factors");
        for (const core_json *f = factors && factors->kind == CORE_JSON_OBJECT ? factors->child : NULL; f && rc == 0;
             f = f->next)
            if (f->kind == CORE_JSON_NUMBER && positive(f->number))
                plan_model_set_factor(m, f->key, f->number);
        /* Each object of host times by its key; a file written before the
         * repeat times existed has host_ns alone. */
        static const char *const host_fields[] = {"host_ns", "host_repeat_ns", "shoal_repeat_ns"};
        for (int h = 0; h < 3 && rc == 0; h++) {
            const core_json *host = core_json_get(root, host_fields[h]);
            for (const core_json *f = host && host->kind == CORE_JSON_OBJECT ? host->child : NULL; f; f = f->next) {
                plan_host_time t;
                if (f->kind != CORE_JSON_NUMBER || !positive(f->number) || !parse_host_key(f->key, &t))
                    continue;
                if (h == 0)
                    plan_model_set_host_ns(m, (core_coll)t.coll, t.size_b, t.team_b, f->number);
                else
                    plan_model_set_repeat_ns(m, (core_coll)t.coll, t.size_b, t.team_b, h == 1 ? f->number : 0,
                                             h == 2 ? f->number : 0);
            }
        }
        m->origin = PLAN_ORIGIN_FILE;
        snprintf(m->source, sizeof m->source, "%s", path);
        snprintf(m->machine, sizeof m->machine, "%s", machine ? machine : "");
    }
    core_json_free(root);
    if (rc)
        plan_model_defaults(m);
    return rc;
}

static int make_parent_dirs(const char *path)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s", path);
    for (char *p = dir + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(dir, 0755) != 0 && errno != EEXIST)
                return errno;
            *p = '/';
        }
    return 0;
}

/* ",\n  "link_timed": {...}": what shoal tune --link timed, if anything. */
static void write_link_timed(FILE *f, const plan_model *m)
{
    if (!m->link_layout[0])
        return;
    fprintf(f, ",\n  \"link_timed\": {\n    \"layout\": \"%s\"", m->link_layout);
    for (int c = 0; c < CORE_COLL_COUNT; c++)
        if (m->link_timed[c][0])
            fprintf(f, ",\n    \"%s\": \"%s\"", core_coll_name((core_coll)c), m->link_timed[c]);
    fprintf(f, "\n  }");
}

/* ",\n  "name": {...}": the host times of one field, those measured. */
static void write_host_times(FILE *f, const plan_model *m, const char *name, size_t field)
{
    fprintf(f, ",\n  \"%s\": {", name);
    int written = 0;
    for (int i = 0; i < m->nhost; i++) {
        double ns;
        memcpy(&ns, (const char *)&m->host[i] + field, sizeof ns);
        if (ns <= 0)
            continue;
        char key[64];
        plan_host_key(key, sizeof key, &m->host[i]);
        fprintf(f, "%s\n    \"%s\": %.1f", written++ ? "," : "", key, ns);
    }
    fprintf(f, "%s}", written ? "\n  " : "");
}

int plan_model_save(const plan_model *m, const char *path)
{
    int err = make_parent_dirs(path);
    if (err)
        return err;
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f)
        return errno;
    char machine[256], when[64];
    plan_machine_description(machine, sizeof machine);
    time_t now = time(NULL);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    fprintf(f, "{\n  \"shoal_tuning\": %d,\n  \"machine\": \"%s\",\n  \"measured\": \"%s\",\n", PLAN_TUNING_VERSION,
            machine, when);
    fprintf(f,
            "  \"sync_ns\": %.3f,\n  \"sync_per_peer_ns\": %.3f,\n  \"oversub_step_ns\": %.3f,\n  \"copy_bw\": %.4f,\n"
            "  \"copy_mem_bw\": %.4f,\n  \"reduce_bw\": %.4f,\n  \"link_latency_ns\": %.1f,\n  \"link_bw\": %.4f,\n"
            "  \"link_bw_node\": %.4f,\n",
            m->sync_ns, m->sync_per_peer_ns, m->oversub_step_ns, m->copy_bw, m->copy_mem_bw, m->reduce_bw,
            m->link_latency_ns, m->link_bw, m->link_bw_node);
    fprintf(f, "  \"lanes\": {\n");
    for (int l = 0; l < LANE_COUNT; l++) {
        const lane_cost *c = &m->lane[l], *w = &m->lane_written[l];
        fprintf(f,
                "    \"%s\": {\"latency_ns\": %.3f, \"overhead_ns\": %.3f, \"per_byte_ns\": %.6f, "
                "\"bw_dedicated\": %.4f, \"bw_shared\": %.4f, \"fit_rel_error\": %.4f",
                lane_describe((lane_id)l)->name, c->latency_ns, c->overhead_ns, c->per_byte_ns, c->bw_dedicated,
                c->bw_shared, m->fit_error[l]);
        if (plan_lane_measured(w))
            fprintf(f,
                    ",\n      \"written\": {\"latency_ns\": %.3f, \"overhead_ns\": %.3f, \"per_byte_ns\": %.6f, "
                    "\"bw_dedicated\": %.4f, \"bw_shared\": %.4f}",
                    w->latency_ns, w->overhead_ns, w->per_byte_ns, w->bw_dedicated, w->bw_shared);
        fprintf(f, "}%s\n", l + 1 < LANE_COUNT ? "," : "");
    }
    fprintf(f, "  },\n  \"factors\": {");
    for (int i = 0; i < m->nfactors; i++)
        fprintf(f, "%s\n    \"%s\": %.4f", i ? "," : "", m->factors[i].key, m->factors[i].factor);
    fprintf(f, "%s}", m->nfactors ? "\n  " : "");
    write_host_times(f, m, "host_ns", offsetof(plan_host_time, ns));
    write_host_times(f, m, "host_repeat_ns", offsetof(plan_host_time, repeat_ns));
    write_host_times(f, m, "shoal_repeat_ns", offsetof(plan_host_time, shoal_repeat_ns));
    write_link_timed(f, m);
    fprintf(f, "\n}\n");
    if (fclose(f) != 0) {
        err = errno;
        unlink(tmp);
        return err;
    }
    if (rename(tmp, path) != 0) {
        err = errno;
        unlink(tmp);
        return err;
    }
    return 0;
}

static plan_model current;
static _Atomic unsigned model_generation;

unsigned plan_model_generation(void) { return atomic_load_explicit(&model_generation, memory_order_acquire); }
static pthread_once_t model_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t model_lock = PTHREAD_MUTEX_INITIALIZER;

void plan_model_reload(void)
{
    pthread_mutex_lock(&model_lock);
    char path[512], why[512];
    plan_tuning_path(path, sizeof path);
    static plan_model m; /* too large for every thread's stack; under model_lock */
    if (access(path, F_OK) != 0) {
        plan_model_defaults(&m);
        core_log_once("no tuning file at %s (shoal tune writes one)", path);
    } else if (plan_model_load(&m, path, true, why, sizeof why) != 0) {
        core_log_warn_once("tuning file %s ignored: %s", path, why);
    } else {
        core_log_once("planner figures from %s", path);
    }
    current = m;
    current.fingerprint = plan_model_fingerprint(&current);
    atomic_fetch_add(&model_generation, 1);
    pthread_mutex_unlock(&model_lock);
}

static void model_init(void) { plan_model_reload(); }

void plan_model_use(const plan_model *m)
{
    pthread_once(&model_once, model_init);
    pthread_mutex_lock(&model_lock);
    current = *m;
    current.fingerprint = plan_model_fingerprint(&current);
    atomic_fetch_add(&model_generation, 1);
    pthread_mutex_unlock(&model_lock);
}

const plan_model *plan_model_get(void)
{
    /* Every collective asks: past the first, one load instead of a call. */
    if (!atomic_load_explicit(&model_generation, memory_order_acquire))
        pthread_once(&model_once, model_init);
    return &current;
}
