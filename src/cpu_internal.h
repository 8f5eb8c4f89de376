/* The OpenMP CPU backend's parts and what they share: cpu_solve.c (the call, its threads and its guard:
 * undo log or block save, fast path then careful path), cpu_plan.c (the blocks of a call, its scratch),
 * cpu_blocks.c and cpu_kernels.c (the loops around src/thomas_core.h's steps: vector blocks; FAST's float
 * blocks, AVX-512 x tiles, one line). */
#ifndef TRIDI_CPU_INTERNAL_H
#define TRIDI_CPU_INTERNAL_H

#include "thomas_core.h"
#include "tridi_internal.h"

#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define TRIDI_CPU_BLOCK 64
#define TRIDI_CPU_BLOCK_X 16
/* The per-share block counters sit a cache line apart (threads take blocks from them concurrently). */
#define TRIDI_CPU_TAKEN_PAD 8
/* Compile-time tuning knobs, set from a same-run sweep on a 16-core host (see docs/decisions/008).
 * Bytes a y/z block's W and G may take: 8 MiB lets a y block span a whole row of lines on grids up to
 * ~900 unknowns per line (one long contiguous row per unknown, W and G in L3), which beat blocks sized
 * for L2 (0.5, 1 and 2 MiB) at 560x560x56. */
#ifndef TRIDI_CPU_WG_BUDGET
#define TRIDI_CPU_WG_BUDGET (8 * 1024 * 1024)
#endif
/* Software prefetch distances: unknowns ahead along an x row (16, 32, 64, 128, 256 tried), rows ahead
 * in a y/z block (none, 2, 4, 8, 16, 32 tried: none and 16-32 slower than 8; decision 008). */
#ifndef TRIDI_CPU_PREFETCH_X
#define TRIDI_CPU_PREFETCH_X 16
#endif
#ifndef TRIDI_CPU_PREFETCH_YZ
#define TRIDI_CPU_PREFETCH_YZ 8
#endif

/* The recurrence is division-bound: compile the block kernels for AVX-512 and AVX2 too and let the
 * loader pick the widest the machine has (GCC/Clang function multiversioning), instead of building the
 * whole library for the build machine's CPU. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(TRIDI_NO_CLONES) && \
    !defined(__SANITIZE_ADDRESS__)
#define TRIDI_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define TRIDI_VECTOR_CLONES
#endif

/* AVX-512 x tiles (cpu_kernels.c): x86-64 with GCC or Clang, not in AddressSanitizer builds (which make no
 * clones either). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(TRIDI_NO_CLONES) && \
    !defined(__SANITIZE_ADDRESS__)
#define TRIDI_HAVE_AVX512_X 1
#endif

/* A failing line of a block: its place in the block and the core's record (src/thomas_core.h). */
typedef struct block_failure {
    int64_t line_in_block; /* -1: none */
    tridi_thomas_fail f;
} block_failure;

/* Prefetches `bytes` from p into L2. */
static inline void prefetch_run(const void *p, size_t bytes)
{
    const char *c = (const char *)((uintptr_t)p & ~(uintptr_t)63), *end = (const char *)p + bytes;
    for (; c < end; c += 64)
        __builtin_prefetch(c, 0, 2);
}

/* Copies `bytes` (a multiple of 4; dst 16-byte aligned) bypassing the caches where the ISA allows: the
 * undo log is written once and read back only after a failure, so it should not evict the working set. */
static inline void stream_copy(void *dst, const void *src, size_t bytes)
{
#if defined(__SSE2__)
    char *d = dst;
    const char *s = src;
    size_t i = 0;
    for (; i + 16 <= bytes; i += 16)
        _mm_stream_si128((__m128i *)(d + i), _mm_loadu_si128((const __m128i *)(s + i)));
    for (; i < bytes; i += 4) {
        int v;
        memcpy(&v, s + i, 4);
        _mm_stream_si32((int *)(d + i), v);
    }
#else
    memcpy(dst, src, bytes);
#endif
}

static inline void stream_fence(void)
{
#if defined(__SSE2__)
    _mm_sfence();
#endif
}


/* The block kernels' form of the step for p (src/thomas_core.h): MOHID's divisions, MOHID's NewType
 * float pivot, FAST's reciprocal. */
static inline int tridi_cpu_kernel_arith(const tridi_problem *p)
{
    return p->arith == TRIDI_ARITH_FAST     ? TRIDI_FORM_RCP
           : tridi_newtype_pivot_f32(p) ? TRIDI_FORM_NEWTYPE
                                        : TRIDI_FORM_DIV;
}

/* How a call is cut into blocks, and the undo log's shape. Each thread takes an equal share of the
 * lines, [t*N/T, (t+1)*N/T), cut into blocks of at most L lines (at row ends too, except for the AVX-512
 * x sweep, whose blocks run over consecutive line numbers). Whole blocks dealt out by OpenMP's static
 * schedule left threads idle: y sweeps of one block per k plane on 16 threads (56 blocks) ran 4 blocks on
 * half the threads and 3 on the rest. */
typedef struct cpu_block {
    int64_t line0, Lb;
} cpu_block;

typedef struct cpu_plan {
    int x512;            /* x sweep through the AVX-512 kernels */
    int64_t L;           /* lines per block, at most */
    int row_cut;         /* blocks end at row ends (every n1 lines): their lines are one contiguous run */
    int nthreads;
    int64_t nblocks;
    cpu_block *blocks;   /* share t's blocks are blocks[first[t] .. first[t+1]-1] */
    int64_t *first;
    int64_t *taken;      /* taken[t * TRIDI_CPU_TAKEN_PAD]: blocks of share t handed out so far */
    int64_t log_rows;    /* per block: x lines (x sweeps) or unknowns (y/z) */
    int64_t log_pitch;   /* elements per log row: the row's length padded to 64 bytes */
    int64_t npad;        /* unknowns per line rounded up to 8 (rows of W and G) */
} cpu_plan;

/* Where a block's old x goes before the fast path overwrites it. Under ON_ERROR_CALL: its place in the
 * call's undo log, streamed (kept until every line of the call is known good); `written` marks the
 * blocks to restore. Under ON_ERROR_LINES: the thread's own save, reused block after block and so kept
 * in cache, only to put back the lines of this block that the careful path then finds failing (no
 * call-wide log: docs/decisions/007). */
typedef struct block_save {
    char *at;
    int lines;
} block_save;

/* A call's scratch, one allocation kept by the context: per-thread workspaces, the undo log (the old x
 * of every block, at a fixed place per block; ON_ERROR_CALL only), the block list, and one written flag
 * per block. The plan and these places follow from the problem, the thread count and the mode alone, so
 * that the rollback of a kept solve finds them again. */
typedef struct cpu_layout {
    cpu_plan c;
    int lines;
    size_t ws_bytes, log_bytes, need;
    char *log;              /* set by tridi_cpu_place() */
    unsigned char *written; /* set by tridi_cpu_place() */
} cpu_layout;

/* The rows of a 16-line x block (the AVX-512 kernels). */
typedef struct xrows {
    const char *in[4];   /* lower, diag, upper, rhs */
    int64_t row[16];     /* element offset of each line's first unknown; lines past the block repeat its last */
    const int64_t *next; /* the same for the next block (prefetched while this one ends), or NULL */
} xrows;

/* cpu_plan.c */
cpu_plan tridi_cpu_make_plan(const tridi_tuning *tuning, const tridi_problem *p, int nthreads);
int64_t tridi_cpu_thread_blocks(const tridi_problem *p, const cpu_plan *c, int t, cpu_block *out);
char *tridi_cpu_block_log_at(const cpu_plan *c, int64_t b, char *log, size_t es);
void tridi_cpu_block_log(const tridi_problem *p, const cpu_plan *c, int64_t b, char *lg, int save, int stream);
size_t tridi_cpu_block_save_bytes(const tridi_problem *p, const cpu_plan *c);
int tridi_cpu_threads_that_pay(const tridi_tuning *tuning, const tridi_problem *p, int requested);
cpu_layout tridi_cpu_layout_of(const tridi_tuning *tuning, const tridi_problem *p, int nthreads, int lines);
void tridi_cpu_place(cpu_layout *y, char *scratch);

/* cpu_blocks.c */
int tridi_cpu_forward_block(const tridi_problem *p, int mode, int t, const void *D, const void *E, const void *F,
                  const void *R, int64_t n, int64_t Lb, int64_t s, int64_t ls, int prefetch, double glim, double *W,
                  double *G, int *bounded);
int tridi_cpu_pipelined_block(const tridi_problem *p, int mode, const void *D, const void *E, const void *F,
                  const void *R, int64_t n, int64_t Lb, int64_t s, int64_t ls, double glim, double *W, double *G,
                  int *bounded, const double *bW, const double *bG, void *x, int64_t bLb, int64_t xs, char *log,
                  int64_t lp, int *back_bad);
int tridi_cpu_backward_f32(const double *W, const double *G, float *x, int64_t n, int64_t Lb, int64_t xs, char *log,
                 int64_t lp, int stream, int prefetch);
int tridi_cpu_backward_f64(const double *W, const double *G, double *x, int64_t n, int64_t Lb, int64_t xs, char *log,
                 int64_t lp, int stream, int prefetch);

/* cpu_kernels.c */
int tridi_cpu_x_avx512_usable(const tridi_tuning *tuning);
int tridi_cpu_solve_line(const tridi_problem *p, int64_t off, double *W, double *G, tridi_thomas_fail *out);
double tridi_cpu_bound_glim(int64_t n, int x_float);
int tridi_cpu_forward_fast(const float *D, const float *E, const float *F, const float *R, int64_t n, int64_t Lb,
                 int64_t s, float *W, float *G);
int tridi_cpu_backward_fast(const float *W, const float *G, float *x, int64_t n, int64_t Lb, int64_t xs, char *log,
                  int64_t lp, int stream);
void tridi_cpu_transpose_in(const void *src, tridi_dtype t, int64_t off, int64_t row, int64_t n, int64_t Lb, double *dst);
#ifdef TRIDI_HAVE_AVX512_X
int tridi_cpu_xforward16(const xrows *xr, tridi_combo combo, int mode, char *x, int64_t n, double *W, double *G,
               double *tile);
int tridi_cpu_xbackward16(const xrows *xr, char *x, int xdbl, int64_t Lb, int64_t n, double *W, const double *G);
#endif

#endif
