/* test_dp: data-parallel training (yolov9.h section 16) takes exactly the
   steps of one process that runs every process's share of each batch in
   turn and sums their gradients, as the official DDP (each process's loss
   times the world size, the gradients averaged: their sum).

     mpirun -np 2 tests/test_dp [--after] [--sync-bn] OUT
                                        two processes, each its share; process 0
                                        writes its weights and EMA to OUT, process
                                        r > 0 to OUT.r (they must be the same).
                                        The sums overlap the backward, or with
                                        --after start after it; --sync-bn: every
                                        BatchNorm over both shares
     tests/test_dp --reference 2 OUT    one process, the two shares in turn (and
                                        the checks below)
     tests/test_dp --whole 2 OUT        one process, the two shares as one batch,
                                        each share's loss on its own: --sync-bn's
                                        reference
     tests/test_dp --compare A B [TOL]  equal to TOL (1e-6), else exit 1

   DEVICE=cuda in the environment runs the first three on the GPU (the sum
   then goes through NCCL; tests/gpu_check.sh runs them with one process
   and asks for equality to the last bit, TOL 0).

   The tiny network of tests/golden/tiny-gelan trains on the 8 bundled
   pictures (mosaics, batch 4: 2 a process), 4 optimizer steps of SGD with
   clipping and the EMA, accumulating 1, 2, 1, 2 batches (the train
   program's accumulation: the sums start in the backward of a step's last
   batch only). The gradient is cut into buckets of 16 KB (about a dozen),
   so that several sums run during the backward. The reference keeps each
   share's gradient apart, adding its batches up as its process does, and
   adds the shares up at the step as MPI does for two: the runs then agree
   to the last bit, where a sum in another order drifts by 1e-7 a step,
   which the assigner's choices soon amplify. In the reference the BatchNorm
   running statistics are those of the first share alone (DDP's are process
   0's): the second share's forward runs on a copy of them that is put back
   after; process 1's copy of everything (weights, EMA, running statistics)
   must be process 0's.

   --whole runs both shares as one batch of 4 through the network: each
   BatchNorm normalises by the statistics of the 4 pictures, which is what
   --sync-bn computes over two processes; the loss is each share's own
   (its images' slice of the head's maps, normalised by its own target
   scores, as in each process), so the gradient is the one the processes
   sum. The sums run in another order: equal to a float tolerance (1e-5 in
   test_dp.sh) after SYNC_STEPS steps. In one process (mpirun -np 1)
   --sync-bn sums over that one alone: equal to --reference 1 to the bit.

   --reference also checks the shards against torch's DistributedSampler:
   the epoch's order padded with its head to a multiple of the world size,
   process r taking places r, r + world, ...; and that the backward tells
   a layer's gradients final (m->grads_final, where the sums start) only
   when no later op changes them: each layer's gradients when told equal
   the gradients after the backward, with --ckpt and with frozen layers.
   That check is the one that sees a sum started too early: on the CPU
   MPI reads a bucket only when a later MPI call moves its sum on, so the
   overlapped run still equals --after when the backward tells layer i - 1
   final as soon as layer i is done (tried: equal to the bit, while this
   check finds 752216 of 755560 values changed after they were told). */
#define YOLOV9_IMPLEMENTATION
#include "../yolov9.h"

#define CFG "tests/golden/tiny-gelan/model.yaml"
#define DATA "tests/data/coco8/coco8.yaml"
#define SHARE 2      /* pictures a process takes from each batch */
#define STEPS 4
/* --sync-bn against --whole: 2 steps (1 batch, then 2), as rounding apart
   grows with every step the assigner's choices amplify (measured: 1.5e-8
   after the first step, 7.2e-7 after the second, 1.8e-4 after the third,
   8e-3 after the fourth; each process normalising by its own share instead
   is 0.034 apart after the first) */
#define SYNC_STEPS 2
#define SIZE 64
#define BUCKET_BYTES (16 << 10)

static void die(const char *msg) { fprintf(stderr, "test_dp: %s\n", msg); exit(1); }

/* batches optimizer step k accumulates */
static int accumulate(int k) { return 1 + k % 2; }

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

/* The loaders of the shares, each restarted at the start of its epoch: micro-batch mb of the run */
static yolo_batch *next_batch(setup *s, yolo_loader *ld, long mb) {
    if (mb % ld->nbatch == 0) { yolo_loader_stop(ld); yolo_loader_start(ld, (int)(mb / ld->nbatch), 0); }
    yolo_batch *bt = yolo_loader_next(ld);
    if (!bt) die(yolo_loader_error(ld) ? yolo_loader_error(ld) : "the loader ran out of batches");
    return bt;
}

/* one share's forward and loss (its gradient added to m->grads by the backward that follows) */
static void forward_share(setup *s, yolo_loader *ld, long mb) {
    yolo_batch *bt = next_batch(s, ld, mb);
    yolo_set_input_batch(&s->m, bt, 0, bt->B);
    yolo_forward(&s->m, 1);
    yolo_loss_compute(&s->m, &s->L, bt->targets, bt->nt, 0);
}

/* clipped at norm 10, SGD, EMA, as train.c's step */
static void step(setup *s) {
    double norm;
    s->opt.grad_scale = yolo_grad_clip_scale(&s->m, 1, 10.0, &norm);
    yolo_optim_step(&s->opt, &s->m);
    yolo_ema_update(&s->ema, &s->m);
    yolo_zero_grads(&s->m);
}

/* the result: steps taken, values, weights and EMA */
static void save(const setup *s, int steps, const char *path) {
    FILE *f = fopen(path, "wb");
    if (!f) die("cannot write the result");
    yolo_real *w = yolo_fetch(&s->m, s->m.values, s->m.nvalues), *e = yolo_fetch(&s->m, s->ema.values, s->m.nvalues);
    fwrite(&steps, sizeof steps, 1, f);
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

/* --- the backward's word that a layer's gradients are final ---
   A copy of each layer's gradients when the backward tells them final;
   told out of order (not the last layer first), they count as wrong. */
typedef struct { yolo_real *copy; int last, disorder; } told;

static void keep_told(void *ctx, yolo_model *m, int layer) {
    told *t = (told *)ctx;
    const yolo_layer *L = &m->layers[layer];
    if (layer >= t->last) t->disorder++;
    t->last = layer;
    if (L->param1 == L->param0) return;
    size_t lo = m->params[L->param0].offset, hi = m->params[L->param1 - 1].offset + m->params[L->param1 - 1].numel;
    m->be->copy(t->copy + lo, m->grads + lo, (hi - lo) * sizeof(yolo_real));
}

/* one training batch's backward with m->grads_final listening: what it was told equals the gradients after
   it, to the bit (every value told: the copy starts as NaN) */
static int check_told(const yolo_backend *be, int ckpt, int freeze) {
    setup s;
    open_setup(&s, be);
    s.m.ckpt = ckpt;
    if (freeze) yolo_model_freeze(&s.m, &freeze, 1);
    yolo_loader ld;
    yolo_loader_init(&ld, &s.ds, &s.hyp, 2 * SHARE, SIZE, YOLO_LOADER_TRAIN, 0);
    size_t n = s.m.nvalues, bytes = n * sizeof(yolo_real);
    yolo_real *nan = (yolo_real *)yolo_xmalloc(bytes);
    for (size_t i = 0; i < n; i++) nan[i] = NAN;
    told t = { (yolo_real *)be->alloc(bytes), s.m.nlayers, 0 };
    be->upload(t.copy, nan, bytes);
    forward_share(&s, &ld, 0);
    s.m.grads_final = keep_told;
    s.m.grads_final_ctx = &t;
    yolo_backward(&s.m);
    yolo_real *when = yolo_fetch(&s.m, t.copy, n), *after = yolo_fetch(&s.m, s.m.grads, n);
    size_t differ = 0, frozen = 0;
    for (size_t i = 0; i < n; i++) differ += memcmp(&when[i], &after[i], sizeof(yolo_real)) != 0;
    for (int k = 0; k < s.m.nparams; k++)
        for (size_t i = 0; s.m.params[k].frozen && i < s.m.params[k].numel; i++) frozen += after[s.m.params[k].offset + i] != 0;
    int bad = differ || t.disorder || t.last != 0 || frozen;
    printf("  %s  the backward tells each layer's gradients final, the last layer first, when they are (ckpt %d, "
           "%d layers frozen): %zu of %zu values differ after, %d out of order, %zu frozen ones not zero\n",
           bad ? "FAIL" : "ok  ", ckpt, freeze, differ, n, t.disorder, frozen);
    free(nan); free(when); free(after);
    be->release(t.copy);
    yolo_loader_free(&ld);
    return bad;
}

/* the buckets tile the gradient from the top down, several of them: 0 when they do */
static int check_buckets(const yolo_dp *dp, const yolo_model *m) {
    int bad = dp->nbuckets < 2 || dp->buckets[0].hi != m->nvalues || dp->buckets[dp->nbuckets - 1].lo != 0;
    for (int k = 0; k < dp->nbuckets; k++) {
        const yolo_dp_bucket *b = &dp->buckets[k];
        if (b->lo >= b->hi || (k && (b->hi != dp->buckets[k - 1].lo || b->layer >= dp->buckets[k - 1].layer))) bad = 1;
        const yolo_layer *L = &m->layers[b->layer];
        if (L->param1 > L->param0 && m->params[L->param0].offset != b->lo) bad = 1;   /* cut where its layer starts */
    }
    printf("  %s  %d buckets tile the gradient's %zu values from the top down, cut at layers\n", bad ? "FAIL" : "ok  ",
           dp->nbuckets, m->nvalues);
    return bad;
}

static int compare(const char *a, const char *b, double tol) {
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    size_t na = 0, nb = 0;
    int sa = 0, sb = 0;
    if (!fa || !fb || fread(&sa, sizeof sa, 1, fa) != 1 || fread(&sb, sizeof sb, 1, fb) != 1 || sa != sb ||
        fread(&na, sizeof na, 1, fa) != 1 || fread(&nb, sizeof nb, 1, fb) != 1 || na != nb || !na) die("unreadable results, or of different runs");
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
           ok ? "ok  " : "FAIL", a, b, worst[0], worst[1], tol, sa, moved);
    fclose(fa); fclose(fb);
    return !ok;
}

/* one process, the shares in turn, each share's gradient kept apart (acc[r]) and its batches added up in
   it as its process does; at each step the shares' gradients added up in rank order */
static void reference(setup *s, const yolo_backend *be, int world, int steps) {
    yolo_loader ld[8];
    size_t n = s->m.nvalues, bytes = n * sizeof(yolo_real);
    yolo_real *first = (yolo_real *)be->alloc(bytes), *acc[8];   /* the values after the first share's forward */
    for (int r = 0; r < world; r++) {
        yolo_loader_init(&ld[r], &s->ds, &s->hyp, SHARE, SIZE, YOLO_LOADER_TRAIN, 0);
        yolo_loader_shard(&ld[r], r, world);
        acc[r] = (yolo_real *)be->alloc(bytes);
    }
    for (long k = 0, mb = 0; k < steps; k++) {
        for (int j = 0; j < accumulate((int)k); j++, mb++) {
            for (int r = 0; r < world; r++) {
                be->copy(s->m.grads, acc[r], bytes);
                forward_share(s, &ld[r], mb);
                yolo_backward(&s->m);
                be->copy(acc[r], s->m.grads, bytes);
                if (r == 0) be->copy(first, s->m.values, bytes);
            }
            be->copy(s->m.values, first, bytes);   /* the running statistics of the first share alone (nothing else moved) */
        }
        be->copy(s->m.grads, acc[0], bytes);
        for (int r = 1; r < world; r++) be->accumulate(s->m.grads, acc[r], n, 1);
        for (int r = 0; r < world; r++) be->zero(acc[r], bytes);
        step(s);
    }
}

/* one process, the shares as one batch (BatchNorm over all of it), each share's loss on its own slice of the
   head's maps: --sync-bn's reference */
static void whole(setup *s, int world, int steps) {
    yolo_loader ld[8];
    for (int r = 0; r < world; r++) {
        yolo_loader_init(&ld[r], &s->ds, &s->hyp, SHARE, SIZE, YOLO_LOADER_TRAIN, 0);
        yolo_loader_shard(&ld[r], r, world);
    }
    yolo_detect *d = s->m.layers[s->m.detect].det;
    for (long k = 0, mb = 0; k < steps; k++) {
        for (int j = 0; j < accumulate((int)k); j++, mb++) {
            yolo_batch *bt[8] = { 0 };
            for (int r = 0; r < world; r++) bt[r] = next_batch(s, &ld[r], mb);
            size_t per = (size_t)3 * bt[0]->H * bt[0]->W;
            yolo_real *images = (yolo_real *)yolo_xmalloc(world * SHARE * per * sizeof(yolo_real));
            for (int r = 0; r < world; r++) memcpy(images + r * SHARE * per, yolo_batch_images(bt[r]), SHARE * per * sizeof(yolo_real));
            yolo_set_input(&s->m, world * SHARE, bt[0]->H, bt[0]->W, images);
            yolo_forward(&s->m, 1);
            for (int r = 0; r < world; r++) {   /* share r's loss: images [r SHARE, (r + 1) SHARE) of the maps */
                yolo_tensor whole_maps[2][3];
                for (int b = 0; b < d->nbranch; b++)
                    for (int l = 0; l < 3; l++) {
                        yolo_tensor *t = &d->out[b][l];
                        size_t off = (size_t)r * SHARE * t->c * t->h * t->w;
                        if (t->wants_grad) yolo_grad_need(&s->m, t);
                        whole_maps[b][l] = *t;
                        t->n = SHARE; t->data += off; t->grad += off;
                    }
                yolo_loss_compute(&s->m, &s->L, bt[r]->targets, bt[r]->nt, 0);
                for (int b = 0; b < d->nbranch; b++)
                    for (int l = 0; l < 3; l++) {
                        d->out[b][l] = whole_maps[b][l];
                        d->out[b][l].grad_fresh = 0;   /* the shares' losses write all of the gradient */
                    }
            }
            yolo_backward(&s->m);
            free(images);
        }
        step(s);
    }
}

int main(int argc, char **argv) {
    char err[YOLO_ERR] = "";
    if ((argc == 4 || argc == 5) && !strcmp(argv[1], "--compare")) return compare(argv[2], argv[3], argc == 5 ? atof(argv[4]) : 1e-6);
    yolo_dp dp;   /* (world 1 in the references: not under mpirun) */
    if (yolo_dp_start(&dp, err)) die(err);
    dp.bucket_bytes = BUCKET_BYTES;
    const char *device = getenv("DEVICE") ? getenv("DEVICE") : "cpu";
    char gpu[16];   /* several processes on the GPU: each its own */
    snprintf(gpu, sizeof gpu, "%d", dp.local_rank);
    const yolo_backend *be = yolo_backend_select(dp.world > 1 && !strcmp(device, "cuda") ? gpu : device, err);
    if (!be || yolo_dp_join(&dp, be, err)) die(err);
    setup s;
    open_setup(&s, be);
    if (argc == 4 && (!strcmp(argv[1], "--reference") || !strcmp(argv[1], "--whole"))) {
        int world = atoi(argv[2]), fail = 0;
        if (world < 1 || world > 8) die("--reference and --whole take a world size of 1 to 8");
        int steps = !strcmp(argv[1], "--whole") ? SYNC_STEPS : STEPS;
        if (!strcmp(argv[1], "--whole")) whole(&s, world, steps);
        else {
            fail = check_shards(&s) + check_told(be, 0, 0) + check_told(be, 1, 0) + check_told(be, 0, 2);
            reference(&s, be, world, steps);
        }
        save(&s, steps, argv[3]);
        return fail;
    }
    int after = 0, sync_bn = 0, a = 1;
    for (; a < argc - 1; a++) {
        if (!strcmp(argv[a], "--after")) after = 1;
        else if (!strcmp(argv[a], "--sync-bn")) sync_bn = 1;
        else break;
    }
    if (a != argc - 1)
        die("usage: mpirun -np 2 tests/test_dp [--after] [--sync-bn] OUT | tests/test_dp --reference 2 OUT | "
            "tests/test_dp --whole 2 OUT | tests/test_dp --compare A B [TOL]");
    int steps = sync_bn && dp.world > 1 ? SYNC_STEPS : STEPS;
    if (sync_bn) yolo_dp_sync_bn(&dp, &s.m);
    yolo_loader ld;
    yolo_loader_init(&ld, &s.ds, &s.hyp, SHARE, SIZE, YOLO_LOADER_TRAIN, 0);
    yolo_loader_shard(&ld, dp.rank, dp.world);
    for (long k = 0, mb = 0; k < steps; k++) {
        for (int j = 0; j < accumulate((int)k); j++, mb++) {
            forward_share(&s, &ld, mb);
            if (j == accumulate((int)k) - 1 && !after) yolo_dp_overlap(&dp, &s.m);   /* the step's last batch */
            yolo_backward(&s.m);
        }
        yolo_dp_sum_grads(&dp, &s.m);
        step(&s);
    }
    char path[1024];
    snprintf(path, sizeof path, dp.rank ? "%s.%d" : "%s", argv[a], dp.rank);
    save(&s, steps, path);
    int fail = dp.rank == 0 ? check_buckets(&dp, &s.m) : 0;
    yolo_dp_end(&dp);
    return fail;
}
