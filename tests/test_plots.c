/* test_plots: every picture of a run folder is drawn, decodes, has its size
   and is not blank or uniform; results.png of a real run (an H200 coco128
   yolov9-s results.csv), the precision-recall family and the confusion
   matrix of synthetic detections of known quality (their numbers checked
   against what was built in), labels.jpg and the mosaics of the bundled
   coco8 pictures.

     tests/test_plots OUT_DIR */
#define YOLOV9_IMPLEMENTATION
#include "../yolov9.h"

static int g_pass, g_fail;
static void check(int ok, const char *what, const char *detail) {
    if (ok) g_pass++; else g_fail++;
    printf("  %-60s %s%s%s\n", what, ok ? "ok" : "FAIL", detail && *detail ? "  | " : "", detail ? detail : "");
}

/* decodes, is w x h (0: any), and has at least `colours` distinct colours
   over a quarter of its pixels' worth of spread (not blank, not uniform) */
static void check_picture(const char *dir, const char *name, int w, int h, int colours) {
    char path[1024], what[160], detail[160];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int pw, ph, ch;
    unsigned char *p = stbi_load(path, &pw, &ph, &ch, 3);
    int distinct = 0, nonwhite = 0;
    if (p) {
        static unsigned char seen[1 << 15];   /* 5 bits a channel */
        memset(seen, 0, sizeof seen);
        for (long i = 0; i < (long)pw * ph; i++) {
            int k = (p[i * 3] >> 3) << 10 | (p[i * 3 + 1] >> 3) << 5 | p[i * 3 + 2] >> 3;
            distinct += !seen[k]; seen[k] = 1;
            nonwhite += p[i * 3] < 250 || p[i * 3 + 1] < 250 || p[i * 3 + 2] < 250;
        }
        stbi_image_free(p);
    }
    double ink = p ? (double)nonwhite / ((double)pw * ph) : 0;
    snprintf(what, sizeof what, "%s: decodes, %dx%d, drawn", name, w ? w : pw, h ? h : ph);
    snprintf(detail, sizeof detail, "%dx%d, %d colours, %.1f%% not white", p ? pw : 0, p ? ph : 0, distinct, 100 * ink);
    check(p && (!w || pw == w) && (!h || ph == h) && distinct >= colours && ink > 0.005 && ink < 0.995, what, detail);
}

static uint64_t g_rng = 88172645463325252ull;
static double uniform(void) { g_rng ^= g_rng << 13; g_rng ^= g_rng >> 7; g_rng ^= g_rng << 17; return (g_rng >> 11) * (1.0 / 9007199254740992.0); }

int main(int argc, char **argv) {
    const char *out = argc > 1 ? argv[1] : "/tmp";
    char path[1024], detail[256];
    printf("plots\n");

    /* results.png: 12 columns but the epoch -> two rows of 6 panels of 420 x 360 */
    snprintf(path, sizeof path, "%s/results.png", out);
    check(yolo_plot_results("tests/results/h200-coco128-yolov9-s.csv", path) == 0, "results.png written", "");
    check_picture(out, "results.png", 6 * 420, 2 * 360, 3);

    /* synthetic validation of 3 classes: 200 pictures of 4 labels each; class 0
       found exactly at high confidence, class 1 found at half the labels, class 2
       never found, and false detections of class 1 at low confidence */
    const int nc = 3;
    char *names[3] = { "person", "bicycle", "car" };
    yolo_eval ev;
    memset(&ev, 0, sizeof ev);
    yolo_confusion cm = { nc, (double *)calloc((nc + 1) * (nc + 1), sizeof(double)) };
    for (int img = 0; img < 200; img++) {
        float lab[4 * 5];
        yolo_det det[8];
        int nd = 0;
        for (int k = 0; k < 4; k++) {
            /* label k in its own column of the picture: labels never overlap */
            float x = (float)(k * 150 + uniform() * 30), y = (float)(uniform() * 300), w = 40 + (float)(uniform() * 80), h = 40 + (float)(uniform() * 80);
            int c = k % 3;
            float *l = lab + k * 5;
            l[0] = (float)c; l[1] = x; l[2] = y; l[3] = x + w; l[4] = y + h;
            if (c == 0) det[nd++] = (yolo_det){ x + 1, y + 1, x + w + 1, y + h, (float)(0.6 + 0.4 * uniform()), 0 };
            if (c == 1 && img % 2) det[nd++] = (yolo_det){ x, y, x + w, y + h, (float)(0.3 + 0.6 * uniform()), 1 };
        }
        det[nd++] = (yolo_det){ 900, 900, 950, 950, (float)(0.3 * uniform()), 1 };   /* nothing there */
        yolo_eval_add(&ev, det, nd, lab, 4);
        yolo_confusion_add(&cm, det, nd, lab, 4);
    }
    yolo_metrics mt;
    yolo_metrics_compute(&ev, nc, &mt);
    /* class 0 perfect: the official 101-point AP gives 0.995 (the envelope ends at
       (1, 0), so the last trapezoid is half); class 1 half found: recall 0.5, and
       the envelope falls linearly to (1, 0) beyond; class 2 nothing */
    snprintf(detail, sizeof detail, "AP50 %.4f %.3f %.3f", mt.ap50[0], mt.ap50[1], mt.ap50[2]);
    check(fabs(mt.ap50[0] - 0.995) < 1e-9 && mt.ap50[1] > 0.45 && mt.ap50[1] < 0.75 && mt.ap50[2] == 0, "synthetic AP50: 0.995, about 0.6, 0", detail);
    const int NP = YOLO_CURVE_POINTS;
    snprintf(detail, sizeof detail, "class 0 precision %.3f at recall 0.999, class 1 recall %.3f at conf 0", mt.pr_curve[NP - 2], mt.r_curve[NP]);
    check(fabs(mt.pr_curve[NP - 2] - 1) < 1e-9 && fabs(mt.r_curve[NP] - 0.5) < 1e-9, "curves: P(R=0.999) of class 0 is 1, R(0) of class 1 is 0.5", detail);
    check(yolo_plot_pr_curves(&mt, names, out) == 0, "PR, F1, P and R curves written", "");
    check_picture(out, "PR_curve.png", 1400, 900, 5);
    check_picture(out, "F1_curve.png", 1400, 900, 5);
    check_picture(out, "P_curve.png", 1400, 900, 5);
    check_picture(out, "R_curve.png", 1400, 900, 5);
    /* the confusion matrix counts what was built: 267 person/person (every class-0 label),
       bicycle/bicycle for the odd pictures, every car label as background, and the
       false bicycles above conf 0.25 as bicycle/background */
    int n0 = 0, n1 = 0, fp = 0;
    for (int img = 0; img < 200; img++) n0 += 2, n1 += 1;   /* labels k = 0, 3 are class 0; k = 1 class 1 */
    double *m = cm.m;
    snprintf(detail, sizeof detail, "person %g/%d, bicycle %g/%d, car->background %g, bicycle false %g", m[0], n0, m[1 * 4 + 1], n1 / 2,
             m[3 * 4 + 2], m[1 * 4 + 3]);
    for (int i = 0; i < 16; i++) fp += i != 0 && i != 5 && i != 14 && i != 7 && i != 13 && m[i] != 0;
    check(m[0] == n0 && m[1 * 4 + 1] == n1 / 2 && m[3 * 4 + 2] == 200 && m[3 * 4 + 1] == n1 / 2 && m[1 * 4 + 3] > 0 && fp == 0,
          "confusion matrix: the counts that were built", detail);
    snprintf(path, sizeof path, "%s/confusion_matrix.png", out);
    check(yolo_plot_confusion(&cm, names, path) == 0, "confusion_matrix.png written", "");
    check_picture(out, "confusion_matrix.png", 0, 0, 3);
    yolo_metrics_free(&mt);
    yolo_eval_free(&ev);
    free(cm.m);

    /* labels.jpg and the mosaics of the bundled coco8 pictures */
    char err[YOLO_ERR];
    yolo_data_cfg dc;
    yolo_dataset ds;
    if (yolo_data_read(&dc, "tests/data/coco8/coco8.yaml", err) || yolo_dataset_open(&ds, dc.root, dc.train, dc.nc, 0, err)) {
        printf("%s\n", err);
        return 1;
    }
    snprintf(path, sizeof path, "%s/labels.jpg", out);
    check(yolo_plot_labels(&ds, dc.nc, dc.names, path) == 0, "labels.jpg written", "");
    check_picture(out, "labels.jpg", 1200, 1200, 5);
    yolo_hyp hyp;
    yolo_hyp_default(&hyp);
    yolo_loader ld;
    yolo_loader_init(&ld, &ds, &hyp, 8, 320, 1, 1);
    yolo_loader_start(&ld, 0, 0);
    yolo_batch *bt = yolo_loader_next(&ld);
    snprintf(path, sizeof path, "%s/train_batch0.jpg", out);
    check(bt && yolo_plot_batch(path, bt->images, bt->B, bt->H, bt->W, bt->targets, bt->nt, dc.names) == 0, "train_batch0.jpg written", "");
    yolo_loader_stop(&ld);
    yolo_loader_free(&ld);
    check_picture(out, "train_batch0.jpg", 3 * 640, 3 * 640, 50);   /* 8 pictures: a 3 x 3 grid of 640 */
    /* a validation's plots: every coco8 picture once, its labels as detections */
    yolo_val_plots vp;
    yolo_val_plots_start(&vp, &ds, dc.nc, 4, NULL, NULL);
    for (int id = 0; id < ds.n; id++) {
        yolo_det d[64];
        int n = 0;
        for (int k = 0; k < ds.nlab[id] && n < 64; k++, n++) {
            const float *l = ds.lab[id] + k * 5;
            float w0 = (float)ds.w0[id], h0 = (float)ds.h0[id];
            d[n] = (yolo_det){ (l[1] - l[3] / 2) * w0, (l[2] - l[4] / 2) * h0, (l[1] + l[3] / 2) * w0, (l[2] + l[4] / 2) * h0, 0.9f, (int)l[0] };
        }
        yolo_val_plots_hook(&vp, id, d, n);
    }
    long diag = 0, total = 0;
    for (int c = 0; c <= dc.nc; c++) for (int t = 0; t <= dc.nc; t++) { total += (long)vp.cm.m[c * (dc.nc + 1) + t]; diag += c == t ? (long)vp.cm.m[c * (dc.nc + 1) + t] : 0; }
    snprintf(detail, sizeof detail, "%ld of %ld on the diagonal, %ld labels", diag, total, ds.nboxes);
    check(diag == ds.nboxes && total == ds.nboxes, "labels as detections: a diagonal confusion matrix", detail);
    memset(&mt, 0, sizeof mt);
    mt.nc = dc.nc;
    check(yolo_val_plots_save(&vp, &mt, dc.names, out) == 0, "val_batch{0,1}_labels/_pred.jpg written", "");
    check_picture(out, "val_batch0_labels.jpg", 2 * 640, 2 * 640, 50);
    check_picture(out, "val_batch1_pred.jpg", 2 * 640, 2 * 640, 50);
    /* batches of 20: each plot keeps the first 16 (the official max_subplots), a 4 x 4 grid in 1920 */
    char sub[1100];
    snprintf(sub, sizeof sub, "%s/b20", out);
    mkdir(sub, 0755);
    yolo_val_plots_start(&vp, &ds, dc.nc, 20, NULL, NULL);
    yolo_det none[1];
    for (int k = 0; k < 40; k++) yolo_val_plots_hook(&vp, k % ds.n, none, 0);
    snprintf(detail, sizeof detail, "%d kept of 40", vp.n);
    check(vp.n == 32, "batches of 20: 16 pictures of each kept", detail);
    check(yolo_val_plots_save(&vp, &mt, dc.names, sub) == 0, "val_batch{0,1} of batches of 20 written", "");
    check_picture(sub, "val_batch1_labels.jpg", 1920, 1920, 50);
    yolo_dataset_free(&ds);
    yolo_data_free(&dc);
    printf("%d passed, %d failed\n", g_pass, g_fail);
    return g_fail ? 1 : 0;
}
