/* Byte reader shared by the ADI and MPI fuzzing harnesses: every choice of a case is taken from the input
 * bytes, and a short input reads as zeros, so any byte string is a valid case. */
#ifndef TRIDI_FUZZ_READER_H
#define TRIDI_FUZZ_READER_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "tridi.h"

/* Elements of an array of either storage type. */
static inline size_t esize_of(tridi_dtype t) { return t == TRIDI_FLOAT64 ? 8 : 4; }

static inline double get(const void *p, tridi_dtype t, int64_t i)
{
    return t == TRIDI_FLOAT64 ? ((const double *)p)[i] : (double)((const float *)p)[i];
}

static inline void set(void *p, tridi_dtype t, int64_t i, double v)
{
    if (t == TRIDI_FLOAT64)
        ((double *)p)[i] = v;
    else
        ((float *)p)[i] = (float)v;
}

typedef struct reader {
    const uint8_t *p;
    size_t n;
} reader;

static inline uint8_t fz_byte(reader *r)
{
    if (!r->n)
        return 0;
    r->n--;
    return *r->p++;
}

/* One of the n entries of a table, picked by the next byte. */
#define FZ_PICK(r, table) ((table)[fz_byte(r) % (sizeof(table) / sizeof((table)[0]))])

/* A cell value: ordinary values in [-8, 8) on 1/16 steps; when wild, 1 byte in 16 gives 0, Inf, -Inf,
 * NaN, a subnormal or a value far past float's range instead. */
static inline double fz_value(reader *r, int wild)
{
    uint8_t b = fz_byte(r);
    if (wild && (b & 15) == 15) {
        static const double special[8] = {0.0, INFINITY, -INFINITY, NAN, 4.9e-324, 1e300, -1e39, 1e-30};
        return special[(b >> 4) & 7];
    }
    return ((double)fz_byte(r) - 128.0) / 16.0;
}

/* v + d, saturated at the int64 limits (grids may be placed at either end of the index range). */
static inline int64_t fz_shifted(int64_t v, int64_t d)
{
    int64_t out;
    return __builtin_add_overflow(v, d, &out) ? (d < 0 ? INT64_MIN : INT64_MAX) : out;
}

/* Lower bounds at and past the ends of the index range tridi accepts (+-2^62). */
static const int64_t fz_extreme_t[] = {INT64_MIN, INT64_MAX, INT64_MAX / 2, -(INT64_MAX / 2), (int64_t)1 << 62,
                                       -((int64_t)1 << 62), ((int64_t)1 << 62) - 3, -((int64_t)1 << 62) + 1,
                                       (int64_t)1 << 40, INT32_MAX, (int64_t)INT32_MAX + 2, INT32_MIN, 0};

#endif
