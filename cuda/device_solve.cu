// CUDA backend, device mode: tridi_solve_device and device plans on arrays in device memory, the two phases
// of ON_ERROR_CALL (a kept solve, then its commit or rollback: src/backend.h, docs/decisions/020), and the
// verdict slots read by tridi_synchronize / tridi_plan_status.
//
// Device mode solves into a compact box buffer owned by the context; a commit kernel copies it into the
// caller's x only if the solve's error slot is clear, so nothing synchronises and a failing solve leaves
// x as it was. Failures are collected by tridi_cuda_synchronize.
#include "cuda_internal.h"
#include "diagnose.h"
#include "kernels/commit.cuh"
#include "planner.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <new>

namespace {

// Every array of a device solve must be memory the context's device can address: a kernel reading host
// memory faults, and a fault is a sticky error that ends every later CUDA call of the process. Pointers
// once found good are remembered (per thread) so that repeated solves on the same arrays ask the driver
// nothing.
tridi_status check_device_arrays(int device, const tridi_problem *p)
{
    struct checked {
        const void *ptr;
        int device;
    };
    static thread_local checked good[16];
    static thread_local int next_good = 0;
    static const char *role[5] = {"lower", "diag", "upper", "rhs", "x"};
    const void *ptr[5] = {p->arrays.lower, p->arrays.diag, p->arrays.upper, p->arrays.rhs, p->arrays.x};
    for (int r = 0; r < 5; ++r) {
        bool known = false;
        for (const checked &c : good)
            known = known || (c.ptr == ptr[r] && c.device == device);
        if (known)
            continue;
        cudaPointerAttributes at;
        cudaError_t e = cudaPointerGetAttributes(&at, ptr[r]);
        if (e != cudaSuccess) {
            cudaGetLastError();
            char what[96];
            std::snprintf(what, sizeof what, "cudaPointerGetAttributes on arrays->%s", role[r]);
            return cuda_fail(what, e);
        }
        const bool ok = at.type == cudaMemoryTypeManaged || (at.type == cudaMemoryTypeDevice && at.device == device) ||
                        (at.type == cudaMemoryTypeHost && at.devicePointer == ptr[r]);
        if (!ok)
            return tridi_fail(TRIDI_ERROR_INVALID_VALUE,
                              "tridi_solve_device: arrays->%s = %p is %s, not memory that device %d can address "
                              "(allocate it with tridi_device_alloc or cudaMalloc on that device)",
                              role[r], ptr[r],
                              at.type == cudaMemoryTypeDevice ? "memory of another device"
                              : at.type == cudaMemoryTypeHost ? "pinned host memory not mapped for the device"
                                                              : "host memory",
                              device);
        good[next_good] = {ptr[r], device};
        next_good = (next_good + 1) % 16;
    }
    return TRIDI_SUCCESS;
}

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

// Checks device-mode solve `slot` (waiting for it); returns its failure, if any.
tridi_status retire_slot(tridi_cuda_state *st, int slot)
{
    pending_solve &ps = st->pending[slot];
    if (!ps.active)
        return TRIDI_SUCCESS;
    ps.active = false;
    CK(cudaEventSynchronize(st->ev_slot[slot]), "waiting for a device solve");
    const tk_verdict v = st->h_mirror[slot];
    if (v.first == ULLONG_MAX)
        return TRIDI_SUCCESS;
    char func[96];
    if (!ps.plan)
        std::snprintf(func, sizeof func, "tridi_solve_device");
    else if (ps.p.verdict == TRIDI_VERDICT_DEFERRED)
        std::snprintf(func, sizeof func, "tridi_plan_solve (device solve call %llu of the context, deferred)",
                      ps.call);
    else
        std::snprintf(func, sizeof func, "tridi_plan_solve");
    return locate_on_device(st, func, &ps.p, (int64_t)v.first, (int64_t)v.nfailed);
}

// Later work of the context shares its buffers with earlier work: work queued on stream s waits for the
// context's latest device solve. When both are on the context's own stream, stream order already sees to
// it, and the wait's host cost is a good part of a small grid's call. (A caller's stream always waits: a
// stream destroyed with work pending and a new one at the same address would look alike.)
tridi_status after_last(tridi_cuda_state *st, cudaStream_t s)
{
    if (st->have_last && !(s == st->compute && st->last_stream == st->compute))
        CK(cudaStreamWaitEvent(s, st->ev_last, 0), "cudaStreamWaitEvent");
    return TRIDI_SUCCESS;
}

// copy = false: only the verdict is handed on (to the host's mirror, and the next slot re-armed), as a
// kept solve needs before its answers may go into x (tridi_cuda_commit).
tridi_status launch_commit(tridi_cuda_state *st, const tridi_problem *p, const void *src, int slot,
                           cudaStream_t stream, bool copy = true)
{
    const rows_geo g = geometry(p);
    const int64_t rows = copy ? g.R * p->n2 : 0, total = g.len * rows;
    // Threads across a row: enough for its cells at `per` each (a warp at least), at most 256; the
    // rest of the block's 256 threads take further rows.
    const int64_t per = TK_COMMIT_BYTES / (int64_t)tridi_dtype_size(p->arrays.x_type); // cells per thread
    int tx = 32;
    while (tx < 256 && tx * per < g.len)
        tx *= 2;
    const int ty = 256 / tx;
    const int64_t bx = copy ? std::min<int64_t>((g.len + tx * per - 1) / (tx * per), 65535) : 1;
    const int64_t by = std::max<int64_t>(1, std::min<int64_t>((rows + ty - 1) / ty, std::max<int64_t>(1, 16384 / bx)));
    const dim3 blocks((unsigned)bx, (unsigned)by), threads((unsigned)tx, (unsigned)ty);
    unsigned long long *err = err_word(st, slot), *mirror = &st->h_mirror_dev[slot].first,
                       *next = err_word(st, (slot + 1) % NSLOT);
    const bool small = total < (int64_t)INT32_MAX / 2; // 32-bit indices are cheaper; margin for q0 + k * tx
    void *dst = p->arrays.x;
    CK(injected_launch(stream), "launching the commit kernel");
    if (p->arrays.x_type == TRIDI_FLOAT64) {
        if (small)
            tk_commit<double, int32_t><<<blocks, threads, 0, stream>>>((const double *)src, (double *)dst,
                (int32_t)g.len, (int32_t)g.R, (int32_t)rows, g.origin, g.rs, g.s2, err, mirror, next);
        else
            tk_commit<double, int64_t><<<blocks, threads, 0, stream>>>((const double *)src, (double *)dst, g.len,
                g.R, rows, g.origin, g.rs, g.s2, err, mirror, next);
    } else {
        if (small)
            tk_commit<float, int32_t><<<blocks, threads, 0, stream>>>((const float *)src, (float *)dst,
                (int32_t)g.len, (int32_t)g.R, (int32_t)rows, g.origin, g.rs, g.s2, err, mirror, next);
        else
            tk_commit<float, int64_t><<<blocks, threads, 0, stream>>>((const float *)src, (float *)dst, g.len, g.R,
                rows, g.origin, g.rs, g.s2, err, mirror, next);
    }
    CK(cudaGetLastError(), "launching the commit kernel");
    return TRIDI_SUCCESS;
}

// A device plan's own state: the kernel chosen once for its shape and contract, and the buffers its solves
// need (the answer box of an ON_ERROR_CALL solve too large for one wave, the W/G scratch of long lines).
struct cuda_plan {
    tk_plan plan{};
    dbuf box, scratch;
};

// The kernel arguments of a device solve of p, without its verdict slot.
tk_args device_args(const tridi_problem *p)
{
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
    a.out = user; // x's view when x is written in place; the box's is alike along x (unit stride), which the plan reads
    return a;
}

// The W/G scratch of a solve whose lines keep W and G in global memory: two doubles a box cell.
size_t wg_scratch_bytes(const tridi_problem *p) { return (size_t)(p->n * p->nlines) * 2 * sizeof(double); }

// Whether two captured solves are the same box of the same arrays (a failing line is then named with its cell).
bool same_solve(const tridi_problem &a, const tridi_problem &b)
{
    const tridi_arrays &x = a.arrays, &y = b.arrays;
    return a.axis == b.axis && a.origin == b.origin && a.n == b.n && a.n1 == b.n1 && a.n2 == b.n2 &&
           a.stride[1] == b.stride[1] && a.stride[2] == b.stride[2] && a.combo == b.combo && x.lower == y.lower &&
           x.diag == y.diag && x.upper == y.upper && x.rhs == y.rhs && x.x == y.x;
}

// A plan's solve captured into a CUDA graph on the caller's stream (docs/decisions/030); cp: NULL for the
// convenience call and the kept first phase of ON_ERROR_CALL, which are refused. The host waits for
// nothing and records nothing of it (a captured event could not be waited for, and the graph's replays are
// the caller's to order): it takes no slot of the ring, orders nothing against the context's other work, and
// its lines' failures go to GRAPH_SLOT, where they add up over the replays until tridi_cuda_synchronize
// reads them. Under ON_ERROR_LINES a failing line is left untouched whenever it fails, so nothing else needs
// the verdict on the device.
tridi_status solve_captured(tridi_cuda_state *st, const tridi_problem *p, cudaStream_t cs, cuda_plan *cp)
{
    if (!cp || p->on_error != TRIDI_ON_ERROR_LINES || p->verdict != TRIDI_VERDICT_DEFERRED)
        return tridi_fail(TRIDI_ERROR_UNSUPPORTED,
                          "%s: the stream is being captured into a CUDA graph; only a device plan's solves with "
                          "ON_ERROR_LINES and a DEFERRED verdict can be captured (a SYNC verdict waits on the "
                          "host, ON_ERROR_CALL's guard hands its verdict to the host between kernels)",
                          cp ? "tridi_plan_solve" : "tridi_solve_device");
    tk_args a = device_args(p);
    const tk_plan &plan = cp->plan;
    if (plan_needs_scratch(plan, p->n)) {
        if (cp->scratch.bytes < wg_scratch_bytes(p)) // made by tridi_cuda_plan_create
            return tridi_fail(TRIDI_ERROR_INTERNAL, "tridi_plan_solve: the plan has no W/G scratch to capture");
        a.scratch = (double *)cp->scratch.p;
    }
    tk_slot *g = &st->d_slots[GRAPH_SLOT];
    a.X = p->arrays.x;
    a.err = &g->first;
    a.nfail = &g->nfailed; // slot, verdict, next_err stay NULL: the kernel hands nothing on
    tridi_status s = run_solve(types_of(p, false), a, plan, cs);
    if (s) {
        cudaGetLastError();
        return s;
    }
    if (st->graph_plan && !(st->graph_plan == cp && same_solve(st->graph_p, *p)))
        st->graph_mixed = true;
    st->graph_p = *p;
    st->graph_plan = cp;
    st->graph_used = true;
    return TRIDI_SUCCESS;
}

// Device-mode solve. keep: the first phase of ON_ERROR_CALL whatever p says: the answers stay in the
// context's box (never the one-wave variant, which writes x itself) and only the verdict is handed on;
// tridi_cuda_commit copies them into x later, tridi_cuda_rollback drops them. cp: a plan's state (its kernel
// and buffers), or NULL for tridi_solve_device (deferred: the context's one-entry memo of the latest kernel
// choice and its buffers). Both honour p->on_error.
tridi_status solve_device(tridi_cuda_state *st, const tridi_problem *p, void *stream, bool keep, cuda_plan *cp)
{
    CK(cudaSetDevice(st->device), "cudaSetDevice");
    st->kept = false; // this solve reuses the box
    tridi_status s = check_device_arrays(st->device, p);
    if (s)
        return s;
    cudaStream_t cs = stream ? (cudaStream_t)stream : st->compute;
    if (stream && cs != st->compute) { // the context's own stream is never the caller's to capture
        cudaStreamCaptureStatus cap = cudaStreamCaptureStatusNone;
        CK(cudaStreamIsCapturing(cs, &cap), "cudaStreamIsCapturing");
        if (cap != cudaStreamCaptureStatusNone)
            return solve_captured(st, p, cs, keep ? nullptr : cp);
    }
    const int slot = st->next_slot;
    s = retire_slot(st, slot); // the ring is full: the oldest solve must be checked first
    if (s)
        return s;
    const bool lines = !keep && p->on_error == TRIDI_ON_ERROR_LINES;
    const bool guard_alone = !keep && !lines; // one-phase CALL: a grid barrier where one wave holds every line
    const bool contiguous = p->axis == TRIDI_AXIS_X && p->stride[0] == 1;
    const kernel_types kt = types_of(p, false);
    const size_t cells = (size_t)(p->n * p->nlines), xs = tridi_dtype_size(p->arrays.x_type);
    tk_args a = device_args(p);
    const tk_view user = a.in;
    a.err = err_word(st, slot);
    tk_plan plan;
    dbuf *box = &st->dbox, *scr = &st->scratch;
    if (cp) {
        plan = cp->plan;
        box = &cp->box;
        scr = &cp->scratch;
    } else {
        // Under one-phase CALL, when every line fits on the GPU at once the solve guards x itself (grid
        // barrier before writing); otherwise it solves into the context's box and a commit kernel copies the
        // box into x. Under LINES each line writes its own answers once it has succeeded.
        plan_memo &mm = st->memo;
        const bool known = mm.valid && mm.l == kt.l && mm.d == kt.d && mm.x == kt.x && mm.n == a.n &&
                           mm.n1 == a.n1 && mm.lines == a.l_count && mm.contig == contiguous &&
                           mm.coop_wanted == guard_alone && mm.view.off == user.off && mm.view.s1 == user.s1 &&
                           mm.view.s2 == user.s2 && mm.view.sm == user.sm;
        if (!known) {
            tk_plan made;
            s = plan_solve(st->kernel, kt, a, contiguous, guard_alone, &made);
            if (s)
                return s;
            mm = {true, kt.l, kt.d, kt.x, user, a.n, a.n1, a.l_count, contiguous, guard_alone, made};
        }
        plan = mm.plan;
    }
    const bool scratch = plan_needs_scratch(plan, p->n); // split and FAST lines keep W/G on chip
    const size_t need_box = plan.one_wave || lines ? 0 : cells * xs, need_scratch = scratch ? wg_scratch_bytes(p) : 0;
    if (box->bytes < need_box || scr->bytes < need_scratch) {
        // Growing frees buffers that queued solves may still use.
        if (st->have_last)
            CK(cudaEventSynchronize(st->ev_last), "waiting for earlier work");
        if (need_box)
            s = ensure(st, *box, need_box, "the device answer box");
        if (!s && need_scratch)
            s = ensure(st, *scr, need_scratch, "the W/G scratch of long lines");
        if (s)
            return s;
    }
    s = after_last(st, cs);
    if (s)
        return s;
    a.scratch = scratch ? (double *)scr->p : nullptr;
    if (lines) {
        // Each line writes its answers into x only once it has succeeded; the grid's last block hands the
        // verdict (first failing line, count) to the host's mirror and re-arms the slot.
        a.X = p->arrays.x;
        a.out = user;
        a.nfail = &st->d_slots[slot].nfailed;
        a.slot = &st->d_slots[slot];
        a.verdict = &st->h_mirror_dev[slot];
        a.next_err = err_word(st, (slot + 1) % NSLOT);
        s = run_solve(kt, a, plan, cs);
    } else if (plan.one_wave) {
        a.X = p->arrays.x;
        a.out = user;
        a.mirror = &st->h_mirror_dev[slot].first;
        a.next_err = err_word(st, (slot + 1) % NSLOT);
        s = run_solve(kt, a, plan, cs);
    } else {
        a.X = box->p;
        a.out = compact_view(p);
        s = run_solve(kt, a, plan, cs);
        if (!s)
            s = launch_commit(st, p, box->p, slot, cs, !keep);
    }
    if (s) {
        // A launch was refused, perhaps after the solve was queued: later work must wait for that solve,
        // and the failing line it may record must not become the verdict of this slot's next solve.
        cudaMemsetAsync(err_word(st, slot), 0xff, sizeof(unsigned long long), cs);
        if (cudaEventRecord(st->ev_last, cs) == cudaSuccess) {
            st->have_last = true;
            st->last_stream = cs;
        }
        cudaGetLastError();
        return s;
    }
    CK(cudaEventRecord(st->ev_slot[slot], cs), "cudaEventRecord");
    CK(cudaEventRecord(st->ev_last, cs), "cudaEventRecord");
    st->have_last = true;
    st->last_stream = cs;
    pending_solve &ps = st->pending[slot];
    ps.active = true;
    ps.p = *p;
    ps.call = ++st->calls;
    ps.plan = cp != nullptr;
    st->next_slot = (slot + 1) % NSLOT;
    if (keep) {
        st->kept = true;
        st->kept_slot = slot;
        st->kept_p = *p;
    }
    // A plan's SYNC verdict: wait for this solve and report it (deferred ones wait for the next status).
    if (cp && p->verdict == TRIDI_VERDICT_SYNC)
        return retire_slot(st, slot);
    return TRIDI_SUCCESS;
}

} // namespace

extern "C" {

tridi_status tridi_cuda_solve_device(tridi_cuda_state *st, const tridi_problem *p, void *stream)
{
    return solve_device(st, p, stream, false, nullptr);
}

tridi_status tridi_cuda_solve_keep(tridi_cuda_state *st, const tridi_problem *p, void *stream)
{
    return solve_device(st, p, stream, true, nullptr);
}

tridi_status tridi_cuda_plan_create(tridi_cuda_state *st, const tridi_problem *p, void **state)
{
    *state = nullptr;
    CK(cudaSetDevice(st->device), "cudaSetDevice");
    cuda_plan *cp = new (std::nothrow) cuda_plan;
    if (!cp)
        return tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "tridi_plan_create: out of host memory");
    // ON_ERROR_CALL keeps x unchanged on a failure: by a grid barrier when every line fits in one wave,
    // else through the plan's answer box and a commit kernel. ON_ERROR_LINES needs neither.
    tridi_status s = plan_solve(st->kernel, types_of(p, false), device_args(p),
                                p->axis == TRIDI_AXIS_X && p->stride[0] == 1, p->on_error == TRIDI_ON_ERROR_CALL,
                                &cp->plan);
    // The W/G scratch of long lines is the plan's from the start, so that even its first solve can be
    // captured into a CUDA graph (no allocation while a stream is captured).
    if (!s && plan_needs_scratch(cp->plan, p->n))
        s = ensure(st, cp->scratch, wg_scratch_bytes(p), "the W/G scratch of long lines");
    if (s) {
        device_release(st->mem, cp->scratch.p, cp->scratch.bytes);
        delete cp;
        return s;
    }
    *state = cp;
    return TRIDI_SUCCESS;
}

void tridi_cuda_plan_destroy(tridi_cuda_state *st, void *state)
{
    cuda_plan *cp = (cuda_plan *)state;
    if (!cp)
        return;
    cudaSetDevice(st->device);
    // Solves queued with the plan's buffers may still run.
    if (st->have_last)
        cudaEventSynchronize(st->ev_last);
    if (st->graph_plan == cp) { // its captured solves' arrays are no longer known to be there
        st->graph_plan = nullptr;
        st->graph_mixed = false;
    }
    device_release(st->mem, cp->box.p, cp->box.bytes);
    device_release(st->mem, cp->scratch.p, cp->scratch.bytes);
    delete cp;
}

tridi_status tridi_cuda_solve_device_plan(tridi_cuda_state *st, const tridi_problem *p, void *state, void *stream)
{
    return solve_device(st, p, stream, false, (cuda_plan *)state);
}

tridi_status tridi_cuda_commit(tridi_cuda_state *st, void *stream)
{
    if (!st->kept) // the solve failed before it queued anything
        return TRIDI_SUCCESS;
    CK(cudaSetDevice(st->device), "cudaSetDevice");
    cudaStream_t cs = stream ? (cudaStream_t)stream : st->compute;
    tridi_status s = after_last(st, cs);
    if (s)
        return s;
    st->kept = false;
    // The kept slot's error word still holds the verdict (no solve has run since): the commit copies the
    // box only if it is clear, as for any multi-wave solve.
    s = launch_commit(st, &st->kept_p, st->dbox.p, st->kept_slot, cs);
    if (s)
        return s;
    CK(cudaEventRecord(st->ev_last, cs), "cudaEventRecord");
    st->have_last = true;
    st->last_stream = cs;
    return TRIDI_SUCCESS;
}

void tridi_cuda_rollback(tridi_cuda_state *st)
{
    st->kept = false; // the answers never left the context's box
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
    if (!first && st->graph_used) {
        // The failures of captured solves, over every replay that ended before this call (the caller waits
        // for its replays' stream first: docs/decisions/030); read, then re-armed for later replays.
        tk_slot g;
        e = cudaMemcpy(&g, &st->d_slots[GRAPH_SLOT], sizeof g, cudaMemcpyDeviceToHost);
        if (e == cudaSuccess && g.first != ULLONG_MAX) {
            const tk_slot armed{ULLONG_MAX, 0, 0, 0};
            e = cudaMemcpy(&st->d_slots[GRAPH_SLOT], &armed, sizeof armed, cudaMemcpyHostToDevice);
            if (e == cudaSuccess) {
                const char *func = "tridi_plan_solve (a solve captured in a CUDA graph, replayed)";
                if (st->graph_plan && !st->graph_mixed)
                    return locate_on_device(st, func, &st->graph_p, (int64_t)g.first, (int64_t)g.nfailed);
                return tridi_fail_numeric_lines(func, &st->graph_p, TRIDI_ERROR_NONFINITE, (int64_t)g.first, 0,
                                                "a zero pivot or non-finite value (not located: solves of several "
                                                "plans, boxes or arrays were captured, or the latest one's plan is "
                                                "destroyed; the line is numbered in its own solve's box, the cell "
                                                "shown is that line's first in the latest captured solve's)",
                                                (int64_t)g.nfailed);
            }
        }
        if (e != cudaSuccess)
            return cuda_fail("reading the verdict of captured solves", e);
    }
    return first;
}

} // extern "C"
