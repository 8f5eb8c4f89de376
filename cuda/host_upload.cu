// CUDA backend, host-array mode: tridi_upload_async, an input sent ahead of its solve while the caller
// assembles the next one. The call posts a job to tridi's upload thread and returns (no CUDA call unless a
// buffer grows, decision 033); the thread queues the slabs' copies on the role's stream, packing unregistered
// arrays on tridi's pack threads (decision 029). A job not started when the solve needs it is run by the
// solve itself (decision 028). The caller's array is read only until its last slab is queued or packed;
// another box, tridi_host_unregister and tridi_destroy drop or wait for a pending job (docs/api.md).
#include "cpu_pool.h"
#include "cuda_internal.h"
#include "host_box.h"
#include "host_pipeline.h"

#include <omp.h>
#include <sched.h>
#include <time.h>
#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include <algorithm>
#include <climits>
#include <condition_variable>
#include <mutex>
#include <new>

namespace tridi_cuda {

namespace {

// Where the caller queues an upload's copies itself (with TRIDI_CPU_POOL=0, or where the upload thread could
// not start), a box of at most this many slabs goes as one copy with one event: each copy and event costs
// the caller several us of CUDA calls (docs/decisions/011). The upload thread sends every box in the solve's
// slabs.
constexpr int UPLOAD_WHOLE_MAX_SLABS = 3;

// The packing of one slab of an array that is not registered, run by a host function on the role's pack
// stream (decisions 029, 036): on the pack threads, the host function's own thread (CUDA's, often on the
// caller's core) only waiting for them.
constexpr int64_t PACK_CHUNK = 16; // rows a pack thread takes at a time

struct upload_pack {
    box_plan b{};
    const slab_rows *sr = nullptr;
    int sl = 0;
    const void *src = nullptr;
    tridi_dtype st = TRIDI_FLOAT32, dt = TRIDI_FLOAT32;
    void *dst = nullptr;
    int threads = 1;
    int64_t rows = 0, next = 0, done = 0;
    std::mutex m;
    std::condition_variable cv;
    bool finished = false;
    host_uploads *owner = nullptr;
};

enum job_state { JOB_EMPTY, JOB_QUEUED, JOB_RUNNING, JOB_DONE };

struct upload_job {
    int r = 0;
    box_plan b{};
    slab_rows sr{};
    const void *host = nullptr;
    tridi_dtype type = TRIDI_FLOAT32, xt = TRIDI_FLOAT32;
    bool direct = false;
    int S = 1, threads = 1;
    uint64_t seq = 0;
    job_state state = JOB_EMPTY;
    cudaError_t err = cudaSuccess;
    const char *what = nullptr;
};

} // namespace

struct host_uploads {
    tridi_cuda_state *st = nullptr;
    std::mutex mu;     // the jobs' states and sequence numbers
    upload_job job[4]; // each role's latest upload
    uint64_t seq = 0;
    int pending = 0; // jobs queued (written under mu, read without)
    // The thread sleeps on a futex of `posted` (bumped by every post), as tridi's pool workers do.
    uint32_t posted = 0;
    int sleeping = 0, stop = 0;
    // Per role: seq << 8 | the slabs queued of its latest job, published (release) as each is queued.
    uint64_t issued[4] = {};
    pthread_t thread{};
    bool threaded = false;
    // Arrays not registered: each role's slabs' packing (one role's are queued only once its up stream is
    // idle), the pack threads and streams, made by the first such upload.
    slab_rows pack_rows[4];
    upload_pack pack[4][MAX_SLABS];
    tridi_cpu_pool *pack_pool = nullptr; // NULL: the host function packs on its own thread
    bool pack_made = false;
    cudaStream_t pack_stream[4] = {};          // each role's packing host functions
    cudaEvent_t packed[4][MAX_SLABS] = {};     // slab s of a role packed: its copy waits for it
    std::mutex pack_mu; // host functions of different streams may run at once; the pool takes one
};

namespace {

cudaError_t queue_pack(tridi_cuda_state *st, host_uploads *u, const upload_job &j, int sl);

// Runs job j on this thread: tridi's upload thread, or the caller's (when it takes a job over, where the
// thread could not start, and with TRIDI_CPU_POOL=0, u NULL, where an array not registered is packed on the
// caller's OpenMP team). Records the first failure in j.
void run_job(tridi_cuda_state *st, host_uploads *u, upload_job &j)
{
    cudaError_t e = cudaSuccess;
    const char *what = nullptr;
    // The staging may still feed this role's previous copy.
    if (!j.direct && (e = cudaStreamSynchronize(st->up[j.r])) != cudaSuccess)
        what = "waiting for the previous upload";
    auto queue = [&](int sl) -> tridi_status {
        if (e != cudaSuccess)
            return TRIDI_ERROR_CUDA;
        int64_t b2, e2;
        slab_range(j.b, sl, j.S, &b2, &e2);
        if ((e = send_slab(st, j.b, j.r, j.host, j.xt, j.direct, b2, e2, sl, &what)) != cudaSuccess)
            return TRIDI_ERROR_CUDA;
        if (u && j.seq) // posted jobs only: the caller's own (seq 0) are waited for by no one
            __atomic_store_n(&u->issued[j.r], j.seq << 8 | (uint64_t)(sl + 1), __ATOMIC_RELEASE);
        return TRIDI_SUCCESS;
    };
    if (j.direct) {
        for (int sl = 0; sl < j.S && e == cudaSuccess; ++sl)
            queue(sl);
    } else if (u && e == cudaSuccess) {
        // Decision 036: each slab packed by a host function on the role's pack stream, its copy waiting for
        // that on the up stream; every packing is waited for by a copy, so the up stream idle (above) means
        // no host function reads the old rows.
        const int r = j.r;
        u->pack_rows[r] = j.sr;
        for (int sl = 0; sl < j.S && e == cudaSuccess; ++sl) {
            if ((e = queue_pack(st, u, j, sl)) != cudaSuccess ||
                (e = cudaEventRecord(u->packed[r][sl], u->pack_stream[r])) != cudaSuccess ||
                (e = cudaStreamWaitEvent(st->up[r], u->packed[r][sl], 0)) != cudaSuccess)
                what = "queueing the packing of an upload";
            else
                queue(sl);
        }
        if (e != cudaSuccess)
            cudaStreamSynchronize(u->pack_stream[r]); // a packing no copy waits for: done before the array is let go
    } else if (e == cudaSuccess) {
        auto rows = [&](int sl) { return j.sr.rows(sl); };
        auto pack = [&](int sl, int64_t i) { j.sr.pack(j.b, sl, i, j.host, j.type, st->hin[j.r].p, j.xt); };
        pack_pipeline(nullptr, j.threads, j.S, rows, pack, queue);
    }
    j.err = e;
    j.what = what;
}

void finish(host_uploads *u, upload_job &j)
{
    std::lock_guard<std::mutex> g(u->mu);
    j.state = JOB_DONE;
}

// The oldest job queued, taken (under u->mu).
upload_job *take_queued(host_uploads *u)
{
    upload_job *j = nullptr;
    for (auto &c : u->job)
        if (c.state == JOB_QUEUED && (!j || c.seq < j->seq))
            j = &c;
    if (j) {
        j->state = JOB_RUNNING;
        __atomic_store_n(&u->pending, u->pending - 1, __ATOMIC_RELAXED);
    }
    return j;
}

void sleep_until_posted(host_uploads *u, uint32_t seen)
{
#ifdef __linux__
    syscall(SYS_futex, &u->posted, FUTEX_WAIT_PRIVATE, seen, nullptr, nullptr, 0);
#else
    (void)u, (void)seen;
    timespec t{0, 50000};
    nanosleep(&t, nullptr);
#endif
}

void wake_thread(host_uploads *u, int n)
{
#ifdef __linux__
    syscall(SYS_futex, &u->posted, FUTEX_WAKE_PRIVATE, n, nullptr, nullptr, 0);
#else
    (void)u, (void)n;
#endif
}

// The next job for the upload thread: watched for until spin_ns after the last one (uploads come a few
// at a time), then slept on. NULL: the state is being destroyed.
upload_job *next_job(host_uploads *u)
{
    int64_t until = tridi_now_ns() + u->st->pack_spin_ns;
    for (unsigned i = 1;; ++i) {
        if (__atomic_load_n(&u->stop, __ATOMIC_ACQUIRE))
            return nullptr;
        if (__atomic_load_n(&u->pending, __ATOMIC_ACQUIRE) > 0) {
            std::lock_guard<std::mutex> g(u->mu);
            if (upload_job *j = take_queued(u))
                return j;
        }
        copy_relax();
        if ((i & 63) || tridi_now_ns() < until)
            continue;
        // A post bumps `posted` after `pending` and then reads `sleeping` (all sequentially consistent):
        // either this thread sees the job or the post sees it asleep and wakes it.
        const uint32_t seen = __atomic_load_n(&u->posted, __ATOMIC_SEQ_CST);
        __atomic_store_n(&u->sleeping, 1, __ATOMIC_SEQ_CST);
        if (!__atomic_load_n(&u->pending, __ATOMIC_SEQ_CST) && !__atomic_load_n(&u->stop, __ATOMIC_SEQ_CST))
            sleep_until_posted(u, seen);
        __atomic_store_n(&u->sleeping, 0, __ATOMIC_SEQ_CST);
        until = tridi_now_ns() + u->st->pack_spin_ns;
    }
}

void *upload_thread(void *arg)
{
    host_uploads *u = static_cast<host_uploads *>(arg);
    cudaSetDevice(u->st->device); // a failure shows in the jobs' first CUDA call
    while (upload_job *j = next_job(u)) {
        run_job(u->st, u, *j);
        finish(u, *j);
    }
    return nullptr;
}

void pause_a_little(unsigned i)
{
    if (i & 1023)
        copy_relax();
    else
        sched_yield(); // the thread that runs the job may need this core
}

// Role r's job neither queued nor running: a queued one is dropped (it has read nothing).
void settle_role(host_uploads *u, int r)
{
    for (unsigned i = 1;; ++i) {
        {
            std::lock_guard<std::mutex> g(u->mu);
            upload_job &j = u->job[r];
            if (j.state == JOB_QUEUED) {
                j.state = JOB_EMPTY;
                __atomic_store_n(&u->pending, u->pending - 1, __ATOMIC_RELAXED);
            }
            if (j.state != JOB_RUNNING)
                return;
        }
        pause_a_little(i);
    }
}

// The state's upload thread, made by the first upload from the calling thread (so that it sits on a place
// after the caller's); NULL where TRIDI_CPU_POOL=0 keeps uploads on the caller.
host_uploads *uploads_of(tridi_cuda_state *st)
{
    if (st->uploads || st->uploads_on_caller)
        return st->uploads;
    host_uploads *u = new (std::nothrow) host_uploads;
    if (!u)
        return nullptr;
    u->st = st;
    // After the pack threads' places.
    u->threaded = tridi_cpu_thread_start(&u->thread, upload_thread, u, std::min(8, omp_get_max_threads())) == 0;
    st->uploads = u;
    return u;
}

// A pack thread's part: chunks of rows until none is left; the thread that finishes the last wakes the
// host function (id 0), which only waits.
void pack_share(void *arg, int id)
{
    upload_pack *j = static_cast<upload_pack *>(arg);
    if (id == 0) {
        std::unique_lock<std::mutex> lk(j->m);
        j->cv.wait(lk, [j] { return j->finished; });
        return;
    }
    for (;;) {
        const int64_t i0 = __atomic_fetch_add(&j->next, PACK_CHUNK, __ATOMIC_RELAXED);
        if (i0 >= j->rows)
            return;
        const int64_t i1 = std::min(j->rows, i0 + PACK_CHUNK);
        for (int64_t i = i0; i < i1; ++i)
            j->sr->pack(j->b, j->sl, i, j->src, j->st, j->dst, j->dt);
        if (__atomic_add_fetch(&j->done, i1 - i0, __ATOMIC_ACQ_REL) == j->rows) {
            std::lock_guard<std::mutex> lk(j->m);
            j->finished = true;
            j->cv.notify_one();
        }
    }
}

void CUDART_CB run_pack(void *arg)
{
    upload_pack *j = static_cast<upload_pack *>(arg);
    host_uploads *u = j->owner;
    if (u->pack_pool && j->rows > 0) {
        std::lock_guard<std::mutex> g(u->pack_mu);
        tridi_cpu_pool_run(u->pack_pool, pack_share, j, j->threads + 1);
        return;
    }
    for (int64_t i = 0; i < j->rows; ++i)
        j->sr->pack(j->b, j->sl, i, j->src, j->st, j->dst, j->dt);
}

// The pack threads and streams, made by the first upload of an array not registered, from the caller's thread:
// the threads sit on the places after its own. Without them (a thread that cannot start) the host function
// packs alone.
tridi_status make_packing(tridi_cuda_state *st, host_uploads *u)
{
    if (u->pack_made)
        return TRIDI_SUCCESS;
    CK(cudaSetDevice(st->device), "cudaSetDevice");
    for (int r = 0; r < 4; ++r) {
        if (!u->pack_stream[r])
            CK(cudaStreamCreateWithFlags(&u->pack_stream[r], cudaStreamNonBlocking), "cudaStreamCreate");
        for (int sl = 0; sl < MAX_SLABS; ++sl)
            if (!u->packed[r][sl])
                CK(cudaEventCreateWithFlags(&u->packed[r][sl], cudaEventDisableTiming), "cudaEventCreate");
    }
    u->pack_pool = tridi_cpu_pool_create(std::max(1, std::min(8, omp_get_max_threads())), st->pack_spin_ns);
    u->pack_made = true;
    return TRIDI_SUCCESS;
}

// Queues the packing of slab sl of job j's array on the role's pack stream, whose earlier packings of this
// role are done (run_job waited for the up stream, whose copies wait for them).
cudaError_t queue_pack(tridi_cuda_state *st, host_uploads *u, const upload_job &j, int sl)
{
    upload_pack &k = u->pack[j.r][sl];
    k.b = j.b;
    k.sr = &u->pack_rows[j.r];
    k.sl = sl;
    k.src = j.host;
    k.st = j.type;
    k.dst = st->hin[j.r].p;
    k.dt = j.xt;
    k.threads = std::max(1, std::min(j.threads, tridi_cpu_pool_workers(u->pack_pool)));
    k.rows = j.sr.rows(sl);
    k.next = k.done = 0;
    k.finished = k.rows == 0;
    k.owner = u;
    return cudaLaunchHostFunc(u->pack_stream[j.r], run_pack, &k);
}

} // namespace

void upload_settle(tridi_cuda_state *st, int r)
{
    if (st->uploads)
        settle_role(st->uploads, r);
}

void uploads_settle(tridi_cuda_state *st)
{
    if (st->uploads)
        for (int r = 0; r < 4; ++r)
            settle_role(st->uploads, r);
}

tridi_status upload_wait(tridi_cuda_state *st, int r, uint64_t seq, int sl)
{
    host_uploads *u = st->uploads;
    if (!seq || !u)
        return TRIDI_SUCCESS;
    const uint64_t want = seq << 8 | (uint64_t)(sl + 1);
    for (unsigned i = 1;; ++i) {
        if (__atomic_load_n(&u->issued[r], __ATOMIC_ACQUIRE) >= want)
            return TRIDI_SUCCESS;
        upload_job *mine = nullptr;
        bool done = false;
        {
            std::lock_guard<std::mutex> g(u->mu);
            upload_job &j = u->job[r];
            if (j.seq == seq && j.state == JOB_QUEUED) {
                j.state = JOB_RUNNING;
                __atomic_store_n(&u->pending, u->pending - 1, __ATOMIC_RELAXED);
                mine = &j;
            } else {
                done = j.seq != seq || j.state != JOB_RUNNING;
            }
        }
        if (mine) { // not started yet: run it here rather than wait for the thread to wake
            run_job(st, u, *mine);
            finish(u, *mine);
            continue;
        }
        if (done) {
            if (__atomic_load_n(&u->issued[r], __ATOMIC_ACQUIRE) >= want)
                return TRIDI_SUCCESS;
            const upload_job &j = u->job[r];
            if (j.seq == seq && j.err != cudaSuccess)
                return cuda_fail(j.what, j.err);
            return tridi_fail(TRIDI_ERROR_INTERNAL, "tridi (CUDA): upload %llu of role %d was dropped before its solve",
                              (unsigned long long)seq, r);
        }
        pause_a_little(i);
    }
}

void free_host_threads(tridi_cuda_state *st)
{
    tridi_cpu_pool_destroy(st->copy_pool);
    st->copy_pool = nullptr;
    host_uploads *u = st->uploads;
    if (!u)
        return;
    uploads_settle(st);
    if (u->threaded) {
        __atomic_store_n(&u->stop, 1, __ATOMIC_SEQ_CST);
        __atomic_add_fetch(&u->posted, 1, __ATOMIC_SEQ_CST);
        wake_thread(u, INT_MAX);
        pthread_join(u->thread, nullptr);
    }
    for (int r = 0; r < 4; ++r) // no host function may use the pack threads after this
        if (u->pack_stream[r])
            cudaStreamSynchronize(u->pack_stream[r]);
    tridi_cpu_pool_destroy(u->pack_pool);
    for (int r = 0; r < 4; ++r) {
        for (int sl = 0; sl < MAX_SLABS; ++sl)
            if (u->packed[r][sl])
                cudaEventDestroy(u->packed[r][sl]);
        if (u->pack_stream[r])
            cudaStreamDestroy(u->pack_stream[r]);
    }
    delete u;
    st->uploads = nullptr;
}

extern "C" {

tridi_status tridi_cuda_upload_async(tridi_cuda_state *st, const tridi_problem *p, tridi_array_role role,
                                     const void *host, tridi_dtype type, int registered)
{
    const int r = (int)role;
    const tridi_dtype xt = st->allow_f32 && type == TRIDI_FLOAT64 ? TRIDI_FLOAT32 : type;
    const bool direct = registered && xt == type; // narrowing to float needs the host pass
    const box_plan b = plan_box(p);
    const size_t bytes = b.wcells * tridi_dtype_size(xt);
    st->uploaded[r].valid = false;
    host_uploads *u = uploads_of(st);
    if (u)
        settle_role(u, r); // an earlier upload of this role, unused, is dropped or done with
    const bool on_thread = u && u->threaded;
    // A buffer being replaced may still be used by the role's previous copy (the staging's reuse is waited
    // for by run_job).
    if (st->din[r].bytes < bytes || (!direct && st->hin[r].bytes < bytes)) {
        CK(cudaSetDevice(st->device), "cudaSetDevice");
        CK(cudaStreamSynchronize(st->up[r]), "waiting for the previous upload");
    }
    tridi_status s = ensure(st, st->din[r], bytes, "a device input box");
    if (!s && !direct)
        s = ensure_pinned(st->hin[r], bytes);
    if (s)
        return s;
    if (u && !direct && (s = make_packing(st, u)) != TRIDI_SUCCESS)
        return s;
    const int S_solve = slab_count(b, st->slab_cells);
    upload_job local;
    upload_job &j = on_thread ? u->job[r] : local; // settled: the thread does not touch it until posted
    j.r = r;
    j.b = b;
    j.S = on_thread || S_solve > UPLOAD_WHOLE_MAX_SLABS ? S_solve : 1;
    j.sr = plan_slab_rows(b, j.S);
    j.host = host;
    j.type = type;
    j.xt = xt;
    j.direct = direct;
    j.threads = copy_threads(pack_bytes(b, type, xt));
    j.err = cudaSuccess;
    j.what = nullptr;
    uint64_t seq = 0;
    if (on_thread) {
        {
            std::lock_guard<std::mutex> g(u->mu);
            j.seq = seq = ++u->seq;
            j.state = JOB_QUEUED;
            __atomic_store_n(&u->pending, u->pending + 1, __ATOMIC_SEQ_CST);
        }
        __atomic_add_fetch(&u->posted, 1, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&u->sleeping, __ATOMIC_SEQ_CST))
            wake_thread(u, 1);
    } else { // TRIDI_CPU_POOL=0 (u NULL), or the thread could not start: queued here
        CK(cudaSetDevice(st->device), "cudaSetDevice");
        run_job(st, u, j);
        if (j.err != cudaSuccess) {
            cudaStreamSynchronize(st->up[r]); // what was queued still reads the array: done before returning
            return cuda_fail(j.what, j.err);
        }
    }
    upload_key &k = st->uploaded[r];
    k.grid = p->grid;
    k.axis = (int)p->axis;
    for (int a = 0; a < 3; ++a) {
        k.lo[a] = p->lo[a];
        k.hi[a] = p->hi[a];
    }
    k.host = host;
    k.type = type;
    k.xfer = xt;
    k.dptr = st->din[r].p;
    k.slabs = j.S;
    k.seq = seq;
    k.valid = true;
    return TRIDI_SUCCESS;
}

} // extern "C"

} // namespace tridi_cuda
