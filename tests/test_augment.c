/* test_augment: the random perspective (the geometry of every training
   sample: mosaic crop, rotation, scale, shear, translation, perspective)
   against the official random_perspective given the same eight draws
   (tests/golden/augment: made by the official utils/augmentations.py with
   random.uniform replaced by the listed values, OpenCV 4.6). Boxes must
   agree to 1e-3 px, kept or dropped alike; pictures to a mean of 0.5 grey
   levels, with at most 1% of values off by more than 2 (OpenCV's bilinear
   weights are 5-bit fixed point, ours exact). Then the HSV jitter against
   the official augment_hsv with the same draws (hsv.txt: uniform(-1, 1) for
   hue, saturation, value; gains 0.015, 0.7, 0.4): within 1 grey level.
   And two mosaics against the official load_mosaic with the same four
   pictures, centre and perspective draws: boxes to 1e-3 px, pictures as
   above. Last, that no two training samples share random draws.

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
            off += d > 2;
        }
        int good = worst <= 1e-3 && im.w == ref.w && im.h == ref.h && sum / cnt <= 0.5 && off <= cnt / 100;
        fail += !good;
        printf("  case %d (%s, %dx%d): boxes %d -> %d (official %d), worst %.1e px; picture mean |diff| %.3f, %.2f%% off by > 2  %s\n",
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
        int good = worst <= 1;
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
        for (long i = 0; i < cnt; i++) { int e = abs((int)im.rgb[i] - (int)ref.rgb[i]); sum += e; off += e > 2; }
        int good = worst <= 1e-3 && cnt && sum / cnt <= 0.5 && off <= cnt / 100;
        fail += !good;
        printf("  mosaic %d (pictures %d %d %d %d, centre %d,%d): %d boxes (official %d), worst %.1e px; picture mean |diff| %.3f, %.2f%% off by > 2  %s\n",
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
    printf("test_augment: %d failed\n", fail);
    return fail ? 1 : 0;
}
