/* Persistent point-to-point and MPI_Isendrecv on a thread communicator:
 * every process starts T threads (T+1 on odd ranks with --uneven), each a
 * rank, and each checks against values computed locally from the ranks:
 * a halo exchange around the ring (same-process and cross-process peers)
 * with persistent requests started many times, the buffers rewritten each
 * time, in one MPI_Startall with host persistent requests, completed by each
 * member of the wait family in turn; inactive requests waited on (an empty
 * status at once); each send mode; a derived datatype freed after the init;
 * MPI_PROC_NULL; MPI_Request_get_status; MPI_Request_free of inactive and
 * active requests; MPI_Cancel of a started receive; wrong arguments and
 * truncation through MPI_ERRORS_RETURN; MPI_Isendrecv and MPI_Isendrecv_replace where the
 * host's header has them.
 *   threadcomm_persist_check [--threads T] [--uneven] [--iterations N] */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_common.h"
#include "mpix_threadcomm.h"
#include "threadcomm_common.h"

#if MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
#define HAVE_ISENDRECV 1
#endif

static int threads_here, world_size, iterations = 40;
static int total_ranks;
static MPI_Comm tcomm, hostcomm; /* hostcomm: a duplicate of MPI_COMM_WORLD */

static int count_of(const MPI_Status *st)
{
    int n = -1;
    MPI_Get_count(st, MPI_INT, &n);
    return n;
}

static bool is_empty(const MPI_Status *st)
{
    return st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG && count_of(st) == 0;
}

/* Completes every request of the array, each returned once, by one member
 * of the wait family (form), and gathers the statuses by index. */
static void complete_all(int n, MPI_Request reqs[], MPI_Status sts[], int form)
{
    int seen[8] = {0}, done = 0;
    MPI_Status st[8];
    int indices[8];
    switch (form) {
    case 0: MPI_Waitall(n, reqs, sts); return;
    case 1:
        for (;;) {
            int index = -1;
            MPI_Waitany(n, reqs, &index, &st[0]);
            if (index == MPI_UNDEFINED)
                break;
            EXPECT(index >= 0 && index < n && !seen[index], "waitany returned %d twice or out of range", index);
            if (index < 0 || index >= n)
                break;
            seen[index] = 1, done++;
            sts[index] = st[0];
        }
        break;
    case 2:
        for (;;) {
            int outcount = 0;
            MPI_Testsome(n, reqs, &outcount, indices, st);
            if (outcount == MPI_UNDEFINED)
                break;
            for (int k = 0; k < outcount; k++) {
                int i = indices[k];
                EXPECT(i >= 0 && i < n && !seen[i], "testsome returned %d twice or out of range", i);
                if (i >= 0 && i < n)
                    seen[i] = 1, done++, sts[i] = st[k];
            }
        }
        break;
    case 3: {
        int flag = 0;
        while (!flag)
            MPI_Testall(n, reqs, &flag, sts);
        return;
    }
    default:
        for (int i = n - 1; i >= 0; i--)
            MPI_Wait(&reqs[i], &sts[i]);
        return;
    }
    EXPECT(done == n, "form %d completed %d of %d requests", form, done, n);
}

/* The halo exchange: each rank sends to both neighbours and receives from
 * both, with persistent requests, and its process sends itself a message on
 * hostcomm with host persistent requests, all started by one MPI_Startall. */
static void halo(int rank, int size, int n)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int *to_right = malloc(sizeof(int) * n), *to_left = malloc(sizeof(int) * n);
    int *from_left = malloc(sizeof(int) * n), *from_right = malloc(sizeof(int) * n);
    int *host_out = malloc(sizeof(int) * n), *host_in = malloc(sizeof(int) * n);
    MPI_Request reqs[6], first[6];
    /* Receives first: so a message to itself (size 1) finds its receive. */
    MPI_Recv_init(from_left, n, MPI_INT, left, 1, tcomm, &reqs[0]);
    MPI_Recv_init(from_right, n, MPI_INT, right, 2, tcomm, &reqs[1]);
    MPI_Recv_init(host_in, n, MPI_INT, world_rank, 1000 + rank, hostcomm, &reqs[2]);
    MPI_Send_init(to_right, n, MPI_INT, right, 1, tcomm, &reqs[3]);
    MPI_Send_init(to_left, n, MPI_INT, left, 2, tcomm, &reqs[4]);
    MPI_Send_init(host_out, n, MPI_INT, world_rank, 1000 + rank, hostcomm, &reqs[5]);
    memcpy(first, reqs, sizeof reqs);
    for (int it = 0; it < iterations; it++) {
        for (int i = 0; i < n; i++) {
            to_right[i] = value(rank, i, it);
            to_left[i] = value(rank, i, -it);
            host_out[i] = value(rank, i, 3 * it);
            from_left[i] = from_right[i] = host_in[i] = -1;
        }
        MPI_Status sts[6];
        int form = it % 5;
        int rc = MPI_SUCCESS;
        if (form == 4) {
            for (int i = 0; i < 6; i++)
                rc |= MPI_Start(&reqs[i]);
        } else {
            rc = MPI_Startall(6, reqs);
        }
        EXPECT(rc == MPI_SUCCESS, "n=%d it=%d: starting the requests failed", n, it);
        complete_all(6, reqs, sts, form);
        for (int i = 0; i < n; i++) {
            EXPECT(from_left[i] == value(left, i, it), "n=%d it=%d from_left[%d]=%d", n, it, i, from_left[i]);
            EXPECT(from_right[i] == value(right, i, -it), "n=%d it=%d from_right[%d]=%d", n, it, i, from_right[i]);
            EXPECT(host_in[i] == value(rank, i, 3 * it), "n=%d it=%d host_in[%d]=%d", n, it, i, host_in[i]);
        }
        EXPECT(sts[0].MPI_SOURCE == left && sts[0].MPI_TAG == 1 && count_of(&sts[0]) == n,
               "n=%d it=%d form %d: left status %d %d %d", n, it, form, sts[0].MPI_SOURCE, sts[0].MPI_TAG,
               count_of(&sts[0]));
        EXPECT(sts[1].MPI_SOURCE == right && sts[1].MPI_TAG == 2 && count_of(&sts[1]) == n,
               "n=%d it=%d form %d: right status %d %d %d", n, it, form, sts[1].MPI_SOURCE, sts[1].MPI_TAG,
               count_of(&sts[1]));
        EXPECT(sts[2].MPI_SOURCE == world_rank && sts[2].MPI_TAG == 1000 + rank && count_of(&sts[2]) == n,
               "n=%d it=%d form %d: host status %d %d", n, it, form, sts[2].MPI_SOURCE, sts[2].MPI_TAG);
        for (int i = 0; i < 6; i++)
            EXPECT(reqs[i] == first[i], "n=%d it=%d form %d: persistent request %d changed", n, it, form, i);
        /* Inactive now: a wait or a test returns at once, with an empty status. */
        MPI_Status st;
        memset(&st, 0x5a, sizeof st);
        MPI_Wait(&reqs[it % 6], &st);
        EXPECT(is_empty(&st) && reqs[it % 6] == first[it % 6], "it=%d: waiting on inactive request %d", it, it % 6);
        int flag = 0;
        memset(&st, 0x5a, sizeof st);
        MPI_Test(&reqs[(it + 1) % 6], &flag, &st);
        EXPECT(flag && is_empty(&st), "it=%d: testing inactive request %d: flag %d", it, (it + 1) % 6, flag);
        flag = 0;
        memset(&st, 0x5a, sizeof st);
        MPI_Request_get_status(reqs[(it + 2) % 6], &flag, &st);
        EXPECT(flag && is_empty(&st), "it=%d: the status of inactive request %d: flag %d", it, (it + 2) % 6, flag);
    }
    for (int i = 0; i < 6; i++) {
        MPI_Request_free(&reqs[i]);
        EXPECT(reqs[i] == MPI_REQUEST_NULL, "request %d not freed", i);
    }
    free(to_right), free(to_left), free(from_left), free(from_right), free(host_out), free(host_in);
}

/* Each send mode's init, a few starts each; a ready send's receive is
 * posted (started) before the barrier that precedes it. */
static void send_modes(int rank, int size)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int (*inits[4])(const void *, int, MPI_Datatype, int, int, MPI_Comm,
                    MPI_Request *) = {MPI_Send_init, MPI_Ssend_init, MPI_Bsend_init, MPI_Rsend_init};
    static const char *names[4] = {"Send_init", "Ssend_init", "Bsend_init", "Rsend_init"};
    for (int mode = 0; mode < 4; mode++) {
        int out[64], in[64];
        MPI_Request send, recv;
        inits[mode](out, 64, MPI_INT, right, 20 + mode, tcomm, &send);
        MPI_Recv_init(in, 64, MPI_INT, left, 20 + mode, tcomm, &recv);
        for (int it = 0; it < 4; it++) {
            for (int i = 0; i < 64; i++)
                out[i] = value(rank, i, 50 * mode + it), in[i] = -1;
            MPI_Start(&recv);
            if (mode == 3)
                MPI_Barrier(tcomm);
            MPI_Start(&send);
            /* MPI_Request_get_status reports it done without completing it. */
            int done = 0;
            while (!done)
                MPI_Request_get_status(recv, &done, MPI_STATUS_IGNORE);
            MPI_Request both[2] = {send, recv};
            MPI_Status sts[2];
            MPI_Waitall(2, both, sts);
            EXPECT(both[0] == send && both[1] == recv, "%s: the handles changed", names[mode]);
            EXPECT(sts[1].MPI_SOURCE == left && sts[1].MPI_TAG == 20 + mode, "%s: status %d %d", names[mode],
                   sts[1].MPI_SOURCE, sts[1].MPI_TAG);
            for (int i = 0; i < 64; i++)
                EXPECT(in[i] == value(left, i, 50 * mode + it), "%s it=%d in[%d]=%d", names[mode], it, i, in[i]);
        }
        MPI_Request_free(&send);
        MPI_Request_free(&recv);
    }
}

/* A strided datatype, freed by the user after the init: the requests keep
 * their own. MPI_PROC_NULL peers complete at once, a receive's status says
 * MPI_PROC_NULL. */
static void derived_and_null(int rank, int size)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Datatype every_other;
    MPI_Type_vector(50, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    int out[100], in[100], unused = 0;
    MPI_Request reqs[4];
    MPI_Recv_init(in, 1, every_other, left, 30, tcomm, &reqs[0]);
    MPI_Send_init(out, 1, every_other, right, 30, tcomm, &reqs[1]);
    MPI_Recv_init(&unused, 1, MPI_INT, MPI_PROC_NULL, 31, tcomm, &reqs[2]);
    MPI_Send_init(&unused, 1, MPI_INT, MPI_PROC_NULL, 31, tcomm, &reqs[3]);
    MPI_Type_free(&every_other);
    for (int it = 0; it < 3; it++) {
        for (int i = 0; i < 100; i++)
            out[i] = value(rank, i, 70 + it), in[i] = -1;
        MPI_Startall(4, reqs);
        MPI_Status sts[4];
        MPI_Waitall(4, reqs, sts);
        for (int i = 0; i < 100; i++)
            EXPECT(in[i] == (i % 2 ? -1 : value(left, i, 70 + it)), "strided it=%d in[%d]=%d", it, i, in[i]);
        EXPECT(sts[2].MPI_SOURCE == MPI_PROC_NULL && sts[2].MPI_TAG == MPI_ANY_TAG && count_of(&sts[2]) == 0,
               "MPI_PROC_NULL receive's status %d %d", sts[2].MPI_SOURCE, sts[2].MPI_TAG);
    }
    for (int i = 0; i < 4; i++)
        MPI_Request_free(&reqs[i]);
}

/* MPI_Request_free of active persistent requests: the operations still
 * complete (the receive's sender uses MPI_Ssend, done once the receive has
 * taken its message, and the barrier after orders it before the check);
 * MPI_Cancel of a started receive no message matches, then the same
 * request started again and received into. */
static void free_active_and_cancel(int rank, int size)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out = value(rank, 0, 40), in = -1, got = -1;
    MPI_Request send, recv;
    MPI_Send_init(&out, 1, MPI_INT, right, 40, tcomm, &send);
    MPI_Start(&send);
    MPI_Request_free(&send);
    EXPECT(send == MPI_REQUEST_NULL, "active send not freed");
    MPI_Recv(&got, 1, MPI_INT, left, 40, tcomm, MPI_STATUS_IGNORE);
    EXPECT(got == value(left, 0, 40), "freed active send delivered %d", got);

    MPI_Recv_init(&in, 1, MPI_INT, left, 41, tcomm, &recv);
    MPI_Start(&recv);
    MPI_Request_free(&recv);
    EXPECT(recv == MPI_REQUEST_NULL, "active receive not freed");
    int out2 = value(rank, 1, 41);
    MPI_Ssend(&out2, 1, MPI_INT, right, 41, tcomm);
    MPI_Barrier(tcomm);
    EXPECT(in == value(left, 1, 41), "freed active receive got %d", in);

    int late = -1;
    MPI_Recv_init(&late, 1, MPI_INT, left, 42, tcomm, &recv);
    MPI_Request kept = recv;
    MPI_Start(&recv);
    MPI_Cancel(&recv);
    MPI_Status st;
    MPI_Wait(&recv, &st);
    int cancelled = 0;
    MPI_Test_cancelled(&st, &cancelled);
    EXPECT(cancelled && recv == kept && late == -1, "cancelled persistent receive: cancelled %d, got %d", cancelled,
           late);
    MPI_Barrier(tcomm); /* every receive cancelled before any message of tag 42 */
    MPI_Start(&recv);
    int out3 = value(rank, 2, 42);
    MPI_Send(&out3, 1, MPI_INT, right, 42, tcomm);
    MPI_Wait(&recv, &st);
    MPI_Test_cancelled(&st, &cancelled);
    EXPECT(!cancelled && late == value(left, 2, 42) && st.MPI_SOURCE == left,
           "restarted receive: cancelled %d, got %d from %d", cancelled, late, st.MPI_SOURCE);
    MPI_Request_free(&recv);
}

/* Wrong arguments: an error class through MPI_ERRORS_RETURN, nothing made. */
static void errors(int rank, int size)
{
    int buf = 0, class = 0;
    MPI_Request req = MPI_REQUEST_NULL;
    int rc = MPI_Send_init(&buf, 1, MPI_INT, size, 0, tcomm, &req);
    MPI_Error_class(rc, &class);
    EXPECT(class == MPI_ERR_RANK && req == MPI_REQUEST_NULL, "Send_init to rank %d: class %d", size, class);
    rc = MPI_Recv_init(&buf, 1, MPI_INT, 0, -5, tcomm, &req);
    MPI_Error_class(rc, &class);
    EXPECT(class == MPI_ERR_TAG && req == MPI_REQUEST_NULL, "Recv_init with tag -5: class %d", class);
    rc = MPI_Send_init(&buf, -1, MPI_INT, rank, 0, tcomm, &req);
    MPI_Error_class(rc, &class);
    EXPECT(class == MPI_ERR_COUNT && req == MPI_REQUEST_NULL, "Send_init of count -1: class %d", class);
    /* Starting an active request. */
    MPI_Recv_init(&buf, 1, MPI_INT, rank, 43, tcomm, &req);
    MPI_Start(&req);
    rc = MPI_Start(&req);
    MPI_Error_class(rc, &class);
    EXPECT(class == MPI_ERR_REQUEST, "MPI_Start of an active request: class %d", class);
    int mine = value(rank, 0, 43);
    MPI_Send(&mine, 1, MPI_INT, rank, 43, tcomm);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    EXPECT(buf == mine, "after the refused start: got %d", buf);
    MPI_Request_free(&req);
    /* A persistent receive too short for its message: MPI_ERR_TRUNCATE at
     * each completion, the request inactive and reusable after. */
    int two[2] = {value(rank, 0, 44), value(rank, 1, 44)}, one = -1;
    MPI_Request send;
    MPI_Recv_init(&one, 1, MPI_INT, rank, 44, tcomm, &req);
    MPI_Send_init(two, 2, MPI_INT, rank, 44, tcomm, &send);
    for (int it = 0; it < 2; it++) {
        MPI_Start(&req);
        MPI_Start(&send);
        MPI_Wait(&send, MPI_STATUS_IGNORE);
        MPI_Status st;
        rc = MPI_Wait(&req, &st);
        MPI_Error_class(rc, &class);
        EXPECT(class == MPI_ERR_TRUNCATE && one == two[0] && req != MPI_REQUEST_NULL,
               "truncated persistent receive: class %d, got %d", class, one);
    }
    MPI_Request_free(&req);
    MPI_Request_free(&send);
}

#ifdef HAVE_ISENDRECV
/* MPI_Isendrecv around the ring, in one wait with a plain receive, and
 * MPI_Isendrecv_replace with a strided datatype; MPI_PROC_NULL peers. */
static void isendrecv(int rank, int size)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    static const int counts[] = {0, 1, 100, 3000};
    for (size_t k = 0; k < sizeof counts / sizeof *counts; k++) {
        int n = counts[k];
        int *out = malloc(sizeof(int) * (n + 1)), *in = malloc(sizeof(int) * (n + 1));
        for (int i = 0; i < n; i++)
            out[i] = value(rank, i, 60 + (int)k), in[i] = -1;
        int extra = -1, extra_out = value(rank, 0, 66);
        MPI_Request reqs[2];
        MPI_Isendrecv(out, n, MPI_INT, right, 60, in, n, MPI_INT, left, 60, tcomm, &reqs[0]);
        MPI_Irecv(&extra, 1, MPI_INT, right, 61, tcomm, &reqs[1]);
        MPI_Send(&extra_out, 1, MPI_INT, left, 61, tcomm);
        MPI_Status sts[2];
        complete_all(2, reqs, sts, (int)k % 4);
        EXPECT(reqs[0] == MPI_REQUEST_NULL && reqs[1] == MPI_REQUEST_NULL, "isendrecv n=%d: a request left", n);
        EXPECT(sts[0].MPI_SOURCE == left && sts[0].MPI_TAG == 60 && count_of(&sts[0]) == n,
               "isendrecv n=%d: status %d %d %d", n, sts[0].MPI_SOURCE, sts[0].MPI_TAG, count_of(&sts[0]));
        for (int i = 0; i < n; i++)
            EXPECT(in[i] == value(left, i, 60 + (int)k), "isendrecv n=%d in[%d]=%d", n, i, in[i]);
        EXPECT(extra == value(right, 0, 66), "isendrecv n=%d: the other receive got %d", n, extra);
        free(out);
        free(in);
    }
    MPI_Datatype every_other;
    MPI_Type_vector(50, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    int both[100];
    for (int i = 0; i < 100; i++)
        both[i] = value(rank, i, 67);
    MPI_Request req;
    MPI_Status st;
    MPI_Isendrecv_replace(both, 1, every_other, right, 62, left, 62, tcomm, &req);
    MPI_Wait(&req, &st);
    MPI_Type_free(&every_other);
    EXPECT(st.MPI_SOURCE == left && st.MPI_TAG == 62, "isendrecv_replace status %d %d", st.MPI_SOURCE, st.MPI_TAG);
    for (int i = 0; i < 100; i++)
        EXPECT(both[i] == value(i % 2 ? rank : left, i, 67), "isendrecv_replace [%d]=%d", i, both[i]);
    int keep = value(rank, 0, 68);
    MPI_Isendrecv_replace(&keep, 1, MPI_INT, MPI_PROC_NULL, 63, MPI_PROC_NULL, 63, tcomm, &req);
    MPI_Wait(&req, &st);
    EXPECT(st.MPI_SOURCE == MPI_PROC_NULL && keep == value(rank, 0, 68), "isendrecv_replace to MPI_PROC_NULL");
    int class = 0, rc = MPI_Isendrecv(&keep, 1, MPI_INT, size, 0, &keep, 1, MPI_INT, left, 0, tcomm, &req);
    MPI_Error_class(rc, &class);
    EXPECT(class == MPI_ERR_RANK, "MPI_Isendrecv to rank %d: class %d", size, class);
    /* A receive half too short: MPI_ERR_TRUNCATE through the wait. */
    int two[2] = {value(rank, 0, 69), value(rank, 1, 69)}, one = -1;
    MPI_Isendrecv(two, 2, MPI_INT, right, 64, &one, 1, MPI_INT, left, 64, tcomm, &req);
    rc = MPI_Wait(&req, &st);
    MPI_Error_class(rc, &class);
    EXPECT(class == MPI_ERR_TRUNCATE && one == value(left, 0, 69) && req == MPI_REQUEST_NULL,
           "truncated MPI_Isendrecv: class %d, got %d", class, one);
}
#endif

#if MPI_VERSION >= 4
/* The large-count inits and MPI_Isendrecv_c: the int path where the count
 * fits, MPI_ERR_COUNT where it does not. */
static void large_count(int rank, int size)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out[8], in[8], back[8];
    MPI_Request reqs[2];
    MPI_Recv_init_c(in, 8, MPI_INT, left, 80, tcomm, &reqs[0]);
    MPI_Ssend_init_c(out, 8, MPI_INT, right, 80, tcomm, &reqs[1]);
    for (int it = 0; it < 3; it++) {
        for (int i = 0; i < 8; i++)
            out[i] = value(rank, i, 80 + it), in[i] = -1;
        MPI_Startall(2, reqs);
        MPI_Status sts[2];
        MPI_Waitall(2, reqs, sts);
        EXPECT(sts[0].MPI_SOURCE == left && count_of(&sts[0]) == 8, "Recv_init_c status %d", sts[0].MPI_SOURCE);
        for (int i = 0; i < 8; i++)
            EXPECT(in[i] == value(left, i, 80 + it), "Recv_init_c it=%d in[%d]=%d", it, i, in[i]);
    }
    MPI_Request_free(&reqs[0]);
    MPI_Request_free(&reqs[1]);
    MPI_Isendrecv_c(in, 8, MPI_INT, left, 81, back, 8, MPI_INT, right, 81, tcomm, &reqs[0]);
    MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
    for (int i = 0; i < 8; i++) /* in holds the left's last values; the right has this rank's */
        EXPECT(back[i] == value(rank, i, 82), "Isendrecv_c back[%d]=%d", i, back[i]);
    MPI_Request req = MPI_REQUEST_NULL;
    int class = 0, rc = MPI_Send_init_c(out, (MPI_Count)1 << 40, MPI_INT, right, 82, tcomm, &req);
    MPI_Error_class(rc, &class);
    EXPECT(class == MPI_ERR_COUNT && req == MPI_REQUEST_NULL, "Send_init_c of 2^40: class %d", class);
}
#endif

static void *thread_main(void *arg)
{
    (void)arg;
    int rank, size;
    threadcomm_enter(tcomm, total_ranks, &rank, &size);
    halo(rank, size, 16);
    halo(rank, size, 3000); /* over SHOAL_THREAD_HANDOFF_BYTES: handed over by address */
    send_modes(rank, size);
    derived_and_null(rank, size);
    free_active_and_cancel(rank, size);
    errors(rank, size);
#ifdef HAVE_ISENDRECV
    isendrecv(rank, size);
#endif
#if MPI_VERSION >= 4
    large_count(rank, size);
#endif
    MPI_Barrier(tcomm);
    MPIX_Threadcomm_finish(tcomm);
    return NULL;
}

int main(int argc, char **argv)
{
    threads_here = threadcomm_init_args(&argc, &argv, "--iterations", &iterations,
                                        "usage: threadcomm_persist_check [--threads T] [--uneven] [--iterations N]");
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    PMPI_Allreduce(&threads_here, &total_ranks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Comm_dup(MPI_COMM_WORLD, &hostcomm);
    if (MPIX_Threadcomm_init(MPI_COMM_WORLD, threads_here, &tcomm) != MPI_SUCCESS)
        CHECK_FATAL("MPIX_Threadcomm_init failed");
    MPI_Comm_set_errhandler(tcomm, MPI_ERRORS_RETURN);
    run_threads(threads_here, thread_main);
    MPIX_Threadcomm_free(&tcomm);
    MPI_Comm_free(&hostcomm);
    long all = failures_everywhere();
    if (world_rank == 0)
        printf("threadcomm_persist_check: %d processes, %d ranks, %d iterations, Isendrecv %s: %s (%ld failures)\n",
               world_size, total_ranks, iterations,
#ifdef HAVE_ISENDRECV
               "checked",
#else
               "not in this MPI",
#endif
               all ? "FAILED" : "ok", all);
    MPI_Finalize();
    return all ? 1 : 0;
}
