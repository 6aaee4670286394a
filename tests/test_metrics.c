/* test_metrics: the official matching and AP, checked two ways.

   1. Three small cases whose answers follow from the official definitions
      by hand (the derivations are in the comments): perfect detections,
      a false positive between two true ones, and the official matching's
      habit of giving a label to the earliest detection rather than the
      best-overlapping one.
   2. With DIR: stored predictions whose official numbers were computed by
      the official process_batch + ap_per_class (tests/official_metrics.py):
      ours equal them to 1e-4. DIR holds preds/NAME.txt (class cx cy w h
      conf, normalised; val --save-txt --save-conf), labels/NAME.txt,
      sizes.txt (NAME w h) and official.json.

     ./tests/test_metrics [DIR] */
#define YOLOV9_IMPLEMENTATION
#include "../yolov9.h"

static float *read_rows(const char *path, int cols, int *n) {
    FILE *f = fopen(path, "r");
    float *r = NULL;
    int cap = 0;
    *n = 0;
    if (!f) return NULL;
    for (;;) {
        float v[6];
        int k = 0;
        while (k < cols && fscanf(f, "%f", &v[k]) == 1) k++;
        if (k < cols) break;
        if (*n == cap) { cap = cap ? 2 * cap : 64; r = (float *)realloc(r, (size_t)cap * cols * sizeof(float)); }
        memcpy(r + (size_t)*n * cols, v, cols * sizeof(float));
        (*n)++;
    }
    fclose(f);
    return r;
}

static double json_number(const char *text, const char *key) {
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(text, pat);
    return p ? atof(p + strlen(pat)) : NAN;
}

typedef struct { yolo_det d; int i; } ranked;
static int by_conf(const void *a, const void *b) {   /* descending, stable */
    const ranked *x = (const ranked *)a, *y = (const ranked *)b;
    if (x->d.conf != y->d.conf) return x->d.conf < y->d.conf ? 1 : -1;
    return x->i - y->i;
}

static int by_conf_float(const void *a, const void *b) {   /* descending */
    float x = *(const float *)a, y = *(const float *)b;
    return (x < y) - (x > y);
}

static int g_fail;
static void expect(const char *what, double got, double want) {
    int ok = fabs(got - want) <= 1e-9;
    g_fail += !ok;
    printf("  %-44s %.9f  expected %.9f  %s\n", what, got, want, ok ? "ok" : "FAIL");
}
static yolo_det det(float x1, float y1, float x2, float y2, float conf, int cls) {
    yolo_det d = { x1, y1, x2, y2, conf, cls };
    return d;
}

static void analytic_cases(void) {
    yolo_metrics mt;
    /* A. every label found exactly, at every threshold. Class 0: two
       labels, recall 0.5 then 1 at precision 1. The envelope is 1 up to
       recall 1, but np.interp at x = 1 returns the appended end point
       (precision 0), so the last trapezoid counts half: AP = 0.99 + 0.005
       = 0.995 (a perfect model shows 0.995 in the official code). The
       mean F1 is 1 from the lowest confidence on, so P = R = 1. */
    {
        yolo_eval ev = { 0 };
        float lab0[10] = { 0, 0, 0, 10, 10, 1, 20, 20, 40, 30 }, lab1[5] = { 0, 5, 5, 25, 25 };
        yolo_det d0[2] = { det(0, 0, 10, 10, 0.9f, 0), det(20, 20, 40, 30, 0.6f, 1) }, d1[1] = { det(5, 5, 25, 25, 0.8f, 0) };
        yolo_eval_add(&ev, d0, 2, lab0, 2);
        yolo_eval_add(&ev, d1, 1, lab1, 1);
        yolo_metrics_compute(&ev, 3, &mt);
        expect("A perfect: mAP50", mt.map50, 0.995);
        expect("A perfect: mAP50-95", mt.map, 0.995);
        expect("A perfect: P", mt.p, 1);
        expect("A perfect: R", mt.r, 1);
        yolo_metrics_free(&mt); yolo_eval_free(&ev);
    }
    /* B. two labels; by confidence: a hit, a miss, a hit. Recall 0.5, 0.5,
       1; precision 1, 0.5, 2/3; the envelope 1 up to recall 0.5 and 2/3
       from there (at x = 0.5 exactly np.interp takes the last of the equal
       recalls: 2/3), 0 at x = 1. Trapezoids of width 0.01:
       49 x 1 + (1 + 2/3)/2 + 49 x 2/3 + (2/3)/2, times 0.01
       = 0.49 + 1/120 + 0.98/3 + 1/300 = 0.828333... */
    {
        yolo_eval ev = { 0 };
        float lab[10] = { 0, 0, 0, 10, 10, 0, 50, 50, 60, 60 };
        yolo_det d[3] = { det(0, 0, 10, 10, 0.9f, 0), det(100, 100, 110, 110, 0.8f, 0), det(50, 50, 60, 60, 0.7f, 0) };
        yolo_eval_add(&ev, d, 3, lab, 2);
        yolo_metrics_compute(&ev, 1, &mt);
        double ap = 0.49 + 1.0 / 120 + 0.98 / 3 + 1.0 / 300;
        expect("B hit, miss, hit: mAP50", mt.map50, ap);
        expect("B hit, miss, hit: mAP50-95", mt.map, ap);
        yolo_metrics_free(&mt); yolo_eval_free(&ev);
    }
    /* C. one label (0,0)-(10,10); detection 1 (confidence 0.9) overlaps it
       with IoU 0.62, detection 2 (0.8) with IoU 0.9. The official
       process_batch keeps, per label, the pair of the earliest detection
       among those left after each detection kept its best label: at
       thresholds 0.50-0.60 detection 1 is the hit (recall 1 at once: AP
       0.995 as in A); at 0.65-0.90 only detection 2 qualifies (recall 0
       then 1 at precision 1/2: envelope 1/2 from x = 0, AP =
       99 x 0.5 x 0.01 + 0.25 x 0.01 = 0.4975); at 0.95 none (AP 0).
       mAP50 = 0.995; mAP50-95 = (3 x 0.995 + 6 x 0.4975) / 10 = 0.597.
       Matching by best IoU instead would give mAP50 0.4975. */
    {
        yolo_eval ev = { 0 };
        float lab[5] = { 0, 0, 0, 10, 10 };
        yolo_det d[2] = { det(0, 0, 10, 6.2f, 0.9f, 0), det(0, 0, 10, 9, 0.8f, 0) };
        yolo_eval_add(&ev, d, 2, lab, 1);
        yolo_metrics_compute(&ev, 1, &mt);
        expect("C earliest detection takes the label: mAP50", mt.map50, 0.995);
        expect("C earliest detection takes the label: mAP50-95", mt.map, 0.597);
        yolo_metrics_free(&mt); yolo_eval_free(&ev);
    }
    /* D. the NMS candidate limit. An untrained model at 640 has 8400 anchors
       x 80 classes, all above 0.001; the official NMS keeps the 30000 most
       confident before suppressing. With suppression off (IoU threshold
       above 1) and max_det 30000 the kept list must be exactly the 30000
       largest probabilities in descending order, whichever way they were
       selected. Random probabilities, with ties, so the order is exercised. */
    {
        enum { A = 8400, NC = 80 };
        yolo_real *pred = (yolo_real *)calloc((size_t)(4 + NC) * A, sizeof(yolo_real));
        float *all = (float *)malloc((size_t)A * NC * sizeof(float));
        uint64_t s = 12345;
        for (int a = 0; a < A; a++) {
            pred[a] = 320; pred[A + a] = 320; pred[2 * A + a] = 64; pred[3 * A + a] = 64;
            for (int k = 0; k < NC; k++) {
                s = s * 6364136223846793005ULL + 1442695040888963407ULL;
                float p = 0.002f + (float)((s >> 40) % 4096) / 4096.0f;   /* 4096 levels: many ties */
                pred[(size_t)(4 + k) * A + a] = p;
                all[(size_t)a * NC + k] = p;
            }
        }
        yolo_det *out = (yolo_det *)malloc(30000 * sizeof(yolo_det));
        int kept = yolo_nms_labels(pred, A, NC, 0.001f, 1.01f, 30000, 0, NULL, 0, 1, out);
        qsort(all, (size_t)A * NC, sizeof(float), by_conf_float);
        int bad = kept != 30000;
        for (int i = 0; i < kept && !bad; i++) bad = out[i].conf != all[i];
        expect("D NMS keeps the 30000 most confident of 672000 candidates, in order", bad, 0);
        free(pred); free(all); free(out);
    }
}

int main(int argc, char **argv) {
    analytic_cases();
    if (argc < 2) { printf("test_metrics: %d failed\n", g_fail); return g_fail ? 1 : 0; }
    const char *dir = argv[1];
    char path[1024], name[256], text[4096] = "";
    snprintf(path, sizeof path, "%s/official.json", dir);
    FILE *f = fopen(path, "r");
    if (!f) { fprintf(stderr, "%s: cannot open\n", path); return 1; }
    size_t len = fread(text, 1, sizeof text - 1, f);
    text[len] = 0;
    fclose(f);
    snprintf(path, sizeof path, "%s/sizes.txt", dir);
    FILE *sz = fopen(path, "r");
    if (!sz) { fprintf(stderr, "%s: cannot open\n", path); return 1; }
    yolo_eval ev;
    memset(&ev, 0, sizeof ev);
    int w, h, ndet = 0;
    while (fscanf(sz, "%255s %d %d", name, &w, &h) == 3) {
        int np, nl;
        snprintf(path, sizeof path, "%s/preds/%s.txt", dir, name);
        float *p = read_rows(path, 6, &np);
        snprintf(path, sizeof path, "%s/labels/%s.txt", dir, name);
        float *l = read_rows(path, 5, &nl);
        ranked *rk = (ranked *)malloc((size_t)(np ? np : 1) * sizeof(ranked));
        yolo_det *d = (yolo_det *)malloc((size_t)(np ? np : 1) * sizeof(yolo_det));
        for (int i = 0; i < np; i++) {   /* the same float32 arithmetic as the official script */
            const float *r = p + i * 6;
            yolo_det *o = &rk[i].d;
            o->x1 = (r[1] - r[3] / 2) * w; o->y1 = (r[2] - r[4] / 2) * h;
            o->x2 = (r[1] + r[3] / 2) * w; o->y2 = (r[2] + r[4] / 2) * h;
            o->conf = r[5]; o->cls = (int)r[0]; rk[i].i = i;
        }
        qsort(rk, np, sizeof *rk, by_conf);
        for (int i = 0; i < np; i++) d[i] = rk[i].d;
        free(rk);
        for (int i = 0; i < nl; i++) {
            float *r = l + i * 5, cx = r[1], cy = r[2], bw = r[3], bh = r[4];
            r[1] = (cx - bw / 2) * w; r[2] = (cy - bh / 2) * h; r[3] = (cx + bw / 2) * w; r[4] = (cy + bh / 2) * h;
        }
        yolo_eval_add(&ev, d, np, l, nl);
        ndet += np;
        free(p); free(l); free(d);
    }
    fclose(sz);
    yolo_metrics mt;
    yolo_metrics_compute(&ev, 80, &mt);
    const char *keys[4] = { "p", "r", "map50", "map" };
    double ours[4] = { mt.p, mt.r, mt.map50, mt.map };
    int fail = g_fail;
    printf("test_metrics: %d pictures, %d detections, %ld labels\n", ev.images, ndet, ev.nt);
    for (int k = 0; k < 4; k++) {
        double off = json_number(text, keys[k]), e = fabs(ours[k] - off);
        int ok = e <= 1e-4;
        fail += !ok;
        printf("  %-6s ours %.6f  official %.6f  |diff| %.1e  %s\n", keys[k], ours[k], off, e, ok ? "ok" : "FAIL");
    }
    yolo_metrics_free(&mt);
    yolo_eval_free(&ev);
    printf("test_metrics: %d failed\n", fail);
    return fail ? 1 : 0;
}
