/* shmem.h: the OpenSHMEM 1.5 C API of shoal (libshoal-shmem).
 *
 * Build with `shoalcc prog.c` (or `oshcc`), or `mpicc prog.c -lshoal-shmem`;
 * run under the host MPI's launcher (`mpirun -np 8 ./prog`, or `oshrun`).
 * Inside a node every PE maps every other's symmetric heap and global data:
 * a put is a store, an atomic a CPU atomic. Across nodes: MPI-3 RMA.
 *
 * The typed routines are declared once per type by the tables below: each
 * row is (C type, the TYPENAME of the routine names). */
#ifndef SHOAL_SHMEM_H
#define SHOAL_SHMEM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SHMEM_MAJOR_VERSION 1
#define SHMEM_MINOR_VERSION 5
#define _SHMEM_MAJOR_VERSION SHMEM_MAJOR_VERSION
#define _SHMEM_MINOR_VERSION SHMEM_MINOR_VERSION
#define SHMEM_MAX_NAME_LEN 256
#define _SHMEM_MAX_NAME_LEN SHMEM_MAX_NAME_LEN
#define SHMEM_VENDOR_STRING "shoal"
#define _SHMEM_VENDOR_STRING SHMEM_VENDOR_STRING

#define SHMEM_THREAD_SINGLE 0
#define SHMEM_THREAD_FUNNELED 1
#define SHMEM_THREAD_SERIALIZED 2
#define SHMEM_THREAD_MULTIPLE 3

#define SHMEM_CMP_EQ 1
#define SHMEM_CMP_NE 2
#define SHMEM_CMP_GT 3
#define SHMEM_CMP_GE 4
#define SHMEM_CMP_LT 5
#define SHMEM_CMP_LE 6
#define _SHMEM_CMP_EQ SHMEM_CMP_EQ
#define _SHMEM_CMP_NE SHMEM_CMP_NE
#define _SHMEM_CMP_GT SHMEM_CMP_GT
#define _SHMEM_CMP_GE SHMEM_CMP_GE
#define _SHMEM_CMP_LT SHMEM_CMP_LT
#define _SHMEM_CMP_LE SHMEM_CMP_LE

#define SHMEM_SIGNAL_SET 0
#define SHMEM_SIGNAL_ADD 1

/* pSync and pWrk: accepted and left untouched (shoal's collectives need no
 * scratch of the caller's); the sizes are those programs allocate. */
#define SHMEM_SYNC_VALUE (-1L)
#define SHMEM_SYNC_SIZE 64
#define SHMEM_BCAST_SYNC_SIZE SHMEM_SYNC_SIZE
#define SHMEM_BARRIER_SYNC_SIZE SHMEM_SYNC_SIZE
#define SHMEM_REDUCE_SYNC_SIZE SHMEM_SYNC_SIZE
#define SHMEM_COLLECT_SYNC_SIZE SHMEM_SYNC_SIZE
#define SHMEM_ALLTOALL_SYNC_SIZE SHMEM_SYNC_SIZE
#define SHMEM_ALLTOALLS_SYNC_SIZE SHMEM_SYNC_SIZE
#define SHMEM_REDUCE_MIN_WRKDATA_SIZE 1
#define _SHMEM_SYNC_VALUE SHMEM_SYNC_VALUE
#define _SHMEM_SYNC_SIZE SHMEM_SYNC_SIZE
#define _SHMEM_BCAST_SYNC_SIZE SHMEM_BCAST_SYNC_SIZE
#define _SHMEM_BARRIER_SYNC_SIZE SHMEM_BARRIER_SYNC_SIZE
#define _SHMEM_REDUCE_SYNC_SIZE SHMEM_REDUCE_SYNC_SIZE
#define _SHMEM_COLLECT_SYNC_SIZE SHMEM_COLLECT_SYNC_SIZE
#define _SHMEM_ALLTOALL_SYNC_SIZE SHMEM_ALLTOALL_SYNC_SIZE
#define _SHMEM_ALLTOALLS_SYNC_SIZE SHMEM_ALLTOALLS_SYNC_SIZE
#define _SHMEM_REDUCE_MIN_WRKDATA_SIZE SHMEM_REDUCE_MIN_WRKDATA_SIZE

#define SHMEM_MALLOC_ATOMICS_REMOTE (1L << 0)
#define SHMEM_MALLOC_SIGNAL_REMOTE (1L << 1)

/* Contexts order and complete their own operations; shoal's all share one
 * engine, so quiet on any context completes everything (which the
 * specification allows). */
#define SHMEM_CTX_PRIVATE (1L << 0)
#define SHMEM_CTX_SERIALIZED (1L << 1)
#define SHMEM_CTX_NOSTORE (1L << 2)
typedef struct shoal_shmem_ctx *shmem_ctx_t;
extern struct shoal_shmem_ctx shoal_shmem_ctx_default;
#define SHMEM_CTX_DEFAULT (&shoal_shmem_ctx_default)
#define SHMEM_CTX_INVALID ((shmem_ctx_t)0)

typedef struct shoal_shmem_team *shmem_team_t;
extern struct shoal_shmem_team shoal_shmem_team_world, shoal_shmem_team_shared;
#define SHMEM_TEAM_WORLD (&shoal_shmem_team_world)
#define SHMEM_TEAM_SHARED (&shoal_shmem_team_shared)
#define SHMEM_TEAM_INVALID ((shmem_team_t)0)
typedef struct {
    int num_contexts;
} shmem_team_config_t;
#define SHMEM_TEAM_NUM_CONTEXTS (1L << 0)

/* Library setup, query and memory management. */
void shmem_init(void);
int shmem_init_thread(int requested, int *provided);
void shmem_query_thread(int *provided);
void shmem_finalize(void);
void shmem_global_exit(int status);
int shmem_my_pe(void);
int shmem_n_pes(void);
int shmem_pe_accessible(int pe);
int shmem_addr_accessible(const void *addr, int pe);
void *shmem_ptr(const void *dest, int pe);
void *shmem_team_ptr(shmem_team_t team, const void *dest, int pe);
void shmem_info_get_version(int *major, int *minor);
void shmem_info_get_name(char *name);
void shmem_pcontrol(const int level, ...);
void *shmem_malloc(size_t size);
void *shmem_malloc_with_hints(size_t size, long hints);
void *shmem_calloc(size_t count, size_t size);
void *shmem_realloc(void *ptr, size_t size);
void *shmem_align(size_t alignment, size_t size);
void shmem_free(void *ptr);

/* Teams and contexts. */
int shmem_team_my_pe(shmem_team_t team);
int shmem_team_n_pes(shmem_team_t team);
int shmem_team_get_config(shmem_team_t team, long config_mask, shmem_team_config_t *config);
int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team);
int shmem_team_split_strided(shmem_team_t parent_team, int start, int stride, int size,
                             const shmem_team_config_t *config, long config_mask, shmem_team_t *new_team);
int shmem_team_split_2d(shmem_team_t parent_team, int xrange, const shmem_team_config_t *xaxis_config, long xaxis_mask,
                        shmem_team_t *xaxis_team, const shmem_team_config_t *yaxis_config, long yaxis_mask,
                        shmem_team_t *yaxis_team);
void shmem_team_destroy(shmem_team_t team);
int shmem_ctx_create(long options, shmem_ctx_t *ctx);
int shmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t *ctx);
void shmem_ctx_destroy(shmem_ctx_t ctx);
int shmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t *team);

/* Ordering, completion and synchronisation. */
void shmem_fence(void);
void shmem_quiet(void);
void shmem_ctx_fence(shmem_ctx_t ctx);
void shmem_ctx_quiet(shmem_ctx_t ctx);
void shmem_barrier_all(void);
void shmem_barrier(int PE_start, int logPE_stride, int PE_size, long *pSync);
void shmem_sync_all(void);
void shmem_sync(int PE_start, int logPE_stride, int PE_size, long *pSync);
int shmem_team_sync(shmem_team_t team);
void shmem_set_lock(long *lock);
void shmem_clear_lock(long *lock);
int shmem_test_lock(long *lock);

/* The standard RMA types: put, get, p, g, iput, iget, the nbi and signal forms. */
#define SHOAL_SHMEM_RMA_TYPES(X)     \
    X(float, float)                  \
    X(double, double)                \
    X(long double, longdouble)       \
    X(char, char)                    \
    X(signed char, schar)            \
    X(short, short)                  \
    X(int, int)                      \
    X(long, long)                    \
    X(long long, longlong)           \
    X(unsigned char, uchar)          \
    X(unsigned short, ushort)        \
    X(unsigned int, uint)            \
    X(unsigned long, ulong)          \
    X(unsigned long long, ulonglong) \
    X(int8_t, int8)                  \
    X(int16_t, int16)                \
    X(int32_t, int32)                \
    X(int64_t, int64)                \
    X(uint8_t, uint8)                \
    X(uint16_t, uint16)              \
    X(uint32_t, uint32)              \
    X(uint64_t, uint64)              \
    X(size_t, size)                  \
    X(ptrdiff_t, ptrdiff)

/* The sized forms: putmem (bytes), put8 .. put128 (bits per element). */
#define SHOAL_SHMEM_SIZES(X) X(mem, 1) X(8, 1) X(16, 2) X(32, 4) X(64, 8) X(128, 16)

#define SHOAL_SHMEM_DECLARE_RMA(T, N)                                                                                 \
    void shmem_##N##_put(T *dest, const T *source, size_t nelems, int pe);                                            \
    void shmem_##N##_get(T *dest, const T *source, size_t nelems, int pe);                                            \
    void shmem_##N##_put_nbi(T *dest, const T *source, size_t nelems, int pe);                                        \
    void shmem_##N##_get_nbi(T *dest, const T *source, size_t nelems, int pe);                                        \
    void shmem_##N##_p(T *dest, T value, int pe);                                                                     \
    T shmem_##N##_g(const T *source, int pe);                                                                         \
    void shmem_##N##_iput(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);             \
    void shmem_##N##_iget(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);             \
    void shmem_##N##_put_signal(T *dest, const T *source, size_t nelems, uint64_t *sig_addr, uint64_t signal,         \
                                int sig_op, int pe);                                                                  \
    void shmem_##N##_put_signal_nbi(T *dest, const T *source, size_t nelems, uint64_t *sig_addr, uint64_t signal,     \
                                    int sig_op, int pe);                                                              \
    void shmem_ctx_##N##_put(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, int pe);                       \
    void shmem_ctx_##N##_get(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, int pe);                       \
    void shmem_ctx_##N##_put_nbi(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, int pe);                   \
    void shmem_ctx_##N##_get_nbi(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, int pe);                   \
    void shmem_ctx_##N##_p(shmem_ctx_t ctx, T *dest, T value, int pe);                                                \
    T shmem_ctx_##N##_g(shmem_ctx_t ctx, const T *source, int pe);                                                    \
    void shmem_ctx_##N##_iput(shmem_ctx_t ctx, T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, \
                              int pe);                                                                                \
    void shmem_ctx_##N##_iget(shmem_ctx_t ctx, T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, \
                              int pe);                                                                                \
    void shmem_ctx_##N##_put_signal(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, uint64_t *sig_addr,     \
                                    uint64_t signal, int sig_op, int pe);                                             \
    void shmem_ctx_##N##_put_signal_nbi(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, uint64_t *sig_addr, \
                                        uint64_t signal, int sig_op, int pe);
SHOAL_SHMEM_RMA_TYPES(SHOAL_SHMEM_DECLARE_RMA)

#define SHOAL_SHMEM_DECLARE_SIZED(S, B)                                                                                \
    void shmem_put##S(void *dest, const void *source, size_t nelems, int pe);                                          \
    void shmem_get##S(void *dest, const void *source, size_t nelems, int pe);                                          \
    void shmem_put##S##_nbi(void *dest, const void *source, size_t nelems, int pe);                                    \
    void shmem_get##S##_nbi(void *dest, const void *source, size_t nelems, int pe);                                    \
    void shmem_put##S##_signal(void *dest, const void *source, size_t nelems, uint64_t *sig_addr, uint64_t signal,     \
                               int sig_op, int pe);                                                                    \
    void shmem_put##S##_signal_nbi(void *dest, const void *source, size_t nelems, uint64_t *sig_addr, uint64_t signal, \
                                   int sig_op, int pe);                                                                \
    void shmem_ctx_put##S(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe);                     \
    void shmem_ctx_get##S(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe);                     \
    void shmem_ctx_put##S##_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe);               \
    void shmem_ctx_get##S##_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe);               \
    void shmem_ctx_put##S##_signal(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, uint64_t *sig_addr, \
                                   uint64_t signal, int sig_op, int pe);                                               \
    void shmem_ctx_put##S##_signal_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems,                 \
                                       uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);
SHOAL_SHMEM_SIZES(SHOAL_SHMEM_DECLARE_SIZED)
/* Strided sized forms exist for 8 .. 128 bits only. */
#define SHOAL_SHMEM_DECLARE_STRIDED(S, B)                                                                    \
    void shmem_iput##S(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe); \
    void shmem_iget##S(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe); \
    void shmem_ctx_iput##S(shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,    \
                           size_t nelems, int pe);                                                           \
    void shmem_ctx_iget##S(shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,    \
                           size_t nelems, int pe);
SHOAL_SHMEM_DECLARE_STRIDED(8, 1)
SHOAL_SHMEM_DECLARE_STRIDED(16, 2)
SHOAL_SHMEM_DECLARE_STRIDED(32, 4)
SHOAL_SHMEM_DECLARE_STRIDED(64, 8)
SHOAL_SHMEM_DECLARE_STRIDED(128, 16)

uint64_t shmem_signal_fetch(const uint64_t *sig_addr);
uint64_t shmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value);

/* Atomics. Standard AMO types: inc, add, compare_swap and their fetching forms. */
#define SHOAL_SHMEM_AMO_TYPES(X)     \
    X(int, int)                      \
    X(long, long)                    \
    X(long long, longlong)           \
    X(unsigned int, uint)            \
    X(unsigned long, ulong)          \
    X(unsigned long long, ulonglong) \
    X(int32_t, int32)                \
    X(int64_t, int64)                \
    X(uint32_t, uint32)              \
    X(uint64_t, uint64)              \
    X(size_t, size)                  \
    X(ptrdiff_t, ptrdiff)
/* Extended AMO types: fetch, set, swap (the standard types and these). */
#define SHOAL_SHMEM_EXTENDED_AMO_TYPES(X) SHOAL_SHMEM_AMO_TYPES(X) X(float, float) X(double, double)
/* Bitwise AMO types: and, or, xor and their fetching forms. */
#define SHOAL_SHMEM_BITWISE_AMO_TYPES(X) \
    X(unsigned int, uint)                \
    X(unsigned long, ulong)              \
    X(unsigned long long, ulonglong)     \
    X(int32_t, int32)                    \
    X(int64_t, int64)                    \
    X(uint32_t, uint32)                  \
    X(uint64_t, uint64)

#define SHOAL_SHMEM_DECLARE_AMO(T, N)                                                               \
    T shmem_##N##_atomic_fetch_inc(T *dest, int pe);                                                \
    void shmem_##N##_atomic_inc(T *dest, int pe);                                                   \
    T shmem_##N##_atomic_fetch_add(T *dest, T value, int pe);                                       \
    void shmem_##N##_atomic_add(T *dest, T value, int pe);                                          \
    T shmem_##N##_atomic_compare_swap(T *dest, T cond, T value, int pe);                            \
    void shmem_##N##_atomic_fetch_inc_nbi(T *fetch, T *dest, int pe);                               \
    void shmem_##N##_atomic_fetch_add_nbi(T *fetch, T *dest, T value, int pe);                      \
    void shmem_##N##_atomic_compare_swap_nbi(T *fetch, T *dest, T cond, T value, int pe);           \
    T shmem_ctx_##N##_atomic_fetch_inc(shmem_ctx_t ctx, T *dest, int pe);                           \
    void shmem_ctx_##N##_atomic_inc(shmem_ctx_t ctx, T *dest, int pe);                              \
    T shmem_ctx_##N##_atomic_fetch_add(shmem_ctx_t ctx, T *dest, T value, int pe);                  \
    void shmem_ctx_##N##_atomic_add(shmem_ctx_t ctx, T *dest, T value, int pe);                     \
    T shmem_ctx_##N##_atomic_compare_swap(shmem_ctx_t ctx, T *dest, T cond, T value, int pe);       \
    void shmem_ctx_##N##_atomic_fetch_inc_nbi(shmem_ctx_t ctx, T *fetch, T *dest, int pe);          \
    void shmem_ctx_##N##_atomic_fetch_add_nbi(shmem_ctx_t ctx, T *fetch, T *dest, T value, int pe); \
    void shmem_ctx_##N##_atomic_compare_swap_nbi(shmem_ctx_t ctx, T *fetch, T *dest, T cond, T value, int pe);
SHOAL_SHMEM_AMO_TYPES(SHOAL_SHMEM_DECLARE_AMO)

#define SHOAL_SHMEM_DECLARE_EXTENDED_AMO(T, N)                                                 \
    T shmem_##N##_atomic_fetch(const T *source, int pe);                                       \
    void shmem_##N##_atomic_set(T *dest, T value, int pe);                                     \
    T shmem_##N##_atomic_swap(T *dest, T value, int pe);                                       \
    void shmem_##N##_atomic_fetch_nbi(T *fetch, const T *source, int pe);                      \
    void shmem_##N##_atomic_swap_nbi(T *fetch, T *dest, T value, int pe);                      \
    T shmem_ctx_##N##_atomic_fetch(shmem_ctx_t ctx, const T *source, int pe);                  \
    void shmem_ctx_##N##_atomic_set(shmem_ctx_t ctx, T *dest, T value, int pe);                \
    T shmem_ctx_##N##_atomic_swap(shmem_ctx_t ctx, T *dest, T value, int pe);                  \
    void shmem_ctx_##N##_atomic_fetch_nbi(shmem_ctx_t ctx, T *fetch, const T *source, int pe); \
    void shmem_ctx_##N##_atomic_swap_nbi(shmem_ctx_t ctx, T *fetch, T *dest, T value, int pe);
SHOAL_SHMEM_EXTENDED_AMO_TYPES(SHOAL_SHMEM_DECLARE_EXTENDED_AMO)

#define SHOAL_SHMEM_DECLARE_BITWISE_AMO(T, N)                                                       \
    T shmem_##N##_atomic_fetch_and(T *dest, T value, int pe);                                       \
    void shmem_##N##_atomic_and(T *dest, T value, int pe);                                          \
    T shmem_##N##_atomic_fetch_or(T *dest, T value, int pe);                                        \
    void shmem_##N##_atomic_or(T *dest, T value, int pe);                                           \
    T shmem_##N##_atomic_fetch_xor(T *dest, T value, int pe);                                       \
    void shmem_##N##_atomic_xor(T *dest, T value, int pe);                                          \
    void shmem_##N##_atomic_fetch_and_nbi(T *fetch, T *dest, T value, int pe);                      \
    void shmem_##N##_atomic_fetch_or_nbi(T *fetch, T *dest, T value, int pe);                       \
    void shmem_##N##_atomic_fetch_xor_nbi(T *fetch, T *dest, T value, int pe);                      \
    T shmem_ctx_##N##_atomic_fetch_and(shmem_ctx_t ctx, T *dest, T value, int pe);                  \
    void shmem_ctx_##N##_atomic_and(shmem_ctx_t ctx, T *dest, T value, int pe);                     \
    T shmem_ctx_##N##_atomic_fetch_or(shmem_ctx_t ctx, T *dest, T value, int pe);                   \
    void shmem_ctx_##N##_atomic_or(shmem_ctx_t ctx, T *dest, T value, int pe);                      \
    T shmem_ctx_##N##_atomic_fetch_xor(shmem_ctx_t ctx, T *dest, T value, int pe);                  \
    void shmem_ctx_##N##_atomic_xor(shmem_ctx_t ctx, T *dest, T value, int pe);                     \
    void shmem_ctx_##N##_atomic_fetch_and_nbi(shmem_ctx_t ctx, T *fetch, T *dest, T value, int pe); \
    void shmem_ctx_##N##_atomic_fetch_or_nbi(shmem_ctx_t ctx, T *fetch, T *dest, T value, int pe);  \
    void shmem_ctx_##N##_atomic_fetch_xor_nbi(shmem_ctx_t ctx, T *fetch, T *dest, T value, int pe);
SHOAL_SHMEM_BITWISE_AMO_TYPES(SHOAL_SHMEM_DECLARE_BITWISE_AMO)

/* The atomics' names before 1.4, which tests and older programs still use. */
#define SHOAL_SHMEM_DEPRECATED_AMO_TYPES(X) X(int, int) X(long, long) X(long long, longlong)
#define SHOAL_SHMEM_DECLARE_DEPRECATED_AMO(T, N)           \
    T shmem_##N##_finc(T *dest, int pe);                   \
    void shmem_##N##_inc(T *dest, int pe);                 \
    T shmem_##N##_fadd(T *dest, T value, int pe);          \
    void shmem_##N##_add(T *dest, T value, int pe);        \
    T shmem_##N##_cswap(T *dest, T cond, T value, int pe); \
    T shmem_##N##_fetch(const T *source, int pe);          \
    void shmem_##N##_set(T *dest, T value, int pe);        \
    T shmem_##N##_swap(T *dest, T value, int pe);
SHOAL_SHMEM_DEPRECATED_AMO_TYPES(SHOAL_SHMEM_DECLARE_DEPRECATED_AMO)
float shmem_float_fetch(const float *source, int pe);
void shmem_float_set(float *dest, float value, int pe);
float shmem_float_swap(float *dest, float value, int pe);
double shmem_double_fetch(const double *source, int pe);
void shmem_double_set(double *dest, double value, int pe);
double shmem_double_swap(double *dest, double value, int pe);
long shmem_swap(long *dest, long value, int pe);

/* Waiting on local memory: the point-to-point synchronisation types. */
#define SHOAL_SHMEM_SYNC_TYPES(X)    \
    X(short, short)                  \
    X(int, int)                      \
    X(long, long)                    \
    X(long long, longlong)           \
    X(unsigned short, ushort)        \
    X(unsigned int, uint)            \
    X(unsigned long, ulong)          \
    X(unsigned long long, ulonglong) \
    X(int32_t, int32)                \
    X(int64_t, int64)                \
    X(uint32_t, uint32)              \
    X(uint64_t, uint64)              \
    X(size_t, size)                  \
    X(ptrdiff_t, ptrdiff)

#define SHOAL_SHMEM_DECLARE_SYNC(T, N)                                                                               \
    void shmem_##N##_wait_until(T *ivar, int cmp, T cmp_value);                                                      \
    void shmem_##N##_wait_until_all(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value);               \
    size_t shmem_##N##_wait_until_any(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value);             \
    size_t shmem_##N##_wait_until_some(T *ivars, size_t nelems, size_t *indices, const int *status, int cmp,         \
                                       T cmp_value);                                                                 \
    void shmem_##N##_wait_until_all_vector(T *ivars, size_t nelems, const int *status, int cmp, T *cmp_values);      \
    size_t shmem_##N##_wait_until_any_vector(T *ivars, size_t nelems, const int *status, int cmp, T *cmp_values);    \
    size_t shmem_##N##_wait_until_some_vector(T *ivars, size_t nelems, size_t *indices, const int *status, int cmp,  \
                                              T *cmp_values);                                                        \
    int shmem_##N##_test(T *ivar, int cmp, T cmp_value);                                                             \
    int shmem_##N##_test_all(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value);                      \
    size_t shmem_##N##_test_any(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value);                   \
    size_t shmem_##N##_test_some(T *ivars, size_t nelems, size_t *indices, const int *status, int cmp, T cmp_value); \
    int shmem_##N##_test_all_vector(T *ivars, size_t nelems, const int *status, int cmp, T *cmp_values);             \
    size_t shmem_##N##_test_any_vector(T *ivars, size_t nelems, const int *status, int cmp, T *cmp_values);          \
    size_t shmem_##N##_test_some_vector(T *ivars, size_t nelems, size_t *indices, const int *status, int cmp,        \
                                        T *cmp_values);                                                              \
    void shmem_##N##_wait(T *ivar, T cmp_value);
SHOAL_SHMEM_SYNC_TYPES(SHOAL_SHMEM_DECLARE_SYNC)
void shmem_wait_until(long *ivar, int cmp, long cmp_value);
void shmem_wait(long *ivar, long cmp_value);

/* Collectives on teams (1.5) and on active sets (PE_start, logPE_stride,
 * PE_size: the forms before teams, which tests still use). */
#define SHOAL_SHMEM_DECLARE_TEAM_COLL(T, N)                                                             \
    int shmem_##N##_broadcast(shmem_team_t team, T *dest, const T *source, size_t nelems, int PE_root); \
    int shmem_##N##_collect(shmem_team_t team, T *dest, const T *source, size_t nelems);                \
    int shmem_##N##_fcollect(shmem_team_t team, T *dest, const T *source, size_t nelems);               \
    int shmem_##N##_alltoall(shmem_team_t team, T *dest, const T *source, size_t nelems);               \
    int shmem_##N##_alltoalls(shmem_team_t team, T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems);
SHOAL_SHMEM_RMA_TYPES(SHOAL_SHMEM_DECLARE_TEAM_COLL)
int shmem_broadcastmem(shmem_team_t team, void *dest, const void *source, size_t nelems, int PE_root);
int shmem_collectmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
int shmem_fcollectmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
int shmem_alltoallmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
int shmem_alltoallsmem(shmem_team_t team, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems);

#define SHOAL_SHMEM_DECLARE_ACTIVE_SET_COLL(S, B)                                                                      \
    void shmem_broadcast##S(void *dest, const void *source, size_t nelems, int PE_root, int PE_start,                  \
                            int logPE_stride, int PE_size, long *pSync);                                               \
    void shmem_collect##S(void *dest, const void *source, size_t nelems, int PE_start, int logPE_stride, int PE_size,  \
                          long *pSync);                                                                                \
    void shmem_fcollect##S(void *dest, const void *source, size_t nelems, int PE_start, int logPE_stride, int PE_size, \
                           long *pSync);                                                                               \
    void shmem_alltoall##S(void *dest, const void *source, size_t nelems, int PE_start, int logPE_stride, int PE_size, \
                           long *pSync);                                                                               \
    void shmem_alltoalls##S(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int PE_start, \
                            int logPE_stride, int PE_size, long *pSync);
SHOAL_SHMEM_DECLARE_ACTIVE_SET_COLL(32, 4)
SHOAL_SHMEM_DECLARE_ACTIVE_SET_COLL(64, 8)

/* Reductions: the types each operation takes (the team forms). */
#define SHOAL_SHMEM_BITWISE_REDUCE_TYPES(X) \
    X(unsigned char, uchar)                 \
    X(unsigned short, ushort)               \
    X(unsigned int, uint)                   \
    X(unsigned long, ulong)                 \
    X(unsigned long long, ulonglong)        \
    X(int8_t, int8)                         \
    X(int16_t, int16)                       \
    X(int32_t, int32)                       \
    X(int64_t, int64)                       \
    X(uint8_t, uint8)                       \
    X(uint16_t, uint16)                     \
    X(uint32_t, uint32)                     \
    X(uint64_t, uint64)                     \
    X(size_t, size)
#define SHOAL_SHMEM_ORDERED_REDUCE_TYPES(X) \
    X(char, char)                           \
    X(signed char, schar)                   \
    X(short, short)                         \
    X(int, int)                             \
    X(long, long)                           \
    X(long long, longlong)                  \
    X(ptrdiff_t, ptrdiff)                   \
    SHOAL_SHMEM_BITWISE_REDUCE_TYPES(X)     \
    X(float, float)                         \
    X(double, double)                       \
    X(long double, longdouble)
#define SHOAL_SHMEM_ARITH_REDUCE_TYPES(X) \
    SHOAL_SHMEM_ORDERED_REDUCE_TYPES(X) X(double _Complex, complexd) X(float _Complex, complexf)

#define SHOAL_SHMEM_DECLARE_REDUCE(T, N, OP) \
    int shmem_##N##_##OP##_reduce(shmem_team_t team, T *dest, const T *source, size_t nreduce);
#define SHOAL_SHMEM_DECLARE_BITWISE_REDUCE(T, N) \
    SHOAL_SHMEM_DECLARE_REDUCE(T, N, and) SHOAL_SHMEM_DECLARE_REDUCE(T, N, or) SHOAL_SHMEM_DECLARE_REDUCE(T, N, xor)
#define SHOAL_SHMEM_DECLARE_ORDERED_REDUCE(T, N) \
    SHOAL_SHMEM_DECLARE_REDUCE(T, N, max) SHOAL_SHMEM_DECLARE_REDUCE(T, N, min)
#define SHOAL_SHMEM_DECLARE_ARITH_REDUCE(T, N) \
    SHOAL_SHMEM_DECLARE_REDUCE(T, N, sum) SHOAL_SHMEM_DECLARE_REDUCE(T, N, prod)
SHOAL_SHMEM_BITWISE_REDUCE_TYPES(SHOAL_SHMEM_DECLARE_BITWISE_REDUCE)
SHOAL_SHMEM_ORDERED_REDUCE_TYPES(SHOAL_SHMEM_DECLARE_ORDERED_REDUCE)
SHOAL_SHMEM_ARITH_REDUCE_TYPES(SHOAL_SHMEM_DECLARE_ARITH_REDUCE)

/* The active-set reductions (to_all). */
#define SHOAL_SHMEM_DECLARE_TO_ALL(T, N, OP)                                                                           \
    void shmem_##N##_##OP##_to_all(T *dest, const T *source, int nreduce, int PE_start, int logPE_stride, int PE_size, \
                                   T *pWrk, long *pSync);
#define SHOAL_SHMEM_TO_ALL_INTEGER_TYPES(X) X(short, short) X(int, int) X(long, long) X(long long, longlong)
#define SHOAL_SHMEM_TO_ALL_REAL_TYPES(X) X(float, float) X(double, double) X(long double, longdouble)
#define SHOAL_SHMEM_TO_ALL_COMPLEX_TYPES(X) X(float _Complex, complexf) X(double _Complex, complexd)
#define SHOAL_SHMEM_DECLARE_TO_ALL_BITWISE(T, N) \
    SHOAL_SHMEM_DECLARE_TO_ALL(T, N, and) SHOAL_SHMEM_DECLARE_TO_ALL(T, N, or) SHOAL_SHMEM_DECLARE_TO_ALL(T, N, xor)
#define SHOAL_SHMEM_DECLARE_TO_ALL_ORDERED(T, N) \
    SHOAL_SHMEM_DECLARE_TO_ALL(T, N, max) SHOAL_SHMEM_DECLARE_TO_ALL(T, N, min)
#define SHOAL_SHMEM_DECLARE_TO_ALL_ARITH(T, N) \
    SHOAL_SHMEM_DECLARE_TO_ALL(T, N, sum) SHOAL_SHMEM_DECLARE_TO_ALL(T, N, prod)
SHOAL_SHMEM_TO_ALL_INTEGER_TYPES(SHOAL_SHMEM_DECLARE_TO_ALL_BITWISE)
SHOAL_SHMEM_TO_ALL_INTEGER_TYPES(SHOAL_SHMEM_DECLARE_TO_ALL_ORDERED)
SHOAL_SHMEM_TO_ALL_INTEGER_TYPES(SHOAL_SHMEM_DECLARE_TO_ALL_ARITH)
SHOAL_SHMEM_TO_ALL_REAL_TYPES(SHOAL_SHMEM_DECLARE_TO_ALL_ORDERED)
SHOAL_SHMEM_TO_ALL_REAL_TYPES(SHOAL_SHMEM_DECLARE_TO_ALL_ARITH)
SHOAL_SHMEM_TO_ALL_COMPLEX_TYPES(SHOAL_SHMEM_DECLARE_TO_ALL_ARITH)

/* Names before 1.2, still in use. */
void start_pes(int npes);
int _my_pe(void);
int _num_pes(void);
void *shmalloc(size_t size);
void shfree(void *ptr);
void *shrealloc(void *ptr, size_t size);
void *shmemalign(size_t alignment, size_t size);

#ifdef __cplusplus
}
#endif

/* C11 type-generic forms (not inside shoal, which defines the functions
 * some of them share a name with). Each selects the typed routine from the
 * type of its first pointer argument; the forms that take a context first
 * (shmem_put(ctx, dest, ...)) select the ctx routine from the argument after
 * it. A selection no type matches names shoal_shmem_c11_no_such_type, which
 * takes no arguments, so that a wrong call fails to compile. */
#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && !defined(__cplusplus) && !defined(SHOAL_SHMEM_INTERNAL)
void shoal_shmem_c11_no_such_type(void);
/* The first and second of a call's arguments (padded, so that one or two
 * arguments are enough). */
#define SHOAL_SHMEM_PICK0(a, ...) a
#define SHOAL_SHMEM_PICK1(a, b, ...) b
#define SHOAL_SHMEM_ARG0(...) SHOAL_SHMEM_PICK0(__VA_ARGS__, 0)
#define SHOAL_SHMEM_ARG1(...) SHOAL_SHMEM_PICK1(__VA_ARGS__, 0, 0)

/* Type lists: the C types each family takes (the fixed-width names are
 * the same types, so they select the same routines). P is the routine's
 * prefix (shmem_ or shmem_ctx_), OP its operation. */
#define SHOAL_SHMEM_C11_RMA(P, OP)                                                                                             \
    float                                                                                                                      \
        * : P##float_##OP,                                                                                                     \
            double                                                                                                             \
                * : P##double_##OP,                                                                                            \
                    long double                                                                                                \
                        * : P##longdouble_##OP,                                                                                \
                            char                                                                                               \
                                * : P##char_##OP,                                                                              \
                                    signed char                                                                                \
                                        * : P##schar_##OP,                                                                     \
                                            short                                                                              \
                                                * : P##short_##OP,                                                             \
                                                    int * : P##int_##OP,                                                       \
                                                            long                                                               \
                                                                * : P##long_##OP,                                              \
                                                                    long long                                                  \
                                                                        * : P##longlong_##OP,                                  \
                                                                            unsigned char                                      \
                                                                                * : P##uchar_##OP,                             \
                                                                                    unsigned short                             \
                                                                                        * : P##ushort_##OP,                    \
                                                                                            unsigned int                       \
                                                                                                * : P##uint_##OP,              \
                                                                                                    unsigned long              \
                                                                                                        * : P##ulong_##OP,     \
                                                                                                            unsigned long long \
                                                                                                                * : P##ulonglong_##OP
#define SHOAL_SHMEM_C11_RMA_CONST(P, OP)                                                                                             \
    const float                                                                                                                      \
        * : P##float_##OP,                                                                                                           \
            const double                                                                                                             \
                * : P##double_##OP,                                                                                                  \
                    const long double                                                                                                \
                        * : P##longdouble_##OP,                                                                                      \
                            const char                                                                                               \
                                * : P##char_##OP,                                                                                    \
                                    const signed char                                                                                \
                                        * : P##schar_##OP,                                                                           \
                                            const short                                                                              \
                                                * : P##short_##OP,                                                                   \
                                                    const int                                                                        \
                                                        * : P##int_##OP,                                                             \
                                                            const long                                                               \
                                                                * : P##long_##OP,                                                    \
                                                                    const long long                                                  \
                                                                        * : P##longlong_##OP,                                        \
                                                                            const unsigned char                                      \
                                                                                * : P##uchar_##OP,                                   \
                                                                                    const unsigned short                             \
                                                                                        * : P##ushort_##OP,                          \
                                                                                            const unsigned int                       \
                                                                                                * : P##uint_##OP,                    \
                                                                                                    const unsigned long              \
                                                                                                        * : P##ulong_##OP,           \
                                                                                                            const unsigned long long \
                                                                                                                * : P##ulonglong_##OP
#define SHOAL_SHMEM_C11_AMO(P, OP)                                                   \
    int * : P##int_##OP,                                                             \
            long * : P##long_##OP,                                                   \
                     long long * : P##longlong_##OP,                                 \
                                   unsigned int * : P##uint_##OP,                    \
                                                    unsigned long * : P##ulong_##OP, \
                                                                      unsigned long long * : P##ulonglong_##OP
#define SHOAL_SHMEM_C11_EXTENDED_AMO(P, OP) \
    SHOAL_SHMEM_C11_AMO(P, OP), float * : P##float_##OP, double * : P##double_##OP
#define SHOAL_SHMEM_C11_EXTENDED_AMO_CONST(P, OP)                                                           \
    const int * : P##int_##OP,                                                                              \
                  const long * : P##long_##OP,                                                              \
                                 const long long * : P##longlong_##OP,                                      \
                                                     const unsigned int                                     \
                                                         * : P##uint_##OP,                                  \
                                                             const unsigned long                            \
                                                                 * : P##ulong_##OP,                         \
                                                                     const unsigned long long               \
                                                                         * : P##ulonglong_##OP,             \
                                                                             const float * : P##float_##OP, \
                                                                                             const double   \
                                                                                                 * : P##double_##OP
/* The bitwise atomics take unsigned types and int32_t/int64_t only. */
#define SHOAL_SHMEM_C11_BITWISE_AMO(P, OP)                                               \
    unsigned int * : P##uint_##OP,                                                       \
                     unsigned long * : P##ulong_##OP,                                    \
                                       unsigned long long * : P##ulonglong_##OP,         \
                                                              int32_t * : P##int32_##OP, \
                                                                          int64_t * : P##int64_##OP
#define SHOAL_SHMEM_C11_SYNC(P, OP)                                                                         \
    short * : P##short_##OP,                                                                                \
              int * : P##int_##OP,                                                                          \
                      long * : P##long_##OP,                                                                \
                               long long * : P##longlong_##OP,                                              \
                                             unsigned short * : P##ushort_##OP,                             \
                                                                unsigned int * : P##uint_##OP,              \
                                                                                 unsigned long              \
                                                                                     * : P##ulong_##OP,     \
                                                                                         unsigned long long \
                                                                                             * : P##ulonglong_##OP
#define SHOAL_SHMEM_C11_BITWISE_REDUCE(P, OP)                                                                   \
    unsigned char * : P##uchar_##OP,                                                                            \
                      unsigned short                                                                            \
                          * : P##ushort_##OP,                                                                   \
                              unsigned int * : P##uint_##OP,                                                    \
                                               unsigned long                                                    \
                                                   * : P##ulong_##OP,                                           \
                                                       unsigned long long                                       \
                                                           * : P##ulonglong_##OP,                               \
                                                               signed char * : P##int8_##OP,                    \
                                                                               short * : P##int16_##OP,         \
                                                                                         int * : P##int32_##OP, \
                                                                                                 long           \
                                                                                                     * : P##int64_##OP
#define SHOAL_SHMEM_C11_ORDERED_REDUCE(P, OP)                                                                               \
    char                                                                                                                    \
        * : P##char_##OP,                                                                                                   \
            signed char                                                                                                     \
                * : P##schar_##OP,                                                                                          \
                    short                                                                                                   \
                        * : P##short_##OP,                                                                                  \
                            int * : P##int_##OP,                                                                            \
                                    long                                                                                    \
                                        * : P##long_##OP,                                                                   \
                                            long long                                                                       \
                                                * : P##longlong_##OP,                                                       \
                                                    unsigned char                                                           \
                                                        * : P##uchar_##OP,                                                  \
                                                            unsigned short                                                  \
                                                                * : P##ushort_##OP,                                         \
                                                                    unsigned int                                            \
                                                                        * : P##uint_##OP,                                   \
                                                                            unsigned long                                   \
                                                                                * : P##ulong_##OP,                          \
                                                                                    unsigned long long                      \
                                                                                        * : P##ulonglong_##OP,              \
                                                                                            float                           \
                                                                                                * : P##float_##OP,          \
                                                                                                    double                  \
                                                                                                        * : P##double_##OP, \
                                                                                                            long double     \
                                                                                                                * : P##longdouble_##OP
#define SHOAL_SHMEM_C11_ARITH_REDUCE(P, OP) \
    SHOAL_SHMEM_C11_ORDERED_REDUCE(P, OP), double _Complex * : P##complexd_##OP, float _Complex * : P##complexf_##OP

/* A routine with a context form: by the first argument, or, where that is
 * a context, by the second. */
#define SHOAL_SHMEM_C11_WITH_CTX(LIST, OP, ...)                                      \
    _Generic(SHOAL_SHMEM_ARG0(__VA_ARGS__), shmem_ctx_t                              \
             : _Generic(SHOAL_SHMEM_ARG1(__VA_ARGS__), LIST(shmem_ctx_, OP), default \
                        : shoal_shmem_c11_no_such_type),                             \
               LIST(shmem_, OP))(__VA_ARGS__)
/* The same where the typed pointer may be const (a source). */
#define SHOAL_SHMEM_C11_WITH_CTX_CONST(LIST, CONST_LIST, OP, ...)                                                \
    _Generic(SHOAL_SHMEM_ARG0(__VA_ARGS__), shmem_ctx_t                                                          \
             : _Generic(SHOAL_SHMEM_ARG1(__VA_ARGS__), LIST(shmem_ctx_, OP), CONST_LIST(shmem_ctx_, OP), default \
                        : shoal_shmem_c11_no_such_type),                                                         \
               LIST(shmem_, OP), CONST_LIST(shmem_, OP))(__VA_ARGS__)
/* A routine without one: by the first argument. */
#define SHOAL_SHMEM_C11_BY_ARG0(LIST, OP, ...) _Generic(SHOAL_SHMEM_ARG0(__VA_ARGS__), LIST(shmem_, OP))(__VA_ARGS__)
/* A team collective: by the second argument (the first is the team). */
#define SHOAL_SHMEM_C11_BY_ARG1(LIST, OP, ...) _Generic(SHOAL_SHMEM_ARG1(__VA_ARGS__), LIST(shmem_, OP))(__VA_ARGS__)

#define shmem_put(...) SHOAL_SHMEM_C11_WITH_CTX(SHOAL_SHMEM_C11_RMA, put, __VA_ARGS__)
#define shmem_get(...) SHOAL_SHMEM_C11_WITH_CTX(SHOAL_SHMEM_C11_RMA, get, __VA_ARGS__)
#define shmem_put_nbi(...) SHOAL_SHMEM_C11_WITH_CTX(SHOAL_SHMEM_C11_RMA, put_nbi, __VA_ARGS__)
#define shmem_get_nbi(...) SHOAL_SHMEM_C11_WITH_CTX(SHOAL_SHMEM_C11_RMA, get_nbi, __VA_ARGS__)
#define shmem_p(...) SHOAL_SHMEM_C11_WITH_CTX(SHOAL_SHMEM_C11_RMA, p, __VA_ARGS__)
#define shmem_g(...) SHOAL_SHMEM_C11_WITH_CTX_CONST(SHOAL_SHMEM_C11_RMA, SHOAL_SHMEM_C11_RMA_CONST, g, __VA_ARGS__)
#define shmem_iput(...) SHOAL_SHMEM_C11_WITH_CTX(SHOAL_SHMEM_C11_RMA, iput, __VA_ARGS__)
#define shmem_iget(...) SHOAL_SHMEM_C11_WITH_CTX(SHOAL_SHMEM_C11_RMA, iget, __VA_ARGS__)
#define shmem_put_signal(...) SHOAL_SHMEM_C11_WITH_CTX(SHOAL_SHMEM_C11_RMA, put_signal, __VA_ARGS__)
#define shmem_put_signal_nbi(...) SHOAL_SHMEM_C11_WITH_CTX(SHOAL_SHMEM_C11_RMA, put_signal_nbi, __VA_ARGS__)

#define shmem_atomic_fetch(...)                                                                                    \
    SHOAL_SHMEM_C11_WITH_CTX_CONST(SHOAL_SHMEM_C11_EXTENDED_AMO, SHOAL_SHMEM_C11_EXTENDED_AMO_CONST, atomic_fetch, \
                                   __VA_ARGS__)
#define shmem_atomic_set(...) SHOAL_SHMEM_C11_WITH_CTX(SHOAL_SHMEM_C11_EXTENDED_AMO, atomic_set, __VA_ARGS__)
#define shmem_atomic_swap(...) SHOAL_SHMEM_C11_WITH_CTX(SHOAL_SHMEM_C11_EXTENDED_AMO, atomic_swap, __VA_ARGS__)
#define shmem_atomic_fetch_nbi(...) \
    SHOAL_SHMEM_C11_WITH_CTX(SHOAL_SHMEM_C11_EXTENDED_AMO, atomic_fetch_nbi, __VA_ARGS__)
#define shmem_atomic_swap_nbi(...) SHOAL_SHMEM_C11_WITH_CTX(SHOAL_SHMEM_C11_EXTENDED_AMO, atomic_swap_nbi, __VA_ARGS__)
#define shmem_atomic_compare_swap(...) SHOAL_SHMEM_C11_WITH_CTX(SHOAL_SHMEM_C11_AMO, atomic_compare_swap, __VA_ARGS__)
#define shmem_atomic_compare_swap_nbi(...) \
    SHOAL_SHMEM_C11_WITH_CTX(SHOAL_SHMEM_C11_AMO, atomic_compare_swap_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_inc(...) SHOAL_SHMEM_C11_WITH_CTX(SHOAL_SHMEM_C11_AMO, atomic_fetch_inc, __VA_ARGS__)
#define shmem_atomic_inc(...) SHOAL_SHMEM_C11_WITH_CTX(SHOAL_SHMEM_C11_AMO, atomic_inc, __VA_ARGS__)
#define shmem_atomic_fetch_inc_nbi(...) SHOAL_SHMEM_C11_WITH_CTX(SHOAL_SHMEM_C11_AMO, atomic_fetch_inc_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_add(...) SHOAL_SHMEM_C11_WITH_CTX(SHOAL_SHMEM_C11_AMO, atomic_fetch_add, __VA_ARGS__)
#define shmem_atomic_add(...) SHOAL_SHMEM_C11_WITH_CTX(SHOAL_SHMEM_C11_AMO, atomic_add, __VA_ARGS__)
#define shmem_atomic_fetch_add_nbi(...) SHOAL_SHMEM_C11_WITH_CTX(SHOAL_SHMEM_C11_AMO, atomic_fetch_add_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_and(...) SHOAL_SHMEM_C11_WITH_CTX(SHOAL_SHMEM_C11_BITWISE_AMO, atomic_fetch_and, __VA_ARGS__)
#define shmem_atomic_and(...) SHOAL_SHMEM_C11_WITH_CTX(SHOAL_SHMEM_C11_BITWISE_AMO, atomic_and, __VA_ARGS__)
#define shmem_atomic_fetch_and_nbi(...) \
    SHOAL_SHMEM_C11_WITH_CTX(SHOAL_SHMEM_C11_BITWISE_AMO, atomic_fetch_and_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_or(...) SHOAL_SHMEM_C11_WITH_CTX(SHOAL_SHMEM_C11_BITWISE_AMO, atomic_fetch_or, __VA_ARGS__)
#define shmem_atomic_or(...) SHOAL_SHMEM_C11_WITH_CTX(SHOAL_SHMEM_C11_BITWISE_AMO, atomic_or, __VA_ARGS__)
#define shmem_atomic_fetch_or_nbi(...) \
    SHOAL_SHMEM_C11_WITH_CTX(SHOAL_SHMEM_C11_BITWISE_AMO, atomic_fetch_or_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_xor(...) SHOAL_SHMEM_C11_WITH_CTX(SHOAL_SHMEM_C11_BITWISE_AMO, atomic_fetch_xor, __VA_ARGS__)
#define shmem_atomic_xor(...) SHOAL_SHMEM_C11_WITH_CTX(SHOAL_SHMEM_C11_BITWISE_AMO, atomic_xor, __VA_ARGS__)
#define shmem_atomic_fetch_xor_nbi(...) \
    SHOAL_SHMEM_C11_WITH_CTX(SHOAL_SHMEM_C11_BITWISE_AMO, atomic_fetch_xor_nbi, __VA_ARGS__)

#define shmem_wait_until(...) SHOAL_SHMEM_C11_BY_ARG0(SHOAL_SHMEM_C11_SYNC, wait_until, __VA_ARGS__)
#define shmem_wait_until_all(...) SHOAL_SHMEM_C11_BY_ARG0(SHOAL_SHMEM_C11_SYNC, wait_until_all, __VA_ARGS__)
#define shmem_wait_until_any(...) SHOAL_SHMEM_C11_BY_ARG0(SHOAL_SHMEM_C11_SYNC, wait_until_any, __VA_ARGS__)
#define shmem_wait_until_some(...) SHOAL_SHMEM_C11_BY_ARG0(SHOAL_SHMEM_C11_SYNC, wait_until_some, __VA_ARGS__)
#define shmem_wait_until_all_vector(...) \
    SHOAL_SHMEM_C11_BY_ARG0(SHOAL_SHMEM_C11_SYNC, wait_until_all_vector, __VA_ARGS__)
#define shmem_wait_until_any_vector(...) \
    SHOAL_SHMEM_C11_BY_ARG0(SHOAL_SHMEM_C11_SYNC, wait_until_any_vector, __VA_ARGS__)
#define shmem_wait_until_some_vector(...) \
    SHOAL_SHMEM_C11_BY_ARG0(SHOAL_SHMEM_C11_SYNC, wait_until_some_vector, __VA_ARGS__)
#define shmem_test(...) SHOAL_SHMEM_C11_BY_ARG0(SHOAL_SHMEM_C11_SYNC, test, __VA_ARGS__)
#define shmem_test_all(...) SHOAL_SHMEM_C11_BY_ARG0(SHOAL_SHMEM_C11_SYNC, test_all, __VA_ARGS__)
#define shmem_test_any(...) SHOAL_SHMEM_C11_BY_ARG0(SHOAL_SHMEM_C11_SYNC, test_any, __VA_ARGS__)
#define shmem_test_some(...) SHOAL_SHMEM_C11_BY_ARG0(SHOAL_SHMEM_C11_SYNC, test_some, __VA_ARGS__)
#define shmem_test_all_vector(...) SHOAL_SHMEM_C11_BY_ARG0(SHOAL_SHMEM_C11_SYNC, test_all_vector, __VA_ARGS__)
#define shmem_test_any_vector(...) SHOAL_SHMEM_C11_BY_ARG0(SHOAL_SHMEM_C11_SYNC, test_any_vector, __VA_ARGS__)
#define shmem_test_some_vector(...) SHOAL_SHMEM_C11_BY_ARG0(SHOAL_SHMEM_C11_SYNC, test_some_vector, __VA_ARGS__)

#define shmem_broadcast(...) SHOAL_SHMEM_C11_BY_ARG1(SHOAL_SHMEM_C11_RMA, broadcast, __VA_ARGS__)
#define shmem_collect(...) SHOAL_SHMEM_C11_BY_ARG1(SHOAL_SHMEM_C11_RMA, collect, __VA_ARGS__)
#define shmem_fcollect(...) SHOAL_SHMEM_C11_BY_ARG1(SHOAL_SHMEM_C11_RMA, fcollect, __VA_ARGS__)
#define shmem_alltoall(...) SHOAL_SHMEM_C11_BY_ARG1(SHOAL_SHMEM_C11_RMA, alltoall, __VA_ARGS__)
#define shmem_alltoalls(...) SHOAL_SHMEM_C11_BY_ARG1(SHOAL_SHMEM_C11_RMA, alltoalls, __VA_ARGS__)
#define shmem_and_reduce(...) SHOAL_SHMEM_C11_BY_ARG1(SHOAL_SHMEM_C11_BITWISE_REDUCE, and_reduce, __VA_ARGS__)
#define shmem_or_reduce(...) SHOAL_SHMEM_C11_BY_ARG1(SHOAL_SHMEM_C11_BITWISE_REDUCE, or_reduce, __VA_ARGS__)
#define shmem_xor_reduce(...) SHOAL_SHMEM_C11_BY_ARG1(SHOAL_SHMEM_C11_BITWISE_REDUCE, xor_reduce, __VA_ARGS__)
#define shmem_max_reduce(...) SHOAL_SHMEM_C11_BY_ARG1(SHOAL_SHMEM_C11_ORDERED_REDUCE, max_reduce, __VA_ARGS__)
#define shmem_min_reduce(...) SHOAL_SHMEM_C11_BY_ARG1(SHOAL_SHMEM_C11_ORDERED_REDUCE, min_reduce, __VA_ARGS__)
#define shmem_sum_reduce(...) SHOAL_SHMEM_C11_BY_ARG1(SHOAL_SHMEM_C11_ARITH_REDUCE, sum_reduce, __VA_ARGS__)
#define shmem_prod_reduce(...) SHOAL_SHMEM_C11_BY_ARG1(SHOAL_SHMEM_C11_ARITH_REDUCE, prod_reduce, __VA_ARGS__)

/* The generic atomics' names before 1.4 (deprecated; programs still call
 * them): the same routines as their 1.4 names, without a context form. */
#define shmem_finc(...) SHOAL_SHMEM_C11_BY_ARG0(SHOAL_SHMEM_C11_AMO, atomic_fetch_inc, __VA_ARGS__)
#define shmem_inc(...) SHOAL_SHMEM_C11_BY_ARG0(SHOAL_SHMEM_C11_AMO, atomic_inc, __VA_ARGS__)
#define shmem_fadd(...) SHOAL_SHMEM_C11_BY_ARG0(SHOAL_SHMEM_C11_AMO, atomic_fetch_add, __VA_ARGS__)
#define shmem_add(...) SHOAL_SHMEM_C11_BY_ARG0(SHOAL_SHMEM_C11_AMO, atomic_add, __VA_ARGS__)
#define shmem_cswap(...) SHOAL_SHMEM_C11_BY_ARG0(SHOAL_SHMEM_C11_AMO, atomic_compare_swap, __VA_ARGS__)
#define shmem_fetch(...)                                                                        \
    _Generic(SHOAL_SHMEM_ARG0(__VA_ARGS__), SHOAL_SHMEM_C11_EXTENDED_AMO(shmem_, atomic_fetch), \
             SHOAL_SHMEM_C11_EXTENDED_AMO_CONST(shmem_, atomic_fetch))(__VA_ARGS__)
#define shmem_set(...) SHOAL_SHMEM_C11_BY_ARG0(SHOAL_SHMEM_C11_EXTENDED_AMO, atomic_set, __VA_ARGS__)
#define shmem_swap(...) SHOAL_SHMEM_C11_BY_ARG0(SHOAL_SHMEM_C11_EXTENDED_AMO, atomic_swap, __VA_ARGS__)

/* shmem_sync(team) is the team barrier of 1.5; with four arguments it is
 * still the active-set form (the function of that name). */
#define shmem_sync(...) \
    _Generic(SHOAL_SHMEM_ARG0(__VA_ARGS__), shmem_team_t : shmem_team_sync, default : shmem_sync)(__VA_ARGS__)
#endif

#endif
