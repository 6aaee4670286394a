/* test_augment: the random perspective (the geometry of every training
   sample: mosaic crop, rotation, scale, shear, translation, perspective)
   against the official random_perspective given the same eight draws
   (tests/golden/augment: made by the official utils/augmentations.py with
   random.uniform replaced by the listed values, OpenCV 4.6). Boxes must
   agree to 1e-3 px, kept or dropped alike; pictures exactly (the warps,
   the resize and the colour conversions compute what OpenCV computes, in
   its fixed point). Then the HSV jitter against the official augment_hsv
   with the same draws (hsv.txt: uniform(-1, 1) for hue, saturation,
   value; gains 0.015, 0.7, 0.4): exactly. And two mosaics against the
   official load_mosaic with the same four pictures, centre and
   perspective draws: boxes to 1e-3 px, pictures exactly. That no two training samples share random draws. Then --rect
   training batches against the official rect loader, --multi-scale's
   sizes, shapes and bilinear resize against the official arithmetic and
   torch, --image-weights' weights and --quad's collation against the
   official's.

     ./tests/test_augment [tests/golden/augment] */
#define YOLOV9_IMPLEMENTATION
#include "../yolov9.h"

static int read_boxes(FILE *f, yolo_boxes *bx) {
    int n;
    if (fscanf(f, "%d", &n) != 1) return -1;
    bx->n = 0;
    for (int i = 0; i < n; i++) {
        float c, x1, y1, x2, y2;
        if (fscanf(f, "%f %f %f %f %f", &c, &x1, &y1, &x2, &y2) != 5) return -1;
        yolo_boxes_add(bx, c, x1, y1, x2, y2);
    }
    return 0;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* pictures in [0, 1] [3, H, W] against an RGB8 reference from row y0 of
   ref: the mean |difference| in grey levels, and how many values differ */
static double picture_diff(const yolo_real *ours, int H, int W, const yolo_image *ref, int y0, long *off) {
    double sum = 0;
    *off = 0;
    for (int c = 0; c < 3; c++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                int e = abs((int)lrint(ours[((size_t)c * H + y) * W + x] * 255) - (int)ref->rgb[((size_t)(y0 + y) * ref->w + x) * 3 + c]);
                sum += e; *off += e > 0;
            }
    return sum / (3.0 * H * W);
}

/* the bundled coco8 pictures (training split), from the golden folder dir */
static int open_coco8(const char *dir, yolo_data_cfg *dc, yolo_dataset *ds) {
    char path[1024], err[YOLO_ERR];
    snprintf(path, sizeof path, "%s/../../data/coco8/coco8.yaml", dir);
    if (yolo_data_read(dc, path, err) || yolo_dataset_open(ds, dc->root, dc->train, dc->nc, 0, err)) { fprintf(stderr, "%s\n", err); return -1; }
    return 0;
}

/* --rect training against the official rect loader (rect.txt, rectK.png:
   tests/official_rect_scale.py): coco8 at img 128, batch 3, augmentation
   off but mosaic 1 (rect must turn it off): the same batches in the same
   order, each of the official shape, the same pictures and labels (to
   1e-4), pixels as the mosaics above */
static int check_rect(const char *dir) {
    char path[1024], err[YOLO_ERR], name[256];
    yolo_data_cfg dc;
    yolo_dataset ds;
    if (open_coco8(dir, &dc, &ds)) return 1;
    yolo_hyp hyp;
    yolo_hyp_default(&hyp);
    hyp.hsv_h = hyp.hsv_s = hyp.hsv_v = hyp.degrees = hyp.translate = hyp.scale = hyp.shear = hyp.perspective = 0;
    hyp.flipud = hyp.fliplr = hyp.mixup = 0; hyp.mosaic = 1;
    yolo_loader ld;
    yolo_loader_init(&ld, &ds, &hyp, 3, 128, YOLO_LOADER_TRAIN | YOLO_LOADER_RECT, 0);
    yolo_loader_start(&ld, 0, 0);
    snprintf(path, sizeof path, "%s/rect.txt", dir);
    FILE *f = fopen(path, "r");
    if (!f) { fprintf(stderr, "%s: cannot open\n", path); return 1; }
    int fail = 0, k, H, W, B, batches = 0;
    for (yolo_batch *bt; fscanf(f, " batch %d %d %d %d", &k, &H, &W, &B) == 4; batches++) {
        bt = yolo_loader_next(&ld);
        yolo_image ref;
        snprintf(path, sizeof path, "%s/rect%d.png", dir, k);
        if (!bt || yolo_image_load(&ref, path, err)) { fprintf(stderr, "rect batch %d: %s\n", k, bt ? err : "missing"); return 1; }
        int good = bt->H == H && bt->W == W && bt->B == B, t = 0;
        double worst = 0, mean = 0;
        long off = 0, o;
        for (int j = 0; j < B; j++) {   /* every record read, compared where the batch has it */
            int nl;
            if (fscanf(f, "%255s %d", name, &nl) != 2) { fprintf(stderr, "rect.txt: malformed\n"); return 1; }
            const char *file = j < bt->B ? strrchr(ds.files[bt->ids[j]], '/') : NULL;
            good &= j < bt->B && !strcmp(file ? file + 1 : ds.files[bt->ids[j]], name);
            for (int i = 0; i < nl; i++, t++) {
                float want[5];
                if (fscanf(f, "%f %f %f %f %f", &want[0], &want[1], &want[2], &want[3], &want[4]) != 5) { fprintf(stderr, "rect.txt: malformed\n"); return 1; }
                good &= t < bt->nt && bt->targets[t * 6] == j;
                for (int q = 0; q < 5 && t < bt->nt; q++) worst = fmax(worst, fabs(bt->targets[t * 6 + 1 + q] - want[q]));
            }
            if (!good) continue;
            mean = fmax(mean, picture_diff(bt->images + (size_t)j * 3 * H * W, H, W, &ref, j * H, &o));
            off += o;
        }
        good = good && t == bt->nt && worst <= 1e-4 && off == 0;
        fail += !good;
        printf("  rect batch %d: %d pictures %dx%d (official %d %dx%d), %d labels, worst %.1e; picture mean |diff| %.3f, %ld values differ  %s\n",
               k, bt->B, bt->W, bt->H, B, W, H, bt->nt, worst, mean, off, good ? "ok" : "FAIL");
        yolo_image_free(&ref);
    }
    fclose(f);
    if (batches != ld.nbatch) { printf("  rect: %d batches, official %d  FAIL\n", ld.nbatch, batches); fail++; }
    yolo_loader_free(&ld);
    yolo_dataset_free(&ds);
    yolo_data_free(&dc);
    return fail;
}

/* --multi-scale against the official's arithmetic (multiscale.txt): the
   sizes randrange(S / 2, 3 S / 2 + 32) // 32 * 32 takes and how often, the
   batch shapes they give, and the bilinear resize against
   torch.nn.functional.interpolate (align_corners=False) to 1e-6 */
static int check_multi_scale(const char *dir) {
    char path[1024], key[16];
    snprintf(path, sizeof path, "%s/multiscale.txt", dir);
    FILE *f = fopen(path, "r");
    if (!f) { fprintf(stderr, "%s: cannot open\n", path); return 1; }
    int fail = 0, a, b, c, d, e, n;
    float *x = NULL;
    while (fscanf(f, "%15s", key) == 1) {
        int good = 1;
        if (!strcmp(key, "sizes") && fscanf(f, "%d %d", &a, &n) == 2) {   /* S, then n pairs: size, draws that give it */
            int lo = a / 2, hi = a * 3 / 2 + 32, count[4096] = { 0 }, kinds = 0;
            for (int v = 0; v < hi - lo; v++) kinds += !count[yolo_multi_scale_size(a, (uint64_t)v)]++;
            good = kinds == n && yolo_multi_scale_size(a, UINT64_MAX) == (hi - 1) / 32 * 32;
            for (int i = 0; i < n; i++) good &= fscanf(f, "%d %d", &b, &c) == 2 && b < 4096 && count[b] == c;
            printf("  multi-scale sizes at img %d: %d sizes, each drawn as often as the official's  %s\n", a, kinds, good ? "ok" : "FAIL");
        } else if (!strcmp(key, "shape") && fscanf(f, "%d %d %d %d %d", &a, &b, &c, &d, &e) == 5) {
            int h, w;
            yolo_multi_scale_shape(a, b, c, &h, &w);
            good = h == d && w == e;
            printf("  multi-scale shape %dx%d at size %d: %dx%d (official %dx%d)  %s\n", b, a, c, w, h, e, d, good ? "ok" : "FAIL");
        } else if (!strcmp(key, "input") && fscanf(f, "%d %d %d %d", &a, &b, &c, &d) == 4) {
            n = a * b * c * d;
            x = (float *)realloc(x, (size_t)n * sizeof(float));
            for (int i = 0; i < n; i++) if (fscanf(f, "%f", &x[i]) != 1) { fprintf(stderr, "%s: malformed\n", path); return 1; }
            continue;
        } else if (!strcmp(key, "bilinear") && x && fscanf(f, "%d %d", &d, &e) == 2) {   /* x is [a, b, c, n / (a b c)] */
            int C = a * b, h = c, w = n / (a * b * c);
            yolo_real *in = (yolo_real *)malloc((size_t)n * sizeof(yolo_real)), *out = (yolo_real *)malloc((size_t)C * d * e * sizeof(yolo_real));
            for (int i = 0; i < n; i++) in[i] = x[i];
            yolo_resize_bilinear(in, C, h, w, out, d, e);
            double worst = 0;
            float want;
            for (int i = 0; i < C * d * e; i++) { if (fscanf(f, "%f", &want) != 1) { fprintf(stderr, "%s: malformed\n", path); return 1; } worst = fmax(worst, fabs(out[i] - want)); }
            good = worst <= 1e-6;
            printf("  bilinear %dx%d -> %dx%d against torch's interpolate: worst %.1e  %s\n", w, h, e, d, worst, good ? "ok" : "FAIL");
            free(in); free(out);
        } else { fprintf(stderr, "%s: malformed at '%s'\n", path, key); return 1; }
        fail += !good;
    }
    fclose(f);
    free(x);
    /* and in the loader: each --multi-scale batch is the plain batch of the same seed, resized
       to a size of the official range (img 128: 64 to 192) */
    yolo_data_cfg dc;
    yolo_dataset ds;
    if (open_coco8(dir, &dc, &ds)) return 1;
    yolo_hyp hyp;
    yolo_hyp_default(&hyp);
    yolo_loader plain, ms;
    yolo_loader_init(&plain, &ds, &hyp, 2, 128, YOLO_LOADER_TRAIN, 0);
    yolo_loader_init(&ms, &ds, &hyp, 2, 128, YOLO_LOADER_TRAIN | YOLO_LOADER_MULTI_SCALE, 0);
    yolo_loader_start(&plain, 0, 5); yolo_loader_start(&ms, 0, 5);
    for (yolo_batch *p, *q; (p = yolo_loader_next(&plain)) && (q = yolo_loader_next(&ms));) {
        size_t m = (size_t)q->B * 3 * q->H * q->W;
        yolo_real *want = (yolo_real *)malloc(m * sizeof(yolo_real));
        yolo_resize_bilinear(p->images, p->B * 3, p->H, p->W, want, q->H, q->W);
        int good = q->H == q->W && q->H % 32 == 0 && q->H >= 64 && q->H <= 192 && q->nt == p->nt &&
                   !memcmp(want, q->images, m * sizeof(yolo_real)) && !memcmp(p->targets, q->targets, (size_t)p->nt * 6 * sizeof(yolo_real));
        fail += !good;
        printf("  multi-scale batch %d: %dx%d -> %dx%d, the plain batch resized, same targets  %s\n", q->index, p->W, p->H, q->W, q->H,
               good ? "ok" : "FAIL");
        free(want);
    }
    yolo_loader_free(&plain); yolo_loader_free(&ms);
    yolo_dataset_free(&ds);
    yolo_data_free(&dc);
    return fail;
}

/* --image-weights against the official's weights of the coco8 pictures for
   given per-class mAPs (imageweights.txt) to 1e-6 relative; the draws
   by them as frequent as the weights say (200000 draws, within 0.005);
   and a loader whose weights favour one picture alone draws only it */
static int check_image_weights(const char *dir) {
    char path[1024], name[256];
    yolo_data_cfg dc;
    yolo_dataset ds;
    if (open_coco8(dir, &dc, &ds)) return 1;
    snprintf(path, sizeof path, "%s/imageweights.txt", dir);
    FILE *f = fopen(path, "r");
    int nc, fail = 0;
    if (!f || fscanf(f, " maps %d", &nc) != 1 || nc != dc.nc) { fprintf(stderr, "%s: cannot read\n", path); return 1; }
    double *maps = (double *)calloc(nc, sizeof(double)), *iw = (double *)calloc(ds.n, sizeof(double)), want, worst = 0, total = 0;
    for (int c = 0; c < nc; c++) if (fscanf(f, "%lf", &maps[c]) != 1) { fprintf(stderr, "%s: malformed\n", path); return 1; }
    yolo_image_weights(&ds, nc, maps, iw);
    for (int i = 0; i < ds.n; i++) {
        const char *file = strrchr(ds.files[i], '/');
        if (fscanf(f, "%255s %lf", name, &want) != 2 || strcmp(file ? file + 1 : ds.files[i], name)) { worst = INFINITY; break; }
        worst = fmax(worst, fabs(iw[i] - want) / want);
        total += iw[i];
    }
    fclose(f);
    fail += !(worst <= 1e-6);
    printf("  image weights of %d pictures against the official: worst rel err %.1e  %s\n", ds.n, worst, worst <= 1e-6 ? "ok" : "FAIL");
    enum { K = 200000 };
    int *draws = (int *)malloc(K * sizeof(int)), *count = (int *)calloc(ds.n, sizeof(int));
    yolo_weighted_draws(iw, ds.n, K, 7, draws);
    for (int j = 0; j < K; j++) count[draws[j]]++;
    double dev = 0;
    for (int i = 0; i < ds.n; i++) dev = fmax(dev, fabs((double)count[i] / K - iw[i] / total));
    fail += !(dev <= 0.005);
    printf("  %d draws by them: frequencies within %.4f of the weights  %s\n", K, dev, dev <= 0.005 ? "ok" : "FAIL");
    for (int i = 0; i < ds.n; i++) iw[i] = i == 3;
    yolo_hyp hyp;
    yolo_hyp_default(&hyp);
    yolo_loader ld;
    yolo_loader_init(&ld, &ds, &hyp, 4, 64, YOLO_LOADER_TRAIN, 0);
    ld.image_weights = iw;
    yolo_loader_start(&ld, 0, 1);
    int only = 1;
    for (int i = 0; i < ds.n; i++) only &= ld.order[i] == 3;
    fail += !only;
    printf("  a loader weighing picture 3 alone draws it %d times of %d  %s\n", only ? ds.n : 0, ds.n, only ? "ok" : "FAIL");
    yolo_loader_free(&ld);
    free(maps); free(iw); free(draws); free(count);
    yolo_dataset_free(&ds);
    yolo_data_free(&dc);
    return fail;
}

/* --quad against the official collate_fn4 (quad.txt): a batch of 9
   pictures, the first group upsampled, the second tiled: the same 2
   pictures to the grey level, the same targets to 1e-6 */
static int check_quad(const char *dir) {
    char path[1024], key[16];
    snprintf(path, sizeof path, "%s/quad.txt", dir);
    FILE *f = fopen(path, "r");
    if (!f) { fprintf(stderr, "%s: cannot open\n", path); return 1; }
    int up[2], B, H, W, nt, oB, oH, oW, ont, ok = fscanf(f, " upsample %*d %d %d", &up[0], &up[1]) == 2;
    ok = ok && fscanf(f, " images %d %d %d", &B, &H, &W) == 3;
    yolo_batch bt = { 0 };
    bt.B = B; bt.H = H; bt.W = W;
    bt.images = (yolo_real *)calloc((size_t)B * 3 * H * W, sizeof(yolo_real));
    for (int i = 0; ok && i < B * 3 * H * W; i++) { float v; ok = fscanf(f, "%f", &v) == 1; bt.images[i] = (yolo_real)(v / 255); }
    ok = ok && fscanf(f, " targets %d", &nt) == 1;
    bt.nt = bt.tcap = nt;
    bt.targets = (yolo_real *)calloc((size_t)nt * 6, sizeof(yolo_real));
    for (int i = 0; ok && i < nt * 6; i++) { float v; ok = fscanf(f, "%f", &v) == 1; bt.targets[i] = v; }
    ok = ok && fscanf(f, " out_images %d %d %d", &oB, &oH, &oW) == 3;
    if (!ok) { fprintf(stderr, "%s: malformed\n", path); return 1; }
    yolo_quad_collate(&bt, up);
    int good = bt.B == oB && bt.H == oH && bt.W == oW, off = 0;
    for (int i = 0; i < oB * 3 * oH * oW; i++) {
        float v;
        if (fscanf(f, "%f", &v) != 1) { fprintf(stderr, "%s: malformed\n", path); return 1; }
        off += good && lrint(bt.images[i] * 255) != (long)v;
    }
    double worst = 0;
    if (fscanf(f, " %15s %d", key, &ont) != 2) { fprintf(stderr, "%s: malformed\n", path); return 1; }
    good &= ont == bt.nt;
    for (int i = 0; i < ont * 6; i++) {
        float v;
        if (fscanf(f, "%f", &v) != 1) { fprintf(stderr, "%s: malformed\n", path); return 1; }
        if (good) worst = fmax(worst, fabs(bt.targets[i] - v));
    }
    fclose(f);
    good = good && !off && worst <= 1e-6;
    printf("  quad: %d pictures %dx%d -> %d of %dx%d (official %d of %dx%d), %d grey levels off, %d targets (official %d), worst %.1e  %s\n",
           B, W, H, bt.B, bt.W, bt.H, oB, oW, oH, off, bt.nt, ont, worst, good ? "ok" : "FAIL");
    free(bt.images); free(bt.targets);
    return !good;
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "tests/golden/augment";
    int fail = 0;
    for (int n = 1; n <= 3; n++) {
        char path[1024], err[YOLO_ERR];
        snprintf(path, sizeof path, "%s/case%d.txt", dir, n);
        FILE *f = fopen(path, "r");
        if (!f) { fprintf(stderr, "%s: cannot open\n", path); return 1; }
        int persp, ow, oh;
        double u[8];
        yolo_boxes in = { 0, 0, NULL }, want = { 0, 0, NULL };
        int ok = fscanf(f, "%d %d %d", &persp, &ow, &oh) == 3;
        for (int k = 0; k < 8 && ok; k++) ok = fscanf(f, "%lf", &u[k]) == 1;
        ok = ok && !read_boxes(f, &in) && !read_boxes(f, &want);
        fclose(f);
        if (!ok) { fprintf(stderr, "%s: malformed\n", path); return 1; }
        yolo_image im, ref;
        snprintf(path, sizeof path, "%s/../train-tiny/images/000000000143.png", dir);
        if (yolo_image_load(&im, path, err)) { fprintf(stderr, "%s\n", err); return 1; }
        snprintf(path, sizeof path, "%s/case%d.png", dir, n);
        if (yolo_image_load(&ref, path, err)) { fprintf(stderr, "%s\n", err); return 1; }
        yolo_perspective_apply(&im, &in, ow, oh, persp, u);
        double worst = in.n == want.n ? 0 : INFINITY;
        for (int i = 0; i < in.n && i < want.n; i++)
            for (int q = 0; q < 5; q++) worst = fmax(worst, fabs(in.b[i * 5 + q] - want.b[i * 5 + q]));
        double sum = 0;
        long off = 0, cnt = (long)ow * oh * 3;
        for (long i = 0; i < cnt && im.w == ref.w && im.h == ref.h; i++) {
            int d = abs((int)im.rgb[i] - (int)ref.rgb[i]);
            sum += d;
            off += d > 0;
        }
        int good = worst <= 1e-3 && im.w == ref.w && im.h == ref.h && off == 0;
        fail += !good;
        printf("  case %d (%s, %dx%d): boxes %d -> %d (official %d), worst %.1e px; picture mean |diff| %.3f, %.2f%% of values differ  %s\n",
               n, persp ? "perspective" : "affine", ow, oh, 8, in.n, want.n, worst, sum / cnt, 100.0 * off / cnt, good ? "ok" : "FAIL");
        free(in.b); free(want.b); yolo_image_free(&im); yolo_image_free(&ref);
    }
    char path[1024], err[YOLO_ERR];
    snprintf(path, sizeof path, "%s/hsv.txt", dir);
    FILE *f = fopen(path, "r");
    if (!f) { fprintf(stderr, "%s: cannot open\n", path); return 1; }
    double d[3];
    for (int n = 1; fscanf(f, "%lf %lf %lf", &d[0], &d[1], &d[2]) == 3; n++) {
        yolo_image im, ref;
        snprintf(path, sizeof path, "%s/../train-tiny/images/000000000143.png", dir);
        if (yolo_image_load(&im, path, err)) { fprintf(stderr, "%s\n", err); return 1; }
        snprintf(path, sizeof path, "%s/hsv%d.png", dir, n);
        if (yolo_image_load(&ref, path, err)) { fprintf(stderr, "%s\n", err); return 1; }
        yolo_hsv_apply(&im, 0.015 * d[0] + 1, 0.7 * d[1] + 1, 0.4 * d[2] + 1);
        long cnt = im.w == ref.w && im.h == ref.h ? (long)im.w * im.h * 3 : 0;
        int worst = cnt ? 0 : 256;
        double sum = 0;
        for (long i = 0; i < cnt; i++) { int e = abs((int)im.rgb[i] - (int)ref.rgb[i]); sum += e; if (e > worst) worst = e; }
        int good = cnt && worst == 0;
        fail += !good;
        printf("  hsv %d (draws %g %g %g): mean |diff| %.3f, worst %d grey levels  %s\n", n, d[0], d[1], d[2], sum / (cnt ? cnt : 1), worst,
               good ? "ok" : "FAIL");
        yolo_image_free(&im); yolo_image_free(&ref);
    }
    fclose(f);
    yolo_dataset ds;
    snprintf(path, sizeof path, "%s/../train-tiny", dir);
    if (yolo_dataset_open(&ds, path, "images", 5, 0, err)) { fprintf(stderr, "%s\n", err); return 1; }
    for (int n = 1; n <= 2; n++) {
        snprintf(path, sizeof path, "%s/mosaic%d.txt", dir, n);
        if (!(f = fopen(path, "r"))) { fprintf(stderr, "%s: cannot open\n", path); return 1; }
        int idx[4], xc, yc, ok = fscanf(f, "%d %d %d %d %d %d", &idx[0], &idx[1], &idx[2], &idx[3], &xc, &yc) == 6;
        double u[8];
        yolo_boxes got = { 0, 0, NULL }, want = { 0, 0, NULL };
        for (int k = 0; k < 8 && ok; k++) ok = fscanf(f, "%lf", &u[k]) == 1;
        ok = ok && !read_boxes(f, &want);
        fclose(f);
        if (!ok) { fprintf(stderr, "%s: malformed\n", path); return 1; }
        yolo_image im, ref;
        snprintf(path, sizeof path, "%s/mosaic%d.png", dir, n);
        if (yolo_image_load(&ref, path, err) || yolo_mosaic_apply(&ds, idx, xc, yc, 128, 0, u, &im, &got, err)) { fprintf(stderr, "%s\n", err); return 1; }
        double worst = got.n == want.n ? 0 : INFINITY, sum = 0;
        for (int i = 0; i < got.n && i < want.n; i++)
            for (int q = 0; q < 5; q++) worst = fmax(worst, fabs(got.b[i * 5 + q] - want.b[i * 5 + q]));
        long cnt = im.w == ref.w && im.h == ref.h ? (long)im.w * im.h * 3 : 0, off = 0;
        for (long i = 0; i < cnt; i++) { int e = abs((int)im.rgb[i] - (int)ref.rgb[i]); sum += e; off += e > 0; }
        int good = worst <= 1e-3 && cnt && off == 0;
        fail += !good;
        printf("  mosaic %d (pictures %d %d %d %d, centre %d,%d): %d boxes (official %d), worst %.1e px; picture mean |diff| %.3f, %.2f%% of values differ  %s\n",
               n, idx[0], idx[1], idx[2], idx[3], xc, yc, got.n, want.n, worst, sum / (cnt ? cnt : 1), 100.0 * off / (cnt ? cnt : 1), good ? "ok" : "FAIL");
        free(got.b); free(want.b); yolo_image_free(&im); yolo_image_free(&ref);
    }
    yolo_dataset_free(&ds);

    /* Independent samples, as the official's: the first 64 numbers of the
       streams of 256 samples under the epoch seeds of seed 0 (epochs 0..7)
       and seed 1 (epochs 0..3), 196,608 numbers of 64 bits: none may
       appear twice (by chance: probability 1e-9). */
    static const uint64_t epoch_seeds[12] = { 0, 1, 2, 3, 4, 5, 6, 7, 1000003, 1000004, 1000005, 1000006 };
    size_t total = 12 * 256 * 64, shared = 0;
    uint64_t *draws = (uint64_t *)malloc(total * sizeof(uint64_t)), *o = draws;
    for (int e = 0; e < 12; e++)
        for (int pos = 0; pos < 256; pos++) {
            yolo_rng r = yolo_sample_rng(epoch_seeds[e], pos);
            for (int k = 0; k < 64; k++) *o++ = yolo_rng_u64(&r);
        }
    qsort(draws, total, sizeof(uint64_t), cmp_u64);
    for (size_t i = 1; i < total; i++) shared += draws[i] == draws[i - 1];
    fail += shared != 0;
    printf("  independent samples: %zu of %zu draws of 3072 sample streams repeat another's  %s\n", shared, total, shared ? "FAIL" : "ok");
    free(draws);
    fail += check_rect(dir);
    fail += check_multi_scale(dir);
    fail += check_image_weights(dir);
    fail += check_quad(dir);
    printf("test_augment: %d failed\n", fail);
    return fail ? 1 : 0;
}
