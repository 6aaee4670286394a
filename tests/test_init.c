/* test_init: a fresh yolov9-s (yolo_model_init_weights) against a fresh
   official one (tests/golden/init/yolov9-s.txt, made by
   tests/official_init.py from models.yolo.Model), tensor by tensor.
   Tensors that are not random (BatchNorm's weight 1, bias 0, running mean
   0 and variance 0.9, the detect biases of bias_init, the DFL's arange)
   must be equal to 1e-6. Random ones (every trained conv's weight,
   U(-b, b) with b = 1/sqrt(fan_in)) must stay within b and agree in mean,
   standard deviation, minimum and maximum with the official draw to 6
   standard errors of two independent samples of n values:
   mean: sqrt(2/n) b/sqrt(3); sd: sqrt(2 * 0.2/n) b/sqrt(3) (a uniform's
   kurtosis 1.8); extremes: 40 b/(n + 1) (b - max of n uniforms is about
   2b/(n + 1), exponentially distributed).

     ./tests/test_init [tests/golden/init] */
#define YOLOV9_IMPLEMENTATION
#include "../yolov9.h"

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "tests/golden/init";
    char path[1024], err[YOLO_ERR];
    snprintf(path, sizeof path, "%s/yolov9-s.txt", dir);
    FILE *f = fopen(path, "r");
    if (!f) { fprintf(stderr, "%s: cannot open\n", path); return 1; }
    yolo_model m;
    if (yolo_model_from_cfg(&m, "yolov9-s", 80, err)) { fprintf(stderr, "%s\n", err); return 1; }
    yolo_model_init_weights(&m, 0);
    int fail = 0, seen = 0, random = 0, line = 0;
    char name[256];
    long n;
    double b, mean, sd, mn, mx;
    while (fscanf(f, "%255s %ld %lf %lf %lf %lf %lf", name, &n, &b, &mean, &sd, &mn, &mx) == 7) {
        line++;
        yolo_param *p = yolo_model_param(&m, name);
        if (!p || (long)p->numel != n) {
            printf("  %s: %s\n", name, p ? "another size" : "missing from our model");
            fail++;
            continue;
        }
        seen++;
        const yolo_real *v = m.values + p->offset;
        double s = 0, ss = 0, lo = INFINITY, hi = -INFINITY;
        for (long i = 0; i < n; i++) { s += v[i]; lo = fmin(lo, v[i]); hi = fmax(hi, v[i]); }
        double our_mean = s / n;
        for (long i = 0; i < n; i++) ss += (v[i] - our_mean) * (v[i] - our_mean);
        double our_sd = n > 1 ? sqrt(ss / (n - 1)) : 0;
        double tol_mean, tol_sd, tol_ext;
        if (b > 0) {   /* U(-b, b) on both sides: sampling error only */
            random++;
            double sigma = b / sqrt(3.0);
            tol_mean = 6 * sigma * sqrt(2.0 / n); tol_sd = 6 * sigma * sqrt(0.4 / n); tol_ext = 40 * b / (n + 1);
            if (lo < -b * (1 + 1e-6) || hi > b * (1 + 1e-6)) { printf("  %s: values in [%g, %g], outside +-%g\n", name, lo, hi, b); fail++; continue; }
        } else {
            double scale = fmax(1, fabs(mean));
            tol_mean = tol_sd = tol_ext = 1e-6 * scale;
        }
        if (fabs(our_mean - mean) > tol_mean || fabs(our_sd - sd) > tol_sd || fabs(lo - mn) > tol_ext || fabs(hi - mx) > tol_ext) {
            printf("  %s (n %ld, b %g): ours mean %.6g sd %.6g min %.6g max %.6g, official %.6g %.6g %.6g %.6g\n", name, n, b,
                   our_mean, our_sd, lo, hi, mean, sd, mn, mx);
            fail++;
        }
    }
    fclose(f);
    if (seen != m.nparams) { printf("  %d of our %d tensors are in %s\n", seen, m.nparams, path); fail++; }
    printf("init: %d tensors of yolov9-s against the official (%d random, %d constant): %s\n", line, random, line - random,
           fail ? "FAIL" : "ok");
    yolo_model_free(&m);
    return fail != 0;
}
