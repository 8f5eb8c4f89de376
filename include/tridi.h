/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tridi.h - batched tridiagonal (Thomas) solves on grid-shaped arrays.
 *
 * The one public C header of tridi. It carries no CUDA and no MPI types: streams are `void*`, and the
 * MPI layer lives in tridi_mpi.h.
 *
 * Data contract (see README.md):
 *  - Every array of one solve is a full grid-shaped array with the same allocated bounds, stored in
 *    Fortran (column-major) order: axis 0 (i, "x") is contiguous, then axis 1 (j, "y"), then axis 2
 *    (k, "z"). Bounds are inclusive and may start anywhere (halos, 0-based, negative).
 *  - A solve along `axis` solves one tridiagonal system per line of the box [lo, hi] (inclusive):
 *    along `axis` the box gives the unknowns lo[axis]..hi[axis], along the other axes the lines.
 *  - Equation of unknown m on a line:  lower(m) x(m-1) + diag(m) x(m) + upper(m) x(m+1) = rhs(m).
 *    lower is never read at the first unknown of a line, upper never at the last.
 *  - Only the cells of the box are read from the inputs and only they are written in x; every other
 *    cell of every array is left untouched. Inputs are read only. x may be the rhs array itself
 *    (same pointer, same type: solved in place); any other overlap of x with an input is an error.
 *  - On an argument error x is left unchanged. On a numerical failure (zero pivot, non-finite value) the
 *    caller chooses (tridi_on_error): by default (TRIDI_ON_ERROR_LINES) a failing line is left untouched,
 *    every other line is answered, and the status names the first failing line and cell and how many lines
 *    failed; TRIDI_ON_ERROR_CALL leaves x unchanged if any line fails. tridi_solve and tridi_solve_device
 *    take it from the context (tridi_config.on_error), a plan from its tridi_solve_options.
 *  - Pivot arithmetic is done in double whatever the storage type; each x value is rounded to its
 *    storage type before it is used for the next unknown (as Fortran codes with real(4) answers do).
 */
#ifndef TRIDI_H
#define TRIDI_H

#include <stddef.h>
#include <stdint.h>

#include "tridi_version.h" /* generated: TRIDI_HAVE_*, TRIDI_VERSION_GE */

#ifdef __cplusplus
extern "C" {
#endif

/* TRIDI_API marks the public entry points: the library is built with hidden visibility, so only
 * functions declared with it leave a shared libtridi. */
#if defined(_WIN32)
#define TRIDI_API
#elif defined(__GNUC__) || defined(__clang__)
#define TRIDI_API __attribute__((visibility("default")))
#else
#define TRIDI_API
#endif

#define TRIDI_VERSION_MAJOR 0
#define TRIDI_VERSION_MINOR 1
#define TRIDI_VERSION_PATCH 0

/* ---------------------------------------------------------------------------------------------------
 * Status codes. Every entry point returns one; tridi_error_message() says what went wrong, naming the
 * argument, index, line or grid cell at fault. docs/errors.md lists causes and remedies.
 * ------------------------------------------------------------------------------------------------- */
typedef enum tridi_status {
    TRIDI_SUCCESS = 0,
    TRIDI_ERROR_NULL_POINTER = 1,   /* a required pointer argument is NULL */
    TRIDI_ERROR_INVALID_VALUE = 2,  /* an enum or scalar argument is out of range (axis, ndim, ...) */
    TRIDI_ERROR_BOUNDS = 3,         /* a box or range lies outside the allocated bounds */
    TRIDI_ERROR_UNSUPPORTED = 4,    /* a type combination, backend or feature that is not available */
    TRIDI_ERROR_ALIASING = 5,       /* the answer overlaps an input in a way that is not allowed */
    TRIDI_ERROR_ZERO_PIVOT = 6,     /* a pivot of the elimination is exactly zero (line and cell named) */
    TRIDI_ERROR_NONFINITE = 7,      /* an Inf/NaN met during the solve (line and cell named) */
    TRIDI_ERROR_NO_DEVICE = 8,      /* the CUDA backend was asked for and no usable GPU is present */
    TRIDI_ERROR_OUT_OF_MEMORY = 9,  /* host or device memory could not be allocated */
    TRIDI_ERROR_CUDA = 10,          /* a CUDA runtime error; the message carries CUDA's text */
    TRIDI_ERROR_MPI = 11,           /* an MPI error; the message carries MPI's text */
    TRIDI_ERROR_MISMATCH = 12,      /* MPI ranks disagree (grid, halo widths, transport) */
    TRIDI_ERROR_INVALID_HANDLE = 13,/* a context or other handle that is NULL or already destroyed */
    TRIDI_ERROR_INTERNAL = 14,      /* a bug in tridi: please report it with the message */
    TRIDI_ERROR_UNSTABLE = 15       /* pivoting = TRIDI_PIVOT_CHECK (or a FALLBACK that could not help): the
                                       pivot growth of some lines makes their answer untrustworthy (first
                                       line and cell named, with how many lines) */
} tridi_status;

/* ---------------------------------------------------------------------------------------------------
 * The solve contract a caller chooses (issue "One solve pipeline"; docs/errors.md).
 * ------------------------------------------------------------------------------------------------- */
/* What a numerical failure (zero pivot, non-finite value) does to x. */
typedef enum tridi_on_error {
    TRIDI_ON_ERROR_LINES = 0, /* a failing line is left untouched, every other line gets its answer */
    TRIDI_ON_ERROR_CALL = 1   /* all or nothing: x unchanged if any line fails (costs an undo log) */
} tridi_on_error;

/* Which arithmetic a solve may use. The MOHID ones are MOHID's operations in MOHID's order, bit for bit on
 * every CPU kernel and ISA: two divisions per unknown, no fused multiply-add, pivots, W and G in double,
 * each answer rounded to its type before it feeds the unknown above (docs/errors.md, "What bit for bit
 * covers"). */
typedef enum tridi_arith {
    TRIDI_ARITH_DEFAULT = 0,      /* MOHID for the mixed type, FAST for all-float and all-double arrays */
    TRIDI_ARITH_MOHID = 1,        /* MOHID's THOMAS routines (pivot in double): bit for bit MOHID */
    TRIDI_ARITH_FAST = 2,         /* any algorithm within the accuracy bound stated in docs/errors.md */
    TRIDI_ARITH_MOHID_NEWTYPE = 3 /* MOHID's *_NewType routines: the pivot rounded to upper's type (float
                                     for float upper, then W = -upper/pivot divided in float); the same as
                                     _MOHID for double upper. CPU and CUDA backends */
} tridi_arith;

/* When device solves report their numerical verdict. */
typedef enum tridi_verdict {
    TRIDI_VERDICT_SYNC = 0,    /* the call returns the numerical status */
    TRIDI_VERDICT_DEFERRED = 1 /* only enqueued; failures reported by the next status/synchronize call */
} tridi_verdict;

/* What a solve does about pivot growth (no pivoting is stable only for the matrices docs/errors.md
 * lists: diagonally dominant, symmetric positive definite, M-matrices). Host arrays only for now: a
 * device solve with pivoting other than NONE gives TRIDI_ERROR_UNSUPPORTED. */
typedef enum tridi_pivoting {
    TRIDI_PIVOT_NONE = 0,     /* Thomas as it is: only an exactly zero pivot is reported */
    TRIDI_PIVOT_CHECK = 1,    /* after the solve, measure each line's pivot growth; lines past the threshold
                                 give TRIDI_ERROR_UNSTABLE (x as on any failure) */
    TRIDI_PIVOT_FALLBACK = 2  /* those lines, and zero-pivot lines, re-solved with partial pivoting (LAPACK
                                 gtsv-style); only a singular line still fails */
} tridi_pivoting;

/* Static name of a status ("TRIDI_ERROR_BOUNDS", ...). Never NULL. */
TRIDI_API const char *tridi_status_name(tridi_status status);

/* Message of the last failed call made by this thread (thread-local; "" if none failed yet). It names
 * the function, the argument, index, line or cell at fault. Valid until the next failing call. */
TRIDI_API const char *tridi_error_message(void);

/* Cell of the last numerical failure (ZERO_PIVOT / NONFINITE) in this thread: writes its Fortran
 * indices to cell[0..2] (unused axes 0) and returns the rank (2 or 3); returns 0 if the last failure
 * was not numerical. */
TRIDI_API int tridi_error_cell(int64_t cell[3]);

/* Records a failure found by a layer built on tridi (the Fortran modules, the MOHID adapter) in this
 * thread's error record, so that tridi_error_message() returns message (truncated to 1023 bytes; NULL
 * records ""). Returns status. tridi_error_cell() keeps the cell of the last numerical failure when status
 * is TRIDI_ERROR_ZERO_PIVOT or TRIDI_ERROR_NONFINITE (a layer passing that failure on in its own words)
 * and returns 0 otherwise. One store for every layer: a caller never has to know which layer failed. */
TRIDI_API tridi_status tridi_record_error(tridi_status status, const char *message);

/* Library version, "MAJOR.MINOR.PATCH" and numbers. */
TRIDI_API const char *tridi_version_string(void);
TRIDI_API void tridi_version(int *major, int *minor, int *patch);

/* What this build of tridi contains, as opposed to what the machine has: a build without CUDA says
 * cuda = 0 (TRIDI_BACKEND_CUDA can never work), a build with CUDA on a machine without a usable GPU says
 * cuda = 1 and cuda_devices = 0. Set size = sizeof(tridi_build_info) before the call; fields past a
 * smaller size are not written (so the struct can grow). */
typedef struct tridi_build_info {
    size_t size;                  /* sizeof(tridi_build_info), set by the caller */
    int openmp;                   /* the CPU backend's OpenMP version (_OPENMP, e.g. 201511); 0 without */
    int cuda;                     /* 1: the CUDA backend is compiled in */
    char cuda_architectures[64];  /* the architectures it was compiled for, comma-separated ("90",
                                     "80,90"); "" without CUDA */
    int cuda_devices;             /* usable CUDA devices now (asks the driver); -1 without CUDA */
    int mpi;                      /* 1: the MPI layer (tridi_mpi.h) is compiled in */
    int nccl;                     /* 1: the NCCL transport of device halos is compiled in */
    int fortran;                  /* 1: the Fortran modules (tridi::fortran) were built with it */
    int fault_injection;          /* 1: a test build with the CUDA failed-launch hook (never a release) */
} tridi_build_info;

/* Fills info (see tridi_build_info). TRIDI_ERROR_NULL_POINTER for a NULL info, INVALID_VALUE for a
 * size too small to hold any field. */
TRIDI_API tridi_status tridi_get_build_info(tridi_build_info *info);
/* The same as one static line, e.g. "tridi 0.1.0: cpu (OpenMP 201511), cuda (sm 90), mpi (halos: host,
 * ipc, cuda-aware, staged, nccl), fortran". Never NULL; it does not ask the driver. */
TRIDI_API const char *tridi_build_info_string(void);

/* ---------------------------------------------------------------------------------------------------
 * Context: which backend, which device, how many threads. Create one per device and per thread that
 * calls tridi concurrently (a context is not thread-safe; distinct contexts are). A context and the
 * plans and ADI plans made with it are used by one thread at a time: a solve (tridi_solve,
 * tridi_solve_device, tridi_plan_solve, tridi_adi_step, tridi_adi_sweep, tridi_mpi_solve*) made while
 * another call is solving on the same context is refused with TRIDI_ERROR_INVALID_VALUE ("... in use
 * by another call ...", naming the plan), never run alongside it (docs/decisions/045).
 * ------------------------------------------------------------------------------------------------- */
typedef struct tridi_context_s *tridi_context;

typedef enum tridi_backend {
    TRIDI_BACKEND_AUTO = 0, /* the GPU when one is usable, else the CPU (says which once, see verbose) */
    TRIDI_BACKEND_CPU = 1,  /* OpenMP across lines, vectorised across neighbouring lines */
    TRIDI_BACKEND_CUDA = 2  /* one system per CUDA thread; TRIDI_ERROR_NO_DEVICE without a GPU */
} tridi_backend;

typedef struct tridi_config {
    size_t size;             /* sizeof(tridi_config); set by tridi_config_init (lets the struct grow) */
    tridi_backend backend;   /* (default: TRIDI_BACKEND_AUTO, or the TRIDI_BACKEND environment variable:
                                auto / cpu / cuda) */
    int device;              /* CUDA device ordinal (default: 0) */
    int num_threads;         /* OpenMP threads of the CPU backend; 0 = OpenMP's default (default: 0);
                                more than the processors OpenMP reports (or its thread limit) is capped
                                there (verbose says so) */
    int verbose;             /* 1: print the chosen backend to stderr once at creation (default: 0) */
    int allow_f32_transfer;  /* 1: host-array GPU solves may move double inputs as float over PCIe,
                                halving their transfer; results then carry float rounding (default: 0) */
    int pivoting;            /* a tridi_pivoting: what host-array solves do about lines Thomas's elimination
                                without pivoting cannot be trusted on (default: TRIDI_PIVOT_NONE) */
    int on_error;            /* a tridi_on_error: what a numerical failure does to x in tridi_solve and
                                tridi_solve_device (plans take theirs from tridi_solve_options).
                                TRIDI_ON_ERROR_LINES: a failing line is left untouched, every other line is
                                answered; TRIDI_ON_ERROR_CALL: x unchanged if any line fails, which costs an
                                undo log or a second pass over the answers (docs/errors.md)
                                (default: TRIDI_ON_ERROR_LINES) */
} tridi_config;

TRIDI_API void tridi_config_init(tridi_config *config);

/* config may be NULL (defaults). The environment knobs (docs/tuning.md) are read here, once, into the
 * context: a value a knob does not take gives TRIDI_ERROR_INVALID_VALUE naming the variable. On failure
 * *ctx is set to NULL. */
TRIDI_API tridi_status tridi_create(tridi_context *ctx, const tridi_config *config);
/* Releases every buffer; NULL is accepted and ignored. */
TRIDI_API tridi_status tridi_destroy(tridi_context ctx);
/* The backend actually in use (AUTO resolved to CPU or CUDA). */
TRIDI_API tridi_status tridi_get_backend(tridi_context ctx, tridi_backend *backend);
/* Static name of a backend ("cpu", "cuda", "auto"). */
TRIDI_API const char *tridi_backend_name(tridi_backend backend);

/* ---------------------------------------------------------------------------------------------------
 * Geometry and arrays.
 * ------------------------------------------------------------------------------------------------- */
typedef enum tridi_axis {
    TRIDI_AXIS_X = 0, /* lines along i (contiguous in memory) */
    TRIDI_AXIS_Y = 1, /* lines along j */
    TRIDI_AXIS_Z = 2  /* lines along k (3D only) */
} tridi_axis;

typedef enum tridi_dtype {
    TRIDI_FLOAT32 = 0, /* C float, Fortran real(4) */
    TRIDI_FLOAT64 = 1  /* C double, Fortran real(8) */
} tridi_dtype;

/* Allocated shape shared by all arrays of a solve. Axis 0 is contiguous. For ndim == 2 entries [2]
 * are ignored. The extent ubound-lbound+1 of every axis must be >= 1. */
typedef struct tridi_grid {
    int ndim;            /* 2 or 3 */
    int64_t lbound[3];   /* allocated lower bound of each axis (Fortran lbound) */
    int64_t ubound[3];   /* allocated upper bound of each axis, inclusive (Fortran ubound) */
} tridi_grid;

/* The five arrays of a solve with their storage types. Supported combinations:
 *   all TRIDI_FLOAT32; all TRIDI_FLOAT64; MOHID's mix: diag TRIDI_FLOAT64, the others TRIDI_FLOAT32. */
typedef struct tridi_arrays {
    const void *lower; tridi_dtype lower_type;  /* sub-diagonal (MOHID D)   */
    const void *diag;  tridi_dtype diag_type;   /* main diagonal (MOHID E)  */
    const void *upper; tridi_dtype upper_type;  /* super-diagonal (MOHID F) */
    const void *rhs;   tridi_dtype rhs_type;    /* right-hand side (MOHID Ti) */
    void *x;           tridi_dtype x_type;      /* answer (MOHID ANSWER / RES) */
} tridi_arrays;

/* Which of the five arrays (for per-array uploads). */
typedef enum tridi_array_role {
    TRIDI_ROLE_LOWER = 0,
    TRIDI_ROLE_DIAG = 1,
    TRIDI_ROLE_UPPER = 2,
    TRIDI_ROLE_RHS = 3,
    TRIDI_ROLE_X = 4
} tridi_array_role;

/* ---------------------------------------------------------------------------------------------------
 * Solves on host arrays (the caller's own grid arrays). On the CUDA backend the box is moved by DMA
 * straight from/to arrays registered with tridi_host_register, through pinned staging otherwise; device
 * buffers are kept between calls of the same shape, and the work is pipelined in slabs.
 * lo/hi: inclusive box, Fortran indices; a box empty along any used axis (hi < lo) is a no-op success.
 * ------------------------------------------------------------------------------------------------- */
TRIDI_API tridi_status tridi_solve(tridi_context ctx, const tridi_grid *grid, tridi_axis axis,
                         const int64_t lo[3], const int64_t hi[3], const tridi_arrays *arrays);

/* Starts moving one input array's box to the device now, so the transfer overlaps the caller's work
 * (for instance assembling the next diagonal). Call it as soon as that array is final; the next
 * tridi_solve with the same grid, axis, box and this pointer and type uses the uploaded copy and waits
 * only on the transfers it needs. The array must not change, nor be freed, until that solve returns (or
 * tridi_destroy, or a solve that does not use the upload); after it tridi never reads the array again.
 * Arrays not uploaded are moved by the solve itself. The call queues the work and returns: an array
 * registered with tridi_host_register goes by DMA, any other is first copied into pinned staging by tridi's
 * own threads, in the order of the transfers, while the caller goes on. On the CPU backend this validates
 * and returns SUCCESS. */
TRIDI_API tridi_status tridi_upload_async(tridi_context ctx, const tridi_grid *grid, tridi_axis axis,
                                const int64_t lo[3], const int64_t hi[3], tridi_array_role role,
                                const void *host, tridi_dtype type);

/* Page-locks the caller's host memory [ptr, ptr + bytes) for this context, so that host-array solves
 * and uploads move the box of every array lying wholly inside it by DMA straight from/to the array:
 * no packing on the host, and tridi_upload_async only queues the transfer and returns. Register the
 * model's long-lived arrays once (whole arrays: the allocated grid); arrays not registered keep working
 * through pinned staging. Ranges may not overlap one already registered on this context (an exact
 * duplicate is refused too). Memory that is already page-locked by the caller (cudaHostAlloc, or its own
 * cudaHostRegister) is accepted and used in place; tridi then leaves its unlocking to the caller.
 *
 * UNREGISTER BEFORE FREEING the memory: a registration outliving the allocation would let a later
 * allocation at the same address be moved through the stale registration (wrong data, no error).
 * tridi_destroy unregisters every range of the context. On the CPU backend registration is validated and
 * recorded (the same errors as on the GPU) but pins nothing. */
TRIDI_API tridi_status tridi_host_register(tridi_context ctx, const void *ptr, size_t bytes);
/* ptr: the pointer given to tridi_host_register. Waits for the context's transfers first. */
TRIDI_API tridi_status tridi_host_unregister(tridi_context ctx, const void *ptr);

/* ---------------------------------------------------------------------------------------------------
 * Device-resident data (CUDA backend): arrays that stay on the GPU between calls. Pointers are device
 * pointers with the same grid layout as host arrays. stream is a cudaStream_t passed as void*; NULL
 * uses the context's own stream. The call returns once the work is queued; errors of the numerical
 * kind are reported by tridi_synchronize (or the next call on the context).
 * ------------------------------------------------------------------------------------------------- */
TRIDI_API tridi_status tridi_solve_device(tridi_context ctx, const tridi_grid *grid, tridi_axis axis,
                                const int64_t lo[3], const int64_t hi[3],
                                const tridi_arrays *device_arrays, void *stream);

/* Device memory owned by the context's device, so C and Fortran callers need no CUDA headers. */
TRIDI_API tridi_status tridi_device_alloc(tridi_context ctx, size_t bytes, void **device_ptr);
TRIDI_API tridi_status tridi_device_free(tridi_context ctx, void *device_ptr);
TRIDI_API tridi_status tridi_copy_to_device(tridi_context ctx, void *device_dst, const void *host_src, size_t bytes);
TRIDI_API tridi_status tridi_copy_to_host(tridi_context ctx, void *host_dst, const void *device_src, size_t bytes);
/* Waits for all work queued on the context; reports any deferred error. SUCCESS on the CPU backend. */
TRIDI_API tridi_status tridi_synchronize(tridi_context ctx);

/* ---------------------------------------------------------------------------------------------------
 * Plans: a solve made once for one grid, axis, box and type combination, then run many times.
 *
 * A plan validates its geometry and types once and owns what its solves need on its backend (on the
 * CUDA backend: the kernel choice for that shape). tridi_solve and tridi_solve_device are convenience
 * calls with the contract of the first lines of this header (the context's on_error, TRIDI_ON_ERROR_LINES
 * unless tridi_config says otherwise; MOHID arithmetic; device solves deferred); a plan lets the caller
 * choose every part of it (tridi_solve_options).
 * ------------------------------------------------------------------------------------------------- */
typedef struct tridi_plan_s *tridi_plan;

/* Where arrays live (tridi_plan_solve's, and the MPI layer's halos in tridi_mpi.h). */
typedef enum tridi_memory {
    TRIDI_MEMORY_HOST = 0,  /* host arrays (tridi_solve's; the CPU backend takes only these) */
    TRIDI_MEMORY_DEVICE = 1 /* device pointers (tridi_solve_device's; CUDA backend only) */
} tridi_memory;

typedef struct tridi_solve_options {
    size_t size;             /* sizeof(tridi_solve_options); set by tridi_solve_options_init */
    tridi_on_error on_error; /* (default: TRIDI_ON_ERROR_LINES) */
    tridi_arith arith;       /* (default: TRIDI_ARITH_DEFAULT: MOHID for the mixed type, FAST otherwise) */
    tridi_verdict verdict;   /* device plans only; host plans always return the numerical status
                                (default: TRIDI_VERDICT_SYNC) */
    tridi_memory memory;     /* (default: TRIDI_MEMORY_HOST) */
    void *stream;            /* device plans: cudaStream_t as void*, NULL = the context's own stream;
                                solves on it can be captured in a CUDA graph under ON_ERROR_LINES with a
                                DEFERRED verdict (docs/api.md) (default: NULL) */
} tridi_solve_options;

TRIDI_API void tridi_solve_options_init(tridi_solve_options *options);

/* types: the storage types of lower, diag, upper, rhs and x (in that order; a combination tridi_arrays
 * accepts). options may be NULL (defaults). The context must outlive the plan: tridi_destroy refuses
 * while a plan made with it is alive. On failure *plan is set to NULL. A box empty along a used axis
 * gives a plan whose solves are no-op successes. */
TRIDI_API tridi_status tridi_plan_create(tridi_context ctx, const tridi_grid *grid, tridi_axis axis,
                                         const int64_t lo[3], const int64_t hi[3], const tridi_dtype types[5],
                                         const tridi_solve_options *options, tridi_plan *plan);
/* Solves the plan's box on arrays of the plan's grid and types (host or device pointers as the plan's
 * memory says; TRIDI_ERROR_INVALID_VALUE naming the array whose type differs from the plan's). Argument
 * errors are always returned at once; numerical ones as the plan's verdict says. */
TRIDI_API tridi_status tridi_plan_solve(tridi_plan plan, const tridi_arrays *arrays);
/* Waits for the plan's queued device solves and reports the first numerical failure among the context's
 * deferred solves (naming the call, line and cell; the cell is found from the inputs, so keep the failing
 * call's inputs unchanged until then, or the line alone is named). SUCCESS on host plans. */
TRIDI_API tridi_status tridi_plan_status(tridi_plan plan);
/* Waits for the plan's queued work, then frees it. NULL is accepted and ignored; a destroyed plan gives
 * TRIDI_ERROR_INVALID_HANDLE. */
TRIDI_API tridi_status tridi_plan_destroy(tridi_plan plan);

/* ===================================================================================================
 * ADI steps (src/adi_*.c, cuda/adi_stage.cu, cuda/adi/; docs/adi.md).
 *
 * A plan holds one grid, one box of unknowns, one storage type and one operator, plus the work arrays
 * of a step. tridi_adi_step advances a field by dt with implicit sweeps x, y (and z): the diagonals
 * are assembled and solved by tridi (on the GPU one fused kernel per sweep, docs/decisions/025); on the
 * CUDA backend every array is a device pointer and nothing returns to the host during a step.
 *
 * Operator, per implicit axis a with uniform spacing h_a, in flux form on the cells of the box:
 *   (L_a u)_m = [K_{m+1/2} (u_{m+1} - u_m) - K_{m-1/2} (u_m - u_{m-1})] / h_a^2 - [Q_{m+1/2} - Q_{m-1/2}] / h_a
 *   K at a face: harmonic (default) or arithmetic mean of the diffusivity of its two cells;
 *   Q at a face: first-order upwind flux V u_upwind with V the mean velocity of the two cells.
 * Boundaries, per axis and side: TRIDI_ADI_DIRICHLET takes the value held in the field's halo cell next
 * to the box (the field's cells outside the box are never written); TRIDI_ADI_ZERO_FLUX closes the face.
 * ================================================================================================= */
typedef struct tridi_adi_s *tridi_adi;

typedef enum tridi_adi_scheme {
    TRIDI_ADI_DOUGLAS = 0,          /* Douglas (theta-weighted; theta = 1/2: second order), 2 or 3 axes */
    TRIDI_ADI_PEACEMAN_RACHFORD = 1 /* Peaceman-Rachford half steps x then y, 2 axes only */
} tridi_adi_scheme;

typedef enum tridi_adi_bc {
    TRIDI_ADI_DIRICHLET = 0, /* the value of the halo cell next to the box; needs that halo cell allocated */
    TRIDI_ADI_ZERO_FLUX = 1  /* no diffusive or advective flux through the box's face */
} tridi_adi_bc;

typedef enum tridi_adi_mean {
    TRIDI_ADI_HARMONIC = 0,  /* 2 k1 k2 / (k1 + k2): the series conductance of two cells (0 if both are 0) */
    TRIDI_ADI_ARITHMETIC = 1 /* (k1 + k2) / 2 */
} tridi_adi_mean;

typedef struct tridi_adi_operator {
    size_t size;              /* sizeof(tridi_adi_operator); set by tridi_adi_operator_init */
    tridi_adi_scheme scheme;  /* (default: TRIDI_ADI_DOUGLAS) */
    int naxes;                /* implicit axes: 2 = x, y (on a 3D grid: each k layer); 3 = x, y, z
                                 (default: the grid's ndim) */
    double theta;             /* Douglas implicit weight, 0.5..1 (default: 0.5) */
    double spacing[3];        /* cell size h per axis, > 0 (default: 1) */
    double kappa;             /* diffusivity when kappa_field is NULL, >= 0 (default: 1) */
    const void *kappa_field;  /* diffusivity per cell, >= 0, grid-shaped in the plan's type; read at every
                                 step over the box and the halo cells of Dirichlet sides (default: NULL) */
    tridi_adi_mean mean;      /* face diffusivity (default: TRIDI_ADI_HARMONIC) */
    const void *velocity[3];  /* cell velocity per axis for upwind advection, grid-shaped in the plan's
                                 type, read like kappa_field; NULL: none along that axis (default: NULL) */
    tridi_adi_bc bc_lo[3];    /* boundary at the box's low side per axis (default: DIRICHLET) */
    tridi_adi_bc bc_hi[3];    /* boundary at the box's high side per axis (default: DIRICHLET) */
    int profile;              /* 1: time each sweep (tridi_adi_timings); on the GPU this waits for the
                                 stream at the end of every step (default: 0) */
} tridi_adi_operator;

TRIDI_API void tridi_adi_operator_init(tridi_adi_operator *op);

/* Arrays given in op (kappa_field, velocity) and to the calls below are host arrays on the CPU
 * backend and device pointers on the CUDA backend. The plan keeps op's pointers, not their values:
 * the model may change those fields between steps. The context must outlive the plan: tridi_destroy
 * refuses (TRIDI_ERROR_INVALID_VALUE, context unchanged) while a plan made with it is alive. */
TRIDI_API tridi_status tridi_adi_create(tridi_adi *plan, tridi_context ctx, const tridi_grid *grid, const int64_t lo[3],
                              const int64_t hi[3], tridi_dtype dtype, const tridi_adi_operator *op);
/* NULL is accepted and ignored. */
TRIDI_API tridi_status tridi_adi_destroy(tridi_adi plan);

/* One step of length dt > 0 on field (grid-shaped, the plan's type), in place: only the box is
 * written, and only when every sweep succeeded (one exception on the GPU's fused path: a failure that
 * first appears in the last sweep, an overflow near the type's largest value, leaves that sweep's other
 * lines answered; docs/decisions/026). stream: cudaStream_t as void*, or NULL for the plan's own
 * stream; ignored on the CPU. On the CUDA backend the call returns once the work is queued; a fused
 * step can be captured in a CUDA graph. */
TRIDI_API tridi_status tridi_adi_step(tridi_adi plan, void *field, double dt, void *stream);

/* One sweep with the caller's own diagonals (the model's path): solves along axis over the plan's
 * box, with the plan's grid and type, on the plan's backend. x may be rhs itself. */
TRIDI_API tridi_status tridi_adi_sweep(tridi_adi plan, tridi_axis axis, const void *lower, const void *diag,
                             const void *upper, const void *rhs, void *x, void *stream);

/* Waits for the plan's stream and its latest step and reports deferred errors (SUCCESS on the CPU): the
 * first failure of a fused step, naming the sweep, line and cell (the plan's later steps did nothing
 * until this call), or of a staged step's solves. */
TRIDI_API tridi_status tridi_adi_synchronize(tridi_adi plan);

/* With op.profile = 1: milliseconds spent in the sweeps of each axis (assembly + solve) summed over
 * the steps so far, and the number of steps. Entries of axes the plan does not sweep are 0. */
TRIDI_API tridi_status tridi_adi_timings(tridi_adi plan, double sweep_ms[3], int64_t *steps);

#ifdef __cplusplus
}
#endif

#endif /* TRIDI_H */
