#include "core_sys.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

int core_cpu_count(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0)
            return n;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* A CPU of mask other than `not` (-1: none), `prefer` if it may be; -1 if none. */
static int cpu_of(const cpu_set_t *mask, int prefer, int not )
{
    if (prefer >= 0 && prefer < CPU_SETSIZE && prefer != not &&CPU_ISSET(prefer, mask))
        return prefer;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (c != not &&CPU_ISSET(c, mask))
            return c;
    return -1;
}

bool core_cpus_apart(const void *a, int prefer_a, const void *b, int prefer_b, int *ca, int *cb)
{
    const cpu_set_t *ma = a, *mb = b;
    /* a's preferred CPU first; failing that, any CPU of a that leaves b one. */
    int first = cpu_of(ma, prefer_a, -1);
    if (first >= 0 && cpu_of(mb, prefer_b, first) < 0)
        first = cpu_of(ma, -1, first);
    int second = first >= 0 ? cpu_of(mb, prefer_b, first) : -1;
    if (second < 0)
        return false;
    *ca = first;
    *cb = second;
    return true;
}

bool core_cpus_disjoint(const void *a, const void *b)
{
    cpu_set_t shared;
    CPU_AND(&shared, (const cpu_set_t *)a, (const cpu_set_t *)b);
    return CPU_COUNT(&shared) == 0;
}

int core_cpus_partner(const void *masks, int n)
{
    const cpu_set_t *m = masks;
    for (int r = 1; r < n; r++)
        if (core_cpus_disjoint(&m[0], &m[r]))
            return r;
    for (int r = 1; r < n; r++) {
        int a, b;
        if (core_cpus_apart(&m[0], -1, &m[r], -1, &a, &b))
            return r;
    }
    return -1;
}

uint64_t core_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

bool core_random_bytes(void *buf, size_t len)
{
    char *p = buf;
    size_t got = 0;
    while (got < len) {
        ssize_t r = getrandom(p + got, len - got, 0);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        got += (size_t)r;
    }
    if (got == len)
        return true;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    while (got < len) {
        ssize_t r = read(fd, p + got, len - got);
        if (r <= 0) {
            if (r < 0 && errno == EINTR)
                continue;
            break;
        }
        got += (size_t)r;
    }
    close(fd);
    return got == len;
}

uint64_t core_hash(uint64_t h, const void *p, size_t len)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < len; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

uint64_t core_kernel_id(void)
{
    char id[64];
    int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t got = read(fd, id, sizeof id);
    close(fd);
    if (got <= 0)
        return 0;
    uint64_t h = core_hash(CORE_HASH_START, id, (size_t)got);
    return h ? h : 1;
}

bool core_pid_alive(pid_t pid)
{
    if (pid <= 0)
        return true; /* unknown: never declare dead on a guess */
    if (kill(pid, 0) != 0 && errno == ESRCH)
        return false;
    /* A killed rank stays a zombie until its launcher reaps it. */
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno != ENOENT;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return true;
    buf[n] = 0;
    const char *paren = strrchr(buf, ')');
    if (paren && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X'))
        return false;
    return true;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double core_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
