// CUDA backend, host-array mode: tridi_solve on the caller's host arrays.
// Each input's box goes to a device buffer laid out like the caller's array (plan_box): by DMA from a
// registered array, else packed into pinned staging (cuda/host_box.cu). The solve is pipelined in slabs
// along the outer line axis, each slab solved on its own stream once its inputs are there (decision 039:
// registered copies first; one slab when the call sends one input). x never keeps a partial answer: the
// guard's HOST_BOX strategy (x_path; docs/architecture.md, decision 053) writes answers slab by slab only
// where no earlier line failed or the old box was saved, else after the verdict. Failing lines are
// diagnosed by cuda/diagnose.cu.
#include "cpu_pool.h"
#include "cuda_internal.h"
#include "diagnose.h"
#include "host_box.h"
#include "host_pipeline.h"
#include "planner.h"

#include <omp.h>

#include <algorithm>
#include <climits>
#include <new>

namespace tridi_cuda {

// Shared with cuda/host_upload.cu (host_pipeline.h).
cudaError_t send_slab(tridi_cuda_state *st, const box_plan &b, int r, const void *host, tridi_dtype xfer, bool direct,
                      int64_t b2, int64_t e2, int sl, const char **what)
{
    region hr, dr;
    input_slab(b, b2, e2, hr, dr);
    const size_t es = tridi_dtype_size(xfer);
    cudaError_t e = direct ? dma_region(st->din[r].p, widened_layout(b), dr.pos, host, host_layout(b), hr.pos, dr.cnt,
                                        es, cudaMemcpyHostToDevice, st->up[r])
                           : dma_region(st->din[r].p, widened_layout(b), dr.pos, st->hin[r].p, widened_layout(b),
                                        dr.pos, dr.cnt, es, cudaMemcpyHostToDevice, st->up[r]);
    *what = "copying an input slab to the device";
    if (e == cudaSuccess) {
        e = cudaEventRecord(st->ev_in[r][sl], st->up[r]);
        *what = "cudaEventRecord";
    }
    return e;
}

size_t pack_bytes(const box_plan &b, tridi_dtype st, tridi_dtype dt)
{
    return b.bcells * std::max(tridi_dtype_size(st), tridi_dtype_size(dt));
}

slab_rows plan_slab_rows(const box_plan &b, int S)
{
    slab_rows sr;
    for (int sl = 0; sl < S; ++sl) {
        int64_t b2, e2;
        slab_range(b, sl, S, &b2, &e2);
        box_in_widened(b, b2, e2, sr.host[sl], sr.wide[sl]);
    }
    return sr;
}

namespace {

// The eager path (below) pays a host copy of x's old box, hidden only behind transfers this very call
// makes: it is taken when the call uploads at least EAGER_UPLOAD_RATIO times x's box bytes itself.
// TRIDI_HOST_X_PATH=eager / verdict (tridi_tuning::host_x) forces one way (the tests take both).
constexpr size_t EAGER_UPLOAD_RATIO = 4;

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

// The threads of the caller's host copies (NULL: its OpenMP team): made at the first copy, from the calling
// thread, so that they sit on the places after the caller's.
tridi_cpu_pool *copy_pool(tridi_cuda_state *st)
{
    if (st->openmp_copies || st->copy_pool_failed)
        return nullptr;
    if (!st->copy_pool) {
        const int workers = std::min(8, omp_get_max_threads()) - 1;
        st->copy_pool = workers > 0 ? tridi_cpu_pool_create(workers, st->pack_spin_ns) : nullptr;
        st->copy_pool_failed = !st->copy_pool;
    }
    return st->copy_pool;
}

// A slab's send by the solve itself: its failure as a status.
tridi_status send_slab_now(tridi_cuda_state *st, const box_plan &b, int r, const void *host, tridi_dtype xfer,
                           bool direct, int64_t b2, int64_t e2, int sl)
{
    const char *what = nullptr;
    const cudaError_t e = send_slab(st, b, r, host, xfer, direct, b2, e2, sl, &what);
    return e == cudaSuccess ? TRIDI_SUCCESS : cuda_fail(what, e);
}

// How the answers of a host-array solve reach x without ever leaving a partial answer there.
enum class x_path {
    staged,  // x not registered: slabs go to pinned staging, copied into x on the host once all succeeded
    eager,   // x registered, the call itself uploads most of the inputs: each slab goes by DMA into x as soon
             // as it is solved, after its old values were saved in st->undo on the host (put back if any
             // line failed); the host copy runs while the GPU moves the inputs, and the answers' transfer
             // overlaps theirs
    verdict,  // x registered, the inputs already on the device or queued by tridi_upload_async: little would
              // hide that host copy, so the whole box goes into x by one DMA once the verdict says every line
              // succeeded (the solve still starts on each slab as soon as its inputs are there)
    slabwise  // as verdict, under per-line isolation and x not the rhs: slab s goes into x by DMA as soon as
              // it is solved and no line of it or of an earlier slab has failed (docs/decisions/037). A failing
              // line's slab never reaches x, so nothing is saved; the lines are then answered on the host
              // (lines_on_host), as on the other paths
};

// Queues answers of the box (xb in the device box, xh in x) by DMA straight into a registered x on the
// answers' stream.
cudaError_t answers_into_x(tridi_cuda_state *st, const tridi_problem *p, const box_plan &b, const region &xh,
                           const region &xb)
{
    return dma_region(p->arrays.x, host_layout(b), xh.pos, st->dout.p, box_layout(b), xb.pos, xb.cnt,
                      tridi_dtype_size(p->arrays.x_type), cudaMemcpyDeviceToHost, st->down);
}

// x is the rhs array itself (an in-place solve): answers written into x change the inputs the host
// re-solves from when a line fails (lines_on_host).
bool in_place(const tridi_problem *p) { return p->arrays.x == p->arrays.rhs; }

// Host-array solve once the buffers are there: queues every slab (inputs up, solve, answers down as xp
// says) and the read of the verdict into st->h_verdict. Slab s is solved on its own stream as soon as its
// four inputs are there, so slabs overlap each other as well as the transfers. *x_written: some answers
// may have reached x (eager).
// Whether the host-array solve of box b keeps W/G of long lines in the global scratch: the plan of the whole
// box decides (a slab's plan, of fewer lines, never needs the scratch where the whole box's does not).
tridi_status host_needs_scratch(const tridi_cuda_state *st, const tridi_problem *p, const box_plan &b,
                                const kernel_types &kt, bool *scratch)
{
    tk_args a{};
    a.in = b.in;
    a.out = b.out;
    a.n = p->n;
    a.n1 = p->n1;
    a.l_count = p->n1 * b.n[b.a2];
    tk_plan plan;
    tridi_status s = plan_solve(st->kernel, kt, a, p->axis == TRIDI_AXIS_X, false, &plan);
    *scratch = !s && plan_needs_scratch(plan, p->n);
    return s;
}

tridi_status run_host_solve(tridi_cuda_state *st, const tridi_problem *p, const box_plan &b, const kernel_types &kt,
                            const bool have[4], const bool direct[4], x_path xp, int S, bool scratch, bool *x_written)
{
    const void *user_in[4] = {p->arrays.lower, p->arrays.diag, p->arrays.upper, p->arrays.rhs};
    const tridi_dtype user_t[4] = {p->arrays.lower_type, p->arrays.diag_type, p->arrays.upper_type, p->arrays.rhs_type};
    const tridi_dtype xfer_t[4] = {kt.l, kt.d, kt.l, kt.l};
    const size_t xs = tridi_dtype_size(p->arrays.x_type);
    unsigned long long *err = err_word(st, HOST_SLOT);
    // Inputs this call sends straight from registered arrays: every slab's copy is queued first, so that
    // the link works from the start of the call while the rest is queued (docs/decisions/039).
    for (int sl = 0; sl < S; ++sl)
        for (int r = 0; r < 4; ++r)
            if (!have[r] && direct[r]) {
                int64_t b2, e2;
                slab_range(b, sl, S, &b2, &e2);
                tridi_status s = send_slab_now(st, b, r, user_in[r], xfer_t[r], true, b2, e2, sl);
                if (s)
                    return s;
            }
    const bool armed = st->host_err_armed;
    st->host_err_armed = false; // until this call's reset is behind its final synchronisation
    if (!armed) {
        CK(cudaMemsetAsync(err, 0xff, sizeof *err, st->compute), "cudaMemsetAsync");
        CK(cudaEventRecord(st->ev_armed, st->compute), "cudaEventRecord");
    }
    // An input uploaded ahead whose last slab has arrived needs no wait per slab (decision 039). Its
    // last slab's event is asked only once every slab's copy is queued: an event not yet recorded reads
    // as complete.
    bool arrived[4] = {};
    for (int r = 0; r < 4; ++r) {
        const int last = st->uploaded[r].slabs - 1;
        if (!have[r] || S == 1 || last < 1)
            continue;
        tridi_status s = upload_wait(st, r, st->uploaded[r].seq, last);
        if (s)
            return s;
        const cudaError_t q = cudaEventQuery(st->ev_in[r][last]);
        if (q != cudaErrorNotReady)
            CK(q, "cudaEventQuery");
        arrived[r] = q == cudaSuccess;
    }
    tk_args a{};
    a.D = st->din[0].p;
    a.E = st->din[1].p;
    a.F = st->din[2].p;
    a.R = st->din[3].p;
    a.X = st->dout.p;
    a.in = b.in;
    a.out = b.out;
    a.n = p->n;
    a.n1 = p->n1;
    a.err = err;
    // Inputs that are neither on the device already nor registered are packed into staging, slab by slab,
    // each slab queued (its DMAs, its solve, its answers) as soon as it is packed.
    const slab_rows sr = plan_slab_rows(b, S);
    int packed[4], npack = 0;
    size_t bytes = 0;
    for (int r = 0; r < 4; ++r)
        if (!have[r] && !direct[r]) {
            packed[npack++] = r;
            bytes += pack_bytes(b, user_t[r], xfer_t[r]);
        }
    auto pack = [&](int sl, int64_t i) {
        const int64_t per = sr.rows(sl);
        const int r = packed[i / per];
        sr.pack(b, sl, i % per, user_in[r], user_t[r], st->hin[r].p, xfer_t[r]);
    };
    auto queue = [&](int sl) -> tridi_status {
        int64_t b2, e2;
        slab_range(b, sl, S, &b2, &e2);
        cudaStream_t cs = st->slab[sl];
        if (!armed)
            CK(cudaStreamWaitEvent(cs, st->ev_armed, 0), "cudaStreamWaitEvent");
        for (int r = 0; r < 4; ++r) {
            if (arrived[r])
                continue;
            // Uploaded ahead as one copy, or in more slabs than this solve's one: in stream order, their last
            // slab's event covers them all.
            const int up_slabs = have[r] ? st->uploaded[r].slabs : S;
            const int ev = up_slabs == 1 ? 0 : S == 1 ? up_slabs - 1 : sl;
            tridi_status s = have[r]     ? upload_wait(st, r, st->uploaded[r].seq, ev)
                             : direct[r] ? TRIDI_SUCCESS // sent above
                                         : send_slab_now(st, b, r, user_in[r], xfer_t[r], false, b2, e2, sl);
            if (s)
                return s;
            CK(cudaStreamWaitEvent(cs, st->ev_in[r][ev], 0), "cudaStreamWaitEvent");
        }
        a.l_begin = b2 * p->n1;
        a.l_count = (e2 - b2) * p->n1;
        // Slabs run concurrently: each its own part of the W/G scratch of long lines.
        a.scratch = scratch ? (double *)st->scratch.p + 2 * p->n * a.l_begin : nullptr;
        tridi_status s = launch_solve(st->kernel, kt, a, p->axis == TRIDI_AXIS_X, cs);
        if (s)
            return s;
        if (xp == x_path::slabwise) // failures of this slab and, checked before, of the earlier ones
            CK(cudaMemcpyAsync(&st->h_verdict[1 + sl], err, sizeof *err, cudaMemcpyDeviceToHost, cs),
               "reading a slab's verdict");
        CK(cudaEventRecord(st->ev_solved[sl], cs), "cudaEventRecord");
        CK(cudaStreamWaitEvent(st->compute, st->ev_solved[sl], 0), "cudaStreamWaitEvent");
        if (xp == x_path::staged) {
            region xh, xb;
            box_slab(b, b2, e2, xh, xb);
            CK(cudaStreamWaitEvent(st->down, st->ev_solved[sl], 0), "cudaStreamWaitEvent");
            CK(dma_region(st->hout.p, box_layout(b), xb.pos, st->dout.p, box_layout(b), xb.pos, xb.cnt, xs,
                          cudaMemcpyDeviceToHost, st->down),
               "copying an answer slab to the host");
        }
        return TRIDI_SUCCESS;
    };
    tridi_status s = pack_pipeline(copy_pool(st), npack ? copy_threads(bytes) : 1, S,
                                   [&](int sl) { return npack * sr.rows(sl); }, pack, queue);
    if (s)
        return s;
    if (xp == x_path::eager) { // every upload is queued: save x's old box slab by slab, each slab's answers after
        region xh[MAX_SLABS], xb[MAX_SLABS];
        for (int sl = 0; sl < S; ++sl) {
            int64_t b2, e2;
            slab_range(b, sl, S, &b2, &e2);
            box_slab(b, b2, e2, xh[sl], xb[sl]);
        }
        s = pack_pipeline(
            copy_pool(st), copy_threads(b.bcells * xs), S, [&](int sl) { return xb[sl].cnt[1] * xb[sl].cnt[2]; },
            [&](int sl, int64_t i) {
                copy_row(p->arrays.x, p->arrays.x_type, host_layout(b), xh[sl].pos, st->undo.data(), p->arrays.x_type,
                         box_layout(b), xb[sl].pos, xb[sl].cnt, i);
            },
            [&](int sl) -> tridi_status {
                CK(cudaStreamWaitEvent(st->down, st->ev_solved[sl], 0), "cudaStreamWaitEvent");
                *x_written = true;
                CK(answers_into_x(st, p, b, xh[sl], xb[sl]), "copying an answer slab into x");
                return TRIDI_SUCCESS;
            });
        if (s)
            return s;
    }
    CK(cudaMemcpyAsync(st->h_verdict, err, sizeof *err, cudaMemcpyDeviceToHost, st->compute), "reading the verdict");
    // Reset behind the read for the next call; armed once the caller has synchronised the compute stream.
    CK(cudaMemsetAsync(err, 0xff, sizeof *err, st->compute), "cudaMemsetAsync");
    if (xp == x_path::slabwise) { // slabs in order: the read after slab s has every failure of slabs <= s
        for (int sl = 0; sl < S; ++sl) {
            int64_t b2, e2;
            slab_range(b, sl, S, &b2, &e2);
            CK(cudaEventSynchronize(st->ev_solved[sl]), "waiting for a slab's verdict");
            if (st->h_verdict[1 + sl] < (unsigned long long)(e2 * p->n1))
                break; // a line of this slab failed: it and the later slabs wait for the verdict
            region xh, xb;
            box_slab(b, b2, e2, xh, xb);
            *x_written = true;
            CK(answers_into_x(st, p, b, xh, xb), "copying an answer slab into x");
        }
    }
    return TRIDI_SUCCESS;
}

} // namespace

extern "C" {

tridi_status tridi_cuda_solve_host(tridi_cuda_state *st, const tridi_problem *p, const int registered[5])
{
    const char *f = p->func;
    CK(cudaSetDevice(st->device), "cudaSetDevice");
    const bool f32 = st->allow_f32 && (p->combo != TRIDI_COMBO_F32);
    const kernel_types kt = types_of(p, f32);
    const void *user_in[4] = {p->arrays.lower, p->arrays.diag, p->arrays.upper, p->arrays.rhs};
    const tridi_dtype user_t[4] = {p->arrays.lower_type, p->arrays.diag_type, p->arrays.upper_type, p->arrays.rhs_type};
    const tridi_dtype xfer_t[4] = {kt.l, kt.d, kt.l, kt.l};
    const size_t xs = tridi_dtype_size(p->arrays.x_type);
    const box_plan b = plan_box(p);
    bool have[4], direct[4];
    for (int r = 0; r < 4; ++r) {
        const upload_key &k = st->uploaded[r];
        have[r] = same_box(k, p) && k.host == user_in[r] && k.type == user_t[r] && k.xfer == xfer_t[r] &&
                  k.dptr == st->din[r].p && st->din[r].bytes >= b.wcells * tridi_dtype_size(xfer_t[r]) &&
                  (k.slabs == slab_count(b, st->slab_cells) || k.slabs == 1);
        direct[r] = registered[r] && user_t[r] == xfer_t[r];
    }
    // Bytes this call uploads itself. Uploads queued ahead by tridi_upload_async and still running do not
    // count: the host copy of the eager path would outlast the last of them (the assembly-overlap case,
    // docs/decisions/037).
    size_t up_bytes = 0;
    int sends = 0; // inputs the call sends itself
    for (int r = 0; r < 4; ++r)
        if (!have[r]) {
            up_bytes += b.wcells * tridi_dtype_size(xfer_t[r]);
            ++sends;
        }
    const bool eager = st->x_choice == TRIDI_HOST_X_RULE ? up_bytes >= EAGER_UPLOAD_RATIO * b.bcells * xs
                                                            : st->x_choice == TRIDI_HOST_X_EAGER;
    const bool slabwise = p->on_error == TRIDI_ON_ERROR_LINES && !in_place(p) && st->x_choice != TRIDI_HOST_X_VERDICT;
    const x_path xp = !registered[4] ? x_path::staged
                      : eager        ? x_path::eager
                      : slabwise     ? x_path::slabwise
                                     : x_path::verdict;
    // Answers after the verdict, and at most one input sent by the call (MOHID's adapter: D, E and F
    // uploaded ahead): one slab. More would overlap that one copy with kernels of a few microseconds, at
    // four runtime calls a slab, each slow after a model's own loops (docs/decisions/039).
    const int S = xp == x_path::verdict && sends <= 1 ? 1 : slab_count(b, st->slab_cells);

    // Settle earlier device-mode work first: its failures belong to tridi_synchronize, and it shares scratch.
    if (st->have_last)
        CK(cudaEventSynchronize(st->ev_last), "waiting for earlier work");
    tridi_status s = TRIDI_SUCCESS;
    for (int r = 0; r < 4 && !s; ++r) {
        if (have[r])
            continue;
        const size_t bytes = b.wcells * tridi_dtype_size(xfer_t[r]);
        // An upload of this role for another box may still be running into these buffers (and reading
        // its array: uploads_settle drops it if it has not started). This call's copies from a registered
        // array follow it on the role's stream and the solve waits for them, so only a device buffer about
        // to be replaced, or a staging about to be packed again, waits for it here (decision 039).
        upload_settle(st, r);
        if (!direct[r] || st->din[r].bytes < bytes || !st->din[r].p)
            CK(cudaStreamSynchronize(st->up[r]), "waiting for the previous upload");
        s = ensure(st, st->din[r], bytes, "a device input box");
        if (!s && !direct[r])
            s = ensure_pinned(st->hin[r], bytes);
    }
    if (!s)
        s = ensure(st, st->dout, b.bcells * xs, "the device answer box");
    if (!s && xp == x_path::staged)
        s = ensure_pinned(st->hout, b.bcells * xs);
    bool scratch = false;
    if (!s)
        s = host_needs_scratch(st, p, b, kt, &scratch);
    if (!s && scratch)
        s = ensure(st, st->scratch, b.bcells * 2 * sizeof(double), "the W/G scratch of long lines");
    if (!s && xp == x_path::eager) {
        try {
            if (st->undo.size() < b.bcells * xs)
                st->undo.resize(b.bcells * xs);
        } catch (const std::bad_alloc &) {
            s = tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: out of host memory for the %zu-byte copy of x's box", f,
                           b.bcells * xs);
        }
    }
    if (s) {
        uploads_settle(st); // nothing reads the arrays once the call returns
        for (int r = 0; r < 4; ++r)
            st->uploaded[r].valid = false;
        return s;
    }

    bool x_written = false;
    s = run_host_solve(st, p, b, kt, have, direct, xp, S, scratch, &x_written);
    for (int r = 0; r < 4; ++r)
        st->uploaded[r].valid = false; // an upload serves one solve: the model changes its arrays after it
    // Every upload is awaited by a slab and every slab by the compute stream: waiting for it and for the
    // answers' stream covers all, unless queueing stopped half way.
    cudaError_t e = cudaStreamSynchronize(st->compute), e2 = cudaStreamSynchronize(st->down);
    st->host_err_armed = !s && e == cudaSuccess; // the reset behind the verdict has run
    if (e == cudaSuccess)
        e = e2;
    if (s) {
        uploads_settle(st);
        for (int r = 0; r < 4 + MAX_SLABS; ++r)
            cudaStreamSynchronize(r < 4 ? st->up[r] : st->slab[r - 4]);
    }
    const unsigned long long verdict = s || e != cudaSuccess ? 0 : *st->h_verdict;
    // The eager path saved x's old box before writing; the slabwise path wrote only slabs whose lines all
    // succeeded, which keep their answers whatever follows.
    const bool saved = xp == x_path::eager && x_written;
    auto put_back = [&] { // nothing is in flight any more
        region xh, xb;
        box_slab(b, 0, b.n[b.a2], xh, xb);
        copy_rows(copy_pool(st), st->undo.data(), p->arrays.x_type, box_layout(b), xb.pos, p->arrays.x,
                  p->arrays.x_type, host_layout(b), xh.pos, xb.cnt);
    };
    if (!s && e == cudaSuccess && verdict != ULLONG_MAX && p->on_error == TRIDI_ON_ERROR_LINES) {
        if (saved && in_place(p)) { // the host re-solves every line from the rhs, which the eager slabs overwrote
            put_back();
            return lines_on_host(f, p, b, nullptr);
        }
        return lines_on_host(f, p, b, saved ? st->undo.data() : nullptr);
    }
    if (verdict != ULLONG_MAX && saved)
        put_back();
    if (s)
        return s;
    if (e != cudaSuccess)
        return cuda_fail("host-array solve", e);
    if (verdict != ULLONG_MAX)
        return locate_on_host(f, p, (int64_t)verdict, f32);
    region xh, xb;
    box_slab(b, 0, b.n[b.a2], xh, xb);
    if (xp == x_path::staged) {
        copy_rows(copy_pool(st), st->hout.p, p->arrays.x_type, box_layout(b), xb.pos, p->arrays.x, p->arrays.x_type,
                  host_layout(b), xh.pos, xb.cnt);
    } else if (xp == x_path::verdict) {
        // Only a failing DMA (a device fault) could stop this copy half way.
        CK(answers_into_x(st, p, b, xh, xb), "copying the answers into x");
        CK(cudaStreamSynchronize(st->down), "copying the answers into x");
    }
    return TRIDI_SUCCESS;
}

} // extern "C"

} // namespace tridi_cuda
