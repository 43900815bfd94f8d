/* MPI-4 on a thread communicator: every persistent collective (MPI_<name>_init,
 * both bindings where the host has `_c`), partitioned communication, the
 * remaining large-count calls, MPI_Cancel of an active persistent send, and
 * a sample of the calls refused there. Every process starts T threads (T+1
 * on odd ranks with --uneven), each a rank; every result is checked against
 * values computed locally from the ranks. Each persistent request is
 * started several times with new values, its arrays and a derived datatype
 * overwritten or freed after the init; two persistent collectives are
 * started in opposite orders on even and odd ranks (MPI-4 matches them at
 * their init). A persistent collective on a host communicator goes to the
 * host.
 *   threadcomm_pcoll_check [--threads T] [--uneven] [--starts N] */
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
#define HAVE_MPI4_CALLS 1
#endif

static int threads_here, world_size, starts = 3;
static int total_ranks;
static MPI_Comm tcomm, hostcomm;

static int class_of(int rc)
{
    int class = -1;
    MPI_Error_class(rc, &class);
    return class;
}

#ifdef HAVE_MPI4_CALLS
/* Completes a request by one of the wait family's members, by turn. */
static void complete(MPI_Request *req, int turn)
{
    int flag = 0, index = -1, outcount = 0, indices[1];
    MPI_Status statuses[1];
    switch (turn % 4) {
    case 0: MPI_Wait(req, MPI_STATUS_IGNORE); break;
    case 1:
        while (!flag)
            MPI_Test(req, &flag, MPI_STATUS_IGNORE);
        break;
    case 2: MPI_Waitany(1, req, &index, MPI_STATUS_IGNORE); break;
    default:
        while (outcount == 0)
            MPI_Testsome(1, req, &outcount, indices, statuses);
    }
}

/* The sum over ranks lo..hi-1 of value(q, i, salt). */
static int sum_of(int lo, int hi, int i, int salt)
{
    int s = 0;
    for (int q = lo; q < hi; q++)
        s += value(q, i, salt);
    return s;
}

/* Per-rank counts and displacements (with a gap) for the v-forms. */
static int count_for(int q, int n) { return n * (q % 3 + 1); }
static void v_layout(int size, int n, int counts[], int displs[])
{
    int at = 0;
    for (int q = 0; q < size; q++) {
        counts[q] = count_for(q, n);
        displs[q] = at;
        at += counts[q] + 1;
    }
}

/* The reductions and bcast. */
static void rooted_and_reductions(int rank, int size, int n)
{
    int *sbuf = calloc((size_t)n * size, sizeof(int)), *rbuf = calloc((size_t)n * size, sizeof(int));
    int *shares = malloc(sizeof(int) * size);
    MPI_Request bcast, reduce, allreduce, rsb, rs, scan, exscan;
    int root = size - 1;
    MPI_Datatype one_int; /* derived, freed after the init */
    MPI_Type_contiguous(1, MPI_INT, &one_int);
    MPI_Type_commit(&one_int);
    MPI_Bcast_init(rbuf, n, one_int, root, tcomm, MPI_INFO_NULL, &bcast);
    MPI_Type_free(&one_int);
    MPI_Reduce_init(sbuf, rbuf, n, MPI_INT, MPI_SUM, 0, tcomm, MPI_INFO_NULL, &reduce);
    MPI_Allreduce_init(sbuf, rbuf, n, MPI_INT, MPI_SUM, tcomm, MPI_INFO_NULL, &allreduce);
    MPI_Reduce_scatter_block_init(sbuf, rbuf, n, MPI_INT, MPI_SUM, tcomm, MPI_INFO_NULL, &rsb);
    for (int q = 0; q < size; q++)
        shares[q] = count_for(q, n) / 2;
    MPI_Reduce_scatter_init(sbuf, rbuf, shares, MPI_INT, MPI_SUM, tcomm, MPI_INFO_NULL, &rs);
    int offset = 0, total = 0;
    for (int q = 0; q < size; q++)
        offset += q < rank ? shares[q] : 0, total += shares[q];
    int mine = shares[rank];
    memset(shares, 0xff, sizeof(int) * size); /* the init copied them */
    MPI_Scan_init(sbuf, rbuf, n, MPI_INT, MPI_SUM, tcomm, MPI_INFO_NULL, &scan);
    MPI_Exscan_init(sbuf, rbuf, n, MPI_INT, MPI_SUM, tcomm, MPI_INFO_NULL, &exscan);
    for (int it = 0; it < starts; it++) {
        int salt = 31 * it + n;
        for (int i = 0; i < n; i++)
            rbuf[i] = rank == root ? value(root, i, salt) : -1;
        MPI_Start(&bcast);
        complete(&bcast, it);
        for (int i = 0; i < n; i++)
            EXPECT(rbuf[i] == value(root, i, salt), "bcast_init n=%d it=%d [%d]=%d", n, it, i, rbuf[i]);
        for (int i = 0; i < n * size; i++)
            sbuf[i] = value(rank, i, salt), rbuf[i] = -1;
        MPI_Start(&reduce);
        complete(&reduce, it + 1);
        for (int i = 0; rank == 0 && i < n; i++)
            EXPECT(rbuf[i] == sum_of(0, size, i, salt), "reduce_init n=%d it=%d [%d]=%d", n, it, i, rbuf[i]);
        MPI_Start(&allreduce);
        complete(&allreduce, it + 2);
        for (int i = 0; i < n; i++)
            EXPECT(rbuf[i] == sum_of(0, size, i, salt), "allreduce_init n=%d it=%d [%d]=%d", n, it, i, rbuf[i]);
        MPI_Start(&rsb);
        complete(&rsb, it + 3);
        for (int i = 0; i < n; i++)
            EXPECT(rbuf[i] == sum_of(0, size, rank * n + i, salt), "reduce_scatter_block_init n=%d [%d]=%d", n, i,
                   rbuf[i]);
        if (total <= n * size) {
            MPI_Start(&rs);
            complete(&rs, it);
            for (int i = 0; i < mine; i++)
                EXPECT(rbuf[i] == sum_of(0, size, offset + i, salt), "reduce_scatter_init n=%d [%d]=%d", n, i, rbuf[i]);
        }
        MPI_Start(&scan);
        complete(&scan, it + 1);
        for (int i = 0; i < n; i++)
            EXPECT(rbuf[i] == sum_of(0, rank + 1, i, salt), "scan_init n=%d [%d]=%d", n, i, rbuf[i]);
        MPI_Start(&exscan);
        complete(&exscan, it + 2);
        for (int i = 0; rank > 0 && i < n; i++)
            EXPECT(rbuf[i] == sum_of(0, rank, i, salt), "exscan_init n=%d [%d]=%d", n, i, rbuf[i]);
    }
    MPI_Request all[] = {bcast, reduce, allreduce, rsb, rs, scan, exscan};
    for (int k = 0; k < 7; k++) {
        int rc = MPI_Request_free(&all[k]);
        EXPECT(rc == MPI_SUCCESS && all[k] == MPI_REQUEST_NULL, "Request_free of an inactive one: %d", rc);
    }
    free(sbuf), free(rbuf), free(shares);
}

/* The block collectives, their v-forms and alltoallw. */
static void blocks(int rank, int size, int n)
{
    int most = 3 * n + 1; /* a v-block's largest count, with its gap */
    int *sbuf = calloc((size_t)most * size, sizeof(int)), *rbuf = calloc((size_t)most * size, sizeof(int));
    int *counts = malloc(sizeof(int) * size), *displs = malloc(sizeof(int) * size);
    int *vc = malloc(sizeof(int) * size), *vd = malloc(sizeof(int) * size);
    int *sc = malloc(sizeof(int) * size), *sd = malloc(sizeof(int) * size);
    int *wsd = malloc(sizeof(int) * size), *wrd = malloc(sizeof(int) * size);
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * size);
    int root = 0;
    v_layout(size, n, vc, vd);
    /* alltoallv: rank r sends (r + q) % 3 + 1 blocks of n to q */
    int sat = 0, rat = 0;
    for (int q = 0; q < size; q++) {
        sc[q] = n * ((rank + q) % 3 + 1);
        sd[q] = sat, sat += sc[q];
        counts[q] = sc[q];
        displs[q] = rat, rat += counts[q];
        wsd[q] = sd[q] * (int)sizeof(int), wrd[q] = displs[q] * (int)sizeof(int);
        types[q] = MPI_INT;
    }
    MPI_Request gather, gatherv, scatter, scatterv, allgather, allgatherv, alltoall, alltoallv, alltoallw;
    MPI_Gather_init(sbuf, n, MPI_INT, rbuf, n, MPI_INT, root, tcomm, MPI_INFO_NULL, &gather);
    MPI_Gatherv_init(sbuf, vc[rank], MPI_INT, rbuf, vc, vd, MPI_INT, root, tcomm, MPI_INFO_NULL, &gatherv);
    MPI_Scatter_init(sbuf, n, MPI_INT, rbuf, n, MPI_INT, root, tcomm, MPI_INFO_NULL, &scatter);
    MPI_Scatterv_init(sbuf, vc, vd, MPI_INT, rbuf, vc[rank], MPI_INT, root, tcomm, MPI_INFO_NULL, &scatterv);
    MPI_Allgather_init(sbuf, n, MPI_INT, rbuf, n, MPI_INT, tcomm, MPI_INFO_NULL, &allgather);
    MPI_Allgatherv_init(sbuf, vc[rank], MPI_INT, rbuf, vc, vd, MPI_INT, tcomm, MPI_INFO_NULL, &allgatherv);
    MPI_Alltoall_init(sbuf, n, MPI_INT, rbuf, n, MPI_INT, tcomm, MPI_INFO_NULL, &alltoall);
    MPI_Alltoallv_init(sbuf, sc, sd, MPI_INT, rbuf, counts, displs, MPI_INT, tcomm, MPI_INFO_NULL, &alltoallv);
    MPI_Alltoallw_init(sbuf, sc, wsd, types, rbuf, counts, wrd, types, tcomm, MPI_INFO_NULL, &alltoallw);
    /* The inits copied the arrays: the checks below use copies of our own. */
    int *vc0 = malloc(sizeof(int) * size), *vd0 = malloc(sizeof(int) * size), *rd0 = malloc(sizeof(int) * size);
    memcpy(vc0, vc, sizeof(int) * size), memcpy(vd0, vd, sizeof(int) * size);
    memcpy(rd0, displs, sizeof(int) * size);
    memset(vc, 0xff, sizeof(int) * size), memset(vd, 0xff, sizeof(int) * size);
    memset(sc, 0xff, sizeof(int) * size), memset(counts, 0xff, sizeof(int) * size);
    for (int q = 0; q < size; q++)
        types[q] = MPI_DATATYPE_NULL;
    for (int it = 0; it < starts; it++) {
        int salt = 17 * it + n;
        /* gather: each rank's n values */
        for (int i = 0; i < most * size; i++)
            sbuf[i] = i < most ? value(rank, i, salt) : -2, rbuf[i] = -1;
        MPI_Start(&gather);
        complete(&gather, it);
        for (int q = 0; rank == root && q < size; q++)
            for (int i = 0; i < n; i++)
                EXPECT(rbuf[q * n + i] == value(q, i, salt), "gather_init n=%d it=%d q=%d [%d]=%d", n, it, q, i,
                       rbuf[q * n + i]);
        MPI_Start(&gatherv);
        complete(&gatherv, it + 1);
        for (int q = 0; rank == root && q < size; q++)
            for (int i = 0; i < vc0[q]; i++)
                EXPECT(rbuf[vd0[q] + i] == value(q, i, salt), "gatherv_init n=%d q=%d [%d]=%d", n, q, i,
                       rbuf[vd0[q] + i]);
        /* scatter: the root's block q is value(q, ...) */
        for (int q = 0; q < size; q++)
            for (int i = 0; i < n; i++)
                sbuf[q * n + i] = value(q, i, salt);
        memset(rbuf, 0xff, sizeof(int) * most * size);
        MPI_Start(&scatter);
        complete(&scatter, it + 2);
        for (int i = 0; i < n; i++)
            EXPECT(rbuf[i] == value(rank, i, salt), "scatter_init n=%d [%d]=%d", n, i, rbuf[i]);
        for (int q = 0; q < size; q++)
            for (int i = 0; i < vc0[q]; i++)
                sbuf[vd0[q] + i] = value(q, i, salt + 1);
        MPI_Start(&scatterv);
        complete(&scatterv, it + 3);
        for (int i = 0; i < vc0[rank]; i++)
            EXPECT(rbuf[i] == value(rank, i, salt + 1), "scatterv_init n=%d [%d]=%d", n, i, rbuf[i]);
        /* allgather(v): each rank's own values */
        for (int i = 0; i < most; i++)
            sbuf[i] = value(rank, i, salt + 2);
        MPI_Start(&allgather);
        complete(&allgather, it);
        for (int q = 0; q < size; q++)
            for (int i = 0; i < n; i++)
                EXPECT(rbuf[q * n + i] == value(q, i, salt + 2), "allgather_init n=%d q=%d [%d]=%d", n, q, i,
                       rbuf[q * n + i]);
        MPI_Start(&allgatherv);
        complete(&allgatherv, it + 1);
        for (int q = 0; q < size; q++)
            for (int i = 0; i < vc0[q]; i++)
                EXPECT(rbuf[vd0[q] + i] == value(q, i, salt + 2), "allgatherv_init n=%d q=%d [%d]=%d", n, q, i,
                       rbuf[vd0[q] + i]);
        /* alltoall: block q of rank r is value(r, q * 1000 + i) */
        for (int q = 0; q < size; q++)
            for (int i = 0; i < n; i++)
                sbuf[q * n + i] = value(rank, q * 1000 + i, salt);
        MPI_Start(&alltoall);
        complete(&alltoall, it + 2);
        for (int q = 0; q < size; q++)
            for (int i = 0; i < n; i++)
                EXPECT(rbuf[q * n + i] == value(q, rank * 1000 + i, salt), "alltoall_init n=%d q=%d [%d]=%d", n, q, i,
                       rbuf[q * n + i]);
        for (int w = 0; w < 2; w++) {
            int at = 0;
            for (int q = 0; q < size; q++)
                for (int i = 0; i < n * ((rank + q) % 3 + 1); i++)
                    sbuf[at++] = value(rank, q * 1000 + i, salt + w);
            MPI_Request *r = w ? &alltoallw : &alltoallv;
            MPI_Start(r);
            complete(r, it + w);
            for (int q = 0; q < size; q++)
                for (int i = 0; i < n * ((rank + q) % 3 + 1); i++)
                    EXPECT(rbuf[rd0[q] + i] == value(q, rank * 1000 + i, salt + w), "alltoall%s_init q=%d [%d]=%d",
                           w ? "w" : "v", q, i, rbuf[rd0[q] + i]);
        }
    }
    MPI_Request all[] = {gather, gatherv, scatter, scatterv, allgather, allgatherv, alltoall, alltoallv, alltoallw};
    for (int k = 0; k < 9; k++)
        MPI_Request_free(&all[k]);
    free(sbuf), free(rbuf), free(counts), free(displs), free(vc), free(vd), free(sc), free(sd), free(wsd), free(wrd);
    free(types), free(vc0), free(vd0), free(rd0);
}

/* Two persistent collectives, started in opposite orders on even and odd
 * ranks, plus a barrier_init. */
static void start_orders(int rank, int size)
{
    int a_in = rank + 1, a_out = -1, b = rank == 0 ? 4242 : -1;
    MPI_Request reqs[3];
    MPI_Allreduce_init(&a_in, &a_out, 1, MPI_INT, MPI_SUM, tcomm, MPI_INFO_NULL, &reqs[0]);
    MPI_Bcast_init(&b, 1, MPI_INT, 0, tcomm, MPI_INFO_NULL, &reqs[1]);
    MPI_Barrier_init(tcomm, MPI_INFO_NULL, &reqs[2]);
    for (int it = 0; it < starts; it++) {
        a_out = -1, a_in = rank + 1 + it, b = rank == 0 ? 4242 + it : -1;
        MPI_Request order[3] = {reqs[rank % 2], reqs[1 - rank % 2], reqs[2]};
        int rc = MPI_Startall(3, order);
        EXPECT(rc == MPI_SUCCESS, "Startall of persistent collectives: %d", rc);
        MPI_Status sts[3];
        MPI_Waitall(3, order, sts);
        EXPECT(a_out == size * (size + 1) / 2 + size * it, "allreduce in either order: %d", a_out);
        EXPECT(b == 4242 + it, "bcast in either order: %d", b);
        EXPECT(order[0] != MPI_REQUEST_NULL, "a persistent collective's request stays after its wait");
    }
    for (int k = 0; k < 3; k++)
        MPI_Request_free(&reqs[k]);
}

/* Partitions low..high of a partitioned send's buffer: their values. */
static void fill_partitions(int *out, int low, int high, int per, int rank, int it)
{
    for (int i = low * per; i < (high + 1) * per; i++)
        out[i] = value(rank, i, it);
}

/* Partitioned: each rank sends its right neighbour P partitions, readied in
 * three ways, and receives its left's. A partition arrives only once it is
 * sent: before every rank has passed the barrier none is. */
static void partitioned(int rank, int size, int parts, int per)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int total = parts * per;
    int *out = calloc((size_t)total, sizeof(int)), *in = calloc((size_t)total, sizeof(int));
    MPI_Request send, recv;
    MPI_Psend_init(out, parts, per, MPI_INT, right, 7, tcomm, MPI_INFO_NULL, &send);
    MPI_Precv_init(in, parts, per, MPI_INT, left, 7, tcomm, MPI_INFO_NULL, &recv);
    int *list = malloc(sizeof(int) * parts);
    for (int it = 0; it < starts; it++) {
        /* Each partition is written just before it is readied: one sent
         * early would arrive holding -7. */
        for (int i = 0; i < total; i++)
            out[i] = -7, in[i] = -1;
        MPI_Start(&recv);
        MPI_Start(&send);
        int flag = -1;
        MPI_Parrived(recv, parts - 1, &flag);
        EXPECT(flag == 0, "Parrived before its sender readied anything: %d", flag);
        MPI_Barrier(tcomm);
        int rc, half = parts / 2;
        if (it % 3 == 0) { /* one by one, last first */
            for (int k = parts - 1; k >= 0; k--) {
                fill_partitions(out, k, k, per, rank, it);
                if ((rc = MPI_Pready(k, send)) != MPI_SUCCESS)
                    EXPECT(0, "Pready(%d): %d", k, rc);
            }
        } else if (it % 3 == 1) { /* two ranges */
            fill_partitions(out, half, parts - 1, per, rank, it);
            rc = MPI_Pready_range(half, parts - 1, send);
            if (half > 0) {
                fill_partitions(out, 0, half - 1, per, rank, it);
                rc |= MPI_Pready_range(0, half - 1, send);
            }
            EXPECT(rc == MPI_SUCCESS, "Pready_range: %d", rc);
        } else { /* odd partitions by a list, then even ones by another */
            int at = 0;
            for (int k = 1; k < parts; k += 2)
                list[at++] = k, fill_partitions(out, k, k, per, rank, it);
            rc = MPI_Pready_list(at, list, send);
            at = 0;
            for (int k = 0; k < parts; k += 2)
                list[at++] = k, fill_partitions(out, k, k, per, rank, it);
            rc |= MPI_Pready_list(at, list, send);
            EXPECT(rc == MPI_SUCCESS, "Pready_list: %d", rc);
        }
        for (int k = 0; k < parts; k++) {
            flag = 0;
            while (!flag)
                MPI_Parrived(recv, k, &flag);
            for (int i = k * per; i < (k + 1) * per; i++)
                EXPECT(in[i] == value(left, i, it), "partition %d arrived with [%d]=%d", k, i, in[i]);
        }
        MPI_Status st;
        MPI_Wait(&recv, &st);
        EXPECT(st.MPI_SOURCE == left && st.MPI_TAG == 7, "precv status %d %d", st.MPI_SOURCE, st.MPI_TAG);
        MPI_Wait(&send, MPI_STATUS_IGNORE);
    }
    int class = class_of(MPI_Pready(0, send));
    EXPECT(class == MPI_ERR_REQUEST, "Pready on an inactive send: class %d", class);
    class = class_of(MPI_Pready(0, recv));
    EXPECT(class == MPI_ERR_REQUEST, "Pready on a receive: class %d", class);
    MPI_Request bad = MPI_REQUEST_NULL;
    class = class_of(MPI_Psend_init(out, parts, per, MPI_INT, right, -3, tcomm, MPI_INFO_NULL, &bad));
    EXPECT(class == MPI_ERR_TAG && bad == MPI_REQUEST_NULL, "Psend_init of tag -3: class %d", class);
    MPI_Request_free(&send);
    MPI_Request_free(&recv);
    free(out), free(in), free(list);
}
#endif

#if MPI_VERSION >= 4
/* The large-count calls: the int path where the counts fit, MPI_ERR_COUNT
 * where they do not. */
static void large_count(int rank, int size)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out[4], in[4];
    for (int i = 0; i < 4; i++)
        out[i] = value(rank, i, 90), in[i] = -1;
    MPI_Status st;
    MPI_Sendrecv_c(out, 4, MPI_INT, right, 90, in, 4, MPI_INT, left, 90, tcomm, &st);
    for (int i = 0; i < 4; i++)
        EXPECT(in[i] == value(left, i, 90), "Sendrecv_c [%d]=%d", i, in[i]);
    MPI_Sendrecv_replace_c(in, 4, MPI_INT, right, 91, left, 91, tcomm, &st);
    for (int i = 0; i < 4; i++) /* the left's values went right: this rank has its left's left's */
        EXPECT(in[i] == value((left + size - 1) % size, i, 90), "Sendrecv_replace_c [%d]=%d", i, in[i]);
    int class = class_of(MPI_Sendrecv_c(out, (MPI_Count)1 << 40, MPI_INT, right, 92, in, 4, MPI_INT, left, 92, tcomm,
                                        MPI_STATUS_IGNORE));
    EXPECT(class == MPI_ERR_COUNT, "Sendrecv_c of 2^40: class %d", class);
    /* matched probes: a receive's room beyond an int is room enough */
    MPI_Request req;
    MPI_Isend(out, 4, MPI_INT, right, 93, tcomm, &req);
    MPI_Message msg;
    MPI_Mprobe(left, 93, tcomm, &msg, &st);
    MPI_Mrecv_c(in, (MPI_Count)1 << 40, MPI_INT, &msg, &st);
    MPI_Count got = -1;
    MPI_Get_count_c(&st, MPI_INT, &got);
    EXPECT(got == 4 && in[3] == value(left, 3, 90), "Mrecv_c: %lld, [3]=%d", (long long)got, in[3]);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Isend(out, 4, MPI_INT, right, 94, tcomm, &req);
    MPI_Mprobe(left, 94, tcomm, &msg, &st);
    MPI_Request rreq;
    memset(in, 0xff, sizeof in);
    MPI_Imrecv_c(in, 4, MPI_INT, &msg, &rreq);
    MPI_Wait(&rreq, MPI_STATUS_IGNORE);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    EXPECT(in[0] == value(left, 0, 90), "Imrecv_c [0]=%d", in[0]);
    /* the v and w non-blocking forms */
    MPI_Count *counts = malloc(sizeof(MPI_Count) * size);
    MPI_Aint *displs = malloc(sizeof(MPI_Aint) * size), *bytes = malloc(sizeof(MPI_Aint) * size);
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * size);
    int *sbuf = malloc(sizeof(int) * 2 * size), *rbuf = malloc(sizeof(int) * 2 * size);
    for (int q = 0; q < size; q++)
        counts[q] = 2, displs[q] = 2 * q, bytes[q] = 2 * q * (MPI_Aint)sizeof(int), types[q] = MPI_INT;
    for (int i = 0; i < 2 * size; i++)
        sbuf[i] = value(rank, i, 95), rbuf[i] = -1;
    MPI_Ialltoallv_c(sbuf, counts, displs, MPI_INT, rbuf, counts, displs, MPI_INT, tcomm, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    for (int q = 0; q < size; q++)
        EXPECT(rbuf[2 * q + 1] == value(q, 2 * rank + 1, 95), "Ialltoallv_c q=%d: %d", q, rbuf[2 * q + 1]);
    memset(rbuf, 0xff, sizeof(int) * 2 * size);
    MPI_Ialltoallw_c(sbuf, counts, bytes, types, rbuf, counts, bytes, types, tcomm, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    for (int q = 0; q < size; q++)
        EXPECT(rbuf[2 * q] == value(q, 2 * rank, 95), "Ialltoallw_c q=%d: %d", q, rbuf[2 * q]);
    memset(rbuf, 0xff, sizeof(int) * 2 * size);
    MPI_Iallgatherv_c(sbuf, 2, MPI_INT, rbuf, counts, displs, MPI_INT, tcomm, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    for (int q = 0; q < size; q++)
        EXPECT(rbuf[2 * q + 1] == value(q, 1, 95), "Iallgatherv_c q=%d: %d", q, rbuf[2 * q + 1]);
    memset(rbuf, 0xff, sizeof(int) * 2 * size);
    MPI_Igatherv_c(sbuf, 2, MPI_INT, rbuf, counts, displs, MPI_INT, size - 1, tcomm, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    for (int q = 0; rank == size - 1 && q < size; q++)
        EXPECT(rbuf[2 * q] == value(q, 0, 95), "Igatherv_c q=%d: %d", q, rbuf[2 * q]);
    MPI_Iscatterv_c(sbuf, counts, displs, MPI_INT, rbuf, 2, MPI_INT, 0, tcomm, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    EXPECT(rbuf[1] == value(0, 2 * rank + 1, 95), "Iscatterv_c: %d", rbuf[1]);
    MPI_Ireduce_scatter_c(sbuf, rbuf, counts, MPI_INT, MPI_SUM, tcomm, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    EXPECT(rbuf[1] == sum_of(0, size, 2 * rank + 1, 95), "Ireduce_scatter_c: %d", rbuf[1]);
    counts[size - 1] = (MPI_Count)1 << 40; /* alike on every rank: refused on every rank */
    req = MPI_REQUEST_NULL;
    class = class_of(MPI_Ireduce_scatter_c(sbuf, rbuf, counts, MPI_INT, MPI_SUM, tcomm, &req));
    EXPECT(class == MPI_ERR_COUNT && req == MPI_REQUEST_NULL, "Ireduce_scatter_c of 2^40: class %d", class);
    /* persistent `_c` forms */
    counts[size - 1] = 2;
    MPI_Request p;
    MPI_Allgatherv_init_c(sbuf, 2, MPI_INT, rbuf, counts, displs, MPI_INT, tcomm, MPI_INFO_NULL, &p);
    for (int it = 0; it < starts; it++) {
        for (int i = 0; i < 2; i++)
            sbuf[i] = value(rank, i, 96 + it);
        MPI_Start(&p);
        MPI_Wait(&p, MPI_STATUS_IGNORE);
        for (int q = 0; q < size; q++)
            EXPECT(rbuf[2 * q + 1] == value(q, 1, 96 + it), "Allgatherv_init_c q=%d: %d", q, rbuf[2 * q + 1]);
    }
    MPI_Request_free(&p);
    p = MPI_REQUEST_NULL;
    class = class_of(MPI_Bcast_init_c(sbuf, (MPI_Count)1 << 40, MPI_INT, 0, tcomm, MPI_INFO_NULL, &p));
    EXPECT(class == MPI_ERR_COUNT && p == MPI_REQUEST_NULL, "Bcast_init_c of 2^40: class %d", class);
    free(counts), free(displs), free(bytes), free(types), free(sbuf), free(rbuf);
}
#endif

/* MPI_Cancel of an active persistent send may not cancel it: the send
 * then completes as it would have, and its status says so. */
static void cancel_send(int rank, int size, int n)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int *out = calloc((size_t)n, sizeof(int)), *in = calloc((size_t)n, sizeof(int));
    MPI_Request send;
    MPI_Send_init(out, n, MPI_INT, right, 70, tcomm, &send);
    for (int it = 0; it < 2; it++) {
        for (int i = 0; i < n; i++)
            out[i] = value(rank, i, 70 + it), in[i] = -1;
        MPI_Start(&send);
        int rc = MPI_Cancel(&send);
        EXPECT(rc == MPI_SUCCESS, "MPI_Cancel of an active persistent send: %d", rc);
        MPI_Barrier(tcomm); /* every send is under way before any receive */
        MPI_Recv(in, n, MPI_INT, left, 70, tcomm, MPI_STATUS_IGNORE);
        MPI_Status st;
        MPI_Wait(&send, &st);
        int cancelled = -1;
        MPI_Test_cancelled(&st, &cancelled);
        EXPECT(cancelled == 0, "a send that was delivered says cancelled=%d", cancelled);
        for (int i = 0; i < n; i++)
            EXPECT(in[i] == value(left, i, 70 + it), "cancelled send n=%d [%d]=%d", n, i, in[i]);
    }
    MPI_Request_free(&send);
    free(out), free(in);
}

/* A sample of the calls refused on a thread communicator, and the small
 * ones served. */
static void refusals(int rank)
{
    int coords[2], class, result = -1, status = -1;
    class = class_of(MPI_Cart_coords(tcomm, rank, 2, coords));
    EXPECT(class == MPI_ERR_OTHER, "Cart_coords: class %d", class);
    int sb = 1, rb[4];
    class = class_of(MPI_Neighbor_allgather(&sb, 1, MPI_INT, rb, 1, MPI_INT, tcomm));
    EXPECT(class == MPI_ERR_OTHER, "Neighbor_allgather: class %d", class);
    class = class_of(MPI_Comm_set_info(tcomm, MPI_INFO_NULL));
    EXPECT(class == MPI_ERR_OTHER, "Comm_set_info: class %d", class);
    MPI_File fh;
    class = class_of(MPI_File_open(tcomm, "/nonexistent/shoal", MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    EXPECT(class == MPI_ERR_OTHER, "File_open: class %d", class);
    class = class_of(MPI_Comm_compare(tcomm, MPI_COMM_WORLD, &result));
    EXPECT(class == MPI_ERR_OTHER, "Comm_compare with world: class %d", class);
    MPI_Comm_compare(tcomm, tcomm, &result);
    EXPECT(result == MPI_IDENT, "Comm_compare with itself: %d", result);
    MPI_Topo_test(tcomm, &status);
    EXPECT(status == MPI_UNDEFINED, "Topo_test: %d", status);
#ifdef HAVE_MPI4_CALLS
    MPI_Request req = MPI_REQUEST_NULL;
    class = class_of(MPI_Neighbor_alltoall_init(&sb, 1, MPI_INT, rb, 1, MPI_INT, tcomm, MPI_INFO_NULL, &req));
    EXPECT(class == MPI_ERR_OTHER && req == MPI_REQUEST_NULL, "Neighbor_alltoall_init: class %d", class);
#endif
}

static void *thread_main(void *arg)
{
    (void)arg;
    int rank, size;
    threadcomm_enter(tcomm, total_ranks, &rank, &size);
#ifdef HAVE_MPI4_CALLS
    rooted_and_reductions(rank, size, 3);
    rooted_and_reductions(rank, size, 1500); /* long messages: handed over by address */
    blocks(rank, size, 2);
    blocks(rank, size, 700);
    start_orders(rank, size);
    partitioned(rank, size, 4, 3);
    partitioned(rank, size, 5, 1000);
#endif
#if MPI_VERSION >= 4
    large_count(rank, size);
#endif
    cancel_send(rank, size, 8);
    cancel_send(rank, size, 3000);
    refusals(rank);
    MPI_Barrier(tcomm);
    MPIX_Threadcomm_finish(tcomm);
    return NULL;
}

int main(int argc, char **argv)
{
    threads_here = threadcomm_init_args(&argc, &argv, "--starts", &starts,
                                        "usage: threadcomm_pcoll_check [--threads T] [--uneven] [--starts N]");
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    PMPI_Allreduce(&threads_here, &total_ranks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Comm_dup(MPI_COMM_WORLD, &hostcomm);
#ifdef HAVE_MPI4_CALLS
    /* On a host communicator: the host's persistent collective. */
    int in = world_rank + 1, out = -1;
    MPI_Request host_req;
    MPI_Allreduce_init(&in, &out, 1, MPI_INT, MPI_SUM, hostcomm, MPI_INFO_NULL, &host_req);
    for (int it = 0; it < 2; it++) {
        MPI_Start(&host_req);
        MPI_Wait(&host_req, MPI_STATUS_IGNORE);
        EXPECT(out == world_size * (world_size + 1) / 2, "host Allreduce_init: %d", out);
    }
    MPI_Request_free(&host_req);
#endif
    if (MPIX_Threadcomm_init(MPI_COMM_WORLD, threads_here, &tcomm) != MPI_SUCCESS)
        CHECK_FATAL("MPIX_Threadcomm_init failed");
    MPI_Comm_set_errhandler(tcomm, MPI_ERRORS_RETURN);
    run_threads(threads_here, thread_main);
    MPIX_Threadcomm_free(&tcomm);
    MPI_Comm_free(&hostcomm);
    long all = failures_everywhere();
    if (world_rank == 0)
        printf("threadcomm_pcoll_check: %d processes, %d ranks, %d starts, MPI-4 calls %s, large counts %s: %s (%ld "
               "failures)\n",
               world_size, total_ranks, starts,
#ifdef HAVE_MPI4_CALLS
               "checked",
#else
               "not in this MPI",
#endif
#if MPI_VERSION >= 4
               "checked",
#else
               "not in this MPI",
#endif
               all ? "FAILED" : "ok", all);
    MPI_Finalize();
    return all ? 1 : 0;
}
