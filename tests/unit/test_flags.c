/* The flag protocol between two processes: ordering of data and posts,
 * waking a sleeping waiter, and ending instead of hanging on a dead peer. */
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core.h"
#include "unit.h"

typedef struct shared {
    core_flag ping, pong;
    uint64_t payload[64]; /* written before each post, checked after each wait */
} shared;

static shared *map_shared(void)
{
    shared *s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    memset(s, 0, sizeof *s);
    return s;
}

/* Ping-pong: each side writes a payload derived from the epoch, posts, and
 * checks the other's payload after its wait returns. */
static int ping_pong(shared *s, core_wait_policy policy, int rounds)
{
    pid_t parent = getpid();
    pid_t child = fork();
    if (child == 0) {
        core_waiter w = {&policy, parent, 0, "test"};
        int bad = 0;
        for (uint64_t e = 1; e <= (uint64_t)rounds; e++) {
            core_flag_wait(&s->ping, e, &w);
            for (int i = 0; i < 64; i++)
                bad += s->payload[i] != e * 1000 + (uint64_t)i;
            for (int i = 0; i < 64; i++)
                s->payload[i] = e * 7000 + (uint64_t)i;
            core_flag_post(&s->pong, e, &policy);
        }
        _exit(bad ? 1 : 0);
    }
    core_waiter w = {&policy, child, 1, "test"};
    int bad = 0;
    for (uint64_t e = 1; e <= (uint64_t)rounds; e++) {
        for (int i = 0; i < 64; i++)
            s->payload[i] = e * 1000 + (uint64_t)i;
        core_flag_post(&s->ping, e, &policy);
        core_flag_wait(&s->pong, e, &w);
        for (int i = 0; i < 64; i++)
            bad += s->payload[i] != e * 7000 + (uint64_t)i;
    }
    int status;
    waitpid(child, &status, 0);
    return bad + (WIFEXITED(status) ? WEXITSTATUS(status) : 99);
}

static void on_fatal(void) { _exit(42); }

int main(void)
{
    /* Spinning, as when each rank has a core. */
    core_wait_policy spin = {.spin = 1000000, .yield_ns = 20000, .sleep_ns = 1000000};
    shared *s = map_shared();
    CHECK(ping_pong(s, spin, 20000) == 0, "spinning ping-pong saw a payload before its post");
    CHECK(core_flag_read(&s->ping) == 20000 && core_flag_read(&s->pong) == 20000, "final epochs");

    /* Taking turns on one core, with the policy shoal picks there: no
     * polling, yielding before sleeping. Both sides pinned to one CPU still
     * see every payload in order. */
    core_wait_policy turns = core_wait_policy_for(2, 1);
    CHECK(turns.spin == 0 && turns.yield_ns > 0, "ranks taking turns poll (%ld) or never yield", turns.spin);
    cpu_set_t was, one;
    CHECK(sched_getaffinity(0, sizeof was, &was) == 0, "sched_getaffinity");
    CPU_ZERO(&one);
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &was)) {
            CPU_SET(c, &one);
            break;
        }
    CHECK(sched_setaffinity(0, sizeof one, &one) == 0, "pinning to one CPU");
    s = map_shared();
    CHECK(ping_pong(s, turns, 20000) == 0, "ping-pong on one CPU saw a payload before its post");
    CHECK(sched_setaffinity(0, sizeof was, &was) == 0, "unpinning");

    /* No spinning, no yielding: every wait goes to sleep on the futex and
     * must be woken by the post (fenced, as the start-up probe's pair). */
    core_wait_policy sleepy = {.spin = 0, .yield_ns = 0, .sleep_ns = 20000000, .fence_posts = true};
    s = map_shared();
    uint64_t t_sleepy = core_now_ns();
    CHECK(ping_pong(s, sleepy, 3000) == 0, "sleeping ping-pong saw a payload before its post");
    CHECK(atomic_load(&s->ping.sleepers) == 0 && atomic_load(&s->pong.sleepers) == 0, "sleepers left registered");
    /* With fenced posts no wake-up is missed: 3000 round trips would take a
     * minute at one 20 ms sleep slice each, they take well under a second. */
    CHECK(core_now_ns() - t_sleepy < 20000000000ull, "fenced posts missed wake-ups (%.1f s)",
          (double)(core_now_ns() - t_sleepy) / 1e9);

    /* Unfenced posts with sleeping waiters: still correct, a missed wake-up
     * costs one short sleep slice at most. */
    core_wait_policy unfenced = {.spin = 0, .yield_ns = 0, .sleep_ns = 1000000, .fence_posts = false};
    s = map_shared();
    CHECK(ping_pong(s, unfenced, 2000) == 0, "unfenced ping-pong saw a payload before its post");

    /* A post long after the waiter fell asleep still wakes it promptly. */
    s = map_shared();
    pid_t poster = fork();
    if (poster == 0) {
        usleep(200000);
        core_flag_post(&s->ping, 5, &sleepy);
        _exit(0);
    }
    core_waiter w = {&sleepy, poster, 1, "test"};
    uint64_t t0 = core_now_ns();
    core_flag_wait(&s->ping, 5, &w);
    double waited = (double)(core_now_ns() - t0) / 1e9;
    CHECK(waited >= 0.15 && waited < 2.0, "woke after %.3f s, the post came at 0.2 s", waited);
    waitpid(poster, NULL, 0);

    /* The process that should post dies: the waiter ends with core_fatal
     * (here exit 42) instead of waiting forever. */
    s = map_shared();
    pid_t victim = fork();
    if (victim == 0) {
        pause();
        _exit(0);
    }
    pid_t waiter = fork();
    if (waiter == 0) {
        core_set_fatal_handler(on_fatal);
        core_waiter vw = {&spin, victim, 3, "test wait"};
        core_flag_wait(&s->ping, 1, &vw);
        _exit(0); /* reached only if the wait returned: wrong */
    }
    usleep(100000);
    kill(victim, SIGKILL);
    waitpid(victim, NULL, 0);
    int status = 0;
    t0 = core_now_ns();
    waitpid(waiter, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 42, "waiter on a dead peer: status %d", status);
    CHECK(core_now_ns() - t0 < 5000000000ull, "dead peer noticed only after %.1f s",
          (double)(core_now_ns() - t0) / 1e9);

    /* A zombie (killed, not yet reaped) counts as dead too. */
    victim = fork();
    if (victim == 0) {
        pause();
        _exit(0);
    }
    kill(victim, SIGKILL);
    usleep(50000);
    CHECK(!core_pid_alive(victim), "a zombie counts as alive");
    waitpid(victim, NULL, 0);
    CHECK(!core_pid_alive(victim), "a reaped process counts as alive");
    CHECK(core_pid_alive(getpid()), "this process counts as dead");

    return unit_done("test_flags");
}
