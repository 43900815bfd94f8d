/* shmemx.h: shoal's extensions to the OpenSHMEM 1.5 API (libshoal-shmem),
 * under the shmemx_ names other implementations give them:
 *
 *   shmemx_wtime()                          seconds on a monotonic clock
 *   shmemx_signal_set([ctx,] sig_addr, signal, pe)   an atomic set of a signal word on pe
 *   shmemx_signal_add([ctx,] sig_addr, signal, pe)   an atomic add to it
 *   SHMEMX_TEAM_NODE                        the PEs of this node (SHMEM_TEAM_SHARED)
 *
 * The signal updates are atomic against shmem_put_signal's and are waited
 * for with shmem_signal_wait_until; like a non-fetching atomic they are
 * complete at the target by the next shmem_quiet. */
#ifndef SHOAL_SHMEMX_H
#define SHOAL_SHMEMX_H

#include <shmem.h>

#ifdef __cplusplus
extern "C" {
#endif

double shmemx_wtime(void);
void shmemx_signal_set(uint64_t *sig_addr, uint64_t signal, int pe);
void shmemx_signal_add(uint64_t *sig_addr, uint64_t signal, int pe);
void shmemx_ctx_signal_set(shmem_ctx_t ctx, uint64_t *sig_addr, uint64_t signal, int pe);
void shmemx_ctx_signal_add(shmem_ctx_t ctx, uint64_t *sig_addr, uint64_t signal, int pe);

#define SHMEMX_TEAM_NODE SHMEM_TEAM_SHARED

#ifdef __cplusplus
}
#endif

/* With or without a context first, as the 1.6 signal routines take it. */
#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && !defined(__cplusplus) && !defined(SHOAL_SHMEM_INTERNAL)
#define shmemx_signal_set(...)                          \
    _Generic(SHOAL_SHMEM_ARG0(__VA_ARGS__), shmem_ctx_t \
             : shmemx_ctx_signal_set, default           \
             : shmemx_signal_set)(__VA_ARGS__)
#define shmemx_signal_add(...)                          \
    _Generic(SHOAL_SHMEM_ARG0(__VA_ARGS__), shmem_ctx_t \
             : shmemx_ctx_signal_add, default           \
             : shmemx_signal_add)(__VA_ARGS__)
#endif

#endif
