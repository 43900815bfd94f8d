/* core_nodelist: the node-list file, one physical node per logical rank:
 * the mapping `shoal-sim map` writes, which shoal-sim reads back and the
 * library follows across nodes (SHOAL_ALLTOALL_MAP), and shoal-sim's
 * permutations. Line i holds the node of logical rank i; '#' starts a
 * comment, blank lines are skipped; the n entries must be a permutation of
 * 0..n-1.
 *
 * May call: libc. */
#ifndef SHOAL_CORE_NODELIST_H
#define SHOAL_CORE_NODELIST_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    CORE_NODELIST_OK,
    CORE_NODELIST_UNREADABLE,
    CORE_NODELIST_INVALID,
    CORE_NODELIST_WRONG_COUNT, /* valid entries, but not n of them */
    CORE_NODELIST_NOMEM
} core_nodelist_status;

/* Reads n entries of the file at path into out. Anything else than OK
 * leaves a message in why naming the file, the line and `what` the file
 * is ("mapping", "permutation"). */
core_nodelist_status core_nodelist_read(const char *path, int n, int32_t *out, const char *what, char *why,
                                        size_t whylen);

#endif
