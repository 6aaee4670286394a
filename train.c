/* train: YOLOv9 / GELAN training on a YOLO-format dataset, the recipe of
   the official train_dual.py on one GPU (or the CPU).

     ./train --cfg yolov9-s --data coco128.yaml --batch 16 --epochs 100
     ./train --resume [runs/train/exp/weights/last.safetensors]

   The official train_dual.py flags with their arity (./train --help lists
   them; those that do not apply here say so in one line), and ours:
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
    const char *cfg, *weights, *data, *hyp, *optimizer, *device, *project, *name, *resume, *cache, *precision;
    int epochs, batch, img, cos_lr, flat_cos_lr, fixed_lr, close_mosaic, min_items, workers, seed, exist_ok, noval, dry_run;
    int nosave, noplots, patience, save_period, rect, image_weights, multi_scale, single_cls, quad, ckpt;
    double label_smoothing;
    yolo_ints freeze;
    double mem_budget;       /* bytes, 0: none */
} train_args;

static const char *USAGE = "--cfg NAME|FILE.yaml --data FILE.yaml [--weights FILE] [--epochs 100] [--batch-size 16] [--img 640] ...";

/* the official train_dual.py flags (and ours) into a; a bad one ends the
   program with the usage */
static void parse_args(train_args *a, int argc, char **argv) {
    const char *budget = NULL;
    const yolo_flag flags[] = {
        { "--weights", YOLO_FLAG_STR, &a->weights, "initial weights: a .safetensors (name and shape must match to be loaded)", 0 },
        { "--cfg", YOLO_FLAG_STR, &a->cfg, "model: yolov9-t/s/m/c/e, gelan-t/s/m/c/e or a model yaml (default: the --weights' own)", 0 },
        { "--data", YOLO_FLAG_STR, &a->data, "dataset yaml", 0 },
        { "--hyp", YOLO_FLAG_STR, &a->hyp, "hyperparameters yaml (default: hyp.scratch-high)", 0 },
        { "--epochs", YOLO_FLAG_INT, &a->epochs, "total training epochs (100)", 0 },
        { "--batch-size --batch", YOLO_FLAG_INT, &a->batch, "images per batch (16)", 0 },
        { "--imgsz --img --img-size", YOLO_FLAG_INT, &a->img, "train and val image size in pixels (640)", 0 },
        { "--rect", YOLO_FLAG_BOOL, &a->rect, "rectangular training", 0 },
        { "--resume", YOLO_FLAG_OPT, &a->resume, "resume the most recent run, or the given last.safetensors", "" },
        { "--nosave", YOLO_FLAG_BOOL, &a->nosave, "only save the final checkpoint", 0 },
        { "--noval", YOLO_FLAG_BOOL, &a->noval, "only validate the final epoch", 0 },
        { "--noautoanchor", YOLO_FLAG_BOOL, NULL, "anchor-free heads have no anchors", 0 },
        { "--noplots", YOLO_FLAG_BOOL, &a->noplots, "save no plot files", 0 },
        { "--evolve", YOLO_FLAG_OPT, NULL, "hyperparameter evolution is not implemented", 0 },
        { "--bucket", YOLO_FLAG_STR, NULL, "no cloud storage", 0 },
        { "--cache", YOLO_FLAG_OPT, &a->cache, "cache decoded images: ram or disk", "ram" },
        { "--image-weights", YOLO_FLAG_BOOL, &a->image_weights, "pick training images weighted by their classes' mAP", 0 },
        { "--device", YOLO_FLAG_STR, &a->device, "cpu, cuda or a GPU index", 0 },
        { "--multi-scale", YOLO_FLAG_BOOL, &a->multi_scale, "vary the image size +/- 50%", 0 },
        { "--single-cls", YOLO_FLAG_BOOL, &a->single_cls, "train multi-class data as one class", 0 },
        { "--optimizer", YOLO_FLAG_STR, &a->optimizer, "SGD, Adam, AdamW or LION (SGD)", 0 },
        { "--sync-bn", YOLO_FLAG_BOOL, NULL, "one device: no SyncBatchNorm", 0 },
        { "--workers", YOLO_FLAG_INT, &a->workers, "loader threads (8)", 0 },
        { "--project", YOLO_FLAG_STR, &a->project, "save to PROJECT/NAME (runs/train)", 0 },
        { "--name", YOLO_FLAG_STR, &a->name, "save to PROJECT/NAME (exp)", 0 },
        { "--exist-ok", YOLO_FLAG_BOOL, &a->exist_ok, "an existing PROJECT/NAME is fine, do not increment", 0 },
        { "--quad", YOLO_FLAG_BOOL, &a->quad, "quad dataloader", 0 },
        { "--cos-lr", YOLO_FLAG_BOOL, &a->cos_lr, "cosine LR schedule", 0 },
        { "--flat-cos-lr", YOLO_FLAG_BOOL, &a->flat_cos_lr, "flat cosine LR schedule", 0 },
        { "--fixed-lr", YOLO_FLAG_BOOL, &a->fixed_lr, "fixed LR", 0 },
        { "--label-smoothing", YOLO_FLAG_FLOAT, &a->label_smoothing, "label smoothing epsilon", 0 },
        { "--patience", YOLO_FLAG_INT, &a->patience, "stop after this many epochs without improvement (100)", 0 },
        { "--freeze", YOLO_FLAG_INTS, &a->freeze, "freeze layers: the first N, or a list: 0 1 2", 0 },
        { "--save-period", YOLO_FLAG_INT, &a->save_period, "save weights/epochN every N epochs (off: -1)", 0 },
        { "--seed", YOLO_FLAG_INT, &a->seed, "global seed (0)", 0 },
        { "--local_rank", YOLO_FLAG_INT, NULL, "one device: no DDP", 0 },
        { "--min-items", YOLO_FLAG_INT, &a->min_items, "skip training pictures with fewer labels (0)", 0 },
        { "--close-mosaic", YOLO_FLAG_INT, &a->close_mosaic, "no mosaic in the last N epochs (0)", 0 },
        { "--entity", YOLO_FLAG_STR, NULL, "no W&B logging", 0 },
        { "--upload_dataset", YOLO_FLAG_OPT, NULL, "no W&B logging", 0 },
        { "--bbox_interval", YOLO_FLAG_INT, NULL, "no W&B logging", 0 },
        { "--artifact_alias", YOLO_FLAG_STR, NULL, "no W&B logging", 0 },
        { "--ckpt", YOLO_FLAG_BOOL, &a->ckpt, "ours: recompute every block's inside during backward (less memory)", 0 },
        { "--mem-budget", YOLO_FLAG_STR, &budget, "ours: 10G: choose --ckpt and, unless --batch-size is given, the batch to fit", 0 },
        { "--dry-run", YOLO_FLAG_BOOL, &a->dry_run, "ours: print the memory plan and stop", 0 },
        { "--precision", YOLO_FLAG_STR, &a->precision, "ours: the convs' products, bf16 (tensor cores; the GPU's default) or fp32", 0 },
    };
    yolo_flags_parse(flags, (int)(sizeof flags / sizeof flags[0]), argc, argv, "train", USAGE);
    if (a->precision && yolo_precision_parse(a->precision) < 0) { fprintf(stderr, "train: --precision is bf16 or fp32\n"); exit(2); }
    if (budget) {   /* 10G, 512M, 10GB, or bytes */
        char *end;
        double x = strtod(budget, &end);
        int u = toupper((unsigned char)*end);
        a->mem_budget = x * (u == 'G' ? 1e9 : u == 'M' ? 1e6 : u == 'K' ? 1e3 : 1);
        if (!(a->mem_budget > 0)) { fprintf(stderr, "train: --mem-budget wants a size such as 10G\n"); exit(2); }
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

/* The run's settings beside its results, as the official: hyp.yaml (the
   hyperparameters, "key value" pairs as yolo_hyp_format writes them) and
   opt.yaml (every option). */
static void save_settings(const char *dir, const train_args *a, const char *hyp_pairs) {
    char path[1200], key[64];
    snprintf(path, sizeof path, "%s/hyp.yaml", dir);
    FILE *f = fopen(path, "w");
    double v;
    int n;
    for (const char *s = hyp_pairs; f && sscanf(s, "%63s %lf%n", key, &v, &n) == 2; s += n) fprintf(f, "%s: %.10g\n", key, v);
    if (f) fclose(f);
    snprintf(path, sizeof path, "%s/opt.yaml", dir);
    if (!(f = fopen(path, "w"))) return;
    const char *strs[][2] = { { "weights", a->weights }, { "cfg", a->cfg }, { "data", a->data }, { "hyp", a->hyp },
                              { "optimizer", a->optimizer }, { "device", a->device }, { "project", a->project },
                              { "name", a->name }, { "cache", a->cache }, { "save_dir", dir } };
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
    fclose(f);
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
    yolo_loader_init(&vl, va, hyp, B, a->img, YOLO_LOADER_VAL, 0);
    yolo_loader_max_shape(&vl, &vH, &vW);
    yolo_loader_free(&tl); yolo_loader_free(&vl);
    m->ckpt = ckpt;
    *act = yolo_plan_run_bytes(m, a->quad ? B / 4 : B, tH, tW, dense, a->noval ? 0 : B, vH, vW);
    size_t spare = yolo_arena_bytes(m->nvalues * sizeof(yolo_real));
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
    train_args a;
    memset(&a, 0, sizeof a);
    a.optimizer = "SGD"; a.project = "runs/train"; a.name = "exp";
    a.img = 640; a.workers = 8; a.patience = 100; a.save_period = -1;
    parse_args(&a, argc - 1, argv + 1);
    int epochs_given = a.epochs;
    if (!a.epochs) a.epochs = 100;
    char err[YOLO_ERR], ckpt[1024] = "", save_dir[1024], saved_args[4096] = "", saved_hyp[2048] = "";
    yolo_safetensors meta = { 0 };
    int start_epoch = 0, best_epoch = 0;
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
        int finished = !yolo_st_find(&meta, "train.model");   /* stripped at the end of its run */
        if (!yolo_st_meta(&meta, "best_fitness", v, sizeof v)) best_fitness = atof(v);
        if (!yolo_st_meta(&meta, "best_epoch", v, sizeof v)) best_epoch = atoi(v);
        yolo_st_meta(&meta, "hyp", saved_hyp, sizeof saved_hyp);
        if (!yolo_st_meta(&meta, "ema_updates", v, sizeof v)) ema_updates = atol(v);
        if (!yolo_st_meta(&meta, "optim_steps", v, sizeof v)) optim_steps = atol(v);
        if (!yolo_st_meta(&meta, "last_step", v, sizeof v)) last_step = atol(v);
        char *av[128], *copy = strdup(saved_args);   /* the flags point into it for the whole run */
        int ac = 0;
        for (char *s = NULL, *t = strtok_r(copy, "|", &s); t && ac < 128; t = strtok_r(NULL, "|", &s)) av[ac++] = t;
        train_args r = a;
        r.resume = NULL; r.epochs = 100;
        parse_args(&r, ac, av);
        r.resume = a.resume; r.weights = NULL;
        if (epochs_given && epochs_given != r.epochs)   /* the official replaces every option by the run's own */
            fprintf(stderr, "train: --epochs %d ignored: a resumed run keeps its own arguments (--epochs %d), as the official "
                            "--resume; to train further, start a new run with --weights %s\n", epochs_given, r.epochs, ckpt);
        a = r;
        if (finished) {   /* as the official says */
            fprintf(stderr, "%s: training to %d epochs is finished, nothing to resume. Start a new training without --resume, "
                            "i.e. './train --weights %s ...'\n", ckpt, a.epochs, ckpt);
            return 1;
        }
        snprintf(save_dir, sizeof save_dir, "%s", ckpt);   /* DIR/weights/last.safetensors -> DIR */
        for (int k = 0; k < 2; k++) { char *s = strrchr(save_dir, '/'); if (s) *s = 0; else snprintf(save_dir, sizeof save_dir, "."); }
        yolo_st_free(&meta);
    } else {
        for (int i = 1, o = 0; i < argc; i++) o += snprintf(saved_args + o, sizeof saved_args - o, "%s%s", i > 1 ? "|" : "", argv[i]);
    }
    if (!a.cfg && !a.weights) die("train: --cfg or --weights is required (a model name or yaml, or weights that carry their model)");
    if (!a.data) die("train: --data is required");
    int batch_given = a.batch != 0;
    if (!batch_given) a.batch = 16;
    if (a.batch < 1 || a.epochs < 1 || a.img < 1) die("train: --batch-size, --epochs and --img must be positive");
    a.img = yolo_check_img_size(a.img, 64, "train");
    yolo_optim_kind kind;
    if (!strcmp(a.optimizer, "SGD")) kind = YOLO_SGD;
    else if (!strcmp(a.optimizer, "Adam")) kind = YOLO_ADAM;
    else if (!strcmp(a.optimizer, "AdamW")) kind = YOLO_ADAMW;
    else if (!strcmp(a.optimizer, "LION")) kind = YOLO_LION;
    else { fprintf(stderr, "train: unknown optimizer '%s' (SGD, Adam, AdamW or LION)\n", a.optimizer); return 2; }
    if (a.rect && a.image_weights) fprintf(stderr, "train: --rect is off with --image-weights, as in the official loader\n");
    if (a.label_smoothing != 0)
        fprintf(stderr, "train: --label-smoothing %g has no effect, as in the official train_dual.py (its loss never uses the smoothed targets)\n", a.label_smoothing);
    yolo_lr_shape lr_shape = a.fixed_lr ? YOLO_LR_FIXED : a.flat_cos_lr ? YOLO_LR_FLAT_COS : a.cos_lr ? YOLO_LR_COS : YOLO_LR_LINEAR;
    yolo_cache_kind cache = !a.cache ? YOLO_CACHE_NONE : !strcmp(a.cache, "disk") ? YOLO_CACHE_DISK : YOLO_CACHE_RAM;
    if (a.cache && strcmp(a.cache, "ram") && strcmp(a.cache, "disk")) die("train: --cache takes ram or disk");

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
    int nc = a.single_cls ? 1 : dc.nc;
    char *item = "item", **names = a.single_cls && dc.nc != 1 ? &item : dc.names;
    if (a.single_cls) { yolo_dataset_single_class(&train_set); yolo_dataset_single_class(&val_set); }
    printf("train: %d images, %ld boxes; val: %d images, %ld boxes; %d classes\n", train_set.n, train_set.nboxes,
           val_set.n, val_set.nboxes, nc);

    /* model, backend, memory plan */
    const yolo_backend *be = yolo_backend_select(a.device, err);
    if (!be) die(err);
    yolo_model m;
    if (yolo_model_for_weights(&m, a.cfg, a.resume ? ckpt : a.weights, nc, 0, err)) die(err);
    yolo_model_set_names(&m, names);
    yolo_model_init_weights(&m, (uint64_t)a.seed);
    if (a.mem_budget > 0) {   /* choose recompute and, unless --batch is given, the batch */
        size_t act, full = run_plan(&m, &train_set, &val_set, &hyp, &a, kind, a.batch, 0, &act);
        size_t ck = run_plan(&m, &train_set, &val_set, &hyp, &a, kind, a.batch, 1, &act);
        if (full <= a.mem_budget) a.ckpt = 0;
        else if (ck <= a.mem_budget && (batch_given || a.ckpt)) a.ckpt = 1;
        else if (batch_given || ck <= a.mem_budget) {
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
    if (a.quad && a.batch < 4) die("train: --quad collates every 4 pictures into one: the batch must be at least 4");
    size_t act, plan = run_plan(&m, &train_set, &val_set, &hyp, &a, kind, a.batch, a.ckpt, &act);
    size_t state = yolo_model_state_bytes(&m, kind), spare = plan - act - state - YOLO_BACKEND_SCRATCH_BYTES;
    printf("memory plan: %.2f GB = activations, gradients and loss %.2f%s + weights, gradients, optimizer, EMA %.2f"
           " + weights kept while the EMA validates %.2f + backend scratch %.2f\n", plan / 1e9, act / 1e9, a.ckpt ? " (--ckpt)" : "", state / 1e9,
           spare / 1e9, YOLO_BACKEND_SCRATCH_BYTES / 1e9);
    yolo_loader tl, vl;
    /* on the GPU the batches go over as uint8 pixels, read in place from pinned memory */
    yolo_loader_init(&tl, &train_set, &hyp, a.batch, a.img, loader_mode(&a) | (be != &yolo_cpu ? YOLO_LOADER_UINT8 : 0), a.workers);
    yolo_loader_pin(&tl, be);
    yolo_loader_init(&vl, &val_set, &hyp, a.batch, a.img, YOLO_LOADER_VAL, a.workers);
    yolo_loader_share(&vl, &tl);   /* validation runs between epochs: one set of batch buffers */
    if (a.dry_run) return 0;
    if (be->reserve(plan)) { fprintf(stderr, "train: cannot reserve the %.2f GB of the plan on the device\n", plan / 1e9); return 1; }
    yolo_model_use_backend(&m, be);
    m.precision = a.precision ? (yolo_precision)yolo_precision_parse(a.precision) : yolo_precision_default(be, 1);
    printf("convolutions in %s on %s\n", yolo_precision_name(m.precision), be->name);
    if (a.weights) {   /* fine-tuning: what matches by name and shape */
        int n;
        if (yolo_transfer_weights(&m, a.weights, &n, err)) die(err);
        printf("Transferred %d/%d items from %s\n", n, m.nparams, a.weights);
    }
    if (a.freeze.n && (a.freeze.n > 1 || a.freeze.v[0] > 0)) {
        int n = yolo_model_freeze(&m, a.freeze.v, a.freeze.n);
        char layers[256] = "";
        if (a.freeze.n == 1) snprintf(layers, sizeof layers, "0-%d", a.freeze.v[0] - 1);
        for (int k = 0, o = 0; a.freeze.n > 1 && k < a.freeze.n; k++) o += snprintf(layers + o, sizeof layers - o, "%s%d", k ? " " : "", a.freeze.v[k]);
        printf("freezing %d tensors of layers %s\n", n, layers);
    }
    if (yolo_dataset_cache(&train_set, cache, a.img, 1, err) || yolo_dataset_cache(&val_set, cache, a.img, 0, err)) die(err);

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
    save_settings(save_dir, &a, saved_hyp);
    char picture[1300];
    snprintf(picture, sizeof picture, "%s/labels.jpg", save_dir);
    if (!a.noplots && !a.resume) yolo_plot_labels(&train_set, nc, m.names, picture);
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
        const char *cols[] = { "epoch", "train/box_loss", "train/cls_loss", "train/dfl_loss", "metrics/precision",
                               "metrics/recall", "metrics/mAP_0.5", "metrics/mAP_0.5:0.95", "val/box_loss",
                               "val/cls_loss", "val/dfl_loss", "x/lr0", "x/lr1", "x/lr2", "time/epoch_s", "time/data_wait" };
        for (int k = 0; k < 16; k++) fprintf(f, "%20s%s", cols[k], k < 15 ? "," : "\n");
        fclose(f);
    }
    printf("%s on %s, %s, batch %d (accumulating to 64 by %d), img %d, %d epochs; results in %s\n", a.cfg, be->name,
           a.optimizer, a.batch, accumulate, a.img, a.epochs, save_dir);

    long nb = tl.nbatch;
    if (nb == 0) die("train: --quad needs at least 4 training pictures");   /* the only way to have no batch */
    yolo_schedule sched;
    yolo_schedule_init(&sched, &hyp, a.epochs, a.batch, nb, lr_shape);
    yolo_schedule_start(&sched, &opt, start_epoch);
    yolo_loss L;
    memset(&L, 0, sizeof L);
    double run_t0 = yolo_now(), stop_fitness = 0, waited = 0, trained = 0;
    int epochs_run = 0, stop_epoch = start_epoch, possible_stop = 0;
    double *maps = (double *)yolo_xcalloc(nc, sizeof(double)), *image_weights = (double *)yolo_xcalloc(train_set.n, sizeof(double));
    for (int epoch = start_epoch; epoch < a.epochs; epoch++) {
        tl.mosaic = !(a.close_mosaic && epoch >= a.epochs - a.close_mosaic);
        if (a.image_weights) {   /* this epoch's pictures drawn by their classes' weights (the last validation's mAPs) */
            yolo_image_weights(&train_set, nc, maps, image_weights);
            tl.image_weights = image_weights;
        }
        double mloss[3] = { 0, 0, 0 }, t0 = yolo_now();
        int nbatch = 0, instances = 0, images = 0;
        tl.wait = 0;
        double lr_log[3] = { 0, 0, 0 };
        yolo_zero_grads(&m);
        yolo_loader_start(&tl, epoch, (uint64_t)a.seed);
        yolo_progress bar;
        yolo_progress_start(&bar, stdout, nb);
        char ep[32];
        snprintf(ep, sizeof ep, "%d/%d", epoch, a.epochs - 1);
        printf("\n%11s %10s %10s %10s %10s %10s %10s\n", "Epoch", "GPU_mem", "box_loss", "cls_loss", "dfl_loss", "Instances", "Size");
        for (yolo_batch *bt; (bt = yolo_loader_next(&tl));) {
            long ni = bt->index + nb * epoch;
            int acc = yolo_schedule_batch(&sched, &opt, epoch, ni);
            if (!a.noplots && ni < 3) {   /* the first mosaics, as the official */
                snprintf(picture, sizeof picture, "%s/train_batch%ld.jpg", save_dir, ni);
                yolo_plot_batch(picture, yolo_batch_images(bt), bt->B, bt->H, bt->W, bt->targets, bt->nt, m.names);
            }
            yolo_set_input_batch(&m, bt);
            yolo_forward(&m, 1);
            double loss = yolo_loss_compute(&m, &L, bt->targets, bt->nt, 0);
            if (!isfinite(loss)) {   /* diverged: stop before anything is saved, the last checkpoint stays */
                fprintf(stderr, "train: epoch %d, batch %d: the loss is %g, stopping (the checkpoints of the epochs before are kept)\n", epoch, bt->index, loss);
                return 1;
            }
            yolo_backward(&m);
            if (ni - last_step >= acc) {   /* optimizer step: clip at norm 10, then EMA */
                /* --quad: the official multiplies the loss by 4, clipping the 4 times larger
                   gradient (here the gradient is scaled by 4 and clipped at 10 / 4) */
                double norm, gain = a.quad ? 4 : 1;
                opt.grad_scale = gain * yolo_grad_clip_scale(&m, 10.0 / gain, &norm);
                if (isfinite(norm)) { yolo_optim_step(&opt, &m); yolo_ema_update(&ema, &m); }
                else fprintf(stderr, "warning: non-finite gradient at batch %ld, step skipped\n", ni);
                yolo_zero_grads(&m);
                last_step = ni;
            }
            for (int k = 0; k < 3; k++) mloss[k] = (mloss[k] * nbatch + L.items[k]) / (nbatch + 1);
            /* the official x/lr0..2: its parameter groups are biases, weights, BN weights */
            lr_log[0] = opt.lr[YOLO_P_BIAS]; lr_log[1] = opt.lr[YOLO_P_WEIGHT]; lr_log[2] = opt.lr[YOLO_P_BN_WEIGHT];
            nbatch++; instances = bt->nt; images += bt->B;
            /* the official bar's columns, and ours: images a second, the share of time spent waiting for data */
            size_t in_use = 0, peak = 0;
            if (nbatch == nb) be->sync();
            be->memory(&in_use, &peak);
            double spent = yolo_now() - t0;
            char left[160], right[64];
            snprintf(left, sizeof left, "%11s %9.3gG %10.4g %10.4g %10.4g %10d %10d", ep, peak / 1e9, mloss[0], mloss[1], mloss[2],
                     instances, bt->W);
            snprintf(right, sizeof right, "%.1f img/s, data wait %.0f%%", images / spent, 100 * tl.wait / spent);
            yolo_progress_show(&bar, nbatch, left, right);
        }
        if (yolo_loader_error(&tl)) die(yolo_loader_error(&tl));
        yolo_loader_stop(&tl);
        yolo_schedule_epoch_end(&sched, &opt, epoch);
        be->sync();
        double train_s = yolo_now() - t0;
        waited += tl.wait; trained += train_s;

        /* validation with the EMA weights */
        yolo_metrics mt;
        memset(&mt, 0, sizeof mt);
        int final_epoch = epoch == a.epochs - 1 || possible_stop;
        if (!a.noval || final_epoch) {
            be->copy(hold, m.values, m.nvalues * sizeof(yolo_real));
            be->copy(m.values, ema.values, m.nvalues * sizeof(yolo_real));
            yolo_model_fuse(&m);
            yolo_eval ev;
            memset(&ev, 0, sizeof ev);
            yolo_val_progress vp;
            yolo_val_progress_start(&vp, val_set.n, NULL, NULL);
            if (yolo_validate(&m, &vl, 0.001f, 0.7f, 300, a.single_cls, &ev, NULL, yolo_val_progress_hook, &vp, err)) die(err);
            yolo_metrics_compute(&ev, nc, &mt);
            printf("%22s %10d %10ld %10.3g %10.3g %10.3g %10.3g\n", "all", ev.images, ev.nt, mt.p, mt.r, mt.map50, mt.map);
            for (int c = 0; c < nc; c++) maps[c] = mt.nt[c] ? mt.ap[c] : mt.map;   /* the official maps: a class without labels gets the mean */
            yolo_eval_free(&ev);
            be->copy(m.values, hold, m.nvalues * sizeof(yolo_real));
        }
        double fi = yolo_fitness(&mt), epoch_s = yolo_now() - t0;
        if (fi > best_fitness) { best_fitness = fi; best_epoch = epoch; }
        int is_best = fi == best_fitness;
        FILE *f = fopen(csv, "a");
        if (f) {
            /* the official columns and format (the val losses zero, as train_dual.py writes them: its
               validation computes none), then ours */
            double row[16] = { epoch, mloss[0], mloss[1], mloss[2], mt.p, mt.r, mt.map50, mt.map, 0, 0, 0,
                               lr_log[0], lr_log[1], lr_log[2], epoch_s, tl.wait / train_s };
            for (int k = 0; k < 16; k++) fprintf(f, "%20.5g%s", row[k], k < 15 ? "," : "\n");
            fclose(f);
        }
        yolo_metrics_free(&mt);
        /* early stopping as the official EarlyStopping: no fitness at least as good for --patience epochs */
        if (fi >= stop_fitness) { stop_fitness = fi; stop_epoch = epoch; }
        int stop = a.patience > 0 && epoch - stop_epoch >= a.patience;
        possible_stop = a.patience > 0 && epoch - stop_epoch >= a.patience - 1;

        /* checkpoints, atomically: last every epoch, best when fitness improves (with --nosave only the
           final ones), epochN every --save-period epochs */
        char e_s[32], be_s[32], bf_s[64], up_s[32], st_s[32], ls_s[32];
        snprintf(e_s, sizeof e_s, "%d", epoch);
        snprintf(be_s, sizeof be_s, "%d", best_epoch);
        snprintf(bf_s, sizeof bf_s, "%.9g", best_fitness);
        snprintf(up_s, sizeof up_s, "%ld", ema.updates);
        snprintf(st_s, sizeof st_s, "%ld", opt.step);
        snprintf(ls_s, sizeof ls_s, "%ld", last_step);
        const char *kv[] = { "format", "yolov9.c training checkpoint", "epoch", e_s, "best_epoch", be_s, "best_fitness", bf_s,
                             "ema_updates", up_s, "optim_steps", st_s, "last_step", ls_s, "optimizer", a.optimizer,
                             "args", saved_args, "hyp", saved_hyp, NULL };
        if (!a.nosave || final_epoch || stop) {
            if (yolo_checkpoint_save(last, &m, &ema, &opt, kv, err)) die(err);
            if (is_best && yolo_checkpoint_save(best, &m, &ema, &opt, kv, err)) die(err);
            char period[1200];
            snprintf(period, sizeof period, "%s/epoch%d.safetensors", wdir, epoch);
            if (a.save_period > 0 && epoch % a.save_period == 0 && yolo_checkpoint_save(period, &m, &ema, &opt, kv, err)) die(err);
        }
        epochs_run++;
        if (stop) {
            printf("Stopping training early as no improvement observed in last %d epochs. Best results observed at epoch %d, "
                   "best model saved as best.safetensors.\nTo update EarlyStopping(patience=%d) pass a new patience value, "
                   "i.e. `./train --patience 300` or use `--patience 0` to disable EarlyStopping.\n", a.patience, stop_epoch, a.patience);
            break;
        }
        fflush(stdout);
    }

    /* the end: last and best stripped to their EMA weights (what val and detect use), best validated
       class by class, and where everything went */
    printf("\n%d epochs completed in %.3f hours.\n", epochs_run, (yolo_now() - run_t0) / 3600);
    printf("Data: the loader made %ld training samples at %.1f samples/s (%d workers); training waited for data %.1f%% of its %.1f s\n",
           tl.built, yolo_loader_rate(&tl), a.workers, trained > 0 ? 100 * waited / trained : 0, trained);
    const char *files[2] = { last, best };
    for (int k = 0; k < 2; k++) {
        if (!exists(files[k])) continue;
        if (strip_checkpoint(files[k], &m, &ema, &opt, err)) die(err);
        struct stat st;
        stat(files[k], &st);
        printf("Optimizer stripped from %s, %.1fMB\n", files[k], st.st_size / 1e6);
    }
    if (exists(best)) {
        printf("\nValidating %s...\n", best);
        if (yolo_load_weights(&m, best, err)) die(err);
        yolo_model_fuse(&m);
        yolo_eval ev;
        yolo_metrics mt;
        yolo_val_progress vp;
        yolo_val_plots plots;
        memset(&ev, 0, sizeof ev);
        if (!a.noplots) yolo_val_plots_start(&plots, &val_set, nc, a.batch, NULL, NULL);
        yolo_val_progress_start(&vp, val_set.n, a.noplots ? NULL : yolo_val_plots_hook, &plots);
        if (yolo_validate(&m, &vl, 0.001f, 0.7f, 300, a.single_cls, &ev, NULL, yolo_val_progress_hook, &vp, err)) die(err);
        yolo_metrics_compute(&ev, nc, &mt);
        if (!a.noplots) yolo_val_plots_save(&plots, &mt, m.names, save_dir);
        printf("%22s %10d %10ld %10.3g %10.3g %10.3g %10.3g\n", "all", ev.images, ev.nt, mt.p, mt.r, mt.map50, mt.map);
        for (int c = 0; c < nc; c++)
            if (mt.nt[c]) printf("%22s %10d %10d %10.3g %10.3g %10.3g %10.3g\n", m.names ? m.names[c] : "", ev.images, mt.nt[c],
                                 mt.cp[c], mt.cr[c], mt.ap50[c], mt.ap[c]);
        yolo_metrics_free(&mt);
        yolo_eval_free(&ev);
    }
    snprintf(picture, sizeof picture, "%s/results.png", save_dir);
    if (!a.noplots) yolo_plot_results(csv, picture);
    printf("Best epoch %d (fitness %.4g); results saved to %s: results.csv%s, opt.yaml, hyp.yaml, weights/{best,last}.safetensors\n",
           best_epoch, best_fitness, save_dir, a.noplots ? "" : " and .png, labels.jpg, train_batch*.jpg, confusion_matrix.png, "
           "PR/F1/P/R_curve.png, val_batch*_labels/_pred.jpg");
    yolo_loss_free(&L);
    free(maps); free(image_weights);
    be->release(hold);
    yolo_ema_free(&ema);
    yolo_optim_free(&opt);
    yolo_loader_free(&tl); yolo_loader_free(&vl);
    yolo_dataset_free(&train_set); yolo_dataset_free(&val_set);
    yolo_data_free(&dc);
    yolo_model_free(&m);
    return 0;
}
