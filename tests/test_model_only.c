/* The model alone, as a port takes it: yolov9.h with YOLO_NO_DATA, built
   and linked with the C library, libm and OpenMP only (no libjpeg, stb or
   pthread; the Makefile links nothing else). On the golden case
   tiny-gelan: the training forward's loss and the decoded eval
   predictions against the official's (reference.safetensors), at
   golden_check's float32 tolerances (1e-4 relative). Exits 1 on any
   difference past them. Usage: test_model_only [tests/golden/tiny-gelan] */
#define YOLO_NO_DATA
#define YOLOV9_IMPLEMENTATION
#include "../yolov9.h"

static double compare(const yolo_safetensors *ref, const char *name, const yolo_real *ours, size_t n) {
    const yolo_st_entry *e = yolo_st_find(ref, name);
    if (!e || (size_t)yolo_st_numel(e) != n) return INFINITY;
    yolo_real *r = (yolo_real *)malloc(n * sizeof(yolo_real));
    float *rf = (float *)malloc(n * sizeof(float));
    yolo_st_get(ref, e, r);
    for (size_t i = 0; i < n; i++) rf[i] = (float)r[i];
    double err = yolo_rel_err(ours, rf, n);
    free(r); free(rf);
    return err;
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "tests/golden/tiny-gelan";
    char path[1024], err[YOLO_ERR];
    yolo_model m;
    yolo_safetensors ref;
    snprintf(path, sizeof path, "%s/model.yaml", dir);
    if (yolo_model_from_yaml(&m, path, 0, err)) { fprintf(stderr, "%s\n", err); return 1; }
    yolo_model_use_backend(&m, &yolo_cpu);
    snprintf(path, sizeof path, "%s/weights.safetensors", dir);
    if (yolo_load_weights(&m, path, err)) { fprintf(stderr, "%s\n", err); return 1; }
    snprintf(path, sizeof path, "%s/reference.safetensors", dir);
    if (yolo_st_read(&ref, path, err)) { fprintf(stderr, "%s\n", err); return 1; }
    const yolo_st_entry *ie = yolo_st_find(&ref, "input"), *te = yolo_st_find(&ref, "targets");
    if (!ie || !te || ie->ndim != 4) { fprintf(stderr, "%s: no input/targets\n", path); return 1; }
    int B = (int)ie->shape[0], H = (int)ie->shape[2], W = (int)ie->shape[3], nt = (int)te->shape[0];
    yolo_real *img = (yolo_real *)malloc(yolo_st_numel(ie) * sizeof(yolo_real));
    yolo_real *targets = (yolo_real *)malloc((yolo_st_numel(te) + 1) * sizeof(yolo_real));
    yolo_st_get(&ref, ie, img);
    yolo_st_get(&ref, te, targets);

    yolo_set_input(&m, B, H, W, img);
    yolo_forward(&m, 1);
    yolo_loss loss;
    memset(&loss, 0, sizeof loss);
    yolo_loss_compute(&m, &loss, targets, nt, 0);
    yolo_real lv = (yolo_real)loss.loss;
    double e_loss = compare(&ref, "loss", &lv, 1);

    snprintf(path, sizeof path, "%s/weights.safetensors", dir);
    yolo_load_weights(&m, path, err);   /* the running statistics of before the training forward */
    yolo_forward(&m, 0);
    size_t n = (size_t)B * (4 + m.nc) * yolo_num_anchors(&m);
    yolo_real *pred = (yolo_real *)malloc(n * sizeof(yolo_real));
    yolo_decode(&m, pred);
    double e_pred = compare(&ref, "eval.pred", pred, n);

    int ok_loss = e_loss <= 1e-4, ok_pred = e_pred <= 1e-4;
    printf("model alone (YOLO_NO_DATA), %s: loss %.6f worst %.2e %s, eval.pred worst %.2e %s\n", dir, loss.loss, e_loss,
           ok_loss ? "ok" : "FAIL", e_pred, ok_pred ? "ok" : "FAIL");
    yolo_loss_free(&loss);
    yolo_st_free(&ref);
    yolo_model_free(&m);
    free(img); free(targets); free(pred);
    return ok_loss && ok_pred ? 0 : 1;
}
