/* core_flag: sequence flags in shared memory and polite waiting on them.
 *
 * A flag holds a 64-bit value that only its owner writes and that only grows
 * (an epoch). Posting is a release store; waiting is "until value >= target"
 * with acquire ordering, so what the owner wrote before posting is visible to
 * a waiter that saw the post. No lock and no read-modify-write on the hot
 * path: the owner stores, readers load.
 *
 * Waiting spins briefly (not at all where ranks take turns on cores), then
 * yields for a while, then sleeps on a futex. A waiter that
 * sleeps announces itself in the flag's second cache line; the owner wakes it
 * after posting. While asleep the waiter checks now and then that the owner
 * is still alive, and ends the job with a message if it died (core_fatal).
 * A waiter that yields or sleeps also calls the idle hook, where an upper
 * layer set one (the MPI layer: the host MPI's progress, which a peer on
 * another node, or an origin of one-sided access to this rank, may be
 * waiting on), at most once a period while it yields and after each sleep. */
#ifndef SHOAL_CORE_FLAG_H
#define SHOAL_CORE_FLAG_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core_sys.h"

typedef struct core_flag {
    _Alignas(128) _Atomic uint64_t value;
    _Alignas(128) _Atomic uint32_t sleepers; /* waiters inside futex_wait on value */
} core_flag;

_Static_assert(sizeof(core_flag) == CORE_FLAG_STRIDE, "a flag takes two pairs of cache lines");

/* How a rank waits; derived once from the oversubscription of the node. */
typedef struct core_wait_policy {
    long spin;         /* polls before the first yield */
    uint64_t yield_ns; /* how long to yield before sleeping */
    long sleep_ns;     /* one futex sleep, before looking again */
    /* Posts fence before looking for sleepers, so that no wake-up is ever
     * missed. The fence waits for the flag line's ownership on every post,
     * while waiters seldom sleep, so core_wait_policy_for never asks for
     * it: a wake-up missed in the rare race costs one sleep_ns (1 ms). The
     * start-up probe's timed pair fences, so that no timing holds a miss. */
    bool fence_posts;
    uint64_t timeout_ns; /* 0: no limit (dead peers are still detected) */
} core_wait_policy;

/* local_ranks processes share cores cores: spin long when each has a core,
 * hardly at all when they must take turns. SHOAL_SPIN overrides. */
core_wait_policy core_wait_policy_for(int local_ranks, int cores);

/* Who the waiter waits for, for liveness checks and messages. */
typedef struct core_waiter {
    const core_wait_policy *policy;
    pid_t owner_pid;   /* the process that posts the flag */
    int owner_rank;    /* its rank, for messages */
    const char *doing; /* what we are in, for messages: "MPI_Allreduce" */
} core_waiter;

static inline uint64_t core_flag_read(const core_flag *f)
{
    return atomic_load_explicit(&f->value, memory_order_acquire);
}

void core_flag_post(core_flag *f, uint64_t value, const core_wait_policy *policy);

/* What a long wait runs between looks at the flag (NULL: nothing), at most
 * once every every_ns while it yields (0: after every yield). While one is
 * set, a sleep lasts at most 1 ms between calls. */
typedef void (*core_idle_fn)(void);
void core_flag_set_idle(core_idle_fn fn, uint64_t every_ns);

/* Returns once f->value >= target. */
static inline void core_flag_wait_slow(const core_flag *f, uint64_t target, const core_waiter *w);
void core_flag_wait_sleep(const core_flag *f, uint64_t target, const core_waiter *w);

static inline void core_flag_wait(const core_flag *f, uint64_t target, const core_waiter *w)
{
    if (core_flag_read(f) >= target)
        return;
    core_flag_wait_slow(f, target, w);
}

static inline void core_flag_wait_slow(const core_flag *f, uint64_t target, const core_waiter *w)
{
    for (long i = 0; i < w->policy->spin; i++) {
        core_cpu_relax();
        if (core_flag_read(f) >= target)
            return;
    }
    core_flag_wait_sleep(f, target, w);
}

#endif
