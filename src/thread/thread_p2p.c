/* thread_p2p: point-to-point messages between thread ranks, and their
 * requests.
 *
 * Every thread rank has a mailbox: the messages that arrived before a
 * receive matched them (unexpected), and the receives posted before their
 * message came, each in order, under one lock. Matching follows MPI's rules
 * (source or MPI_ANY_SOURCE, tag or MPI_ANY_TAG, the first that matches),
 * so order is kept per sender and a receive from any source takes local and
 * remote senders alike.
 *
 * Between threads of one process the receiver copies straight from the
 * sender's buffer (one copy). Where the receive is not posted yet, a message
 * shorter than SHOAL_THREAD_HANDOFF_BYTES, or of a datatype that is not
 * dense, is copied aside so that MPI_Send returns at once, as programs that
 * send before they receive expect; a longer one is handed over by address,
 * its sender waiting until the receiver has copied it (MPIActor's
 * pass-by-address). Between
 * processes a message is one host message on a private duplicate of the
 * parent (a header, then the packed data), sent with PMPI_Isend and taken
 * off the host by whichever thread waits (thread_progress, one at a time so
 * that the host's order is kept) into the receiver's mailbox. MPI_Ssend
 * across processes completes when the receiver's acknowledgement returns.
 *
 * Requests handed to the user are generalized requests of the host,
 * registered here: the wait family (thread_waitall and its kin) drives them,
 * completes them, and lets the host return them with their statuses.
 * MPI_Isendrecv's request completes once its send and receive have. A
 * persistent request's handle is a generalized request of its own that
 * completes only when it is freed; each MPI_Start makes a request for the
 * operation, which the wait family shows the host in the handle's place.
 *
 * May call: core, and PMPI. */
#include <stdlib.h>
#include <string.h>

#include "thread_internal.h"

/* Host tags on the wire communicator. */
enum { WIRE_DATA = 1, WIRE_ACK = 2 };
/* Header flags. */
enum { WIRE_SYNC = 1 };

_Atomic int thread_requests_live;

/* A message no receive has taken yet. */
typedef struct thread_msg {
    struct thread_msg *next;
    int source, tag;
    size_t bytes;
    const void *data;   /* packed bytes: the sender's buffer, or owned */
    void *owned;        /* freed once taken */
    thread_req *sender; /* a waiting local sender, done once copied */
    uint64_t ack_id;    /* a remote MPI_Ssend's, acknowledged once taken */
    int ack_proc;
    bool ack;
} thread_msg;

typedef struct thread_mailbox {
    _Alignas(64) pthread_mutex_t lock;
    thread_msg *unexpected, **unexpected_tail;
    thread_req *posted, **posted_tail;
} thread_mailbox;

/* A host send in flight and the buffer it sends. */
typedef struct thread_outgoing {
    struct thread_outgoing *next;
    MPI_Request request;
    void *buffer;
} thread_outgoing;

typedef struct wire_header {
    int32_t source, dest, tag, flags;
    uint64_t ack_id;
} wire_header;

int thread_p2p_create(thread_comm *tc)
{
    /* A mailbox is a cache line of its own (_Alignas(64)): calloc aligns less. */
    tc->box = aligned_alloc(64, (size_t)tc->nthreads * sizeof *tc->box);
    if (!tc->box)
        return MPI_ERR_NO_MEM;
    memset(tc->box, 0, (size_t)tc->nthreads * sizeof *tc->box);
    /* Adaptive, as the request registry's: a sender and its receiver meet
     * on a mailbox for a few loads, where a futex sleep costs microseconds. */
    pthread_mutexattr_t adaptive;
    pthread_mutexattr_init(&adaptive);
    pthread_mutexattr_settype(&adaptive, PTHREAD_MUTEX_ADAPTIVE_NP);
    for (int t = 0; t < tc->nthreads; t++) {
        pthread_mutex_init(&tc->box[t].lock, &adaptive);
        tc->box[t].unexpected_tail = &tc->box[t].unexpected;
        tc->box[t].posted_tail = &tc->box[t].posted;
    }
    pthread_mutexattr_destroy(&adaptive);
    pthread_mutex_init(&tc->progress_lock, NULL);
    pthread_mutex_init(&tc->out_lock, NULL);
    return MPI_SUCCESS;
}

/* MPI_ANY_TAG takes the user's tags only, never the collectives' own
 * (negative, THREAD_TAG_*). */
static bool matches(int want_source, int want_tag, int source, int tag)
{
    return (want_source == MPI_ANY_SOURCE || want_source == source) &&
           (want_tag == MPI_ANY_TAG ? tag >= 0 : want_tag == tag);
}

/* The user's tags: not negative, MPI_ANY_TAG where a receive may take it. */
static int check_tag(int tag, bool any_allowed)
{
    return tag >= 0 || (any_allowed && tag == MPI_ANY_TAG) ? MPI_SUCCESS : MPI_ERR_TAG;
}

static void status_fill(MPI_Status *status, int source, int tag, size_t bytes, int error)
{
    if (status == MPI_STATUS_IGNORE)
        return;
    status->MPI_SOURCE = source;
    status->MPI_TAG = tag;
    status->MPI_ERROR = error;
    PMPI_Status_set_elements_x(status, MPI_BYTE, (MPI_Count)bytes);
    PMPI_Status_set_cancelled(status, 0);
}

/* A request's state (req->done): pending, done, or freed by the user while
 * pending (MPI_Request_free). Whoever completes a freed one hands it back
 * to the host, complete, and frees it there (the host then calls its free
 * function, which frees req): the host never holds a freed request that is
 * not complete, which MPICH 4.0.2 does not survive. */
enum { REQ_PENDING, REQ_DONE, REQ_DETACHED };

static void release_to_host(MPI_Request handle)
{
    thread_host_lock();
    PMPI_Grequest_complete(handle);
    PMPI_Request_free(&handle);
    thread_host_unlock();
}

struct thread_pair;
static void pair_half_done(struct thread_pair *pair);

static void finish(thread_req *req)
{
    /* read first: a waiter may free req once it is done */
    struct thread_nbc *nbc = req->nbc;
    struct thread_pair *pair = req->pair;
    if (atomic_exchange_explicit(&req->done, REQ_DONE, memory_order_acq_rel) == REQ_DETACHED)
        release_to_host(req->handle);
    if (nbc)
        thread_nbc_step_done(nbc);
    if (pair)
        pair_half_done(pair);
}

void thread_req_finish(thread_req *req) { finish(req); }

static void add_outgoing(thread_comm *tc, MPI_Request request, void *buffer)
{
    thread_outgoing *o = malloc(sizeof *o);
    if (!o)
        core_fatal("out of memory for a host send");
    o->request = request;
    o->buffer = buffer;
    pthread_mutex_lock(&tc->out_lock);
    o->next = tc->out;
    tc->out = o;
    pthread_mutex_unlock(&tc->out_lock);
}

/* Frees the host sends that are done; true when none is left. */
static bool reap_outgoing(thread_comm *tc)
{
    if (pthread_mutex_trylock(&tc->out_lock) != 0)
        return false;
    thread_outgoing **at = &tc->out;
    while (*at) {
        thread_outgoing *o = *at;
        int done = 0;
        thread_host_lock();
        PMPI_Test(&o->request, &done, MPI_STATUS_IGNORE);
        thread_host_unlock();
        if (done) {
            *at = o->next;
            free(o->buffer);
            free(o);
        } else {
            at = &o->next;
        }
    }
    bool empty = !tc->out;
    pthread_mutex_unlock(&tc->out_lock);
    return empty;
}

static void send_ack(thread_comm *tc, int proc, uint64_t id)
{
    uint64_t *copy = malloc(sizeof *copy);
    if (!copy)
        core_fatal("out of memory for an acknowledgement");
    *copy = id;
    MPI_Request request;
    thread_host_lock();
    PMPI_Isend(copy, (int)sizeof *copy, MPI_BYTE, proc, WIRE_ACK, tc->wire, &request);
    thread_host_unlock();
    add_outgoing(tc, request, copy);
}

/* Copies a message into a receive and completes it, then its sender. */
static void complete_recv(thread_req *req, const thread_msg *m)
{
    size_t capacity = (size_t)req->count * req->layout.size;
    size_t n = m->bytes < capacity ? m->bytes : capacity;
    int rc = thread_unpack(m->data, n, req->buf, req->type, &req->layout);
    req->got_source = m->source;
    req->got_tag = m->tag;
    req->got_bytes = n;
    req->error = m->bytes > capacity ? MPI_ERR_TRUNCATE : rc;
    if (m->sender)
        finish(m->sender);
    if (m->ack)
        send_ack(req->tc, m->ack_proc, m->ack_id);
    finish(req);
}

/* The first receive posted in box that takes a message of source and tag,
 * unlinked; NULL if none. The caller holds box->lock. */
static thread_req *take_posted(thread_mailbox *box, int source, int tag)
{
    thread_req **at = &box->posted;
    if (*at) /* its line is about to be written: fetch it for writing, not twice */
        __builtin_prefetch(*at, 1);
    while (*at && !matches((*at)->source, (*at)->tag, source, tag))
        at = &(*at)->next;
    thread_req *req = *at;
    if (req) {
        *at = req->next;
        if (!*at)
            box->posted_tail = at;
    }
    return req;
}

/* The first message in box's unexpected queue that a receive of source and
 * tag takes, unlinked; NULL if none. The caller holds box->lock. */
static thread_msg *take_unexpected(thread_mailbox *box, int source, int tag)
{
    thread_msg **at = &box->unexpected;
    while (*at && !matches(source, tag, (*at)->source, (*at)->tag))
        at = &(*at)->next;
    thread_msg *m = *at;
    if (m) {
        *at = m->next;
        if (!*at)
            box->unexpected_tail = at;
    }
    return m;
}

/* Appends m to box's unexpected queue. The caller holds box->lock. */
static void queue_unexpected(thread_mailbox *box, thread_msg *m)
{
    m->next = NULL;
    *box->unexpected_tail = m;
    box->unexpected_tail = &m->next;
}

/* Hands a message from the host (m, owned) to thread rank dest's mailbox:
 * to its first matching posted receive, else to its unexpected queue. */
static void deliver(thread_comm *tc, int dest_index, thread_msg *m)
{
    thread_mailbox *box = &tc->box[dest_index];
    pthread_mutex_lock(&box->lock);
    thread_req *req = take_posted(box, m->source, m->tag);
    if (!req) {
        queue_unexpected(box, m);
        pthread_mutex_unlock(&box->lock);
        return;
    }
    pthread_mutex_unlock(&box->lock);
    complete_recv(req, m);
    free(m->owned);
    free(m);
}

/* A message between threads of this process: copied from the sender's
 * buffer into a receive already posted; else queued, pointing at the
 * sender's buffer (a long message of a dense datatype: the sender waits
 * until the receiver has copied it) or copied aside. */
static int send_local(thread_comm *tc, int dest_index, thread_msg m, const void *buf, int count, MPI_Datatype type,
                      const thread_layout *l, thread_send_mode mode, thread_req *req)
{
    thread_mailbox *box = &tc->box[dest_index];
    pthread_mutex_lock(&box->lock);
    thread_req *match = take_posted(box, m.source, m.tag);
    bool by_address =
        l->dense && (match || (m.bytes >= core_config_get()->thread_handoff && mode != THREAD_SEND_BUFFERED));
    if (match)
        pthread_mutex_unlock(&box->lock);
    int rc = MPI_SUCCESS;
    if (by_address) {
        m.data = (const char *)buf + l->lb;
    } else if (m.bytes) {
        if (!(m.owned = malloc(m.bytes)))
            rc = MPI_ERR_NO_MEM;
        else
            rc = thread_pack(buf, (size_t)count, type, l, m.owned);
        m.data = m.owned;
    }
    if (match) {
        /* Posted already: taken now, whatever the mode. */
        complete_recv(match, &m);
        free(m.owned);
        finish(req);
        return rc;
    }
    thread_msg *queued = rc == MPI_SUCCESS ? malloc(sizeof *queued) : NULL;
    if (!queued) {
        pthread_mutex_unlock(&box->lock);
        free(m.owned);
        return rc == MPI_SUCCESS ? MPI_ERR_NO_MEM : rc;
    }
    *queued = m;
    if (by_address || mode == THREAD_SEND_SYNC)
        queued->sender = req; /* done once the receiver has copied it */
    else
        finish(req);
    queue_unexpected(box, queued);
    pthread_mutex_unlock(&box->lock);
    return MPI_SUCCESS;
}

void thread_progress(thread_comm *tc)
{
    if (tc->nprocs == 1 || pthread_mutex_trylock(&tc->progress_lock) != 0)
        return;
    for (;;) {
        int flag = 0;
        MPI_Message message;
        MPI_Status status;
        thread_host_lock();
        PMPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, tc->wire, &flag, &message, &status);
        if (!flag) {
            thread_host_unlock();
            break;
        }
        int bytes = 0;
        PMPI_Get_count(&status, MPI_BYTE, &bytes);
        char *buffer = malloc(bytes ? (size_t)bytes : 1);
        if (!buffer)
            core_fatal("out of memory for a %d-byte message", bytes);
        PMPI_Mrecv(buffer, bytes, MPI_BYTE, &message, MPI_STATUS_IGNORE);
        thread_host_unlock();
        if (status.MPI_TAG == WIRE_ACK) {
            uint64_t id;
            memcpy(&id, buffer, sizeof id);
            free(buffer);
            thread_req *acked = (thread_req *)(uintptr_t)id;
            (void)atomic_load_explicit(&acked->done, memory_order_acquire); /* pairs with send_start's store */
            finish(acked);
            continue;
        }
        wire_header h;
        memcpy(&h, buffer, sizeof h);
        thread_msg *m = malloc(sizeof *m);
        if (!m)
            core_fatal("out of memory for a message");
        *m = (thread_msg){.source = h.source,
                          .tag = h.tag,
                          .bytes = (size_t)bytes - sizeof h,
                          .data = buffer + sizeof h,
                          .owned = buffer,
                          .ack = (h.flags & WIRE_SYNC) != 0,
                          .ack_id = h.ack_id,
                          .ack_proc = status.MPI_SOURCE};
        deliver(tc, h.dest - tc->offset[tc->my_proc], m);
    }
    pthread_mutex_unlock(&tc->progress_lock);
    reap_outgoing(tc);
}

/* Waits for req, moving the host's messages meanwhile. */
static void wait_req(thread_req *req)
{
    unsigned spins = 0;
    while (!atomic_load_explicit(&req->done, memory_order_acquire)) {
        thread_progress(req->tc);
        thread_pause(&spins);
    }
}

static int check_rank(const thread_comm *tc, int rank, bool any_allowed)
{
    if (rank == MPI_PROC_NULL || (any_allowed && rank == MPI_ANY_SOURCE) || (rank >= 0 && rank < tc->size))
        return MPI_SUCCESS;
    return MPI_ERR_RANK;
}

/* Starts a send; req is done once the user's buffer may be reused (sync:
 * once a receive has taken the message). */
static int send_start(thread_comm *tc, int self, const void *buf, int count, MPI_Datatype type, int dest, int tag,
                      thread_send_mode mode, thread_req *req)
{
    req->tc = tc;
    thread_layout l;
    if (count < 0)
        return MPI_ERR_COUNT;
    if (!thread_layout_of(type, &l))
        return MPI_ERR_TYPE;
    if (check_rank(tc, dest, false) != MPI_SUCCESS)
        return MPI_ERR_RANK;
    if (dest == MPI_PROC_NULL) {
        finish(req);
        return MPI_SUCCESS;
    }
    int source = tc->offset[tc->my_proc] + self;
    size_t bytes = (size_t)count * l.size;
    int dest_proc = tc->proc_of[dest];
    if (dest_proc != tc->my_proc) {
        char *packet = malloc(sizeof(wire_header) + bytes);
        if (!packet || bytes > (size_t)INT32_MAX - sizeof(wire_header)) {
            free(packet);
            return MPI_ERR_COUNT;
        }
        wire_header h = {.source = source,
                         .dest = dest,
                         .tag = tag,
                         .flags = mode == THREAD_SEND_SYNC ? WIRE_SYNC : 0,
                         .ack_id = (uint64_t)(uintptr_t)req};
        memcpy(packet, &h, sizeof h);
        int rc = thread_pack(buf, (size_t)count, type, &l, packet + sizeof h);
        if (rc != MPI_SUCCESS) {
            free(packet);
            return rc;
        }
        /* Whichever thread progresses takes the acknowledgement and finishes
         * req, so it must see req as written here. The host's messages order
         * that; under MPI_THREAD_MULTIPLE (shoal takes no lock around the
         * host) only inside the MPI, where ThreadSanitizer cannot see it.
         * This release store and the acknowledgement's acquire load make the
         * order shoal's own. */
        if (mode == THREAD_SEND_SYNC)
            atomic_store_explicit(&req->done, REQ_PENDING, memory_order_release);
        MPI_Request request;
        thread_host_lock();
        rc = PMPI_Isend(packet, (int)(sizeof h + bytes), MPI_BYTE, dest_proc, WIRE_DATA, tc->wire, &request);
        thread_host_unlock();
        if (rc != MPI_SUCCESS) {
            free(packet);
            return rc;
        }
        add_outgoing(tc, request, packet);
        if (mode != THREAD_SEND_SYNC)
            finish(req);
        return MPI_SUCCESS;
    }
    thread_msg m = {.source = source, .tag = tag, .bytes = bytes};
    return send_local(tc, dest - tc->offset[tc->my_proc], m, buf, count, type, &l, mode, req);
}

/* Posts a receive; req completes when a message matches it. */
static int recv_start(thread_comm *tc, int self, void *buf, int count, MPI_Datatype type, int source, int tag,
                      thread_req *req)
{
    req->tc = tc;
    req->is_recv = true;
    if (count < 0)
        return MPI_ERR_COUNT;
    if (!thread_layout_of(type, &req->layout))
        return MPI_ERR_TYPE;
    if (check_rank(tc, source, true) != MPI_SUCCESS)
        return MPI_ERR_RANK;
    req->buf = buf;
    req->count = count;
    req->type = type;
    req->source = source;
    req->tag = tag;
    if (source == MPI_PROC_NULL) {
        req->got_source = MPI_PROC_NULL;
        req->got_tag = MPI_ANY_TAG;
        finish(req);
        return MPI_SUCCESS;
    }
    thread_progress(tc);
    thread_mailbox *box = &tc->box[self];
    req->box = box;
    pthread_mutex_lock(&box->lock);
    thread_msg *m = take_unexpected(box, source, tag);
    if (m) {
        pthread_mutex_unlock(&box->lock);
        complete_recv(req, m);
        free(m->owned);
        free(m);
        return MPI_SUCCESS;
    }
    req->next = NULL;
    *box->posted_tail = req;
    box->posted_tail = &req->next;
    pthread_mutex_unlock(&box->lock);
    return MPI_SUCCESS;
}

static int started_self(thread_comm *tc, const char *what)
{
    int self = thread_self(tc);
    if (self < 0)
        thread_error(tc, MPI_ERR_COMM, what);
    return self;
}

#define NOT_STARTED "a call on a thread communicator by a thread that has not started it"

int thread_send(thread_comm *tc, const void *buf, int count, MPI_Datatype type, int dest, int tag,
                thread_send_mode mode)
{
    int self = started_self(tc, NOT_STARTED);
    if (self < 0)
        return MPI_ERR_COMM;
    _Alignas(64) thread_req req = {0};
    int rc = check_tag(tag, false);
    if (rc == MPI_SUCCESS)
        rc = send_start(tc, self, buf, count, type, dest, tag, mode, &req);
    if (rc != MPI_SUCCESS)
        return thread_error(tc, rc, "a send's arguments");
    wait_req(&req);
    return MPI_SUCCESS;
}

int thread_recv(thread_comm *tc, void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Status *status)
{
    int self = started_self(tc, NOT_STARTED);
    if (self < 0)
        return MPI_ERR_COMM;
    _Alignas(64) thread_req req = {0};
    int rc = check_tag(tag, true);
    if (rc == MPI_SUCCESS)
        rc = recv_start(tc, self, buf, count, type, source, tag, &req);
    if (rc != MPI_SUCCESS)
        return thread_error(tc, rc, "a receive's arguments");
    wait_req(&req);
    status_fill(status, req.got_source, req.got_tag, req.got_bytes, req.error);
    if (req.error != MPI_SUCCESS)
        return thread_error(tc, req.error, "a receive's message is longer than its buffer");
    return MPI_SUCCESS;
}

int thread_sendrecv(thread_comm *tc, const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf,
                    int rcount, MPI_Datatype rtype, int source, int rtag, MPI_Status *status)
{
    int self = started_self(tc, NOT_STARTED);
    if (self < 0)
        return MPI_ERR_COMM;
    _Alignas(64) thread_req send = {0};
    _Alignas(64) thread_req recv = {0};
    if (check_tag(stag, false) != MPI_SUCCESS || check_tag(rtag, true) != MPI_SUCCESS)
        return thread_error(tc, MPI_ERR_TAG, "a tag");
    int rc = recv_start(tc, self, rbuf, rcount, rtype, source, rtag, &recv);
    if (rc != MPI_SUCCESS)
        return thread_error(tc, rc, "a receive's arguments");
    rc = send_start(tc, self, sbuf, scount, stype, dest, stag, THREAD_SEND_STANDARD, &send);
    if (rc != MPI_SUCCESS) {
        /* The receive is posted: it must complete before its request goes. */
        wait_req(&recv);
        return thread_error(tc, rc, "a send's arguments");
    }
    wait_req(&send);
    wait_req(&recv);
    status_fill(status, recv.got_source, recv.got_tag, recv.got_bytes, recv.error);
    if (recv.error != MPI_SUCCESS)
        return thread_error(tc, recv.error, "a receive's message is longer than its buffer");
    return MPI_SUCCESS;
}

int thread_sendrecv_replace(thread_comm *tc, void *buf, int count, MPI_Datatype type, int dest, int stag, int source,
                            int rtag, MPI_Status *status)
{
    thread_layout l;
    if (count < 0)
        return thread_error(tc, MPI_ERR_COUNT, "MPI_Sendrecv_replace's count");
    if (!thread_layout_of(type, &l))
        return thread_error(tc, MPI_ERR_TYPE, "MPI_Sendrecv_replace's datatype");
    void *base;
    char *copy = thread_alloc_elements(&l, count, &base);
    if (!copy)
        return thread_error(tc, MPI_ERR_NO_MEM, "no memory for MPI_Sendrecv_replace");
    int rc = thread_copy_typed(copy, buf, count, type, &l);
    if (rc == MPI_SUCCESS)
        rc = thread_sendrecv(tc, copy, count, type, dest, stag, buf, count, type, source, rtag, status);
    free(base);
    return rc;
}

/* Registered requests, by the host handle of their generalized request. */
#define REGISTRY_BUCKETS 256
static thread_req *registry[REGISTRY_BUCKETS];
/* A lock per bucket, each on a line of its own: two threads exchanging
 * many short messages register, find and drop requests all the time, and
 * under one lock they met on nearly every one (a futex sleep each, some
 * microseconds, against a few loads held). */
static struct {
    _Alignas(64) _Atomic bool held;
} bucket_locks[REGISTRY_BUCKETS];

static void bucket_lock(unsigned b)
{
    unsigned spins = 0;
    while (atomic_exchange_explicit(&bucket_locks[b].held, true, memory_order_acquire))
        thread_pause(&spins);
}

static void bucket_unlock(unsigned b) { atomic_store_explicit(&bucket_locks[b].held, false, memory_order_release); }

static unsigned bucket_of(MPI_Request handle)
{
    uint64_t key = 0;
    memcpy(&key, &handle, sizeof handle < sizeof key ? sizeof handle : sizeof key);
    key ^= key >> 17;
    key *= 0x9e3779b97f4a7c15ull;
    return (unsigned)(key >> 56) % REGISTRY_BUCKETS;
}

static thread_req *registry_find(MPI_Request handle)
{
    if (handle == MPI_REQUEST_NULL)
        return NULL;
    unsigned b = bucket_of(handle);
    bucket_lock(b);
    thread_req *r = registry[b];
    while (r && r->handle != handle)
        r = r->registry_next;
    bucket_unlock(b);
    return r;
}

static void registry_drop(thread_req *req)
{
    unsigned b = bucket_of(req->handle);
    bucket_lock(b);
    thread_req **at = &registry[b];
    while (*at && *at != req)
        at = &(*at)->registry_next;
    if (*at) {
        *at = req->registry_next;
        atomic_fetch_sub(&thread_requests_live, 1);
    }
    bucket_unlock(b);
}

/* The host asks a generalized request's status once it is complete. */
static int query_request(void *extra, MPI_Status *status)
{
    thread_req *req = extra;
    /* A partitioned receive's status shows the user's tag. */
    int tag = req->got_tag < THREAD_TAG_PARTITIONED + THREAD_PARTITIONED_TAGS ? req->got_tag - THREAD_TAG_PARTITIONED
                                                                              : req->got_tag;
    if (req->is_recv && !req->cancelled)
        status_fill(status, req->got_source, tag, req->got_bytes, MPI_SUCCESS);
    else
        status_fill(status, MPI_ANY_SOURCE, MPI_ANY_TAG, 0, MPI_SUCCESS);
    PMPI_Status_set_cancelled(status, req->cancelled);
    return MPI_SUCCESS;
}

static int free_request(void *extra)
{
    free(extra);
    return MPI_SUCCESS;
}

static int cancel_request(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS; /* not cancelled: the status says so */
}

int thread_req_hand_out(thread_req *req, MPI_Request *request)
{
    thread_host_lock();
    int rc = PMPI_Grequest_start(query_request, free_request, cancel_request, req, &req->handle);
    thread_host_unlock();
    if (rc != MPI_SUCCESS)
        return rc;
    unsigned b = bucket_of(req->handle);
    bucket_lock(b);
    req->registry_next = registry[b];
    registry[b] = req;
    atomic_fetch_add(&thread_requests_live, 1);
    bucket_unlock(b);
    *request = req->handle;
    return MPI_SUCCESS;
}

int thread_isend(thread_comm *tc, const void *buf, int count, MPI_Datatype type, int dest, int tag,
                 thread_send_mode mode, MPI_Request *request)
{
    int self = started_self(tc, NOT_STARTED);
    if (self < 0)
        return MPI_ERR_COMM;
    thread_req *req = calloc(1, sizeof *req);
    if (!req)
        return thread_error(tc, MPI_ERR_NO_MEM, "no memory for a request");
    int rc = check_tag(tag, false);
    if (rc == MPI_SUCCESS)
        rc = send_start(tc, self, buf, count, type, dest, tag, mode, req);
    if (rc == MPI_SUCCESS)
        rc = thread_req_hand_out(req, request);
    if (rc != MPI_SUCCESS) {
        free(req);
        return thread_error(tc, rc, "a send's arguments");
    }
    return MPI_SUCCESS;
}

int thread_irecv(thread_comm *tc, void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Request *request)
{
    int self = started_self(tc, NOT_STARTED);
    if (self < 0)
        return MPI_ERR_COMM;
    thread_req *req = calloc(1, sizeof *req);
    if (!req)
        return thread_error(tc, MPI_ERR_NO_MEM, "no memory for a request");
    int rc = check_tag(tag, true);
    if (rc == MPI_SUCCESS)
        rc = recv_start(tc, self, buf, count, type, source, tag, req);
    if (rc != MPI_SUCCESS) {
        free(req);
        return thread_error(tc, rc, "a receive's arguments");
    }
    rc = thread_req_hand_out(req, request);
    if (rc != MPI_SUCCESS) {
        /* Posted already: it must complete before it goes. */
        wait_req(req);
        free(req);
        return thread_error(tc, rc, "no request from the host");
    }
    return MPI_SUCCESS;
}

/* MPI_Isendrecv(_replace): the request handed out (user, first, so that
 * the host's free function frees the whole) completes once both halves
 * have, with the receive's outcome. */
typedef struct thread_pair {
    thread_req user;
    thread_req send, recv;
    _Atomic int pending; /* halves not done, plus one while posting */
    int error;           /* a half that could not start */
    void *copy_base;     /* _replace: the send's copy of the buffer */
} thread_pair;

static void pair_half_done(thread_pair *p)
{
    if (atomic_fetch_sub_explicit(&p->pending, 1, memory_order_acq_rel) != 1)
        return;
    p->user.got_source = p->recv.got_source;
    p->user.got_tag = p->recv.got_tag;
    p->user.got_bytes = p->recv.got_bytes;
    p->user.error = p->error ? p->error : p->recv.error;
    free(p->copy_base);
    p->copy_base = NULL;
    finish(&p->user);
}

/* The checks of both halves, before either starts: a receive posted alone
 * would take a message its send's error left unanswered. */
static int pair_check(const thread_comm *tc, int scount, MPI_Datatype stype, int dest, int stag, int rcount,
                      MPI_Datatype rtype, int source, int rtag)
{
    thread_layout unused;
    if (check_tag(stag, false) != MPI_SUCCESS || check_tag(rtag, true) != MPI_SUCCESS)
        return MPI_ERR_TAG;
    if (scount < 0 || rcount < 0)
        return MPI_ERR_COUNT;
    if (!thread_layout_of(stype, &unused) || !thread_layout_of(rtype, &unused))
        return MPI_ERR_TYPE;
    if (check_rank(tc, dest, false) != MPI_SUCCESS || check_rank(tc, source, true) != MPI_SUCCESS)
        return MPI_ERR_RANK;
    return MPI_SUCCESS;
}

static int pair_start(thread_comm *tc, int self, const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag,
                      void *rbuf, int rcount, MPI_Datatype rtype, int source, int rtag, void *copy_base,
                      MPI_Request *request)
{
    thread_pair *p = calloc(1, sizeof *p);
    if (!p) {
        free(copy_base);
        return thread_error(tc, MPI_ERR_NO_MEM, "no memory for a request");
    }
    p->user.tc = tc;
    p->user.is_recv = true; /* its status is the receive's */
    p->copy_base = copy_base;
    atomic_init(&p->pending, 3);
    int rc = thread_req_hand_out(&p->user, request);
    if (rc != MPI_SUCCESS) {
        free(copy_base);
        free(p);
        return thread_error(tc, rc, "no request from the host");
    }
    /* The receive first, so that a message to itself finds it posted. */
    p->recv.pair = p->send.pair = p;
    rc = recv_start(tc, self, rbuf, rcount, rtype, source, rtag, &p->recv);
    if (rc != MPI_SUCCESS) {
        p->error = rc;
        pair_half_done(p);
    }
    rc = send_start(tc, self, sbuf, scount, stype, dest, stag, THREAD_SEND_STANDARD, &p->send);
    if (rc != MPI_SUCCESS) {
        if (!p->error)
            p->error = rc;
        pair_half_done(p);
    }
    pair_half_done(p); /* posted */
    return MPI_SUCCESS;
}

int thread_isendrecv(thread_comm *tc, const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf,
                     int rcount, MPI_Datatype rtype, int source, int rtag, MPI_Request *request)
{
    int self = started_self(tc, NOT_STARTED);
    if (self < 0)
        return MPI_ERR_COMM;
    int rc = pair_check(tc, scount, stype, dest, stag, rcount, rtype, source, rtag);
    if (rc != MPI_SUCCESS)
        return thread_error(tc, rc, "MPI_Isendrecv's arguments");
    return pair_start(tc, self, sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, NULL, request);
}

int thread_isendrecv_replace(thread_comm *tc, void *buf, int count, MPI_Datatype type, int dest, int stag, int source,
                             int rtag, MPI_Request *request)
{
    int self = started_self(tc, NOT_STARTED);
    if (self < 0)
        return MPI_ERR_COMM;
    int rc = pair_check(tc, count, type, dest, stag, count, type, source, rtag);
    if (rc != MPI_SUCCESS)
        return thread_error(tc, rc, "MPI_Isendrecv_replace's arguments");
    thread_layout l;
    thread_layout_of(type, &l);
    /* The send goes from a copy, freed once the pair is done. */
    void *base;
    char *copy = thread_alloc_elements(&l, count, &base);
    if (!copy)
        return thread_error(tc, MPI_ERR_NO_MEM, "no memory for MPI_Isendrecv_replace");
    rc = thread_copy_typed(copy, buf, count, type, &l);
    if (rc != MPI_SUCCESS) {
        free(base);
        return thread_error(tc, rc, "MPI_Isendrecv_replace's buffer");
    }
    return pair_start(tc, self, copy, count, type, dest, stag, buf, count, type, source, rtag, base, request);
}

/* Persistent requests. The user's handle is a host generalized request
 * that completes only when the request is freed; MPI_Start makes a thread
 * request for one operation, the active one, which the wait family shows
 * the host in the handle's place (MPI_REQUEST_NULL while none is active, so
 * that the host returns an empty status at once) and which, once the host
 * has returned it, leaves the request inactive. */
typedef struct thread_persistent {
    struct thread_persistent *next;
    MPI_Request handle;
    MPI_Request active; /* MPI_REQUEST_NULL while inactive */
    thread_comm *tc;
    int self;
    /* another file's kind (a persistent collective, a partitioned
     * request): its start and its arguments; NULL for point-to-point */
    const thread_persistent_ops *ops;
    void *args;
    bool is_recv;
    thread_send_mode mode;
    void *buf;
    int count;
    MPI_Datatype type;
    bool type_owned; /* a duplicate of the user's derived datatype, which the user may free */
    int peer, tag;
} thread_persistent;

_Atomic int thread_persistent_live;
static thread_persistent *persistent_registry[REGISTRY_BUCKETS];

static thread_persistent *persistent_find(MPI_Request handle)
{
    if (handle == MPI_REQUEST_NULL || !thread_persistent_pending())
        return NULL;
    unsigned b = bucket_of(handle);
    bucket_lock(b);
    thread_persistent *p = persistent_registry[b];
    while (p && p->handle != handle)
        p = p->next;
    bucket_unlock(b);
    return p;
}

/* An inactive persistent request's status, as MPI defines the empty one. */
static int persistent_query(void *extra, MPI_Status *status)
{
    (void)extra;
    status_fill(status, MPI_ANY_SOURCE, MPI_ANY_TAG, 0, MPI_SUCCESS);
    return MPI_SUCCESS;
}

static int persistent_cancel(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}

int thread_type_hold(MPI_Datatype type, MPI_Datatype *held, bool *owned)
{
    int ints, addresses, types, combiner;
    *held = type;
    *owned = false;
    thread_host_lock();
    int rc = PMPI_Type_get_envelope(type, &ints, &addresses, &types, &combiner);
    if (rc == MPI_SUCCESS && combiner != MPI_COMBINER_NAMED) {
        rc = PMPI_Type_dup(type, held);
        *owned = rc == MPI_SUCCESS;
    }
    thread_host_unlock();
    return rc;
}

void thread_type_release(MPI_Datatype *held, bool owned)
{
    if (!owned)
        return;
    thread_host_lock();
    PMPI_Type_free(held);
    thread_host_unlock();
}

/* Gives p (filled in) its handle, a host generalized request, and
 * registers it; frees p where the host gives none. */
static int persistent_register(thread_persistent *p, MPI_Request *request)
{
    thread_host_lock();
    int rc = PMPI_Grequest_start(persistent_query, free_request, persistent_cancel, p, &p->handle);
    thread_host_unlock();
    if (rc != MPI_SUCCESS) {
        thread_comm *tc = p->tc;
        free(p);
        return thread_error(tc, rc, "no request from the host");
    }
    unsigned b = bucket_of(p->handle);
    bucket_lock(b);
    p->next = persistent_registry[b];
    persistent_registry[b] = p;
    atomic_fetch_add(&thread_persistent_live, 1);
    atomic_fetch_add(&thread_requests_live, 1); /* so that the wait family looks for it */
    bucket_unlock(b);
    *request = p->handle;
    return MPI_SUCCESS;
}

static int persistent_make(thread_comm *tc, bool is_recv, thread_send_mode mode, void *buf, int count,
                           MPI_Datatype type, int peer, int tag, MPI_Request *request, const char *call)
{
    int self = started_self(tc, NOT_STARTED);
    if (self < 0)
        return MPI_ERR_COMM;
    thread_layout unused;
    int rc = check_tag(tag, is_recv);
    if (rc == MPI_SUCCESS && count < 0)
        rc = MPI_ERR_COUNT;
    if (rc == MPI_SUCCESS && !thread_layout_of(type, &unused))
        rc = MPI_ERR_TYPE;
    if (rc == MPI_SUCCESS)
        rc = check_rank(tc, peer, is_recv);
    if (rc != MPI_SUCCESS)
        return thread_error(tc, rc, call);
    thread_persistent *p = calloc(1, sizeof *p);
    if (!p)
        return thread_error(tc, MPI_ERR_NO_MEM, "no memory for a persistent request");
    *p = (thread_persistent){.active = MPI_REQUEST_NULL,
                             .tc = tc,
                             .self = self,
                             .is_recv = is_recv,
                             .mode = mode,
                             .buf = buf,
                             .count = count,
                             .peer = peer,
                             .tag = tag};
    rc = thread_type_hold(type, &p->type, &p->type_owned);
    if (rc != MPI_SUCCESS) {
        free(p);
        return thread_error(tc, rc, "a persistent request's datatype");
    }
    MPI_Datatype held = p->type;
    bool owned = p->type_owned;
    rc = persistent_register(p, request);
    if (rc != MPI_SUCCESS)
        thread_type_release(&held, owned);
    return rc;
}

int thread_persistent_make(thread_comm *tc, int self, const thread_persistent_ops *ops, void *args,
                           MPI_Request *request)
{
    thread_persistent *p = calloc(1, sizeof *p);
    if (!p)
        return thread_error(tc, MPI_ERR_NO_MEM, "no memory for a persistent request");
    *p = (thread_persistent){.active = MPI_REQUEST_NULL, .tc = tc, .self = self, .ops = ops, .args = args};
    return persistent_register(p, request);
}

void *thread_persistent_args(MPI_Request handle, const thread_persistent_ops *ops, bool *active)
{
    thread_persistent *p = persistent_find(handle);
    if (!p || p->ops != ops)
        return NULL;
    *active = p->active != MPI_REQUEST_NULL;
    return p->args;
}

int thread_send_init(thread_comm *tc, const void *buf, int count, MPI_Datatype type, int dest, int tag,
                     thread_send_mode mode, MPI_Request *request)
{
    return persistent_make(tc, false, mode, (void *)buf, count, type, dest, tag, request,
                           "a persistent send's arguments");
}

int thread_recv_init(thread_comm *tc, void *buf, int count, MPI_Datatype type, int source, int tag,
                     MPI_Request *request)
{
    return persistent_make(tc, true, THREAD_SEND_STANDARD, buf, count, type, source, tag, request,
                           "a persistent receive's arguments");
}

static int persistent_start(thread_persistent *p)
{
    thread_comm *tc = p->tc;
    if (p->active != MPI_REQUEST_NULL)
        return thread_error(tc, MPI_ERR_REQUEST, "MPI_Start of a persistent request that is active");
    if (p->ops) {
        int rc = p->ops->start(p->args, &p->active);
        if (rc != MPI_SUCCESS)
            p->active = MPI_REQUEST_NULL;
        return rc;
    }
    thread_req *req = calloc(1, sizeof *req);
    if (!req)
        return thread_error(tc, MPI_ERR_NO_MEM, "no memory for a request");
    int rc = p->is_recv ? recv_start(tc, p->self, p->buf, p->count, p->type, p->peer, p->tag, req)
                        : send_start(tc, p->self, p->buf, p->count, p->type, p->peer, p->tag, p->mode, req);
    if (rc != MPI_SUCCESS) {
        free(req);
        return thread_error(tc, rc, "MPI_Start");
    }
    rc = thread_req_hand_out(req, &p->active);
    if (rc != MPI_SUCCESS) {
        /* Under way already: it must complete before it goes. */
        wait_req(req);
        free(req);
        p->active = MPI_REQUEST_NULL;
        return thread_error(tc, rc, "no request from the host");
    }
    return MPI_SUCCESS;
}

bool thread_start(MPI_Request *request, int *rc)
{
    thread_persistent *p = persistent_find(*request);
    if (!p)
        return false;
    *rc = persistent_start(p);
    return true;
}

int thread_startall(int n, MPI_Request requests[])
{
    for (int i = 0; i < n; i++) {
        int rc;
        if (!thread_start(&requests[i], &rc)) {
            thread_host_lock();
            rc = PMPI_Start(&requests[i]);
            thread_host_unlock();
        }
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* Ends a persistent request: its active operation, if any, completes
 * unwatched (as MPI_Request_free of a non-persistent one), then the host's
 * handle completes and goes (the host's free function frees p). */
static void persistent_free(thread_persistent *p)
{
    unsigned b = bucket_of(p->handle);
    bucket_lock(b);
    thread_persistent **at = &persistent_registry[b];
    while (*at && *at != p)
        at = &(*at)->next;
    if (*at)
        *at = p->next;
    atomic_fetch_sub(&thread_persistent_live, 1);
    atomic_fetch_sub(&thread_requests_live, 1);
    bucket_unlock(b);
    if (p->active != MPI_REQUEST_NULL)
        thread_request_free(&p->active);
    thread_type_release(&p->type, p->type_owned);
    if (p->ops)
        p->ops->release(p->args);
    release_to_host(p->handle);
}

/* Whether a request handed out is still under way. */
static bool req_pending(MPI_Request handle)
{
    thread_req *req = registry_find(handle);
    return req && atomic_load_explicit(&req->done, memory_order_acquire) == REQ_PENDING;
}

/* The wait family shows the host, for each persistent thread request of an
 * array, its active request or MPI_REQUEST_NULL; once the host has
 * returned it, the request is inactive and the user's handle unchanged. */
typedef struct request_view {
    MPI_Request *shown;
    thread_persistent **persistent; /* per request, the persistent one it is, or NULL */
    MPI_Request small_shown[16];
    thread_persistent *small_persistent[16];
} request_view;

static MPI_Request *view_open(int n, MPI_Request requests[], request_view *v)
{
    v->shown = requests;
    if (n <= 0 || !thread_persistent_pending())
        return requests;
    bool any = false;
    for (int i = 0; i < n && !any; i++)
        any = persistent_find(requests[i]) != NULL;
    if (!any)
        return requests;
    if (n <= 16) {
        v->shown = v->small_shown;
        v->persistent = v->small_persistent;
    } else {
        v->shown = malloc((size_t)n * sizeof *v->shown);
        v->persistent = malloc((size_t)n * sizeof *v->persistent);
        if (!v->shown || !v->persistent)
            core_fatal("out of memory for %d requests", n);
    }
    for (int i = 0; i < n; i++) {
        v->persistent[i] = persistent_find(requests[i]);
        v->shown[i] = v->persistent[i] ? v->persistent[i]->active : requests[i];
    }
    return v->shown;
}

static void view_close(int n, MPI_Request requests[], request_view *v)
{
    if (v->shown == requests)
        return;
    for (int i = 0; i < n; i++) {
        if (!v->persistent[i])
            requests[i] = v->shown[i];
        else if (v->shown[i] == MPI_REQUEST_NULL)
            v->persistent[i]->active = MPI_REQUEST_NULL; /* returned: inactive */
    }
    if (v->shown != v->small_shown) {
        free(v->shown);
        free(v->persistent);
    }
}

/* What a probe shares: its checks, MPI_PROC_NULL (a flag, a status and no
 * message), else the first message in this thread's mailbox that a receive
 * of source and tag would take: its status and, where `take`, the message,
 * unlinked. */
static int probe_mailbox(thread_comm *tc, int source, int tag, bool take, int *flag, MPI_Status *status,
                         thread_msg **taken)
{
    int self = started_self(tc, NOT_STARTED);
    if (self < 0)
        return MPI_ERR_COMM;
    if (check_rank(tc, source, true) != MPI_SUCCESS)
        return thread_error(tc, MPI_ERR_RANK, "a probe's source");
    if (check_tag(tag, true) != MPI_SUCCESS)
        return thread_error(tc, MPI_ERR_TAG, "a probe's tag");
    *taken = NULL;
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        status_fill(status, MPI_PROC_NULL, MPI_ANY_TAG, 0, MPI_SUCCESS);
        return MPI_SUCCESS;
    }
    thread_progress(tc);
    thread_mailbox *box = &tc->box[self];
    pthread_mutex_lock(&box->lock);
    thread_msg *m = box->unexpected;
    if (take)
        m = take_unexpected(box, source, tag);
    else
        while (m && !matches(source, tag, m->source, m->tag))
            m = m->next;
    *flag = m != NULL;
    if (m)
        status_fill(status, m->source, m->tag, m->bytes, MPI_SUCCESS);
    pthread_mutex_unlock(&box->lock);
    if (take)
        *taken = m;
    return MPI_SUCCESS;
}

int thread_iprobe(thread_comm *tc, int source, int tag, int *flag, MPI_Status *status)
{
    thread_msg *unused;
    return probe_mailbox(tc, source, tag, false, flag, status, &unused);
}

int thread_probe(thread_comm *tc, int source, int tag, MPI_Status *status)
{
    unsigned spins = 0;
    for (;;) {
        int flag = 0, rc = thread_iprobe(tc, source, tag, &flag, status);
        if (rc != MPI_SUCCESS || flag)
            return rc;
        thread_pause(&spins);
    }
}

/* Messages MPI_Improbe and MPI_Mprobe matched, taken off their mailbox
 * until MPI_Mrecv or MPI_Imrecv receives them. Their handles never name a
 * host message: an address of shoal's where MPI_Message is a pointer, else
 * an integer whose kind bits (MPICH's top two) no host handle has. */
typedef struct thread_matched {
    struct thread_matched *next;
    MPI_Message handle;
    thread_comm *tc;
    thread_msg *m;
} thread_matched;

_Atomic int thread_messages_live;
static thread_matched *matched;
static unsigned matched_serial;
static pthread_mutex_t matched_mutex = PTHREAD_MUTEX_INITIALIZER;

static void matched_add(thread_matched *rec)
{
    memset(&rec->handle, 0, sizeof rec->handle);
    pthread_mutex_lock(&matched_mutex);
    if (sizeof rec->handle >= sizeof(uintptr_t)) {
        uintptr_t address = (uintptr_t)rec;
        memcpy(&rec->handle, &address, sizeof address);
    } else {
        int serial = 0x00100000 | (int)(matched_serial++ & 0xfffff);
        memcpy(&rec->handle, &serial, sizeof serial < sizeof rec->handle ? sizeof serial : sizeof rec->handle);
    }
    rec->next = matched;
    matched = rec;
    atomic_fetch_add(&thread_messages_live, 1);
    pthread_mutex_unlock(&matched_mutex);
}

/* The matched message of handle, unlinked; NULL where it is not one. */
static thread_matched *matched_take(MPI_Message handle)
{
    pthread_mutex_lock(&matched_mutex);
    thread_matched **at = &matched;
    while (*at && memcmp(&(*at)->handle, &handle, sizeof handle))
        at = &(*at)->next;
    thread_matched *rec = *at;
    if (rec) {
        *at = rec->next;
        atomic_fetch_sub(&thread_messages_live, 1);
    }
    pthread_mutex_unlock(&matched_mutex);
    return rec;
}

int thread_improbe(thread_comm *tc, int source, int tag, int *flag, MPI_Message *message, MPI_Status *status)
{
    thread_msg *m;
    int rc = probe_mailbox(tc, source, tag, true, flag, status, &m);
    if (rc != MPI_SUCCESS || !*flag)
        return rc;
    if (!m) {
        *message = MPI_MESSAGE_NO_PROC;
        return MPI_SUCCESS;
    }
    thread_matched *rec = malloc(sizeof *rec);
    if (!rec)
        core_fatal("out of memory for a matched message");
    rec->tc = tc;
    rec->m = m;
    matched_add(rec);
    *message = rec->handle;
    return MPI_SUCCESS;
}

int thread_mprobe(thread_comm *tc, int source, int tag, MPI_Message *message, MPI_Status *status)
{
    unsigned spins = 0;
    for (;;) {
        int flag = 0, rc = thread_improbe(tc, source, tag, &flag, message, status);
        if (rc != MPI_SUCCESS || flag)
            return rc;
        thread_pause(&spins);
    }
}

/* Receives a matched message into req (zeroed but for tc): done at once. */
static int receive_matched(thread_matched *rec, void *buf, int count, MPI_Datatype type, thread_req *req)
{
    thread_msg *m = rec->m;
    req->tc = rec->tc;
    req->is_recv = true;
    free(rec);
    int rc = count < 0 ? MPI_ERR_COUNT : thread_layout_of(type, &req->layout) ? MPI_SUCCESS : MPI_ERR_TYPE;
    req->buf = buf;
    req->count = rc == MPI_SUCCESS ? count : 0;
    req->type = type;
    if (rc != MPI_SUCCESS)
        req->layout = (thread_layout){.size = 1, .extent = 1, .true_extent = 1, .dense = true};
    /* Taken even where the arguments are wrong: its sender must not wait on. */
    complete_recv(req, m);
    free(m->owned);
    free(m);
    if (rc != MPI_SUCCESS)
        req->error = rc;
    return req->error;
}

bool thread_mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Status *status, int *rc)
{
    thread_matched *rec = matched_take(*message);
    if (!rec)
        return false;
    thread_req req = {0};
    *rc = receive_matched(rec, buf, count, type, &req);
    *message = MPI_MESSAGE_NULL;
    status_fill(status, req.got_source, req.got_tag, req.got_bytes, req.error);
    if (*rc != MPI_SUCCESS)
        *rc = thread_error(req.tc, *rc, "MPI_Mrecv");
    return true;
}

bool thread_imrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Request *request, int *rc)
{
    thread_matched *rec = matched_take(*message);
    if (!rec)
        return false;
    thread_req *req = calloc(1, sizeof *req);
    if (!req)
        core_fatal("out of memory for a request");
    receive_matched(rec, buf, count, type, req); /* its error comes with the request */
    *message = MPI_MESSAGE_NULL;
    *rc = thread_req_hand_out(req, request);
    if (*rc != MPI_SUCCESS) {
        thread_comm *tc = req->tc;
        free(req);
        *rc = thread_error(tc, *rc, "no request from the host");
    }
    return true;
}

int thread_request_done(thread_comm *tc, MPI_Request *request)
{
    thread_req *req = calloc(1, sizeof *req);
    if (!req)
        return thread_error(tc, MPI_ERR_NO_MEM, "no memory for a request");
    req->tc = tc;
    finish(req);
    int rc = thread_req_hand_out(req, request);
    if (rc != MPI_SUCCESS) {
        free(req);
        return thread_error(tc, rc, "no request from the host");
    }
    return MPI_SUCCESS;
}

/* The wait family. Each pass moves every thread request of the array that
 * is done to the host (MPI_Grequest_complete), noting its error, then asks
 * the host's own test function over the whole array, which returns host
 * and thread requests alike and drives the host's progress. */
typedef struct pass_errors {
    int *code;       /* per request, a thread request's error (else 0) */
    thread_comm *tc; /* whose error handler reports them */
    int first;       /* the first error */
} pass_errors;

static void drive(int n, MPI_Request requests[], pass_errors *errors)
{
    for (int i = 0; i < n; i++) {
        thread_req *req = registry_find(requests[i]);
        if (!req)
            continue;
        if (!atomic_load_explicit(&req->done, memory_order_acquire))
            thread_progress(req->tc);
        if (!atomic_load_explicit(&req->done, memory_order_acquire))
            continue;
        registry_drop(req);
        if (req->error != MPI_SUCCESS) {
            errors->code[i] = req->error;
            if (!errors->first) {
                errors->first = req->error;
                errors->tc = req->tc;
            }
        }
        thread_host_lock();
        PMPI_Grequest_complete(req->handle);
        thread_host_unlock();
    }
}

static int *error_codes(int n, int *small)
{
    int *codes = n <= 16 ? small : calloc((size_t)n, sizeof *codes);
    if (!codes)
        core_fatal("out of memory for %d request errors", n);
    memset(codes, 0, (size_t)n * sizeof *codes);
    return codes;
}

/* The host has returned the requests; reports the thread requests' errors
 * (statuses: where MPI_ERR_IN_STATUS says so, else the single status). */
static int report(int n, int rc, pass_errors *e, MPI_Status statuses[], const int *which, int count)
{
    if (!e->first)
        return rc;
    int code = e->first;
    bool any = false;
    for (int k = 0; k < count; k++) {
        int i = which ? which[k] : k;
        if (i >= 0 && i < n && e->code[i]) {
            any = true;
            if (statuses != MPI_STATUSES_IGNORE)
                statuses[k].MPI_ERROR = e->code[i];
        }
    }
    if (!any)
        return rc;
    PMPI_Comm_call_errhandler(e->tc->handle, code);
    return statuses == MPI_STATUSES_IGNORE || count == 1 ? code : MPI_ERR_IN_STATUS;
}

static int testall_shown(int n, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
    int small[16];
    pass_errors e = {.code = error_codes(n, small)};
    drive(n, requests, &e);
    thread_host_lock();
    int rc = PMPI_Testall(n, requests, flag, statuses);
    thread_host_unlock();
    if (*flag && rc == MPI_SUCCESS && statuses != MPI_STATUSES_IGNORE)
        for (int i = 0; i < n; i++)
            statuses[i].MPI_ERROR = MPI_SUCCESS;
    if (*flag)
        rc = report(n, rc, &e, statuses, NULL, n);
    if (e.code != small)
        free(e.code);
    return rc;
}

static int waitall_shown(int n, MPI_Request requests[], MPI_Status statuses[])
{
    int small[16];
    pass_errors e = {.code = error_codes(n, small)};
    unsigned spins = 0;
    int flag = 0, rc;
    for (;;) {
        drive(n, requests, &e);
        thread_host_lock();
        rc = PMPI_Testall(n, requests, &flag, statuses);
        thread_host_unlock();
        if (flag || rc != MPI_SUCCESS)
            break;
        thread_pause(&spins);
    }
    if (flag && rc == MPI_SUCCESS && statuses != MPI_STATUSES_IGNORE)
        for (int i = 0; i < n; i++)
            statuses[i].MPI_ERROR = MPI_SUCCESS;
    rc = report(n, rc, &e, statuses, NULL, n);
    if (e.code != small)
        free(e.code);
    return rc;
}

static int testany_shown(int n, MPI_Request requests[], int *index, int *flag, MPI_Status *status)
{
    int small[16];
    pass_errors e = {.code = error_codes(n, small)};
    drive(n, requests, &e);
    thread_host_lock();
    int rc = PMPI_Testany(n, requests, index, flag, status);
    thread_host_unlock();
    if (*flag && *index != MPI_UNDEFINED)
        rc = report(n, rc, &e, status, index, 1);
    if (e.code != small)
        free(e.code);
    return rc;
}

static int waitany_shown(int n, MPI_Request requests[], int *index, MPI_Status *status)
{
    unsigned spins = 0;
    for (;;) {
        int flag = 0, rc = testany_shown(n, requests, index, &flag, status);
        if (flag || rc != MPI_SUCCESS)
            return rc;
        thread_pause(&spins);
    }
}

static int testsome_shown(int n, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[])
{
    int small[16];
    pass_errors e = {.code = error_codes(n, small)};
    drive(n, requests, &e);
    thread_host_lock();
    int rc = PMPI_Testsome(n, requests, outcount, indices, statuses);
    thread_host_unlock();
    if (*outcount != MPI_UNDEFINED && *outcount > 0)
        rc = report(n, rc, &e, statuses, indices, *outcount);
    if (e.code != small)
        free(e.code);
    return rc;
}

static int waitsome_shown(int n, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[])
{
    unsigned spins = 0;
    for (;;) {
        int rc = testsome_shown(n, requests, outcount, indices, statuses);
        if (rc != MPI_SUCCESS || *outcount != 0)
            return rc;
        thread_pause(&spins);
    }
}

/* The wait family's entry points: persistent requests shown as their
 * active ones (view_open), the user's array set after. */
#define SHOWN(call, args)                                \
    do {                                                 \
        request_view v;                                  \
        MPI_Request *shown = view_open(n, requests, &v); \
        int rc = call args;                              \
        view_close(n, requests, &v);                     \
        return rc;                                       \
    } while (0)

int thread_testall(int n, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
    SHOWN(testall_shown, (n, shown, flag, statuses));
}

int thread_waitall(int n, MPI_Request requests[], MPI_Status statuses[]) { SHOWN(waitall_shown, (n, shown, statuses)); }

int thread_testany(int n, MPI_Request requests[], int *index, int *flag, MPI_Status *status)
{
    SHOWN(testany_shown, (n, shown, index, flag, status));
}

int thread_waitany(int n, MPI_Request requests[], int *index, MPI_Status *status)
{
    SHOWN(waitany_shown, (n, shown, index, status));
}

int thread_testsome(int n, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[])
{
    SHOWN(testsome_shown, (n, shown, outcount, indices, statuses));
}

int thread_waitsome(int n, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[])
{
    SHOWN(waitsome_shown, (n, shown, outcount, indices, statuses));
}

int thread_request_free(MPI_Request *request)
{
    thread_persistent *p = persistent_find(*request);
    if (p && p->ops && p->active != MPI_REQUEST_NULL && req_pending(p->active)) {
        /* Its operation reads arguments that go with it (MPI forbids it). */
        return thread_error(p->tc, MPI_ERR_REQUEST,
                            "MPI_Request_free of an active persistent collective or partitioned request");
    }
    if (p) {
        persistent_free(p);
        *request = MPI_REQUEST_NULL;
        return MPI_SUCCESS;
    }
    thread_req *req = registry_find(*request);
    if (!req)
        return PMPI_Request_free(request);
    registry_drop(req);
    MPI_Request handle = req->handle;
    int pending = REQ_PENDING;
    if (!atomic_compare_exchange_strong(&req->done, &pending, REQ_DETACHED))
        release_to_host(handle); /* done already */
    *request = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}

/* Whether a request is done, leaving it as it is: a persistent one that is
 * inactive is, with an empty status. */
int thread_request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    thread_persistent *p = persistent_find(request);
    if (p && p->active == MPI_REQUEST_NULL) {
        *flag = 1;
        if (status != MPI_STATUS_IGNORE)
            persistent_query(p, status);
        return MPI_SUCCESS;
    }
    if (p)
        request = p->active;
    thread_req *req = registry_find(request);
    if (!req) { /* the host's, or one the wait family has completed there already */
        thread_host_lock();
        int rc = PMPI_Request_get_status(request, flag, status);
        thread_host_unlock();
        return rc;
    }
    if (!atomic_load_explicit(&req->done, memory_order_acquire))
        thread_progress(req->tc);
    *flag = atomic_load_explicit(&req->done, memory_order_acquire) != REQ_PENDING;
    if (*flag && status != MPI_STATUS_IGNORE)
        query_request(req, status);
    return MPI_SUCCESS;
}

/* A receive no message has matched yet leaves its queue and completes as
 * cancelled; anything else (sends among them) completes as it would. */
int thread_cancel(MPI_Request *request)
{
    thread_persistent *p = persistent_find(*request);
    if (p) /* its active operation, if any: cancelling an inactive one does nothing */
        return p->active == MPI_REQUEST_NULL ? MPI_SUCCESS : thread_cancel(&p->active);
    thread_req *req = registry_find(*request);
    if (!req)
        return PMPI_Cancel(request);
    if (!req->is_recv || !req->box)
        return MPI_SUCCESS;
    thread_mailbox *box = req->box;
    pthread_mutex_lock(&box->lock);
    thread_req **at = &box->posted;
    while (*at && *at != req)
        at = &(*at)->next;
    if (*at) {
        *at = req->next;
        if (!*at)
            box->posted_tail = at;
        req->cancelled = true;
    }
    pthread_mutex_unlock(&box->lock);
    if (req->cancelled)
        finish(req);
    return MPI_SUCCESS;
}

void thread_p2p_destroy(thread_comm *tc)
{
    /* Every process stays until every process's host sends are done, each
     * taking the others' messages meanwhile. */
    unsigned spins = 0;
    if (tc->nprocs > 1) {
        while (thread_progress(tc), !reap_outgoing(tc))
            thread_pause(&spins);
        MPI_Request barrier;
        int done = 0;
        thread_host_lock();
        PMPI_Ibarrier(tc->wire, &barrier);
        thread_host_unlock();
        while (!done) {
            thread_progress(tc);
            thread_host_lock();
            PMPI_Test(&barrier, &done, MPI_STATUS_IGNORE);
            thread_host_unlock();
            if (!done)
                thread_pause(&spins);
        }
    }
    int left = 0;
    for (int t = 0; t < tc->nthreads; t++) {
        for (thread_msg *m = tc->box[t].unexpected, *next; m; m = next) {
            next = m->next;
            free(m->owned);
            free(m);
            left++;
        }
        pthread_mutex_destroy(&tc->box[t].lock);
    }
    if (left)
        core_log_warn_once("a thread communicator was freed with %d messages no receive took", left);
    pthread_mutex_destroy(&tc->progress_lock);
    pthread_mutex_destroy(&tc->out_lock);
    free(tc->box);
}

int thread_coll_send(thread_comm *tc, int self, const void *buf, int count, MPI_Datatype type, int dest, int tag,
                     thread_req *req)
{
    return send_start(tc, self, buf, count, type, dest, tag, THREAD_SEND_STANDARD, req);
}

int thread_coll_recv(thread_comm *tc, int self, void *buf, int count, MPI_Datatype type, int source, int tag,
                     thread_req *req)
{
    return recv_start(tc, self, buf, count, type, source, tag, req);
}

int thread_coll_wait(thread_req *reqs, int n)
{
    int rc = MPI_SUCCESS;
    for (int i = 0; i < n; i++) {
        wait_req(&reqs[i]);
        if (reqs[i].is_recv && reqs[i].error != MPI_SUCCESS && rc == MPI_SUCCESS)
            rc = reqs[i].error;
    }
    return rc;
}
