/* Thread communicators (MPIX_Threadcomm): every process starts T threads
 * (T+1 on odd ranks with --uneven), each a rank of the thread communicator,
 * and each call shoal serves on it is checked against values computed
 * locally from the ranks: size and ranks, point-to-point around a ring (each
 * size class: eager, single copy, a strided datatype), MPI_ANY_SOURCE from
 * local and remote senders with per-sender order, non-overtaking order over
 * mixed sizes, probes, MPI_Ssend, MPI_Sendrecv, truncation through
 * MPI_ERRORS_RETURN, every collective from every root. --loops L frees and
 * re-creates the communicator L times.
 *   threadcomm_check [--threads T] [--uneven] [--loops L] */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_common.h"
#include "mpix_threadcomm.h"
#include "threadcomm_common.h"

static int threads_here, world_size;
static int *first_rank, total_ranks; /* per process: its first thread rank */
static MPI_Comm tcomm;

static void ring(int rank, int size)
{
    static const int counts[] = {0, 1, 100, 1024, 3000, 70000};
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (size_t k = 0; k < sizeof counts / sizeof *counts; k++) {
        int n = counts[k];
        int *out = malloc(sizeof(int) * (n + 1)), *in = malloc(sizeof(int) * (n + 1));
        for (int i = 0; i < n; i++)
            out[i] = value(rank, i, (int)k);
        /* Irecv + Send */
        MPI_Request req;
        MPI_Status st;
        memset(in, 0xff, sizeof(int) * (n + 1));
        MPI_Irecv(in, n, MPI_INT, left, 5, tcomm, &req);
        MPI_Send(out, n, MPI_INT, right, 5, tcomm);
        MPI_Wait(&req, &st);
        int got = -1;
        MPI_Get_count(&st, MPI_INT, &got);
        EXPECT(st.MPI_SOURCE == left && st.MPI_TAG == 5 && got == n, "ring status %d %d %d", st.MPI_SOURCE, st.MPI_TAG,
               got);
        for (int i = 0; i < n; i++)
            EXPECT(in[i] == value(left, i, (int)k), "ring n=%d in[%d]=%d", n, i, in[i]);
        /* Sendrecv */
        memset(in, 0xff, sizeof(int) * (n + 1));
        MPI_Sendrecv(out, n, MPI_INT, right, 6, in, n, MPI_INT, left, 6, tcomm, &st);
        MPI_Get_count(&st, MPI_INT, &got);
        EXPECT(st.MPI_SOURCE == left && got == n, "sendrecv status");
        for (int i = 0; i < n; i++)
            EXPECT(in[i] == value(left, i, (int)k), "sendrecv n=%d in[%d]=%d", n, i, in[i]);
        /* Isend + Irecv + Waitall, and Ssend against a posted receive */
        MPI_Request reqs[2];
        MPI_Status sts[2];
        memset(in, 0xff, sizeof(int) * (n + 1));
        MPI_Isend(out, n, MPI_INT, right, 7, tcomm, &reqs[0]);
        MPI_Irecv(in, n, MPI_INT, MPI_ANY_SOURCE, 7, tcomm, &reqs[1]);
        MPI_Waitall(2, reqs, sts);
        EXPECT(sts[1].MPI_SOURCE == left && sts[1].MPI_TAG == 7, "waitall status %d", sts[1].MPI_SOURCE);
        for (int i = 0; i < n; i++)
            EXPECT(in[i] == value(left, i, (int)k), "waitall n=%d in[%d]=%d", n, i, in[i]);
        MPI_Irecv(in, n, MPI_INT, left, 8, tcomm, &req);
        MPI_Ssend(out, n, MPI_INT, right, 8, tcomm);
        int flag = 0;
        while (!flag)
            MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
        for (int i = 0; i < n; i++)
            EXPECT(in[i] == value(left, i, (int)k), "ssend n=%d in[%d]=%d", n, i, in[i]);
        /* MPI_Bsend returns before any receive is posted, whatever the
         * length; MPI_Rsend meets a posted one. */
        MPI_Bsend(out, n, MPI_INT, right, 10, tcomm);
        MPI_Recv(in, n, MPI_INT, left, 10, tcomm, MPI_STATUS_IGNORE);
        for (int i = 0; i < n; i++)
            EXPECT(in[i] == value(left, i, (int)k), "bsend n=%d in[%d]=%d", n, i, in[i]);
        MPI_Irecv(in, n, MPI_INT, left, 14, tcomm, &req);
        MPI_Barrier(tcomm); /* every receive is posted before any ready send */
        MPI_Rsend(out, n, MPI_INT, right, 14, tcomm);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        for (int i = 0; i < n; i++)
            EXPECT(in[i] == value(left, i, (int)k), "rsend n=%d in[%d]=%d", n, i, in[i]);
        free(out);
        free(in);
    }
    /* A strided datatype both ways (packed, not dense): every other int. */
    MPI_Datatype every_other;
    MPI_Type_vector(50, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    int out[100], in[100];
    for (int i = 0; i < 100; i++) {
        out[i] = value(rank, i, 99);
        in[i] = -1;
    }
    MPI_Sendrecv(out, 1, every_other, right, 9, in + 1, 1, every_other, left, 9, tcomm, MPI_STATUS_IGNORE);
    for (int i = 0; i < 100; i++)
        EXPECT(in[i] == (i % 2 ? value(left, i - 1, 99) : -1), "strided in[%d]=%d", i, in[i]);
    /* MPI_Sendrecv_replace around the ring, the strided datatype too. */
    int both[100];
    for (int i = 0; i < 100; i++)
        both[i] = value(rank, i, 98);
    MPI_Sendrecv_replace(both, 1, every_other, right, 15, left, 15, tcomm, MPI_STATUS_IGNORE);
    for (int i = 0; i < 100; i++)
        EXPECT(both[i] == value(i % 2 ? rank : left, i, 98), "sendrecv_replace [%d]=%d", i, both[i]);
    MPI_Type_free(&every_other);
}

/* Every rank but 0 sends `per` messages to rank 0, tagged with its rank;
 * rank 0 takes them from any source and checks each sender's order. */
static void any_source(int rank, int size)
{
    const int per = 6;
    if (rank) {
        for (int s = 0; s < per; s++) {
            int msg[2] = {rank, s};
            MPI_Send(msg, 2, MPI_INT, 0, rank, tcomm);
        }
        MPI_Barrier(tcomm); /* no later message meets rank 0's MPI_ANY_TAG */
        return;
    }
    int *next = calloc((size_t)size, sizeof *next);
    for (int k = 0; k < per * (size - 1); k++) {
        int msg[2] = {-1, -1};
        MPI_Status st;
        MPI_Recv(msg, 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, tcomm, &st);
        EXPECT(msg[0] == st.MPI_SOURCE && msg[0] == st.MPI_TAG && msg[0] > 0 && msg[0] < size,
               "any_source: message %d from status source %d tag %d", msg[0], st.MPI_SOURCE, st.MPI_TAG);
        if (msg[0] > 0 && msg[0] < size) {
            EXPECT(msg[1] == next[msg[0]], "any_source: from %d got #%d, expected #%d", msg[0], msg[1], next[msg[0]]);
            next[msg[0]] = msg[1] + 1;
        }
    }
    free(next);
    MPI_Barrier(tcomm);
}

/* Rank size-1 sends 24 messages of alternating sizes (eager and single
 * copy) with one tag to rank 0, which must take them in order. */
static void order(int rank, int size)
{
    enum { N = 24, BIG = 5000 };
    int from = size - 1;
    if ((rank != 0 && rank != from) || size == 1)
        return;
    int *bufs = malloc(sizeof(int) * N * BIG);
    MPI_Request reqs[N];
    for (int m = 0; m < N; m++) {
        int n = m % 2 ? BIG : 3, *b = bufs + m * BIG;
        if (rank == from) {
            for (int i = 0; i < n; i++)
                b[i] = m * 1000 + i;
            MPI_Isend(b, n, MPI_INT, 0, 3, tcomm, &reqs[m]);
        } else {
            MPI_Irecv(b, BIG, MPI_INT, from, 3, tcomm, &reqs[m]);
        }
    }
    MPI_Status sts[N];
    MPI_Waitall(N, reqs, sts);
    if (rank == 0)
        for (int m = 0; m < N; m++) {
            int got = -1;
            MPI_Get_count(&sts[m], MPI_INT, &got);
            EXPECT(got == (m % 2 ? BIG : 3) && bufs[m * BIG] == m * 1000 &&
                       bufs[m * BIG + got - 1] == m * 1000 + got - 1,
                   "order: message %d has %d ints, first %d", m, got, bufs[m * BIG]);
        }
    free(bufs);
}

/* Probe for a message of a size the receiver does not know, then take it;
 * then a receive too short for its message. */
static void probe_and_truncate(int rank, int size)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int n = 10 + rank, out[64], in[64];
    for (int i = 0; i < n; i++)
        out[i] = value(rank, i, 4);
    MPI_Request req;
    MPI_Isend(out, n, MPI_INT, right, 11, tcomm, &req);
    MPI_Status st;
    int flag = 0;
    while (!flag)
        MPI_Iprobe(MPI_ANY_SOURCE, 11, tcomm, &flag, &st);
    MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, tcomm, &st);
    int got = -1;
    MPI_Get_count(&st, MPI_INT, &got);
    EXPECT(st.MPI_SOURCE == left && st.MPI_TAG == 11 && got == 10 + left, "probe: %d %d %d", st.MPI_SOURCE, st.MPI_TAG,
           got);
    MPI_Recv(in, got, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, tcomm, MPI_STATUS_IGNORE);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    for (int i = 0; i < got; i++)
        EXPECT(in[i] == value(left, i, 4), "probe: in[%d]=%d", i, in[i]);
    /* Truncation: blocking and through MPI_Wait. */
    /* Sends that need no buffering: SHOAL_THREAD_HANDOFF_BYTES=0 hands even
     * these over by address, the sender waiting for its receiver. */
    MPI_Request send;
    MPI_Isend(out, 10, MPI_INT, right, 12, tcomm, &send);
    int rc = MPI_Recv(in, 5, MPI_INT, left, 12, tcomm, &st), cls = -1;
    MPI_Error_class(rc, &cls);
    EXPECT(cls == MPI_ERR_TRUNCATE, "truncation: error class %d", cls);
    MPI_Wait(&send, MPI_STATUS_IGNORE);
    MPI_Isend(out, 10, MPI_INT, right, 13, tcomm, &send);
    MPI_Irecv(in, 4, MPI_INT, left, 13, tcomm, &req);
    rc = MPI_Wait(&req, &st);
    MPI_Error_class(rc, &cls);
    EXPECT(cls == MPI_ERR_TRUNCATE, "truncation through MPI_Wait: error class %d", cls);
    MPI_Wait(&send, MPI_STATUS_IGNORE);
    /* Bad arguments: an error of the right class through MPI_ERRORS_RETURN,
     * nothing sent, nothing left waiting. */
    static const struct {
        int dest, tag, count, expect;
    } bad[] = {
        {-5, 1, 1, MPI_ERR_RANK}, {1 << 30, 1, 1, MPI_ERR_RANK}, {0, -5, 1, MPI_ERR_TAG}, {0, 1, -1, MPI_ERR_COUNT}};
    for (size_t b = 0; b < sizeof bad / sizeof *bad; b++) {
        MPI_Error_class(MPI_Send(out, bad[b].count, MPI_INT, bad[b].dest, bad[b].tag, tcomm), &cls);
        EXPECT(cls == bad[b].expect, "bad send %zu: error class %d, expected %d", b, cls, bad[b].expect);
    }
    MPI_Error_class(MPI_Recv(in, 1, MPI_INT, size, 1, tcomm, MPI_STATUS_IGNORE), &cls);
    EXPECT(cls == MPI_ERR_RANK, "receive from rank %d: error class %d", size, cls);
    MPI_Error_class(MPI_Bcast(in, 1, MPI_INT, size, tcomm), &cls);
    EXPECT(cls == MPI_ERR_ROOT, "bcast from root %d: error class %d", size, cls);
    /* MPI_Cancel of a receive nothing matches; MPI_Request_free of a send
     * (short and long) whose receive comes later. */
    MPI_Irecv(in, 1, MPI_INT, left, 77, tcomm, &req);
    MPI_Cancel(&req);
    MPI_Wait(&req, &st);
    int cancelled = 0;
    MPI_Test_cancelled(&st, &cancelled);
    EXPECT(cancelled && req == MPI_REQUEST_NULL, "a cancelled receive: cancelled %d", cancelled);
    int *big = malloc(sizeof(int) * 5000), *got_big = malloc(sizeof(int) * 5000);
    for (int i = 0; i < 5000; i++)
        big[i] = value(rank, i, 78);
    for (int len = 1; len <= 5000; len += 4999) {
        MPI_Isend(big, len, MPI_INT, right, 78, tcomm, &req);
        MPI_Request_free(&req);
        EXPECT(req == MPI_REQUEST_NULL, "MPI_Request_free left the handle");
        MPI_Recv(got_big, len, MPI_INT, left, 78, tcomm, MPI_STATUS_IGNORE);
        for (int i = 0; i < len; i++)
            EXPECT(got_big[i] == value(left, i, 78), "freed send of %d: [%d]=%d", len, i, got_big[i]);
    }
    MPI_Barrier(tcomm); /* every freed send has been received: big may go */
    free(big);
    free(got_big);
    /* Calls shoal does not serve on thread communicators are refused, not
     * handed to the host for the process ranks under the handle. */
    MPI_Group group = MPI_GROUP_NULL;
    MPI_Error_class(MPI_Comm_group(tcomm, &group), &cls);
    EXPECT(cls == MPI_ERR_OTHER && group == MPI_GROUP_NULL, "MPI_Comm_group: error class %d", cls);
    MPI_Comm cart = MPI_COMM_NULL;
    int dims[1] = {size}, periods[1] = {1};
    MPI_Error_class(MPI_Cart_create(tcomm, 1, dims, periods, 0, &cart), &cls);
    EXPECT(cls == MPI_ERR_OTHER && cart == MPI_COMM_NULL, "MPI_Cart_create: error class %d", cls);
    MPI_Barrier(tcomm);
}

static void collectives(int rank, int size)
{
    static const int counts[] = {1, 37, 3000, 16384}; /* 16384 ints: a full bcast stage */
    MPI_Barrier(tcomm);
    for (size_t k = 0; k < sizeof counts / sizeof *counts; k++) {
        int n = counts[k];
        int *a = malloc(sizeof(int) * (size_t)n * size), *b = malloc(sizeof(int) * (size_t)n * size);
        double *d = malloc(sizeof(double) * n), *e = malloc(sizeof(double) * n);
        for (int root = 0; root < size; root++) {
            for (int i = 0; i < n; i++)
                a[i] = rank == root ? value(root, i, 1) : -1;
            MPI_Bcast(a, n, MPI_INT, root, tcomm);
            for (int i = 0; i < n; i++)
                EXPECT(a[i] == value(root, i, 1), "bcast root %d n %d a[%d]=%d", root, n, i, a[i]);
            for (int i = 0; i < n; i++)
                d[i] = rank + i * 0.5;
            MPI_Reduce(d, e, n, MPI_DOUBLE, MPI_SUM, root, tcomm);
            if (rank == root)
                for (int i = 0; i < n; i++)
                    EXPECT(e[i] == size * (size - 1) / 2.0 + size * i * 0.5, "reduce root %d e[%d]=%g", root, i, e[i]);
            for (int i = 0; i < n; i++)
                a[i] = value(rank, i, 2);
            MPI_Gather(a, n, MPI_INT, b, n, MPI_INT, root, tcomm);
            if (rank == root)
                for (int r = 0; r < size; r++)
                    for (int i = 0; i < n; i++)
                        EXPECT(b[r * n + i] == value(r, i, 2), "gather root %d from %d [%d]", root, r, i);
            if (rank == root)
                for (int r = 0; r < size; r++)
                    for (int i = 0; i < n; i++)
                        a[r * n + i] = value(r, i, 3);
            MPI_Scatter(a, n, MPI_INT, b, n, MPI_INT, root, tcomm);
            for (int i = 0; i < n; i++)
                EXPECT(b[i] == value(rank, i, 3), "scatter root %d [%d]=%d", root, i, b[i]);
        }
        for (int i = 0; i < n; i++)
            d[i] = rank * 2.0 + i;
        MPI_Allreduce(d, e, n, MPI_DOUBLE, MPI_SUM, tcomm);
        for (int i = 0; i < n; i++)
            EXPECT(e[i] == size * (size - 1.0) + (double)size * i, "allreduce e[%d]=%g", i, e[i]);
        for (int i = 0; i < n; i++)
            a[i] = value(rank, i, 5) % 1000;
        MPI_Allreduce(MPI_IN_PLACE, a, n, MPI_INT, MPI_MAX, tcomm);
        for (int i = 0; i < n; i++) {
            int max = 0;
            for (int r = 0; r < size; r++)
                max = value(r, i, 5) % 1000 > max ? value(r, i, 5) % 1000 : max;
            EXPECT(a[i] == max, "allreduce max a[%d]=%d, expected %d", i, a[i], max);
        }
        for (int i = 0; i < n; i++)
            a[i] = value(rank, i, 6);
        MPI_Allgather(a, n, MPI_INT, b, n, MPI_INT, tcomm);
        for (int r = 0; r < size; r++)
            for (int i = 0; i < n; i++)
                EXPECT(b[r * n + i] == value(r, i, 6), "allgather from %d [%d]", r, i);
        for (int r = 0; r < size; r++)
            for (int i = 0; i < n; i++)
                a[r * n + i] = value(rank, r * n + i, 7);
        MPI_Alltoall(a, n, MPI_INT, b, n, MPI_INT, tcomm);
        for (int r = 0; r < size; r++)
            for (int i = 0; i < n; i++)
                EXPECT(b[r * n + i] == value(r, rank * n + i, 7), "alltoall from %d [%d]=%d", r, i, b[r * n + i]);
        free(a);
        free(b);
        free(d);
        free(e);
    }
}

/* The v-collectives (rank r's block has r % 3 + 1 ints, blocks laid out
 * backwards with a gap), reduce_scatter, scans, alltoallw. */
static void more_collectives(int rank, int size)
{
    int *counts = malloc(sizeof(int) * size), *displs = malloc(sizeof(int) * size), total = 0;
    for (int r = size - 1; r >= 0; r--) {
        counts[r] = r % 3 + 1;
        displs[r] = total;
        total += counts[r] + 1;
    }
    int *a = malloc(sizeof(int) * (total + 4 * size)), *b = malloc(sizeof(int) * (total + 4 * size));
    int mine = counts[rank], out[4];
    for (int i = 0; i < mine; i++)
        out[i] = value(rank, i, 31);
    for (int root = 0; root<size; root += size> 2 ? size - 1 : 1) {
        for (int i = 0; i < total; i++)
            b[i] = -7;
        MPI_Gatherv(out, mine, MPI_INT, b, counts, displs, MPI_INT, root, tcomm);
        if (rank == root)
            for (int r = 0; r < size; r++)
                for (int i = 0; i < counts[r]; i++)
                    EXPECT(b[displs[r] + i] == value(r, i, 31), "gatherv root %d from %d [%d]", root, r, i);
        if (rank == root)
            for (int r = 0; r < size; r++)
                for (int i = 0; i < counts[r]; i++)
                    a[displs[r] + i] = value(r, i, 32);
        int in[4] = {-1, -1, -1, -1};
        MPI_Scatterv(a, counts, displs, MPI_INT, in, mine, MPI_INT, root, tcomm);
        for (int i = 0; i < mine; i++)
            EXPECT(in[i] == value(rank, i, 32), "scatterv root %d [%d]=%d", root, i, in[i]);
    }
    for (int i = 0; i < total; i++)
        b[i] = -7;
    MPI_Allgatherv(out, mine, MPI_INT, b, counts, displs, MPI_INT, tcomm);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < counts[r]; i++)
            EXPECT(b[displs[r] + i] == value(r, i, 31), "allgatherv from %d [%d]", r, i);
    /* alltoallv: rank r sends (to + 1) ints to rank `to`; alltoallw the same
     * with byte displacements. */
    int *sc = malloc(sizeof(int) * size), *sd = malloc(sizeof(int) * size), *rc = malloc(sizeof(int) * size),
        *rd = malloc(sizeof(int) * size), *sdb = malloc(sizeof(int) * size), *rdb = malloc(sizeof(int) * size);
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * size);
    int stotal = 0, rtotal = 0;
    for (int r = 0; r < size; r++) {
        sc[r] = r + 1;
        sd[r] = stotal;
        stotal += sc[r];
        rc[r] = rank + 1;
        rd[r] = rtotal;
        rtotal += rc[r];
        sdb[r] = sd[r] * (int)sizeof(int);
        rdb[r] = rd[r] * (int)sizeof(int);
        types[r] = MPI_INT;
    }
    int *s2 = malloc(sizeof(int) * stotal), *r2 = malloc(sizeof(int) * rtotal);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < sc[r]; i++)
            s2[sd[r] + i] = value(rank, r * 10 + i, 33);
    for (int w = 0; w < 2; w++) {
        for (int i = 0; i < rtotal; i++)
            r2[i] = -1;
        if (w)
            MPI_Alltoallw(s2, sc, sdb, types, r2, rc, rdb, types, tcomm);
        else
            MPI_Alltoallv(s2, sc, sd, MPI_INT, r2, rc, rd, MPI_INT, tcomm);
        for (int r = 0; r < size; r++)
            for (int i = 0; i < rc[r]; i++)
                EXPECT(r2[rd[r] + i] == value(r, rank * 10 + i, 33), "alltoall%c from %d [%d]", w ? 'w' : 'v', r, i);
    }
    /* reduce_scatter(_block): element j of the whole vector sums value(r, j) over r. */
    for (int i = 0; i < 2 * size; i++)
        a[i] = value(rank, i, 34) % 1000;
    int got[2] = {-1, -1};
    MPI_Reduce_scatter_block(a, got, 2, MPI_INT, MPI_SUM, tcomm);
    for (int i = 0; i < 2; i++) {
        int sum = 0;
        for (int r = 0; r < size; r++)
            sum += value(r, rank * 2 + i, 34) % 1000;
        EXPECT(got[i] == sum, "reduce_scatter_block [%d]=%d, expected %d", i, got[i], sum);
    }
    int first = 0;
    for (int r = 0; r < rank; r++)
        first += counts[r];
    MPI_Reduce_scatter(a, b, counts, MPI_INT, MPI_SUM, tcomm);
    for (int i = 0; i < mine; i++) {
        int sum = 0;
        for (int r = 0; r < size; r++)
            sum += value(r, first + i, 34) % 1000;
        EXPECT(b[i] == sum, "reduce_scatter [%d]=%d, expected %d", i, b[i], sum);
    }
    /* scan and exscan of rank + 1 */
    int x = rank + 1, inclusive = -1, exclusive = -1;
    MPI_Scan(&x, &inclusive, 1, MPI_INT, MPI_SUM, tcomm);
    MPI_Exscan(&x, &exclusive, 1, MPI_INT, MPI_SUM, tcomm);
    EXPECT(inclusive == (rank + 1) * (rank + 2) / 2, "scan %d", inclusive);
    EXPECT(rank == 0 || exclusive == rank * (rank + 1) / 2, "exscan %d", exclusive);
    free(counts), free(displs), free(a), free(b), free(sc), free(sd), free(rc), free(rd), free(sdb), free(rdb);
    free(types), free(s2), free(r2);
}

/* Non-blocking collectives: the call returns before the other ranks call it
 * (the last rank makes a synchronous send to rank 0 before its Ibarrier, and
 * rank 0 receives it only after its own), several outstanding at once
 * complete through MPI_Waitall and MPI_Test, in place too. */
static void nonblocking(int rank, int size)
{
    MPI_Request barrier;
    int last = size - 1, token = value(rank, 0, 51), got = -1;
    if (rank == last && last > 0)
        MPI_Ssend(&token, 1, MPI_INT, 0, 51, tcomm);
    MPI_Ibarrier(tcomm, &barrier);
    if (rank == 0 && last > 0) {
        MPI_Recv(&got, 1, MPI_INT, last, 51, tcomm, MPI_STATUS_IGNORE);
        EXPECT(got == value(last, 0, 51), "Ibarrier then a receive: got %d", got);
    }
    /* Every rank: messages around the ring while the barrier is outstanding. */
    int right = (rank + 1) % size, left = (rank + size - 1) % size, from_left = -1;
    MPI_Sendrecv(&token, 1, MPI_INT, right, 52, &from_left, 1, MPI_INT, left, 52, tcomm, MPI_STATUS_IGNORE);
    EXPECT(from_left == value(left, 0, 51), "a ring inside an Ibarrier: got %d", from_left);
    MPI_Wait(&barrier, MPI_STATUS_IGNORE);
    static const int counts[] = {1, 3000};
    for (size_t k = 0; k < sizeof counts / sizeof *counts; k++) {
        int n = counts[k], root = (int)k % size;
        size_t all = (size_t)n * size;
        int *bc = malloc(sizeof(int) * n), *g = malloc(sizeof(int) * all), *sc = malloc(sizeof(int) * n),
            *ag = malloc(sizeof(int) * all), *a2a_in = malloc(sizeof(int) * all), *a2a = malloc(sizeof(int) * all),
            *mine = malloc(sizeof(int) * n), *sc_src = malloc(sizeof(int) * all), *ip = malloc(sizeof(int) * all);
        double *x = malloc(sizeof(double) * n), *sum = malloc(sizeof(double) * n), *red = malloc(sizeof(double) * n);
        for (int i = 0; i < n; i++) {
            bc[i] = rank == last ? value(last, i, 52) : -1;
            mine[i] = value(rank, i, 53);
            x[i] = rank * 3.0 + i;
        }
        for (size_t i = 0; i < all; i++) {
            sc_src[i] = value(root, (int)i, 54);
            a2a_in[i] = value(rank, (int)i, 55);
            ip[i] = value(rank, (int)i, 56);
        }
        MPI_Request reqs[9];
        MPI_Ibcast(bc, n, MPI_INT, last, tcomm, &reqs[0]);
        MPI_Iallreduce(x, sum, n, MPI_DOUBLE, MPI_SUM, tcomm, &reqs[1]);
        MPI_Ireduce(x, red, n, MPI_DOUBLE, MPI_MAX, root, tcomm, &reqs[2]);
        MPI_Igather(mine, n, MPI_INT, g, n, MPI_INT, root, tcomm, &reqs[3]);
        MPI_Iscatter(sc_src, n, MPI_INT, sc, n, MPI_INT, root, tcomm, &reqs[4]);
        MPI_Iallgather(mine, n, MPI_INT, ag, n, MPI_INT, tcomm, &reqs[5]);
        MPI_Ialltoall(a2a_in, n, MPI_INT, a2a, n, MPI_INT, tcomm, &reqs[6]);
        MPI_Ialltoall(MPI_IN_PLACE, n, MPI_INT, ip, n, MPI_INT, tcomm, &reqs[7]);
        MPI_Ibarrier(tcomm, &reqs[8]);
        MPI_Status statuses[9];
        MPI_Waitall(9, reqs, statuses);
        for (int i = 0; i < n; i++) {
            EXPECT(bc[i] == value(last, i, 52), "Ibcast n %d [%d]=%d", n, i, bc[i]);
            EXPECT(sum[i] == 3.0 * size * (size - 1) / 2 + (double)size * i, "Iallreduce n %d [%d]=%g", n, i, sum[i]);
            EXPECT(rank != root || red[i] == last * 3.0 + i, "Ireduce n %d [%d]=%g", n, i, red[i]);
            EXPECT(sc[i] == value(root, rank * n + i, 54), "Iscatter n %d [%d]=%d", n, i, sc[i]);
        }
        for (int r = 0; r < size; r++)
            for (int i = 0; i < n; i++) {
                size_t at = (size_t)r * n + i;
                EXPECT(rank != root || g[at] == value(r, i, 53), "Igather n %d from %d [%d]=%d", n, r, i, g[at]);
                EXPECT(ag[at] == value(r, i, 53), "Iallgather n %d from %d [%d]=%d", n, r, i, ag[at]);
                EXPECT(a2a[at] == value(r, rank * n + i, 55), "Ialltoall n %d from %d [%d]=%d", n, r, i, a2a[at]);
                EXPECT(ip[at] == value(r, rank * n + i, 56), "in-place Ialltoall n %d from %d [%d]=%d", n, r, i,
                       ip[at]);
            }
        /* In place, completed by MPI_Test. */
        for (int i = 0; i < n; i++)
            sum[i] = rank + i;
        for (int r = 0; r < size; r++)
            for (int i = 0; i < n; i++)
                ag[(size_t)r * n + i] = r == rank ? value(rank, i, 57) : -1;
        MPI_Iallreduce(MPI_IN_PLACE, sum, n, MPI_DOUBLE, MPI_SUM, tcomm, &reqs[0]);
        MPI_Iallgather(MPI_IN_PLACE, n, MPI_INT, ag, n, MPI_INT, tcomm, &reqs[1]);
        int flag = 0;
        while (!flag)
            MPI_Testall(2, reqs, &flag, statuses);
        for (int i = 0; i < n; i++)
            EXPECT(sum[i] == size * (size - 1) / 2.0 + (double)size * i, "in-place Iallreduce [%d]=%g", i, sum[i]);
        for (int r = 0; r < size; r++)
            for (int i = 0; i < n; i++)
                EXPECT(ag[(size_t)r * n + i] == value(r, i, 57), "in-place Iallgather from %d [%d]", r, i);
        /* Two outstanding on one communicator, waited for last first. */
        int first_sum = 0, second_sum = 0, one = rank + 1;
        MPI_Iallreduce(&one, &first_sum, 1, MPI_INT, MPI_SUM, tcomm, &reqs[0]);
        MPI_Iallreduce(&rank, &second_sum, 1, MPI_INT, MPI_SUM, tcomm, &reqs[1]);
        MPI_Wait(&reqs[1], MPI_STATUS_IGNORE);
        MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
        EXPECT(first_sum == size * (size + 1) / 2 && second_sum == size * (size - 1) / 2,
               "Iallreduce waited out of order: %d and %d", first_sum, second_sum);
        free(bc), free(g), free(sc), free(ag), free(a2a_in), free(a2a), free(mine), free(sc_src), free(ip);
        free(x), free(sum), free(red);
    }
}

/* The non-blocking v-collectives (rank r's block has r % 3 + 1 ints, blocks
 * laid out backwards with a gap; an in-place alltoallv of symmetric counts),
 * alltoallw, reduce_scatter(_block) and the scans, all outstanding at once. */
static void nonblocking_more(int rank, int size)
{
    int *counts = malloc(sizeof(int) * size), *displs = malloc(sizeof(int) * size), total = 0;
    for (int r = size - 1; r >= 0; r--) {
        counts[r] = r % 3 + 1;
        displs[r] = total;
        total += counts[r] + 1;
    }
    int mine = counts[rank], out[3], scattered[3] = {-1, -1, -1}, root = size - 1;
    for (int i = 0; i < mine; i++)
        out[i] = value(rank, i, 71);
    int *gathered = malloc(sizeof(int) * total), *all = malloc(sizeof(int) * total),
        *source = malloc(sizeof(int) * total);
    for (int i = 0; i < total; i++)
        gathered[i] = all[i] = -7;
    for (int r = 0; r < size; r++)
        for (int i = 0; i < counts[r]; i++)
            source[displs[r] + i] = value(r, i, 72);
    /* alltoallv: rank `rank` sends `to + 1` ints to `to`; in place: rank + r + 1 ints each way. */
    int *sc = malloc(sizeof(int) * size), *sd = malloc(sizeof(int) * size), *rc = malloc(sizeof(int) * size),
        *rd = malloc(sizeof(int) * size), *pc = malloc(sizeof(int) * size), *pd = malloc(sizeof(int) * size);
    int stotal = 0, rtotal = 0, ptotal = 0;
    for (int r = 0; r < size; r++) {
        sc[r] = r + 1, sd[r] = stotal, stotal += sc[r];
        rc[r] = rank + 1, rd[r] = rtotal, rtotal += rc[r];
        pc[r] = rank + r + 1, pd[r] = ptotal, ptotal += pc[r];
    }
    int *s2 = malloc(sizeof(int) * stotal), *r2 = malloc(sizeof(int) * rtotal), *p2 = malloc(sizeof(int) * ptotal);
    /* alltoallw: the same blocks as alltoallv, displacements in bytes. */
    int *w2 = malloc(sizeof(int) * rtotal), *wp = malloc(sizeof(int) * ptotal), *sdb = malloc(sizeof(int) * size),
        *rdb = malloc(sizeof(int) * size), *pdb = malloc(sizeof(int) * size);
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * size);
    for (int r = 0; r < size; r++) {
        sdb[r] = sd[r] * (int)sizeof(int), rdb[r] = rd[r] * (int)sizeof(int), pdb[r] = pd[r] * (int)sizeof(int);
        types[r] = MPI_INT;
    }
    for (int r = 0; r < size; r++) {
        for (int i = 0; i < sc[r]; i++)
            s2[sd[r] + i] = value(rank, r * 10 + i, 73);
        for (int i = 0; i < pc[r]; i++)
            p2[pd[r] + i] = wp[pd[r] + i] = value(rank, r * 10 + i, 74);
    }
    int *block_in = malloc(sizeof(int) * 2 * size), block_out[2] = {-1, -1};
    for (int i = 0; i < 2 * size; i++)
        block_in[i] = value(rank, i, 75) % 1000;
    int x = rank + 1, inclusive = -1, exclusive = -1, in_place = 2 * rank + 1;
    int shared_total = 0, *shared_in = malloc(sizeof(int) * (total + 1)), shared_out[3] = {-1, -1, -1};
    for (int r = 0; r < size; r++)
        shared_total += counts[r];
    for (int i = 0; i < shared_total; i++)
        shared_in[i] = value(rank, i, 76) % 1000;
    MPI_Request reqs[12];
    MPI_Status statuses[12];
    MPI_Igatherv(out, mine, MPI_INT, gathered, counts, displs, MPI_INT, root, tcomm, &reqs[0]);
    MPI_Iscatterv(source, counts, displs, MPI_INT, scattered, mine, MPI_INT, 0, tcomm, &reqs[1]);
    MPI_Iallgatherv(out, mine, MPI_INT, all, counts, displs, MPI_INT, tcomm, &reqs[2]);
    MPI_Ialltoallv(s2, sc, sd, MPI_INT, r2, rc, rd, MPI_INT, tcomm, &reqs[3]);
    MPI_Ialltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, p2, pc, pd, MPI_INT, tcomm, &reqs[4]);
    MPI_Ireduce_scatter_block(block_in, block_out, 2, MPI_INT, MPI_SUM, tcomm, &reqs[5]);
    MPI_Iscan(&x, &inclusive, 1, MPI_INT, MPI_SUM, tcomm, &reqs[6]);
    MPI_Iexscan(&x, &exclusive, 1, MPI_INT, MPI_SUM, tcomm, &reqs[7]);
    MPI_Iscan(MPI_IN_PLACE, &in_place, 1, MPI_INT, MPI_SUM, tcomm, &reqs[8]);
    MPI_Ireduce_scatter(shared_in, shared_out, counts, MPI_INT, MPI_SUM, tcomm, &reqs[9]);
    MPI_Ialltoallw(s2, sc, sdb, types, w2, rc, rdb, types, tcomm, &reqs[10]);
    MPI_Ialltoallw(MPI_IN_PLACE, NULL, NULL, NULL, wp, pc, pdb, types, tcomm, &reqs[11]);
    MPI_Waitall(12, reqs, statuses);
    int first = 0;
    for (int r = 0; r < rank; r++)
        first += counts[r];
    for (int i = 0; i < mine; i++) {
        int sum = 0;
        for (int r = 0; r < size; r++)
            sum += value(r, first + i, 76) % 1000;
        EXPECT(shared_out[i] == sum, "Ireduce_scatter [%d]=%d, expected %d", i, shared_out[i], sum);
    }
    for (int r = 0; r < size; r++)
        for (int i = 0; i < counts[r]; i++) {
            EXPECT(rank != root || gathered[displs[r] + i] == value(r, i, 71), "Igatherv from %d [%d]", r, i);
            EXPECT(all[displs[r] + i] == value(r, i, 71), "Iallgatherv from %d [%d]", r, i);
        }
    for (int i = 0; i < mine; i++)
        EXPECT(scattered[i] == value(rank, i, 72), "Iscatterv [%d]=%d", i, scattered[i]);
    for (int r = 0; r < size; r++) {
        for (int i = 0; i < rc[r]; i++) {
            EXPECT(r2[rd[r] + i] == value(r, rank * 10 + i, 73), "Ialltoallv from %d [%d]", r, i);
            EXPECT(w2[rd[r] + i] == value(r, rank * 10 + i, 73), "Ialltoallw from %d [%d]", r, i);
        }
        for (int i = 0; i < pc[r]; i++) {
            EXPECT(p2[pd[r] + i] == value(r, rank * 10 + i, 74), "in-place Ialltoallv from %d [%d]", r, i);
            EXPECT(wp[pd[r] + i] == value(r, rank * 10 + i, 74), "in-place Ialltoallw from %d [%d]", r, i);
        }
    }
    for (int i = 0; i < 2; i++) {
        int sum = 0;
        for (int r = 0; r < size; r++)
            sum += value(r, rank * 2 + i, 75) % 1000;
        EXPECT(block_out[i] == sum, "Ireduce_scatter_block [%d]=%d, expected %d", i, block_out[i], sum);
    }
    EXPECT(inclusive == (rank + 1) * (rank + 2) / 2, "Iscan %d", inclusive);
    EXPECT(rank == 0 || exclusive == rank * (rank + 1) / 2, "Iexscan %d", exclusive);
    EXPECT(in_place == (rank + 1) * (rank + 1), "in-place Iscan %d", in_place);
    free(counts), free(displs), free(gathered), free(all), free(source), free(sc), free(sd), free(rc), free(rd);
    free(pc), free(pd), free(s2), free(r2), free(p2), free(block_in), free(w2), free(wp), free(sdb), free(rdb);
    free(pdb), free(types), free(shared_in);
}

/* MPI-4's large-count bindings: a ring, a bcast and an allreduce, and a
 * count beyond an int refused with MPI_ERR_COUNT. */
static void large_count(int rank, int size)
{
#if MPI_VERSION >= 4
    int right = (rank + 1) % size, left = (rank + size - 1) % size, out[4], in[4] = {-1, -1, -1, -1};
    for (int i = 0; i < 4; i++)
        out[i] = value(rank, i, 81);
    MPI_Request req;
    MPI_Isend_c(out, 4, MPI_INT, right, 81, tcomm, &req);
    MPI_Recv_c(in, 4, MPI_INT, left, 81, tcomm, MPI_STATUS_IGNORE);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    for (int i = 0; i < 4; i++)
        EXPECT(in[i] == value(left, i, 81), "MPI_Recv_c [%d]=%d", i, in[i]);
    int root_value = rank == size - 1 ? value(rank, 0, 82) : -1, sum = 0;
    MPI_Request reqs[2];
    MPI_Status statuses[2];
    MPI_Ibcast_c(&root_value, 1, MPI_INT, size - 1, tcomm, &reqs[0]);
    MPI_Iallreduce_c(&rank, &sum, 1, MPI_INT, MPI_SUM, tcomm, &reqs[1]);
    MPI_Waitall(2, reqs, statuses);
    EXPECT(root_value == value(size - 1, 0, 82) && sum == size * (size - 1) / 2, "MPI_Ibcast_c %d, MPI_Iallreduce_c %d",
           root_value, sum);
    int cls = -1;
    MPI_Error_class(MPI_Send_c(out, (MPI_Count)INT_MAX + 1, MPI_INT, right, 81, tcomm), &cls);
    EXPECT(cls == MPI_ERR_COUNT, "MPI_Send_c beyond an int: error class %d", cls);
#else
    (void)rank, (void)size;
#endif
}

/* Matched probes: each rank sends two messages to its right; the receiver
 * takes the second (by tag) first through MPI_Mprobe and MPI_Mrecv, then the
 * first through MPI_Improbe and MPI_Imrecv. */
static void matched_probes(int rank, int size)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size, out[2][16], in[16];
    for (int m = 0; m < 2; m++)
        for (int i = 0; i < 16; i++)
            out[m][i] = value(rank, i, 61 + m);
    MPI_Request sends[2];
    MPI_Isend(out[0], 5 + rank % 7, MPI_INT, right, 61, tcomm, &sends[0]);
    MPI_Isend(out[1], 3, MPI_INT, right, 62, tcomm, &sends[1]);
    MPI_Message message = MPI_MESSAGE_NULL;
    MPI_Status st;
    MPI_Mprobe(MPI_ANY_SOURCE, 62, tcomm, &message, &st);
    int got = -1;
    MPI_Get_count(&st, MPI_INT, &got);
    EXPECT(st.MPI_SOURCE == left && st.MPI_TAG == 62 && got == 3, "Mprobe: source %d tag %d count %d", st.MPI_SOURCE,
           st.MPI_TAG, got);
    MPI_Mrecv(in, 3, MPI_INT, &message, &st);
    EXPECT(message == MPI_MESSAGE_NULL && st.MPI_SOURCE == left, "Mrecv: handle left or source %d", st.MPI_SOURCE);
    for (int i = 0; i < 3; i++)
        EXPECT(in[i] == value(left, i, 62), "Mrecv [%d]=%d", i, in[i]);
    int flag = 0;
    while (!flag)
        MPI_Improbe(left, MPI_ANY_TAG, tcomm, &flag, &message, &st);
    MPI_Get_count(&st, MPI_INT, &got);
    EXPECT(st.MPI_TAG == 61 && got == 5 + left % 7, "Improbe: tag %d count %d", st.MPI_TAG, got);
    MPI_Request req;
    MPI_Imrecv(in, 16, MPI_INT, &message, &req);
    MPI_Wait(&req, &st);
    MPI_Get_count(&st, MPI_INT, &got);
    EXPECT(st.MPI_SOURCE == left && got == 5 + left % 7, "Imrecv: source %d count %d", st.MPI_SOURCE, got);
    for (int i = 0; i < got && i < 16; i++)
        EXPECT(in[i] == value(left, i, 61), "Imrecv [%d]=%d", i, in[i]);
    MPI_Status send_statuses[2];
    MPI_Waitall(2, sends, send_statuses);
    MPI_Improbe(MPI_PROC_NULL, 0, tcomm, &flag, &message, &st);
    EXPECT(flag && message == MPI_MESSAGE_NO_PROC, "Improbe of MPI_PROC_NULL");
}

/* The wait family over arrays mixing a host request (a receive on
 * MPI_COMM_SELF) with thread requests: Waitany, Testsome, Testany, Testall
 * each return every request once, with its own status. */
static void mixed_requests(int rank, int size)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int form = 0; form < 4; form++) {
        int from_self = -1, from_left = -1, mine = value(rank, form, 64), to_self = value(rank, form, 65);
        MPI_Request reqs[3];
        MPI_Irecv(&from_self, 1, MPI_INT, 0, 1000 + rank, MPI_COMM_SELF, &reqs[0]);
        MPI_Irecv(&from_left, 1, MPI_INT, left, 64, tcomm, &reqs[1]);
        MPI_Isend(&mine, 1, MPI_INT, right, 64, tcomm, &reqs[2]);
        MPI_Send(&to_self, 1, MPI_INT, 0, 1000 + rank, MPI_COMM_SELF);
        int seen[3] = {0, 0, 0}, done = 0;
        MPI_Status sts[3];
        while (done < 3) {
            int index = MPI_UNDEFINED, flag = 0, count = 0, indices[3];
            if (form == 0) {
                MPI_Waitany(3, reqs, &index, &sts[0]);
                indices[0] = index, count = index == MPI_UNDEFINED ? 0 : 1;
            } else if (form == 1) {
                MPI_Testsome(3, reqs, &count, indices, sts);
                count = count == MPI_UNDEFINED ? 0 : count;
            } else if (form == 2) {
                MPI_Testany(3, reqs, &index, &flag, &sts[0]);
                indices[0] = index, count = flag && index != MPI_UNDEFINED ? 1 : 0;
            } else {
                MPI_Testall(3, reqs, &flag, sts);
                for (int i = 0; flag && i < 3; i++)
                    indices[i] = i;
                count = flag ? 3 : 0;
            }
            for (int k = 0; k < count; k++) {
                int i = indices[k];
                EXPECT(i >= 0 && i < 3 && !seen[i], "form %d: request %d returned twice or out of range", form, i);
                if (i < 0 || i >= 3)
                    continue;
                seen[i] = 1;
                done++;
                if (i == 1)
                    EXPECT(sts[k].MPI_SOURCE == left && sts[k].MPI_TAG == 64, "form %d: thread status %d %d", form,
                           sts[k].MPI_SOURCE, sts[k].MPI_TAG);
                if (i == 0)
                    EXPECT(sts[k].MPI_SOURCE == 0 && sts[k].MPI_TAG == 1000 + rank, "form %d: host status %d %d", form,
                           sts[k].MPI_SOURCE, sts[k].MPI_TAG);
            }
        }
        EXPECT(from_self == to_self && from_left == value(left, form, 64), "form %d: got %d and %d", form, from_self,
               from_left);
        EXPECT(reqs[0] == MPI_REQUEST_NULL && reqs[1] == MPI_REQUEST_NULL && reqs[2] == MPI_REQUEST_NULL,
               "form %d: a request left", form);
    }
}

/* MPI_Comm_idup: a duplicate, and a request complete once every rank has
 * called it. */
static void idup(int rank, int size)
{
    MPI_Comm dup;
    MPI_Request req;
    MPI_Comm_idup(tcomm, &dup, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    int sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, dup);
    EXPECT(sum == size * (size - 1) / 2, "idup's allreduce %d", sum);
    MPI_Comm_free(&dup);
}

/* A receive posted before a collective completes a synchronous send that
 * its sender makes before the same collective: the receiver, waiting in the
 * collective, still takes the message (pairs 2k, 2k+1, across processes
 * where they straddle two). */
static void ssend_across_collective(int rank, int size)
{
    int got = -1, mine = value(rank, 0, 41);
    MPI_Request req = MPI_REQUEST_NULL;
    if (rank % 2 == 0 && rank + 1 < size)
        MPI_Irecv(&got, 1, MPI_INT, rank + 1, 41, tcomm, &req);
    else if (rank % 2 == 1)
        MPI_Ssend(&mine, 1, MPI_INT, rank - 1, 41, tcomm);
    MPI_Barrier(tcomm);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    if (rank % 2 == 0 && rank + 1 < size)
        EXPECT(got == value(rank + 1, 0, 41), "ssend across a collective: got %d", got);
}

/* MPI_Comm_dup inside the region: the same ranks, a communicator of its
 * own (a message on it does not meet a receive on tcomm), ended by
 * MPI_Comm_free. */
static void duplicate(int rank, int size)
{
    MPI_Comm dup;
    MPI_Comm_dup(tcomm, &dup);
    int dup_rank = -1, dup_size = -1;
    MPI_Comm_rank(dup, &dup_rank);
    MPI_Comm_size(dup, &dup_size);
    EXPECT(dup_rank == rank && dup_size == size, "dup: rank %d size %d, expected %d %d", dup_rank, dup_size, rank,
           size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size, on_dup = -1, on_tcomm = -1;
    MPI_Request req;
    MPI_Irecv(&on_tcomm, 1, MPI_INT, left, 21, tcomm, &req);
    int mine[2] = {value(rank, 0, 21), value(rank, 1, 21)};
    MPI_Request on_dup_sent;
    MPI_Isend(&mine[0], 1, MPI_INT, right, 21, dup, &on_dup_sent);
    MPI_Send(&mine[1], 1, MPI_INT, right, 21, tcomm); /* its receive is posted */
    MPI_Recv(&on_dup, 1, MPI_INT, left, 21, dup, MPI_STATUS_IGNORE);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Wait(&on_dup_sent, MPI_STATUS_IGNORE);
    EXPECT(on_dup == value(left, 0, 21) && on_tcomm == value(left, 1, 21), "dup: got %d on dup, %d on tcomm", on_dup,
           on_tcomm);
    MPI_Comm_free(&dup);
    EXPECT(dup == MPI_COMM_NULL, "MPI_Comm_free left the duplicate's handle");
}

/* The process that holds thread rank r. */
static int process_of(int r)
{
    int p = 0;
    while (r >= first_rank[p + 1])
        p++;
    return p;
}

/* Splits of comm (whose ranks are rank and size), each checked against the
 * members computed here: new rank and size, a ring, allreduce, bcast from
 * the last rank, allgather, and a duplicate of the result; the result is
 * freed. */
typedef int (*rank_rule)(int r, int size);

static void check_split(MPI_Comm comm, int rank, int size, rank_rule colour_of, rank_rule key_of, const char *what,
                        int depth)
{
    int mine = colour_of(rank, size), *members = malloc(sizeof(int) * size), n = 0, me = -1;
    for (int r = 0; r < size; r++) {
        if (colour_of(r, size) != mine || mine == MPI_UNDEFINED)
            continue;
        int at = n++; /* insertion by (key, rank) */
        while (at > 0 && key_of(members[at - 1], size) > key_of(r, size))
            members[at] = members[at - 1], at--;
        members[at] = r;
    }
    for (int i = 0; i < n; i++)
        if (members[i] == rank)
            me = i;
    MPI_Comm sub = MPI_COMM_SELF;
    int rc = MPI_Comm_split(comm, mine, key_of(rank, size), &sub);
    EXPECT(rc == MPI_SUCCESS, "%s: MPI_Comm_split failed", what);
    if (mine == MPI_UNDEFINED) {
        EXPECT(sub == MPI_COMM_NULL, "%s: MPI_UNDEFINED gave a communicator", what);
        free(members);
        return;
    }
    int sub_rank = -1, sub_size = -1;
    MPI_Comm_rank(sub, &sub_rank);
    MPI_Comm_size(sub, &sub_size);
    EXPECT(sub_rank == me && sub_size == n, "%s: rank %d of %d, expected %d of %d", what, sub_rank, sub_size, me, n);
    if (sub_rank != me || sub_size != n) {
        MPI_Comm_free(&sub);
        free(members);
        return;
    }
    int right = (me + 1) % n, left = (me + n - 1) % n, got = -1, sum = 0, expect_sum = 0;
    MPI_Sendrecv(&rank, 1, MPI_INT, right, 3, &got, 1, MPI_INT, left, 3, sub, MPI_STATUS_IGNORE);
    EXPECT(got == members[left], "%s: ring got %d, expected %d", what, got, members[left]);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, sub);
    for (int i = 0; i < n; i++)
        expect_sum += members[i];
    EXPECT(sum == expect_sum, "%s: allreduce %d, expected %d", what, sum, expect_sum);
    got = rank;
    MPI_Bcast(&got, 1, MPI_INT, n - 1, sub);
    EXPECT(got == members[n - 1], "%s: bcast %d, expected %d", what, got, members[n - 1]);
    int *all = malloc(sizeof(int) * n);
    MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, sub);
    for (int i = 0; i < n; i++)
        EXPECT(all[i] == members[i], "%s: allgather [%d]=%d, expected %d", what, i, all[i], members[i]);
    free(all);
    /* Errors on it are returned, as on tcomm: the error handler is inherited. */
    int cls = -1;
    MPI_Error_class(MPI_Send(&rank, 1, MPI_INT, n, 0, sub), &cls);
    EXPECT(cls == MPI_ERR_RANK, "%s: a send to rank %d: error class %d", what, n, cls);
    if (depth == 0) {
        MPI_Comm dup;
        MPI_Comm_dup(sub, &dup);
        int dup_rank = -1, dup_sum = 0;
        MPI_Comm_rank(dup, &dup_rank);
        MPI_Allreduce(&rank, &dup_sum, 1, MPI_INT, MPI_SUM, dup);
        EXPECT(dup_rank == me && dup_sum == expect_sum, "%s: its dup: rank %d sum %d", what, dup_rank, dup_sum);
        MPI_Comm_free(&dup);
    }
    MPI_Comm_free(&sub);
    EXPECT(sub == MPI_COMM_NULL, "%s: MPI_Comm_free left the handle", what);
    free(members);
}

static int parity(int r, int size) { return (void)size, r % 2; }
static int ascending(int r, int size) { return (void)size, r; }
static int descending(int r, int size) { return size - r; }
static int all_one(int r, int size) { return (void)r, (void)size, 7; }
static int first_left_out(int r, int size) { return (void)size, r == 0 ? MPI_UNDEFINED : 1; }
static int halves(int r, int size) { return 2 * r < size ? 4 : 5; }
static int by_process(int r, int size) { return (void)size, process_of(r); }

/* Splits of tcomm, a split of a split, split_type, and a split that would
 * interleave two processes' threads (refused alike by every rank). */
static void derived(int rank, int size)
{
    check_split(tcomm, rank, size, parity, ascending, "split by parity", 0);
    check_split(tcomm, rank, size, all_one, descending, "split reversed", 0);
    check_split(tcomm, rank, size, first_left_out, ascending, "split without rank 0", 0);
    check_split(tcomm, rank, size, by_process, descending, "split by process", 0);
    MPI_Comm half;
    MPI_Comm_split(tcomm, halves(rank, size), rank, &half);
    int half_rank = -1, half_size = -1;
    MPI_Comm_rank(half, &half_rank);
    MPI_Comm_size(half, &half_size);
    check_split(half, half_rank, half_size, parity, descending, "a split of a split", 1);
    MPI_Comm_free(&half);
    MPI_Comm node;
    MPI_Comm_split_type(tcomm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    int node_rank = -1, node_size = -1;
    MPI_Comm_rank(node, &node_rank);
    MPI_Comm_size(node, &node_size);
    EXPECT(node_rank == rank && node_size == size, "split_type: rank %d of %d", node_rank, node_size);
    MPI_Comm_free(&node);
    /* Ordered by each process's thread index, ranks alternate processes. */
    int local = rank - first_rank[world_rank], cls = -1, most = 0, previous = -1;
    bool interleaves = false, *seen = calloc((size_t)world_size, sizeof *seen);
    for (int p = 0; p < world_size; p++)
        most = first_rank[p + 1] - first_rank[p] > most ? first_rank[p + 1] - first_rank[p] : most;
    for (int t = 0; t < most; t++) /* the new order: thread index, then rank */
        for (int p = 0; p < world_size; p++)
            if (first_rank[p] + t < first_rank[p + 1]) {
                interleaves |= p != previous && seen[p];
                seen[p] = true;
                previous = p;
            }
    free(seen);
    MPI_Comm mixed = MPI_COMM_NULL;
    MPI_Error_class(MPI_Comm_split(tcomm, 0, local, &mixed), &cls);
    EXPECT(interleaves ? cls == MPI_ERR_OTHER && mixed == MPI_COMM_NULL : cls == MPI_SUCCESS,
           "an interleaving split: error class %d", cls);
    if (mixed != MPI_COMM_NULL)
        MPI_Comm_free(&mixed);
}

/* MPI_Comm_dup copies each thread's attributes through the keyval's copy
 * function; freeing the duplicate deletes them. Names go to the host. */
static int copy_key = MPI_KEYVAL_INVALID;
static _Atomic int copies, copy_deletes;

static int copy_plus_one(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)comm, (void)keyval, (void)extra;
    *(intptr_t *)out = (intptr_t)in + 1;
    *flag = 1;
    atomic_fetch_add(&copies, 1);
    return MPI_SUCCESS;
}

static int count_copy_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)keyval, (void)value, (void)extra;
    atomic_fetch_add(&copy_deletes, 1);
    return MPI_SUCCESS;
}

static void dup_attributes_and_names(int rank)
{
    MPI_Comm_set_attr(tcomm, copy_key, (void *)(intptr_t)(1000 + rank));
    MPI_Comm dup;
    MPI_Comm_dup(tcomm, &dup);
    intptr_t got = 0;
    int flag = 0;
    MPI_Comm_get_attr(dup, copy_key, &got, &flag);
    EXPECT(flag && got == 1001 + rank, "dup's attribute: flag %d value %ld, expected %d", flag, (long)got, 1001 + rank);
    MPI_Comm_set_name(dup, "a duplicate");
    char name[MPI_MAX_OBJECT_NAME];
    int length = 0;
    MPI_Comm_get_name(dup, name, &length);
    EXPECT(!strcmp(name, "a duplicate"), "dup's name: %s", name);
    MPI_Comm_free(&dup);
    MPI_Comm_delete_attr(tcomm, copy_key);
}

/* Attributes are each thread's own (as MPICH keeps them); finish runs the
 * delete function once per thread that set one. */
static int key = MPI_KEYVAL_INVALID;
static _Atomic int deleted;

static int count_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)keyval, (void)value, (void)extra;
    atomic_fetch_add(&deleted, 1);
    return MPI_SUCCESS;
}

static void attributes(int rank)
{
    static int values[64];
    values[rank % 64] = rank;
    MPI_Comm_set_attr(tcomm, key, &values[rank % 64]);
    MPI_Barrier(tcomm); /* every thread has set its own before any reads */
    int *mine = NULL, flag = 0, *tag_ub = NULL;
    MPI_Comm_get_attr(tcomm, key, &mine, &flag);
    EXPECT(flag && mine == &values[rank % 64], "attribute: rank %d reads another's value", rank);
    MPI_Comm_get_attr(tcomm, MPI_TAG_UB, &tag_ub, &flag);
    EXPECT(flag && *tag_ub >= 32767, "MPI_TAG_UB on a thread communicator");
}

static void *thread_main(void *arg)
{
    (void)arg;
    int rank, size;
    threadcomm_enter(tcomm, total_ranks, &rank, &size);
    EXPECT(rank >= first_rank[world_rank] && rank < first_rank[world_rank] + threads_here, "rank %d outside [%d, %d)",
           rank, first_rank[world_rank], first_rank[world_rank] + threads_here);
    /* Ranks are distinct: gathered, they are 0..size-1. */
    int *all = malloc(sizeof(int) * size);
    MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, tcomm);
    for (int r = 0; r < size; r++)
        EXPECT(all[r] == r, "rank %d says it is %d", r, all[r]);
    free(all);
    ring(rank, size);
    any_source(rank, size);
    order(rank, size);
    probe_and_truncate(rank, size);
    collectives(rank, size);
    more_collectives(rank, size);
    duplicate(rank, size);
    derived(rank, size);
    nonblocking(rank, size);
    nonblocking_more(rank, size);
    matched_probes(rank, size);
    large_count(rank, size);
    mixed_requests(rank, size);
    idup(rank, size);
    dup_attributes_and_names(rank);
    ssend_across_collective(rank, size);
    attributes(rank);
    MPIX_Threadcomm_finish(tcomm);
    return NULL;
}

int main(int argc, char **argv)
{
    int loops = 1;
    threads_here = threadcomm_init_args(&argc, &argv, "--loops", &loops,
                                        "usage: threadcomm_check [--threads T] [--uneven] [--loops L]");
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    first_rank = malloc(sizeof(int) * (world_size + 1));
    int *each = malloc(sizeof(int) * world_size);
    PMPI_Allgather(&threads_here, 1, MPI_INT, each, 1, MPI_INT, MPI_COMM_WORLD);
    first_rank[0] = 0;
    for (int p = 0; p < world_size; p++)
        first_rank[p + 1] = first_rank[p] + each[p];
    total_ranks = first_rank[world_size];
    pthread_t *ids = malloc(sizeof(pthread_t) * threads_here);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_delete, &key, NULL);
    MPI_Comm_create_keyval(copy_plus_one, count_copy_delete, &copy_key, NULL);
    for (int loop = 0; loop < loops; loop++) {
        if (MPIX_Threadcomm_init(MPI_COMM_WORLD, threads_here, &tcomm) != MPI_SUCCESS)
            CHECK_FATAL("MPIX_Threadcomm_init failed");
        MPI_Comm_set_errhandler(tcomm, MPI_ERRORS_RETURN);
        /* One attribute on the communicator itself, set outside the region:
         * each of the three dups of tcomm inside (duplicate, idup,
         * dup_attributes_and_names) copies it once, each free of one and
         * MPIX_Threadcomm_free delete one each. */
        MPI_Comm_set_attr(tcomm, copy_key, (void *)(intptr_t)7);
        for (int t = 0; t < threads_here; t++)
            pthread_create(&ids[t], NULL, thread_main, NULL);
        for (int t = 0; t < threads_here; t++)
            pthread_join(ids[t], NULL);
        MPIX_Threadcomm_free(&tcomm);
        EXPECT(tcomm == MPI_COMM_NULL, "MPIX_Threadcomm_free left the handle");
        int ran = atomic_exchange(&deleted, 0);
        EXPECT(ran == threads_here, "the attributes' delete function ran %d times, not %d", ran, threads_here);
        int copied = atomic_exchange(&copies, 0), copy_deleted = atomic_exchange(&copy_deletes, 0);
        EXPECT(copied == threads_here + 3 && copy_deleted == 2 * threads_here + 4,
               "dup's attributes: copied %d times, deleted %d, expected %d and %d", copied, copy_deleted,
               threads_here + 3, 2 * threads_here + 4);
    }
    long mine = atomic_load(&failures), all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (world_rank == 0)
        printf("threadcomm_check: %d processes, %d ranks, %d loops: %s (%ld failures)\n", world_size, total_ranks,
               loops, all ? "FAILED" : "ok", all);
    MPI_Comm_free_keyval(&key);
    MPI_Comm_free_keyval(&copy_key);
    free(ids);
    free(each);
    free(first_rank);
    MPI_Finalize();
    return all ? 1 : 0;
}
