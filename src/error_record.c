/* tridi_record_error: the entry through which layers above the C library (the Fortran modules, the MOHID
 * adapter) put their own failures into the one per-thread error record of error.c. */
#include "tridi_internal.h"

tridi_status tridi_record_error(tridi_status status, const char *message)
{
    /* A layer that passes a numerical failure on in its own words keeps the failing cell. */
    int64_t cell[3];
    int ndim = tridi_error_cell(cell);
    tridi_fail(status, "%s", message ? message : "");
    if (ndim && (status == TRIDI_ERROR_ZERO_PIVOT || status == TRIDI_ERROR_NONFINITE))
        tridi_set_error_cell(ndim, cell);
    return status;
}
