/* bench_conv: the staged tensor-core convs (conv_tc_kernel, and in a
   build of the Hopper tier conv_wg_kernel) on every staged conv shape of yolov9-s
   and yolov9-c (batch 32 at 640), in each of the kernel variants below
   (tile, BK, stages), for the three passes:

     forward          half NHWC input, NHWC half output with bias and SiLU
                      (an inference forward, --half)
     backward-data    bf16 NHWC dY, each stride phase's product added to a
                      float32 dX (as a bf16 training step)
     backward-weight  bf16 NHWC dY and x, k outer, split-K over the pixels
                      as staged_slices splits it for the variant's tile, the
                      slices summed into dW (splitk_sum_kernel)

   so that gemm_staged's choice (staged_tile's, or wg_tile's) can be
   checked against the others. These are the staged loaders (every
   thread's cp.async runs); the models' convs whose im2col operand has
   its channels in whole 64s a group run on the copy engine's loaders
   instead, which tests/bench_train times. Prints, per pass and shape, the
   microseconds and TFLOP/s of gemm_staged's variant and of the fastest,
   then every variant's time (wgmma's marked wg); then, per pass and
   network, the sum over its convs (a shape's count times its time) of
   gemm_staged's choice, of each BK / stages pair on staged_tile's tile
   (conv_tc_kernel: the Ampere tier), and of the fastest variant of each
   shape. The shapes
   (bench_conv_shapes.inc: network, count, Cin, H, W, Cout, k, s, g) are
   the convs a folded forward of each model makes, Cin 3 left out. A
   benchmark that prints figures, not a test: it asserts nothing and is
   not in `make test`.

     tests/bench_conv [reps [shape]]      (shape: only that line of the list, from 0; for ncu)

   Built from the backend's source (it includes yolov9_kernels.cu to reach
   its templates), linked with yolov9.h's implementation (tests/yolov9_impl.c). */
#include "../yolov9_kernels.cu"

struct Shape { const char *net; int count, C1, H, W, C2, k, s, g; };
static const Shape SHAPES[] = {
#include "bench_conv_shapes.inc"
};

/* the variants: staged_tile's five tiles, each with BK 32 or 64 and 2 to 4 stages; then, in a build of the
   Hopper tier, conv_wg_kernel's tiles (BK 64), marked WARPS_M 0 */
struct Variant { int BM, BN, WARPS_M, BK, STAGES; };
#define VARIANTS(X) \
    X(32, 128, 2, 32, 4) X(32, 128, 2, 32, 3) X(32, 128, 2, 64, 3) X(32, 128, 2, 64, 2) \
    X(48, 256, 1, 32, 4) X(48, 256, 1, 32, 3) X(48, 256, 1, 64, 3) X(48, 256, 1, 64, 2) \
    X(64, 128, 2, 32, 4) X(64, 128, 2, 32, 3) X(64, 128, 2, 64, 3) X(64, 128, 2, 64, 2) \
    X(96, 128, 2, 32, 4) X(96, 128, 2, 32, 3) X(96, 128, 2, 64, 3) X(96, 128, 2, 64, 2) \
    X(128, 128, 2, 32, 4) X(128, 128, 2, 32, 3) X(128, 128, 2, 64, 3) X(128, 128, 2, 64, 2)
#if YOLO_TIER >= 90
#define WG_VARIANTS(X) X(64, 128, 0, 64, 4) X(64, 128, 0, 64, 3) X(128, 128, 0, 64, 3) X(128, 128, 0, 64, 4) X(128, 256, 0, 64, 3)
#else
#define WG_VARIANTS(X)
#endif
#define LIST(bm, bn, wm, bk, st) { bm, bn, wm, bk, st },
static const Variant VARS[] = { VARIANTS(LIST) WG_VARIANTS(LIST) };
static const int NV = sizeof VARS / sizeof VARS[0];
static const int KSTEPS[4][2] = { { 32, 4 }, { 32, 3 }, { 64, 3 }, { 64, 2 } };   /* the BK / stages pairs */

/* one launch of variant v (k-slices and their chunk as the caller says) */
template <bool KOUTER, class LA, class LB, class EP>
static void run(const Variant &v, int M, int N, int K, int splitk, int kchunk, LA la, LB lb, EP ep) {
#define RUN(bm, bn, wm, bk, st)                                                                        \
    if (v.BM == bm && v.BN == bn && v.WARPS_M == wm && v.BK == bk && v.STAGES == st) {                 \
        conv_tc_tiles<typename LA::T, bm, bn, wm, bk, st, KOUTER>(M, N, K, splitk, kchunk, la, lb, ep); \
        return;                                                                                        \
    }
    VARIANTS(RUN)
#undef RUN
#define RUN_WG(bm, bn, wm, bk, st)                                                                     \
    if (v.BM == bm && v.BN == bn && v.WARPS_M == wm && v.BK == bk && v.STAGES == st) {                 \
        conv_wg_tiles<typename LA::T, bm, bn, st, KOUTER>(M, N, K, splitk, kchunk, la, lb, ep);       \
        return;                                                                                        \
    }
    WG_VARIANTS(RUN_WG)
#undef RUN_WG
}

/* a variant as printed: 128x128/2 k64 s2, or wg 128x128 k64 s3 */
static void variant_name(char *s, size_t n, const Variant &v) {
    if (v.WARPS_M) snprintf(s, n, "%dx%d/%d k%d s%d", v.BM, v.BN, v.WARPS_M, v.BK, v.STAGES);
    else snprintf(s, n, "wg %dx%d k%d s%d", v.BM, v.BN, v.BK, v.STAGES);
}

template <class T> __global__ void fill_kernel(T *p, size_t n, unsigned seed) {
    GRID_STRIDE(i, n) {
        unsigned h = (unsigned)i * 2654435761u ^ seed;
        h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15;
        p[i] = round_to<T>((h % 2001) / 1000.f - 1.f);
    }
}
template <class T> static T *random_buffer(size_t n, unsigned seed) {
    T *p;
    CK(cudaMalloc((void **)&p, n * sizeof(T)));
    fill_kernel<T><<<grid_for(n), 256>>>(p, n, seed);
    CK_LAUNCH("fill_kernel");
    return p;
}

/* the buffers, sized for the largest shape */
struct Buffers {
    __half *xh, *wh, *yh; float *bias;   /* forward */
    __nv_bfloat16 *xb, *dyb, *wdb;       /* backward: x, dY NHWC, the phases' weights */
    float *dx, *dw, *part;               /* backward: dX, dW, the k-slices' planes */
};

/* one pass of shape c in variant v: every group (and phase) once */
static void pass(int which, const Variant &v, const ConvGeo &c, const Buffers &b) {
    int k = c.k, P = c.Ho * c.Wo;
    for (int gi = 0; gi < c.g; gi++) {
        if (which == 0) {
            int K = c.c1g * k * k;
            RowsStA<__half> la = { b.wh, K, gi * c.c2g };
            FwdStB<__half> lb = { b.xh, c, gi, fastdiv(c.c1g) };
            FwdStore ep = { b.yh, b.bias, c, gi, 1, YOLO_FP16 };
            run<false>(v, c.c2g, c.B * P, K, 1, (K + 31) / 32 * 32, la, lb, ep);
        } else if (which == 1) {
            size_t off = 0;
            for (int py = 0; py < c.s; py++)
                for (int px = 0; px < c.s; px++) {
                    Phase f;
                    if (!phase_of(c, py, px, &f)) continue;
                    int nt = f.nky * f.nkx, K = nt * c.c2g;
                    RowsStA<__nv_bfloat16> la = { b.wdb + off, K, gi * c.c1g };
                    BwdDataStB<__nv_bfloat16> lb = { b.dyb, c, f, gi, fastdiv(c.c2g) };
                    BwdDataStore ep = { b.dx, c.C1, gi * c.c1g, c, f, 0 };
                    run<false>(v, c.c1g, c.B * f.Hq * f.Wq, K, 1, (K + 31) / 32 * 32, la, lb, ep);
                    off += (size_t)c.g * c.c1g * K;
                }
        } else {
            int Kw = c.c1g * k * k, red = c.B * P, kchunk;
            size_t plane = (size_t)c.c2g * Kw;
            int slices = tile_slices(v.BM, v.BN, 32, c.c2g, Kw, red, 0, &kchunk);
            while (slices > 1 && slices * plane > SPLITK_WORK_FLOATS)
                slices = tile_slices(v.BM, v.BN, 32, c.c2g, Kw, red, slices - 1, &kchunk);
            BwdWStA<__nv_bfloat16> la = { b.dyb, c.C2, gi, c.c2g };
            BwdWStB<__nv_bfloat16> lb = { b.xb, c, gi, fastdiv(c.c1g) };
            float *dwg = b.dw + gi * plane;
            DwTapStore ep = { slices > 1 ? b.part : dwg, plane, c.c1g, k * k, slices, fastdiv(c.c1g) };
            run<true>(v, c.c2g, Kw, red, slices, kchunk, la, lb, ep);
            if (slices > 1) {
                splitk_sum_kernel<<<grid_for(plane), 256>>>(b.part, slices, plane, dwg);
                CK_LAUNCH("splitk_sum_kernel");
            }
        }
    }
}

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 10, only = argc > 2 ? atoi(argv[2]) : -1, B = 32;
    const int NS = sizeof SHAPES / sizeof SHAPES[0];
    size_t xmax = 0, wmax = 0, ymax = 0;
    for (int i = 0; i < NS; i++) {
        const Shape &s = SHAPES[i];
        int Ho = (s.H + 2 * (s.k / 2) - s.k) / s.s + 1, Wo = (s.W + 2 * (s.k / 2) - s.k) / s.s + 1;
        xmax = max(xmax, (size_t)B * s.H * s.W * s.C1); wmax = max(wmax, (size_t)s.C2 * s.C1 / s.g * s.k * s.k);
        ymax = max(ymax, (size_t)B * Ho * Wo * s.C2);
    }
    Buffers b;
    b.xh = random_buffer<__half>(xmax, 1); b.wh = random_buffer<__half>(wmax, 2); b.yh = random_buffer<__half>(ymax, 3);
    b.xb = random_buffer<__nv_bfloat16>(xmax, 4); b.dyb = random_buffer<__nv_bfloat16>(ymax, 5);
    b.wdb = random_buffer<__nv_bfloat16>(wmax, 6);
    b.bias = random_buffer<float>(4096, 7); b.dx = random_buffer<float>(xmax, 8); b.dw = random_buffer<float>(wmax, 9);
    b.part = random_buffer<float>(SPLITK_WORK_FLOATS, 10);
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    static const char *const PASS[3] = { "forward (half)", "backward-data (bf16)", "backward-weight (bf16)" };
    for (int which = 0; which < 3; which++) {
        /* per network: gemm_staged's choice, staged_tile's, each BK / stages pair on its tile, the fastest per shape; flop */
        double net_auto[2] = { 0, 0 }, net_tc[2] = { 0, 0 }, net_pair[2][4] = { { 0 } }, net_best[2] = { 0, 0 }, net_flop[2] = { 0, 0 };
        printf("\n%s\n%-9s %3s %-26s %5s | %-16s %7s %6s | %-16s %7s %6s\n", PASS[which], "net", "n", "conv (B 32)", "Cout",
               "gemm_staged", "us", "TF/s", "fastest", "us", "TF/s");
        for (int i = 0; i < NS; i++) {
            if (only >= 0 && i != only) continue;
            const Shape &s = SHAPES[i];
            yolo_tensor xt;
            memset(&xt, 0, sizeof xt);
            xt.n = B; xt.c = s.C1; xt.h = s.H; xt.w = s.W;
            int Ho = (s.H + 2 * (s.k / 2) - s.k) / s.s + 1, Wo = (s.W + 2 * (s.k / 2) - s.k) / s.s + 1;
            ConvGeo c = geo(&xt, s.C2, s.k, s.s, s.g, Ho, Wo);
            int M = which == 1 ? c.c1g : c.c2g;   /* the rows of the product: backward-data's are input channels */
            double flop = 2.0 * B * Ho * Wo * s.C2 * c.c1g * s.k * s.k, us[NV];
            /* each variant: one warm-up, then reps passes timed together */
            for (int v = 0; v < NV; v++) {
                for (int r = 0; r <= reps; r++) {
                    if (r == 1) CK(cudaEventRecord(e0));
                    pass(which, VARS[v], c, b);
                }
                CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1));
                float ms;
                CK(cudaEventElapsedTime(&ms, e0, e1));
                us[v] = ms * 1e3 / reps;
            }
            StagedTile a = staged_tile(M);
#if YOLO_TIER >= 90
            WgTile w = wg_tile(M, false);   /* gemm_staged's choice for the staged loaders: wg_tile's where it has one */
#else
            struct { int BM, BN, STAGES; } w = { 0, 0, 0 };
#endif
            int ia = -1, it = -1, ib = 0, ip[4] = { -1, -1, -1, -1 };   /* gemm_staged's, staged_tile's, the fastest */
            for (int v = 0; v < NV; v++) {
                const Variant &t = VARS[v];
                int tile = t.BM == a.BM && t.BN == a.BN && t.WARPS_M == a.WARPS_M;
                if (w.BM ? t.WARPS_M == 0 && t.BM == w.BM && t.BN == w.BN && t.STAGES == w.STAGES
                         : tile && t.BK == a.BK && t.STAGES == a.STAGES) ia = v;
                if (tile && t.BK == a.BK && t.STAGES == a.STAGES) it = v;
                for (int q = 0; q < 4; q++)
                    if (tile && t.BK == KSTEPS[q][0] && t.STAGES == KSTEPS[q][1]) ip[q] = v;
                if (us[v] < us[ib]) ib = v;
            }
            if (ia < 0 || it < 0) { fprintf(stderr, "bench_conv: gemm_staged's variant of M = %d is not in VARIANTS\n", M); return 1; }
            int net = s.net[7] == 'c';
            net_auto[net] += s.count * us[ia]; net_tc[net] += s.count * us[it]; net_best[net] += s.count * us[ib]; net_flop[net] += s.count * flop;
            for (int q = 0; q < 4; q++) net_pair[net][q] += s.count * us[ip[q] < 0 ? ia : ip[q]];
            char conv[64], ta[32], tb[32];
            snprintf(conv, sizeof conv, "%dx%dx%d->%d k%d s%d g%d", s.C1, s.H, s.W, s.C2, s.k, s.s, s.g);
            variant_name(ta, sizeof ta, VARS[ia]);
            variant_name(tb, sizeof tb, VARS[ib]);
            printf("%-9s %3d %-26s %5d | %-16s %7.1f %6.1f | %-16s %7.1f %6.1f\n", s.net, s.count, conv, M, ta, us[ia],
                   flop / us[ia] / 1e6, tb, us[ib], flop / us[ib] / 1e6);
            printf("          all (us):");
            for (int v = 0; v < NV; v++) {
                char tv[32];
                variant_name(tv, sizeof tv, VARS[v]);
                printf(" %s %.1f", tv, us[v]);
            }
            printf("\n");
        }
        for (int n = 0; n < 2; n++) {
            printf("%s %s, staged convs, B 32 640: gemm_staged %.2f ms (%.1f TFLOP/s), staged_tile (Ampere) %.2f ms (%.1f); on its tile:",
                   n ? "yolov9-c" : "yolov9-s", PASS[which], net_auto[n] / 1e3, net_flop[n] / net_auto[n] / 1e6, net_tc[n] / 1e3,
                   net_flop[n] / net_tc[n] / 1e6);
            for (int q = 0; q < 4; q++) printf(" k%d s%d %.2f", KSTEPS[q][0], KSTEPS[q][1], net_pair[n][q] / 1e3);
            printf("; fastest variant per shape %.2f ms (%.1f)\n", net_best[n] / 1e3, net_flop[n] / net_best[n] / 1e6);
        }
    }
    return 0;
}
