/* Status names and the per-thread error record (message + cell of a numerical failure). */
#include "tridi_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Thread-local so concurrent contexts in different threads never mix their messages. */
static _Thread_local char tls_message[1024];
static _Thread_local int tls_cell_ndim;
static _Thread_local int64_t tls_cell[3];
static _Thread_local int64_t tls_failed_lines;

const char *tridi_status_name(tridi_status status)
{
    switch (status) {
    case TRIDI_SUCCESS: return "TRIDI_SUCCESS";
    case TRIDI_ERROR_NULL_POINTER: return "TRIDI_ERROR_NULL_POINTER";
    case TRIDI_ERROR_INVALID_VALUE: return "TRIDI_ERROR_INVALID_VALUE";
    case TRIDI_ERROR_BOUNDS: return "TRIDI_ERROR_BOUNDS";
    case TRIDI_ERROR_UNSUPPORTED: return "TRIDI_ERROR_UNSUPPORTED";
    case TRIDI_ERROR_ALIASING: return "TRIDI_ERROR_ALIASING";
    case TRIDI_ERROR_ZERO_PIVOT: return "TRIDI_ERROR_ZERO_PIVOT";
    case TRIDI_ERROR_NONFINITE: return "TRIDI_ERROR_NONFINITE";
    case TRIDI_ERROR_NO_DEVICE: return "TRIDI_ERROR_NO_DEVICE";
    case TRIDI_ERROR_OUT_OF_MEMORY: return "TRIDI_ERROR_OUT_OF_MEMORY";
    case TRIDI_ERROR_CUDA: return "TRIDI_ERROR_CUDA";
    case TRIDI_ERROR_MPI: return "TRIDI_ERROR_MPI";
    case TRIDI_ERROR_MISMATCH: return "TRIDI_ERROR_MISMATCH";
    case TRIDI_ERROR_INVALID_HANDLE: return "TRIDI_ERROR_INVALID_HANDLE";
    case TRIDI_ERROR_INTERNAL: return "TRIDI_ERROR_INTERNAL";
    case TRIDI_ERROR_UNSTABLE: return "TRIDI_ERROR_UNSTABLE";
    }
    return "TRIDI_ERROR_UNKNOWN_STATUS";
}

const char *tridi_error_message(void) { return tls_message; }

int tridi_error_cell(int64_t cell[3])
{
    if (cell) {
        for (int a = 0; a < 3; ++a)
            cell[a] = tls_cell_ndim ? tls_cell[a] : 0;
    }
    return tls_cell_ndim;
}

tridi_status tridi_fail(tridi_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tls_message, sizeof tls_message, fmt, ap);
    va_end(ap);
    tls_cell_ndim = 0;
    return status;
}

void tridi_line_cell(const tridi_problem *p, int64_t l, int64_t m, int64_t cell[3])
{
    cell[p->axis] = p->lo[p->axis] + m;
    cell[p->a1] = p->lo[p->a1] + l % p->n1;
    cell[p->a2] = p->lo[p->a2] + l / p->n1;
}

tridi_status tridi_fail_numeric(const char *func, const tridi_problem *p, tridi_status status, int64_t line,
                                int64_t m, const char *what)
{
    int64_t cell[3];
    tridi_line_cell(p, line, m, cell);
    static const char *axis_name[3] = {"x (i)", "y (j)", "z (k)"};
    if (p->grid.ndim == 2)
        tridi_fail(status, "%s: %s in the line along %s number %lld, at cell (%lld, %lld)", func, what,
                   axis_name[p->axis], (long long)line, (long long)cell[0], (long long)cell[1]);
    else
        tridi_fail(status, "%s: %s in the line along %s number %lld, at cell (%lld, %lld, %lld)", func, what,
                   axis_name[p->axis], (long long)line, (long long)cell[0], (long long)cell[1],
                   (long long)cell[2]);
    tls_cell_ndim = p->grid.ndim;
    for (int a = 0; a < 3; ++a)
        tls_cell[a] = a < p->grid.ndim ? cell[a] : 0;
    tls_failed_lines = 1;
    return status;
}

tridi_status tridi_fail_numeric_lines(const char *func, const tridi_problem *p, tridi_status status,
                                      int64_t line, int64_t m, const char *what, int64_t nfailed)
{
    tridi_fail_numeric(func, p, status, line, m, what);
    size_t len = strlen(tls_message);
    snprintf(tls_message + len, sizeof tls_message - len,
             "; %lld line%s failed and %s left untouched, every other line was answered", (long long)nfailed,
             nfailed == 1 ? "" : "s", nfailed == 1 ? "was" : "were");
    tls_failed_lines = nfailed;
    return status;
}

int64_t tridi_error_failed_lines_internal(void) { return tls_cell_ndim ? tls_failed_lines : 0; }

void tridi_set_error_cell(int ndim, const int64_t cell[3])
{
    tls_cell_ndim = ndim;
    for (int a = 0; a < 3; ++a)
        tls_cell[a] = a < ndim ? cell[a] : 0;
}
