// Failure location of the CUDA backend: which cell of a failing line breaks, on the host (host-array mode)
// or in a one-thread kernel (device mode), and the status and message that report it.
#include "diagnose.h"

#include "kernels/locate.cuh"

#include <cstdint>
#include <cstring>
#include <new>
#include <vector>

// Its helpers stay in the file-level anonymous namespace, which kernels/locate.cuh opens too: nested in
// tridi_cuda it would be a second one, and nvcc's kernel stubs cannot tell the two apart.
namespace {

// A failure record with no failing unknown found: the float transfer of double inputs overflowed
// (allow_f32_transfer), or a kernel flagged what the diagnosis cannot find.
tridi_status report_failure(const char *func, const tridi_problem *p, int64_t line, const tk_fail &f, bool f32)
{
    tk_fail g = f;
    if (g.kind == TRIDI_FAIL_NONE)
        g = tk_fail{0, f32 ? TRIDI_FAIL_F32_TRANSFER : TRIDI_FAIL_UNLOCATED};
    return tridi_thomas_report(func, p, line, g);
}

// The diagnosis's arithmetic: the NewType pivot where the solve took it.
int newtype_of(const tridi_problem *p) { return tridi_newtype_pivot_f32(p); }

template <class TL, class TD, class TX>
void locate_host_typed(const tridi_problem *p, int64_t off, tk_fail *out, double *W, double *G)
{
    const int64_t s = p->stride[p->axis];
    tk_locate<TL, TD, TX>((const TL *)p->arrays.lower + off, (const TD *)p->arrays.diag + off,
                          (const TL *)p->arrays.upper + off, (const TL *)p->arrays.rhs + off, s, p->n, W, G, out,
                          newtype_of(p));
}

// ON_ERROR_LINES after a host-array solve in which a line failed (the rare path): every line is solved
// again on the host (MOHID's recurrence with true divisions, tk_locate), so that each failing line keeps
// x's old values (put back from `undo`, x's old box, when the answers already went into x) and every other
// line gets its answer. The device's answers of failing lines were never written, so they cannot be used.
template <class TL, class TD, class TX>
void lines_on_host_typed(const tridi_problem *p, const int64_t box_n[3], const char *undo, int64_t *first,
                         tk_fail *first_fail, int64_t *nfailed)
{
    const int64_t str = p->stride[p->axis], n = p->n;
    const size_t xs = sizeof(TX);
    int64_t lowest = INT64_MAX, count = 0;
    const int newtype = newtype_of(p);
    tk_fail lowest_fail{};
#pragma omp parallel
    {
        std::vector<double> W((size_t)n), G((size_t)n);
        int64_t my_lowest = INT64_MAX, my_count = 0;
        tk_fail my_fail{};
#pragma omp for schedule(static) nowait
        for (int64_t l = 0; l < p->nlines; ++l) {
            const int64_t off = tridi_line_offset(p, l);
            tk_fail f{};
            tk_locate<TL, TD, TX>((const TL *)p->arrays.lower + off, (const TD *)p->arrays.diag + off,
                                  (const TL *)p->arrays.upper + off, (const TL *)p->arrays.rhs + off, str, n, W.data(),
                                  G.data(), &f, newtype);
            TX *X = (TX *)p->arrays.x + off;
            if (f.kind) {
                ++my_count;
                if (l < my_lowest) {
                    my_lowest = l;
                    my_fail = f;
                }
                if (undo) {
                    int64_t pos[3];
                    pos[p->a1] = l % p->n1;
                    pos[p->a2] = l / p->n1;
                    for (int64_t m = 0; m < n; ++m) {
                        pos[p->axis] = m;
                        std::memcpy(X + m * str, undo + (pos[0] + box_n[0] * (pos[1] + box_n[1] * pos[2])) * xs, xs);
                    }
                }
                continue;
            }
            double x = tridi_thomas_back(W[n - 1], G[n - 1], 0.0, 1, sizeof(TX) == 8);
            X[(n - 1) * str] = (TX)x;
            for (int64_t m = n - 2; m >= 0; --m) {
                x = tridi_thomas_back(W[m], G[m], x, 0, sizeof(TX) == 8); // MOHID's rounding, no fused multiply-add
                X[m * str] = (TX)x;
            }
        }
#pragma omp critical
        {
            count += my_count;
            if (my_lowest < lowest) {
                lowest = my_lowest;
                lowest_fail = my_fail;
            }
        }
    }
    *first = lowest;
    *first_fail = lowest_fail;
    *nfailed = count;
}

} // namespace

namespace tridi_cuda {

tridi_status lines_on_host(const char *func, const tridi_problem *p, const box_plan &b, const char *undo)
{
    int64_t first = 0, nfailed = 0;
    tk_fail f{};
    try {
        switch (p->combo) {
        case TRIDI_COMBO_F32: lines_on_host_typed<float, float, float>(p, b.n, undo, &first, &f, &nfailed); break;
        case TRIDI_COMBO_F64: lines_on_host_typed<double, double, double>(p, b.n, undo, &first, &f, &nfailed); break;
        case TRIDI_COMBO_MIXED: lines_on_host_typed<float, double, float>(p, b.n, undo, &first, &f, &nfailed); break;
        }
    } catch (const std::bad_alloc &) {
        return tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: a line failed and its diagnosis ran out of memory", func);
    }
    if (nfailed == 0) // only the float transfer of double inputs failed: every line is answered from the doubles
        return TRIDI_SUCCESS;
    return tridi_thomas_report_lines(func, p, first, f, nfailed);
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

// Diagnoses failing line `line` of a device solve (its inputs are still on the device: a failing line's
// own cells are never written, in place or not) and reports it; under ON_ERROR_LINES with the count.
tridi_status locate_on_device(tridi_cuda_state *st, const char *func, const tridi_problem *p, int64_t line,
                              int64_t nfailed)
{
    void *wg = nullptr;
    tk_fail *df = nullptr;
    tridi_status s = device_alloc(st->mem, (size_t)p->n * 2 * sizeof(double) + sizeof(tk_fail), &wg,
                                  "diagnosing a failed line");
    if (s)
        return s;
    df = (tk_fail *)((double *)wg + 2 * p->n);
    const int64_t off = tridi_line_offset(p, line), str = p->stride[p->axis];
    const tridi_arrays &A = p->arrays;
    switch (p->combo) {
    case TRIDI_COMBO_F32:
        tk_locate_kernel<float, float, float><<<1, 1, 0, st->compute>>>(
            (const float *)A.lower + off, (const float *)A.diag + off, (const float *)A.upper + off,
            (const float *)A.rhs + off, str, p->n, (double *)wg, df, newtype_of(p));
        break;
    case TRIDI_COMBO_F64:
        tk_locate_kernel<double, double, double><<<1, 1, 0, st->compute>>>(
            (const double *)A.lower + off, (const double *)A.diag + off, (const double *)A.upper + off,
            (const double *)A.rhs + off, str, p->n, (double *)wg, df, newtype_of(p));
        break;
    case TRIDI_COMBO_MIXED:
        tk_locate_kernel<float, double, float><<<1, 1, 0, st->compute>>>(
            (const float *)A.lower + off, (const double *)A.diag + off, (const float *)A.upper + off,
            (const float *)A.rhs + off, str, p->n, (double *)wg, df, newtype_of(p));
        break;
    }
    tk_fail f{};
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(&f, df, sizeof f, cudaMemcpyDeviceToHost, st->compute);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(st->compute);
    device_release(st->mem, wg, (size_t)p->n * 2 * sizeof(double) + sizeof(tk_fail));
    if (e != cudaSuccess)
        return cuda_fail("diagnosing a failed line", e);
    if (f.kind == TRIDI_FAIL_NONE && p->verdict == TRIDI_VERDICT_DEFERRED) {
        // The line failed when it was solved, but its inputs were changed before this deferred verdict
        // was asked for: the line is known, its cell no longer.
        const char *what = "a zero pivot or non-finite value (the inputs changed before the deferred verdict "
                           "was asked for: the cell shown is the line's first, not the failing one)";
        return p->on_error == TRIDI_ON_ERROR_LINES
                   ? tridi_fail_numeric_lines(func, p, TRIDI_ERROR_NONFINITE, line, 0, what, nfailed)
                   : tridi_fail_numeric(func, p, TRIDI_ERROR_NONFINITE, line, 0, what);
    }
    if (p->on_error == TRIDI_ON_ERROR_LINES && f.kind != TRIDI_FAIL_NONE)
        return tridi_thomas_report_lines(func, p, line, f, nfailed);
    return report_failure(func, p, line, f, false);
}

} // namespace tridi_cuda
