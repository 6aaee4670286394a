/* test_plots: every picture of a run folder is drawn, decodes, has its size
   and is not blank or uniform; results.png has the official plot_results'
   ten titled panels in its 2 x 5 layout (the titles found drawn in their
   panels), for a table as train writes it and for an older one (an H200
   coco128 yolov9-s results.csv); the precision-recall family and the
   confusion matrix (with their official titles, and its colour bar) of
   synthetic detections of known quality (their numbers checked against
   what was built in), labels.jpg, labels_correlogram.jpg and the mosaics
   of the bundled coco8 pictures.

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

/* Is text drawn (black, stb_easy_font at scale s, over white) somewhere in
   the rectangle [x0, x1) x [y0, y1) of the picture? Its pixels are
   rendered alone and looked for exactly: every inked pixel black, every
   other pixel of its box white. */
static int text_at(const unsigned char *p, int pw, int ph, int x0, int y0, int x1, int y1, const char *text, int s) {
    int tw = yolo_text_width(text, s) + 2, th = 12 * s;
    yolo_image t = yolo_canvas(tw, th);
    yolo_text(&t, 1, 1, text, s, 0x000000, 0);
    int found = 0;
    for (int oy = y0; oy + th <= y1 && oy + th <= ph && !found; oy++)
        for (int ox = x0; ox + tw <= x1 && ox + tw <= pw && !found; ox++) {
            int ok = 1;
            for (int y = 0; y < th && ok; y++)
                for (int x = 0; x < tw && ok; x++) {
                    const unsigned char *a = p + ((size_t)(oy + y) * pw + ox + x) * 3, *b = t.rgb + ((size_t)y * tw + x) * 3;
                    ok = a[0] == b[0] && a[1] == b[1] && a[2] == b[2];
                }
            found = ok;
        }
    free(t.rgb);
    return found;
}

/* The official plot_results' panels, in its order (utils/plots.py: columns
   1 2 3 4 5 8 9 10 6 7 of its results.csv, titled with their names), 2 x 5 */
static const char *official_panels[10] = { "train/box_loss", "train/cls_loss", "train/dfl_loss", "metrics/precision", "metrics/recall",
                                           "val/box_loss", "val/cls_loss", "val/dfl_loss", "metrics/mAP_0.5", "metrics/mAP_0.5:0.95" };

/* each title drawn at the top of its own panel of a rows x cols grid filling the picture */
static void check_titles(const char *dir, const char *name, const char *const *titles, int n, int rows, int cols) {
    char path[1024], what[160], detail[256] = "";
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int pw, ph, ch, found = 0;
    unsigned char *p = stbi_load(path, &pw, &ph, &ch, 3);
    for (int k = 0; p && k < n; k++) {
        int cw = pw / cols, rh = ph / rows, x = k % cols * cw, y = k / cols * rh;
        int here = text_at(p, pw, ph, x, y, x + cw, y + 60, titles[k], 2);
        found += here;
        if (!here && strlen(detail) < 150) snprintf(detail + strlen(detail), sizeof detail - strlen(detail), "'%s' not in panel %d; ", titles[k], k);
    }
    if (p) stbi_image_free(p);
    snprintf(what, sizeof what, "%s: %d titles in a %d x %d grid", name, n, rows, cols);
    check(p && found == n, what, detail);
}

static uint64_t g_rng = 88172645463325252ull;
static double uniform(void) { g_rng ^= g_rng << 13; g_rng ^= g_rng >> 7; g_rng ^= g_rng << 17; return (g_rng >> 11) * (1.0 / 9007199254740992.0); }

int main(int argc, char **argv) {
    const char *out = argc > 1 ? argv[1] : "/tmp";
    char path[1024], detail[256];
    printf("plots\n");

    /* results.png of a results.csv as train writes it (the official's 14 columns, then ours): the
       official's ten panels, titled, 2 x 5 (2400 x 1200, the official's 12 x 6 inches at 200 dpi);
       the other five columns in results_extra.png, one row */
    const char *header = "epoch,train/box_loss,train/cls_loss,train/dfl_loss,metrics/precision,metrics/recall,metrics/mAP_0.5,"
                         "metrics/mAP_0.5:0.95,val/box_loss,val/cls_loss,val/dfl_loss,x/lr0,x/lr1,x/lr2,time/epoch_s,time/data_wait";
    char csv[1024];
    snprintf(csv, sizeof csv, "%s/results.csv", out);
    FILE *f = fopen(csv, "w");
    fprintf(f, "%s\n", header);
    for (int e = 0; e < 30; e++) {
        fprintf(f, "%d", e);
        for (int c = 1; c < 16; c++) fprintf(f, ",%g", c >= 8 && c <= 10 ? 0.0 : c * exp(-0.05 * e) + 0.01 * (e % 3));
        fprintf(f, "\n");
    }
    fclose(f);
    snprintf(path, sizeof path, "%s/results.png", out);
    check(yolo_plot_results(csv, path) == 0, "results.png written", "");
    check_picture(out, "results.png", 2400, 1200, 3);
    check_titles(out, "results.png", official_panels, 10, 2, 5);
    const char *extra[5] = { "x/lr0", "x/lr1", "x/lr2", "time/epoch_s", "time/data_wait" };
    check_picture(out, "results_extra.png", 2400, 600, 3);
    check_titles(out, "results_extra.png", extra, 5, 1, 5);
    /* an older table without the validation losses: the same ten panels, three of them empty */
    char sub0[1100];
    snprintf(sub0, sizeof sub0, "%s/older", out);
    mkdir(sub0, 0755);
    snprintf(path, sizeof path, "%s/results.png", sub0);
    check(yolo_plot_results("tests/results/h200-coco128-yolov9-s.csv", path) == 0, "results.png of a table without val losses", "");
    check_titles(sub0, "results.png", official_panels, 10, 2, 5);

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
    /* the official titles (utils/metrics.py plot_pr_curve, plot_mc_curve) */
    const char *curves[4][2] = { { "PR_curve.png", "Precision-Recall Curve" }, { "F1_curve.png", "F1-Confidence Curve" },
                                 { "P_curve.png", "Precision-Confidence Curve" }, { "R_curve.png", "Recall-Confidence Curve" } };
    for (int k = 0; k < 4; k++) check_titles(out, curves[k][0], &curves[k][1], 1, 1, 1);
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
    const char *cm_title = "Confusion Matrix";
    check_titles(out, "confusion_matrix.png", &cm_title, 1, 1, 1);
    {   /* the colour bar: a column right of the matrix running from the darkest blue at the top to white */
        int pw, ph, ch, bar = 0;
        snprintf(path, sizeof path, "%s/confusion_matrix.png", out);
        unsigned char *p = stbi_load(path, &pw, &ph, &ch, 3);
        for (int x = pw / 2; p && x < pw && !bar; x++) {
            int top = -1, bottom = -1;
            for (int y = 0; y < ph; y++) {
                const unsigned char *q = p + ((size_t)y * pw + x) * 3;
                if (q[0] == 8 && q[1] == 48 && q[2] == 107 && top < 0) top = y;   /* 'Blues' at 1 */
                if (q[0] >= 245 && q[2] == 255 && q[1] >= 249 && top >= 0 && bottom < 0 && y > top + 100) bottom = y;
            }
            bar = top >= 0 && bottom > top;
        }
        if (p) stbi_image_free(p);
        check(bar, "confusion_matrix.png: a colour bar from dark blue to white", "");
    }
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
    snprintf(path, sizeof path, "%s/labels_correlogram.jpg", out);
    check(yolo_plot_correlogram(&ds, path) == 0, "labels_correlogram.jpg written", "");
    check_picture(out, "labels_correlogram.jpg", 1600, 1600, 5);
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
