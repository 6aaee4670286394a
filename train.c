/* train: YOLOv9 / GELAN training on a YOLO-format dataset, the recipe of
   the official train_dual.py on one GPU (or the CPU).

     ./train --cfg yolov9-s --data coco128.yaml --batch 16 --epochs 100
     ./train --resume [runs/train/exp/weights/last.safetensors]

   Flags: --cfg NAME|FILE.yaml  --weights FILE  --data FILE.yaml  --hyp FILE.yaml
          --epochs 100  --batch 16  --img 640  --optimizer SGD|Adam|AdamW  --cos-lr
          --close-mosaic 0  --min-items 0  --workers 8  --device cpu|cuda|N  --seed 0
          --project runs/train  --name exp  --exist-ok  --noval  --cache  --resume [FILE]
          --ckpt (recompute every block's inside during backward: less memory)
          --mem-budget 10G (choose --ckpt and, unless --batch is given, the batch to fit)
          --precision bf16|fp32 (the convs' products: bf16 operands with float32
            sums, the default on a GPU with tensor cores, or float32 throughout)
          --dry-run (print the memory plan and stop)
   Every epoch: a progress line, validation with the EMA weights (unless
   --noval), results.csv, weights/last.safetensors and best.safetensors. */
#define YOLOV9_IMPLEMENTATION
#include "yolov9.h"
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    const char *cfg, *weights, *data, *hyp, *optimizer, *device, *project, *name, *resume, *precision;
    int epochs, batch, img, cos_lr, close_mosaic, min_items, workers, seed, exist_ok, noval, cache, dry_run;
    int ckpt, batch_given;
    double mem_budget;       /* bytes, 0: none */
} train_args;

static void usage(const char *why) {
    if (why) fprintf(stderr, "train: %s\n", why);
    fprintf(stderr, "usage: train --cfg NAME|FILE.yaml --data FILE.yaml [--weights FILE] [--hyp FILE] [--epochs 100]\n"
                    "             [--batch 16] [--img 640] [--optimizer SGD|Adam|AdamW] [--cos-lr] [--close-mosaic N]\n"
                    "             [--min-items N] [--workers 8] [--device cpu|cuda|N] [--seed 0] [--project DIR]\n"
                    "             [--name NAME] [--exist-ok] [--noval] [--cache] [--resume [FILE]] [--ckpt]\n"
                    "             [--mem-budget SIZE] [--precision bf16|fp32] [--dry-run]\n");
    exit(2);
}

/* flags into a; a bad one ends the program with the usage */
static void parse_args(train_args *a, int argc, char **argv) {
    for (int i = 0; i < argc; i++) {
        const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int flag = 1;
        if (!strcmp(k, "--cos-lr")) a->cos_lr = 1;
        else if (!strcmp(k, "--exist-ok")) a->exist_ok = 1;
        else if (!strcmp(k, "--noval")) a->noval = 1;
        else if (!strcmp(k, "--cache")) a->cache = 1;
        else if (!strcmp(k, "--dry-run")) a->dry_run = 1;
        else if (!strcmp(k, "--ckpt")) a->ckpt = 1;
        else if (!strcmp(k, "--resume")) { a->resume = v && strncmp(v, "--", 2) ? v : ""; if (*a->resume) i++; }
        else flag = 0;
        if (flag) continue;
        if (!v) { char b[256]; snprintf(b, sizeof b, "%s needs a value", k); usage(b); }
        if (!strcmp(k, "--cfg")) a->cfg = v;
        else if (!strcmp(k, "--weights")) a->weights = v;
        else if (!strcmp(k, "--data")) a->data = v;
        else if (!strcmp(k, "--hyp")) a->hyp = v;
        else if (!strcmp(k, "--optimizer")) a->optimizer = v;
        else if (!strcmp(k, "--device")) a->device = v;
        else if (!strcmp(k, "--precision")) {
            a->precision = v;
            if (yolo_precision_parse(v) < 0) usage("--precision is bf16 or fp32");
        }
        else if (!strcmp(k, "--project")) a->project = v;
        else if (!strcmp(k, "--name")) a->name = v;
        else if (!strcmp(k, "--epochs")) a->epochs = atoi(v);
        else if (!strcmp(k, "--batch") || !strcmp(k, "--batch-size")) { a->batch = atoi(v); a->batch_given = 1; }
        else if (!strcmp(k, "--mem-budget")) {   /* 10G, 512M, 10GB, or bytes */
            char *end;
            double x = strtod(v, &end);
            int u = toupper((unsigned char)*end);
            a->mem_budget = x * (u == 'G' ? 1e9 : u == 'M' ? 1e6 : u == 'K' ? 1e3 : 1);
            if (!(a->mem_budget > 0)) usage("--mem-budget wants a size such as 10G");
        }
        else if (!strcmp(k, "--img") || !strcmp(k, "--imgsz") || !strcmp(k, "--img-size")) a->img = atoi(v);
        else if (!strcmp(k, "--close-mosaic")) a->close_mosaic = atoi(v);
        else if (!strcmp(k, "--min-items")) a->min_items = atoi(v);
        else if (!strcmp(k, "--workers")) a->workers = atoi(v);
        else if (!strcmp(k, "--seed")) a->seed = atoi(v);
        else { char b[256]; snprintf(b, sizeof b, "unknown flag %s", k); usage(b); }
        i++;
    }
}

static int exists(const char *p) { struct stat st; return stat(p, &st) == 0; }

/* the newest runs/train/ * /weights/last.safetensors, for a bare --resume */
static int latest_run(const char *project, char *out, size_t cap) {
    DIR *d = opendir(project);
    if (!d) return -1;
    time_t best = 0;
    struct dirent *e;
    char p[2048];
    while ((e = readdir(d))) {
        struct stat st;
        snprintf(p, sizeof p, "%s/%s/weights/last.safetensors", project, e->d_name);
        if (e->d_name[0] != '.' && !stat(p, &st) && st.st_mtime >= best) { best = st.st_mtime; snprintf(out, cap, "%s", p); }
    }
    closedir(d);
    return best ? 0 : -1;
}

static void die(const char *msg) { fprintf(stderr, "%s\n", msg); exit(1); }

/* The whole run's device memory at batch B: training steps on the densest
   batch (a mosaic of four pictures, twice with mixup), validation at its
   largest rectangle (with the folded weights and the predictions),
   weights, gradients, optimizer state, EMA, a copy of the weights while
   the EMA validates, and the backend's own scratch. *act gets the part of
   the planned steps. */
static size_t run_plan(yolo_model *m, const yolo_dataset *tr, const yolo_dataset *va, const yolo_hyp *hyp, const train_args *a,
                       yolo_optim_kind kind, int B, int ckpt, size_t *act) {
    yolo_loader vl;
    int vH = a->img, vW = a->img, dense = 4 * (tr->max_boxes > 0 ? tr->max_boxes : 1) * (hyp->mixup > 0 ? 2 : 1);
    yolo_loader_init(&vl, va, hyp, B, a->img, 0, 0);
    yolo_loader_max_shape(&vl, &vH, &vW);
    yolo_loader_free(&vl);
    m->ckpt = ckpt;
    *act = yolo_plan_run_bytes(m, B, a->img, a->img, dense, a->noval ? 0 : B, vH, vW);
    size_t spare = (m->nvalues * sizeof(yolo_real) + 255) / 256 * 256;
    return *act + yolo_model_state_bytes(m, kind) + spare + YOLO_BACKEND_SCRATCH_BYTES;
}

/* the largest batch up to 64 whose plan fits the budget (0: none) */
static int largest_batch(yolo_model *m, const yolo_dataset *tr, const yolo_dataset *va, const yolo_hyp *hyp,
                         const train_args *a, yolo_optim_kind kind, int ckpt) {
    int lo = 0, hi = 64;
    size_t act;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (run_plan(m, tr, va, hyp, a, kind, mid, ckpt, &act) <= a->mem_budget) lo = mid; else hi = mid - 1;
    }
    return lo;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);   /* progress lines appear as they are made */
    train_args a = { NULL, NULL, NULL, NULL, "SGD", NULL, "runs/train", "exp", NULL, NULL,
                     100, 16, 640, 0, 0, 0, 8, 0, 0, 0, 0, 0 };
    parse_args(&a, argc - 1, argv + 1);
    char err[YOLO_ERR], ckpt[1024] = "", save_dir[1024], saved_args[4096] = "", saved_hyp[2048] = "";
    yolo_safetensors meta = { 0 };
    int start_epoch = 0;
    double best_fitness = 0;
    long ema_updates = 0, optim_steps = 0, last_step = -1;
    if (a.resume) {   /* the run's own arguments come back from its checkpoint */
        if (*a.resume) snprintf(ckpt, sizeof ckpt, "%s", a.resume);
        else if (latest_run(a.project, ckpt, sizeof ckpt)) die("train: --resume: no runs/train/*/weights/last.safetensors to resume");
        if (yolo_st_read(&meta, ckpt, err)) die(err);
        char v[64];
        if (yolo_st_meta(&meta, "args", saved_args, sizeof saved_args) || yolo_st_meta(&meta, "epoch", v, sizeof v)) {
            fprintf(stderr, "%s: not a training checkpoint (no args/epoch metadata)\n", ckpt);
            return 1;
        }
        start_epoch = atoi(v) + 1;
        if (!yolo_st_meta(&meta, "best_fitness", v, sizeof v)) best_fitness = atof(v);
        yolo_st_meta(&meta, "hyp", saved_hyp, sizeof saved_hyp);
        if (!yolo_st_meta(&meta, "ema_updates", v, sizeof v)) ema_updates = atol(v);
        if (!yolo_st_meta(&meta, "optim_steps", v, sizeof v)) optim_steps = atol(v);
        if (!yolo_st_meta(&meta, "last_step", v, sizeof v)) last_step = atol(v);
        char *av[128], *copy = strdup(saved_args);   /* the flags point into it for the whole run */
        int ac = 0;
        for (char *s = NULL, *t = strtok_r(copy, "|", &s); t && ac < 128; t = strtok_r(NULL, "|", &s)) av[ac++] = t;
        train_args r = a;
        r.resume = NULL;
        parse_args(&r, ac, av);
        r.resume = a.resume; r.weights = NULL;
        a = r;
        snprintf(save_dir, sizeof save_dir, "%s", ckpt);   /* DIR/weights/last.safetensors -> DIR */
        for (int k = 0; k < 2; k++) { char *s = strrchr(save_dir, '/'); if (s) *s = 0; else snprintf(save_dir, sizeof save_dir, "."); }
        yolo_st_free(&meta);
    } else {
        for (int i = 1, o = 0; i < argc; i++) o += snprintf(saved_args + o, sizeof saved_args - o, "%s%s", i > 1 ? "|" : "", argv[i]);
    }
    if (!a.cfg) usage("--cfg is required");
    if (!a.data) usage("--data is required");
    if (a.batch < 1 || a.epochs < 1 || a.img < 32 || a.img % 32) usage("--batch and --epochs must be positive, --img a multiple of 32");
    yolo_optim_kind kind;
    if (!strcmp(a.optimizer, "SGD")) kind = YOLO_SGD;
    else if (!strcmp(a.optimizer, "Adam")) kind = YOLO_ADAM;
    else if (!strcmp(a.optimizer, "AdamW")) kind = YOLO_ADAMW;
    else { fprintf(stderr, "train: unknown optimizer '%s' (SGD, Adam or AdamW)\n", a.optimizer); return 2; }

    /* data and hyperparameters */
    yolo_hyp hyp;
    yolo_hyp_default(&hyp);
    if (saved_hyp[0]) {   /* a resumed run keeps the numbers it started with */
        if (yolo_hyp_parse(&hyp, saved_hyp)) { fprintf(stderr, "%s: incomplete hyperparameters in the metadata\n", ckpt); return 1; }
    } else if (a.hyp && yolo_hyp_read(&hyp, a.hyp, err)) die(err);
    yolo_hyp_format(&hyp, saved_hyp, sizeof saved_hyp);
    yolo_data_cfg dc;
    if (yolo_data_read(&dc, a.data, err)) die(err);
    yolo_dataset train_set, val_set;
    if (yolo_dataset_open(&train_set, dc.root, dc.train, dc.nc, a.min_items, err)) die(err);
    if (yolo_dataset_open(&val_set, dc.root, dc.val, dc.nc, 0, err)) die(err);
    printf("train: %d images, %ld boxes; val: %d images, %ld boxes; %d classes\n", train_set.n, train_set.nboxes,
           val_set.n, val_set.nboxes, dc.nc);

    /* model, backend, memory plan */
    const yolo_backend *be = yolo_backend_select(a.device, err);
    if (!be) die(err);
    yolo_model m;
    if (yolo_model_from_cfg(&m, a.cfg, dc.nc, err)) die(err);
    yolo_model_init_weights(&m, (uint64_t)a.seed);
    if (a.mem_budget > 0) {   /* choose recompute and, unless --batch is given, the batch */
        size_t act, full = run_plan(&m, &train_set, &val_set, &hyp, &a, kind, a.batch, 0, &act);
        size_t ck = run_plan(&m, &train_set, &val_set, &hyp, &a, kind, a.batch, 1, &act);
        if (full <= a.mem_budget) a.ckpt = 0;
        else if (ck <= a.mem_budget && (a.batch_given || a.ckpt)) a.ckpt = 1;
        else if (a.batch_given || ck <= a.mem_budget) {
            if (ck > a.mem_budget) {
                int b = largest_batch(&m, &train_set, &val_set, &hyp, &a, kind, 1);
                fprintf(stderr, "train: batch %d needs %.2f GB (%.2f GB with --ckpt), over the budget of %.2f GB; %s\n", a.batch,
                        full / 1e9, ck / 1e9, a.mem_budget / 1e9, b ? "" : "not even batch 1 with --ckpt fits");
                if (b) fprintf(stderr, "train: batch %d with --ckpt would fit\n", b);
                return 1;
            }
            a.ckpt = 1;
        } else {   /* the largest batch, without recompute when that costs little batch */
            int b0 = largest_batch(&m, &train_set, &val_set, &hyp, &a, kind, 0), b1 = largest_batch(&m, &train_set, &val_set, &hyp, &a, kind, 1);
            if (!b1) {
                fprintf(stderr, "train: even batch 1 with --ckpt needs %.2f GB, over the budget of %.2f GB\n",
                        run_plan(&m, &train_set, &val_set, &hyp, &a, kind, 1, 1, &act) / 1e9, a.mem_budget / 1e9);
                return 1;
            }
            if (b0 >= b1 / 2 && b0 > 0) { a.batch = b0; a.ckpt = 0; } else { a.batch = b1; a.ckpt = 1; }
        }
        printf("memory budget %.2f GB: batch %d%s\n", a.mem_budget / 1e9, a.batch, a.ckpt ? " with --ckpt" : "");
    }
    size_t act, plan = run_plan(&m, &train_set, &val_set, &hyp, &a, kind, a.batch, a.ckpt, &act);
    size_t state = yolo_model_state_bytes(&m, kind), spare = plan - act - state - YOLO_BACKEND_SCRATCH_BYTES;
    printf("memory plan: %.2f GB = activations, gradients and loss %.2f%s + weights, gradients, optimizer, EMA %.2f"
           " + weights kept while the EMA validates %.2f + backend scratch %.2f\n", plan / 1e9, act / 1e9, a.ckpt ? " (--ckpt)" : "", state / 1e9,
           spare / 1e9, YOLO_BACKEND_SCRATCH_BYTES / 1e9);
    yolo_loader tl, vl;
    yolo_loader_init(&tl, &train_set, &hyp, a.batch, a.img, 1, a.workers);
    yolo_loader_init(&vl, &val_set, &hyp, a.batch, a.img, 0, a.workers);
    if (a.dry_run) return 0;
    if (be->reserve(plan)) { fprintf(stderr, "train: cannot reserve the %.2f GB of the plan on the device\n", plan / 1e9); return 1; }
    yolo_model_use_backend(&m, be);
    m.precision = a.precision ? (yolo_precision)yolo_precision_parse(a.precision) : yolo_precision_default(be, 1);
    printf("convolutions in %s on %s\n", yolo_precision_name(m.precision), be->name);
    if (a.weights && yolo_load_weights(&m, a.weights, err)) die(err);
    if (a.cache) { yolo_dataset_cache(&train_set, a.img, 1); yolo_dataset_cache(&val_set, a.img, 0); }

    /* the recipe: nominal batch 64, weight decay scaled to it */
    int accumulate = (int)nearbyint(64.0 / a.batch);
    if (accumulate < 1) accumulate = 1;
    yolo_optim opt;
    yolo_optim_init(&opt, &m, kind, hyp.lr0, hyp.momentum, hyp.weight_decay * a.batch * accumulate / 64);
    if (!a.resume) yolo_model_round_half(&m);   /* as the official fresh run: model.half().float() */
    yolo_ema ema;
    yolo_ema_init(&ema, &m);
    yolo_real *hold = (yolo_real *)be->alloc(m.nvalues * sizeof(yolo_real));   /* the weights while the EMA validates */
    if (a.resume) {
        yolo_safetensors st;
        if (yolo_checkpoint_load(ckpt, &m, &ema, &opt, &st, err)) die(err);
        yolo_st_free(&st);
        ema.updates = ema_updates; opt.step = optim_steps;
        printf("resuming %s from epoch %d\n", ckpt, start_epoch);
    } else {
        yolo_run_dir(a.project, a.name, a.exist_ok, save_dir, sizeof save_dir);
    }
    char wdir[1100], last[1200], best[1200], csv[1200];
    snprintf(wdir, sizeof wdir, "%s/weights", save_dir);
    yolo_mkdirs(wdir);
    snprintf(last, sizeof last, "%s/last.safetensors", wdir);
    snprintf(best, sizeof best, "%s/best.safetensors", wdir);
    snprintf(csv, sizeof csv, "%s/results.csv", save_dir);
    if (a.resume && exists(csv)) {   /* rows of epochs after the checkpoint's (an interrupted run's) go */
        FILE *f = fopen(csv, "r");
        char *keep = (char *)calloc(1, 1 << 20), line[1024];
        size_t n = 0;
        for (int row = 0; f && fgets(line, sizeof line, f); row++)
            if ((row == 0 || atoi(line) < start_epoch) && n + strlen(line) < (1 << 20)) { strcpy(keep + n, line); n += strlen(line); }
        if (f) fclose(f);
        f = fopen(csv, "w");
        if (f) { fputs(keep, f); fclose(f); }
        free(keep);
    } else {
        FILE *f = fopen(csv, "w");
        if (!f) { fprintf(stderr, "%s: cannot write\n", csv); return 1; }
        fprintf(f, "epoch,train/box_loss,train/cls_loss,train/dfl_loss,metrics/precision,metrics/recall,"
                   "metrics/mAP_0.5,metrics/mAP_0.5:0.95,x/lr0,x/lr1,x/lr2,time/epoch_s,time/data_wait\n");
        fclose(f);
    }
    printf("%s on %s, %s, batch %d (accumulating to 64 by %d), img %d, %d epochs; results in %s\n", a.cfg, be->name,
           a.optimizer, a.batch, accumulate, a.img, a.epochs, save_dir);

    long nb = tl.nbatch, nw = (long)fmax(nearbyint(hyp.warmup_epochs * nb), 100);
    yolo_loss L;
    memset(&L, 0, sizeof L);
    int tty = isatty(fileno(stdout));
    for (int epoch = start_epoch; epoch < a.epochs; epoch++) {
        tl.mosaic = !(a.close_mosaic && epoch >= a.epochs - a.close_mosaic);
        double mloss[3] = { 0, 0, 0 }, t0 = yolo_now();
        int nbatch = 0, instances = 0, images = 0;
        tl.wait = 0;
        double lr_log[3] = { 0, 0, 0 };
        yolo_zero_grads(&m);
        yolo_loader_start(&tl, epoch, (uint64_t)a.seed);
        for (yolo_batch *bt; (bt = yolo_loader_next(&tl));) {
            long ni = bt->index + nb * epoch;
            int acc = yolo_schedule(&opt, &hyp, ni, nw, epoch, a.epochs, a.cos_lr, a.batch);
            yolo_set_input(&m, bt->B, bt->H, bt->W, bt->images);
            yolo_forward(&m, 1);
            yolo_loss_compute(&m, &L, bt->targets, bt->nt, 0);
            yolo_backward(&m);
            if (ni - last_step >= acc) {   /* optimizer step: clip at norm 10, then EMA */
                double norm;
                opt.grad_scale = yolo_grad_clip_scale(&m, 10.0, &norm);
                if (isfinite(norm)) { yolo_optim_step(&opt, &m); yolo_ema_update(&ema, &m); }
                else fprintf(stderr, "warning: non-finite gradient at batch %ld, step skipped\n", ni);
                yolo_zero_grads(&m);
                last_step = ni;
            }
            for (int k = 0; k < 3; k++) mloss[k] = (mloss[k] * nbatch + L.items[k]) / (nbatch + 1);
            for (int k = 0; k < 3; k++) lr_log[k] = opt.lr[k];
            nbatch++; instances = bt->nt; images += bt->B;
            if (tty) {   /* the running line of the official progress bar */
                char ep[32];
                snprintf(ep, sizeof ep, "%d/%d", epoch, a.epochs - 1);
                printf("\r%11s %10s %10.4g %10.4g %10.4g %10d %6d   batch %d/%ld", ep, "", mloss[0], mloss[1], mloss[2],
                       instances, a.img, nbatch, nb);
                fflush(stdout);
            }
        }
        if (tty) printf("\r%*s\r", 100, "");
        if (yolo_loader_error(&tl)) die(yolo_loader_error(&tl));
        yolo_loader_stop(&tl);
        be->sync();
        double train_s = yolo_now() - t0;
        size_t in_use = 0, peak = 0;
        be->memory(&in_use, &peak);
        printf("%11s %10s %10s %10s %10s %10s %6s %8s %10s\n", "Epoch", "GPU_mem", "box_loss", "cls_loss", "dfl_loss",
               "Instances", "Size", "img/s", "data_wait");
        char ep[32];
        snprintf(ep, sizeof ep, "%d/%d", epoch, a.epochs - 1);
        printf("%11s %9.2fG %10.4g %10.4g %10.4g %10d %6d %8.1f %9.1f%%\n", ep, peak / 1e9, mloss[0], mloss[1], mloss[2],
               instances, a.img, images / train_s, 100 * tl.wait / train_s);

        /* validation with the EMA weights */
        yolo_metrics mt;
        memset(&mt, 0, sizeof mt);
        if (!a.noval || epoch == a.epochs - 1) {
            be->copy(hold, m.values, m.nvalues * sizeof(yolo_real));
            be->copy(m.values, ema.values, m.nvalues * sizeof(yolo_real));
            yolo_model_fuse(&m);
            yolo_eval ev;
            memset(&ev, 0, sizeof ev);
            if (yolo_validate(&m, &vl, 0.001f, 0.7f, 300, &ev, NULL, NULL, NULL, err)) die(err);
            yolo_metrics_compute(&ev, dc.nc, &mt);
            printf("%22s %10s %10s %10s %10s %10s %10s\n", "Class", "Images", "Instances", "P", "R", "mAP50", "mAP50-95");
            printf("%22s %10d %10ld %10.3g %10.3g %10.3g %10.3g\n", "all", ev.images, ev.nt, mt.p, mt.r, mt.map50, mt.map);
            yolo_eval_free(&ev);
            be->copy(m.values, hold, m.nvalues * sizeof(yolo_real));
        }
        double fi = yolo_fitness(&mt), epoch_s = yolo_now() - t0;
        if (fi > best_fitness) best_fitness = fi;
        int is_best = fi == best_fitness;
        FILE *f = fopen(csv, "a");
        if (f) {
            fprintf(f, "%d,%.5g,%.5g,%.5g,%.5g,%.5g,%.5g,%.5g,%.5g,%.5g,%.5g,%.2f,%.4f\n", epoch, mloss[0], mloss[1], mloss[2],
                    mt.p, mt.r, mt.map50, mt.map, lr_log[0], lr_log[1], lr_log[2], epoch_s, tl.wait / train_s);
            fclose(f);
        }
        yolo_metrics_free(&mt);

        /* checkpoints, atomically: last every epoch, best when fitness improves */
        char e_s[32], bf_s[64], up_s[32], st_s[32], ls_s[32];
        snprintf(e_s, sizeof e_s, "%d", epoch);
        snprintf(bf_s, sizeof bf_s, "%.9g", best_fitness);
        snprintf(up_s, sizeof up_s, "%ld", ema.updates);
        snprintf(st_s, sizeof st_s, "%ld", opt.step);
        snprintf(ls_s, sizeof ls_s, "%ld", last_step);
        const char *kv[] = { "format", "yolov9.c training checkpoint", "epoch", e_s, "best_fitness", bf_s,
                             "ema_updates", up_s, "optim_steps", st_s, "last_step", ls_s, "optimizer", a.optimizer,
                             "args", saved_args, "hyp", saved_hyp, NULL };
        if (yolo_checkpoint_save(last, &m, &ema, &opt, kv, err)) die(err);
        if (is_best && yolo_checkpoint_save(best, &m, &ema, &opt, kv, err)) die(err);
        fflush(stdout);
    }
    printf("%d epochs done; weights in %s\n", a.epochs - start_epoch, wdir);
    yolo_loss_free(&L);
    be->release(hold);
    yolo_ema_free(&ema);
    yolo_optim_free(&opt);
    yolo_loader_free(&tl); yolo_loader_free(&vl);
    yolo_dataset_free(&train_set); yolo_dataset_free(&val_set);
    yolo_data_free(&dc);
    yolo_model_free(&m);
    return 0;
}
