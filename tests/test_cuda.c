/* test_cuda: every op of the CUDA backend against its CPU twin, forward and
   backward, on random non-zero inputs of awkward shapes (odd H and W,
   channels that fit no tile, batch 1 and 3, groups 4, stride 2). Outputs
   are poisoned before each run so that an element the kernel never writes
   shows up. Relative L2 error ||gpu - cpu|| / ||cpu|| must stay under 1e-5
   (1e-4 for the reductions of BatchNorm's backward; the bf16 and half
   convs are compared with the CPU conv of rounded operands; a uint8 batch
   made into the input must equal the CPU's exactly). Exits non-zero on any
   mismatch. Every precision on every tier of the kernel file: the products
   in bf16 and half run on the tier's tensor cores where it has them, else
   on the portable core's CUDA cores, the same checks either way. Needs a
   GPU: build with nvcc, run with make test-cuda (tests/gpu_check.sh: every
   tier); or the simulator (tests/sim: test_cuda_sim60, 75, 80, 90, one a
   tier, --quick (make test-all), which skips the one shape of 125 MB an image, ten minutes
   on a CPU). */
#define YOLOV9_IMPLEMENTATION
#include "../yolov9.h"

static int g_pass, g_fail;
static yolo_rng g_rng = { 99 };
static const yolo_backend *G;

static float *rnd(size_t n, float lo, float hi) {
    float *p = (float *)malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) p[i] = lo + (hi - lo) * (float)yolo_rng_uniform(&g_rng);
    return p;
}
static float *todev(const float *h, size_t n) { float *d = (float *)G->alloc(n * sizeof(float)); G->upload(d, h, n * sizeof(float)); return d; }
static float *tohost(const float *d, size_t n) { float *h = (float *)malloc(n * sizeof(float)); G->download(h, d, n * sizeof(float)); return h; }
static float *poisoned(size_t n) { float *d = (float *)G->alloc(n * sizeof(float)); float *h = rnd(n, 1e6f, 2e6f); G->upload(d, h, n * sizeof(float)); free(h); return d; }

static void check(const char *op, const char *what, const float *cpu, const float *dev, size_t n, double tol) {
    float *g = tohost(dev, n);
    double num = 0, den = 0;
    int finite = 1;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(g[i])) finite = 0;
        double d = (double)g[i] - cpu[i];
        num += d * d; den += (double)cpu[i] * cpu[i];
    }
    double e = den > 0 ? sqrt(num / den) : sqrt(num);
    int ok = finite && e <= tol;
    if (ok) g_pass++; else g_fail++;
    printf("  %-34s %-10s %8zu values  rel err %.2e  %s\n", op, what, n, e, ok ? "ok" : "FAIL");
    free(g);
}

/* a host tensor and its device twin with the same values */
typedef struct { yolo_tensor h, d; } pair;
static pair mk(int n, int c, int h, int w, float lo, float hi) {
    pair p;
    size_t k = (size_t)n * c * h * w;
    memset(&p, 0, sizeof p);
    yolo_tensor_resize(&yolo_cpu, &p.h, n, c, h, w, 1);
    yolo_tensor_resize(G, &p.d, n, c, h, w, 1);
    float *v = rnd(k, lo, hi), *g = rnd(k, -1, 1);
    memcpy(p.h.data, v, k * sizeof(float)); memcpy(p.h.grad, g, k * sizeof(float));
    G->upload(p.d.data, v, k * sizeof(float)); G->upload(p.d.grad, g, k * sizeof(float));
    free(v); free(g);
    return p;
}
static void poison(pair *p) {
    size_t k = yolo_numel(&p->d);
    float *v = rnd(k, 1e6f, 2e6f);
    G->upload(p->d.data, v, k * sizeof(float));
    free(v);
}
/* the device gradient set to the host's bits, so that a check of 0 tolerance
   sees only the op under test, not what earlier ops left in the sum */
static void same_grad(pair *p) { G->upload(p->d.grad, p->h.grad, yolo_numel(&p->h) * sizeof(float)); }
static void fill_nan(float *h, size_t n) { for (size_t i = 0; i < n; i++) h[i] = NAN; }
static void drop(pair *p) { yolo_tensor_free(&yolo_cpu, &p->h); yolo_tensor_free(G, &p->d); }

/* A convolution, forward and backward, in precision prec against its CPU
   twin (bf16 and half: the float32 conv of operands rounded as the GPU
   rounds them; their products are exact in float, so only the order of
   the float sums differs: the same 1e-5 as float32). The forward's output
   is poisoned with NaN first; the backward adds to dx, dw and db, which
   start from the same random values on both sides. The GPU runs it all
   twice and must give the same bits: no atomics, the weight gradient's
   k-slices summed in a fixed order. bias: 0 none, 1 a bias, 2 a bias and
   the SiLU in the forward's epilogue (a folded Conv). dx_add 0: dx is a
   fresh gradient, assigned: NaN on both sides before the backward, none
   may be left (every value written, no old value read). */
static void test_conv_dx(yolo_precision prec, int B, int C1, int H, int W, int C2, int k, int s, int g, int bias, int dx_add) {
    char name[96];
    int act = bias == 2;
    snprintf(name, sizeof name, "conv %s %dx%d s%d g%d B%d %dx%dx%d->%d%s%s", yolo_precision_name(prec), k, k, s, g, B, C1,
             H, W, C2, bias ? act ? " +b+silu" : " +b" : "", dx_add ? "" : " dx assign");
    int Ho = (H + 2 * (k / 2) - k) / s + 1, Wo = (W + 2 * (k / 2) - k) / s + 1;
    size_t nw = (size_t)C2 * (C1 / g) * k * k, nx = (size_t)B * C1 * H * W, ny = (size_t)B * C2 * Ho * Wo;
    pair x = mk(B, C1, H, W, -1, 1), y = mk(B, C2, Ho, Wo, -1, 1);   /* x.grad and y.grad random too */
    float *w = rnd(nw, -0.3f, 0.3f), *b = rnd(C2, -1, 1), *dw = rnd(nw, -1, 1), *db = rnd(C2, -1, 1);
    if (!dx_add) fill_nan(x.h.grad, nx);
    float *w_d = todev(w, nw), *b_d = todev(b, C2), *dw0_d = todev(dw, nw), *db0_d = todev(db, C2);
    float *dx0_d = todev(x.h.grad, nx), *nan = (float *)malloc(ny * sizeof(float));
    for (size_t i = 0; i < ny; i++) nan[i] = NAN;
    /* dw sums B Ho Wo products: past a few million the rounding of float
       sums, which grows as sqrt(terms) 2^-24, passes 1e-5 */
    double dw_tol = fmax(1e-5, sqrt((double)B * Ho * Wo) * 0x1p-24);
    yolo_cpu.conv2d_forward(&x.h, w, bias ? b : NULL, NULL, C2, k, s, g, act, NULL, prec, &y.h);
    yolo_tensor dy_h = yolo_grad_view(&y.h), dy_d = yolo_grad_view(&y.d);
    yolo_dx dx_h = yolo_dx_whole(x.h.grad, C1, dx_add), dx_d = yolo_dx_whole(x.d.grad, C1, dx_add);
    yolo_cpu.conv2d_backward(&x.h, w, NULL, &dy_h, C2, k, s, g, prec, &dx_h, dw, bias ? db : NULL);
    size_t n[4] = { ny, nx, nw, (size_t)C2 };
    float *first[4] = { NULL, NULL, NULL, NULL };
    for (int run = 0; run < 2; run++) {
        float *dw_d = (float *)G->alloc(nw * sizeof(float)), *db_d = (float *)G->alloc(C2 * sizeof(float));
        G->copy(dw_d, dw0_d, nw * sizeof(float));
        G->copy(db_d, db0_d, C2 * sizeof(float));
        G->copy(x.d.grad, dx0_d, nx * sizeof(float));
        G->upload(y.d.data, nan, ny * sizeof(float));
        G->conv2d_forward(&x.d, w_d, bias ? b_d : NULL, NULL, C2, k, s, g, act, NULL, prec, &y.d);
        G->conv2d_backward(&x.d, w_d, NULL, &dy_d, C2, k, s, g, prec, &dx_d, dw_d, bias ? db_d : NULL);
        float *now[4] = { tohost(y.d.data, ny), tohost(x.d.grad, nx), tohost(dw_d, nw), tohost(db_d, C2) };
        if (run == 0) {
            check(name, "forward", y.h.data, y.d.data, ny, 1e-5);
            check(name, "dx", x.h.grad, x.d.grad, nx, 1e-5);
            check(name, "dw", dw, dw_d, nw, dw_tol);
            if (bias) check(name, "db", db, db_d, C2, 1e-5);
            memcpy(first, now, sizeof first);
        } else {
            int same = 1;
            for (int t = 0; t < 4; t++) { same &= !memcmp(first[t], now[t], n[t] * sizeof(float)); free(first[t]); free(now[t]); }
            if (same) g_pass++; else g_fail++;
            printf("  %-34s run twice: y, dx, dw, db the same bits  %s\n", name, same ? "ok" : "FAIL");
        }
        G->release(dw_d); G->release(db_d);
    }
    drop(&x); drop(&y);
    free(w); free(b); free(dw); free(db); free(nan);
    G->release(w_d); G->release(b_d); G->release(dw0_d); G->release(db0_d); G->release(dx0_d);
}
static void test_conv(yolo_precision prec, int B, int C1, int H, int W, int C2, int k, int s, int g, int bias) {
    test_conv_dx(prec, B, C1, H, W, C2, k, s, g, bias, 1);
}

/* --sync-bn over two processes that hold the same share: the group doubles
   every sum, the statistics come out those of the share (the hook is
   exercised; the CPU twin's group does the same to host memory) */
static void twin_sum_host(double *x, size_t n) { for (size_t i = 0; i < n; i++) x[i] *= 2; }
static void twin_sum_device(double *x, size_t n) {
    double *h = (double *)malloc(n * sizeof(double));
    G->download(h, x, n * sizeof(double));
    twin_sum_host(h, n);
    G->upload(x, h, n * sizeof(double));
    free(h);
}
static const yolo_bn_group TWIN_HOST = { 2, twin_sum_host }, TWIN_DEVICE = { 2, twin_sum_device };

static void test_bn(int B, int C, int H, int W, int act, int synced) {
    char name[96];
    snprintf(name, sizeof name, "batchnorm%s%s B%d %dx%dx%d", act ? "+silu" : "", synced ? " sync-bn" : "", B, C, H, W);
    const yolo_bn_group *gh = synced ? &TWIN_HOST : NULL, *gd = synced ? &TWIN_DEVICE : NULL;
    pair z = mk(B, C, H, W, -2, 3), u = mk(B, C, H, W, 0, 1);
    float *gamma = rnd(C, 0.5f, 1.5f), *beta = rnd(C, -0.5f, 0.5f), *rm = rnd(C, -1, 1), *rv = rnd(C, 0.5f, 2);
    float *mean = rnd(C, 0, 1), *invstd = rnd(C, 0, 1), *dg = rnd(C, -1, 1), *dbt = rnd(C, -1, 1);
    float *gamma_d = todev(gamma, C), *beta_d = todev(beta, C), *rm_d = todev(rm, C), *rv_d = todev(rv, C);
    float *mean_d = poisoned(C), *invstd_d = poisoned(C), *dg_d = todev(dg, C), *dbt_d = todev(dbt, C);
    poison(&u);
    yolo_cpu.bn_apply(&z.h, gamma, beta, rm, NULL, rv, 1e-3, act, &u.h);
    G->bn_apply(&z.d, gamma_d, beta_d, rm_d, NULL, rv_d, 1e-3, act, &u.d);
    check(name, "eval", u.h.data, u.d.data, yolo_numel(&u.h), 1e-5);
    poison(&u);
    yolo_cpu.bn_train_forward(&z.h, gamma, beta, mean, invstd, rm, rv, 0.03, 1e-3, act, gh, &u.h);
    G->bn_train_forward(&z.d, gamma_d, beta_d, mean_d, invstd_d, rm_d, rv_d, 0.03, 1e-3, act, gd, &u.d);
    check(name, "train", u.h.data, u.d.data, yolo_numel(&u.h), 1e-5);
    check(name, "mean", mean, mean_d, C, 1e-5);
    check(name, "invstd", invstd, invstd_d, C, 1e-5);
    check(name, "run.mean", rm, rm_d, C, 1e-5);
    check(name, "run.var", rv, rv_d, C, 1e-5);
    {   /* the backward's remake: u again from the statistics the forward kept, the same bits on each side */
        size_t nu = yolo_numel(&u.h);
        float *train_h = (float *)malloc(nu * sizeof(float)), *train_d = tohost(u.d.data, nu);
        memcpy(train_h, u.h.data, nu * sizeof(float));
        memset(u.h.data, 0xff, nu * sizeof(float));
        poison(&u);
        yolo_cpu.bn_apply(&z.h, gamma, beta, mean, invstd, NULL, 1e-3, act, &u.h);
        G->bn_apply(&z.d, gamma_d, beta_d, mean_d, invstd_d, NULL, 1e-3, act, &u.d);
        float *again_h = todev(u.h.data, nu);
        check(name, "remade on the CPU", train_h, again_h, nu, 0);
        check(name, "remade on the GPU", train_d, u.d.data, nu, 0);
        G->release(again_h); free(train_h); free(train_d);
    }
    /* dz over z (every value of it: one left unwritten would still be z's) */
    yolo_cpu.bn_act_backward(&z.h, u.h.grad, gamma, beta, mean, invstd, act, gh, dg, dbt);
    G->bn_act_backward(&z.d, u.d.grad, gamma_d, beta_d, mean_d, invstd_d, act, gd, dg_d, dbt_d);
    check(name, "dz", z.h.data, z.d.data, yolo_numel(&z.h), 1e-4);
    check(name, "dgamma", dg, dg_d, C, 1e-4);
    check(name, "dbeta", dbt, dbt_d, C, 1e-4);
    drop(&z); drop(&u);
    float *all[] = { gamma, beta, rm, rv, mean, invstd, dg, dbt };
    float *alld[] = { gamma_d, beta_d, rm_d, rv_d, mean_d, invstd_d, dg_d, dbt_d };
    for (int i = 0; i < 8; i++) { free(all[i]); G->release(alld[i]); }
}

/* a uint8 batch made into the input: every byte value, from ordinary
   host memory (staged), from pinned memory (read in place) and from a copy
   in device memory (a training step's), must give the CPU's floats bit for
   bit */
static void test_pixels(size_t n) {
    unsigned char *p = NULL;
    if (posix_memalign((void **)&p, 4096, (n + 4095) / 4096 * 4096)) { printf("out of memory\n"); exit(1); }
    for (size_t i = 0; i < n; i++) p[i] = i < 256 ? (unsigned char)i : (unsigned char)(yolo_rng_u64(&g_rng) >> 56);
    float *y = (float *)malloc(n * sizeof(float)), *y_d = poisoned(n);
    yolo_cpu.pixels_to_input(y, p, n);
    G->pixels_to_input(y_d, p, n);
    check("pixels / 255", "staged", y, y_d, n, 0);
    G->release(y_d); y_d = poisoned(n);
    G->pin(p, (n + 4095) / 4096 * 4096, 1);
    G->pixels_to_input(y_d, p, n);
    check("pixels / 255", "pinned", y, y_d, n, 0);
    G->pin(p, (n + 4095) / 4096 * 4096, 0);
    G->release(y_d); y_d = poisoned(n);
    unsigned char *p_d = (unsigned char *)G->alloc(n);
    G->upload(p_d, p, n);
    G->pixels_to_input(y_d, p_d, n);
    check("pixels / 255", "device", y, y_d, n, 0);
    free(p); free(y); G->release(y_d); G->release(p_d);
}

/* Low-precision stores (yolo_tensor.store: a folded inference pass in bf16
   or half): the CPU twin holds NCHW floats rounded to the store's
   precision, the GPU NHWC two-byte values. A stored tensor is made on both
   sides from the same floats by each backend's concat into the store, and
   read back as floats by the GPU's concat out of it, then compared with the
   twin: every op of the pass, including those two copies, exactly (the
   same float sums in the same order, rounded as the twin rounds), but the
   conv, whose sums run in another order. */
static pair mk_stored(yolo_precision store, int n, int c, int h, int w, float lo, float hi) {
    pair f = mk(n, c, h, w, lo, hi), p;
    memset(&p, 0, sizeof p);
    yolo_tensor_resize(&yolo_cpu, &p.h, n, c, h, w, 0);
    yolo_tensor_resize(G, &p.d, n, c, h, w, 0);
    p.h.store = p.d.store = store;
    yolo_cpu.concat(&f.h, 0, &p.h, 0, c);
    G->concat(&f.d, 0, &p.d, 0, c);
    drop(&f);
    return p;
}
/* every byte 0xff: a NaN in bf16 and in half (and in float) */
static void poison_stored(pair *p) {
    size_t bytes = yolo_numel(&p->d) * sizeof(float);
    unsigned char *h = (unsigned char *)malloc(bytes);
    memset(h, 0xff, bytes);
    G->upload(p->d.data, h, bytes);
    free(h);
}
/* the device's stored values as floats, beside the twin's */
static float *stored_values(const pair *p) {
    yolo_tensor f;
    memset(&f, 0, sizeof f);
    yolo_tensor_resize(G, &f, p->d.n, p->d.c, p->d.h, p->d.w, 0);
    G->concat(&p->d, 0, &f, 0, p->d.c);
    float *h = tohost(f.data, yolo_numel(&f));
    yolo_tensor_free(G, &f);
    return h;
}
static void check_stored(const char *op, const char *what, const pair *p, double tol) {
    float *h = stored_values(p), *d = todev(h, yolo_numel(&p->h));
    check(op, what, p->h.data, d, yolo_numel(&p->h), tol);
    free(h); G->release(d);
}

/* The ops of a low-precision inference pass between the convs: channel
   copies (runs of 8 channels, odd runs, into the head's float32 maps), the
   shortcut's add, the pools and the nearest resize. */
static void test_stored(yolo_precision store, int B, int C, int H, int W) {
    char name[96];
    const char *sn = yolo_precision_name(store);
    pair x = mk_stored(store, B, C, H, W, -3, 3), a = mk_stored(store, B, C, H, W, -3, 3);
    pair cat = mk_stored(store, B, C + 16, H, W, -1, 1), map = mk(B, C + 3, H, W, -1, 1);
    snprintf(name, sizeof name, "concat %s B%d %dx%dx%d", sn, B, C, H, W);
    yolo_cpu.concat(&x.h, 0, &cat.h, 8, C); G->concat(&x.d, 0, &cat.d, 8, C);
    check_stored(name, "8s", &cat, 0);
    yolo_cpu.concat(&x.h, 1, &cat.h, 3, C - 1); G->concat(&x.d, 1, &cat.d, 3, C - 1);
    check_stored(name, "odd", &cat, 0);
    yolo_cpu.concat(&x.h, 0, &map.h, 2, C); G->concat(&x.d, 0, &map.d, 2, C);
    check(name, "to fp32", map.h.data, map.d.data, yolo_numel(&map.h), 0);
    pair y = mk_stored(store, B, C, H, W, 0, 1);
    snprintf(name, sizeof name, "add %s B%d %dx%dx%d", sn, B, C, H, W);
    poison_stored(&y);
    yolo_cpu.add(&x.h, &a.h, &y.h); G->add(&x.d, &a.d, &y.d);
    check_stored(name, "forward", &y, 0);
    pair ap = mk_stored(store, B, C, H - 1, W - 1, 0, 1);
    snprintf(name, sizeof name, "avgpool 2x2 s1 %s B%d %dx%dx%d", sn, B, C, H, W);
    poison_stored(&ap);
    yolo_cpu.avgpool2_forward(&x.h, &ap.h); G->avgpool2_forward(&x.d, &ap.d);
    check_stored(name, "forward", &ap, 0);
    static const int ks[2][3] = { { 3, 2, 1 }, { 5, 1, 2 } };
    for (int v = 0; v < 2; v++) {
        int k = ks[v][0], s = ks[v][1], p = ks[v][2];
        pair mp = mk_stored(store, B, C, (H + 2 * p - k) / s + 1, (W + 2 * p - k) / s + 1, 0, 1);
        snprintf(name, sizeof name, "maxpool %dx%d s%d p%d %s B%d %dx%dx%d", k, k, s, p, sn, B, C, H, W);
        poison_stored(&mp);
        yolo_cpu.maxpool_forward(&x.h, k, s, p, &mp.h); G->maxpool_forward(&x.d, k, s, p, &mp.d);
        check_stored(name, "forward", &mp, 0);
        drop(&mp);
    }
    /* channels from 1 (value by value), and from 8 where C comes in 8s (runs of 8) */
    for (int c0 = 1; c0 <= 8; c0 += 7) {
        if (c0 == 8 && C % 8) break;
        pair r = mk_stored(store, B, C - c0, 2 * H + 1, 3 * W, -1, 1);
        snprintf(name, sizeof name, "resize chunk %d.. %s B%d %dx%dx%d", c0, sn, B, C, H, W);
        yolo_cpu.resize_forward(&x.h, c0, 1, &r.h); G->resize_forward(&x.d, c0, 1, &r.d);
        check_stored(name, "forward", &r, 0);
        poison_stored(&r);
        yolo_cpu.resize_forward(&x.h, c0, 0, &r.h); G->resize_forward(&x.d, c0, 0, &r.d);
        check_stored(name, "into", &r, 0);
        drop(&r);
    }
    drop(&x); drop(&a); drop(&cat); drop(&map); drop(&y); drop(&ap);
}

/* A folded conv (bias and SiLU) of a low-precision inference pass: its
   input stored as the conv before it left it (x_stored) or float32 (the
   image), its output in the store (y_stored), against the twin. The float
   sums run in another order, so where a sum lies near the midpoint of two
   values of T the two round apart by one unit of the last place: a
   relative error under 2^-9 (bf16) or 2^-12 (half) overall. A float32
   output (the head's last convs, bias and no SiLU, whose maps the decoding
   reads) only sees the sums' order: 1e-5, as test_conv. Poisoned first,
   run twice, the same bits; then from weights staged once (stage_weights,
   as a folded model's), the same bits again on each side. */
static void test_conv_stored(yolo_precision prec, int x_stored, int y_stored, int B, int C1, int H, int W, int C2, int k,
                             int s, int g) {
    char name[96];
    snprintf(name, sizeof name, "conv %s %dx%d s%d g%d B%d %dx%dx%d->%d %s->%s", yolo_precision_name(prec), k, k, s, g, B,
             C1, H, W, C2, x_stored ? "stored" : "fp32", y_stored ? "stored" : "fp32");
    int Ho = (H + 2 * (k / 2) - k) / s + 1, Wo = (W + 2 * (k / 2) - k) / s + 1, act = y_stored;
    size_t nw = (size_t)C2 * (C1 / g) * k * k, ny = (size_t)B * C2 * Ho * Wo;
    pair x = x_stored ? mk_stored(prec, B, C1, H, W, -1, 1) : mk(B, C1, H, W, -1, 1);
    pair y = y_stored ? mk_stored(prec, B, C2, Ho, Wo, 0, 1) : mk(B, C2, Ho, Wo, 0, 1);
    float *w = rnd(nw, -0.3f, 0.3f), *b = rnd(C2, -1, 1), *w_d = todev(w, nw), *b_d = todev(b, C2), *first = NULL;
    yolo_cpu.conv2d_forward(&x.h, w, b, NULL, C2, k, s, g, act, NULL, prec, &y.h);
    void *ws_h = yolo_cpu.alloc_values(nw, prec), *ws_d = G->alloc_values(nw, prec);
    yolo_cpu.stage_weights(w, C2, C1 / g, k, prec, ws_h);
    G->stage_weights(w_d, C2, C1 / g, k, prec, ws_d);
    for (int run = 0; run < 3; run++) {   /* run 2: from the staged weights */
        poison_stored(&y);
        G->conv2d_forward(&x.d, w_d, b_d, run == 2 ? ws_d : NULL, C2, k, s, g, act, NULL, prec, &y.d);
        float *now = stored_values(&y);
        if (run == 0) {
            check_stored(name, "forward", &y, !y_stored ? 1e-5 : prec == YOLO_BF16 ? 0x1p-9 : 0x1p-12);
            first = now;
            continue;
        }
        int same = !memcmp(first, now, ny * sizeof(float));
        if (run == 2) {   /* and the twin's from its staged weights, to its own bits */
            float *twin = (float *)malloc(ny * sizeof(float));
            memcpy(twin, y.h.data, ny * sizeof(float));
            yolo_cpu.conv2d_forward(&x.h, w, b, ws_h, C2, k, s, g, act, NULL, prec, &y.h);
            same &= !memcmp(twin, y.h.data, ny * sizeof(float));
            free(twin);
        }
        if (same) g_pass++; else g_fail++;
        printf("  %-34s %s: the same bits  %s\n", name, run == 1 ? "run twice" : "weights staged once", same ? "ok" : "FAIL");
        free(now);
    }
    free(first);
    drop(&x); drop(&y);
    free(w); free(b);
    yolo_cpu.release(ws_h);
    G->release(w_d); G->release(b_d); G->release(ws_d);
}

/* Slots (yolo_tensor.ctot): a folded inference pass's convs read their
   input from, and write their output into, channels of a concatenation
   they share. A conv with x a slot of one buffer and y a slot of another,
   both poisoned with NaN (every byte 0xff), with and without the
   shortcut r added in the epilogue (a folded RepNBottleneck), in store
   (float32 NCHW at float32 products, or the store of a bf16 or half
   pass), against the same conv of the slot's channels copied out into a
   tensor of their own, with the shortcut by the add op:
   - the twin: the slot's channels the same bits, every other one still NaN;
   - the GPU: within test_conv_stored's tolerance of the twin, every other
     channel still NaN (nothing written outside the slot); and where the
     slots keep the conv on the same tiles (16-byte runs: both slots'
     channels start and step in 8s, or a conv that is not staged either
     way) the same bits as its own dense conv and add: only the addresses
     move. */
static float *slot_channels(const float *buf, int B, int ctot, int c0, int C, int HW, int *outside_written) {
    float *v = (float *)malloc((size_t)B * C * HW * sizeof(float));
    *outside_written = 0;
    for (int n = 0; n < B; n++)
        for (int c = 0; c < ctot; c++) {
            const float *p = buf + ((size_t)n * ctot + c) * HW;
            if (c >= c0 && c < c0 + C) memcpy(v + ((size_t)n * C + c - c0) * HW, p, HW * sizeof(float));
            else for (int i = 0; i < HW; i++) *outside_written += !isnan(p[i]);
        }
    return v;
}
static void test_conv_slots(yolo_precision store, yolo_precision prec, int B, int C1, int H, int W, int C2, int k, int s,
                            int g, int xc0, int xtot, int yc0, int ytot, int shortcut) {
    char name[128];
    snprintf(name, sizeof name, "slots %s%s%s %dx%d s%d g%d B%d x %d..%d/%d y %d..%d/%d%s", yolo_precision_name(store),
             prec != store ? " products " : "", prec != store ? yolo_precision_name(prec) : "", k, k, s, g, B, xc0, xc0 + C1,
             xtot, yc0, yc0 + C2, ytot, shortcut ? " +r" : "");
    int Ho = (H + 2 * (k / 2) - k) / s + 1, Wo = (W + 2 * (k / 2) - k) / s + 1, P = Ho * Wo;
    size_t nw = (size_t)C2 * (C1 / g) * k * k, ny = (size_t)B * C2 * P, nbuf = (size_t)B * ytot * P;
    pair xbuf = mk_stored(store, B, xtot, H, W, -1, 1), ybuf = mk_stored(store, B, ytot, Ho, Wo, 0, 1);
    pair x = mk_stored(store, B, C1, H, W, 0, 1), y = mk_stored(store, B, C2, Ho, Wo, 0, 1);
    pair r = mk_stored(store, B, C2, Ho, Wo, -1, 1);
    yolo_cpu.concat(&xbuf.h, xc0, &x.h, 0, C1);   /* the slot's channels as a tensor of their own */
    G->concat(&xbuf.d, xc0, &x.d, 0, C1);
    yolo_tensor xs_h, xs_d, ys_h, ys_d;
    memset(&xs_h, 0, sizeof xs_h); memset(&xs_d, 0, sizeof xs_d); memset(&ys_h, 0, sizeof ys_h); memset(&ys_d, 0, sizeof ys_d);
    yolo_tensor_slot(&yolo_cpu, &xs_h, &xbuf.h, xc0, C1); yolo_tensor_slot(G, &xs_d, &xbuf.d, xc0, C1);
    yolo_tensor_slot(&yolo_cpu, &ys_h, &ybuf.h, yc0, C2); yolo_tensor_slot(G, &ys_d, &ybuf.d, yc0, C2);
    float *w = rnd(nw, -0.3f, 0.3f), *b = rnd(C2, -1, 1), *w_d = todev(w, nw), *b_d = todev(b, C2);
    /* the references: dense conv, then the add */
    yolo_cpu.conv2d_forward(&x.h, w, b, NULL, C2, k, s, g, 1, NULL, prec, &y.h);
    G->conv2d_forward(&x.d, w_d, b_d, NULL, C2, k, s, g, 1, NULL, prec, &y.d);
    if (shortcut) { yolo_cpu.add(&y.h, &r.h, &y.h); G->add(&y.d, &r.d, &y.d); }
    /* the slots */
    fill_nan(ybuf.h.data, nbuf);
    poison_stored(&ybuf);
    yolo_cpu.conv2d_forward(&xs_h, w, b, NULL, C2, k, s, g, 1, shortcut ? &r.h : NULL, prec, &ys_h);
    G->conv2d_forward(&xs_d, w_d, b_d, NULL, C2, k, s, g, 1, shortcut ? &r.d : NULL, prec, &ys_d);
    int out_h, out_d;
    float *twin = slot_channels(ybuf.h.data, B, ytot, yc0, C2, P, &out_h);
    float *gbuf = stored_values(&ybuf), *gpu = slot_channels(gbuf, B, ytot, yc0, C2, P, &out_d), *dense = stored_values(&y);
    int twin_same = !memcmp(twin, y.h.data, ny * sizeof(float)) && !out_h;
    if (twin_same) g_pass++; else g_fail++;
    printf("  %-34s twin: = dense, bit for bit; outside untouched  %s\n", name, twin_same ? "ok" : "FAIL");
    float *gpu_d = todev(gpu, ny);
    check(name, "vs twin", y.h.data, gpu_d, ny, store == YOLO_FP32 ? 1e-5 : store == YOLO_BF16 ? 0x1p-9 : 0x1p-12);
    if (!out_d) g_pass++; else g_fail++;
    printf("  %-34s GPU: %d values written outside the slot  %s\n", name, out_d, out_d ? "FAIL" : "ok");
    int staged = prec != YOLO_FP32 && (C1 / g) % 8 == 0 && (C2 / g) % 8 == 0;
    int in8s = xc0 % 8 == 0 && xtot % 8 == 0 && yc0 % 8 == 0 && ytot % 8 == 0;
    if (!staged || in8s) {
        int same = !memcmp(gpu, dense, ny * sizeof(float));
        if (same) g_pass++; else g_fail++;
        printf("  %-34s GPU: = dense conv%s, bit for bit  %s\n", name, shortcut ? " and add" : "", same ? "ok" : "FAIL");
    }
    free(twin); free(gbuf); free(gpu); free(dense); free(w); free(b);
    G->release(gpu_d); G->release(w_d); G->release(b_d);
    yolo_tensor_free(&yolo_cpu, &xs_h); yolo_tensor_free(G, &xs_d); yolo_tensor_free(&yolo_cpu, &ys_h); yolo_tensor_free(G, &ys_d);
    drop(&xbuf); drop(&ybuf); drop(&x); drop(&y); drop(&r);
}

/* the max pool from and into slots (a folded SPPELAN's chain, ADown's second half): exact, so the
   GPU's slot channels must be the twin's bits, and nothing outside the slot written on either side */
static void test_maxpool_slots(yolo_precision store, int B, int C, int H, int W, int k, int s, int pad, int xc0, int xtot,
                               int yc0, int ytot) {
    char name[128];
    snprintf(name, sizeof name, "maxpool slots %s %dx%d s%d B%d x %d..%d/%d y %d..%d/%d", yolo_precision_name(store), k, k, s,
             B, xc0, xc0 + C, xtot, yc0, yc0 + C, ytot);
    int Ho = (H + 2 * pad - k) / s + 1, Wo = (W + 2 * pad - k) / s + 1, P = Ho * Wo;
    size_t ny = (size_t)B * C * P;
    pair xbuf = mk_stored(store, B, xtot, H, W, -1, 1), ybuf = mk_stored(store, B, ytot, Ho, Wo, 0, 1);
    pair x = mk_stored(store, B, C, H, W, 0, 1), y = mk_stored(store, B, C, Ho, Wo, 0, 1);
    yolo_cpu.concat(&xbuf.h, xc0, &x.h, 0, C);
    yolo_tensor xs_h, xs_d, ys_h, ys_d;
    memset(&xs_h, 0, sizeof xs_h); memset(&xs_d, 0, sizeof xs_d); memset(&ys_h, 0, sizeof ys_h); memset(&ys_d, 0, sizeof ys_d);
    yolo_tensor_slot(&yolo_cpu, &xs_h, &xbuf.h, xc0, C); yolo_tensor_slot(G, &xs_d, &xbuf.d, xc0, C);
    yolo_tensor_slot(&yolo_cpu, &ys_h, &ybuf.h, yc0, C); yolo_tensor_slot(G, &ys_d, &ybuf.d, yc0, C);
    yolo_cpu.maxpool_forward(&x.h, k, s, pad, &y.h);   /* the reference: the slot's channels as a tensor of their own */
    fill_nan(ybuf.h.data, (size_t)B * ytot * P);
    poison_stored(&ybuf);
    yolo_cpu.maxpool_forward(&xs_h, k, s, pad, &ys_h);
    G->maxpool_forward(&xs_d, k, s, pad, &ys_d);
    int out_h, out_d;
    float *twin = slot_channels(ybuf.h.data, B, ytot, yc0, C, P, &out_h);
    float *gbuf = stored_values(&ybuf), *gpu = slot_channels(gbuf, B, ytot, yc0, C, P, &out_d);
    int ok = !memcmp(twin, y.h.data, ny * sizeof(float)) && !memcmp(gpu, y.h.data, ny * sizeof(float)) && !out_h && !out_d;
    if (ok) g_pass++; else g_fail++;
    printf("  %-34s twin and GPU = dense, bit for bit; outside untouched  %s\n", name, ok ? "ok" : "FAIL");
    free(twin); free(gbuf); free(gpu);
    yolo_tensor_free(&yolo_cpu, &xs_h); yolo_tensor_free(G, &xs_d); yolo_tensor_free(&yolo_cpu, &ys_h); yolo_tensor_free(G, &ys_d);
    drop(&xbuf); drop(&ybuf); drop(&x); drop(&y);
}

/* A bf16 (half) training pass stores what it passes between ops
   (yolo_tensor.store) and keeps its gradients float32 NCHW. Its ops
   against the twin, each run twice for the same bits, outputs poisoned:
   a conv reads its stored input x in the forward and again for the weight
   gradient (no staging copy of x), and writes z into the store; BatchNorm
   (+ SiLU) reads the stored z, writes the stored u, and its backward reads
   z beside dy and writes dz over z; RepConvN's SiLU of two stored branches; max pool's backward
   finds each window's winner in the stored x. Stored results within one
   unit of the store's last place where sums run in another order (2^-9
   bf16, 2^-12 half, as test_conv_stored), float32 results as their float32
   tests. */
static int same_bits(const char *name, float **first, float **now, const size_t *n, int k) {
    int same = 1;
    for (int t = 0; t < k; t++) { same &= !memcmp(first[t], now[t], n[t] * sizeof(float)); free(first[t]); free(now[t]); }
    if (same) g_pass++; else g_fail++;
    printf("  %-34s run twice: the same bits  %s\n", name, same ? "ok" : "FAIL");
    return same;
}
static double store_tol(yolo_precision prec) { return prec == YOLO_BF16 ? 0x1p-9 : 0x1p-12; }

/* ... and its backward from dY stored (a BatchNorm backward's dL/dz over z, read in place by the
   staged products or value by value), which must give the same bits as the same values handed over
   as float32 (staged by the conv: rounding them again changes nothing); dx_add 0: dx assigned over NaN,
   as test_conv_dx; and with the weights staged for the step beforehand (stage_train_weights, both
   forms), the same bits as staged by the conv at the call */
/* stage_train_weights on many convs at once (several launches a form, each job found by bisection)
   gives the bytes of the same convs staged one at a time */
static void test_stage_train_many(yolo_precision prec) {
    if (!G->stage_train_weights) return;
    enum { N = 70 };
    static const int shapes[5][5] = { { 48, 16, 3, 2, 4 }, { 80, 72, 3, 1, 1 }, { 24, 16, 1, 1, 1 }, { 24, 16, 3, 2, 1 },
                                      { 32, 8, 1, 2, 1 } };   /* c2, cin, k, s, g */
    yolo_stage_conv all[N], one[N];
    float *w_d[N];
    size_t nv[N];
    for (int i = 0; i < N; i++) {
        const int *sh = shapes[i % 5];
        nv[i] = (size_t)sh[0] * sh[1] * sh[2] * sh[2];
        float *w = rnd(nv[i], -1, 1);
        w_d[i] = todev(w, nv[i]);
        free(w);
        yolo_stage_conv a = { w_d[i], G->alloc_values(nv[i], prec), G->alloc_values(nv[i], prec), sh[0], sh[1], sh[2], sh[3],
                              sh[4] };
        yolo_stage_conv b = a;
        b.fwd = G->alloc_values(nv[i], prec); b.bwd = G->alloc_values(nv[i], prec);
        all[i] = a; one[i] = b;
    }
    G->stage_train_weights(all, N, prec);
    for (int i = 0; i < N; i++) G->stage_train_weights(&one[i], 1, prec);
    int same = 1;
    for (int i = 0; i < N; i++)
        for (int f = 0; f < 2; f++) {
            unsigned char *x = (unsigned char *)malloc(2 * nv[i]), *y = (unsigned char *)malloc(2 * nv[i]);
            G->download(x, f ? all[i].bwd : all[i].fwd, 2 * nv[i]);
            G->download(y, f ? one[i].bwd : one[i].fwd, 2 * nv[i]);
            same &= !memcmp(x, y, 2 * nv[i]);
            free(x); free(y);
        }
    for (int i = 0; i < N; i++) {
        G->release(all[i].fwd); G->release(all[i].bwd); G->release(one[i].fwd); G->release(one[i].bwd);
        G->release(w_d[i]);
    }
    if (same) g_pass++; else g_fail++;
    printf("  %-34s %d convs at once = one at a time, bit for bit  %s\n", "stage_train_weights", N, same ? "ok" : "FAIL");
}

static void test_conv_train_stored(yolo_precision prec, int B, int C1, int H, int W, int C2, int k, int s, int g, int dx_add) {
    char name[96];
    snprintf(name, sizeof name, "train conv %s %dx%d s%d g%d B%d %dx%dx%d->%d%s", yolo_precision_name(prec), k, k, s, g, B, C1,
             H, W, C2, dx_add ? "" : " dx assign");
    int Ho = (H + 2 * (k / 2) - k) / s + 1, Wo = (W + 2 * (k / 2) - k) / s + 1;
    size_t nw = (size_t)C2 * (C1 / g) * k * k, nx = (size_t)B * C1 * H * W, ny = (size_t)B * C2 * Ho * Wo;
    pair x = mk_stored(prec, B, C1, H, W, -1, 1), y = mk_stored(prec, B, C2, Ho, Wo, 0, 1);
    pair dy = mk_stored(prec, B, C2, Ho, Wo, -1, 1);
    float *w = rnd(nw, -0.3f, 0.3f), *dx = rnd(nx, -1, 1), *dw = rnd(nw, -1, 1);
    if (!dx_add) fill_nan(dx, nx);
    float *w_d = todev(w, nw), *dx0_d = todev(dx, nx), *dw0_d = todev(dw, nw);
    float *dx_d = (float *)G->alloc(nx * sizeof(float)), *dw_d = (float *)G->alloc(nw * sizeof(float));
    yolo_tensor dyf_d = dy.d;   /* the same values as float32 NCHW */
    dyf_d.data = todev(dy.h.data, ny); dyf_d.store = YOLO_FP32;
    float *first[3] = { NULL, NULL, NULL };
    size_t n[3] = { ny, nx, nw };
    yolo_cpu.conv2d_forward(&x.h, w, NULL, NULL, C2, k, s, g, 0, NULL, prec, &y.h);
    yolo_dx dxr_h = yolo_dx_whole(dx, C1, dx_add), dxr_d = yolo_dx_whole(dx_d, C1, dx_add);
    yolo_cpu.conv2d_backward(&x.h, w, NULL, &dy.h, C2, k, s, g, prec, &dxr_h, dw, NULL);
    void *ws_fwd = G->alloc_values(nw, prec), *ws_bwd = G->alloc_values(nw, prec);
    yolo_stage_conv job = { w_d, ws_fwd, ws_bwd, C2, C1 / g, k, s, g };
    if (G->stage_train_weights) G->stage_train_weights(&job, 1, prec);
    for (int run = 0; run < (G->stage_train_weights ? 4 : 3); run++) {
        poison_stored(&y);
        G->copy(dx_d, dx0_d, nx * sizeof(float));
        G->copy(dw_d, dw0_d, nw * sizeof(float));
        G->conv2d_forward(&x.d, w_d, NULL, run == 3 ? ws_fwd : NULL, C2, k, s, g, 0, NULL, prec, &y.d);
        G->conv2d_backward(&x.d, w_d, run == 3 ? ws_bwd : NULL, run == 2 ? &dyf_d : &dy.d, C2, k, s, g, prec, &dxr_d, dw_d,
                           NULL);
        float *now[3] = { stored_values(&y), tohost(dx_d, nx), tohost(dw_d, nw) };
        if (run == 0) {
            check_stored(name, "forward", &y, store_tol(prec));
            check(name, "dx", dx, dx_d, nx, 1e-5);
            check(name, "dw", dw, dw_d, nw, fmax(1e-5, sqrt((double)B * Ho * Wo) * 0x1p-24));
            memcpy(first, now, sizeof first);
            continue;
        }
        int same = 1;   /* run 1: the same again; run 2: dY as float32, the same bits; run 3: the step's staged weights */
        for (int t = 0; t < 3; t++) { same &= !memcmp(first[t], now[t], n[t] * sizeof(float)); free(now[t]); }
        if (same) g_pass++; else g_fail++;
        static const char *const what[4] = { "", "run twice: the same bits", "dY stored = dY float32, bit for bit",
                                             "weights staged for the step, bit for bit" };
        printf("  %-34s %s  %s\n", name, what[run], same ? "ok" : "FAIL");
    }
    G->release(ws_fwd); G->release(ws_bwd);
    for (int t = 0; t < 3; t++) free(first[t]);
    drop(&x); drop(&y); drop(&dy);
    free(w); free(dx); free(dw);
    G->release(w_d); G->release(dyf_d.data); G->release(dx0_d); G->release(dw0_d); G->release(dx_d); G->release(dw_d);
}

/* A conv that reads a concatenation writes dL/dx straight into its parts'
   gradients (yolo_dx's runs: C1 cut into nr runs of c[i] channels, each
   added to, or assigned where add[i] is 0: NaN before on both sides); with
   wider (not NULL), run i is the last c[i] of wider[i] channels of its
   gradient (a split's half), whose other channels must keep their values.
   The CPU twin's runs must equal its own whole dL/dx, each run's old
   values added where it adds, to the last bit (the same adds); the GPU's
   runs the twin's within the convs' 1e-5, and the same bits twice. */
static void test_conv_runs(yolo_precision prec, int B, int H, int W, int C2, int k, int s, int g, int nr, const int *c,
                           const int *add, const int *wider) {
    char name[96];
    int C1 = 0, Ho = (H + 2 * (k / 2) - k) / s + 1, Wo = (W + 2 * (k / 2) - k) / s + 1;
    for (int i = 0; i < nr; i++) C1 += c[i];
    snprintf(name, sizeof name, "conv dx in %d runs%s %s %dx%d s%d g%d B%d %dx%dx%d->%d", nr, wider ? " (windows)" : "",
             yolo_precision_name(prec), k, k, s, g, B, C1, H, W, C2);
    size_t nw = (size_t)C2 * (C1 / g) * k * k, nx = (size_t)B * C1 * H * W, HW = (size_t)H * W;
    pair x = mk_stored(prec, B, C1, H, W, -1, 1), dy = mk_stored(prec, B, C2, Ho, Wo, -1, 1);
    float *w = rnd(nw, -0.3f, 0.3f), *dw = rnd(nw, -1, 1), *whole = (float *)malloc(nx * sizeof(float));
    float *w_d = todev(w, nw), *dw_d = (float *)G->alloc(nw * sizeof(float));
    float *old[YOLO_MAX_PARTS], *hr[YOLO_MAX_PARTS], *first[YOLO_MAX_PARTS];
    size_t nr_[YOLO_MAX_PARTS];
    yolo_dx dh, dd, dwhole = yolo_dx_whole(whole, C1, 0);
    memset(&dh, 0, sizeof dh); memset(&dd, 0, sizeof dd);
    dh.n = dd.n = nr;
    for (int i = 0; i < nr; i++) {
        int cd = wider ? wider[i] : c[i], c0 = cd - c[i];
        nr_[i] = (size_t)B * cd * HW;
        old[i] = rnd(nr_[i], -1, 1);
        for (int b = 0; b < B && !add[i]; b++) fill_nan(old[i] + (b * (size_t)cd + c0) * HW, c[i] * HW);
        hr[i] = (float *)malloc(nr_[i] * sizeof(float)); memcpy(hr[i], old[i], nr_[i] * sizeof(float));
        dh.g[i] = hr[i]; dd.g[i] = (float *)G->alloc(nr_[i] * sizeof(float));
        dh.c[i] = dd.c[i] = c[i]; dh.cd[i] = dd.cd[i] = cd; dh.c0[i] = dd.c0[i] = c0; dh.add[i] = dd.add[i] = add[i];
    }
    yolo_cpu.conv2d_backward(&x.h, w, NULL, &dy.h, C2, k, s, g, prec, &dh, dw, NULL);
    yolo_cpu.conv2d_backward(&x.h, w, NULL, &dy.h, C2, k, s, g, prec, &dwhole, dw, NULL);
    int same = 1;   /* the twin: run i's window = old + its channels of the whole dL/dx (or 0 + them), the rest old */
    for (int i = 0, ch = 0; i < nr; ch += c[i++])
        for (int b = 0; b < B; b++)
            for (int cc = 0; cc < dh.cd[i]; cc++)
                for (size_t p = 0; p < HW; p++) {
                    size_t at = (b * (size_t)dh.cd[i] + cc) * HW + p;
                    int in = cc >= dh.c0[i];
                    float v = !in ? old[i][at]
                                  : (add[i] ? old[i][at] : 0.f) + whole[(b * (size_t)C1 + ch + cc - dh.c0[i]) * HW + p];
                    same &= !memcmp(&v, &hr[i][at], sizeof v);
                }
    if (same) g_pass++; else g_fail++;
    printf("  %-34s the twin's runs = its whole dL/dx, bit for bit  %s\n", name, same ? "ok" : "FAIL");
    for (int run = 0; run < 2; run++) {
        for (int i = 0; i < nr; i++) G->upload(dd.g[i], old[i], nr_[i] * sizeof(float));
        G->conv2d_backward(&x.d, w_d, NULL, &dy.d, C2, k, s, g, prec, &dd, dw_d, NULL);
        same = 1;
        for (int i = 0; i < nr; i++) {
            float *now = tohost(dd.g[i], nr_[i]);
            if (run == 0) { check(name, "dx run", hr[i], dd.g[i], nr_[i], 1e-5); first[i] = now; continue; }
            same &= !memcmp(first[i], now, nr_[i] * sizeof(float));
            free(first[i]); free(now);
        }
        if (run == 0) continue;
        if (same) g_pass++; else g_fail++;
        printf("  %-34s run twice: the same bits  %s\n", name, same ? "ok" : "FAIL");
    }
    for (int i = 0; i < nr; i++) { free(old[i]); free(hr[i]); G->release(dd.g[i]); }
    drop(&x); drop(&dy);
    free(w); free(dw); free(whole);
    G->release(w_d); G->release(dw_d);
}

static void test_bn_stored(yolo_precision prec, int B, int C, int H, int W, int act, int synced) {
    char name[96];
    snprintf(name, sizeof name, "train batchnorm%s%s %s B%d %dx%dx%d", act ? "+silu" : "", synced ? " sync-bn" : "",
             yolo_precision_name(prec), B, C, H, W);
    const yolo_bn_group *gh = synced ? &TWIN_HOST : NULL, *gd = synced ? &TWIN_DEVICE : NULL;
    size_t nz = (size_t)B * C * H * W;
    pair z = mk_stored(prec, B, C, H, W, -2, 3), u = mk_stored(prec, B, C, H, W, 0, 1);
    float *gamma = rnd(C, 0.5f, 1.5f), *beta = rnd(C, -0.5f, 0.5f), *rm = rnd(C, -1, 1), *rv = rnd(C, 0.5f, 2);
    float *mean = rnd(C, 0, 1), *invstd = rnd(C, 0, 1), *dg = rnd(C, -1, 1), *dbt = rnd(C, -1, 1), *dy = rnd(nz, -1, 1);
    float *gamma_d = todev(gamma, C), *beta_d = todev(beta, C), *rm0_d = todev(rm, C), *rv0_d = todev(rv, C);
    float *dg0_d = todev(dg, C), *dbt0_d = todev(dbt, C), *dy_d = todev(dy, nz);
    float *rm_d = (float *)G->alloc(C * sizeof(float)), *rv_d = (float *)G->alloc(C * sizeof(float));
    float *dg_d = (float *)G->alloc(C * sizeof(float)), *dbt_d = (float *)G->alloc(C * sizeof(float));
    float *mean_d = poisoned(C), *invstd_d = poisoned(C), *z0_d = (float *)G->alloc(nz * sizeof(float));
    float *first[6] = { NULL };
    size_t n[6] = { nz, (size_t)C, (size_t)C, nz, (size_t)C, (size_t)C };
    G->copy(z0_d, z.d.data, nz * sizeof(float));   /* z, for each run: the backward writes dz over it */
    yolo_cpu.bn_apply(&z.h, gamma, beta, rm, NULL, rv, 1e-3, act, &u.h);   /* eval: from the running statistics */
    poison_stored(&u);
    G->bn_apply(&z.d, gamma_d, beta_d, rm0_d, NULL, rv0_d, 1e-3, act, &u.d);
    check_stored(name, "eval", &u, store_tol(prec));
    yolo_cpu.bn_train_forward(&z.h, gamma, beta, mean, invstd, rm, rv, 0.03, 1e-3, act, gh, &u.h);
    yolo_cpu.bn_act_backward(&z.h, dy, gamma, beta, mean, invstd, act, gh, dg, dbt);
    for (int run = 0; run < 2; run++) {
        poison_stored(&u);
        G->copy(z.d.data, z0_d, nz * sizeof(float));
        G->copy(rm_d, rm0_d, C * sizeof(float)); G->copy(rv_d, rv0_d, C * sizeof(float));
        G->copy(dg_d, dg0_d, C * sizeof(float)); G->copy(dbt_d, dbt0_d, C * sizeof(float));
        G->bn_train_forward(&z.d, gamma_d, beta_d, mean_d, invstd_d, rm_d, rv_d, 0.03, 1e-3, act, gd, &u.d);
        if (run == 0) {   /* the backward's remake: u again from the kept statistics, the forward's bits */
            float *fwd = stored_values(&u);
            poison_stored(&u);
            G->bn_apply(&z.d, gamma_d, beta_d, mean_d, invstd_d, NULL, 1e-3, act, &u.d);
            float *again = stored_values(&u), *again_d = todev(again, nz);
            check(name, "remade", fwd, again_d, nz, 0);
            free(fwd); free(again); G->release(again_d);
        }
        G->bn_act_backward(&z.d, dy_d, gamma_d, beta_d, mean_d, invstd_d, act, gd, dg_d, dbt_d);
        float *now[6] = { stored_values(&u), tohost(mean_d, C), tohost(invstd_d, C), stored_values(&z), tohost(dg_d, C),
                          tohost(dbt_d, C) };
        if (run) { same_bits(name, first, now, n, 6); break; }
        check_stored(name, "forward", &u, store_tol(prec));
        check(name, "mean", mean, mean_d, C, 1e-5);
        check(name, "invstd", invstd, invstd_d, C, 1e-5);
        check(name, "run.var", rv, rv_d, C, 1e-5);
        check_stored(name, "dz over z", &z, store_tol(prec));
        check(name, "dgamma", dg, dg_d, C, 1e-4);
        check(name, "dbeta", dbt, dbt_d, C, 1e-4);
        memcpy(first, now, sizeof first);
    }
    drop(&z); drop(&u);
    float *all[] = { gamma, beta, rm, rv, mean, invstd, dg, dbt, dy };
    float *alld[] = { gamma_d, beta_d, rm0_d, rv0_d, dg0_d, dbt0_d, dy_d, rm_d, rv_d, dg_d, dbt_d, mean_d, invstd_d, z0_d };
    for (int i = 0; i < 9; i++) free(all[i]);
    for (int i = 0; i < 14; i++) G->release(alld[i]);
}

/* The assigning form (add 0) of a backward op that writes fresh gradients, as the model's first writer
   calls it: out[k] of n values each are NaN on both sides before; the GPU's must come out free of NaN
   (every value written, none read), as the twin's, and the same bits when run again. op(be, out) runs
   the op on backend be into out. */
typedef void (*assign_op)(const yolo_backend *be, float **out, void *ctx);
static void check_assign(const char *name, const char **what, int k, size_t n, assign_op op, void *ctx, double tol) {
    float *h[2], *d[2], *first[2], *now[2], *nan = (float *)malloc(n * sizeof(float));
    size_t ns[2] = { n, n };
    fill_nan(nan, n);
    for (int t = 0; t < k; t++) { h[t] = (float *)malloc(n * sizeof(float)); memcpy(h[t], nan, n * sizeof(float)); }
    op(&yolo_cpu, h, ctx);
    for (int run = 0; run < 2; run++) {
        for (int t = 0; t < k; t++) d[t] = todev(nan, n);
        op(G, d, ctx);
        for (int t = 0; t < k; t++) {
            if (!run) check(name, what[t], h[t], d[t], n, tol);
            (run ? now : first)[t] = tohost(d[t], n);
            G->release(d[t]);
        }
    }
    same_bits(name, first, now, ns, k);
    for (int t = 0; t < k; t++) free(h[t]);
    free(nan);
}
struct silu_ctx { const float *dy[2]; const yolo_tensor *a[2], *b[2]; };   /* [0] host, [1] device */
static void silu_assign(const yolo_backend *be, float **out, void *ctx) {
    struct silu_ctx *c = (struct silu_ctx *)ctx;
    int i = be != &yolo_cpu;
    be->silu_backward(c->dy[i], c->a[i], c->b[i], out[0], out[1], 0);
}
struct acc_ctx { const float *x[2]; size_t n; };
static void accumulate_assign(const yolo_backend *be, float **out, void *ctx) {
    struct acc_ctx *c = (struct acc_ctx *)ctx;
    be->accumulate(out[0], c->x[be != &yolo_cpu], c->n, 0);
}
struct pool_ctx { const yolo_tensor *y[2]; int H, W; };
static void avgpool_assign(const yolo_backend *be, float **out, void *ctx) {
    struct pool_ctx *c = (struct pool_ctx *)ctx;
    be->avgpool2_backward(c->y[be != &yolo_cpu], out[0], c->H, c->W, 0);
}
struct maxpool_ctx { const yolo_tensor *x[2], *y[2]; int k, s, p; };
static void maxpool_assign(const yolo_backend *be, float **out, void *ctx) {
    struct maxpool_ctx *c = (struct maxpool_ctx *)ctx;
    int i = be != &yolo_cpu;
    be->maxpool_backward(c->x[i], c->k, c->s, c->p, c->y[i], out[0], 0);
}
struct resize_ctx { const yolo_tensor *y[2], *x[2]; };
static void resize_assign(const yolo_backend *be, float **out, void *ctx) {
    struct resize_ctx *c = (struct resize_ctx *)ctx;
    yolo_tensor x = *c->x[be != &yolo_cpu];
    x.grad = out[0];
    be->resize_backward(c->y[be != &yolo_cpu], &x, 0, 0);
}
struct copy_ctx { const float *src[2]; int src_c, sc, C, B, HW; };
static void copy_assign(const yolo_backend *be, float **out, void *ctx) {   /* all C channels of dst [B, C, HW] */
    struct copy_ctx *c = (struct copy_ctx *)ctx;
    be->copy_channels(c->src[be != &yolo_cpu], c->src_c, c->sc, out[0], c->C, 0, c->B, c->C, c->HW, 0);
}

/* RepConvN's SiLU of two stored branches, and max pool's backward from a stored x */
static void test_elementwise_stored(yolo_precision prec, int B, int C, int H, int W) {
    char name[96];
    snprintf(name, sizeof name, "silu(a + b) %s B%d %dx%dx%d", yolo_precision_name(prec), B, C, H, W);
    size_t n = (size_t)B * C * H * W;
    pair a = mk_stored(prec, B, C, H, W, -4, 4), b = mk_stored(prec, B, C, H, W, -4, 4), y = mk_stored(prec, B, C, H, W, 0, 1);
    float *dy = rnd(n, -1, 1), *da = rnd(n, -1, 1), *db = rnd(n, -1, 1);
    float *dy_d = todev(dy, n), *da_d = todev(da, n), *db_d = todev(db, n);
    yolo_cpu.silu_forward(&a.h, &b.h, &y.h);
    poison_stored(&y);
    G->silu_forward(&a.d, &b.d, &y.d);
    check_stored(name, "forward", &y, store_tol(prec));
    yolo_cpu.silu_backward(dy, &a.h, &b.h, da, db, 1);
    G->silu_backward(dy_d, &a.d, &b.d, da_d, db_d, 1);
    check(name, "da", da, da_d, n, 1e-5);
    check(name, "db", db, db_d, n, 1e-5);
    struct silu_ctx sc = { { dy, dy_d }, { &a.h, &a.d }, { &b.h, &b.d } };
    const char *dadb[2] = { "da assign", "db assign" };
    check_assign(name, dadb, 2, n, silu_assign, &sc, 1e-5);
    static const int ks[2][3] = { { 3, 2, 1 }, { 5, 1, 2 } };
    for (int v = 0; v < 2; v++) {
        int k = ks[v][0], s = ks[v][1], p = ks[v][2];
        pair mp = mk(B, C, (H + 2 * p - k) / s + 1, (W + 2 * p - k) / s + 1, 0, 1);   /* its gradient */
        snprintf(name, sizeof name, "maxpool %dx%d s%d p%d %s B%d %dx%dx%d", k, k, s, p, yolo_precision_name(prec), B, C, H, W);
        G->upload(da_d, da, n * sizeof(float));
        yolo_cpu.maxpool_backward(&a.h, k, s, p, &mp.h, da, 1); G->maxpool_backward(&a.d, k, s, p, &mp.d, da_d, 1);
        check(name, "dx", da, da_d, n, 0);   /* the same winners, gathered in the CPU's order: same bits */
        struct maxpool_ctx mc = { { &a.h, &a.d }, { &mp.h, &mp.d }, k, s, p };
        const char *dx_[1] = { "dx assign" };
        check_assign(name, dx_, 1, n, maxpool_assign, &mc, 0);
        drop(&mp);
    }
    drop(&a); drop(&b); drop(&y);
    free(dy); free(da); free(db);
    G->release(dy_d); G->release(da_d); G->release(db_d);
}

static void test_elementwise(size_t n) {
    float *a = rnd(n, -4, 4), *b = rnd(n, -4, 4), *dy = rnd(n, -1, 1), *da = rnd(n, -1, 1), *db = rnd(n, -1, 1);
    float *a_d = todev(a, n), *b_d = todev(b, n), *dy_d = todev(dy, n), *da_d = todev(da, n), *db_d = todev(db, n);
    float *y = (float *)malloc(n * sizeof(float)), *y_d = poisoned(n);
    yolo_tensor ta = { .n = 1, .c = 1, .h = 1, .w = (int)n, .data = a }, tb = ta, ty = ta, ta_d = ta, tb_d = ta, ty_d = ta;
    tb.data = b; ty.data = y; ta_d.data = a_d; tb_d.data = b_d; ty_d.data = y_d;
    yolo_cpu.silu_forward(&ta, &tb, &ty); G->silu_forward(&ta_d, &tb_d, &ty_d);
    check("silu(a + b)", "forward", y, y_d, n, 1e-5);
    yolo_cpu.silu_backward(dy, &ta, &tb, da, db, 1); G->silu_backward(dy_d, &ta_d, &tb_d, da_d, db_d, 1);
    check("silu(a + b)", "da", da, da_d, n, 1e-5);
    check("silu(a + b)", "db", db, db_d, n, 1e-5);
    yolo_cpu.add(&ta, &tb, &ty); G->add(&ta_d, &tb_d, &ty_d);
    check("add", "forward", y, y_d, n, 1e-6);
    yolo_cpu.accumulate(da, b, n, 1); G->accumulate(da_d, b_d, n, 1);
    check("accumulate", "forward", da, da_d, n, 1e-6);
    struct silu_ctx sc = { { dy, dy_d }, { &ta, &ta_d }, { &tb, &tb_d } };
    struct acc_ctx ac = { { b, b_d }, n };
    const char *dadb[2] = { "da assign", "db assign" }, *y_[1] = { "y assign" };
    check_assign("silu(a + b)", dadb, 2, n, silu_assign, &sc, 1e-5);
    check_assign("accumulate", y_, 1, n, accumulate_assign, &ac, 0);
    free(a); free(b); free(dy); free(da); free(db); free(y);
    G->release(a_d); G->release(b_d); G->release(dy_d); G->release(da_d); G->release(db_d); G->release(y_d);
}

static void test_pools(int B, int C, int H, int W) {
    char name[96];
    pair x = mk(B, C, H, W, -3, 3);
    pair a = mk(B, C, H - 1, W - 1, 0, 1);
    snprintf(name, sizeof name, "avgpool 2x2 s1 B%d %dx%dx%d", B, C, H, W);
    poison(&a);
    yolo_cpu.avgpool2_forward(&x.h, &a.h); G->avgpool2_forward(&x.d, &a.d);
    check(name, "forward", a.h.data, a.d.data, yolo_numel(&a.h), 1e-6);
    yolo_cpu.avgpool2_backward(&a.h, x.h.grad, H, W, 1); G->avgpool2_backward(&a.d, x.d.grad, H, W, 1);
    check(name, "dx", x.h.grad, x.d.grad, yolo_numel(&x.h), 0);   /* the CPU's adds in its order: the same bits */
    struct pool_ctx pc = { { &a.h, &a.d }, H, W };
    const char *dx_[1] = { "dx assign" };
    check_assign(name, dx_, 1, yolo_numel(&x.h), avgpool_assign, &pc, 0);
    static const int ks[2][3] = { { 3, 2, 1 }, { 5, 1, 2 } };
    for (int v = 0; v < 2; v++) {
        int k = ks[v][0], s = ks[v][1], p = ks[v][2];
        int Ho = (H + 2 * p - k) / s + 1, Wo = (W + 2 * p - k) / s + 1;
        pair y = mk(B, C, Ho, Wo, 0, 1);
        snprintf(name, sizeof name, "maxpool %dx%d s%d p%d B%d %dx%dx%d", k, k, s, p, B, C, H, W);
        poison(&y);
        yolo_cpu.maxpool_forward(&x.h, k, s, p, &y.h); G->maxpool_forward(&x.d, k, s, p, &y.d);
        check(name, "forward", y.h.data, y.d.data, yolo_numel(&y.h), 1e-6);
        same_grad(&x);
        yolo_cpu.maxpool_backward(&x.h, k, s, p, &y.h, x.h.grad, 1); G->maxpool_backward(&x.d, k, s, p, &y.d, x.d.grad, 1);
        check(name, "dx", x.h.grad, x.d.grad, yolo_numel(&x.h), 0);   /* gathered in the CPU's order: same bits */
        struct maxpool_ctx mc = { { &x.h, &x.d }, { &y.h, &y.d }, k, s, p };
        const char *dx_[1] = { "dx assign" };
        check_assign(name, dx_, 1, yolo_numel(&x.h), maxpool_assign, &mc, 0);
        drop(&y);
    }
    /* nearest resize of channels [1, C) to (2H+1) x 3W, added; and channel copies */
    pair r = mk(B, C - 1, 2 * H + 1, 3 * W, -1, 1);
    snprintf(name, sizeof name, "resize chunk B%d %dx%dx%d", B, C, H, W);
    yolo_cpu.resize_forward(&x.h, 1, 1, &r.h); G->resize_forward(&x.d, 1, 1, &r.d);
    check(name, "forward", r.h.data, r.d.data, yolo_numel(&r.h), 1e-6);
    poison(&r);
    yolo_cpu.resize_forward(&x.h, 1, 0, &r.h); G->resize_forward(&x.d, 1, 0, &r.d);
    check(name, "into", r.h.data, r.d.data, yolo_numel(&r.h), 0);
    same_grad(&x);
    yolo_cpu.resize_backward(&r.h, &x.h, 1, 1); G->resize_backward(&r.d, &x.d, 1, 1);
    check(name, "dx", x.h.grad, x.d.grad, yolo_numel(&x.h), 0);   /* same order as the CPU: same bits */
    pair ra = mk(B, C, 2 * H + 1, 3 * W, -1, 1);   /* of all C channels: its backward writes all of dX */
    struct resize_ctx rc = { { &ra.h, &ra.d }, { &x.h, &x.d } };
    check_assign(name, dx_, 1, yolo_numel(&x.h), resize_assign, &rc, 0);
    drop(&ra);
    pair c = mk(B, C + 3, H, W, -1, 1);
    snprintf(name, sizeof name, "copy channels B%d %dx%dx%d", B, C, H, W);
    yolo_cpu.copy_channels(x.h.data, C, 1, c.h.data, C + 3, 2, B, C - 1, H * W, 0);
    G->copy_channels(x.d.data, C, 1, c.d.data, C + 3, 2, B, C - 1, H * W, 0);
    check(name, "copy", c.h.data, c.d.data, yolo_numel(&c.h), 0);
    yolo_cpu.copy_channels(x.h.data, C, 0, c.h.data, C + 3, 3, B, C, H * W, 1);
    G->copy_channels(x.d.data, C, 0, c.d.data, C + 3, 3, B, C, H * W, 1);
    check(name, "accumulate", c.h.data, c.d.data, yolo_numel(&c.h), 1e-6);
    same_grad(&x);
    struct copy_ctx cc = { { x.h.grad, x.d.grad }, C, 1, C - 1, B, H * W };   /* a split's gradient: all of dst */
    const char *dst_[1] = { "dst assign" };
    check_assign(name, dst_, 1, (size_t)B * (C - 1) * H * W, copy_assign, &cc, 0);
    drop(&x); drop(&a); drop(&r); drop(&c);
}

/* one optimizer step over every value, each in its group (yolo_optim.group): runs of awkward lengths of
   the three trained groups (lr 0.01, 0.02, 0.005; decay 0.05 on the first only) and of values not
   trained (running statistics, frozen), which must come out of both backends untouched, bit for bit.
   Lion moves every trained value by exactly its group's lr, after decay: both sides are checked for it. */
static int untouched(const unsigned char *group, const float *before, const float *after, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (group[i] > YOLO_P_BIAS && memcmp(&before[i], &after[i], sizeof(float))) return 0;
    return 1;
}
static void test_optim(size_t n) {
    static const char *names[4] = { "sgd nesterov", "adam", "adamw amsgrad", "lion" };
    static const unsigned char kinds[5] = { YOLO_P_WEIGHT, YOLO_P_BN_WEIGHT, YOLO_P_BIAS, YOLO_P_RUNNING_MEAN, YOLO_P_FIXED };
    unsigned char *group = (unsigned char *)malloc(n);
    size_t counts[5] = { 0, 0, 0, 0, 0 };
    for (size_t i = 0; i < n;) {   /* runs of 1 to 300 values, as a model's tensors */
        size_t len = 1 + yolo_rng_u64(&g_rng) % 300;
        int k = (int)(yolo_rng_u64(&g_rng) % 5);
        for (; len-- && i < n; i++) { group[i] = kinds[k]; counts[k]++; }
    }
    unsigned char *group_d = (unsigned char *)G->alloc(n);
    G->upload(group_d, group, n);
    for (int kind = 0; kind < 4; kind++) {
        float *w = rnd(n, -1, 1), *g = rnd(n, -1, 1), *m = rnd(n, -0.1f, 0.1f), *v = rnd(n, 0, 0.01f), *vm = rnd(n, 0, 0.01f);
        float *w_d = todev(w, n), *g_d = todev(g, n), *m_d = todev(m, n), *v_d = todev(v, n), *vm_d = todev(vm, n);
        float *before[4] = { (float *)malloc(n * 4), (float *)malloc(n * 4), (float *)malloc(n * 4), (float *)malloc(n * 4) };
        memcpy(before[0], w, n * 4); memcpy(before[1], m, n * 4); memcpy(before[2], v, n * 4); memcpy(before[3], vm, n * 4);
        yolo_update u = { (yolo_optim_kind)kind, { 0.01, 0.02, 0.005 }, 0.05, 0.937, 0.999, 1e-8,
                          1 - 0.937 * 0.937, 1 - 0.999 * 0.999, 0.7 };
        yolo_cpu.optim_update(&u, group, w, g, m, v, kind == 2 ? vm : NULL, n);
        G->optim_update(&u, group_d, w_d, g_d, m_d, v_d, kind == 2 ? vm_d : NULL, n);
        check(names[kind], "weights", w, w_d, n, 1e-6);
        if (kind == 0) {   /* the EMA's update on the same arrays */
            yolo_cpu.lerp(m, w, 0.9997, n); G->lerp(m_d, w_d, 0.9997, n);
            check("ema lerp", "average", m, m_d, n, 1e-6);
        }
        check(names[kind], "state", m, m_d, n, 1e-6);
        if (kind == 1 || kind == 2) check(names[kind], "v", v, v_d, n, 1e-6);
        if (kind == 2) check(names[kind], "v max", vm, vm_d, n, 1e-6);
        /* the values of no trained group, on both sides (but m after the EMA, which moves every value) */
        float *host[4] = { w, m, v, vm }, *after[4] = { tohost(w_d, n), tohost(m_d, n), tohost(v_d, n), tohost(vm_d, n) };
        int ok = 1;
        for (int a = 0; a < 4; a++)
            if (a != 1 || kind != 0) ok = ok && untouched(group, before[a], host[a], n) && untouched(group, before[a], after[a], n);
        if (ok) g_pass++; else g_fail++;
        printf("  %-34s %-10s %8zu values  untouched  %s\n", names[kind], "untrained", counts[3] + counts[4], ok ? "ok" : "FAIL");
        if (kind == YOLO_LION) {   /* each trained value moved by its group's lr exactly, after decay on the weights */
            double worst = 0;
            for (size_t i = 0; i < n; i++) {
                if (group[i] > YOLO_P_BIAS) continue;
                double lr = u.lr[group[i]], decayed = before[0][i] * (1 - lr * (group[i] == YOLO_P_WEIGHT ? u.wd : 0));
                for (int side = 0; side < 2; side++) {
                    double e = fabs(fabs((side ? after[0] : w)[i] - decayed) - lr);
                    if (e > worst) worst = e;
                }
            }
            ok = worst <= 1e-6;
            if (ok) g_pass++; else g_fail++;
            printf("  %-34s %-10s %8zu values  |step - lr| %.1e  %s\n", names[kind], "groups' lr", counts[0] + counts[1] + counts[2],
                   worst, ok ? "ok" : "FAIL");
        }
        for (int a = 0; a < 4; a++) { free(before[a]); free(after[a]); }
        if (kind == 0) {   /* the gradient norm of clipping */
            double a = yolo_cpu.sumsq(g, n), b = G->sumsq(g_d, n), e = fabs(a - b) / a;
            int ok = e <= 1e-9;
            if (ok) g_pass++; else g_fail++;
            printf("  %-34s %-10s %8zu values  rel err %.2e  %s\n", "sum of squares", "norm", n, e, ok ? "ok" : "FAIL");
        }
        free(w); free(g); free(m); free(v); free(vm);
        G->release(w_d); G->release(g_d); G->release(m_d); G->release(v_d); G->release(vm_d);
    }
    free(group); G->release(group_d);
}

/* the loss op (assigner included) on random head maps and boxes */
static void test_loss(int B, int nc) {
    int h[3] = { 10, 5, 3 }, w[3] = { 12, 6, 3 }, st[3] = { 8, 16, 32 }, no = 4 * YOLO_REG_MAX + nc, A = 0;
    for (int l = 0; l < 3; l++) A += h[l] * w[l];
    float *maps[3], *maps_d[3], *grads[3], *grads_d[3];
    for (int l = 0; l < 3; l++) {
        size_t n = (size_t)B * no * h[l] * w[l];
        maps[l] = rnd(n, -3, 3);
        for (int b = 0; b < B; b++)   /* class logits mostly negative, as a trained head's */
            for (size_t i = (size_t)4 * YOLO_REG_MAX * h[l] * w[l]; i < (size_t)no * h[l] * w[l]; i++)
                maps[l][(size_t)b * no * h[l] * w[l] + i] -= 2;
        maps_d[l] = todev(maps[l], n);
        grads[l] = (float *)calloc(n, sizeof(float)); grads_d[l] = poisoned(n);
    }
    /* boxes: image 1 has none */
    int ngt = 0, gstart[8] = { 0 };
    float gt[5 * 64];
    for (int n = 0; n < B; n++) {
        gstart[n] = ngt;
        int k = n == 1 ? 0 : 2 + n;
        for (int i = 0; i < k; i++, ngt++) {
            float cx = (float)(96 * yolo_rng_uniform(&g_rng)), cy = (float)(80 * yolo_rng_uniform(&g_rng));
            float bw = (float)(8 + 50 * yolo_rng_uniform(&g_rng)), bh = (float)(8 + 50 * yolo_rng_uniform(&g_rng));
            float *o = gt + 5 * ngt;
            o[0] = (float)(yolo_rng_u64(&g_rng) % nc); o[1] = cx - bw / 2; o[2] = cy - bh / 2; o[3] = cx + bw / 2; o[4] = cy + bh / 2;
        }
    }
    gstart[B] = ngt;
    float *gt_d = todev(gt, 5 * ngt + 5);
    int *gstart_d = (int *)G->alloc(sizeof gstart);
    G->upload(gstart_d, gstart, sizeof gstart);
    yolo_assignment asc, asg;
    memset(&asc, 0, sizeof asc); memset(&asg, 0, sizeof asg);
    yolo_assignment_resize(&yolo_cpu, &asc, B, A, nc);
    yolo_assignment_resize(G, &asg, B, A, nc);
    for (int reuse = 0; reuse < 2; reuse++) {
        yolo_loss_branch lc, lg;
        memset(&lc, 0, sizeof lc);
        lc.B = B; lc.nc = nc; lc.A = A; lc.ngt = ngt; lc.gt = gt; lc.gstart = gstart; lc.as = &asc; lc.reuse = reuse;
        lc.grad_scale = 0.25 * B;
        for (int l = 0; l < 3; l++) { lc.h[l] = h[l]; lc.w[l] = w[l]; lc.stride[l] = st[l]; lc.maps[l] = maps[l]; lc.grads[l] = grads[l]; }
        lg = lc;
        lg.gt = gt_d; lg.gstart = gstart_d; lg.as = &asg;
        lg.work = G->alloc(yolo_loss_work_bytes(B, A, ngt));
        for (int l = 0; l < 3; l++) { lg.maps[l] = maps_d[l]; lg.grads[l] = grads_d[l]; }
        yolo_cpu.loss(&lc);
        G->loss(&lg);
        G->release(lg.work);
        const char *name = reuse ? "loss (assignment kept)" : "loss and assigner";
        float sc[4] = { (float)lc.box, (float)lc.cls, (float)lc.dfl, (float)asc.score_sum };
        float sg[4] = { (float)lg.box, (float)lg.cls, (float)lg.dfl, (float)asg.score_sum };
        float *sg_d = todev(sg, 4);
        check(name, "box,cls,dfl,S", sc, sg_d, 4, 1e-5);
        G->release(sg_d);
        if (!reuse) {
            float *fc = (float *)malloc(B * A * sizeof(float)), *fgg = (float *)malloc(B * A * sizeof(float));
            unsigned char *fh = (unsigned char *)malloc(B * A);
            int *lh = (int *)malloc(B * A * sizeof(int));
            G->download(fh, asg.fg, B * A);
            G->download(lh, asg.label, B * A * sizeof(int));
            for (int i = 0; i < B * A; i++) { fc[i] = asc.fg[i] * (1 + asc.label[i]); fgg[i] = fh[i] * (1 + lh[i]); }
            float *fgg_d = todev(fgg, B * A);
            check(name, "fg,label", fc, fgg_d, B * A, 0);
            check(name, "score", asc.score, asg.score, B * A, 1e-5);
            check(name, "box", asc.box, asg.box, B * A * 4, 1e-6);
            G->release(fgg_d); free(fc); free(fgg); free(fh); free(lh);
        }
        for (int l = 0; l < 3; l++) check(name, l == 0 ? "grad P3" : l == 1 ? "grad P4" : "grad P5", grads[l], grads_d[l],
                                         (size_t)B * no * h[l] * w[l], 1e-5);
    }
    {   /* decode of the same maps */
        yolo_loss_branch lc, lg;
        memset(&lc, 0, sizeof lc);
        lc.B = B; lc.nc = nc; lc.A = A;
        for (int l = 0; l < 3; l++) { lc.h[l] = h[l]; lc.w[l] = w[l]; lc.stride[l] = st[l]; lc.maps[l] = maps[l]; }
        lg = lc;
        for (int l = 0; l < 3; l++) lg.maps[l] = maps_d[l];
        size_t np = (size_t)B * (4 + nc) * A;
        float *pc = (float *)malloc(np * sizeof(float)), *pg = poisoned(np);
        yolo_cpu.decode(&lc, pc);
        G->decode(&lg, pg);
        check("decode", "pred", pc, pg, np, 1e-6);
        /* NMS of each image of those predictions, class-aware and agnostic */
        yolo_det *dc = (yolo_det *)malloc((size_t)A * sizeof(yolo_det)), *dg = (yolo_det *)malloc((size_t)A * sizeof(yolo_det));
        for (int agn = 0; agn < 2; agn++)
            for (int n = 0; n < B; n++) {
                int kc = yolo_cpu.nms(pc + (size_t)n * (4 + nc) * A, A, nc, 0.05f, 0.5f, 300, agn, NULL, 0, dc);
                int kg = G->nms(pg + (size_t)n * (4 + nc) * A, A, nc, 0.05f, 0.5f, 300, agn, NULL, 0, dg);
                int same = kc == kg && !memcmp(dc, dg, (size_t)kc * sizeof(yolo_det));
                if (same) g_pass++; else g_fail++;
                printf("  %-34s image %d     %5d / %5d detections  %s\n", agn ? "nms agnostic" : "nms", n, kc, kg, same ? "ok" : "FAIL");
            }
        free(dc); free(dg);
        free(pc); G->release(pg);
    }
    yolo_assignment_release(&yolo_cpu, &asc);
    yolo_assignment_release(G, &asg);
    for (int l = 0; l < 3; l++) { free(maps[l]); free(grads[l]); G->release(maps_d[l]); G->release(grads_d[l]); }
    G->release(gt_d); G->release(gstart_d);
}

int main(int argc, char **argv) {
    char err[YOLO_ERR];
    int quick = argc > 1 && !strcmp(argv[1], "--quick");
    if (!(G = yolo_backend_cuda(0, err))) { fprintf(stderr, "test_cuda: %s\n", err); return 2; }
    printf("CUDA kernels against their CPU twins (tensor cores for:%s%s%s)\n", G->tensor_cores >> YOLO_BF16 & 1 ? " bf16" : "",
           G->tensor_cores >> YOLO_FP16 & 1 ? " half" : "", G->tensor_cores ? "" : " none: the portable core");
    test_conv(YOLO_FP32, 1, 3, 17, 13, 5, 3, 2, 1, 0);
    test_conv(YOLO_FP32, 3, 7, 9, 11, 13, 3, 1, 1, 0);
    test_conv(YOLO_FP32, 2, 12, 7, 5, 20, 3, 1, 4, 0);
    test_conv(YOLO_FP32, 3, 20, 6, 9, 64, 1, 1, 4, 2);
    test_conv(YOLO_FP32, 1, 70, 5, 7, 67, 1, 1, 1, 1);
    test_conv(YOLO_FP32, 2, 33, 10, 8, 130, 3, 2, 1, 0);
    test_conv(YOLO_FP32, 1, 5, 31, 29, 3, 1, 1, 1, 0);
    test_conv(YOLO_FP32, 3, 8, 64, 45, 12, 3, 1, 1, 1);    /* long sums over positions: the weight gradient in k-slices */
    test_conv(YOLO_FP32, 3, 16, 61, 47, 20, 3, 2, 1, 0);
    /* backward-data assigning dx (a fresh gradient): every phase of a stride, groups, 1x1 stride 2 (taps miss dX) */
    test_conv_dx(YOLO_FP32, 1, 3, 17, 13, 5, 3, 2, 1, 0, 0);
    test_conv_dx(YOLO_FP32, 2, 12, 7, 5, 20, 3, 1, 4, 0, 0);
    test_conv_dx(YOLO_FP32, 3, 16, 61, 47, 20, 3, 2, 1, 0, 0);
    test_conv_dx(YOLO_FP32, 3, 5, 9, 7, 8, 1, 2, 1, 0, 0);
    test_conv_slots(YOLO_FP32, YOLO_FP32, 2, 16, 9, 7, 24, 3, 1, 1, 8, 40, 16, 64, 1);   /* a float32 folded pass's slots (NCHW) */
    test_conv_slots(YOLO_FP32, YOLO_FP32, 3, 8, 9, 7, 12, 3, 2, 4, 3, 11, 5, 20, 0);
    test_maxpool_slots(YOLO_FP32, 2, 5, 9, 7, 5, 1, 2, 5, 20, 10, 15);
    /* backward-data into a concatenation's parts: ELAN's cv4 (three runs, the middle one assigned), SPPELAN's
       cv5 (four assigned; 16-byte runs of dX in two bytes a value), a 1x1 stride 2 (an assigned run zeroed
       first), 3x3 over 128 channels (the copy engine's loaders with wgmma: a run from row 0, then runs from
       rows 32 and 96), groups of 20 with a run across them */
    static const int c3[3] = { 24, 40, 16 }, a3[3] = { 1, 0, 1 }, c4[4] = { 16, 16, 16, 16 }, a4[4] = { 0, 0, 0, 0 },
                     c2[2] = { 5, 11 }, a2[2] = { 0, 1 }, c2s[2] = { 8, 24 }, cw[3] = { 64, 32, 32 }, aw[3] = { 0, 0, 1 },
                     cw2[3] = { 32, 64, 64 }, c32[1] = { 32 }, c64[1] = { 64 }, w64[1] = { 64 }, w128[1] = { 128 },
                     a1[1] = { 1 }, a0[1] = { 0 }, c90[2] = { 90, 90 };
    test_conv_runs(YOLO_FP32, 2, 9, 7, 13, 1, 1, 1, 3, c3, a3, NULL);
    test_conv_runs(YOLO_FP32, 2, 11, 9, 7, 3, 2, 1, 2, c2, a2, NULL);
    test_conv_runs(YOLO_FP32, 3, 9, 7, 12, 1, 2, 1, 2, c2, a2, NULL);     /* 1x1 stride 2: the assigned run zeroed first */
    test_conv_runs(YOLO_FP32, 2, 9, 7, 16, 3, 1, 4, 3, c3, a3, NULL);     /* groups of 20: runs across them */
    test_conv_runs(YOLO_FP32, 2, 9, 7, 12, 1, 1, 1, 1, c32, a1, w64);     /* RepNCSPELAN4's half_b: a gradient's second half */
    test_conv_runs(YOLO_FP32, 2, 9, 7, 12, 1, 2, 1, 1, c32, a0, w64);     /* an assigned window, 1x1 stride 2: zeroed image by image */
    test_elementwise_stored(YOLO_FP32, 2, 72, 5, 9);                /* the SiLU's backward on NCHW floats, two tiles */
    for (int p = YOLO_BF16; p <= YOLO_FP16; p++) {   /* 64- and 128-wide tiles, partial k-tiles */
        yolo_precision prec = (yolo_precision)p;
        test_conv(prec, 1, 3, 17, 13, 48, 3, 2, 1, 0);      /* K = 27: one partial k-tile; stride 2: four phases */
        test_conv(prec, 3, 5, 19, 11, 80, 3, 1, 1, 2);
        test_conv(prec, 3, 5, 9, 7, 80, 1, 2, 1, 0);        /* 1x1 stride 2: three phases without a tap */
        test_conv(prec, 1, 48, 15, 13, 80, 1, 1, 1, 1);
        test_conv(prec, 3, 80, 11, 9, 48, 3, 2, 4, 2);      /* groups of 20 -> 12 channels */
        test_conv(prec, 2, 33, 10, 8, 130, 3, 2, 1, 0);     /* M past one 128-row tile */
        test_conv(prec, 2, 96, 21, 19, 100, 3, 1, 1, 0);    /* 128 x 128 tiles */
        test_conv(prec, 3, 8, 64, 45, 12, 3, 1, 1, 1);      /* the weight gradient in k-slices */
        test_conv(prec, 3, 64, 40, 40, 130, 1, 1, 1, 1);    /* the same, 128 x 64 tiles */
        /* channels a multiple of 8 a group: the tiers' staged kernels (NHWC copies, cp.async from Ampere on) */
        test_conv(prec, 1, 8, 17, 13, 48, 3, 2, 1, 0);      /* K = 72: a partial k-tile; four phases */
        test_conv(prec, 3, 16, 19, 11, 80, 3, 1, 1, 2);
        test_conv(prec, 3, 24, 9, 7, 80, 1, 2, 1, 0);       /* 1x1 stride 2: three phases without a tap */
        test_conv(prec, 1, 40, 15, 13, 48, 1, 1, 1, 1);
        test_conv(prec, 3, 64, 11, 9, 96, 3, 2, 4, 2);      /* groups of 16 -> 24 channels */
        test_conv(prec, 2, 136, 21, 19, 144, 3, 1, 1, 0);   /* 128 x 128 tiles, M past one tile */
        test_conv(prec, 3, 16, 64, 45, 24, 3, 1, 1, 1);     /* the weight gradient in k-slices */
        if (!quick) test_conv(prec, 3, 8, 2501, 2501, 8, 3, 2, 1, 1);   /* 125 MB of copies an image: chunks of 2 images, then 1 */
        else printf("  conv %s 8x2501x2501 (chunks of images): skipped (--quick)\n", yolo_precision_name(prec));
        /* staged_tile's tiles (32, 48, 64, 96 and 128 rows) on grids of many blocks, partial in n */
        test_conv(prec, 1, 16, 371, 369, 24, 1, 1, 1, 1);   /* 32 rows, backward-data too; 1x1: no padding to check */
        test_conv(prec, 1, 16, 371, 369, 48, 3, 1, 1, 0);   /* 48 x 256; backward-data 32 */
        test_conv(prec, 1, 48, 371, 369, 64, 1, 1, 1, 2);   /* 64; backward-data 48 x 256 */
        test_conv(prec, 1, 64, 263, 263, 96, 1, 1, 1, 0);   /* 96; backward-data 64 */
        test_conv(prec, 1, 24, 263, 263, 128, 1, 1, 1, 1);  /* 128 */
        test_conv(prec, 2, 16, 13, 11, 256, 3, 1, 1, 1);    /* 128, two rows of tiles */
        /* wg_tile's tiles (conv_wg_kernel, a build with wgmma; else conv_tc_kernel's): 64 and 128 rows, partial in m, n
           and in BK 64 k (K = 72, 56, 360, 432), groups, stride 2, NHWC stores, backward-data assigning dx */
        test_conv(prec, 2, 72, 23, 21, 56, 1, 1, 1, 2);     /* forward 56 rows (64 x 128), K = 72; backward-data 72 (128) */
        test_conv(prec, 3, 40, 17, 19, 200, 3, 2, 1, 1);    /* forward 200 rows, K = 360, stride 2; backward-data 40 */
        test_conv(prec, 2, 128, 13, 15, 160, 3, 1, 2, 0);   /* groups of 64 -> 80: K = 576, both passes on wgmma */
        test_conv_dx(prec, 2, 200, 15, 13, 64, 3, 2, 1, 0, 0);    /* backward-data 200 rows, four phases, dx assigned */
        /* the copy engine's loaders (a build with wgmma: the operands of im2col maps in whole 64s a group) */
        test_conv(prec, 3, 64, 23, 19, 128, 3, 1, 1, 0);    /* all three passes: boxes across rows and images */
        test_conv(prec, 2, 64, 61, 47, 64, 3, 2, 1, 1);     /* stride 2: the corners by 2; backward-data's phases */
        test_conv(prec, 3, 64, 48, 36, 64, 3, 1, 1, 1);     /* the weight gradient in 5 k-slices of 1056: stages of 32 */
        test_conv(prec, 2, 256, 9, 11, 192, 1, 1, 2, 0);    /* 1x1, groups of 128 -> 96 */
        test_conv_dx(prec, 2, 64, 23, 19, 128, 3, 1, 1, 0, 0);   /* backward-data assigning dx */
        test_conv_slots(prec, prec, 2, 128, 13, 11, 64, 3, 2, 1, 64, 256, 0, 64, 0);   /* x a slot of 256 channels */
        test_conv_stored(prec, 1, 1, 2, 96, 17, 15, 112, 3, 1, 2);  /* 48 -> 56 a group, K = 432, NHWC out */
        test_conv_train_stored(prec, 2, 72, 19, 17, 80, 3, 2, 1, 0); /* stride 2, dx assigned */
        test_conv_runs(prec, 2, 9, 7, 48, 1, 1, 1, 3, c3, a3, NULL);
        test_conv_runs(prec, 3, 12, 10, 32, 1, 1, 1, 4, c4, a4, NULL);
        test_conv_runs(prec, 2, 11, 9, 24, 1, 2, 1, 2, c2s, a2, NULL);
        test_conv_runs(prec, 2, 13, 12, 64, 3, 1, 1, 3, cw, aw, NULL);
        test_conv_runs(prec, 2, 13, 12, 64, 3, 1, 1, 3, cw2, aw, NULL);
        test_conv_runs(prec, 2, 9, 7, 48, 3, 2, 4, 3, c3, a3, NULL);   /* groups of 20, stride 2 */
        test_conv_runs(prec, 2, 12, 10, 48, 1, 1, 1, 1, c32, a1, w64);    /* half_b: 16-byte runs into a second half */
        test_conv_runs(prec, 2, 11, 9, 24, 1, 2, 1, 1, c32, a0, w64);     /* an assigned window, zeroed image by image */
        test_conv_runs(prec, 2, 13, 12, 64, 3, 1, 1, 1, c64, a1, w128);   /* a window on the copy engine's loaders */
        test_conv_runs(prec, 2, 7, 5, 48, 3, 1, 1, 2, c90, a2, NULL);     /* 180 channels (staged to 184) in two runs of 90 */
        /* backward-data assigning dx: value by value, staged (store_tile: 16-byte runs at 64x45, else one by one) */
        test_conv_dx(prec, 1, 3, 17, 13, 48, 3, 2, 1, 0, 0);
        test_conv_dx(prec, 3, 5, 9, 7, 80, 1, 2, 1, 0, 0);     /* 1x1 stride 2: dX zeroed first */
        test_conv_dx(prec, 3, 80, 11, 9, 48, 3, 2, 4, 2, 0);
        test_conv_dx(prec, 1, 8, 17, 13, 48, 3, 2, 1, 0, 0);
        test_conv_dx(prec, 3, 24, 9, 7, 80, 1, 2, 1, 0, 0);
        test_conv_dx(prec, 3, 64, 11, 9, 96, 3, 2, 4, 2, 0);
        test_conv_dx(prec, 2, 136, 21, 19, 144, 3, 1, 1, 0, 0);
        test_conv_dx(prec, 3, 16, 64, 45, 24, 3, 1, 1, 1, 0);
        /* a low-precision inference pass: outputs stored NHWC, inputs read as stored */
        test_conv_stored(prec, 0, 1, 3, 3, 17, 13, 16, 3, 2, 1);    /* the image (Cin 3) into the store */
        test_conv_stored(prec, 0, 1, 1, 8, 15, 13, 48, 3, 1, 1);    /* a float32 input staged */
        test_conv_stored(prec, 1, 1, 3, 16, 19, 11, 80, 3, 1, 1);   /* stored in, stored out: no staging copy */
        test_conv_stored(prec, 1, 1, 1, 64, 11, 9, 96, 3, 2, 4);    /* groups of 16 -> 24 channels, stride 2 */
        test_conv_stored(prec, 1, 1, 2, 136, 21, 19, 144, 1, 1, 1); /* 128 x 128 tiles, M past one tile */
        test_conv_stored(prec, 1, 1, 3, 5, 9, 7, 80, 3, 1, 1);      /* channels not in 8s: read value by value */
        test_conv_stored(prec, 1, 1, 2, 16, 9, 7, 3, 1, 1, 1);      /* 3 outputs, not in 8s: stored value by value */
        test_conv_stored(prec, 1, 0, 3, 64, 9, 7, 64, 1, 1, 4);     /* a head's last box conv: groups 4, float32 map */
        test_conv_stored(prec, 1, 0, 2, 16, 9, 7, 3, 1, 1, 1);      /* a head's last class conv, 3 classes: float32 map */
        /* slots of a folded pass's concatenations: in 8s (staged), not (value by value), groups, stride 2, the shortcut */
        test_conv_slots(prec, prec, 2, 16, 9, 7, 24, 3, 1, 1, 8, 40, 16, 64, 0);
        test_conv_slots(prec, prec, 3, 16, 11, 9, 16, 3, 1, 1, 0, 16, 0, 32, 1);     /* a bottleneck's cv2 into its half of cat */
        test_conv_slots(prec, prec, 2, 24, 7, 9, 24, 1, 1, 1, 24, 48, 8, 40, 1);
        test_conv_slots(prec, prec, 2, 32, 9, 11, 64, 3, 2, 4, 8, 48, 0, 72, 0);      /* groups of 8 -> 16, stride 2 */
        test_conv_slots(prec, prec, 2, 16, 9, 7, 16, 3, 1, 1, 4, 36, 12, 40, 1);      /* slots not in 8s: value by value */
        test_conv_slots(prec, prec, 3, 5, 9, 7, 12, 3, 2, 1, 3, 11, 5, 20, 1);        /* channels not in 8s */
        test_conv_slots(prec, prec, 2, 64, 21, 19, 144, 1, 1, 1, 64, 128, 144, 288, 1); /* 128-row tiles */
        test_conv_slots(YOLO_FP32, prec, 2, 16, 9, 7, 24, 3, 1, 1, 8, 40, 16, 64, 1);  /* float32 slots, products in prec: staged dense */
        test_maxpool_slots(prec, 2, 16, 9, 7, 5, 1, 2, 16, 64, 32, 64);     /* SPPELAN's chain: 16-byte runs */
        test_maxpool_slots(prec, 3, 24, 8, 11, 3, 2, 1, 24, 48, 0, 24);     /* ADown's second half of its pool */
        test_maxpool_slots(prec, 2, 5, 9, 7, 5, 1, 2, 5, 20, 10, 15);       /* not in 8s: value by value */
        test_stored(prec, 1, 16, 9, 7);
        test_stored(prec, 3, 24, 8, 11);
        test_stored(prec, 2, 5, 40, 36);                          /* odd channels: two-byte copies */
        /* a training pass in that store */
        test_conv_train_stored(prec, 3, 16, 19, 11, 80, 3, 1, 1, 1);   /* staged: x read as stored, dY staged */
        test_conv_train_stored(prec, 1, 64, 11, 9, 96, 3, 2, 4, 1);    /* groups of 16 -> 24 channels, stride 2 */
        test_conv_train_stored(prec, 2, 136, 21, 19, 144, 1, 1, 1, 1); /* 128 x 128 tiles */
        test_conv_train_stored(prec, 3, 16, 64, 45, 24, 3, 1, 1, 1);   /* the weight gradient in k-slices */
        test_conv_train_stored(prec, 3, 5, 9, 7, 48, 3, 1, 1, 1);      /* Cin 5: read value by value */
        test_conv_train_stored(prec, 2, 80, 9, 7, 48, 3, 2, 4, 1);     /* groups of 20: read value by value, stride 2 */
        test_conv_train_stored(prec, 1, 8, 8, 13, 3, 1, 1, 1, 1);      /* 3 outputs: not staged, z stored value by value */
        test_conv_train_stored(prec, 3, 16, 19, 11, 80, 3, 1, 1, 0);   /* dx assigned */
        test_conv_train_stored(prec, 2, 80, 9, 7, 48, 3, 2, 4, 0);
        test_conv_train_stored(prec, 3, 16, 64, 45, 24, 3, 1, 1, 0);
        test_conv_train_stored(prec, 1, 8, 8, 13, 3, 1, 1, 1, 0);
        test_conv_train_stored(prec, 2, 16, 1, 3, 24, 3, 2, 1, 1);     /* phases of the stride with taps, no position: */
        test_conv_train_stored(prec, 2, 16, 5, 1, 24, 3, 2, 1, 1);     /* ... the last ones, and one between */
        test_conv_train_stored(prec, 2, 64, 13, 11, 128, 3, 2, 1, 1);  /* the copy engine's loaders (64s a group) */
        /* channels in 8s, not in 64s (yolov9-m's 120, 240, 360, 480): the copy engine's boxes padded with zeros */
        test_conv_train_stored(prec, 2, 120, 11, 9, 120, 3, 1, 1, 1);  /* taps of 128 in all three passes */
        test_conv_train_stored(prec, 2, 120, 9, 7, 184, 3, 2, 1, 0);  /* backward-data 184 -> 192 a tap, stride 2, dx assigned */
        test_conv(prec, 2, 120, 9, 11, 184, 1, 1, 1, 2);               /* 1x1: one tap, the box past K */
        test_conv_slots(prec, prec, 2, 120, 13, 11, 64, 3, 1, 1, 120, 240, 0, 64, 1);   /* x a slot: zeros past its 120 */
        /* one group, channels not in 8s (yolov9-m's 60, 90, 180; odd ones): staged with them padded with zeros to 8s,
           the outputs stored value by value where they do not come in 8s */
        test_conv_train_stored(prec, 2, 60, 11, 9, 60, 3, 1, 1, 1);    /* x, dY copied to 64 channels; 60 rows */
        test_conv_train_stored(prec, 2, 90, 9, 7, 180, 3, 2, 1, 0);    /* 90 -> 96, 180 -> 184; stride 2, dx assigned */
        test_conv_train_stored(prec, 3, 180, 7, 5, 90, 1, 1, 1, 1);    /* 1x1 */
        test_conv(prec, 2, 60, 9, 11, 90, 3, 1, 1, 2);                 /* float32 x staged to 64 channels */
        test_conv_dx(prec, 1, 13, 9, 7, 21, 3, 2, 1, 1, 0);            /* odd channels, 21 rows, dx assigned */
        test_conv_stored(prec, 1, 1, 2, 60, 9, 7, 90, 3, 1, 1);        /* stored in, stored out */
        test_conv_slots(prec, prec, 2, 60, 9, 7, 60, 3, 1, 1, 60, 120, 60, 120, 1);   /* RepNCSP: slots at 60 of 120 */
        test_conv_slots(prec, prec, 2, 180, 5, 7, 64, 1, 1, 1, 180, 360, 0, 64, 0);   /* an ELAN's second half of 360 */
        test_stage_train_many(prec);
        test_bn_stored(prec, 1, 7, 5, 3, 1, 0);                   /* channels not a multiple of 8: value by value */
        test_bn_stored(prec, 3, 13, 9, 11, 0, 0);
        test_bn_stored(prec, 2, 48, 8, 12, 1, 0);                 /* 16-byte loads */
        test_bn_stored(prec, 3, 80, 40, 40, 1, 0);                /* chunks of several 32-row tiles, channels past 64 */
        test_bn_stored(prec, 3, 80, 40, 40, 1, 1);                /* the --sync-bn hook on row-chunk sums */
        test_bn_stored(prec, 2, 5, 1, 1, 1, 0);
        test_bn_stored(prec, 1, 48, 33, 35, 1, 0);               /* pixels an image not a multiple of 4: dy value by value */
        test_bn_stored(prec, 3, 80, 17, 15, 0, 0);
        test_bn_stored(prec, 1, 24, 203, 405, 1, 0);             /* chunks of two tiles, the last one short */
        test_bn_stored(prec, 1, 1000, 128, 100, 1, 0);           /* chunks of 4 tiles: the 3 stages go round */
        test_bn_stored(prec, 1, 1001, 127, 101, 1, 0);           /* the same value by value (C, pixels not in 8s, 4s) */
        test_bn_stored(prec, 1, 2056, 3, 5, 1, 0);               /* more than 256 groups of 8 channels a row */
        test_elementwise_stored(prec, 3, 16, 9, 7);
        test_elementwise_stored(prec, 2, 5, 12, 11);
        test_elementwise_stored(prec, 1, 2, 113, 111);            /* maxpool: winners found again per pixel */
        test_elementwise_stored(prec, 2, 40, 13, 70);             /* maxpool: a partial block of 64 channels */
        test_elementwise_stored(prec, 2, 72, 5, 9);               /* the SiLU's backward: two tiles of channels, 45 pixels */
        test_elementwise_stored(prec, 3, 72, 11, 19);             /* maxpool: winners of two blocks of 64 channels, the second 8 */
    }
    test_bn(1, 7, 5, 3, 1, 0);
    test_bn(3, 13, 9, 11, 0, 0);
    test_bn(2, 5, 1, 1, 1, 0);
    test_bn(2, 6, 8, 12, 1, 0);    /* planes of whole float4 */
    test_bn(3, 3, 40, 40, 0, 0);   /* planes of several blocks */
    test_bn(3, 13, 9, 11, 1, 1);   /* the --sync-bn hook on per-image sums */
    test_elementwise(100003);
    test_pixels(3 * 67 * 45 * 2 + 256);
    test_pools(1, 5, 9, 7);
    test_pools(1, 3, 7, 4);       /* avgpool backward: a row one run of four */
    test_pools(3, 4, 8, 11);
    test_pools(2, 6, 40, 36);   /* channel runs of several blocks */
    test_pools(1, 2, 113, 111);   /* planes of many blocks */
    test_pools(2, 37, 21, 70);    /* maxpool backward: 37 planes of 1470 pixels, blocks of 256 of them */
    test_optim(70001);
    test_loss(3, 7);
    test_loss(1, 80);
    printf("%d passed, %d failed\n", g_pass, g_fail);
    return g_fail ? 1 : 0;
}
