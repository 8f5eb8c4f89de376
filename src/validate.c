/* Argument validation shared by every entry point: builds a tridi_problem that backends trust. */
#include "tridi_internal.h"

#include <stdint.h>
#include <string.h>

static const char *axis_letter = "xyz";

static tridi_status check_grid(const char *f, const tridi_grid *grid)
{
    if (!grid)
        return tridi_fail(TRIDI_ERROR_NULL_POINTER, "%s: argument 'grid' is NULL", f);
    if (grid->ndim != 2 && grid->ndim != 3)
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE, "%s: grid->ndim = %d; tridi solves on 2D or 3D grids", f,
                          grid->ndim);
    int64_t cells = 1;
    for (int a = 0; a < grid->ndim; ++a) {
        for (int side = 0; side < 2; ++side) {
            const int64_t v = side ? grid->ubound[a] : grid->lbound[a];
            if (v < -TRIDI_INDEX_LIMIT || v > TRIDI_INDEX_LIMIT)
                return tridi_fail(TRIDI_ERROR_INVALID_VALUE,
                                  "%s: grid->%s[%d] = %lld is outside the index range -2^62..2^62", f,
                                  side ? "ubound" : "lbound", a, (long long)v);
        }
        if (grid->ubound[a] < grid->lbound[a])
            return tridi_fail(TRIDI_ERROR_INVALID_VALUE,
                              "%s: grid->ubound[%d] = %lld is below grid->lbound[%d] = %lld (axis %c has no cells)",
                              f, a, (long long)grid->ubound[a], a, (long long)grid->lbound[a], axis_letter[a]);
        int64_t ext;
        /* Extents and the cell count must fit comfortably in 64-bit byte offsets (8-byte elements). */
        if (__builtin_sub_overflow(grid->ubound[a], grid->lbound[a], &ext) || ext >= INT64_MAX / 16 ||
            __builtin_mul_overflow(cells, ext + 1, &cells) || cells > INT64_MAX / 16)
            return tridi_fail(TRIDI_ERROR_INVALID_VALUE,
                              "%s: grid bounds of axis %c (%lld:%lld) give an array too large to address", f,
                              axis_letter[a], (long long)grid->lbound[a], (long long)grid->ubound[a]);
    }
    return TRIDI_SUCCESS;
}

static tridi_status check_types(const char *f, const tridi_arrays *arr, tridi_combo *combo)
{
    const tridi_dtype t[5] = {arr->lower_type, arr->diag_type, arr->upper_type, arr->rhs_type, arr->x_type};
    static const char *names[5] = {"lower_type", "diag_type", "upper_type", "rhs_type", "x_type"};
    for (int i = 0; i < 5; ++i)
        if (t[i] != TRIDI_FLOAT32 && t[i] != TRIDI_FLOAT64)
            return tridi_fail(TRIDI_ERROR_INVALID_VALUE,
                              "%s: arrays->%s = %d is neither TRIDI_FLOAT32 (0) nor TRIDI_FLOAT64 (1)", f, names[i],
                              (int)t[i]);
    int all32 = 1, all64 = 1;
    for (int i = 0; i < 5; ++i) {
        all32 &= t[i] == TRIDI_FLOAT32;
        all64 &= t[i] == TRIDI_FLOAT64;
    }
    if (all32) *combo = TRIDI_COMBO_F32;
    else if (all64) *combo = TRIDI_COMBO_F64;
    else if (t[1] == TRIDI_FLOAT64 && t[0] == TRIDI_FLOAT32 && t[2] == TRIDI_FLOAT32 && t[3] == TRIDI_FLOAT32 &&
             t[4] == TRIDI_FLOAT32)
        *combo = TRIDI_COMBO_MIXED;
    else
        return tridi_fail(TRIDI_ERROR_UNSUPPORTED,
                          "%s: unsupported type combination (lower %s, diag %s, upper %s, rhs %s, x %s): tridi "
                          "supports all float32, all float64, or diag float64 with the others float32 (MOHID)",
                          f, t[0] ? "f64" : "f32", t[1] ? "f64" : "f32", t[2] ? "f64" : "f32", t[3] ? "f64" : "f32",
                          t[4] ? "f64" : "f32");
    return TRIDI_SUCCESS;
}

static int overlaps(const void *a, size_t abytes, const void *b, size_t bbytes)
{
    uintptr_t pa = (uintptr_t)a, pb = (uintptr_t)b;
    return pa < pb + bbytes && pb < pa + abytes;
}

/* The grid, axis and box limits of a solve; the box itself is checked by validate_box. */
static tridi_status validate_geometry(const char *f, const tridi_grid *grid, tridi_axis axis, const int64_t lo[3],
                                      const int64_t hi[3], tridi_problem *p, int *empty)
{
    tridi_status s = check_grid(f, grid);
    if (s)
        return s;
    if ((int)axis < 0 || (int)axis >= grid->ndim)
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE, "%s: axis = %d is not an axis of a %dD grid (%s)", f, (int)axis,
                          grid->ndim, grid->ndim == 2 ? "TRIDI_AXIS_X or TRIDI_AXIS_Y" : "X, Y or Z");
    if (!lo)
        return tridi_fail(TRIDI_ERROR_NULL_POINTER, "%s: argument 'lo' is NULL", f);
    if (!hi)
        return tridi_fail(TRIDI_ERROR_NULL_POINTER, "%s: argument 'hi' is NULL", f);

    memset(p, 0, sizeof *p);
    p->grid = *grid;
    p->axis = axis;
    *empty = 0;
    for (int a = 0; a < grid->ndim; ++a)
        if (lo[a] < -TRIDI_INDEX_LIMIT || lo[a] > TRIDI_INDEX_LIMIT || hi[a] < -TRIDI_INDEX_LIMIT ||
            hi[a] > TRIDI_INDEX_LIMIT)
            return tridi_fail(TRIDI_ERROR_INVALID_VALUE,
                              "%s: the box lo[%d] = %lld, hi[%d] = %lld is outside the index range -2^62..2^62", f, a,
                              (long long)lo[a], a, (long long)hi[a]);
    for (int a = 0; a < 3; ++a) {
        if (a < grid->ndim) {
            p->lo[a] = lo[a];
            p->hi[a] = hi[a];
            if (hi[a] < lo[a])
                *empty = 1;
        } else {
            p->grid.lbound[a] = p->grid.ubound[a] = p->lo[a] = p->hi[a] = 1;
        }
    }
    p->grid.ndim = grid->ndim;
    /* All or nothing, MOHID arithmetic, synchronous: the MPI layer's contract. tridi_solve and
     * tridi_solve_device then take on_error from their context (docs/decisions/019); plans set their own
     * (tridi_resolve_contract). */
    p->on_error = TRIDI_ON_ERROR_CALL;
    p->arith = TRIDI_ARITH_MOHID;
    p->verdict = TRIDI_VERDICT_SYNC;
    return TRIDI_SUCCESS;
}

/* The box inside the grid, and the derived geometry (a non-empty box). */
static tridi_status validate_box(const char *f, const tridi_grid *grid, const int64_t lo[3], const int64_t hi[3],
                                 tridi_problem *p)
{
    const tridi_axis axis = p->axis;
    for (int a = 0; a < grid->ndim; ++a) {
        if (lo[a] < grid->lbound[a])
            return tridi_fail(TRIDI_ERROR_BOUNDS, "%s: lo[%d] = %lld is below the allocated lower bound %lld of axis %c",
                              f, a, (long long)lo[a], (long long)grid->lbound[a], axis_letter[a]);
        if (hi[a] > grid->ubound[a])
            return tridi_fail(TRIDI_ERROR_BOUNDS, "%s: hi[%d] = %lld is above the allocated upper bound %lld of axis %c",
                              f, a, (long long)hi[a], (long long)grid->ubound[a], axis_letter[a]);
    }

    for (int a = 0; a < 3; ++a)
        p->extent[a] = p->grid.ubound[a] - p->grid.lbound[a] + 1;
    p->stride[0] = 1;
    p->stride[1] = p->extent[0];
    p->stride[2] = p->extent[0] * p->extent[1];
    p->total_cells = p->stride[2] * p->extent[2];
    p->n = p->hi[axis] - p->lo[axis] + 1;
    p->a1 = axis == 0 ? 1 : 0;
    p->a2 = axis == 2 ? 1 : 2;
    p->n1 = p->hi[p->a1] - p->lo[p->a1] + 1;
    p->n2 = p->hi[p->a2] - p->lo[p->a2] + 1;
    p->nlines = p->n1 * p->n2;
    p->origin = 0;
    for (int a = 0; a < 3; ++a)
        p->origin += (p->lo[a] - p->grid.lbound[a]) * p->stride[a];
    return TRIDI_SUCCESS;
}

tridi_status tridi_validate_geometry(const char *f, const tridi_grid *grid, tridi_axis axis, const int64_t lo[3],
                                     const int64_t hi[3], const tridi_dtype types[5], tridi_problem *p, int *empty)
{
    if (!types)
        return tridi_fail(TRIDI_ERROR_NULL_POINTER, "%s: argument 'types' is NULL", f);
    tridi_status s = validate_geometry(f, grid, axis, lo, hi, p, empty);
    if (!s && !*empty)
        s = validate_box(f, grid, lo, hi, p);
    if (s)
        return s;
    tridi_arrays t = {NULL, types[0], NULL, types[1], NULL, types[2], NULL, types[3], NULL, types[4]};
    s = check_types(f, &t, &p->combo);
    if (s)
        return s;
    p->arrays = t;
    return TRIDI_SUCCESS;
}

tridi_status tridi_validate_arrays(const char *f, tridi_problem *p, const tridi_arrays *arrays, int need_x, int empty)
{
    p->func = f;
    if (!arrays)
        return tridi_fail(TRIDI_ERROR_NULL_POINTER, "%s: argument 'arrays' is NULL", f);
    static const char *role[5] = {"lower", "diag", "upper", "rhs", "x"};
    const void *ptr[5] = {arrays->lower, arrays->diag, arrays->upper, arrays->rhs, arrays->x};
    const tridi_dtype type[5] = {arrays->lower_type, arrays->diag_type, arrays->upper_type, arrays->rhs_type,
                                 arrays->x_type};
    const tridi_dtype want[5] = {p->arrays.lower_type, p->arrays.diag_type, p->arrays.upper_type,
                                 p->arrays.rhs_type, p->arrays.x_type};
    for (int i = 0; i < (need_x ? 5 : 4); ++i)
        if (!ptr[i])
            return tridi_fail(TRIDI_ERROR_NULL_POINTER, "%s: arrays->%s is NULL", f, role[i]);
    for (int i = 0; i < 5; ++i)
        if (type[i] != want[i])
            return tridi_fail(TRIDI_ERROR_INVALID_VALUE,
                              "%s: arrays->%s_type = %s but the plan was made for %s (the types given to "
                              "tridi_plan_create)",
                              f, role[i], type[i] == TRIDI_FLOAT32 ? "TRIDI_FLOAT32" : type[i] == TRIDI_FLOAT64
                                                                                      ? "TRIDI_FLOAT64" : "invalid",
                              want[i] == TRIDI_FLOAT32 ? "TRIDI_FLOAT32" : "TRIDI_FLOAT64");
    p->arrays = *arrays;
    if (empty || !need_x)
        return TRIDI_SUCCESS;
    size_t xbytes = (size_t)p->total_cells * tridi_dtype_size(type[4]);
    for (int i = 0; i < 4; ++i) {
        size_t ibytes = (size_t)p->total_cells * tridi_dtype_size(type[i]);
        if (i == 3 && ptr[i] == ptr[4] && type[i] == type[4])
            continue; /* x == rhs: an in-place solve, allowed */
        if (overlaps(ptr[4], xbytes, ptr[i], ibytes))
            return tridi_fail(TRIDI_ERROR_ALIASING,
                              "%s: arrays->x overlaps arrays->%s; x may only be the rhs array itself (same "
                              "pointer and type) or separate memory",
                              f, role[i]);
    }
    return TRIDI_SUCCESS;
}

tridi_status tridi_validate(const char *f, const tridi_grid *grid, tridi_axis axis, const int64_t lo[3],
                            const int64_t hi[3], const tridi_arrays *arrays, int need_x, tridi_problem *p,
                            int *empty)
{
    tridi_status s = validate_geometry(f, grid, axis, lo, hi, p, empty);
    if (s)
        return s;
    if (!arrays)
        return tridi_fail(TRIDI_ERROR_NULL_POINTER, "%s: argument 'arrays' is NULL", f);
    static const char *role[5] = {"lower", "diag", "upper", "rhs", "x"};
    const void *ptr[5] = {arrays->lower, arrays->diag, arrays->upper, arrays->rhs, arrays->x};
    for (int i = 0; i < (need_x ? 5 : 4); ++i)
        if (!ptr[i])
            return tridi_fail(TRIDI_ERROR_NULL_POINTER, "%s: arrays->%s is NULL", f, role[i]);
    s = check_types(f, arrays, &p->combo);
    if (s)
        return s;
    if (!*empty && (s = validate_box(f, grid, lo, hi, p)))
        return s;
    p->arrays = *arrays;
    return tridi_validate_arrays(f, p, arrays, need_x, *empty);
}

tridi_status tridi_resolve_contract(const char *f, tridi_problem *p, const tridi_solve_options *o)
{
    if ((int)o->on_error != TRIDI_ON_ERROR_LINES && (int)o->on_error != TRIDI_ON_ERROR_CALL)
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE,
                          "%s: options->on_error = %d is neither TRIDI_ON_ERROR_LINES (0) nor TRIDI_ON_ERROR_CALL (1)",
                          f, (int)o->on_error);
    if ((int)o->arith < TRIDI_ARITH_DEFAULT || (int)o->arith > TRIDI_ARITH_MOHID_NEWTYPE)
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE,
                          "%s: options->arith = %d is not TRIDI_ARITH_DEFAULT (0), _MOHID (1), _FAST (2) or "
                          "_MOHID_NEWTYPE (3)",
                          f, (int)o->arith);
    if ((int)o->verdict != TRIDI_VERDICT_SYNC && (int)o->verdict != TRIDI_VERDICT_DEFERRED)
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE,
                          "%s: options->verdict = %d is neither TRIDI_VERDICT_SYNC (0) nor TRIDI_VERDICT_DEFERRED (1)",
                          f, (int)o->verdict);
    p->on_error = o->on_error;
    p->arith = o->arith != TRIDI_ARITH_DEFAULT ? o->arith
               : p->combo == TRIDI_COMBO_MIXED ? TRIDI_ARITH_MOHID
                                               : TRIDI_ARITH_FAST;
    /* Host solves always return their numerical status: their answers are on the host when they return. */
    p->verdict = o->memory == TRIDI_MEMORY_DEVICE ? o->verdict : TRIDI_VERDICT_SYNC;
    return TRIDI_SUCCESS;
}
