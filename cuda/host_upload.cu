// CUDA backend, host-array mode: tridi_upload_async, an input sent ahead of its solve by tridi's upload
// thread, so that the call returns at once (docs/decisions/033).
//
// The call validates, makes sure the role's device buffer (and pinned staging) is large enough, posts a
// job and returns: it makes no CUDA call unless a buffer grows. The upload thread takes the jobs in the
// order posted and, slab by slab in the solve's cut, packs the slab into pinned staging when the array is
// not registered (with tridi's pack threads, docs/decisions/029) and queues the slab's copy and event on
// the role's stream: a slab's copy starts as soon as its rows are packed, while the next slab's are, and
// the solve starts on a slab as soon as its copy is queued. A job the thread has not started when the
// solve needs it is run by the solve itself: nothing waits for a sleeping thread to wake (decision 028).
//
// The caller's array is read only by its job, before the job queues its last slab. The solve that uses
// the upload waits for every slab to be queued, then for its copy (its event, on the compute stream);
// a solve of another box, tridi_host_unregister and tridi_destroy drop the role's job if it has not
// started, wait for it if it has, then wait for the up streams (uploads_settle): nothing reads the array
// after the call that uses it, or abandons it, returns (docs/api.md).
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
#include <mutex>
#include <new>

namespace {

// With TRIDI_CPU_POOL=0 the caller queues its uploads itself, as before decision 033: a box of at most this
// many slabs goes as one copy with one event (each copy and event costs the caller several us of CUDA calls;
// docs/decisions/011). The upload thread sends every box in the solve's slabs.
constexpr int UPLOAD_WHOLE_MAX_SLABS = 3;

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

int64_t now_ns()
{
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

} // namespace

struct host_uploads {
    tridi_cuda_state *st = nullptr;
    std::mutex mu;     // the jobs' states and sequence numbers
    upload_job job[4]; // each role's latest upload
    uint64_t seq = 0;
    int pending = 0; // jobs queued (written under mu, read without)
    // The thread sleeps on a futex of `posted` (bumped by every post), as tridi's pool workers do, not on a
    // condition variable: notify_one took 0.23-0.28 ms per upload inside flow_channel on the GPU machine's
    // host (glibc's signal may wait for an earlier woken waiter to run; decision 033).
    uint32_t posted = 0;
    int sleeping = 0, stop = 0;
    // Per role: seq << 8 | the slabs queued of its latest job, published (release) as each is queued.
    uint64_t issued[4] = {};
    pthread_t thread{};
    bool threaded = false;
    tridi_cpu_pool *pack_pool = nullptr; // NULL: the job packs on its own thread
    std::mutex pack_mu;                  // the pack pool runs one job at a time: the thread's or a solve's
};

namespace {

// Runs job j on this thread (tridi's upload thread, or the caller's when it takes a job over); pool: the
// pack threads, NULL for the OpenMP team of this thread (TRIDI_CPU_POOL=0). Records the first failure in j.
void run_job(tridi_cuda_state *st, host_uploads *u, tridi_cpu_pool *pool, upload_job &j)
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
        if (u)
            __atomic_store_n(&u->issued[j.r], j.seq << 8 | (uint64_t)(sl + 1), __ATOMIC_RELEASE);
        return TRIDI_SUCCESS;
    };
    if (j.direct) {
        for (int sl = 0; sl < j.S && e == cudaSuccess; ++sl)
            queue(sl);
    } else if (e == cudaSuccess) {
        auto rows = [&](int sl) { return j.sr.rows(sl); };
        auto pack = [&](int sl, int64_t i) { j.sr.pack(j.b, sl, i, j.host, j.type, st->hin[j.r].p, j.xt); };
        if (pool) {
            std::lock_guard<std::mutex> g(u->pack_mu);
            pack_pipeline(pool, j.threads, j.S, rows, pack, queue);
        } else {
            pack_pipeline(nullptr, u ? 1 : j.threads, j.S, rows, pack, queue);
        }
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
    int64_t until = now_ns() + u->st->pack_spin_ns;
    for (unsigned i = 1;; ++i) {
        if (__atomic_load_n(&u->stop, __ATOMIC_ACQUIRE))
            return nullptr;
        if (__atomic_load_n(&u->pending, __ATOMIC_ACQUIRE) > 0) {
            std::lock_guard<std::mutex> g(u->mu);
            if (upload_job *j = take_queued(u))
                return j;
        }
        copy_relax();
        if ((i & 63) || now_ns() < until)
            continue;
        // A post bumps `posted` after `pending` and then reads `sleeping` (all sequentially consistent):
        // either this thread sees the job or the post sees it asleep and wakes it.
        const uint32_t seen = __atomic_load_n(&u->posted, __ATOMIC_SEQ_CST);
        __atomic_store_n(&u->sleeping, 1, __ATOMIC_SEQ_CST);
        if (!__atomic_load_n(&u->pending, __ATOMIC_SEQ_CST) && !__atomic_load_n(&u->stop, __ATOMIC_SEQ_CST))
            sleep_until_posted(u, seen);
        __atomic_store_n(&u->sleeping, 0, __ATOMIC_SEQ_CST);
        until = now_ns() + u->st->pack_spin_ns;
    }
}

void *upload_thread(void *arg)
{
    host_uploads *u = static_cast<host_uploads *>(arg);
    cudaSetDevice(u->st->device); // a failure shows in the jobs' first CUDA call
    while (upload_job *j = next_job(u)) {
        run_job(u->st, u, u->pack_pool, *j);
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

// The state's upload thread and pack threads, made by the first upload from the calling thread (so that
// they sit on the places after the caller's); NULL where TRIDI_CPU_POOL=0 keeps uploads on the caller.
host_uploads *uploads_of(tridi_cuda_state *st)
{
    if (st->uploads || st->uploads_on_caller)
        return st->uploads;
    host_uploads *u = new (std::nothrow) host_uploads;
    if (!u)
        return nullptr;
    u->st = st;
    const int packers = std::max(1, std::min(8, omp_get_max_threads()));
    u->pack_pool = tridi_cpu_pool_create(packers, st->pack_spin_ns);
    // After the pack threads' places: the thread packs too, as their job's first share.
    u->threaded = tridi_cpu_thread_start(&u->thread, upload_thread, u, packers) == 0;
    st->uploads = u;
    return u;
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
            run_job(st, u, u->pack_pool, *mine);
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
    tridi_cpu_pool_destroy(u->pack_pool);
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
    const bool threaded = u && u->threaded;
    // A buffer being replaced may still be used by the role's previous copy (the staging's reuse is the
    // job's own wait: run_job).
    if (st->din[r].bytes < bytes || (!direct && st->hin[r].bytes < bytes)) {
        CK(cudaSetDevice(st->device), "cudaSetDevice");
        CK(cudaStreamSynchronize(st->up[r]), "waiting for the previous upload");
    }
    tridi_status s = ensure(st, st->din[r], bytes, "a device input box");
    if (!s && !direct)
        s = ensure_pinned(st->hin[r], bytes);
    if (s)
        return s;
    const int S_solve = slab_count(b, st->slab_cells);
    upload_job local;
    upload_job &j = threaded ? u->job[r] : local; // settled: the thread does not touch it until posted
    j.r = r;
    j.b = b;
    j.S = threaded || S_solve > UPLOAD_WHOLE_MAX_SLABS ? S_solve : 1;
    j.sr = plan_slab_rows(b, j.S);
    j.host = host;
    j.type = type;
    j.xt = xt;
    j.direct = direct;
    j.threads = copy_threads(pack_bytes(b, type, xt));
    j.err = cudaSuccess;
    j.what = nullptr;
    uint64_t seq = 0;
    if (threaded) {
        {
            std::lock_guard<std::mutex> g(u->mu);
            j.seq = seq = ++u->seq;
            j.state = JOB_QUEUED;
            __atomic_store_n(&u->pending, u->pending + 1, __ATOMIC_SEQ_CST);
        }
        __atomic_add_fetch(&u->posted, 1, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&u->sleeping, __ATOMIC_SEQ_CST))
            wake_thread(u, 1);
    } else { // no thread (TRIDI_CPU_POOL=0, or it could not start): queued here, packed on this thread's team
        CK(cudaSetDevice(st->device), "cudaSetDevice");
        run_job(st, nullptr, nullptr, j);
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
