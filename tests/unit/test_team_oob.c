/* Building a team without MPI: forked processes reach each other through an
 * out-of-band interface of their own (coll_oob over a small shared anonymous
 * mapping with a sense-reversing barrier), build a team with
 * coll_team_create at 2, 3 and 4 ranks, run a few collectives checked
 * against values computed locally, and leave nothing in /dev/shm. A create
 * that cannot succeed fails on every rank alike, without hanging. */
#include <dirent.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "coll.h"
#include "unit.h"

#define MAX_RANKS 4
#define OOB_BYTES 4096    /* the most one bcast or one rank's allgather part carries */
#define OOB_PATIENCE_S 60 /* a rank that waits longer at the barrier gives up */

/* Shared by the forked ranks, made before the fork. */
typedef struct oob_shared {
    _Atomic int arrived;
    _Atomic int sense;
    char bcast[OOB_BYTES];
    char gather[MAX_RANKS][OOB_BYTES];
} oob_shared;

typedef struct oob_rank {
    oob_shared *sh;
    int n, me;
    int sense; /* this rank's, flipped at every barrier */
} oob_rank;

static void oob_barrier(void *ctx)
{
    oob_rank *r = ctx;
    r->sense = !r->sense;
    if (atomic_fetch_add(&r->sh->arrived, 1) == r->n - 1) {
        atomic_store(&r->sh->arrived, 0);
        atomic_store(&r->sh->sense, r->sense);
        return;
    }
    time_t start = time(NULL);
    while (atomic_load(&r->sh->sense) != r->sense) {
        if (time(NULL) - start > OOB_PATIENCE_S)
            _exit(90); /* a peer is gone: fail rather than hang */
        usleep(50);
    }
}

static void oob_bcast(void *ctx, void *buf, size_t len, int root)
{
    oob_rank *r = ctx;
    if (len > OOB_BYTES)
        _exit(91);
    if (r->me == root)
        memcpy(r->sh->bcast, buf, len);
    oob_barrier(r);
    if (r->me != root)
        memcpy(buf, r->sh->bcast, len);
    oob_barrier(r); /* the next bcast may overwrite it */
}

static void oob_allgather(void *ctx, const void *in, void *out, size_t len)
{
    oob_rank *r = ctx;
    if (len > OOB_BYTES)
        _exit(91);
    memcpy(r->sh->gather[r->me], in, len);
    oob_barrier(r);
    for (int i = 0; i < r->n; i++)
        memcpy((char *)out + (size_t)i * len, r->sh->gather[i], len);
    oob_barrier(r);
}

static bool name_exists(const char *name)
{
    char path[128];
    snprintf(path, sizeof path, "/dev/shm%s", name);
    return access(path, F_OK) == 0;
}

/* Segments in /dev/shm created by process pid. */
static int segments_of(pid_t pid)
{
    char prefix[64];
    snprintf(prefix, sizeof prefix, "shoal-%d-", (int)pid);
    int count = 0;
    DIR *d = opendir("/dev/shm");
    for (struct dirent *e; d && (e = readdir(d));)
        count += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    if (d)
        closedir(d);
    return count;
}

static int cores(void)
{
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    return c > 0 ? (int)c : 1;
}

static int input(int rank, int i) { return (int)(((long)rank * 7919 + (long)i * 104729) % 1000) - 300; }

/* One rank: build a team, run collectives, check them. */
static int run_rank(oob_rank *r)
{
    coll_oob oob = {
        .ctx = r, .n = r->n, .me = r->me, .bcast = oob_bcast, .allgather = oob_allgather, .barrier = oob_barrier};
    coll_team team;
    coll_team_made made;
    coll_team_outcome got = coll_team_create(&team, &oob, r->n, cores(), 0, true, &made);
    CHECK(got == COLL_TEAM_MADE, "rank %d/%d: create gave %d (%s)", r->me, r->n, (int)got, strerror(made.err));
    if (got != COLL_TEAM_MADE)
        return 100;
    CHECK(team.n == r->n && team.me == r->me, "rank %d/%d: team says %d/%d", r->me, r->n, team.me, team.n);
    CHECK(made.id & 1, "rank %d/%d: team id %llu", r->me, r->n, (unsigned long long)made.id);
    /* Every rank has mapped it and coll_team_open has synchronised them: gone. */
    CHECK(!name_exists(team.seg.name), "rank %d/%d: %s still in /dev/shm", r->me, r->n, team.seg.name);

    /* The same team id on every rank. */
    uint64_t ids[MAX_RANKS];
    oob_allgather(r, &made.id, ids, sizeof made.id);
    for (int i = 0; i < r->n; i++)
        CHECK(ids[i] == made.id, "rank %d/%d: rank %d has team id %llx, this one %llx", r->me, r->n, i,
              (unsigned long long)ids[i], (unsigned long long)made.id);

    const int counts[] = {1, 7, 100, 5000, 70000};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        int count = counts[c], root = (int)(c % (size_t)r->n);
        coll_barrier(&team);

        int *b = malloc((size_t)count * sizeof *b);
        for (int i = 0; i < count; i++)
            b[i] = r->me == root ? input(root, i) : -1;
        coll_bcast(&team, b, (size_t)count * sizeof *b, root);
        int bad = -1;
        for (int i = 0; i < count && bad < 0; i++)
            if (b[i] != input(root, i))
                bad = i;
        CHECK(bad < 0, "rank %d/%d: bcast of %d ints from %d, element %d", r->me, r->n, count, root, bad);

        int *x = malloc((size_t)count * sizeof *x), *y = malloc((size_t)count * sizeof *y);
        for (int i = 0; i < count; i++)
            x[i] = input(r->me, i);
        coll_allreduce(&team, x, y, (size_t)count, CORE_INT32, CORE_OP_SUM);
        bad = -1;
        for (int i = 0; i < count && bad < 0; i++) {
            int want = 0;
            for (int k = 0; k < r->n; k++)
                want += input(k, i);
            if (y[i] != want)
                bad = i;
        }
        CHECK(bad < 0, "rank %d/%d: allreduce of %d ints, element %d", r->me, r->n, count, bad);

        int *all = malloc((size_t)count * (size_t)r->n * sizeof *all);
        coll_allgather(&team, x, (size_t)count * sizeof *x, all);
        bad = -1;
        for (int k = 0; k < r->n && bad < 0; k++)
            for (int i = 0; i < count && bad < 0; i++)
                if (all[(size_t)k * (size_t)count + (size_t)i] != input(k, i))
                    bad = k;
        CHECK(bad < 0, "rank %d/%d: allgather of %d ints, the block of rank %d", r->me, r->n, count, bad);
        free(b), free(x), free(y), free(all);
    }
    coll_barrier(&team);
    coll_team_close(&team);
    return unit_failures != 0;
}

/* One rank asking for more than /dev/shm holds: fails alike, holds nothing. */
static int run_rank_no_room(oob_rank *r)
{
    coll_oob oob = {
        .ctx = r, .n = r->n, .me = r->me, .bcast = oob_bcast, .allgather = oob_allgather, .barrier = oob_barrier};
    coll_team team;
    coll_team_made made;
    coll_team_outcome got = coll_team_create(&team, &oob, r->n, cores(), (size_t)1 << 50, true, &made);
    CHECK(got == COLL_TEAM_NO_ROOM, "rank %d/%d: an impossible create gave %d", r->me, r->n, (int)got);
    CHECK(made.err == ENOSPC || made.err == EFBIG || made.err == ENOMEM, "rank %d/%d: error %d (%s)", r->me, r->n,
          made.err, strerror(made.err));
    /* Every rank got here: the oob still works, nobody is stuck inside. */
    oob_barrier(r);
    return unit_failures != 0;
}

static void run_team(int n, int (*rank_fn)(oob_rank *), const char *what)
{
    oob_shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(sh != MAP_FAILED, "shared mapping for the oob");
    if (sh == MAP_FAILED)
        return;
    memset(sh, 0, sizeof *sh);
    pid_t kids[MAX_RANKS];
    for (int me = 0; me < n; me++) {
        kids[me] = fork();
        if (kids[me] == 0) {
            oob_rank r = {.sh = sh, .n = n, .me = me};
            _exit(rank_fn(&r));
        }
    }
    for (int k = 0; k < n; k++) {
        int status;
        waitpid(kids[k], &status, 0);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s, %d ranks: rank %d exit status %d", what, n, k,
              status);
    }
    /* Rank 0 created the segment under its pid. */
    CHECK(segments_of(kids[0]) == 0, "%s, %d ranks: segments left in /dev/shm", what, n);
    munmap(sh, sizeof *sh);
}

int main(void)
{
    for (int n = 2; n <= MAX_RANKS; n++)
        run_team(n, run_rank, "collectives");
    for (int n = 2; n <= 3; n++)
        run_team(n, run_rank_no_room, "no room");
    return unit_done("test_team_oob");
}
