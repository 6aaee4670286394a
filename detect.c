/* detect: YOLOv9 on pictures, as the official detect_dual.py.

     ./detect --cfg yolov9-t --info                                       model summary
     ./detect --weights w.safetensors --source img.jpg|folder|'glob*.jpg'|list.txt

   The official detect_dual.py flags (./detect --help); --cfg and --nc only
   for weights that do not carry their model.
   Pictures with their boxes drawn go to runs/detect/NAME (labels/ with
   --save-txt); one line per picture says what was found and how long it took. */
#define YOLOV9_IMPLEMENTATION
#include "yolov9.h"
#include <glob.h>
#include <unistd.h>

typedef struct {
    float conf, iou;
    int H, W;                /* the largest input: the picture is scaled to fit, then padded to a multiple of 32 */
    int max_det, agnostic, lw, hide_labels, hide_conf, save_txt, save_conf, save_crop, nosave;
    int classes[YOLO_MAX_INTS], nclasses;
    char **names;
    const char *dir;
} detect_opts;

static const char *USAGE = "--weights FILE.safetensors --source PATH [--cfg NAME|FILE.yaml] [--imgsz 640 [640]] [--conf-thres 0.25] ...";

static const char *base(const char *p) { const char *s = strrchr(p, '/'); return s ? s + 1 : p; }

/* --save-crop, as the official save_one_box: the box grown by 2% and 10
   pixels, clipped to the picture, from the undrawn picture, to
   DIR/crops/CLASS/STEM.jpg (STEM2.jpg, ... when taken) */
static int save_crop(const yolo_image *im, const yolo_det *d, const char *dir, const char *cls, const char *stem) {
    double cx = (d->x1 + d->x2) / 2, cy = (d->y1 + d->y2) / 2, w = (d->x2 - d->x1) * 1.02 + 10, h = (d->y2 - d->y1) * 1.02 + 10;
    int x1 = (int)fmax(0, fmin(im->w, (long)(cx - w / 2))), x2 = (int)fmax(0, fmin(im->w, (long)(cx + w / 2)));
    int y1 = (int)fmax(0, fmin(im->h, (long)(cy - h / 2))), y2 = (int)fmax(0, fmin(im->h, (long)(cy + h / 2)));
    if (x2 <= x1 || y2 <= y1) return 0;
    char folder[1400], path[1600];
    snprintf(folder, sizeof folder, "%s/crops/%s", dir, cls);
    if (yolo_mkdirs(folder)) { fprintf(stderr, "%s: cannot create (%s)\n", folder, strerror(errno)); return -1; }
    snprintf(path, sizeof path, "%s/%s.jpg", folder, stem);
    for (int k = 2; access(path, F_OK) == 0; k++) snprintf(path, sizeof path, "%s/%s%d.jpg", folder, stem, k);
    yolo_image crop = { x2 - x1, y2 - y1, (unsigned char *)malloc((size_t)(x2 - x1) * (y2 - y1) * 3) };
    for (int y = y1; y < y2; y++) memcpy(crop.rgb + (size_t)(y - y1) * crop.w * 3, im->rgb + ((size_t)y * im->w + x1) * 3, (size_t)crop.w * 3);
    int rc = yolo_write_image(path, &crop, 95);
    free(crop.rgb);
    return rc;
}

/* seconds spent per picture: letterbox and input, the forward pass, NMS (the official's three) */
typedef struct { double pre, infer, nms; } detect_times;

/* one picture: detections, its line, what is saved of it; -1 when
   something could not be read or written (named on stderr) */
static int detect_one(yolo_model *m, const detect_opts *o, const char *path, int index, int total, detect_times *tm) {
    yolo_image im;
    char err[YOLO_ERR];
    if (yolo_image_load(&im, path, err)) { fprintf(stderr, "%s\n", err); return -1; }
    double t0 = yolo_now();
    /* the smallest stride-32 rectangle that holds the picture scaled to fit H x W */
    double r = fmin((double)o->W / im.w, (double)o->H / im.h);
    int W = ((int)ceil(im.w * r / 32)) * 32, H = ((int)ceil(im.h * r / 32)) * 32;
    yolo_image lb = { im.w, im.h, (unsigned char *)malloc((size_t)im.w * im.h * 3) };
    memcpy(lb.rgb, im.rgb, (size_t)im.w * im.h * 3);
    double scale, padx, pady;
    yolo_letterbox(&lb, W, H, 1, &scale, &padx, &pady);
    yolo_real *input = (yolo_real *)malloc((size_t)3 * W * H * sizeof(yolo_real));
    yolo_image_to_input(&lb, input);
    yolo_set_input(m, 1, H, W, input);
    double t1 = yolo_now();
    yolo_forward(m, 0);   /* reads input from here: freed only after */
    m->be->sync();
    double t2 = yolo_now();
    free(input); free(lb.rgb);
    yolo_det *dets = (yolo_det *)malloc((size_t)o->max_det * sizeof(yolo_det));
    int n = 0;
    yolo_predict(m, o->conf, o->iou, o->max_det, o->agnostic, o->nclasses ? o->classes : NULL, o->nclasses, 0, &dets, &n);
    double t3 = yolo_now();
    tm->pre += t1 - t0; tm->infer += t2 - t1; tm->nms += t3 - t2;
    for (int i = 0; i < n; i++) {   /* back onto the picture */
        yolo_det *d = &dets[i];
        yolo_box_to_picture(&d->x1, &d->y1, &d->x2, &d->y2, scale, padx, pady, im.w, im.h);
    }
    printf("image %d/%d %s: %dx%d ", index, total, path, H, W);   /* height x width, as the official */
    int *count = (int *)calloc(m->nc, sizeof(int));
    for (int i = 0; i < n; i++) count[dets[i].cls]++;
    for (int c = 0; c < m->nc; c++)
        if (count[c]) printf("%d %s%s, ", count[c], o->names[c], count[c] > 1 ? "s" : "");
    printf("%s%.1fms\n", n ? "" : "(no detections), ", (t2 - t1) * 1e3);   /* the forward pass, as the official */
    char out[2048], stem[512];
    snprintf(stem, sizeof stem, "%s", base(path));
    char *dot = strrchr(stem, '.');
    int rc = 0;
    if (o->save_txt) {
        if (dot) *dot = 0;
        snprintf(out, sizeof out, "%s/labels/%s.txt", o->dir, stem);
        rc |= yolo_save_txt(out, dets, n, im.w, im.h, o->save_conf);
        if (dot) *dot = '.';
    }
    if (dot) *dot = 0;
    for (int i = 0; o->save_crop && i < n; i++) rc |= save_crop(&im, &dets[i], o->dir, o->names[dets[i].cls], stem);
    if (dot) *dot = '.';
    if (!o->nosave) {
        for (int i = n - 1; i >= 0; i--) {   /* the most confident drawn last, on top */
            char label[128];
            if (o->hide_conf) snprintf(label, sizeof label, "%s", o->names[dets[i].cls]);
            else snprintf(label, sizeof label, "%s %.2f", o->names[dets[i].cls], dets[i].conf);
            yolo_draw_detection(&im, &dets[i], o->lw, o->hide_labels ? NULL : label);
        }
        snprintf(out, sizeof out, "%s/%s", o->dir, base(path));
        rc |= yolo_write_image(out, &im, 95);
    }
    free(count); free(dets); free(im.rgb);
    return rc;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* --source: a picture, a folder of them, a glob pattern, or a .txt list of
   paths; each one there (checked before anything is written) */
static int gather(const char *source, yolo_strings *files) {
    DIR *dir;
    const char *dot = strrchr(source, '.');
    if (strpbrk(source, "*?[")) {
        glob_t g;
        if (glob(source, 0, NULL, &g) == 0)
            for (size_t i = 0; i < g.gl_pathc; i++) if (yolo_is_image(g.gl_pathv[i])) yolo_strings_add(files, g.gl_pathv[i]);
        globfree(&g);
    } else if ((dir = opendir(source))) {
        struct dirent *e;
        char p[2048];
        while ((e = readdir(dir))) {
            snprintf(p, sizeof p, "%s/%s", source, e->d_name);
            if (yolo_is_image(p)) yolo_strings_add(files, p);
        }
        closedir(dir);
    } else if (dot && !strcasecmp(dot, ".txt")) {
        FILE *f = fopen(source, "r");
        if (!f) { fprintf(stderr, "%s: cannot open\n", source); return -1; }
        char line[2048];
        while (fgets(line, sizeof line, f)) {
            line[strcspn(line, "\r\n")] = 0;
            if (*line) yolo_strings_add(files, line);
        }
        fclose(f);   /* a list keeps its order */
    } else if (yolo_is_image(source)) yolo_strings_add(files, source);
    else { fprintf(stderr, "%s: not a picture (jpg, png, bmp), folder, glob or .txt list\n", source); return -1; }
    if (!(dot && !strcasecmp(dot, ".txt"))) qsort(files->s, files->n, sizeof(char *), by_name);
    if (!files->n) { fprintf(stderr, "%s: no pictures found\n", source); return -1; }
    for (int i = 0; i < files->n; i++)
        if (access(files->s[i], R_OK)) { fprintf(stderr, "%s: cannot read (%s)\n", files->s[i], strerror(errno)); return -1; }
    return 0;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);   /* progress lines appear as they are made */
    const char *cfg = NULL, *weights = NULL, *source = NULL, *device = NULL, *data = NULL, *project = "runs/detect", *name = "exp";
    const char *precision = NULL;
    int info = 0, nc = YOLO_ABSENT, exist_ok = 0, half = 0, augment = 0;
    double conf = 0.25, iou = 0.45;
    yolo_ints imgsz = { 1, { 640 } }, classes = { 0, { 0 } };
    detect_opts o;
    memset(&o, 0, sizeof o);
    o.max_det = 1000; o.lw = 3;
    const yolo_flag flags[] = {
        { "--weights", YOLO_FLAG_STR, &weights, "weights (.safetensors; ours and converted ones carry their model)", 0 },
        { "--source", YOLO_FLAG_STR, &source, "a picture, a folder, a glob or a .txt list of pictures", 0 },
        { "--data", YOLO_FLAG_STR, &data, "dataset yaml, for the class names when the weights carry none", 0 },
        { "--imgsz --img --img-size", YOLO_FLAG_INTS, &imgsz, "inference size: one value, or h w (640)", 0, 1, YOLO_MAX_IMG },
        { "--conf-thres", YOLO_FLAG_FLOAT, &conf, "confidence threshold (0.25)", 0, 0, 1 },
        { "--iou-thres", YOLO_FLAG_FLOAT, &iou, "NMS IoU threshold (0.45)", 0, 0, 1 },
        { "--max-det", YOLO_FLAG_INT, &o.max_det, "maximum detections per image (1000)", 0, 1, YOLO_MAX_DET },
        { "--device", YOLO_FLAG_STR, &device, "cpu, cuda or a GPU index", 0 },
        { "--view-img", YOLO_FLAG_BOOL, NULL, "no display: the pictures are saved", 0 },
        { "--save-txt", YOLO_FLAG_BOOL, &o.save_txt, "save results to labels/*.txt", 0 },
        { "--save-conf", YOLO_FLAG_BOOL, &o.save_conf, "save confidences in the --save-txt labels", 0 },
        { "--save-crop", YOLO_FLAG_BOOL, &o.save_crop, "save each detection's crop to crops/CLASS/", 0 },
        { "--nosave", YOLO_FLAG_BOOL, &o.nosave, "do not save the drawn pictures", 0 },
        { "--classes", YOLO_FLAG_INTS, &classes, "keep only these classes: --classes 0, or --classes 0 2 3", 0, 0, YOLO_MAX_NC - 1 },
        { "--agnostic-nms", YOLO_FLAG_BOOL, &o.agnostic, "class-agnostic NMS", 0 },
        { "--augment", YOLO_FLAG_BOOL, &augment, "augmented inference (test-time augmentation)", 0 },
        { "--visualize", YOLO_FLAG_BOOL, NULL, "feature maps are not drawn", 0 },
        { "--update", YOLO_FLAG_BOOL, NULL, "safetensors hold no optimizer to strip", 0 },
        { "--project", YOLO_FLAG_STR, &project, "save to PROJECT/NAME (runs/detect)", 0 },
        { "--name", YOLO_FLAG_STR, &name, "save to PROJECT/NAME (exp)", 0 },
        { "--exist-ok", YOLO_FLAG_BOOL, &exist_ok, "an existing PROJECT/NAME is fine, do not increment", 0 },
        { "--line-thickness", YOLO_FLAG_INT, &o.lw, "box line thickness in pixels (3)", 0, 1, 1000 },
        { "--hide-labels", YOLO_FLAG_BOOL, &o.hide_labels, "draw boxes without labels", 0 },
        { "--hide-conf", YOLO_FLAG_BOOL, &o.hide_conf, "draw labels without confidences", 0 },
        { "--half", YOLO_FLAG_BOOL, &half, "half-precision inference", 0 },
        { "--precision", YOLO_FLAG_STR, &precision, "ours: the convs' products, fp32 (default) or bf16 (tensor cores)", 0 },
        { "--dnn", YOLO_FLAG_BOOL, NULL, "no OpenCV DNN", 0 },
        { "--vid-stride", YOLO_FLAG_INT, NULL, "pictures only, no video", 0, 1, INT_MAX },
        { "--cfg", YOLO_FLAG_STR, &cfg, "ours: the model, when the weights do not carry it", 0 },
        { "--nc", YOLO_FLAG_INT, &nc, "ours: classes of a --cfg model (80)", 0, 1, YOLO_MAX_NC },
        { "--info", YOLO_FLAG_BOOL, &info, "ours: print the model summary", 0 },
    };
    yolo_flags_parse(flags, (int)(sizeof flags / sizeof flags[0]), argc - 1, argv + 1, "detect", USAGE);
    if (precision && (yolo_precision_parse(precision) < 0 || yolo_precision_parse(precision) == YOLO_FP16)) {
        fprintf(stderr, "detect: --precision is fp32 or bf16 (half: --half)\n");
        return 2;
    }
    if (weights && !*weights) weights = NULL;   /* --weights '' */
    if (cfg && !*cfg) cfg = NULL;
    if (!source && !info) { fprintf(stderr, "detect: --source is required (a picture, a folder, a glob or a .txt list)\n"); return 2; }
    if (!cfg && !weights) { fprintf(stderr, "detect: --weights is required (or --cfg to run an untrained model)\n"); return 2; }
    if (imgsz.n > 2) { fprintf(stderr, "detect: --imgsz takes one size or two (h w), got %d\n", imgsz.n); return 2; }
    o.H = imgsz.v[0]; o.W = imgsz.v[imgsz.n - 1];
    o.H = yolo_check_img_size(o.H, 0, "detect"); o.W = yolo_check_img_size(o.W, 0, "detect");
    o.conf = (float)conf; o.iou = (float)iou;
    o.nclasses = classes.n;
    memcpy(o.classes, classes.v, sizeof o.classes);
    if (augment)   /* the official _forward_augment de-scales p[..., :4], YOLOv5's layout, not the heads' [B, 4 + nc, A] */
        fprintf(stderr, "detect: --augment is not implemented here (the official test-time augmentation indexes YOLOv5's "
                        "[batch, anchors, 4+nc] output, not YOLOv9's [batch, 4+nc, anchors]); detecting without it\n");
    yolo_strings files = { 0, 0, NULL };
    if (source && gather(source, &files)) return 1;
    char err[YOLO_ERR], data_path[1024], weights_path[1024];
    yolo_data_cfg dc;
    memset(&dc, 0, sizeof dc);
    if (data && (yolo_find_file(data, data_path, sizeof data_path, err) < 0 || yolo_data_read(&dc, data_path, err))) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    if (weights) weights = yolo_weights_path(weights, weights_path, sizeof weights_path);
    yolo_model m;
    const yolo_backend *be = yolo_backend_select(device, err);
    if (!be) { fprintf(stderr, "detect: %s\n", err); return 2; }
    if (yolo_model_for_weights(&m, cfg, weights, nc == YOLO_ABSENT ? 0 : nc, dc.nc, err)) { fprintf(stderr, "%s\n", err); return 1; }
    for (int k = 0; k < o.nclasses; k++)
        if (o.classes[k] >= m.nc) { fprintf(stderr, "detect: --classes %d: the model has %d classes (0 to %d)\n", o.classes[k], m.nc, m.nc - 1); return 2; }
    /* names: the weights' own, else the dataset's, COCO's for 80 classes, else class0, class1, ... */
    o.names = (char **)calloc(m.nc, sizeof(char *));
    for (int c = 0; c < m.nc; c++) {
        char b[32];
        snprintf(b, sizeof b, "class%d", c);
        o.names[c] = strdup(m.names ? m.names[c] : dc.names && m.nc == dc.nc ? dc.names[c] : m.nc == 80 ? yolo_coco_names[c] : b);
    }
    /* the memory plan for the largest picture (img x img), taken at once, as val's */
    yolo_model_precision_flags(&m, be, precision, 0, half, "detect");
    size_t act, plan = yolo_infer_bytes(&m, 1, o.H, o.W, &act);
    if (be->reserve(plan)) { fprintf(stderr, "detect: cannot reserve %.2f GB on the device\n", plan / 1e9); return 1; }
    yolo_model_use_backend(&m, be);
    if (weights && yolo_load_weights(&m, weights, err)) { fprintf(stderr, "%s\n", err); return 1; }
    if (info) {
        yolo_model_summary(&m, cfg ? cfg : weights, stdout);
        printf("%.1f GFLOPs at 640x640 (convolutions, training graph)\n", yolo_model_gflops(&m));
    }
    if (!source) { yolo_model_free(&m); return 0; }
    if (!weights) fprintf(stderr, "detect: no --weights, running the untrained model\n");
    /* the run's folder, once the source has pictures (as the official, even when nothing will be saved there) */
    char dir[1024] = "", lab[1100] = "";
    int saves = !o.nosave || o.save_txt || o.save_crop;
    if (yolo_run_dir(project, name, exist_ok, dir, sizeof dir, err)) { fprintf(stderr, "detect: %s\n", err); return 2; }
    snprintf(lab, sizeof lab, "%s/labels", dir);
    if (o.save_txt && yolo_mkdirs(lab)) { fprintf(stderr, "detect: %s: cannot create (%s)\n", lab, strerror(errno)); return 1; }
    o.dir = dir;
    yolo_model_fuse(&m);   /* BatchNorm and RepConvN folded into plain convs */
    int failed = 0;
    detect_times tm = { 0, 0, 0 };
    for (int i = 0; i < files.n; i++) { failed += detect_one(&m, &o, files.s[i], i + 1, files.n, &tm) != 0; free(files.s[i]); }
    printf("Speed: %.1fms pre-process, %.1fms inference, %.1fms NMS per image at shape (1, 3, %d, %d)\n", 1e3 * tm.pre / files.n,
           1e3 * tm.infer / files.n, 1e3 * tm.nms / files.n, o.H, o.W);
    free(files.s);
    if (failed && files.n > 1) fprintf(stderr, "detect: %d of %d pictures could not be read or their results written (named above)\n", failed, files.n);
    else if (!failed && saves) printf("Results saved to %s\n", dir);
    if (o.save_txt && !failed) printf("%d labels saved to %s\n", yolo_count_files(lab, ".txt"), lab);
    for (int c = 0; c < m.nc; c++) free(o.names[c]);
    free(o.names);
    yolo_data_free(&dc);
    yolo_model_free(&m);
    return failed ? 1 : 0;
}
