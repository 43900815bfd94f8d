/* shmem_atomic: the atomic memory operations for every AMO type, their
 * nbi and context forms and the names before 1.4. A value travels to the
 * engine as its bits (4 or 8 bytes); each shape is written once and
 * stamped out per type by the tables of shmem.h.
 * Calls: rma. */
#include <string.h>

#include "shmem_internal.h"

static inline uint64_t bits_of(const void *value, int width)
{
    if (width == 4) {
        uint32_t v;
        memcpy(&v, value, 4);
        return v;
    }
    uint64_t v;
    memcpy(&v, value, 8);
    return v;
}

static inline void value_of(uint64_t bits, void *value, int width)
{
    if (width == 4) {
        uint32_t v = (uint32_t)bits;
        memcpy(value, &v, 4);
    } else {
        memcpy(value, &bits, 8);
    }
}

/* op on pe's dest with value (and cond): the old value into *fetched. */
static void amo(const char *call, rma_atomic_op op, int width, void *dest, const void *value, const void *cond,
                void *fetched, int pe)
{
    rma_engine *e = osh_engine(call);
    uint64_t old =
        rma_atomic(e, call, op, width, dest, value ? bits_of(value, width) : 0, cond ? bits_of(cond, width) : 0, pe);
    if (fetched)
        value_of(old, fetched, width);
}

#define WIDTH(T) ((int)sizeof(T))
#define CHECK_WIDTH(T, N) _Static_assert(sizeof(T) == 4 || sizeof(T) == 8, #N ": atomics on 4 or 8 bytes");

/* shmem_<N>_<name>(params..., pe): op on pe's target with value and cond
 * (pointers, or NULL), the old value returned. */
#define FETCHING_AMO(T, N, name, params, op, target, value, cond)                          \
    T shmem_##N##_##name(OSH_LIST params, int pe)                                          \
    {                                                                                      \
        T old;                                                                             \
        amo("shmem_" #N "_" #name, op, WIDTH(T), (void *)(target), value, cond, &old, pe); \
        return old;                                                                        \
    }
/* The same on dest without the old value. */
#define PLAIN_AMO(T, N, name, params, op, value)                               \
    void shmem_##N##_##name(OSH_LIST params, int pe)                           \
    {                                                                          \
        amo("shmem_" #N "_" #name, op, WIDTH(T), dest, value, NULL, NULL, pe); \
    }
/* The nbi form of a fetching one: complete on return, which the nbi
 * semantics allow. */
#define NBI_FORM(T, N, name, params, args) \
    void shmem_##N##_##name##_nbi(T *fetch, OSH_LIST params, int pe) { *fetch = shmem_##N##_##name(OSH_LIST args, pe); }

#define DEFINE_AMO(T, N)                                                                                     \
    CHECK_WIDTH(T, N)                                                                                        \
    FETCHING_AMO(T, N, atomic_fetch_inc, (T * dest), RMA_AMO_FETCH_ADD, dest, &(T){1}, NULL)                 \
    PLAIN_AMO(T, N, atomic_inc, (T * dest), RMA_AMO_FETCH_ADD, &(T){1})                                      \
    FETCHING_AMO(T, N, atomic_fetch_add, (T * dest, T value), RMA_AMO_FETCH_ADD, dest, &value, NULL)         \
    PLAIN_AMO(T, N, atomic_add, (T * dest, T value), RMA_AMO_FETCH_ADD, &value)                              \
    FETCHING_AMO(T, N, atomic_compare_swap, (T * dest, T cond, T value), RMA_AMO_CSWAP, dest, &value, &cond) \
    NBI_FORM(T, N, atomic_fetch_inc, (T * dest), (dest))                                                     \
    NBI_FORM(T, N, atomic_fetch_add, (T * dest, T value), (dest, value))                                     \
    NBI_FORM(T, N, atomic_compare_swap, (T * dest, T cond, T value), (dest, cond, value))                    \
    OSH_CTX_FORM_RETURNING(T, N##_atomic_fetch_inc, (T * dest), (dest))                                      \
    OSH_CTX_FORM(N##_atomic_inc, (T * dest), (dest))                                                         \
    OSH_CTX_FORM_RETURNING(T, N##_atomic_fetch_add, (T * dest, T value), (dest, value))                      \
    OSH_CTX_FORM(N##_atomic_add, (T * dest, T value), (dest, value))                                         \
    OSH_CTX_FORM_RETURNING(T, N##_atomic_compare_swap, (T * dest, T cond, T value), (dest, cond, value))     \
    OSH_CTX_FORM(N##_atomic_fetch_inc_nbi, (T * fetch, T * dest), (fetch, dest))                             \
    OSH_CTX_FORM(N##_atomic_fetch_add_nbi, (T * fetch, T * dest, T value), (fetch, dest, value))             \
    OSH_CTX_FORM(N##_atomic_compare_swap_nbi, (T * fetch, T * dest, T cond, T value), (fetch, dest, cond, value))
SHOAL_SHMEM_AMO_TYPES(DEFINE_AMO)

#define DEFINE_EXTENDED_AMO(T, N)                                                          \
    FETCHING_AMO(T, N, atomic_fetch, (const T *source), RMA_AMO_FETCH, source, NULL, NULL) \
    PLAIN_AMO(T, N, atomic_set, (T * dest, T value), RMA_AMO_SET, &value)                  \
    FETCHING_AMO(T, N, atomic_swap, (T * dest, T value), RMA_AMO_SWAP, dest, &value, NULL) \
    NBI_FORM(T, N, atomic_fetch, (const T *source), (source))                              \
    NBI_FORM(T, N, atomic_swap, (T * dest, T value), (dest, value))                        \
    OSH_CTX_FORM_RETURNING(T, N##_atomic_fetch, (const T *source), (source))               \
    OSH_CTX_FORM(N##_atomic_set, (T * dest, T value), (dest, value))                       \
    OSH_CTX_FORM_RETURNING(T, N##_atomic_swap, (T * dest, T value), (dest, value))         \
    OSH_CTX_FORM(N##_atomic_fetch_nbi, (T * fetch, const T *source), (fetch, source))      \
    OSH_CTX_FORM(N##_atomic_swap_nbi, (T * fetch, T * dest, T value), (fetch, dest, value))
SHOAL_SHMEM_EXTENDED_AMO_TYPES(DEFINE_EXTENDED_AMO)

#define DEFINE_BITWISE_OP(T, N, OP, AMO)                                                 \
    FETCHING_AMO(T, N, atomic_fetch_##OP, (T * dest, T value), AMO, dest, &value, NULL)  \
    PLAIN_AMO(T, N, atomic_##OP, (T * dest, T value), AMO, &value)                       \
    NBI_FORM(T, N, atomic_fetch_##OP, (T * dest, T value), (dest, value))                \
    OSH_CTX_FORM_RETURNING(T, N##_atomic_fetch_##OP, (T * dest, T value), (dest, value)) \
    OSH_CTX_FORM(N##_atomic_##OP, (T * dest, T value), (dest, value))                    \
    OSH_CTX_FORM(N##_atomic_fetch_##OP##_nbi, (T * fetch, T * dest, T value), (fetch, dest, value))
#define DEFINE_BITWISE_AMO(T, N)                    \
    DEFINE_BITWISE_OP(T, N, and, RMA_AMO_FETCH_AND) \
    DEFINE_BITWISE_OP(T, N, or, RMA_AMO_FETCH_OR)   \
    DEFINE_BITWISE_OP(T, N, xor, RMA_AMO_FETCH_XOR)
SHOAL_SHMEM_BITWISE_AMO_TYPES(DEFINE_BITWISE_AMO)

#define DEFINE_DEPRECATED_AMO(T, N)                                                                        \
    T shmem_##N##_finc(T *dest, int pe) { return shmem_##N##_atomic_fetch_inc(dest, pe); }                 \
    void shmem_##N##_inc(T *dest, int pe) { shmem_##N##_atomic_inc(dest, pe); }                            \
    T shmem_##N##_fadd(T *dest, T value, int pe) { return shmem_##N##_atomic_fetch_add(dest, value, pe); } \
    void shmem_##N##_add(T *dest, T value, int pe) { shmem_##N##_atomic_add(dest, value, pe); }            \
    T shmem_##N##_cswap(T *dest, T cond, T value, int pe)                                                  \
    {                                                                                                      \
        return shmem_##N##_atomic_compare_swap(dest, cond, value, pe);                                     \
    }                                                                                                      \
    T shmem_##N##_fetch(const T *source, int pe) { return shmem_##N##_atomic_fetch(source, pe); }          \
    void shmem_##N##_set(T *dest, T value, int pe) { shmem_##N##_atomic_set(dest, value, pe); }            \
    T shmem_##N##_swap(T *dest, T value, int pe) { return shmem_##N##_atomic_swap(dest, value, pe); }
SHOAL_SHMEM_DEPRECATED_AMO_TYPES(DEFINE_DEPRECATED_AMO)

float shmem_float_fetch(const float *source, int pe) { return shmem_float_atomic_fetch(source, pe); }
void shmem_float_set(float *dest, float value, int pe) { shmem_float_atomic_set(dest, value, pe); }
float shmem_float_swap(float *dest, float value, int pe) { return shmem_float_atomic_swap(dest, value, pe); }
double shmem_double_fetch(const double *source, int pe) { return shmem_double_atomic_fetch(source, pe); }
void shmem_double_set(double *dest, double value, int pe) { shmem_double_atomic_set(dest, value, pe); }
double shmem_double_swap(double *dest, double value, int pe) { return shmem_double_atomic_swap(dest, value, pe); }
long shmem_swap(long *dest, long value, int pe) { return shmem_long_atomic_swap(dest, value, pe); }
