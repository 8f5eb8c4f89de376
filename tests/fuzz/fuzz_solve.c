/* libFuzzer harness over argument validation and the CPU solve on tiny grids. The input bytes choose the
 * rank, bounds, axis, box (often invalid), types (sometimes unsupported), NULL or aliased pointers and the
 * matrix values (including 0, Inf and NaN). Properties checked on every input:
 *   - no crash, no out-of-bounds access (AddressSanitizer), no undefined behaviour (UBSan);
 *   - a failing call sets a non-empty message and leaves every cell of x unchanged, except after a
 *     numerical failure under TRIDI_ON_ERROR_LINES (the default), where every cell of the box is either
 *     unchanged (a failing line) or finite (an answered one) and every other cell unchanged;
 *   - a successful call writes finite values in the box and leaves every other cell unchanged;
 * under each tridi_pivoting (the fallback's own solves included) and both on_error; and the destroyed
 * context is refused. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tridi.h"

typedef struct reader {
    const uint8_t *p;
    size_t n;
} reader;

static uint8_t byte(reader *r)
{
    if (!r->n)
        return 0;
    r->n--;
    return *r->p++;
}

static double value(reader *r)
{
    uint8_t b = byte(r);
    switch (b & 15) {
    case 0: return 0.0;
    case 1: return INFINITY;
    case 2: return NAN;
    case 3: return 1e-300;
    case 4: return -1e30;
    default: return ((double)byte(r) - 128.0) / 16.0 + ((b & 16) ? 8.0 : 0.0);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader r = {data, size};
    tridi_grid g;
    g.ndim = 2 + (byte(&r) & 1);
    if (byte(&r) == 255)
        g.ndim = byte(&r); /* occasionally a bad rank */
    int64_t cells = 1;
    for (int a = 0; a < 3; ++a) {
        g.lbound[a] = (int64_t)(byte(&r) % 7) - 3;
        g.ubound[a] = g.lbound[a] + (int64_t)(byte(&r) % 6) - (byte(&r) == 0 ? 2 : 0);
        if (a < 2 || g.ndim == 3) {
            int64_t e = g.ubound[a] - g.lbound[a] + 1;
            cells *= e > 0 ? e : 1;
        }
    }
    tridi_axis axis = (tridi_axis)((int)(byte(&r) % 5) - 1);
    int64_t lo[3], hi[3];
    for (int a = 0; a < 3; ++a) {
        lo[a] = g.lbound[a] + (int64_t)(byte(&r) % 5) - 1;
        hi[a] = g.ubound[a] - (int64_t)(byte(&r) % 5) + 1;
    }
    uint8_t tb = byte(&r);
    tridi_dtype t[5];
    int combo = tb % 4;
    for (int i = 0; i < 5; ++i)
        t[i] = combo == 1 ? TRIDI_FLOAT64 : combo == 2 && i == 1 ? TRIDI_FLOAT64 : TRIDI_FLOAT32;
    if (combo == 3)
        t[byte(&r) % 5] = (tridi_dtype)(byte(&r) % 3);
    void *arr[5];
    size_t esize[5];
    for (int i = 0; i < 5; ++i) {
        esize[i] = t[i] == TRIDI_FLOAT64 ? 8 : 4;
        arr[i] = malloc((size_t)cells * 8); /* room for either type whatever the enum says */
        for (int64_t c = 0; c < cells; ++c) {
            double v = value(&r);
            if (esize[i] == 8)
                ((double *)arr[i])[c] = v;
            else
                ((float *)arr[i])[c] = (float)v;
        }
    }
    uint8_t pb = byte(&r);
    tridi_arrays a = {arr[0], t[0], arr[1], t[1], arr[2], t[2], arr[3], t[3], arr[4], t[4]};
    if (pb % 11 == 1)
        a.diag = NULL;
    if (pb % 11 == 2)
        a.x = arr[3], a.rhs = arr[3]; /* in place */
    if (pb % 11 == 3)
        a.x = arr[1]; /* aliasing diag */
    void *x = a.x;
    size_t xbytes = (size_t)cells * esize[4];
    void *before = malloc(xbytes ? xbytes : 1);
    memcpy(before, x, xbytes);

    tridi_config cfg;
    tridi_config_init(&cfg);
    cfg.backend = TRIDI_BACKEND_CPU;
    /* 1 to 4 shares of the lines (run one after the other: the harness is built without OpenMP) */
    cfg.num_threads = 1 + (pb / 11) % 4;
    cfg.pivoting = (pb / 44) % 3;
    cfg.on_error = (pb / 132) % 2 ? TRIDI_ON_ERROR_CALL : TRIDI_ON_ERROR_LINES;
    tridi_context ctx;
    if (tridi_create(&ctx, &cfg) != TRIDI_SUCCESS)
        abort();
    tridi_status st = tridi_solve(ctx, &g, axis, lo, hi, &a);
    const int numerical = st == TRIDI_ERROR_ZERO_PIVOT || st == TRIDI_ERROR_NONFINITE || st == TRIDI_ERROR_UNSTABLE;
    const int lines = numerical && cfg.on_error == TRIDI_ON_ERROR_LINES;
    if (st != TRIDI_SUCCESS && !tridi_error_message()[0])
        abort();
    if (st != TRIDI_SUCCESS && !lines) {
        if (memcmp(before, x, xbytes) != 0)
            abort(); /* a failing call modified x */
    } else if (g.ndim == 2 || g.ndim == 3) {
        /* Cells outside the box are untouched; cells inside are finite (under LINES after a failure: finite
         * or, on a failing line, untouched). */
        int64_t e0 = g.ubound[0] - g.lbound[0] + 1, e1 = g.ubound[1] - g.lbound[1] + 1;
        int64_t k0 = g.ndim == 3 ? g.lbound[2] : 0, k1 = g.ndim == 3 ? g.ubound[2] : 0;
        for (int64_t k = k0; k <= k1; ++k)
            for (int64_t j = g.lbound[1]; j <= g.ubound[1]; ++j)
                for (int64_t i = g.lbound[0]; i <= g.ubound[0]; ++i) {
                    int64_t c = (i - g.lbound[0]) + (j - g.lbound[1]) * e0 + (g.ndim == 3 ? (k - k0) * e0 * e1 : 0);
                    int inside = i >= lo[0] && i <= hi[0] && j >= lo[1] && j <= hi[1] &&
                                 (g.ndim == 2 || (k >= lo[2] && k <= hi[2]));
                    double v = esize[4] == 8 ? ((double *)x)[c] : ((float *)x)[c];
                    if (inside && !isfinite(v) &&
                        !(lines && !memcmp((char *)before + c * esize[4], (char *)x + c * esize[4], esize[4])))
                        abort();
                    if (!inside && memcmp((char *)before + c * esize[4], (char *)x + c * esize[4], esize[4]))
                        abort();
                }
    }
    if (tridi_destroy(ctx) != TRIDI_SUCCESS)
        abort();
    /* A destroyed context: refused without reading it (ASan), x untouched, a second destroy refused. */
    memcpy(before, x, xbytes);
    if (tridi_solve(ctx, &g, axis, lo, hi, &a) != TRIDI_ERROR_INVALID_HANDLE || memcmp(before, x, xbytes))
        abort();
    if (tridi_destroy(ctx) != TRIDI_ERROR_INVALID_HANDLE)
        abort();
    free(before);
    for (int i = 0; i < 5; ++i)
        free(arr[i]);
    return 0;
}
