/* test_dp: data-parallel training (yolov9.h section 16) takes exactly the
   steps of one process that runs every process's share of each batch in
   turn and sums their gradients, as the official DDP (each process's loss
   times the world size, the gradients averaged: their sum).

     mpirun -np 2 tests/test_dp OUT         two processes, each its share; process 0
                                            writes its weights and EMA to OUT, process
                                            r > 0 to OUT.r (they must be the same)
     tests/test_dp --reference 2 OUT        one process, the two shares in turn
     tests/test_dp --compare A B [TOL]      equal to TOL (1e-6), else exit 1

   DEVICE=cuda in the environment runs the first two on the GPU (the sum
   then goes through NCCL; tests/gpu_check.sh runs them with one process
   and asks for equality to the last bit, TOL 0).

   The tiny network of tests/golden/tiny-gelan trains on the 8 bundled
   pictures (mosaics, batch 4: 2 a process), 4 optimizer steps of SGD with
   clipping and the EMA. The reference adds the shares' gradients up as
   MPI does for two (each share's whole, then their sum): the two runs
   then agree to the last bit, where a sum in another order drifts by
   1e-7 a step, which the assigner's choices soon amplify. In the reference the BatchNorm running statistics
   are those of the first share alone (DDP's are process 0's): the second
   share's forward runs on a copy of them that is put back after; process
   1's copy of everything (weights, EMA, running statistics) must be
   process 0's.

   --reference also checks the shards against torch's DistributedSampler:
   the epoch's order padded with its head to a multiple of the world size,
   process r taking places r, r + world, ... */
#define YOLOV9_IMPLEMENTATION
#include "../yolov9.h"

#define CFG "tests/golden/tiny-gelan/model.yaml"
#define DATA "tests/data/coco8/coco8.yaml"
#define SHARE 2      /* pictures a process takes from each batch */
#define STEPS 4
#define SIZE 64

static void die(const char *msg) { fprintf(stderr, "test_dp: %s\n", msg); exit(1); }

typedef struct { yolo_data_cfg dc; yolo_dataset ds; yolo_hyp hyp; yolo_model m; yolo_optim opt; yolo_ema ema; yolo_loss L; } setup;

static void open_setup(setup *s, const yolo_backend *be) {
    char err[YOLO_ERR];
    memset(s, 0, sizeof *s);
    yolo_hyp_default(&s->hyp);
    if (yolo_data_read(&s->dc, DATA, err) || yolo_dataset_open(&s->ds, s->dc.root, s->dc.train, s->dc.nc, 0, err) ||
        yolo_model_for_weights(&s->m, CFG, NULL, s->dc.nc, 0, err)) die(err);
    yolo_model_init_weights(&s->m, 7);
    yolo_model_use_backend(&s->m, be);
    yolo_optim_init(&s->opt, &s->m, YOLO_SGD, 0.01, 0.937, 5e-4);
    yolo_ema_init(&s->ema, &s->m);
}

/* one share's forward, loss and backward (its gradient added to m->grads) */
static void run_share(setup *s, yolo_loader *ld) {
    yolo_batch *bt = yolo_loader_next(ld);
    if (!bt) die(yolo_loader_error(ld) ? yolo_loader_error(ld) : "the loader ran out of batches");
    yolo_set_input_batch(&s->m, bt);
    yolo_forward(&s->m, 1);
    yolo_loss_compute(&s->m, &s->L, bt->targets, bt->nt, 0);
    yolo_backward(&s->m);
}

/* clipped at norm 10, SGD, EMA, as train.c's step */
static void step(setup *s) {
    double norm;
    s->opt.grad_scale = yolo_grad_clip_scale(&s->m, 10.0, &norm);
    yolo_optim_step(&s->opt, &s->m);
    yolo_ema_update(&s->ema, &s->m);
    yolo_zero_grads(&s->m);
}

static void save(const setup *s, const char *path) {
    FILE *f = fopen(path, "wb");
    if (!f) die("cannot write the result");
    yolo_real *w = yolo_fetch(&s->m, s->m.values, s->m.nvalues), *e = yolo_fetch(&s->m, s->ema.values, s->m.nvalues);
    fwrite(&s->m.nvalues, sizeof s->m.nvalues, 1, f);
    fwrite(w, sizeof(yolo_real), s->m.nvalues, f);
    fwrite(e, sizeof(yolo_real), s->m.nvalues, f);
    fclose(f);
    free(w); free(e);
}

/* the shards of an epoch against DistributedSampler's: 0 when they agree */
static int check_shards(const setup *s) {
    int bad = 0, n = s->ds.n;
    for (int world = 2; world <= 3; world++) {
        int per = (n + world - 1) / world, *padded = (int *)yolo_xmalloc((size_t)per * world * sizeof(int));
        for (int rank = 0; rank < world; rank++) {
            yolo_loader ld;
            yolo_loader_init(&ld, &s->ds, &s->hyp, SHARE, SIZE, YOLO_LOADER_TRAIN, 0);
            yolo_loader_shard(&ld, rank, world);
            yolo_loader_start(&ld, 1, 5);
            for (int i = 0; i < per * world; i++) padded[i] = ld.order[i < n ? i : i - n];   /* indices += indices[:pad] */
            int got = 0;
            for (yolo_batch *bt; (bt = yolo_loader_next(&ld));)
                for (int j = 0; j < bt->B; j++, got++)
                    if (bt->ids[j] != padded[rank + got * world]) bad++;
            if (got != per) bad++;
            yolo_loader_free(&ld);
        }
        free(padded);
        printf("  %s  %d processes: each takes places rank, rank + %d, ... of the padded order (%d pictures each)\n",
               bad ? "FAIL" : "ok  ", world, world, per);
    }
    return bad;
}

static int compare(const char *a, const char *b, double tol) {
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    size_t na = 0, nb = 0;
    if (!fa || !fb || fread(&na, sizeof na, 1, fa) != 1 || fread(&nb, sizeof nb, 1, fb) != 1 || na != nb || !na) die("unreadable results");
    yolo_real *x = (yolo_real *)yolo_xmalloc(2 * na * sizeof(yolo_real)), *y = (yolo_real *)yolo_xmalloc(2 * na * sizeof(yolo_real));
    if (fread(x, sizeof(yolo_real), 2 * na, fa) != 2 * na || fread(y, sizeof(yolo_real), 2 * na, fb) != 2 * na) die("short results");
    double worst[2] = { 0, 0 }, moved = 0;
    setup s;
    open_setup(&s, &yolo_cpu);   /* the initial weights: the steps must have moved them */
    for (size_t i = 0; i < 2 * na; i++) {
        double d = fabs((double)x[i] - y[i]) / fmax(1, fabs((double)y[i]));
        if (!(d <= worst[i >= na])) worst[i >= na] = isnan(d) ? INFINITY : d;
        if (i < na) moved = fmax(moved, fabs((double)y[i] - s.m.values[i]));
    }
    int ok = worst[0] <= tol && worst[1] <= tol && moved > 1e-4;
    printf("  %s  %s and %s: weights %.2g, EMA %.2g apart (tolerance %g) after %d steps that moved the weights by up to %.3g\n",
           ok ? "ok  " : "FAIL", a, b, worst[0], worst[1], tol, STEPS, moved);
    fclose(fa); fclose(fb);
    return !ok;
}

int main(int argc, char **argv) {
    char err[YOLO_ERR] = "";
    if ((argc == 4 || argc == 5) && !strcmp(argv[1], "--compare")) return compare(argv[2], argv[3], argc == 5 ? atof(argv[4]) : 1e-6);
    yolo_dp dp;   /* (world 1 in the reference: not under mpirun) */
    if (yolo_dp_start(&dp, err)) die(err);
    const char *device = getenv("DEVICE") ? getenv("DEVICE") : "cpu";
    char gpu[16];   /* several processes on the GPU: each its own */
    snprintf(gpu, sizeof gpu, "%d", dp.local_rank);
    const yolo_backend *be = yolo_backend_select(dp.world > 1 && !strcmp(device, "cuda") ? gpu : device, err);
    if (!be || yolo_dp_join(&dp, be, err)) die(err);
    setup s;
    open_setup(&s, be);
    if (argc == 4 && !strcmp(argv[1], "--reference")) {
        int world = atoi(argv[2]), fail = check_shards(&s);
        if (world < 1 || world > 8) die("--reference takes a world size of 1 to 8");
        yolo_loader ld[8];
        size_t n = s.m.nvalues, bytes = n * sizeof(yolo_real);
        yolo_real *first = (yolo_real *)be->alloc(bytes);   /* the values after the first share's forward */
        yolo_real *sum = (yolo_real *)be->alloc(bytes);     /* the shares' gradients, added in rank order */
        for (int r = 0; r < world; r++) {
            yolo_loader_init(&ld[r], &s.ds, &s.hyp, SHARE, SIZE, YOLO_LOADER_TRAIN, 0);
            yolo_loader_shard(&ld[r], r, world);
        }
        for (int k = 0; k < STEPS; k++) {
            if (k % ld[0].nbatch == 0)
                for (int r = 0; r < world; r++) { yolo_loader_stop(&ld[r]); yolo_loader_start(&ld[r], k / ld[0].nbatch, 0); }
            for (int r = 0; r < world; r++) {
                yolo_zero_grads(&s.m);
                run_share(&s, &ld[r]);
                if (r == 0) { be->copy(first, s.m.values, bytes); be->copy(sum, s.m.grads, bytes); }
                else be->accumulate(sum, s.m.grads, n);
            }
            be->copy(s.m.values, first, bytes);   /* the running statistics of the first share alone (nothing else moved) */
            be->copy(s.m.grads, sum, bytes);
            step(&s);
        }
        save(&s, argv[3]);
        return fail;
    }
    if (argc != 2) die("usage: mpirun -np 2 tests/test_dp OUT | tests/test_dp --reference 2 OUT | tests/test_dp --compare A B");
    yolo_loader ld;
    yolo_loader_init(&ld, &s.ds, &s.hyp, SHARE, SIZE, YOLO_LOADER_TRAIN, 0);
    yolo_loader_shard(&ld, dp.rank, dp.world);
    for (int k = 0; k < STEPS; k++) {
        if (k % ld.nbatch == 0) { yolo_loader_stop(&ld); yolo_loader_start(&ld, k / ld.nbatch, 0); }
        run_share(&s, &ld);
        yolo_dp_sum_grads(&dp, &s.m);
        step(&s);
    }
    char path[1024];
    snprintf(path, sizeof path, dp.rank ? "%s.%d" : "%s", argv[1], dp.rank);
    save(&s, path);
    yolo_dp_end(&dp);
    return 0;
}
