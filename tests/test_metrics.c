/* test_metrics: our matching and AP on stored predictions equal the
   official metrics code's (process_batch + ap_per_class, run on the same
   files by tests/official_metrics.py) to 1e-4.

     ./tests/test_metrics tests/golden/metrics

   DIR holds preds/NAME.txt (class cx cy w h conf, normalised; val
   --save-txt --save-conf), labels/NAME.txt, sizes.txt (NAME w h) and
   official.json. */
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

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "tests/golden/metrics";
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
    int fail = 0;
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
