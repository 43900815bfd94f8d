#include "core_log.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int log_rank = -1;
static int log_level;
static core_fatal_handler fatal_handler;
static pthread_mutex_t once_lock = PTHREAD_MUTEX_INITIALIZER;

/* Messages already printed once: a small hash set of message hashes. */
#define ONCE_SLOTS 1024
static unsigned long long once_seen[ONCE_SLOTS];

void core_log_set_rank(int rank) { log_rank = rank; }
void core_log_set_verbosity(int level) { log_level = level; }
int core_log_verbosity(void) { return log_level; }

static void emit(const char *kind, const char *fmt, va_list ap)
{
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    /* One fprintf so lines of different ranks do not interleave mid-line. */
    if (log_rank >= 0)
        fprintf(stderr, "shoal[%d]: %s%s\n", log_rank, kind, msg);
    else
        fprintf(stderr, "shoal: %s%s\n", kind, msg);
}

static unsigned long long hash_str(const char *s)
{
    unsigned long long h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h | 1; /* never 0: 0 marks an empty slot */
}

/* True the first time this message is seen in the process. */
static int first_time(const char *msg)
{
    unsigned long long h = hash_str(msg);
    int fresh = 0;
    pthread_mutex_lock(&once_lock);
    for (unsigned i = 0; i < ONCE_SLOTS; i++) {
        unsigned long long *slot = &once_seen[(h + i) % ONCE_SLOTS];
        if (*slot == h)
            break;
        if (*slot == 0) {
            *slot = h;
            fresh = 1;
            break;
        }
    }
    pthread_mutex_unlock(&once_lock);
    return fresh;
}

void core_log_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit("error: ", fmt, ap);
    va_end(ap);
}

static void log_once_kind(const char *kind, const char *fmt, va_list ap)
{
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (first_time(msg)) {
        if (log_rank >= 0)
            fprintf(stderr, "shoal[%d]: %s%s\n", log_rank, kind, msg);
        else
            fprintf(stderr, "shoal: %s%s\n", kind, msg);
    }
}

void core_log_once(const char *fmt, ...)
{
    if (log_level < 1)
        return;
    va_list ap;
    va_start(ap, fmt);
    log_once_kind("", fmt, ap);
    va_end(ap);
}

void core_log_warn_once(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_once_kind("warning: ", fmt, ap);
    va_end(ap);
}

void core_log_debug(int level, const char *fmt, ...)
{
    if (log_level < level)
        return;
    va_list ap;
    va_start(ap, fmt);
    emit("", fmt, ap);
    va_end(ap);
}

void core_log_settle(void)
{
    fflush(NULL);
    struct timespec pause = {.tv_sec = 0, .tv_nsec = 200 * 1000 * 1000};
    nanosleep(&pause, NULL);
}

void core_set_fatal_handler(core_fatal_handler handler) { fatal_handler = handler; }

void core_fatal(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit("fatal: ", fmt, ap);
    va_end(ap);
    core_log_settle();
    if (fatal_handler)
        fatal_handler();
    exit(1);
}
