/* core_sys: small facts about the machine and the processes on it. */
#ifndef SHOAL_CORE_SYS_H
#define SHOAL_CORE_SYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CORE_CACHELINE 64
/* Per-thread state on the path of every call: the initial-exec model reads
 * it at a fixed offset instead of calling __tls_get_addr. The library is
 * loaded at start-up (LD_PRELOAD or the link); a dlopen also works, its few
 * bytes of TLS fitting the static surplus the C library keeps. */
#define CORE_THREAD_LOCAL __thread __attribute__((tls_model("initial-exec")))
/* A flag takes this many bytes: its value has a 128-byte aligned pair of
 * lines to itself (x86 cores fetch the pair together), the sleeper count
 * another pair, so neighbouring flags never share traffic. */
#define CORE_FLAG_STRIDE 256

/* Cores this process may run on (its affinity mask), at least 1. */
int core_cpu_count(void);

/* Two different CPUs, *ca from mask a and *cb from mask b, taking prefer_a
 * and prefer_b (-1: none) where they may be taken. False when there are no
 * such two: both masks hold the same one CPU, or one is empty. Masks are
 * cpu_set_t (sched.h), passed as void * so that callers need not see it. */
bool core_cpus_apart(const void *a, int prefer_a, const void *b, int prefer_b, int *ca, int *cb);
/* Whether masks a and b (cpu_set_t) share no CPU: the two never meet on one. */
bool core_cpus_disjoint(const void *a, const void *b);

/* Of n processes with affinity masks masks[0..n) (cpu_set_t, empty where
 * unknown), the first after the first that can run beside it: one sharing
 * none of its CPUs, else one that may run on a CPU other than one of its;
 * -1 where none can (every one bound to the first one's only CPU). Two
 * processes timed on one core would time the scheduler's hand-offs. */
int core_cpus_partner(const void *masks, int n);

/* Monotonic time in nanoseconds. */
uint64_t core_now_ns(void);

/* Fills buf with unpredictable bytes (getrandom, then /dev/urandom). */
bool core_random_bytes(void *buf, size_t len);

/* FNV-1a: folds len bytes into the hash h (start from CORE_HASH_START).
 * For fingerprints that ranks compare, not for security. */
#define CORE_HASH_START 0xcbf29ce484222325ull
uint64_t core_hash(uint64_t h, const void *p, size_t len);

/* Names the running kernel (a hash of its boot id), alike in every
 * container and namespace on one machine; 0 where unknown. */
uint64_t core_kernel_id(void);

/* False once the process is gone or a zombie: a peer that died. */
bool core_pid_alive(pid_t pid);

/* The median of n > 0 values (sorts them in place): the middle one, or the
 * mean of the middle two when n is even. */
double core_median(double *v, int n);

static inline void core_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Asks for the line at p in a writable state, without waiting: a later
 * store to a line a core of another process last read then finds it here
 * instead of stalling behind the invalidation. A hint: nothing changes but
 * time. (GCC's __builtin_prefetch(p, 1) emits a read prefetch on x86-64
 * unless the target has PRFCHW; PREFETCHW runs as a no-op on the x86 cores
 * that predate it.) */
static inline void core_prefetch_for_write(const void *p)
{
#if defined(__x86_64__) || defined(__i386__)
    __asm__ __volatile__("prefetchw %0" : : "m"(*(const char *)p));
#else
    __builtin_prefetch(p, 1, 3);
#endif
}

/* Moves the line at p from this core's private caches to the shared one,
 * where another core reading it next finds it a hop sooner than in this
 * core's (a 2-line handoff between two cores of a Xeon VM: 0.27 us one way
 * without, 0.20 with). A hint: CLDEMOTE runs as a no-op on the x86 cores
 * that predate it, and elsewhere nothing is done. */
static inline void core_cache_demote(const void *p)
{
#if defined(__x86_64__)
    __asm__ __volatile__("cldemote %0" : : "m"(*(const char *)p));
#else
    (void)p;
#endif
}

static inline size_t core_align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

/* The exponent of the largest power of two at or below v (0 for 0 and 1). */
static inline int core_log2_floor(size_t v) { return v ? 63 - __builtin_clzll((unsigned long long)v) : 0; }

#endif
