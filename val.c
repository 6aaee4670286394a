/* val: the official val_dual.py metrics of a model on a dataset split.

     ./val --cfg yolov9-c --weights yolov9-c.safetensors --data coco.yaml

   Flags: --cfg NAME|FILE.yaml  --weights FILE  --data FILE.yaml  --task val|train
          --batch 32  --img 640  --conf-thres 0.001  --iou-thres 0.7  --max-det 300
          --device cpu|cuda|N  --workers 8  --verbose  --save-txt  --save-conf  --save-json
          --half  --precision fp32|bf16  --project runs/val  --name exp  --exist-ok  --dry-run
   Prints P, R, mAP50 and mAP50-95 (per class with --verbose) and the time
   per image of pre-processing, inference and NMS. */
#define YOLOV9_IMPLEMENTATION
#include "yolov9.h"

static void usage(const char *why) {
    if (why) fprintf(stderr, "val: %s\n", why);
    fprintf(stderr, "usage: val --cfg NAME|FILE.yaml --data FILE.yaml [--weights FILE] [--task val|train] [--batch 32]\n"
                    "           [--img 640] [--conf-thres 0.001] [--iou-thres 0.7] [--max-det 300] [--device cpu|cuda|N]\n"
                    "           [--workers 8] [--verbose] [--save-txt] [--save-conf] [--save-json] [--project DIR]\n"
                    "           [--half] [--precision fp32|bf16] [--name NAME] [--exist-ok] [--dry-run]\n");
    exit(2);
}

/* the official coco80_to_coco91_class: COCO's category ids of the 80 classes */
static const int coco91[80] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 27,
                                28, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 46, 47, 48, 49, 50, 51, 52, 53,
                                54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 67, 70, 72, 73, 74, 75, 76, 77, 78, 79, 80,
                                81, 82, 84, 85, 86, 87, 88, 89, 90 };

typedef struct {
    const yolo_dataset *ds;
    const char *labels_dir;  /* --save-txt: DIR/labels, or NULL */
    int save_conf, coco;
    FILE *json;              /* --save-json, or NULL */
    int njson;
} saver;

static const char *stem(const char *path, char *out, size_t cap) {
    const char *s = strrchr(path, '/');
    snprintf(out, cap, "%s", s ? s + 1 : path);
    char *dot = strrchr(out, '.');
    if (dot) *dot = 0;
    return out;
}

/* --save-txt: class cx cy w h [conf], normalised to the picture; --save-json:
   the COCO results format (x, y, w, h in pixels) */
static void save_image(void *ctx, int id, const yolo_det *d, int n) {
    saver *s = (saver *)ctx;
    char st[512], path[2048];
    stem(s->ds->files[id], st, sizeof st);
    double w0 = s->ds->w0[id], h0 = s->ds->h0[id];
    if (s->labels_dir) {
        snprintf(path, sizeof path, "%s/%s.txt", s->labels_dir, st);
        FILE *f = fopen(path, "w");
        for (int i = 0; f && i < n; i++) {
            fprintf(f, "%d %.6g %.6g %.6g %.6g", d[i].cls, (d[i].x1 + d[i].x2) / 2 / w0, (d[i].y1 + d[i].y2) / 2 / h0,
                    (d[i].x2 - d[i].x1) / w0, (d[i].y2 - d[i].y1) / h0);
            if (s->save_conf) fprintf(f, " %.6g", d[i].conf);
            fprintf(f, "\n");
        }
        if (f) fclose(f);
    }
    if (s->json) {
        char *end;
        long num = strtol(st, &end, 10);
        for (int i = 0; i < n; i++) {
            fprintf(s->json, "%s\n{\"image_id\": ", s->njson++ ? "," : "");
            if (*end || end == st) fprintf(s->json, "\"%s\"", st); else fprintf(s->json, "%ld", num);
            fprintf(s->json, ", \"category_id\": %d, \"bbox\": [%.3f, %.3f, %.3f, %.3f], \"score\": %.5f}",
                    s->coco && d[i].cls < 80 ? coco91[d[i].cls] : d[i].cls, d[i].x1, d[i].y1, d[i].x2 - d[i].x1,
                    d[i].y2 - d[i].y1, d[i].conf);
        }
    }
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);   /* progress lines appear as they are made */
    const char *cfg = NULL, *weights = NULL, *data = NULL, *task = "val", *device = NULL, *project = "runs/val", *name = "exp";
    const char *precision = NULL;
    int batch = 32, img = 640, max_det = 300, workers = 8, verbose = 0, save_txt = 0, save_conf = 0, save_json = 0;
    int exist_ok = 0, dry_run = 0, half = 0;
    float conf = 0.001f, iou = 0.7f;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--verbose")) { verbose = 1; continue; }
        if (!strcmp(a, "--save-txt")) { save_txt = 1; continue; }
        if (!strcmp(a, "--save-conf")) { save_conf = 1; continue; }
        if (!strcmp(a, "--save-json")) { save_json = 1; continue; }
        if (!strcmp(a, "--exist-ok")) { exist_ok = 1; continue; }
        if (!strcmp(a, "--dry-run")) { dry_run = 1; continue; }
        if (!strcmp(a, "--half")) { half = 1; continue; }
        if (!v) { char b[256]; snprintf(b, sizeof b, "%s needs a value", a); usage(b); }
        if (!strcmp(a, "--cfg")) cfg = v;
        else if (!strcmp(a, "--weights")) weights = v;
        else if (!strcmp(a, "--data")) data = v;
        else if (!strcmp(a, "--task")) task = v;
        else if (!strcmp(a, "--device")) device = v;
        else if (!strcmp(a, "--precision")) precision = v;
        else if (!strcmp(a, "--project")) project = v;
        else if (!strcmp(a, "--name")) name = v;
        else if (!strcmp(a, "--batch") || !strcmp(a, "--batch-size")) batch = atoi(v);
        else if (!strcmp(a, "--img") || !strcmp(a, "--imgsz") || !strcmp(a, "--img-size")) img = atoi(v);
        else if (!strcmp(a, "--conf-thres")) conf = (float)atof(v);
        else if (!strcmp(a, "--iou-thres")) iou = (float)atof(v);
        else if (!strcmp(a, "--max-det")) max_det = atoi(v);
        else if (!strcmp(a, "--workers")) workers = atoi(v);
        else { char b[256]; snprintf(b, sizeof b, "unknown flag %s", a); usage(b); }
        i++;
    }
    if (!cfg || !data) usage("--cfg and --data are required");
    if (batch < 1 || img < 32 || img % 32) usage("--batch must be positive, --img a multiple of 32");
    if (strcmp(task, "val") && strcmp(task, "train")) usage("--task is val or train");
    if (precision && yolo_precision_parse(precision) < 0) usage("--precision is fp32 or bf16");
    char err[YOLO_ERR];
    yolo_data_cfg dc;
    if (yolo_data_read(&dc, data, err)) { fprintf(stderr, "%s\n", err); return 1; }
    yolo_dataset ds;
    if (yolo_dataset_open(&ds, dc.root, strcmp(task, "val") ? dc.train : dc.val, dc.nc, 0, err)) { fprintf(stderr, "%s\n", err); return 1; }
    const yolo_backend *be = yolo_backend_select(device, err);
    if (!be) { fprintf(stderr, "val: %s\n", err); return 2; }
    yolo_model m;
    if (yolo_model_from_cfg(&m, cfg, dc.nc, err)) { fprintf(stderr, "%s\n", err); return 1; }
    yolo_hyp hyp;
    yolo_hyp_default(&hyp);
    yolo_loader ld;
    yolo_loader_init(&ld, &ds, &hyp, batch, img, 0, workers);
    int H, W;
    yolo_loader_max_shape(&ld, &H, &W);
    size_t act = yolo_plan_bytes(&m, batch, H, W, 0, 0), weights_b = yolo_model_weights_bytes(&m);
    size_t plan = act + weights_b + YOLO_BACKEND_SCRATCH_BYTES;
    printf("memory plan: %.2f GB = activations, folded weights and predictions %.2f (batch %d at %dx%d at most) + weights %.2f"
           " + backend scratch %.2f\n", plan / 1e9, act / 1e9, batch, W, H, weights_b / 1e9, YOLO_BACKEND_SCRATCH_BYTES / 1e9);
    if (dry_run) return 0;
    if (be->reserve(plan)) { fprintf(stderr, "val: cannot reserve the %.2f GB of the plan on the device\n", plan / 1e9); return 1; }
    yolo_model_use_backend(&m, be);
    if (weights && yolo_load_weights(&m, weights, err)) { fprintf(stderr, "%s\n", err); return 1; }
    if (!weights) fprintf(stderr, "val: no --weights, validating the untrained model\n");
    yolo_model_fuse(&m);
    m.precision = precision ? (yolo_precision)yolo_precision_parse(precision) : yolo_precision_default(be, 0);
    if (half && !yolo_model_half(&m)) fprintf(stderr, "val: --half: %s has no half-precision path, computing in float32\n", be->name);

    char dir[1024], labels[1100], jpath[1200];
    saver sv = { &ds, NULL, save_conf, 0, NULL, 0 };
    if (save_txt || save_json) yolo_run_dir(project, name, exist_ok, dir, sizeof dir);
    if (save_txt) { snprintf(labels, sizeof labels, "%s/labels", dir); yolo_mkdirs(labels); sv.labels_dir = labels; }
    if (save_json) {
        char ws[512];
        stem(weights ? weights : cfg, ws, sizeof ws);
        snprintf(jpath, sizeof jpath, "%s/%s_predictions.json", dir, ws);
        sv.json = fopen(jpath, "w");
        if (!sv.json) { fprintf(stderr, "%s: cannot write\n", jpath); return 1; }
        size_t n = strlen(dc.val);
        sv.coco = n >= 16 && !strcmp(dc.val + n - 16, "coco/val2017.txt");
        fprintf(sv.json, "[");
    }
    yolo_eval ev;
    memset(&ev, 0, sizeof ev);
    yolo_times tm = { 0, 0, 0, 0 };
    if (yolo_validate(&m, &ld, conf, iou, max_det, &ev, &tm, save_txt || save_json ? save_image : NULL, &sv, err)) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    if (sv.json) { fprintf(sv.json, "\n]\n"); fclose(sv.json); }
    yolo_metrics mt;
    yolo_metrics_compute(&ev, dc.nc, &mt);
    printf("%22s %10s %10s %10s %10s %10s %10s\n", "Class", "Images", "Instances", "P", "R", "mAP50", "mAP50-95");
    printf("%22s %10d %10ld %10.3g %10.3g %10.3g %10.3g\n", "all", ev.images, ev.nt, mt.p, mt.r, mt.map50, mt.map);
    for (int c = 0; verbose && c < dc.nc; c++)
        if (mt.nt[c])
            printf("%22s %10d %10d %10.3g %10.3g %10.3g %10.3g\n", dc.names[c], ev.images, mt.nt[c], mt.cp[c], mt.cr[c],
                   mt.ap50[c], mt.ap[c]);
    printf("Speed: %.1fms pre-process, %.1fms inference, %.1fms NMS per image at batch %d, %d x %d at most, on %s%s\n",
           1e3 * tm.pre / tm.images, 1e3 * tm.infer / tm.images, 1e3 * tm.nms / tm.images, batch, W, H, be->name,
           m.precision == YOLO_FP32 ? "" : m.precision == YOLO_FP16 ? " (half)" : " (bf16)");
    if (save_txt || save_json) printf("Results saved to %s\n", dir);
    yolo_metrics_free(&mt);
    yolo_eval_free(&ev);
    yolo_loader_free(&ld);
    yolo_dataset_free(&ds);
    yolo_data_free(&dc);
    yolo_model_free(&m);
    return 0;
}
