/* test_grad: every backward pass of yolov9.h against central finite
   differences, in double precision (built with -DYOLO_REAL=double).

   For an op or block with output y we take L = sum(y * R) for a fixed
   random R, set dL/dy = R, run the backward, and compare each analytic
   derivative dL/dv (inputs and parameters, sampled) with
   (L(v + h) - L(v - h)) / 2h. The loss is checked with its assignment
   held fixed (the official assigner is not differentiated), and the whole
   model end to end. Exits non-zero on any mismatch. */
#define YOLOV9_IMPLEMENTATION
#include "../yolov9.h"

/* Ops and blocks: L = sum(y R) is of order 1-10 and its derivatives of
   order 1, so step 1e-6 leaves ~1e-10 of rounding noise: tolerance 1e-6.
   The detection loss is of order 30-900 and many of its derivatives are
   ~1e-8 (anchors far from any object), so there the error is measured
   against the derivatives' norm but at least 1e-6 per sample (1e-4 through the network; rounding
   noise of the loss is ~1e-16 L / step), and through the whole network
   (randomised BatchNorms, strongly curved) the truncation error of the
   quotient grows: tolerance 1e-4 there. The whole-network gradients are
   also held to the official ones by golden_check. */
typedef struct { double step, floor, tol; } fd_setting;
static const fd_setting FD_BLOCK = { 1e-6, 1e-7, 1e-6 }, FD_LOSS = { 1e-5, 1e-6, 1e-4 }, FD_MODEL = { 1e-6, 1e-4, 1e-4 };
static fd_setting g_fd;

static int g_pass, g_fail;
static yolo_rng g_rng = { 12345 };
static double urand(double lo, double hi) { return lo + (hi - lo) * yolo_rng_uniform(&g_rng); }

/* ---- a block under test -------------------------------------------------- */

typedef enum { B_CONV, B_CONV_BARE, B_REPCONVN, B_BOTTLENECK, B_REPNCSP, B_ELAN4, B_ELAN1, B_ACONV, B_ADOWN,
               B_SPPELAN, OP_AVGPOOL, OP_MAXPOOL, OP_UPSAMPLE } kind_t;

typedef struct {
    const char *name;
    kind_t kind;
    int B, C, H, W;      /* input */
    int c2, k, s, g, n;  /* block arguments as they apply */
} blockcase;

typedef struct {
    yolo_model m;        /* registry of the block's tensors */
    yolo_tensor x, y_op; /* input; output of the bare ops */
    yolo_conv conv;
    yolo_repconvn rep;
    yolo_repnbottleneck bot;
    yolo_repncsp csp;
    yolo_elan elan;
    yolo_down down;
    yolo_sppelan spp;
    yolo_real *R;        /* the random cotangent */
} harness;

static void h_init(harness *h, const blockcase *c) {
    yolo_model *m = &h->m;
    switch (c->kind) {
    case B_CONV: yolo_conv_init(m, &h->conv, "b", c->C, c->c2, c->k, c->s, c->g, 1, 1); break;
    case B_CONV_BARE: yolo_conv_init(m, &h->conv, "b", c->C, c->c2, c->k, c->s, c->g, 0, 0); break;
    case B_REPCONVN: yolo_repconvn_init(m, &h->rep, "b", c->C, c->c2); break;
    case B_BOTTLENECK: yolo_bottleneck_init(m, &h->bot, "b", c->C, c->c2); break;
    case B_REPNCSP: yolo_repncsp_init(m, &h->csp, "b", c->C, c->c2, c->n); break;
    case B_ELAN4: yolo_elan_init(m, &h->elan, "b", 0, c->C, c->c2, c->k, c->s, c->n); break;
    case B_ELAN1: yolo_elan_init(m, &h->elan, "b", 1, c->C, c->c2, c->k, c->s, 0); break;
    case B_ACONV: yolo_down_init(m, &h->down, "b", 0, c->C, c->c2); break;
    case B_ADOWN: yolo_down_init(m, &h->down, "b", 1, c->C, c->c2); break;
    case B_SPPELAN: yolo_sppelan_init(m, &h->spp, "b", c->C, c->c2, c->k); break;
    default: break;
    }
}

static yolo_tensor *h_forward(harness *h, const blockcase *c) {
    yolo_model *m = &h->m;
    yolo_tensor *x = &h->x;
    switch (c->kind) {
    case B_CONV: case B_CONV_BARE: yolo_conv_forward(m, &h->conv, x, 1); return &h->conv.y;
    case B_REPCONVN: yolo_repconvn_forward(m, &h->rep, x, 1); return &h->rep.y;
    case B_BOTTLENECK: yolo_bottleneck_forward(m, &h->bot, x, 1); return &h->bot.y;
    case B_REPNCSP: yolo_repncsp_forward(m, &h->csp, x, 1); return yolo_repncsp_out(&h->csp);
    case B_ELAN4: case B_ELAN1: yolo_elan_forward(m, &h->elan, x, 1); return &h->elan.cv4.y;
    case B_ACONV: case B_ADOWN: yolo_down_forward(m, &h->down, x, 1); return yolo_down_out(&h->down);
    case B_SPPELAN: yolo_sppelan_forward(m, &h->spp, x, 1); return &h->spp.cv5.y;
    case OP_AVGPOOL:
        yolo_tensor_resize(&yolo_cpu, &h->y_op, x->n, x->c, x->h - 1, x->w - 1, 1);
        yolo_avgpool2_forward(x, &h->y_op);
        return &h->y_op;
    case OP_MAXPOOL:
        yolo_tensor_resize(&yolo_cpu, &h->y_op, x->n, x->c, yolo_conv_out(x->h, c->k, c->s), yolo_conv_out(x->w, c->k, c->s), 1);
        yolo_maxpool_forward(x, c->k, c->s, c->k / 2, &h->y_op);
        return &h->y_op;
    case OP_UPSAMPLE:   /* channels [1, c2+1) resized to (2H+1) x (3W): covers CBFuse's general case */
        yolo_tensor_resize(&yolo_cpu, &h->y_op, x->n, c->c2, 2 * x->h + 1, 3 * x->w, 1);
        yolo_resize_forward(x, 1, 0, &h->y_op);
        return &h->y_op;
    }
    return NULL;
}

/* what the block's forward makes, declared before it runs (yolov9.h section 9, "shapes") */
static void h_shapes(harness *h, const blockcase *c) {
    yolo_model *m = &h->m;
    yolo_tensor *x = &h->x;
    switch (c->kind) {
    case B_CONV: case B_CONV_BARE: yolo_conv_shapes(m, &h->conv, x->n, x->h, x->w, 1); break;
    case B_REPCONVN: yolo_repconvn_shapes(m, &h->rep, x->n, x->h, x->w, 1); break;
    case B_BOTTLENECK: yolo_bottleneck_shapes(m, &h->bot, x->n, x->h, x->w, 1); break;
    case B_REPNCSP: yolo_repncsp_shapes(m, &h->csp, x->n, x->h, x->w, 1); break;
    case B_ELAN4: case B_ELAN1: yolo_elan_shapes(m, &h->elan, x, 1); break;
    case B_ACONV: case B_ADOWN: yolo_down_shapes(m, &h->down, x, 1); break;
    case B_SPPELAN: yolo_sppelan_shapes(m, &h->spp, x, 1); break;
    default: break;   /* the ops: h_forward gives their output its shape */
    }
}

static void h_backward(harness *h, const blockcase *c) {
    yolo_tensor *x = &h->x;
    yolo_model *m = &h->m;
    switch (c->kind) {
    case B_CONV: case B_CONV_BARE: yolo_conv_backward(m, &h->conv); break;
    case B_REPCONVN: yolo_repconvn_backward(m, &h->rep); break;
    case B_BOTTLENECK: yolo_bottleneck_backward(m, &h->bot); break;
    case B_REPNCSP: yolo_repncsp_backward(m, &h->csp); break;
    case B_ELAN4: case B_ELAN1: yolo_elan_backward(m, &h->elan); break;
    case B_ACONV: case B_ADOWN: yolo_down_backward(m, &h->down); break;
    case B_SPPELAN: yolo_sppelan_backward(m, &h->spp); break;
    case OP_AVGPOOL: yolo_avgpool2_backward(&h->y_op, x->grad, x->h, x->w, 1); break;
    case OP_MAXPOOL: yolo_maxpool_backward(x, c->k, c->s, c->k / 2, &h->y_op, x->grad, 1); break;
    case OP_UPSAMPLE: yolo_resize_backward(&h->y_op, x, 1, 1); break;
    }
}

/* the block's training forward (backward 0) or its backward, as a layer
   of the graph runs it: with its lifetime table, which drops what the
   forward made and makes it again for the backward */
static yolo_tensor *h_pass(harness *h, const blockcase *c, int backward) {
    yolo_layer L;
    memset(&L, 0, sizeof L);
    L.life1 = h->m.nlife;
    yolo_life_run outer = yolo_life_begin(&h->m, &L, 1, backward);
    yolo_tensor *y = NULL;
    int shapes = h->m.nshapes;
    if (backward) h_backward(h, c);
    else {
        h_shapes(h, c);
        y = h_forward(h, c);
    }
    yolo_shapes_end(&h->m, shapes);
    yolo_life_end(&h->m, outer);
    return y;
}

static double h_loss(harness *h, const blockcase *c) {
    yolo_tensor *y = h_pass(h, c, 0);
    double L = 0;
    for (size_t i = 0; i < yolo_numel(y); i++) L += y->data[i] * h->R[i];
    return L;
}

/* compare analytic g with finite differences of f at v[i], a few i */
typedef double (*loss_fn)(void *ctx);
static double fd_check(loss_fn f, void *ctx, yolo_real *v, const yolo_real *g, size_t n, int samples) {
    double num = 0, den = 0;
    for (int s = 0; s < samples && s < (int)n; s++) {
        size_t i = samples >= (int)n ? (size_t)s : (size_t)(yolo_rng_u64(&g_rng) % n);
        yolo_real keep = v[i];
        v[i] = keep + g_fd.step; double lp = f(ctx);
        v[i] = keep - g_fd.step; double lm = f(ctx);
        v[i] = keep;
        double fd = (lp - lm) / (2 * g_fd.step);
        num += (g[i] - fd) * (g[i] - fd);
        den += fd * fd;
    }
    return sqrt(num) / fmax(sqrt(den), g_fd.floor * sqrt((double)samples));
}

static void report(const char *what, const char *tensor, double err) {
    int ok = err <= g_fd.tol;
    if (ok) g_pass++; else g_fail++;
    if (!ok || getenv("VERBOSE")) printf("    %-28s %-34s rel err %.2e  %s\n", what, tensor, err, ok ? "ok" : "FAIL");
}

typedef struct { harness *h; const blockcase *c; } hctx;
static double hloss(void *p) { hctx *x = (hctx *)p; return h_loss(x->h, x->c); }

static void check_block(const blockcase *c) {
    harness *h = (harness *)calloc(1, sizeof(harness));
    yolo_model *m = &h->m;
    m->bn_momentum = 0.03; m->bn_eps = 1e-3; m->be = &yolo_cpu;
    h_init(h, c);                                  /* pass 1: sizes */
    m->values = (yolo_real *)calloc(m->nvalues + 1, sizeof(yolo_real));
    m->grads = (yolo_real *)calloc(m->nvalues + 1, sizeof(yolo_real));
    m->stats = (yolo_real *)calloc(m->nstats + 1, sizeof(yolo_real));
    m->nstats = 0;
    h_init(h, c);                                  /* pass 2: bind */
    for (int k = 0; k < m->nparams; k++) {
        yolo_param *p = &m->params[k];
        for (size_t i = 0; i < p->numel; i++)
            m->values[p->offset + i] = (yolo_real)(p->kind == YOLO_P_BN_WEIGHT ? urand(0.5, 1.5) :
                                                   p->kind == YOLO_P_RUNNING_VAR ? 1 : urand(-0.5, 0.5));
    }
    yolo_tensor_resize(&yolo_cpu, &h->x, c->B, c->C, c->H, c->W, 1);
    for (size_t i = 0; i < yolo_numel(&h->x); i++) h->x.data[i] = (yolo_real)urand(-2, 2);
    yolo_tensor *y = h_pass(h, c, 0);
    h->R = (yolo_real *)malloc(yolo_numel(y) * sizeof(yolo_real));
    for (size_t i = 0; i < yolo_numel(y); i++) h->R[i] = (yolo_real)urand(-1, 1);
    for (int i = 0; i < m->nacts; i++) if (m->acts[i]->grad) memset(m->acts[i]->grad, 0, m->acts[i]->cap * sizeof(yolo_real));
    memset(h->x.grad, 0, yolo_numel(&h->x) * sizeof(yolo_real));
    yolo_grad_need(m, y);   /* dL/dy = R: the block's backward takes the rest */
    yolo_grad_add(m, y);    /* (fresh: the copy writes all of it) */
    memcpy(y->grad, h->R, yolo_numel(y) * sizeof(yolo_real));
    h_pass(h, c, 1);
    printf("  %s\n", c->name);
    hctx ctx = { h, c };
    report(c->name, "input", fd_check(hloss, &ctx, h->x.data, h->x.grad, yolo_numel(&h->x), 24));
    for (int k = 0; k < m->nparams; k++) {
        yolo_param *p = &m->params[k];
        if (p->kind > YOLO_P_BIAS) continue;
        report(c->name, p->name, fd_check(hloss, &ctx, m->values + p->offset, m->grads + p->offset, p->numel, 12));
    }
    /* clean up */
    yolo_tensor_free(&yolo_cpu, &h->x); yolo_tensor_free(&yolo_cpu, &h->y_op);
    for (int i = 0; i < m->nacts; i++) yolo_tensor_free(&yolo_cpu, m->acts[i]);
    if (c->kind == B_REPNCSP) yolo_repncsp_free(&h->csp);
    if (c->kind == B_ELAN4) { yolo_repncsp_free(&h->elan.csp2); yolo_repncsp_free(&h->elan.csp3); }
    free(m->params); free(m->values); free(m->grads); free(m->stats); free(m->acts); free(m->life); free(h->R); free(h);
}

/* ---- CIoU on its own, alpha fixed ------------------------------------------ */
static void check_ciou(void) {
    printf("  CIoU\n");
    for (int t = 0; t < 20; t++) {
        double p[4], q[4], g[4], alpha;
        p[0] = urand(0, 10); p[1] = urand(0, 10); p[2] = p[0] + urand(0.5, 8); p[3] = p[1] + urand(0.5, 8);
        q[0] = urand(0, 10); q[1] = urand(0, 10); q[2] = q[0] + urand(0.5, 8); q[3] = q[1] + urand(0.5, 8);
        yolo_ciou(p, q, NULL, &alpha, g);
        double num = 0, den = 0;
        for (int i = 0; i < 4; i++) {
            double keep = p[i];
            p[i] = keep + g_fd.step; double a = yolo_ciou(p, q, &alpha, NULL, NULL);
            p[i] = keep - g_fd.step; double b = yolo_ciou(p, q, &alpha, NULL, NULL);
            p[i] = keep;
            double fd = (a - b) / (2 * g_fd.step);
            num += (g[i] - fd) * (g[i] - fd); den += fd * fd;
        }
        char nm[32];
        snprintf(nm, sizeof nm, "pair %d", t);
        report("CIoU", nm, den > 0 ? sqrt(num / den) : sqrt(num));
    }
}

/* ---- the loss (assignment fixed) and the whole model ------------------------- */
typedef struct { yolo_model *m; yolo_loss *L; const yolo_real *targets; int nt; int full; } mctx;
static double mloss(void *p) {
    mctx *c = (mctx *)p;
    if (c->full) yolo_forward(c->m, 1);
    return yolo_loss_compute(c->m, c->L, c->targets, c->nt, 1);
}

static void check_model(const char *dir) {
    char path[512], err[YOLO_ERR];
    yolo_model m;
    snprintf(path, sizeof path, "%s/model.yaml", dir);
    if (yolo_model_from_yaml(&m, path, 0, err)) { printf("%s\n", err); g_fail++; return; }
    snprintf(path, sizeof path, "%s/weights.safetensors", dir);
    if (yolo_load_weights(&m, path, err)) { printf("%s\n", err); g_fail++; return; }
    /* a small random batch with a few boxes */
    int B = 2, H = 64, W = 64, nt = 5;
    yolo_real img[2 * 3 * 64 * 64], targets[5 * 6];
    for (int i = 0; i < B * 3 * H * W; i++) img[i] = (yolo_real)urand(0, 1);
    for (int t = 0; t < nt; t++) {
        yolo_real *r = targets + 6 * t;
        r[0] = (yolo_real)(t % B); r[1] = (yolo_real)(t % m.nc);
        r[2] = (yolo_real)urand(0.3, 0.7); r[3] = (yolo_real)urand(0.3, 0.7); r[4] = (yolo_real)urand(0.2, 0.6); r[5] = (yolo_real)urand(0.2, 0.6);
    }
    yolo_set_input(&m, B, H, W, img);
    yolo_forward(&m, 1);
    yolo_loss L;
    memset(&L, 0, sizeof L);
    yolo_loss_compute(&m, &L, targets, nt, 0);          /* fixes the assignment */
    yolo_detect *d = m.layers[m.detect].det;
    printf("  loss of %s (assignment fixed)\n", dir);
    g_fd = FD_LOSS;
    mctx c = { &m, &L, targets, nt, 0 };
    for (int b = 0; b < d->nbranch; b++)
        for (int l = 0; l < 3; l++) {
            /* the gradient was written by the first call; keep a copy */
            yolo_tensor *o = &d->out[b][l];
            size_t n = yolo_numel(o);
            yolo_real *g = (yolo_real *)malloc(n * sizeof(yolo_real));
            yolo_loss_compute(&m, &L, targets, nt, 1);
            memcpy(g, o->grad, n * sizeof(yolo_real));
            char nm[48];
            snprintf(nm, sizeof nm, "head map branch %d level %d", b, l);
            report("loss", nm, fd_check(mloss, &c, o->data, g, n, 40));
            free(g);
        }
    printf("  whole model %s\n", dir);
    g_fd = FD_MODEL;
    yolo_forward(&m, 1);
    yolo_loss_compute(&m, &L, targets, nt, 1);
    yolo_zero_grads(&m);
    yolo_backward(&m);
    c.full = 1;
    for (int k = 0; k < m.nparams; k += 7) {
        yolo_param *p = &m.params[k];
        if (p->kind > YOLO_P_BIAS) continue;
        report("model", p->name, fd_check(mloss, &c, m.values + p->offset, m.grads + p->offset, p->numel, 3));
    }
    yolo_loss_free(&L);
    yolo_model_free(&m);
}

int main(int argc, char **argv) {
    const char *golden = argc > 1 ? argv[1] : "tests/golden";
    if (sizeof(yolo_real) != sizeof(double)) { fprintf(stderr, "test_grad: build with -DYOLO_REAL=double\n"); return 2; }
    static const blockcase cases[] = {
        /* name                         kind        B  C  H  W   c2 k s g n */
        { "conv 3x3 s1 +BN+SiLU",        B_CONV,      2, 5, 7, 6,  6, 3, 1, 1, 0 },
        { "conv 3x3 s2 +BN+SiLU",        B_CONV,      1, 6, 9, 7,  5, 3, 2, 1, 0 },
        { "conv 3x3 groups 4 +BN+SiLU",  B_CONV,      3, 8, 5, 5,  12, 3, 1, 4, 0 },
        { "conv 1x1 +BN+SiLU",           B_CONV,      2, 7, 3, 5,  9, 1, 1, 1, 0 },
        { "conv2d 1x1 g4 + bias",        B_CONV_BARE, 2, 8, 4, 3,  12, 1, 1, 4, 0 },
        { "conv2d 1x1 + bias",           B_CONV_BARE, 1, 5, 5, 4,  7, 1, 1, 1, 0 },
        { "RepConvN",                    B_REPCONVN,  2, 4, 5, 6,  6, 0, 0, 0, 0 },
        { "RepNBottleneck",              B_BOTTLENECK,2, 6, 5, 4,  6, 0, 0, 0, 0 },
        { "RepNCSP n=2",                 B_REPNCSP,   2, 5, 4, 5,  8, 0, 0, 0, 2 },
        { "RepNCSPELAN4",                B_ELAN4,     2, 6, 5, 4,  10, 8, 6, 0, 1 },
        { "ELAN1",                       B_ELAN1,     2, 6, 5, 6,  9, 8, 4, 0, 0 },
        { "AConv",                       B_ACONV,     2, 5, 8, 7,  6, 0, 0, 0, 0 },
        { "ADown",                       B_ADOWN,     2, 6, 9, 8,  8, 0, 0, 0, 0 },
        { "SPPELAN",                     B_SPPELAN,   2, 6, 7, 5,  7, 4, 0, 0, 0 },
        { "avgpool 2x2 s1",              OP_AVGPOOL,  2, 3, 5, 6,  0, 0, 0, 0, 0 },
        { "maxpool 3x3 s2 p1",           OP_MAXPOOL,  2, 3, 7, 6,  0, 3, 2, 0, 0 },
        { "maxpool 5x5 s1 p2",           OP_MAXPOOL,  1, 2, 6, 7,  0, 5, 1, 0, 0 },
        { "nearest resize of a chunk",   OP_UPSAMPLE, 2, 5, 3, 4,  3, 0, 0, 0, 0 },
    };
    printf("gradient checks (central differences, double precision)\n");
    g_fd = FD_BLOCK;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_block(&cases[i]);
    check_ciou();
    char dir[512];
    static const char *models[] = { "tiny-gelan", "tiny-dual", "tiny-cb" };
    for (int i = 0; i < 3; i++) { snprintf(dir, sizeof dir, "%s/%s", golden, models[i]); check_model(dir); }
    printf("%d passed, %d failed\n", g_pass, g_fail);
    return g_fail ? 1 : 0;
}
