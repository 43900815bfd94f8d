/* sim_common: error reporting and small helpers shared by every part of the
 * network simulator (src/sim).
 * Owns: sim_err (a message buffer every fallible call fills), sim_fail().
 * May call: libc only. */
#ifndef SIM_COMMON_H
#define SIM_COMMON_H

#include <stdint.h>
#include <stddef.h>

#define SIM_ERR_LEN 4096

/* Every function that can fail takes a sim_err* and returns -1 (or NULL) after
 * writing one human-readable sentence into it that names the offending field. */
typedef struct {
    char msg[SIM_ERR_LEN];
    int code; /* SIM_OK, SIM_EINVAL, SIM_EDEADLOCK, SIM_ELIMIT, SIM_ENOMEM, SIM_EIO */
} sim_err;

enum { SIM_OK = 0, SIM_EINVAL = 1, SIM_EDEADLOCK = 2, SIM_ELIMIT = 3, SIM_ENOMEM = 4, SIM_EIO = 5 };

/* Formats the message into err (if non-NULL) and returns -1. */
int sim_fail(sim_err *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* calloc that reports "out of memory while allocating <what>" on failure. */
void *sim_calloc(size_t count, size_t size, const char *what, sim_err *err);

static inline int sim_ctz32(uint32_t x) { return __builtin_ctz(x); }
static inline int sim_popcount32(uint32_t x) { return __builtin_popcount(x); }

#endif
