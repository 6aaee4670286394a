/* grad_fidelity: how far one training step's gradient in half (the official's
   AMP) and in bf16 (ours' default on the GPU) lies from the same step's in
   float32, on real augmented pictures; and, beside them, how far float32's
   own moves when the pixels move by half's rounding (relative 2^-11), which
   says how sensitive the gradient itself is. A measurement, not a test.

     tests/grad_fidelity --weights W --data coco128.yaml [--cfg yolov9-t] [--batch 4] [--img 640]
                         [--batches 3] [--device cpu|cuda] [--loss-scale 65536]

   For each batch and precision it prints the cosine to float32's gradient
   and the norm's ratio to it: over the whole model, whose norm the early
   layers set (and with it the official clip at 10), and over the detect
   layer alone. The gradient is the one the optimizer would take, before the
   clip: the loss times the batch, a half step's unscaled. Half's is taken
   at --loss-scale (the scaler's first, 2^16; halved until the gradient is
   finite). A run's scaler settles lower after its first overflows (1024
   in a yolov9-s coco128 run), where more of the small dL/dz stored in half
   could fall below half's smallest values; at the yolov9-t of
   tests/results/README.md, 65536, 1024, 64 and 1 gave the same cosines. */
#define YOLOV9_IMPLEMENTATION
#include "../yolov9.h"

enum { FP32, HALF, BF16, FP32_MOVED, NRUNS };
static const char *RUN_NAME[NRUNS] = { "float32", "half", "bf16", "float32, pixels moved 2^-11" };

/* a model at weights that takes its training steps' products in prec */
static yolo_model model_at(const char *cfg, const char *weights, int nc, const yolo_backend *be, yolo_precision prec) {
    char err[YOLO_ERR];
    yolo_model m;
    if (yolo_model_for_weights(&m, cfg, weights, 0, nc, err)) { fprintf(stderr, "%s\n", err); exit(1); }
    yolo_model_use_backend(&m, be);
    m.precision = prec;
    if (yolo_load_weights(&m, weights, err)) { fprintf(stderr, "%s\n", err); exit(1); }
    return m;
}

/* one training step's gradient [m->nvalues] on images [B, 3, H, W] (the caller frees it); the weights
   do not move, so a model serves every batch */
static yolo_real *step_gradient(yolo_model *m, const yolo_real *images, const yolo_batch *bt, double loss_scale) {
    yolo_loss L;
    memset(&L, 0, sizeof L);
    yolo_loss_scaler scaler;
    yolo_loss_scaler_init(&scaler, m->precision);
    if (scaler.on) scaler.scale = loss_scale;
    for (;;) {   /* half: the step again at half the scale until it is finite, as the scaler would */
        yolo_set_input(m, bt->B, bt->H, bt->W, images);
        yolo_forward(m, 1);
        L.scale = scaler.scale;
        yolo_loss_compute(m, &L, bt->targets, bt->nt, 0);
        yolo_zero_grads(m);
        yolo_backward(m);
        double norm;
        yolo_grad_clip_scale(m, 1, INFINITY, &norm);
        if (!scaler.on || isfinite(norm)) break;
        yolo_loss_scaler_update(&scaler, 0);
    }
    yolo_real *g = yolo_fetch(m, m->grads, m->nvalues);
    for (size_t i = 0; scaler.on && i < m->nvalues; i++) g[i] /= scaler.scale;
    yolo_loss_free(&L);
    return g;
}

/* <a, b>, |a|^2, |b|^2 over the trained parameters of layers [l0, l1] */
static void dots(const yolo_model *m, const yolo_real *a, const yolo_real *b, int l0, int l1, double d[3]) {
    d[0] = d[1] = d[2] = 0;
    for (int k = 0; k < m->nparams; k++) {
        const yolo_param *p = &m->params[k];
        int l = atoi(p->name + strlen("model."));
        if (p->kind > YOLO_P_BIAS || l < l0 || l > l1) continue;
        for (size_t i = p->offset; i < p->offset + p->numel; i++) {
            d[0] += (double)a[i] * b[i]; d[1] += (double)a[i] * a[i]; d[2] += (double)b[i] * b[i];
        }
    }
}

int main(int argc, char **argv) {
    const char *cfg = NULL, *weights = NULL, *data = NULL, *device = "cpu";
    int batch = 4, img = 640, batches = 3;
    double loss_scale = 65536;
    const yolo_flag flags[] = {
        { "--cfg", YOLO_FLAG_STR, &cfg, "model yaml, or a name (the weights' own when they carry it)", 0 },
        { "--weights", YOLO_FLAG_STR, &weights, "the weights the gradient is taken at", 0 },
        { "--data", YOLO_FLAG_STR, &data, "dataset yaml: its training pictures, augmented as train's", 0 },
        { "--batch", YOLO_FLAG_INT, &batch, "pictures a step (4)", 0, 1, YOLO_MAX_BATCH },
        { "--img", YOLO_FLAG_INT, &img, "training size (640)", 0, 1, YOLO_MAX_IMG },
        { "--batches", YOLO_FLAG_INT, &batches, "steps measured (3)", 0, 1, 1000000 },
        { "--device", YOLO_FLAG_STR, &device, "cpu or cuda", 0 },
        { "--loss-scale", YOLO_FLAG_FLOAT, &loss_scale, "half's loss scale, at first (65536)", 0, 1, 1e30 },
    };
    const char *usage = "--weights W --data D.yaml [--cfg C] [--batch 4] [--img 640] [--batches 3] [--device cpu] [--loss-scale 65536]";
    yolo_flags_parse(flags, (int)(sizeof flags / sizeof flags[0]), argc - 1, argv + 1, "grad_fidelity", usage);
    if (!weights || !data || batch < 1 || batches < 1 || !(loss_scale >= 1)) { fprintf(stderr, "usage: grad_fidelity %s\n", usage); return 2; }
    char err[YOLO_ERR];
    const yolo_backend *be = yolo_backend_select(device, err);
    if (!be) { fprintf(stderr, "grad_fidelity: %s\n", err); return 2; }
    yolo_data_cfg dc;
    yolo_dataset ds;
    if (yolo_data_read(&dc, data, err) || yolo_dataset_open(&ds, dc.root, dc.train, dc.nc, 0, err)) { fprintf(stderr, "%s\n", err); return 1; }
    yolo_model models[BF16 + 1];   /* float32's serves the moved pixels too */
    yolo_precision prec[BF16 + 1] = { YOLO_FP32, YOLO_FP16, YOLO_BF16 };
    for (int r = FP32; r <= BF16; r++) models[r] = model_at(cfg, weights, dc.nc, be, prec[r]);
    const yolo_model *m = &models[FP32];   /* the parameters' names and places, and which layer detects */
    int detect = m->nlayers - 1;
    yolo_hyp hyp;
    yolo_hyp_default(&hyp);
    yolo_loader ld;
    yolo_loader_init(&ld, &ds, &hyp, batch, yolo_check_img_size(img, 0, "grad_fidelity"), YOLO_LOADER_TRAIN, 2);
    yolo_loader_start(&ld, 0, 0);
    double sum_cos[NRUNS][2] = { { 0 } };
    printf("cosine to float32's gradient (norm / float32's): the whole model, layer %d (detect)\n", detect);
    for (int b = 0; b < batches; b++) {
        yolo_batch *bt = yolo_loader_next(&ld);
        if (!bt) break;
        const yolo_real *images = yolo_batch_images(bt);
        size_t n = (size_t)bt->B * 3 * bt->H * bt->W;
        yolo_real *moved = (yolo_real *)malloc(n * sizeof *moved);
        yolo_rng rng = { (uint64_t)b };
        for (size_t i = 0; i < n; i++) moved[i] = images[i] * (1 + ldexp(yolo_rng_uniform(&rng) - 0.5, -10));   /* within +-2^-11 */
        yolo_real *G[NRUNS];
        for (int r = FP32; r <= BF16; r++) G[r] = step_gradient(&models[r], images, bt, loss_scale);
        G[FP32_MOVED] = step_gradient(&models[FP32], moved, bt, loss_scale);
        double all[3], det[3];
        dots(m, G[FP32], G[FP32], 0, m->nlayers, all);
        dots(m, G[FP32], G[FP32], detect, detect, det);
        printf("batch %d (%d boxes): float32's |g| %.4g, the detect layer's %.4g\n", b, bt->nt, sqrt(all[0]), sqrt(det[0]));
        for (int r = HALF; r < NRUNS; r++) {
            dots(m, G[r], G[FP32], 0, m->nlayers, all);
            dots(m, G[r], G[FP32], detect, detect, det);
            double c[2] = { all[0] / sqrt(all[1] * all[2]), det[0] / sqrt(det[1] * det[2]) };
            printf("  %-28s %6.3f (%.2f)   %6.3f (%.2f)\n", RUN_NAME[r], c[0], sqrt(all[1] / all[2]), c[1], sqrt(det[1] / det[2]));
            sum_cos[r][0] += c[0]; sum_cos[r][1] += c[1];
        }
        for (int r = 0; r < NRUNS; r++) free(G[r]);
        free(moved);
    }
    printf("mean cosine over %d batches: the whole model, detect\n", batches);
    for (int r = HALF; r < NRUNS; r++) printf("  %-28s %6.3f   %6.3f\n", RUN_NAME[r], sum_cos[r][0] / batches, sum_cos[r][1] / batches);
    yolo_loader_stop(&ld);
    yolo_loader_free(&ld);
    yolo_dataset_free(&ds);
    yolo_data_free(&dc);
    for (int r = FP32; r <= BF16; r++) yolo_model_free(&models[r]);
    return 0;
}
