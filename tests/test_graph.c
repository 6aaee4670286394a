/* test_graph: the CUDA backend's graphs give the same bits as its launches
   one by one, and its memory plan is the one planned without a GPU.

   A region of a pass (the layers of a forward, a training backward) runs
   as a CUDA graph from the third time it comes with the same shapes and
   the same memory (yolo_region_begin in yolov9.h): recorded the second
   time, replayed after. Here, on a model of every YOLOv9 module (DIR's
   model.yaml, random weights):
     - training: STEPS steps (SGD, clipping, EMA) eagerly, then the same
       steps again from the same start with graphs; the weights, the
       EMA, the BatchNorm running statistics and every loss must be equal
       to the last bit. Each step's batch comes from a buffer of its own
       (as the loader's do) with 2 to 4 boxes an image, so that an upload
       outside the regions and the loss's changing count of targets are
       in the test; at least two steps must replay both regions;
     - with --ckpt, graphs on: the same bits again (recompute gives the
       same gradients);
     - inference on the folded model, --half where the backend has it:
       forwards at two sizes in turn, eagerly and with graphs; the head's
       maps equal to the last bit, and replays counted;
     - the plan: planned for "cuda" without the GPU (yolo_backend_for_plan,
       what --dry-run reports) equals the backend's own, for the steps
       above and for yolov9-s and yolov9-e at 640 (where the backend is a
       tensor-core tier with bf16: the stand-in describes those).
   On a backend without graphs (the CPU) the comparisons still run and the
   replay counts are not asked for.

   usage: test_graph [--device cuda|cpu] [--precision bf16|half|fp32] DIR */
#define YOLOV9_IMPLEMENTATION
#include "../yolov9.h"

enum { B = 2, STEPS = 5, MAX_BOXES = 4 };
static int failures = 0;

static void check(int ok, const char *what) {
    printf("  %-64s %s\n", what, ok ? "ok" : "FAIL");
    if (!ok) failures++;
}

/* what a run of training steps leaves: weights, EMA, running statistics, the losses */
typedef struct { yolo_real *values, *ema, *stats; double loss[STEPS]; } run_result;

static void result_free(run_result *r) { free(r->values); free(r->ema); free(r->stats); }

/* step s's batch: pixels in a buffer of its own, 2 + s % 3 boxes an image */
static int batch_of(int s, int H, int W, unsigned char **pixels, yolo_real *targets) {
    yolo_rng rng = { 100 + (uint64_t)s };
    size_t n = (size_t)B * 3 * H * W;
    for (size_t i = 0; i < n; i++) pixels[s][i] = (unsigned char)(yolo_rng_u64(&rng) % 256);
    int nt = 0;
    for (int b = 0; b < B; b++)
        for (int k = 0; k < 2 + s % 3; k++, nt++) {
            yolo_real *r = targets + 6 * nt;
            r[0] = (yolo_real)b; r[1] = (yolo_real)(yolo_rng_u64(&rng) % 5);
            r[2] = (yolo_real)(0.2 + 0.6 * yolo_rng_uniform(&rng)); r[3] = (yolo_real)(0.2 + 0.6 * yolo_rng_uniform(&rng));
            r[4] = (yolo_real)(0.1 + 0.3 * yolo_rng_uniform(&rng)); r[5] = (yolo_real)(0.1 + 0.3 * yolo_rng_uniform(&rng));
        }
    return nt;
}

/* STEPS training steps from the weights w0 and statistics s0, as train's: forward, loss, backward, the
   gradient's norm clipped, SGD, EMA */
static run_result train_steps(yolo_model *m, const yolo_real *w0, const yolo_real *s0, int H, int W,
                              unsigned char **pixels, int graphs, int ckpt) {
    const yolo_backend *be = m->be;
    be->upload(m->values, w0, m->nvalues * sizeof(yolo_real));
    be->upload(m->stats, s0, m->nstats * sizeof(yolo_real));
    m->no_graphs = !graphs;
    if (m->ckpt != ckpt) { m->ckpt = ckpt; yolo_plan_bytes(m, B, H, W, 1, MAX_BOXES); }
    m->place_next = 0;   /* the first step's placement, then every later one's */
    yolo_optim opt;
    yolo_optim_init(&opt, m, YOLO_SGD, 0.01, 0.937, 5e-4);
    yolo_ema ema;
    yolo_ema_init(&ema, m);
    yolo_loss loss;
    memset(&loss, 0, sizeof loss);
    yolo_real targets[6 * B * MAX_BOXES];
    run_result r;
    for (int s = 0; s < STEPS; s++) {
        int nt = batch_of(s, H, W, pixels, targets);
        yolo_set_input_pixels(m, B, H, W, pixels[s]);
        yolo_forward(m, 1);
        r.loss[s] = yolo_loss_compute(m, &loss, targets, nt, 0);
        yolo_zero_grads(m);
        yolo_backward(m);
        opt.grad_scale = yolo_grad_clip_scale(m, 1, 10.0, NULL);
        yolo_optim_step(&opt, m);
        yolo_ema_update(&ema, m);
    }
    r.values = yolo_fetch(m, m->values, m->nvalues);
    r.ema = yolo_fetch(m, ema.values, m->nvalues);
    r.stats = yolo_fetch(m, m->stats, m->nstats);
    yolo_loss_free(&loss);
    yolo_ema_free(&ema);
    yolo_optim_free(&opt);
    return r;
}

static int same_run(const yolo_model *m, const run_result *a, const run_result *b) {
    return !memcmp(a->values, b->values, m->nvalues * sizeof(yolo_real)) &&
           !memcmp(a->ema, b->ema, m->nvalues * sizeof(yolo_real)) &&
           !memcmp(a->stats, b->stats, m->nstats * sizeof(yolo_real)) && !memcmp(a->loss, b->loss, sizeof a->loss);
}

/* the folded model's forwards at two sizes in turn, 4 each; the head's maps of each, concatenated */
static yolo_real *infer_passes(yolo_model *m, const yolo_real *picture, int graphs, size_t *n) {
    static const int size[2][2] = { { 64, 96 }, { 96, 64 } };
    yolo_detect *d = m->layers[m->detect].det;
    yolo_real *all = NULL;
    *n = 0;
    m->no_graphs = !graphs;
    for (int pass = 0; pass < 8; pass++) {
        yolo_set_input(m, 1, size[pass % 2][0], size[pass % 2][1], picture);
        yolo_forward(m, 0);
        for (int l = 0; l < 3; l++) {
            const yolo_tensor *t = &d->out[d->nbranch - 1][l];
            size_t k = yolo_numel(t);
            yolo_real *h = yolo_fetch_tensor(m, t);
            all = (yolo_real *)realloc(all, (*n + k) * sizeof(yolo_real));
            memcpy(all + *n, h, k * sizeof(yolo_real));
            *n += k;
            free(h);
        }
    }
    return all;
}

/* planned for "cuda" without the GPU, and by the backend itself */
static int plans_agree(yolo_model *m, const yolo_backend *be, const char *precision, int B_, int H, int W, int ckpt) {
    size_t p[2];
    const yolo_backend *which[2] = { yolo_backend_for_plan("cuda"), be };
    for (int k = 0; k < 2; k++) {
        m->ckpt = ckpt;
        yolo_model_precision_flags(m, which[k], precision, 1, 0, "test_graph");
        m->train_pixels = 1;
        p[k] = yolo_plan_bytes(m, B_, H, W, 1, 6);
    }
    return p[0] == p[1];
}

int main(int argc, char **argv) {
    const char *device = "cuda", *precision = "bf16", *dir = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--device") && i + 1 < argc) device = argv[++i];
        else if (!strcmp(argv[i], "--precision") && i + 1 < argc) precision = argv[++i];
        else dir = argv[i];
    }
    if (!dir || yolo_precision_parse(precision) < 0) {
        fprintf(stderr, "usage: test_graph [--device cuda|cpu] [--precision bf16|half|fp32] DIR\n");
        return 2;
    }
    char err[YOLO_ERR], path[1024];
    const yolo_backend *be = yolo_backend_select(device, err);
    if (!be) { fprintf(stderr, "test_graph: %s\n", err); return 2; }
    snprintf(path, sizeof path, "%s/model.yaml", dir);
    yolo_model m;
    if (yolo_model_from_yaml(&m, path, 0, err)) { fprintf(stderr, "%s\n", err); return 1; }
    const int H = 64, W = 96;
    printf("test_graph: %s, backend %s, training in %s, batch %d at %dx%d, %d steps\n", path, be->name, precision, B, H, W, STEPS);

    int tc_bf16 = be->tensor_cores >> YOLO_BF16 & 1;
    if (be != &yolo_cpu && tc_bf16) {
        int ok = plans_agree(&m, be, precision, B, H, W, 0) && plans_agree(&m, be, precision, B, H, W, 1);
        yolo_model big;
        static const char *const cfgs[2] = { "yolov9-s", "yolov9-e" };
        for (int k = 0; k < 2; k++) {
            if (yolo_model_from_cfg(&big, cfgs[k], 80, err)) { fprintf(stderr, "%s\n", err); return 1; }
            ok = ok && plans_agree(&big, be, precision, 8, 640, 640, 0) && plans_agree(&big, be, precision, 8, 640, 640, 1);
            yolo_model_free(&big);
        }
        check(ok, "plan without the GPU = the backend's own (tiny, yolov9-s, -e)");
    }

    /* the training plan and an inference pass's, reserved at once */
    m.ckpt = 0;
    yolo_model_precision_flags(&m, be, precision, 1, 0, "test_graph");
    m.train_pixels = yolo_loader_pixels(be) != 0;
    size_t act = yolo_plan_bytes(&m, B, H, W, 1, MAX_BOXES) + yolo_plan_bytes(&m, 1, W, W, 0, 0);
    yolo_plan_bytes(&m, B, H, W, 1, MAX_BOXES);   /* the training steps follow this placement */
    size_t plan = act + yolo_model_state_bytes(&m, YOLO_SGD) + YOLO_BACKEND_SCRATCH_BYTES;
    if (be->reserve(plan)) { fprintf(stderr, "test_graph: cannot reserve %.2f GB\n", plan / 1e9); return 1; }
    yolo_model_use_backend(&m, be);
    yolo_model_init_weights(&m, 3);
    yolo_real *w0 = yolo_fetch(&m, m.values, m.nvalues), *s0 = yolo_fetch(&m, m.stats, m.nstats);

    unsigned char *pixels[STEPS];
    size_t npix = (size_t)B * 3 * H * W;
    for (int s = 0; s < STEPS; s++) { pixels[s] = yolo_page_alloc(npix); be->pin(pixels[s], yolo_page_bytes(npix), 1); }

    run_result eager = train_steps(&m, w0, s0, H, W, pixels, 0, 0);
    check(m.graph_records == 0 && m.graph_replays == 0, "no graph while they are off");
    run_result graphed = train_steps(&m, w0, s0, H, W, pixels, 1, 0);
    printf("  training with graphs: %ld regions recorded, %ld replayed\n", m.graph_records, m.graph_replays);
    if (be->graph_begin) check(m.graph_records == 2 && m.graph_replays == 2 * (STEPS - 3), "the step's forward and backward recorded once, replayed after");
    check(same_run(&m, &eager, &graphed), "training: weights, EMA, statistics, losses: graphs = eager");
    long replays = m.graph_replays;
    run_result ckpt = train_steps(&m, w0, s0, H, W, pixels, 1, 1);
    if (be->graph_begin) check(m.graph_replays > replays, "--ckpt's regions replayed");
    check(same_run(&m, &eager, &ckpt), "training --ckpt with graphs = eager without --ckpt");
    result_free(&eager); result_free(&graphed); result_free(&ckpt);

    yolo_model_fuse(&m);
    if (!yolo_model_half(&m)) m.precision = yolo_precision_default(be, 0);
    yolo_real *picture = (yolo_real *)malloc((size_t)3 * W * W * sizeof(yolo_real));
    yolo_rng rng = { 5 };
    for (int i = 0; i < 3 * W * W; i++) picture[i] = (yolo_real)yolo_rng_uniform(&rng);
    size_t n0, n1;
    replays = m.graph_replays;
    yolo_real *a = infer_passes(&m, picture, 0, &n0);
    yolo_real *b = infer_passes(&m, picture, 1, &n1);
    printf("  inference (%s) with graphs: %ld regions replayed\n", yolo_precision_name(m.precision), m.graph_replays - replays);
    if (be->graph_begin) check(m.graph_replays - replays == 4, "inference at each size replayed from its third pass");
    check(n0 == n1 && !memcmp(a, b, n0 * sizeof(yolo_real)), "inference: the head's maps, graphs = eager");
    free(a); free(b); free(picture);

    for (int s = 0; s < STEPS; s++) { be->pin(pixels[s], yolo_page_bytes(npix), 0); free(pixels[s]); }
    free(w0); free(s0);
    yolo_model_free(&m);
    printf("test_graph: %s\n", failures ? "FAILED" : "all passed");
    return failures ? 1 : 0;
}
