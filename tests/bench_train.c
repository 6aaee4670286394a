/* bench_train: time a training step on the GPU, or with --infer the
   inference forward in float32, with --half and in bf16.

     tests/bench_train --cfg yolov9-s --batch 32 --img 640 [--steps 5] [--device cuda] [--ckpt] [--infer]
                       [--precision bf16|half|fp32 (half: no loss scaler, for the time)] [--dry-run] [--no-profile] [--no-graphs]

   Plans the run's device memory first (yolo_plan_bytes: activations,
   gradients, scratch and loss buffers for up to --max-boxes boxes per
   image, plus weights, gradients, EMA and optimizer state) and reserves
   it in one allocation. Prints the plan, then milliseconds per step split
   into forward, loss, backward and optimizer with the EMA (median over
   the timed steps, after three warm-up steps: where the backend records
   CUDA graphs, the steps from the fourth on replay them; --no-graphs:
   every op launched on its own), img/s, the peak of device memory the
   run held, and then one profiled step: every op, the most expensive
   first, with its achieved TFLOP/s or GB/s (--no-profile: not that
   step). The batch is synthetic (uniform noise, six random boxes per
   image): the cost of a step does not depend on what the pixels show; it
   goes over as train's batches do, uint8 pixels uploaded once a step
   from pinned host memory and divided by 255 on the device (as the
   official's step uploads its uint8 batch). --ckpt recomputes every
   block's inside during backward; --dry-run prints the plan and stops
   (no device needed: planned as --device would plan it, and where that
   device answers after all, a GPU or the simulator, checked against its
   own plan). --precision: the convs' products in training (bf16 by
   default where the backend has tensor cores). --infer times the folded
   model's forward instead (median over the steps after the warm-ups,
   float32, --half, then bf16), then --half as detect runs it (the
   picture handed over each time as uint8 from pinned memory, normalised
   on the device), then profiles one --half forward. Until that last
   measure the picture is uploaded once, before the clock starts, as the
   official's benchmark holds its input on the GPU
   (tests/bench_official.py): the forward alone is timed, and the upload
   of the float32 batch from pageable memory is printed beside it. */
#define YOLOV9_IMPLEMENTATION
#include "../yolov9.h"

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Passes before the clock: where the backend records CUDA graphs, the
   first pass of a shape runs op by op, the second records its regions,
   the third on replay them (a training step: the first follows a
   placement of its own, so its graphs start a step later) */
enum { WARMUPS = 3 };

/* the median of the timed passes t[WARMUPS .. WARMUPS + steps), in ms */
static double median_ms(double *t, int steps) {
    qsort(t + WARMUPS, steps, sizeof(double), cmp_double);
    return t[WARMUPS + steps / 2] * 1e3;
}

/* one folded forward, timed (synchronised before and after); with bytes, the picture handed over first as
   uint8 from host memory, as detect hands it (normalised on the device) */
static double timed_forward(yolo_model *m, const yolo_backend *be, const unsigned char *bytes, int B, int img) {
    be->sync();
    double t0 = yolo_now();
    if (bytes) yolo_set_input_pixels(m, B, img, img, bytes);
    yolo_forward(m, 0);
    be->sync();
    return yolo_now() - t0;
}

/* --infer: the folded model's forward in float32, with --half, in bf16; then --half as detect runs it */
static void bench_infer(yolo_model *m, const yolo_backend *be, int B, int img, int steps, const yolo_real *pixels,
                        unsigned char *bytes, size_t plan) {
    yolo_model_fuse(m);
    static const yolo_precision order[3] = { YOLO_FP32, YOLO_FP16, YOLO_BF16 };
    static const char *const label[3] = { "float32", "--half", "bf16" };
    double *t = (double *)calloc(steps + WARMUPS, sizeof(double)), ms[3] = { 0, 0, 0 };
    yolo_set_input(m, B, img, img, NULL);   /* the input lives on the device; the forward does not upload it */
    be->sync();
    double t0 = yolo_now();
    be->upload(m->input.data, pixels, yolo_numel(&m->input) * sizeof(yolo_real));
    be->sync();
    printf("  upload of the float32 batch from pageable memory %.1f ms (not in the times below)\n", (yolo_now() - t0) * 1e3);
    for (int p = 0; p < 3; p++) {
        if (p && be == &yolo_cpu) { printf("  --half, bf16: the CPU's are float32 convs of rounded copies, not timed\n"); break; }
        m->precision = order[p];
        for (int s = 0; s < steps + WARMUPS; s++) t[s] = timed_forward(m, be, NULL, B, img);
        ms[p] = median_ms(t, steps);
        printf("  inference %-8s %8.2f ms a batch of %d at %dx%d   %.1f img/s\n", label[p], ms[p], B, img, img, B * 1e3 / ms[p]);
    }
    if (ms[1] > 0) {   /* detect's path: the picture's uint8 read by the device from pinned host memory */
        size_t n = (size_t)B * 3 * img * img;
        be->pin(bytes, yolo_page_bytes(n), 1);
        m->precision = YOLO_FP16;
        for (int s = 0; s < steps + WARMUPS; s++) t[s] = timed_forward(m, be, bytes, B, img);
        double d = median_ms(t, steps);
        printf("  detect's path: --half, the picture handed over each time as uint8 from pinned memory, normalised on the device\n");
        printf("  inference %-8s %8.2f ms a batch of %d at %dx%d   %.1f img/s\n", "detect", d, B, img, img, B * 1e3 / d);
        be->pin(bytes, yolo_page_bytes(n), 0);
    }
    size_t in_use, peak;
    be->memory(&in_use, &peak);
    printf("  device memory held at peak %.2f GB (plan %.2f GB); graphs: %ld regions recorded, %ld replayed\n",
           peak / 1e9, plan / 1e9, m->graph_records, m->graph_replays);
    if (ms[1] > 0) {
        printf("  --half takes %.2f, bf16 %.2f of the float32 time; one profiled --half forward:\n", ms[1] / ms[0], ms[2] / ms[0]);
        m->precision = YOLO_FP16;
        be->profile(1, NULL);
        yolo_forward(m, 0);
        be->sync();
        be->profile(0, stdout);
    }
    free(t);
}

/* the run's device memory: activations (*act), weights and state (*state) and the backend's scratch, planned
   for backend be before anything is allocated. The precision first: the plan sizes a stored tensor by it,
   and the step's copy of the pixels. --infer: the most that any of its passes takes (float32 stores the
   largest tensors, a --half or bf16 pass adds the weights' staged copies) */
static size_t bench_plan(yolo_model *m, const yolo_backend *be, const char *precision, int infer, int B, int img,
                         int max_boxes, size_t *act, size_t *state) {
    yolo_model_precision_flags(m, be, precision, !infer, 0, "bench_train");
    m->train_pixels = !infer;
    *act = yolo_plan_bytes(m, B, img, img, !infer, max_boxes);
    for (int p = YOLO_BF16; infer && p <= YOLO_FP16; p++)
        if (be->tensor_cores >> p & 1) {
            m->precision = (yolo_precision)p;
            size_t a = yolo_plan_bytes(m, B, img, img, 0, 0);
            if (a > *act) *act = a;
            m->precision = YOLO_FP32;
        }
    *state = infer ? yolo_model_weights_bytes(m) : yolo_model_state_bytes(m, YOLO_SGD);
    return *act + *state + YOLO_BACKEND_SCRATCH_BYTES;
}

int main(int argc, char **argv) {
    const char *cfg = "yolov9-s", *device = "cuda", *precision = NULL;
    int B = 32, img = 640, steps = 5, max_boxes = 6, ckpt = 0, dry = 0, infer = 0, profile = 1, graphs = 1;   /* the synthetic batch has six boxes an image */
    for (int i = 1; i < argc; i += 2) {
        if (!strcmp(argv[i], "--ckpt")) { ckpt = 1; i--; continue; }
        if (!strcmp(argv[i], "--infer")) { infer = 1; i--; continue; }
        if (!strcmp(argv[i], "--dry-run")) { dry = 1; i--; continue; }
        if (!strcmp(argv[i], "--no-profile")) { profile = 0; i--; continue; }
        if (!strcmp(argv[i], "--no-graphs")) { graphs = 0; i--; continue; }
        if (i + 1 >= argc) { fprintf(stderr, "bench_train: %s needs a value\n", argv[i]); return 2; }
        if (!strcmp(argv[i], "--cfg")) cfg = argv[i + 1];
        else if (!strcmp(argv[i], "--batch")) B = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--img")) img = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--steps")) steps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--device")) device = argv[i + 1];
        else if (!strcmp(argv[i], "--max-boxes")) max_boxes = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--precision")) {
            precision = argv[i + 1];
            if (yolo_precision_parse(precision) < 0) { fprintf(stderr, "bench_train: --precision is bf16, half or fp32\n"); return 2; }
        }
        else { fprintf(stderr, "bench_train: unknown flag %s\n", argv[i]); return 2; }
    }
    char err[YOLO_ERR];
    /* --dry-run: planned for --device without it (yolo_backend_for_plan) */
    const yolo_backend *be = dry ? yolo_backend_for_plan(device) : yolo_backend_select(device, err);
    if (!be) { fprintf(stderr, "bench_train: %s\n", err); return 2; }
    yolo_model m;
    if (yolo_model_from_cfg(&m, cfg, 80, err)) { fprintf(stderr, "%s\n", err); return 1; }
    m.ckpt = ckpt;
    m.no_graphs = !graphs;
    size_t act, state, plan = bench_plan(&m, be, precision, infer, B, img, max_boxes, &act, &state);
    printf("memory plan: activations%s %.2f GB%s + %s %.2f GB = %.2f GB\n", infer ? ", folded weights, predictions" :
           ", gradients and scratch", act / 1e9, ckpt ? " (--ckpt)" : "",
           infer ? "weights" : "weights, gradients, EMA, SGD state", state / 1e9, plan / 1e9);
    if (dry) {   /* where the device answers after all (a GPU, the simulator), its own plan must be the same */
        printf("memory plan in bytes: %zu\n", plan);
        const yolo_backend *real = yolo_backend_select(device, NULL);
        if (!real || real == &yolo_cpu) return 0;
        size_t own = bench_plan(&m, real, precision, infer, B, img, max_boxes, &act, &state);
        printf("the %s backend's own plan: %.6f GB, %s\n", real->name, own / 1e9, own == plan ? "the same" : "DIFFERENT");
        return own != plan;
    }
    if (be->reserve(plan)) { fprintf(stderr, "bench_train: cannot reserve %.2f GB on the device\n", plan / 1e9); return 1; }
    yolo_model_use_backend(&m, be);

    yolo_rng rng = { 7 };
    size_t npix = (size_t)B * 3 * img * img;
    yolo_real *pixels = (yolo_real *)malloc(npix * sizeof(yolo_real));       /* --infer: floats in [0, 1] */
    unsigned char *bytes = yolo_page_alloc(npix);   /* training: uint8, in pages as the loader's (pinned below) */
    for (size_t i = 0; i < npix; i++) {
        bytes[i] = (unsigned char)(yolo_rng_u64(&rng) % 256);
        pixels[i] = (yolo_real)(bytes[i] / 255.0);
    }
    int nt = 6 * B;
    yolo_real *targets = (yolo_real *)malloc((size_t)nt * 6 * sizeof(yolo_real));
    for (int t = 0; t < nt; t++) {
        yolo_real *r = targets + 6 * t;
        r[0] = (yolo_real)(t % B); r[1] = (yolo_real)(yolo_rng_u64(&rng) % 80);
        r[2] = (yolo_real)(0.2 + 0.6 * yolo_rng_uniform(&rng)); r[3] = (yolo_real)(0.2 + 0.6 * yolo_rng_uniform(&rng));
        r[4] = (yolo_real)(0.05 + 0.3 * yolo_rng_uniform(&rng)); r[5] = (yolo_real)(0.05 + 0.3 * yolo_rng_uniform(&rng));
    }
    if (infer) {
        bench_infer(&m, be, B, img, steps, pixels, bytes, plan);
        free(pixels); free(bytes); free(targets);
        yolo_model_free(&m);
        return 0;
    }
    yolo_optim opt;
    yolo_optim_init(&opt, &m, YOLO_SGD, 0.01, 0.937, 5e-4);
    yolo_ema ema;
    yolo_ema_init(&ema, &m);
    yolo_loss loss;
    memset(&loss, 0, sizeof loss);

    double *ph[4];
    for (int k = 0; k < 4; k++) ph[k] = (double *)calloc(steps + WARMUPS, sizeof(double));
    printf("%s, batch %d, %dx%d, backend %s, convolutions in %s\n", cfg, B, img, img, be->name, yolo_precision_name(m.precision));
    be->pin(bytes, yolo_page_bytes(npix), 1);
    for (int s = 0; s < steps + WARMUPS; s++) {
        yolo_set_input_pixels(&m, B, img, img, bytes);
        be->sync();
        double t0 = yolo_now();
        yolo_forward(&m, 1);
        be->sync();
        double t1 = yolo_now();
        yolo_loss_compute(&m, &loss, targets, nt, 0);
        be->sync();
        double t2 = yolo_now();
        yolo_zero_grads(&m);
        yolo_backward(&m);
        be->sync();
        double t3 = yolo_now();
        yolo_optim_step(&opt, &m);
        yolo_ema_update(&ema, &m);
        be->sync();
        double t4 = yolo_now();
        ph[0][s] = t1 - t0; ph[1][s] = t2 - t1; ph[2][s] = t3 - t2; ph[3][s] = t4 - t3;
        printf("  step %d: loss %.3f (box %.3f cls %.3f dfl %.3f)  %.1f ms\n", s, loss.loss, loss.items[0], loss.items[1],
               loss.items[2], (t4 - t0) * 1e3);
    }
    static const char *names[4] = { "forward", "loss", "backward", "opt+ema" };
    double total = 0;
    printf("median over %d steps:\n", steps);
    for (int k = 0; k < 4; k++) {
        double med = median_ms(ph[k], steps);
        total += med;
        printf("  %-10s %9.1f ms\n", names[k], med);
    }
    size_t in_use, peak;
    be->memory(&in_use, &peak);
    printf("  %-10s %9.1f ms   %.1f img/s   device memory held at peak %.2f GB (plan %.2f GB)\n", "step", total,
           B * 1e3 / total, peak / 1e9, plan / 1e9);
    printf("  graphs: %ld regions recorded, %ld replayed\n", m.graph_records, m.graph_replays);

    if (profile) {
        be->profile(1, NULL);
        yolo_forward(&m, 1);
        yolo_loss_compute(&m, &loss, targets, nt, 0);
        yolo_zero_grads(&m);
        yolo_backward(&m);
        yolo_optim_step(&opt, &m);
        yolo_ema_update(&ema, &m);
        be->sync();
        printf("one profiled step, every op (each synchronised), the most expensive first:\n");
        be->profile(0, stdout);
    }

    yolo_loss_free(&loss);
    yolo_optim_free(&opt);
    yolo_ema_free(&ema);
    yolo_model_free(&m);
    be->pin(bytes, yolo_page_bytes(npix), 0);
    free(pixels); free(bytes); free(targets);
    return 0;
}
