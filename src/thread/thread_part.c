/* thread_part: MPI-4's partitioned communication on a thread communicator
 * (MPI_Psend_init, MPI_Precv_init, MPI_Pready, MPI_Pready_range,
 * MPI_Pready_list, MPI_Parrived).
 *
 * Simple and correct rather than clever: a partitioned send is one message
 * of partitions * count elements, which leaves once every partition is
 * ready (the last MPI_Pready sends it, from whichever thread); a partitioned
 * receive is one receive, posted at MPI_Start, whose partitions all arrive
 * when it completes, so MPI_Parrived says a partition has arrived only once
 * the whole message is in the buffer. Both are persistent requests of
 * thread_p2p.c (MPI_Start, the wait family, MPI_Request_free once inactive).
 * The message travels on the user's tag plus THREAD_TAG_PARTITIONED, which
 * no other receive takes; several partitioned requests between the same
 * two ranks with the same tag match in the order they are started.
 *
 * May call: core, and PMPI. */
#include <limits.h>
#include <stdlib.h>

#include "thread_internal.h"

typedef struct thread_part {
    thread_comm *tc;
    int self;
    void *buf;
    int partitions, count; /* count: the elements of every partition */
    MPI_Datatype type;
    bool type_owned;
    int peer, wire_tag;
    /* the operation MPI_Start made: a send leaves with its last partition */
    thread_req *req;
    _Atomic int ready;
    _Atomic unsigned char *marked; /* per partition, ready already */
} thread_part;

static void part_release(void *args)
{
    thread_part *pt = args;
    thread_type_release(&pt->type, pt->type_owned);
    free((void *)pt->marked);
    free(pt);
}

static int psend_start(void *args, MPI_Request *active)
{
    thread_part *pt = args;
    thread_req *req = calloc(1, sizeof *req);
    if (!req)
        return thread_error(pt->tc, MPI_ERR_NO_MEM, "no memory for a partitioned send");
    req->tc = pt->tc;
    for (int k = 0; k < pt->partitions; k++)
        atomic_store_explicit(&pt->marked[k], 0, memory_order_relaxed);
    atomic_store_explicit(&pt->ready, 0, memory_order_relaxed);
    pt->req = req;
    int rc = thread_req_hand_out(req, active);
    if (rc != MPI_SUCCESS) {
        free(req);
        return thread_error(pt->tc, rc, "no request from the host");
    }
    return MPI_SUCCESS;
}

static int precv_start(void *args, MPI_Request *active)
{
    thread_part *pt = args;
    thread_req *req = calloc(1, sizeof *req);
    if (!req)
        return thread_error(pt->tc, MPI_ERR_NO_MEM, "no memory for a partitioned receive");
    int rc = thread_coll_recv(pt->tc, pt->self, pt->buf, pt->count, pt->type, pt->peer, pt->wire_tag, req);
    if (rc != MPI_SUCCESS) {
        free(req);
        return thread_error(pt->tc, rc, "MPI_Start of a partitioned receive");
    }
    pt->req = req;
    rc = thread_req_hand_out(req, active);
    if (rc != MPI_SUCCESS) {
        /* Posted already: it must complete before it goes. */
        thread_coll_wait(req, 1);
        free(req);
        return thread_error(pt->tc, rc, "no request from the host");
    }
    return MPI_SUCCESS;
}

static const thread_persistent_ops psend_ops = {psend_start, part_release};
static const thread_persistent_ops precv_ops = {precv_start, part_release};

static int part_make(thread_comm *tc, bool is_recv, void *buf, int partitions, MPI_Count count, MPI_Datatype type,
                     int peer, int tag, MPI_Request *request)
{
    const char *name = is_recv ? "MPI_Precv_init" : "MPI_Psend_init";
    int self = thread_self(tc);
    if (self < 0)
        return thread_error(tc, MPI_ERR_COMM, name);
    thread_layout unused;
    int rc = MPI_SUCCESS;
    if (partitions < 1)
        rc = MPI_ERR_ARG;
    else if (count < 0 || count > INT_MAX / partitions)
        rc = MPI_ERR_COUNT;
    else if (tag < 0 || tag >= THREAD_PARTITIONED_TAGS)
        rc = MPI_ERR_TAG;
    else if (peer != MPI_PROC_NULL && (peer < 0 || peer >= tc->size))
        rc = MPI_ERR_RANK;
    else if (!thread_layout_of(type, &unused))
        rc = MPI_ERR_TYPE;
    if (rc != MPI_SUCCESS)
        return thread_error(tc, rc, name);
    thread_part *pt = calloc(1, sizeof *pt);
    _Atomic unsigned char *marked = calloc((size_t)partitions, sizeof *marked);
    if (!pt || !marked) {
        free(pt);
        free((void *)marked);
        return thread_error(tc, MPI_ERR_NO_MEM, name);
    }
    *pt = (thread_part){.tc = tc,
                        .self = self,
                        .buf = buf,
                        .partitions = partitions,
                        .count = (int)count * partitions,
                        .peer = peer,
                        .wire_tag = THREAD_TAG_PARTITIONED + tag,
                        .marked = marked};
    rc = thread_type_hold(type, &pt->type, &pt->type_owned);
    if (rc != MPI_SUCCESS) {
        part_release(pt);
        return thread_error(tc, MPI_ERR_TYPE, name);
    }
    rc = thread_persistent_make(tc, self, is_recv ? &precv_ops : &psend_ops, pt, request);
    if (rc != MPI_SUCCESS)
        part_release(pt);
    return rc;
}

int thread_psend_init(thread_comm *tc, const void *buf, int partitions, MPI_Count count, MPI_Datatype type, int dest,
                      int tag, MPI_Request *request)
{
    return part_make(tc, false, (void *)buf, partitions, count, type, dest, tag, request);
}

int thread_precv_init(thread_comm *tc, void *buf, int partitions, MPI_Count count, MPI_Datatype type, int source,
                      int tag, MPI_Request *request)
{
    return part_make(tc, true, buf, partitions, count, type, source, tag, request);
}

/* Partition k ready: the last one sends the message. */
static int mark_ready(thread_part *pt, int k)
{
    if (k < 0 || k >= pt->partitions)
        return thread_error(pt->tc, MPI_ERR_ARG, "MPI_Pready of a partition out of range");
    if (atomic_exchange_explicit(&pt->marked[k], 1, memory_order_relaxed))
        return thread_error(pt->tc, MPI_ERR_ARG, "MPI_Pready of a partition ready already");
    /* acq_rel: the last sees every partition's data written before its
     * MPI_Pready. */
    if (atomic_fetch_add_explicit(&pt->ready, 1, memory_order_acq_rel) + 1 != pt->partitions)
        return MPI_SUCCESS;
    thread_req *req = pt->req;
    int rc = thread_coll_send(pt->tc, pt->self, pt->buf, pt->count, pt->type, pt->peer, pt->wire_tag, req);
    if (rc != MPI_SUCCESS) {
        req->error = rc;
        thread_req_finish(req);
    }
    return MPI_SUCCESS;
}

bool thread_pready(MPI_Request request, int low, int high, const int *list, int length, int *rc)
{
    bool active = false;
    thread_part *pt = thread_persistent_args(request, &psend_ops, &active);
    if (!pt) {
        thread_part *recv = thread_persistent_args(request, &precv_ops, &active);
        if (recv)
            *rc = thread_error(recv->tc, MPI_ERR_REQUEST, "MPI_Pready on a partitioned receive");
        return recv != NULL;
    }
    if (!active) {
        *rc = thread_error(pt->tc, MPI_ERR_REQUEST, "MPI_Pready on a partitioned send that is not started");
        return true;
    }
    *rc = MPI_SUCCESS;
    int n = list ? length : high - low + 1;
    for (int i = 0; i < n && *rc == MPI_SUCCESS; i++)
        *rc = mark_ready(pt, list ? list[i] : low + i);
    return true;
}

bool thread_parrived(MPI_Request request, int partition, int *flag, int *rc)
{
    bool active = false;
    thread_part *pt = thread_persistent_args(request, &precv_ops, &active);
    if (!pt) {
        thread_part *send = thread_persistent_args(request, &psend_ops, &active);
        if (send)
            *rc = thread_error(send->tc, MPI_ERR_REQUEST, "MPI_Parrived on a partitioned send");
        return send != NULL;
    }
    if (partition < 0 || partition >= pt->partitions) {
        *rc = thread_error(pt->tc, MPI_ERR_ARG, "MPI_Parrived of a partition out of range");
        return true;
    }
    /* Every partition arrives with the message: the receive's completion. */
    *rc = thread_request_get_status(request, flag, MPI_STATUS_IGNORE);
    return true;
}
