#include "core_nodelist.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

core_nodelist_status core_nodelist_read(const char *path, int n, int32_t *out, const char *what, char *why,
                                        size_t whylen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(why, whylen, "%s file '%s': cannot open it", what, path);
        return CORE_NODELIST_UNREADABLE;
    }
    int32_t *owner = malloc(sizeof(int32_t) * (size_t)(n ? n : 1));
    if (!owner) {
        fclose(f);
        snprintf(why, whylen, "out of memory reading %s", path);
        return CORE_NODELIST_NOMEM;
    }
    for (int i = 0; i < n; i++)
        owner[i] = -1;
    char line[256];
    int lineno = 0, count = 0;
    core_nodelist_status rc = CORE_NODELIST_OK;
    while (rc == CORE_NODELIST_OK && fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        char *s = line;
        while (isspace((unsigned char)*s))
            s++;
        if (!*s)
            continue;
        char *end;
        errno = 0;
        long v = strtol(s, &end, 10);
        while (isspace((unsigned char)*end))
            end++;
        rc = CORE_NODELIST_INVALID;
        if (errno || end == s || *end)
            snprintf(why, whylen, "%s file '%s' line %d: '%s' is not a node number", what, path, lineno,
                     strtok(s, "\r\n"));
        else if (count >= n) {
            snprintf(why, whylen, "%s file '%s' line %d: more than %d entries (the topology has %d nodes)", what, path,
                     lineno, n, n);
            rc = CORE_NODELIST_WRONG_COUNT;
        } else if (v < 0 || v >= n)
            snprintf(why, whylen, "%s file '%s' line %d: node %ld is outside 0..%d", what, path, lineno, v, n - 1);
        else if (owner[v] >= 0)
            snprintf(why, whylen,
                     "%s file '%s' line %d: node %ld is already used by logical rank %d, so it is not a permutation",
                     what, path, lineno, v, owner[v]);
        else
            rc = CORE_NODELIST_OK;
        if (rc == CORE_NODELIST_OK) {
            owner[v] = count;
            out[count++] = (int32_t)v;
        }
    }
    if (rc == CORE_NODELIST_OK && count != n) {
        snprintf(why, whylen, "%s file '%s': %d entries, but the topology has %d nodes", what, path, count, n);
        rc = CORE_NODELIST_WRONG_COUNT;
    }
    free(owner);
    fclose(f);
    return rc;
}
