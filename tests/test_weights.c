/* test_weights: safetensors round trip, and the refusals that must name
   what is wrong: a file for another model, a truncated or malformed file,
   a model yaml with an unknown module. Also the official parameter counts
   of the built-in variants. */
#define YOLOV9_IMPLEMENTATION
#include "../yolov9.h"

static int g_pass, g_fail;
static void check(int ok, const char *what, const char *detail) {
    if (ok) g_pass++; else g_fail++;
    printf("  %-58s %s%s%s\n", what, ok ? "ok" : "FAIL", detail && *detail ? "  | " : "", detail ? detail : "");
}

static void write_file(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    fwrite(data, 1, n, f);
    fclose(f);
}

int main(int argc, char **argv) {
    const char *golden = argc > 1 ? argv[1] : "tests/golden";
    char path[512], err[YOLO_ERR] = "";
    yolo_model a, b;
    printf("weights and model files\n");

    /* parameter counts of the official variants (nc 80), as the official summary */
    static const struct { const char *name; long count; } counts[] = {
        { "yolov9-t", 3717680 }, { "yolov9-s", 9804512 }, { "yolov9-m", 32878432 }, { "yolov9-c", 51182080 },
        { "yolov9-e", 69529664 }, { "gelan-t", 2442640 }, { "gelan-s", 7226208 }, { "gelan-c", 25498752 },
    };
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        char what[96], got[64];
        int rc = yolo_model_from_name(&a, counts[i].name, 80, err);
        long n = rc ? -1 : yolo_model_count_params(&a);
        snprintf(what, sizeof what, "%s has %ld parameters", counts[i].name, counts[i].count);
        snprintf(got, sizeof got, "got %ld", n);
        check(n == counts[i].count, what, n == counts[i].count ? "" : got);
        /* the model yaml every weights file carries builds the same model back: every tensor's name and shape */
        char *yaml = rc ? NULL : yolo_model_yaml(&a);
        int same = yaml && !yolo_model_from_yaml_text(&b, yaml, counts[i].name, 0, err) && b.nparams == a.nparams && b.nc == 80;
        for (int k = 0; same && k < a.nparams; k++)
            same = !strcmp(a.params[k].name, b.params[k].name) && !memcmp(a.params[k].shape, b.params[k].shape, sizeof a.params[k].shape);
        snprintf(what, sizeof what, "%s: its model yaml builds it back", counts[i].name);
        check(same, what, same ? "" : err);
        if (yaml) { yolo_model_free(&b); free(yaml); }
        if (!rc) yolo_model_free(&a);
    }

    /* round trip */
    snprintf(path, sizeof path, "%s/tiny-gelan/model.yaml", golden);
    if (yolo_model_from_yaml(&a, path, 0, err) || yolo_model_from_yaml(&b, path, 0, err)) { printf("%s\n", err); return 1; }
    yolo_model_init_weights(&a, 7);
    for (size_t i = 0; i < a.nvalues; i++) a.values[i] += (yolo_real)(0.001 * (i % 97));
    check(yolo_save_weights(&a, "/tmp/yolo_test_w.safetensors", NULL, NULL, 0, err) == 0, "save", err);
    check(yolo_load_weights(&b, "/tmp/yolo_test_w.safetensors", err) == 0, "load back", err);
    check(memcmp(a.values, b.values, a.nvalues * sizeof(yolo_real)) == 0, "values survive the round trip", "");
    /* a stripped checkpoint's half precision: IEEE binary16 bits of known
       values (numpy.float16(x).view(uint16)), then every value back as
       the nearest half, and the file half the size */
    static const struct { float x; uint16_t bits; } f16[] = {
        { 1.0f, 0x3c00 }, { -2.0f, 0xc000 }, { 0.1f, 0x2e66 }, { 1.0f / 3, 0x3555 }, { 65504.0f, 0x7bff },
        { 65520.0f, 0x7c00 }, { 5.9604645e-08f, 0x0001 }, { 6.097555e-05f, 0x03ff }, { 6.1035156e-05f, 0x0400 },
        { -0.0f, 0x8000 }, { 2.9802322e-08f, 0x0000 }, { 8.940697e-08f, 0x0002 },
    };
    int bits_ok = 1;
    char got[160] = "";
    for (size_t i = 0; i < sizeof f16 / sizeof f16[0]; i++)
        if (yolo_half_bits(f16[i].x) != f16[i].bits) {
            bits_ok = 0;
            snprintf(got, sizeof got, "%g: 0x%04x, want 0x%04x", f16[i].x, yolo_half_bits(f16[i].x), f16[i].bits);
        }
    check(bits_ok, "float to half bits, ties to even, subnormals, overflow", got);
    struct stat full, half;
    stat("/tmp/yolo_test_w.safetensors", &full);
    check(yolo_save_weights(&a, "/tmp/yolo_test_h.safetensors", NULL, NULL, 1, err) == 0, "save in half precision", err);
    check(yolo_load_weights(&b, "/tmp/yolo_test_h.safetensors", err) == 0, "load the half file back", err);
    size_t off = 0;
    for (size_t i = 0; i < a.nvalues; i++) off += b.values[i] != (yolo_real)yolo_round_half((float)a.values[i]);
    stat("/tmp/yolo_test_h.safetensors", &half);
    snprintf(got, sizeof got, "%zu of %zu values off; %lld bytes against %lld", off, a.nvalues, (long long)half.st_size,
             (long long)full.st_size);
    check(off == 0 && half.st_size < full.st_size * 0.55, "half file: each value the nearest half, half the size", got);
    /* the file describes itself: model, nc and names come back without the yaml */
    int rc;
    char *names[3] = { "cat", "dog \"big\"", "b\\rd" };
    yolo_model_set_names(&a, names);
    yolo_save_weights(&a, "/tmp/yolo_test_w.safetensors", NULL, NULL, 0, err);
    yolo_model d;
    rc = yolo_model_for_weights(&d, NULL, "/tmp/yolo_test_w.safetensors", 0, 0, err);
    int same = !rc && d.nc == 3 && d.names && !strcmp(d.names[1], names[1]) && !strcmp(d.names[2], names[2]) &&
               !yolo_load_weights(&d, "/tmp/yolo_test_w.safetensors", err) && !memcmp(a.values, d.values, a.nvalues * sizeof(yolo_real));
    check(same, "a saved file builds its model and names back, no yaml", err);
    if (!rc) yolo_model_free(&d);

    /* a file for another model: the first mismatching name */
    yolo_model c;
    snprintf(path, sizeof path, "%s/tiny-dual/model.yaml", golden);
    yolo_model_from_yaml(&c, path, 0, err);
    rc = yolo_load_weights(&c, "/tmp/yolo_test_w.safetensors", err);
    check(rc != 0 && strstr(err, "model.") != NULL, "weights of another model are refused, naming a tensor", err);
    yolo_model_free(&c);

    /* a shape mismatch: same names, other nc */
    snprintf(path, sizeof path, "%s/tiny-gelan/model.yaml", golden);
    yolo_model_from_yaml(&c, path, 7, err);
    rc = yolo_load_weights(&c, "/tmp/yolo_test_w.safetensors", err);
    check(rc != 0 && strstr(err, "has shape") != NULL, "a shape mismatch is refused with both shapes", err);
    yolo_model_free(&c);

    /* truncated and malformed files */
    FILE *f = fopen("/tmp/yolo_test_w.safetensors", "rb");
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = (unsigned char *)malloc(size);
    if (fread(buf, 1, size, f) != (size_t)size) return 1;
    fclose(f);
    write_file("/tmp/yolo_test_trunc.safetensors", buf, size / 2);
    rc = yolo_load_weights(&b, "/tmp/yolo_test_trunc.safetensors", err);
    check(rc != 0 && strstr(err, "truncated") != NULL, "a truncated file is refused", err);
    write_file("/tmp/yolo_test_trunc.safetensors", buf, 6);
    rc = yolo_load_weights(&b, "/tmp/yolo_test_trunc.safetensors", err);
    check(rc != 0, "a 6-byte file is refused", err);
    buf[9] = '[';   /* corrupt the JSON */
    write_file("/tmp/yolo_test_bad.safetensors", buf, size);
    rc = yolo_load_weights(&b, "/tmp/yolo_test_bad.safetensors", err);
    check(rc != 0 && strstr(err, "malformed") != NULL, "a malformed header is refused", err);
    free(buf);

    yolo_model_free(&a);
    /* model yaml errors name the file and line */
    const char *bad = "nc: 3\nbackbone:\n  [[-1, 1, Conv, [8, 3, 2]],\n   [-1, 1, FancyBlock, [8]],\n  ]\nhead:\n  [[[0, 1, 1], 1, DDetect, [nc]]]\n";
    write_file("/tmp/yolo_test_bad.yaml", bad, strlen(bad));
    rc = yolo_model_from_yaml(&a, "/tmp/yolo_test_bad.yaml", 0, err);
    check(rc != 0 && strstr(err, "/tmp/yolo_test_bad.yaml:4: unknown module 'FancyBlock'") != NULL, "unknown module: file:line and the name", err);
    rc = yolo_model_from_name(&a, "yolov9-x", 80, err);
    check(rc != 0 && strstr(err, "yolov9-x") != NULL, "unknown model name", err);

    /* EMA: with the weights held at w = e0 + 1, after updates i ema = w - prod d_i,
       d_i = 0.9999 (1 - exp(-i / 2000)) */
    {
        yolo_ema ema;
        yolo_ema_init(&ema, &b);
        yolo_real *e0 = yolo_fetch(&b, b.values, b.nvalues);
        for (size_t i = 0; i < b.nvalues; i++) b.values[i] += 1;    /* the model moves by +1 */
        double prod = 1;
        ema.updates = 100000;   /* late in training, d near 0.9999: the average moves slowly */
        for (int k = 100001; k <= 100050; k++) { yolo_ema_update(&ema, &b); prod *= 0.9999 * (1 - exp(-k / 2000.0)); }
        double worst = 0;
        for (size_t i = 0; i < b.nvalues; i++)
            worst = fmax(worst, fabs(ema.values[i] - (b.values[i] - prod)) / (1 + fabs(b.values[i])));
        char got[64];
        snprintf(got, sizeof got, "worst relative difference %.1e", worst);
        check(worst < 1e-5 && e0[0] + 1 == b.values[0], "EMA follows ema = d ema + (1 - d) w with the official ramp", got);
        free(e0);
        yolo_ema_free(&ema);
    }
    yolo_model_free(&b);

    /* --cos-lr and --flat-cos-lr: the official one_cycle(1, 0.01, 11) and
       one_flat_cycle(1, 0.01, 11) at epochs 0..10 (evaluated by its Python
       lambdas; 11 epochs: the flat half is steps // 2 = 5); --fixed-lr: 1 */
    static const double cos11[11] = { 1, 0.97994902193917621, 0.92142049875143472, 0.82915606330291614, 0.71063043143593374,
                                      0.57544584494527617, 0.43455415505472395, 0.29936956856406627, 0.18084393669708398,
                                      0.088579501248565395, 0.030050978060823796 };
    static const double flat11[11] = { 1, 1, 1, 1, 1, 1, 0.90546341221559901, 0.65796341221559906, 0.35203658778440106,
                                       0.104536587784401, 0.010000000000000009 };
    double worst_lr = 0;
    for (int e = 0; e < 11; e++) {
        worst_lr = fmax(worst_lr, fabs(yolo_lr_factor(e, 11, 0.01, YOLO_LR_COS) - cos11[e]));
        worst_lr = fmax(worst_lr, fabs(yolo_lr_factor(e, 11, 0.01, YOLO_LR_FLAT_COS) - flat11[e]));
        worst_lr = fmax(worst_lr, fabs(yolo_lr_factor(e, 11, 0.01, YOLO_LR_FIXED) - 1));
    }
    snprintf(path, sizeof path, "worst difference %.1e", worst_lr);
    check(worst_lr < 1e-12, "--cos-lr, --flat-cos-lr, --fixed-lr factors as the official", path);
    printf("%d passed, %d failed\n", g_pass, g_fail);
    return g_fail ? 1 : 0;
}
