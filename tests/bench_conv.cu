/* bench_conv: the staged tensor-core conv forward (conv_tc_kernel) on
   every staged conv shape of yolov9-s and yolov9-c inference (batch 32 at
   640, --half: NHWC half input, NHWC half output with bias and SiLU), in
   each of the tile shapes below (staged_tile's and others), so that
   staged_tile's choice can be checked against the fastest tile of each
   shape. Prints, per shape, the microseconds and TFLOP/s of staged_tile's
   tile, of the tiles of before (64 or 128 rows and columns, 2 x 4 warps)
   and of the fastest tile, and every tile's time; then each network's sum
   over its convs (the count of a shape times its time). The shapes
   (bench_conv_shapes.inc: network, count, Cin, H, W, Cout, k, s, g) are
   the convs a folded forward of each model makes, Cin 3 left out. A
   benchmark that prints figures, not a test: it asserts nothing and is not
   in `make test`.

     tests/bench_conv [reps]

   Built from the backend's source (it includes yolov9_kernels.cu to reach
   its templates), linked with yolov9.h's implementation (tests/yolov9_impl.c). */
#include "../yolov9_kernels.cu"

struct Shape { const char *net; int count, C1, H, W, C2, k, s, g; };
static const Shape SHAPES[] = {
#include "bench_conv_shapes.inc"
};

struct Tile { int BM, BN, WARPS_M; };
static const Tile TILES[] = { { 32, 256, 1 }, { 32, 128, 2 }, { 48, 256, 1 }, { 48, 128, 1 }, { 64, 256, 1 },
                              { 64, 128, 2 }, { 64, 64, 2 },  { 96, 128, 2 }, { 96, 64, 2 },  { 128, 128, 2 },
                              { 128, 64, 2 }, { 128, 256, 2 }, { 256, 128, 4 } };
static const int NT = sizeof TILES / sizeof TILES[0];

template <int BM, int BN, int WM>
static void run_tile(int M, int N, int K, RowsStA<__half> la, FwdStB<__half> lb, FwdStore ep) {
    conv_tc_tiles<__half, BM, BN, WM, false>(M, N, K, 1, (K + 31) / 32 * 32, la, lb, ep);
}
static void run(const Tile &t, int M, int N, int K, RowsStA<__half> la, FwdStB<__half> lb, FwdStore ep) {
#define TILE(bm, bn, wm) if (t.BM == bm && t.BN == bn && t.WARPS_M == wm) { run_tile<bm, bn, wm>(M, N, K, la, lb, ep); return; }
    TILE(32, 256, 1) TILE(32, 128, 2) TILE(48, 256, 1) TILE(48, 128, 1) TILE(64, 256, 1) TILE(64, 128, 2) TILE(64, 64, 2)
    TILE(96, 128, 2) TILE(96, 64, 2) TILE(128, 128, 2) TILE(128, 64, 2) TILE(128, 256, 2) TILE(256, 128, 4)
#undef TILE
}

__global__ void fill_kernel(__half *p, size_t n, unsigned seed) {
    GRID_STRIDE(i, n) {
        unsigned h = (unsigned)i * 2654435761u ^ seed;
        h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15;
        p[i] = __float2half((h % 2001) / 1000.f - 1.f);
    }
}

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 10, B = 32;
    const int NS = sizeof SHAPES / sizeof SHAPES[0];
    size_t xmax = 0, wmax = 0, ymax = 0;
    for (int i = 0; i < NS; i++) {
        const Shape &s = SHAPES[i];
        int Ho = (s.H + 2 * (s.k / 2) - s.k) / s.s + 1, Wo = (s.W + 2 * (s.k / 2) - s.k) / s.s + 1;
        xmax = max(xmax, (size_t)B * s.H * s.W * s.C1); wmax = max(wmax, (size_t)s.C2 * s.C1 / s.g * s.k * s.k);
        ymax = max(ymax, (size_t)B * Ho * Wo * s.C2);
    }
    __half *x, *w, *y;
    float *bias;
    CK(cudaMalloc((void **)&x, xmax * 2)); CK(cudaMalloc((void **)&w, wmax * 2)); CK(cudaMalloc((void **)&y, ymax * 2));
    CK(cudaMalloc((void **)&bias, 4096 * 4)); CK(cudaMemset(bias, 0, 4096 * 4));
    fill_kernel<<<grid_for(xmax), 256>>>(x, xmax, 1); CK_LAUNCH("fill");
    fill_kernel<<<grid_for(wmax), 256>>>(w, wmax, 2); CK_LAUNCH("fill");
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    double net_auto[2] = { 0, 0 }, net_old[2] = { 0, 0 }, net_best[2] = { 0, 0 }, net_flop[2] = { 0, 0 };
    printf("%-9s %3s %-26s %5s %7s %5s | %-11s %7s %6s | %-11s %7s | %-11s %7s %6s\n", "net", "n", "conv (B 32)", "M", "N", "K",
           "staged_tile", "us", "TF/s", "before", "us", "fastest", "us", "TF/s");
    for (int i = 0; i < NS; i++) {
        const Shape &s = SHAPES[i];
        yolo_tensor xt;
        memset(&xt, 0, sizeof xt);
        xt.n = B; xt.c = s.C1; xt.h = s.H; xt.w = s.W;
        int Ho = (s.H + 2 * (s.k / 2) - s.k) / s.s + 1, Wo = (s.W + 2 * (s.k / 2) - s.k) / s.s + 1;
        ConvGeo c = geo(&xt, s.C2, s.k, s.s, s.g, Ho, Wo);
        int M = c.c2g, N = B * Ho * Wo, K = c.c1g * s.k * s.k;
        double flop = 2.0 * M * N * K * s.g, us[NT];
        /* each tile: one warm-up, then reps launches of every group timed together */
        for (int t = 0; t < NT; t++) {
            for (int r = 0; r <= reps; r++) {
                if (r == 1) CK(cudaEventRecord(e0));
                for (int gi = 0; gi < s.g; gi++) {
                    RowsStA<__half> la = { w, K, gi * c.c2g };
                    FwdStB<__half> lb = { x, c, gi, fastdiv(c.c1g) };
                    FwdStore ep = { y, bias, c, gi, 1, YOLO_FP16 };
                    run(TILES[t], M, N, K, la, lb, ep);
                }
            }
            CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1));
            float ms;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            us[t] = ms * 1e3 / reps;
        }
        StagedTile a = staged_tile(M);
        int ia = 0, io = 0, ib = 0, obm = M >= 96 ? 128 : 64, obn = N >= 96 ? 128 : 64;
        for (int t = 0; t < NT; t++) {
            if (TILES[t].BM == a.BM && TILES[t].BN == a.BN && TILES[t].WARPS_M == a.WARPS_M) ia = t;
            if (TILES[t].BM == obm && TILES[t].BN == obn && TILES[t].WARPS_M == 2) io = t;
            if (us[t] < us[ib]) ib = t;
        }
        int net = s.net[7] == 'c';
        net_auto[net] += s.count * us[ia]; net_old[net] += s.count * us[io]; net_best[net] += s.count * us[ib];
        net_flop[net] += s.count * flop;
        char conv[64], ta[16], to[16], tb[16];
        snprintf(conv, sizeof conv, "%dx%dx%d->%d k%d s%d g%d", s.C1, s.H, s.W, s.C2, s.k, s.s, s.g);
        snprintf(ta, sizeof ta, "%dx%d/%d", a.BM, a.BN, a.WARPS_M);
        snprintf(to, sizeof to, "%dx%d", obm, obn);
        snprintf(tb, sizeof tb, "%dx%d/%d", TILES[ib].BM, TILES[ib].BN, TILES[ib].WARPS_M);
        printf("%-9s %3d %-26s %5d %7d %5d | %-11s %7.1f %6.1f | %-11s %7.1f | %-11s %7.1f %6.1f\n", s.net, s.count, conv, M, N,
               K, ta, us[ia], flop / us[ia] / 1e6, to, us[io], tb, us[ib], flop / us[ib] / 1e6);
        printf("          all tiles (us):");
        for (int t = 0; t < NT; t++) printf(" %dx%d/%d %.1f", TILES[t].BM, TILES[t].BN, TILES[t].WARPS_M, us[t]);
        printf("\n");
    }
    for (int n = 0; n < 2; n++)
        printf("%s convs (staged ones, B 32 640 --half): staged_tile %.2f ms (%.1f TFLOP/s), before %.2f ms (%.1f), fastest "
               "tile per shape %.2f ms (%.1f)\n", n ? "yolov9-c" : "yolov9-s", net_auto[n] / 1e3, net_flop[n] / net_auto[n] / 1e6,
               net_old[n] / 1e3, net_flop[n] / net_old[n] / 1e6, net_best[n] / 1e3, net_flop[n] / net_best[n] / 1e6);
    return 0;
}
