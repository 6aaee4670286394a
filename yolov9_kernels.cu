/* yolov9_kernels.cu — the GPU backend: every op of yolov9.h's backend table
   on an NVIDIA GPU through CUDA, or an AMD one through HIP, with our own
   kernels (no cuDNN, no cuBLAS).

   Each kernel computes the same function as its CPU twin in yolov9.h
   (tests/test_cuda checks them one by one on random inputs of awkward
   shapes). Convolutions are implicit GEMMs: the im2col matrix is never
   built, the tile loaders gather it from the input on the fly.

   The file has three parts.
   1. The portable core: every kernel the model needs, in plain CUDA C++
      (no inline PTX, no architecture intrinsics, no driver API), for any
      CUDA toolkit from 11 on, any NVIDIA GPU from sm_60 on, and AMD GPUs
      through HIP (the vendor lines below). Its convolutions are tiled
      matrix products on the CUDA cores; in bf16 and half their operands
      are rounded on the way in, as the tensor cores' are, and summed in
      float32. A port starts here: this part alone passes every test
      (make TIER=portable builds it alone on any GPU).
   2. The tiers: the convolutions again, faster, on NVIDIA's tensor cores.
      Each tier is a section that says what it needs and what it replaces;
      the build chooses one (YOLO_TIER, set by the Makefile from
      CUDA_ARCH):
        75  Turing (sm_75: T4, RTX 20xx, GTX 16xx): half products by
            mma.sync m16n8k8 and ldmatrix, from NHWC copies of the
            operands (bf16 has no tensor cores there: its products stay
            on the CUDA cores);
        80  Ampere and later (sm_80, 86, 87, 89; Blackwell's sm_100 and
            sm_120 too): bf16 and half by mma.sync m16n8k16, the copies
            into shared memory asynchronous (cp.async);
        90  Hopper (sm_90a: H100, H200): warpgroup MMA (wgmma) and the
            copy engine (tensor maps), over the Ampere tier.
      A GPU runs the tier the build was made for, or the core where it
      lacks what the tier needs.
   3. Data parallel through NCCL (optional), and the backend table.

   Build: make (CUDA_ARCH=sm_75|sm_80|sm_86|sm_89|sm_90|sm_120, TIER=portable
   for the core alone, HIP=1 for AMD), or by hand: nvcc -O3 -std=c++17 -arch=sm_86 -c
   yolov9_kernels.cu (YOLO_TIER defaults to 80; -DYOLO_TIER=0 builds the
   core alone; -DYOLO_TIER=90 needs -gencode=arch=compute_90a,code=sm_90a),
   and link the object with a program; yolo_backend_cuda() then returns the
   table. Every CUDA call and launch is checked; YOLO_CUDA_SYNC=1 in the
   environment synchronises after each launch so an error names the kernel
   that caused it; YOLO_CUDA_GRAPHS=0 launches every op on its own, no
   CUDA graphs. */
#include "yolov9.h"

/* ------------------------------------------------------------------------ */
/* the vendor: CUDA, or HIP for AMD GPUs                                    */
/* ------------------------------------------------------------------------ */
/* The code speaks CUDA. hipcc (make HIP=1) builds the portable core for AMD
   GPUs: the runtime's calls are renamed to HIP's, one for one, and the few
   device functions HIP lacks or spells otherwise are defined here. An AMD
   wavefront is 64 lanes on CDNA (gfx90a: MI200) and 32 on RDNA (gfx1100):
   the core's one piece of warp-level code (warp_parts_sum) works in groups
   of 32 lanes whatever the hardware's width (shfl_down32 shuffles within
   such a group), so that it adds in the same order on every GPU. */
#if defined(__HIPCC__)
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#include <hip/hip_bfloat16.h>
#define cudaDevAttrComputeCapabilityMajor hipDeviceAttributeComputeCapabilityMajor
#define cudaDevAttrComputeCapabilityMinor hipDeviceAttributeComputeCapabilityMinor
#define cudaDeviceGetAttribute hipDeviceGetAttribute
#define cudaDeviceSynchronize hipDeviceSynchronize
#define cudaError_t hipError_t
#define cudaEventCreate hipEventCreate
#define cudaEventElapsedTime hipEventElapsedTime
#define cudaEventRecord hipEventRecord
#define cudaEventSynchronize hipEventSynchronize
#define cudaEvent_t hipEvent_t
#define cudaFree hipFree
#define cudaFuncAttributes hipFuncAttributes
#define cudaFuncGetAttributes hipFuncGetAttributes
#define cudaGetDeviceCount hipGetDeviceCount
#define cudaGetErrorString hipGetErrorString
#define cudaGetLastError hipGetLastError
#define cudaHostRegister hipHostRegister
#define cudaHostRegisterMapped hipHostRegisterMapped
#define cudaHostUnregister hipHostUnregister
#define cudaMalloc hipMalloc
#define cudaMemGetInfo hipMemGetInfo
#define cudaMemcpy hipMemcpy
#define cudaMemcpyAsync hipMemcpyAsync
#define cudaMemcpyDeviceToDevice hipMemcpyDeviceToDevice
#define cudaMemcpyDeviceToHost hipMemcpyDeviceToHost
#define cudaMemcpyHostToDevice hipMemcpyHostToDevice
#define cudaMemset hipMemset
#define cudaMemsetAsync hipMemsetAsync
#define cudaSetDevice hipSetDevice
#define cudaSuccess hipSuccess
/* bf16: ROCm's hip_bfloat16 (rounding to nearest even from float), under CUDA's names */
typedef hip_bfloat16 __nv_bfloat16;
__device__ inline __nv_bfloat16 __float2bfloat16_rn(float v) { return hip_bfloat16(v); }
__device__ inline float __bfloat162float(__nv_bfloat16 v) { return (float)v; }
__device__ inline __nv_bfloat16 __ldg(const __nv_bfloat16 *p) { return *p; }
/* a load that skips the L1: after the acquiring __threadfence (a device-scope fence, which invalidates the
   vector L1 on AMD GPUs) a plain load sees what other blocks wrote */
template <class T> __device__ inline T __ldcg(const T *p) { return *p; }
#define shfl_down32(v, o) __shfl_down((v), (o), 32)
/* where the device reads host memory p: p itself when it is registered (cu_pin) or device memory, NULL
   for other host memory (which HIP's pointer query refuses, where CUDA answers "unregistered") */
static const void *device_view(const void *p) {
    hipPointerAttribute_t at;
    if (hipPointerGetAttributes(&at, p) != hipSuccess) { (void)hipGetLastError(); return NULL; }
    return at.devicePointer;
}
#else
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#define shfl_down32(v, o) __shfl_down_sync(0xffffffffu, (v), (o))
static void cuda_check(cudaError_t e, const char *what, const char *file, int line);
static const void *device_view(const void *p) {
    cudaPointerAttributes at;
    cuda_check(cudaPointerGetAttributes(&at, p), "cudaPointerGetAttributes", __FILE__, __LINE__);
    return at.type == cudaMemoryTypeUnregistered ? NULL : at.devicePointer;
}
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* the tier                                                                 */
/* ------------------------------------------------------------------------ */
/* YOLO_TIER: the tier compiled in (0: the core alone; 75, 80, 90: see the
   top). DEVICE_TIER: in device code, the tier that the architecture being
   compiled for allows, at most YOLO_TIER (a build for several
   architectures compiles each kernel once for each, and its sm_75 pass
   must not emit cp.async); in host code, YOLO_TIER. */
#ifndef YOLO_TIER
#define YOLO_TIER 80
#endif
#if YOLO_TIER != 0 && YOLO_TIER != 75 && YOLO_TIER != 80 && YOLO_TIER != 90
#error "YOLO_TIER: 0 (the portable core), 75, 80 or 90"
#endif
#if defined(__HIPCC__) && YOLO_TIER != 0
#error "HIP builds the portable core alone: YOLO_TIER=0"
#endif
#if !defined(__CUDA_ARCH__)
#define DEVICE_TIER YOLO_TIER
#elif __CUDA_ARCH__ >= 900 && __CUDA_ARCH__ < 1000 && defined(__CUDA_ARCH_FEAT_SM90_ALL) && YOLO_TIER >= 90
#define DEVICE_TIER 90
#elif __CUDA_ARCH__ >= 800 && YOLO_TIER >= 80
#define DEVICE_TIER 80
#elif __CUDA_ARCH__ >= 750 && YOLO_TIER >= 75
#define DEVICE_TIER 75
#else
#define DEVICE_TIER 0
#endif
#if YOLO_TIER >= 90 && defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900 && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "the Hopper tier (YOLO_TIER 90) needs the sm_90a target: -gencode=arch=compute_90a,code=sm_90a"
#endif

/* ======================================================================== */
/* PART 1. THE PORTABLE CORE                                                */
/* ======================================================================== */

static int g_sync_each = 0;

static void cuda_check(cudaError_t e, const char *what, const char *file, int line) {
    if (e != cudaSuccess) {
        fprintf(stderr, "%s:%d: CUDA error in %s: %s\n", file, line, what, cudaGetErrorString(e));
        exit(1);
    }
}
#define CK(call) cuda_check((call), #call, __FILE__, __LINE__)
#define CK_LAUNCH(name)                                                      \
    do {                                                                     \
        cuda_check(cudaGetLastError(), name, __FILE__, __LINE__);            \
        if (g_sync_each) cuda_check(cudaDeviceSynchronize(), name, __FILE__, __LINE__); \
    } while (0)

static unsigned blocks_for(size_t n, int threads) { return (unsigned)((n + threads - 1) / threads); }
#define GRID_STRIDE(i, n) for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < (n); i += (size_t)gridDim.x * blockDim.x)
static unsigned grid_for(size_t n) { size_t b = blocks_for(n, 256); return (unsigned)(b > 65535u * 8 ? 65535u * 8 : (b ? b : 1)); }

/* ------------------------------------------------------------------------ */
/* memory                                                                   */
/* ------------------------------------------------------------------------ */

/* Device memory. A run first plans what it needs (yolo_plan_bytes) and
   reserves it in one cudaMalloc. The backend keeps the top
   YOLO_BACKEND_SCRATCH_BYTES of it for its own buffers (BatchNorm partial
   sums, the weight gradient's k-slices, the scratch buffer), taken
   once and never given back; every other allocation is placed in the rest by a yolo_arena, the
   same best-fit placement the planner ran, and a release gives the range
   back. Without a reservation, or when the arena is full, allocations
   fall back to cudaMalloc, and a warning says the plan was exceeded. The
   footprint (the arena's extent, the backend's own part, and anything
   outside) is what memory() reports as the peak. */
static char *g_base = NULL;            /* the reservation */
static size_t g_base_size = 0;
static yolo_arena g_arena;             /* places ranges in [0, g_arena.size) of it */
static size_t g_own = 0;               /* bytes of the top part the backend took for itself */
static size_t g_outside = 0, g_in_use = 0, g_peak = 0;
static int g_warned = 0;

static void account(void) {   /* the backend's part of a reservation is held from the start, used or not */
    size_t foot = g_arena.extent + (g_base ? YOLO_BACKEND_SCRATCH_BYTES : g_own) + g_outside;
    if (foot > g_peak) g_peak = foot;
}

static int cu_reserve(size_t bytes) {
    if (g_base) return -1;                  /* one reservation per run */
    bytes = yolo_arena_bytes(bytes);
    if (bytes < YOLO_BACKEND_SCRATCH_BYTES) bytes = YOLO_BACKEND_SCRATCH_BYTES;
    if (cudaMalloc((void **)&g_base, bytes) != cudaSuccess) { (void)cudaGetLastError(); g_base = NULL; return -1; }
    g_base_size = bytes;
    yolo_arena_init(&g_arena, bytes - YOLO_BACKEND_SCRATCH_BYTES);
    return 0;
}

static void prof_begin(void);   /* (below: profiling) */
static void prof_end(const char *name, double flops, double bytes);
static int graph_took(size_t off);   /* (below: graphs) */
static int graph_region(void);

/* a block of the arena, zeroed or not (a tensor's values: the op that makes them writes them all) */
static void *cu_take(size_t bytes, int zeroed) {
    size_t need = yolo_arena_bytes(bytes);
    size_t off = g_base ? yolo_arena_alloc(&g_arena, need) : YOLO_ARENA_FULL;
    if (off != YOLO_ARENA_FULL) {
        g_in_use += need;
        account();
        if (graph_took(off)) return g_base + off;   /* a replayed graph zeroes it */
        if (zeroed) {
            prof_begin();
            CK(cudaMemsetAsync(g_base + off, 0, need));
            prof_end("zero (allocation)", 0, (double)need);
        }
        return g_base + off;
    }
    if (graph_region()) {   /* cudaMalloc cannot be recorded, and its address would not repeat */
        fprintf(stderr, "yolov9: no free range of %zu bytes in the %.2f GB arena inside a graph's region (plan exceeded)\n",
                need, g_arena.size / 1e9);
        exit(1);
    }
    if (g_base && !g_warned) {
        fprintf(stderr, "yolov9: no free range of %zu bytes in the %.2f GB arena (plan exceeded); allocating outside it\n",
                need, g_arena.size / 1e9);
        g_warned = 1;
    }
    char *p = NULL;   /* outside the arena: the size sits in a 256-byte header in front */
    CK(cudaMalloc((void **)&p, need + 256));
    CK(cudaMemset(p, 0, need + 256));
    CK(cudaMemcpy(p, &need, sizeof need, cudaMemcpyHostToDevice));
    g_in_use += need; g_outside += need + 256;
    account();
    return p + 256;
}
static void *cu_alloc(size_t bytes) { return cu_take(bytes, 1); }
/* bytes a value of a store (yolo_tensor.store): a low-precision store takes two */
static size_t store_bytes(int store) { return store == YOLO_FP32 ? sizeof(float) : 2; }
static void *cu_alloc_values(size_t n, int store) { return cu_take(n * store_bytes(store), 0); }

/* the backend's own long-lived buffers: from the top of the reservation
   while it lasts (never released), else as any allocation */
static void *cu_own_alloc(size_t bytes) {
    size_t need = yolo_arena_bytes(bytes);
    if (g_base && g_own + need <= YOLO_BACKEND_SCRATCH_BYTES) {
        char *p = g_base + g_arena.size + g_own;
        g_own += need; g_in_use += need;
        account();
        CK(cudaMemsetAsync(p, 0, need));
        return p;
    }
    return cu_alloc(bytes);
}

static void cu_release(void *q) {
    if (!q) return;
    char *c = (char *)q;
    if (g_base && c >= g_base + g_arena.size && c < g_base + g_base_size) return;   /* the backend's own: kept */
    if (g_base && c >= g_base && c < g_base + g_arena.size) {
        size_t bytes = yolo_arena_release(&g_arena, (size_t)(c - g_base));
        if (!bytes) { fprintf(stderr, "yolov9: release of an unknown device block\n"); exit(1); }
        g_in_use -= bytes;
        return;
    }
    char *p = c - 256;
    size_t bytes;
    CK(cudaMemcpy(&bytes, p, sizeof bytes, cudaMemcpyDeviceToHost));
    g_in_use -= bytes; g_outside -= bytes + 256;
    CK(cudaFree(p));
}
static void cu_memory(size_t *in_use, size_t *peak) { *in_use = g_in_use; *peak = g_peak; }
static int cu_free_memory(size_t *free_bytes, size_t *total_bytes) {
    if (cudaMemGetInfo(free_bytes, total_bytes) == cudaSuccess) return 0;
    (void)cudaGetLastError();   /* clear the error: no figure, the caller falls back */
    return -1;
}
/* a training step's planned placement (the arena follows it; without a reservation there is none) */
static void cu_place(const yolo_place *script, int n) { if (g_base) yolo_arena_follow(&g_arena, script, n); }

/* profiling: with it on, every op is timed (synchronised before and
   after) and its work counted, per op name */
typedef struct { const char *name; double ms, flops, bytes; long calls; } prof_entry;
static prof_entry g_prof[64];
static int g_nprof = 0, g_profiling = 0;
static cudaEvent_t g_ev0, g_ev1;
static void prof_begin(void) {
    if (!g_profiling) return;
    CK(cudaEventRecord(g_ev0));
}
static void prof_end(const char *name, double flops, double bytes) {
    if (!g_profiling) return;
    float ms;
    CK(cudaEventRecord(g_ev1));
    CK(cudaEventSynchronize(g_ev1));
    CK(cudaEventElapsedTime(&ms, g_ev0, g_ev1));
    int i = 0;
    while (i < g_nprof && strcmp(g_prof[i].name, name)) i++;
    if (i == g_nprof) { if (g_nprof == 64) return; g_prof[g_nprof++].name = name; }
    g_prof[i].ms += ms; g_prof[i].flops += flops; g_prof[i].bytes += bytes; g_prof[i].calls++;
}
static int prof_cmp(const void *a, const void *b) {
    double x = ((const prof_entry *)a)->ms, y = ((const prof_entry *)b)->ms;
    return x < y ? 1 : x > y ? -1 : 0;
}
static void cu_profile(int on, FILE *report) {
    if (on && !g_profiling) { CK(cudaEventCreate(&g_ev0)); CK(cudaEventCreate(&g_ev1)); g_nprof = 0; }
    if (!on && report) {
        qsort(g_prof, g_nprof, sizeof g_prof[0], prof_cmp);
        double total = 0;
        for (int i = 0; i < g_nprof; i++) total += g_prof[i].ms;
        fprintf(report, "%-28s %8s %7s %6s %10s\n", "op", "ms", "share", "calls", "rate");
        for (int i = 0; i < g_nprof; i++) {
            const prof_entry *e = &g_prof[i];
            char rate[32];
            if (e->flops > 0) snprintf(rate, sizeof rate, "%.1f TFLOP/s", e->flops / (e->ms * 1e-3) / 1e12);
            else snprintf(rate, sizeof rate, "%.0f GB/s", e->bytes / (e->ms * 1e-3) / 1e9);
            fprintf(report, "%-28s %8.2f %6.1f%% %6ld %12s\n", e->name, e->ms, 100 * e->ms / total, e->calls, rate);
        }
    }
    g_profiling = on;
}
static void cu_zero(void *p, size_t bytes) {
    if (!bytes) return;
    prof_begin();
    CK(cudaMemsetAsync(p, 0, bytes));
    prof_end("zero", 0, (double)bytes);
}
static void cu_upload(void *dst, const void *src, size_t bytes) {
    if (!bytes) return;
    prof_begin();
    CK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
    prof_end("upload", 0, (double)bytes);
}
static void cu_download(void *dst, const void *src, size_t bytes) { if (bytes) CK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost)); }
static void cu_copy(void *dst, const void *src, size_t bytes) { if (bytes) CK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice)); }
static void cu_sync(void) { CK(cudaDeviceSynchronize()); }

/* The scratch buffer: 128 MB of the backend's own, taken at its first
   use, never given back. The maxpool backward keeps its windows' winners
   there between its two passes; the tensor-core tiers stage a conv's
   operands there (part 2). */
static const size_t STAGE_BYTES = (size_t)128 << 20;
static char *g_stage = NULL;

/* ------------------------------------------------------------------------ */
/* what the tiers add                                                       */
/* ------------------------------------------------------------------------ */
/* The core computes every op. A tier (part 2) runs convolutions in bf16 or
   half on tensor cores; the core's conv passes ask it first, through the
   hooks below, and do the work themselves where it declines (returns 0).
   g_tier: the tier this GPU runs (yolo_backend_cuda sets it: YOLO_TIER, or
   0 where the GPU lacks what the tier needs). A build of the core alone
   defines the hooks as doing nothing (the start of part 2). */
static int g_tier = 0;
/* prec's products on this GPU's tensor cores: half from Turing on, bf16 from Ampere on */
static int tc_products(yolo_precision prec) {
    return prec != YOLO_FP32 && (g_tier >= 80 || (g_tier >= 75 && prec == YOLO_FP16));
}
struct ConvGeo;
/* C = A B on the tensor cores in prec (tc_products), the operands gathered by la and lb as gemm_kernel's,
   in splitk k-slices of kchunk */
template <class LA, class LB, class EP>
static void tc_gemm(yolo_precision prec, int M, int N, int K, int splitk, int kchunk, LA la, LB lb, EP ep);
/* a conv's forward and backward as cu_conv2d_forward and _backward (after their checks) on staged
   operands: 1 when the tier ran it */
static int tc_conv2d_forward(const ConvGeo &c, const yolo_tensor *x, const float *w, const float *b, const void *ws,
                             int act, const yolo_tensor *r, yolo_precision prec, yolo_tensor *y);
static int tc_conv2d_backward(const ConvGeo &c, const yolo_tensor *x, const float *w, const void *wsd,
                              const yolo_tensor *dy, yolo_precision prec, const yolo_dx *dx, float *dw);
/* the weights in the forms the tier's products read (the table's stage_weights, stage_train_weights) */
static void tc_stage_weights(const float *w, int C2, int cin, int k, yolo_precision prec, void *ws);
static void tc_stage_train_weights(const yolo_stage_conv *convs, int n, yolo_precision prec);

/* a value rounded to a store's type T (bf16 or half: to nearest, ties to even), and back to float */
template <class T> __device__ inline T round_to(float v);
template <> __device__ inline __nv_bfloat16 round_to<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
template <> __device__ inline __half round_to<__half>(float v) { return __float2half_rn(v); }
template <> __device__ inline float round_to<float>(float v) { return v; }
__device__ inline float to_float(float v) { return v; }
__device__ inline float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ inline float to_float(__half v) { return __half2float(v); }

/* ------------------------------------------------------------------------ */
/* the tiled matrix product every convolution pass is made of               */
/* ------------------------------------------------------------------------ */
/* C[M, N] = sum_k A(m, k) B(k, n) through shared-memory tiles of
   BM x BN x BK, 256 threads, each owning RM x RN outputs: RM / 4 runs of
   4 rows and RN / 4 runs of 4 columns, spread across the tile, so that
   each run comes out of shared memory in one 16-byte read. A and B
   are loaders that gather their element (this is where im2col happens,
   implicitly; below, with the convolutions); the epilogue functor stores
   or adds the result. Split-K (gridDim.z > 1) gives each z-slice a range
   of k. A thread loads B from one column only (256 is a multiple of BN),
   so B's loader splits a column index once, col(n), and then gathers
   along k: the im2col divisions of the column are not redone for every
   k. Large
   problems take 128 x 128 tiles (8 x 8 per thread: 64 multiply-adds per
   four 16-byte shared reads), small ones 64 x 64. */
template <int BM, int BN, int BK, int RM, int RN, class LA, class LB, class EP>
__global__ void __launch_bounds__(256) gemm_kernel(int M, int N, int K, int kchunk, LA la, LB lb, EP ep) {
    __shared__ __align__(16) float As[BK][BM + 4];   /* rows of BM + 4 floats: 16-byte aligned */
    __shared__ __align__(16) float Bs[BK][BN + 4];
    const int TX = BN / RN, TY = BM / RM;
    int tid = threadIdx.x, tx = tid % TX, ty = tid / TX;
    int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    int kbeg = blockIdx.z * kchunk, kend = min(K, kbeg + kchunk);
    float acc[RM][RN] = {};
    /* the next tile is gathered into registers while the current one is
       multiplied out of shared memory, so global latency hides behind math */
    const int NA = BM * BK / 256, NB = BK * BN / 256;
    float ra[NA], rb[NB];
    static_assert(256 % BN == 0, "a thread's B loads share one column");
    const int nb = n0 + tid % BN;
    const bool n_in = nb < N;
    const typename LB::Col col = lb.col(n_in ? nb : 0);
    #pragma unroll
    for (int r = 0; r < NA; r++) {
        int e = tid + 256 * r, kk = e % BK, m = m0 + e / BK, k = kbeg + kk;
        ra[r] = (m < M && k < kend) ? load1(la, m, k) : 0.f;
    }
    #pragma unroll
    for (int r = 0; r < NB; r++) {
        int k = kbeg + (tid + 256 * r) / BN;
        rb[r] = (n_in && k < kend) ? load1(lb, col, k) : 0.f;
    }
    for (int k0 = kbeg; k0 < kend; k0 += BK) {
        #pragma unroll
        for (int r = 0; r < NA; r++) { int e = tid + 256 * r; As[e % BK][e / BK] = ra[r]; }
        #pragma unroll
        for (int r = 0; r < NB; r++) { int e = tid + 256 * r; Bs[e / BN][e % BN] = rb[r]; }
        __syncthreads();
        int k1 = k0 + BK;
        if (k1 < kend) {
            #pragma unroll
            for (int r = 0; r < NA; r++) {
                int e = tid + 256 * r, m = m0 + e / BK, k = k1 + e % BK;
                ra[r] = (m < M && k < kend) ? load1(la, m, k) : 0.f;
            }
            #pragma unroll
            for (int r = 0; r < NB; r++) {
                int k = k1 + (tid + 256 * r) / BN;
                rb[r] = (n_in && k < kend) ? load1(lb, col, k) : 0.f;
            }
        }
        #pragma unroll
        for (int kk = 0; kk < BK; kk++) {
            float a[RM], b[RN];
            #pragma unroll
            for (int i = 0; i < RM; i += 4) {
                float4 v = *(const float4 *)&As[kk][i * TY + 4 * ty];
                a[i] = v.x; a[i + 1] = v.y; a[i + 2] = v.z; a[i + 3] = v.w;
            }
            #pragma unroll
            for (int j = 0; j < RN; j += 4) {
                float4 v = *(const float4 *)&Bs[kk][j * TX + 4 * tx];
                b[j] = v.x; b[j + 1] = v.y; b[j + 2] = v.z; b[j + 3] = v.w;
            }
            #pragma unroll
            for (int i = 0; i < RM; i++)
                #pragma unroll
                for (int j = 0; j < RN; j++) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
    #pragma unroll
    for (int i = 0; i < RM; i++)
        #pragma unroll
        for (int j = 0; j < RN; j++) {
            int m = m0 + (i & ~3) * TY + 4 * ty + (i & 3), n = n0 + (j & ~3) * TX + 4 * tx + (j & 3);
            if (m < M && n < N) ep(m, n, acc[i][j]);
        }
}

/* Large problems take 128 x 128 x 8 tiles, small ones 64 x 64 x 16. */
static int gemm_big(int M, int N) { return M >= 96 && N >= 96; }

template <int BM, int BN, int BK, int RM, int RN, class LA, class LB, class EP>
static void gemm_tiles(int M, int N, int K, int splitk, int kchunk, LA la, LB lb, EP ep) {
    dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM, splitk);
    gemm_kernel<BM, BN, BK, RM, RN><<<grid, 256>>>(M, N, K, kchunk, la, lb, ep);
    CK_LAUNCH("gemm_kernel");
}

/* bf16 and half on the CUDA cores: a loader's elements rounded to T as they
   are gathered (what the tensor cores' operands hold), the products and
   their sums in float32 as gemm_kernel's. Each product of two rounded
   values is exact in float32, so these are the tensor cores' results up to
   the order of the sums. */
template <class T, class L> struct Rounded : L {
    __device__ float next(typename L::Walk &w) const { return to_float(round_to<T>(L::next(w))); }
};
template <class T, class L> static Rounded<T, L> rounded(const L &l) { Rounded<T, L> r; (L &)r = l; return r; }

/* The tile of a product: float32 (and bf16 or half on the CUDA cores) as
   gemm_big says; on the tensor cores (tc_gemm) BM and BN each 128 when the
   matrix has 96 rows (columns) or more, else 64, BK 32. */
static void gemm_tile(yolo_precision prec, int M, int N, int *BM, int *BN, int *BK) {
    if (!tc_products(prec)) { *BM = *BN = gemm_big(M, N) ? 128 : 64; *BK = gemm_big(M, N) ? 8 : 16; return; }
    *BM = M >= 96 ? 128 : 64; *BN = N >= 96 ? 128 : 64; *BK = 32;
}
/* k-slices of a product in BM x BN tiles, each a whole number of kstep */
static int tile_slices(int BM, int BN, int kstep, int M, int N, int K, int splitk, int *kchunk) {
    if (splitk <= 0) {
        int tiles = ((M + BM - 1) / BM) * ((N + BN - 1) / BN);
        splitk = (528 + tiles - 1) / tiles;
        if (splitk > K / 1024) splitk = K / 1024;
        if (splitk < 1) splitk = 1;
    }
    int kc = (K + splitk - 1) / splitk;
    kc = (kc + kstep - 1) / kstep * kstep;
    if (kchunk) *kchunk = kc;
    return (K + kc - 1) / kc;
}
/* k-slices of a product in prec, as gemm_tile tiles it */
static int gemm_slices(yolo_precision prec, int M, int N, int K, int splitk, int *kchunk) {
    int BM, BN, BK;
    gemm_tile(prec, M, N, &BM, &BN, &BK);
    return tile_slices(BM, BN, BK, M, N, K, splitk, kchunk);
}

/* C = A B in float32 */
template <class LA, class LB, class EP>
static void gemm_float(int M, int N, int K, int splitk, int kchunk, LA la, LB lb, EP ep) {
    if (gemm_big(M, N)) gemm_tiles<128, 128, 8, 8, 8>(M, N, K, splitk, kchunk, la, lb, ep);
    else gemm_tiles<64, 64, 16, 4, 4>(M, N, K, splitk, kchunk, la, lb, ep);
}
/* C = A B in prec (on the tensor cores where this GPU's tier has them for
   prec), in at most splitk k-slices (0: as gemm_slices chooses); returns
   the number of k-slices it ran */
template <class LA, class LB, class EP>
static int gemm(yolo_precision prec, int M, int N, int K, int splitk, LA la, LB lb, EP ep) {
    int kchunk;
    splitk = gemm_slices(prec, M, N, K, splitk, &kchunk);
    if (tc_products(prec)) tc_gemm(prec, M, N, K, splitk, kchunk, la, lb, ep);
    else if (prec == YOLO_FP32) gemm_float(M, N, K, splitk, kchunk, la, lb, ep);
    else if (prec == YOLO_BF16) gemm_float(M, N, K, splitk, kchunk, rounded<__nv_bfloat16>(la), rounded<__nv_bfloat16>(lb), ep);
    else gemm_float(M, N, K, splitk, kchunk, rounded<__half>(la), rounded<__half>(lb), ep);
    return splitk;
}

/* Division by a number known only at run time, as a multiply and a
   shift (Granlund and Montgomery): the tile loaders below split every
   flat index into (image, row, column) or (channel, ky, kx), and plain
   integer division would cost more than the arithmetic they feed. Exact
   for n < 2^31. */
struct FastDiv { unsigned d, m, s; };
static FastDiv fastdiv(unsigned d) {
    FastDiv f;
    f.d = d; f.s = 0;
    while ((1u << f.s) < d) f.s++;
    f.m = (unsigned)(((1ull << 32) * ((1ull << f.s) - d)) / d + 1);
    return f;
}
__device__ inline int fdiv(int n, const FastDiv &f) { return (int)((__umulhi((unsigned)n, f.m) + (unsigned)n) >> f.s); }

/* the convolution's geometry, passed by value to the functors */
struct ConvGeo {
    int B, C1, H, W, C2, Ho, Wo, k, s, p, c1g, c2g, g;
    FastDiv fk, fkk, fWo, fP;
};

/* The operands' loaders. Each gathers its matrix element by element
   along k: walk(i, k) starts a walk at row (A) or column (B) i and k,
   doing the divisions that split the indices once; next(w) returns the
   element and steps to k + 1 with a compare and an add. The tensor-core
   tiles read runs of 8 consecutive k so; the float32 tiles one element
   (load1). A B loader also splits its column index once, col(n): what a
   column shares over every k. */
template <class L, class I> __device__ inline float load1(const L &l, const I &i, int k) {
    typename L::Walk w = l.walk(i, k);
    return l.next(w);
}

/* The im2col element of input channel and kernel offset kidx = (ci, ky, kx)
   of the group and output position pos = (b, oy, ox), zero in the padding,
   in two halves: Pos is what the position alone decides (the image's
   group channels, the window's top-left corner), Tap what the kernel
   offset does. */
struct Pos { const float *xb; int iy0, ix0; };
struct Tap { int ci, ky, kx; };
__device__ inline Pos im2col_pos(const float *x, int xc, const ConvGeo &c, int gi, int pos) {   /* xc: x's channels an image */
    int b = fdiv(pos, c.fP), pp = pos - b * c.Ho * c.Wo, oy = fdiv(pp, c.fWo), ox = pp - oy * c.Wo;
    Pos q = { x + ((size_t)b * xc + gi * c.c1g) * c.H * c.W, oy * c.s - c.p, ox * c.s - c.p };
    return q;
}
__device__ inline Tap im2col_tap(const ConvGeo &c, int kidx) {
    int ci = fdiv(kidx, c.fkk), r = kidx - ci * c.k * c.k, ky = fdiv(r, c.fk);
    Tap t = { ci, ky, r - ky * c.k };
    return t;
}
/* x[plane][iy][ix], zero outside the picture */
__device__ inline float pixel(const ConvGeo &c, const float *plane, int iy, int ix) {
    return iy < 0 || iy >= c.H || ix < 0 || ix >= c.W ? 0.f : plane[(size_t)iy * c.W + ix];
}

/* forward: per group, Y[co, (n, oy, ox)] = sum_(ci,ky,kx) W[co, (ci,ky,kx)] X[n, ci, oy s - p + ky, ox s - p + kx] */
struct FwdA {   /* m = co, k = (ci, ky, kx): one row of W */
    const float *w; int K, gi, c2g;
    typedef const float *Walk;
    __device__ Walk walk(int m, int k) const { return w + (size_t)(gi * c2g + m) * K + k; }
    __device__ float next(Walk &p) const { return *p++; }
};
struct FwdB {   /* n = (b, oy, ox), k = (ci, ky, kx); x's images xc channels apart (C1, or a slot's buffer's) */
    const float *x; ConvGeo c; int gi, xc;
    typedef Pos Col;
    struct Walk { const float *plane; int iy0, ix0, ky, kx; };   /* channel ci's plane of the image */
    __device__ Col col(int n) const { return im2col_pos(x, xc, c, gi, n); }
    __device__ Walk walk(const Col &q, int k) const {
        Tap t = im2col_tap(c, k);
        Walk w = { q.xb + (size_t)t.ci * c.H * c.W, q.iy0, q.ix0, t.ky, t.kx };
        return w;
    }
    __device__ float next(Walk &w) const {
        float v = pixel(c, w.plane, w.iy0 + w.ky, w.ix0 + w.kx);
        if (++w.kx == c.k) { w.kx = 0; if (++w.ky == c.k) { w.ky = 0; w.plane += (size_t)c.H * c.W; } }
        return v;
    }
};
/* SiLU, YOLOv9's activation: silu(x) = x s, s = sigmoid(x); silu'(x) = s (1 + x (1 - s)), computed as
   s + s (x - x s), two fused multiply-adds; u through it when act. T is the store the result goes to:
   float keeps expf and the IEEE division; a two-byte store (bf16 or half, 8 or 11 bits) takes the
   hardware's approximate exp and division, a few float ulps off (far below the store's rounding) at
   about half the instructions of the exact forms, which leave the stored BatchNorm passes short of
   issue slots, not of memory. */
__device__ inline float d_sigmoid(float x) { return 1.f / (1.f + expf(-x)); }
__device__ inline float d_sigmoid_fast(float x) { return __fdividef(1.f, 1.f + __expf(-x)); }
template <class T> __device__ inline float t_sigmoid(float x) { return sizeof(T) == 4 ? d_sigmoid(x) : d_sigmoid_fast(x); }
template <class T> __device__ inline float t_silu(float x) { return x * t_sigmoid<T>(x); }
template <class T> __device__ inline float t_silu_grad(float x) {
    float s = t_sigmoid<T>(x);
    return __fmaf_rn(s, __fmaf_rn(-x, s, x), s);
}
template <class T> __device__ inline float t_bn_act(float u, int act) { return act ? t_silu<T>(u) : u; }

/* a conv reads a stored input only in its products' precision (the staged copy it stands for) */
static void conv_input_store(const yolo_tensor *x, yolo_precision prec, const char *op) {
    if (x->store == YOLO_FP32 || x->store == (int)prec) return;
    fprintf(stderr, "yolov9: %s: an input stored in %s for products in %s\n", op, yolo_precision_name((yolo_precision)x->store),
            yolo_precision_name(prec));
    exit(1);
}
/* an op that reads and writes tensors of one store */
static void store_match(const yolo_tensor *x, const yolo_tensor *y, const char *op) {
    if (x->store == y->store) return;
    fprintf(stderr, "yolov9: %s: an input stored in %s for an output in %s\n", op,
            yolo_precision_name((yolo_precision)x->store), yolo_precision_name((yolo_precision)y->store));
    exit(1);
}
/* ... and sees no slots */
static void same_store(const yolo_tensor *x, const yolo_tensor *y, const char *op) {
    yolo_dense(x, op);
    yolo_dense(y, op);
    store_match(x, y, op);
}
/* A tensor's store (yolo_tensor.store): YOLO_FP32, NCHW floats; YOLO_BF16
   or YOLO_FP16, NHWC, two bytes a value, rounded to nearest even where it
   is written. value_at is where value (b, c, p) of a tensor of C channels
   and HW pixels lies, get_value and put_value read and write it. */
__device__ inline size_t value_at(int store, int b, int C, int c, int HW, int p) {
    return store == YOLO_FP32 ? ((size_t)b * C + c) * HW + p : ((size_t)b * HW + p) * C + c;
}
__device__ inline float get_value(const void *t, int store, size_t i) {
    if (store == YOLO_FP32) return ((const float *)t)[i];
    if (store == YOLO_BF16) return __bfloat162float(((const __nv_bfloat16 *)t)[i]);
    return __half2float(((const __half *)t)[i]);
}
__device__ inline void put_value(void *t, int store, size_t i, float v) {
    if (store == YOLO_FP32) ((float *)t)[i] = v;
    else if (store == YOLO_BF16) ((__nv_bfloat16 *)t)[i] = __float2bfloat16_rn(v);
    else ((__half *)t)[i] = __float2half_rn(v);
}

/* forward, B from an input held NHWC in two bytes (a low-precision inference
   pass) whose channels do not come in 8s: n = (b, oy, ox), k = (ci, ky, kx);
   a pixel's channels xc apart (C1, or a slot's buffer's) */
struct FwdNhwcB {
    const void *x; ConvGeo c; int gi, store, xc;
    struct Col { size_t xb; int iy0, ix0; };   /* where image b's group channels start; the window's corner */
    struct Walk { size_t xb; int iy0, ix0, ci, ky, kx; };
    __device__ Col col(int n) const {
        int b = fdiv(n, c.fP), pp = n - b * c.Ho * c.Wo, oy = fdiv(pp, c.fWo), ox = pp - oy * c.Wo;
        Col q = { (size_t)b * c.H * c.W * xc + gi * c.c1g, oy * c.s - c.p, ox * c.s - c.p };
        return q;
    }
    __device__ Walk walk(const Col &q, int k) const {
        Tap t = im2col_tap(c, k);
        Walk w = { q.xb, q.iy0, q.ix0, t.ci, t.ky, t.kx };
        return w;
    }
    __device__ float next(Walk &w) const {
        int iy = w.iy0 + w.ky, ix = w.ix0 + w.kx;
        float v = iy < 0 || iy >= c.H || ix < 0 || ix >= c.W ? 0.f : get_value(x, store, w.xb + ((size_t)iy * c.W + ix) * xc + w.ci);
        if (++w.kx == c.k) { w.kx = 0; if (++w.ky == c.k) { w.ky = 0; w.ci++; } }
        return v;
    }
};

/* v as a store keeps it: rounded to bf16 or half, or as it is */
__device__ inline float stored(int store, float v) {
    return store == YOLO_FP32 ? v : store == YOLO_BF16 ? __bfloat162float(__float2bfloat16_rn(v)) : __half2float(__float2half_rn(v));
}
/* y = the sum plus the bias, through the SiLU when act (a folded Conv's
   whole forward), stored as y's store says; with a shortcut r (y's store,
   C2 channels, not a slot) r + that, rounded to the store first as a
   separate add would read it (a folded RepNBottleneck). y may be a slot:
   its buffer has yc channels (0: C2) */
struct FwdStore {
    void *y; const float *bias; ConvGeo c; int gi, act, store, yc; const void *r;
    /* r is read only (__ldg): its loads need not wait for the stores to y before them */
    __device__ float finish(float v, int co, size_t ri) const {
        float u = t_bn_act<float>(v + (bias ? bias[co] : 0.f), act);
        if (!r) return u;
        float rv = store == YOLO_FP32 ? __ldg((const float *)r + ri)
                 : store == YOLO_BF16 ? __bfloat162float(__ldg((const __nv_bfloat16 *)r + ri)) : __half2float(__ldg((const __half *)r + ri));
        return stored(store, u) + rv;
    }
    __device__ void operator()(int m, int n, float v) const {
        int P = c.Ho * c.Wo, b = fdiv(n, c.fP), pp = n - b * P, co = gi * c.c2g + m;
        put_value(y, store, value_at(store, b, yc ? yc : c.C2, co, P, pp), finish(v, co, value_at(store, b, c.C2, co, P, pp)));
    }
};

/* backward data: dX[ci, (n, iy, ix)] += sum_(co,ky,kx) W[co, ci, ky, kx] dY[n, co, oy, ox] over the taps
   with iy + p - ky = oy s (and the same in x). With stride s, which taps those are depends on iy mod s
   alone: ky = (iy + p) mod s, and every s-th after it. So the positions are split into s x s phases
   (py, px) = (iy mod s, ix mod s), and each phase is its own product over only its taps: no product
   with a zero in between the strided outputs is ever made (3x3 stride 2: 1, 2, 2 and 4 taps of 9 in
   the four phases, 9/4 a position instead of 9). Stride 1 is the one phase with every tap. In a phase,
   iy = py + s qy, ky = ky0 + s ty, and oy = qy + oy0 - ty with oy0 = (py + p - ky0) / s. */
struct Phase {
    int py, px, ky0, kx0, nky, nkx, oy0, ox0, Hq, Wq;   /* taps ky0 + s ty, ty < nky; positions qy < Hq */
    FastDiv fnt, fnkx, fWq, fPq;                        /* nky nkx, nkx, Wq, Hq Wq */
};
/* the taps of phase (py, px) of a k x k stride-s conv padded k / 2: 0 if it has none */
static int phase_taps(int k, int s, int py, int px, Phase *f) {
    int p = k / 2;
    f->py = py; f->px = px;
    f->ky0 = (py + p) % s; f->kx0 = (px + p) % s;
    f->nky = f->ky0 < k ? (k - f->ky0 + s - 1) / s : 0;
    f->nkx = f->kx0 < k ? (k - f->kx0 + s - 1) / s : 0;
    return f->nky && f->nkx;
}
/* ... and its positions on c's input: 0 if it has no tap or no position */
static int phase_of(const ConvGeo &c, int py, int px, Phase *f) {
    phase_taps(c.k, c.s, py, px, f);
    f->oy0 = (py + c.p - f->ky0) / c.s; f->ox0 = (px + c.p - f->kx0) / c.s;
    f->Hq = (c.H - py + c.s - 1) / c.s; f->Wq = (c.W - px + c.s - 1) / c.s;
    if (!f->nky || !f->nkx || f->Hq <= 0 || f->Wq <= 0) return 0;   /* no tap or no position: nothing to add */
    f->fnt = fastdiv(f->nky * f->nkx); f->fnkx = fastdiv(f->nkx); f->fWq = fastdiv(f->Wq); f->fPq = fastdiv(f->Hq * f->Wq);
    return 1;
}
struct BwdDataA {   /* m = ci, k = (co, ty, tx): W[co, ci, ky0 + s ty, kx0 + s tx] */
    const float *w; ConvGeo c; Phase f; int gi;
    struct Walk { const float *wk; int ty, tx; };   /* wk: W[co, ci] */
    __device__ Walk walk(int m, int k) const {
        int co = fdiv(k, f.fnt), r = k - co * f.nky * f.nkx, ty = fdiv(r, f.fnkx);
        Walk wk = { w + ((size_t)(gi * c.c2g + co) * c.c1g + m) * c.k * c.k, ty, r - ty * f.nkx };
        return wk;
    }
    __device__ float next(Walk &wk) const {
        float v = wk.wk[(f.ky0 + c.s * wk.ty) * c.k + f.kx0 + c.s * wk.tx];
        if (++wk.tx == f.nkx) { wk.tx = 0; if (++wk.ty == f.nky) { wk.ty = 0; wk.wk += (size_t)c.c1g * c.k * c.k; } }
        return v;
    }
};
/* dY float32 NCHW, or in its store (NHWC, a BatchNorm's dL/dz written over z) where a conv is not
   staged: pixel (oy, ox) of channel co of image b at value_at(store, ...), i.e. ch co's first value
   plus (oy Wo + ox) times a pixel's stride (1 or C2), a channel's stride Ho Wo or 1 */
struct BwdDataB {   /* n = (b, qy, qx), k = (co, ty, tx) */
    const void *dy; int store; ConvGeo c; Phase f; int gi;
    struct Col { size_t dyb; int oy, ox; };   /* the image's first group channel of dY; oy, ox at tap 0 */
    struct Walk { size_t ch; int oy, ox, ty, tx; };   /* channel co's first value */
    __device__ Col col(int n) const {
        int b = fdiv(n, f.fPq), pp = n - b * f.Hq * f.Wq, qy = fdiv(pp, f.fWq), qx = pp - qy * f.Wq;
        Col q = { value_at(store, b, c.C2, gi * c.c2g, c.Ho * c.Wo, 0), qy + f.oy0, qx + f.ox0 };
        return q;
    }
    __device__ Walk walk(const Col &q, int k) const {
        int co = fdiv(k, f.fnt), r = k - co * f.nky * f.nkx, ty = fdiv(r, f.fnkx);
        Walk w = { q.dyb + (size_t)co * (store == YOLO_FP32 ? c.Ho * c.Wo : 1), q.oy, q.ox, ty, r - ty * f.nkx };
        return w;
    }
    __device__ float next(Walk &w) const {
        int oy = w.oy - w.ty, ox = w.ox - w.tx;
        float v = oy < 0 || ox < 0 || oy >= c.Ho || ox >= c.Wo ? 0.f
                  : get_value(dy, store, w.ch + ((size_t)oy * c.Wo + ox) * (store == YOLO_FP32 ? 1 : c.C2));
        if (++w.tx == f.nkx) { w.tx = 0; if (++w.ty == f.nky) { w.ty = 0; w.ch += store == YOLO_FP32 ? c.Ho * c.Wo : 1; } }
        return v;
    }
};
/* dX, or one run of it (yolo_dx: a concatenation's part or a split's half, whose gradient holds cd
   channels an image, row m of the product its channel ofs + m); add 0: 0 + v, its old values not read
   (a fresh gradient) */
struct BwdDataStore {
    float *dx; int cd, ofs; ConvGeo c; Phase f; int add;
    __device__ float *at(int m, int n) const {   /* dX[b][ofs + m][py + s qy][px + s qx] */
        int b = fdiv(n, f.fPq), pp = n - b * f.Hq * f.Wq, qy = fdiv(pp, f.fWq), qx = pp - qy * f.Wq;
        return dx + (((size_t)b * cd + ofs + m) * c.H + f.py + c.s * qy) * c.W + f.px + c.s * qx;
    }
    __device__ void operator()(int m, int n, float v) const { float *d = at(m, n); *d = (add ? *d : 0.f) + v; }
};
/* The channels of group gi (gi c1g .. + c1g) that run r of dx holds: their count (0: none), the first
   of them (*row0, of x), and the store of run r (dx->g[r] [B][cd][H][W], its channels from c0) from
   image b0 on whose row 0 is channel *row0. Each
   run met is a product of its own over its rows (the weights' rows from *row0), so that the tiles
   store into one gradient, added to or assigned as a whole. */
static int dx_run_rows(const yolo_dx *dx, int r, int gi, const ConvGeo &c, const Phase &f, int b0, int *row0,
                       BwdDataStore *st) {
    int start = 0;
    for (int i = 0; i < r; i++) start += dx->c[i];
    int a = max(start, gi * c.c1g), e = min(start + dx->c[r], (gi + 1) * c.c1g);
    if (a >= e) return 0;
    *row0 = a;
    *st = { dx->g[r] + (size_t)b0 * dx->cd[r] * c.H * c.W, dx->cd[r], dx->c0[r] + a - start, c, f, dx->add[r] };
    return e - a;
}

/* backward weights: dW[co, (ci,ky,kx)] += sum_(n,oy,ox) dY[n, co, oy, ox] X[n, ci, ...]. The sum over
   every output position is long, so it is split over gridDim.z slices. Each slice stores its partial
   product in its own plane of a workspace, and splitk_sum_kernel adds the planes to dW in slice
   order: atomic adds would sum in whatever order the slices finish, and the same step would give
   gradients that differ in the last bits from run to run (and --ckpt could not be compared bit for bit). */
struct BwdWA {   /* m = co, k = (b, oy, ox); dY as BwdDataB reads it */
    const void *dy; int store; ConvGeo c; int gi;
    struct Walk { size_t i; int pp; };   /* dY[b, co, pp] at i, position pp = (oy, ox) */
    __device__ Walk walk(int m, int k) const {
        int P = c.Ho * c.Wo, b = fdiv(k, c.fP);
        Walk w = { value_at(store, b, c.C2, gi * c.c2g + m, P, k - b * P), k - b * P };
        return w;
    }
    __device__ float next(Walk &w) const {
        float v = get_value(dy, store, w.i);
        if (store != YOLO_FP32) w.i += c.C2;   /* NHWC: the next pixel, of this image or the next, C2 on */
        else { w.i++; if (++w.pp == c.Ho * c.Wo) { w.pp = 0; w.i += (size_t)(c.C2 - 1) * c.Ho * c.Wo; } }
        return v;
    }
};
struct BwdWB {   /* n = (ci, ky, kx), k = (b, oy, ox) */
    const float *x; ConvGeo c; int gi;
    typedef Tap Col;
    struct Walk { const float *plane; int iy, ix, oy, ox; };   /* X[b, ci]; iy, ix at (oy, ox) */
    __device__ Col col(int n) const { return im2col_tap(c, n); }
    __device__ Walk walk(const Tap &t, int k) const {
        int b = fdiv(k, c.fP), pp = k - b * c.Ho * c.Wo, oy = fdiv(pp, c.fWo), ox = pp - oy * c.Wo;
        Walk w = { x + ((size_t)b * c.C1 + gi * c.c1g + t.ci) * c.H * c.W, oy * c.s - c.p + t.ky, ox * c.s - c.p + t.kx, oy, ox };
        return w;
    }
    __device__ float next(Walk &w) const {
        float v = pixel(c, w.plane, w.iy, w.ix);
        w.ix += c.s;
        if (++w.ox == c.Wo) {
            w.ix -= c.Wo * c.s; w.ox = 0; w.iy += c.s;
            if (++w.oy == c.Ho) { w.iy -= c.Ho * c.s; w.oy = 0; w.plane += (size_t)c.C1 * c.H * c.W; }
        }
        return v;
    }
};
/* the same, x held NHWC in two bytes (a bf16 or half training pass) with channels that do not come in 8s */
struct BwdWNhwcB {   /* n = (ci, ky, kx), k = (b, oy, ox) */
    const void *x; ConvGeo c; int gi, store;
    typedef Tap Col;
    struct Walk { size_t xc; int iy, ix, oy, ox; };   /* channel ci of image b's first pixel; iy, ix at (oy, ox) */
    __device__ Col col(int n) const { return im2col_tap(c, n); }
    __device__ Walk walk(const Tap &t, int k) const {
        int b = fdiv(k, c.fP), pp = k - b * c.Ho * c.Wo, oy = fdiv(pp, c.fWo), ox = pp - oy * c.Wo;
        Walk w = { (size_t)b * c.H * c.W * c.C1 + gi * c.c1g + t.ci, oy * c.s - c.p + t.ky, ox * c.s - c.p + t.kx, oy, ox };
        return w;
    }
    __device__ float next(Walk &w) const {
        float v = w.iy < 0 || w.iy >= c.H || w.ix < 0 || w.ix >= c.W ? 0.f
                  : get_value(x, store, w.xc + ((size_t)w.iy * c.W + w.ix) * c.C1);
        w.ix += c.s;
        if (++w.ox == c.Wo) {
            w.ix -= c.Wo * c.s; w.ox = 0; w.iy += c.s;
            if (++w.oy == c.Ho) { w.iy -= c.Ho * c.s; w.oy = 0; w.xc += (size_t)c.H * c.W * c.C1; }
        }
        return v;
    }
};
struct SliceStore {   /* part[z][m][n], one plane of M x N per k-slice z */
    float *part; int N; size_t plane;
    __device__ void operator()(int m, int n, float v) const { part[blockIdx.z * plane + (size_t)m * N + n] = v; }
};
struct AddStore {     /* one slice: dW[m][n] += v, each element written by one thread */
    float *dw; int N;
    __device__ void operator()(int m, int n, float v) const { dw[(size_t)m * N + n] += v; }
};
__global__ void splitk_sum_kernel(const float *part, int slices, size_t plane, float *dw) {
    GRID_STRIDE(i, plane) {
        float s = 0.f;
        for (int z = 0; z < slices; z++) s += part[z * plane + i];
        dw[i] += s;
    }
}
/* the workspace of the slices: 32 MB of the backend's own scratch, taken at the first weight gradient */
static const size_t SPLITK_WORK_FLOATS = 8u << 20;
static float *g_splitk_work = NULL;
/* the k-slices of an M x N weight gradient summed over red positions, in BM x BN tiles with slices in
   whole kstep: as many as tile_slices asks for while their planes fit the workspace (taken here, at the
   first gradient that needs it) */
static int dw_slices(int BM, int BN, int kstep, int M, int N, int red) {
    int slices = tile_slices(BM, BN, kstep, M, N, red, 0, NULL);
    while (slices > 1 && slices * (size_t)M * N > SPLITK_WORK_FLOATS)
        slices = tile_slices(BM, BN, kstep, M, N, red, slices - 1, NULL);
    if (slices > 1 && !g_splitk_work) g_splitk_work = (float *)cu_own_alloc(SPLITK_WORK_FLOATS * sizeof(float));
    return slices;
}

static ConvGeo geo(const yolo_tensor *x, int C2, int k, int s, int g, int Ho, int Wo) {
    ConvGeo c = { x->n, x->c, x->h, x->w, C2, Ho, Wo, k, s, k / 2, x->c / g, C2 / g, g };
    c.fk = fastdiv(k); c.fkk = fastdiv(k * k); c.fWo = fastdiv(Wo); c.fP = fastdiv(Ho * Wo);
    return c;
}

/* the profile's names of a conv pass, by precision and kernel size (1x1, 3x3) */
static const char *const FWD_NAME[3][2] = { { "conv forward 1x1", "conv forward 3x3" },
                                            { "conv forward 1x1 bf16", "conv forward 3x3 bf16" },
                                            { "conv forward 1x1 half", "conv forward 3x3 half" } };
static const char *const BWD_W_NAME[3][2] = { { "conv backward-weight 1x1", "conv backward-weight 3x3" },
                                              { "conv backward-weight 1x1 bf16", "conv backward-weight 3x3 bf16" },
                                              { "conv backward-weight 1x1 half", "conv backward-weight 3x3 half" } };
static const char *const BWD_D_NAME[3][2] = { { "conv backward-data 1x1", "conv backward-data 3x3" },
                                              { "conv backward-data 1x1 bf16", "conv backward-data 3x3 bf16" },
                                              { "conv backward-data 1x1 half", "conv backward-data 3x3 half" } };


/* where a tensor's values start: a slot's at its first channel (NHWC: a value further, NCHW: a plane) */
static char *slot_data(const yolo_tensor *t) {
    return (char *)t->data + (t->store == YOLO_FP32 ? (size_t)t->c0 * t->h * t->w : (size_t)t->c0) * store_bytes(t->store);
}
/* a slot that the staged tiles' 16-byte runs can read or write: its channels start and step in 8s */
static int slot_in_8s(const yolo_tensor *t) { return t->c0 % 8 == 0 && t->ctot % 8 == 0; }

static void cu_conv2d_forward(const yolo_tensor *x, const float *w, const float *b, const void *ws, int C2, int k, int s,
                              int g, int act, const yolo_tensor *r, yolo_precision prec, yolo_tensor *y) {
    ConvGeo c = geo(x, C2, k, s, g, y->h, y->w);
    int K = c.c1g * k * k, N = c.B * c.Ho * c.Wo, x_nhwc = x->store != YOLO_FP32;
    conv_input_store(x, prec, "conv2d_forward");
    if (r) { yolo_dense(r, "conv2d_forward's shortcut"); store_match(r, y, "conv2d_forward's shortcut"); }
    if (tc_products(prec) && tc_conv2d_forward(c, x, w, b, ws, act, r, prec, y)) return;
    const char *xd = slot_data(x);
    void *yd = slot_data(y);
    prof_begin();
    for (int gi = 0; gi < g; gi++) {
        FwdA la = { w, K, gi, c.c2g };
        FwdStore ep = { yd, b, c, gi, act, y->store, y->ctot, r ? r->data : NULL };
        if (x_nhwc) {
            FwdNhwcB lb = { xd, c, gi, x->store, yolo_buffer_channels(x) };
            gemm(prec, c.c2g, N, K, 1, la, lb, ep);
        } else {
            FwdB lb = { (const float *)xd, c, gi, yolo_buffer_channels(x) };
            gemm(prec, c.c2g, N, K, 1, la, lb, ep);
        }
    }
    prof_end(FWD_NAME[prec][k != 1], 2.0 * N * C2 * K, 0);
}

/* A folded model's weights staged once (yolo_model_stage), and a training step's (yolo_model_stage_train),
   in the forms a tier's products read (in any two-byte precision, whether the tier reads it or not: the
   table's contract); the core reads w itself and stages nothing */
static void cu_stage_weights(const float *w, int C2, int cin, int k, yolo_precision prec, void *ws) {
    if (g_tier && prec != YOLO_FP32) tc_stage_weights(w, C2, cin, k, prec, ws);
}
static void cu_stage_train_weights(const yolo_stage_conv *convs, int n, yolo_precision prec) {
    if (g_tier && prec != YOLO_FP32) tc_stage_train_weights(convs, n, prec);
}

/* db[c] += sum over (n, p) of dy (in its store), a block a channel: for a stored dy (conv_bias_grad, below) */
__global__ void bias_grad_kernel(const void *dy, int store, float *db, int B, int C, int P) {
    int c = blockIdx.x;
    double acc = 0;
    for (int i = threadIdx.x; i < B * P; i += blockDim.x) acc += get_value(dy, store, value_at(store, i / P, C, c, P, i % P));
    __shared__ double sh[256];
    sh[threadIdx.x] = acc;
    __syncthreads();
    for (int o = 128; o > 0; o >>= 1) { if (threadIdx.x < o) sh[threadIdx.x] += sh[threadIdx.x + o]; __syncthreads(); }
    if (threadIdx.x == 0) db[c] += (float)sh[0];
}

/* group gi's weight gradient dwg [c2g, Kw] += dY X^T, X read by lb; the sum over every output
   position split-K when it is long */
template <class LB>
static void conv_dw_group(yolo_precision prec, const ConvGeo &c, int gi, const yolo_tensor *dy, LB lb, float *dwg) {
    BwdWA la = { dy->data, dy->store, c, gi };
    int Kw = c.c1g * c.k * c.k, red = c.B * c.Ho * c.Wo, BM, BN, BK;
    gemm_tile(prec, c.c2g, Kw, &BM, &BN, &BK);
    int slices = dw_slices(BM, BN, BK, c.c2g, Kw, red);
    size_t plane = (size_t)c.c2g * Kw;
    if (slices > 1) {
        SliceStore ep = { g_splitk_work, Kw, plane };
        slices = gemm(prec, c.c2g, Kw, red, slices, la, lb, ep);
        splitk_sum_kernel<<<grid_for(plane), 256>>>(g_splitk_work, slices, plane, dwg);
        CK_LAUNCH("splitk_sum_kernel");
    } else {
        AddStore ep = { dwg, Kw };
        gemm(prec, c.c2g, Kw, red, 1, la, lb, ep);
    }
}

static void conv_bias_grad(const yolo_tensor *dy, float *db);   /* (below: it shares the BatchNorm's sums) */

static void cu_conv2d_backward(const yolo_tensor *x, const float *w, const void *wsd, const yolo_tensor *dy, int C2, int k,
                               int s, int g, yolo_precision prec, const yolo_dx *dxr, float *dw, float *db) {
    ConvGeo c = geo(x, C2, k, s, g, dy->h, dy->w);
    int Kw = c.c1g * k * k, P = dy->h * dy->w, red = c.B * P, x_nhwc = x->store != YOLO_FP32;
    double flops = 2.0 * red * C2 * Kw;
    conv_input_store(x, prec, "conv2d_backward");
    conv_input_store(dy, prec, "conv2d_backward");
    yolo_dense(x, "conv2d_backward");
    yolo_dx dxs, *dx = dxr ? &dxs : NULL;
    if (dxr) dxs = *dxr;
    for (int i = 0; dx && k < s && i < dx->n; i++) {   /* taps miss some of dX: an assigned run zeroed, then added to */
        size_t HW = (size_t)c.H * c.W, whole = dx->c[i] == dx->cd[i];   /* whole images: one stretch */
        for (int b = 0; !dx->add[i] && b < (whole ? 1 : c.B); b++)
            cu_zero(dx->g[i] + (b * (size_t)dx->cd[i] + dx->c0[i]) * HW, (whole ? c.B : 1) * dx->c[i] * HW * sizeof(float));
        dx->add[i] = 1;
    }
    int tier = tc_products(prec) && tc_conv2d_backward(c, x, w, wsd, dy, prec, dx, dw);
    for (int gi = 0; !tier && gi < g; gi++) {
        prof_begin();
        float *dwg = dw + (size_t)gi * c.c2g * Kw;   /* this group's [c2g, Kw] */
        if (x_nhwc) {
            BwdWNhwcB lb = { x->data, c, gi, x->store };
            conv_dw_group(prec, c, gi, dy, lb, dwg);
        } else {
            BwdWB lb = { x->data, c, gi };
            conv_dw_group(prec, c, gi, dy, lb, dwg);
        }
        prof_end(BWD_W_NAME[prec][k != 1], flops / g, 0);
        prof_begin();
        for (int py = 0; dx && py < s; py++)   /* one product per phase of the stride */
            for (int px = 0; px < s; px++) {
                Phase f;
                if (!phase_of(c, py, px, &f)) continue;
                BwdDataB dbb = { dy->data, dy->store, c, f, gi };
                for (int r = 0; r < dx->n; r++) {   /* a product a run of dX this group meets: W's rows from row0 */
                    BwdDataStore st;
                    int row0, rows = dx_run_rows(dx, r, gi, c, f, 0, &row0, &st);
                    if (!rows) continue;
                    BwdDataA da = { w + (size_t)(row0 - gi * c.c1g) * k * k, c, f, gi };
                    gemm(prec, rows, c.B * f.Hq * f.Wq, c.c2g * f.nky * f.nkx, 1, da, dbb, st);
                }
            }
        prof_end(BWD_D_NAME[prec][k != 1], dx ? flops / g : 0, 0);
    }
    if (db) {   /* a conv with a bias (the heads' last convs; the others have BatchNorm) */
        prof_begin();
        conv_bias_grad(dy, db);
        prof_end("conv bias gradient", 0, store_bytes(dy->store) * (double)red * C2);
    }
}

/* ------------------------------------------------------------------------ */
/* BatchNorm and SiLU                                                       */
/* ------------------------------------------------------------------------ */

/* block sum of two doubles over 256 threads */
__device__ void block_sum2(double &a, double &b) {
    __shared__ double sa[256], sb[256];
    sa[threadIdx.x] = a; sb[threadIdx.x] = b;
    __syncthreads();
    for (int o = 128; o > 0; o >>= 1) {
        if (threadIdx.x < o) { sa[threadIdx.x] += sa[threadIdx.x + o]; sb[threadIdx.x] += sb[threadIdx.x + o]; }
        __syncthreads();
    }
    a = sa[0]; b = sb[0];
    __syncthreads();
}

/* Per-channel statistics in two steps, so that every block reads
   contiguous memory: one block per (image, channel) sums its h*w values
   (and their squares) in double, then one warp per channel adds the B
   partial sums (bn_stats_kernel). */
__global__ void bn_partial_kernel(const float *z, int HW, double *part) {
    const float *p = z + (size_t)blockIdx.x * HW;
    double s = 0, ss = 0;
    for (int i = threadIdx.x; i < HW; i += blockDim.x) { double v = p[i]; s += v; ss += v * v; }
    block_sum2(s, ss);
    if (threadIdx.x == 0) { part[2 * blockIdx.x] = s; part[2 * blockIdx.x + 1] = ss; }
}
/* The nparts partial sums [nparts][C][2] of a channel (the B images of a
   float32 map, or a store's chunks: the forward's BN_PARTIAL_BLOCKS (264)
   blocks, or the backward's BNB_BLOCKS (396) but at least B, over the
   tensor's runs of 64 channels) merged by one warp a channel: lane
   l adds parts l, l + 32, ... in order, then the lanes' sums meet in a
   fixed tree; lane 0 holds them (the same bits every run), and the
   channel it returns; every other lane, and every warp past the last
   channel, returns C (nothing to write). Launched 32 threads a channel. A
   lane fetches its next eight parts (16 bytes each) before it adds them:
   eight loads in flight, not one, and the same additions in the same
   order. */
static unsigned parts_blocks(int C) { return blocks_for((size_t)C * 32, 256); }
__device__ inline int warp_parts_sum(const double *part, int nparts, int C, double &a, double &b) {
    int c = (int)((blockIdx.x * (size_t)blockDim.x + threadIdx.x) / 32), lane = threadIdx.x % 32;
    a = 0; b = 0;
    if (c >= C) return C;
    for (int n0 = lane; n0 < nparts; n0 += 32 * 8) {
        double2 p[8];
        #pragma unroll
        for (int k = 0; k < 8; k++)
            if (n0 + 32 * k < nparts) p[k] = *(const double2 *)(part + 2 * ((size_t)(n0 + 32 * k) * C + c));
        #pragma unroll
        for (int k = 0; k < 8; k++)
            if (n0 + 32 * k < nparts) { a += p[k].x; b += p[k].y; }
    }
    for (int o = 16; o > 0; o >>= 1) { a += shfl_down32(a, o); b += shfl_down32(b, o); }
    return lane ? C : c;
}
/* What the statistics are for: mean, biased variance for normalising, running statistics with the
   unbiased one, over N values. count NULL: the partial sums alone (--sync-bn sums them over the
   processes first, then bn_stats_kernel) */
struct BnStatsOut { unsigned *count; double N; float *mean, *invstd, *rmean, *rvar; float momentum, eps; };
__device__ inline void bn_stats_write(int c, double s, double ss, const BnStatsOut &o) {
    double m = s / o.N, var = fmax(ss / o.N - m * m, 0.0);
    o.mean[c] = (float)m; o.invstd[c] = (float)(1.0 / sqrt(var + o.eps));
    o.rmean[c] = (float)((1 - o.momentum) * o.rmean[c] + o.momentum * m);
    o.rvar[c] = (float)((1 - o.momentum) * o.rvar[c] + o.momentum * (o.N > 1 ? var * o.N / (o.N - 1) : var));
}
__global__ void bn_stats_kernel(const double *part, int nparts, int C, BnStatsOut o) {
    double s, ss;
    int c = warp_parts_sum(part, nparts, C, s, ss);
    if (c < C) bn_stats_write(c, s, ss, o);
}

/* The stored passes' sums merged without a launch of their own: their
   grid is a column of blocks (blockIdx.x, each a part) for each run of 64
   channels (blockIdx.y); a block writes its part, makes it visible, and
   counts itself in its column's count; the block that counts last sees
   every part of the column and merges them. Which block that is varies
   from run to run, the order of the merge does not: four threads a
   channel add every fourth part in part order, then meet in thread order
   (the same bits every run). It leaves the count at 0 for the next pass.
   One block reads a column's parts, 1 KB a part: that beats a launch of
   its own only while they are few, so a pass of more parts a column
   leaves them to the merge's launch (bn_stats_kernel,
   bn_back_reduce_kernel). A pass takes about BN_PARTIAL_BLOCKS (264,
   forward) or BNB_BLOCKS (396, backward) blocks over its columns: maps of
   256 channels or more (66 and 99 parts a column) merge in the pass, the
   narrower ones (yolov9-s's 32-128 channels: 132-396 parts) do not
   (merged in the pass, they cost yolov9-s's step more than the launch). */
static const int BN_COUNTS = 1024;         /* columns (runs of 64 channels) a pass may have */
static const int BN_MERGE_MAX_PARTS = 100; /* parts a column the pass merges itself, at most */
static unsigned *g_bn_count = NULL;        /* [BN_COUNTS], zero between passes */
static unsigned *bn_counts(dim3 grid) {
    if (grid.y > (unsigned)BN_COUNTS || grid.x > (unsigned)BN_MERGE_MAX_PARTS) return NULL;   /* the merge's own launch */
    if (!g_bn_count) g_bn_count = (unsigned *)cu_own_alloc(BN_COUNTS * sizeof(unsigned));
    return g_bn_count;
}
__device__ inline bool last_of_column(unsigned *count) {
    __shared__ bool last;
    __threadfence();   /* this block's part, before its count */
    __syncthreads();
    if (threadIdx.x == 0) {
        last = atomicAdd(&count[blockIdx.y], 1u) == gridDim.x - 1;
        if (last) count[blockIdx.y] = 0;
    }
    __syncthreads();
    if (last) __threadfence();
    return last;
}
/* the column's parts [gridDim.x][C][2] of channels c0.. merged (256 threads); thread j < 64 gets
   channel c0 + j's; sh: room for four threads' sums a channel */
__device__ inline void column_parts_sum(const double *part, int C, int c0, double (*sh)[64][2], double &a, double &b) {
    int j = threadIdx.x % 64, q = threadIdx.x / 64, c = c0 + j;
    double s = 0, ss = 0;
    for (int p0 = q; c < C && p0 < (int)gridDim.x; p0 += 4 * 8) {   /* eight loads in flight, then their sums */
        double2 v[8];
        #pragma unroll
        for (int k = 0; k < 8; k++)
            if (p0 + 4 * k < (int)gridDim.x) v[k] = __ldcg((const double2 *)(part + 2 * ((size_t)(p0 + 4 * k) * C + c)));
        #pragma unroll
        for (int k = 0; k < 8; k++)
            if (p0 + 4 * k < (int)gridDim.x) { s += v[k].x; ss += v[k].y; }
    }
    sh[q][j][0] = s; sh[q][j][1] = ss;
    __syncthreads();
    a = ((sh[0][j][0] + sh[1][j][0]) + sh[2][j][0]) + sh[3][j][0];
    b = ((sh[0][j][1] + sh[1][j][1]) + sh[2][j][1]) + sh[3][j][1];
}

/* --sync-bn: the nparts partial sums of each channel (one an image for float32, one a row chunk for an NHWC
   store) merged as above, in place into part's first row [C][2] (channel c's slot there is read by its
   own warp alone, before the lanes meet), which the group then sums over the processes; the callers go
   on with nparts = 1 */
__global__ void bn_parts_sum_kernel(double *part, int nparts, int C) {
    double a, b;
    int c = warp_parts_sum(part, nparts, C, a, b);
    if (c >= C) return;
    part[2 * c] = a; part[2 * c + 1] = b;
}
static void bn_group_sum(double *part, int nparts, int C, const yolo_bn_group *group) {
    bn_parts_sum_kernel<<<parts_blocks(C), 256>>>(part, nparts, C);
    CK_LAUNCH("bn_parts_sum_kernel");
    group->sum(part, 2 * (size_t)C);
}

/* [nparts][C][2] partial sums of the BatchNorm reductions (nparts: the B images, or a store's row chunks), grown once */
static double *g_bn_part = NULL;
static size_t g_bn_part_cap = 0;
static double *bn_scratch(size_t n) {
    if (n > g_bn_part_cap) {
        cu_release(g_bn_part);
        g_bn_part_cap = n > (1 << 20) ? n : (1 << 20);
        g_bn_part = (double *)cu_own_alloc(g_bn_part_cap * sizeof(double));
    }
    return g_bn_part;
}

/* A conv's bias gradient is a BatchNorm statistic too, the sum of dy over
   a channel's images and pixels: the same two steps on a float32 dy (the
   heads' last convs, the only convs with a bias, get theirs from the loss),
   a block an (image, channel) plane, then a warp a channel adding the B
   planes in order; value by value, a block a channel, on a stored dy. */
__global__ void bias_grad_merge_kernel(const double *part, int nparts, int C, float *db) {
    double s, ss;
    int c = warp_parts_sum(part, nparts, C, s, ss);
    if (c < C) db[c] += (float)s;
}
static void conv_bias_grad(const yolo_tensor *dy, float *db) {
    int B = dy->n, C = dy->c, P = dy->h * dy->w;
    if (dy->store != YOLO_FP32) {
        bias_grad_kernel<<<C, 256>>>(dy->data, dy->store, db, B, C, P);
        CK_LAUNCH("bias_grad_kernel");
        return;
    }
    double *part = bn_scratch(2 * (size_t)B * C);
    bn_partial_kernel<<<B * C, 256>>>(dy->data, P, part);
    CK_LAUNCH("bn_partial_kernel");
    bias_grad_merge_kernel<<<parts_blocks(C), 256>>>(part, B, C, db);
    CK_LAUNCH("bias_grad_merge_kernel");
}

/* The elementwise BatchNorm passes take one row of blocks per (image,
   channel) plane, blockIdx.x = plane, blockIdx.y = a run of 1024 of its
   values: the channel is the block's (no division per element), and a
   thread moves 16 bytes at a time where a plane is a whole number of
   float4 (every YOLO map: h w is a multiple of 4). */
static dim3 plane_grid(const yolo_tensor *z) { return dim3(z->n * z->c, (z->h * z->w + 1023) / 1024); }

/* u = a z + b per channel, a = gamma invstd, b = beta - mean a; then the SiLU when act */
__global__ void bn_apply_kernel(const float *z, float *u, int C, int HW, const float *gamma, const float *beta,
                                const float *mean, const float *invstd, const float *rvar, float eps, int act) {
    int c = blockIdx.x % C, i = (blockIdx.y * blockDim.x + threadIdx.x) * 4;
    float is = invstd ? invstd[c] : rsqrtf(rvar[c] + eps), a = gamma[c] * is, b = beta[c] - mean[c] * a;
    size_t o = (size_t)blockIdx.x * HW + i;
    if (HW % 4 == 0) {
        if (i >= HW) return;
        float4 v = *(const float4 *)(z + o);
        v.x = t_bn_act<float>(a * v.x + b, act); v.y = t_bn_act<float>(a * v.y + b, act);
        v.z = t_bn_act<float>(a * v.z + b, act); v.w = t_bn_act<float>(a * v.w + b, act);
        *(float4 *)(u + o) = v;
    } else {
        for (int j = 0; j < 4 && i + j < HW; j++) u[o + j] = t_bn_act<float>(a * z[o + j] + b, act);
    }
}

/* The same on an NHWC store (bf16 or half training): the B H W rows of C
   channels are cut into chunks of whole 32-row tiles, one per blockIdx.x,
   about BN_PARTIAL_BLOCKS blocks in all; a block takes a run of channels
   (blockIdx.y) of its chunk. The sums inside a block are added in a fixed
   order, the chunks' in a fixed order by the pass's last block of the run
   (last_of_column; bn_stats_kernel for --sync-bn): the same bits on every
   run. The count is a constant, not read off the device, so that
   every GPU adds in the same order. Few long chunks beat many short ones:
   a block's start (its channels' constants, the first rows' latency) and
   its end (the sums through shared memory) are paid once a chunk, and
   fewer chunks leave bn_stats_kernel fewer parts to add: two blocks a
   multiprocessor of a 132-multiprocessor GPU, as the count measured
   fastest (tests/results/README.md). */
static const int BN_PARTIAL_BLOCKS = 264;
struct RowChunks { int rows, per, n; };   /* rows, rows a chunk (a multiple of 32), chunks */
static RowChunks row_chunks(const yolo_tensor *z, int channels_a_block) {
    RowChunks r;
    r.rows = z->n * z->h * z->w;
    int cblocks = (z->c + channels_a_block - 1) / channels_a_block, want = max(1, BN_PARTIAL_BLOCKS / cblocks);
    int tiles = (r.rows + 31) / 32;
    r.per = 32 * ((tiles + want - 1) / want);
    r.n = (r.rows + r.per - 1) / r.per;
    return r;
}
/* Eight two-byte values, one 16-byte load or store where vec (C a
   multiple of 8 and the store 16-byte aligned), else value by value (the
   values past n, or past C in a row, read as 0 and never written). */
template <class T> struct __align__(16) Eight { T v[8]; };   /* loops over it unrolled: kept in registers */
template <class T> __device__ inline Eight<T> load8(const T *p, int vec, int valid) {
    Eight<T> e;
    if (vec) *(uint4 *)e.v = *(const uint4 *)p;
    else {
        #pragma unroll
        for (int j = 0; j < 8; j++) e.v[j] = j < valid ? p[j] : round_to<T>(0.f);
    }
    return e;
}
template <class T> __device__ inline void store8(T *p, const Eight<T> &e, int vec, int valid) {
    if (vec) *(uint4 *)p = *(const uint4 *)e.v;
    else {
        #pragma unroll
        for (int j = 0; j < 8; j++) if (j < valid) p[j] = e.v[j];
    }
}
static int vec8(const yolo_tensor *a, const yolo_tensor *b) {
    return a->c % 8 == 0 && (uintptr_t)a->data % 16 == 0 && (uintptr_t)b->data % 16 == 0;
}
static const int BN_NHWC_CHANNELS = 64;   /* channels a block of bn_partial_nhwc_kernel */
/* A block: 64 channels of a chunk, thread (tx, ty) = (tx % 8, tx / 8) channels 8 tx .. 8 tx + 7 (16
   bytes, a warp four rows of 128 contiguous bytes) of every 32nd row from ty, four rows fetched
   before they are added (in row order); then the 32 row sums of each channel added in ty order
   into part[2 (chunk C + c)] */
static const int BN_ROWS_IN_FLIGHT = 4;
template <class T>
__global__ void __launch_bounds__(256) bn_partial_nhwc_kernel(const T *z, int C, RowChunks rc, int vec, double *part,
                                                             BnStatsOut o) {
    __shared__ double sh[32][BN_NHWC_CHANNELS][2];
    int tx = threadIdx.x % 8, ty = threadIdx.x / 8, c0 = blockIdx.y * BN_NHWC_CHANNELS + 8 * tx;
    int r0 = blockIdx.x * rc.per, r1 = min(rc.rows, r0 + rc.per), valid = min(8, C - c0);
    double s[8] = { 0 }, ss[8] = { 0 };
    for (int r = r0 + ty; valid > 0 && r < r1; r += 32 * BN_ROWS_IN_FLIGHT) {
        Eight<T> e[BN_ROWS_IN_FLIGHT];
        #pragma unroll
        for (int k = 0; k < BN_ROWS_IN_FLIGHT; k++)
            if (r + 32 * k < r1) e[k] = load8(z + (size_t)(r + 32 * k) * C + c0, vec, valid);
        #pragma unroll
        for (int k = 0; k < BN_ROWS_IN_FLIGHT; k++)
            if (r + 32 * k < r1)
                #pragma unroll
                for (int j = 0; j < 8; j++) { double v = to_float(e[k].v[j]); s[j] += v; ss[j] += v * v; }
    }
    for (int j = 0; j < 8; j++) { sh[ty][8 * tx + j][0] = s[j]; sh[ty][8 * tx + j][1] = ss[j]; }
    __syncthreads();
    int c = blockIdx.y * BN_NHWC_CHANNELS + threadIdx.x, mine = threadIdx.x < BN_NHWC_CHANNELS && c < C;
    if (mine) {
        double a = 0, b = 0;
        for (int j = 0; j < 32; j++) { a += sh[j][threadIdx.x][0]; b += sh[j][threadIdx.x][1]; }
        part[2 * ((size_t)blockIdx.x * C + c)] = a; part[2 * ((size_t)blockIdx.x * C + c) + 1] = b;
    }
    if (!o.count || !last_of_column(o.count)) return;
    double a, b;
    column_parts_sum(part, C, blockIdx.y * BN_NHWC_CHANNELS, sh, a, b);
    if (mine) bn_stats_write(c, a, b, o);
}
/* u = a z + b per channel (then the SiLU), rounded to T, on [rows][C]. A
   thread owns 8 channels (16 bytes of a row) and keeps their constants in
   registers (a = gamma invstd, beta, mean: read once, no division by C per
   value); a block lays `across` threads side by side along a row (every
   channel group of the row, up to 256) and 256 / across rows below them, so
   that a warp reads contiguous bytes; each thread fetches BN_ROWS_IN_FLIGHT
   rows, `down` apart, before it writes any, and the blocks stride over the
   rows. blockIdx.y: the run of groups past 256 (C > 2048). */
struct ApplyGrid { int rows, across, down; dim3 grid; };   /* rows, threads along a row, rows a block step */
static ApplyGrid apply_grid(const yolo_tensor *z) {
    ApplyGrid g;
    int groups = (z->c + 7) / 8;
    g.rows = z->n * z->h * z->w;
    g.across = min(groups, 256);
    g.down = 256 / g.across;
    size_t steps = ((size_t)g.rows + g.down * BN_ROWS_IN_FLIGHT - 1) / (g.down * BN_ROWS_IN_FLIGHT);
    g.grid = dim3((unsigned)min(steps, (size_t)2048), (groups + g.across - 1) / g.across);
    return g;
}
template <class T> __global__ void __launch_bounds__(256) bn_apply_nhwc_kernel(const T *z, T *u, ApplyGrid ag, int C, int vec,
                                                                             const float *gamma, const float *beta,
                                                                             const float *mean, const float *invstd,
                                                                             const float *rvar, float eps, int act) {
    int c0 = 8 * (blockIdx.y * ag.across + threadIdx.x % ag.across), dr = threadIdx.x / ag.across, valid = min(8, C - c0);
    if (dr >= ag.down || valid <= 0) return;
    size_t r = (size_t)blockIdx.x * ag.down * BN_ROWS_IN_FLIGHT + dr, step = (size_t)gridDim.x * ag.down * BN_ROWS_IN_FLIGHT;
    Eight<T> e[BN_ROWS_IN_FLIGHT];
    auto fetch = [&]() {
        #pragma unroll
        for (int k = 0; k < BN_ROWS_IN_FLIGHT; k++)
            if (r + k * ag.down < (size_t)ag.rows) e[k] = load8(z + (r + k * ag.down) * C + c0, vec, valid);
    };
    fetch();   /* the first rows on their way while the constants come */
    float a[8], be[8], me[8];
    #pragma unroll
    for (int j = 0; j < 8; j++) {
        int c = c0 + min(j, valid - 1);   /* past C: a copy of the last channel, never written */
        float is = invstd ? invstd[c] : rsqrtf(rvar[c] + eps);
        a[j] = gamma[c] * is; be[j] = beta[c]; me[j] = mean[c];
    }
    for (; r < (size_t)ag.rows; r += step, fetch()) {
        #pragma unroll
        for (int k = 0; k < BN_ROWS_IN_FLIGHT; k++) {
            if (r + k * ag.down >= (size_t)ag.rows) break;
            #pragma unroll
            for (int j = 0; j < 8; j++) {   /* (a z + beta) - a mean, two fused multiply-adds written out */
                float v = __fmaf_rn(-a[j], me[j], __fmaf_rn(a[j], to_float(e[k].v[j]), be[j]));
                e[k].v[j] = round_to<T>(t_bn_act<T>(v, act));
            }
            store8(u + (r + k * ag.down) * C + c0, e[k], vec, valid);
        }
    }
}
template <class T> static void bn_apply_nhwc(const yolo_tensor *z, const float *gamma, const float *beta, const float *mean,
                                             const float *invstd, const float *rvar, float eps, int act, yolo_tensor *u) {
    ApplyGrid ag = apply_grid(z);
    bn_apply_nhwc_kernel<T><<<ag.grid, 256>>>((const T *)z->data, (T *)u->data, ag, z->c, vec8(z, u), gamma, beta, mean,
                                              invstd, rvar, eps, act);
    CK_LAUNCH("bn_apply_nhwc_kernel");
}

static void cu_bn_train_forward(const yolo_tensor *z, const float *gamma, const float *beta, float *mean, float *invstd,
                                float *rmean, float *rvar, double momentum, double eps, int act, const yolo_bn_group *group,
                                yolo_tensor *u) {
    int HW = z->h * z->w, nparts = z->n;
    same_store(z, u, "batchnorm");
    RowChunks rc = row_chunks(z, BN_NHWC_CHANNELS);
    double *part = bn_scratch(2 * (size_t)(z->store == YOLO_FP32 ? z->n : rc.n) * z->c);
    BnStatsOut o = { NULL, (double)z->n * HW * (group ? group->world : 1), mean, invstd, rmean, rvar, (float)momentum,
                     (float)eps };
    prof_begin();
    if (z->store == YOLO_FP32) bn_partial_kernel<<<z->n * z->c, 256>>>(z->data, HW, part);
    else {   /* the stored pass merges its sums itself (but for --sync-bn's) */
        dim3 grid(rc.n, (z->c + BN_NHWC_CHANNELS - 1) / BN_NHWC_CHANNELS);
        int vec = vec8(z, z);
        if (!group) o.count = bn_counts(grid);
        if (z->store == YOLO_BF16) bn_partial_nhwc_kernel<<<grid, 256>>>((const __nv_bfloat16 *)z->data, z->c, rc, vec, part, o);
        else bn_partial_nhwc_kernel<<<grid, 256>>>((const __half *)z->data, z->c, rc, vec, part, o);
        nparts = o.count ? 0 : rc.n;
    }
    CK_LAUNCH("bn_partial_kernel");
    if (group) { bn_group_sum(part, nparts, z->c, group); nparts = 1; }   /* --sync-bn: over every process's share */
    if (nparts) {
        bn_stats_kernel<<<parts_blocks(z->c), 256>>>(part, nparts, z->c, o);
        CK_LAUNCH("bn_stats_kernel");
    }
    if (z->store == YOLO_FP32) {
        bn_apply_kernel<<<plane_grid(z), 256>>>(z->data, u->data, z->c, HW, gamma, beta, mean, invstd, NULL, (float)eps, act);
        CK_LAUNCH("bn_apply_kernel");
    } else if (z->store == YOLO_BF16) bn_apply_nhwc<__nv_bfloat16>(z, gamma, beta, mean, invstd, NULL, (float)eps, act, u);
    else bn_apply_nhwc<__half>(z, gamma, beta, mean, invstd, NULL, (float)eps, act, u);
    prof_end(act ? "batchnorm+silu train forward" : "batchnorm train forward", 0,
             store_bytes(z->store) * 3.0 * z->n * z->c * HW);
}

static void cu_bn_apply(const yolo_tensor *z, const float *gamma, const float *beta, const float *mean,
                        const float *invstd, const float *var, double eps, int act, yolo_tensor *u) {
    same_store(z, u, "batchnorm");
    prof_begin();
    if (z->store == YOLO_FP32) {
        bn_apply_kernel<<<plane_grid(z), 256>>>(z->data, u->data, z->c, z->h * z->w, gamma, beta, mean, invstd, var,
                                                (float)eps, act);
        CK_LAUNCH("bn_apply_kernel");
    } else if (z->store == YOLO_BF16) bn_apply_nhwc<__nv_bfloat16>(z, gamma, beta, mean, invstd, var, (float)eps, act, u);
    else bn_apply_nhwc<__half>(z, gamma, beta, mean, invstd, var, (float)eps, act, u);
    prof_end(act ? "batchnorm+silu apply" : "batchnorm apply", 0, store_bytes(z->store) * 2.0 * z->n * z->c * z->h * z->w);
}

/* per channel: sg = sum g, sgx = sum g xhat, with g = dy SiLU'(u) when act;
   again partial sums per (image, channel), then per channel */
__global__ void bn_back_partial_kernel(const float *z, const float *dy, int C, int HW, const float *gamma,
                                       const float *beta, const float *mean, const float *invstd, int act, double *part) {
    int c = blockIdx.x % C;
    size_t o = (size_t)blockIdx.x * HW;
    double sg = 0, sgx = 0;
    for (int i = threadIdx.x; i < HW; i += blockDim.x) {
        float xh = (z[o + i] - mean[c]) * invstd[c], g = dy[o + i];
        if (act) g *= t_silu_grad<float>(gamma[c] * xh + beta[c]);
        sg += g; sgx += (double)g * xh;
    }
    block_sum2(sg, sgx);
    if (threadIdx.x == 0) { part[2 * blockIdx.x] = sg; part[2 * blockIdx.x + 1] = sgx; }
}
/* what the backward's sums are for: dgamma += sum g xhat, dbeta += sum g (NULL: --sync-bn's second
   merge, the process's own were added by the first), and sums [C][2] for dz. count: as BnStatsOut's */
struct BnBackOut { unsigned *count; float *dgamma, *dbeta, *sums; };
__device__ inline void bn_back_write(int c, double sg, double sgx, const BnBackOut &o) {
    if (o.dgamma) { o.dgamma[c] += (float)sgx; o.dbeta[c] += (float)sg; }
    o.sums[2 * c] = (float)sg; o.sums[2 * c + 1] = (float)sgx;
}
__global__ void bn_back_reduce_kernel(const double *part, int nparts, int C, BnBackOut o) {
    double sg, sgx;
    int c = warp_parts_sum(part, nparts, C, sg, sgx);
    if (c < C) bn_back_write(c, sg, sgx, o);
}

__global__ void bn_back_apply_kernel(float *z, const float *dy, int C, int HW, float N, const float *gamma,
                                     const float *beta, const float *mean, const float *invstd, int act,
                                     const float *sums) {   /* dz written over z */
    int c = blockIdx.x % C, i = (blockIdx.y * blockDim.x + threadIdx.x) * 4;
    float m = mean[c], is = invstd[c], ga = gamma[c], be = beta[c], k = ga * is / N, sg = sums[2 * c], sgx = sums[2 * c + 1];
    auto dz_of = [&](float zv, float g) {
        float xh = (zv - m) * is;
        if (act) g *= t_silu_grad<float>(ga * xh + be);
        return k * (N * g - sg - xh * sgx);
    };
    size_t o = (size_t)blockIdx.x * HW + i;
    if (HW % 4 == 0) {
        if (i >= HW) return;
        float4 zv = *(const float4 *)(z + o), g = *(const float4 *)(dy + o);
        g.x = dz_of(zv.x, g.x); g.y = dz_of(zv.y, g.y); g.z = dz_of(zv.z, g.z); g.w = dz_of(zv.w, g.w);
        *(float4 *)(z + o) = g;
    } else {
        for (int j = 0; j < 4 && i + j < HW; j++) z[o + j] = dz_of(z[o + j], dy[o + j]);
    }
}

/* The same with z in an NHWC store and dy NCHW floats, dz written over z
   in its store: both passes take tiles of 32 pixels x 64 channels inside
   one image (no division per value), a chunk of an image's tiles a block
   (about BNB_BLOCKS blocks in all, at least one an image and 64 channels:
   one wave of a 132-multiprocessor GPU at BNB_BLOCKS_PER_SM each, faster
   than many more blocks). A thread fetches 8
   values of dy, 4 pixels of two channels (a float4: 8 threads a 128-byte
   run of a channel), and one pixel's 8 channels of z (16 bytes: 8 threads
   a 128-byte run of a pixel), which meet in shared memory; the thread
   keeps its pixel's 8 channels.
   The tiles stream through BNB_STAGES shared-memory stages filled by
   copy16: from the Ampere tier on (cp.async), two tiles on their way
   while the block works on a third, and no registers held for them. dy lands as [channel][pixel] with the
   16-byte runs of channel ch swizzled (run q at q ^ (ch / 8)), so that a
   warp's 32 reads of one channel each (8 channels x 4 pixels) fall in 32
   different banks; z lands as [pixel][channel]. Where a run cannot go as
   16 aligned bytes (C not a multiple of 8, pixels an image not whole
   float4) the thread loads it value by value and writes the stage itself.
   The partial sums: each thread's float sums over the chunk (a pixel a
   tile) added in double in pixel-row order within the block, the chunks'
   in chunk order by the pass's last block of the run (last_of_column;
   bn_back_reduce_kernel for --sync-bn): the same bits every run. */
struct BnTiles { int HW, tiles, per, chunks; };   /* pixels an image, 32-pixel tiles an image, tiles a chunk, chunks an image */
static const int BNB_CHANNELS = 64;               /* channels a tile */
static_assert(BNB_CHANNELS == 64 && BN_NHWC_CHANNELS == 64, "column_parts_sum merges runs of 64 channels");
static const int BNB_STAGES = 3;                  /* tiles a block holds in shared memory */
static const int BNB_BLOCKS_PER_SM = 3;           /* blocks a multiprocessor holds (launch bound) */
static const int BNB_BLOCKS = 132 * BNB_BLOCKS_PER_SM;   /* blocks a pass, about (a constant: the same sums on every GPU) */
static BnTiles bn_tiles(const yolo_tensor *z) {
    BnTiles t;
    t.HW = z->h * z->w;
    t.tiles = (t.HW + 31) / 32;
    int cblocks = (z->c + BNB_CHANNELS - 1) / BNB_CHANNELS, want = max(1, BNB_BLOCKS / (cblocks * z->n));
    t.per = (t.tiles + want - 1) / want;
    t.chunks = (t.tiles + t.per - 1) / t.per;
    return t;
}
/* 16 bytes from global into shared memory, or 16 zero bytes where src is
   NULL (then `any`, a valid address, stands in: nothing is read from it).
   A thread's copies go in groups: copies_commit closes one, copies_wait<N>
   returns once at most the N groups committed last may still be on their
   way. In the core a copy is a plain load and store, done when copy16
   returns; the Ampere tier makes them asynchronous (cp.async, section
   2.2), so that the loads fly while the threads compute. */
#if DEVICE_TIER >= 80
__device__ inline void copy16(void *dst, const void *src, const void *any);
__device__ inline void copies_commit();
template <int N> __device__ inline void copies_wait();
#else
__device__ inline void copy16(void *dst, const void *src, const void *any) {
    (void)any;
    *(uint4 *)dst = src ? *(const uint4 *)src : make_uint4(0, 0, 0, 0);
}
__device__ inline void copies_commit() {}
template <int N> __device__ inline void copies_wait() {}
#endif
struct BnbStages {
    float dy[BNB_STAGES][BNB_CHANNELS][32];        /* [channel][pixel], runs swizzled */
    uint4 z[BNB_STAGES][32][BNB_CHANNELS / 8];     /* [pixel][8 channels] */
};
/* tile (image b, pixels p0.., channels c0..) into stage s; 0 past the picture and past C.
   vz: z's rows go as 16 bytes (vec8); vdy: dy's planes are whole float4 (HW % 4 == 0, 16-byte aligned) */
template <class T>
__device__ inline void bn_stage_issue(BnbStages &st, int s, const T *z, const float *dy, int C, int HW, int b, int p0, int c0,
                                      int vz, int vdy) {
    int tid = threadIdx.x, run = tid % 8, q = 4 * run;
    #pragma unroll
    for (int h = 0; h < 2; h++) {
        int ch = tid / 8 + 32 * h, c = c0 + ch;
        float *dst = &st.dy[s][ch][4 * (run ^ (ch / 8))];
        const float *row = dy + ((size_t)b * C + c) * HW + p0 + q;
        if (vdy) copy16(dst, c < C && p0 + q < HW ? row : NULL, dy);
        else
            for (int i = 0; i < 4; i++) dst[i] = c < C && p0 + q + i < HW ? row[i] : 0.f;
    }
    int pz = tid / 8, cz = 8 * run, valid = p0 + pz < HW ? min(8, C - c0 - cz) : 0;
    const T *src = z + ((size_t)b * HW + p0 + pz) * C + c0 + cz;
    if (vz) copy16(&st.z[s][pz][run], valid > 0 ? src : NULL, z);
    else {
        Eight<T> e = load8(src, 0, max(valid, 0));
        st.z[s][pz][run] = *(const uint4 *)e.v;
    }
}
/* The tiles t of block blockIdx.x's chunk (image b, channels c0..) through the stages. bn_tiles_begin
   sends the first BNB_STAGES - 1 on their way (before the kernel reads its channels' constants: the
   two latencies overlap); bn_stream_tiles then calls work(b, t, zt, gs, valid) for each, with thread
   (pz, cz) = (tid / 8, 8 (tid % 8))'s z values zt of pixel 32 t + pz, channels c0 + cz.. (valid of
   them; the others, past C or past the picture, staged as 0, as their dy), and gs[32 j]: dy of the
   same pixel, channel c0 + cz + j. The stages are free again once every thread has passed a
   __syncthreads after this. */
struct BnChunk { int b, t0, t1; };
__device__ inline BnChunk bn_chunk(const BnTiles &bt) {
    BnChunk k = { (int)blockIdx.x / bt.chunks, (int)blockIdx.x % bt.chunks * bt.per, 0 };
    k.t1 = min(bt.tiles, k.t0 + bt.per);
    return k;
}
template <class T>
__device__ inline void bn_tiles_begin(BnbStages &st, const T *z, const float *dy, int C, const BnTiles &bt, int c0, int vz,
                                      int vdy) {
    BnChunk k = bn_chunk(bt);
    for (int i = 0; i < BNB_STAGES - 1; i++) {
        if (k.t0 + i < k.t1) bn_stage_issue(st, i, z, dy, C, bt.HW, k.b, 32 * (k.t0 + i), c0, vz, vdy);
        copies_commit();
    }
}
template <class T, class Work>
__device__ inline void bn_stream_tiles(BnbStages &st, const T *z, const float *dy, int C, const BnTiles &bt, int c0, int vz,
                                       int vdy, Work work) {
    BnChunk k = bn_chunk(bt);
    int pz = threadIdx.x / 8, run = threadIdx.x % 8, cz = 8 * run;
    for (int t = k.t0, s = 0, next_s = BNB_STAGES - 1; t < k.t1; t++) {   /* tile t in stage s, tile t + 2 goes to next_s */
        copies_wait<BNB_STAGES - 2>();   /* tile t has landed (this thread's runs) */
        __syncthreads();                   /* everybody's, and the stage of tile t - 1 is free */
        if (t + BNB_STAGES - 1 < k.t1) bn_stage_issue(st, next_s, z, dy, C, bt.HW, k.b, 32 * (t + BNB_STAGES - 1), c0, vz, vdy);
        copies_commit();
        Eight<T> zt;
        *(uint4 *)zt.v = st.z[s][pz][run];
        const float *gs = &st.dy[s][cz][4 * ((pz / 4) ^ run) + pz % 4];   /* channel cz + j at gs[32 j]: its runs swizzled by run */
        work(k.b, t, zt, gs, 32 * t + pz < bt.HW ? min(8, C - c0 - cz) : 0);
        s = s == BNB_STAGES - 1 ? 0 : s + 1;
        next_s = next_s == BNB_STAGES - 1 ? 0 : next_s + 1;
    }
    copies_wait<0>();
}
/* a thread's eight channels c.., their constants in registers for every tile (past C: the last
   channel's, never stored): read from shared memory at each value instead, they cost the passes more
   issue slots than the maths */
struct BnChannels { float mean[8], scale[8], beta[8]; };   /* scale: gamma invstd (u = scale (z - mean) + beta) */
__device__ inline BnChannels bn_channels(int C, int c, const float *mean, const float *invstd, const float *gamma,
                                         const float *beta) {
    BnChannels k;
    #pragma unroll
    for (int j = 0; j < 8; j++) {
        int cj = min(c + j, C - 1);
        k.mean[j] = mean[cj]; k.scale[j] = gamma[cj] * invstd[cj]; k.beta[j] = beta[cj];
    }
    return k;
}
/* g = dy SiLU'(u) (dy alone without act) at d = z - mean of channel j, for a store T */
template <class T> __device__ inline float bn_back_g(const BnChannels &ch, int j, float d, float dy, int act) {
    return act ? dy * t_silu_grad<T>(__fmaf_rn(ch.scale[j], d, ch.beta[j])) : dy;
}
/* The sums pass: a thread adds g and g d (d = z - mean) over its pixels in float, every value (a
   value past C or past the picture is 0 in z and in dy: its g is 0 and adds nothing), and the block
   its threads' sums in double in pixel-row order; sum g xhat = invstd sum g d, once a channel. */
template <class T>
__global__ void __launch_bounds__(256, BNB_BLOCKS_PER_SM) bn_back_partial_nhwc_kernel(const T *z, const float *dy, int C,
                                                                                    BnTiles bt, int vz, int vdy,
                                                                                    const float *gamma, const float *beta,
                                                                                    const float *mean, const float *invstd,
                                                                                    int act, double *part, BnBackOut o) {
    __shared__ union { BnbStages st; double sums[32][BNB_CHANNELS][2]; } sm;   /* the sums once the stages are read */
    int c0 = blockIdx.y * BNB_CHANNELS, pz = threadIdx.x / 8, cz = 8 * (threadIdx.x % 8);
    bn_tiles_begin(sm.st, z, dy, C, bt, c0, vz, vdy);
    BnChannels ch = bn_channels(C, c0 + cz, mean, invstd, gamma, beta);
    float sg[8] = { 0 }, sgd[8] = { 0 };
    bn_stream_tiles(sm.st, z, dy, C, bt, c0, vz, vdy, [&](int, int, const Eight<T> &zt, const float *gs, int) {
        #pragma unroll
        for (int j = 0; j < 8; j++) {
            float d = to_float(zt.v[j]) - ch.mean[j], g = bn_back_g<T>(ch, j, d, gs[32 * j], act);
            sg[j] += g; sgd[j] = __fmaf_rn(g, d, sgd[j]);
        }
    });
    __syncthreads();   /* the stages are read: their memory takes the sums */
    #pragma unroll
    for (int j = 0; j < 8; j++) { sm.sums[pz][cz + j][0] = sg[j]; sm.sums[pz][cz + j][1] = sgd[j]; }
    __syncthreads();
    int c = c0 + threadIdx.x, mine = threadIdx.x < BNB_CHANNELS && c < C;
    if (mine) {
        double a = 0, sx = 0;
        for (int r = 0; r < 32; r++) { a += sm.sums[r][threadIdx.x][0]; sx += sm.sums[r][threadIdx.x][1]; }
        part[2 * ((size_t)blockIdx.x * C + c)] = a; part[2 * ((size_t)blockIdx.x * C + c) + 1] = sx * invstd[c];
    }
    if (!o.count || !last_of_column(o.count)) return;
    double a, sx;
    column_parts_sum(part, C, c0, sm.sums, a, sx);
    if (mine) bn_back_write(c, a, sx, o);
}
/* dz = gamma invstd (g - mean(g) - xhat mean(g xhat)) of a chunk of tiles a block, as the sums pass
   streams them, rounded to T over z (each tile's z staged before it is written); sums [C][2]: each
   channel's sum of g and of g xhat over its N values. Per channel it is scale g + (k1 d + k0), with
   k0 = -scale mean(g) and k1 = -scale invstd mean(g xhat): two fused multiply-adds a value. */
template <class T>
__global__ void __launch_bounds__(256, BNB_BLOCKS_PER_SM) bn_back_apply_nhwc_kernel(T *z, const float *dy, int C, BnTiles bt,
                                                                                  int vz, int vdy, float N,
                                                                                  const float *gamma, const float *beta,
                                                                                  const float *mean, const float *invstd,
                                                                                  int act, const float *sums) {
    __shared__ BnbStages st;
    int c0 = blockIdx.y * BNB_CHANNELS, cz = 8 * (threadIdx.x % 8);
    bn_tiles_begin(st, (const T *)z, dy, C, bt, c0, vz, vdy);
    BnChannels ch = bn_channels(C, c0 + cz, mean, invstd, gamma, beta);
    float k0[8], k1[8];
    #pragma unroll
    for (int j = 0; j < 8; j++) {
        int cj = min(c0 + cz + j, C - 1);
        k0[j] = -ch.scale[j] * (sums[2 * cj] / N); k1[j] = -ch.scale[j] * invstd[cj] * (sums[2 * cj + 1] / N);
    }
    bn_stream_tiles(st, (const T *)z, dy, C, bt, c0, vz, vdy, [&](int b, int t, Eight<T> zt, const float *gs, int valid) {
        if (valid <= 0) return;
        #pragma unroll
        for (int j = 0; j < 8; j++) {
            float d = to_float(zt.v[j]) - ch.mean[j], g = bn_back_g<T>(ch, j, d, gs[32 * j], act);
            zt.v[j] = round_to<T>(__fmaf_rn(ch.scale[j], g, __fmaf_rn(k1[j], d, k0[j])));
        }
        store8(z + ((size_t)b * bt.HW + 32 * t + (int)threadIdx.x / 8) * C + c0 + cz, zt, vz, valid);
    });
}

static float *g_bn_sums = NULL;   /* [2 * C] scratch of the BN backward, grown once */
static size_t g_bn_sums_cap = 0;

static void cu_bn_act_backward(yolo_tensor *z, const float *dy, const float *gamma, const float *beta,
                               const float *mean, const float *invstd, int act, const yolo_bn_group *group,
                               float *dgamma, float *dbeta) {
    int HW = z->h * z->w;
    if ((size_t)2 * z->c > g_bn_sums_cap) {
        cu_release(g_bn_sums);
        g_bn_sums_cap = 2 * (size_t)z->c > 4096 ? 2 * (size_t)z->c : 4096;
        g_bn_sums = (float *)cu_own_alloc(g_bn_sums_cap * sizeof(float));
    }
    BnTiles bt = bn_tiles(z);
    int stored = z->store != YOLO_FP32, nparts = stored ? z->n * bt.chunks : z->n;
    int vz = vec8(z, z), vdy = HW % 4 == 0 && (uintptr_t)dy % 16 == 0;
    double *part = bn_scratch(2 * (size_t)nparts * z->c);
    float N = (float)((size_t)z->n * HW * (group ? group->world : 1));
    dim3 chunks(z->n * bt.chunks, (z->c + BNB_CHANNELS - 1) / BNB_CHANNELS);
    BnBackOut o = { stored && !group ? bn_counts(chunks) : NULL, dgamma, dbeta, g_bn_sums };   /* merged in the pass */
    prof_begin();
    if (!stored) bn_back_partial_kernel<<<z->n * z->c, 256>>>(z->data, dy, z->c, HW, gamma, beta, mean, invstd, act, part);
    else if (z->store == YOLO_BF16)
        bn_back_partial_nhwc_kernel<<<chunks, 256>>>((const __nv_bfloat16 *)z->data, dy, z->c, bt, vz, vdy, gamma, beta,
                                                     mean, invstd, act, part, o);
    else bn_back_partial_nhwc_kernel<<<chunks, 256>>>((const __half *)z->data, dy, z->c, bt, vz, vdy, gamma, beta, mean,
                                                      invstd, act, part, o);
    CK_LAUNCH("bn_back_partial_kernel");
    if (!o.count) {
        bn_back_reduce_kernel<<<parts_blocks(z->c), 256>>>(part, nparts, z->c, o);
        CK_LAUNCH("bn_back_reduce_kernel");
    }
    if (group) {   /* --sync-bn: the sums over every process's share (dgamma and dbeta stay the share's) */
        bn_group_sum(part, nparts, z->c, group);
        BnBackOut og = { NULL, NULL, NULL, g_bn_sums };
        bn_back_reduce_kernel<<<parts_blocks(z->c), 256>>>(part, 1, z->c, og);
        CK_LAUNCH("bn_back_reduce_kernel");
    }
    if (!stored)
        bn_back_apply_kernel<<<plane_grid(z), 256>>>(z->data, dy, z->c, HW, N, gamma, beta, mean, invstd, act, g_bn_sums);
    else if (z->store == YOLO_BF16)
        bn_back_apply_nhwc_kernel<<<chunks, 256>>>((__nv_bfloat16 *)z->data, dy, z->c, bt, vz, vdy, N, gamma, beta, mean,
                                                  invstd, act, g_bn_sums);
    else bn_back_apply_nhwc_kernel<<<chunks, 256>>>((__half *)z->data, dy, z->c, bt, vz, vdy, N, gamma, beta, mean, invstd,
                                                   act, g_bn_sums);
    CK_LAUNCH("bn_back_apply_kernel");
    /* the bytes moved: z and dy read twice (the sums, then dz), dz written once over z */
    prof_end("batchnorm+silu backward", 0, (3.0 * store_bytes(z->store) + 2 * 4) * z->n * z->c * HW);
}

/* y = f(a, b) value by value over n values of one store (NHWC or NCHW alike): 16 bytes a thread (eight
   two-byte values or four floats), one load of a and of b and one store where the three start 16-byte
   aligned; else, and for the last few values, one by one */
template <class T, class F> __global__ void map2_kernel(T *y, const T *a, const T *b, size_t n, int vec, F f) {
    const int N = 16 / sizeof(T);
    GRID_STRIDE(q, (n + N - 1) / N) {
        size_t i = q * N;
        if (vec && i + N <= n) {
            uint4 ua = *(const uint4 *)(a + i), ub = *(const uint4 *)(b + i), uy;
            const T *pa = (const T *)&ua, *pb = (const T *)&ub;
            T *py = (T *)&uy;
            #pragma unroll
            for (int j = 0; j < N; j++) py[j] = f(pa[j], pb[j]);
            *(uint4 *)(y + i) = uy;
        } else {
            for (size_t j = i; j < n && j < i + N; j++) y[j] = f(a[j], b[j]);
        }
    }
}
template <class T> struct SiluOfSum {   /* RepConvN: SiLU of its two branches' sum */
    __device__ T operator()(T a, T b) const { return round_to<T>(t_silu<T>(to_float(a) + to_float(b))); }
};
template <class T> struct SumOf {   /* a shortcut: a + b, rounded to the store */
    __device__ T operator()(T a, T b) const { return round_to<T>(to_float(a) + to_float(b)); }
};
template <class T, class F> static void map2(const yolo_tensor *a, const yolo_tensor *b, yolo_tensor *y, F f) {
    size_t n = (size_t)y->n * y->c * y->h * y->w;
    int vec = (uintptr_t)a->data % 16 == 0 && (uintptr_t)b->data % 16 == 0 && (uintptr_t)y->data % 16 == 0;
    map2_kernel<<<grid_for((n + 16 / sizeof(T) - 1) / (16 / sizeof(T))), 256>>>((T *)y->data, (const T *)a->data,
                                                                             (const T *)b->data, n, vec, f);
}
/* its backward: g = dy SiLU'(a + b), da = (add ? da : 0) + g and db alike, dy, da and db [B][C][H][W] floats,
   the branches in their store (NHWC two-byte values, or NCHW floats). A block takes a tile of 32 pixels
   of one image by 64 channels: first SiLU'(a + b) of the tile into shared memory, read along the
   store's contiguous axis (the channels of NHWC, the pixels of NCHW), then the gradients along the
   pixels: no thread splits a flat index by 64-bit divisions, nor reads its branches' values C apart. */
static const int SILU_TILE_P = 32, SILU_TILE_C = 64;
__global__ void __launch_bounds__(256) silu_back_kernel(const float *dy, const void *a, const void *b, int store, int C,
                                                        int HW, float *da, float *db, int add, int ptiles) {
    __shared__ float sg[SILU_TILE_C][SILU_TILE_P + 1];
    int img = blockIdx.x / ptiles, p0 = (blockIdx.x - img * ptiles) * SILU_TILE_P, c0 = blockIdx.y * SILU_TILE_C;
    int cfast = store != YOLO_FP32;
    for (int e = threadIdx.x; e < SILU_TILE_P * SILU_TILE_C; e += 256) {
        int c = cfast ? e % SILU_TILE_C : e / SILU_TILE_P, p = cfast ? e / SILU_TILE_C : e % SILU_TILE_P;
        if (c0 + c >= C || p0 + p >= HW) continue;
        size_t j = value_at(store, img, C, c0 + c, HW, p0 + p);
        sg[c][p] = t_silu_grad<float>(get_value(a, store, j) + get_value(b, store, j));
    }
    __syncthreads();
    for (int e = threadIdx.x; e < SILU_TILE_P * SILU_TILE_C; e += 256) {
        int c = e / SILU_TILE_P, p = e % SILU_TILE_P;
        if (c0 + c >= C || p0 + p >= HW) continue;
        size_t i = ((size_t)img * C + c0 + c) * HW + p0 + p;
        float g = dy[i] * sg[c][p];
        da[i] = (add ? da[i] : 0.f) + g;
        db[i] = (add ? db[i] : 0.f) + g;
    }
}
/* y = (add ? y : 0) + x, four floats a thread (one 16-byte access each where both are aligned) */
__global__ void accumulate_kernel(float *y, const float *x, int add, size_t n, int vec) {
    GRID_STRIDE(q, (n + 3) / 4) {
        size_t i = q * 4;
        if (vec && i + 4 <= n) {
            float4 v = *(const float4 *)(x + i), o = add ? *(const float4 *)(y + i) : make_float4(0.f, 0.f, 0.f, 0.f);
            *(float4 *)(y + i) = make_float4(o.x + v.x, o.y + v.y, o.z + v.z, o.w + v.w);
        } else {
            for (size_t j = i; j < n && j < i + 4; j++) y[j] = (add ? y[j] : 0.f) + x[j];
        }
    }
}

/* y = Op(a, b) value by value, a, b and y [B, C, H, W] stored alike: RepConvN's SiLU of its two branches'
   sum, a RepNBottleneck's shortcut add */
template <template <typename> class Op>
static void map2_stored(const yolo_tensor *a, const yolo_tensor *b, yolo_tensor *y, const char *name) {
    size_t n = (size_t)y->n * y->c * y->h * y->w;
    same_store(a, y, name);
    same_store(b, y, name);
    prof_begin();
    if (y->store == YOLO_FP32) map2<float>(a, b, y, Op<float>());
    else if (y->store == YOLO_BF16) map2<__nv_bfloat16>(a, b, y, Op<__nv_bfloat16>());
    else map2<__half>(a, b, y, Op<__half>());
    CK_LAUNCH(name);
    prof_end(name, 0, store_bytes(y->store) * 3.0 * n);
}
static void cu_silu_forward(const yolo_tensor *a, const yolo_tensor *b, yolo_tensor *y) { map2_stored<SiluOfSum>(a, b, y, "silu forward"); }
static void cu_silu_backward(const float *dy, const yolo_tensor *a, const yolo_tensor *b, float *da, float *db, int add) {
    size_t n = (size_t)a->n * a->c * a->h * a->w;
    same_store(a, b, "silu backward");
    prof_begin();
    int HW = a->h * a->w, ptiles = (HW + SILU_TILE_P - 1) / SILU_TILE_P;
    dim3 grid((unsigned)(a->n * ptiles), (unsigned)((a->c + SILU_TILE_C - 1) / SILU_TILE_C));
    silu_back_kernel<<<grid, 256>>>(dy, a->data, b->data, a->store, a->c, HW, da, db, add, ptiles);
    CK_LAUNCH("silu_back_kernel");
    prof_end("silu backward", 0, (4.0 * (add ? 5 : 3) + store_bytes(a->store) * 2) * n);
}
static void cu_add(const yolo_tensor *a, const yolo_tensor *b, yolo_tensor *y) { map2_stored<SumOf>(a, b, y, "add"); }
static void cu_accumulate(float *y, const float *x, size_t n, int add) {
    prof_begin();
    int vec = (uintptr_t)y % 16 == 0 && (uintptr_t)x % 16 == 0;
    accumulate_kernel<<<grid_for((n + 3) / 4), 256>>>(y, x, add, n, vec); CK_LAUNCH("accumulate_kernel");
    prof_end("accumulate", 0, 4.0 * (add ? 3 : 2) * n);
}

/* ------------------------------------------------------------------------ */
/* pools, resize, channel copies                                            */
/* ------------------------------------------------------------------------ */

/* The kernels on NHWC stores and the maxpool backward take one image a
   blockIdx.y: the index within an image stays under 2^31 and splits into
   pixel and channel by FastDiv. */
struct RunAt { int pix, c, y, x; };   /* run j of an image's [Ho][Wo][C / N]: output pixel (y, x), first channel c */
__device__ inline RunAt run_at(int j, int N, const FastDiv &fruns, const FastDiv &fWo) {
    RunAt a;
    a.pix = fdiv(j, fruns); a.c = (j - a.pix * (int)fruns.d) * N;
    a.y = fdiv(a.pix, fWo); a.x = a.pix - a.y * (int)fWo.d;
    return a;
}
#define IMAGE_STRIDE(j, per) for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < (per); j += gridDim.x * blockDim.x)
static dim3 grid_images(int per, int B) { return dim3(grid_for((size_t)per), (unsigned)B); }

__global__ void avgpool2_kernel(const float *x, float *y, size_t n, int H, int W) {
    int Ho = H - 1, Wo = W - 1;
    GRID_STRIDE(i, n) {
        size_t nc = i / ((size_t)Ho * Wo);
        int r = (int)(i % ((size_t)Ho * Wo)), oy = r / Wo, ox = r % Wo;
        const float *p = x + nc * H * W + oy * W + ox;
        y[i] = (p[0] + p[1] + p[W] + p[W + 1]) * 0.25f;
    }
}
/* The gather form, dy [B C][H-1][W-1] (the pool's) into dx [B C][H][W]: input (iy, ix) lies in the
   windows of outputs (iy-1..iy, ix-1..ix). A thread
   takes a run of four neighbouring inputs of a row (one 16-byte load and store of dX where W is a
   multiple of 4), the five outputs above and the five below them that touch the run read once; a
   plane (one channel of one image) a blockIdx.y, its H rows of runs over blockIdx.x. Each input adds
   its g / 4 in the CPU's order, window (iy-1, ix-1), (iy-1, ix), (iy, ix-1), (iy, ix), onto its old
   value (add) or 0: the CPU's bits (g / 4 is exact, so a fused multiply-add on either side rounds
   alike, but for subnormal g, under 2^-124). */
__global__ void avgpool2_back_kernel(const float *dy, float *dx, int add, int vec, int planes, int H, int W, FastDiv fruns) {
    int Ho = H - 1, Wo = W - 1, runs = (int)fruns.d, per = H * runs;
    for (int plane = blockIdx.y; plane < planes; plane += gridDim.y) {
        const float *g = dy + (size_t)plane * Ho * Wo;
        float *d = dx + (size_t)plane * H * W;
        for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < per; j += gridDim.x * blockDim.x) {
            int iy = fdiv(j, fruns), x0 = (j - iy * runs) * 4;
            __align__(16) float v[4] = { 0.f, 0.f, 0.f, 0.f };
            if (add && vec) *(float4 *)v = *(const float4 *)(d + iy * W + x0);
            else if (add) {
                #pragma unroll
                for (int t = 0; t < 4; t++) v[t] = x0 + t < W ? d[iy * W + x0 + t] : 0.f;
            }
            #pragma unroll
            for (int r = 0; r < 2; r++) {   /* output rows iy - 1, iy */
                int oy = iy - 1 + r;
                if (oy < 0 || oy >= Ho) continue;
                float q[5];   /* outputs x0 - 1 .. x0 + 3 of row oy, each / 4 */
                #pragma unroll
                for (int u = 0; u < 5; u++) { int ox = x0 - 1 + u; q[u] = ox >= 0 && ox < Wo ? g[oy * Wo + ox] * 0.25f : 0.f; }
                #pragma unroll
                for (int t = 0; t < 4; t++) {   /* input x0 + t: window x0 + t - 1 (q[t]), then x0 + t (q[t + 1]) */
                    if (x0 + t >= 1 && x0 + t - 1 < Wo) v[t] += q[t];
                    if (x0 + t < Wo) v[t] += q[t + 1];
                }
            }
            if (vec) *(float4 *)(d + iy * W + x0) = *(const float4 *)v;
            else {
                #pragma unroll
                for (int t = 0; t < 4; t++) if (x0 + t < W) d[iy * W + x0 + t] = v[t];
            }
        }
    }
}

/* NCHW: x's images xc channels apart, y's yc (slots: their buffers'; else C) */
__global__ void maxpool_kernel(const float *x, float *y, size_t n, int C, int xc, int yc, int H, int W, int Ho, int Wo, int k,
                               int s, int pad) {
    GRID_STRIDE(i, n) {
        size_t nc = i / ((size_t)Ho * Wo), b = nc / C, c = nc % C;
        int r = (int)(i % ((size_t)Ho * Wo));
        const float *p = x + (b * xc + c) * H * W;
        y[(b * yc + c) * Ho * Wo + r] = p[yolo_maxpool_argmax(p, H, W, k, s, pad, r / Wo, r % Wo)];
    }
}
/* N channels of a two-byte store, one 16-byte access when N = 8 */
template <class T, int N> struct __align__(2 * N) Run { T v[N]; };

/* The gradient goes to each window's winner, in two passes over as many
   images as the scratch buffer holds their winners (a byte each: the
   winner's place ky k + kx in its window, kept [B][C][Ho][Wo] as dY is).
   The first finds every window's winner, reading x as it is stored: NCHW
   floats, a thread a window, threads along the pixels; or an NHWC store,
   a thread 8 channels of a window (one 16-byte load a pixel of it where
   C is a multiple of 8), a block 32 windows of 64 channels, whose winners
   turn in shared memory so that each channel's go out side by side. The
   second gathers: a thread an input pixel, consecutive threads
   consecutive pixels of one channel (dX is NCHW); it visits the windows
   that hold it in the CPU's order (row by row) and adds dy of those it
   won, so the sum is the same bits as the CPU's scatter and the same on
   every run (add 0 starts it from 0 instead of dX's old value).
   Neighbouring threads read the same windows' bytes and dy, from the L1
   (no staging of a row's windows in shared memory, whose index
   arithmetic would set the pace, not memory). window_argmax is
   yolo_maxpool_argmax on a plane whose values lie step apart. */
template <class T> __device__ inline int window_argmax(const T *p, int step, int H, int W, int k, int s, int pad, int oy, int ox) {
    int best = -1;
    float bv = 0;
    for (int ky = 0; ky < k; ky++) {
        int iy = oy * s - pad + ky;
        if (iy < 0 || iy >= H) continue;
        for (int kx = 0; kx < k; kx++) {
            int ix = ox * s - pad + kx;
            if (ix < 0 || ix >= W) continue;
            float v = to_float(p[(size_t)(iy * W + ix) * step]);
            if (best < 0 || v > bv) { bv = v; best = ky * k + kx; }
        }
    }
    return best;
}
/* win [B][C][Ho][Wo] of x [B][C][H][W] (floats, a thread a window, consecutive threads along the pixels) */
__global__ void maxpool_winners_kernel(const float *x, unsigned char *win, int C, int H, int W, int Ho, int Wo, int k, int s,
                                       int pad, FastDiv fP, FastDiv fWo) {
    const float *xb = x + (size_t)blockIdx.y * C * H * W;
    IMAGE_STRIDE(j, C * Ho * Wo) {
        int c = fdiv(j, fP), pix = j - c * Ho * Wo, oy = fdiv(pix, fWo), ox = pix - oy * Wo;
        win[(size_t)blockIdx.y * C * Ho * Wo + j] = (unsigned char)window_argmax(xb + (size_t)c * H * W, 1, H, W, k, s, pad,
                                                                                  oy, ox);
    }
}
/* ... and of x [B][H][W][C] stored: block (32 windows from 32 blockIdx.x in image order, 64 channels
   from 64 blockIdx.y, image blockIdx.z), thread (window tid / 8, channels 8 (tid % 8)..); the winners
   as window_argmax picks them (the first of the greatest, row by row) */
template <class T>
__global__ void __launch_bounds__(256) maxpool_winners_nhwc_kernel(const T *x, unsigned char *win, int C, int H, int W,
                                                                  int Ho, int Wo, int k, int s, int pad, int vec) {
    __shared__ unsigned char place[64][36];   /* [channel][window], rows 36 bytes apart (fewer bank conflicts) */
    int P = Ho * Wo, p0 = blockIdx.x * 32, c0 = blockIdx.y * 64, w = threadIdx.x / 8, run = threadIdx.x % 8;
    int pix = p0 + w, c = c0 + 8 * run, valid = min(8, C - c);
    if (pix < P && valid > 0) {
        const T *xb = x + (size_t)blockIdx.z * H * W * C + c;
        int oy = pix / Wo, ox = pix - oy * Wo;
        float best[8];
        unsigned char at[8];
        bool any = false;
        for (int ky = 0; ky < k; ky++) {
            int iy = oy * s - pad + ky;
            if (iy < 0 || iy >= H) continue;
            for (int kx = 0; kx < k; kx++) {
                int ix = ox * s - pad + kx;
                if (ix < 0 || ix >= W) continue;
                Eight<T> v = load8(xb + ((size_t)iy * W + ix) * C, vec, valid);
                #pragma unroll
                for (int i = 0; i < 8; i++)
                    if (!any || to_float(v.v[i]) > best[i]) { best[i] = to_float(v.v[i]); at[i] = (unsigned char)(ky * k + kx); }
                any = true;
            }
        }
        #pragma unroll
        for (int i = 0; i < 8; i++) place[8 * run + i][w] = at[i];
    }
    __syncthreads();
    int ch = threadIdx.x / 4, q = 8 * (threadIdx.x % 4);   /* a channel's 32 winners: 4 threads, 8 each */
    if (c0 + ch >= C) return;
    unsigned char *dst = win + ((size_t)blockIdx.z * C + c0 + ch) * P + p0 + q;
    for (int i = 0; i < 8 && p0 + q + i < P; i++) dst[i] = place[ch][q + i];
}
/* the windows oy (ox) that hold input row iy (column): oy s - pad <= iy <= oy s - pad + k - 1 */
__device__ inline int first_window(int i, int k, int s, int pad) { return max(0, (i + pad - k + s) / s); }
__device__ inline int last_window(int i, int s, int pad, int n) { return min(n - 1, (i + pad) / s); }
/* dx [B][C][H][W] (+)= dy [B][C][Ho][Wo] of the windows each pixel won: block (plane blockIdx.x,
   its pixels from 256 blockIdx.y) */
__global__ void maxpool_back_kernel(const unsigned char *__restrict__ win, const float *__restrict__ dy, float *dx, int add,
                                    int H, int W, int Ho, int Wo, int k, int s, int pad, FastDiv fW) {
    int p = blockIdx.y * blockDim.x + threadIdx.x;
    if (p >= H * W) return;
    int iy = fdiv(p, fW), ix = p - iy * W;
    const unsigned char *wp = win + (size_t)blockIdx.x * Ho * Wo;
    const float *gp = dy + (size_t)blockIdx.x * Ho * Wo;
    float *d = dx + (size_t)blockIdx.x * H * W + p;
    float acc = add ? *d : 0.f;
    int oy1 = last_window(iy, s, pad, Ho), ox0 = first_window(ix, k, s, pad), ox1 = last_window(ix, s, pad, Wo);
    for (int oy = first_window(iy, k, s, pad); oy <= oy1; oy++) {
        int place_y = (iy - oy * s + pad) * k;
        for (int ox = ox0; ox <= ox1; ox++)
            if (wp[oy * Wo + ox] == place_y + ix - ox * s + pad) acc += gp[oy * Wo + ox];
    }
    *d = acc;
}
/* the winners of n images of x: float32 NCHW, or a two-byte NHWC store */
static void maxpool_winners(const float *x, unsigned char *win, int n, int C, int H, int W, int Ho, int Wo, int k, int s,
                            int pad) {
    maxpool_winners_kernel<<<grid_images(C * Ho * Wo, n), 256>>>(x, win, C, H, W, Ho, Wo, k, s, pad, fastdiv(Ho * Wo),
                                                                 fastdiv(Wo));
    CK_LAUNCH("maxpool_winners_kernel");
}
template <class T> static void maxpool_winners(const T *x, unsigned char *win, int n, int C, int H, int W, int Ho, int Wo,
                                               int k, int s, int pad) {
    dim3 grid((Ho * Wo + 31) / 32, (C + 63) / 64, n);
    maxpool_winners_nhwc_kernel<T><<<grid, 256>>>(x, win, C, H, W, Ho, Wo, k, s, pad, C % 8 == 0 && (uintptr_t)x % 16 == 0);
    CK_LAUNCH("maxpool_winners_nhwc_kernel");
}
template <class T> static void maxpool_back(const T *x, const yolo_tensor *xt, int k, int s, int pad, const yolo_tensor *y,
                                            float *dx, int add) {
    int C = xt->c, H = xt->h, W = xt->w, Ho = y->h, Wo = y->w;
    size_t per_image = (size_t)C * Ho * Wo;   /* winners' bytes */
    if (per_image > STAGE_BYTES || k * k > 255) {   /* 255: no window's place */
        fprintf(stderr, "maxpool backward: %dx%d windows of [%d, %d, %d] do not fit the scratch\n", k, k, C, Ho, Wo);
        exit(1);
    }
    if (!g_stage) g_stage = (char *)cu_own_alloc(STAGE_BYTES);
    unsigned char *win = (unsigned char *)g_stage;
    int nb = (int)min((size_t)xt->n, STAGE_BYTES / per_image);
    for (int b0 = 0; b0 < xt->n; b0 += nb) {
        int n = min(nb, xt->n - b0);
        maxpool_winners(x + (size_t)b0 * C * H * W, win, n, C, H, W, Ho, Wo, k, s, pad);
        maxpool_back_kernel<<<dim3(n * C, (H * W + 255) / 256), 256>>>(win, y->grad + (size_t)b0 * C * Ho * Wo,
                                                                       dx + (size_t)b0 * C * H * W, add, H, W, Ho, Wo, k, s,
                                                                       pad, fastdiv(W));
        CK_LAUNCH("maxpool_back_kernel");
    }
}

/* The same forwards on NHWC two-byte stores (a bf16 or half pass): a
   thread takes a run of N channels of one output pixel, N = 8 (one
   16-byte load or store a pixel of the window) when the channel counts
   and offsets come in 8s, else 1; channels fastest, so a warp's accesses
   are neighbours. The sums in the CPU's order, each result rounded to T
   as the CPU twin rounds it: the same bits as one value a thread. */
template <class T, int N>
__global__ void avgpool2_nhwc_kernel(const T *x, T *y, int C, int H, int W, int per, FastDiv fruns, FastDiv fWo) {
    const T *xb = x + (size_t)blockIdx.y * H * W * C;
    IMAGE_STRIDE(j, per) {
        RunAt o = run_at(j, N, fruns, fWo);
        const T *p = xb + ((size_t)o.y * W + o.x) * C + o.c;
        size_t row = (size_t)W * C;
        Run<T, N> a = *(const Run<T, N> *)p, b = *(const Run<T, N> *)(p + C), c = *(const Run<T, N> *)(p + row),
                  d = *(const Run<T, N> *)(p + row + C), r;
        for (int i = 0; i < N; i++)
            r.v[i] = round_to<T>((to_float(a.v[i]) + to_float(b.v[i]) + to_float(c.v[i]) + to_float(d.v[i])) * 0.25f);
        *(Run<T, N> *)(y + ((size_t)blockIdx.y * (H - 1) * (W - 1) + o.pix) * C + o.c) = r;
    }
}
/* the window's largest value (the maximum is exact in T: no rounding), the first of equals; a pixel's
   channels xc apart in x and yc in y (slots: their buffers'; else C) */
template <class T, int N>
__global__ void maxpool_nhwc_kernel(const T *x, T *y, int C, int xc, int yc, int H, int W, int Ho, int Wo, int k, int s,
                                    int pad, int per, FastDiv fruns, FastDiv fWo) {
    const T *xb = x + (size_t)blockIdx.y * H * W * xc;
    IMAGE_STRIDE(j, per) {
        RunAt o = run_at(j, N, fruns, fWo);
        Run<T, N> best = *(const Run<T, N> *)(xb + o.c);
        bool any = false;
        for (int iy = max(0, o.y * s - pad); iy < min(H, o.y * s - pad + k); iy++)
            for (int ix = max(0, o.x * s - pad); ix < min(W, o.x * s - pad + k); ix++) {
                Run<T, N> v = *(const Run<T, N> *)(xb + ((size_t)iy * W + ix) * xc + o.c);
                for (int i = 0; i < N; i++)
                    if (!any || to_float(v.v[i]) > to_float(best.v[i])) best.v[i] = v.v[i];
                any = true;
            }
        *(Run<T, N> *)(y + ((size_t)blockIdx.y * Ho * Wo + o.pix) * yc + o.c) = best;
    }
}
template <class T> static void avgpool2_nhwc(const yolo_tensor *x, yolo_tensor *y) {
    int vec = x->c % 8 == 0, N = vec ? 8 : 1, per = y->h * y->w * (x->c / N);
    FastDiv fruns = fastdiv(x->c / N), fWo = fastdiv(y->w);
    const T *xs = (const T *)x->data;
    T *ys = (T *)y->data;
    if (vec) avgpool2_nhwc_kernel<T, 8><<<grid_images(per, y->n), 256>>>(xs, ys, x->c, x->h, x->w, per, fruns, fWo);
    else avgpool2_nhwc_kernel<T, 1><<<grid_images(per, y->n), 256>>>(xs, ys, x->c, x->h, x->w, per, fruns, fWo);
}
template <class T> static void maxpool_nhwc(const yolo_tensor *x, int k, int s, int pad, yolo_tensor *y) {
    int vec = x->c % 8 == 0 && slot_in_8s(x) && slot_in_8s(y), N = vec ? 8 : 1, per = y->h * y->w * (x->c / N);
    int xc = yolo_buffer_channels(x), yc = yolo_buffer_channels(y);
    FastDiv fruns = fastdiv(x->c / N), fWo = fastdiv(y->w);
    const T *xs = (const T *)slot_data(x);
    T *ys = (T *)slot_data(y);
    if (vec)
        maxpool_nhwc_kernel<T, 8><<<grid_images(per, y->n), 256>>>(xs, ys, x->c, xc, yc, x->h, x->w, y->h, y->w, k, s, pad,
                                                                   per, fruns, fWo);
    else maxpool_nhwc_kernel<T, 1><<<grid_images(per, y->n), 256>>>(xs, ys, x->c, xc, yc, x->h, x->w, y->h, y->w, k, s, pad,
                                                                    per, fruns, fWo);
}

static void cu_avgpool2_forward(const yolo_tensor *x, yolo_tensor *y) {
    size_t n = (size_t)y->n * y->c * y->h * y->w;
    same_store(x, y, "avgpool");
    prof_begin();
    if (y->store == YOLO_FP32) avgpool2_kernel<<<grid_for(n), 256>>>(x->data, y->data, n, x->h, x->w);
    else if (y->store == YOLO_BF16) avgpool2_nhwc<__nv_bfloat16>(x, y);
    else avgpool2_nhwc<__half>(x, y);
    CK_LAUNCH("avgpool2_kernel");
    prof_end("avgpool forward", 0, store_bytes(y->store) * 5.0 * n);
}
static void cu_avgpool2_backward(const yolo_tensor *y, float *dx, int H, int W, int add) {
    size_t n = (size_t)y->n * y->c * H * W;
    prof_begin();
    int planes = y->n * y->c, runs = (W + 3) / 4, vec = W % 4 == 0 && (uintptr_t)dx % 16 == 0;
    dim3 grid((unsigned)((H * runs + 255) / 256), (unsigned)min(planes, 65535));
    avgpool2_back_kernel<<<grid, 256>>>(y->grad, dx, add, vec, planes, H, W, fastdiv((unsigned)runs));
    CK_LAUNCH("avgpool2_back_kernel");
    prof_end("avgpool backward", 0, 4.0 * (add ? 3 : 2) * n);
}
/* x and y may be slots (a folded SPPELAN's or ADown's) */
static void cu_maxpool_forward(const yolo_tensor *x, int k, int s, int pad, yolo_tensor *y) {
    size_t n = (size_t)y->n * y->c * y->h * y->w;
    store_match(x, y, "maxpool");
    prof_begin();
    if (y->store == YOLO_FP32)
        maxpool_kernel<<<grid_for(n), 256>>>((const float *)slot_data(x), (float *)slot_data(y), n, x->c, yolo_buffer_channels(x),
                                             yolo_buffer_channels(y), x->h, x->w, y->h, y->w, k, s, pad);
    else if (y->store == YOLO_BF16) maxpool_nhwc<__nv_bfloat16>(x, k, s, pad, y);
    else maxpool_nhwc<__half>(x, k, s, pad, y);
    CK_LAUNCH("maxpool_kernel");
    prof_end("maxpool forward", 0, store_bytes(y->store) * 2.0 * n);
}
static void cu_maxpool_backward(const yolo_tensor *x, int k, int s, int pad, const yolo_tensor *y, float *dx, int add) {
    yolo_dense(x, "maxpool_backward"); yolo_dense(y, "maxpool_backward");
    size_t n = (size_t)x->n * x->c * x->h * x->w, no = (size_t)y->n * y->c * y->h * y->w;
    prof_begin();
    if (x->store == YOLO_FP32) maxpool_back(x->data, x, k, s, pad, y, dx, add);
    else if (x->store == YOLO_BF16) maxpool_back((const __nv_bfloat16 *)x->data, x, k, s, pad, y, dx, add);
    else maxpool_back((const __half *)x->data, x, k, s, pad, y, dx, add);
    /* the bytes moved: x read, the winners written and read, dy read, dX written (and read to add) */
    prof_end("maxpool backward", 0, (double)store_bytes(x->store) * n + 2.0 * no + 4.0 * no + 4.0 * (add ? 2 : 1) * n);
}

/* nearest source index, floor(d * in / out) computed in float as PyTorch */
__device__ inline int nearest_src(int d, int in, int out) {
    int s = (int)floorf((float)d * ((float)in / (float)out));
    return s < in - 1 ? s : in - 1;
}
/* y = x resized (add: y + x resized) */
__global__ void resize_kernel(const float *x, int xc, int xh, int xw, int c0, int add, float *y, size_t n, int C, int Ho,
                              int Wo) {
    GRID_STRIDE(i, n) {
        size_t nc = i / ((size_t)Ho * Wo);
        int r = (int)(i % ((size_t)Ho * Wo)), b = (int)(nc / C), c = (int)(nc % C);
        int sy = nearest_src(r / Wo, xh, Ho), sx = nearest_src(r % Wo, xw, Wo);
        y[i] = (add ? y[i] : 0.f) + x[(((size_t)b * xc + c0 + c) * xh + sy) * xw + sx];
    }
}
/* the same on NHWC two-byte stores, a run of N channels a thread as avgpool2_nhwc_kernel */
template <class T, int N>
__global__ void resize_nhwc_kernel(const T *x, int xc, int xh, int xw, int c0, int add, T *y, int C, int Ho, int Wo,
                                   int per, FastDiv fruns, FastDiv fWo) {
    IMAGE_STRIDE(j, per) {
        RunAt o = run_at(j, N, fruns, fWo);
        int sy = nearest_src(o.y, xh, Ho), sx = nearest_src(o.x, xw, Wo);
        Run<T, N> v = *(const Run<T, N> *)(x + (((size_t)blockIdx.y * xh + sy) * xw + sx) * xc + c0 + o.c);
        Run<T, N> *d = (Run<T, N> *)(y + ((size_t)blockIdx.y * Ho * Wo + o.pix) * C + o.c), r;
        if (add) r = *d;
        for (int i = 0; i < N; i++) r.v[i] = round_to<T>((add ? to_float(r.v[i]) : 0.f) + to_float(v.v[i]));
        *d = r;
    }
}
template <class T> static void resize_nhwc(const yolo_tensor *x, int c0, int add, yolo_tensor *y) {
    int vec = y->c % 8 == 0 && x->c % 8 == 0 && c0 % 8 == 0, N = vec ? 8 : 1, per = y->h * y->w * (y->c / N);
    FastDiv fruns = fastdiv(y->c / N), fWo = fastdiv(y->w);
    const T *xs = (const T *)x->data;
    T *ys = (T *)y->data;
    if (vec)
        resize_nhwc_kernel<T, 8><<<grid_images(per, y->n), 256>>>(xs, x->c, x->h, x->w, c0, add, ys, y->c, y->h, y->w, per,
                                                                  fruns, fWo);
    else resize_nhwc_kernel<T, 1><<<grid_images(per, y->n), 256>>>(xs, x->c, x->h, x->w, c0, add, ys, y->c, y->h, y->w, per,
                                                                   fruns, fWo);
}
/* dx [B, xc, xh, xw]'s channels c0.. (+)= the nearest resize's backward
   of dy [B, C, Ho, Wo]: gathered, one thread per source pixel (image
   blockIdx.y, consecutive threads on consecutive pixels of a plane): the
   outputs that copied it form a block of rows and columns, summed in the
   CPU's order (deterministic); add 0 starts from 0 instead of dX's old
   value. */
__global__ void resize_back_kernel(const float *dy, float *dx, int add, int xc, int xh, int xw, int c0, int C, int Ho, int Wo,
                                   FastDiv fplane, FastDiv fxw) {
    IMAGE_STRIDE(j, C * xh * xw) {
        int c = fdiv(j, fplane), r = j - c * xh * xw, sy = fdiv(r, fxw), sx = r - sy * xw;
        const float *g = dy + ((size_t)blockIdx.y * C + c) * Ho * Wo;
        float *d = &dx[(((size_t)blockIdx.y * xc + c0 + c) * xh + sy) * xw + sx];
        float acc = add ? *d : 0.f;
        for (int oy = max(0, sy * Ho / xh - 1); oy < Ho; oy++) {
            int ty = nearest_src(oy, xh, Ho);
            if (ty < sy) continue;
            if (ty > sy) break;
            for (int ox = max(0, sx * Wo / xw - 1); ox < Wo; ox++) {
                int tx = nearest_src(ox, xw, Wo);
                if (tx < sx) continue;
                if (tx > sx) break;
                acc += g[oy * Wo + ox];
            }
        }
        *d = acc;
    }
}
static void cu_resize_forward(const yolo_tensor *x, int c0, int add, yolo_tensor *y) {
    size_t n = (size_t)y->n * y->c * y->h * y->w;
    same_store(x, y, "nearest resize");
    prof_begin();
    if (y->store == YOLO_FP32)
        resize_kernel<<<grid_for(n), 256>>>(x->data, x->c, x->h, x->w, c0, add, y->data, n, y->c, y->h, y->w);
    else if (y->store == YOLO_BF16) resize_nhwc<__nv_bfloat16>(x, c0, add, y);
    else resize_nhwc<__half>(x, c0, add, y);
    CK_LAUNCH("resize_kernel");
    prof_end("nearest resize forward", 0, store_bytes(y->store) * (add ? 3.0 : 2.0) * n);
}
static void cu_resize_backward(const yolo_tensor *y, yolo_tensor *x, int c0, int add) {
    int per = y->c * x->h * x->w;   /* one thread per source pixel */
    prof_begin();
    resize_back_kernel<<<grid_images(per, y->n), 256>>>(y->grad, x->grad, add, x->c, x->h, x->w, c0, y->c, y->h, y->w,
                                                        fastdiv(x->h * x->w), fastdiv(x->w));
    CK_LAUNCH("resize_back_kernel");
    /* the bytes moved: dY read, dX written (and read to add) */
    prof_end("nearest resize backward", 0, 4.0 * ((double)y->n * y->c * y->h * y->w + (add ? 2.0 : 1.0) * y->n * per));
}

/* channels [sc, sc + C) of src into [dc, dc + C) of dst (or added to them),
   per image a run of C HW contiguous values: blockIdx.y the image, each
   thread 4 neighbours, 16 bytes at a time when HW is a multiple of 4 */
__global__ void copy_channels_kernel(const float *src, int src_c, int sc, float *dst, int dst_c, int dc, int C, int HW,
                                     int accumulate) {
    size_t per = (size_t)C * HW, r = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) * 4;
    const float *s = src + ((size_t)blockIdx.y * src_c + sc) * HW + r;
    float *d = dst + ((size_t)blockIdx.y * dst_c + dc) * HW + r;
    if (HW % 4 == 0) {
        if (r >= per) return;
        float4 v = *(const float4 *)s;
        if (accumulate) { float4 o = *(float4 *)d; v.x += o.x; v.y += o.y; v.z += o.z; v.w += o.w; }
        *(float4 *)d = v;
    } else {
        for (int j = 0; j < 4 && r + j < per; j++) d[j] = accumulate ? d[j] + s[j] : s[j];
    }
}
static void cu_copy_channels(const float *src, int src_c, int sc, float *dst, int dst_c, int dc, int B, int C, int HW,
                             int accumulate) {
    size_t per = (size_t)C * HW;
    prof_begin();
    copy_channels_kernel<<<dim3((unsigned)((per + 1023) / 1024), B), 256>>>(src, src_c, sc, dst, dst_c, dc, C, HW, accumulate);
    CK_LAUNCH("copy_channels_kernel");
    prof_end(accumulate ? "channel copy (accumulate)" : "channel copy", 0, 4.0 * (accumulate ? 3 : 2) * B * per);
}

/* ------------------------------------------------------------------------ */
/* optimizer                                                                */
/* ------------------------------------------------------------------------ */

/* one step of every value, each as its group says (yolo_optim_value, the CPU op's arithmetic) */
__global__ void optim_kernel(yolo_update u, const unsigned char *group, float *w, const float *g, float *m, float *v,
                             float *vmax, size_t n) {
    GRID_STRIDE(i, n) yolo_optim_value(&u, group[i], w, g, m, v, vmax, i);
}
__global__ void lerp_kernel(float *y, const float *x, double d, size_t n) { GRID_STRIDE(i, n) y[i] = (float)(d * y[i] + (1 - d) * x[i]); }
static void cu_lerp(float *y, const float *x, double d, size_t n) {
    prof_begin();
    lerp_kernel<<<grid_for(n), 256>>>(y, x, d, n);
    CK_LAUNCH("lerp_kernel");
    prof_end("ema", 0, 4.0 * 3 * n);
}

/* sum of squares (the gradient norm for clipping): each of at most 1024
   blocks reduces its grid-stride share in double into part[block], and
   the host adds the blocks in order, so the norm is the same on every run */
__global__ void sumsq_kernel(const float *x, size_t n, double *part) {
    __shared__ double sh[256];
    double s = 0;
    GRID_STRIDE(i, n) s += (double)x[i] * x[i];
    sh[threadIdx.x] = s;
    __syncthreads();
    for (int k = 128; k > 0; k >>= 1) {
        if ((int)threadIdx.x < k) sh[threadIdx.x] += sh[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) part[blockIdx.x] = sh[0];
}
static double *g_sumsq_part = NULL;   /* [1024] of the backend's own scratch */
static double cu_sumsq(const float *x, size_t n) {
    if (!n) return 0;
    if (!g_sumsq_part) g_sumsq_part = (double *)cu_own_alloc(1024 * sizeof(double));
    unsigned blocks = grid_for(n) > 1024 ? 1024 : grid_for(n);
    double part[1024], sum = 0;
    prof_begin();
    sumsq_kernel<<<blocks, 256>>>(x, n, g_sumsq_part);
    CK_LAUNCH("sumsq_kernel");
    prof_end("gradient norm", 0, 4.0 * n);
    cu_download(part, g_sumsq_part, blocks * sizeof(double));
    for (unsigned b = 0; b < blocks; b++) sum += part[b];
    return sum;
}

static void cu_optim_update(const yolo_update *u, const unsigned char *group, float *w, const float *g, float *m,
                            float *v, float *vmax, size_t n) {
    prof_begin();
    optim_kernel<<<grid_for(n), 256>>>(*u, group, w, g, m, v, vmax, n);
    CK_LAUNCH("optim_kernel");
    prof_end("optimizer", 0, (1 + 4.0 * (u->kind == YOLO_SGD || u->kind == YOLO_LION ? 5 : vmax ? 9 : 7)) * n);
}

/* ------------------------------------------------------------------------ */
/* the detection loss: assigner, CIoU, DFL, BCE and their gradient          */
/* ------------------------------------------------------------------------ */
/* The steps of yolo_cpu_loss in yolov9.h, one kernel each under the same
   name (loss_decode_kernel = yolo_loss_decode, assign_topk_kernel =
   yolo_assign_topk, assign_resolve, assign_norm, assign_score, loss_terms,
   scale_kernel = yolo_loss_scale), in double precision like them, so that
   the assigner takes the same decisions: decode every anchor; per
   ground-truth box, alignment metrics over all anchors and its 10 best
   inside the box; per anchor, one box when several claim it; per box, its
   best alignment and IoU; per anchor, the target score; then the three
   terms and their gradient, scaled by 1/S. */

struct Levels { int h[3], w[3], stride[3], A, nc, no; };

__device__ inline void anchor_at(const Levels &L, int a, int *l, int *cell, double *ax, double *ay) {
    int k = 0;
    while (k < 2 && a >= L.h[k] * L.w[k]) { a -= L.h[k] * L.w[k]; k++; }
    *l = k; *cell = a;
    *ax = a % L.w[k] + 0.5; *ay = a / L.w[k] + 0.5;
}
__device__ inline float map_at(const float *const *maps, const Levels &L, int n, int l, int cell, int ch) {
    int HW = L.h[l] * L.w[l];
    return maps[l][((size_t)n * L.no + ch) * HW + cell];
}
struct MapPtrs { const float *m[3]; float *g[3]; };

/* softmax over one side's 16 bins (float probabilities, as the CPU twin) and the expected distance */
__device__ double dfl_side(const float *const *maps, const Levels &L, int n, int l, int cell, int side, float *prob) {
    double mx = map_at(maps, L, n, l, cell, side * YOLO_REG_MAX), s = 0, e = 0;
    for (int k = 1; k < YOLO_REG_MAX; k++) mx = fmax(mx, (double)map_at(maps, L, n, l, cell, side * YOLO_REG_MAX + k));
    for (int k = 0; k < YOLO_REG_MAX; k++) { double v = exp(map_at(maps, L, n, l, cell, side * YOLO_REG_MAX + k) - mx); prob[k] = (float)v; s += v; }
    for (int k = 0; k < YOLO_REG_MAX; k++) { prob[k] = (float)(prob[k] / s); e += prob[k] * k; }
    return (float)e;   /* rounded as the CPU twin rounds it */
}
__device__ inline float prob_of(double x) { return (float)(1.0 / (1.0 + exp(-x))); }

/* anchor a's predicted box (x1, y1, x2, y2) in grid units: the anchor point
   minus / plus the four expected distances (rounded to float as the CPU twin) */
__device__ void predicted_box(const MapPtrs &mp, const Levels &L, int n, int a, double *box, int *l) {
    int cell;
    double ax, ay;
    anchor_at(L, a, l, &cell, &ax, &ay);
    float prob[YOLO_REG_MAX];
    double d[4];
    for (int s = 0; s < 4; s++) d[s] = dfl_side(mp.m, L, n, *l, cell, s, prob);
    box[0] = ax - d[0]; box[1] = ay - d[1]; box[2] = ax + d[2]; box[3] = ay + d[3];
}

/* predicted boxes [B, A, 4] in grid units */
__global__ void loss_decode_kernel(MapPtrs mp, Levels L, int B, double *pbox) {
    GRID_STRIDE(i, (size_t)B * L.A) {
        int l;
        predicted_box(mp, L, (int)(i / L.A), (int)(i % L.A), pbox + 4 * i, &l);
    }
}

__device__ int gt_image(const int *gstart, int B, int j) { int n = 0; while (n + 1 < B && j >= gstart[n + 1]) n++; return n; }

/* one block per ground-truth box: overlaps, alignments and its 10 best anchors inside it */
__global__ void assign_topk_kernel(MapPtrs mp, Levels L, int B, const float *gt, const int *gstart, const double *pbox,
                                   double *ov, double *al, double *met, unsigned char *pos) {
    int j = blockIdx.x, n = gt_image(gstart, B, j);
    const float *gr = gt + 5 * j;
    double box[4] = { gr[1], gr[2], gr[3], gr[4] };
    int cls = (int)gr[0];
    size_t row = (size_t)j * L.A;
    for (int a = threadIdx.x; a < L.A; a += blockDim.x) {
        int l, cell;
        double ax, ay;
        anchor_at(L, a, &l, &cell, &ax, &ay);
        double s = L.stride[l], pp[4];
        for (int i = 0; i < 4; i++) pp[i] = pbox[((size_t)n * L.A + a) * 4 + i] * s;
        double u = yolo_ciou(box, pp, NULL, NULL, NULL);
        u = u > 0 ? u : 0;
        double alv = pow((double)prob_of(map_at(mp.m, L, n, l, cell, 4 * YOLO_REG_MAX + cls)), YOLO_TAL_ALPHA) * pow(u, YOLO_TAL_BETA);
        ov[row + a] = u; al[row + a] = alv;
        ax *= s; ay *= s;
        double dmin = fmin(fmin(ax - box[0], ay - box[1]), fmin(box[2] - ax, box[3] - ay));
        met[row + a] = dmin > 1e-9 ? alv : 0;
        pos[row + a] = 0;
    }
    __syncthreads();
    /* ten rounds of a block-wide argmax: the largest positive metric, the earlier anchor on ties */
    __shared__ double bv[256];
    __shared__ int bi[256];
    for (int round = 0; round < YOLO_TOPK; round++) {
        double v = 0; int idx = -1;
        for (int a = threadIdx.x; a < L.A; a += blockDim.x) {
            double x = met[row + a];
            if (x > v || (x == v && idx >= 0 && x > 0 && a < idx)) { v = x; idx = a; }
        }
        bv[threadIdx.x] = v; bi[threadIdx.x] = idx;
        __syncthreads();
        for (int o = blockDim.x / 2; o > 0; o >>= 1) {
            if (threadIdx.x < o) {
                double v2 = bv[threadIdx.x + o]; int i2 = bi[threadIdx.x + o];
                if (i2 >= 0 && (bi[threadIdx.x] < 0 || v2 > bv[threadIdx.x] || (v2 == bv[threadIdx.x] && i2 < bi[threadIdx.x]))) {
                    bv[threadIdx.x] = v2; bi[threadIdx.x] = i2;
                }
            }
            __syncthreads();
        }
        int best = bi[0];
        __syncthreads();
        if (best < 0) break;
        if (threadIdx.x == 0) { pos[row + best] = 1; met[row + best] = 0; }
        __syncthreads();
    }
}

/* one thread per anchor: the box it keeps when several claim it, and its target */
__global__ void assign_resolve_kernel(Levels L, int B, const float *gt, const int *gstart, const double *ov,
                                      unsigned char *pos, unsigned char *fg, int *label, float *tbox) {
    GRID_STRIDE(i, (size_t)B * L.A) {
        int n = (int)(i / L.A), a = (int)(i % L.A), j0 = gstart[n], j1 = gstart[n + 1];
        int count = 0, first = -1;
        for (int j = j0; j < j1; j++) if (pos[(size_t)j * L.A + a]) { count++; if (first < 0) first = j; }
        if (count > 1) {
            int best = j0;
            for (int j = j0 + 1; j < j1; j++) if (ov[(size_t)j * L.A + a] > ov[(size_t)best * L.A + a]) best = j;
            for (int j = j0; j < j1; j++) pos[(size_t)j * L.A + a] = (j == best);
            first = best;
        }
        int l, cell;
        double ax, ay;
        anchor_at(L, a, &l, &cell, &ax, &ay);
        fg[i] = count > 0;
        label[i] = count > 0 ? (int)gt[5 * first] : 0;
        for (int k = 0; k < 4; k++) tbox[4 * i + k] = count > 0 ? (float)(gt[5 * first + 1 + k] / (double)L.stride[l]) : 0.f;
    }
}

/* one block per box: its best alignment and best IoU over its anchors */
__global__ void assign_norm_kernel(int A, const double *ov, const double *al, const unsigned char *pos, double *pal, double *pov) {
    size_t row = (size_t)blockIdx.x * A;
    double a1 = 0, a2 = 0;
    for (int a = threadIdx.x; a < A; a += blockDim.x)
        if (pos[row + a]) { a1 = fmax(a1, al[row + a]); a2 = fmax(a2, ov[row + a]); }
    __shared__ double s1[256], s2[256];
    s1[threadIdx.x] = a1; s2[threadIdx.x] = a2;
    __syncthreads();
    for (int o = blockDim.x / 2; o > 0; o >>= 1) {
        if (threadIdx.x < o) { s1[threadIdx.x] = fmax(s1[threadIdx.x], s1[threadIdx.x + o]); s2[threadIdx.x] = fmax(s2[threadIdx.x], s2[threadIdx.x + o]); }
        __syncthreads();
    }
    if (threadIdx.x == 0) { pal[blockIdx.x] = s1[0]; pov[blockIdx.x] = s2[0]; }
}

__global__ void assign_score_kernel(Levels L, int B, const int *gstart, const double *al, const unsigned char *pos,
                                    const double *pal, const double *pov, float *score) {
    GRID_STRIDE(i, (size_t)B * L.A) {
        int n = (int)(i / L.A), a = (int)(i % L.A);
        double sc = 0;
        for (int j = gstart[n]; j < gstart[n + 1]; j++)
            if (pos[(size_t)j * L.A + a]) sc = fmax(sc, al[(size_t)j * L.A + a] * pov[j] / (pal[j] + 1e-9));
        score[i] = (float)sc;
    }
}

/* one thread per anchor: the three terms (summed per block, then atomically) and the unscaled gradient */
__global__ void loss_terms_kernel(MapPtrs mp, Levels L, int B, const double *pbox, const unsigned char *fg,
                                  const int *label, const float *tbox, const float *score, float *alpha, int reuse,
                                  double *sums) {
    double box_l = 0, cls_l = 0, dfl_l = 0, ssum = 0;
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < (size_t)B * L.A) {
        int n = (int)(i / L.A), a = (int)(i % L.A), l, cell;
        double ax, ay;
        anchor_at(L, a, &l, &cell, &ax, &ay);
        int HW = L.h[l] * L.w[l], f = fg[i], lab = label[i];
        double sc = score[i];
        float *g = mp.g[l] + (size_t)n * L.no * HW + cell;
        ssum = sc;
        for (int c = 0; c < L.nc; c++) {
            double x = map_at(mp.m, L, n, l, cell, 4 * YOLO_REG_MAX + c), t = (f && c == lab) ? sc : 0;
            cls_l += fmax(x, 0.0) - x * t + log1p(exp(-fabs(x)));
            g[(size_t)(4 * YOLO_REG_MAX + c) * HW] = (float)((prob_of(x) - t) * YOLO_GAIN_CLS);
        }
        if (!f) {
            for (int k = 0; k < 4 * YOLO_REG_MAX; k++) g[(size_t)k * HW] = 0.f;
        } else {
            double tb[4], gb[4], al = alpha[i];
            for (int k = 0; k < 4; k++) tb[k] = tbox[4 * i + k];
            double ciou = yolo_ciou(pbox + 4 * i, tb, reuse ? &al : NULL, &al, gb);
            if (!reuse) alpha[i] = (float)al;
            box_l = (1 - ciou) * sc;
            double gdist[4] = { gb[0], gb[1], -gb[2], -gb[3] }, anc[2] = { ax, ay };
            for (int s = 0; s < 4; s++) {
                float p[YOLO_REG_MAX];
                dfl_side(mp.m, L, n, l, cell, s, p);
                double e = 0;
                for (int k = 0; k < YOLO_REG_MAX; k++) e += p[k] * k;
                double tgt = s < 2 ? anc[s] - tb[s] : tb[s] - anc[s - 2];
                tgt = fmin(fmax(tgt, 0.0), YOLO_REG_MAX - 1 - 0.01);
                int tl = (int)tgt;
                double wl = tl + 1 - tgt, wr = 1 - wl;
                dfl_l -= (wl * log(fmax((double)p[tl], 1e-300)) + wr * log(fmax((double)p[tl + 1], 1e-300))) / 4 * sc;
                for (int k = 0; k < YOLO_REG_MAX; k++) {
                    double onehot = (k == tl ? wl : 0) + (k == tl + 1 ? wr : 0);
                    double v = (p[k] - onehot) / 4 * sc * YOLO_GAIN_DFL + gdist[s] * sc * YOLO_GAIN_BOX * p[k] * (k - e);
                    g[(size_t)(s * YOLO_REG_MAX + k) * HW] = (float)v;
                }
            }
        }
    }
    __shared__ double sh[4][256];
    sh[0][threadIdx.x] = box_l; sh[1][threadIdx.x] = cls_l; sh[2][threadIdx.x] = dfl_l; sh[3][threadIdx.x] = ssum;
    __syncthreads();
    for (int o = blockDim.x / 2; o > 0; o >>= 1) {
        if (threadIdx.x < o) for (int q = 0; q < 4; q++) sh[q][threadIdx.x] += sh[q][threadIdx.x + o];
        __syncthreads();
    }
    if (threadIdx.x < 4) atomicAdd(&sums[threadIdx.x], sh[threadIdx.x][0]);
}

__global__ void scale_kernel(float *y, float k, size_t n) { GRID_STRIDE(i, n) y[i] *= k; }

static void cu_loss(yolo_loss_branch *lb) {
    Levels L;
    size_t BA = (size_t)lb->B * lb->A, JA = (size_t)lb->ngt * lb->A;
    for (int l = 0; l < 3; l++) { L.h[l] = lb->h[l]; L.w[l] = lb->w[l]; L.stride[l] = lb->stride[l]; }
    L.A = lb->A; L.nc = lb->nc; L.no = 4 * YOLO_REG_MAX + lb->nc;
    MapPtrs mp;
    for (int l = 0; l < 3; l++) { mp.m[l] = lb->maps[l]; mp.g[l] = lb->grads[l]; }
    yolo_assignment *as = lb->as;
    prof_begin();
    /* scratch, laid out in lb->work as yolo_loss_work_bytes counts it: boxes [B, A, 4], per box x
       anchor overlaps, alignments and metrics, per box maxima, sums; positives [ngt, A] */
    double *pbox = (double *)lb->work, *ov = pbox + BA * 4, *al = ov + JA, *met = al + JA;
    double *pal = met + JA, *pov = pal + lb->ngt, *sums = pov + lb->ngt;
    unsigned char *pos = (unsigned char *)(sums + 4);
    cu_zero(sums, 4 * sizeof(double));
    loss_decode_kernel<<<grid_for(BA), 256>>>(mp, L, lb->B, pbox);
    CK_LAUNCH("loss_decode_kernel");
    if (!lb->reuse) {
        if (lb->ngt) {
            assign_topk_kernel<<<lb->ngt, 256>>>(mp, L, lb->B, lb->gt, lb->gstart, pbox, ov, al, met, pos);
            CK_LAUNCH("assign_topk_kernel");
        }
        assign_resolve_kernel<<<grid_for(BA), 256>>>(L, lb->B, lb->gt, lb->gstart, ov, pos, as->fg, as->label, as->box);
        CK_LAUNCH("assign_resolve_kernel");
        if (lb->ngt) {
            assign_norm_kernel<<<lb->ngt, 256>>>(L.A, ov, al, pos, pal, pov);
            CK_LAUNCH("assign_norm_kernel");
        }
        assign_score_kernel<<<grid_for(BA), 256>>>(L, lb->B, lb->gstart, al, pos, pal, pov, as->score);
        CK_LAUNCH("assign_score_kernel");
    }
    loss_terms_kernel<<<blocks_for(BA, 256), 256>>>(mp, L, lb->B, pbox, as->fg, as->label, as->box, as->score, as->alpha,
                                                   lb->reuse, sums);
    CK_LAUNCH("loss_terms_kernel");
    double h[4];
    cu_download(h, sums, sizeof h);
    if (!lb->reuse) as->score_sum = h[3] > 1 ? h[3] : 1;
    float k = (float)(lb->grad_scale / as->score_sum);
    for (int l = 0; l < 3; l++) {
        size_t n = (size_t)lb->B * L.no * L.h[l] * L.w[l];
        scale_kernel<<<grid_for(n), 256>>>(lb->grads[l], k, n);
        CK_LAUNCH("scale_kernel");
    }
    lb->box = h[0]; lb->cls = h[1]; lb->dfl = h[2];
    prof_end("loss and assigner", 0, 0);
}

/* decoded predictions pred [B, 4 + NC, A]: (cx, cy, w, h) in pixels, class probabilities */
__global__ void decode_kernel(MapPtrs mp, Levels L, int B, float *pred) {
    GRID_STRIDE(i, (size_t)B * L.A) {
        int n = (int)(i / L.A), a = (int)(i % L.A), l, cell;
        double box[4], ax, ay;
        predicted_box(mp, L, n, a, box, &l);
        anchor_at(L, a, &l, &cell, &ax, &ay);
        float x1 = (float)box[0], y1 = (float)box[1], x2 = (float)box[2], y2 = (float)box[3], s = (float)L.stride[l];
        float *o = pred + (size_t)n * (4 + L.nc) * L.A + a;
        o[0] = (x1 + x2) / 2 * s; o[(size_t)L.A] = (y1 + y2) / 2 * s;
        o[(size_t)2 * L.A] = (x2 - x1) * s; o[(size_t)3 * L.A] = (y2 - y1) * s;
        for (int c = 0; c < L.nc; c++) o[(size_t)(4 + c) * L.A] = prob_of(map_at(mp.m, L, n, l, cell, 4 * YOLO_REG_MAX + c));
    }
}
static void cu_decode(const yolo_loss_branch *lb, float *pred) {
    Levels L;
    for (int l = 0; l < 3; l++) { L.h[l] = lb->h[l]; L.w[l] = lb->w[l]; L.stride[l] = lb->stride[l]; }
    L.A = lb->A; L.nc = lb->nc; L.no = 4 * YOLO_REG_MAX + lb->nc;
    MapPtrs mp;
    for (int l = 0; l < 3; l++) { mp.m[l] = lb->maps[l]; mp.g[l] = NULL; }
    size_t n = (size_t)lb->B * lb->A;
    prof_begin();
    decode_kernel<<<grid_for(n), 256>>>(mp, L, lb->B, pred);
    CK_LAUNCH("decode_kernel");
    prof_end("decode", 0, 4.0 * n * (L.no + 4 + L.nc));
}

/* Non-maximum suppression as yolo_nms: the GPU finds the candidates (best
   class above the threshold) and, after the host has sorted them, the
   whole matrix of "box i suppresses box j" as bits (IoU > threshold, same
   class unless agnostic, in double as the CPU twin); the host then walks
   the sorted list once, as every GPU NMS does. */
typedef struct { unsigned mask[4]; int all; } ClassSet;   /* classes < 128 */

__global__ void nms_candidates_kernel(const float *pred, int A, int nc, float conf_thres, ClassSet cs,
                                      int *count, float *cconf, int *cidx) {
    GRID_STRIDE(a, (size_t)A) {
        int best = 0;
        for (int k = 1; k < nc; k++) if (pred[(size_t)(4 + k) * A + a] > pred[(size_t)(4 + best) * A + a]) best = k;
        float conf = pred[(size_t)(4 + best) * A + a];
        if (!(conf > conf_thres)) continue;
        if (!cs.all && (best >= 128 || !(cs.mask[best / 32] >> (best % 32) & 1))) continue;
        int at = atomicAdd(count, 1);
        cconf[at] = conf; cidx[at] = (int)a;
    }
}

__global__ void nms_boxes_kernel(const float *pred, int A, int nc, const int *order, int n, double *box, int *cls) {
    GRID_STRIDE(i, (size_t)n) {
        int a = order[i], best = 0;
        for (int k = 1; k < nc; k++) if (pred[(size_t)(4 + k) * A + a] > pred[(size_t)(4 + best) * A + a]) best = k;
        double cx = pred[a], cy = pred[(size_t)A + a], w = pred[(size_t)2 * A + a], h = pred[(size_t)3 * A + a];
        box[4 * i] = cx - w / 2; box[4 * i + 1] = cy - h / 2; box[4 * i + 2] = cx + w / 2; box[4 * i + 3] = cy + h / 2;
        cls[i] = best;
    }
}

/* bit j of mask[i][j / 64]: box i (kept) would suppress box j > i */
__global__ void nms_mask_kernel(const double *box, const int *cls, int n, float iou_thres, int agnostic,
                                unsigned long long *mask, int words) {
    int i = blockIdx.y * blockDim.x + threadIdx.x, w = blockIdx.x;
    if (i >= n) return;
    const double *p = box + 4 * i;
    double pa = (p[2] - p[0]) * (p[3] - p[1]);
    unsigned long long bits = 0;
    for (int b = 0; b < 64; b++) {
        int j = w * 64 + b;
        if (j <= i || j >= n || (!agnostic && cls[j] != cls[i])) continue;
        const double *q = box + 4 * j;
        double iw = fmin(p[2], q[2]) - fmax(p[0], q[0]), ih = fmin(p[3], q[3]) - fmax(p[1], q[1]);
        if (iw <= 0 || ih <= 0) continue;
        double inter = iw * ih, qa = (q[2] - q[0]) * (q[3] - q[1]);
        if (inter / (pa + qa - inter) > iou_thres) bits |= 1ull << b;
    }
    mask[(size_t)i * words + w] = bits;
}

typedef struct { float conf; int a; } nms_cand;
static int nms_cand_cmp(const void *x, const void *y) {
    const nms_cand *a = (const nms_cand *)x, *b = (const nms_cand *)y;
    if (a->conf != b->conf) return a->conf < b->conf ? 1 : -1;
    return a->a - b->a;
}

static int cu_nms(const float *pred, int A, int nc, float conf_thres, float iou_thres, int max_det, int agnostic,
                  const int *classes, int nclasses, yolo_det *out) {
    ClassSet cs;
    memset(&cs, 0, sizeof cs);
    cs.all = classes == NULL;
    for (int k = 0; k < nclasses; k++) if (classes[k] >= 0 && classes[k] < 128) cs.mask[classes[k] / 32] |= 1u << (classes[k] % 32);
    prof_begin();
    int *count = (int *)cu_alloc(sizeof(int)), *cidx = (int *)cu_alloc((size_t)A * sizeof(int));
    float *cconf = (float *)cu_alloc((size_t)A * sizeof(float));
    nms_candidates_kernel<<<grid_for(A), 256>>>(pred, A, nc, conf_thres, cs, count, cconf, cidx);
    CK_LAUNCH("nms_candidates_kernel");
    int n = 0;
    cu_download(&n, count, sizeof n);
    nms_cand *c = (nms_cand *)malloc((size_t)(n ? n : 1) * sizeof(nms_cand));
    float *hconf = (float *)malloc((size_t)(n ? n : 1) * sizeof(float));
    int *hidx = (int *)malloc((size_t)(n ? n : 1) * sizeof(int));
    cu_download(hconf, cconf, (size_t)n * sizeof(float));
    cu_download(hidx, cidx, (size_t)n * sizeof(int));
    for (int i = 0; i < n; i++) { c[i].conf = hconf[i]; c[i].a = hidx[i]; }
    qsort(c, n, sizeof *c, nms_cand_cmp);
    if (n > 30000) n = 30000;
    for (int i = 0; i < n; i++) hidx[i] = c[i].a;
    int kept = 0;
    if (n) {
        int words = (n + 63) / 64;
        int *order = (int *)cu_alloc((size_t)n * sizeof(int)), *cls = (int *)cu_alloc((size_t)n * sizeof(int));
        double *box = (double *)cu_alloc((size_t)n * 4 * sizeof(double));
        unsigned long long *mask = (unsigned long long *)cu_alloc((size_t)n * words * sizeof(unsigned long long));
        cu_upload(order, hidx, (size_t)n * sizeof(int));
        nms_boxes_kernel<<<grid_for(n), 256>>>(pred, A, nc, order, n, box, cls);
        CK_LAUNCH("nms_boxes_kernel");
        dim3 grid(words, (n + 63) / 64);
        nms_mask_kernel<<<grid, 64>>>(box, cls, n, iou_thres, agnostic, mask, words);
        CK_LAUNCH("nms_mask_kernel");
        unsigned long long *hm = (unsigned long long *)malloc((size_t)n * words * sizeof(unsigned long long));
        unsigned long long *dead = (unsigned long long *)calloc(words, sizeof(unsigned long long));
        double *hb = (double *)malloc((size_t)n * 4 * sizeof(double));
        int *hc = (int *)malloc((size_t)n * sizeof(int));
        cu_download(hm, mask, (size_t)n * words * sizeof(unsigned long long));
        cu_download(hb, box, (size_t)n * 4 * sizeof(double));
        cu_download(hc, cls, (size_t)n * sizeof(int));
        for (int i = 0; i < n && kept < max_det; i++) {
            if (dead[i / 64] >> (i % 64) & 1) continue;
            yolo_det d = { (float)hb[4 * i], (float)hb[4 * i + 1], (float)hb[4 * i + 2], (float)hb[4 * i + 3], c[i].conf, hc[i] };
            out[kept++] = d;
            for (int w = 0; w < words; w++) dead[w] |= hm[(size_t)i * words + w];
        }
        free(hm); free(dead); free(hb); free(hc);
        cu_release(order); cu_release(cls); cu_release(box); cu_release(mask);
    }
    free(c); free(hconf); free(hidx);
    cu_release(count); cu_release(cidx); cu_release(cconf);
    prof_end("nms", 0, 0);
    return kept;
}

/* ------------------------------------------------------------------------ */
/* the input from uint8 pixels                                              */
/* ------------------------------------------------------------------------ */

/* A batch comes as uint8 pixels, a quarter of the bytes of its floats,
   and becomes the input here: y = v / 255.0f, the same float as the CPU's
   v / 255.0 (checked for all 256 bytes in test_cuda). Pixels in device
   memory (a training step's copy, uploaded once for its two makes of the
   image) and pixels the loader pinned (cu_pin: mapped into the device's
   address space) are read by the kernel where they are; others are first
   copied into a staging buffer kept for the next batch. */
__global__ void pixels_to_input_kernel(float *y, const unsigned char *v, size_t n) { GRID_STRIDE(i, n) y[i] = v[i] / 255.0f; }

static unsigned char *g_pixel_stage = NULL;   /* staging for unpinned pixels, outside the arena */
static size_t g_pixel_stage_size = 0;

static void cu_pixels_to_input(float *y, const unsigned char *pixels, size_t n) {
    if (!n) return;
    prof_begin();
    const unsigned char *src = (const unsigned char *)device_view(pixels);
    if (!src) {
        if (n > g_pixel_stage_size) {
            if (g_pixel_stage) { CK(cudaFree(g_pixel_stage)); g_outside -= g_pixel_stage_size; }
            CK(cudaMalloc((void **)&g_pixel_stage, n));
            g_pixel_stage_size = n; g_outside += n;
            account();
        }
        CK(cudaMemcpy(g_pixel_stage, pixels, n, cudaMemcpyHostToDevice));
        src = g_pixel_stage;
    }
    pixels_to_input_kernel<<<grid_for(n), 256>>>(y, src, n); CK_LAUNCH("pixels_to_input_kernel");
    prof_end("input from pixels", 0, 5.0 * n);
}

/* host memory the device reads directly (pin 1), or no longer (pin 0) */
static void cu_pin(void *host, size_t bytes, int pin) {
    if (!bytes) return;
    if (pin) CK(cudaHostRegister(host, bytes, cudaHostRegisterMapped));
    else CK(cudaHostUnregister(host));
}

/* The forward's channel copies, between tensors as their stores hold them.
   Between two NHWC stores a copy is, per pixel, a run of C two-byte values:
   16 bytes (8 channels) a thread when every channel count and offset is a
   multiple of 8, else 2. Between stores of two kinds (the head's maps:
   NHWC two bytes into NCHW floats) value by value, in the destination's
   order. */
template <class V> __global__ void concat_nhwc_kernel(const V *src, int src_c, int sc, V *dst, int dst_c, int dc, int C,
                                                      size_t n) {
    const int per = sizeof(V) / 2, runs = C / per;   /* values a V holds; V's a pixel */
    GRID_STRIDE(i, n) {
        size_t p = i / runs;
        int j = (int)(i % runs);
        dst[(p * dst_c + dc) / per + j] = src[(p * src_c + sc) / per + j];
    }
}
__global__ void concat_any_kernel(const void *src, int ss, int src_c, int sc, void *dst, int ds, int dst_c, int dc, int C,
                                  int HW, size_t n) {
    GRID_STRIDE(i, n) {
        int b, c, p;   /* pixels fastest into an NCHW destination, channels into an NHWC one */
        if (ds == YOLO_FP32) { p = (int)(i % HW); c = (int)(i / HW % C); b = (int)(i / HW / C); }
        else { c = (int)(i % C); p = (int)(i / C % HW); b = (int)(i / C / HW); }
        put_value(dst, ds, value_at(ds, b, dst_c, dc + c, HW, p), get_value(src, ss, value_at(ss, b, src_c, sc + c, HW, p)));
    }
}
static void cu_concat(const yolo_tensor *src, int sc, yolo_tensor *dst, int dc, int C) {
    int B = src->n, HW = src->h * src->w;
    yolo_dense(src, "concat");
    yolo_dense(dst, "concat");
    if (src->store == YOLO_FP32 && dst->store == YOLO_FP32) {
        cu_copy_channels(src->data, src->c, sc, dst->data, dst->c, dc, B, C, HW, 0);
        return;
    }
    size_t n = (size_t)B * C * HW;
    prof_begin();
    if (src->store == dst->store && C % 8 == 0 && src->c % 8 == 0 && sc % 8 == 0 && dst->c % 8 == 0 && dc % 8 == 0)
        concat_nhwc_kernel<<<grid_for(n / 8), 256>>>((const uint4 *)src->data, src->c, sc, (uint4 *)dst->data, dst->c, dc,
                                                     C, n / 8);
    else if (src->store == dst->store)
        concat_nhwc_kernel<<<grid_for(n), 256>>>((const unsigned short *)src->data, src->c, sc, (unsigned short *)dst->data,
                                                 dst->c, dc, C, n);
    else
        concat_any_kernel<<<grid_for(n), 256>>>(src->data, src->store, src->c, sc, dst->data, dst->store, dst->c, dc, C, HW, n);
    CK_LAUNCH("concat_kernel");
    prof_end("channel copy (stored)", 0, (double)(store_bytes(src->store) + store_bytes(dst->store)) * n);
}

/* ======================================================================== */
/* PART 2. THE TIERS                                                        */
/* ======================================================================== */
/* A tier replaces the core's convolution products in bf16 or half by
   products on tensor cores; everything else (the stores, BatchNorm, the
   loss, ...) stays the core's. Each builds on the one before: the Ampere
   tier swaps two instructions into the Turing tier's kernels, the Hopper
   tier adds its own kernel to those. The staged passes (2.4) choose among
   them. */

#if YOLO_TIER == 0
/* a build of the core alone: no tier takes a conv (tc_products is 0) */
template <class LA, class LB, class EP>
static void tc_gemm(yolo_precision, int, int, int, int, int, LA, LB, EP) {}
static int tc_conv2d_forward(const ConvGeo &, const yolo_tensor *, const float *, const float *, const void *, int,
                             const yolo_tensor *, yolo_precision, yolo_tensor *) { return 0; }
static int tc_conv2d_backward(const ConvGeo &, const yolo_tensor *, const float *, const void *, const yolo_tensor *,
                              yolo_precision, const yolo_dx *, float *) { return 0; }
static void tc_stage_weights(const float *, int, int, int, yolo_precision, void *) {}
static void tc_stage_train_weights(const yolo_stage_conv *, int, yolo_precision) {}
#else

/* ------------------------------------------------------------------------ */
/* 2.1 Turing on (sm_75): the convolutions on tensor cores                  */
/* ------------------------------------------------------------------------ */
/* Needs sm_75: mma.sync m16n8k8 in half, ldmatrix. Replaces the core's
   products of convolutions in half (and in bf16, with the Ampere tier's
   instructions): gemm_tc_kernel for any conv, and conv_tc_kernel, on NHWC
   copies staged in the scratch buffer, for the convs whose channels come
   in 8s a group (every one of YOLOv9's but the first). Built for Turing
   itself (YOLO_TIER 75), the copies into shared memory are the core's
   plain ones (copy16), bf16's products stay on the CUDA cores, and the
   staged tiles fit Turing's 64 KB of shared memory a block. */

/* The core's product on the tensor cores: C[M, N] = sum_k A(m, k) B(k, n)
   with both operands rounded to T (bf16 or half for training, half for
   --half) on their way into shared memory, and multiplied as warp-wide
   16 x 8 x 16 pieces (mma16816) whose 16 x 16 bit products are exact in
   float32 and whose sums run in float32. The same functors as gemm_kernel gather the operands
   (the tensors stay float32 in memory, so the rounding happens in
   registers between the gather and shared memory). Every conv of one
   group, and every grouped one whose channels come in multiples of 8,
   takes the staged kernel below instead, which reads bf16 or half copies
   in 16-byte runs; this one serves the rest (grouped convs whose channels
   per group are not in 8s).

   A block of 256 threads owns a BM x BN tile of C and walks k in steps of
   BK = 32. Shared memory holds A as [BM][BK] and B as [BN][BK], k
   innermost (the layouts ldmatrix hands to mma's row.col operands), each
   row padded by 8 elements to 80 bytes so that the 8 rows one ldmatrix
   phase reads fall in 8 different bank groups. Two stages: while the
   warps multiply stage t out of shared memory, the gather of stage t + 1
   is in flight into registers; it is rounded and stored into the other
   buffer, and one barrier a step separates them. Each thread gathers runs
   of 8 consecutive k (one 16-byte store): of A, rows m with 4 threads a
   row; of B, one column n for all its runs (so col(n) is split once), the
   warp's 32 lanes 32 consecutive columns (coalesced: n is the position).
   8 warps split the tile 2 (along M) x 4 (along N); a warp's WM x WN part
   is FM x FN pieces of 16 x 8, its accumulators 4 floats a piece in
   registers (the hardware's layout: rows lane/4 and lane/4 + 8, columns
   2 (lane % 4) and one more), stored by the epilogue directly. Split-K as
   gemm_kernel: gridDim.z slices of kchunk. */
__device__ inline void ldmatrix_x4(unsigned (&r)[4], const void *smem) {
    unsigned a = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a) : "memory");
}
/* two floats rounded to T (ties to even) in one register, the first in the low half */
template <class T> __device__ inline unsigned pack2(float lo, float hi);
template <> __device__ inline unsigned pack2<__nv_bfloat16>(float lo, float hi) {
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *(unsigned *)&v;
}
template <> __device__ inline unsigned pack2<__half>(float lo, float hi) {
    __half2 v = __floats2half2_rn(lo, hi);
    return *(unsigned *)&v;
}
/* d += a b for one 16 x 8 x 16 piece: one mma.sync m16n8k16 from Ampere on (section 2.2), two
   m16n8k8 on Turing */
template <class T> __device__ inline void mma16816(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1);
#if DEVICE_TIER == 75
/* k 0-7, then 8-15: a's registers 0, 1 then 2, 3, b's 0 then 1 (the layouts of the two shapes) */
template <> __device__ inline void mma16816<__half>(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(b0));
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a[2]), "r"(a[3]), "r"(b1));
}
/* Turing has no bf16 tensor cores: the host never runs these products here (tc_products), but a build for
   several architectures compiles each kernel for each */
template <> __device__ inline void mma16816<__nv_bfloat16>(float (&)[4], const unsigned (&)[4], unsigned, unsigned) { __trap(); }
#endif

/* a warp's accumulators, FM x FN pieces of 16 x 8 from (mw, nw) in the
   layout above, to the epilogue, inside the M x N bounds */
template <int FM, int FN, class EP>
__device__ inline void store_acc(const float (&acc)[FM][FN][4], int mw, int nw, int lane, int M, int N, const EP &ep) {
    #pragma unroll
    for (int i = 0; i < FM; i++)
        #pragma unroll
        for (int j = 0; j < FN; j++)
            #pragma unroll
            for (int q = 0; q < 4; q++) {
                int m = mw + i * 16 + lane / 4 + q / 2 * 8, n = nw + j * 8 + lane % 4 * 2 + q % 2;
                if (m < M && n < N) ep(m, n, acc[i][j][q]);
            }
}

template <class T, int BM, int BN, class LA, class LB, class EP>
__global__ void __launch_bounds__(256) gemm_tc_kernel(int M, int N, int K, int kchunk, LA la, LB lb, EP ep) {
#if DEVICE_TIER >= 75
    const int BK = 32, LD = BK + 8;                  /* a row of shared memory: 32 k, 8 of padding */
    const int WM = BM / 2, WN = BN / 4, FM = WM / 16, FN = WN / 8;
    const int NA = BM * BK / 8 / 256, NB = BN * BK / 8 / 256;   /* runs of 8 k a thread gathers */
    static_assert(NA >= 1 && NB >= 1 && 256 % BN == 0 && FN % 2 == 0, "tile shapes: BM, BN in {64, 128}");
    __shared__ __align__(16) unsigned short As[2][BM * LD], Bs[2][BN * LD];
    int tid = threadIdx.x, lane = tid % 32, warp = tid / 32, wm = warp / 4, wn = warp % 4;
    int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    int kbeg = blockIdx.z * kchunk, kend = min(K, kbeg + kchunk);
    float acc[FM][FN][4] = {};
    float ra[NA][8], rb[NB][8];
    const int nb = n0 + tid % BN;
    const bool n_in = nb < N;
    const typename LB::Col col = lb.col(n_in ? nb : 0);
    auto gather = [&](int k0) {
        #pragma unroll
        for (int r = 0; r < NA; r++) {
            int e = tid + 256 * r, m = m0 + e / 4, k = k0 + e % 4 * 8;
            typename LA::Walk w = la.walk(m < M ? m : 0, k);
            #pragma unroll
            for (int j = 0; j < 8; j++) ra[r][j] = (m < M && k + j < kend) ? la.next(w) : 0.f;
        }
        #pragma unroll
        for (int r = 0; r < NB; r++) {
            int k = k0 + (tid + 256 * r) / BN * 8;
            typename LB::Walk w = lb.walk(col, k);
            #pragma unroll
            for (int j = 0; j < 8; j++) rb[r][j] = (n_in && k + j < kend) ? lb.next(w) : 0.f;
        }
    };
    auto store = [&](int buf) {
        #pragma unroll
        for (int r = 0; r < NA; r++) {
            int e = tid + 256 * r;
            uint4 v = { pack2<T>(ra[r][0], ra[r][1]), pack2<T>(ra[r][2], ra[r][3]), pack2<T>(ra[r][4], ra[r][5]),
                        pack2<T>(ra[r][6], ra[r][7]) };
            *(uint4 *)&As[buf][e / 4 * LD + e % 4 * 8] = v;
        }
        #pragma unroll
        for (int r = 0; r < NB; r++) {
            int e = tid + 256 * r;
            uint4 v = { pack2<T>(rb[r][0], rb[r][1]), pack2<T>(rb[r][2], rb[r][3]), pack2<T>(rb[r][4], rb[r][5]),
                        pack2<T>(rb[r][6], rb[r][7]) };
            *(uint4 *)&Bs[buf][e % BN * LD + e / BN * 8] = v;
        }
    };
    gather(kbeg);
    store(0);
    __syncthreads();
    int buf = 0;
    for (int k0 = kbeg; k0 < kend; k0 += BK) {
        bool more = k0 + BK < kend;
        if (more) gather(k0 + BK);   /* the next stage's loads fly during this one's multiplies */
        #pragma unroll
        for (int kk = 0; kk < BK; kk += 16) {
            unsigned a[FM][4], b[FN][2];
            #pragma unroll
            for (int i = 0; i < FM; i++)   /* four 8 x 8 matrices: rows 0-7 / 8-15 x k 0-7 / 8-15 */
                ldmatrix_x4(a[i], &As[buf][(wm * WM + i * 16 + lane % 16) * LD + kk + lane / 16 * 8]);
            #pragma unroll
            for (int j = 0; j < FN; j += 2) {   /* two pieces' B: n 0-7 / 8-15 x k 0-7 / 8-15 */
                unsigned r[4];
                ldmatrix_x4(r, &Bs[buf][(wn * WN + j * 8 + lane / 16 * 8 + lane % 8) * LD + kk + lane / 8 % 2 * 8]);
                b[j][0] = r[0]; b[j][1] = r[1]; b[j + 1][0] = r[2]; b[j + 1][1] = r[3];
            }
            #pragma unroll
            for (int i = 0; i < FM; i++)
                #pragma unroll
                for (int j = 0; j < FN; j++) mma16816<T>(acc[i][j], a[i], b[j][0], b[j][1]);
        }
        if (more) store(buf ^ 1);
        __syncthreads();
        buf ^= 1;
    }
    store_acc(acc, m0 + wm * WM, n0 + wn * WN, lane, M, N, ep);
#endif
}

template <class T, int BM, int BN, class LA, class LB, class EP>
static void gemm_tc_tiles(int M, int N, int K, int splitk, int kchunk, LA la, LB lb, EP ep) {
    dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM, splitk);
    gemm_tc_kernel<T, BM, BN><<<grid, 256>>>(M, N, K, kchunk, la, lb, ep);
    CK_LAUNCH("gemm_tc_kernel");
}

/* C = A B on gemm_tc_kernel in a BM x BN tile (each 64 or 128) */
template <class T, class LA, class LB, class EP>
static void gemm_tc(int BM, int BN, int M, int N, int K, int splitk, int kchunk, LA la, LB lb, EP ep) {
    if (BM == 128 && BN == 128) gemm_tc_tiles<T, 128, 128>(M, N, K, splitk, kchunk, la, lb, ep);
    else if (BM == 128) gemm_tc_tiles<T, 128, 64>(M, N, K, splitk, kchunk, la, lb, ep);
    else if (BN == 128) gemm_tc_tiles<T, 64, 128>(M, N, K, splitk, kchunk, la, lb, ep);
    else gemm_tc_tiles<T, 64, 64>(M, N, K, splitk, kchunk, la, lb, ep);
}
/* the core's gemm on the tensor cores, in gemm_tile's tile (a Turing build makes no bf16 kernels) */
template <class LA, class LB, class EP>
static void tc_gemm(yolo_precision prec, int M, int N, int K, int splitk, int kchunk, LA la, LB lb, EP ep) {
    int BM, BN, BK;
    gemm_tile(prec, M, N, &BM, &BN, &BK);
    if constexpr (YOLO_TIER >= 80)
        if (prec == YOLO_BF16) { gemm_tc<__nv_bfloat16>(BM, BN, M, N, K, splitk, kchunk, la, lb, ep); return; }
    gemm_tc<__half>(BM, BN, M, N, K, splitk, kchunk, la, lb, ep);
}

/* The staged convolutions. gemm_tc_kernel gathers every operand element with a scalar float load
   and its own index arithmetic; it spends its time issuing those, not
   multiplying. Here each conv pass first stages its operands as T (bf16
   or half) copies laid out so that 8 consecutive k are 16
   contiguous bytes, and the product then moves whole 16-byte runs:

   activations  NCHW float32 -> NHWC T: x_nhwc[b][y][x][c] (to_nhwc_kernel,
                rounded as the CPU twin's yolo_round_bf16 / _half, ties to
                even). For an output pixel and a kernel tap (ky, kx), the 8
                input channels ci..ci+7 are one 16-byte run.
   weights      forward: w_f[co][ky][kx][ci] (k = (ky, kx, ci));
                backward-data, per stride phase: w_d[ci][ty][tx][co]
                (k = (ty, tx, co), the phase's taps only).

   So every conv pass whose channels per group are multiples of 8, or made
   so by padding with zeros (a conv of one group: 2.4, staged_channels),
   is a product whose operands come in 16-byte runs; the others keep
   gemm_tc_kernel.

   The kernel, conv_tc_kernel: 256 threads own a BM x BN tile of C and
   walk k in steps of BK (32 or 64) through a STAGES-deep ring of shared-memory
   buffers (staged_tile chooses the three). Each thread issues its
   runs of the next stage with copy16 (a run in the padding or past the
   matrix is zero-filled), commits them as one group, and waits only for
   the group of the stage it multiplies now: from the Ampere tier on
   (cp.async), STAGES - 1 stages of loads are in flight behind the math. One barrier a step: after it,
   every warp is done with the buffer that the loads issued next
   overwrite.

   Two shared-memory layouts, by where k runs in global memory:
   k inner (forward, backward-data): a run is 8 k of one row m (A) or
     column n (B); the tile is stored [BM][BK + 8] and [BN][BK + 8] as in
     gemm_tc_kernel, read by ldmatrix straight into mma's row (A) and
     col (B) fragments.
   k outer (backward-weight: k = output pixels, while the runs are 8
     output channels of dY_nhwc (A, m = co) or 8 input channels of
     x_nhwc at one tap (B, n = (ky, kx, ci))): the tile is stored
     [BK][BM + 8] and [BK][BN + 8], and ldmatrix.trans transposes each
     8 x 8 piece on its way into the same fragments.
   The padding of 8 elements (16 bytes) makes the 8 rows one ldmatrix
   phase reads fall in 8 different bank groups in both layouts. The tile
   and its warps' layout are staged_tile's (8 warps, 2 x 4 or, for 48
   rows, 1 x 8); fragments, accumulators, the epilogue functors and
   split-K are those of gemm_tc_kernel; the accumulators pass through
   shared memory (the ring's, or more where the float tile is larger) on
   their way to the epilogue, so that its stores come out coalesced. */
template <int BM, int BN, int BK, int STAGES, bool KOUTER> struct StagedSmem {
    static const int LDA = KOUTER ? BM + 8 : BK + 8, LDB = KOUTER ? BN + 8 : BK + 8;   /* a stored row, elements */
    static const int A = KOUTER ? BK * LDA : BM * LDA, B = KOUTER ? BK * LDB : BN * LDB;   /* one stage, elements */
    static const int LDC = BN + 4, RING = STAGES * (A + B) * 2, TILE = BM * LDC * 4;   /* the ring; the epilogue's floats */
    static const int BYTES = RING > TILE ? RING : TILE;
};

/* The tile of a staged product (conv_tc_kernel): BM x BN, its 8 warps
   WARPS_M along M by 8 / WARPS_M along N, k in steps of BK through
   STAGES buffers. BM is the least of 32, 48, 64, 96 and 128 rows that
   holds M (128 past it): YOLOv9-s's convs have 32, 48 or 96 output
   channels as often as 64 or 128, and a 64-row tile spends half its
   products on padding at M = 32. BN is 128 with 2 x 4 warps, but for 48
   rows (a warp tile 24 high is no whole number of 16-row pieces), 256
   wide with 8 warps side by side, each 48 x 32. BK 64 (half the barriers
   and waits a k of BK 32) in 2 stages for 128 rows (74 KB of ring: two
   blocks a multiprocessor) and in 3 for 96 and 32 rows; 48 and 64 rows
   keep BK 32 in 4 stages, where BK 64 spills registers (48 x 256 at 128 a
   thread, 64 x 128 at the 80 of three blocks a multiprocessor). On
   Turing (64 KB of shared memory a block, and no asynchronous copies to
   hide a deep ring's loads behind) every tile takes BK 32 in 2 stages,
   and 128 rows go 64 wide: a 128 x 128 tile of float sums alone is 66 KB.
   tests/results/README.md has the measurements behind these choices. */
struct StagedTile { int BM, BN, WARPS_M, BK, STAGES; };
/* the tile of BM rows (32, 48, 64, 96 or 128), the one table the launch's template arguments come from */
static constexpr StagedTile staged_tile_of(int BM) {
#if YOLO_TIER == 75
    return BM == 48 ? StagedTile{ 48, 256, 1, 32, 2 } : BM == 128 ? StagedTile{ 128, 64, 2, 32, 2 } : StagedTile{ BM, 128, 2, 32, 2 };
#else
    return BM == 48 ? StagedTile{ 48, 256, 1, 32, 4 } : BM == 64 ? StagedTile{ 64, 128, 2, 32, 4 }
         : BM == 128 ? StagedTile{ 128, 128, 2, 64, 2 } : StagedTile{ BM, 128, 2, 64, 3 };
#endif
}
static StagedTile staged_tile(int M) { return staged_tile_of(M <= 32 ? 32 : M <= 48 ? 48 : M <= 64 ? 64 : M <= 96 ? 96 : 128); }
/* k-slices of a staged product in staged_tile's tiles, in steps of 32 k whatever the tile's BK, so that
   the sums, and their bits, do not depend on it */
static int staged_slices(int M, int N, int K, int splitk, int *kchunk) {
    StagedTile t = staged_tile(M);
    return tile_slices(t.BM, t.BN, 32, M, N, K, splitk, kchunk);
}

__device__ inline void ldmatrix_x4_trans(unsigned (&r)[4], const void *smem) {
    unsigned a = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a) : "memory");
}

/* One operand's runs of a stage: R rows (k inner) or columns (k outer)
   of the tile x BK k, R BK / 8 runs of 16 bytes, run i = tid + 256 j the
   j-th of thread tid (the last j of a tile whose runs are not a multiple
   of 256 only for the first threads). k inner: run i is k run i % 4 of
   row i / 4, so a thread keeps its rows and its k offset from stage to
   stage; k outer: columns 8 (i % (R / 8)) of k row i / (R / 8). Either
   way a thread's rows (columns) stay the same over the k loop, so the
   loader's per-row index work (L::Row) is done once, before it. */
template <int R, int BK, bool KOUTER> struct RunMap {
    static const int KR = BK / 8, CPR = R / 8;   /* k inner: runs in a row; k outer: runs in a k row */
    static const int RUNS = R * BK / 8, N = (RUNS + 255) / 256;   /* runs a stage; a thread's most */
    static_assert(256 % KR == 0, "k inner: a thread's runs start at one k");
    __device__ static bool has(int tid, int j) { return RUNS % 256 == 0 || tid + 256 * j < RUNS; }
    __device__ static int row(int tid, int j) { int i = tid + 256 * j; return KOUTER ? i % CPR * 8 : i / KR; }
    __device__ static int kof(int tid, int j) { int i = tid + 256 * j; return KOUTER ? i / CPR : i % KR * 8; }
    /* where the run goes in the stage's buffer of rows of ld elements */
    __device__ static int dst(int tid, int j, int ld) { return KOUTER ? kof(tid, j) * ld + row(tid, j) : row(tid, j) * ld + kof(tid, j); }
};

/* A staged forward's epilogue into an NHWC store (FwdStore's y): the shortcut's values of channels
   m..m+7 (as fwd_store8's) of pixel n, one 16-byte load */
__device__ inline uint4 fwd_shortcut8(const FwdStore &ep, int m, int n) {
    const ConvGeo &c = ep.c;
    int P = c.Ho * c.Wo, b = fdiv(n, c.fP), pp = n - b * P;
    return __ldg((const uint4 *)((const unsigned short *)ep.r + ((size_t)b * P + pp) * c.C2 + ep.gi * c.c2g + m));
}
/* sums v of channels m..m+7 (m a multiple of 8, C2 and yc too) of pixel n into the store: one 16-byte
   store; rq: the shortcut's values there (fwd_shortcut8's, loaded ahead by store_tile), when r */
__device__ inline void fwd_store8(const FwdStore &ep, int m, int n, const float (&v)[8], uint4 rq) {
    const ConvGeo &c = ep.c;
    int P = c.Ho * c.Wo, b = fdiv(n, c.fP), pp = n - b * P, co = ep.gi * c.c2g + m;
    float u[8];
    const unsigned short *rh = (const unsigned short *)&rq;
    #pragma unroll
    for (int j = 0; j < 8; j++) {
        u[j] = t_bn_act<float>(v[j] + (ep.bias ? ep.bias[co + j] : 0.f), ep.act);
        if (ep.r) u[j] = stored(ep.store, u[j]) + (ep.store == YOLO_BF16 ? __bfloat162float(__ushort_as_bfloat16(rh[j]))
                                                                       : __half2float(__ushort_as_half(rh[j])));
    }
    uint4 q;
    if (ep.store == YOLO_BF16)
        q = make_uint4(pack2<__nv_bfloat16>(u[0], u[1]), pack2<__nv_bfloat16>(u[2], u[3]),
                       pack2<__nv_bfloat16>(u[4], u[5]), pack2<__nv_bfloat16>(u[6], u[7]));
    else
        q = make_uint4(pack2<__half>(u[0], u[1]), pack2<__half>(u[2], u[3]), pack2<__half>(u[4], u[5]),
                       pack2<__half>(u[6], u[7]));
    *(uint4 *)((unsigned short *)ep.y + ((size_t)b * P + pp) * (ep.yc ? ep.yc : c.C2) + co) = q;
}
/* fwd_store8's sums of channels m..m+cnt-1 (cnt <= 8) where they make no aligned 16-byte run (y's
   channels, or its slot's, not in 8s; the group's last channels), the shortcut read value by value: the
   same values, each pair or four as one store where the address allows it */
__device__ inline void fwd_store_some(const FwdStore &ep, int m, int n, const float (&v)[8], int cnt) {
    const ConvGeo &c = ep.c;
    int P = c.Ho * c.Wo, b = fdiv(n, c.fP), pp = n - b * P, co = ep.gi * c.c2g + m;
    size_t ri = ((size_t)b * P + pp) * c.C2 + co;
    float u[8];
    #pragma unroll
    for (int j = 0; j < 8; j++) u[j] = j < cnt ? ep.finish(v[j], co + j, ri + j) : 0.f;
    unsigned q[4];   /* the values rounded to the store, two a word */
    #pragma unroll
    for (int i = 0; i < 4; i++)
        q[i] = ep.store == YOLO_BF16 ? pack2<__nv_bfloat16>(u[2 * i], u[2 * i + 1]) : pack2<__half>(u[2 * i], u[2 * i + 1]);
    unsigned short *dst = (unsigned short *)ep.y + ((size_t)b * P + pp) * (ep.yc ? ep.yc : c.C2) + co;
    size_t a = (size_t)dst;
    #pragma unroll
    for (int j = 0; j < 8; j += 4) {
        if (j + 4 <= cnt && a % 8 == 0) { *(uint2 *)(dst + j) = make_uint2(q[j / 2], q[j / 2 + 1]); continue; }
        #pragma unroll
        for (int i = j; i < j + 4; i += 2) {
            if (i + 2 <= cnt && a % 4 == 0) { *(unsigned *)(dst + i) = q[i / 2]; continue; }
            if (i < cnt) dst[i] = (unsigned short)q[i / 2];
            if (i + 1 < cnt) dst[i + 1] = (unsigned short)(q[i / 2] >> 16);
        }
    }
}
/* The staged kernel's epilogue, from its tile of sums Cs[BM][LDC] in
   shared memory: row by row, consecutive threads taking consecutive n, so
   that a warp's stores of an NCHW output are 32 consecutive pixels of one
   channel (the accumulators' own layout scatters them over 8 channels). */
template <int BM, int BN, class EP>
__device__ inline void store_rows(const EP &ep, const float *Cs, int LDC, int m0, int n0, int M, int N, int tid) {
    for (int e = tid; e < BM * BN; e += 256) {
        int r = e / BN, col = e % BN, m = m0 + r, n = n0 + col;
        if (m < M && n < N) ep(m, n, Cs[r * LDC + col]);
    }
}
template <int BM, int BN, class EP>
__device__ inline void store_tile(const EP &ep, const float *Cs, int LDC, int m0, int n0, int M, int N, int tid) {
    store_rows<BM, BN>(ep, Cs, LDC, m0, n0, M, N, tid);
}
/* A forward into an NHWC store: 8 channels of a pixel a thread, one
   16-byte store, with consecutive threads on consecutive pixels, so that
   a warp's reads of the tile fall in 32 different banks. Where y's (or
   the shortcut's) channels, or a slot's, do not come in 8s (a conv of
   one group staged with its channels padded: 60 of 64), or the run passes
   the group's M, the run goes as fwd_store_some's narrower stores. */
template <int BM, int BN>
__device__ inline void store_tile(const FwdStore &ep, const float *Cs, int LDC, int m0, int n0, int M, int N, int tid) {
    if (ep.store == YOLO_FP32) { store_rows<BM, BN>(ep, Cs, LDC, m0, n0, M, N, tid); return; }
    const ConvGeo &c = ep.c;
    const bool in8s = c.c2g % 8 == 0 && (ep.yc ? ep.yc : c.C2) % 8 == 0 && (size_t)ep.y % 16 == 0 &&
                      (!ep.r || (c.C2 % 8 == 0 && (size_t)ep.r % 16 == 0));
    /* a thread's runs of 8 channels, 4 at a time: a shortcut's 4 loads in flight together before their
       stores (not one load's wait a run), in 16 registers (the 128 x 128 tiles have no more to spare) */
    const int E = BM / 8 * BN, U = (E + 255) / 256, G = U < 4 ? U : 4;
    for (int u0 = 0; u0 < U; u0 += G) {
        uint4 rq[G];
        #pragma unroll
        for (int u = 0; u < G; u++) {
            int e = tid + 256 * (u0 + u), m = m0 + e / BN * 8, n = n0 + e % BN;
            rq[u] = in8s && ep.r && e < E && m + 8 <= M && n < N ? fwd_shortcut8(ep, m, n) : make_uint4(0, 0, 0, 0);
        }
        #pragma unroll
        for (int u = 0; u < G; u++) {
            int e = tid + 256 * (u0 + u), col = e % BN, r = e / BN * 8, m = m0 + r, n = n0 + col;
            if (e >= E || m >= M || n >= N) continue;
            float v[8];
            #pragma unroll
            for (int j = 0; j < 8; j++) v[j] = Cs[(r + j) * LDC + col];
            if (in8s && m + 8 <= M) fwd_store8(ep, m, n, v, rq[u]);
            else fwd_store_some(ep, m, n, v, min(8, M - m));
        }
    }
}

/* Backward-data adds its tile to dX (NCHW floats): every value is a load,
   an add and a store, and a loop that does them one value at a time waits
   out a load's latency per value. Here a thread loads the old values of
   U outputs first and then adds and stores them, so that U loads are in
   flight at once. At stride 1 with H W a multiple of 4, four neighbouring
   columns n (n0 and BN are multiples of 4) are four neighbouring pixels of
   one image: one 16-byte load and store each. The sums are the same adds
   as ep(m, n, v)'s: the same bits. */
template <int BM, int BN>
__device__ inline void store_tile(const BwdDataStore &ep, const float *Cs, int LDC, int m0, int n0, int M, int N, int tid) {
    const int U = 8;
    const bool by4 = ep.c.s == 1 && ep.f.Hq * ep.f.Wq % 4 == 0 && (size_t)ep.dx % 16 == 0;
    const int per = by4 ? 4 : 1, RUNS = BN / per, E = BM * RUNS;   /* a thread's runs: per columns of one row */
    for (int e0 = tid; e0 < E; e0 += 256 * U) {
        float *dst[U];
        float4 old[U];
        #pragma unroll
        for (int u = 0; u < U; u++) {
            int e = e0 + 256 * u, m = m0 + e / RUNS, n = n0 + e % RUNS * per;
            dst[u] = e < E && m < M && n < N ? ep.at(m, n) : NULL;
            if (dst[u]) old[u] = !ep.add ? make_float4(0.f, 0.f, 0.f, 0.f)
                                 : by4 ? *(const float4 *)dst[u] : make_float4(*dst[u], 0.f, 0.f, 0.f);
        }
        #pragma unroll
        for (int u = 0; u < U; u++) {
            if (!dst[u]) continue;
            int e = e0 + 256 * u;
            const float *v = &Cs[e / RUNS * LDC + e % RUNS * per];
            if (!by4) { *dst[u] = old[u].x + v[0]; continue; }
            old[u].x += v[0]; old[u].y += v[1]; old[u].z += v[2]; old[u].w += v[3];
            *(float4 *)dst[u] = old[u];
        }
    }
}

/* Blocks a multiprocessor, as the registers a thread allow them: three for
   tiles of up to 64 x 128 (80 registers), whose convs are mostly short
   sums (1x1, K of 64 to 256) that wait on memory more than they multiply,
   so that blocks in flight keep it busy; two for the larger ones (128). On
   Turing, whose 64 KB of shared memory a multiprocessor holds one or two of
   its tiles, a block takes the registers it wants. */
constexpr int tc_blocks(int BM, int BN) { return YOLO_TIER == 75 ? 1 : BM * BN <= 64 * 128 ? 3 : 2; }
template <class T, int BM, int BN, int WARPS_M, int BK, int STAGES, bool KOUTER, class LA, class LB, class EP>
__global__ void __launch_bounds__(256, tc_blocks(BM, BN)) conv_tc_kernel(int M, int N, int K, int kchunk, LA la, LB lb, EP ep) {
#if DEVICE_TIER >= 75
    typedef StagedSmem<BM, BN, BK, STAGES, KOUTER> S;
    typedef RunMap<BM, BK, KOUTER> MA;
    typedef RunMap<BN, BK, KOUTER> MB;
    const int WARPS_N = 8 / WARPS_M, WM = BM / WARPS_M, WN = BN / WARPS_N, FM = WM / 16, FN = WN / 8;
    static_assert(WM % 16 == 0 && WN % 16 == 0 && BM % 8 == 0 && BN % 8 == 0, "tile shapes: warp tiles in 16s");
    extern __shared__ __align__(16) unsigned short smem[];
    unsigned short *As = smem, *Bs = smem + STAGES * S::A;
    int tid = threadIdx.x, lane = tid % 32, warp = tid / 32, wm = warp / WARPS_N, wn = warp % WARPS_N;
    int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    int kbeg = blockIdx.z * kchunk, kend = min(K, kbeg + kchunk), nk = (kend - kbeg + BK - 1) / BK;
    typename LA::Row ra[MA::N];
    typename LB::Row rb[MB::N];
    #pragma unroll
    for (int j = 0; j < MA::N; j++) { int m = m0 + MA::row(tid, j); ra[j] = la.row(m < M ? m : 0); }
    #pragma unroll
    for (int j = 0; j < MB::N; j++) { int n = n0 + MB::row(tid, j); rb[j] = lb.row(n < N ? n : 0); }
    /* the runs of stage t of k (from k0) into buffer t % STAGES. k inner,
       a thread's runs all start at the same k (BK / 8 runs a row divide
       256): the loaders split it (L::Kpos) once for them all; k outer,
       once a run. */
    auto load = [&](int t) {
        int k0 = kbeg + t * BK, buf = t % STAGES;
        typename LA::Kpos qa = la.kpos(k0 + MA::kof(tid, 0));
        typename LB::Kpos qb = lb.kpos(k0 + MB::kof(tid, 0));
        #pragma unroll
        for (int j = 0; j < MA::N; j++) {
            if (!MA::has(tid, j)) continue;
            int m = m0 + MA::row(tid, j), k = k0 + MA::kof(tid, j);
            if (KOUTER && j > 0) qa = la.kpos(k);
            copy16(&As[buf * S::A + MA::dst(tid, j, S::LDA)], m < M && k < kend ? la.at(ra[j], qa) : NULL, la.p);
        }
        #pragma unroll
        for (int j = 0; j < MB::N; j++) {
            if (!MB::has(tid, j)) continue;
            int n = n0 + MB::row(tid, j), k = k0 + MB::kof(tid, j);
            if (KOUTER && j > 0) qb = lb.kpos(k);
            copy16(&Bs[buf * S::B + MB::dst(tid, j, S::LDB)], n < N && k < kend ? lb.at(rb[j], qb) : NULL, lb.p);
        }
    };
    float acc[FM][FN][4] = {};
    #pragma unroll
    for (int t = 0; t < STAGES - 1; t++) { if (t < nk) load(t); copies_commit(); }
    for (int t = 0; t < nk; t++) {
        copies_wait<STAGES - 2>();   /* stage t has landed (this thread's runs) */
        __syncthreads();               /* everyone's runs; and everyone is done with stage t - 1 */
        if (t + STAGES - 1 < nk) load(t + STAGES - 1);   /* into stage t - 1's buffer */
        copies_commit();
        const unsigned short *At = As + t % STAGES * S::A, *Bt = Bs + t % STAGES * S::B;
        #pragma unroll
        for (int kk = 0; kk < BK; kk += 16) {
            unsigned a[FM][4], b[FN][2];
            int q = lane / 8, r = lane % 8;   /* this lane's address: row r of 8 x 8 piece q */
            #pragma unroll
            for (int i = 0; i < FM; i++) {   /* pieces: m 0-7 / 8-15 x k 0-7, then x k 8-15 */
                int m = wm * WM + i * 16;
                if (KOUTER) ldmatrix_x4_trans(a[i], &At[(kk + q / 2 * 8 + r) * S::LDA + m + q % 2 * 8]);
                else ldmatrix_x4(a[i], &At[(m + lane % 16) * S::LDA + kk + lane / 16 * 8]);
            }
            #pragma unroll
            for (int j = 0; j < FN; j += 2) {   /* pieces: k 0-7 / 8-15 x n 0-7, then x n 8-15 */
                int n = wn * WN + j * 8;
                unsigned v[4];
                if (KOUTER) ldmatrix_x4_trans(v, &Bt[(kk + q % 2 * 8 + r) * S::LDB + n + q / 2 * 8]);
                else ldmatrix_x4(v, &Bt[(n + q / 2 * 8 + r) * S::LDB + kk + q % 2 * 8]);
                b[j][0] = v[0]; b[j][1] = v[1]; b[j + 1][0] = v[2]; b[j + 1][1] = v[3];
            }
            #pragma unroll
            for (int i = 0; i < FM; i++)
                #pragma unroll
                for (int j = 0; j < FN; j++) mma16816<T>(acc[i][j], a[i], b[j][0], b[j][1]);
        }
    }
    copies_wait<0>();
    /* the epilogue through shared memory (the ring is free now): the tile
       as floats, then out by store_tile */
    float *Cs = (float *)smem;
    const int LDC = S::LDC;
    __syncthreads();   /* every warp is done reading the ring */
    #pragma unroll
    for (int i = 0; i < FM; i++)   /* a piece's two pairs of neighbours (rows lane / 4, + 8): one 8-byte store each */
        #pragma unroll
        for (int j = 0; j < FN; j++)
            #pragma unroll
            for (int h = 0; h < 2; h++)
                *(float2 *)&Cs[(wm * WM + i * 16 + lane / 4 + h * 8) * LDC + wn * WN + j * 8 + lane % 4 * 2] =
                    make_float2(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
    __syncthreads();
    store_tile<BM, BN>(ep, Cs, LDC, m0, n0, M, N, tid);
#endif
}

template <class T, int BM, int BN, int WARPS_M, int BK, int STAGES, bool KOUTER, class LA, class LB, class EP>
static void conv_tc_tiles(int M, int N, int K, int splitk, int kchunk, LA la, LB lb, EP ep) {
    const int bytes = StagedSmem<BM, BN, BK, STAGES, KOUTER>::BYTES;   /* over the default 48 KB: asked for, once a kernel */
    static bool asked = false;   /* one per instantiation, as the attribute */
    if (!asked) {
        CK(cudaFuncSetAttribute(conv_tc_kernel<T, BM, BN, WARPS_M, BK, STAGES, KOUTER, LA, LB, EP>,
                                cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
        asked = true;
    }
    dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM, splitk);
    conv_tc_kernel<T, BM, BN, WARPS_M, BK, STAGES, KOUTER><<<grid, 256, bytes>>>(M, N, K, kchunk, la, lb, ep);
    CK_LAUNCH("conv_tc_kernel");
}

/* conv_tc_tiles in staged_tile_of(BM)'s tile */
template <class T, int BM, bool KOUTER, class LA, class LB, class EP>
static void conv_tc_tile_of(int M, int N, int K, int splitk, int kchunk, LA la, LB lb, EP ep) {
    constexpr StagedTile t = staged_tile_of(BM);
    conv_tc_tiles<T, t.BM, t.BN, t.WARPS_M, t.BK, t.STAGES, KOUTER>(M, N, K, splitk, kchunk, la, lb, ep);
}

/* The staged loaders: Row is what a row (column) index alone decides,
   Kpos what k alone decides (kpos(k)), at(row, kpos) the address of the
   16-byte run there, NULL in the padding; p is any valid address of the
   operand. The kernel calls at() only inside the matrix (m < M or n < N,
   k < kend). An address is split so: a row's corner (a pointer) plus
   k's offset (an int), checked against the image by the row's and k's
   coordinates, so that a run costs two compares and an add once k is
   split. A corner may point before the operand (a window in the
   padding); at() returns only addresses inside it. With BK 64 a thread's
   2 to 4 runs of a stage share one split of k. */

/* A of forward and backward-data: rows of K in a dense matrix, row r0 + m
   (the group's first), k..k+7 contiguous: w_f[gi c2g + m][(ky, kx, ci)],
   or a phase's w_d[gi c1g + m][(ty, tx, co)] */
template <class T_> struct RowsStA {
    typedef T_ T; typedef const T *Row; typedef int Kpos; static const bool TMA = false;
    const T *p; int K, r0;
    __device__ Row row(int m) const { return p + (size_t)(r0 + m) * K; }
    __device__ Kpos kpos(int k) const { return k; }
    __device__ const T *at(Row r, Kpos k) const { return r + k; }
};
/* forward, B: n = (b, oy, ox), k = (ky, kx, ci): x_nhwc[b][oy s - p + ky][ox s - p + kx][gi c1g + ci..+7];
   a pixel's channels xc apart when x is a slot (its buffer's channels, a multiple of 8), else (0) C1 */
template <class T_> struct FwdStB {
    typedef T_ T; static const bool TMA = false;
    /* the window's corner (iy0, ix0) in image b, the group's channels; iy0 and ix0 in one register,
       iy0 65536 + ix0 + 32768 (a 128 x 128 tile's BK 64 holds four rows a thread in 128 registers) */
    struct Row { const T *corner; int yx; };
    struct Kpos { int ky, kx, off; };                /* the tap; (ky W + kx) C1 + ci from the corner */
    const T *p; ConvGeo c; int gi; FastDiv fc1g; int xc;
    __device__ Row row(int n) const {
        int b = fdiv(n, c.fP), pp = n - b * c.Ho * c.Wo, oy = fdiv(pp, c.fWo), ox = pp - oy * c.Wo;
        int iy0 = oy * c.s - c.p, ix0 = ox * c.s - c.p;
        Row r = { p + ((ptrdiff_t)(b * c.H + iy0) * c.W + ix0) * (xc ? xc : c.C1) + gi * c.c1g, iy0 * 65536 + ix0 + 32768 };
        return r;
    }
    __device__ Kpos kpos(int k) const {
        int tap = fdiv(k, fc1g), ci = k - tap * c.c1g, ky = fdiv(tap, c.fk), kx = tap - ky * c.k;
        Kpos q = { ky, kx, (ky * c.W + kx) * (xc ? xc : c.C1) + ci };
        return q;
    }
    __device__ const T *at(const Row &r, const Kpos &q) const {
        int iy = (r.yx >> 16) + q.ky, ix = (r.yx & 0xffff) - 32768 + q.kx;
        return iy < 0 || iy >= c.H || ix < 0 || ix >= c.W ? NULL : r.corner + q.off;
    }
};
/* backward-data of a phase, B: n = (b, qy, qx), k = (ty, tx, co): dy_nhwc[b][oy - ty][ox - tx][gi c2g + co..+7] */
template <class T_> struct BwdDataStB {
    typedef T_ T; static const bool TMA = false;
    struct Row { const T *corner; int oy, ox; };   /* dY at (oy, ox) = the position's at tap 0, image b, the group's channels */
    struct Kpos { int ty, tx, off; };              /* the tap; co - (ty Wo + tx) C2 from the corner */
    const T *p; ConvGeo c; Phase f; int gi; FastDiv fc2g;
    __device__ Row row(int n) const {
        int b = fdiv(n, f.fPq), pp = n - b * f.Hq * f.Wq, qy = fdiv(pp, f.fWq), qx = pp - qy * f.Wq;
        int oy = qy + f.oy0, ox = qx + f.ox0;
        Row r = { p + ((ptrdiff_t)(b * c.Ho + oy) * c.Wo + ox) * c.C2 + gi * c.c2g, oy, ox };
        return r;
    }
    __device__ Kpos kpos(int k) const {   /* 1x1: one tap, k is the channel */
        if (c.k == 1) { Kpos q = { 0, 0, k }; return q; }
        int t = fdiv(k, fc2g), co = k - t * c.c2g, ty = fdiv(t, f.fnkx), tx = t - ty * f.nkx;
        Kpos q = { ty, tx, co - (ty * c.Wo + tx) * c.C2 };
        return q;
    }
    __device__ const T *at(const Row &r, const Kpos &q) const {
        int oy = r.oy - q.ty, ox = r.ox - q.tx;
        return oy < 0 || oy >= c.Ho || ox < 0 || ox >= c.Wo ? NULL : r.corner + q.off;
    }
};
/* backward-weight, A (k outer): m = co of group gi, k = output pixel (b, oy, ox): dy_nhwc[k][gi c2g + m..+7] */
template <class T_> struct BwdWStA {
    typedef T_ T; typedef const T *Row; typedef int Kpos; static const bool TMA = false;
    const T *p; int C2, gi, c2g;
    __device__ Row row(int m) const { return p + gi * c2g + m; }
    __device__ Kpos kpos(int k) const { return k; }
    __device__ const T *at(Row r, Kpos k) const { return r + (size_t)k * C2; }
};
/* backward-weight, B (k outer): n = (ky, kx, ci), k = (b, oy, ox): x_nhwc[b][oy s - p + ky][ox s - p + kx][gi c1g + ci..+7] */
template <class T_> struct BwdWStB {
    typedef T_ T; static const bool TMA = false;
    struct Row { int ky, kx, off; };                      /* the tap; (ky W + kx) C1 + gi c1g + ci from a corner */
    struct Kpos { const T *corner; int iy0, ix0; };       /* the window's corner (iy0, ix0) in image b */
    const T *p; ConvGeo c; int gi; FastDiv fc1g;
    __device__ Row row(int n) const {
        int tap = fdiv(n, fc1g), ky = fdiv(tap, c.fk), kx = tap - ky * c.k;
        Row r = { ky, kx, (ky * c.W + kx) * c.C1 + gi * c.c1g + n - tap * c.c1g };
        return r;
    }
    __device__ Kpos kpos(int k) const {   /* 1x1 stride 1: k is the input pixel too */
        if (c.k == 1 && c.s == 1) { Kpos q = { p + (size_t)k * c.C1, 0, 0 }; return q; }
        int b = fdiv(k, c.fP), pp = k - b * c.Ho * c.Wo, oy = fdiv(pp, c.fWo), ox = pp - oy * c.Wo;
        int iy0 = oy * c.s - c.p, ix0 = ox * c.s - c.p;
        Kpos q = { p + ((ptrdiff_t)(b * c.H + iy0) * c.W + ix0) * c.C1, iy0, ix0 };
        return q;
    }
    __device__ const T *at(const Row &r, const Kpos &q) const {
        int iy = q.iy0 + r.ky, ix = q.ix0 + r.kx;
        return iy < 0 || iy >= c.H || ix < 0 || ix >= c.W ? NULL : q.corner + r.off;
    }
};

/* the weight gradient of n = (ky, kx, ci) lands at dW[co][ci][ky][kx]: in
   k-slice z's plane of the workspace (slices > 1), else added to dW. The
   product's columns give a tap c1p >= c1g of them (channels padded with
   zeros); those past c1g are no weight's and go nowhere. */
struct DwTapStore {
    float *out; size_t plane; int c1g, kk, slices, c1p; FastDiv fc1p;
    __device__ void operator()(int m, int n, float v) const {
        int tap = fdiv(n, fc1p), ci = n - tap * c1p;
        if (ci >= c1g) return;
        size_t i = (size_t)m * c1g * kk + ci * kk + tap;
        if (slices > 1) out[blockIdx.z * plane + i] = v; else out[i] += v;
    }
};

/* x [B][C][HW] float -> y [B][HW][Cp] T, channels C..Cp-1 zero, through
   a shared tile of 64 channels x 32 pixels: a warp reads 32 pixels of a
   channel (128 coalesced bytes), and each thread then writes 8 channels
   of a pixel as one 16-byte store (Cp is a multiple of 8); block 256,
   grid (HW / 32, Cp / 64, B) */
template <class T> __global__ void __launch_bounds__(256) to_nhwc_kernel(const float *x, size_t image, T *y, int C, int Cp, int HW) {
    __shared__ float tile[64][33];
    int p0 = blockIdx.x * 32, c0 = blockIdx.y * 64, tid = threadIdx.x, px = tid % 32;
    const float *xb = x + blockIdx.z * image;
    for (int i = tid / 32; i < 64; i += 8)
        if (p0 + px < HW) tile[i][px] = c0 + i < C ? xb[(size_t)(c0 + i) * HW + p0 + px] : 0.f;
    __syncthreads();
    int p = tid / 8, cg = tid % 8 * 8;
    if (p0 + p < HW && c0 + cg < Cp) {
        uint4 v = { pack2<T>(tile[cg][p], tile[cg + 1][p]), pack2<T>(tile[cg + 2][p], tile[cg + 3][p]),
                    pack2<T>(tile[cg + 4][p], tile[cg + 5][p]), pack2<T>(tile[cg + 6][p], tile[cg + 7][p]) };
        *(uint4 *)(y + ((size_t)blockIdx.z * HW + p0 + p) * Cp + c0 + cg) = v;
    }
}
/* y [pixels][Cp] from the C channels of x's pixels, held NHWC in two bytes a value, xc values apart (a
   slot's buffer's channels), channels C..Cp-1 zero: 8 channels a thread, one 16-byte store; runs =
   pixels Cp / 8 */
__global__ void pad_nhwc_kernel(const unsigned short *x, int xc, int C, unsigned short *y, int Cp, unsigned runs) {
    GRID_STRIDE(i, runs) {
        unsigned p = (unsigned)i / (Cp / 8), c = ((unsigned)i - p * (Cp / 8)) * 8;
        const unsigned short *src = x + (size_t)p * xc;
        unsigned v[4];
        #pragma unroll
        for (int j = 0; j < 4; j++)
            v[j] = (c + 2 * j < (unsigned)C ? src[c + 2 * j] : 0u) | (c + 2 * j + 1 < (unsigned)C ? src[c + 2 * j + 1] : 0u) << 16;
        *(uint4 *)(y + (size_t)p * Cp + c) = make_uint4(v[0], v[1], v[2], v[3]);
    }
}
/* A conv's input (or dY) staged for the products: y [B][HW][Cp] in T from the C channels of x, B images
   of HW pixels in store (float32 NCHW, or NHWC in two bytes: the values copied as they are), x's
   images xc channels apart (C, or a slot's buffer's), channels C..Cp-1 zero */
template <class T> static void stage_input(const void *x, int store, int xc, int C, T *y, int Cp, int B, int HW) {
    if (store == YOLO_FP32) {
        dim3 grid((HW + 31) / 32, (Cp + 63) / 64, B);
        to_nhwc_kernel<T><<<grid, 256>>>((const float *)x, (size_t)xc * HW, y, C, Cp, HW);
        CK_LAUNCH("to_nhwc_kernel");
    } else {
        unsigned runs = (unsigned)((size_t)B * HW * (Cp / 8));
        pad_nhwc_kernel<<<grid_for(runs), 256>>>((const unsigned short *)x, xc, C, (unsigned short *)y, Cp, runs);
        CK_LAUNCH("pad_nhwc_kernel");
    }
}

/* The weights as the tensor cores' products read them, rounded to the
   store's two bytes: the forward form w_f [co][tap][ci] of w [co][ci][tap]
   (tap = ky k + kx), and, for each phase of the stride that has taps, one
   after the other in (py, px) order, the backward-data form w_d
   [gi c1g + ci][t][co] of w [gi c2g + co][ci][ky][kx], t = ty nkx + tx the
   phase's taps (ky0 + s ty, kx0 + s tx). Either form may hold its inner
   channels padded with zeros (ci to c1p, co to c2p: staged_geo). A launch stages up to STAGE_JOBS
   jobs (forms, or phases), so that a training step's convs take a launch
   a form for each 64 of them (stage_train_weights), not two each. The jobs
   travel as the kernel's parameter (within its 4 KB): each the
   first value of its part of the launch's flattened range (start), its
   source, destination and shape; a thread finds its job by bisecting the
   starts. */
static const int STAGE_JOBS = 64;
struct StageJob {   /* nky 0: the forward form */
    const float *w; void *dst; int c1g, c2g, c1p, c2p;
    unsigned char k, s, ky0, kx0, nky, nkx;
};
struct StageJobs { int n; size_t start[STAGE_JOBS + 1]; StageJob job[STAGE_JOBS]; };
static_assert(sizeof(StageJobs) <= 4000, "a kernel's parameters: 4 KB");
template <class T> __global__ void stage_jobs_kernel(const __grid_constant__ StageJobs j) {
    GRID_STRIDE(i, j.start[j.n]) {
        int lo = 0, hi = j.n - 1;
        while (lo < hi) {   /* the last job that starts at or before i */
            int mid = (lo + hi + 1) / 2;
            if (j.start[mid] <= i) lo = mid; else hi = mid - 1;
        }
        const StageJob &b = j.job[lo];
        size_t r = i - j.start[lo];
        int kk = b.k * b.k;
        float v;
        if (!b.nky) {   /* w [co][ci][tap] -> [co][tap][ci of c1p] */
            int ci = (int)(r % b.c1p), tap = (int)(r / b.c1p % kk);
            size_t co = r / ((size_t)b.c1p * kk);
            v = ci < b.c1g ? b.w[(co * b.c1g + ci) * kk + tap] : 0.f;
        } else {        /* w [gi c2g + co][ci][ky][kx] -> [gi c1g + ci][t][co of c2p] of the phase's taps t */
            int nt = b.nky * b.nkx, co = (int)(r % b.c2p), t = (int)(r / b.c2p % nt);
            size_t q = r / ((size_t)b.c2p * nt);
            int gi = (int)(q / b.c1g), ci = (int)(q % b.c1g), ty = t / b.nkx, tx = t - ty * b.nkx;
            v = co < b.c2g ? b.w[(((size_t)gi * b.c2g + co) * b.c1g + ci) * kk + (b.ky0 + b.s * ty) * b.k + b.kx0 + b.s * tx] : 0.f;
        }
        ((T *)b.dst)[r] = round_to<T>(v);
    }
}
static void stage_jobs_launch(StageJobs &j, yolo_precision prec) {
    if (!j.n) return;
    if (prec == YOLO_BF16) stage_jobs_kernel<__nv_bfloat16><<<grid_for(j.start[j.n]), 256>>>(j);
    else stage_jobs_kernel<__half><<<grid_for(j.start[j.n]), 256>>>(j);
    CK_LAUNCH("stage_jobs_kernel");
    j.n = 0; j.start[0] = 0;
}
static void stage_jobs_add(StageJobs &j, const StageJob &b, size_t n, yolo_precision prec) {
    if (j.n == STAGE_JOBS) stage_jobs_launch(j, prec);
    j.job[j.n] = b;
    j.start[j.n + 1] = j.start[j.n] + n;
    j.n++;
}
/* n convs' forms staged now: each one's w [c2][cin][k][k] in g groups into its forward form fwd and
   its backward-data form bwd (either NULL: none), their inner channels padded to c1p and c2p (the
   step's forms: cin and c2 / g, none), the forward forms in a launch or a few, then the backward-data
   forms; the values staged */
static size_t stage_convs(const yolo_stage_conv *convs, int n, const int *c1p, const int *c2p, yolo_precision prec) {
    StageJobs fj, bj;
    fj.n = bj.n = 0; fj.start[0] = bj.start[0] = 0;
    size_t values = 0;
    for (int i = 0; i < n; i++) {
        const yolo_stage_conv &c = convs[i];
        int c2g = c.c2 / c.g, ip = c1p ? c1p[i] : c.cin, op = c2p ? c2p[i] : c2g;
        size_t nv = (size_t)c.c2 * ip * c.k * c.k, off = 0;
        StageJob job = { c.w, c.fwd, c.cin, c2g, ip, op, (unsigned char)c.k, (unsigned char)c.s, 0, 0, 0, 0 };
        if (c.fwd) stage_jobs_add(fj, job, nv, prec);
        for (int py = 0; c.bwd && py < c.s; py++)
            for (int px = 0; px < c.s; px++) {
                Phase ph;
                if (!phase_taps(c.k, c.s, py, px, &ph)) continue;
                size_t np = (size_t)c.g * c.cin * ph.nky * ph.nkx * op;
                job.dst = (char *)c.bwd + off * 2;
                job.ky0 = (unsigned char)ph.ky0; job.kx0 = (unsigned char)ph.kx0;
                job.nky = (unsigned char)ph.nky; job.nkx = (unsigned char)ph.nkx;
                stage_jobs_add(bj, job, np, prec);
                off += np;
            }
        values += (c.fwd ? nv : 0) + off;
    }
    stage_jobs_launch(fj, prec);
    stage_jobs_launch(bj, prec);
    return values;
}
/* one conv's forms staged now (fwd, bwd: NULL for none), their inner channels padded to c1p, c2p */
static void stage_conv(const float *w, void *fwd, void *bwd, int c2, int cin, int k, int s, int g, int c1p, int c2p,
                       yolo_precision prec) {
    yolo_stage_conv c = { w, fwd, bwd, c2, cin, k, s, g };
    stage_convs(&c, 1, &c1p, &c2p, prec);
}
/* images a chunk holds (0: none) for wvalues of staged weights and per_image bytes of copies an image */
static int stage_images(int B, size_t wvalues, size_t per_image) {
    size_t wbytes = yolo_arena_bytes(wvalues * 2);
    if (wbytes + 512 + per_image > STAGE_BYTES) return 0;
    if (!g_stage) g_stage = (char *)cu_own_alloc(STAGE_BYTES);
    /* 512: each copy's start rounded up to 256 bytes; no copies an image (an NHWC input): the whole batch */
    size_t n = per_image ? (STAGE_BYTES - wbytes - 512) / per_image : (size_t)B;
    return n < (size_t)B ? (int)n : B;
}

static const char *const STAGE_NAME[2] = { "conv staging 1x1", "conv staging 3x3" };   /* by kernel size */

/* ------------------------------------------------------------------------ */
/* 2.2 Ampere on (sm_80: A100, RTX 30xx and 40xx, Jetson Orin; Blackwell)   */
/* ------------------------------------------------------------------------ */
/* Needs sm_80: mma.sync m16n8k16 in bf16 and half, cp.async. Replaces, in
   the Turing tier's kernels, the two m16n8k8 of a piece by one m16n8k16
   (and gives bf16 its tensor cores), and the plain copies into shared
   memory (copy16, in the core's BatchNorm backward too) by asynchronous
   ones: a thread issues a stage's 16-byte runs without waiting for them,
   computes on the stage before, and waits only for the group of copies it
   needs next, so that STAGES - 1 stages of loads fly behind the math. */
#if DEVICE_TIER >= 80
template <> __device__ inline void mma16816<__nv_bfloat16>(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
template <> __device__ inline void mma16816<__half>(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
/* copy16 as cp.async (global -> shared without registers; a run of NULL, in the padding or past the
   matrix, zero-filled by asking for 0 source bytes), its groups cp.async's commit and wait groups */
__device__ inline void copy16(void *dst, const void *src, const void *any) {
    unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" :: "r"(d), "l"(src ? src : any), "r"(src ? 16 : 0) : "memory");
}
__device__ inline void copies_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> __device__ inline void copies_wait() { asm volatile("cp.async.wait_group %0;\n" :: "n"(N) : "memory"); }
#endif

/* ------------------------------------------------------------------------ */
/* 2.3 Hopper (sm_90a: H100, H200): warpgroup MMA and the copy engine       */
/* ------------------------------------------------------------------------ */
/* Needs the sm_90a target (wgmma, the copy engine's tensor maps: the
   driver API's encoders, <cuda.h>, CUDA 12 on). Replaces conv_tc_kernel
   (the Ampere tier's) for the staged products of more than 48 rows;
   TIER=sm80 builds the Ampere tier alone for the same GPU, so that the
   two can be compared.

   mma.sync (conv_tc_kernel) is a warp's product of 16 x 8 x 16, its
   operands first moved from shared memory into registers by ldmatrix; on
   Hopper it leaves much of the chip's bf16 rate unused. Hopper's
   warpgroup MMA multiplies 64 x N x 16 at once (N up to 256) for the 4
   warps (a warpgroup, 128 threads) together, reading both operands
   straight from shared memory, asynchronously: the warpgroup issues its
   products, goes on, and waits for them (wgmma.commit_group /
   wait_group).

   conv_wg_kernel is conv_tc_kernel with wgmma: the same 256 threads,
   the same loaders, RunMap's runs and cp.async ring of STAGES buffers,
   BK 64, the same float tile Cs and store_tile epilogue; only the
   product and the layout of a stage differ. Where the im2col operand's
   channels come in whole 64s a group, the copy engine fills the stages
   instead (the Tma loaders below: one thread, a few boxes a stage). The
   two warpgroups each own
   64 rows x WN columns of the BM x BN tile: 128 rows, one above the
   other; 64 rows, side by side (WN = BN / 2).

   A stage's layout is the one wgmma reads, "128-byte swizzle". k inner
   (forward, backward-data; wgmma's "K-major"): a row (m of A, n of B) is
   BK = 64 k of T, 128 bytes, its 16-byte runs (8 k) stored at chunk
   c ^ (row % 8) of the row, so that the 8 rows of a group of 1024 bytes
   put any one chunk in 8 different bank groups (no padding: wgmma's
   layouts have none). A matrix descriptor (wg_desc) tells wgmma where a
   64-row block starts, that groups of 8 rows are 1024 bytes apart and
   that the 128-byte swizzle is on; the swizzle is applied to address
   bits, so the ring is 1024-byte aligned and the k step of 16 (32 bytes)
   simply adds 32 to the start address. k outer (backward-weight,
   "MN-major", wgmma's transpose flags set): blocks of 64 columns (m or
   n), each BK rows k of 128 bytes, swizzled the same way by k % 8; the
   descriptor's leading offset is the distance between blocks, and a k
   step of 16 is 16 rows (2048 bytes) down.

   cp.async writes shared memory as ordinary (generic-proxy) stores and
   wgmma reads it through the async proxy: after its cp.async.wait_group
   each thread fences (fence.proxy.async) before the barrier that hands
   the stage to the wgmmas. A step: wait for stage t, fence, barrier,
   issue the 4 wgmmas of stage t (k 0-15 ... 48-63), issue the loads of
   stage t + STAGES - 1 (into the buffer of stage t - 1, whose wgmmas
   every warpgroup waited for before the barrier) while they run, then
   wait for them. Accumulators: a warpgroup's 64 x WN floats, WN / 2 a
   thread, in wgmma's layout: warp w of the warpgroup holds rows 16 w ..
   16 w + 15; for columns 8 j .. 8 j + 7, d[4 j], d[4 j + 1] are row
   lane / 4, columns 2 (lane % 4) and one more, d[4 j + 2], d[4 j + 3]
   the same 8 rows lower. */
#if YOLO_TIER >= 90
#include <cuda.h>            /* CUtensorMap: the copy engine's tensor maps */
#include <cudaTypedefs.h>    /* their encoders' types, fetched from the driver at run time (no -lcuda) */
/* Wgmma<T, N>::mma<TA, TB>: d (64 x N floats over the warpgroup) += A (64 x 16, descriptor da) B (16 x N,
   db), T bf16 or half; TA, TB 0 where the operand is stored K-major (rows of k), 1 MN-major (rows of m, n) */
template <class T, int N> struct Wgmma;
#define WG_D8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])
#define WGMMA_M64N64K16(TYPES) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n" \
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32." TYPES " {" \
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31" \
                 "}, %32, %33, p, 1, 1, %35, %36;\n}\n" \
                 : WG_D8(0), WG_D8(8), WG_D8(16), WG_D8(24) \
                 : "l"(da), "l"(db), "r"(1), "n"(TA), "n"(TB) : "memory")
#define WGMMA_M64N128K16(TYPES) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n" \
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32." TYPES " {" \
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
                 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
                 "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63" \
                 "}, %64, %65, p, 1, 1, %67, %68;\n}\n" \
                 : WG_D8(0), WG_D8(8), WG_D8(16), WG_D8(24), WG_D8(32), WG_D8(40), WG_D8(48), WG_D8(56) \
                 : "l"(da), "l"(db), "r"(1), "n"(TA), "n"(TB) : "memory")
#define WGMMA_M64N256K16(TYPES) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n" \
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32." TYPES " {" \
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
                 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
                 "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, " \
                 "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
                 "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, " \
                 "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
                 "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127" \
                 "}, %128, %129, p, 1, 1, %131, %132;\n}\n" \
                 : WG_D8(0), WG_D8(8), WG_D8(16), WG_D8(24), WG_D8(32), WG_D8(40), WG_D8(48), WG_D8(56), WG_D8(64), WG_D8(72), WG_D8(80), WG_D8(88), WG_D8(96), WG_D8(104), WG_D8(112), WG_D8(120) \
                 : "l"(da), "l"(db), "r"(1), "n"(TA), "n"(TB) : "memory")
#define WGMMA_OF(T, TYPES, N)                                                                             \
    template <> struct Wgmma<T, N> {                                                                      \
        template <int TA, int TB> __device__ static void mma(float (&d)[N / 2], uint64_t da, uint64_t db) { \
            WGMMA_M64N##N##K16(TYPES);                                                                    \
        }                                                                                                 \
    };
WGMMA_OF(__nv_bfloat16, "bf16.bf16", 64) WGMMA_OF(__nv_bfloat16, "bf16.bf16", 128) WGMMA_OF(__nv_bfloat16, "bf16.bf16", 256)
WGMMA_OF(__half, "f16.f16", 64) WGMMA_OF(__half, "f16.f16", 128) WGMMA_OF(__half, "f16.f16", 256)
#undef WGMMA_OF
#undef WGMMA_M64N64K16
#undef WGMMA_M64N128K16
#undef WGMMA_M64N256K16
#undef WG_D8
__device__ inline void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ inline void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N> __device__ inline void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" :: "n"(N) : "memory"); }
/* the accumulators pinned in place: no use of them is moved across the wgmmas that write them */
template <int R> __device__ inline void wgmma_hold(float (&d)[R]) {
    #pragma unroll
    for (int i = 0; i < R; i++) asm volatile("" : "+f"(d[i]) :: "memory");
}
__device__ inline void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
/* A matrix descriptor with the 128-byte swizzle, its fields in 16-byte units: the start (a shared-memory
   address, bits 0-13), the leading offset lbo (bits 16-29), the stride between groups of 8 rows of 128
   bytes (1024 bytes, bits 32-45), swizzle mode 1 = 128 bytes (bits 62-63). K-major (rows m or n of 64 k):
   lbo unused, 16 by convention; MN-major (rows k of 64 m or n): lbo the distance between blocks of 64
   columns, 8 k groups of 8 rows deep. */
__device__ inline uint64_t wg_desc(unsigned addr, unsigned lbo) {
    return (uint64_t)((addr & 0x3ffff) >> 4) | (uint64_t)(lbo >> 4) << 16 | (uint64_t)(1024 >> 4) << 32 | (uint64_t)1 << 62;
}

/* The copy engine (the Tensor Memory Accelerator, cp.async.bulk.tensor).
   A tensor map, encoded on the host (tma_rows, tma_im2col below), tells
   it where a tensor lies in global memory and what box a copy brings;
   one thread asks for a box at some coordinates, the engine gathers it
   into shared memory (zeros past the tensor's edges) in the 128-byte
   swizzle wgmma reads, and counts the bytes it wrote on an mbarrier.
   "Tile" mode brings a box of a matrix; "im2col" mode brings, for a tap
   (kx, ky) of a convolution, the input pixels under that tap of
   consecutive output pixels, walking output rows and images as the
   loaders above walk n: the gather FwdStB does with 15-20 instructions a
   16-byte run, in one instruction a stage. An mbarrier's phase completes
   when its one arrival has come and every byte it was told to expect
   (expect_tx) has landed; the waiters test the phase's parity. */
__device__ inline void mbar_init(unsigned bar) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" :: "r"(bar) : "memory");
}
__device__ inline void mbar_init_fence() {   /* the inits seen by the copy engine and every thread */
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    fence_proxy_async();
}
__device__ inline void mbar_expect(unsigned bar, unsigned bytes) {
    asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;\n" :: "r"(bar), "r"(bytes) : "memory");
}
__device__ inline void mbar_arrive(unsigned bar) {
    asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];\n" :: "r"(bar) : "memory");
}
__device__ inline void mbar_wait(unsigned bar, unsigned parity) {
    unsigned done = 0;
    while (!done)
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.b32 %0, 1, 0, p;\n}\n"
                     : "=r"(done) : "r"(bar), "r"(parity) : "memory");
}
/* a tile box of a matrix map at (column x0, row x1) */
__device__ inline void tma_tile_2d(unsigned dst, const CUtensorMap *map, unsigned bar, int x0, int x1) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n"
                 :: "r"(dst), "l"((uint64_t)map), "r"(bar), "r"(x0), "r"(x1) : "memory");
}
/* an im2col box of an NHWC map: from channel c, the window corner (w, h) in image n of the box's first
   output pixel, the tap (kx, ky) */
__device__ inline void tma_im2col_4d(unsigned dst, const CUtensorMap *map, unsigned bar, int c, int w, int h, int n, int kx, int ky) {
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4, %5, %6}], [%2], {%7, %8};\n"
                 :: "r"(dst), "l"((uint64_t)map), "r"(bar), "r"(c), "r"(w), "r"(h), "r"(n), "h"((unsigned short)kx),
                    "h"((unsigned short)ky) : "memory");
}

/* conv_wg_kernel's tile: BM x BN in STAGES stages (wg_tile below chooses it) */
struct WgTile { int BM, BN, STAGES; };
static constexpr WgTile wg_tile_of(int BM, bool tma) {
    return BM == 64 ? WgTile{ 64, 128, tma ? 3 : 4 } : WgTile{ 128, 128, 3 };
}
/* blocks a multiprocessor (the kernel's launch bounds) */
constexpr int wg_blocks(int BM, int BN, bool tma) { return BM * BN > 128 * 128 ? 1 : BM == 64 && tma ? 3 : 2; }

/* conv_wg_kernel's shared memory: STAGES buffers of BM rows of A and BN of B, 64 k (128 bytes) each; the
   epilogue's floats over them; 1024 bytes more, to align the ring */
template <int BM, int BN, int STAGES> struct WgSmem {
    static const int BK = 64, A = BM * BK, B = BN * BK;   /* one stage, elements */
    static const int LDC = BN + 4, RING = STAGES * (A + B) * 2, TILE = BM * LDC * 4;
    static const int BYTES = (RING > TILE ? RING : TILE) + 1024;
};

/* where run j of thread tid (RunMap<R, BK, KOUTER>'s) goes in a stage with the 128-byte swizzle (BK 64):
   k inner, run c of row r at chunk c ^ r % 8 of its 128 bytes; k outer, blocks of 64 columns (BK rows of
   128 bytes each), the run of columns 8 c.. of block b at k row k at chunk c ^ k % 8 of block b's row k */
template <int R, int BK, bool KOUTER> __device__ inline int dst_sw128(int tid, int j) {
    typedef RunMap<R, BK, KOUTER> M;
    int r = M::row(tid, j), k = M::kof(tid, j);
    return KOUTER ? r / 64 * 64 * BK + k * 64 + (r % 64 / 8 ^ k % 8) * 8 : r * BK + (k / 8 ^ r % 8) * 8;
}

/* Blocks a multiprocessor (wg_blocks): two up to 128 x 128 (128 registers a thread), three for the copy
   engine's 64 x 128 (85), one for 128 x 256.
   The loaders are either the staged ones (every thread's cp.async runs) or
   the copy engine's (LA::TMA: thread 0 asks for a stage's boxes, which
   land on the stage's mbarrier "full"); the ring, the products and the
   epilogue are the same. la and lb are __grid_constant__: the copy engine
   reads their tensor maps where the launch put them. */
template <class T, int BM, int BN, int STAGES, bool KOUTER, class LA, class LB, class EP>
__global__ void __launch_bounds__(256, wg_blocks(BM, BN, LA::TMA))
    conv_wg_kernel(int M, int N, int K, int kchunk, const __grid_constant__ LA la, const __grid_constant__ LB lb, EP ep) {
#if DEVICE_TIER >= 90
    typedef WgSmem<BM, BN, STAGES> S;
    typedef RunMap<BM, S::BK, KOUTER> MA;
    typedef RunMap<BN, S::BK, KOUTER> MB;
    const int BK = S::BK, WG_N = BM == 64 ? 2 : 1, WN = BN / WG_N;   /* warpgroups along N; a warpgroup's columns */
    static_assert((BM == 64 || BM == 128) && (WN == 64 || WN == 128 || WN == 256), "tile shapes: 64-row warpgroups");
    static_assert(LA::TMA == LB::TMA, "both operands by the copy engine, or neither");
    extern __shared__ __align__(16) unsigned char wg_smem[];
    __shared__ __align__(8) unsigned long long full[STAGES];   /* copy engine: stage s's boxes have landed */
    unsigned base = (unsigned)__cvta_generic_to_shared(wg_smem), pad = (1024 - base % 1024) % 1024;
    unsigned short *As = (unsigned short *)(wg_smem + pad), *Bs = As + STAGES * S::A;
    const unsigned sa = base + pad, sb = sa + STAGES * S::A * 2;   /* the rings' shared addresses */
    const unsigned fb = (unsigned)__cvta_generic_to_shared(full);
    int tid = threadIdx.x, lane = tid % 32, warp = tid / 32, wg = warp / 4, wgm = wg / WG_N, wgn = wg % WG_N;
    int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    int kbeg = blockIdx.z * kchunk, kend = min(K, kbeg + kchunk), nk = (kend - kbeg + BK - 1) / BK;
    typename LA::Row ra[MA::N];
    typename LB::Row rb[MB::N];
    if constexpr (LA::TMA) {
        if (tid == 0) {
            for (int s = 0; s < STAGES; s++) mbar_init(fb + 8 * s);
            mbar_init_fence();
        }
        __syncthreads();
    } else {
        #pragma unroll
        for (int j = 0; j < MA::N; j++) { int m = m0 + MA::row(tid, j); ra[j] = la.row(m < M ? m : 0); }
        #pragma unroll
        for (int j = 0; j < MB::N; j++) { int n = n0 + MB::row(tid, j); rb[j] = lb.row(n < N ? n : 0); }
    }
    auto load = [&](int t) {
        int k0 = kbeg + t * BK, buf = t % STAGES;
        if constexpr (LA::TMA) {   /* one thread: the stage's boxes, counted on its mbarrier, then its arrival */
            if (tid != 0) return;
            unsigned bar = fb + 8 * buf;
            la.template load<BM>(sa + buf * S::A * 2, bar, k0, m0);
            lb.template load<BN>(sb + buf * S::B * 2, bar, k0, n0);
            mbar_arrive(bar);
        } else {   /* as conv_tc_kernel's, each run to its swizzled place */
            typename LA::Kpos qa = la.kpos(k0 + MA::kof(tid, 0));
            typename LB::Kpos qb = lb.kpos(k0 + MB::kof(tid, 0));
            #pragma unroll
            for (int j = 0; j < MA::N; j++) {
                if (!MA::has(tid, j)) continue;
                int m = m0 + MA::row(tid, j), k = k0 + MA::kof(tid, j);
                if (KOUTER && j > 0) qa = la.kpos(k);
                copy16(&As[buf * S::A + dst_sw128<BM, BK, KOUTER>(tid, j)], m < M && k < kend ? la.at(ra[j], qa) : NULL, la.p);
            }
            #pragma unroll
            for (int j = 0; j < MB::N; j++) {
                if (!MB::has(tid, j)) continue;
                int n = n0 + MB::row(tid, j), k = k0 + MB::kof(tid, j);
                if (KOUTER && j > 0) qb = lb.kpos(k);
                copy16(&Bs[buf * S::B + dst_sw128<BN, BK, KOUTER>(tid, j)], n < N && k < kend ? lb.at(rb[j], qb) : NULL, lb.p);
            }
        }
    };
    float acc[WN / 2];
    #pragma unroll
    for (int i = 0; i < WN / 2; i++) acc[i] = 0.f;
    #pragma unroll
    for (int t = 0; t < STAGES - 1; t++) { if (t < nk) load(t); copies_commit(); }   /* (the copy engine's: empty groups) */
    for (int t = 0; t < nk; t++) {
        if constexpr (LA::TMA) mbar_wait(fb + 8 * (t % STAGES), t / STAGES % 2);   /* stage t has landed */
        else {
            copies_wait<STAGES - 2>();   /* stage t has landed (this thread's runs) */
            fence_proxy_async();           /* ... visible to the async proxy, which wgmma reads through */
        }
        __syncthreads();                   /* everyone's runs; every wgmma of stage t - 1 is done */
        /* the warpgroup's rows of A and B in this stage (either layout: 64 rows of A, WN of B, BK k each), and
           a step of 16 k in them: 32 bytes along a row (k inner), or 16 rows of 128 bytes (k outer) */
        unsigned a = sa + (t % STAGES * S::A + wgm * 64 * BK) * 2, b = sb + (t % STAGES * S::B + wgn * WN * BK) * 2;
        const unsigned kstep = KOUTER ? 16 * 128 : 32, lbo = KOUTER ? 64 * BK * 2 : 16;
        /* the copy engine fills a whole stage: past kend it holds the next k-slice's values (the staged
           loaders' zeros), so a slice's last stage stops at kend (k-slices end in 32s: whole steps of 16) */
        const int ksteps = LA::TMA ? min(BK, kend - (kbeg + t * BK)) : BK;
        wgmma_hold(acc);
        wgmma_fence();
        #pragma unroll
        for (int kk = 0; kk < BK / 16; kk++)
            if (16 * kk < ksteps)
                Wgmma<T, WN>::template mma<KOUTER, KOUTER>(acc, wg_desc(a + kstep * kk, lbo), wg_desc(b + kstep * kk, lbo));
        wgmma_commit();
        if (t + STAGES - 1 < nk) load(t + STAGES - 1);   /* into stage t - 1's buffer, while the products run */
        copies_commit();
        wgmma_wait<0>();
        wgmma_hold(acc);
    }
    copies_wait<0>();
    /* the epilogue as conv_tc_kernel's: the tile as floats in shared memory, then out by store_tile */
    float *Cs = (float *)As;
    __syncthreads();   /* every warpgroup's wgmmas are done with the ring */
    int r = wgm * 64 + warp % 4 * 16 + lane / 4, cbase = wgn * WN + lane % 4 * 2;
    #pragma unroll
    for (int j = 0; j < WN / 8; j++)
        #pragma unroll
        for (int h = 0; h < 2; h++)
            *(float2 *)&Cs[(r + h * 8) * S::LDC + cbase + j * 8] = make_float2(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
    __syncthreads();
    store_tile<BM, BN>(ep, Cs, S::LDC, m0, n0, M, N, tid);
#endif
}

template <class T, int BM, int BN, int STAGES, bool KOUTER, class LA, class LB, class EP>
static void conv_wg_tiles(int M, int N, int K, int splitk, int kchunk, LA la, LB lb, EP ep) {
    const int bytes = WgSmem<BM, BN, STAGES>::BYTES;
    static bool asked = false;   /* one per instantiation, as the attribute */
    if (!asked) {
        CK(cudaFuncSetAttribute(conv_wg_kernel<T, BM, BN, STAGES, KOUTER, LA, LB, EP>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                bytes));
        asked = true;
    }
    dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM, splitk);
    conv_wg_kernel<T, BM, BN, STAGES, KOUTER><<<grid, 256, bytes>>>(M, N, K, kchunk, la, lb, ep);
    CK_LAUNCH("conv_wg_kernel");
}

/* The Hopper tier's tile (conv_wg_kernel) of BM rows: 64 x 128 (the two
   warpgroups side by side, 64 x 64 each) in 4 stages, 128 x 128 (one
   above the other, 64 x 128 each) in 3, two blocks a multiprocessor
   either way (96 KB of ring). wg_tile(M): 64 rows for 49 to 64, 128 past
   it (96 too: a quarter of its products on padding, still faster than
   conv_tc_kernel's 96 x 128); BM 0 below 49 rows: staged_tile's, on
   conv_tc_kernel. With the copy engine's loaders, which hold no registers
   for their rows, the 64-row tile fits three blocks a multiprocessor in 3
   stages (72 KB each, at most 85 registers a thread); the 128-row tile
   cannot go to three: its m64n128 wgmma needs 90 registers a thread. More
   stages, wider tiles (one block a multiprocessor) and a warp-specialised
   pipeline (one warpgroup issuing the loads) were each slower: one
   warpgroup cannot issue the im2col loads of a stage as fast as the tensor
   cores use them, and one block leaves the epilogue exposed
   (tests/results/README.md). */
/* the tile for M rows (tma: the copy engine's loaders), none below 49 */
static WgTile wg_tile(int M, bool tma) { return M > 48 ? wg_tile_of(M <= 64 ? 64 : 128, tma) : WgTile{ 0, 0, 0 }; }
template <class T, int BM, bool KOUTER, class LA, class LB, class EP>
static void conv_wg_tile_of(int M, int N, int K, int splitk, int kchunk, LA la, LB lb, EP ep) {
    constexpr WgTile t = wg_tile_of(BM, LA::TMA);
    conv_wg_tiles<T, t.BM, t.BN, t.STAGES, KOUTER>(M, N, K, splitk, kchunk, la, lb, ep);
}
/* The copy engine's loaders (conv_wg_kernel): the same
   operands as the staged loaders above, as tensor maps. load<R>(dst, bar,
   k0, i0) asks for the boxes of the stage of k0..k0+63 for the R rows (k
   inner) or columns (k outer) from i0 of the tile, telling bar their
   bytes. A stage of 64 k must lie in one tap, so the product's k gives a
   tap kp channels of the im2col operand (c1g for x, c2g for dY), the
   group's rounded up to 64s: kp - c1g more where the group's are not
   whole 64s (120 -> 128, tma_channels). Those come as zeros (the box reaches past the
   tensor's channels: a conv of one group), so whatever A holds there
   (the next tap's first weights) adds exact zeros. No thread keeps rows
   (Row is empty): the coordinates are a stage's few divisions, in one
   thread. */
static int round64(int c) { return (c + 63) / 64 * 64; }

/* A, k inner: rows r0 + i0.. of a [rows][K] matrix (the forward's w_f, a phase's w_d), K in taps of kr
   values, the product's taps kp apart; box 64 k x R rows */
template <class T_> struct TmaRowsA {
    typedef T_ T; typedef char Row; static const bool TMA = true;
    CUtensorMap map; int r0, kr, kp; FastDiv fkp;
    template <int R> __device__ void load(unsigned dst, unsigned bar, int k0, int i0) const {
        int tap = fdiv(k0, fkp);
        mbar_expect(bar, R * 128);
        tma_tile_2d(dst, &map, bar, k0 - tap * (kp - kr), r0 + i0);
    }
};
/* forward, B: FwdStB's operand, output pixels n0.. x 64 channels of tap (ky, kx); the map's corners run
   from -p to p - (k - 1) past the image at stride s (tma_im2col) */
template <class T_> struct TmaFwdB {
    typedef T_ T; typedef char Row; static const bool TMA = true;
    CUtensorMap map; ConvGeo c; int gi, kp; FastDiv fkp;
    template <int R> __device__ void load(unsigned dst, unsigned bar, int k0, int n0) const {
        int tap = fdiv(k0, fkp), ci = k0 - tap * kp, ky = fdiv(tap, c.fk), kx = tap - ky * c.k;
        int b = fdiv(n0, c.fP), pp = n0 - b * c.Ho * c.Wo, oy = fdiv(pp, c.fWo), ox = pp - oy * c.Wo;
        mbar_expect(bar, R * 128);
        tma_im2col_4d(dst, &map, bar, gi * c.c1g + ci, ox * c.s - c.p, oy * c.s - c.p, b, kx, ky);
    }
};
/* backward-data of a phase, B: BwdDataStB's operand as a stride-1 im2col over dY. Position (qy, qx) reads
   dY at (qy + oy0 - ty, qx + ox0 - tx): its window's corner is (qx + ox0 - (nkx - 1), qy + oy0 - (nky - 1))
   and tap (ty, tx) the offset (nkx - 1 - tx, nky - 1 - ty); the corners run over Wq x Hq positions */
template <class T_> struct TmaBwdDataB {
    typedef T_ T; typedef char Row; static const bool TMA = true;
    CUtensorMap map; ConvGeo c; Phase f; int gi, kp; FastDiv fkp;
    template <int R> __device__ void load(unsigned dst, unsigned bar, int k0, int n0) const {
        int t = fdiv(k0, fkp), co = k0 - t * kp, ty = fdiv(t, f.fnkx), tx = t - ty * f.nkx;
        int b = fdiv(n0, f.fPq), pp = n0 - b * f.Hq * f.Wq, qy = fdiv(pp, f.fWq), qx = pp - qy * f.Wq;
        mbar_expect(bar, R * 128);
        tma_im2col_4d(dst, &map, bar, gi * c.c2g + co, qx + f.ox0 - (f.nkx - 1), qy + f.oy0 - (f.nky - 1), b,
                      f.nkx - 1 - tx, f.nky - 1 - ty);
    }
};
/* backward-weight, A (k outer): dY [pixels][C2], channels gi c2g + i0.. in blocks of 64 (a box of 64
   channels x 64 pixels each, the stage's blocks of 64 columns), none past the group's M channels */
template <class T_> struct TmaBwdWA {
    typedef T_ T; typedef char Row; static const bool TMA = true;
    CUtensorMap map; int c0, M;
    template <int R> __device__ void load(unsigned dst, unsigned bar, int k0, int i0) const {
        #pragma unroll
        for (int blk = 0; blk < R / 64; blk++)
            if (i0 + 64 * blk < M) {
                mbar_expect(bar, 64 * 128);
                tma_tile_2d(dst + blk * 64 * 128, &map, bar, c0 + i0 + 64 * blk, k0);
            }
    }
};
/* backward-weight, B (k outer): BwdWStB's operand, columns n = (tap, ci) in blocks of 64 (one tap each)
   x output pixels k0..k0+63, an im2col box of 64 pixels a block, none past the N columns */
template <class T_> struct TmaBwdWB {
    typedef T_ T; typedef char Row; static const bool TMA = true;
    CUtensorMap map; ConvGeo c; int gi, N, kp; FastDiv fkp;
    template <int R> __device__ void load(unsigned dst, unsigned bar, int k0, int n0) const {
        int b = fdiv(k0, c.fP), pp = k0 - b * c.Ho * c.Wo, oy = fdiv(pp, c.fWo), ox = pp - oy * c.Wo;
        #pragma unroll
        for (int blk = 0; blk < R / 64; blk++) {
            int n = n0 + 64 * blk, tap = fdiv(n, fkp), ci = n - tap * kp, ky = fdiv(tap, c.fk), kx = tap - ky * c.k;
            if (n >= N) continue;
            mbar_expect(bar, 64 * 128);
            tma_im2col_4d(dst + blk * 64 * 128, &map, bar, gi * c.c1g + ci, ox * c.s - c.p, oy * c.s - c.p, b, kx, ky);
        }
    }
};

/* The tensor maps, encoded on the host by the driver's encoders (fetched once through the runtime). Both
   kinds bring rows of 64 values (128 bytes) in the 128-byte swizzle, zeros outside the tensor. */
static PFN_cuTensorMapEncodeTiled_v12000 g_tma_tiled = NULL;
static PFN_cuTensorMapEncodeIm2col_v12000 g_tma_im2col = NULL;
static void tma_encoders(void) {
    if (g_tma_tiled && g_tma_im2col) return;
    cudaDriverEntryPointQueryResult q1, q2;
    CK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", (void **)&g_tma_tiled, 12000, cudaEnableDefault, &q1));
    CK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeIm2col", (void **)&g_tma_im2col, 12000, cudaEnableDefault, &q2));
    if (q1 != cudaDriverEntryPointSuccess || q2 != cudaDriverEntryPointSuccess || !g_tma_tiled || !g_tma_im2col) {
        fprintf(stderr, "yolov9: the CUDA driver has no tensor-map encoders (cuTensorMapEncodeTiled, cuTensorMapEncodeIm2col)\n");
        exit(1);
    }
}
static CUtensorMapDataType tma_type(const __nv_bfloat16 *) { return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16; }
static CUtensorMapDataType tma_type(const __half *) { return CU_TENSOR_MAP_DATA_TYPE_FLOAT16; }
static void tma_check(CUresult r, const char *what, int a, int b, int c, int d) {
    if (r == CUDA_SUCCESS) return;
    fprintf(stderr, "yolov9: the driver refused a %s tensor map (%d x %d x %d x %d, error %d)\n", what, a, b, c, d, (int)r);
    exit(1);
}
/* a [rows][cols] matrix of T, rows ld values apart; boxes of box_rows rows x 64 columns */
template <class T> static CUtensorMap tma_rows(const T *p, int cols, size_t rows, int ld, int box_rows) {
    tma_encoders();
    CUtensorMap m;
    cuuint64_t dim[2] = { (cuuint64_t)cols, (cuuint64_t)rows }, stride[1] = { (cuuint64_t)ld * sizeof(T) };
    cuuint32_t box[2] = { 64, (cuuint32_t)box_rows }, estride[2] = { 1, 1 };
    tma_check(g_tma_tiled(&m, tma_type(p), 2, (void *)p, dim, stride, box, estride, CU_TENSOR_MAP_INTERLEAVE_NONE,
                          CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
              "tiled", cols, (int)rows, ld, box_rows);
    return m;
}
/* B images of H x W pixels of C channels, ld a pixel (a slot's buffer's), NHWC; boxes of `pixels` output
   pixels x 64 channels: the window corners run over [lo, W + up) x [lo, H + up) (w, h) by the stride s */
template <class T> static CUtensorMap tma_im2col(const T *p, int B, int H, int W, int C, int ld, const int lo[2],
                                                 const int up[2], int s, int pixels) {
    tma_encoders();
    CUtensorMap m;
    cuuint64_t dim[4] = { (cuuint64_t)C, (cuuint64_t)W, (cuuint64_t)H, (cuuint64_t)B };
    cuuint64_t stride[3] = { (cuuint64_t)ld * sizeof(T), (cuuint64_t)W * ld * sizeof(T), (cuuint64_t)H * W * ld * sizeof(T) };
    cuuint32_t estride[4] = { 1, (cuuint32_t)s, (cuuint32_t)s, 1 };
    tma_check(g_tma_im2col(&m, tma_type(p), 4, (void *)p, dim, stride, lo, up, 64, (cuuint32_t)pixels, estride,
                           CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                           CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
              "im2col", B, H, W, C);
    return m;
}

/* C = A B on conv_wg_kernel in wg_tile's tile (M past 48 rows), in at most splitk k-slices (0: as
   staged_slices chooses, the same slices as conv_tc_kernel's); returns the number it ran */
template <bool KOUTER, class LA, class LB, class EP>
static int gemm_wg(int M, int N, int K, int splitk, LA la, LB lb, EP ep) {
    typedef typename LA::T T;
    int kchunk;
    splitk = staged_slices(M, N, K, splitk, &kchunk);
    if (wg_tile(M, LA::TMA).BM == 64) conv_wg_tile_of<T, 64, KOUTER>(M, N, K, splitk, kchunk, la, lb, ep);
    else conv_wg_tile_of<T, 128, KOUTER>(M, N, K, splitk, kchunk, la, lb, ep);
    return splitk;
}

/* The staged passes (2.4) on the copy engine's loaders, where their boxes fit: a wg_tile for M, and the
   group's channels of the im2col operand (x's c1g, dY's c2g) in whole 64s, or padded to them with the
   zeros past the tensor's channels (a conv of one group: no other group's channels there) where that
   adds at most an eighth to the products (120 -> 128, 184 -> 192; 96 -> 128 keeps the staged loaders).
   cc: the geometry of the chunk of images staged (its B), c the conv's. Each returns 0 where it does
   not take the pass. */
static int tma_channels(const ConvGeo &c, int cg) { return cg % 64 == 0 || (c.g == 1 && round64(cg) * 8 <= cg * 9); }
/* forward of group gi: wf the forward form of the weights, x the chunk's NHWC copy, its pixels xpix
   values apart; 1 when it ran */
template <class T>
static int tma_forward(const ConvGeo &c, const ConvGeo &cc, const T *wf, const T *x, int xpix, int gi, const FwdStore &ep) {
    WgTile t = wg_tile(c.c2g, true);
    if (!t.BM || !tma_channels(c, c.c1g)) return 0;
    int kk = c.k * c.k, K = c.c1g * kk, kp = round64(c.c1g), lo[2] = { -c.p, -c.p }, up[2] = { c.p - (c.k - 1), c.p - (c.k - 1) };
    TmaRowsA<T> la = { tma_rows(wf, K, c.C2, K, t.BM), gi * c.c2g, c.c1g, kp, fastdiv(kp) };
    TmaFwdB<T> lb = { tma_im2col(x, cc.B, c.H, c.W, c.C1, xpix, lo, up, c.s, t.BN), cc, gi, kp, fastdiv(kp) };
    gemm_wg<false>(c.c2g, cc.B * c.Ho * c.Wo, kp * kk, 1, la, lb, ep);
    return 1;
}
/* weight gradient of group gi (M rows: its output channels) from the chunk's NHWC dY and x, in at most
   splitk k-slices: the number it ran */
template <class T>
static int tma_backward_weight(const ConvGeo &c, const ConvGeo &cc, const T *dy, const T *x, int gi, int M, int splitk,
                               const DwTapStore &ep) {
    if (!wg_tile(M, true).BM || !tma_channels(c, c.c1g)) return 0;
    int kp = round64(c.c1g), Kw = kp * c.k * c.k, red = cc.B * c.Ho * c.Wo, lo[2] = { -c.p, -c.p };
    int up[2] = { c.p - (c.k - 1), c.p - (c.k - 1) };
    TmaBwdWA<T> la = { tma_rows(dy, c.C2, (size_t)red, c.C2, 64), gi * c.c2g, M };
    TmaBwdWB<T> lb = { tma_im2col(x, cc.B, c.H, c.W, c.C1, c.C1, lo, up, c.s, 64), cc, gi, Kw, kp, fastdiv(kp) };
    DwTapStore st = ep;   /* the product's columns: taps of kp */
    st.c1p = kp; st.fc1p = fastdiv(kp);
    return gemm_wg<true>(M, Kw, red, splitk, la, lb, st);
}
/* backward-data of phase f, group gi, rows row0.. (rows of them) of dX: wd the phase's weights, dy the
   chunk's NHWC dY; 1 when it ran */
template <class T>
static int tma_backward_data(const ConvGeo &c, const ConvGeo &cc, const Phase &f, const T *wd, const T *dy, int gi, int row0,
                             int rows, const BwdDataStore &st) {
    WgTile t = wg_tile(rows, true);
    if (!t.BM || !tma_channels(c, c.c2g)) return 0;
    int nt = f.nky * f.nkx, Kd = nt * c.c2g, kp = round64(c.c2g), lo[2] = { f.ox0 - (f.nkx - 1), f.oy0 - (f.nky - 1) };
    int up[2] = { lo[0] + f.Wq - c.Wo, lo[1] + f.Hq - c.Ho };
    TmaRowsA<T> da = { tma_rows(wd, Kd, (size_t)(row0 + rows), Kd, t.BM), row0, c.c2g, kp, fastdiv(kp) };
    TmaBwdDataB<T> dbb = { tma_im2col(dy, cc.B, c.Ho, c.Wo, c.C2, c.C2, lo, up, 1, t.BN), cc, f, gi, kp, fastdiv(kp) };
    gemm_wg<false>(rows, cc.B * f.Hq * f.Wq, kp * nt, 1, da, dbb, st);
    return 1;
}

#endif   /* YOLO_TIER >= 90 */

/* ------------------------------------------------------------------------ */
/* 2.4 the staged passes: which tier's kernel serves each convolution       */
/* ------------------------------------------------------------------------ */
/* A conv pass in a precision the tier has tensor cores for: staged (NHWC
   copies in the scratch buffer, conv_tc_kernel or Hopper's conv_wg_kernel)
   where its channels come in 8s a group and one image's copies fit the
   buffer, else gemm_tc_kernel through the core's gemm (tc_gemm). */

/* C = A B from staged operands (T from the loaders) in staged_tile's tiles (the Hopper tier: wg_tile's
   where it has one), in at most splitk k-slices (0: as staged_slices chooses); returns the number of
   k-slices it ran */
template <bool KOUTER, class LA, class LB, class EP>
static int gemm_staged(int M, int N, int K, int splitk, LA la, LB lb, EP ep) {
#if YOLO_TIER >= 90
    if (wg_tile(M, false).BM) return gemm_wg<KOUTER>(M, N, K, splitk, la, lb, ep);
#endif
    typedef typename LA::T T;
    int kchunk;
    splitk = staged_slices(M, N, K, splitk, &kchunk);
    switch (staged_tile(M).BM) {
    case 32: conv_tc_tile_of<T, 32, KOUTER>(M, N, K, splitk, kchunk, la, lb, ep); break;
    case 48: conv_tc_tile_of<T, 48, KOUTER>(M, N, K, splitk, kchunk, la, lb, ep); break;
    case 64: conv_tc_tile_of<T, 64, KOUTER>(M, N, K, splitk, kchunk, la, lb, ep); break;
    case 96: conv_tc_tile_of<T, 96, KOUTER>(M, N, K, splitk, kchunk, la, lb, ep); break;
    default: conv_tc_tile_of<T, 128, KOUTER>(M, N, K, splitk, kchunk, la, lb, ep);
    }
    return splitk;
}


/* A conv of one group stages its channels padded with zeros to 8s (60 ->
   64, 90 -> 96, the image's 3 -> 8): then every operand of its products
   comes in 16-byte runs, and the zeros add exact zeros to their sums.
   Groups of more keep their channels, and the conv is staged where they
   come in 8s. staged_geo(c) is c as its staged copies hold it: x's
   channels padded, and dY's too (with_dy); the products' rows (a group's
   output channels in the forward and the weight gradient, dX's channels
   in backward-data) stay c's, and so do the stores of their results. */
static int staged_channels(const ConvGeo &c, int C) { return c.g == 1 ? (C + 7) / 8 * 8 : C; }
static int staged_conv(const ConvGeo &c) { return c.g == 1 || (c.c1g % 8 == 0 && c.c2g % 8 == 0); }
static ConvGeo staged_geo(const ConvGeo &c, int with_dy) {
    ConvGeo p = c;
    p.C1 = staged_channels(c, c.C1); p.c1g = p.C1 / c.g;
    if (with_dy) { p.C2 = staged_channels(c, c.C2); p.c2g = p.C2 / c.g; }
    return p;
}

/* the forward of images [b0, b0 + nb) at a time: x read in place where
   it is stored NHWC in 16-byte runs (in_place: its channels, and a slot's,
   in 8s), else staged into the scratch buffer (staged_geo's channels); the
   weights too (ws: staged already, a folded model's or the step's, read
   where their form is the staged one); each group one product, y written
   in its store; y may be a slot of a buffer of yc channels (0: C2), r a
   shortcut added in the epilogue (FwdStore) */
template <class T>
static void conv_forward_staged(const ConvGeo &c, const yolo_tensor *x, int in_place, const float *w, const T *ws,
                                const float *bias, int act, const void *r, int nb, yolo_precision prec, void *y,
                                int y_store, int yc) {
    ConvGeo cs = staged_geo(c, 0);
    int k = c.k, K = cs.c1g * k * k, P = c.Ho * c.Wo, xc = yolo_buffer_channels(x);
    const char *xd = slot_data(x);
    size_t image = (size_t)xc * c.H * c.W * store_bytes(x->store);   /* bytes from one image of x to the next */
    T *xs = (T *)(g_stage + yolo_arena_bytes((size_t)c.C2 * K * 2));
    const T *wf = cs.c1g == c.c1g ? ws : NULL;
    if (!wf) {
        prof_begin();
        stage_conv(w, g_stage, NULL, c.C2, c.c1g, k, c.s, c.g, cs.c1g, c.c2g, prec);
        prof_end(STAGE_NAME[k != 1], 0, 6.0 * c.C2 * K);
        wf = (const T *)g_stage;
    }
    for (int b0 = 0; b0 < c.B; b0 += nb) {
        ConvGeo cc = cs;
        cc.B = min(nb, c.B - b0);
        const T *xb = in_place ? (const T *)(xd + b0 * image) : xs;
        if (!in_place) {
            prof_begin();
            stage_input<T>(xd + b0 * image, x->store, xc, c.C1, xs, cs.C1, cc.B, c.H * c.W);
            prof_end(STAGE_NAME[k != 1], 0, (store_bytes(x->store) + 2.0) * cc.B * cs.C1 * c.H * c.W);
        }
        prof_begin();
        for (int gi = 0; gi < c.g; gi++) {
            size_t at = (size_t)b0 * P * store_bytes(y_store);   /* image b0's values, times its channels */
            FwdStore ep = { (char *)y + at * (yc ? yc : c.C2), bias, cc, gi, act, y_store, yc, r ? (const char *)r + at * c.C2 : NULL };
#if YOLO_TIER >= 90
            if (tma_forward(cs, cc, wf, xb, in_place ? xc : cs.C1, gi, ep)) continue;   /* Hopper's copy engine */
#endif
            RowsStA<T> la = { wf, K, gi * c.c2g };
            FwdStB<T> lb = { xb, cc, gi, fastdiv(cs.c1g), in_place ? xc : 0 };
            gemm_staged<false>(c.c2g, cc.B * P, K, 1, la, lb, ep);
        }
        prof_end(FWD_NAME[prec][k != 1], 2.0 * cc.B * P * c.C2 * c.c1g * k * k, 0);
    }
}

/* the backward of images [b0, b0 + nb) at a time: x and dY read in place
   where they are stored NHWC with their channels in 8s (as in a bf16 or
   half training pass, dY the BatchNorm backward's dL/dz), else staged
   (staged_geo's channels); the weights of every phase once (wsd: the
   step's, staged already by stage_train_weights, read where their form
   is the staged one); per chunk and group, the weight gradient (split-K
   over the chunk's pixels) and then each phase's data gradient. The
   phases' weights lie one after the other in (py, px) order, every phase
   that has taps (one that has no position on this input too: the form
   does not depend on the input) */
template <class T>
static void conv_backward_staged(const ConvGeo &c, const yolo_tensor *x, const float *w, const T *wsd, const yolo_tensor *dy,
                                 int nb, yolo_precision prec, const yolo_dx *dx, float *dw) {
    ConvGeo cs = staged_geo(c, 1);
    int k = c.k, s = c.s, kk = k * k, Kw = c.c1g * kk, Nw = cs.c1g * kk, P = c.Ho * c.Wo;
    int x_in = x->store != YOLO_FP32 && cs.C1 == c.C1, dy_in = dy->store != YOLO_FP32 && cs.C2 == c.C2;
    size_t wbytes = yolo_arena_bytes((size_t)c.C1 * kk * cs.c2g * 2);
    size_t xbytes = x_in ? 0 : yolo_arena_bytes((size_t)nb * c.H * c.W * cs.C1 * 2);
    size_t ximage = (size_t)c.C1 * c.H * c.W * store_bytes(x->store), dyimage = (size_t)c.C2 * P * store_bytes(dy->store);
    const T *wd = cs.c2g == c.c2g && wsd ? wsd : (const T *)g_stage;
    T *xs = (T *)(g_stage + wbytes), *dys = (T *)(g_stage + wbytes + xbytes);
    size_t off = 0;
    if (dx && wd == (const T *)g_stage) {
        prof_begin();
        stage_conv(w, NULL, g_stage, c.C2, c.c1g, k, s, c.g, c.c1g, cs.c2g, prec);
        prof_end(STAGE_NAME[k != 1], 0, 6.0 * c.C1 * kk * cs.c2g);
    }
    for (int b0 = 0; b0 < c.B; b0 += nb) {
        ConvGeo cc = cs, cr = c;   /* the chunk's geometry as staged, and its own */
        cc.B = cr.B = min(nb, c.B - b0);
        const T *xb = x_in ? (const T *)((const char *)x->data + b0 * ximage) : xs;
        const T *dyb = dy_in ? (const T *)((const char *)dy->data + b0 * dyimage) : dys;
        if (!x_in || !dy_in) {
            prof_begin();
            if (!x_in) stage_input<T>((const char *)x->data + b0 * ximage, x->store, c.C1, c.C1, xs, cs.C1, cc.B, c.H * c.W);
            if (!dy_in) stage_input<T>((const char *)dy->data + b0 * dyimage, dy->store, c.C2, c.C2, dys, cs.C2, cc.B, P);
            prof_end(STAGE_NAME[k != 1], 0, cc.B * ((x_in ? 0 : (store_bytes(x->store) + 2.0) * cs.C1 * c.H * c.W) +
                                                    (dy_in ? 0 : (store_bytes(dy->store) + 2.0) * cs.C2 * P)));
        }
        double flops = 2.0 * cc.B * P * c.C2 * Kw / c.g;
        for (int gi = 0; gi < c.g; gi++) {
            prof_begin();
            float *dwg = dw + (size_t)gi * c.c2g * Kw;   /* this group's [c2g, Kw] */
            size_t plane = (size_t)c.c2g * Kw;
            StagedTile tile = staged_tile(c.c2g);
            int red = cc.B * P, slices = dw_slices(tile.BM, tile.BN, 32, c.c2g, Nw, red), ran = 0;
            DwTapStore ep = { slices > 1 ? g_splitk_work : dwg, plane, c.c1g, kk, slices, cs.c1g, fastdiv(cs.c1g) };
#if YOLO_TIER >= 90
            ran = tma_backward_weight(cs, cc, dyb, xb, gi, c.c2g, slices, ep);   /* Hopper's copy engine */
#endif
            if (!ran) {
                BwdWStA<T> la = { dyb, cs.C2, gi, cs.c2g };
                BwdWStB<T> lb = { xb, cc, gi, fastdiv(cs.c1g) };
                ran = gemm_staged<true>(c.c2g, Nw, red, slices, la, lb, ep);
            }
            slices = ran;
            if (slices > 1) {   /* the k-slices added to dW in slice order */
                splitk_sum_kernel<<<grid_for(plane), 256>>>(g_splitk_work, slices, plane, dwg);
                CK_LAUNCH("splitk_sum_kernel");
            }
            prof_end(BWD_W_NAME[prec][k != 1], flops, 0);
            prof_begin();
            off = 0;
            for (int py = 0; dx && py < s; py++)
                for (int px = 0; px < s; px++) {
                    Phase f;
                    if (!phase_taps(k, s, py, px, &f)) continue;
                    size_t n = (size_t)c.C1 * f.nky * f.nkx * cs.c2g;
                    if (!phase_of(c, py, px, &f)) { off += n; continue; }   /* taps, but no position on this input */
                    int Kd = f.nky * f.nkx * cs.c2g, Nd = cc.B * f.Hq * f.Wq;
                    for (int r = 0; r < dx->n; r++) {   /* a product a run of dX this group meets */
                        BwdDataStore st;
                        int row0, rows = dx_run_rows(dx, r, gi, cr, f, b0, &row0, &st);
                        if (!rows) continue;
#if YOLO_TIER >= 90
                        if (tma_backward_data(cs, cc, f, wd + off, dyb, gi, row0, rows, st)) continue;   /* Hopper's copy engine */
#endif
                        RowsStA<T> da = { wd + off, Kd, row0 };
                        BwdDataStB<T> dbb = { dyb, cc, f, gi, fastdiv(cs.c2g) };
                        gemm_staged<false>(rows, Nd, Kd, 1, da, dbb, st);
                    }
                    off += n;
                }
            prof_end(BWD_D_NAME[prec][k != 1], dx ? flops : 0, 0);
        }
    }
}

static int tc_conv2d_forward(const ConvGeo &c, const yolo_tensor *x, const float *w, const float *b, const void *ws, int act,
                             const yolo_tensor *r, yolo_precision prec, yolo_tensor *y) {
    if (!staged_conv(c)) return 0;
    ConvGeo cs = staged_geo(c, 0);
    int in_place = x->store != YOLO_FP32 && cs.C1 == c.C1 && slot_in_8s(x);
    int nb = stage_images(c.B, (size_t)c.C2 * cs.c1g * c.k * c.k, in_place ? 0 : (size_t)c.H * c.W * cs.C1 * 2);
    if (!nb) return 0;
    void *yd = slot_data(y);
    if (prec == YOLO_FP16)
        conv_forward_staged<__half>(c, x, in_place, w, (const __half *)ws, b, act, r ? r->data : NULL, nb, prec, yd, y->store,
                                    y->ctot);
#if YOLO_TIER >= 80
    else
        conv_forward_staged<__nv_bfloat16>(c, x, in_place, w, (const __nv_bfloat16 *)ws, b, act, r ? r->data : NULL, nb, prec,
                                           yd, y->store, y->ctot);
#endif
    return 1;
}

static int tc_conv2d_backward(const ConvGeo &c, const yolo_tensor *x, const float *w, const void *wsd, const yolo_tensor *dy,
                              yolo_precision prec, const yolo_dx *dx, float *dw) {
    if (!staged_conv(c)) return 0;
    ConvGeo cs = staged_geo(c, 1);
    int P = c.Ho * c.Wo, x_in = x->store != YOLO_FP32 && cs.C1 == c.C1, dy_in = dy->store != YOLO_FP32 && cs.C2 == c.C2;
    int nb = stage_images(c.B, (size_t)c.C1 * c.k * c.k * cs.c2g,
                          ((x_in ? 0 : (size_t)c.H * c.W * cs.C1) + (dy_in ? 0 : (size_t)P * cs.C2)) * 2);
    if (!nb) return 0;
    if (prec == YOLO_FP16) conv_backward_staged<__half>(c, x, w, (const __half *)wsd, dy, nb, prec, dx, dw);
#if YOLO_TIER >= 80
    else conv_backward_staged<__nv_bfloat16>(c, x, w, (const __nv_bfloat16 *)wsd, dy, nb, prec, dx, dw);
#endif
    return 1;
}

/* ws = w_f [C2][k k][cin] in prec's two bytes, what conv_forward_staged would make of w at every call */
static void tc_stage_weights(const float *w, int C2, int cin, int k, yolo_precision prec, void *ws) {
    stage_conv(w, ws, NULL, C2, cin, k, 1, 1, cin, C2, prec);
}
static void tc_stage_train_weights(const yolo_stage_conv *convs, int n, yolo_precision prec) {
    prof_begin();
    size_t values = stage_convs(convs, n, NULL, NULL, prec);
    prof_end("conv staging, the step's", 0, 6.0 * values);   /* a float read, two bytes written */
}
#endif   /* YOLO_TIER */

/* ======================================================================== */
/* PART 3. DATA PARALLEL, AND THE TABLE                                     */
/* ======================================================================== */

/* ------------------------------------------------------------------------ */
/* data parallel: the sum over the processes' GPUs (NCCL)                   */
/* ------------------------------------------------------------------------ */
/* Built with YOLO_NCCL (the Makefile defines it where it finds nccl.h):
   the processes of a data-parallel run (yolov9.h section 16) form one
   NCCL communicator, from an id that rank 0 makes and MPI hands out.
   Every NCCL call runs on a stream of its own, g_group_stream, made
   non-blocking so that the default stream, where every kernel runs, does
   not wait for it: a bucket's sum (group_sum) waits for the kernels queued
   so far (an event recorded on the default stream), then runs while the
   backward goes on; group_wait makes the default stream wait for every
   sum queued (an event recorded on the group's stream), so the clipping
   and the optimizer read the sums. --sync-bn's sums (group_sum_f64) go
   the same way and are waited for at once: the BatchNorm reads them next.
   One stream keeps the NCCL calls in the order they were made, the same
   in every process. Without NCCL the table has no group ops and a run of
   several processes on the GPU is refused. */
#ifdef YOLO_NCCL
#include <nccl.h>

static ncclComm_t g_group;
static cudaStream_t g_group_stream;
static cudaEvent_t g_group_event;   /* recorded on one stream, waited for by the other (each wait takes the last record) */

static int nccl_failed(ncclResult_t r, const char *what, char *err) {
    snprintf(err, YOLO_ERR, "NCCL: %s: %s", what, ncclGetErrorString(r));
    return -1;
}
#define NCCL_CK(call) do { ncclResult_t r_ = (call); if (r_ != ncclSuccess) { \
    fprintf(stderr, "%s:%d: NCCL error in %s: %s\n", __FILE__, __LINE__, #call, ncclGetErrorString(r_)); exit(1); } } while (0)

static int cu_group_join(int rank, int world, void (*bcast)(void *bytes, size_t n), char *err) {
    ncclUniqueId id;
    ncclResult_t r;
    if (rank == 0 && (r = ncclGetUniqueId(&id)) != ncclSuccess) return nccl_failed(r, "ncclGetUniqueId", err);
    bcast(&id, sizeof id);
    if ((r = ncclCommInitRank(&g_group, world, id, rank)) != ncclSuccess) return nccl_failed(r, "ncclCommInitRank", err);
    CK(cudaStreamCreateWithFlags(&g_group_stream, cudaStreamNonBlocking));
    CK(cudaEventCreateWithFlags(&g_group_event, cudaEventDisableTiming));
    return 0;
}

/* the work queued on stream `from` so far, before what is queued on `to` next */
static void stream_after(cudaStream_t to, cudaStream_t from) {
    CK(cudaEventRecord(g_group_event, from));
    CK(cudaStreamWaitEvent(to, g_group_event, 0));
}

static void cu_group_sum(float *x, size_t n) {
    stream_after(g_group_stream, 0);
    NCCL_CK(ncclAllReduce(x, x, n, ncclFloat, ncclSum, g_group, g_group_stream));
    CK_LAUNCH("ncclAllReduce");
}
static void cu_group_wait(void) { stream_after(0, g_group_stream); }
static void cu_group_sum_f64(double *x, size_t n) {
    stream_after(g_group_stream, 0);
    NCCL_CK(ncclAllReduce(x, x, n, ncclDouble, ncclSum, g_group, g_group_stream));
    CK_LAUNCH("ncclAllReduce");
    cu_group_wait();
}
static void cu_group_leave(void) {
    CK(cudaStreamSynchronize(g_group_stream));
    NCCL_CK(ncclCommDestroy(g_group));
    CK(cudaEventDestroy(g_group_event));
    CK(cudaStreamDestroy(g_group_stream));
    g_group = NULL;
}
#define CU_GROUP_JOIN cu_group_join
#define CU_GROUP_SUM cu_group_sum
#define CU_GROUP_WAIT cu_group_wait
#define CU_GROUP_SUM_F64 cu_group_sum_f64
#define CU_GROUP_LEAVE cu_group_leave
#else
#define CU_GROUP_JOIN NULL
#define CU_GROUP_SUM NULL
#define CU_GROUP_WAIT NULL
#define CU_GROUP_SUM_F64 NULL
#define CU_GROUP_LEAVE NULL
#endif

/* ------------------------------------------------------------------------ */
/* graphs: a region's launches recorded once, replayed                      */
/* ------------------------------------------------------------------------ */
/* yolov9.h opens a region around the layers of a forward and of a
   training backward (graph_begin, graph_end: the table's comment there
   says the protocol). A graph is kept under the region's key and the
   state of the memory it starts from (the arena's ranges, the placement
   it follows and how far along it is, the backend's own buffers): a
   region that comes again under the same key makes the same requests of
   the same arena, so its buffers land at the same addresses and the
   recording's launches are its own, argument for argument. The first
   time a key comes the region runs eagerly (a shape seen once, as
   validation's last batch, records nothing), the second time it is
   captured from the stream and launched as a graph, and from then on
   replayed. A replay checks every allocation of the region against the
   recording's; one that lands elsewhere stops the run (the key would
   have missed something the placement depends on).
   Without a reservation (cudaMalloc's addresses are not the arena's),
   once the plan has been exceeded, while profiling or synchronising each
   op, and with YOLO_CUDA_GRAPHS=0, every region runs eagerly.
   Optional, as data parallel is: the runtime's graph calls (CUDA 10 on)
   capture only a stream that can be captured, the per-thread default
   stream (nvcc --default-stream per-thread, as the Makefile builds; the
   legacy default stream cannot be). A build without it, and HIP's (whose
   hipGraph calls this code has not been checked on), leave the table's
   graph entries NULL: every region runs eagerly, as on the CPU. */
#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM) && !defined(__HIPCC__)
struct GraphKept {
    uint64_t key;
    long used;                 /* when it last ran (the least recently used goes first) */
    cudaGraphExec_t exec;      /* NULL: seen once, not recorded */
    size_t *offs;              /* [noffs] where the recording's allocations landed */
    int noffs, cap;
};
static const int GRAPHS_KEPT = 16;
static GraphKept g_graphs[GRAPHS_KEPT];
static long g_graph_clock = 0;
static int g_graph_how = YOLO_GRAPH_EAGER;   /* the region under way's */
static GraphKept *g_graph = NULL;            /* its graph */
static int g_graph_next = 0;                 /* its allocations so far */

/* the caller's key and the memory's state */
static uint64_t graph_key(uint64_t key) {
    uint64_t h = yolo_key_mix(key, (uint64_t)g_arena.n);
    for (int i = 0; i < g_arena.n; i++)
        h = yolo_key_mix(yolo_key_mix(yolo_key_mix(h, g_arena.r[i].off), g_arena.r[i].size), (uint64_t)g_arena.r[i].used);
    const uint64_t v[] = { (uint64_t)(uintptr_t)g_arena.script, (uint64_t)g_arena.nscript, (uint64_t)g_arena.next,
                           g_arena.base, g_own };
    for (int i = 0; i < 5; i++) h = yolo_key_mix(h, v[i]);
    return h;
}
/* the kept graph of key, or a slot for it: the least recently used, given up */
static GraphKept *graph_slot(uint64_t key) {
    GraphKept *k = &g_graphs[0];
    for (int i = 0; i < GRAPHS_KEPT; i++) {
        if (g_graphs[i].used && g_graphs[i].key == key) return &g_graphs[i];
        if (g_graphs[i].used < k->used) k = &g_graphs[i];
    }
    if (k->exec) CK(cudaGraphExecDestroy(k->exec));
    k->exec = NULL;
    k->key = key;
    k->noffs = 0;
    k->used = 0;
    return k;
}
static int cu_graph_begin(uint64_t key) {
    if (!g_base || g_warned || g_profiling || g_sync_each || g_graph_how != YOLO_GRAPH_EAGER) return YOLO_GRAPH_EAGER;
    GraphKept *k = graph_slot(graph_key(key));
    int seen = k->used != 0;
    k->used = ++g_graph_clock;
    if (!seen) return YOLO_GRAPH_EAGER;
    g_graph = k;
    g_graph_next = 0;
    if (k->exec) return g_graph_how = YOLO_GRAPH_REPLAY;
    k->noffs = 0;
    CK(cudaStreamBeginCapture(cudaStreamPerThread, cudaStreamCaptureModeThreadLocal));
    return g_graph_how = YOLO_GRAPH_RECORD;
}
static void cu_graph_end(void) {
    GraphKept *k = g_graph;
    if (g_graph_how == YOLO_GRAPH_RECORD) {
        cudaGraph_t graph;
        CK(cudaStreamEndCapture(cudaStreamPerThread, &graph));
        CK(cudaGraphInstantiateWithFlags(&k->exec, graph, 0));
        CK(cudaGraphDestroy(graph));
    } else if (g_graph_next != k->noffs) {
        fprintf(stderr, "yolov9: a replayed graph's region made %d allocations, its recording %d\n", g_graph_next, k->noffs);
        exit(1);
    }
    g_graph_how = YOLO_GRAPH_EAGER;
    g_graph = NULL;
    CK(cudaGraphLaunch(k->exec, cudaStreamPerThread));
    CK_LAUNCH("cudaGraphLaunch");
}
/* an allocation at offset off of the arena: written down while recording, checked while replaying
   (then 1: the graph does its zeroing) */
static int graph_took(size_t off) {
    if (g_graph_how == YOLO_GRAPH_EAGER) return 0;
    GraphKept *k = g_graph;
    if (g_graph_how == YOLO_GRAPH_RECORD) {
        if (k->noffs == k->cap) {
            k->cap = k->cap ? 2 * k->cap : 256;
            k->offs = (size_t *)realloc(k->offs, (size_t)k->cap * sizeof(size_t));
            if (!k->offs) { fprintf(stderr, "yolov9: out of host memory recording a graph\n"); exit(1); }
        }
        k->offs[k->noffs++] = off;
        return 0;
    }
    if (g_graph_next >= k->noffs || k->offs[g_graph_next] != off) {
        fprintf(stderr, "yolov9: a replayed graph's allocation %d landed at offset %zu, the recording's at %zu\n",
                g_graph_next, off, g_graph_next < k->noffs ? k->offs[g_graph_next] : (size_t)0);
        exit(1);
    }
    g_graph_next++;
    return 1;
}
static int graph_region(void) { return g_graph_how != YOLO_GRAPH_EAGER; }
#define CU_GRAPH_BEGIN cu_graph_begin
#define CU_GRAPH_END cu_graph_end
#else
static int graph_took(size_t) { return 0; }
static int graph_region(void) { return 0; }
#define CU_GRAPH_BEGIN NULL
#define CU_GRAPH_END NULL
#endif

/* ------------------------------------------------------------------------ */
/* the table                                                                */
/* ------------------------------------------------------------------------ */

static yolo_backend yolo_cuda = {
    .name = "cuda",
    .alloc = cu_alloc, .alloc_values = cu_alloc_values, .release = cu_release, .zero = cu_zero,
    .upload = cu_upload, .download = cu_download, .copy = cu_copy,
    .conv2d_forward = cu_conv2d_forward, .conv2d_backward = cu_conv2d_backward, .stage_weights = cu_stage_weights,
    .stage_train_weights = cu_stage_train_weights,
    .bn_train_forward = cu_bn_train_forward, .bn_apply = cu_bn_apply,
    .bn_act_backward = cu_bn_act_backward,
    .silu_forward = cu_silu_forward, .silu_backward = cu_silu_backward,
    .add = cu_add, .accumulate = cu_accumulate,
    .avgpool2_forward = cu_avgpool2_forward, .avgpool2_backward = cu_avgpool2_backward,
    .maxpool_forward = cu_maxpool_forward, .maxpool_backward = cu_maxpool_backward,
    .resize_forward = cu_resize_forward, .resize_backward = cu_resize_backward,
    .copy_channels = cu_copy_channels, .concat = cu_concat,
    .optim_update = cu_optim_update, .lerp = cu_lerp, .sumsq = cu_sumsq,
    .loss = cu_loss, .decode = cu_decode, .nms = cu_nms,
    .sync = cu_sync, .memory = cu_memory, .reserve = cu_reserve, .free_memory = cu_free_memory, .place = cu_place,
    .profile = cu_profile,
    .tensor_cores = 0,   /* set by yolo_backend_cuda from the device and the build */
    .pixels_to_input = cu_pixels_to_input, .pin = cu_pin,
    .group_join = CU_GROUP_JOIN, .group_sum = CU_GROUP_SUM, .group_wait = CU_GROUP_WAIT,
    .group_sum_f64 = CU_GROUP_SUM_F64, .group_leave = CU_GROUP_LEAVE,
    .graph_begin = CU_GRAPH_BEGIN, .graph_end = CU_GRAPH_END,
};

/* The tier a GPU runs: the build's (YOLO_TIER) where the GPU has what that tier needs (compute
   capability 7.5 on for Turing's, 8.0 on for Ampere's, 9.0 for Hopper's wgmma, which later GPUs lack)
   and the build holds code for it (the architecture its kernels were compiled for, as their PTX
   version tells: a build for sm_75 runs on later GPUs from its PTX, compiled as sm_75 code); else the
   portable core, and a line that says so. */
static int tier_of_arch(int arch) { return arch == 90 ? 90 : arch >= 80 ? 80 : arch >= 75 ? 75 : 0; }
static int device_tier(int device) {
    if (!YOLO_TIER) return 0;
    int major = 0, minor = 0;
    cudaFuncAttributes built;
    CK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    CK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
    CK(cudaFuncGetAttributes(&built, (const void *)scale_kernel));   /* any kernel: one compile, one target */
    if (tier_of_arch(10 * major + minor) >= YOLO_TIER && tier_of_arch(built.ptxVersion) >= YOLO_TIER) return YOLO_TIER;
    fprintf(stderr, "yolov9: this build's tier (YOLO_TIER %d) does not run on a GPU of compute capability %d.%d "
            "(code for sm_%d): running the portable core\n", YOLO_TIER, major, minor, built.ptxVersion);
    return 0;
}

extern "C" const yolo_backend *yolo_backend_cuda(int device, char *err) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        (void)cudaGetLastError();
        if (err) snprintf(err, YOLO_ERR, "no CUDA device found");
        return NULL;
    }
    if (device >= n) {
        if (err) snprintf(err, YOLO_ERR, "CUDA device %d does not exist (%d found)", device, n);
        return NULL;
    }
    CK(cudaSetDevice(device));
    g_tier = device_tier(device);
    yolo_cuda.tensor_cores = tc_products(YOLO_BF16) << YOLO_BF16 | tc_products(YOLO_FP16) << YOLO_FP16;
    if (!g_tier) yolo_cuda.stage_train_weights = NULL;   /* the core reads no staged weights */
    const char *e = getenv("YOLO_CUDA_SYNC");
    g_sync_each = e && *e && *e != '0';
    e = getenv("YOLO_CUDA_GRAPHS");   /* 0: no graphs, every op launched on its own */
    if (e && *e == '0') yolo_cuda.graph_begin = NULL, yolo_cuda.graph_end = NULL;
    return &yolo_cuda;
}
