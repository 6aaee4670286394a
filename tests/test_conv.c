/* test_conv: the CPU's convolution (yolov9.h, "the convolution as matrix
   products over packed panels") against its definition, the naive loops
   beside it (yolo_conv2d_naive_forward/backward, summed in double), on
   awkward shapes: odd sizes, strides 1 and 2, kernels 1, 3 and 5, groups,
   products longer than a packed block (K > YOLO_KC), tiles and register
   tiles cut at the edges, a weight gradient in several chunks of
   positions (P > YOLO_RCHUNK) and in chunks of several images.
     forward: bias, SiLU and a shortcut, x and y as slots of wider buffers;
     backward: dw and db added to what they held, dL/dx into two runs (one
       added to, one written: a concatenation's parts).
   Each tensor by relative L2 error against the reference, within 1e-5
   (float32's sums in another order). Then, on four shapes large enough
   for threads, every result bit for bit the same on 1, 2 and 3 threads
   (whatever OMP_NUM_THREADS says). Exits 1 on any failure.
   usage: test_conv [--bench] (--bench: milliseconds and GFLOP/s of the
   forward and backward of a few of yolov9-t's and yolov9-s's convs at 320,
   batch 8, on the threads OMP_NUM_THREADS gives; no checks) */
#define YOLOV9_IMPLEMENTATION
#include "../yolov9.h"
#ifdef _OPENMP
#include <omp.h>
#endif

typedef struct { int B, C1, H, W, C2, k, s, g; } shape;

static void fill(yolo_real *v, size_t n, yolo_rng *r) {
    for (size_t i = 0; i < n; i++) v[i] = (yolo_real)(2 * yolo_rng_uniform(r) - 1);
}

static int check(const char *what, const shape *sh, const yolo_real *ours, const yolo_real *ref, size_t n) {
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)ours[i] - ref[i];
        num += d * d; den += (double)ref[i] * ref[i];
    }
    double err = sqrt(num / fmax(den, 1e-300));
    int bad = !(err <= 1e-5);
    if (bad)
        printf("  FAIL %-10s B%d C1 %d %dx%d C2 %d k%d s%d g%d: relative error %.2e\n", what, sh->B, sh->C1, sh->H, sh->W,
               sh->C2, sh->k, sh->s, sh->g, err);
    return bad;
}

/* one shape: forward through slots, with bias, SiLU and a shortcut; backward into two runs */
static int test_shape(const shape *sh, yolo_rng *rng) {
    int B = sh->B, C1 = sh->C1, H = sh->H, W = sh->W, C2 = sh->C2, k = sh->k, s = sh->s, g = sh->g;
    int Ho = yolo_conv_out(H, k, s), Wo = yolo_conv_out(W, k, s), xpad = 3, ypad = 2;
    size_t nx = (size_t)B * C1 * H * W, ny = (size_t)B * C2 * Ho * Wo, nw = (size_t)C2 * (C1 / g) * k * k;
    size_t xbig = (size_t)B * (C1 + xpad) * H * W, ybig = (size_t)B * (C2 + ypad) * Ho * Wo;
    yolo_real *xb = (yolo_real *)calloc(xbig, sizeof(yolo_real)), *yb = (yolo_real *)calloc(ybig, sizeof(yolo_real));
    yolo_real *x = (yolo_real *)malloc(nx * sizeof(yolo_real)), *w = (yolo_real *)malloc(nw * sizeof(yolo_real));
    yolo_real *b = (yolo_real *)malloc(C2 * sizeof(yolo_real)), *res = (yolo_real *)malloc(ny * sizeof(yolo_real));
    yolo_real *yref = (yolo_real *)malloc(ny * sizeof(yolo_real)), *y = (yolo_real *)malloc(ny * sizeof(yolo_real));
    fill(x, nx, rng); fill(w, nw, rng); fill(b, C2, rng); fill(res, ny, rng);
    int fails = 0;

    /* forward: x at channels 1.. of a buffer of C1 + 3, y at channels 2.. of one of C2 + 2 */
    for (int n = 0; n < B; n++)
        memcpy(xb + ((size_t)n * (C1 + xpad) + 1) * H * W, x + (size_t)n * C1 * H * W, (size_t)C1 * H * W * sizeof(yolo_real));
    yolo_tensor xt, yt, rt;
    memset(&xt, 0, sizeof xt); memset(&yt, 0, sizeof yt); memset(&rt, 0, sizeof rt);
    xt.n = B; xt.c = C1; xt.h = H; xt.w = W; xt.data = xb; xt.c0 = 1; xt.ctot = C1 + xpad;
    yt.n = B; yt.c = C2; yt.h = Ho; yt.w = Wo; yt.data = yb; yt.c0 = 2; yt.ctot = C2 + ypad;
    rt.n = B; rt.c = C2; rt.h = Ho; rt.w = Wo; rt.data = res;
    for (int act = 0; act < 2; act++) {
        yolo_cpu.conv2d_forward(&xt, w, b, NULL, C2, k, s, g, act, act ? &rt : NULL, YOLO_FP32, &yt);
        yolo_conv2d_naive_forward(x, B, C1, H, W, w, b, C2, k, s, g, Ho, Wo, yref);
        for (size_t i = 0; i < ny && act; i++) yref[i] = yolo_silu(yref[i]) + res[i];
        for (int n = 0; n < B; n++)
            memcpy(y + (size_t)n * C2 * Ho * Wo, yb + ((size_t)n * (C2 + ypad) + 2) * Ho * Wo, (size_t)C2 * Ho * Wo * sizeof(yolo_real));
        fails += check(act ? "fwd+act+r" : "forward", sh, y, yref, ny);
    }
    size_t untouched = 0;   /* the slots' neighbours keep their zeros */
    for (int n = 0; n < B; n++) {
        for (size_t i = 0; i < (size_t)2 * Ho * Wo; i++) untouched += yb[(size_t)n * (C2 + ypad) * Ho * Wo + i] != 0;
    }
    if (untouched) { printf("  FAIL forward wrote %zu values outside its slot\n", untouched); fails++; }

    /* backward: dy random; dw, db start from random values; dL/dx in two runs: channels
       [0, c) added into ga (random), the rest written over gb */
    yolo_real *dy = res;
    yolo_real *dw = (yolo_real *)malloc(nw * sizeof(yolo_real)), *dwref = (yolo_real *)malloc(nw * sizeof(yolo_real));
    yolo_real *db = (yolo_real *)malloc(C2 * sizeof(yolo_real)), *dbref = (yolo_real *)malloc(C2 * sizeof(yolo_real));
    yolo_real *dxref = (yolo_real *)malloc(nx * sizeof(yolo_real)), *dx = (yolo_real *)malloc(nx * sizeof(yolo_real));
    fill(dw, nw, rng); memcpy(dwref, dw, nw * sizeof(yolo_real));
    fill(db, C2, rng); memcpy(dbref, db, C2 * sizeof(yolo_real));
    int ca = C1 > 1 ? C1 / 2 : 1, cb = C1 - ca, HW = H * W;
    yolo_real *ga = (yolo_real *)malloc((size_t)B * ca * HW * sizeof(yolo_real));
    yolo_real *gb = (yolo_real *)malloc(((size_t)B * cb * HW + 1) * sizeof(yolo_real));
    fill(ga, (size_t)B * ca * HW, rng); fill(gb, (size_t)B * cb * HW, rng);
    for (int n = 0; n < B; n++)   /* the reference's dx starts from what the runs hold: ga, and 0 for the written run */
        for (int c = 0; c < C1; c++)
            for (int i = 0; i < HW; i++)
                dxref[((size_t)n * C1 + c) * HW + i] = c < ca ? ga[((size_t)n * ca + c) * HW + i] : 0;
    yolo_dx runs;
    memset(&runs, 0, sizeof runs);
    runs.n = cb ? 2 : 1;
    runs.g[0] = ga; runs.c[0] = ca; runs.cd[0] = ca; runs.add[0] = 1;
    runs.g[1] = gb; runs.c[1] = cb; runs.cd[1] = cb; runs.add[1] = 0;
    xt.data = x; xt.c0 = xt.ctot = 0;
    yolo_tensor dyt = rt;
    dyt.data = dy;
    yolo_cpu.conv2d_backward(&xt, w, NULL, &dyt, C2, k, s, g, YOLO_FP32, &runs, dw, db);
    yolo_conv2d_naive_backward(x, B, C1, H, W, w, dy, C2, k, s, g, Ho, Wo, dxref, dwref);
    for (int o = 0; o < C2; o++) {
        double acc = 0;
        for (int n = 0; n < B; n++)
            for (int i = 0; i < Ho * Wo; i++) acc += dy[((size_t)n * C2 + o) * Ho * Wo + i];
        dbref[o] += (yolo_real)acc;
    }
    for (int n = 0; n < B; n++)
        for (int c = 0; c < C1; c++)
            memcpy(dx + ((size_t)n * C1 + c) * HW, c < ca ? ga + ((size_t)n * ca + c) * HW : gb + ((size_t)n * cb + c - ca) * HW,
                   HW * sizeof(yolo_real));
    fails += check("dw", sh, dw, dwref, nw);
    fails += check("db", sh, db, dbref, C2);
    fails += check("dx", sh, dx, dxref, nx);
    free(xb); free(yb); free(x); free(w); free(b); free(res); free(yref); free(y);
    free(dw); free(dwref); free(db); free(dbref); free(dxref); free(dx); free(ga); free(gb);
    return fails;
}

#ifdef _OPENMP
/* y, dw, db and dx of a shape large enough for threads (above the products' threshold) into out
   (ny + nw + C2 + nx values), on `threads` threads */
static void run_on(const shape *sh, int threads, yolo_real *out) {
    int B = sh->B, C1 = sh->C1, H = sh->H, W = sh->W, C2 = sh->C2, k = sh->k, s = sh->s, g = sh->g;
    int Ho = yolo_conv_out(H, k, s), Wo = yolo_conv_out(W, k, s);
    size_t nx = (size_t)B * C1 * H * W, ny = (size_t)B * C2 * Ho * Wo, nw = (size_t)C2 * (C1 / g) * k * k;
    yolo_real *x = (yolo_real *)malloc(nx * sizeof(yolo_real)), *w = (yolo_real *)malloc(nw * sizeof(yolo_real));
    yolo_real *b = (yolo_real *)malloc(C2 * sizeof(yolo_real)), *dy = (yolo_real *)malloc(ny * sizeof(yolo_real));
    yolo_real *y = out, *dw = out + ny, *db = dw + nw, *dx = db + C2;
    yolo_rng rng = { 7 };
    fill(x, nx, &rng); fill(w, nw, &rng); fill(b, C2, &rng); fill(dy, ny, &rng); fill(dx, nx, &rng);
    memset(dw, 0, nw * sizeof(yolo_real)); memset(db, 0, C2 * sizeof(yolo_real));
    yolo_tensor xt, yt, dyt;
    memset(&xt, 0, sizeof xt);
    xt.n = B; xt.c = C1; xt.h = H; xt.w = W; xt.data = x;
    yt = xt; yt.c = C2; yt.h = Ho; yt.w = Wo; yt.data = y;
    dyt = yt; dyt.data = dy;
    yolo_dx runs;
    memset(&runs, 0, sizeof runs);
    runs.n = 1; runs.g[0] = dx; runs.c[0] = runs.cd[0] = C1; runs.add[0] = 1;
    int before = omp_get_max_threads();
    omp_set_num_threads(threads);
    yolo_cpu.conv2d_forward(&xt, w, b, NULL, C2, k, s, g, 1, NULL, YOLO_FP32, &yt);
    yolo_cpu.conv2d_backward(&xt, w, NULL, &dyt, C2, k, s, g, YOLO_FP32, &runs, dw, db);
    omp_set_num_threads(before);
    free(x); free(w); free(b); free(dy);
}
/* the same bits on one thread and on two and three: which thread sums a value must not change it */
static int thread_check(const shape *sh) {
    int Ho = yolo_conv_out(sh->H, sh->k, sh->s), Wo = yolo_conv_out(sh->W, sh->k, sh->s);
    size_t n = (size_t)sh->B * sh->C2 * Ho * Wo + (size_t)sh->C2 * (sh->C1 / sh->g) * sh->k * sh->k + sh->C2 +
               (size_t)sh->B * sh->C1 * sh->H * sh->W;
    yolo_real *one = (yolo_real *)malloc(n * sizeof(yolo_real)), *more = (yolo_real *)malloc(n * sizeof(yolo_real));
    int fails = 0;
    run_on(sh, 1, one);
    for (int threads = 2; threads <= 3; threads++) {
        run_on(sh, threads, more);
        if (memcmp(one, more, n * sizeof(yolo_real))) {
            printf("  FAIL B%d C1 %d %dx%d C2 %d k%d s%d g%d: %d threads give other bits than one\n", sh->B, sh->C1, sh->H,
                   sh->W, sh->C2, sh->k, sh->s, sh->g, threads);
            fails++;
        }
    }
    free(one); free(more);
    return fails;
}
#endif

/* the process's CPU seconds (every thread's): on a shared machine a truer cost than the clock's */
static double cpu_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* --bench: a conv's forward and backward timed, GFLOP/s of the products (by the clock, and by
   the CPU time of the threads) */
static void bench(const shape *sh, yolo_rng *rng) {
    int B = sh->B, C1 = sh->C1, H = sh->H, W = sh->W, C2 = sh->C2, k = sh->k, s = sh->s, g = sh->g;
    int Ho = yolo_conv_out(H, k, s), Wo = yolo_conv_out(W, k, s);
    size_t nx = (size_t)B * C1 * H * W, ny = (size_t)B * C2 * Ho * Wo, nw = (size_t)C2 * (C1 / g) * k * k;
    yolo_real *x = (yolo_real *)malloc(nx * sizeof(yolo_real)), *dx = (yolo_real *)malloc(nx * sizeof(yolo_real));
    yolo_real *w = (yolo_real *)malloc(nw * sizeof(yolo_real)), *dw = (yolo_real *)calloc(nw, sizeof(yolo_real));
    yolo_real *y = (yolo_real *)malloc(ny * sizeof(yolo_real));
    fill(x, nx, rng); fill(w, nw, rng); fill(y, ny, rng);
    yolo_tensor xt, yt;
    memset(&xt, 0, sizeof xt); memset(&yt, 0, sizeof yt);
    xt.n = B; xt.c = C1; xt.h = H; xt.w = W; xt.data = x;
    yt.n = B; yt.c = C2; yt.h = Ho; yt.w = Wo; yt.data = y;
    yolo_dx runs;
    memset(&runs, 0, sizeof runs);
    runs.n = 1; runs.g[0] = dx; runs.c[0] = runs.cd[0] = C1;
    double flops = 2.0 * B * C2 * (C1 / g) * k * k * Ho * Wo, t[5] = { 1e30, 1e30, 1e30, 1e30, 1e30 };
    for (int rep = 0; rep < 3; rep++) {
        double t0 = yolo_now(), c0 = cpu_seconds();
        yolo_cpu.conv2d_forward(&xt, w, NULL, NULL, C2, k, s, g, 0, NULL, YOLO_FP32, &yt);
        double t1 = yolo_now(), c1 = cpu_seconds();
        yolo_cpu.conv2d_backward(&xt, w, NULL, &yt, C2, k, s, g, YOLO_FP32, &runs, dw, NULL);
        double t2 = yolo_now(), c2 = cpu_seconds();
        yolo_cpu.conv2d_backward(&xt, w, NULL, &yt, C2, k, s, g, YOLO_FP32, NULL, dw, NULL);
        double c3 = cpu_seconds();
        t[0] = fmin(t[0], t1 - t0); t[1] = fmin(t[1], t2 - t1); t[2] = fmin(t[2], c1 - c0); t[3] = fmin(t[3], c2 - c1);
        t[4] = fmin(t[4], c3 - c2);
    }
    printf("  B%d %4d -> %4d %3dx%-3d k%d s%d  forward %7.2f ms %6.1f GFLOP/s (CPU %7.2f ms)  backward %7.2f ms %6.1f GFLOP/s "
           "(CPU %7.2f ms, of which dw %7.2f)\n", B, C1, C2, H, W, k, s, t[0] * 1e3, flops / t[0] / 1e9, t[2] * 1e3, t[1] * 1e3,
           2 * flops / t[1] / 1e9, t[3] * 1e3, t[4] * 1e3);
    free(x); free(dx); free(w); free(dw); free(y);
}

int main(int argc, char **argv) {
    yolo_rng rng = { 42 };
    if (argc > 1 && !strcmp(argv[1], "--bench")) {
        static const shape convs[] = {
            { 8, 3, 320, 320, 16, 3, 2, 1 }, { 8, 16, 160, 160, 32, 3, 2, 1 }, { 8, 32, 80, 80, 32, 1, 1, 1 },
            { 8, 16, 80, 80, 16, 3, 1, 1 }, { 8, 64, 40, 40, 64, 3, 1, 1 }, { 8, 128, 20, 20, 128, 3, 1, 1 },
            { 8, 256, 10, 10, 256, 3, 1, 1 }, { 8, 128, 40, 40, 128, 1, 1, 1 },
        };
        for (size_t i = 0; i < sizeof convs / sizeof *convs; i++) bench(&convs[i], &rng);
        return 0;
    }
    static const shape shapes[] = {
        { 2, 3, 7, 5, 5, 3, 2, 1 },       /* odd sizes, stride 2, 3 input channels */
        { 1, 16, 9, 11, 24, 3, 1, 1 },
        { 2, 12, 8, 6, 8, 3, 1, 4 },      /* groups */
        { 2, 6, 5, 7, 6, 3, 1, 6 },       /* a channel a group */
        { 3, 2, 40, 31, 4, 5, 1, 1 },     /* k = 5 over planes of more than a block: read where they lie */
        { 1, 3, 701, 2, 2, 3, 1, 1 },     /* and planes whose bottom padding is shorter than a vector */
        { 1, 9, 13, 13, 17, 1, 1, 1 },    /* 1x1: x is col */
        { 3, 5, 6, 7, 7, 1, 2, 1 },       /* 1x1 of stride 2 */
        { 1, 300, 5, 4, 20, 1, 1, 1 },    /* K = 300 > YOLO_KC */
        { 2, 40, 6, 6, 33, 3, 1, 1 },     /* K = 360 */
        { 1, 4, 9, 8, 5, 5, 1, 1 },       /* k = 5, padding 2 */
        { 2, 2, 66, 66, 3, 3, 1, 1 },     /* P = 4356 > YOLO_RCHUNK: two chunks an image */
        { 5, 3, 20, 20, 4, 3, 2, 1 },     /* several images a chunk */
        { 1, 70, 3, 3, 130, 3, 1, 1 },    /* more rows than a tile */
        { 2, 8, 70, 33, 9, 3, 2, 1 },     /* more columns than a tile */
        { 1, 1, 1, 1, 1, 1, 1, 1 },
    };
    int fails = 0, n = (int)(sizeof shapes / sizeof *shapes);
    for (int i = 0; i < n; i++) fails += test_shape(&shapes[i], &rng);
    printf("test_conv: %d shapes, forward and backward against the naive loops: %s\n", n, fails ? "FAIL" : "ok");
#ifdef _OPENMP
    static const shape threaded[] = {   /* above the threshold of threads: padded planes read where they lie, */
        { 2, 64, 40, 40, 64, 3, 1, 1 }, { 4, 32, 20, 20, 48, 3, 1, 2 },   /* or packed; */
        { 2, 16, 64, 64, 32, 3, 2, 1 }, { 1, 64, 80, 80, 32, 1, 1, 1 },   /* stride 2; 1x1 in two chunks */
    };
    int tfails = 0, tn = (int)(sizeof threaded / sizeof *threaded);
    for (int i = 0; i < tn; i++) tfails += thread_check(&threaded[i]);
    printf("test_conv: %d shapes, the same bits on 1, 2 and 3 threads: %s\n", tn, tfails ? "FAIL" : "ok");
    fails += tfails;
#endif
    return fails ? 1 : 0;
}
