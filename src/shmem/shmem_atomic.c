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

#define DEFINE_AMO(T, N)                                                                                      \
    CHECK_WIDTH(T, N)                                                                                         \
    T shmem_##N##_atomic_fetch_inc(T *dest, int pe)                                                           \
    {                                                                                                         \
        T one = 1, old;                                                                                       \
        amo("shmem_" #N "_atomic_fetch_inc", RMA_AMO_FETCH_ADD, WIDTH(T), dest, &one, NULL, &old, pe);        \
        return old;                                                                                           \
    }                                                                                                         \
    void shmem_##N##_atomic_inc(T *dest, int pe)                                                              \
    {                                                                                                         \
        T one = 1;                                                                                            \
        amo("shmem_" #N "_atomic_inc", RMA_AMO_FETCH_ADD, WIDTH(T), dest, &one, NULL, NULL, pe);              \
    }                                                                                                         \
    T shmem_##N##_atomic_fetch_add(T *dest, T value, int pe)                                                  \
    {                                                                                                         \
        T old;                                                                                                \
        amo("shmem_" #N "_atomic_fetch_add", RMA_AMO_FETCH_ADD, WIDTH(T), dest, &value, NULL, &old, pe);      \
        return old;                                                                                           \
    }                                                                                                         \
    void shmem_##N##_atomic_add(T *dest, T value, int pe)                                                     \
    {                                                                                                         \
        amo("shmem_" #N "_atomic_add", RMA_AMO_FETCH_ADD, WIDTH(T), dest, &value, NULL, NULL, pe);            \
    }                                                                                                         \
    T shmem_##N##_atomic_compare_swap(T *dest, T cond, T value, int pe)                                       \
    {                                                                                                         \
        T old;                                                                                                \
        amo("shmem_" #N "_atomic_compare_swap", RMA_AMO_CSWAP, WIDTH(T), dest, &value, &cond, &old, pe);      \
        return old;                                                                                           \
    }                                                                                                         \
    void shmem_##N##_atomic_fetch_inc_nbi(T *fetch, T *dest, int pe)                                          \
    {                                                                                                         \
        *fetch = shmem_##N##_atomic_fetch_inc(dest, pe);                                                      \
    }                                                                                                         \
    void shmem_##N##_atomic_fetch_add_nbi(T *fetch, T *dest, T value, int pe)                                 \
    {                                                                                                         \
        *fetch = shmem_##N##_atomic_fetch_add(dest, value, pe);                                               \
    }                                                                                                         \
    void shmem_##N##_atomic_compare_swap_nbi(T *fetch, T *dest, T cond, T value, int pe)                      \
    {                                                                                                         \
        *fetch = shmem_##N##_atomic_compare_swap(dest, cond, value, pe);                                      \
    }                                                                                                         \
    T shmem_ctx_##N##_atomic_fetch_inc(shmem_ctx_t ctx, T *dest, int pe)                                      \
    {                                                                                                         \
        return shmem_##N##_atomic_fetch_inc(dest, osh_ctx_pe(ctx, pe));                                       \
    }                                                                                                         \
    void shmem_ctx_##N##_atomic_inc(shmem_ctx_t ctx, T *dest, int pe)                                         \
    {                                                                                                         \
        shmem_##N##_atomic_inc(dest, osh_ctx_pe(ctx, pe));                                                    \
    }                                                                                                         \
    T shmem_ctx_##N##_atomic_fetch_add(shmem_ctx_t ctx, T *dest, T value, int pe)                             \
    {                                                                                                         \
        return shmem_##N##_atomic_fetch_add(dest, value, osh_ctx_pe(ctx, pe));                                \
    }                                                                                                         \
    void shmem_ctx_##N##_atomic_add(shmem_ctx_t ctx, T *dest, T value, int pe)                                \
    {                                                                                                         \
        shmem_##N##_atomic_add(dest, value, osh_ctx_pe(ctx, pe));                                             \
    }                                                                                                         \
    T shmem_ctx_##N##_atomic_compare_swap(shmem_ctx_t ctx, T *dest, T cond, T value, int pe)                  \
    {                                                                                                         \
        return shmem_##N##_atomic_compare_swap(dest, cond, value, osh_ctx_pe(ctx, pe));                       \
    }                                                                                                         \
    void shmem_ctx_##N##_atomic_fetch_inc_nbi(shmem_ctx_t ctx, T *fetch, T *dest, int pe)                     \
    {                                                                                                         \
        shmem_##N##_atomic_fetch_inc_nbi(fetch, dest, osh_ctx_pe(ctx, pe));                                   \
    }                                                                                                         \
    void shmem_ctx_##N##_atomic_fetch_add_nbi(shmem_ctx_t ctx, T *fetch, T *dest, T value, int pe)            \
    {                                                                                                         \
        shmem_##N##_atomic_fetch_add_nbi(fetch, dest, value, osh_ctx_pe(ctx, pe));                            \
    }                                                                                                         \
    void shmem_ctx_##N##_atomic_compare_swap_nbi(shmem_ctx_t ctx, T *fetch, T *dest, T cond, T value, int pe) \
    {                                                                                                         \
        shmem_##N##_atomic_compare_swap_nbi(fetch, dest, cond, value, osh_ctx_pe(ctx, pe));                   \
    }
SHOAL_SHMEM_AMO_TYPES(DEFINE_AMO)

#define DEFINE_EXTENDED_AMO(T, N)                                                                        \
    T shmem_##N##_atomic_fetch(const T *source, int pe)                                                  \
    {                                                                                                    \
        T old;                                                                                           \
        amo("shmem_" #N "_atomic_fetch", RMA_AMO_FETCH, WIDTH(T), (void *)source, NULL, NULL, &old, pe); \
        return old;                                                                                      \
    }                                                                                                    \
    void shmem_##N##_atomic_set(T *dest, T value, int pe)                                                \
    {                                                                                                    \
        amo("shmem_" #N "_atomic_set", RMA_AMO_SET, WIDTH(T), dest, &value, NULL, NULL, pe);             \
    }                                                                                                    \
    T shmem_##N##_atomic_swap(T *dest, T value, int pe)                                                  \
    {                                                                                                    \
        T old;                                                                                           \
        amo("shmem_" #N "_atomic_swap", RMA_AMO_SWAP, WIDTH(T), dest, &value, NULL, &old, pe);           \
        return old;                                                                                      \
    }                                                                                                    \
    void shmem_##N##_atomic_fetch_nbi(T *fetch, const T *source, int pe)                                 \
    {                                                                                                    \
        *fetch = shmem_##N##_atomic_fetch(source, pe);                                                   \
    }                                                                                                    \
    void shmem_##N##_atomic_swap_nbi(T *fetch, T *dest, T value, int pe)                                 \
    {                                                                                                    \
        *fetch = shmem_##N##_atomic_swap(dest, value, pe);                                               \
    }                                                                                                    \
    T shmem_ctx_##N##_atomic_fetch(shmem_ctx_t ctx, const T *source, int pe)                             \
    {                                                                                                    \
        return shmem_##N##_atomic_fetch(source, osh_ctx_pe(ctx, pe));                                    \
    }                                                                                                    \
    void shmem_ctx_##N##_atomic_set(shmem_ctx_t ctx, T *dest, T value, int pe)                           \
    {                                                                                                    \
        shmem_##N##_atomic_set(dest, value, osh_ctx_pe(ctx, pe));                                        \
    }                                                                                                    \
    T shmem_ctx_##N##_atomic_swap(shmem_ctx_t ctx, T *dest, T value, int pe)                             \
    {                                                                                                    \
        return shmem_##N##_atomic_swap(dest, value, osh_ctx_pe(ctx, pe));                                \
    }                                                                                                    \
    void shmem_ctx_##N##_atomic_fetch_nbi(shmem_ctx_t ctx, T *fetch, const T *source, int pe)            \
    {                                                                                                    \
        shmem_##N##_atomic_fetch_nbi(fetch, source, osh_ctx_pe(ctx, pe));                                \
    }                                                                                                    \
    void shmem_ctx_##N##_atomic_swap_nbi(shmem_ctx_t ctx, T *fetch, T *dest, T value, int pe)            \
    {                                                                                                    \
        shmem_##N##_atomic_swap_nbi(fetch, dest, value, osh_ctx_pe(ctx, pe));                            \
    }
SHOAL_SHMEM_EXTENDED_AMO_TYPES(DEFINE_EXTENDED_AMO)

#define DEFINE_BITWISE_OP(T, N, OP, AMO)                                                              \
    T shmem_##N##_atomic_fetch_##OP(T *dest, T value, int pe)                                         \
    {                                                                                                 \
        T old;                                                                                        \
        amo("shmem_" #N "_atomic_fetch_" #OP, AMO, WIDTH(T), dest, &value, NULL, &old, pe);           \
        return old;                                                                                   \
    }                                                                                                 \
    void shmem_##N##_atomic_##OP(T *dest, T value, int pe)                                            \
    {                                                                                                 \
        amo("shmem_" #N "_atomic_" #OP, AMO, WIDTH(T), dest, &value, NULL, NULL, pe);                 \
    }                                                                                                 \
    void shmem_##N##_atomic_fetch_##OP##_nbi(T *fetch, T *dest, T value, int pe)                      \
    {                                                                                                 \
        *fetch = shmem_##N##_atomic_fetch_##OP(dest, value, pe);                                      \
    }                                                                                                 \
    T shmem_ctx_##N##_atomic_fetch_##OP(shmem_ctx_t ctx, T *dest, T value, int pe)                    \
    {                                                                                                 \
        return shmem_##N##_atomic_fetch_##OP(dest, value, osh_ctx_pe(ctx, pe));                       \
    }                                                                                                 \
    void shmem_ctx_##N##_atomic_##OP(shmem_ctx_t ctx, T *dest, T value, int pe)                       \
    {                                                                                                 \
        shmem_##N##_atomic_##OP(dest, value, osh_ctx_pe(ctx, pe));                                    \
    }                                                                                                 \
    void shmem_ctx_##N##_atomic_fetch_##OP##_nbi(shmem_ctx_t ctx, T *fetch, T *dest, T value, int pe) \
    {                                                                                                 \
        shmem_##N##_atomic_fetch_##OP##_nbi(fetch, dest, value, osh_ctx_pe(ctx, pe));                 \
    }
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
