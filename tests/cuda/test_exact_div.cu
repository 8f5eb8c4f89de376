/* The device's shared-reciprocal division (tridi_exact_div2, src/thomas_core.h, decision 079; with its range
 * test asked of the first product too, decision 103) against __ddiv_rn, bit for bit: every quotient of MOHID's
 * arithmetic on the GPU goes through it. Quotients of random bit patterns, of significands scaled over the
 * whole exponent range (subnormal quotients and overflow included) and of special values (zeros, infinities,
 * NaN, subnormals, the fast path's own thresholds), N of them (argv[1], default 2^26; the device runs give
 * 2^33). The reference is computed by its own kernel, so no compiler can share its operations with the path
 * under test. Seed printed (TRIDI_SEED replays). Exits 77 without a GPU. */
#include "testutil.h"
#include "thomas_core.h"

#include <cuda_runtime.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>

static __device__ uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

static __device__ double special(uint64_t h)
{
    const uint64_t bits[] = {0x0000000000000000ULL, 0x8000000000000000ULL, 0x3ff0000000000000ULL, // 0, -0, 1
                             0x7ff0000000000000ULL, 0xfff0000000000000ULL, 0x7ff8000000000000ULL, // inf, -inf, NaN
                             0x0000000000000001ULL, 0x800fffffffffffffULL, 0x0010000000000000ULL, // subnormals, least normal
                             0x7fefffffffffffffULL, 0x3c9cd2b297d889bcULL, 0x3c9cd2b297d889bbULL, // largest, near 6.58e-37
                             0x37e0000000000000ULL, 0x380fffffffffffffULL, 0x4008000000000000ULL, // near float's least, 3
                             0x3fb999999999999aULL, 0x4000000000000000ULL, 0xc01921fb54442d18ULL,
                             0x7f80000000000000ULL, 0x7f7fffffffffffffULL, 0x3fe0000000000000ULL, // 2^1017 and under, 0.5
                             0x0020000000000000ULL, 0x001fffffffffffffULL, 0x7f70000000000000ULL, // decision 103's margins
                             0x7f6fffffffffffffULL};
    return __longlong_as_double((long long)bits[h % (sizeof bits / sizeof bits[0])]);
}

// One value of kind k (random bits, a significand scaled over the whole exponent range, specials mixed
// with bits) from hash h.
static __device__ double value(int k, uint64_t h)
{
    if (k == 0)
        return __longlong_as_double((long long)h);
    if (k == 1)
        return ldexp(__longlong_as_double((long long)((h & 0x800fffffffffffffULL) | (1023ULL << 52))),
                     (int)((h >> 53) % 2200) - 1100);
    return (h & 3) ? special(h >> 8) : __longlong_as_double((long long)h);
}

// Case i: two numerators over one divisor, all three of kind i % 3.
static __device__ void case_of(uint64_t seed, uint64_t i, double *a1, double *a2, double *b)
{
    const int k = (int)(i % 3);
    *a1 = value(k, mix(seed ^ (3 * i)));
    *a2 = value(k, mix(seed ^ (3 * i + 1) ^ 0x9e3779b97f4a7c15ULL));
    *b = value(k, mix(seed ^ (3 * i + 2) ^ 0x6a09e667f3bcc909ULL));
}

static __global__ void reference(uint64_t seed, uint64_t base, uint64_t n, double2 *q)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        double a1, a2, b;
        case_of(seed, base + i, &a1, &a2, &b);
        q[i] = make_double2(__ddiv_rn(a1, b), __ddiv_rn(a2, b));
    }
}

static __device__ bool same(double q, double r) { return __double_as_longlong(q) == __double_as_longlong(r); }

static __global__ void compare(uint64_t seed, uint64_t base, uint64_t n, const double2 *ref,
                               unsigned long long *differ, unsigned long long *first)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        double a1, a2, b, q1, q2;
        case_of(seed, base + i, &a1, &a2, &b);
        double p1, p2;
        tridi_exact_div2(a1, a2, b, &q1, &q2);
        tridi_exact_div2_tested(a1, a2, b, 1, &p1, &p2);
        const double2 r = ref[i];
        if (!(same(q1, r.x) && same(q2, r.y) && same(p1, r.x) && same(p2, r.y)) && atomicAdd(differ, 1ULL) == 0)
            *first = base + i;
    }
}

static int cuda_ok(cudaError_t e, const char *what)
{
    if (e != cudaSuccess)
        std::fprintf(stderr, "test_exact_div: %s: %s\n", what, cudaGetErrorString(e));
    return e == cudaSuccess;
}

int main(int argc, char **argv)
{
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        std::printf("test_exact_div: no GPU, skipped\n");
        return 77;
    }
    const uint64_t seed = tu_seed("test_exact_div");
    const uint64_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : (1ULL << 26);
    const uint64_t chunk = 1ULL << 25;
    double2 *ref = nullptr;
    unsigned long long *counts = nullptr; // differ, first differing case
    if (!cuda_ok(cudaMalloc(&ref, chunk * sizeof(double2)), "cudaMalloc") ||
        !cuda_ok(cudaMalloc(&counts, 2 * sizeof(unsigned long long)), "cudaMalloc") ||
        !cuda_ok(cudaMemset(counts, 0, 2 * sizeof(unsigned long long)), "cudaMemset"))
        return 1;
    for (uint64_t base = 0; base < n; base += chunk) {
        const uint64_t c = n - base < chunk ? n - base : chunk;
        reference<<<1024, 256>>>(seed, base, c, ref);
        compare<<<1024, 256>>>(seed, base, c, ref, counts, counts + 1);
    }
    unsigned long long h[2] = {0, 0};
    if (!cuda_ok(cudaMemcpy(h, counts, sizeof h, cudaMemcpyDeviceToHost), "kernels"))
        return 1;
    std::printf("test_exact_div: %" PRIu64 " cases (two quotients each over one divisor), %llu differ from __ddiv_rn", n, h[0]);
    if (h[0])
        std::printf(" (first: case %llu)", h[1]);
    std::printf("\n");
    cudaFree(ref);
    cudaFree(counts);
    return h[0] ? 1 : 0;
}
