#include "core_flag.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core_config.h"
#include "core_log.h"

/* Futexes compare 32 bits: the low half of the value (little-endian), which
 * changes on every post. */
static inline uint32_t *futex_word(const core_flag *f) { return (uint32_t *)(uintptr_t)&f->value; }

static void futex_wake_all(const core_flag *f)
{
    syscall(SYS_futex, futex_word(f), FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static void futex_wait_for(const core_flag *f, uint32_t seen, long ns)
{
    struct timespec ts = {.tv_sec = ns / 1000000000L, .tv_nsec = ns % 1000000000L};
    syscall(SYS_futex, futex_word(f), FUTEX_WAIT, seen, &ts, NULL, 0);
}

core_wait_policy core_wait_policy_for(int local_ranks, int cores)
{
    const core_config *cfg = core_config_get();
    core_wait_policy p;
    if (local_ranks > cores) {
        /* Taking turns: the peer we wait for may need our core, so give it
         * at once. Polling first, even briefly, holds the core for
         * microseconds (a pause is tens of cycles) on every wait of every
         * step; that, not the handover, was most of a small collective's
         * time at 4 ranks on 2 cores. Yielding keeps the waiter runnable,
         * so the post needs no futex wake-up, which costs the poster a
         * system call and the waiter a trip through the scheduler. The
         * waits of a large call (1-2 ms in an alltoall of 2 MiB blocks at
         * 4 ranks on 2 cores) yield throughout, as the host MPI's ranks
         * do there: that alltoall ran 0.91x of Open MPI's when its waiters
         * slept after 200 us, 0.96x after 2 ms. Longer waits (an
         * imbalanced program) sleep. */
        p.spin = 0;
        p.yield_ns = 2000000;
    } else {
        /* Roughly 20-50 us of polling, then yielding; sleeping is for long
         * waits only. */
        p.spin = 20000;
        p.yield_ns = 50000;
    }
    /* Posts do not fence (the fence waits for the flag line's ownership,
     * some 70 ns of every post, a third of a small gather's non-root at 4
     * ranks on 2 cores): a wake-up missed in the rare race with a waiter
     * falling asleep costs one slice of 1 ms. */
    p.sleep_ns = 1000000L;
    p.fence_posts = false;
    if (cfg->spin >= 0)
        p.spin = cfg->spin;
    p.timeout_ns = (uint64_t)(cfg->timeout_s * 1e9);
    return p;
}

void core_flag_post(core_flag *f, uint64_t value, const core_wait_policy *policy)
{
    atomic_store_explicit(&f->value, value, memory_order_release);
    /* Pairs with the fence in core_flag_wait_sleep: either the sleeper sees
     * the new value or we see the sleeper. */
    if (policy->fence_posts)
        atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&f->sleepers, memory_order_relaxed))
        futex_wake_all(f);
}

#define LIVENESS_EVERY_NS 100000000ull /* 0.1 s */
#define IDLE_SLEEP_NS 1000000L         /* 1 ms: the longest sleep between idle calls */

static _Atomic(core_idle_fn) idle_hook;
static _Atomic uint64_t idle_every_ns;

void core_flag_set_idle(core_idle_fn fn, uint64_t every_ns)
{
    atomic_store_explicit(&idle_every_ns, every_ns, memory_order_relaxed);
    atomic_store_explicit(&idle_hook, fn, memory_order_release);
}

static void run_idle_hook(void)
{
    core_idle_fn fn = atomic_load_explicit(&idle_hook, memory_order_acquire);
    if (fn)
        fn();
}

void core_flag_wait_sleep(const core_flag *f, uint64_t target, const core_waiter *w)
{
    core_flag *mf = (core_flag *)(uintptr_t)f; /* sleepers is the waiters' word */
    uint64_t start = core_now_ns(), last_check = start, last_idle = start, now;
    uint64_t idle_every = atomic_load_explicit(&idle_every_ns, memory_order_relaxed);
    do {
        sched_yield();
        now = core_now_ns();
        if (now - last_idle >= idle_every) {
            last_idle = now;
            run_idle_hook();
        }
        if (core_flag_read(f) >= target)
            return;
    } while (now - start < w->policy->yield_ns);
    for (;;) {
        atomic_fetch_add_explicit(&mf->sleepers, 1, memory_order_relaxed);
        atomic_thread_fence(memory_order_seq_cst);
        uint64_t v = core_flag_read(f);
        long sleep_ns = w->policy->sleep_ns;
        if (atomic_load_explicit(&idle_hook, memory_order_relaxed) && sleep_ns > IDLE_SLEEP_NS)
            sleep_ns = IDLE_SLEEP_NS;
        if (v < target)
            futex_wait_for(f, (uint32_t)v, sleep_ns);
        atomic_fetch_sub_explicit(&mf->sleepers, 1, memory_order_relaxed);
        if (core_flag_read(f) >= target)
            return;
        run_idle_hook();

        now = core_now_ns();
        if (now - last_check >= LIVENESS_EVERY_NS) {
            last_check = now;
            if (!core_pid_alive(w->owner_pid))
                core_fatal("local rank %d (pid %d) died during %s; ending the job instead of waiting forever",
                           w->owner_rank, (int)w->owner_pid, w->doing ? w->doing : "a collective");
            if (w->policy->timeout_ns && now - start > w->policy->timeout_ns)
                core_fatal(
                    "no progress from local rank %d (pid %d) for %.1f s during %s (SHOAL_TIMEOUT); ending the job",
                    w->owner_rank, (int)w->owner_pid, (double)(now - start) / 1e9,
                    w->doing ? w->doing : "a collective");
        }
    }
}
