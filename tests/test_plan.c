/* test_plan: the memory plan is what a run holds. A backend that is the
   CPU one but counts every allocation runs real training steps (forward,
   loss, backward, SGD, EMA) of the three tiny networks; its peak must equal
   yolo_plan_bytes + yolo_model_state_bytes exactly, and an eval pass must
   stay within its own plan. */
#define YOLOV9_IMPLEMENTATION
#include "../yolov9.h"

static size_t g_in_use, g_peak;
static void *counted_alloc(size_t bytes) {
    size_t need = (bytes + 255) / 256 * 256;   /* the rounding the planner and the CUDA arena use */
    if (!need) need = 256;
    size_t *p = (size_t *)yolo_xcalloc(1, need + 16);
    p[0] = need;
    g_in_use += need;
    if (g_in_use > g_peak) g_peak = g_in_use;
    return p + 2;
}
static void counted_release(void *q) {
    if (!q) return;
    size_t *p = (size_t *)q - 2;
    g_in_use -= p[0];
    free(p);
}

int main(int argc, char **argv) {
    const char *golden = argc > 1 ? argv[1] : "tests/golden";
    static const char *cases[] = { "tiny-gelan", "tiny-dual", "tiny-cb" };
    yolo_backend counted = yolo_cpu;
    counted.name = "cpu, counted";
    counted.alloc = counted_alloc;
    counted.release = counted_release;
    int pass = 0, fail = 0;
    printf("memory plan against what a run holds\n");
    for (int c = 0; c < 3; c++) {
        char path[512], err[YOLO_ERR];
        yolo_model m;
        snprintf(path, sizeof path, "%s/%s/model.yaml", golden, cases[c]);
        if (yolo_model_from_yaml(&m, path, 0, err)) { printf("%s\n", err); return 1; }
        int B = 3, H = 64, W = 96, per_image = 4, nt = B * per_image;
        size_t plan_eval = yolo_plan_bytes(&m, B, H, W, 0, 0), plans[2] = { 0, 0 };
        yolo_rng rng = { 5 };
        yolo_real *img = (yolo_real *)malloc((size_t)B * 3 * H * W * sizeof(yolo_real)), *t = (yolo_real *)malloc((size_t)nt * 6 * sizeof(yolo_real));
        for (int i = 0; i < B * 3 * H * W; i++) img[i] = (yolo_real)yolo_rng_uniform(&rng);
        for (int i = 0; i < nt; i++) {
            t[6 * i] = (yolo_real)(i % B); t[6 * i + 1] = 0;
            t[6 * i + 2] = t[6 * i + 3] = (yolo_real)(0.3 + 0.4 * yolo_rng_uniform(&rng));
            t[6 * i + 4] = t[6 * i + 5] = (yolo_real)(0.1 + 0.3 * yolo_rng_uniform(&rng));
        }
        int ok = 0;
        for (int ckpt = 0; ckpt < 2; ckpt++) {   /* without and with recompute checkpointing */
            if (ckpt) { yolo_model_free(&m); yolo_model_from_yaml(&m, path, 0, err); }
            m.ckpt = ckpt;
            size_t plan = yolo_plan_bytes(&m, B, H, W, 1, per_image), state = yolo_model_state_bytes(&m, YOLO_SGD);
            plans[ckpt] = plan;
            g_in_use = g_peak = 0;
            yolo_model_use_backend(&m, &counted);
            yolo_optim opt;
            yolo_ema ema;
            yolo_optim_init(&opt, &m, YOLO_SGD, 0.01, 0.937, 5e-4);
            yolo_ema_init(&ema, &m);
            size_t held_state = g_in_use;
            yolo_loss L;
            memset(&L, 0, sizeof L);
            for (int step = 0; step < 3; step++) {
                yolo_set_input(&m, B, H, W, img);
                yolo_forward(&m, 1);
                yolo_loss_compute(&m, &L, t, nt, 0);
                yolo_zero_grads(&m);
                yolo_backward(&m);
                yolo_optim_step(&opt, &m);
                yolo_ema_update(&ema, &m);
            }
            size_t held = g_peak;
            ok = held_state == state && held == plan + state;
            printf("  %-12s training%s: planned %zu + %zu bytes, held %zu + %zu  %s\n", cases[c], ckpt ? ", --ckpt" : "",
                   plan, state, held - held_state, held_state, ok ? "ok" : "FAIL");
            ok ? pass++ : fail++;
            yolo_loss_free(&L);
            yolo_optim_free(&opt);
            yolo_ema_free(&ema);
        }
        ok = plans[1] < plans[0];
        printf("  %-12s --ckpt plans %.0f%% of the activations  %s\n", cases[c], 100.0 * plans[1] / plans[0], ok ? "ok" : "FAIL");
        ok ? pass++ : fail++;
        yolo_model_free(&m);
        /* eval on a fresh model: what the plan says, at most */
        yolo_model_from_yaml(&m, path, 0, err);
        g_in_use = g_peak = 0;
        yolo_model_use_backend(&m, &counted);
        size_t base = g_in_use;
        yolo_set_input(&m, B, H, W, img);
        yolo_forward(&m, 0);
        ok = g_peak - base <= plan_eval;
        printf("  %-12s eval: planned %zu bytes, held %zu  %s\n", cases[c], plan_eval, g_peak - base, ok ? "ok" : "FAIL");
        ok ? pass++ : fail++;
        yolo_model_free(&m);
        free(img); free(t);
    }
    printf("%d passed, %d failed\n", pass, fail);
    return fail ? 1 : 0;
}
