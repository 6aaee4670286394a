/* val: the official val_dual.py metrics of a model on a dataset split.

     ./val --cfg yolov9-c --weights yolov9-c.safetensors --data coco.yaml

   The official val_dual.py flags (./val --help); --cfg only for weights
   that do not carry their model.
   Prints P, R, mAP50 and mAP50-95 (per class with --verbose) and the time
   per image of pre-processing, inference and NMS. */
#define YOLOV9_IMPLEMENTATION
#include "yolov9.h"

static const char *USAGE = "--data FILE.yaml --weights FILE.safetensors [--cfg NAME|FILE.yaml] [--batch-size 32] [--img 640] ...";

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
    int failed;              /* --save-txt files that could not be written */
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
        s->failed += yolo_save_txt(path, d, n, w0, h0, s->save_conf) != 0;
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
    int batch = 32, img = 640, max_det = 300, workers = YOLO_ABSENT, verbose = 0, save_txt = 0, save_conf = 0, save_json = 0;
    int exist_ok = 0, dry_run = 0, half = 0, single_cls = 0, augment = 0, min_items = 0, noplots = 0;
    double conf = 0.001, iou = 0.7;
    const yolo_flag flags[] = {
        { "--data", YOLO_FLAG_STR, &data, "dataset yaml", 0 },
        { "--weights", YOLO_FLAG_STR, &weights, "weights (.safetensors; ours and converted ones carry their model)", 0 },
        { "--batch-size --batch", YOLO_FLAG_INT, &batch, "images per batch (32)", 0, 1, YOLO_MAX_BATCH },
        { "--imgsz --img --img-size", YOLO_FLAG_INT, &img, "inference size in pixels (640)", 0, 1, YOLO_MAX_IMG },
        { "--conf-thres", YOLO_FLAG_FLOAT, &conf, "confidence threshold (0.001)", 0, 0, 1 },
        { "--iou-thres", YOLO_FLAG_FLOAT, &iou, "NMS IoU threshold (0.7)", 0, 0, 1 },
        { "--max-det", YOLO_FLAG_INT, &max_det, "maximum detections per image (300)", 0, 1, YOLO_MAX_DET },
        { "--task", YOLO_FLAG_STR, &task, "val, test (the yaml's test: split), train or speed", 0 },
        { "--device", YOLO_FLAG_STR, &device, "cpu, cuda or a GPU index", 0 },
        { "--workers", YOLO_FLAG_INT, &workers, "loader threads (8, at most the CPUs)", 0, 0, YOLO_MAX_WORKERS },
        { "--single-cls", YOLO_FLAG_BOOL, &single_cls, "treat as a single-class dataset", 0 },
        { "--augment", YOLO_FLAG_BOOL, &augment, "augmented inference (test-time augmentation)", 0 },
        { "--verbose", YOLO_FLAG_BOOL, &verbose, "report mAP by class", 0 },
        { "--save-txt", YOLO_FLAG_BOOL, &save_txt, "save results to labels/*.txt", 0 },
        { "--save-hybrid", YOLO_FLAG_BOOL, NULL, "label+prediction hybrid results are not written", 0 },
        { "--save-conf", YOLO_FLAG_BOOL, &save_conf, "save confidences in the --save-txt labels", 0 },
        { "--save-json", YOLO_FLAG_BOOL, &save_json, "save a COCO-JSON results file", 0 },
        { "--project", YOLO_FLAG_STR, &project, "save to PROJECT/NAME (runs/val)", 0 },
        { "--name", YOLO_FLAG_STR, &name, "save to PROJECT/NAME (exp)", 0 },
        { "--exist-ok", YOLO_FLAG_BOOL, &exist_ok, "an existing PROJECT/NAME is fine, do not increment", 0 },
        { "--half", YOLO_FLAG_BOOL, &half, "half-precision inference", 0 },
        { "--precision", YOLO_FLAG_STR, &precision, "ours: the convs' products, fp32 (default) or bf16 (tensor cores)", 0 },
        { "--dnn", YOLO_FLAG_BOOL, NULL, "no OpenCV DNN", 0 },
        { "--min-items", YOLO_FLAG_INT, &min_items, "skip pictures with fewer labels (0)", 0, 0, INT_MAX },
        { "--cfg", YOLO_FLAG_STR, &cfg, "ours: the model, when the weights do not carry it", 0 },
        { "--dry-run", YOLO_FLAG_BOOL, &dry_run, "ours: print the memory plan and stop", 0 },
        { "--noplots", YOLO_FLAG_BOOL, &noplots, "ours: no confusion matrix, curves or batch pictures", 0 },
    };
    yolo_flags_parse(flags, (int)(sizeof flags / sizeof flags[0]), argc - 1, argv + 1, "val", USAGE);
    if (precision && (yolo_precision_parse(precision) < 0 || yolo_precision_parse(precision) == YOLO_FP16)) {
        fprintf(stderr, "val: --precision is fp32 or bf16 (half: --half)\n");
        return 2;
    }
    if (weights && !*weights) weights = NULL;   /* --weights '' */
    if (cfg && !*cfg) cfg = NULL;
    if (!data) { fprintf(stderr, "val: --data is required\n"); return 2; }
    if (!cfg && !weights) { fprintf(stderr, "val: --weights is required (or --cfg to validate an untrained model)\n"); return 2; }
    if (batch < 1 || img < 1) { fprintf(stderr, "val: --batch-size and --img must be positive\n"); return 2; }
    img = yolo_check_img_size(img, 0, "val");
    workers = yolo_loader_workers(workers, 8, "val");
    if (!strcmp(task, "speed")) { conf = 0.25; iou = 0.45; save_json = 0; noplots = 1; task = "val"; }   /* as the official speed benchmark */
    if (strcmp(task, "val") && strcmp(task, "train") && strcmp(task, "test")) {
        fprintf(stderr, "val: --task is val, test, train or speed (got '%s')\n", task);
        return 2;
    }
    if (augment)   /* the official _forward_augment de-scales p[..., :4], YOLOv5's layout, not the heads' [B, 4 + nc, A] */
        fprintf(stderr, "val: --augment is not implemented here (the official test-time augmentation indexes YOLOv5's "
                        "[batch, anchors, 4+nc] output, not YOLOv9's [batch, 4+nc, anchors]); validating without it\n");
    char err[YOLO_ERR], data_path[1024], weights_path[1024];
    yolo_data_cfg dc;
    if (yolo_find_file(data, data_path, sizeof data_path, err) < 0 || yolo_data_read(&dc, data_path, err)) { fprintf(stderr, "%s\n", err); return 1; }
    if (weights) weights = yolo_weights_path(weights, weights_path, sizeof weights_path);
    const char *split = !strcmp(task, "train") ? dc.train : !strcmp(task, "test") ? dc.test : dc.val;
    if (!*split) { fprintf(stderr, "val: --task %s: %s has no '%s:' split\n", task, data_path, task); return 1; }
    yolo_dataset ds;
    if (yolo_dataset_open(&ds, dc.root, split, dc.nc, min_items, err)) { fprintf(stderr, "%s\n", err); return 1; }
    /* --single-cls as the official: every label class 0, one class "item" (or the dataset's only one),
       and any model's detections counted as that class */
    int nc = single_cls ? 1 : dc.nc;
    char *item = "item", **names = single_cls && dc.nc != 1 ? &item : dc.names;
    if (single_cls) yolo_dataset_single_class(&ds);
    const yolo_backend *be = yolo_backend_select(device, err);
    if (!be) { fprintf(stderr, "val: %s\n", err); return 2; }
    yolo_model m;
    if (yolo_model_for_weights(&m, cfg, weights, 0, dc.nc, err)) { fprintf(stderr, "%s\n", err); return 1; }
    if (!single_cls && m.nc != dc.nc) {
        fprintf(stderr, "val: %s has %d classes, %s has %d: trained on other data\n", weights ? weights : cfg, m.nc, data, dc.nc);
        return 1;
    }
    yolo_hyp hyp;
    yolo_hyp_default(&hyp);
    yolo_loader ld;
    /* on the GPU the batches go over as uint8 pixels, read in place from pinned memory (as train) */
    yolo_loader_init(&ld, &ds, &hyp, batch, img, yolo_loader_pixels(be), workers);
    yolo_loader_pin(&ld, be);
    int H, W;
    yolo_loader_max_shape(&ld, &H, &W);
    yolo_model_precision_flags(&m, be, precision, 0, half, "val");
    size_t act, plan = yolo_infer_bytes(&m, batch, H, W, &act), weights_b = yolo_model_weights_bytes(&m);
    printf("memory plan: %.2f GB = activations, folded weights and predictions %.2f (batch %d at %dx%d at most) + weights %.2f"
           " + backend scratch %.2f\n", plan / 1e9, act / 1e9, batch, W, H, weights_b / 1e9, YOLO_BACKEND_SCRATCH_BYTES / 1e9);
    if (dry_run) return 0;
    if (be->reserve(plan)) { fprintf(stderr, "val: cannot reserve the %.2f GB of the plan on the device\n", plan / 1e9); return 1; }
    yolo_model_use_backend(&m, be);
    if (weights && yolo_load_weights(&m, weights, err)) { fprintf(stderr, "%s\n", err); return 1; }
    if (!weights) fprintf(stderr, "val: no --weights, validating the untrained model\n");
    yolo_model_fuse(&m);

    char dir[1024], labels[1100], jpath[1200];
    saver sv = { &ds, NULL, save_conf, 0, NULL, 0, 0 };
    /* as the official: the plots go there */
    if (yolo_run_dir(project, name, exist_ok, dir, sizeof dir, err)) { fprintf(stderr, "val: %s\n", err); return 2; }
    if (save_txt) {
        snprintf(labels, sizeof labels, "%s/labels", dir);
        if (yolo_mkdirs(labels)) { fprintf(stderr, "val: %s: cannot create (%s)\n", labels, strerror(errno)); return 1; }
        sv.labels_dir = labels;
    }
    if (save_json) {
        char ws[512];
        stem(weights ? weights : cfg, ws, sizeof ws);
        snprintf(jpath, sizeof jpath, "%s/%s_predictions.json", dir, ws);
        if (!(sv.json = yolo_create_file(jpath, "w"))) return 1;
        size_t n = strlen(dc.val);
        sv.coco = n >= 16 && !strcmp(dc.val + n - 16, "coco/val2017.txt");
        fprintf(sv.json, "[");
    }
    yolo_eval ev;
    memset(&ev, 0, sizeof ev);
    yolo_times tm = { 0, 0, 0, 0 };
    yolo_val_progress vp;
    yolo_val_plots plots;
    if (!noplots) yolo_val_plots_start(&plots, &ds, nc, batch, save_txt || save_json ? save_image : NULL, &sv);
    yolo_val_progress_start(&vp, ds.n, noplots ? (save_txt || save_json ? save_image : NULL) : yolo_val_plots_hook,
                            noplots ? (void *)&sv : (void *)&plots);
    if (yolo_validate(&m, &ld, 0, (float)conf, (float)iou, max_det, single_cls, &ev, &tm, yolo_val_progress_hook, &vp, err)) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    int failed = sv.failed;   /* files that could not be written, each named on stderr */
    if (sv.json) { fprintf(sv.json, "\n]\n"); failed += yolo_close_written(sv.json, jpath) != 0; }
    yolo_metrics mt;
    yolo_metrics_compute(&ev, nc, &mt);
    yolo_metrics_print(&mt, &ev, names, verbose);
    /* as the official, the shape of --img; ours: the largest rectangle, where, in what precision */
    printf("Speed: %.1fms pre-process, %.1fms inference, %.1fms NMS per image at shape (%d, 3, %d, %d) (rectangles up to %dx%d, "
           "on %s%s)\n", 1e3 * tm.pre / tm.images, 1e3 * tm.infer / tm.images, 1e3 * tm.nms / tm.images, batch, img, img, H, W,
           be->name, m.precision == YOLO_FP32 ? "" : m.precision == YOLO_FP16 ? ", half" : ", bf16");
    if (!noplots) failed += yolo_val_plots_save(&plots, &mt, names, dir) != 0;
    if (failed) fprintf(stderr, "val: files could not be written to %s (named above)\n", dir);
    else printf("Results saved to %s\n", dir);
    if (save_txt && !failed) printf("%d labels saved to %s\n", yolo_count_files(labels, ".txt"), labels);
    yolo_metrics_free(&mt);
    yolo_eval_free(&ev);
    yolo_loader_free(&ld);
    yolo_dataset_free(&ds);
    yolo_data_free(&dc);
    yolo_model_free(&m);
    return failed ? 1 : 0;
}
