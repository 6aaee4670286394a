/* test_plan: the memory plan is what a run holds.
   1. The arena: placements by hand (best fit, the tail last, merging), and
      random sequences of requests replayed on an arena of exactly the
      extent they reached unbounded: every request fits, at the same offset.
      A script: followed from the base while its ranges are free, best
      fit otherwise and after it. Offline placement of random lives never
      overlaps two buffers alive together.
   2. A backend that is the CPU one but also places every allocation in a
      yolo_arena, as the CUDA backend does, runs real training steps
      (forward, loss, backward, SGD, EMA) of the three tiny networks,
      without and with --ckpt, and with a validation pass between steps,
      in float32 and in bf16 (whose activations the device stores in two
      bytes a value: the counted backend counts them so, as the planner
      does, while the CPU twin computes in floats), and on batches of
      uint8 pixels (each step's copy of them held from its forward to the
      end of its backward), the last step on a smaller batch with fewer
      boxes;
      the arena's extent must equal yolo_plan_bytes +
      yolo_model_state_bytes exactly, with every planned placement
      followed, and two validation batches alone must hold exactly the
      inference plan. */
#define YOLOV9_IMPLEMENTATION
#include "../yolov9.h"

static int g_pass, g_fail;
static void expect(int ok, const char *what) {
    ok ? g_pass++ : g_fail++;
    printf("  %-66s %s\n", what, ok ? "ok" : "FAIL");
}

static yolo_arena g_arena;   /* where the counted backend's allocations would sit on the device */
static void *counted_alloc(size_t bytes) {
    size_t off = yolo_arena_alloc(&g_arena, bytes);
    size_t *p = (size_t *)yolo_xcalloc(1, yolo_arena_bytes(bytes) + 16);
    p[0] = off;
    return p + 2;
}
/* a tensor's values: counted as the device holds them, held as the CPU twin does */
static void *counted_alloc_values(size_t n, int store) {
    size_t off = yolo_arena_alloc(&g_arena, n * (store == YOLO_FP32 ? sizeof(yolo_real) : 2));
    size_t *p = (size_t *)yolo_xcalloc(1, yolo_arena_bytes(n * sizeof(yolo_real)) + 16);
    p[0] = off;
    return p + 2;
}
static void counted_place(const yolo_place *script, int n) { yolo_arena_follow(&g_arena, script, n); }
static void counted_release(void *q) {
    if (!q) return;
    size_t *p = (size_t *)q - 2;
    yolo_arena_release(&g_arena, p[0]);
    free(p);
}

/* The counted backend as if it staged a training step's weights, as the CUDA backend does
   (stage_train_weights), so that the plan is checked with that buffer of the step too; the twin's
   convs read w itself (the forms they would be handed are two-byte copies the CPU does not make) */
static const yolo_model *g_staging;   /* the model whose training step's forms the twin passes over */
static void staging_stage_train(const yolo_stage_conv *convs, int n, yolo_precision prec) {}
static void staging_conv2d_forward(const yolo_tensor *x, const yolo_real *w, const yolo_real *b, const void *ws, int C2,
                                   int k, int s, int g, int act, const yolo_tensor *r, yolo_precision prec, yolo_tensor *y) {
    if (g_staging && g_staging->wtrain) ws = NULL;
    yolo_cpu.conv2d_forward(x, w, b, ws, C2, k, s, g, act, r, prec, y);
}

static void arena_cases(void) {
    yolo_arena a;
    yolo_arena_init(&a, 4096);
    size_t x = yolo_arena_alloc(&a, 1000), y = yolo_arena_alloc(&a, 256), z = yolo_arena_alloc(&a, 512);
    expect(x == 0 && y == 1024 && z == 1280 && a.in_use == 1792, "arena: requests in order, rounded to 256");
    yolo_arena_release(&a, x);   /* a hole of 1024 at 0, the tail of 2304 at 1792 */
    expect(yolo_arena_alloc(&a, 200) == 0, "arena: a hole before the tail");
    yolo_arena_release(&a, 0);
    yolo_arena_release(&a, z);   /* holes 1024 at 0, the tail 2816 at 1280 */
    expect(yolo_arena_alloc(&a, 2000) == 1280, "arena: the tail when no hole holds it");
    expect(yolo_arena_release(&a, 1280) == 2048 && yolo_arena_release(&a, 1280) == 0, "arena: a range is given back once");
    yolo_arena_release(&a, y);
    expect(a.n == 1 && a.r[0].size == 4096 && a.in_use == 0 && a.extent == 3328, "arena: free neighbours merge; the extent stays");
    expect(yolo_arena_alloc(&a, 5000) == YOLO_ARENA_FULL, "arena: a request larger than the arena is refused");
    yolo_arena_free(&a);
    /* random sequences: unbounded, then replayed in exactly the extent */
    int bad = 0;
    for (int seq = 0; seq < 50; seq++) {
        enum { N = 600 };
        size_t req[N], off[N], off2;   /* req: bytes of an allocation, 0 for a release */
        int rel[N], live[N];           /* rel: the allocation a release gives back */
        yolo_rng rng = { (uint64_t)seq + 1 };
        yolo_arena u, b;
        yolo_arena_init(&u, YOLO_ARENA_FULL / 2);
        for (int i = 0; i < N; i++) {
            int j = -1;
            if (yolo_rng_uniform(&rng) < 0.45)   /* give back a live one, if there is one */
                for (int k = (int)(yolo_rng_uniform(&rng) * i); k < i && j < 0; k++) if (live[k]) j = k;
            live[i] = 0; rel[i] = j; req[i] = 0;
            if (j >= 0) { live[j] = 0; yolo_arena_release(&u, off[j]); continue; }
            req[i] = 1 + (size_t)(yolo_rng_uniform(&rng) * (yolo_rng_uniform(&rng) < 0.2 ? 1 << 20 : 1 << 12));
            off[i] = yolo_arena_alloc(&u, req[i]);
            live[i] = 1;
        }
        yolo_arena_init(&b, u.extent);
        for (int i = 0; i < N && !bad; i++) {
            if (rel[i] >= 0) { yolo_arena_release(&b, off[rel[i]]); continue; }
            off2 = yolo_arena_alloc(&b, req[i]);
            bad = off2 != off[i];
        }
        if (!bad) bad = b.extent != u.extent || b.peak != u.peak;
        yolo_arena_free(&b);
        yolo_arena_free(&u);
    }
    expect(!bad, "arena: 50 random sequences fit their extent, every offset the same");
    /* a script: offsets from the extent at the first one, followed while the range is free and big enough */
    yolo_arena_init(&a, 1 << 20);
    yolo_arena_alloc(&a, 1000);   /* [0, 1024): below the base */
    yolo_arena_release(&a, yolo_arena_alloc(&a, 5000));   /* given back before the first script: not below it */
    static const yolo_place script[4] = { { 4096, 512 }, { 0, 1024 }, { 4096, 256 }, { 8192, 256 } };
    yolo_arena_follow(&a, script, 4);
    size_t p0 = yolo_arena_alloc(&a, 300), p1 = yolo_arena_alloc(&a, 1024);
    expect(a.base == 1024 && p0 == 1024 + 4096 && p1 == 1024, "arena: script offsets count from the end of what is in use");
    size_t p2 = yolo_arena_alloc(&a, 256), p3 = yolo_arena_alloc(&a, 512);
    expect(p2 != 1024 + 4096 && p3 != 1024 + 8192 && a.missed == 2, "arena: a taken range or a larger request falls back to best fit");
    expect(p2 == 2048 && p3 == 2304, "arena: ... into the smallest hole that holds it");
    yolo_arena_follow(&a, script, 4);   /* the same script again: its first range is taken */
    expect(yolo_arena_alloc(&a, 300) == 2816 && a.missed == 3, "arena: a script starts over when given again");
    yolo_arena_follow(&a, NULL, 0);
    yolo_arena_release(&a, p3);
    expect(yolo_arena_alloc(&a, 512) == 2304 && a.missed == 3, "arena: without a script, best fit again");
    yolo_arena_free(&a);
    /* offline placement of random lives: no two buffers alive together overlap, and the extent is
       at least the most bytes alive at once */
    for (int by_life = 0, bad = 0; by_life < 2; by_life++, bad = 0) {
        for (int seq = 0; seq < 20 && !bad; seq++) {
            enum { N = 300 };
            yolo_plan_buf b[N];
            yolo_rng rng = { (uint64_t)seq + 99 };
            for (int i = 0; i < N; i++) {
                b[i].size = 256 * (1 + (size_t)(yolo_rng_uniform(&rng) * 64));
                b[i].t0 = (int)(yolo_rng_uniform(&rng) * 1000);
                b[i].t1 = b[i].t0 + 1 + (int)(yolo_rng_uniform(&rng) * 200);
                b[i].step = 0;
            }
            size_t extent = yolo_plan_offline(b, N, by_life), most = 0;
            for (int t = 0; t < 1200; t++) {
                size_t alive = 0;
                for (int i = 0; i < N; i++) if (b[i].t0 <= t && t < b[i].t1) alive += b[i].size;
                if (alive > most) most = alive;
            }
            for (int i = 0; i < N && !bad; i++) {
                bad = b[i].off + b[i].size > extent;
                for (int j = i + 1; j < N && !bad; j++)
                    bad = b[i].t0 < b[j].t1 && b[j].t0 < b[i].t1 && b[i].off < b[j].off + b[j].size && b[j].off < b[i].off + b[i].size;
            }
            if (!bad) bad = extent < most;
        }
        expect(!bad, by_life ? "offline placement, longest-lived first: 20 random sets, no overlap"
                             : "offline placement, largest first: 20 random sets, no overlap");
    }
}

/* one batch as yolo_validate runs it: folded weights, forward, decoding, multi-label NMS */
static void validation_pass(yolo_model *m, int B, int H, int W, const yolo_real *img) {
    yolo_det *dets[8];
    int counts[8];
    for (int n = 0; n < B; n++) dets[n] = (yolo_det *)malloc(300 * sizeof(yolo_det));
    yolo_model_fuse(m);
    yolo_set_input(m, B, H, W, img);
    yolo_forward(m, 0);
    yolo_predict(m, 0.001f, 0.7f, 300, 0, NULL, 0, 1, dets, counts);
    for (int n = 0; n < B; n++) free(dets[n]);
}

int main(int argc, char **argv) {
    const char *golden = argc > 1 ? argv[1] : "tests/golden";
    static const char *cases[] = { "tiny-gelan", "tiny-dual", "tiny-cb" };
    yolo_backend counted = yolo_cpu;
    counted.name = "cpu, counted";
    counted.alloc = counted_alloc;
    counted.alloc_values = counted_alloc_values;
    counted.release = counted_release;
    counted.place = counted_place;
    yolo_backend staging = counted;
    staging.name = "cpu, counted, staging";
    staging.stage_train_weights = staging_stage_train;
    staging.conv2d_forward = staging_conv2d_forward;
    printf("memory plan against what a run holds\n");
    arena_cases();
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
        unsigned char *bytes = (unsigned char *)malloc((size_t)B * 3 * H * W);
        for (int i = 0; i < B * 3 * H * W; i++) bytes[i] = (unsigned char)(yolo_rng_u64(&rng) >> 56);
        int ok = 0;
        /* without and with recompute checkpointing; validating between steps; bf16 (its validation stages the folded
           weights in two bytes; its steps stage theirs, as on the GPU, but with --ckpt); the batches as uint8 pixels */
        for (int run = 0; run < 7; run++) {
            int ckpt = run == 1 || run == 4, val = run == 2 || run == 5, bf16 = run >= 3 && run <= 5, pixels = run == 6;
            if (run) { yolo_model_free(&m); yolo_model_from_yaml(&m, path, 0, err); }
            m.ckpt = ckpt;
            const yolo_backend *be = bf16 ? &staging : &counted;
            yolo_model_precision_flags(&m, be, bf16 ? "bf16" : "fp32", 1, 0, "test_plan");
            g_staging = &m;
            m.train_pixels = pixels;
            size_t plan = val ? yolo_plan_run_bytes(&m, B, H, W, per_image, B, H, W) : yolo_plan_bytes(&m, B, H, W, 1, per_image);
            size_t state = yolo_model_state_bytes(&m, YOLO_SGD);
            if (!val && !bf16 && !pixels) plans[ckpt] = plan;
            yolo_arena_free(&g_arena); yolo_arena_init(&g_arena, YOLO_ARENA_FULL / 2);
            yolo_model_use_backend(&m, be);
            yolo_optim opt;
            yolo_ema ema;
            yolo_optim_init(&opt, &m, YOLO_SGD, 0.01, 0.937, 5e-4);
            yolo_ema_init(&ema, &m);
            size_t held_state = g_arena.extent;
            yolo_loss L;
            memset(&L, 0, sizeof L);
            for (int step = 0; step < 5; step++) {
                if (val && step == 2) validation_pass(&m, B, H, W, img);   /* as train does between epochs */
                int last = step == 4;   /* an epoch's last batch: smaller, fewer boxes */
                if (pixels) yolo_set_input_pixels(&m, last ? B - 1 : B, H, W, bytes);
                else yolo_set_input(&m, last ? B - 1 : B, H, W, img);
                yolo_forward(&m, 1);
                yolo_loss_compute(&m, &L, t, last ? nt / 2 : nt, 0);
                yolo_zero_grads(&m);
                yolo_backward(&m);
                yolo_optim_step(&opt, &m);
                yolo_ema_update(&ema, &m);
            }
            size_t held = g_arena.extent;
            ok = held_state == state && held == plan + state && g_arena.missed == 0;
            printf("  %-12s training%s%s: planned %zu + %zu bytes, held %zu + %zu, %ld missed  %s\n", cases[c],
                   bf16 ? " bf16, staged" : pixels ? " on pixels" : "", ckpt ? ", --ckpt" : val ? ", validating" : "", plan, state, held - held_state, held_state, g_arena.missed,
                   ok ? "ok" : "FAIL");
            ok ? g_pass++ : g_fail++;
            yolo_loss_free(&L);
            yolo_optim_free(&opt);
            yolo_ema_free(&ema);
        }
        ok = plans[1] < plans[0];
        printf("  %-12s --ckpt plans %.0f%% of the activations  %s\n", cases[c], 100.0 * plans[1] / plans[0], ok ? "ok" : "FAIL");
        ok ? g_pass++ : g_fail++;
        yolo_model_free(&m);
        /* a validation pass on a fresh model, as yolo_validate runs it (folded
           weights, forward, decoding, multi-label NMS): exactly the plan; in
           float32 and with --half (the folded weights staged once, in two bytes) */
        for (int half = 0; half < 2; half++) {
            yolo_model_from_yaml(&m, path, 0, err);
            m.precision = half ? YOLO_FP16 : YOLO_FP32;
            if (half) plan_eval = yolo_plan_bytes(&m, B, H, W, 0, 0);
            yolo_arena_free(&g_arena); yolo_arena_init(&g_arena, YOLO_ARENA_FULL / 2);
            yolo_model_use_backend(&m, &counted);
            size_t base = g_arena.extent;
            validation_pass(&m, B, H, W, img);
            validation_pass(&m, B, H, W, img);   /* the next batch finds what the last one left */
            ok = g_arena.extent - base == plan_eval;
            printf("  %-12s eval%s, two batches: planned %zu bytes, held %zu  %s\n", cases[c], half ? " --half" : "", plan_eval,
                   g_arena.extent - base, ok ? "ok" : "FAIL");
            ok ? g_pass++ : g_fail++;
            yolo_model_free(&m);
        }
        free(img); free(bytes); free(t);
    }
    yolo_arena_free(&g_arena);
    printf("%d passed, %d failed\n", g_pass, g_fail);
    return g_fail ? 1 : 0;
}
