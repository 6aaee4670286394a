/* test_schedule: our learning-rate schedule against the official
   train_dual.py's, batch by batch (tests/golden/schedule/official.csv,
   written by tests/official_schedule.py from the official code and
   torch's LambdaLR): the rate of each parameter group, SGD's momentum and
   the accumulation count before every batch must equal the official to
   1e-9, and the optimizer must step on the same batches. Eight runs: the
   four lr shapes, AdamW, an accumulation of 13, warmup ending inside an
   epoch and on an epoch's first batch, and two resumed runs.

   The loop below is train.c's, reduced to the schedule. One difference
   from the official is kept on purpose: a resumed official run forgets
   when it last stepped (last_opt_step = -1), so its first batch steps
   whatever has accumulated; ours carries it in the checkpoint and resumes
   exactly where the uninterrupted run would be. On resumed runs the steps
   are therefore checked against our own uninterrupted run. */
#define YOLOV9_IMPLEMENTATION
#include "../yolov9.h"

typedef struct { char name[32]; int epoch, i; long ni; double lr[3], momentum; int acc, step; } row;

static int fails;
static void check(int ok, const char *what, const row *r, double ours, double theirs) {
    if (ok) return;
    if (fails++ < 20) printf("FAIL %s epoch %d batch %d (ni %ld): %s ours %.17g official %.17g\n", r->name, r->epoch, r->i, r->ni, what, ours, theirs);
}

/* one case run through our schedule from start_epoch, compared row by row */
static int run_case(const row *rows, int n, const char *opt_name, yolo_lr_shape shape, int epochs, long nb, int batch,
                    const yolo_hyp *h, int start_epoch, const int *steps_uninterrupted, int *steps_out) {
    yolo_optim o;
    memset(&o, 0, sizeof o);
    o.kind = !strcmp(opt_name, "AdamW") ? YOLO_ADAMW : YOLO_SGD;
    o.momentum = h->momentum;
    yolo_schedule s;
    yolo_schedule_init(&s, h, epochs, batch, nb, shape);
    long last_step = -1;
    int k = 0;
    if (start_epoch) {   /* ours resumes with the last step of the uninterrupted run */
        for (int j = 0; j < start_epoch * nb; j++) if (steps_uninterrupted[j]) last_step = j;
    }
    yolo_schedule_start(&s, &o, start_epoch);
    for (int epoch = start_epoch; epoch < epochs; epoch++) {
        for (long i = 0; i < nb; i++, k++) {
            long ni = i + nb * epoch;
            int acc = yolo_schedule_batch(&s, &o, epoch, ni), step = ni - last_step >= acc;
            if (step) last_step = ni;
            if (steps_out) steps_out[ni] = step;
            if (k >= n) { printf("FAIL %s: more batches than the official's %d\n", rows[0].name, n); fails++; return -1; }
            const row *r = &rows[k];
            if (r->epoch != epoch || r->i != i) { printf("FAIL %s: row %d is epoch %d batch %d, ours %d %ld\n", r->name, k, r->epoch, r->i, epoch, i); fails++; return -1; }
            double ours[3] = { o.lr[YOLO_P_BIAS], o.lr[YOLO_P_WEIGHT], o.lr[YOLO_P_BN_WEIGHT] };
            for (int g = 0; g < 3; g++) check(fabs(ours[g] - r->lr[g]) <= 1e-9, g == 0 ? "bias lr" : g == 1 ? "weight lr" : "BN weight lr", r, ours[g], r->lr[g]);
            check(fabs(o.momentum - r->momentum) <= 1e-9, "momentum", r, o.momentum, r->momentum);
            check(acc == r->acc, "accumulation", r, acc, r->acc);
            int want = start_epoch ? steps_uninterrupted[ni] : r->step;
            check(step == want, start_epoch ? "step (against our uninterrupted run)" : "step", r, step, want);
        }
        yolo_schedule_epoch_end(&s, &o, epoch);
    }
    if (k != n) { printf("FAIL %s: %d batches, the official %d\n", rows[0].name, k, n); fails++; }
    return 0;
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "tests/golden/schedule";
    char path[1024], line[512];
    snprintf(path, sizeof path, "%s/official.csv", dir);
    FILE *f = fopen(path, "r");
    if (!f) { printf("FAIL %s: cannot read\n", path); return 1; }
    int n = 0, cap = 4096;
    row *rows = (row *)malloc(cap * sizeof(row));
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#') continue;
        row *r = &rows[n];
        char *c = strchr(line, ',');
        if (!c || c - line >= 32 || n == cap) { printf("FAIL %s: malformed row %d\n", path, n); return 1; }
        memcpy(r->name, line, c - line); r->name[c - line] = 0;
        if (sscanf(c + 1, "%d,%d,%ld,%lf,%lf,%lf,%lf,%d,%d", &r->epoch, &r->i, &r->ni, &r->lr[0], &r->lr[1], &r->lr[2],
                   &r->momentum, &r->acc, &r->step) != 9) { printf("FAIL %s: malformed row %d\n", path, n); return 1; }
        n++;
    }
    fclose(f);
    yolo_hyp h;
    yolo_hyp_default(&h);   /* hyp.scratch-high: lr0 0.01, lrf 0.01, momentum 0.937, warmup 3 / 0.8 / 0.1 */
    yolo_hyp adam = h;
    adam.lr0 = 0.001;
    struct { const char *name, *opt; yolo_lr_shape shape; int epochs, nb, batch; const yolo_hyp *h; int resume; const char *of; } cases[] = {
        { "linear", "SGD", YOLO_LR_LINEAR, 12, 30, 16, &h, 0, NULL },
        { "cos", "SGD", YOLO_LR_COS, 12, 30, 16, &h, 0, NULL },
        { "flat-cos", "SGD", YOLO_LR_FLAT_COS, 16, 13, 8, &h, 0, NULL },
        { "fixed", "SGD", YOLO_LR_FIXED, 8, 40, 64, &h, 0, NULL },
        { "adamw", "AdamW", YOLO_LR_LINEAR, 10, 50, 32, &adam, 0, NULL },
        { "odd-batch", "SGD", YOLO_LR_LINEAR, 6, 40, 5, &h, 0, NULL },
        { "resume-after-warmup", "SGD", YOLO_LR_LINEAR, 12, 30, 16, &h, 6, "linear" },
        { "resume-in-warmup", "SGD", YOLO_LR_COS, 12, 30, 16, &h, 2, "cos" },
    };
    int ncase = (int)(sizeof cases / sizeof cases[0]), checked = 0;
    int *steps[8] = { 0 };
    for (int c = 0; c < ncase; c++) {
        int first = -1, count = 0;
        for (int k = 0; k < n; k++) if (!strcmp(rows[k].name, cases[c].name)) { if (first < 0) first = k; count++; }
        if (first < 0) { printf("FAIL %s: no rows in %s\n", cases[c].name, path); fails++; continue; }
        steps[c] = (int *)calloc((size_t)cases[c].epochs * cases[c].nb, sizeof(int));
        const int *base = NULL;
        for (int b = 0; cases[c].of && b < c; b++) if (!strcmp(cases[b].name, cases[c].of)) base = steps[b];
        if (cases[c].resume && !base) { printf("FAIL %s: its uninterrupted run is missing\n", cases[c].name); fails++; continue; }
        int before = fails;
        run_case(rows + first, count, cases[c].opt, cases[c].shape, cases[c].epochs, cases[c].nb, cases[c].batch,
                 cases[c].h, cases[c].resume, base, steps[c]);
        printf("%s %s: %d batches\n", fails == before ? "ok  " : "FAIL", cases[c].name, count);
        checked += count;
    }
    printf("schedule: %d batches of %d cases compared; %s\n", checked, ncase, fails ? "FAILED" : "all equal to the official within 1e-9");

    /* --precision half's loss scaler as the official AMP run's GradScaler() (torch's defaults: 2^16 at
       first; _amp_update_scale_: an overflow halves the scale and restarts the count, the 2000th finite
       step in a row doubles it): after 3 overflows, 2000 finite steps, 1999 more, an overflow and 2000
       more, the scale is 2^13 -> 2^14 -> 2^14 -> 2^13 -> 2^14 */
    yolo_loss_scaler sc;
    yolo_loss_scaler_init(&sc, YOLO_FP16);
    struct { int finite, times; double scale; } seq[] = { { 0, 3, 8192 }, { 1, 2000, 16384 }, { 1, 1999, 16384 },
                                                         { 0, 1, 8192 }, { 1, 2000, 16384 } };
    int before = fails;
    if (sc.scale != 65536) { printf("FAIL loss scaler: starts at %g, not 65536\n", sc.scale); fails++; }
    for (int k = 0; k < 5; k++) {
        for (int t = 0; t < seq[k].times; t++) yolo_loss_scaler_update(&sc, seq[k].finite);
        if (sc.scale != seq[k].scale) { printf("FAIL loss scaler: %g after part %d, not %g\n", sc.scale, k, seq[k].scale); fails++; }
    }
    yolo_loss_scaler_init(&sc, YOLO_BF16);
    yolo_loss_scaler_update(&sc, 0);
    if (sc.on || sc.scale != 1) { printf("FAIL loss scaler: bf16 scales by %g\n", sc.scale); fails++; }
    printf("%s loss scaler: torch's GradScaler defaults and update rule\n", fails == before ? "ok  " : "FAIL");
    for (int c = 0; c < ncase; c++) free(steps[c]);
    free(rows);
    return fails ? 1 : 0;
}
