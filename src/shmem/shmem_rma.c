/* shmem_rma: put, get, p, g, iput, iget, their nbi, signal and context
 * forms, for every standard RMA type and size: each shape is written once
 * below and stamped out per type by the tables of shmem.h.
 * Calls: rma (through the engine of shmem_init). */
#include "shmem_internal.h"

/* Data first, then the signal: a PE that sees the signal sees the data. */
static void put_signal(const char *call, void *dest, const void *source, size_t bytes, uint64_t *sig_addr,
                       uint64_t signal, int sig_op, int pe)
{
    rma_engine *e = osh_engine(call);
    if (sig_op != SHMEM_SIGNAL_SET && sig_op != SHMEM_SIGNAL_ADD)
        osh_fail(call, "sig_op %d is neither SHMEM_SIGNAL_SET nor SHMEM_SIGNAL_ADD", sig_op);
    rma_put(e, call, dest, source, bytes, pe, true);
    rma_fence(e);
    rma_atomic(e, call, sig_op == SHMEM_SIGNAL_SET ? RMA_AMO_SET : RMA_AMO_FETCH_ADD, 8, sig_addr, signal, 0, pe);
}

uint64_t shmem_signal_fetch(const uint64_t *sig_addr)
{
    rma_progress(osh_engine("shmem_signal_fetch"));
    return __atomic_load_n(sig_addr, __ATOMIC_ACQUIRE);
}

uint64_t shmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value)
{
    rma_wait(osh_engine("shmem_signal_wait_until"), "shmem_signal_wait_until", sig_addr, 8, false, (rma_cmp)cmp,
             cmp_value);
    return __atomic_load_n(sig_addr, __ATOMIC_ACQUIRE);
}

#define DEFINE_RMA(T, N)                                                                                           \
    void shmem_##N##_put(T *dest, const T *source, size_t nelems, int pe)                                          \
    {                                                                                                              \
        rma_put(osh_engine("shmem_" #N "_put"), "shmem_" #N "_put", dest, source, nelems * sizeof(T), pe, false);  \
    }                                                                                                              \
    void shmem_##N##_get(T *dest, const T *source, size_t nelems, int pe)                                          \
    {                                                                                                              \
        rma_get(osh_engine("shmem_" #N "_get"), "shmem_" #N "_get", dest, source, nelems * sizeof(T), pe);         \
    }                                                                                                              \
    void shmem_##N##_put_nbi(T *dest, const T *source, size_t nelems, int pe)                                      \
    {                                                                                                              \
        rma_put(osh_engine("shmem_" #N "_put_nbi"), "shmem_" #N "_put_nbi", dest, source, nelems * sizeof(T), pe,  \
                true);                                                                                             \
    }                                                                                                              \
    void shmem_##N##_get_nbi(T *dest, const T *source, size_t nelems, int pe)                                      \
    {                                                                                                              \
        rma_get(osh_engine("shmem_" #N "_get_nbi"), "shmem_" #N "_get_nbi", dest, source, nelems * sizeof(T), pe); \
    }                                                                                                              \
    void shmem_##N##_p(T *dest, T value, int pe)                                                                   \
    {                                                                                                              \
        rma_put(osh_engine("shmem_" #N "_p"), "shmem_" #N "_p", dest, &value, sizeof(T), pe, false);               \
    }                                                                                                              \
    T shmem_##N##_g(const T *source, int pe)                                                                       \
    {                                                                                                              \
        T value;                                                                                                   \
        rma_get(osh_engine("shmem_" #N "_g"), "shmem_" #N "_g", &value, source, sizeof(T), pe);                    \
        return value;                                                                                              \
    }                                                                                                              \
    void shmem_##N##_iput(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe)           \
    {                                                                                                              \
        rma_put_strided(osh_engine("shmem_" #N "_iput"), "shmem_" #N "_iput", dest, source, dst, sst, nelems,      \
                        sizeof(T), pe);                                                                            \
    }                                                                                                              \
    void shmem_##N##_iget(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe)           \
    {                                                                                                              \
        rma_get_strided(osh_engine("shmem_" #N "_iget"), "shmem_" #N "_iget", dest, source, dst, sst, nelems,      \
                        sizeof(T), pe);                                                                            \
    }                                                                                                              \
    void shmem_##N##_put_signal(T *dest, const T *source, size_t nelems, uint64_t *sig_addr, uint64_t signal,      \
                                int sig_op, int pe)                                                                \
    {                                                                                                              \
        put_signal("shmem_" #N "_put_signal", dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, pe);     \
    }                                                                                                              \
    void shmem_##N##_put_signal_nbi(T *dest, const T *source, size_t nelems, uint64_t *sig_addr, uint64_t signal,  \
                                    int sig_op, int pe)                                                            \
    {                                                                                                              \
        put_signal("shmem_" #N "_put_signal_nbi", dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, pe); \
    }                                                                                                              \
    OSH_CTX_FORM(N##_put, (T * dest, const T *source, size_t nelems), (dest, source, nelems))                      \
    OSH_CTX_FORM(N##_get, (T * dest, const T *source, size_t nelems), (dest, source, nelems))                      \
    OSH_CTX_FORM(N##_put_nbi, (T * dest, const T *source, size_t nelems), (dest, source, nelems))                  \
    OSH_CTX_FORM(N##_get_nbi, (T * dest, const T *source, size_t nelems), (dest, source, nelems))                  \
    OSH_CTX_FORM(N##_p, (T * dest, T value), (dest, value))                                                        \
    OSH_CTX_FORM_RETURNING(T, N##_g, (const T *source), (source))                                                  \
    OSH_CTX_FORM(N##_iput, (T * dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems),               \
                 (dest, source, dst, sst, nelems))                                                                 \
    OSH_CTX_FORM(N##_iget, (T * dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems),               \
                 (dest, source, dst, sst, nelems))                                                                 \
    OSH_CTX_FORM(N##_put_signal,                                                                                   \
                 (T * dest, const T *source, size_t nelems, uint64_t *sig_addr, uint64_t signal, int sig_op),      \
                 (dest, source, nelems, sig_addr, signal, sig_op))                                                 \
    OSH_CTX_FORM(N##_put_signal_nbi,                                                                               \
                 (T * dest, const T *source, size_t nelems, uint64_t *sig_addr, uint64_t signal, int sig_op),      \
                 (dest, source, nelems, sig_addr, signal, sig_op))
SHOAL_SHMEM_RMA_TYPES(DEFINE_RMA)

#define DEFINE_SIZED(S, B)                                                                                             \
    void shmem_put##S(void *dest, const void *source, size_t nelems, int pe)                                           \
    {                                                                                                                  \
        rma_put(osh_engine("shmem_put" #S), "shmem_put" #S, dest, source, nelems *(B), pe, false);                     \
    }                                                                                                                  \
    void shmem_get##S(void *dest, const void *source, size_t nelems, int pe)                                           \
    {                                                                                                                  \
        rma_get(osh_engine("shmem_get" #S), "shmem_get" #S, dest, source, nelems *(B), pe);                            \
    }                                                                                                                  \
    void shmem_put##S##_nbi(void *dest, const void *source, size_t nelems, int pe)                                     \
    {                                                                                                                  \
        rma_put(osh_engine("shmem_put" #S "_nbi"), "shmem_put" #S "_nbi", dest, source, nelems *(B), pe, true);        \
    }                                                                                                                  \
    void shmem_get##S##_nbi(void *dest, const void *source, size_t nelems, int pe)                                     \
    {                                                                                                                  \
        rma_get(osh_engine("shmem_get" #S "_nbi"), "shmem_get" #S "_nbi", dest, source, nelems *(B), pe);              \
    }                                                                                                                  \
    void shmem_put##S##_signal(void *dest, const void *source, size_t nelems, uint64_t *sig_addr, uint64_t signal,     \
                               int sig_op, int pe)                                                                     \
    {                                                                                                                  \
        put_signal("shmem_put" #S "_signal", dest, source, nelems *(B), sig_addr, signal, sig_op, pe);                 \
    }                                                                                                                  \
    void shmem_put##S##_signal_nbi(void *dest, const void *source, size_t nelems, uint64_t *sig_addr, uint64_t signal, \
                                   int sig_op, int pe)                                                                 \
    {                                                                                                                  \
        put_signal("shmem_put" #S "_signal_nbi", dest, source, nelems *(B), sig_addr, signal, sig_op, pe);             \
    }                                                                                                                  \
    OSH_CTX_FORM(put##S, (void *dest, const void *source, size_t nelems), (dest, source, nelems))                      \
    OSH_CTX_FORM(get##S, (void *dest, const void *source, size_t nelems), (dest, source, nelems))                      \
    OSH_CTX_FORM(put##S##_nbi, (void *dest, const void *source, size_t nelems), (dest, source, nelems))                \
    OSH_CTX_FORM(get##S##_nbi, (void *dest, const void *source, size_t nelems), (dest, source, nelems))                \
    OSH_CTX_FORM(put##S##_signal,                                                                                      \
                 (void *dest, const void *source, size_t nelems, uint64_t *sig_addr, uint64_t signal, int sig_op),     \
                 (dest, source, nelems, sig_addr, signal, sig_op))                                                     \
    OSH_CTX_FORM(put##S##_signal_nbi,                                                                                  \
                 (void *dest, const void *source, size_t nelems, uint64_t *sig_addr, uint64_t signal, int sig_op),     \
                 (dest, source, nelems, sig_addr, signal, sig_op))
SHOAL_SHMEM_SIZES(DEFINE_SIZED)

#define DEFINE_STRIDED(S, B)                                                                                  \
    void shmem_iput##S(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe)   \
    {                                                                                                         \
        rma_put_strided(osh_engine("shmem_iput" #S), "shmem_iput" #S, dest, source, dst, sst, nelems, B, pe); \
    }                                                                                                         \
    void shmem_iget##S(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe)   \
    {                                                                                                         \
        rma_get_strided(osh_engine("shmem_iget" #S), "shmem_iget" #S, dest, source, dst, sst, nelems, B, pe); \
    }                                                                                                         \
    OSH_CTX_FORM(iput##S, (void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems),      \
                 (dest, source, dst, sst, nelems))                                                            \
    OSH_CTX_FORM(iget##S, (void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems),      \
                 (dest, source, dst, sst, nelems))
DEFINE_STRIDED(8, 1)
DEFINE_STRIDED(16, 2)
DEFINE_STRIDED(32, 4)
DEFINE_STRIDED(64, 8)
DEFINE_STRIDED(128, 16)
