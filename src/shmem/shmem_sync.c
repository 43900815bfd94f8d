/* shmem_sync: ordering and completion (fence, quiet), barriers and syncs,
 * waiting on local memory (wait_until, test and their all/any/some and
 * vector forms), and the distributed locks.
 * Calls: rma, MPI (the barriers, on the team's communicator). */
#include "shmem_internal.h"

void shmem_fence(void) { rma_fence(osh_engine("shmem_fence")); }
void shmem_quiet(void) { rma_quiet(osh_engine("shmem_quiet")); }

void shmem_ctx_fence(shmem_ctx_t ctx)
{
    (void)ctx;
    shmem_fence();
}

void shmem_ctx_quiet(shmem_ctx_t ctx)
{
    (void)ctx;
    shmem_quiet();
}

void shmem_barrier_all(void)
{
    rma_quiet(osh_engine("shmem_barrier_all"));
    MPI_Barrier(osh.world);
}

void shmem_barrier(int PE_start, int logPE_stride, int PE_size, long *pSync)
{
    (void)pSync;
    rma_quiet(osh_engine("shmem_barrier"));
    MPI_Barrier(osh_active_set("shmem_barrier", PE_start, logPE_stride, PE_size));
}

/* A sync orders no puts, but every store of this node is visible anyway,
 * and only the PEs of other nodes need the flush. */
void shmem_sync_all(void)
{
    osh_require_init("shmem_sync_all");
    osh_remote_push();
    MPI_Barrier(osh.world);
}

void shmem_sync(int PE_start, int logPE_stride, int PE_size, long *pSync)
{
    (void)pSync;
    osh_require_init("shmem_sync");
    MPI_Barrier(osh_active_set("shmem_sync", PE_start, logPE_stride, PE_size));
}

int shmem_team_sync(shmem_team_t team)
{
    osh_require_init("shmem_team_sync");
    MPI_Barrier(osh_team_comm("shmem_team_sync", team));
    return 0;
}

/* A lock is a ticket lock in PE 0's copy of the lock variable: the high
 * half counts tickets taken, the low half the ticket being served. Fair,
 * and every step is one atomic on one word. (After 2^32 acquisitions the
 * low half carries into the high one; the comparison below looks at each
 * half only.) */
#define LOCK_HOME 0
#define TICKET_ONE (UINT64_C(1) << 32)
#define SERVING(v) ((uint32_t)(v))
#define TICKET(v) ((uint32_t)((v) >> 32))

/* A poll of the lock word through the remote operations is a round trip,
 * not a load: it counts as this many polls of rma_backoff's, which then
 * spins through a few of them, not thousands, before it yields and sleeps. */
#define REMOTE_POLL_WEIGHT 1000

static bool polls_remotely(const rma_engine *e, const long *home) { return !home || e->remote_atomics; }

static void lock_backoff(rma_engine *e, const char *call, long polls, bool remote)
{
    rma_backoff(e, call, remote ? polls * REMOTE_POLL_WEIGHT : polls);
}

void shmem_set_lock(long *lock)
{
    rma_engine *e = osh_engine("shmem_set_lock");
    uint64_t mine = TICKET(rma_atomic(e, "shmem_set_lock", RMA_AMO_FETCH_ADD, 8, lock, TICKET_ONE, 0, LOCK_HOME));
    long *home = rma_peer_address(e, lock, LOCK_HOME);
    for (long polls = 0;; polls++) {
        uint64_t now = polls_remotely(e, home)
                           ? rma_atomic(e, "shmem_set_lock", RMA_AMO_FETCH, 8, lock, 0, 0, LOCK_HOME)
                           : (uint64_t)__atomic_load_n(home, __ATOMIC_ACQUIRE);
        if (SERVING(now) == (uint32_t)mine)
            break;
        lock_backoff(e, "shmem_set_lock", polls, polls_remotely(e, home));
    }
    rma_fence(e);
}

void shmem_clear_lock(long *lock)
{
    rma_engine *e = osh_engine("shmem_clear_lock");
    /* What the holder wrote reaches its targets before the next holder runs. */
    rma_quiet(e);
    rma_atomic(e, "shmem_clear_lock", RMA_AMO_FETCH_ADD, 8, lock, 1, 0, LOCK_HOME);
}

/* A program that loops on shmem_test_lock waits as shmem_set_lock does:
 * its misses in a row (per thread) pace it as rma_backoff paces a wait, so
 * that on a crowded node the holder gets the core it needs to let go (SOS's
 * mt_lock_test, 16 threads spinning on 2 cores, ran past 40 s). */
static _Thread_local long test_lock_misses;

static int test_lock_missed(rma_engine *e, long *lock)
{
    lock_backoff(e, "shmem_test_lock", test_lock_misses++, polls_remotely(e, rma_peer_address(e, lock, LOCK_HOME)));
    return 1;
}

int shmem_test_lock(long *lock)
{
    rma_engine *e = osh_engine("shmem_test_lock");
    uint64_t now = rma_atomic(e, "shmem_test_lock", RMA_AMO_FETCH, 8, lock, 0, 0, LOCK_HOME);
    if (TICKET(now) != SERVING(now))
        return test_lock_missed(e, lock);
    uint64_t seen = rma_atomic(e, "shmem_test_lock", RMA_AMO_CSWAP, 8, lock, now + TICKET_ONE, now, LOCK_HOME);
    if (seen != now)
        return test_lock_missed(e, lock);
    test_lock_misses = 0;
    rma_fence(e);
    return 0;
}

/* Waits and tests: one shape per type, stamped out by the table. */
#define IS_SIGNED(T) (!((T)-1 > 0))

static bool active(const int *status, size_t i) { return !status || status[i] == 0; }

#define DEFINE_SYNC(T, N)                                                                                              \
    void shmem_##N##_wait_until(T *ivar, int cmp, T cmp_value)                                                         \
    {                                                                                                                  \
        rma_wait(osh_engine("shmem_" #N "_wait_until"), "shmem_" #N "_wait_until", ivar, (int)sizeof(T), IS_SIGNED(T), \
                 (rma_cmp)cmp, (uint64_t)cmp_value);                                                                   \
    }                                                                                                                  \
    int shmem_##N##_test(T *ivar, int cmp, T cmp_value)                                                                \
    {                                                                                                                  \
        rma_progress(osh_engine("shmem_" #N "_test"));                                                                 \
        return rma_test(ivar, (int)sizeof(T), IS_SIGNED(T), (rma_cmp)cmp, (uint64_t)cmp_value);                        \
    }                                                                                                                  \
    void shmem_##N##_wait(T *ivar, T cmp_value) { shmem_##N##_wait_until(ivar, SHMEM_CMP_NE, cmp_value); }             \
    /* The vector forms compare each element with its own value; the others   \
     * pass one value for all (values == NULL). */                                        \
    static bool N##_holds(T *ivars, size_t i, int cmp, T cmp_value, const T *values)                                   \
    {                                                                                                                  \
        return rma_test(&ivars[i], (int)sizeof(T), IS_SIGNED(T), (rma_cmp)cmp,                                         \
                        (uint64_t)(values ? values[i] : cmp_value));                                                   \
    }                                                                                                                  \
    static int N##_test_all_of(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value, const T *values)      \
    {                                                                                                                  \
        for (size_t i = 0; i < nelems; i++)                                                                            \
            if (active(status, i) && !N##_holds(ivars, i, cmp, cmp_value, values))                                     \
                return 0;                                                                                              \
        return 1;                                                                                                      \
    }                                                                                                                  \
    /* Starts where the last call left off, so that no element starves. */                                             \
    static size_t N##_test_any_of(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value, const T *values)   \
    {                                                                                                                  \
        static _Thread_local size_t start;                                                                             \
        for (size_t k = 0; k < nelems; k++) {                                                                          \
            size_t i = (start + k) % nelems;                                                                           \
            if (active(status, i) && N##_holds(ivars, i, cmp, cmp_value, values)) {                                    \
                start = i + 1;                                                                                         \
                return i;                                                                                              \
            }                                                                                                          \
        }                                                                                                              \
        return SIZE_MAX;                                                                                               \
    }                                                                                                                  \
    static size_t N##_test_some_of(T *ivars, size_t nelems, size_t *indices, const int *status, int cmp, T cmp_value,  \
                                   const T *values)                                                                    \
    {                                                                                                                  \
        size_t found = 0;                                                                                              \
        for (size_t i = 0; i < nelems; i++)                                                                            \
            if (active(status, i) && N##_holds(ivars, i, cmp, cmp_value, values))                                      \
                indices[found++] = i;                                                                                  \
        return found;                                                                                                  \
    }                                                                                                                  \
    static bool N##_all_masked(size_t nelems, const int *status)                                                       \
    {                                                                                                                  \
        for (size_t i = 0; i < nelems; i++)                                                                            \
            if (active(status, i))                                                                                     \
                return false;                                                                                          \
        return true;                                                                                                   \
    }                                                                                                                  \
    int shmem_##N##_test_all(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value)                         \
    {                                                                                                                  \
        rma_progress(osh_engine("shmem_" #N "_test_all"));                                                             \
        return N##_test_all_of(ivars, nelems, status, cmp, cmp_value, NULL);                                           \
    }                                                                                                                  \
    size_t shmem_##N##_test_any(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value)                      \
    {                                                                                                                  \
        rma_progress(osh_engine("shmem_" #N "_test_any"));                                                             \
        return N##_test_any_of(ivars, nelems, status, cmp, cmp_value, NULL);                                           \
    }                                                                                                                  \
    size_t shmem_##N##_test_some(T *ivars, size_t nelems, size_t *indices, const int *status, int cmp, T cmp_value)    \
    {                                                                                                                  \
        rma_progress(osh_engine("shmem_" #N "_test_some"));                                                            \
        return N##_test_some_of(ivars, nelems, indices, status, cmp, cmp_value, NULL);                                 \
    }                                                                                                                  \
    int shmem_##N##_test_all_vector(T *ivars, size_t nelems, const int *status, int cmp, T *cmp_values)                \
    {                                                                                                                  \
        rma_progress(osh_engine("shmem_" #N "_test_all_vector"));                                                      \
        return N##_test_all_of(ivars, nelems, status, cmp, 0, cmp_values);                                             \
    }                                                                                                                  \
    size_t shmem_##N##_test_any_vector(T *ivars, size_t nelems, const int *status, int cmp, T *cmp_values)             \
    {                                                                                                                  \
        rma_progress(osh_engine("shmem_" #N "_test_any_vector"));                                                      \
        return N##_test_any_of(ivars, nelems, status, cmp, 0, cmp_values);                                             \
    }                                                                                                                  \
    size_t shmem_##N##_test_some_vector(T *ivars, size_t nelems, size_t *indices, const int *status, int cmp,          \
                                        T *cmp_values)                                                                 \
    {                                                                                                                  \
        rma_progress(osh_engine("shmem_" #N "_test_some_vector"));                                                     \
        return N##_test_some_of(ivars, nelems, indices, status, cmp, 0, cmp_values);                                   \
    }                                                                                                                  \
    void shmem_##N##_wait_until_all(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value)                  \
    {                                                                                                                  \
        rma_engine *e = osh_engine("shmem_" #N "_wait_until_all");                                                     \
        for (long polls = 0; !N##_test_all_of(ivars, nelems, status, cmp, cmp_value, NULL); polls++)                   \
            rma_backoff(e, "shmem_" #N "_wait_until_all", polls);                                                      \
    }                                                                                                                  \
    void shmem_##N##_wait_until_all_vector(T *ivars, size_t nelems, const int *status, int cmp, T *cmp_values)         \
    {                                                                                                                  \
        rma_engine *e = osh_engine("shmem_" #N "_wait_until_all_vector");                                              \
        for (long polls = 0; !N##_test_all_of(ivars, nelems, status, cmp, 0, cmp_values); polls++)                     \
            rma_backoff(e, "shmem_" #N "_wait_until_all_vector", polls);                                               \
    }                                                                                                                  \
    size_t shmem_##N##_wait_until_any(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value)                \
    {                                                                                                                  \
        rma_engine *e = osh_engine("shmem_" #N "_wait_until_any");                                                     \
        if (nelems == 0 || N##_all_masked(nelems, status))                                                             \
            return SIZE_MAX;                                                                                           \
        size_t i;                                                                                                      \
        for (long polls = 0; (i = N##_test_any_of(ivars, nelems, status, cmp, cmp_value, NULL)) == SIZE_MAX; polls++)  \
            rma_backoff(e, "shmem_" #N "_wait_until_any", polls);                                                      \
        return i;                                                                                                      \
    }                                                                                                                  \
    size_t shmem_##N##_wait_until_any_vector(T *ivars, size_t nelems, const int *status, int cmp, T *cmp_values)       \
    {                                                                                                                  \
        rma_engine *e = osh_engine("shmem_" #N "_wait_until_any_vector");                                              \
        if (nelems == 0 || N##_all_masked(nelems, status))                                                             \
            return SIZE_MAX;                                                                                           \
        size_t i;                                                                                                      \
        for (long polls = 0; (i = N##_test_any_of(ivars, nelems, status, cmp, 0, cmp_values)) == SIZE_MAX; polls++)    \
            rma_backoff(e, "shmem_" #N "_wait_until_any_vector", polls);                                               \
        return i;                                                                                                      \
    }                                                                                                                  \
    size_t shmem_##N##_wait_until_some(T *ivars, size_t nelems, size_t *indices, const int *status, int cmp,           \
                                       T cmp_value)                                                                    \
    {                                                                                                                  \
        rma_engine *e = osh_engine("shmem_" #N "_wait_until_some");                                                    \
        if (nelems == 0 || N##_all_masked(nelems, status))                                                             \
            return 0;                                                                                                  \
        size_t found;                                                                                                  \
        for (long polls = 0; (found = N##_test_some_of(ivars, nelems, indices, status, cmp, cmp_value, NULL)) == 0;    \
             polls++)                                                                                                  \
            rma_backoff(e, "shmem_" #N "_wait_until_some", polls);                                                     \
        return found;                                                                                                  \
    }                                                                                                                  \
    size_t shmem_##N##_wait_until_some_vector(T *ivars, size_t nelems, size_t *indices, const int *status, int cmp,    \
                                              T *cmp_values)                                                           \
    {                                                                                                                  \
        rma_engine *e = osh_engine("shmem_" #N "_wait_until_some_vector");                                             \
        if (nelems == 0 || N##_all_masked(nelems, status))                                                             \
            return 0;                                                                                                  \
        size_t found;                                                                                                  \
        for (long polls = 0; (found = N##_test_some_of(ivars, nelems, indices, status, cmp, 0, cmp_values)) == 0;      \
             polls++)                                                                                                  \
            rma_backoff(e, "shmem_" #N "_wait_until_some_vector", polls);                                              \
        return found;                                                                                                  \
    }
SHOAL_SHMEM_SYNC_TYPES(DEFINE_SYNC)

/* The untyped names take a long. */
void shmem_wait_until(long *ivar, int cmp, long cmp_value) { shmem_long_wait_until(ivar, cmp, cmp_value); }
void shmem_wait(long *ivar, long cmp_value) { shmem_long_wait(ivar, cmp_value); }
