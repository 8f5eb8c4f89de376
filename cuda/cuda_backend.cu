// CUDA backend: the functions declared under TRIDI_HAVE_CUDA in src/tridi_internal.h.
//
// Host-array mode moves the box through pinned staging buffers: the box of each input is packed on the
// host into a compact layout, sent on its own stream slab by slab (slabs along the outer line axis), each
// slab solved as soon as its four inputs have arrived, and its answers sent back while later slabs are
// still going up. The answer reaches the caller's x only after every line is known to have succeeded.
//
// Device mode solves into a compact box buffer owned by the context; a commit kernel copies it into the
// caller's x only if the solve's error slot is clear, so nothing synchronises and a failing solve leaves
// x as it was. Failures are collected by tridi_cuda_synchronize.
#include "thomas_kernels.cuh"
#include "tridi_internal.h"

#include <cuda_runtime.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace {

constexpr int NSLOT = 256;    // device-mode solves that may be in flight before the oldest is checked
constexpr int HOST_SLOT = NSLOT;
constexpr int MAX_SLABS = 8;
constexpr size_t SLAB_BYTES = 4u << 20; // smaller slabs only add per-copy overhead

std::atomic<size_t> g_device_bytes{0}; // every device allocation of every context in this process

size_t device_memory_limit()
{
    const char *env = std::getenv("TRIDI_DEVICE_MEMORY_LIMIT");
    if (!env || !*env)
        return 0;
    char *end = nullptr;
    unsigned long long v = std::strtoull(env, &end, 10);
    return end && *end == '\0' ? (size_t)v : 0;
}

tridi_status cuda_fail(const char *what, cudaError_t e)
{
    if (e == cudaErrorMemoryAllocation) {
        cudaGetLastError(); // allocation failures are not sticky: clear them so the next call works
        return tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "tridi (CUDA): %s: %s", what, cudaGetErrorString(e));
    }
    return tridi_fail(TRIDI_ERROR_CUDA, "tridi (CUDA): %s: %s (%s)", what, cudaGetErrorString(e),
                      cudaGetErrorName(e));
}

#define CK(call, what)                                                                                   \
    do {                                                                                                 \
        cudaError_t ck_e = (call);                                                                       \
        if (ck_e != cudaSuccess)                                                                         \
            return cuda_fail(what, ck_e);                                                                \
    } while (0)

tridi_status device_alloc(size_t bytes, void **p, const char *purpose)
{
    *p = nullptr;
    size_t limit = device_memory_limit();
    size_t used = g_device_bytes.fetch_add(bytes) + bytes;
    if (limit && used > limit) {
        g_device_bytes.fetch_sub(bytes);
        return tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY,
                          "tridi (CUDA): %zu bytes of device memory for %s would pass "
                          "TRIDI_DEVICE_MEMORY_LIMIT = %zu (%zu already in use)",
                          bytes, purpose, limit, used - bytes);
    }
    cudaError_t e = cudaMalloc(p, bytes ? bytes : 1);
    if (e != cudaSuccess) {
        g_device_bytes.fetch_sub(bytes);
        *p = nullptr;
        char what[160];
        std::snprintf(what, sizeof what, "cudaMalloc of %zu bytes for %s", bytes, purpose);
        return cuda_fail(what, e);
    }
    return TRIDI_SUCCESS;
}

void device_release(void *p, size_t bytes)
{
    if (p) {
        cudaFree(p);
        g_device_bytes.fetch_sub(bytes);
    }
}

struct dbuf {
    void *p = nullptr;
    size_t bytes = 0;
};

struct hbuf {
    void *p = nullptr;
    size_t bytes = 0;
};

// A compact box: rows of `len` contiguous cells; row = r + R*l2 starts at origin + r*rs + l2*s2 in the
// caller's array. x sweeps: a row is a line (len = n, R = n1); y and z sweeps: a row is a run along i
// of one unknown (len = n1, R = n), so neighbouring threads take neighbouring lines.
struct rows_geo {
    int64_t len, R, origin, rs, s2;
};

rows_geo geometry(const tridi_problem *p)
{
    if (p->axis == TRIDI_AXIS_X)
        return {p->n, p->n1, p->origin, p->stride[p->a1], p->stride[p->a2]};
    return {p->n1, p->n, p->origin, p->stride[p->axis], p->stride[p->a2]};
}

tk_view compact_view(const tridi_problem *p)
{
    if (p->axis == TRIDI_AXIS_X)
        return {0, p->n, p->n * p->n1, 1};
    return {0, 1, p->n1 * p->n, p->n1};
}

// Rows [r0, r1) between the caller's array and a compact buffer; double -> float on the way up when the
// transfer type is narrower.
void pack_rows(const void *user, tridi_dtype ut, void *dst, tridi_dtype dt, const rows_geo &g, int64_t r0,
               int64_t r1, bool parallel = true)
{
    const size_t ue = tridi_dtype_size(ut), de = tridi_dtype_size(dt);
#pragma omp parallel for schedule(static) if (parallel && (r1 - r0) * g.len > 32768)
    for (int64_t row = r0; row < r1; ++row) {
        const int64_t r = row % g.R, l2 = row / g.R;
        const char *s = (const char *)user + (g.origin + r * g.rs + l2 * g.s2) * ue;
        char *d = (char *)dst + row * g.len * de;
        if (ut == dt) {
            std::memcpy(d, s, g.len * de);
        } else {
            const double *sd = (const double *)s;
            float *df = (float *)d;
            for (int64_t q = 0; q < g.len; ++q)
                df[q] = (float)sd[q];
        }
    }
}

void unpack_rows(const void *src, void *user, size_t es, const rows_geo &g, int64_t rows)
{
#pragma omp parallel for schedule(static) if (rows * g.len > 32768)
    for (int64_t row = 0; row < rows; ++row) {
        const int64_t r = row % g.R, l2 = row / g.R;
        std::memcpy((char *)user + (g.origin + r * g.rs + l2 * g.s2) * es, (const char *)src + row * g.len * es,
                    g.len * es);
    }
}

struct upload_key {
    bool valid = false;
    tridi_grid grid{};
    int axis = 0;
    int64_t lo[3]{}, hi[3]{};
    const void *host = nullptr;
    tridi_dtype type = TRIDI_FLOAT32;
    void *dptr = nullptr;
};

bool same_box(const upload_key &k, const tridi_problem *p)
{
    if (!k.valid || k.axis != (int)p->axis || k.grid.ndim != p->grid.ndim)
        return false;
    for (int a = 0; a < 3; ++a)
        if (k.grid.lbound[a] != p->grid.lbound[a] || k.grid.ubound[a] != p->grid.ubound[a] || k.lo[a] != p->lo[a] ||
            k.hi[a] != p->hi[a])
            return false;
    return true;
}

struct pending_solve {
    bool active = false;
    tridi_problem p{};
};

} // namespace

struct tridi_cuda_state {
    int device = 0;
    int allow_f32 = 0;
    cudaStream_t compute = nullptr, down = nullptr, up[4] = {};
    cudaEvent_t ev_up[4] = {};             // a role's upload_async finished
    cudaEvent_t ev_in[4][MAX_SLABS] = {};  // slab s of a role has arrived
    cudaEvent_t ev_solved[MAX_SLABS] = {}; // slab s solved
    cudaEvent_t ev_slot[NSLOT] = {};       // device-mode solve of a slot committed
    cudaEvent_t ev_last = nullptr;         // the context's latest queued work
    bool have_last = false;
    unsigned long long *d_err = nullptr;   // NSLOT + 1 slots; the last one is host mode's
    unsigned long long *h_mirror = nullptr, *h_mirror_dev = nullptr; // mapped pinned verdicts
    int next_slot = 0;
    pending_solve pending[NSLOT];
    dbuf din[4], dout, dbox, scratch;
    hbuf hin[4], hout;
    upload_key uploaded[4];
    std::unordered_map<void *, size_t> user_allocs;
};

namespace {

tridi_status ensure(dbuf &b, size_t bytes, const char *purpose)
{
    if (b.bytes >= bytes && b.p)
        return TRIDI_SUCCESS;
    device_release(b.p, b.bytes);
    b.p = nullptr;
    b.bytes = 0;
    tridi_status s = device_alloc(bytes, &b.p, purpose);
    if (s == TRIDI_SUCCESS)
        b.bytes = bytes;
    return s;
}

tridi_status ensure_pinned(hbuf &b, size_t bytes)
{
    if (b.bytes >= bytes && b.p)
        return TRIDI_SUCCESS;
    if (b.p)
        cudaFreeHost(b.p);
    b.p = nullptr;
    b.bytes = 0;
    cudaError_t e = cudaHostAlloc(&b.p, bytes ? bytes : 1, cudaHostAllocDefault);
    if (e != cudaSuccess) {
        b.p = nullptr;
        cudaGetLastError();
        return tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "tridi (CUDA): cudaHostAlloc of %zu bytes of pinned staging: %s",
                          bytes, cudaGetErrorString(e));
    }
    b.bytes = bytes;
    return TRIDI_SUCCESS;
}

// Storage types of the three kernel operands: lower/upper/rhs, diag, answer.
struct kernel_types {
    tridi_dtype l, d, x;
};

kernel_types types_of(const tridi_problem *p, bool f32_transfer)
{
    kernel_types k{p->arrays.lower_type, p->arrays.diag_type, p->arrays.x_type};
    if (f32_transfer) {
        k.l = TRIDI_FLOAT32;
        k.d = TRIDI_FLOAT32;
    }
    return k;
}

// Calls fn with null pointers of the three kernel operand types (lower/upper/rhs, diag, answer).
template <class Fn>
tridi_status with_types(const kernel_types &k, Fn &&fn)
{
    using F = float;
    using D = double;
    if (k.l == TRIDI_FLOAT32 && k.d == TRIDI_FLOAT32 && k.x == TRIDI_FLOAT32)
        return fn((F *)nullptr, (F *)nullptr, (F *)nullptr);
    if (k.l == TRIDI_FLOAT64 && k.d == TRIDI_FLOAT64 && k.x == TRIDI_FLOAT64)
        return fn((D *)nullptr, (D *)nullptr, (D *)nullptr);
    if (k.l == TRIDI_FLOAT32 && k.d == TRIDI_FLOAT64 && k.x == TRIDI_FLOAT32)
        return fn((F *)nullptr, (D *)nullptr, (F *)nullptr);
    if (k.l == TRIDI_FLOAT32 && k.d == TRIDI_FLOAT32 && k.x == TRIDI_FLOAT64)
        return fn((F *)nullptr, (F *)nullptr, (D *)nullptr);
    return tridi_fail(TRIDI_ERROR_INTERNAL, "tridi (CUDA): no kernel for this type combination (please report)");
}

tridi_status launch_solve(const kernel_types &k, const tk_args &a, bool contiguous, cudaStream_t s)
{
    return with_types(k, [&](auto *l, auto *d, auto *x) {
        using TL = std::remove_pointer_t<decltype(l)>;
        using TD = std::remove_pointer_t<decltype(d)>;
        using TX = std::remove_pointer_t<decltype(x)>;
        CK((tk_launch<TL, TD, TX>(a, contiguous, s)), "launching the Thomas kernel");
        return TRIDI_SUCCESS;
    });
}

tridi_status plan_solve(const kernel_types &k, const tk_args &a, bool contiguous, bool want_coop, tk_plan *plan)
{
    return with_types(k, [&](auto *l, auto *d, auto *x) {
        using TL = std::remove_pointer_t<decltype(l)>;
        using TD = std::remove_pointer_t<decltype(d)>;
        using TX = std::remove_pointer_t<decltype(x)>;
        CK((tk_make_plan<TL, TD, TX>(a, contiguous, want_coop, plan)), "planning the Thomas kernel");
        return TRIDI_SUCCESS;
    });
}

tridi_status run_solve(const kernel_types &k, const tk_args &a, const tk_plan &plan, cudaStream_t s)
{
    return with_types(k, [&](auto *l, auto *d, auto *x) {
        using TL = std::remove_pointer_t<decltype(l)>;
        using TD = std::remove_pointer_t<decltype(d)>;
        using TX = std::remove_pointer_t<decltype(x)>;
        CK((tk_run<TL, TD, TX>(a, plan, s)), "launching the Thomas kernel");
        return TRIDI_SUCCESS;
    });
}

const char *fail_what(int code)
{
    switch (code) {
    case 1: return "non-finite diag value";
    case 2: return "non-finite lower value";
    case 3: return "non-finite upper value";
    case 4: return "non-finite rhs value";
    case 5: return "zero pivot (diag + lower*w = 0)";
    case 6: return "overflow in the elimination (pivot too small)";
    case 7: return "the answer overflows its storage type";
    default: return "";
    }
}

tridi_status report_failure(const char *func, const tridi_problem *p, int64_t line, const tk_fail &f, bool f32)
{
    if (f.code == 0) {
        if (f32)
            return tridi_fail_numeric(func, p, TRIDI_ERROR_NONFINITE, line, 0,
                                      "a double input overflows float in the float transfer (allow_f32_transfer)");
        return tridi_fail_numeric(func, p, TRIDI_ERROR_INTERNAL, line, 0,
                                  "a failure flag without a failing value (please report)");
    }
    return tridi_fail_numeric(func, p, f.code == 5 ? TRIDI_ERROR_ZERO_PIVOT : TRIDI_ERROR_NONFINITE, line, f.m,
                              fail_what(f.code));
}

template <class TL, class TD, class TX>
void locate_host_typed(const tridi_problem *p, int64_t off, tk_fail *out, double *W, double *G)
{
    const int64_t s = p->stride[p->axis];
    tk_locate<TL, TD, TX>((const TL *)p->arrays.lower + off, (const TD *)p->arrays.diag + off,
                          (const TL *)p->arrays.upper + off, (const TL *)p->arrays.rhs + off, s, p->n, W, G, out);
}

tridi_status locate_on_host(const char *func, const tridi_problem *p, int64_t line, bool f32)
{
    std::vector<double> wg;
    try {
        wg.resize((size_t)p->n * 2);
    } catch (const std::bad_alloc &) {
        return tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: line %lld failed and its diagnosis ran out of memory",
                          func, (long long)line);
    }
    tk_fail f{};
    const int64_t off = tridi_line_offset(p, line);
    switch (p->combo) {
    case TRIDI_COMBO_F32: locate_host_typed<float, float, float>(p, off, &f, wg.data(), wg.data() + p->n); break;
    case TRIDI_COMBO_F64: locate_host_typed<double, double, double>(p, off, &f, wg.data(), wg.data() + p->n); break;
    case TRIDI_COMBO_MIXED: locate_host_typed<float, double, float>(p, off, &f, wg.data(), wg.data() + p->n); break;
    }
    return report_failure(func, p, line, f, f32);
}

tridi_status locate_on_device(tridi_cuda_state *st, const tridi_problem *p, int64_t line)
{
    const char *func = "tridi_solve_device";
    void *wg = nullptr;
    tk_fail *df = nullptr;
    tridi_status s = device_alloc((size_t)p->n * 2 * sizeof(double) + sizeof(tk_fail), &wg, "diagnosing a failed line");
    if (s)
        return s;
    df = (tk_fail *)((double *)wg + 2 * p->n);
    const int64_t off = tridi_line_offset(p, line), str = p->stride[p->axis];
    const tridi_arrays &A = p->arrays;
    switch (p->combo) {
    case TRIDI_COMBO_F32:
        tk_locate_kernel<float, float, float><<<1, 1, 0, st->compute>>>(
            (const float *)A.lower + off, (const float *)A.diag + off, (const float *)A.upper + off,
            (const float *)A.rhs + off, str, p->n, (double *)wg, df);
        break;
    case TRIDI_COMBO_F64:
        tk_locate_kernel<double, double, double><<<1, 1, 0, st->compute>>>(
            (const double *)A.lower + off, (const double *)A.diag + off, (const double *)A.upper + off,
            (const double *)A.rhs + off, str, p->n, (double *)wg, df);
        break;
    case TRIDI_COMBO_MIXED:
        tk_locate_kernel<float, double, float><<<1, 1, 0, st->compute>>>(
            (const float *)A.lower + off, (const double *)A.diag + off, (const float *)A.upper + off,
            (const float *)A.rhs + off, str, p->n, (double *)wg, df);
        break;
    }
    tk_fail f{};
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(&f, df, sizeof f, cudaMemcpyDeviceToHost, st->compute);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(st->compute);
    device_release(wg, (size_t)p->n * 2 * sizeof(double) + sizeof(tk_fail));
    if (e != cudaSuccess)
        return cuda_fail("diagnosing a failed line", e);
    return report_failure(func, p, line, f, false);
}

// Checks device-mode solve `slot` (waiting for it); returns its failure, if any.
tridi_status retire_slot(tridi_cuda_state *st, int slot)
{
    pending_solve &ps = st->pending[slot];
    if (!ps.active)
        return TRIDI_SUCCESS;
    ps.active = false;
    CK(cudaEventSynchronize(st->ev_slot[slot]), "waiting for a device solve");
    const unsigned long long verdict = st->h_mirror[slot];
    if (verdict == ULLONG_MAX)
        return TRIDI_SUCCESS;
    return locate_on_device(st, &ps.p, (int64_t)verdict);
}

void free_state(tridi_cuda_state *st)
{
    for (int r = 0; r < 4; ++r) {
        device_release(st->din[r].p, st->din[r].bytes);
        if (st->hin[r].p)
            cudaFreeHost(st->hin[r].p);
    }
    device_release(st->dout.p, st->dout.bytes);
    device_release(st->dbox.p, st->dbox.bytes);
    device_release(st->scratch.p, st->scratch.bytes);
    if (st->hout.p)
        cudaFreeHost(st->hout.p);
    device_release(st->d_err, (NSLOT + 1) * sizeof(unsigned long long));
    if (st->h_mirror)
        cudaFreeHost(st->h_mirror);
    for (auto &kv : st->user_allocs)
        device_release(kv.first, kv.second);
    auto dest_ev = [](cudaEvent_t e) {
        if (e)
            cudaEventDestroy(e);
    };
    for (int r = 0; r < 4; ++r) {
        dest_ev(st->ev_up[r]);
        for (int s = 0; s < MAX_SLABS; ++s)
            dest_ev(st->ev_in[r][s]);
        if (st->up[r])
            cudaStreamDestroy(st->up[r]);
    }
    for (int s = 0; s < MAX_SLABS; ++s)
        dest_ev(st->ev_solved[s]);
    for (int s = 0; s < NSLOT; ++s)
        dest_ev(st->ev_slot[s]);
    dest_ev(st->ev_last);
    if (st->compute)
        cudaStreamDestroy(st->compute);
    if (st->down)
        cudaStreamDestroy(st->down);
    delete st;
}

tridi_status create_state(tridi_cuda_state *st)
{
    const unsigned fl = cudaEventDisableTiming;
    CK(cudaStreamCreateWithFlags(&st->compute, cudaStreamNonBlocking), "cudaStreamCreate");
    CK(cudaStreamCreateWithFlags(&st->down, cudaStreamNonBlocking), "cudaStreamCreate");
    for (int r = 0; r < 4; ++r) {
        CK(cudaStreamCreateWithFlags(&st->up[r], cudaStreamNonBlocking), "cudaStreamCreate");
        CK(cudaEventCreateWithFlags(&st->ev_up[r], fl), "cudaEventCreate");
        for (int s = 0; s < MAX_SLABS; ++s)
            CK(cudaEventCreateWithFlags(&st->ev_in[r][s], fl), "cudaEventCreate");
    }
    for (int s = 0; s < MAX_SLABS; ++s)
        CK(cudaEventCreateWithFlags(&st->ev_solved[s], fl), "cudaEventCreate");
    for (int s = 0; s < NSLOT; ++s)
        CK(cudaEventCreateWithFlags(&st->ev_slot[s], fl), "cudaEventCreate");
    CK(cudaEventCreateWithFlags(&st->ev_last, fl), "cudaEventCreate");
    void *p = nullptr;
    tridi_status s = device_alloc((NSLOT + 1) * sizeof(unsigned long long), &p, "error slots");
    if (s)
        return s;
    st->d_err = (unsigned long long *)p;
    CK(cudaMemset(st->d_err, 0xff, (NSLOT + 1) * sizeof(unsigned long long)), "cudaMemset");
    CK(cudaHostAlloc((void **)&st->h_mirror, NSLOT * sizeof(unsigned long long), cudaHostAllocMapped),
       "cudaHostAlloc (mapped)");
    CK(cudaHostGetDevicePointer((void **)&st->h_mirror_dev, st->h_mirror, 0), "cudaHostGetDevicePointer");
    return TRIDI_SUCCESS;
}

// Later work of the context shares its buffers with earlier work: order it after that.
tridi_status after_last(tridi_cuda_state *st, cudaStream_t s)
{
    if (st->have_last)
        CK(cudaStreamWaitEvent(s, st->ev_last, 0), "cudaStreamWaitEvent");
    return TRIDI_SUCCESS;
}

tridi_status launch_commit(tridi_cuda_state *st, const tridi_problem *p, int slot, cudaStream_t stream)
{
    const rows_geo g = geometry(p);
    const int64_t total = g.len * g.R * p->n2;
    const int threads = 256;
    const int64_t want = (total + threads - 1) / threads;
    const unsigned blocks = (unsigned)(want < 8192 ? want : 8192);
    unsigned long long *err = st->d_err + slot, *mirror = st->h_mirror_dev + slot,
                       *next = st->d_err + (slot + 1) % NSLOT;
    const bool small = total < (int64_t)UINT32_MAX; // 32-bit index arithmetic is several times cheaper
    const void *src = st->dbox.p;
    void *dst = p->arrays.x;
    if (p->arrays.x_type == TRIDI_FLOAT64) {
        if (small)
            tk_commit<double, uint32_t><<<blocks, threads, 0, stream>>>((const double *)src, (double *)dst,
                (uint32_t)g.len, (uint32_t)g.R, (uint32_t)total, g.origin, g.rs, g.s2, err, mirror, next);
        else
            tk_commit<double, int64_t><<<blocks, threads, 0, stream>>>((const double *)src, (double *)dst, g.len,
                g.R, total, g.origin, g.rs, g.s2, err, mirror, next);
    } else {
        if (small)
            tk_commit<float, uint32_t><<<blocks, threads, 0, stream>>>((const float *)src, (float *)dst,
                (uint32_t)g.len, (uint32_t)g.R, (uint32_t)total, g.origin, g.rs, g.s2, err, mirror, next);
        else
            tk_commit<float, int64_t><<<blocks, threads, 0, stream>>>((const float *)src, (float *)dst, g.len, g.R,
                total, g.origin, g.rs, g.s2, err, mirror, next);
    }
    CK(cudaGetLastError(), "launching the commit kernel");
    return TRIDI_SUCCESS;
}

} // namespace

extern "C" {

int tridi_cuda_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return n;
}

tridi_status tridi_cuda_create(int device, const tridi_config *config, tridi_cuda_state **out)
{
    *out = nullptr;
    cudaError_t e = cudaSetDevice(device);
    if (e != cudaSuccess)
        return cuda_fail("cudaSetDevice", e);
    tridi_cuda_state *st = new (std::nothrow) tridi_cuda_state;
    if (!st)
        return tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "tridi_create: could not allocate the CUDA state");
    st->device = device;
    st->allow_f32 = config ? config->allow_f32_transfer : 0;
    tridi_status s = create_state(st);
    if (s) {
        free_state(st);
        return s;
    }
    *out = st;
    return TRIDI_SUCCESS;
}

void tridi_cuda_destroy(tridi_cuda_state *st)
{
    if (!st)
        return;
    cudaSetDevice(st->device);
    if (st->have_last)
        cudaEventSynchronize(st->ev_last);
    for (int r = 0; r < 4; ++r)
        cudaStreamSynchronize(st->up[r]);
    cudaStreamSynchronize(st->compute);
    cudaStreamSynchronize(st->down);
    free_state(st);
}

tridi_status tridi_cuda_upload_async(tridi_cuda_state *st, const tridi_problem *p, tridi_array_role role,
                                     const void *host, tridi_dtype type)
{
    CK(cudaSetDevice(st->device), "cudaSetDevice");
    const int r = (int)role;
    const tridi_dtype xt = st->allow_f32 && type == TRIDI_FLOAT64 ? TRIDI_FLOAT32 : type;
    const size_t cells = (size_t)(p->n * p->nlines), bytes = cells * tridi_dtype_size(xt);
    st->uploaded[r].valid = false;
    // The staging buffer may still feed an earlier copy, and the device buffer an earlier solve.
    CK(cudaStreamSynchronize(st->up[r]), "waiting for the previous upload");
    CK(cudaStreamSynchronize(st->compute), "waiting for the previous solve");
    tridi_status s = ensure(st->din[r], bytes, "a device input box");
    if (!s)
        s = ensure_pinned(st->hin[r], bytes);
    if (s)
        return s;
    const rows_geo g = geometry(p);
    // Packed here with all threads: measured on the H100 host, packing on CUDA's host-callback thread
    // (one thread) left the last array's packing exposed and was slower than packing now.
    pack_rows(host, type, st->hin[r].p, xt, g, 0, g.R * p->n2);
    CK(cudaMemcpyAsync(st->din[r].p, st->hin[r].p, bytes, cudaMemcpyHostToDevice, st->up[r]), "cudaMemcpyAsync (upload)");
    CK(cudaEventRecord(st->ev_up[r], st->up[r]), "cudaEventRecord");
    upload_key &k = st->uploaded[r];
    k.grid = p->grid;
    k.axis = (int)p->axis;
    for (int a = 0; a < 3; ++a) {
        k.lo[a] = p->lo[a];
        k.hi[a] = p->hi[a];
    }
    k.host = host;
    k.type = type;
    k.dptr = st->din[r].p;
    k.valid = true;
    return TRIDI_SUCCESS;
}

tridi_status tridi_cuda_solve_host(tridi_cuda_state *st, const tridi_problem *p)
{
    static const char *f = "tridi_solve";
    CK(cudaSetDevice(st->device), "cudaSetDevice");
    const bool f32 = st->allow_f32 && (p->combo != TRIDI_COMBO_F32);
    const kernel_types kt = types_of(p, f32);
    const void *user_in[4] = {p->arrays.lower, p->arrays.diag, p->arrays.upper, p->arrays.rhs};
    const tridi_dtype user_t[4] = {p->arrays.lower_type, p->arrays.diag_type, p->arrays.upper_type, p->arrays.rhs_type};
    const tridi_dtype xfer_t[4] = {kt.l, kt.d, kt.l, kt.l};
    const size_t cells = (size_t)(p->n * p->nlines), xs = tridi_dtype_size(p->arrays.x_type);
    const rows_geo g = geometry(p);
    const bool contiguous = p->axis == TRIDI_AXIS_X;
    const bool scratch = tk_needs_scratch(p->n);

    bool have[4];
    for (int r = 0; r < 4; ++r) {
        const upload_key &k = st->uploaded[r];
        have[r] = same_box(k, p) && k.host == user_in[r] && k.type == user_t[r] && k.dptr == st->din[r].p &&
                  st->din[r].bytes >= cells * tridi_dtype_size(xfer_t[r]);
    }
    tridi_status s = TRIDI_SUCCESS;
    // Settle earlier device-mode work first: its failures belong to tridi_synchronize, and it shares scratch.
    if (st->have_last)
        CK(cudaEventSynchronize(st->ev_last), "waiting for earlier work");
    for (int r = 0; r < 4 && !s; ++r) {
        if (!have[r]) {
            CK(cudaStreamSynchronize(st->up[r]), "waiting for the previous upload");
            s = ensure(st->din[r], cells * tridi_dtype_size(xfer_t[r]), "a device input box");
            if (!s)
                s = ensure_pinned(st->hin[r], cells * tridi_dtype_size(xfer_t[r]));
        }
    }
    if (!s)
        s = ensure(st->dout, cells * xs, "the device answer box");
    if (!s)
        s = ensure_pinned(st->hout, cells * xs);
    if (!s && scratch)
        s = ensure(st->scratch, cells * 2 * sizeof(double), "the W/G scratch of long lines");
    if (s) {
        for (int r = 0; r < 4; ++r)
            st->uploaded[r].valid = false;
        return s;
    }

    // Slabs along the outer line axis: each a contiguous run of rows of every compact buffer.
    size_t box_bytes = cells * xs;
    for (int r = 0; r < 4; ++r)
        box_bytes += cells * tridi_dtype_size(xfer_t[r]);
    int64_t S = (int64_t)(box_bytes / SLAB_BYTES);
    S = S < 1 ? 1 : S > MAX_SLABS ? MAX_SLABS : S;
    S = S > p->n2 ? p->n2 : S;

    unsigned long long *err = st->d_err + HOST_SLOT;
    CK(cudaMemsetAsync(err, 0xff, sizeof *err, st->compute), "cudaMemsetAsync");
    tk_args a{};
    a.D = st->din[0].p;
    a.E = st->din[1].p;
    a.F = st->din[2].p;
    a.R = st->din[3].p;
    a.X = st->dout.p;
    a.in = a.out = compact_view(p);
    a.n = p->n;
    a.n1 = p->n1;
    a.scratch = scratch ? (double *)st->scratch.p : nullptr;
    a.err = err;
    for (int r = 0; r < 4; ++r)
        if (have[r])
            CK(cudaStreamWaitEvent(st->compute, st->ev_up[r], 0), "cudaStreamWaitEvent");
    for (int64_t sl = 0; sl < S; ++sl) {
        const int64_t b2 = p->n2 * sl / S, e2 = p->n2 * (sl + 1) / S;
        const int64_t r0 = b2 * g.R, r1 = e2 * g.R;
        for (int r = 0; r < 4; ++r) {
            if (have[r])
                continue;
            const size_t es = tridi_dtype_size(xfer_t[r]);
            char *h = (char *)st->hin[r].p + r0 * g.len * es;
            char *d = (char *)st->din[r].p + r0 * g.len * es;
            pack_rows(user_in[r], user_t[r], st->hin[r].p, xfer_t[r], g, r0, r1);
            CK(cudaMemcpyAsync(d, h, (r1 - r0) * g.len * es, cudaMemcpyHostToDevice, st->up[r]), "cudaMemcpyAsync (H2D)");
            CK(cudaEventRecord(st->ev_in[r][sl], st->up[r]), "cudaEventRecord");
            CK(cudaStreamWaitEvent(st->compute, st->ev_in[r][sl], 0), "cudaStreamWaitEvent");
        }
        a.l_begin = b2 * p->n1;
        a.l_count = (e2 - b2) * p->n1;
        if (scratch)
            a.scratch = (double *)st->scratch.p; // lines index scratch from l_begin's slab: one slab at a time
        s = launch_solve(kt, a, contiguous, st->compute);
        if (s)
            break;
        CK(cudaEventRecord(st->ev_solved[sl], st->compute), "cudaEventRecord");
        CK(cudaStreamWaitEvent(st->down, st->ev_solved[sl], 0), "cudaStreamWaitEvent");
        CK(cudaMemcpyAsync((char *)st->hout.p + r0 * g.len * xs, (char *)st->dout.p + r0 * g.len * xs,
                           (r1 - r0) * g.len * xs, cudaMemcpyDeviceToHost, st->down),
           "cudaMemcpyAsync (D2H)");
    }
    for (int r = 0; r < 4; ++r)
        st->uploaded[r].valid = false; // an upload serves one solve: the model changes its arrays after it
    unsigned long long verdict = 0;
    cudaError_t e = cudaMemcpyAsync(&verdict, err, sizeof verdict, cudaMemcpyDeviceToHost, st->compute);
    cudaError_t e1 = cudaStreamSynchronize(st->compute), e2 = cudaStreamSynchronize(st->down);
    for (int r = 0; r < 4; ++r)
        cudaStreamSynchronize(st->up[r]);
    if (s)
        return s;
    if (e != cudaSuccess || e1 != cudaSuccess || e2 != cudaSuccess)
        return cuda_fail("host-array solve", e != cudaSuccess ? e : e1 != cudaSuccess ? e1 : e2);
    if (verdict != ULLONG_MAX)
        return locate_on_host(f, p, (int64_t)verdict, f32);
    unpack_rows(st->hout.p, p->arrays.x, xs, g, g.R * p->n2);
    return TRIDI_SUCCESS;
}

tridi_status tridi_cuda_solve_device(tridi_cuda_state *st, const tridi_problem *p, void *stream)
{
    CK(cudaSetDevice(st->device), "cudaSetDevice");
    cudaStream_t cs = stream ? (cudaStream_t)stream : st->compute;
    const int slot = st->next_slot;
    tridi_status s = retire_slot(st, slot); // the ring is full: the oldest solve must be checked first
    if (s)
        return s;
    const bool contiguous = p->axis == TRIDI_AXIS_X && p->stride[0] == 1;
    const bool scratch = tk_needs_scratch(p->n);
    const kernel_types kt = types_of(p, false);
    const size_t cells = (size_t)(p->n * p->nlines), xs = tridi_dtype_size(p->arrays.x_type);
    const tk_view user = {p->origin, p->stride[p->a1], p->stride[p->a2], p->stride[p->axis]};
    tk_args a{};
    a.D = p->arrays.lower;
    a.E = p->arrays.diag;
    a.F = p->arrays.upper;
    a.R = p->arrays.rhs;
    a.in = user;
    a.n = p->n;
    a.n1 = p->n1;
    a.l_begin = 0;
    a.l_count = p->nlines;
    a.err = st->d_err + slot;
    a.out = user; // x's view in the one-wave variant; the box's is alike along x (unit stride), which the plan reads
    // When every line fits on the GPU at once the solve guards x itself (grid barrier before writing);
    // otherwise it solves into the context's box and a commit kernel copies the box into x.
    tk_plan plan;
    s = plan_solve(kt, a, contiguous, true, &plan);
    if (s)
        return s;
    const size_t need_box = plan.coop ? 0 : cells * xs, need_scratch = scratch ? cells * 2 * sizeof(double) : 0;
    if (st->dbox.bytes < need_box || st->scratch.bytes < need_scratch) {
        // Growing frees buffers that queued solves may still use.
        if (st->have_last)
            CK(cudaEventSynchronize(st->ev_last), "waiting for earlier work");
        if (need_box)
            s = ensure(st->dbox, need_box, "the device answer box");
        if (!s && need_scratch)
            s = ensure(st->scratch, need_scratch, "the W/G scratch of long lines");
        if (s)
            return s;
    }
    s = after_last(st, cs);
    if (s)
        return s;
    a.scratch = scratch ? (double *)st->scratch.p : nullptr;
    if (plan.coop) {
        a.X = p->arrays.x;
        a.out = user;
        a.mirror = st->h_mirror_dev + slot;
        a.next_err = st->d_err + (slot + 1) % NSLOT;
        s = run_solve(kt, a, plan, cs);
    } else {
        a.X = st->dbox.p;
        a.out = compact_view(p);
        s = run_solve(kt, a, plan, cs);
        if (!s)
            s = launch_commit(st, p, slot, cs);
    }
    if (s)
        return s;
    CK(cudaEventRecord(st->ev_slot[slot], cs), "cudaEventRecord");
    CK(cudaEventRecord(st->ev_last, cs), "cudaEventRecord");
    st->have_last = true;
    st->pending[slot].active = true;
    st->pending[slot].p = *p;
    st->next_slot = (slot + 1) % NSLOT;
    return TRIDI_SUCCESS;
}

tridi_status tridi_cuda_alloc(tridi_cuda_state *st, size_t bytes, void **ptr)
{
    CK(cudaSetDevice(st->device), "cudaSetDevice");
    tridi_status s = device_alloc(bytes, ptr, "tridi_device_alloc");
    if (s)
        return s;
    try {
        st->user_allocs[*ptr] = bytes;
    } catch (const std::bad_alloc &) {
        device_release(*ptr, bytes);
        *ptr = nullptr;
        return tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "tridi_device_alloc: out of host memory");
    }
    return TRIDI_SUCCESS;
}

tridi_status tridi_cuda_free(tridi_cuda_state *st, void *ptr)
{
    auto it = st->user_allocs.find(ptr);
    if (it == st->user_allocs.end())
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE,
                          "tridi_device_free: %p was not allocated by tridi_device_alloc on this context", ptr);
    CK(cudaSetDevice(st->device), "cudaSetDevice");
    // Queued solves may still read it.
    if (st->have_last)
        CK(cudaEventSynchronize(st->ev_last), "waiting for earlier work");
    device_release(it->first, it->second);
    st->user_allocs.erase(it);
    return TRIDI_SUCCESS;
}

tridi_status tridi_cuda_copy(tridi_cuda_state *st, void *dst, const void *src, size_t bytes, int to_device)
{
    CK(cudaSetDevice(st->device), "cudaSetDevice");
    // Copies see the results of solves queued before them, on any stream the caller gave.
    if (st->have_last)
        CK(cudaEventSynchronize(st->ev_last), "waiting for earlier work");
    CK(cudaMemcpy(dst, src, bytes, to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost),
       to_device ? "tridi_copy_to_device" : "tridi_copy_to_host");
    return TRIDI_SUCCESS;
}

tridi_status tridi_cuda_synchronize(tridi_cuda_state *st)
{
    CK(cudaSetDevice(st->device), "cudaSetDevice");
    tridi_status first = TRIDI_SUCCESS;
    // Oldest first, so the failure reported is that of the earliest failing solve.
    for (int k = 0; k < NSLOT; ++k) {
        const int slot = (st->next_slot + k) % NSLOT;
        tridi_status s = retire_slot(st, slot);
        if (s && !first) {
            first = s;
            // keep the first message: retire the rest without letting them overwrite it
            for (int j = k + 1; j < NSLOT; ++j) {
                const int sj = (st->next_slot + j) % NSLOT;
                if (st->pending[sj].active) {
                    st->pending[sj].active = false;
                    cudaEventSynchronize(st->ev_slot[sj]);
                }
            }
            break;
        }
    }
    cudaError_t e = cudaStreamSynchronize(st->compute);
    if (!first && e != cudaSuccess)
        return cuda_fail("tridi_synchronize", e);
    return first;
}

} // extern "C"
