/* shmem_env: the environment variables the OpenSHMEM specification names
 * (SHMEM_SYMMETRIC_SIZE, SHMEM_VERSION, SHMEM_INFO, SHMEM_DEBUG), read as
 * other implementations read them, and what PE 0 prints for them at
 * start-up.
 * Calls: core. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_log.h"
#include "shmem.h"
#include "shmem_internal.h"
#include "shoal.h"

/* The heap's size where SHMEM_SYMMETRIC_SIZE is not set (Sandia OpenSHMEM
 * and Open MPI's oshmem also reserve hundreds of MiB by default). */
#define DEFAULT_HEAP_SIZE ((size_t)128 << 20)

/* A variable whose value is "any": set, and not empty, 0, no or false. */
static bool env_on(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") && strcasecmp(v, "no") && strcasecmp(v, "false");
}

/* "512M", "1.5G", "2gb", "1048576": a non-negative number, integer or
 * floating point, with an optional K, M, G or T (either case, a B after
 * it allowed), as the specification describes SHMEM_SYMMETRIC_SIZE. */
bool osh_parse_size(const char *text, size_t *out)
{
    if (!text || !(isdigit((unsigned char)*text) || *text == '.'))
        return false;
    char *end;
    double v = strtod(text, &end);
    double mul = 1;
    switch (toupper((unsigned char)*end)) {
    case 'K': mul = 0x1p10; break;
    case 'M': mul = 0x1p20; break;
    case 'G': mul = 0x1p30; break;
    case 'T': mul = 0x1p40; break;
    default: mul = 0;
    }
    if (mul > 0)
        end++;
    else
        mul = 1;
    if (toupper((unsigned char)*end) == 'B')
        end++;
    v *= mul;
    if (*end || !isfinite(v) || v < 0 || v >= 0x1p63)
        return false;
    *out = (size_t)ceil(v);
    return true;
}

size_t osh_env_heap_size(void)
{
    const char *names[] = {"SHMEM_SYMMETRIC_SIZE", "SMA_SYMMETRIC_SIZE"};
    for (int i = 0; i < 2; i++) {
        const char *text = getenv(names[i]);
        if (!text || !*text)
            continue;
        size_t size;
        if (osh_parse_size(text, &size) && size > 0)
            return size;
        osh_fail("shmem_init", "%s=\"%s\" is not a size (such as 512M, 1.5G or 2GB)", names[i], text);
    }
    return DEFAULT_HEAP_SIZE;
}

void osh_env_debug(void)
{
    /* SHMEM_DEBUG: shoal's start-up and fallback messages, as SHOAL_VERBOSE=1 */
    if (env_on("SHMEM_DEBUG") && core_log_verbosity() < 1)
        core_log_set_verbosity(1);
}

void osh_env_announce(int my_pe, size_t heap_bytes)
{
    if (my_pe != 0)
        return;
    if (env_on("SHMEM_VERSION") || env_on("SHMEM_INFO"))
        printf("shoal %s, OpenSHMEM %d.%d\n", shoal_version(), SHMEM_MAJOR_VERSION, SHMEM_MINOR_VERSION);
    if (env_on("SHMEM_INFO")) {
        printf("OpenSHMEM environment variables read by shoal:\n"
               "  SHMEM_SYMMETRIC_SIZE  bytes of each PE's symmetric heap: a number, integer or floating point,\n"
               "                        with an optional K, M, G or T (now %zu; SMA_SYMMETRIC_SIZE too)\n"
               "  SHMEM_VERSION         any value: print the library's version at start-up\n"
               "  SHMEM_INFO            any value: print this text at start-up\n"
               "  SHMEM_DEBUG           any value: print shoal's start-up and fallback messages (as SHOAL_VERBOSE=1)\n"
               "shoal's own settings (SHOAL_*): shoal settings, or README.md\n",
               heap_bytes);
    }
    fflush(stdout);
}
