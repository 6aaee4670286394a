/* train: YOLOv9 / GELAN training on a YOLO-format dataset, the recipe of
   the official train_dual.py on one GPU (or the CPU).

     ./train --cfg yolov9-s --data coco128.yaml --batch 16 --epochs 100
     ./train --resume [runs/train/exp/weights/last.safetensors]
     mpirun -np 2 ./train ... --batch 128   (data parallel: one process per GPU,
                                            64 pictures each; a build with MPI)
     ./train ... --device 0,1 --batch 128   (the same: train starts itself under mpirun)
     ./train ... --batch -1                 (AutoBatch: the largest batch that fits the GPU)

   The official train_dual.py flags with their arity (./train --help lists
   them; those that do not apply here say so in one line), and ours:
          --ckpt (recompute every block's inside during backward: less memory)
          --mem-budget 10G (choose --ckpt and, unless --batch is given, the batch to fit)
          --precision bf16|half|fp32 (the convs' products: bf16 operands with float32
            sums, the default on a GPU with bf16 tensor cores, sm_80 on; half, the
            official's AMP, behind a loss scaler, the default on a T4 (Turing's tensor
            cores are half's alone); or float32 throughout, the default elsewhere)
          --dry-run (print the memory plan and stop)
   Every epoch: a progress line, validation with the EMA weights (unless
   --noval), results.csv, weights/last.safetensors and best.safetensors. */
#define YOLOV9_IMPLEMENTATION
#include "yolov9.h"
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    const char *cfg, *weights, *data, *hyp, *optimizer, *device, *project, *name, *resume, *cache, *precision, *evolve;
    int epochs, batch, img, cos_lr, flat_cos_lr, fixed_lr, close_mosaic, min_items, workers, seed, exist_ok, noval, dry_run;
    int nosave, noplots, patience, save_period, rect, image_weights, multi_scale, single_cls, quad, ckpt, sync_bn;
    double label_smoothing;
    yolo_ints freeze;
    double mem_budget;       /* bytes, 0: none */
} train_args;

static const char *USAGE = "--cfg NAME|FILE.yaml --data FILE.yaml [--weights FILE] [--epochs 100] [--batch-size 16] [--img 640] ...";

/* a size: 10G, 512M, 10GB, or bytes (4e9), in [1, 1e15] bytes; else one
   line naming where and what, and exit */
static double parse_size(const char *text, const char *where, const char *what) {
    char number[64], err[YOLO_ERR];
    size_t n = strcspn(text, "KkMmGg");
    int u = toupper((unsigned char)text[n]);
    double unit = u == 'G' ? 1e9 : u == 'M' ? 1e6 : u == 'K' ? 1e3 : 1, x;
    snprintf(number, sizeof number, "%.*s", (int)(n < 63 ? n : 63), text);
    if ((u && strcasecmp(text + n + 1, "") && strcasecmp(text + n + 1, "B")) || n >= 63 ||
        yolo_read_number(number, 0, 1 / unit, 1e15 / unit, where, what, &x, err)) {
        fprintf(stderr, "%s: %s '%.40s' is not a size in [1, 1e15] bytes such as 10G, 512M or 4e9\n", where, what, text);
        exit(2);
    }
    return x * unit;
}

/* the official train_dual.py flags (and ours) into a; a bad one ends the
   program with one line from where: "train" (the command line, with the
   usage), or the checkpoint whose args they are */
static void parse_args(train_args *a, int argc, char **argv, const char *where) {
    const char *budget = NULL;
    const yolo_flag flags[] = {
        { "--weights", YOLO_FLAG_STR, &a->weights, "initial weights: a .safetensors (name and shape must match to be loaded)", 0 },
        { "--cfg", YOLO_FLAG_STR, &a->cfg, "model: yolov9-t/s/m/c/e, gelan-t/s/m/c/e or a model yaml (default: the --weights' own)", 0 },
        { "--data", YOLO_FLAG_STR, &a->data, "dataset yaml", 0 },
        { "--hyp", YOLO_FLAG_STR, &a->hyp, "hyperparameters yaml (default: hyp.scratch-high)", 0 },
        { "--epochs", YOLO_FLAG_INT, &a->epochs, "total training epochs (100)", 0, 1, 1e6 },
        { "--batch-size --batch", YOLO_FLAG_INT, &a->batch, "images per batch (16); -1: AutoBatch, the largest that fits the device", "-1", 1, YOLO_MAX_BATCH },
        { "--imgsz --img --img-size", YOLO_FLAG_INT, &a->img, "train and val image size in pixels (640)", 0, 1, YOLO_MAX_IMG },
        { "--rect", YOLO_FLAG_BOOL, &a->rect, "rectangular training", 0 },
        { "--resume", YOLO_FLAG_OPT, &a->resume, "resume the most recent run, or the given last.safetensors", "" },
        { "--nosave", YOLO_FLAG_BOOL, &a->nosave, "only save the final checkpoint", 0 },
        { "--noval", YOLO_FLAG_BOOL, &a->noval, "only validate the final epoch", 0 },
        { "--noautoanchor", YOLO_FLAG_BOOL, NULL, "anchor-free heads have no anchors", 0 },
        { "--noplots", YOLO_FLAG_BOOL, &a->noplots, "save no plot files", 0 },
        { "--evolve", YOLO_FLAG_OPT, &a->evolve, "hyperparameter evolution: refused, not implemented", "300" },
        { "--bucket", YOLO_FLAG_STR, NULL, "no cloud storage", 0 },
        { "--cache", YOLO_FLAG_OPT, &a->cache, "cache decoded images: ram or disk", "ram" },
        { "--image-weights", YOLO_FLAG_BOOL, &a->image_weights, "pick training images weighted by their classes' mAP", 0 },
        { "--device", YOLO_FLAG_STR, &a->device, "cpu, cuda, a GPU index, or GPUs 0,1,2,3 (one process each under mpirun)", 0 },
        { "--multi-scale", YOLO_FLAG_BOOL, &a->multi_scale, "vary the image size +/- 50%", 0 },
        { "--single-cls", YOLO_FLAG_BOOL, &a->single_cls, "train multi-class data as one class", 0 },
        { "--optimizer", YOLO_FLAG_STR, &a->optimizer, "SGD, Adam, AdamW or LION (SGD)", 0 },
        { "--sync-bn", YOLO_FLAG_BOOL, &a->sync_bn, "BatchNorm statistics over all processes' shares (SyncBatchNorm)", 0 },
        { "--workers", YOLO_FLAG_INT, &a->workers, "loader threads (8, at most the CPUs)", 0, 0, YOLO_MAX_WORKERS },
        { "--project", YOLO_FLAG_STR, &a->project, "save to PROJECT/NAME (runs/train)", 0 },
        { "--name", YOLO_FLAG_STR, &a->name, "save to PROJECT/NAME (exp)", 0 },
        { "--exist-ok", YOLO_FLAG_BOOL, &a->exist_ok, "an existing PROJECT/NAME is fine, do not increment", 0 },
        { "--quad", YOLO_FLAG_BOOL, &a->quad, "quad dataloader", 0 },
        { "--cos-lr", YOLO_FLAG_BOOL, &a->cos_lr, "cosine LR schedule", 0 },
        { "--flat-cos-lr", YOLO_FLAG_BOOL, &a->flat_cos_lr, "flat cosine LR schedule", 0 },
        { "--fixed-lr", YOLO_FLAG_BOOL, &a->fixed_lr, "fixed LR", 0 },
        { "--label-smoothing", YOLO_FLAG_FLOAT, &a->label_smoothing, "label smoothing epsilon", 0, 0, 1 },
        { "--patience", YOLO_FLAG_INT, &a->patience, "stop after this many epochs without improvement (100; 0: never)", 0, 0, INT_MAX },
        { "--freeze", YOLO_FLAG_INTS, &a->freeze, "freeze layers: the first N, or a list: 0 1 2", 0, 0, YOLO_MAX_LAYERS },
        { "--save-period", YOLO_FLAG_INT, &a->save_period, "save weights/epochN every N epochs (off: -1 or 0)", 0, -1, INT_MAX },
        { "--seed", YOLO_FLAG_INT, &a->seed, "global seed (0)", 0, 0, INT_MAX },
        { "--local_rank", YOLO_FLAG_INT, NULL, "torch.distributed's: mpirun gives each process its rank", 0, -1, INT_MAX },
        { "--min-items", YOLO_FLAG_INT, &a->min_items, "skip training pictures with fewer labels (0)", 0, 0, INT_MAX },
        { "--close-mosaic", YOLO_FLAG_INT, &a->close_mosaic, "no mosaic in the last N epochs (0)", 0, 0, INT_MAX },
        { "--entity", YOLO_FLAG_STR, NULL, "no W&B logging", 0 },
        { "--upload_dataset", YOLO_FLAG_OPT, NULL, "no W&B logging", 0 },
        { "--bbox_interval", YOLO_FLAG_INT, NULL, "no W&B logging", 0, -1, INT_MAX },
        { "--artifact_alias", YOLO_FLAG_STR, NULL, "no W&B logging", 0 },
        { "--ckpt", YOLO_FLAG_BOOL, &a->ckpt, "ours: recompute every block's inside during backward (less memory)", 0 },
        { "--mem-budget", YOLO_FLAG_STR, &budget, "ours: 10G: choose --ckpt and, unless --batch-size is given, the batch to fit", 0 },
        { "--dry-run", YOLO_FLAG_BOOL, &a->dry_run, "ours: print the memory plan and stop", 0 },
        { "--precision", YOLO_FLAG_STR, &a->precision, "ours: bf16 (tensor cores; the GPU's default), half (the official's AMP: a loss scaler) or fp32", 0 },
    };
    char err[YOLO_ERR];
    int nflags = (int)(sizeof flags / sizeof flags[0]);
    if (!strcmp(where, "train")) yolo_flags_parse(flags, nflags, argc, argv, where, USAGE);
    else if (yolo_flags_read(flags, nflags, argc, argv, where, err)) { fprintf(stderr, "%s\n", err); exit(1); }
    if (a->precision && yolo_precision_parse(a->precision) < 0) { fprintf(stderr, "%s: --precision is bf16, half or fp32\n", where); exit(2); }
    if (budget) a->mem_budget = parse_size(budget, where, "--mem-budget");
    if (a->weights && !*a->weights) a->weights = NULL;   /* --weights '': none, as the official */
    if (a->cfg && !*a->cfg) a->cfg = NULL;
}

/* the defaults of every flag; a resumed run starts from them too, as the official replaces its
   options by the run's own */
static void default_args(train_args *a) {
    memset(a, 0, sizeof *a);
    a->optimizer = "SGD"; a->project = "runs/train"; a->name = "exp";
    a->img = 640; a->workers = YOLO_ABSENT; a->patience = 100; a->save_period = -1; a->epochs = 100;
    a->batch = YOLO_ABSENT;   /* 16, unless --mem-budget chooses it */
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

/* The run's settings beside its results, as the official: hyp.yaml (the
   hyperparameters, "key value" pairs as yolo_hyp_format writes them) and
   opt.yaml (every option); the files that could not be written */
static int save_settings(const char *dir, const train_args *a, const char *hyp_pairs, const char *model) {
    char path[1200], key[64];
    snprintf(path, sizeof path, "%s/hyp.yaml", dir);
    FILE *f = yolo_create_file(path, "w");
    double v;
    int n, failed = !f;
    for (const char *s = hyp_pairs; f && sscanf(s, "%63s %lf%n", key, &v, &n) == 2; s += n) fprintf(f, "%s: %.10g\n", key, v);
    if (f) failed += yolo_close_written(f, path) != 0;
    snprintf(path, sizeof path, "%s/opt.yaml", dir);
    if (!(f = yolo_create_file(path, "w"))) return failed + 1;
    /* no --cfg or --weights: '' as the official writes them, and which model the run has */
    fprintf(f, "weights: '%s'\ncfg: '%s'%s%s\n", a->weights ? a->weights : "", a->cfg ? a->cfg : "", a->cfg ? "" : "  # ", a->cfg ? "" : model);
    const char *strs[][2] = { { "data", a->data }, { "hyp", a->hyp }, { "optimizer", a->optimizer }, { "device", a->device },
                              { "project", a->project }, { "name", a->name }, { "cache", a->cache }, { "save_dir", dir } };
    for (size_t k = 0; k < sizeof strs / sizeof strs[0]; k++) fprintf(f, "%s: %s\n", strs[k][0], strs[k][1] ? strs[k][1] : "null");
    const struct { const char *key; int v; } ints[] = {
        { "epochs", a->epochs }, { "batch_size", a->batch }, { "imgsz", a->img }, { "rect", a->rect }, { "resume", a->resume != NULL },
        { "nosave", a->nosave }, { "noval", a->noval }, { "noplots", a->noplots }, { "image_weights", a->image_weights },
        { "multi_scale", a->multi_scale }, { "single_cls", a->single_cls }, { "workers", a->workers }, { "exist_ok", a->exist_ok },
        { "quad", a->quad }, { "cos_lr", a->cos_lr }, { "flat_cos_lr", a->flat_cos_lr }, { "fixed_lr", a->fixed_lr },
        { "patience", a->patience }, { "save_period", a->save_period }, { "seed", a->seed }, { "min_items", a->min_items },
        { "close_mosaic", a->close_mosaic }, { "ckpt", a->ckpt } };
    for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++) fprintf(f, "%s: %d\n", ints[k].key, ints[k].v);
    fprintf(f, "label_smoothing: %g\nfreeze: [", a->label_smoothing);
    for (int k = 0; k < a->freeze.n; k++) fprintf(f, "%s%d", k ? ", " : "", a->freeze.v[k]);
    fprintf(f, "%s]\n", a->freeze.n ? "" : "0");
    return failed + (yolo_close_written(f, path) != 0);
}

/* As the official strip_optimizer at the end of a run: the checkpoint
   keeps its EMA weights (under the official names) in half precision and
   its metadata, and drops the raw weights and the optimizer state.
   Resuming it then says the run is finished. */
static int strip_checkpoint(const char *path, yolo_model *m, yolo_ema *ema, yolo_optim *opt, char *err) {
    yolo_safetensors st;
    if (yolo_checkpoint_load(path, m, ema, opt, &st, err)) return -1;
    static const char *keys[] = { "epoch", "best_epoch", "best_fitness", "optimizer", "args", "hyp" };
    char *vals[6];
    const char *kv[2 * 6 + 3] = { "format", "yolov9.c weights (optimizer stripped at the end of training)" };
    int n = 2;
    for (int k = 0; k < 6; k++) {
        vals[k] = (char *)calloc(1, 8192);
        if (!yolo_st_meta(&st, keys[k], vals[k], 8192)) { kv[n++] = keys[k]; kv[n++] = vals[k]; }
    }
    yolo_st_free(&st);
    int rc = yolo_save_weights(m, path, ema->values, kv, 1, err);
    for (int k = 0; k < 6; k++) free(vals[k]);
    return rc;
}

/* the training loader's mode: --rect (which --image-weights turns off, as the official), --multi-scale, --quad */
static int loader_mode(const train_args *a) {
    return YOLO_LOADER_TRAIN | (a->rect && !a->image_weights ? YOLO_LOADER_RECT : 0) | (a->multi_scale ? YOLO_LOADER_MULTI_SCALE : 0) |
           (a->quad ? YOLO_LOADER_QUAD : 0);
}

/* Validation batches twice the training batch of a process, as the
   official val_loader (batch_size // WORLD_SIZE * 2): a rectangle's shape
   depends on which pictures share its batch, and so do the scores. The
   model takes them B at a time (yolo_validate's per_forward): the memory
   stays that of a batch of B. */
static int val_batch(int share) { return 2 * share; }

/* The whole run's device memory at batch B: training steps on the densest
   batch (a mosaic of four pictures, twice with mixup; --quad: four such
   in one picture, B / 4 pictures of twice the size), validation at its
   largest rectangle (with the folded weights and the predictions),
   weights, gradients, optimizer state, EMA, a copy of the weights while
   the EMA validates, and the backend's own scratch. *act gets the part of
   the planned steps. */
static size_t run_plan(yolo_model *m, const yolo_dataset *tr, const yolo_dataset *va, const yolo_hyp *hyp, const train_args *a,
                       yolo_optim_kind kind, int B, int ckpt, size_t *act) {
    yolo_loader tl, vl;
    int tH, tW, vH, vW, dense = 4 * (tr->max_boxes > 0 ? tr->max_boxes : 1) * (hyp->mixup > 0 ? 2 : 1) * (a->quad ? 4 : 1);
    yolo_loader_init(&tl, tr, hyp, B, a->img, loader_mode(a), 0);   /* --multi-scale: its largest size */
    yolo_loader_max_shape(&tl, &tH, &tW);
    yolo_loader_init(&vl, va, hyp, val_batch(B), a->img, YOLO_LOADER_VAL, 0);
    yolo_loader_max_shape(&vl, &vH, &vW);
    yolo_loader_free(&tl); yolo_loader_free(&vl);
    m->ckpt = ckpt;
    *act = yolo_plan_run_bytes(m, a->quad ? B / 4 : B, tH, tW, dense, B, vH, vW);
    size_t spare = yolo_arena_bytes(m->nvalues * sizeof(yolo_real));
    return *act + yolo_model_state_bytes(m, kind) + spare + YOLO_BACKEND_SCRATCH_BYTES;
}

/* the largest batch up to most whose plan fits budget bytes (0: none) */
static int largest_batch(yolo_model *m, const yolo_dataset *tr, const yolo_dataset *va, const yolo_hyp *hyp,
                         const train_args *a, yolo_optim_kind kind, int ckpt, double budget, int most) {
    int lo = 0, hi = most;
    size_t act;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (run_plan(m, tr, va, hyp, a, kind, mid, ckpt, &act) <= budget) lo = mid; else hi = mid - 1;
    }
    return lo;
}

/* Everything a run holds from one step to the next. */
typedef struct {
    train_args a;
    yolo_dp dp;              /* this process of a data-parallel run (world 1: the only one) */
    int share;               /* pictures of each batch this process trains on: batch / world */
    char ckpt[1024], save_dir[1024], saved_hyp[2048];   /* resumed from; the run's folder; its hyp */
    char *saved_args;        /* its flags, '|' between them */
    int hyp_resumed;         /* hyp holds the resumed run's own numbers */
    char model[1100];        /* what the model is: --cfg, or the weights file that carries it */
    char weights[1024];      /* --weights' file (X.safetensors for X.pt: yolo_weights_path) */
    char wdir[1100], last[1200], best[1200], csv[1200];
    int start_epoch, best_epoch, batch_given, autobatch, nc;
    int failed;              /* files of the run that could not be written (each named on stderr when it failed) */
    double best_fitness;
    long ema_updates, optim_steps, last_step;   /* a resumed run's counters */
    double loss_scale;       /* and its loss scaler's scale (0: none saved) */
    long scale_good;
    yolo_optim_kind kind;
    yolo_lr_shape lr_shape;
    yolo_cache_kind cache;
    yolo_hyp hyp;
    yolo_data_cfg dc;
    yolo_dataset train_set, val_set;
    char **names;
    const yolo_backend *be;
    yolo_model m;
    yolo_loader tl, vl;
    size_t plan;
    int accumulate;          /* batches an optimizer step (nominal batch 64) */
    yolo_optim opt;
    yolo_ema ema;
    yolo_real *hold;         /* the weights while the EMA validates */
    yolo_schedule sched;
    yolo_loss L;
    yolo_loss_scaler scaler; /* --precision half's */
    double *maps, *image_weights;   /* [nc] the last validation's per-class mAP; [train n] --image-weights */
    double waited, trained;  /* seconds waiting for data, training */
} train_run;

/* What one epoch of training leaves for the log. */
typedef struct {
    double mloss[3], lr[3];   /* mean losses (box, cls, dfl), the last learning rates (biases, weights, BN weights) */
    double seconds, wait;     /* training, and waiting for data within it */
    double epoch_seconds;     /* with the validation */
} epoch_log;

/* The flags as a checkpoint keeps them, '|' between them (an empty one
   stays: --weights ''); a flag holding '|' itself cannot be kept. */
static char *join_args(int argc, char **argv) {
    size_t len = 1;
    for (int i = 0; i < argc; i++) {
        if (strchr(argv[i], '|')) { fprintf(stderr, "train: '%.100s': a checkpoint cannot keep an argument holding '|'\n", argv[i]); exit(2); }
        len += strlen(argv[i]) + 1;
    }
    char *s = (char *)yolo_xcalloc(1, len);
    for (int i = 0, o = 0; i < argc; i++) o += sprintf(s + o, "%s%s", i ? "|" : "", argv[i]);
    return s;
}

/* a number of the checkpoint's metadata in [lo, hi]; absent, *out keeps its default */
static void ckpt_number(const train_run *r, const yolo_safetensors *st, const char *key, int integer, double lo, double hi, double *out) {
    char err[YOLO_ERR];
    if (yolo_st_meta_number(st, r->ckpt, key, integer, lo, hi, out, err) < 0) die(err);
}

/* --resume: the run's own flags, hyperparameters and counters from its
   checkpoint, each checked against the run before anything trains: epoch
   in [0, epochs), the best epoch no later, the EMA's and the optimizer's
   counts not negative, the loss scaler's scale finite and positive. */
static void resume_args(train_run *r, int epochs_given) {
    train_args *a = &r->a;
    char err[YOLO_ERR], where[1200];
    yolo_safetensors meta;
    if (*a->resume) snprintf(r->ckpt, sizeof r->ckpt, "%s", a->resume);
    else if (latest_run(a->project, r->ckpt, sizeof r->ckpt)) die("train: --resume: no runs/train/*/weights/last.safetensors to resume");
    char found[1024];   /* as the official check_file */
    if (yolo_find_file(r->ckpt, found, sizeof found, err) < 0) die(err);
    snprintf(r->ckpt, sizeof r->ckpt, "%s", found);
    if (yolo_st_read(&meta, r->ckpt, err)) die(err);
    r->saved_args = yolo_st_meta_dup(&meta, "args");
    char *hyp = yolo_st_meta_dup(&meta, "hyp");
    if (!r->saved_args || !hyp) { fprintf(stderr, "%s: not a training checkpoint (no args or hyp metadata)\n", r->ckpt); exit(1); }
    /* the flags, split at '|' (empty ones kept); they point into a copy for the whole run */
    char *copy = strdup(r->saved_args), **av = (char **)yolo_xcalloc(strlen(copy) + 1, sizeof(char *));
    int ac = 0;
    for (char *t = copy;; t++) { av[ac++] = t; t += strcspn(t, "|"); if (!*t) break; *t = 0; }
    if (!*copy) ac = 0;
    train_args own;
    default_args(&own);
    snprintf(where, sizeof where, "%s: metadata 'args'", r->ckpt);
    parse_args(&own, ac, av, where);
    own.resume = a->resume; own.weights = NULL;
    if (epochs_given && a->epochs != own.epochs)   /* the official replaces every option by the run's own */
        fprintf(stderr, "train: --epochs %d ignored: a resumed run keeps its own arguments (--epochs %d), as the official "
                        "--resume; to train further, start a new run with --weights %s\n", a->epochs, own.epochs, r->ckpt);
    *a = own;
    if (!yolo_st_find(&meta, "train.model")) {   /* stripped at the end of its run, as the official says */
        fprintf(stderr, "%s: training to %d epochs is finished, nothing to resume. Start a new training without --resume, "
                        "i.e. './train --weights %s ...'\n", r->ckpt, a->epochs, r->ckpt);
        exit(1);
    }
    snprintf(where, sizeof where, "%s: metadata 'hyp'", r->ckpt);
    yolo_hyp_default(&r->hyp);
    if (yolo_hyp_parse(&r->hyp, hyp, where, err)) die(err);
    r->hyp_resumed = 1;
    free(hyp);
    const double counts = 9007199254740992.0;   /* 2^53: any count a double holds exactly */
    double epoch = -1, best_epoch = 0, ema = 0, steps = 0, last = -1, good = 0;
    ckpt_number(r, &meta, "epoch", 1, 0, a->epochs - 1, &epoch);
    if (epoch < 0) { fprintf(stderr, "%s: not a training checkpoint (no epoch metadata)\n", r->ckpt); exit(1); }
    ckpt_number(r, &meta, "best_epoch", 1, 0, epoch, &best_epoch);
    ckpt_number(r, &meta, "best_fitness", 0, 0, 1, &r->best_fitness);
    ckpt_number(r, &meta, "ema_updates", 1, 0, counts, &ema);
    ckpt_number(r, &meta, "optim_steps", 1, 0, counts, &steps);
    ckpt_number(r, &meta, "last_step", 1, -1, counts, &last);
    ckpt_number(r, &meta, "loss_scale", 0, 1e-30, 1e30, &r->loss_scale);
    ckpt_number(r, &meta, "loss_scale_good", 1, 0, YOLO_SCALER_GROWTH - 1, &good);
    r->start_epoch = (int)epoch + 1; r->best_epoch = (int)best_epoch;
    r->ema_updates = (long)ema; r->optim_steps = (long)steps; r->last_step = (long)last; r->scale_good = (long)good;
    snprintf(r->save_dir, sizeof r->save_dir, "%s", r->ckpt);   /* DIR/weights/last.safetensors -> DIR */
    for (int k = 0; k < 2; k++) { char *s = strrchr(r->save_dir, '/'); if (s) *s = 0; else snprintf(r->save_dir, sizeof r->save_dir, "."); }
    yolo_st_free(&meta);
}

/* 1. the flags, and for --resume the run's own flags and counters from its checkpoint */
static void read_args(train_run *r, int argc, char **argv) {
    train_args *a = &r->a;
    default_args(a);
    a->epochs = YOLO_ABSENT;   /* a resumed run keeps its own */
    parse_args(a, argc - 1, argv + 1, "train");
    if (a->evolve) {   /* refused before anything runs, rather than ignored */
        fprintf(stderr, "train: --evolve (the official's hyperparameter evolution: %s generations of training runs with "
                        "mutated hyperparameters) is not implemented; train with --hyp files of your choice instead\n", a->evolve);
        exit(2);
    }
    int epochs_given = a->epochs != YOLO_ABSENT;
    if (!epochs_given) a->epochs = 100;
    r->last_step = -1;
    if (a->resume) resume_args(r, epochs_given);
    else r->saved_args = join_args(argc - 1, argv + 1);
    if (a->weights) a->weights = yolo_weights_path(a->weights, r->weights, sizeof r->weights);
    if (!a->cfg && !a->weights && !a->resume) die("train: --cfg or --weights is required (a model name or yaml, or weights that carry their model)");
    if (!a->data) die("train: --data is required");
    r->autobatch = a->batch == -1;   /* the official's AutoBatch (plan_memory) */
    r->batch_given = a->batch != YOLO_ABSENT && a->batch > 0;
    if (!r->batch_given) a->batch = 16;
    int world = r->dp.world;
    if (a->batch % world) { fprintf(stderr, "train: --batch-size %d must be a multiple of the %d processes\n", a->batch, world); exit(2); }
    r->share = a->batch / world;
    a->workers = yolo_loader_workers(a->workers, 8, "train");
    if (a->sync_bn && world == 1) fprintf(stderr, "train: --sync-bn has no effect in one process, as the official without DDP\n");
    a->img = yolo_check_img_size(a->img, 64, "train");
    if (!strcmp(a->optimizer, "SGD")) r->kind = YOLO_SGD;
    else if (!strcmp(a->optimizer, "Adam")) r->kind = YOLO_ADAM;
    else if (!strcmp(a->optimizer, "AdamW")) r->kind = YOLO_ADAMW;
    else if (!strcmp(a->optimizer, "LION")) r->kind = YOLO_LION;
    else { fprintf(stderr, "train: unknown optimizer '%s' (SGD, Adam, AdamW or LION)\n", a->optimizer); exit(2); }
    if (a->rect && a->image_weights) fprintf(stderr, "train: --rect is off with --image-weights, as in the official loader\n");
    if (a->label_smoothing != 0)
        fprintf(stderr, "train: --label-smoothing %g has no effect, as in the official train_dual.py (its loss never uses the smoothed targets)\n", a->label_smoothing);
    r->lr_shape = a->fixed_lr ? YOLO_LR_FIXED : a->flat_cos_lr ? YOLO_LR_FLAT_COS : a->cos_lr ? YOLO_LR_COS : YOLO_LR_LINEAR;
    r->cache = !a->cache ? YOLO_CACHE_NONE : !strcmp(a->cache, "disk") ? YOLO_CACHE_DISK : YOLO_CACHE_RAM;
    if (a->cache && strcmp(a->cache, "ram") && strcmp(a->cache, "disk")) die("train: --cache takes ram or disk");
}

/* --hyp as the official check_yaml finds it (yolo_find_file); the name of
   the official's own file where no such file is here: its numbers, which
   are built in (yolo_hyp_default) */
static void read_hyp(yolo_hyp *hyp, const char *given) {
    char path[1024], err[YOLO_ERR];
    int found = yolo_find_file(given, path, sizeof path, err);
    const char *slash = strrchr(given, '/'), *name = slash ? slash + 1 : given;
    if (found < 0 || (found == 0 && yolo_hyp_read(hyp, path, err))) die(err);
    if (found == 0) return;
    if (strcmp(name, "hyp.scratch-high.yaml")) {
        fprintf(stderr, "%s: hyperparameter file not found (nor under data/, models/ or utils/); the official's own, "
                        "hyp.scratch-high.yaml, is built in\n", given);
        exit(1);
    }
    printf("hyperparameters: %s is not here; the official's numbers, built in\n", given);
}

/* an argument as a shell reads it back: quoted when it is empty or holds
   anything but letters, digits and -_./,=: */
static void shell_word(char *out, size_t cap, const char *w) {
    int plain = *w != 0;
    for (const char *c = w; *c; c++) plain &= isalnum((unsigned char)*c) || strchr("-_./,=:", *c) != NULL;
    if (plain) { snprintf(out, cap, "%s", w); return; }
    size_t o = snprintf(out, cap, "'");
    for (const char *c = w; *c && o + 5 < cap; c++) o += *c == '\'' ? snprintf(out + o, cap - o, "'\\''") : snprintf(out + o, cap - o, "%c", *c);
    snprintf(out + o, cap - o, "'");
}

#ifdef YOLO_MPI
/* whether program is an executable in one of PATH's folders */
static int on_path(const char *program) {
    const char *path = getenv("PATH");
    char p[2048];
    for (const char *d = path ? path : ""; *d;) {
        size_t n = strcspn(d, ":");
        snprintf(p, sizeof p, "%.*s/%s", (int)n, d, program);
        if (n && !access(p, X_OK)) return 1;
        d += n; if (*d) d++;
    }
    return 0;
}
#endif

/* 1b. --device 0,1,2,3: one process a GPU, as the official's
   torch.distributed.launch --nproc_per_node 4 ... --device 0,1,2,3. Under
   mpirun each process takes the GPU of its place on the machine; run
   alone, train starts itself under mpirun with as many processes (a build
   with MPI, mpirun on the PATH; the command is printed first), else says
   the command to run. */
static void place_devices(train_run *r, int argc, char **argv) {
    train_args *a = &r->a;
    if (!a->device || !strchr(a->device, ',')) return;
    static char one[16];
    int n = 0;
    for (const char *d = a->device; *d; n++) {
        size_t k = strspn(d, "0123456789");
        if (!k || (d[k] && d[k] != ',') || k > 6) die("train: --device wants cpu, cuda, a GPU index or GPU indices 0,1,2,3");
        if (n == r->dp.local_rank) snprintf(one, sizeof one, "%.*s", (int)k, d);
        d += k; if (*d) d++;
    }
    if (r->dp.world > 1) {
        if (r->dp.local_rank >= n) {
            fprintf(stderr, "train: --device %s lists %d GPUs, fewer than the processes on this machine\n", a->device, n);
            exit(2);
        }
        a->device = one;
        return;
    }
    /* mpirun [--allow-run-as-root] [--bind-to none] -np N argv... */
    char **av = (char **)yolo_xcalloc((size_t)argc + 8, sizeof(char *)), np[16], cmd[8192], w[2048];
    int k = 0;
    av[k++] = (char *)"mpirun";
#ifdef OPEN_MPI
    if (geteuid() == 0) av[k++] = (char *)"--allow-run-as-root";   /* Open MPI refuses root otherwise */
    av[k++] = (char *)"--bind-to"; av[k++] = (char *)"none";          /* each process's loader threads need cores */
#endif
    snprintf(np, sizeof np, "%d", n);
    av[k++] = (char *)"-np"; av[k++] = np;
    for (int i = 0; i < argc; i++) av[k++] = argv[i];
    size_t o = 0;
    for (int i = 0; i < k && o < sizeof cmd; i++) { shell_word(w, sizeof w, av[i]); o += snprintf(cmd + o, sizeof cmd - o, "%s%s", i ? " " : "", w); }
#ifdef YOLO_MPI
    if (on_path("mpirun")) {
        printf("train: --device %s: %d processes, one a GPU: %s\n", a->device, n, cmd);
        fflush(stdout);
        execvp("mpirun", av);
        fprintf(stderr, "train: cannot start mpirun (%s)\n", strerror(errno));
        exit(1);
    }
    fprintf(stderr, "train: --device %s asks for %d processes, one a GPU, and mpirun is not on the PATH; with MPI installed, run:\n  %s\n",
            a->device, n, cmd);
#else
    fprintf(stderr, "train: --device %s asks for %d processes, one a GPU: this build has no MPI (build with mpicc present, see "
                    "README), then run:\n  %s\n", a->device, n, cmd);
#endif
    exit(2);
}

/* 2. hyperparameters and the two splits of the dataset */
static void open_data(train_run *r) {
    const train_args *a = &r->a;
    char err[YOLO_ERR];
    if (!r->hyp_resumed) {   /* (a resumed run keeps the numbers it started with) */
        yolo_hyp_default(&r->hyp);
        if (a->hyp) read_hyp(&r->hyp, a->hyp);
    }
    yolo_hyp_format(&r->hyp, r->saved_hyp, sizeof r->saved_hyp);
    char data[1024], labels[1024];
    if (yolo_find_file(a->data, data, sizeof data, err) < 0 || yolo_data_read(&r->dc, data, err)) die(err);
    if (yolo_dataset_open(&r->train_set, r->dc.root, r->dc.train, r->dc.nc, a->min_items, err)) die(err);
    if (!r->train_set.nboxes && !yolo_dataset_label_files(&r->train_set, labels, sizeof labels)) {   /* as the official refuses */
        fprintf(stderr, "train: no labels found in %s (none of the %d training pictures has a label file there): cannot train\n",
                labels, r->train_set.n);
        exit(1);
    }
    if (yolo_dataset_open(&r->val_set, r->dc.root, r->dc.val, r->dc.nc, 0, err)) die(err);
    static char *item = (char *)"item";
    r->nc = a->single_cls ? 1 : r->dc.nc;
    r->names = a->single_cls && r->dc.nc != 1 ? &item : r->dc.names;
    if (a->single_cls) { yolo_dataset_single_class(&r->train_set); yolo_dataset_single_class(&r->val_set); }
    printf("train: %d images, %ld boxes; val: %d images, %ld boxes; %d classes\n", r->train_set.n, r->train_set.nboxes,
           r->val_set.n, r->val_set.nboxes, r->nc);
}

/* --batch -1, the official AutoBatch: the largest batch (up to 1024, as
   its) whose memory plan fits 80% of the device's free memory, where the
   official fits a line through measured batches; the environment's
   YOLO_FREE_MEMORY (6G, ...) stands for the device's figure. A backend
   without memory of its own (the CPU) takes the official's default 16. */
static void autobatch(train_run *r) {
    train_args *a = &r->a;
    size_t free_b = 0, total = 0;
    const char *given = getenv("YOLO_FREE_MEMORY");
    if (r->dp.world > 1) die("train: --batch-size -1 (AutoBatch) is for one process, as the official's; give the total batch");
    if (given) free_b = (size_t)parse_size(given, "train", "YOLO_FREE_MEMORY");
    if (!given && (!r->be->free_memory || r->be->free_memory(&free_b, &total))) {
        printf("AutoBatch: no device memory to measure on the %s, using the default batch-size %d\n", r->be->name, a->batch);
        return;
    }
    double budget = 0.8 * free_b;
    int b = largest_batch(&r->m, &r->train_set, &r->val_set, &r->hyp, a, r->kind, a->ckpt, budget, 1024);
    size_t act, plan = b ? run_plan(&r->m, &r->train_set, &r->val_set, &r->hyp, a, r->kind, b, a->ckpt, &act) : 0;
    if (!b) {
        fprintf(stderr, "train: AutoBatch: not even batch 1%s fits 80%% of the %.2f GB free on %s%s\n", a->ckpt ? " with --ckpt" : "",
                free_b / 1e9, r->be->name, a->ckpt ? "" : " (--ckpt needs less)");
        exit(1);
    }
    printf("AutoBatch: batch-size %d for %s%s: planned %.2f GB of the %.2f GB free (80%%: %.2f GB)%s\n", b, r->be->name,
           given ? " (YOLO_FREE_MEMORY)" : "", plan / 1e9, free_b / 1e9, budget / 1e9, a->ckpt ? ", with --ckpt" : "");
    a->batch = r->share = b;
    size_t n = strlen(r->saved_args);   /* the checkpoints' flags keep it: a resumed run trains at the same batch */
    r->saved_args = (char *)yolo_xrealloc(r->saved_args, n + 32);
    snprintf(r->saved_args + n, 32, "%s--batch-size|%d", n ? "|" : "", b);
}

/* 3. the backend and the model, the memory plan (--batch -1 or
   --mem-budget choosing the batch, the latter --ckpt too), the loaders;
   1 when the run stops here (--dry-run) */
static int plan_memory(train_run *r) {
    train_args *a = &r->a;
    char err[YOLO_ERR];
    char gpu[16];   /* several processes on the GPU: each takes the one of its place on the machine */
    snprintf(gpu, sizeof gpu, "%d", r->dp.local_rank);
    int own_gpu = r->dp.world > 1 && (!a->device || !*a->device || !strcmp(a->device, "cuda"));
    r->be = yolo_backend_select(own_gpu ? gpu : a->device, err);
    if (!r->be || yolo_dp_join(&r->dp, r->be, err)) die(err);
    yolo_model *m = &r->m;
    const char *carrier = a->resume ? r->ckpt : a->weights;   /* the weights file that can carry the model */
    if (a->cfg) snprintf(r->model, sizeof r->model, "%s", a->cfg);
    else snprintf(r->model, sizeof r->model, "the model of %s", carrier);
    if (yolo_model_for_weights(m, a->cfg, carrier, r->nc, 0, err)) die(err);
    yolo_model_set_names(m, r->names);
    yolo_model_init_weights(m, (uint64_t)a->seed);
    yolo_model_precision_flags(m, r->be, a->precision, 1, 0, "train");
    m->train_pixels = yolo_loader_pixels(r->be) != 0;   /* the plan places a step's copy of them */
    const yolo_dataset *tr = &r->train_set, *va = &r->val_set;
    if (r->autobatch && !(a->mem_budget > 0)) autobatch(r);
    if (a->mem_budget > 0) {   /* choose recompute and, unless --batch is given, the batch */
        size_t act, full = run_plan(m, tr, va, &r->hyp, a, r->kind, r->share, 0, &act);
        size_t ck = run_plan(m, tr, va, &r->hyp, a, r->kind, r->share, 1, &act);
        if (full <= a->mem_budget) a->ckpt = 0;
        else if (ck <= a->mem_budget && (r->batch_given || a->ckpt)) a->ckpt = 1;
        else if (r->batch_given || ck <= a->mem_budget) {
            if (ck > a->mem_budget) {
                int b = largest_batch(m, tr, va, &r->hyp, a, r->kind, 1, a->mem_budget, 64);
                fprintf(stderr, "train: batch %d needs %.2f GB (%.2f GB with --ckpt), over the budget of %.2f GB; %s\n", r->share,
                        full / 1e9, ck / 1e9, a->mem_budget / 1e9, b ? "" : "not even batch 1 with --ckpt fits");
                if (b) fprintf(stderr, "train: batch %d with --ckpt would fit\n", b);
                exit(1);
            }
            a->ckpt = 1;
        } else {   /* the largest batch, without recompute when that costs little batch */
            int b0 = largest_batch(m, tr, va, &r->hyp, a, r->kind, 0, a->mem_budget, 64);
            int b1 = largest_batch(m, tr, va, &r->hyp, a, r->kind, 1, a->mem_budget, 64);
            if (!b1) {
                fprintf(stderr, "train: even batch 1 with --ckpt needs %.2f GB, over the budget of %.2f GB\n",
                        run_plan(m, tr, va, &r->hyp, a, r->kind, 1, 1, &act) / 1e9, a->mem_budget / 1e9);
                exit(1);
            }
            if (b0 >= b1 / 2 && b0 > 0) { r->share = b0; a->ckpt = 0; } else { r->share = b1; a->ckpt = 1; }
        }
        a->batch = r->share * r->dp.world;
        printf("memory budget %.2f GB: batch %d%s\n", a->mem_budget / 1e9, a->batch, a->ckpt ? " with --ckpt" : "");
    }
    if (a->quad && r->share < 4) die("train: --quad collates every 4 pictures into one: each process's batch must be at least 4");
    size_t act;
    r->plan = run_plan(m, tr, va, &r->hyp, a, r->kind, r->share, a->ckpt, &act);
    size_t state = yolo_model_state_bytes(m, r->kind), spare = r->plan - act - state - YOLO_BACKEND_SCRATCH_BYTES;
    printf("memory plan%s: %.2f GB = activations, gradients and loss %.2f%s + weights, gradients, optimizer, EMA %.2f"
           " + weights kept while the EMA validates %.2f + backend scratch %.2f\n", r->dp.world > 1 ? " of each process" : "", r->plan / 1e9, act / 1e9, a->ckpt ? " (--ckpt)" : "",
           state / 1e9, spare / 1e9, YOLO_BACKEND_SCRATCH_BYTES / 1e9);
    /* on the GPU the batches go over as uint8 pixels from pinned memory: uploaded once a training step,
       read in place by validation */
    yolo_loader_init(&r->tl, tr, &r->hyp, r->share, a->img, loader_mode(a) | yolo_loader_pixels(r->be),
                     a->workers);
    if (yolo_loader_shard(&r->tl, r->dp.rank, r->dp.world)) die("train: --rect is not implemented with several processes");
    yolo_loader_init(&r->vl, va, &r->hyp, val_batch(r->share), a->img, YOLO_LOADER_VAL | yolo_loader_pixels(r->be),
                     a->workers);
    yolo_loader_share(&r->vl, &r->tl);   /* validation runs between epochs: one set of batch buffers */
    yolo_loader_pin(&r->tl, r->be);      /* and the validation's with them */
    return a->dry_run;
}

/* 4. the plan reserved, the weights (fine-tuned, frozen, or resumed with
   the optimizer and EMA) */
static void prepare(train_run *r) {
    const train_args *a = &r->a;
    yolo_model *m = &r->m;
    const yolo_backend *be = r->be;
    char err[YOLO_ERR];
    if (be->reserve(r->plan)) { fprintf(stderr, "train: cannot reserve the %.2f GB of the plan on the device\n", r->plan / 1e9); exit(1); }
    yolo_model_use_backend(m, be);
    if (a->sync_bn && r->dp.world > 1) yolo_dp_sync_bn(&r->dp, m);
    printf("convolutions in %s on %s\n", yolo_precision_name(m->precision), be->name);
    if (a->weights) {   /* fine-tuning: what matches by name and shape */
        int n;
        if (yolo_transfer_weights(m, a->weights, &n, err)) die(err);
        printf("Transferred %d/%d items from %s\n", n, m->nparams, a->weights);
    }
    if (a->freeze.n && (a->freeze.n > 1 || a->freeze.v[0] > 0)) {
        int n = yolo_model_freeze(m, a->freeze.v, a->freeze.n);
        char layers[256] = "";
        if (a->freeze.n == 1) snprintf(layers, sizeof layers, "0-%d", a->freeze.v[0] - 1);
        for (int k = 0, o = 0; a->freeze.n > 1 && k < a->freeze.n; k++) o += snprintf(layers + o, sizeof layers - o, "%s%d", k ? " " : "", a->freeze.v[k]);
        printf("freezing %d tensors of layers %s\n", n, layers);
    }
    if (yolo_dataset_cache(&r->train_set, r->cache, a->img, 1, err) || yolo_dataset_cache(&r->val_set, r->cache, a->img, 0, err)) die(err);

    /* the recipe: nominal batch 64, weight decay scaled to it */
    r->accumulate = (int)nearbyint(64.0 / a->batch);
    if (r->accumulate < 1) r->accumulate = 1;
    yolo_optim_init(&r->opt, m, r->kind, r->hyp.lr0, r->hyp.momentum, r->hyp.weight_decay * a->batch * r->accumulate / 64);
    yolo_ema_init(&r->ema, m);
    if (!a->resume) yolo_model_round_half(m);   /* as the official fresh run: model.half().float(), after its EMA is made */
    yolo_loss_scaler_init(&r->scaler, m->precision);
    if (r->loss_scale > 0) { r->scaler.scale = r->loss_scale; r->scaler.good = r->scale_good; }
    r->hold = (yolo_real *)be->alloc(m->nvalues * sizeof(yolo_real));
    if (a->resume) {
        yolo_safetensors st;
        if (yolo_checkpoint_load(r->ckpt, m, &r->ema, &r->opt, &st, err)) die(err);
        yolo_st_free(&st);
        r->ema.updates = r->ema_updates; r->opt.step = r->optim_steps;
        printf("resuming %s from epoch %d\n", r->ckpt, r->start_epoch);
    }
}

/* the run's folder (a resumed run's own), its settings and results.csv */
static void write_run(train_run *r) {
    const train_args *a = &r->a;
    char err[YOLO_ERR];
    if (!a->resume && yolo_run_dir(a->project, a->name, a->exist_ok, r->save_dir, sizeof r->save_dir, err)) { fprintf(stderr, "train: %s\n", err); exit(1); }
    snprintf(r->wdir, sizeof r->wdir, "%s/weights", r->save_dir);
    if (yolo_mkdirs(r->wdir)) { fprintf(stderr, "train: %s: cannot create (%s)\n", r->wdir, strerror(errno)); exit(1); }
    r->failed += save_settings(r->save_dir, a, r->saved_hyp, r->model);
    char picture[1300];
    if (!a->noplots && !a->resume) {   /* as the official plot_labels */
        snprintf(picture, sizeof picture, "%s/labels.jpg", r->save_dir);
        r->failed += yolo_plot_labels(&r->train_set, r->nc, r->m.names, picture) != 0;
        snprintf(picture, sizeof picture, "%s/labels_correlogram.jpg", r->save_dir);
        r->failed += yolo_plot_correlogram(&r->train_set, picture) != 0;
    }
    snprintf(r->last, sizeof r->last, "%s/last.safetensors", r->wdir);
    snprintf(r->best, sizeof r->best, "%s/best.safetensors", r->wdir);
    snprintf(r->csv, sizeof r->csv, "%s/results.csv", r->save_dir);
    if (a->resume && exists(r->csv)) {   /* rows of epochs after the checkpoint's (an interrupted run's) go */
        FILE *f = fopen(r->csv, "r");
        char *keep = (char *)calloc(1, 1 << 20), line[1024];
        size_t n = 0;
        for (int row = 0; f && fgets(line, sizeof line, f); row++)
            if ((row == 0 || strtol(line, NULL, 10) < r->start_epoch) && n + strlen(line) < (1 << 20)) { strcpy(keep + n, line); n += strlen(line); }
        if (f) fclose(f);
        if (!(f = yolo_create_file(r->csv, "w")) || (fputs(keep, f), yolo_close_written(f, r->csv))) exit(1);
        free(keep);
    } else {
        FILE *f = yolo_create_file(r->csv, "w");
        if (!f) exit(1);
        const char *cols[] = { "epoch", "train/box_loss", "train/cls_loss", "train/dfl_loss", "metrics/precision",
                               "metrics/recall", "metrics/mAP_0.5", "metrics/mAP_0.5:0.95", "val/box_loss",
                               "val/cls_loss", "val/dfl_loss", "x/lr0", "x/lr1", "x/lr2", "time/epoch_s", "time/data_wait" };
        for (int k = 0; k < 16; k++) fprintf(f, "%20s%s", cols[k], k < 15 ? "," : "\n");
        if (yolo_close_written(f, r->csv)) exit(1);
    }
}

/* 5. the run's folder, its settings and results.csv (written by process 0
   alone); the learning-rate schedule */
static void open_run(train_run *r) {
    const train_args *a = &r->a;
    if (r->dp.rank == 0) write_run(r);
    printf("%s on %s, %s, batch %d", r->model, r->be->name, a->optimizer, a->batch);
    if (r->dp.world > 1) printf(" (%d processes of %d)", r->dp.world, r->share);
    printf(" (accumulating to 64 by %d), img %d, %d epochs; results in %s\n", r->accumulate, a->img, a->epochs, r->save_dir);
    if (r->tl.nbatch == 0) die("train: --quad needs at least 4 training pictures");   /* the only way to have no batch */
    yolo_schedule_init(&r->sched, &r->hyp, a->epochs, a->batch, r->tl.nbatch, r->lr_shape);
    yolo_schedule_start(&r->sched, &r->opt, r->start_epoch);
    memset(&r->L, 0, sizeof r->L);
    r->maps = (double *)yolo_xcalloc(r->nc, sizeof(double));
    r->image_weights = (double *)yolo_xcalloc(r->train_set.n, sizeof(double));
}

/* 6. one epoch: forward, loss, backward on every batch, an optimizer step
   (clipped, then the EMA) every `accumulate` batches; the progress bar */
static void train_epoch(train_run *r, int epoch, epoch_log *log) {
    const train_args *a = &r->a;
    yolo_model *m = &r->m;
    yolo_loader *tl = &r->tl;
    long nb = tl->nbatch;
    tl->mosaic = !(a->close_mosaic && epoch >= a->epochs - a->close_mosaic);
    if (a->image_weights) {   /* this epoch's pictures drawn by their classes' weights (the last validation's mAPs) */
        yolo_image_weights(&r->train_set, r->nc, r->maps, r->image_weights);
        tl->image_weights = r->image_weights;
    }
    memset(log, 0, sizeof *log);
    double t0 = yolo_now();
    int nbatch = 0, instances = 0, images = 0;
    tl->wait = 0;
    yolo_zero_grads(m);
    yolo_loader_start(tl, epoch, (uint64_t)a->seed);
    yolo_progress bar;
    yolo_progress_start(&bar, stdout, nb);
    char ep[32], picture[1300];
    snprintf(ep, sizeof ep, "%d/%d", epoch, a->epochs - 1);
    printf("\n%11s %10s %10s %10s %10s %10s %10s\n", "Epoch", "GPU_mem", "box_loss", "cls_loss", "dfl_loss", "Instances", "Size");
    for (yolo_batch *bt; (bt = yolo_loader_next(tl));) {
        long ni = bt->index + nb * epoch;
        int acc = yolo_schedule_batch(&r->sched, &r->opt, epoch, ni);
        if (!a->noplots && ni < 3 && r->dp.rank == 0) {   /* the first mosaics, as the official (process 0's share) */
            snprintf(picture, sizeof picture, "%s/train_batch%ld.jpg", r->save_dir, ni);
            r->failed += yolo_plot_batch(picture, yolo_batch_images(bt), bt->B, bt->H, bt->W, bt->targets, bt->nt, m->names) != 0;
        }
        yolo_set_input_batch(m, bt, 0, bt->B);
        yolo_forward(m, 1);
        /* differentiated as the official's: the loss times the processes (DDP then averages the gradients,
           where ours sums them), times 4 with --quad (its collate_fn4's loss), times the loss scaler's scale */
        r->L.scale = r->scaler.scale * r->dp.world * (a->quad ? 4 : 1);
        double loss = yolo_loss_compute(m, &r->L, bt->targets, bt->nt, 0);
        if (!isfinite(loss)) {   /* diverged: stop before anything is saved, the last checkpoint stays */
            fprintf(stderr, "train: epoch %d, batch %d: the loss is %g, stopping (the checkpoints of the epochs before are kept)\n", epoch, bt->index, loss);
            exit(1);
        }
        int step = ni - r->last_step >= acc;   /* this batch ends an accumulation: an optimizer step follows */
        if (step) yolo_dp_overlap(&r->dp, m);   /* its backward starts summing the gradients over the processes */
        yolo_backward(m);
        if (step) {   /* optimizer step: the processes' gradients summed, unscaled, clipped at norm 10, then EMA */
            yolo_dp_sum_grads(&r->dp, m);
            double norm;   /* of the gradient with the scaler's and the processes' factors out (--quad's 4 stays) */
            r->opt.grad_scale = yolo_grad_clip_scale(m, 1 / (r->scaler.scale * r->dp.world), 10.0, &norm);
            int finite = isfinite(norm);
            if (finite) yolo_optim_step(&r->opt, m);
            /* in half an overflow is the loss scaler's business: the official's scaler.step skips the
               step, its ema.update runs all the same, scaler.update halves the scale */
            if (finite || r->scaler.on) yolo_ema_update(&r->ema, m);
            if (!finite && !r->scaler.on) fprintf(stderr, "warning: non-finite gradient at batch %ld, step skipped\n", ni);
            yolo_loss_scaler_update(&r->scaler, finite);
            yolo_zero_grads(m);
            r->last_step = ni;
        }
        for (int k = 0; k < 3; k++) log->mloss[k] = (log->mloss[k] * nbatch + r->L.items[k]) / (nbatch + 1);
        /* the official x/lr0..2: its parameter groups are biases, weights, BN weights */
        log->lr[0] = r->opt.lr[YOLO_P_BIAS]; log->lr[1] = r->opt.lr[YOLO_P_WEIGHT]; log->lr[2] = r->opt.lr[YOLO_P_BN_WEIGHT];
        nbatch++; instances = bt->nt; images += bt->B * r->dp.world;
        /* the official bar's columns (process 0's losses), and ours: images a second (all processes'), the share of
           time spent waiting for data */
        size_t in_use = 0, peak = 0;
        if (nbatch == nb) r->be->sync();
        r->be->memory(&in_use, &peak);
        double spent = yolo_now() - t0;
        char left[160], right[64];
        snprintf(left, sizeof left, "%11s %9.3gG %10.4g %10.4g %10.4g %10d %10d", ep, peak / 1e9, log->mloss[0], log->mloss[1],
                 log->mloss[2], instances, bt->W);
        snprintf(right, sizeof right, "%.1f img/s, data wait %.0f%%", images / spent, 100 * tl->wait / spent);
        yolo_progress_show(&bar, nbatch, left, right);
    }
    if (yolo_loader_error(tl)) die(yolo_loader_error(tl));
    yolo_loader_stop(tl);
    yolo_schedule_epoch_end(&r->sched, &r->opt, epoch);
    r->be->sync();
    log->seconds = yolo_now() - t0;
    log->wait = tl->wait;
    r->waited += tl->wait; r->trained += log->seconds;
}

/* a run whose weights or EMA are no longer finite stops before it
   validates or saves anything: the checkpoints it found stay as they were */
static void check_finite(const train_run *r, int epoch) {
    char err[YOLO_ERR];
    if (yolo_check_finite(&r->m, r->m.values, "the weights", err) || yolo_check_finite(&r->m, r->ema.values, "the EMA weights", err)) {
        fprintf(stderr, "train: epoch %d: %s; stopping, the checkpoints of the epochs before are kept\n", epoch, err);
        exit(1);
    }
}

/* 7. validation with the EMA weights (the trained ones put back after).
   A run in bf16 or half validates in half, as the official's
   mixed-precision run does (validate.run(..., half=amp)), and like it
   leaves the EMA rounded to half: its val turns the EMA model to half and
   back to float. */
static void validate_ema(train_run *r, yolo_metrics *mt) {
    yolo_model *m = &r->m;
    char err[YOLO_ERR];
    yolo_precision trained_in = m->precision;
    r->be->copy(r->hold, m->values, m->nvalues * sizeof(yolo_real));
    r->be->copy(m->values, r->ema.values, m->nvalues * sizeof(yolo_real));
    if (trained_in != YOLO_FP32) {
        m->precision = YOLO_FP16;
        yolo_model_round_half(m);
        r->be->copy(r->ema.values, m->values, m->nvalues * sizeof(yolo_real));
    }
    yolo_model_fuse(m);
    yolo_eval ev;
    memset(&ev, 0, sizeof ev);
    yolo_val_progress vp;
    yolo_val_progress_start(&vp, r->val_set.n, NULL, NULL);
    if (yolo_validate(m, &r->vl, r->share, 0.001f, 0.7f, 300, r->a.single_cls, &ev, NULL, yolo_val_progress_hook, &vp, err)) die(err);
    yolo_metrics_compute(&ev, r->nc, mt);
    yolo_metrics_print(mt, &ev, NULL, 0);
    for (int c = 0; c < r->nc; c++) r->maps[c] = mt->nt[c] ? mt->ap[c] : mt->map;   /* the official maps: a class without labels gets the mean */
    yolo_eval_free(&ev);
    m->precision = trained_in;
    r->be->copy(m->values, r->hold, m->nvalues * sizeof(yolo_real));
}

/* 8. the epoch's row of results.csv; its checkpoints, atomically: last
   every epoch, best when fitness improves (with --nosave only the final
   ones), epochN every --save-period epochs */
static void save_epoch(train_run *r, int epoch, const epoch_log *log, const yolo_metrics *mt, int is_best, int final) {
    const train_args *a = &r->a;
    char err[YOLO_ERR];
    FILE *f = yolo_create_file(r->csv, "a");
    if (!f) r->failed++;
    else {
        /* the official columns and format (the val losses zero, as train_dual.py writes them: its
           validation computes none), then ours */
        double row[16] = { epoch, log->mloss[0], log->mloss[1], log->mloss[2], mt->p, mt->r, mt->map50, mt->map, 0, 0, 0,
                           log->lr[0], log->lr[1], log->lr[2], log->epoch_seconds, log->wait / log->seconds };
        for (int k = 0; k < 16; k++) fprintf(f, "%20.5g%s", row[k], k < 15 ? "," : "\n");
        r->failed += yolo_close_written(f, r->csv) != 0;
    }
    if (a->nosave && !final) return;
    char e_s[32], be_s[32], bf_s[64], up_s[32], st_s[32], ls_s[32], sc_s[32], sg_s[32];
    snprintf(e_s, sizeof e_s, "%d", epoch);
    snprintf(be_s, sizeof be_s, "%d", r->best_epoch);
    snprintf(bf_s, sizeof bf_s, "%.9g", r->best_fitness);
    snprintf(up_s, sizeof up_s, "%ld", r->ema.updates);
    snprintf(st_s, sizeof st_s, "%ld", r->opt.step);
    snprintf(ls_s, sizeof ls_s, "%ld", r->last_step);
    snprintf(sc_s, sizeof sc_s, "%.17g", r->scaler.scale);
    snprintf(sg_s, sizeof sg_s, "%ld", r->scaler.good);
    const char *kv[] = { "format", "yolov9.c training checkpoint", "epoch", e_s, "best_epoch", be_s, "best_fitness", bf_s,
                         "ema_updates", up_s, "optim_steps", st_s, "last_step", ls_s, "loss_scale", sc_s, "loss_scale_good", sg_s, "optimizer", a->optimizer,
                         "args", r->saved_args, "hyp", r->saved_hyp, NULL };
    if (yolo_checkpoint_save(r->last, &r->m, &r->ema, &r->opt, kv, err)) die(err);
    if (is_best && yolo_checkpoint_save(r->best, &r->m, &r->ema, &r->opt, kv, err)) die(err);
    char period[1200];
    snprintf(period, sizeof period, "%s/epoch%d.safetensors", r->wdir, epoch);
    if (a->save_period > 0 && epoch % a->save_period == 0 && yolo_checkpoint_save(period, &r->m, &r->ema, &r->opt, kv, err)) die(err);
}

/* "a, b, weights/c": the files under dir (prefix: the folder's name
   before them), sorted by name, appended to out at o; the new length */
static size_t list_files(const char *dir, const char *prefix, char *out, size_t cap, size_t o) {
    struct dirent **e;
    int n = scandir(dir, &e, NULL, alphasort);
    for (int i = 0; i < n; i++) {
        char p[2048], name[1100];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", dir, e[i]->d_name);
        snprintf(name, sizeof name, "%s%s", prefix, e[i]->d_name);
        if (e[i]->d_name[0] != '.' && !stat(p, &st)) {
            if (S_ISDIR(st.st_mode)) { strcat(name, "/"); o = list_files(p, name, out, cap, o); }
            else if (o < cap) o += snprintf(out + o, cap - o, "%s%s", o ? ", " : "", name);
        }
        free(e[i]);
    }
    if (n > 0) free(e);
    return o;
}

/* 9. the end: last and best stripped to their EMA weights (what val and
   detect use), best validated class by class, the plots */
static void finish(train_run *r, int epochs_run, double run_t0) {
    const train_args *a = &r->a;
    yolo_model *m = &r->m;
    char err[YOLO_ERR], picture[1300];
    printf("\n%d epochs completed in %.3f hours.\n", epochs_run, (yolo_now() - run_t0) / 3600);
    printf("Data: the loader made %ld training samples at %.1f samples/s (%d workers); training waited for data %.1f%% of its %.1f s\n",
           r->tl.built, yolo_loader_rate(&r->tl), a->workers, r->trained > 0 ? 100 * r->waited / r->trained : 0, r->trained);
    const char *files[2] = { r->last, r->best };
    for (int k = 0; k < 2; k++) {
        if (!exists(files[k])) continue;
        if (strip_checkpoint(files[k], m, &r->ema, &r->opt, err)) die(err);
        struct stat st;
        stat(files[k], &st);
        printf("Optimizer stripped from %s, %.1fMB\n", files[k], st.st_size / 1e6);
    }
    if (exists(r->best)) {
        printf("\nValidating %s...\n", r->best);
        if (yolo_load_weights(m, r->best, err)) die(err);
        /* in half, as the official's attempt_load(best).half(), where the backend has it (and where a bf16 or half
           run's epochs validated in half: the CPU twin's) */
        if (!yolo_model_half(m) && m->precision != YOLO_FP32) m->precision = YOLO_FP16;
        yolo_model_fuse(m);
        yolo_eval ev;
        yolo_metrics mt;
        yolo_val_progress vp;
        yolo_val_plots plots;
        memset(&ev, 0, sizeof ev);
        if (!a->noplots) yolo_val_plots_start(&plots, &r->val_set, r->nc, val_batch(r->share), NULL, NULL);
        yolo_val_progress_start(&vp, r->val_set.n, a->noplots ? NULL : yolo_val_plots_hook, &plots);
        if (yolo_validate(m, &r->vl, r->share, 0.001f, 0.7f, 300, a->single_cls, &ev, NULL, yolo_val_progress_hook, &vp, err)) die(err);
        yolo_metrics_compute(&ev, r->nc, &mt);
        if (!a->noplots) r->failed += yolo_val_plots_save(&plots, &mt, m->names, r->save_dir) != 0;
        yolo_metrics_print(&mt, &ev, m->names, 1);
        yolo_metrics_free(&mt);
        yolo_eval_free(&ev);
    }
    snprintf(picture, sizeof picture, "%s/results.png", r->save_dir);
    if (!a->noplots) r->failed += yolo_plot_results(r->csv, picture) != 0;
    printf("Best epoch %d (fitness %.4g)\n", r->best_epoch, r->best_fitness);
    if (r->failed) { fprintf(stderr, "train: %d files could not be written to %s (named above)\n", r->failed, r->save_dir); return; }
    char list[8192] = "";
    list_files(r->save_dir, "", list, sizeof list, 0);
    printf("Results saved to %s: %s\n", r->save_dir, list);
}

static void free_run(train_run *r) {
    yolo_loss_free(&r->L);
    free(r->saved_args);
    free(r->maps); free(r->image_weights);
    r->be->release(r->hold);
    yolo_ema_free(&r->ema);
    yolo_optim_free(&r->opt);
    yolo_loader_free(&r->tl); yolo_loader_free(&r->vl);
    yolo_dataset_free(&r->train_set); yolo_dataset_free(&r->val_set);
    yolo_data_free(&r->dc);
    yolo_model_free(&r->m);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);   /* progress lines appear as they are made */
    static train_run r;   /* (large: the paths and the saved flags) */
    char err[YOLO_ERR] = "";
    if (yolo_dp_start(&r.dp, err)) die(err);
    if (r.dp.rank > 0 && !freopen("/dev/null", "w", stdout)) die("train: cannot silence the output of a process other than 0");
    read_args(&r, argc, argv);
    place_devices(&r, argc, argv);
    open_data(&r);
    if (plan_memory(&r)) { yolo_dp_end(&r.dp); return 0; }   /* --dry-run */
    prepare(&r);
    open_run(&r);
    double run_t0 = yolo_now(), stop_fitness = 0;
    int epochs_run = 0, stop_epoch = r.start_epoch, possible_stop = 0;
    for (int epoch = r.start_epoch; epoch < r.a.epochs; epoch++) {
        epoch_log log;
        double t0 = yolo_now();
        train_epoch(&r, epoch, &log);
        check_finite(&r, epoch);
        yolo_metrics mt;
        memset(&mt, 0, sizeof mt);
        int final_epoch = epoch == r.a.epochs - 1 || possible_stop;
        if ((!r.a.noval || final_epoch) && r.dp.rank == 0) validate_ema(&r, &mt);
        double fi = yolo_fitness(&mt);   /* process 0's, which every process takes for its decisions */
        yolo_dp_broadcast(&r.dp, &fi, sizeof fi);
        yolo_dp_broadcast(&r.dp, r.maps, r.nc * sizeof(double));
        log.epoch_seconds = yolo_now() - t0;
        if (fi > r.best_fitness) { r.best_fitness = fi; r.best_epoch = epoch; }
        /* early stopping as the official EarlyStopping: no fitness at least as good for --patience epochs */
        if (fi >= stop_fitness) { stop_fitness = fi; stop_epoch = epoch; }
        int stop = r.a.patience > 0 && epoch - stop_epoch >= r.a.patience;
        possible_stop = r.a.patience > 0 && epoch - stop_epoch >= r.a.patience - 1;
        if (r.dp.rank == 0) save_epoch(&r, epoch, &log, &mt, fi == r.best_fitness, final_epoch || stop);
        yolo_metrics_free(&mt);
        epochs_run++;
        if (stop) {
            printf("Stopping training early as no improvement observed in last %d epochs. Best results observed at epoch %d, "
                   "best model saved as best.safetensors.\nTo update EarlyStopping(patience=%d) pass a new patience value, "
                   "i.e. `./train --patience 300` or use `--patience 0` to disable EarlyStopping.\n", r.a.patience, stop_epoch, r.a.patience);
            break;
        }
        fflush(stdout);
    }
    if (r.dp.rank == 0) finish(&r, epochs_run, run_t0);
    free_run(&r);
    yolo_dp_end(&r.dp);
    return r.failed ? 1 : 0;
}
