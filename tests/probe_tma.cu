/* probe_tma: does Hopper's Tensor Memory Accelerator (TMA) load what the
   convolutions' shared-memory stages must hold?

   The Hopper convolutions (yolov9_kernels.cu, conv_wg_kernel with the
   Tma loaders) let the TMA fill each stage: one thread asks for a box and
   the copy engine gathers it, where the staged loaders have every thread
   compute the addresses of its 16-byte cp.async runs (the integer work
   Nsight Compute found those kernels bound by). This program checks,
   apart from any kernel, that tensor maps built as the backend builds
   them give the bytes the kernels expect, on awkward shapes, against a
   gather on the CPU written as the conv loaders address their operands
   (tests/gpu_check.sh runs it; a wrong box here points at the driver or
   the map, not at a kernel):

   - im2col boxes (cp.async.bulk.tensor ... im2col): PIX consecutive output
     pixels n = (b, oy, ox) of a conv (k, s, p) x 64 channels of one tap
     (ky, kx): row r of the box is x[b][oy s - p + ky][ox s - p + kx][c..c+63]
     of output pixel n0 + r, zero in the padding and past the view's
     channels. The boxes cross output rows and images;
   - backward-data's boxes, a stride-1 im2col over dY per stride phase
     (corners from the phase, taps flipped), as BwdDataStB addresses it;
   - the order of the corners (W before H), checked with a box walk on
     asymmetric corners;
   - tiled boxes (the weights [C2][K], backward-weight's dY [pixels][C2]),
     zero past the rows;
   - the 128-byte swizzle: row r's 16-byte chunk q lands at (q ^ r % 8) 16
     of the row's 128 bytes, from a 1024-byte aligned stage, as the stages
     of conv_wg_kernel are laid out (RunMap::dst_sw128) and read (wg_desc);
   - encodes that must be refused (channels a pixel over the swizzle's 128
     bytes, a corner out of its 8-bit range).

   Rows past the last output pixel are reported, not checked (the conv
   epilogues drop those columns). The stage is filled with NaN before each
   box, so a value the copy engine skipped shows. The cases run from the
   safest to the one whose wrong guess could fault (the corners' order),
   so one fault loses the fewest. The tensor maps come from the driver
   through the runtime (cudaGetDriverEntryPointByVersion): no -lcuda.

     make tests/probe_tma && tests/probe_tma     (a GPU of sm_90; exits 1 on any mismatch) */
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK(call)                                                                                              \
    do {                                                                                                      \
        cudaError_t e_ = (call);                                                                              \
        if (e_ != cudaSuccess) {                                                                              \
            fprintf(stderr, "probe_tma: %s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(2);                                                                                          \
        }                                                                                                     \
    } while (0)

/* ---- the device side: an mbarrier, one box, the stage read back un-swizzled ---- */

__device__ inline void mbar_init(unsigned bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
/* one arrival that also says how many bytes the copies will bring: the phase completes when both are in */
__device__ inline void mbar_expect_bytes(unsigned bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ inline int mbar_try_wait(unsigned bar, unsigned parity) {
    unsigned ok;
    asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.b32 %0, 1, 0, p;\n}"
                 : "=r"(ok)
                 : "r"(bar), "r"(parity)
                 : "memory");
    return (int)ok;
}
/* a tiled box at (x0 innermost, x1) */
__device__ inline void tma_tile_2d(unsigned dst, const CUtensorMap *map, unsigned bar, int x0, int x1) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];"
                 ::"r"(dst), "l"((uint64_t)map), "r"(bar), "r"(x0), "r"(x1)
                 : "memory");
}
/* an im2col box: channel c, the window corner (w, h) of its first output pixel in image n, the tap (kx, ky) */
__device__ inline void tma_im2col_4d(unsigned dst, const CUtensorMap *map, unsigned bar, int c, int w, int h, int n,
                                     unsigned short kx, unsigned short ky) {
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4, %5, %6}], [%2], {%7, %8};"
                 ::"r"(dst), "l"((uint64_t)map), "r"(bar), "r"(c), "r"(w), "r"(h), "r"(n), "h"(kx), "h"(ky)
                 : "memory");
}

static const int MAX_ROWS = 256;   /* a box's rows at most (this probe's cap: a tiled box's limit) */
typedef struct { int im2col, c, w, h, n, kx, ky, rows; } Job;   /* tiled: (c, w) are the box's coordinates */

/* a block a job: the stage filled with NaN, the box into it (1024-byte aligned), then row r's channel j
   read where the 128-byte swizzle put it, into out[job][r][j]; a box that never completes sets timed_out[job] */
__global__ void probe_kernel(const __grid_constant__ CUtensorMap map, const Job *jobs, __nv_bfloat16 *out, int *timed_out) {
    extern __shared__ __align__(16) unsigned char smem[];
    __shared__ __align__(8) unsigned long long bar_word;
    unsigned base = (unsigned)__cvta_generic_to_shared(smem), pad = (1024 - base % 1024) % 1024;
    unsigned bar = (unsigned)__cvta_generic_to_shared(&bar_word);
    Job j = jobs[blockIdx.x];
    for (int e = threadIdx.x; e < MAX_ROWS * 128 / 4; e += blockDim.x) ((unsigned *)(smem + pad))[e] = 0xffffffffu;
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");   /* the copy engine sees the NaNs written before it */
    if (threadIdx.x == 0) mbar_init(bar, 1);
    __syncthreads();
    if (threadIdx.x == 0) {
        mbar_expect_bytes(bar, (unsigned)j.rows * 128);
        if (j.im2col) tma_im2col_4d(base + pad, &map, bar, j.c, j.w, j.h, j.n, (unsigned short)j.kx, (unsigned short)j.ky);
        else tma_tile_2d(base + pad, &map, bar, j.c, j.w);
    }
    long long t0 = clock64();
    while (!mbar_try_wait(bar, 0))
        if (clock64() - t0 > 2000000000LL) {   /* about a second */
            if (threadIdx.x == 0) timed_out[blockIdx.x] = 1;
            return;
        }
    const unsigned char *stage = smem + pad;
    for (int e = threadIdx.x; e < j.rows * 64; e += blockDim.x) {
        int r = e / 64, ch = e % 64;
        out[(size_t)blockIdx.x * MAX_ROWS * 64 + e] =
            *(const __nv_bfloat16 *)(stage + r * 128 + ((ch / 8) ^ (r % 8)) * 16 + ch % 8 * 2);
    }
}

/* ---- the host side: tensors, maps, the CPU's gather ---- */

static PFN_cuTensorMapEncodeIm2col_v12000 encode_im2col;
static PFN_cuTensorMapEncodeTiled_v12000 encode_tiled;

/* An NHWC bf16 view: channels [c0, c0 + c) of a buffer of ctot channels, B x H x W pixels, its values
   small integers (exact in bf16) kept as floats on the host. A tiled matrix is a view of H = W = 1. */
typedef struct { int B, H, W, ctot, c0, c; float *host; __nv_bfloat16 *dev; } View;
static View view_new(int B, int H, int W, int ctot, int c0, int c, int seed) {
    View v = { B, H, W, ctot, c0, c, NULL, NULL };
    size_t n = (size_t)B * H * W * ctot;
    v.host = (float *)malloc(n * sizeof(float));
    __nv_bfloat16 *h = (__nv_bfloat16 *)malloc(n * sizeof(__nv_bfloat16));
    if (!v.host || !h) { fprintf(stderr, "probe_tma: out of memory\n"); exit(2); }
    for (size_t i = 0; i < n; i++) {
        v.host[i] = (float)((int)(((unsigned)(i * 2654435761u) + (unsigned)seed * 40503u) >> 8) % 251 - 125);
        h[i] = __float2bfloat16(v.host[i]);
    }
    CK(cudaMalloc((void **)&v.dev, n * sizeof(__nv_bfloat16)));
    CK(cudaMemcpy(v.dev, h, n * sizeof(__nv_bfloat16), cudaMemcpyHostToDevice));
    free(h);
    return v;
}
static void view_free(View *v) { free(v->host); CK(cudaFree(v->dev)); }
/* channel ch of the view at (b, y, x); 0 outside the pictures, past the images and past the view's channels */
static float view_at(const View *v, int b, int y, int x, int ch) {
    if (b < 0 || b >= v->B || y < 0 || y >= v->H || x < 0 || x >= v->W || ch < 0 || ch >= v->c) return 0.f;
    return v->host[(((size_t)b * v->H + y) * v->W + x) * v->ctot + v->c0 + ch];
}

/* the activations' im2col map: corners lo/up (w first), the conv stride s, 64 channels a pixel, pixels rows a box */
static CUresult map_im2col(CUtensorMap *m, const View *v, const int lo[2], const int up[2], int s, int pixels, int cpp) {
    cuuint64_t dim[4] = { (cuuint64_t)v->c, (cuuint64_t)v->W, (cuuint64_t)v->H, (cuuint64_t)v->B };
    cuuint64_t stride[3] = { (cuuint64_t)v->ctot * 2, (cuuint64_t)v->W * v->ctot * 2, (cuuint64_t)v->H * v->W * v->ctot * 2 };
    cuuint32_t estride[4] = { 1, (cuuint32_t)s, (cuuint32_t)s, 1 };
    return encode_im2col(m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 4, v->dev + v->c0, dim, stride, lo, up, (cuuint32_t)cpp,
                         (cuuint32_t)pixels, estride, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                         CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}
/* a [rows][cols] matrix (the view's pixels x its channels), boxes of box_rows x 64 */
static CUresult map_tiled(CUtensorMap *m, const View *v, int box_rows) {
    cuuint64_t dim[2] = { (cuuint64_t)v->c, (cuuint64_t)v->B * v->H * v->W }, stride[1] = { (cuuint64_t)v->ctot * 2 };
    cuuint32_t box[2] = { 64, (cuuint32_t)box_rows }, estride[2] = { 1, 1 };
    return encode_tiled(m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, v->dev + v->c0, dim, stride, box, estride,
                        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

/* A case: its jobs, and for each row of each job the expected 64 values, or no check (past the last
   output pixel: counted and reported). */
typedef struct { const char *name; int njobs; Job *jobs; float *want; unsigned char *checked; } Case;
static Case case_new(const char *name, int maxjobs) {
    Case c = { name, 0, (Job *)calloc(maxjobs, sizeof(Job)), (float *)calloc((size_t)maxjobs * MAX_ROWS * 64, sizeof(float)),
               (unsigned char *)calloc((size_t)maxjobs * MAX_ROWS, 1) };
    if (!c.jobs || !c.want || !c.checked) { fprintf(stderr, "probe_tma: out of memory\n"); exit(2); }
    return c;
}
static void case_free(Case *c) { free(c->jobs); free(c->want); free(c->checked); }

/* the conv's operand as FwdStB addresses it: output pixel n = (b, oy, ox) of a k x k conv, stride s, padding p,
   tap (ky, kx), channels c..c+63 */
typedef struct { int k, s, p, Ho, Wo; } Conv;
static Conv conv_of(const View *v, int k, int s, int p) {
    Conv c = { k, s, p, (v->H + 2 * p - k) / s + 1, (v->W + 2 * p - k) / s + 1 };
    return c;
}
static void add_conv_jobs(Case *cs, const View *v, Conv cv, int pixels, int m0, int c) {
    int N = v->B * cv.Ho * cv.Wo, b = m0 / (cv.Ho * cv.Wo), oy = m0 % (cv.Ho * cv.Wo) / cv.Wo, ox = m0 % cv.Wo;
    for (int ky = 0; ky < cv.k; ky++)
        for (int kx = 0; kx < cv.k; kx++) {
            int i = cs->njobs++;
            Job jb = { 1, c, ox * cv.s - cv.p, oy * cv.s - cv.p, b, kx, ky, pixels };
            cs->jobs[i] = jb;
            for (int r = 0; r < pixels; r++) {
                int n = m0 + r;
                if (n >= N) continue;
                int bb = n / (cv.Ho * cv.Wo), yy = n % (cv.Ho * cv.Wo) / cv.Wo, xx = n % cv.Wo;
                cs->checked[(size_t)i * MAX_ROWS + r] = 1;
                for (int j = 0; j < 64; j++)
                    cs->want[((size_t)i * MAX_ROWS + r) * 64 + j] =
                        view_at(v, bb, yy * cv.s - cv.p + ky, xx * cv.s - cv.p + kx, c + j);
            }
        }
}

/* run a case's jobs on one map and compare; returns the mismatched values plus the boxes that timed out
   (a timed-out box is not compared) */
static int run_case(const Case *cs, const CUtensorMap *map) {
    Job *djobs;
    __nv_bfloat16 *dout;
    int *dtimed;
    size_t nout = (size_t)cs->njobs * MAX_ROWS * 64;
    CK(cudaMalloc((void **)&djobs, cs->njobs * sizeof(Job)));
    CK(cudaMalloc((void **)&dout, nout * sizeof(__nv_bfloat16)));
    CK(cudaMalloc((void **)&dtimed, cs->njobs * sizeof(int)));
    CK(cudaMemcpy(djobs, cs->jobs, cs->njobs * sizeof(Job), cudaMemcpyHostToDevice));
    CK(cudaMemset(dout, 0xff, nout * sizeof(__nv_bfloat16)));
    CK(cudaMemset(dtimed, 0, cs->njobs * sizeof(int)));
    probe_kernel<<<cs->njobs, 128, MAX_ROWS * 128 + 1024>>>(*map, djobs, dout, dtimed);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    __nv_bfloat16 *out = (__nv_bfloat16 *)malloc(nout * sizeof(__nv_bfloat16));
    int *timed = (int *)malloc(cs->njobs * sizeof(int));
    if (!out || !timed) { fprintf(stderr, "probe_tma: out of memory\n"); exit(2); }
    CK(cudaMemcpy(out, dout, nout * sizeof(__nv_bfloat16), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(timed, dtimed, cs->njobs * sizeof(int), cudaMemcpyDeviceToHost));
    int mismatches = 0, timeouts = 0, unchecked = 0, unchecked_nonzero = 0;
    for (int i = 0; i < cs->njobs; i++) {
        const Job *jb = &cs->jobs[i];
        if (timed[i]) { timeouts++; continue; }
        for (int r = 0; r < jb->rows; r++)
            for (int ch = 0; ch < 64; ch++) {
                size_t e = ((size_t)i * MAX_ROWS + r) * 64 + ch;
                float got = __bfloat162float(out[e]);
                if (!cs->checked[(size_t)i * MAX_ROWS + r]) {
                    unchecked++;
                    unchecked_nonzero += got != 0.f;
                } else if (got != cs->want[e] && mismatches++ == 0) {
                    if (jb->im2col)
                        printf("  box %d (channel %d, corner w %d h %d image %d, tap offsets %d %d) row %d channel %d: %g, want %g\n",
                               i, jb->c, jb->w, jb->h, jb->n, jb->kx, jb->ky, r, ch, got, cs->want[e]);
                    else
                        printf("  box %d (column %d, row %d) row %d channel %d: %g, want %g\n", i, jb->c, jb->w, r, ch, got,
                               cs->want[e]);
                }
            }
    }
    printf("%-58s %4d boxes: %s", cs->name, cs->njobs, mismatches + timeouts ? "FAIL" : "ok");
    if (mismatches + timeouts) printf(" (%d values wrong, %d boxes timed out)", mismatches, timeouts);
    if (unchecked) printf("; %d values past the last pixel, %d of them not 0", unchecked, unchecked_nonzero);
    printf("\n");
    free(out); free(timed);
    CK(cudaFree(djobs)); CK(cudaFree(dout)); CK(cudaFree(dtimed));
    return mismatches + timeouts;
}

/* an im2col case of a conv: its map, and the boxes of every tap for the tiles at m0s and the channel blocks cblocks */
static int conv_case(const char *name, const View *v, int k, int s, int p, int pixels, const int *m0s, int nm,
                     const int *cblocks, int nc) {
    Conv cv = conv_of(v, k, s, p);
    int lo[2] = { -p, -p }, up[2] = { p - (k - 1), p - (k - 1) };
    CUtensorMap map;
    CUresult r = map_im2col(&map, v, lo, up, s, pixels, 64);
    if (r != CUDA_SUCCESS) { printf("%-58s encode refused (%d): FAIL\n", name, (int)r); return 1; }
    Case cs = case_new(name, nm * nc * k * k);
    for (int i = 0; i < nm; i++)
        for (int j = 0; j < nc; j++) add_conv_jobs(&cs, v, cv, pixels, m0s[i], cblocks[j]);
    int bad = run_case(&cs, &map);
    case_free(&cs);
    return bad;
}

/* Backward-data of a k x k, stride s, padding p conv, one stride phase (py, px) of dX (H x W): its positions
   (qy, qx) < (Hq, Wq) take dY at (qy + oy0 - ty, qx + ox0 - tx) for taps ty < nky, tx < nkx (phase_of in
   yolov9_kernels.cu, BwdDataStB::at). As a stride-1 im2col over dY (Ho x Wo): position (qy, qx)'s window
   corner is (qx, qy) + lo, lo = (ox0 - (nkx - 1), oy0 - (nky - 1)), the corners run over Wq x Hq (up =
   lo + (Wq - Wo, Hq - Ho)), and tap (ty, tx) is the offset (nkx - 1 - tx, nky - 1 - ty). */
static int bwd_data_case(const char *name, const View *dy, int H, int W, int k, int s, int p, int py, int px,
                         const int *m0s, int nm) {
    int ky0 = (py + p) % s, kx0 = (px + p) % s;   /* as phase_of */
    int nky = (k - ky0 + s - 1) / s, nkx = (k - kx0 + s - 1) / s;
    int oy0 = (py + p - ky0) / s, ox0 = (px + p - kx0) / s, Hq = (H - py + s - 1) / s, Wq = (W - px + s - 1) / s;
    int lo[2] = { ox0 - (nkx - 1), oy0 - (nky - 1) }, up[2] = { lo[0] + Wq - dy->W, lo[1] + Hq - dy->H };
    CUtensorMap map;
    CUresult r = map_im2col(&map, dy, lo, up, 1, 128, 64);
    if (r != CUDA_SUCCESS) { printf("%-58s encode refused (%d): FAIL\n", name, (int)r); return 1; }
    int N = dy->B * Hq * Wq;
    Case cs = case_new(name, nm * nky * nkx);
    for (int i = 0; i < nm; i++)
        for (int ty = 0; ty < nky; ty++)
            for (int tx = 0; tx < nkx; tx++) {
                int m0 = m0s[i], b = m0 / (Hq * Wq), qy = m0 % (Hq * Wq) / Wq, qx = m0 % Wq, jb = cs.njobs++;
                Job job = { 1, 0, qx + lo[0], qy + lo[1], b, nkx - 1 - tx, nky - 1 - ty, 128 };
                cs.jobs[jb] = job;
                for (int row = 0; row < 128 && m0 + row < N; row++) {
                    int n = m0 + row, bb = n / (Hq * Wq), yy = n % (Hq * Wq) / Wq, xx = n % Wq;
                    cs.checked[(size_t)jb * MAX_ROWS + row] = 1;
                    for (int ch = 0; ch < 64; ch++)
                        cs.want[((size_t)jb * MAX_ROWS + row) * 64 + ch] = view_at(dy, bb, yy + oy0 - ty, xx + ox0 - tx, ch);
                }
            }
    int bad = run_case(&cs, &map);
    case_free(&cs);
    return bad;
}

/* the corners' order: a box walk on asymmetric corners, W first. The window corners of an image run
   over [lo, W + up) x [lo, H + up) by the stride, W fastest, then the next image; row r of a box that
   starts at corner (w, h) of image n holds the pixel at corner r steps on plus the tap. */
static int walk_case(void) {
    const char *name = "corners w-first: lo (-2, 0), up (-1, 1), 9x11";
    View v = view_new(2, 9, 11, 64, 0, 64, 5);
    int lo[2] = { -2, 0 }, up[2] = { -1, 1 }, pixels = 128;
    CUtensorMap map;
    CUresult r = map_im2col(&map, &v, lo, up, 1, pixels, 64);
    if (r != CUDA_SUCCESS) { printf("%-58s encode refused (%d): FAIL\n", name, (int)r); view_free(&v); return 1; }
    static const int starts[3][3] = { { -2, 0, 0 }, { 5, 3, 0 }, { 3, 8, 0 } };   /* (w, h, n): a row's start, mid-row, the image's end */
    static const int taps[3][2] = { { 0, 0 }, { 2, 1 }, { 1, 2 } };
    Case cs = case_new(name, 9);
    for (int st = 0; st < 3; st++)
        for (int t = 0; t < 3; t++) {
            int i = cs.njobs++, w = starts[st][0], h = starts[st][1], n = starts[st][2];
            Job jb = { 1, 0, w, h, n, taps[t][0], taps[t][1], pixels };
            cs.jobs[i] = jb;
            for (int row = 0; row < pixels; row++) {
                if (n < v.B) {
                    cs.checked[(size_t)i * MAX_ROWS + row] = 1;
                    for (int ch = 0; ch < 64; ch++)
                        cs.want[((size_t)i * MAX_ROWS + row) * 64 + ch] = view_at(&v, n, h + taps[t][1], w + taps[t][0], ch);
                }
                if (++w >= v.W + up[0]) { w = lo[0]; if (++h >= v.H + up[1]) { h = lo[1]; n++; } }
            }
        }
    int bad = run_case(&cs, &map);
    case_free(&cs);
    view_free(&v);
    return bad;
}

/* tiled boxes of a [rows][cols] matrix: box_rows x 64 at (col c, row r0), zero past the rows */
static int tiled_case(const char *name, const View *v, int box_rows, const int (*at)[2], int nat) {
    CUtensorMap map;
    CUresult r = map_tiled(&map, v, box_rows);
    if (r != CUDA_SUCCESS) { printf("%-58s encode refused (%d): FAIL\n", name, (int)r); return 1; }
    int rows = v->B * v->H * v->W;
    Case cs = case_new(name, nat);
    for (int a = 0; a < nat; a++) {
        int i = cs.njobs++;
        Job jb = { 0, at[a][0], at[a][1], 0, 0, 0, 0, box_rows };
        cs.jobs[i] = jb;
        for (int row = 0; row < box_rows; row++) {
            cs.checked[(size_t)i * MAX_ROWS + row] = 1;   /* past the rows: the box's zeros, checked */
            int pr = at[a][1] + row;
            for (int ch = 0; ch < 64; ch++)
                cs.want[((size_t)i * MAX_ROWS + row) * 64 + ch] = pr < rows ? view_at(v, pr, 0, 0, at[a][0] + ch) : 0.f;
        }
    }
    int bad = run_case(&cs, &map);
    case_free(&cs);
    return bad;
}

/* encodes the driver must refuse: 128 channels a pixel (256 bytes) with the 128-byte swizzle; a corner past -128 */
static int refused_case(void) {
    View v = view_new(1, 8, 8, 128, 0, 128, 7);
    int lo[2] = { -1, -1 }, up[2] = { -1, -1 }, far[2] = { -129, -1 };
    CUtensorMap map;
    CUresult r0 = map_im2col(&map, &v, lo, up, 1, 64, 64);   /* the control: the same view as it should be */
    CUresult r1 = map_im2col(&map, &v, lo, up, 1, 64, 128), r2 = map_im2col(&map, &v, far, up, 1, 64, 64);
    int bad = (r0 != CUDA_SUCCESS) + (r1 == CUDA_SUCCESS) + (r2 == CUDA_SUCCESS);
    printf("%-58s %s (control: %d, 128 channels a pixel: %d, corner -129: %d)\n", "encodes refused", bad ? "FAIL" : "ok",
           (int)r0, (int)r1, (int)r2);
    view_free(&v);
    return bad;
}

int main(void) {
    int dev = 0, major = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    if (major != 9) { printf("probe_tma: written for sm_90 (Hopper); this GPU is sm_%d\n", major * 10); return 2; }
    cudaDriverEntryPointQueryResult q1, q2;
    CK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeIm2col", (void **)&encode_im2col, 12000, cudaEnableDefault, &q1));
    CK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", (void **)&encode_tiled, 12000, cudaEnableDefault, &q2));
    if (q1 != cudaDriverEntryPointSuccess || q2 != cudaDriverEntryPointSuccess || !encode_im2col || !encode_tiled) {
        printf("probe_tma: the driver has no cuTensorMapEncodeIm2col / cuTensorMapEncodeTiled\n");
        return 2;
    }
    int bad = 0, cases = 0;
    bad += refused_case(); cases++;
    {   /* the weights [96][576] (C2 x K), boxes of 128 rows x 64 k: rows 96..127 zero; and a slot's columns */
        View w = view_new(96, 1, 1, 576, 0, 576, 8);
        static const int at[][2] = { { 0, 0 }, { 512, 0 }, { 64, 32 } };
        bad += tiled_case("tiled weights 96x576, 128-row boxes", &w, 128, at, 3); cases++;
        view_free(&w);
        View dy = view_new(2 * 10 * 10, 1, 1, 192, 64, 128, 9);   /* backward-weight's A: dY [pixels][C2], a slot */
        static const int ad[][2] = { { 0, 32 }, { 64, 200 - 40 } };
        bad += tiled_case("tiled dY 200x128 (slot c0 64 of 192), 64-row boxes", &dy, 64, ad, 2); cases++;
        view_free(&dy);
    }
    {   /* 3x3 s1 p1, 3 images of 20 x 21: tiles from the start, across a row, across image 0 -> 1, the partial last; two channel blocks */
        View v = view_new(3, 20, 21, 128, 0, 128, 1);
        int m0s[] = { 0, 100, 380, 3 * 420 - 50 }, cb[] = { 0, 64 };
        bad += conv_case("3x3 s1 p1, 3x20x21x128, 128 pixels", &v, 3, 1, 1, 128, m0s, 4, cb, 2); cases++;
        int m0w[] = { 32, 3 * 420 - 40 }, cw[] = { 64 };   /* backward-weight's B: 64-pixel columns, starting off 64 */
        bad += conv_case("3x3 s1 p1, 3x20x21x128, 64 pixels from pixel 32", &v, 3, 1, 1, 64, m0w, 2, cw, 1); cases++;
        view_free(&v);
    }
    {   /* 3x3 s2 p1 on 159 and 160 (80 x 80 out): across a row (70), across the image (6380), the partial last */
        View v159 = view_new(2, 159, 159, 64, 0, 64, 2), v160 = view_new(2, 160, 160, 64, 0, 64, 3);
        int m0s[] = { 0, 70, 6380, 2 * 6400 - 20 }, cb[] = { 0 };
        bad += conv_case("3x3 s2 p1, 2x159x159x64, 128 pixels", &v159, 3, 2, 1, 128, m0s, 4, cb, 1); cases++;
        bad += conv_case("3x3 s2 p1, 2x160x160x64, 128 pixels", &v160, 3, 2, 1, 128, m0s, 4, cb, 1); cases++;
        view_free(&v159); view_free(&v160);
    }
    {   /* 1x1 on a slot: channels 64..191 of a 320-channel buffer; across image 0 -> 1 */
        View v = view_new(2, 16, 16, 320, 64, 128, 4);
        int m0s[] = { 0, 200 }, cb[] = { 0, 64 };
        bad += conv_case("1x1 on a slot (c0 64, c 128 of 320), 2x16x16", &v, 1, 1, 0, 128, m0s, 2, cb, 2); cases++;
        view_free(&v);
    }
    {   /* a view of 96 channels: its second 64-channel block is half zeros */
        View v = view_new(1, 8, 8, 96, 0, 96, 6);
        int m0s[] = { 0 }, cb[] = { 64 };
        bad += conv_case("3x3 s1 p1, 96 channels (block 64: 32 past them)", &v, 3, 1, 1, 64, m0s, 1, cb, 1); cases++;
        view_free(&v);
    }
    {   /* backward-data of a 3x3 s2 p1 conv on 159 x 158 (dY 80 x 79): phases (1, 0) and (0, 1), whose
           corners differ between W and H; across a row (70) and the image (6200) */
        View dy = view_new(2, 80, 79, 64, 0, 64, 10);
        int m0s[] = { 0, 70, 6200 };
        bad += bwd_data_case("backward-data 3x3 s2 p1, dX 159x158, phase (1, 0)", &dy, 159, 158, 3, 2, 1, 1, 0, m0s, 3); cases++;
        bad += bwd_data_case("backward-data 3x3 s2 p1, dX 159x158, phase (0, 1)", &dy, 159, 158, 3, 2, 1, 0, 1, m0s, 3); cases++;
        view_free(&dy);
    }
    bad += walk_case(); cases++;   /* last: if the corners were H first, its boxes would start outside them */
    printf("probe_tma: %d cases, %s\n", cases, bad ? "FAILED" : "all ok");
    return bad ? 1 : 0;
}
