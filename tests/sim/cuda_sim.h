/* cuda_sim.h — the CUDA backend's source run on the CPU, for machines
   without a GPU (CI) and for finding a kernel's bug before a GPU does.

   tests/sim/cu2cpp.py turns yolov9_kernels.cu into C++ that includes this
   header instead of the CUDA toolkit's. What it provides:

   - the language: __global__ and __device__ functions are plain functions,
     __shared__ variables are static (one block runs at a time, so a
     static is the block's), the vector and two-byte float types, the
     intrinsics the backend uses;
   - execution: a launch runs its blocks one after another; a block's
     threads are fibers (each its own stack) on one CPU thread, switched
     only where CUDA threads wait for each other: __syncthreads(), and the
     warp's collective instructions (__shfl_down_sync, ldmatrix,
     mma.sync), which run once the warp's 32 lanes have all arrived, with
     every lane's registers in hand. A block whose threads can never all
     arrive (a barrier some skip, lanes of a warp at different
     collectives) is reported as the deadlock it would be;
   - the GPU of a tier (-DYOLO_TIER=0, 75, 80 or 90: yolov9_kernels.cu's
     tiers; 0 the portable core alone, on a GPU older than any tier), and
     the instructions of inline PTX, in C: ldmatrix (x4, .trans), mma.sync
     m16n8k8 in half (Turing) and m16n8k16 in bf16 and half, cp.async;
     with -DYOLO_TIER=90 the Hopper tier's too: wgmma m64nNk16 (a warpgroup's 128 threads, operands through
     their descriptors and the 128-byte swizzle), mbarriers, the copy
     engine's tiled and im2col boxes from tensor maps that the simulator
     encodes, with the driver's limits. Asynchronous copies land as late
     as the hardware may (cp.async at the wait_group that covers it, a box
     when a thread sees its mbarrier's phase complete), so a stage read
     before its wait reads NaNs or the stage before. Products are exact
     and summed in double, rounded to float once (the tensor cores' order
     is not specified, so the twins compare by tolerance);
   - the runtime: device memory is host memory, poisoned with NaNs when
     allocated, copies are memcpy, every call is synchronous, a launch's
     configuration is checked against the hardware's limits (an error for
     CK_LAUNCH, as on a GPU). At exit it prints what ran: launches, blocks,
     and each instruction's count, so a test shows which paths it reached;
   - CUDA graphs, as the backend builds them (with the per-thread default
     stream, whose work can be captured): between cudaStreamBeginCapture
     and cudaStreamEndCapture a launch, a memset or a copy between device
     buffers is recorded, not run, its arguments taken as they are then;
     a graph's launch runs what was recorded, in order. A call that
     cannot be captured (anything synchronous: a copy to or from the
     host, cudaMalloc, a synchronisation) breaks the capture, as on a
     GPU: cudaStreamEndCapture then fails.

   What it cannot see: races, but for those that its order shows (one
   thread at a time runs to its next meeting point, from thread 0 on), a
   copy that overwrites a stage others still read (its copies land late,
   never early), and the GPU's approximate intrinsics (__expf and
   division are exact here).

   Shared memory addresses must fit in 32 bits (cvta.to.shared): build with
   -fno-pie and link with -no-pie, so that statics lie below 4 GB.
   x86-64 switches fibers in a few instructions; elsewhere ucontext. */
#ifndef CUDA_SIM_H
#define CUDA_SIM_H
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <functional>
#include <tuple>
#include <unistd.h>
#include <type_traits>
#include <vector>
#if !defined(__x86_64__)
#include <ucontext.h>
#endif

/* ---- the language ---- */
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static
#define __grid_constant__
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
/* the GPU simulated: one of the tier's architecture (build with -DYOLO_TIER=0, 75, 80 or 90) */
#ifndef YOLO_TIER
#define YOLO_TIER 80
#endif
#if YOLO_TIER >= 90
#define __CUDA_ARCH__ 900      /* Hopper: sm_90a */
#define __CUDA_ARCH_FEAT_SM90_ALL 1
#elif YOLO_TIER >= 80
#define __CUDA_ARCH__ 800      /* Ampere */
#elif YOLO_TIER >= 75
#define __CUDA_ARCH__ 750      /* Turing */
#else
#define __CUDA_ARCH__ 600      /* the portable core alone: a GPU older than every tier */
#endif

struct dim3 {
    unsigned x, y, z;
    constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
struct uint3 { unsigned x, y, z; };
struct alignas(8) float2 { float x, y; };
struct alignas(16) float4 { float x, y, z, w; };
struct alignas(8) uint2 { unsigned x, y; };
struct alignas(16) uint4 { unsigned x, y, z, w; };
struct alignas(16) double2 { double x, y; };
static inline float2 make_float2(float x, float y) { return {x, y}; }
static inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
static inline uint2 make_uint2(unsigned x, unsigned y) { return {x, y}; }
static inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return {x, y, z, w}; }

/* two-byte floats, stored as CUDA's are: round to nearest even from float (half: checked against
   _Float16 on every half and 44 million floats) */
static inline unsigned short sim_f2h(float f) {
    uint32_t x, sign, a;
    memcpy(&x, &f, 4);
    sign = x >> 16 & 0x8000, a = x & 0x7fffffff;
    if (a > 0x7f800000) return 0x7fff;                                  /* NaN: CUDA's canonical one */
    if (a >= 0x477ff000) return (unsigned short)(sign | 0x7c00);        /* 65520 and up round to infinity */
    if (a < 0x38800000) {                                               /* below 2^-14: a subnormal, units of 2^-24 */
        float v;
        memcpy(&v, &a, 4);
        return (unsigned short)(sign | (uint32_t)nearbyintf(v * 16777216.0f));
    }
    return (unsigned short)(sign | (a + 0xc8000fffu + (a >> 13 & 1)) >> 13);   /* exponent - 112, 13 bits off, ties to even */
}
static inline float sim_h2f(unsigned short h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = h >> 10 & 0x1f, m = h & 0x3ff, x;
    float f;
    if (!e) { f = ldexpf((float)m, -24); return sign ? -f : f; }
    x = sign | (e == 31 ? 0x7f800000 | m << 13 : (e + 112) << 23 | m << 13);
    memcpy(&f, &x, 4);
    return f;
}
static inline unsigned short sim_f2bf(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fff;   /* NaN: CUDA's canonical one */
    return (unsigned short)((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
}
static inline float sim_bf2f(unsigned short b) { uint32_t u = (uint32_t)b << 16; float f; memcpy(&f, &u, 4); return f; }
struct __half {
    unsigned short __x;
    __half() = default;
    __half(float f) : __x(sim_f2h(f)) {}
    operator float() const { return sim_h2f(__x); }
};
struct __nv_bfloat16 {
    unsigned short __x;
    __nv_bfloat16() = default;
    __nv_bfloat16(float f) : __x(sim_f2bf(f)) {}
    operator float() const { return sim_bf2f(__x); }
};
struct alignas(4) __half2 { __half x, y; };
struct alignas(4) __nv_bfloat162 { __nv_bfloat16 x, y; };
static inline __half __float2half_rn(float f) { return __half(f); }
static inline float __half2float(__half h) { return sim_h2f(h.__x); }
static inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16(f); }
static inline float __bfloat162float(__nv_bfloat16 b) { return sim_bf2f(b.__x); }
static inline __half __ushort_as_half(unsigned short u) { __half h; h.__x = u; return h; }
static inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short u) { __nv_bfloat16 b; b.__x = u; return b; }
static inline __half2 __floats2half2_rn(float lo, float hi) { return {__half(lo), __half(hi)}; }
static inline __nv_bfloat162 __floats2bfloat162_rn(float lo, float hi) { return {__nv_bfloat16(lo), __nv_bfloat16(hi)}; }

/* the intrinsics: the exact forms where the GPU's are approximate */
#define __expf expf   /* (glibc declares its own __expf) */
static inline float __fdividef(float a, float b) { return a / b; }
static inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((uint64_t)a * b) >> 32); }
template <class A, class B> static inline typename std::common_type<A, B>::type min(A a, B b) { return b < a ? b : a; }
template <class A, class B> static inline typename std::common_type<A, B>::type max(A a, B b) { return a < b ? b : a; }
template <class T> static inline T __ldg(const T *p) { return *p; }
template <class T> static inline T __ldcg(const T *p) { return *p; }
static inline void __threadfence(void) {}
template <class T> static inline T atomicAdd(T *p, T v) { T old = *p; *p = old + v; return old; }

/* ---- execution: a block's threads as fibers ---- */
static dim3 gridDim, blockDim;
static uint3 blockIdx, threadIdx;

enum { SIM_READY, SIM_AT_BARRIER, SIM_IN_COLLECTIVE, SIM_DONE };
/* 16 bytes on their way to shared memory (an asynchronous copy's, read from global memory when it was
   asked for) and what lets them land: a cp.async's commit group, a copy-engine box's mbarrier */
struct SimCopy { unsigned dst, key; unsigned char v[16]; };
/* the copies for which lands(key) holds land; the others stay in flight */
template <class P> static void sim_land(std::vector<SimCopy> &copies, P lands) {
    size_t k = 0;
    for (SimCopy &c : copies) {
        if (lands(c.key)) memcpy((void *)(uintptr_t)c.dst, c.v, 16);
        else copies[k++] = c;
    }
    copies.resize(k);
}
enum { SIM_SHFL, SIM_LDMATRIX, SIM_LDMATRIX_T, SIM_MMA_BF16, SIM_MMA_F16, SIM_MMA_F16_K8, SIM_WGMMA };
struct SimThread {
    void *sp;                    /* where its registers were saved when it last waited */
    int state;
    uint64_t in[10];             /* a collective's operands from this lane */
    uint64_t out[4];             /* and its results for it */
    std::vector<struct SimCopy> copies;   /* its cp.async copies in flight, and the groups it committed */
    unsigned groups;
#if !defined(__x86_64__)
    ucontext_t uc;
#endif
};
struct SimWarp { int live, arrived, op; };   /* a warp's, or a warpgroup's (128 threads) */
#define SIM_STACK (256 * 1024)
static struct {
    const char *kernel;          /* the launch's kernel, for the messages */
    int nthreads, live, at_barrier, cur;
    SimThread t[1024];
    SimWarp w[32], wg[8];
    char *stacks;
    void (*body)(void *);
    void *arg;
    void *sched_sp;
#if !defined(__x86_64__)
    ucontext_t sched_uc;
#endif
} sim;
/* the block's dynamic shared memory (227 KB, the H100's most), in one 256 KB-aligned window: wgmma's
   descriptors keep 18 bits of an address */
alignas(262144) static unsigned char sim_dyn_smem[232448];
/* the most a block may ask for on the simulated GPU: Turing's 64 KB, the 99 KB of the Ampere tier's
   smallest (sm_86, sm_89, sm_120; an A100 has 163), Hopper's 227; 48 KB on older GPUs */
static const size_t sim_smem_max = __CUDA_ARCH__ >= 900 ? 232448 : __CUDA_ARCH__ >= 800 ? 101376
                                 : __CUDA_ARCH__ >= 750 ? 65536 : 49152;

/* what ran, printed at exit: which instructions the tests reached */
static struct { long launches, blocks, threads, mma, mma_k8, ldmatrix, cp_async, wgmma, boxes, graphs, graph_work; } sim_count;
static void sim_report(void) {
    fflush(stdout);
    fprintf(stderr, "cuda_sim (sm_%d, tier %d): %ld launches, %ld blocks, %ld threads; %ld mma.sync m16n8k16, %ld m16n8k8, "
            "%ld ldmatrix, %ld cp.async, %ld wgmma, %ld copy-engine boxes; %ld graphs launched (%ld launches, memsets and "
            "copies)\n", __CUDA_ARCH__ / 10, YOLO_TIER, sim_count.launches, sim_count.blocks, sim_count.threads, sim_count.mma,
            sim_count.mma_k8, sim_count.ldmatrix, sim_count.cp_async, sim_count.wgmma, sim_count.boxes, sim_count.graphs,
            sim_count.graph_work);
}
static void sim_fail(const char *what) {
    fprintf(stderr, "cuda_sim: %s in %s, block (%u, %u, %u), thread %d\n", what, sim.kernel, blockIdx.x, blockIdx.y,
            blockIdx.z, sim.cur);
    abort();
}
static void __trap(void) { sim_fail("__trap (code the host should never have run)"); }

#if defined(__x86_64__)
/* save the callee-saved registers and the float control words on this
   stack, store the stack pointer in *from, and resume the stack `to` */
extern "C" void yolo_sim_switch(void **from, void *to);
asm(".text\n.globl yolo_sim_switch\n.type yolo_sim_switch,@function\nyolo_sim_switch:\n"
    "pushq %rbp\npushq %rbx\npushq %r12\npushq %r13\npushq %r14\npushq %r15\n"
    "subq $8, %rsp\nstmxcsr (%rsp)\nfnstcw 4(%rsp)\n"
    "movq %rsp, (%rdi)\nmovq %rsi, %rsp\n"
    "ldmxcsr (%rsp)\nfldcw 4(%rsp)\naddq $8, %rsp\n"
    "popq %r15\npopq %r14\npopq %r13\npopq %r12\npopq %rbx\npopq %rbp\nret\n"
    ".size yolo_sim_switch, .-yolo_sim_switch\n");
static void sim_to_scheduler(void) { yolo_sim_switch(&sim.t[sim.cur].sp, sim.sched_sp); }
static void sim_to_thread(int i) { yolo_sim_switch(&sim.sched_sp, sim.t[i].sp); }
#else
static void sim_to_scheduler(void) { swapcontext(&sim.t[sim.cur].uc, &sim.sched_uc); }
static void sim_to_thread(int i) { swapcontext(&sim.sched_uc, &sim.t[i].uc); }
#endif

static void sim_release_barrier(void) {
    for (int i = 0; i < sim.nthreads; i++)
        if (sim.t[i].state == SIM_AT_BARRIER) sim.t[i].state = SIM_READY;
    sim.at_barrier = 0;
}
static void sim_thread_exit(void) {
    SimThread *t = &sim.t[sim.cur];
    SimWarp *w = &sim.w[sim.cur / 32], *g = &sim.wg[sim.cur / 128];
    sim_land(t->copies, [](unsigned) { return true; });   /* its copies still in flight land */
    t->state = SIM_DONE;
    sim.live--;
    w->live--;
    g->live--;
    if (w->arrived || g->arrived) sim_fail("a thread left while others of its warp or warpgroup wait in a collective instruction");
    if (sim.at_barrier && sim.at_barrier == sim.live) sim_release_barrier();
    sim_to_scheduler();
}
static void sim_thread_main(void) {
    sim.body(sim.arg);
    sim_thread_exit();
}

static void __syncthreads(void) {
    if (sim.w[sim.cur / 32].arrived || sim.wg[sim.cur / 128].arrived) sim_fail("__syncthreads while others of the warp or warpgroup wait in a collective instruction");
    sim.t[sim.cur].state = SIM_AT_BARRIER;
    if (++sim.at_barrier == sim.live) sim_release_barrier();
    else sim_to_scheduler();
}

static void sim_collective_run(int warp);
static void sim_wgmma_run(int group);
/* this thread's part of a collective instruction of its warp (or warpgroup: SIM_WGMMA), operands in t->in;
   its results in t->out on return */
static void sim_collective(int op) {
    SimThread *t = &sim.t[sim.cur];
    int size = op == SIM_WGMMA ? 128 : 32, gi = sim.cur / size;
    SimWarp *w = op == SIM_WGMMA ? &sim.wg[gi] : &sim.w[gi];
    if (w->arrived && w->op != op) sim_fail("threads of a warp or warpgroup at different collective instructions");
    w->op = op;
    t->state = SIM_IN_COLLECTIVE;
    if (++w->arrived < w->live) { sim_to_scheduler(); return; }
    if (w->live != size && op != SIM_SHFL) sim_fail("a warp- or warpgroup-wide instruction with threads that have left");
    if (op == SIM_WGMMA) sim_wgmma_run(gi), sim_count.wgmma++;
    else sim_collective_run(gi), sim_count.mma += op == SIM_MMA_BF16 || op == SIM_MMA_F16, sim_count.mma_k8 += op == SIM_MMA_F16_K8,
         sim_count.ldmatrix += op == SIM_LDMATRIX || op == SIM_LDMATRIX_T;
    w->arrived = 0;
    for (int i = gi * size; i < gi * size + size && i < sim.nthreads; i++)
        if (sim.t[i].state == SIM_IN_COLLECTIVE) sim.t[i].state = SIM_READY;
}
/* let the others run (a thread that spins on a condition another sets) */
static void sim_yield(void) { sim_to_scheduler(); }

static std::vector<SimCopy> sim_boxes;   /* the copy engine's boxes in flight, the block's; key: their mbarrier */
/* one block: every thread from the start of the kernel to its end */
static void sim_run_block(void) {
    int n = sim.nthreads;
    sim.live = n;
    sim.at_barrier = 0;
    for (int i = 0; i < (n + 31) / 32; i++) sim.w[i] = {n - 32 * i < 32 ? n - 32 * i : 32, 0, -1};
    for (int i = 0; i < (n + 127) / 128; i++) sim.wg[i] = {n - 128 * i < 128 ? n - 128 * i : 128, 0, -1};
    for (int i = 0; i < n; i++) {
        SimThread *t = &sim.t[i];
        t->state = SIM_READY;
        t->copies.clear();
        t->groups = 0;
        char *top = sim.stacks + (size_t)(i + 1) * SIM_STACK;
#if defined(__x86_64__)
        /* the frame yolo_sim_switch pops: the control words, six registers, then `ret` into sim_thread_main
           with the stack as a call leaves it (16-byte aligned before the return address) */
        uint64_t *sp = (uint64_t *)(top - 16);
        sp[0] = (uint64_t)(uintptr_t)sim_thread_main;
        sp -= 7;
        memset(sp, 0, 7 * 8);
        uint32_t cw[2] = {0x1f80, 0x037f};
        memcpy(sp, cw, 8);
        t->sp = sp;
#else
        getcontext(&t->uc);
        t->uc.uc_stack.ss_sp = top - SIM_STACK + 4096;
        t->uc.uc_stack.ss_size = SIM_STACK - 4096;
        t->uc.uc_link = NULL;
        makecontext(&t->uc, sim_thread_main, 0);
#endif
    }
    int done = 0, last = n - 1;
    while (done < n) {
        int i = last, found = 0;
        for (int k = 0; k < n; k++) {
            i = i + 1 == n ? 0 : i + 1;
            if (sim.t[i].state == SIM_READY) { found = 1; break; }
        }
        if (!found) sim_fail("deadlock: threads wait at a barrier or a collective that the others never reach");
        sim.cur = last = i;
        threadIdx = {(unsigned)(i % blockDim.x), (unsigned)(i / blockDim.x % blockDim.y), (unsigned)(i / (blockDim.x * blockDim.y))};
        sim_to_thread(i);
        if (sim.t[i].state == SIM_DONE) done++;
    }
    sim_land(sim_boxes, [](unsigned) { return true; });   /* the copy engine's boxes that no one waited for */
}

struct SimConfig { dim3 grid, block; size_t bytes; };
typedef struct SimStream *cudaStream_t;
static SimConfig sim_config(dim3 grid, dim3 block, size_t bytes = 0, cudaStream_t = 0) { return {grid, block, bytes}; }

enum cudaError { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorMemoryAllocation = 2, cudaErrorInvalidConfiguration = 9,
                 cudaErrorStreamCaptureUnsupported = 900, cudaErrorStreamCaptureInvalidated = 901 };
typedef enum cudaError cudaError_t;
static cudaError_t sim_error = cudaSuccess;

/* a graph: the work recorded, in order; sim_capture: the one being captured (NULL: none), broken when a
   call that cannot be captured came during it */
struct SimGraph { std::vector<std::function<void()>> work; };
static SimGraph *sim_capture = NULL;
static int sim_capture_broken = 0;
/* a call that cannot be captured, made during a capture: an error, and the capture is broken */
static cudaError_t sim_uncapturable(void) {
    if (!sim_capture) return cudaSuccess;
    sim_capture_broken = 1;
    return sim_error = cudaErrorStreamCaptureUnsupported;
}

template <class F> static void sim_body(void *f) { (*(F *)f)(); }
template <class F> static void sim_run(const char *kernel, SimConfig c, F f);
/* a launch: its configuration checked as the hardware would, then its blocks one after another (during
   a capture: recorded, to run when the graph is launched) */
template <class F> static void sim_launch(const char *kernel, SimConfig c, F f) {
    unsigned threads = c.block.x * c.block.y * c.block.z;
    if (!threads || threads > 1024 || c.block.z > 64 || !c.grid.x || !c.grid.y || !c.grid.z || c.grid.x > 2147483647u ||
        c.grid.y > 65535 || c.grid.z > 65535 || c.bytes > sim_smem_max) {
        fprintf(stderr, "cuda_sim: %s: an invalid launch: grid (%u, %u, %u), block (%u, %u, %u), %zu bytes of shared memory\n",
                kernel, c.grid.x, c.grid.y, c.grid.z, c.block.x, c.block.y, c.block.z, c.bytes);
        sim_error = cudaErrorInvalidConfiguration;
        return;
    }
    if (sim_capture) { sim_capture->work.push_back([=] { sim_run(kernel, c, f); }); return; }
    sim_run(kernel, c, f);
}
template <class F> static void sim_run(const char *kernel, SimConfig c, F f) {
    unsigned threads = c.block.x * c.block.y * c.block.z;
    if (!sim.stacks) {
        atexit(sim_report);
        sim.stacks = (char *)mmap(NULL, (size_t)1024 * SIM_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (sim.stacks == MAP_FAILED) { perror("cuda_sim: mmap"); exit(1); }
        for (int i = 0; i < 1024; i++) mprotect(sim.stacks + (size_t)i * SIM_STACK, 4096, PROT_NONE);   /* a guard page under each */
    }
    memset(sim_dyn_smem, 0xff, c.bytes);   /* shared memory starts as NaNs, never as zeros */
    sim_count.launches++;
    sim_count.blocks += (long)c.grid.x * c.grid.y * c.grid.z;
    sim_count.threads += (long)c.grid.x * c.grid.y * c.grid.z * threads;
    sim.kernel = kernel;
    sim.nthreads = (int)threads;
    sim.body = sim_body<F>;
    sim.arg = &f;
    gridDim = c.grid;
    blockDim = c.block;
    for (unsigned z = 0; z < c.grid.z; z++)
        for (unsigned y = 0; y < c.grid.y; y++)
            for (unsigned x = 0; x < c.grid.x; x++) {
                blockIdx = {x, y, z};
                sim_run_block();
            }
}

/* ---- the warp's collective instructions ---- */
template <class T> static T __shfl_down_sync(unsigned mask, T v, unsigned delta) {
    (void)mask;
    SimThread *t = &sim.t[sim.cur];
    static_assert(sizeof(T) <= 8, "a shuffle of at most 8 bytes");
    t->in[0] = 0;
    memcpy(&t->in[0], &v, sizeof v);
    t->in[1] = delta;
    sim_collective(SIM_SHFL);
    memcpy(&v, &t->out[0], sizeof v);
    return v;
}
static size_t __cvta_generic_to_shared(const void *p) {
    if ((uintptr_t)p >> 32) sim_fail("shared memory above 4 GB: build the simulator with -fno-pie, link with -no-pie");
    return (size_t)(uintptr_t)p;
}
static void sim_ldmatrix_x4(int trans, unsigned &r0, unsigned &r1, unsigned &r2, unsigned &r3, unsigned addr) {
    SimThread *t = &sim.t[sim.cur];
    t->in[0] = addr;
    sim_collective(trans ? SIM_LDMATRIX_T : SIM_LDMATRIX);
    r0 = (unsigned)t->out[0], r1 = (unsigned)t->out[1], r2 = (unsigned)t->out[2], r3 = (unsigned)t->out[3];
}
/* mma.sync op (SIM_MMA_*) of this lane's fragments: d += a b, 16 x 8 x 16 */
static void sim_mma(int op, float &d0, float &d1, float &d2, float &d3, unsigned a0, unsigned a1, unsigned a2, unsigned a3,
                    unsigned b0, unsigned b1) {
    SimThread *t = &sim.t[sim.cur];
    float c[4] = {d0, d1, d2, d3};
    unsigned ab[6] = {a0, a1, a2, a3, b0, b1};
    for (int i = 0; i < 4; i++) memcpy(&t->in[i], &c[i], 4);
    for (int i = 0; i < 6; i++) t->in[4 + i] = ab[i];
    sim_collective(op);
    float *d[4] = {&d0, &d1, &d2, &d3};
    for (int i = 0; i < 4; i++) memcpy(d[i], &t->out[i], 4);
}
static void sim_mma16816(int half, float &d0, float &d1, float &d2, float &d3, unsigned a0, unsigned a1, unsigned a2,
                         unsigned a3, unsigned b0, unsigned b1) {
    sim_mma(half ? SIM_MMA_F16 : SIM_MMA_BF16, d0, d1, d2, d3, a0, a1, a2, a3, b0, b1);
}
/* Turing's m16n8k8 in half: m16n8k16 with k 8-15 zero (A's registers 2, 3 and B's 1) */
static void sim_mma1688(float &d0, float &d1, float &d2, float &d3, unsigned a0, unsigned a1, unsigned b0) {
    sim_mma(SIM_MMA_F16_K8, d0, d1, d2, d3, a0, a1, 0, 0, b0, 0);
}
/* cp.async: the 16 bytes are read when issued and land when a wait_group lets them (all but the n
   groups committed last), or when the thread ends: as late as the hardware may, so that a stage read
   before its wait reads what was there before (NaNs, or the stage before) */
static void sim_cp_async16(unsigned dst, const void *src, unsigned bytes) {
    SimThread *t = &sim.t[sim.cur];
    SimCopy c = {dst, ~0u, {0}};   /* key: its group, ~0 until committed */
    memcpy(c.v, src, bytes);
    t->copies.push_back(c);
    sim_count.cp_async++;
}
static void sim_cp_async_commit(void) {
    SimThread *t = &sim.t[sim.cur];
    for (SimCopy &c : t->copies)
        if (c.key == ~0u) c.key = t->groups;
    t->groups++;
}
static void sim_cp_async_wait(int n) {   /* the groups before the n committed last */
    SimThread *t = &sim.t[sim.cur];
    unsigned below = t->groups >= (unsigned)n ? t->groups - n : 0;
    sim_land(t->copies, [below](unsigned group) { return group < below; });
}

/* c + the 16 products a[k] b[k], exact, summed in double, rounded once (the tensor cores' order of the
   sums is not specified) */
static float sim_dot16(float c, const float *a, const float *b) {
    double s = c;
    for (int k = 0; k < 16; k++) s += (double)a[k] * b[k];
    return (float)s;
}

/* ---- the Hopper path: wgmma, mbarriers, the copy engine ---- */
/* a shared-memory byte at address a (32 bits), with the 128-byte swizzle: the 16-byte chunk (bits 4-6)
   XORed with the row of 128 bytes within 1024 (bits 7-9) */
static inline unsigned char *sim_sw128(uint64_t a) { return (unsigned char *)(uintptr_t)(a ^ ((a >> 7) & 7) << 4); }
/* an operand element (row r of 64 or N, k of 16) through a wgmma descriptor with the 128-byte swizzle:
   the start (18 bits of the address, in sim_dyn_smem's window), lbo between blocks of 64 rows (k outer),
   1024 bytes between groups of 8 rows of 128 bytes; k inner: rows of 128 bytes, k along them; k outer
   (trans): rows k of 64 values, r along them */
static float sim_wg_operand(uint64_t desc, int trans, int half, int r, int k) {
    uint64_t start = (desc & 0x3fff) << 4, lbo = (desc >> 16 & 0x3fff) << 4, sbo = (desc >> 32 & 0x3fff) << 4;
    if ((desc >> 62) != 1) sim_fail("a wgmma descriptor without the 128-byte swizzle");
    uint64_t a = ((uintptr_t)sim_dyn_smem & ~(uint64_t)0x3ffff) | start;
    a += trans ? (uint64_t)(k / 8) * sbo + (k % 8) * 128 + (uint64_t)(r / 64) * lbo + (r % 64) * 2
               : (uint64_t)(r / 8) * sbo + (r % 8) * 128 + k * 2;
    unsigned short v;
    memcpy(&v, sim_sw128(a), 2);
    return half ? sim_h2f(v) : sim_bf2f(v);
}
/* d (64 x N over the warpgroup's 128 threads) += A (64 x 16) B (16 x N), the operands in shared memory
   (B read as [N][16]) */
static void sim_wgmma(int N, const char *types, float *d, uint64_t da, uint64_t db, int ta, int tb) {
    SimThread *t = &sim.t[sim.cur];
    t->in[0] = (uintptr_t)d, t->in[1] = da, t->in[2] = db, t->in[3] = (uint64_t)N | (uint64_t)ta << 16 | (uint64_t)tb << 17;
    t->in[4] = !strncmp(types, "f16", 3);
    sim_collective(SIM_WGMMA);
}
/* the accumulators of thread l of warp w: d[4j + 2h + e] is row 16 w + l/4 + 8 h, column 8 j + 2 (l%4) + e */
static void sim_wgmma_run(int group) {
    SimThread *L = &sim.t[group * 128];
    for (int i = 1; i < 128; i++)
        if (L[i].in[1] != L[0].in[1] || L[i].in[2] != L[0].in[2] || L[i].in[3] != L[0].in[3])
            sim_fail("the threads of a warpgroup give wgmma different operands");
    int N = (int)(L[0].in[3] & 0xffff), ta = (int)(L[0].in[3] >> 16 & 1), tb = (int)(L[0].in[3] >> 17 & 1), half = (int)L[0].in[4];
    static float A[64][16], B[256][16];   /* B as [n][k] */
    for (int r = 0; r < 64; r++)
        for (int k = 0; k < 16; k++) A[r][k] = sim_wg_operand(L[0].in[1], ta, half, r, k);
    for (int n = 0; n < N; n++)
        for (int k = 0; k < 16; k++) B[n][k] = sim_wg_operand(L[0].in[2], tb, half, n, k);
    for (int i = 0; i < 128; i++) {
        float *d = (float *)(uintptr_t)L[i].in[0];
        int w = i / 32, l = i % 32;
        for (int j = 0; j < N / 8; j++)
            for (int h = 0; h < 2; h++)
                for (int e = 0; e < 2; e++) {
                    int r = 16 * w + l / 4 + 8 * h, col = 8 * j + 2 * (l % 4) + e;
                    d[4 * j + 2 * h + e] = sim_dot16(d[4 * j + 2 * h + e], A[r], B[col]);
                }
    }
}
/* an mbarrier (one arrival a phase, as the kernels init it): its phase's parity and the bytes still
   expected. A box counts its bytes when asked for and lands when a thread sees its phase complete, as
   late as the hardware may: a stage read without that wait reads what was there before */
struct SimMbar { uint32_t phase; int32_t tx; };
static SimMbar *sim_mbar(unsigned bar) { return (SimMbar *)(uintptr_t)bar; }
static void sim_mbar_init(unsigned bar) { *sim_mbar(bar) = {0, 0}; }
static void sim_mbar_expect(unsigned bar, unsigned bytes) { sim_mbar(bar)->tx += (int32_t)bytes; }
static void sim_mbar_arrive(unsigned bar) {
    SimMbar *m = sim_mbar(bar);
    if (m->tx) sim_fail("an mbarrier's phase told to expect other bytes than its boxes brought (a GPU would hang)");
    m->phase ^= 1;
}
static void sim_mbar_try_wait(unsigned &done, unsigned bar, unsigned parity) {
    static long spins;
    done = sim_mbar(bar)->phase != (parity & 1);   /* the phase of that parity is over */
    if (done) { spins = 0; sim_land(sim_boxes, [bar](unsigned b) { return b == bar; }); return; }
    if (++spins > 100000000) sim_fail("an mbarrier's phase that never completes (a GPU would hang)");
    sim_yield();
}
/* the tensor maps as the simulator's encoders fill them: kind, the tensor and its boxes */
struct SimTensorMap {
    int kind, esize, rank, channels, pixels;   /* kind 1: tiled, 2: im2col */
    int box[2], estride[4], lo[2], up[2];
    uint64_t dim[4], stride[3];
    char *p;
};
static SimTensorMap *sim_map(uint64_t map) { return (SimTensorMap *)(uintptr_t)map; }
static void sim_box_row(unsigned bar, unsigned dst, int r, const char *src, int n, int esize) {   /* row r of a box: n values or zeros */
    unsigned char row[128] = {0};
    if (src) memcpy(row, src, (size_t)n * esize);
    for (int q = 0; q < 8; q++) {   /* the 128-byte swizzle: chunk q of row r lands at chunk q ^ (r % 8) */
        SimCopy c = {(unsigned)(uintptr_t)sim_sw128((uint64_t)dst + r * 128 + q * 16), bar, {0}};
        memcpy(c.v, row + q * 16, 16);
        sim_boxes.push_back(c);
    }
}
/* a tiled box: rows x1.. of columns x0..x0+63, zeros past the matrix */
static void sim_tma_tile_2d(unsigned dst, uint64_t map, unsigned bar, int x0, int x1) {
    const SimTensorMap *m = sim_map(map);
    if (m->kind != 1 || dst % 1024) sim_fail("a tiled box from another map, or to a stage not 1024-aligned");
    int64_t n = (int64_t)m->dim[0] - x0 < m->box[0] ? (int64_t)m->dim[0] - x0 : m->box[0];   /* columns inside */
    for (int r = 0; r < m->box[1]; r++) {
        int64_t row = (int64_t)x1 + r;
        int in = x0 >= 0 && n > 0 && row >= 0 && row < (int64_t)m->dim[1];
        sim_box_row(bar, dst, r, in ? m->p + row * m->stride[0] + (int64_t)x0 * m->esize : NULL, in ? (int)n : 0, m->esize);
    }
    sim_mbar(bar)->tx -= m->box[0] * m->box[1] * m->esize;
    sim_count.boxes++;
}
/* an im2col box: `pixels` window corners from (w, h) of image n, along w by its stride within [lo, W + up),
   then h, then the next image; row r is channels c.. of the pixel at the corner plus the tap (kx, ky), zeros
   outside the tensor */
static void sim_tma_im2col_4d(unsigned dst, uint64_t map, unsigned bar, int c, int w, int h, int n, unsigned short kx,
                              unsigned short ky) {
    const SimTensorMap *m = sim_map(map);
    if (m->kind != 2 || dst % 1024) sim_fail("an im2col box from another map, or to a stage not 1024-aligned");
    int W = (int)m->dim[1], H = (int)m->dim[2], B = (int)m->dim[3], C = (int)m->dim[0];
    for (int r = 0; r < m->pixels; r++) {
        int x = w + (short)kx, y = h + (short)ky, nv = C - c < m->channels ? C - c : m->channels;
        int in = n < B && x >= 0 && x < W && y >= 0 && y < H && nv > 0 && c >= 0;
        sim_box_row(bar, dst, r, in ? m->p + n * m->stride[2] + (int64_t)y * m->stride[1] + (int64_t)x * m->stride[0] + (int64_t)c * m->esize : NULL,
                    in ? nv : 0, m->esize);
        w += m->estride[1];
        if (w >= W + m->up[0]) {
            w = m->lo[0], h += m->estride[2];
            if (h >= H + m->up[1]) h = m->lo[1], n++;
        }
    }
    sim_mbar(bar)->tx -= m->pixels * m->channels * m->esize;
    sim_count.boxes++;
}

/* the collective op of warp w, every lane's operands in hand (the layouts of the PTX manual) */
static void sim_collective_run(int warp) {
    SimThread *L = &sim.t[warp * 32];
    int op = sim.w[warp].op;
    if (op == SIM_SHFL) {   /* lane l gets lane l + delta's value, its own where that lane is not in the shuffle */
        int lanes = sim.nthreads - warp * 32 < 32 ? sim.nthreads - warp * 32 : 32;
        for (int l = 0; l < lanes; l++) {
            if (L[l].state != SIM_IN_COLLECTIVE) continue;
            unsigned src = l + (unsigned)L[l].in[1];
            L[l].out[0] = L[src < (unsigned)lanes && L[src].state == SIM_IN_COLLECTIVE ? src : l].in[0];
        }
    } else if (op == SIM_LDMATRIX || op == SIM_LDMATRIX_T) {
        /* four 8 x 8 matrices of 16-bit values; lanes 8j..8j+7 give the addresses of matrix j's rows;
           lane l gets row l/4, columns 2 (l%4), +1 of each (of its transpose with .trans) */
        for (int l = 0; l < 32; l++)
            for (int j = 0; j < 4; j++) {
                unsigned short v[2];
                for (int e = 0; e < 2; e++) {
                    int r = l / 4, col = 2 * (l % 4) + e;
                    if (op == SIM_LDMATRIX_T) { int s = r; r = col; col = s; }
                    memcpy(&v[e], (const char *)(uintptr_t)L[8 * j + r].in[0] + 2 * col, 2);
                }
                L[l].out[j] = v[0] | (unsigned)v[1] << 16;
            }
    } else {
        /* D (16 x 8) = A (16 x 16) B (16 x 8) + C; lane l, g = l/4, q = l%4 holds A's rows g and g + 8 at
           columns 2q, 2q+1 (registers 0, 1) and 2q+8, 2q+9 (2, 3), B's column g at rows 2q, 2q+1 and
           2q+8, 2q+9, and C's rows g, g + 8 at columns 2q, 2q+1. Bt is B transposed: [n][k] */
        float A[16][16], Bt[8][16], C[16][8];
        for (int l = 0; l < 32; l++) {
            int g = l / 4, q = l % 4;
            for (int e = 0; e < 2; e++) {
                auto val = [&](uint64_t reg) {
                    unsigned short h = (unsigned short)((unsigned)reg >> (16 * e));
                    return op == SIM_MMA_BF16 ? sim_bf2f(h) : sim_h2f(h);
                };
                A[g][2 * q + e] = val(L[l].in[4]);
                A[g + 8][2 * q + e] = val(L[l].in[5]);
                A[g][2 * q + 8 + e] = val(L[l].in[6]);
                A[g + 8][2 * q + 8 + e] = val(L[l].in[7]);
                Bt[g][2 * q + e] = val(L[l].in[8]);
                Bt[g][2 * q + 8 + e] = val(L[l].in[9]);
                memcpy(&C[g][2 * q + e], &L[l].in[e], 4);
                memcpy(&C[g + 8][2 * q + e], &L[l].in[2 + e], 4);
            }
        }
        for (int l = 0; l < 32; l++) {
            int g = l / 4, q = l % 4;
            for (int i = 0; i < 4; i++) {
                int r = g + 8 * (i / 2), col = 2 * q + i % 2;
                float f = sim_dot16(C[r][col], A[r], Bt[col]);
                L[l].out[i] = 0;
                memcpy(&L[l].out[i], &f, 4);
            }
        }
    }
}

/* ---- the runtime: host memory, synchronous ---- */
enum cudaMemcpyKind { cudaMemcpyHostToHost, cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice, cudaMemcpyDefault };
enum cudaMemoryType { cudaMemoryTypeUnregistered = 0, cudaMemoryTypeHost = 1, cudaMemoryTypeDevice = 2 };
struct cudaPointerAttributes { enum cudaMemoryType type; int device; void *devicePointer; void *hostPointer; };
struct cudaFuncAttributes { size_t sharedSizeBytes, constSizeBytes, localSizeBytes; int maxThreadsPerBlock, numRegs, ptxVersion, binaryVersion; };
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
enum cudaDeviceAttr { cudaDevAttrComputeCapabilityMajor = 75, cudaDevAttrComputeCapabilityMinor = 76 };
enum cudaDriverEntryPointQueryResult { cudaDriverEntryPointSuccess = 0, cudaDriverEntryPointSymbolNotFound = 1 };
enum { cudaEnableDefault = 0, cudaStreamNonBlocking = 1, cudaEventDisableTiming = 2, cudaHostRegisterMapped = 2 };
typedef struct SimEvent *cudaEvent_t;

static inline const char *cudaGetErrorString(cudaError_t e) {
    return e == cudaSuccess ? "no error" : e == cudaErrorMemoryAllocation ? "out of memory"
         : e == cudaErrorInvalidConfiguration ? "invalid configuration argument"
         : e == cudaErrorStreamCaptureUnsupported ? "operation not permitted when stream is capturing"
         : e == cudaErrorStreamCaptureInvalidated ? "operation failed due to a previous error during capture" : "invalid argument";
}
static inline cudaError_t cudaGetLastError(void) { cudaError_t e = sim_error; sim_error = cudaSuccess; return e; }
static inline cudaError_t cudaGetDeviceCount(int *n) { *n = 1; return cudaSuccess; }
static inline cudaError_t cudaSetDevice(int) { return cudaSuccess; }
static inline cudaError_t cudaDeviceSynchronize(void) { return sim_uncapturable(); }
static inline cudaError_t cudaDeviceGetAttribute(int *v, enum cudaDeviceAttr a, int) {   /* the compute capability */
    *v = a == cudaDevAttrComputeCapabilityMajor ? __CUDA_ARCH__ / 100 : __CUDA_ARCH__ / 10 % 10;
    return cudaSuccess;
}
static inline cudaError_t cudaFuncGetAttributes(cudaFuncAttributes *a, const void *) {   /* code for the simulated GPU */
    memset(a, 0, sizeof *a);
    a->maxThreadsPerBlock = 1024, a->ptxVersion = a->binaryVersion = __CUDA_ARCH__ / 10;
    return cudaSuccess;
}
template <class T> static cudaError_t cudaFuncSetAttribute(T *, enum cudaFuncAttribute, int) { return cudaSuccess; }
/* device memory: the blocks cudaMalloc gave, so that a pointer query tells them from host memory */
static std::vector<std::pair<char *, size_t>> sim_device;
static inline cudaError_t cudaMalloc(void **p, size_t n) {
    *p = NULL;
    if (sim_capture) return sim_uncapturable();
    if (posix_memalign(p, 256, n ? n : 1)) return sim_error = cudaErrorMemoryAllocation;
    memset(*p, 0xff, n);   /* fresh device memory is NaNs, never zeros */
    sim_device.push_back({(char *)*p, n});
    return cudaSuccess;
}
static inline cudaError_t cudaFree(void *p) {
    if (sim_capture) return sim_uncapturable();
    for (size_t i = 0; i < sim_device.size(); i++)
        if (sim_device[i].first == p) { sim_device.erase(sim_device.begin() + i); break; }
    free(p);
    return cudaSuccess;
}
/* the device's memory is the host's: its free and total pages */
static inline cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes) {
    *free_bytes = (size_t)sysconf(_SC_AVPHYS_PAGES) * (size_t)sysconf(_SC_PAGESIZE);
    *total_bytes = (size_t)sysconf(_SC_PHYS_PAGES) * (size_t)sysconf(_SC_PAGESIZE);
    return cudaSuccess;
}
static inline cudaError_t cudaMemcpy(void *d, const void *s, size_t n, enum cudaMemcpyKind) {
    if (sim_capture) return sim_uncapturable();
    memmove(d, s, n);
    return cudaSuccess;
}
static inline cudaError_t cudaMemset(void *d, int v, size_t n) {
    if (sim_capture) return sim_uncapturable();
    memset(d, v, n);
    return cudaSuccess;
}
/* the asynchronous ones: recorded during a capture, between device buffers (the backend's regions copy
   nothing to or from the host) */
static inline cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, enum cudaMemcpyKind k, cudaStream_t = 0) {
    if (sim_capture && k != cudaMemcpyDeviceToDevice) return sim_uncapturable();
    if (sim_capture) { sim_capture->work.push_back([=] { memmove(d, s, n); }); return cudaSuccess; }
    return cudaMemcpy(d, s, n, k);
}
static inline cudaError_t cudaMemsetAsync(void *d, int v, size_t n, cudaStream_t = 0) {
    if (sim_capture) { sim_capture->work.push_back([=] { memset(d, v, n); }); return cudaSuccess; }
    return cudaMemset(d, v, n);
}
static inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned) { *s = (cudaStream_t)1; return cudaSuccess; }
static inline cudaError_t cudaStreamDestroy(cudaStream_t) { return cudaSuccess; }
static inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return sim_uncapturable(); }
static inline cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned = 0) { return cudaSuccess; }
static inline cudaError_t cudaEventCreate(cudaEvent_t *e) { *e = (cudaEvent_t)1; return cudaSuccess; }
static inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned) { *e = (cudaEvent_t)1; return cudaSuccess; }
static inline cudaError_t cudaEventDestroy(cudaEvent_t) { return cudaSuccess; }
static inline cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t = 0) { return cudaSuccess; }
static inline cudaError_t cudaEventSynchronize(cudaEvent_t) { return sim_uncapturable(); }
static inline cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t, cudaEvent_t) { *ms = 0; return cudaSuccess; }
/* graphs: the per-thread default stream (as nvcc --default-stream per-thread builds) captured */
#define CUDA_API_PER_THREAD_DEFAULT_STREAM 1
#define cudaStreamPerThread ((cudaStream_t)2)
enum cudaStreamCaptureMode { cudaStreamCaptureModeGlobal = 0, cudaStreamCaptureModeThreadLocal = 1, cudaStreamCaptureModeRelaxed = 2 };
typedef SimGraph *cudaGraph_t;
typedef SimGraph *cudaGraphExec_t;
static inline cudaError_t cudaStreamBeginCapture(cudaStream_t, enum cudaStreamCaptureMode) {
    if (sim_capture) return sim_error = cudaErrorStreamCaptureUnsupported;
    sim_capture = new SimGraph;
    sim_capture_broken = 0;
    return cudaSuccess;
}
static inline cudaError_t cudaStreamEndCapture(cudaStream_t, cudaGraph_t *g) {
    if (!sim_capture) return sim_error = cudaErrorInvalidValue;
    *g = sim_capture;
    sim_capture = NULL;
    if (!sim_capture_broken) return cudaSuccess;
    delete *g;
    *g = NULL;
    return sim_error = cudaErrorStreamCaptureInvalidated;
}
static inline cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *e, cudaGraph_t g, unsigned long long) {
    *e = new SimGraph(*g);
    return cudaSuccess;
}
static inline cudaError_t cudaGraphLaunch(cudaGraphExec_t e, cudaStream_t) {
    if (sim_capture) return sim_uncapturable();
    sim_count.graphs++;
    for (auto &w : e->work) { w(); sim_count.graph_work++; }
    return cudaSuccess;
}
static inline cudaError_t cudaGraphDestroy(cudaGraph_t g) { delete g; return cudaSuccess; }
static inline cudaError_t cudaGraphExecDestroy(cudaGraphExec_t e) { delete e; return cudaSuccess; }

/* page-locked host memory: the ranges registered, so that the backend takes them as mapped */
static struct { char *p; size_t n; } sim_pinned[64];
static inline cudaError_t cudaHostRegister(void *p, size_t n, unsigned) {
    for (int i = 0; i < 64; i++)
        if (!sim_pinned[i].p) { sim_pinned[i].p = (char *)p, sim_pinned[i].n = n; return cudaSuccess; }
    return cudaErrorInvalidValue;
}
static inline cudaError_t cudaHostUnregister(void *p) {
    for (int i = 0; i < 64; i++)
        if (sim_pinned[i].p == p) { sim_pinned[i].p = NULL; return cudaSuccess; }
    return cudaErrorInvalidValue;
}
static inline cudaError_t cudaPointerGetAttributes(cudaPointerAttributes *a, const void *p) {
    memset(a, 0, sizeof *a);
    for (auto &d : sim_device)
        if ((const char *)p >= d.first && (const char *)p < d.first + d.second) {
            a->type = cudaMemoryTypeDevice, a->devicePointer = (void *)p;
            return cudaSuccess;
        }
    for (int i = 0; i < 64; i++)
        if (sim_pinned[i].p && (const char *)p >= sim_pinned[i].p && (const char *)p < sim_pinned[i].p + sim_pinned[i].n) {
            a->type = cudaMemoryTypeHost, a->devicePointer = a->hostPointer = (void *)p;
            return cudaSuccess;
        }
    return cudaSuccess;   /* not registered: the backend stages it */
}

/* the copy engine's tensor maps, encoded by the simulator (a SimTensorMap in the map's 128 bytes), with the
   driver's limits that the backend's maps meet: a 16-byte aligned tensor, strides in 16 bytes, boxes of at
   most 256 a dimension, an inner box of the swizzle's 128 bytes, 4-d im2col corners in 8 bits */
typedef uint64_t cuuint64_t;
typedef uint32_t cuuint32_t;
typedef int CUresult;
enum { CUDA_SUCCESS = 0, CUDA_ERROR_INVALID_VALUE = 1 };
struct alignas(64) CUtensorMap { uint64_t opaque[16]; };
static_assert(sizeof(SimTensorMap) <= sizeof(CUtensorMap), "a simulated map in a tensor map's bytes");
typedef enum { CU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9 } CUtensorMapDataType;
typedef enum { CU_TENSOR_MAP_INTERLEAVE_NONE = 0 } CUtensorMapInterleave;
typedef enum { CU_TENSOR_MAP_SWIZZLE_128B = 3 } CUtensorMapSwizzle;
typedef enum { CU_TENSOR_MAP_L2_PROMOTION_L2_128B = 2 } CUtensorMapL2promotion;
typedef enum { CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0 } CUtensorMapFloatOOBfill;
static CUresult sim_map_common(CUtensorMap *tm, SimTensorMap *m, CUtensorMapDataType type, cuuint32_t rank, void *p,
                               const cuuint64_t *dim, const cuuint64_t *stride, const cuuint32_t *estride,
                               CUtensorMapSwizzle sw) {
    memset(tm, 0, sizeof *tm);
    memset(m, 0, sizeof *m);
    m->esize = 2, m->rank = (int)rank, m->p = (char *)p;
    if ((type != CU_TENSOR_MAP_DATA_TYPE_FLOAT16 && type != CU_TENSOR_MAP_DATA_TYPE_BFLOAT16) || sw != CU_TENSOR_MAP_SWIZZLE_128B ||
        rank < 2 || rank > 4 || (uintptr_t)p % 16)
        return CUDA_ERROR_INVALID_VALUE;
    for (cuuint32_t i = 0; i < rank; i++) {
        if (!dim[i] || dim[i] >> 32 || !estride[i] || estride[i] > 8) return CUDA_ERROR_INVALID_VALUE;
        m->dim[i] = dim[i], m->estride[i] = (int)estride[i];
        if (i + 1 < rank) {
            if (stride[i] % 16 || stride[i] >> 40) return CUDA_ERROR_INVALID_VALUE;
            m->stride[i] = stride[i];
        }
    }
    return CUDA_SUCCESS;
}
static CUresult sim_encode_tiled(CUtensorMap *tm, CUtensorMapDataType type, cuuint32_t rank, void *p, const cuuint64_t *dim,
                                 const cuuint64_t *stride, const cuuint32_t *box, const cuuint32_t *estride,
                                 CUtensorMapInterleave, CUtensorMapSwizzle sw, CUtensorMapL2promotion, CUtensorMapFloatOOBfill) {
    SimTensorMap m;
    CUresult r = sim_map_common(tm, &m, type, rank, p, dim, stride, estride, sw);
    if (r || rank != 2 || box[0] * 2 != 128 || !box[1] || box[1] > 256) return r ? r : CUDA_ERROR_INVALID_VALUE;
    m.kind = 1, m.box[0] = (int)box[0], m.box[1] = (int)box[1];
    memcpy(tm, &m, sizeof m);
    return CUDA_SUCCESS;
}
static CUresult sim_encode_im2col(CUtensorMap *tm, CUtensorMapDataType type, cuuint32_t rank, void *p, const cuuint64_t *dim,
                                  const cuuint64_t *stride, const int *lo, const int *up, cuuint32_t channels,
                                  cuuint32_t pixels, const cuuint32_t *estride, CUtensorMapInterleave,
                                  CUtensorMapSwizzle sw, CUtensorMapL2promotion, CUtensorMapFloatOOBfill) {
    SimTensorMap m;
    CUresult r = sim_map_common(tm, &m, type, rank, p, dim, stride, estride, sw);
    if (r || rank != 4 || channels * 2 != 128 || !pixels || pixels > 256) return r ? r : CUDA_ERROR_INVALID_VALUE;
    for (int i = 0; i < 2; i++) {
        if (lo[i] < -128 || lo[i] > 127 || up[i] < -128 || up[i] > 127) return CUDA_ERROR_INVALID_VALUE;
        m.lo[i] = lo[i], m.up[i] = up[i];
    }
    m.kind = 2, m.channels = (int)channels, m.pixels = (int)pixels;
    memcpy(tm, &m, sizeof m);
    return CUDA_SUCCESS;
}
typedef decltype(&sim_encode_tiled) PFN_cuTensorMapEncodeTiled_v12000;
typedef decltype(&sim_encode_im2col) PFN_cuTensorMapEncodeIm2col_v12000;
static inline cudaError_t cudaGetDriverEntryPointByVersion(const char *name, void **f, unsigned, unsigned long long,
                                                           enum cudaDriverEntryPointQueryResult *q) {
    *f = !strcmp(name, "cuTensorMapEncodeTiled") ? (void *)sim_encode_tiled
       : !strcmp(name, "cuTensorMapEncodeIm2col") ? (void *)sim_encode_im2col : NULL;
    *q = *f ? cudaDriverEntryPointSuccess : cudaDriverEntryPointSymbolNotFound;
    return cudaSuccess;
}
#endif
