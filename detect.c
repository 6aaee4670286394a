/* detect: YOLOv9 on pictures, as the official detect_dual.py.

     ./detect --cfg yolov9-t --info                                   model summary
     ./detect --cfg yolov9-c --weights w.safetensors --source img.jpg|folder|'glob*.jpg'|list.txt

   Flags: --cfg NAME|FILE.yaml  --weights FILE.safetensors  --source PATH  --data FILE.yaml (names)
          --img 640  --conf-thres 0.25  --iou-thres 0.45  --max-det 1000  --classes 0,2,...
          --agnostic-nms  --line-thickness 3  --hide-labels  --hide-conf  --save-txt  --save-conf
          --nosave  --half  --precision fp32|bf16  --project runs/detect  --name exp  --exist-ok  --nc N  --device cpu|cuda|N  --info
   Pictures with their boxes drawn go to runs/detect/NAME (labels/ with
   --save-txt); one line per picture says what was found and how long it took. */
#define YOLOV9_IMPLEMENTATION
#include "yolov9.h"
#include <glob.h>
#include <stb/stb_image_write.h>

typedef struct {
    float conf, iou;
    int img, max_det, agnostic, lw, hide_labels, hide_conf, save_txt, save_conf, nosave;
    int classes[256], nclasses;
    char **names;
    const char *dir;
} detect_opts;

static void usage(const char *why) {
    if (why) fprintf(stderr, "detect: %s\n", why);
    fprintf(stderr, "usage: detect --cfg NAME|FILE.yaml [--weights FILE] [--source PATH] [--data FILE.yaml] [--img 640]\n"
                    "              [--conf-thres 0.25] [--iou-thres 0.45] [--max-det 1000] [--classes 0,2] [--agnostic-nms]\n"
                    "              [--line-thickness 3] [--hide-labels] [--hide-conf] [--save-txt] [--save-conf] [--nosave] [--half]\n"
                    "              [--precision fp32|bf16]\n"
                    "              [--project runs/detect] [--name exp] [--exist-ok] [--nc N] [--device cpu|cuda|N] [--info]\n");
    exit(2);
}

static const char *base(const char *p) { const char *s = strrchr(p, '/'); return s ? s + 1 : p; }

static int detect_one(yolo_model *m, const detect_opts *o, const char *path, int index, int total) {
    yolo_image im;
    char err[YOLO_ERR];
    if (yolo_image_load(&im, path, err)) { fprintf(stderr, "%s\n", err); return -1; }
    double t0 = yolo_now();
    /* the smallest stride-32 rectangle that holds the picture scaled to img */
    double r = fmin((double)o->img / im.w, (double)o->img / im.h);
    int W = ((int)ceil(im.w * r / 32)) * 32, H = ((int)ceil(im.h * r / 32)) * 32;
    yolo_image lb = { im.w, im.h, (unsigned char *)malloc((size_t)im.w * im.h * 3) };
    memcpy(lb.rgb, im.rgb, (size_t)im.w * im.h * 3);
    double scale, padx, pady;
    yolo_letterbox(&lb, W, H, 1, &scale, &padx, &pady);
    yolo_real *input = (yolo_real *)malloc((size_t)3 * W * H * sizeof(yolo_real));
    yolo_image_to_input(&lb, input);
    yolo_set_input(m, 1, H, W, input);
    yolo_forward(m, 0);   /* reads input from here: freed only after */
    free(input); free(lb.rgb);
    yolo_det *dets = (yolo_det *)malloc((size_t)o->max_det * sizeof(yolo_det));
    int n = 0;
    yolo_predict(m, o->conf, o->iou, o->max_det, o->agnostic, o->nclasses ? o->classes : NULL, o->nclasses, 0, &dets, &n);
    double ms = (yolo_now() - t0) * 1e3;
    for (int i = 0; i < n; i++) {   /* back onto the picture */
        yolo_det *d = &dets[i];
        yolo_box_to_picture(&d->x1, &d->y1, &d->x2, &d->y2, scale, padx, pady, im.w, im.h);
    }
    printf("image %d/%d %s: %dx%d ", index, total, path, W, H);
    int *count = (int *)calloc(m->nc, sizeof(int));
    for (int i = 0; i < n; i++) count[dets[i].cls]++;
    for (int c = 0; c < m->nc; c++)
        if (count[c]) printf("%d %s%s, ", count[c], o->names[c], count[c] > 1 ? "s" : "");
    printf("%s%.1fms\n", n ? "" : "(no detections), ", ms);
    char out[2048], stem[512];
    snprintf(stem, sizeof stem, "%s", base(path));
    char *dot = strrchr(stem, '.');
    if (o->save_txt) {
        if (dot) *dot = 0;
        snprintf(out, sizeof out, "%s/labels/%s.txt", o->dir, stem);
        FILE *f = fopen(out, "w");
        for (int i = 0; f && i < n; i++) {
            const yolo_det *d = &dets[i];
            fprintf(f, "%d %.6g %.6g %.6g %.6g", d->cls, (d->x1 + d->x2) / 2 / im.w, (d->y1 + d->y2) / 2 / im.h,
                    (d->x2 - d->x1) / im.w, (d->y2 - d->y1) / im.h);
            if (o->save_conf) fprintf(f, " %.6g", d->conf);
            fprintf(f, "\n");
        }
        if (f) fclose(f);
        if (dot) *dot = '.';
    }
    int rc = 0;
    if (!o->nosave) {
        for (int i = n - 1; i >= 0; i--) {   /* the most confident drawn last, on top */
            char label[128];
            if (o->hide_conf) snprintf(label, sizeof label, "%s", o->names[dets[i].cls]);
            else snprintf(label, sizeof label, "%s %.2f", o->names[dets[i].cls], dets[i].conf);
            yolo_draw_detection(&im, &dets[i], o->lw, o->hide_labels ? NULL : label);
        }
        snprintf(out, sizeof out, "%s/%s", o->dir, base(path));
        const char *ext = strrchr(out, '.');
        int ok = ext && (!strcasecmp(ext, ".png") ? stbi_write_png(out, im.w, im.h, 3, im.rgb, im.w * 3)
                         : !strcasecmp(ext, ".bmp") ? stbi_write_bmp(out, im.w, im.h, 3, im.rgb)
                                                    : stbi_write_jpg(out, im.w, im.h, 3, im.rgb, 95));
        if (!ok) { fprintf(stderr, "%s: cannot write\n", out); rc = -1; }
    }
    free(count); free(dets); free(im.rgb);
    return rc;
}

static int is_picture(const char *p) {
    const char *dot = strrchr(p, '.');
    return dot && (!strcasecmp(dot, ".jpg") || !strcasecmp(dot, ".jpeg") || !strcasecmp(dot, ".png") || !strcasecmp(dot, ".bmp"));
}

static void add(char ***files, int *n, const char *p) {
    *files = (char **)realloc(*files, (*n + 1) * sizeof(char *));
    (*files)[(*n)++] = strdup(p);
}
static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* --source: a picture, a folder of them, a glob pattern, or a .txt list of paths */
static int gather(const char *source, char ***files, int *n) {
    DIR *dir;
    const char *dot = strrchr(source, '.');
    if (strpbrk(source, "*?[")) {
        glob_t g;
        if (glob(source, 0, NULL, &g) == 0)
            for (size_t i = 0; i < g.gl_pathc; i++) if (is_picture(g.gl_pathv[i])) add(files, n, g.gl_pathv[i]);
        globfree(&g);
    } else if ((dir = opendir(source))) {
        struct dirent *e;
        char p[2048];
        while ((e = readdir(dir))) {
            snprintf(p, sizeof p, "%s/%s", source, e->d_name);
            if (is_picture(p)) add(files, n, p);
        }
        closedir(dir);
    } else if (dot && !strcasecmp(dot, ".txt")) {
        FILE *f = fopen(source, "r");
        if (!f) { fprintf(stderr, "%s: cannot open\n", source); return -1; }
        char line[2048];
        while (fgets(line, sizeof line, f)) {
            line[strcspn(line, "\r\n")] = 0;
            if (*line) add(files, n, line);
        }
        fclose(f);
        return 0;   /* a list keeps its order */
    } else if (is_picture(source)) add(files, n, source);
    else { fprintf(stderr, "%s: not a picture (jpg, png, bmp), folder, glob or .txt list\n", source); return -1; }
    qsort(*files, *n, sizeof(char *), by_name);
    if (!*n) { fprintf(stderr, "%s: no pictures found\n", source); return -1; }
    return 0;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);   /* progress lines appear as they are made */
    const char *cfg = NULL, *weights = NULL, *source = NULL, *device = NULL, *data = NULL, *project = "runs/detect", *name = "exp";
    const char *precision = NULL;
    int info = 0, nc = 0, exist_ok = 0, half = 0;
    detect_opts o;
    memset(&o, 0, sizeof o);
    o.conf = 0.25f; o.iou = 0.45f; o.img = 640; o.max_det = 1000; o.lw = 3;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int *flag = !strcmp(a, "--info") ? &info : !strcmp(a, "--agnostic-nms") ? &o.agnostic
                  : !strcmp(a, "--hide-labels") ? &o.hide_labels : !strcmp(a, "--hide-conf") ? &o.hide_conf
                  : !strcmp(a, "--save-txt") ? &o.save_txt : !strcmp(a, "--save-conf") ? &o.save_conf
                  : !strcmp(a, "--nosave") ? &o.nosave : !strcmp(a, "--exist-ok") ? &exist_ok
                  : !strcmp(a, "--half") ? &half : NULL;
        if (flag) { *flag = 1; continue; }
        if (!v) { char b[256]; snprintf(b, sizeof b, "%s needs a value", a); usage(b); }
        if (!strcmp(a, "--cfg")) cfg = v;
        else if (!strcmp(a, "--weights")) weights = v;
        else if (!strcmp(a, "--source")) source = v;
        else if (!strcmp(a, "--data")) data = v;
        else if (!strcmp(a, "--project")) project = v;
        else if (!strcmp(a, "--name")) name = v;
        else if (!strcmp(a, "--img") || !strcmp(a, "--imgsz") || !strcmp(a, "--img-size")) o.img = atoi(v);
        else if (!strcmp(a, "--conf-thres")) o.conf = (float)atof(v);
        else if (!strcmp(a, "--iou-thres")) o.iou = (float)atof(v);
        else if (!strcmp(a, "--max-det")) o.max_det = atoi(v);
        else if (!strcmp(a, "--line-thickness")) o.lw = atoi(v);
        else if (!strcmp(a, "--nc")) nc = atoi(v);
        else if (!strcmp(a, "--device")) device = v;
        else if (!strcmp(a, "--precision")) precision = v;
        else if (!strcmp(a, "--classes")) {
            char buf[1024];
            snprintf(buf, sizeof buf, "%s", v);
            for (char *t = strtok(buf, ", "); t && o.nclasses < 256; t = strtok(NULL, ", ")) o.classes[o.nclasses++] = atoi(t);
        } else { char b[256]; snprintf(b, sizeof b, "unknown flag %s", a); usage(b); }
        i++;
    }
    if (!cfg) usage("--cfg is required");
    if (o.img < 32 || o.max_det < 1 || o.lw < 1) usage("--img, --max-det and --line-thickness must be positive");
    if (precision && yolo_precision_parse(precision) < 0) usage("--precision is fp32 or bf16");
    char err[YOLO_ERR];
    yolo_data_cfg dc;
    memset(&dc, 0, sizeof dc);
    if (data) {
        if (yolo_data_read(&dc, data, err)) { fprintf(stderr, "%s\n", err); return 1; }
        if (!nc) nc = dc.nc;
    }
    yolo_model m;
    const yolo_backend *be = yolo_backend_select(device, err);
    if (!be) { fprintf(stderr, "detect: %s\n", err); return 2; }
    if (yolo_model_from_cfg(&m, cfg, nc, err)) { fprintf(stderr, "%s\n", err); return 1; }
    /* names: the dataset's, COCO's for 80 classes, else class0, class1, ... */
    o.names = (char **)calloc(m.nc, sizeof(char *));
    for (int c = 0; c < m.nc; c++) {
        char b[32];
        snprintf(b, sizeof b, "class%d", c);
        o.names[c] = strdup(dc.names && c < dc.nc ? dc.names[c] : m.nc == 80 ? yolo_coco_names[c] : b);
    }
    /* the memory plan for the largest picture (img x img), taken at once; the
       folded weights and the predictions ride in the margin */
    size_t plan = yolo_plan_bytes(&m, 1, o.img, o.img, 0, 0) + 2 * yolo_model_state_bytes(&m, YOLO_SGD) + (64u << 20);
    if (be->reserve(plan)) { fprintf(stderr, "detect: cannot reserve %.2f GB on the device\n", plan / 1e9); return 1; }
    yolo_model_use_backend(&m, be);
    if (weights && yolo_load_weights(&m, weights, err)) { fprintf(stderr, "%s\n", err); return 1; }
    if (info) {
        yolo_model_summary(&m, cfg, stdout);
        printf("%.1f GFLOPs at 640x640 (convolutions, training graph)\n", yolo_model_gflops(&m));
    }
    if (!source) { yolo_model_free(&m); return 0; }
    if (!weights) fprintf(stderr, "detect: no --weights, running the untrained model\n");
    char **files = NULL, dir[1024], lab[1100];
    int n = 0;
    if (gather(source, &files, &n)) return 1;
    yolo_run_dir(project, name, exist_ok, dir, sizeof dir);
    snprintf(lab, sizeof lab, "%s/labels", dir);
    if (o.save_txt) yolo_mkdirs(lab);
    o.dir = dir;
    yolo_model_fuse(&m);   /* BatchNorm and RepConvN folded into plain convs */
    m.precision = precision ? (yolo_precision)yolo_precision_parse(precision) : yolo_precision_default(be, 0);
    if (half && !yolo_model_half(&m)) fprintf(stderr, "detect: --half: %s has no half-precision path, computing in float32\n", be->name);
    int rc = 0;
    for (int i = 0; i < n; i++) { rc |= detect_one(&m, &o, files[i], i + 1, n); free(files[i]); }
    free(files);
    if (!o.nosave || o.save_txt) printf("Results saved to %s\n", dir);
    for (int c = 0; c < m.nc; c++) free(o.names[c]);
    free(o.names);
    yolo_data_free(&dc);
    yolo_model_free(&m);
    return rc ? 1 : 0;
}
