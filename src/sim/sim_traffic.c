#include "sim_traffic.h"

#include "core_nodelist.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sim_mapping_identity(int32_t *map, int n)
{
    for (int i = 0; i < n; i++)
        map[i] = i;
}

int sim_check_permutation(const int32_t *v, int n, const char *what, sim_err *err)
{
    int32_t *seen = malloc(sizeof(int32_t) * (size_t)(n ? n : 1));
    if (!seen)
        return sim_fail(err, SIM_ENOMEM, "out of memory checking the %s", what);
    for (int i = 0; i < n; i++)
        seen[i] = -1;
    for (int i = 0; i < n; i++) {
        if (v[i] < 0 || v[i] >= n) {
            free(seen);
            return sim_fail(err, SIM_EINVAL, "%s: entry %d is %d, outside 0..%d", what, i, v[i], n - 1);
        }
        if (seen[v[i]] >= 0) {
            int first = seen[v[i]];
            free(seen);
            return sim_fail(err, SIM_EINVAL, "%s: entries %d and %d both are %d, so it is not a permutation", what,
                            first, i, v[i]);
        }
        seen[v[i]] = i;
    }
    free(seen);
    return 0;
}

/* Mappings and permutations share core's node-list format. */
static int read_perm_file(const char *path, int n, int32_t *out, const char *what, sim_err *err)
{
    char why[512];
    switch (core_nodelist_read(path, n, out, what, why, sizeof why)) {
    case CORE_NODELIST_OK: return 0;
    case CORE_NODELIST_UNREADABLE: return sim_fail(err, SIM_EIO, "%s", why);
    case CORE_NODELIST_NOMEM: return sim_fail(err, SIM_ENOMEM, "%s", why);
    default: return sim_fail(err, SIM_EINVAL, "%s", why);
    }
}

int sim_mapping_read(const char *path, int n, int32_t *map, sim_err *err)
{
    return read_perm_file(path, n, map, "mapping", err);
}

int sim_perm_read(const char *path, int n, int32_t *dst, sim_err *err)
{
    return read_perm_file(path, n, dst, "permutation", err);
}

int sim_mapping_write(const char *path, const int32_t *map, int n, const char *header, sim_err *err)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return sim_fail(err, SIM_EIO, "mapping file '%s': cannot create it", path);
    if (header && *header) {
        const char *h = header;
        while (*h) {
            const char *nl = strchr(h, '\n');
            int len = nl ? (int)(nl - h) : (int)strlen(h);
            fprintf(f, "# %.*s\n", len, h);
            h += len + (nl ? 1 : 0);
        }
    }
    for (int i = 0; i < n; i++)
        fprintf(f, "%d\n", map[i]);
    if (fclose(f) != 0)
        return sim_fail(err, SIM_EIO, "mapping file '%s': write failed", path);
    return 0;
}

int sim_stride_pairs(const int32_t *map, int n, int stride, int32_t *src, int32_t *dst)
{
    int s = ((stride % n) + n) % n;
    if (s == 0)
        return 0;
    for (int k = 0; k < n; k++) {
        src[k] = map[k];
        dst[k] = map[(k + s) % n];
    }
    return n;
}

int sim_perm_pairs(const int32_t *map, const int32_t *perm, int n, int32_t *src, int32_t *dst)
{
    int m = 0;
    for (int k = 0; k < n; k++) {
        if (perm[k] == k)
            continue;
        src[m] = map[k];
        dst[m] = map[perm[k]];
        m++;
    }
    return m;
}

int sim_phase_list_parse(const char *spec, int nphases, uint8_t *selected, sim_err *err)
{
    memset(selected, 0, (size_t)nphases + 1);
    if (!strcmp(spec, "all")) {
        for (int i = 1; i <= nphases; i++)
            selected[i] = 1;
        return nphases;
    }
    if (!strcmp(spec, "none"))
        return 0;
    const char *s = spec;
    while (*s) {
        char *end;
        if (!strncmp(s, "every:", 6)) {
            long k = strtol(s + 6, &end, 10);
            if (end == s + 6 || k < 1)
                return sim_fail(err, SIM_EINVAL, "field 'phases': '%s': every:K needs K >= 1", spec);
            for (long i = 1; i <= nphases; i += k)
                selected[i] = 1;
        } else {
            long a = strtol(s, &end, 10), b;
            if (end == s)
                return sim_fail(err, SIM_EINVAL, "field 'phases': '%s': expected a phase number at '%s'", spec, s);
            b = a;
            if (*end == '-') {
                const char *t = end + 1;
                b = strtol(t, &end, 10);
                if (end == t)
                    return sim_fail(err, SIM_EINVAL, "field 'phases': '%s': range without an end", spec);
            }
            if (a < 1 || b > nphases || a > b)
                return sim_fail(err, SIM_EINVAL, "field 'phases': '%s': phases run from 1 to %d", spec, nphases);
            for (long i = a; i <= b; i++)
                selected[i] = 1;
        }
        s = end;
        if (*s == ',')
            s++;
        else if (*s)
            return sim_fail(err, SIM_EINVAL, "field 'phases': '%s': unexpected '%s'", spec, s);
    }
    int count = 0;
    for (int i = 1; i <= nphases; i++)
        count += selected[i];
    return count;
}

int sim_load_list_parse(const char *spec, double *loads, int max, sim_err *err)
{
    int n = 0;
    const char *colon = strchr(spec, ':');
    if (colon) {
        double a, b, st;
        if (sscanf(spec, "%lf:%lf:%lf", &a, &b, &st) != 3 || !(st > 0) || !(a > 0) || b < a)
            return sim_fail(err, SIM_EINVAL, "field 'loads': '%s': expected FIRST:LAST:STEP with 0 < FIRST <= LAST",
                            spec);
        for (double x = a; x <= b + 1e-9 && n < max; x = a + st * n)
            loads[n++] = x;
    } else {
        const char *s = spec;
        while (*s && n < max) {
            char *end;
            double v = strtod(s, &end);
            if (end == s || !(v > 0))
                return sim_fail(err, SIM_EINVAL, "field 'loads': '%s': expected positive numbers separated by commas",
                                spec);
            loads[n++] = v;
            s = end;
            if (*s == ',')
                s++;
            else if (*s)
                return sim_fail(err, SIM_EINVAL, "field 'loads': '%s': unexpected '%s'", spec, s);
        }
    }
    for (int i = 0; i < n; i++)
        if (loads[i] > 64)
            return sim_fail(err, SIM_EINVAL, "field 'loads': %g flits/cycle/node is not a sensible offered load",
                            loads[i]);
    if (n == 0)
        return sim_fail(err, SIM_EINVAL, "field 'loads': '%s' gives no load", spec);
    return n;
}
