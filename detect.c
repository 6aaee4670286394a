/* detect: YOLOv9 on pictures, as the official detect_dual.py.

     ./detect --cfg yolov9-t --info                 model summary
     ./detect --cfg yolov9-c --weights w.safetensors --source img.jpg|folder

   Flags: --cfg NAME|FILE.yaml  --weights FILE.safetensors  --source PATH
          --img 640  --conf-thres 0.25  --iou-thres 0.45  --max-det 1000
          --nc N  --device cpu|cuda|N  --info
   One line per image: its size, what was found, how long it took. */
#define YOLOV9_IMPLEMENTATION
#include "yolov9.h"
#include <dirent.h>
#include <stb/stb_image.h>

static void usage(void) {
    fprintf(stderr, "usage: detect --cfg NAME|FILE.yaml [--weights FILE] [--source PATH] [--img 640] [--conf-thres 0.25]\n"
                    "              [--iou-thres 0.45] [--max-det 1000] [--nc N] [--device cpu|cuda|N] [--info]\n");
    exit(2);
}

static int detect_one(yolo_model *m, const char *path, int img, float conf, float iou, int max_det, int index, int total) {
    int w, h, ch;
    unsigned char *rgb = stbi_load(path, &w, &h, &ch, 3);
    if (!rgb) { fprintf(stderr, "%s: cannot decode image (%s)\n", path, stbi_failure_reason()); return -1; }
    double t0 = yolo_now();
    /* the smallest stride-32 rectangle that holds the image scaled to img */
    double r = fmin((double)img / w, (double)img / h);
    int W = ((int)ceil(w * r / 32)) * 32, H = ((int)ceil(h * r / 32)) * 32;
    yolo_tensor host = { 0 };
    yolo_tensor_resize(&yolo_cpu, &host, 1, 3, H, W, 0);
    double padx, pady, scale = yolo_letterbox(rgb, w, h, &host, 0, &padx, &pady);
    stbi_image_free(rgb);
    yolo_set_input(m, 1, H, W, host.data);
    yolo_tensor_free(&yolo_cpu, &host);
    yolo_forward(m, 0);
    yolo_det *dets = (yolo_det *)malloc((size_t)max_det * sizeof(yolo_det));
    int n = 0;
    yolo_predict(m, conf, iou, max_det, 0, NULL, 0, &dets, &n);
    double ms = (yolo_now() - t0) * 1e3;
    printf("image %d/%d %s: %dx%d ", index, total, path, W, H);
    int *count = (int *)calloc(m->nc, sizeof(int));
    for (int i = 0; i < n; i++) count[dets[i].cls]++;
    for (int c = 0; c < m->nc; c++)
        if (count[c]) printf("%d %s, ", count[c], m->nc == 80 ? yolo_coco_names[c] : "objects");
    printf("%s%.1fms\n", n ? "" : "(no detections), ", ms);
    for (int i = 0; i < n && getenv("YOLO_VERBOSE"); i++)
        printf("  %d %.3f  %.1f %.1f %.1f %.1f\n", dets[i].cls, dets[i].conf, (dets[i].x1 - padx) / scale,
               (dets[i].y1 - pady) / scale, (dets[i].x2 - padx) / scale, (dets[i].y2 - pady) / scale);
    free(count); free(dets);
    return 0;
}

int main(int argc, char **argv) {
    const char *cfg = NULL, *weights = NULL, *source = NULL, *device = NULL;
    int img = 640, max_det = 1000, info = 0, nc = 0;
    float conf = 0.25f, iou = 0.45f;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--info")) { info = 1; continue; }
        if (!v) usage();
        if (!strcmp(a, "--cfg")) cfg = v;
        else if (!strcmp(a, "--weights")) weights = v;
        else if (!strcmp(a, "--source")) source = v;
        else if (!strcmp(a, "--img") || !strcmp(a, "--imgsz") || !strcmp(a, "--img-size")) img = atoi(v);
        else if (!strcmp(a, "--conf-thres")) conf = (float)atof(v);
        else if (!strcmp(a, "--iou-thres")) iou = (float)atof(v);
        else if (!strcmp(a, "--max-det")) max_det = atoi(v);
        else if (!strcmp(a, "--nc")) nc = atoi(v);
        else if (!strcmp(a, "--device")) device = v;
        else usage();
        i++;
    }
    if (!cfg) usage();
    yolo_model m;
    char err[YOLO_ERR];
    const yolo_backend *be = yolo_backend_select(device, err);
    if (!be) { fprintf(stderr, "detect: %s\n", err); return 2; }
    if (yolo_model_from_cfg(&m, cfg, nc, err)) { fprintf(stderr, "%s\n", err); return 1; }
    /* the memory plan for the largest picture (img x img), taken at once; the
       folded weights and the predictions ride in the margin */
    size_t plan = yolo_plan_bytes(&m, 1, img, img, 0, 0) + 2 * yolo_model_state_bytes(&m, YOLO_SGD) + (64u << 20);
    if (be->reserve(plan)) { fprintf(stderr, "detect: cannot reserve %.2f GB on the device\n", plan / 1e9); return 1; }
    yolo_model_use_backend(&m, be);
    if (weights && yolo_load_weights(&m, weights, err)) { fprintf(stderr, "%s\n", err); return 1; }
    if (info) {
        yolo_model_summary(&m, cfg, stdout);
        printf("%.1f GFLOPs at 640x640 (convolutions, training graph)\n", yolo_model_gflops(&m));
    }
    if (!source) { yolo_model_free(&m); return 0; }
    if (!weights) fprintf(stderr, "detect: no --weights, running the untrained model\n");
    yolo_model_fuse(&m);   /* BatchNorm and RepConvN folded into plain convs */
    DIR *dir = opendir(source);
    int rc = 0;
    if (!dir) rc |= detect_one(&m, source, img, conf, iou, max_det, 1, 1);
    else {
        struct dirent *e;
        char **files = NULL;
        int n = 0;
        while ((e = readdir(dir))) {
            const char *dot = strrchr(e->d_name, '.');
            if (!dot || (strcasecmp(dot, ".jpg") && strcasecmp(dot, ".jpeg") && strcasecmp(dot, ".png") && strcasecmp(dot, ".bmp"))) continue;
            files = (char **)realloc(files, (n + 1) * sizeof(char *));
            files[n] = (char *)malloc(strlen(source) + strlen(e->d_name) + 2);
            sprintf(files[n++], "%s/%s", source, e->d_name);
        }
        closedir(dir);
        qsort(files, n, sizeof(char *), (int (*)(const void *, const void *))strcmp);
        for (int i = 0; i < n; i++) { rc |= detect_one(&m, files[i], img, conf, iou, max_det, i + 1, n); free(files[i]); }
        free(files);
    }
    yolo_model_free(&m);
    return rc ? 1 : 0;
}
