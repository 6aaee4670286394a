/* Hostile input never crashes: the cases an attacker's run found, then a
   seeded mutation fuzzer over every parser, in one process built with
   AddressSanitizer and UndefinedBehaviorSanitizer (make tests/fuzz).

     ./tests/fuzz DIR [--seed S] [--inputs N | --seconds T] [surface ...]

   Surfaces: st (safetensors weights), model (model yaml, built and run
   forward), data (dataset yaml), labels (label files, a dataset opened),
   cache (labels.cache), hyp (hyp yaml, then training samples drawn with
   it), image (jpg/png/bmp decoding). Each input is a seed file mutated a
   few times (bits, bytes, tokens such as -1, 0, 1e30, nan, [[[[, numbers
   swapped, ranges cut, copied or repeated), written under DIR and given
   to the parser. An input fails the run when the parser crashes, a
   sanitizer reports, it runs past the CPU time limit (SIGPROF), or it refuses
   the input with anything but one line naming the file. The input being
   run is always in DIR/current.bin, so a crash leaves its reproducer. */
#define _GNU_SOURCE   /* memmem */
#define YOLOV9_IMPLEMENTATION
#include <time.h>
#include "../yolov9.h"
#include <signal.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <utime.h>
#include <unistd.h>
#include <stb/stb_image_write.h>

#define INPUT_SECONDS 10   /* of CPU time per input, under the sanitizers (a loaded machine is no hang) */

static const char *g_dir;
static char g_current[1300];   /* DIR/current.bin: the input being run */
static const char *g_surface = "cases";
static long g_input = -1;

static void cpu_limit(int seconds) {
    struct itimerval t = { { 0, 0 }, { seconds, 0 } };
    setitimer(ITIMER_PROF, &t, NULL);
}
static void on_alarm(int sig) {
    (void)sig;
    char msg[256];
    int n = snprintf(msg, sizeof msg, "fuzz: %s input %ld ran past %d s of CPU time (reproducer: %s/current.bin)\n", g_surface, g_input, INPUT_SECONDS, g_dir);
    if (write(1, msg, n) < 0) _exit(3);
    _exit(2);
}

/* ---- files ---------------------------------------------------------------- */

typedef struct { unsigned char *p; size_t n, cap; } buf;

static void buf_reserve(buf *b, size_t n) {
    if (n + 1 > b->cap) { b->cap = 2 * (n + 1); b->p = (unsigned char *)realloc(b->p, b->cap); }
}
static buf buf_of(const void *p, size_t n) {
    buf b = { NULL, 0, 0 };
    buf_reserve(&b, n);
    memcpy(b.p, p, n); b.n = n; b.p[n] = 0;
    return b;
}
static buf read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) { fprintf(stdout, "fuzz: cannot read seed %s\n", path); exit(1); }
    buf b = { NULL, 0, 0 };
    unsigned char tmp[65536];
    size_t got;
    while ((got = fread(tmp, 1, sizeof tmp, f)) > 0) { buf_reserve(&b, b.n + got); memcpy(b.p + b.n, tmp, got); b.n += got; }
    fclose(f);
    buf_reserve(&b, b.n);
    b.p[b.n] = 0;
    return b;
}
static void write_file(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f)) { fprintf(stdout, "fuzz: cannot write %s\n", path); exit(1); }
}
static void put(const char *name, const buf *b, char *path, size_t cap) {
    snprintf(path, cap, "%s/%s", g_dir, name);
    write_file(path, b->p, b->n);
}

/* replace the first `find` in b by `repl`; 0 when find is absent */
static int buf_replace(buf *b, const char *find, const char *repl) {
    unsigned char *at = (unsigned char *)memmem(b->p, b->n, find, strlen(find));
    if (!at) return 0;
    size_t off = at - b->p, fl = strlen(find), rl = strlen(repl);
    buf_reserve(b, b->n - fl + rl);
    memmove(b->p + off + rl, b->p + off + fl, b->n - off - fl);
    memcpy(b->p + off, repl, rl);
    b->n = b->n - fl + rl; b->p[b->n] = 0;
    return 1;
}

/* ---- mutations ------------------------------------------------------------ */

static const char *tokens[] = {
    "-1", "0", "1", "2", "-8", "3", "7", "64", "65", "1e30", "-1e30", "nan", "inf", "-inf", "1e-30",
    "100000", "2147483648", "-2147483649", "4294967296", "9223372036854775808", "18446744073709551615",
    "0.5", "[", "]", "{", "}", "[[[[[[[[", "]]]]", ",", ":", "\n", "\"", "'", "#", "|", "- ", "  ", "\t",
    "\r", "\\", "/", "../", "null", "None", "true", "Silence", "Concat", "Conv", "ADown", "AConv",
    "RepNCSPELAN4", "SPPELAN", "ELAN1", "CBLinear", "CBFuse", "DDetect", "DualDDetect", "nc", "nn.Upsample",
    "\"F16\"", "\"F64\"", "\"I64\"", "\"BF16\"", "\"dtype\"", "\"shape\"", "\"data_offsets\"", "\"__metadata__\"",
    "names:", "train:", "val:", "path:", "nc:", "download: |", "lr0:", "scale:", "images", "labels",
};
#define NTOKENS ((int)(sizeof tokens / sizeof tokens[0]))

static size_t pick(yolo_rng *r, size_t n) { return n ? (size_t)(yolo_rng_u64(r) % n) : 0; }

static void ins(buf *b, size_t at, const void *p, size_t n) {
    buf_reserve(b, b->n + n);
    memmove(b->p + at + n, b->p + at, b->n - at);
    memcpy(b->p + at, p, n);
    b->n += n; b->p[b->n] = 0;
}
static void del(buf *b, size_t at, size_t n) {
    if (at + n > b->n) n = b->n - at;
    memmove(b->p + at, b->p + at + n, b->n - at - n);
    b->n -= n; b->p[b->n] = 0;
}

/* one mutation at a place in [lo, hi) of b (the part worth hitting) */
static void mutate_once(buf *b, yolo_rng *r, size_t lo, size_t hi) {
    if (hi > b->n) hi = b->n;
    if (lo >= hi) lo = 0, hi = b->n;
    size_t at = lo + pick(r, hi - lo + 1);
    if (at > b->n) at = b->n;
    switch (pick(r, 10)) {
    case 0: if (at < b->n) b->p[at] ^= (unsigned char)(1u << pick(r, 8)); break;
    case 1: if (at < b->n) b->p[at] = (unsigned char)pick(r, 256); break;
    case 2: case 3: { const char *t = tokens[pick(r, NTOKENS)]; ins(b, at, t, strlen(t)); break; }
    case 4: {   /* a number (or word) replaced by a token */
        size_t s = at;
        while (s < b->n && !isalnum(b->p[s])) s++;
        size_t e = s;
        while (e < b->n && (isalnum(b->p[e]) || b->p[e] == '.' || b->p[e] == '-' || b->p[e] == '+')) e++;
        del(b, s, e - s);
        const char *t = tokens[pick(r, 22)];
        ins(b, s, t, strlen(t));
        break;
    }
    case 5: del(b, at, 1 + pick(r, 16)); break;
    case 6: {   /* a range copied elsewhere */
        size_t n = 1 + pick(r, 64), from = pick(r, b->n);
        if (from + n > b->n) n = b->n - from;
        unsigned char tmp[64];
        memcpy(tmp, b->p + from, n);
        ins(b, at, tmp, n);
        break;
    }
    case 7: if (pick(r, 4) == 0) { b->n = at; b->p[at] = 0; } break;   /* truncated */
    case 8: {   /* a long run: deep nesting, long lines */
        static const char runs[] = "[{a9 -\n";
        size_t n = 1 + pick(r, pick(r, 8) ? 300 : 200000);
        unsigned char *tmp = (unsigned char *)malloc(n);
        memset(tmp, runs[pick(r, sizeof runs - 1)], n);
        ins(b, at, tmp, n);
        free(tmp);
        break;
    }
    case 9: {   /* a whole line moved */
        size_t s = at;
        while (s > 0 && b->p[s - 1] != '\n') s--;
        size_t e = at;
        while (e < b->n && b->p[e] != '\n') e++;
        if (e < b->n) e++;
        if (e - s > 4096 || e == s) break;
        unsigned char *tmp = (unsigned char *)malloc(e - s);
        memcpy(tmp, b->p + s, e - s);
        size_t n = e - s;
        del(b, s, n);
        ins(b, pick(r, b->n + 1), tmp, n);
        free(tmp);
        break;
    }
    }
}

static buf mutant(const buf *seed, yolo_rng *r, size_t lo, size_t hi) {
    buf b = buf_of(seed->p, seed->n);
    int k = 1 + (int)pick(r, 4);
    for (int i = 0; i < k; i++) mutate_once(&b, r, lo, hi);
    return b;
}

/* ---- what a refusal must look like ---------------------------------------- */

static int g_failures;
static void check_refusal(int rc, const char *err, const char *must_name) {
    if (rc == 0) return;
    const char *why = !err[0] ? "an empty message" : strchr(err, '\n') ? "a message of several lines"
                    : must_name && !strstr(err, must_name) ? "a message that does not name the file" : NULL;
    if (why) { printf("fuzz: %s input %ld: %s: '%s' (reproducer: %s/current.bin)\n", g_surface, g_input, why, err, g_dir); g_failures++; }
}

/* ---- the surfaces --------------------------------------------------------- */

static yolo_model g_tiny;           /* tiny-gelan: what mutated weights are loaded into */
static yolo_dataset g_samples;      /* what mutated hyperparameters draw training samples from */
static char g_labels_root[1100], g_cache_root[1100], g_cache_path[1200];

static int run_st(const buf *b) {
    char path[1200], err[YOLO_ERR] = "";
    put("w.safetensors", b, path, sizeof path);
    int rc = yolo_load_weights(&g_tiny, path, err);
    check_refusal(rc, err, "w.safetensors");
    if (!rc) {
        yolo_safetensors st;
        char v[256];
        if (!yolo_st_read(&st, path, err)) { yolo_st_meta(&st, "format", v, sizeof v); yolo_st_free(&st); }
    }
    return rc;
}

static int run_model(const buf *b) {
    char path[1200], err[YOLO_ERR] = "";
    put("m.yaml", b, path, sizeof path);
    yolo_model m;
    int rc = yolo_model_from_yaml(&m, path, 0, err);
    check_refusal(rc, err, "m.yaml");
    if (!rc) {
        if (m.nvalues < (3u << 20)) {   /* a model small enough to run: one forward at the smallest --img */
            static yolo_real img[3 * 32 * 64];
            for (int i = 0; i < 3 * 32 * 64; i++) img[i] = (yolo_real)((i * 7919) % 256) / 255;
            yolo_set_input(&m, 1, 32, 64, img);
            yolo_forward(&m, 0);
        }
        yolo_model_free(&m);
    }
    return rc;
}

static int run_data(const buf *b) {
    char path[1200], err[YOLO_ERR] = "";
    put("data.yaml", b, path, sizeof path);
    yolo_data_cfg d;
    int rc = yolo_data_read(&d, path, err);
    check_refusal(rc, err, "data.yaml");
    if (!rc) yolo_data_free(&d);
    return rc;
}

static int open_dataset(const char *root, int nc, const char *must_name) {
    char err[YOLO_ERR] = "";
    yolo_dataset ds;
    int rc = yolo_dataset_open(&ds, root, "images", nc, 0, err);
    check_refusal(rc, err, must_name);
    if (!rc) yolo_dataset_free(&ds);
    return rc;
}

static int run_labels(const buf *b) {
    char path[1200];
    snprintf(path, sizeof path, "%s/labels/a.txt", g_labels_root);
    write_file(path, b->p, b->n);
    snprintf(path, sizeof path, "%s/labels.cache", g_labels_root);
    remove(path);
    return open_dataset(g_labels_root, 3, "a.txt");
}

/* the same pictures, sizes and labels in the same order */
static int same_dataset(const yolo_dataset *a, const yolo_dataset *b) {
    if (a->n != b->n) return 0;
    for (int i = 0; i < a->n; i++)
        if (strcmp(a->files[i], b->files[i]) || a->w0[i] != b->w0[i] || a->h0[i] != b->h0[i] || a->nlab[i] != b->nlab[i] ||
            (a->nlab[i] && memcmp(a->lab[i], b->lab[i], (size_t)a->nlab[i] * 5 * sizeof(float))))
            return 0;
    return 1;
}

/* label-cache semantics: whatever a damaged cache says (its hash of the files still matching), the dataset is the
   one its labels make (g_samples, read from them at the start) */
static int run_cache(const buf *b) {
    write_file(g_cache_path, b->p, b->n);
    char err[YOLO_ERR] = "";
    yolo_dataset ds;
    int rc = yolo_dataset_open(&ds, g_cache_root, "images", 3, 0, err);
    check_refusal(rc, err, NULL);
    if (!rc && !same_dataset(&ds, &g_samples)) {
        printf("fuzz: cache input %ld: the cache changed the dataset (%d pictures, %ld boxes; the labels make %d and %ld) "
               "(reproducer: %s/current.bin)\n", g_input, ds.n, ds.nboxes, g_samples.n, g_samples.nboxes, g_dir);
        g_failures++;
    }
    if (!rc) yolo_dataset_free(&ds);
    return rc;
}

static int run_hyp(const buf *b, yolo_rng *r) {
    char path[1200], err[YOLO_ERR] = "";
    put("hyp.yaml", b, path, sizeof path);
    yolo_hyp h;
    int rc = yolo_hyp_read(&h, path, err);
    check_refusal(rc, err, "hyp.yaml");
    if (!rc)   /* accepted: the augmentations must cope with it */
        for (int k = 0; k < 2; k++) {
            yolo_image im = { 0, 0, NULL };
            yolo_boxes bx = { 0, 0, NULL };
            int flips;
            if (yolo_train_sample(&g_samples, (int)pick(r, g_samples.n), 64, 64, 64, &h, 1, r, &im, &bx, &flips, err)) check_refusal(-1, err, NULL);
            free(im.rgb); free(bx.b);
        }
    return rc;
}

static int run_image(const buf *b, const char *ext) {
    char name[32], path[1200], err[YOLO_ERR] = "";
    snprintf(name, sizeof name, "img.%s", ext);
    put(name, b, path, sizeof path);
    yolo_image im;
    int rc = yolo_image_load(&im, path, err);
    check_refusal(rc, err, name);
    if (!rc) {
        double ratio, dw, dh;
        yolo_letterbox(&im, 64, 64, 1, &ratio, &dw, &dh);
        free(im.rgb);
    }
    return rc;
}

/* ---- dataset meaning: names, lists, sources --------------------------------- */

/* UTF-8 text, checked here on its own (not by the reader under test) */
static int utf8_ok(const char *s, size_t n) {
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    while (p < end) {
        int k = *p < 0x80 ? 0 : *p >= 0xC2 && *p < 0xE0 ? 1 : *p >= 0xE0 && *p < 0xF0 ? 2 : *p >= 0xF0 && *p < 0xF5 ? 3 : -1;
        if (k < 0 || end - p <= k) return 0;
        for (p++; k > 0; k--, p++) if ((*p & 0xC0) != 0x80) return 0;
    }
    return 1;
}

/* A strict reading of a JSON text (what Python's json or any other reader
   takes): UTF-8, no control character inside a string, only the escapes
   JSON has, nesting within bounds. 0, or -1 with *why. */
static int json_value(const char **p, const char *end, int depth, const char **why);
static void json_ws(const char **p, const char *end) { while (*p < end && strchr(" \t\n\r", **p)) (*p)++; }
static int json_string(const char **p, const char *end, const char **why) {
    for ((*p)++; *p < end && **p != '"'; (*p)++) {
        unsigned char c = (unsigned char)**p;
        if (c < 0x20) { *why = "a raw control character inside a string"; return -1; }
        if (c != '\\') continue;
        (*p)++;
        if (*p >= end || !strchr("\"\\/bfnrtu", **p)) { *why = "an escape JSON does not have"; return -1; }
        if (**p == 'u')
            for (int k = 0; k < 4; k++) if (++*p >= end || !isxdigit((unsigned char)**p)) { *why = "a \\u without 4 hex digits"; return -1; }
    }
    if (*p >= end) { *why = "a string not closed"; return -1; }
    (*p)++;
    return 0;
}
static int json_value(const char **p, const char *end, int depth, const char **why) {
    json_ws(p, end);
    if (*p >= end || depth > 32) { *why = "a value missing, or nested too deep"; return -1; }
    char open = **p;
    if (open == '"') return json_string(p, end, why);
    if (open == '{' || open == '[') {
        char close = open == '{' ? '}' : ']';
        (*p)++; json_ws(p, end);
        if (*p < end && **p == close) { (*p)++; return 0; }
        for (;;) {
            if (open == '{') {
                json_ws(p, end);
                if (*p >= end || **p != '"' || json_string(p, end, why)) { if (!*why) *why = "a key that is no string"; return -1; }
                json_ws(p, end);
                if (*p >= end || **p != ':') { *why = "no ':' after a key"; return -1; }
                (*p)++;
            }
            if (json_value(p, end, depth + 1, why)) return -1;
            json_ws(p, end);
            if (*p < end && **p == ',') { (*p)++; continue; }
            if (*p < end && **p == close) { (*p)++; return 0; }
            *why = "no ',' or closing bracket"; return -1;
        }
    }
    const char *s = *p;
    while (*p < end && (isalnum((unsigned char)**p) || strchr("+-.", **p))) (*p)++;
    if (*p == s) { *why = "a character that starts no value"; return -1; }
    return 0;
}
/* a safetensors file's header, read strictly */
static const char *strict_header(const char *path) {
    static char why[300];
    buf b = read_file(path);
    const char *msg = NULL;
    uint64_t n = 0;
    for (int i = 7; i >= 0 && b.n >= 8; i--) n = (n << 8) | b.p[i];
    const char *p = (const char *)b.p + 8, *end = p + n;
    if (b.n < 8 || n > b.n - 8) msg = "a header longer than the file";
    else if (!utf8_ok(p, (size_t)n)) msg = "a header that is not UTF-8";
    else if (json_value(&p, end, 0, &msg) == 0) { json_ws(&p, end); if (p != end) msg = "text after the header's object"; }
    if (msg) snprintf(why, sizeof why, "%s: %s", path, msg);
    free(b.p);
    return msg ? why : NULL;
}

static const char *name_pieces[] = {
    "cat", "traffic light", "a, b", "x]", "[y", "it's", "say \"hi\"", "back\\slash", "tab\there", "bell\a", "esc\x1b[0m",
    "#hash", " spaced ", "a # b", "\xc3\xbc", "\xe6\x97\xa5\xe6\x9c\xac", "\xf0\x9f\x98\x80", "\xff\xfe", "\xc3", "a;b", "|pipe",
    "}{", "--flag", "nan", "0", "key: value", "\x7f", "", "- item",
};
#define NPIECES ((int)(sizeof name_pieces / sizeof name_pieces[0]))

/* a name as a yaml quoted scalar: single quotes ('' for '), or double (\" and \\) */
static void yaml_quoted(char *out, size_t cap, const char *name, int dbl) {
    size_t o = 0;
    out[o++] = dbl ? '"' : '\'';
    for (const char *c = name; *c && o + 4 < cap; c++) {
        if (dbl && (*c == '"' || *c == '\\')) out[o++] = '\\';
        if (!dbl && *c == '\'') out[o++] = '\'';
        out[o++] = *c;
    }
    out[o++] = dbl ? '"' : '\'';
    out[o] = 0;
}

/* dataset meaning: a data yaml of names (quoted, in a flow list, a block list or a block dict) and sources (a
   flow list, quoted commas, ';', lists longer than the reader holds), written from known values. It is refused
   with one line naming it exactly when a value cannot be kept (a name not UTF-8, empty or over 255 bytes; a
   source holding ';'; sources over 4095 characters), else read back to exactly those values; the names then go
   through a weights file (its header read strictly) and come back the same */
static int run_meaning(yolo_rng *r) {
    char names[3][300], srcs[8][1200], text[16384], q[2600], path[1200], err[YOLO_ERR] = "";
    int must_refuse = 0, nsrc = 1 + (int)pick(r, 4);
    for (int i = 0; i < 3; i++) {
        names[i][0] = 0;
        for (int k = (int)pick(r, 3); k >= 0; k--) strcat(names[i], name_pieces[pick(r, NPIECES)]);
        must_refuse |= !names[i][0] || strlen(names[i]) > 255 || !utf8_ok(names[i], strlen(names[i]));
    }
    size_t total = 0;
    for (int i = 0; i < nsrc; i++) {
        size_t len = pick(r, 4) ? 1 + pick(r, 40) : 900 + pick(r, 300);
        for (size_t k = 0; k < len; k++) srcs[i][k] = "abc/._-, "[pick(r, 9)];
        srcs[i][0] = 'd';
        srcs[i][len - 1] = 'z';   /* (a yaml scalar's spaces around it are not its own) */
        if (!pick(r, 12)) srcs[i][len / 2] = ';';
        srcs[i][len] = 0;
        total += len + (i > 0);
        must_refuse |= strchr(srcs[i], ';') != NULL;
    }
    must_refuse |= total > 4095;
    size_t o = snprintf(text, sizeof text, "# a dataset's meaning\nval: v\ntrain: [");
    for (int i = 0; i < nsrc; i++) { yaml_quoted(q, sizeof q, srcs[i], (int)pick(r, 2)); o += snprintf(text + o, sizeof text - o, "%s%s", i ? ", " : "", q); }
    o += snprintf(text + o, sizeof text - o, "]\nnc: 3\nnames:");
    int style = (int)pick(r, 3);
    for (int i = 0; i < 3; i++) {
        yaml_quoted(q, sizeof q, names[i], (int)pick(r, 2));
        if (style == 0) o += snprintf(text + o, sizeof text - o, "%s%s", i ? ",\n  " : " [", q);
        else if (style == 1) o += snprintf(text + o, sizeof text - o, "\n  - %s", q);
        else o += snprintf(text + o, sizeof text - o, "\n  %d: %s", i, q);
    }
    snprintf(text + o, sizeof text - o, "%s\n", style == 0 ? "]" : "");
    buf b = buf_of(text, strlen(text));
    write_file(g_current, b.p, b.n);
    put("meaning.yaml", &b, path, sizeof path);
    free(b.p);
    yolo_data_cfg d;
    int rc = yolo_data_read(&d, path, err);
    check_refusal(rc, err, "meaning.yaml");
    const char *wrong = NULL;
    char spec[8192] = "";
    for (int i = 0; i < nsrc; i++) snprintf(spec + strlen(spec), sizeof spec - strlen(spec), "%s%s", i ? ";" : "", srcs[i]);
    if (rc && !must_refuse) wrong = "refused values it can keep";
    else if (!rc && must_refuse) wrong = "kept a value it cannot keep";
    else if (!rc && strcmp(d.train, spec)) wrong = "read other sources";
    for (int i = 0; !rc && !wrong && i < 3; i++) if (strcmp(d.names[i], names[i])) wrong = "read other names";
    if (!rc && !wrong) {   /* through a weights file and back */
        char wpath[1300];
        snprintf(wpath, sizeof wpath, "%s/names.safetensors", g_dir);
        yolo_model_set_names(&g_tiny, d.names);
        yolo_model m;
        if (yolo_save_weights(&g_tiny, wpath, NULL, NULL, 0, err)) wrong = "could not save the names";
        else if ((wrong = strict_header(wpath))) {}
        else if (yolo_model_for_weights(&m, NULL, wpath, 0, 0, err)) wrong = "could not read its own weights file";
        else {
            for (int i = 0; i < 3 && !wrong; i++) if (!m.names || strcmp(m.names[i], names[i])) wrong = "names changed in the weights file";
            yolo_model_free(&m);
        }
        yolo_model_set_names(&g_tiny, NULL);
    }
    if (wrong) { printf("fuzz: meaning input %ld: %s (%s) (reproducer: %s)\n", g_input, wrong, rc ? err : "accepted", g_current); g_failures++; }
    if (!rc) yolo_data_free(&d);
    return rc;
}

/* ---- the programs: every flag's values, a checkpoint's metadata ------------ */

#define PROGRAM_SECONDS 300   /* of wall time per run: a loaded machine is slow, a hang never ends */
static const char *g_programs;   /* the folder of train, val and detect */

/* argv run with stdout and stderr into DIR/run.out and run.err; its wait status, -1 when it ran past the time */
static int run_program(char *const *argv, buf *err_text) {
    char out[1300], errp[1300];
    snprintf(out, sizeof out, "%s/run.out", g_dir); snprintf(errp, sizeof errp, "%s/run.err", g_dir);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen(out, "w", stdout) || !freopen(errp, "w", stderr)) _exit(126);
        execv(argv[0], argv);
        _exit(127);
    }
    int status = 0;
    double t0 = yolo_now();
    while (waitpid(pid, &status, WNOHANG) == 0) {
        if (yolo_now() - t0 > PROGRAM_SECONDS) { kill(pid, SIGKILL); waitpid(pid, &status, 0); status = -1; break; }
        struct timespec ten_ms = { 0, 10000000 };
        nanosleep(&ten_ms, NULL);
    }
    if (err_text) *err_text = read_file(errp);
    return status;
}

/* a run's ending: a crash, a sanitizer's abort, a hang, or a refusal of more (or less) than one line fails */
static const char *judge_run(int status, const buf *err) {
    static char why[200];
    if (status == -1) return "ran past the time limit (a hang)";
    if (WIFSIGNALED(status)) { snprintf(why, sizeof why, "killed by signal %d (a crash or a sanitizer's report)", WTERMSIG(status)); return why; }
    if (WEXITSTATUS(status) == 0) return NULL;
    if (err->n == 0 || err->p[err->n - 1] != '\n' || memchr(err->p, '\n', err->n - 1)) return "a refusal that is not one line";
    return NULL;
}

static void write_command(const char *what, char *const *argv) {
    FILE *f = fopen(g_current, "w");
    if (!f) return;
    fprintf(f, "%s:", what);
    for (int i = 0; argv[i]; i++) fprintf(f, " '%s'", argv[i]);
    fprintf(f, "\n");
    fclose(f);
}

static const char *hostile_values[] = {
    "-1", "0", "1", "7", "2147483647", "2147483648", "-2147483649", "4294967296", "99999999999999999999", "1e30", "-1e30",
    "1e-30", "nan", "-nan", "inf", "-inf", "abc", "", " ", "0x10", "1.5", "1e3", " 3", "3 ", "+2", "-0", "1,2", "--",
};
#define NHOSTILE ((int)(sizeof hostile_values / sizeof hostile_values[0]))

/* a program's numeric flags, from its --help: "  --flag N  help" (N, X or N [N ...]) */
static int numeric_flags(const char *prog, char flags[][40], int cap) {
    char path[1300], *argv[3] = { path, (char *)"--help", NULL };
    snprintf(path, sizeof path, "%s/%s", g_programs, prog);
    buf err;
    if (run_program(argv, &err)) { free(err.p); return 0; }
    free(err.p);
    char out[1300];
    snprintf(out, sizeof out, "%s/run.out", g_dir);
    buf help = read_file(out);
    int n = 0;
    for (char *line = (char *)help.p; line && *line && n < cap; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        char flag[40], metavar[8];
        if (sscanf(line, " %39s %7s", flag, metavar) == 2 && !strncmp(flag, "--", 2) && (!strcmp(metavar, "N") || !strcmp(metavar, "X")))
            snprintf(flags[n++], 40, "%s", flag);
    }
    free(help.p);
    return n;
}

/* the command line: each program, from a command that works, with one numeric flag given a hostile value
   (out of range, huge, negative, NaN, not a number). train stops after its plan (--dry-run); val and detect run. */
static int run_cli(yolo_rng *r) {
    static const char *progs[3] = { "train", "val", "detect" };
    static char flags[3][64][40];
    static int nflags[3] = { -1, -1, -1 };
    int p = (int)pick(r, 3);
    if (nflags[p] < 0) nflags[p] = numeric_flags(progs[p], flags[p], 64);
    if (nflags[p] == 0) { printf("fuzz: cli: %s/%s --help lists no numeric flag\n", g_programs, progs[p]); g_failures++; return -1; }
    char path[1300], project[1300];
    snprintf(path, sizeof path, "%s/%s", g_programs, progs[p]);
    snprintf(project, sizeof project, "%s/runs", g_dir);
    const char *base[3][24] = {
        { "--cfg", "tests/golden/tiny-gelan/model.yaml", "--data", "tests/data/coco8/coco8.yaml", "--hyp", "tests/data/hyp-noaug.yaml",
          "--img", "64", "--batch", "8", "--epochs", "1", "--device", "cpu", "--workers", "1", "--noplots", "--dry-run", NULL },
        { "--cfg", "tests/golden/tiny-gelan/model.yaml", "--weights", "tests/golden/val-tiny/weights.safetensors", "--data",
          "tests/data/coco8/coco8.yaml", "--img", "64", "--batch", "8", "--device", "cpu", "--workers", "1", "--noplots", NULL },
        { "--cfg", "tests/golden/tiny-gelan/model.yaml", "--weights", "tests/golden/tiny-gelan/weights.safetensors", "--source",
          "tests/data/coco8/images/train2017/000000000030.jpg", "--img", "64", "--device", "cpu", "--nosave", NULL },
    };
    char *argv[40];
    int n = 0;
    argv[n++] = path;
    for (int k = 0; base[p][k]; k++) argv[n++] = (char *)base[p][k];
    argv[n++] = (char *)"--project"; argv[n++] = project; argv[n++] = (char *)"--exist-ok";
    const char *flag = flags[p][pick(r, nflags[p])];
    argv[n++] = (char *)flag;
    argv[n++] = (char *)hostile_values[pick(r, NHOSTILE)];
    if (!strcmp(flag, "--classes") || !strcmp(flag, "--imgsz") || !strcmp(flag, "--freeze")) if (pick(r, 2)) argv[n++] = (char *)hostile_values[pick(r, NHOSTILE)];
    argv[n] = NULL;
    write_command("cli", argv);
    buf err;
    int status = run_program(argv, &err);
    const char *why = judge_run(status, &err);
    if (why) { printf("fuzz: cli input %ld: %s: %.300s (reproducer: %s)\n", g_input, why, err.p, g_current); g_failures++; }
    free(err.p);
    return status == 0 ? 0 : -1;
}

/* checkpoint metadata: a real checkpoint of a 2-epoch run after its first epoch, one metadata field (every
   counter and string) given a hostile value, resumed. A refusal leaves every file of the run as it was; a run
   that goes on leaves checkpoints that load (finite, the header read strictly). */
static char g_ckpt[1300];   /* the checkpoint, made once */
static int make_checkpoint(void) {
    char path[1300], project[1300], src[1400];
    snprintf(path, sizeof path, "%s/train", g_programs);
    snprintf(project, sizeof project, "%s/ckpt-run", g_dir);
    char *argv[] = { path, (char *)"--cfg", (char *)"tests/golden/tiny-gelan/model.yaml", (char *)"--data", (char *)"tests/data/coco8/coco8.yaml",
                     (char *)"--hyp", (char *)"tests/data/hyp-noaug.yaml", (char *)"--img", (char *)"64", (char *)"--batch", (char *)"8",
                     (char *)"--epochs", (char *)"2", (char *)"--save-period", (char *)"1", (char *)"--device", (char *)"cpu",
                     (char *)"--workers", (char *)"1", (char *)"--noplots", (char *)"--noval", (char *)"--project", project,
                     (char *)"--name", (char *)"a", (char *)"--exist-ok", NULL };
    buf err;
    int status = run_program(argv, &err);
    if (status) { printf("fuzz: ckpt: the 2-epoch run to fuzz failed: %.300s\n", err.p); free(err.p); return -1; }
    free(err.p);
    snprintf(src, sizeof src, "%s/a/weights/epoch0.safetensors", project);
    snprintf(g_ckpt, sizeof g_ckpt, "%s/epoch0.safetensors", g_dir);
    buf b = read_file(src);
    write_file(g_ckpt, b.p, b.n);
    free(b.p);
    return 0;
}

/* b's __metadata__ value of key replaced by value (NULL: the key gone), JSON-escaped; the data stays in place */
static buf set_meta(const buf *b, const char *key, const char *value) {
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--) n = (n << 8) | b->p[i];
    char find[80];
    snprintf(find, sizeof find, "\"%s\":\"", key);
    const char *h = (const char *)b->p + 8, *at = (const char *)memmem(h, n, find, strlen(find));
    buf out = buf_of(b->p, b->n);
    if (!at) return out;
    const char *v = at + strlen(find), *e = v;
    while (*e != '"') e += *e == '\\' ? 2 : 1;
    if (!value) { v = e[1] == ',' ? at : at - (at[-1] == ','); e = e[1] == ',' ? e + 1 : e; }   /* the key, with one comma */
    char *esc = (char *)malloc(6 * (value ? strlen(value) : 0) + 1);
    size_t o = 0;
    if (value) yolo_json_put(esc, &o, value);
    esc[o] = 0;
    /* header: up to the value (or the key), the new value, the rest; spaces to a multiple of 8 */
    buf hd = { NULL, 0, 0 };
    const char *cut = v, *resume = value ? e : e + 1;
    buf_reserve(&hd, n + o + 16);
    memcpy(hd.p, h, cut - h); hd.n = cut - h;
    memcpy(hd.p + hd.n, esc, o); hd.n += o;
    size_t rest = (size_t)(h + n - resume);
    memcpy(hd.p + hd.n, resume, rest); hd.n += rest;
    while (hd.n > 0 && hd.p[hd.n - 1] == ' ') hd.n--;
    while (hd.n % 8) hd.p[hd.n++] = ' ';
    free(out.p);
    out.p = NULL; out.n = out.cap = 0;
    buf_reserve(&out, 8 + hd.n + (b->n - 8 - n));
    for (int i = 0; i < 8; i++) out.p[i] = (unsigned char)((uint64_t)hd.n >> (8 * i));
    memcpy(out.p + 8, hd.p, hd.n);
    memcpy(out.p + 8 + hd.n, b->p + 8 + n, b->n - 8 - n);
    out.n = 8 + hd.n + (b->n - 8 - n);
    free(hd.p); free(esc);
    return out;
}

/* a checkpoint as the programs must find it: its header strict, every value finite (yolo_load_weights) */
static const char *loadable(const char *path) {
    static char why[YOLO_ERR + 64];
    const char *bad = strict_header(path);
    if (bad) return bad;
    char err[YOLO_ERR];
    yolo_model m;
    if (yolo_model_for_weights(&m, NULL, path, 0, 0, err) || yolo_load_weights(&m, path, err)) {
        snprintf(why, sizeof why, "%s does not load: %s", path, err);
        return why;
    }
    yolo_model_free(&m);
    return NULL;
}

static int run_ckpt(yolo_rng *r) {
    static const char *keys[] = { "epoch", "best_epoch", "best_fitness", "ema_updates", "optim_steps", "last_step", "loss_scale",
                                  "loss_scale_good", "nc", "args", "hyp", "names", "yaml", "optimizer", "format" };
    static const char *strings[] = { "--cfg|x.yaml|--foo", "--workers|-1", "--epochs|0", "--img|2147483647", "", "|", "--weights||--data",
                                     "--batch|nan", "lr0 abc", "lr0 nan", "lr0", "a\tb\nc\x01", "[[[[", "nc: 3\nbackbone: [", "\xff",
                                     "--data|/etc", "--hyp|/nonexistent.yaml", "--epochs|2|--epochs|1" };
    if (!g_ckpt[0] && make_checkpoint()) { g_failures++; return -1; }
    const char *key = keys[pick(r, sizeof keys / sizeof keys[0])];
    const char *value = pick(r, 8) == 0 ? NULL : pick(r, 3) ? hostile_values[pick(r, NHOSTILE)] : strings[pick(r, sizeof strings / sizeof strings[0])];
    char dir[1300], last[1400], path[1300];
    snprintf(dir, sizeof dir, "%s/resume/weights", g_dir);
    yolo_mkdirs(dir);
    snprintf(last, sizeof last, "%s/last.safetensors", dir);
    buf b = read_file(g_ckpt), m = set_meta(&b, key, value);
    write_file(last, m.p, m.n);
    remove(strcat(strcpy(path, dir), "/best.safetensors"));
    snprintf(path, sizeof path, "%s/train", g_programs);
    char *argv[] = { path, (char *)"--resume", last, NULL };
    FILE *f = fopen(g_current, "w");
    if (f) { fprintf(f, "ckpt: %s = '%s' (copy of %s)\n", key, value ? value : "(removed)", g_ckpt); fclose(f); }
    buf err;
    int status = run_program(argv, &err);
    const char *why = judge_run(status, &err);
    buf after = read_file(last);
    if (!why && status && (after.n != m.n || memcmp(after.p, m.p, m.n))) why = "refused, but changed the checkpoint";
    if (!why && !status) why = loadable(last);
    if (!why && !status && !access(strcat(strcpy(path, dir), "/best.safetensors"), F_OK)) why = loadable(path);
    if (why) { printf("fuzz: ckpt input %ld: %s = '%s': %s: %.300s (reproducer: %s)\n", g_input, key, value ? value : "(removed)", why, err.p, g_current); g_failures++; }
    free(b.p); free(m.p); free(after.p); free(err.p);
    return status == 0 ? 0 : -1;
}

/* ---- the cases of the attacker's run (issue 17), each a test -------------- */

static int g_cases, g_case_failures;
static void expect(const char *what, int rc, const char *err, const char *want) {
    int ok = want ? rc != 0 && strstr(err, want) != NULL && !strchr(err, '\n') : rc == 0;
    g_cases++;
    if (!ok) g_case_failures++;
    printf("  %-58s %s  | %s\n", what, ok ? "ok  " : "FAIL", rc ? err : "accepted");
}

static int model_case(const buf *seed, const char *find, const char *repl, char *err) {
    buf b = buf_of(seed->p, seed->n);
    if (!buf_replace(&b, find, repl)) { snprintf(err, YOLO_ERR, "case not applied: '%s' not in the seed", find); free(b.p); return 0; }
    char path[1200];
    put("case.yaml", &b, path, sizeof path);
    free(b.p);
    yolo_model m;
    err[0] = 0;
    int rc = yolo_model_from_yaml(&m, path, 0, err);
    if (!rc) {
        static yolo_real img[3 * 64 * 64];
        yolo_set_input(&m, 1, 64, 64, img);
        yolo_forward(&m, 0);
        yolo_model_free(&m);
    }
    return rc;
}

static int text_case(const char *name, const char *text, char *err,
                     int (*read)(const char *path, char *err)) {
    char path[1200];
    buf b = buf_of(text, strlen(text));
    put(name, &b, path, sizeof path);
    free(b.p);
    err[0] = 0;
    return read(path, err);
}
static int read_hyp(const char *path, char *err) { yolo_hyp h; return yolo_hyp_read(&h, path, err); }
static int read_data(const char *path, char *err) { yolo_data_cfg d; int rc = yolo_data_read(&d, path, err); if (!rc) yolo_data_free(&d); return rc; }
static int read_st(const char *path, char *err) { yolo_safetensors st; int rc = yolo_st_read(&st, path, err); if (!rc) yolo_st_free(&st); return rc; }

/* a safetensors file of one header text and n data bytes */
static int st_case(const char *header, size_t ndata, int hlen_delta, char *err) {
    size_t hl = strlen(header);
    buf b = { NULL, 0, 0 };
    buf_reserve(&b, 8 + hl + ndata);
    uint64_t h = (uint64_t)((int64_t)hl + hlen_delta);
    for (int i = 0; i < 8; i++) b.p[i] = (unsigned char)(h >> (8 * i));
    memcpy(b.p + 8, header, hl);
    memset(b.p + 8 + hl, 0, ndata);
    b.n = 8 + hl + ndata;
    char path[1200];
    put("case.safetensors", &b, path, sizeof path);
    free(b.p);
    err[0] = 0;
    return read_st(path, err);
}

/* the cache's first line made to hash its text again ("yolov9.c labels 3 FILES COUNT TEXT"): an edit that only the
   reading of the entries can catch */
static void cache_rehash(buf *b) {
    unsigned char *nl = (unsigned char *)memchr(b->p, '\n', b->n);
    char *last = nl ? (char *)memrchr(b->p, ' ', nl - b->p) : NULL;
    if (!last) return;
    char hash[40];
    snprintf(hash, sizeof hash, " %llx", (unsigned long long)yolo_fnv1a(1469598103934665603ull, (const char *)nl + 1, b->n - (nl + 1 - b->p)));
    size_t head = (unsigned char *)last - b->p, tail = b->n - (nl - b->p), hl = strlen(hash);
    buf_reserve(b, head + hl + tail);
    memmove(b->p + head + hl, nl, tail);
    memcpy(b->p + head, hash, hl);
    b->n = head + hl + tail; b->p[b->n] = 0;
}

/* the cache edited (find replaced by repl; rehash: its text's hash made right again): the dataset opens, read again
   from the labels with a warning holding note, and holds exactly the two pictures with their labels */
static int cache_case(const char *find, const char *repl, int rehash, const char *note, char *err) {
    buf b = read_file(g_cache_path);
    char path[1200];
    snprintf(path, sizeof path, "%s/saved.cache", g_dir);
    write_file(path, b.p, b.n);
    int applied = buf_replace(&b, find, repl);
    if (rehash) cache_rehash(&b);
    write_file(g_cache_path, b.p, b.n);
    free(b.p);
    if (!applied) { snprintf(err, YOLO_ERR, "case not applied: '%s' not in the cache", find); return 0; }
    yolo_dataset ds;
    err[0] = 0;
    char warnings[1300];   /* stderr into a file while the dataset opens */
    snprintf(warnings, sizeof warnings, "%s/warnings.txt", g_dir);
    fflush(stderr);
    int saved = dup(2), fd = open(warnings, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) { dup2(fd, 2); close(fd); }
    int rc = yolo_dataset_open(&ds, g_cache_root, "images", 3, 0, err);
    fflush(stderr);
    dup2(saved, 2); close(saved);
    buf said = read_file(warnings);
    if (!strstr((const char *)said.p, note)) {
        if (!rc) yolo_dataset_free(&ds);
        rc = -1, snprintf(err, YOLO_ERR, "no warning holding '%s' (%.200s)", note, (const char *)said.p);
    }
    free(said.p);
    if (!rc) {
        if (ds.n != 2 || ds.nboxes != 3) rc = -1, snprintf(err, YOLO_ERR, "%d images, %ld boxes instead of 2 and 3", ds.n, ds.nboxes);
        for (int i = 0; i < ds.n && !rc; i++)
            for (int k = 0; k < ds.nlab[i]; k++) if (ds.lab[i][5 * k] < 0 || ds.lab[i][5 * k] >= 3) rc = -1, snprintf(err, YOLO_ERR, "class %g kept", ds.lab[i][5 * k]);
        yolo_dataset_free(&ds);
    }
    b = read_file(path);
    write_file(g_cache_path, b.p, b.n);   /* the good cache back for the next case */
    free(b.p);
    return rc;
}

/* the shapes of the official data/coco.yaml, in our words: a block dict of
   names, a flow list spread over lines with comments and its ']' in column
   0, a `download: |` block of script lines */
static const char *official_layout =
    "# a dataset laid out like the official coco.yaml\n"
    "path: ../somewhere  # root\n"
    "train: train.txt  # relative to path\n"
    "val: val.txt\n"
    "test: test.txt\n\n"
    "names:\n  0: cat\n  1: dog\n  2: traffic light\n\n"
    "extra_names: [\n  'a', 'b',\n  # a comment inside\n  'c'\n]\n\n"
    "download: |\n  import os\n  for x in range(3):\n    print(x)  # no key: value here\n\n  # the end\n";

/* the defaults (the official hyp.scratch-high.yaml's values) as a hyp file */
static void defaults_hyp(char *text, size_t cap) {
    yolo_hyp h;
    yolo_hyp_default(&h);
    size_t o = 0;
    for (int i = 0; i < YOLO_NHYP; i++) o += snprintf(text + o, cap - o, "%s: %.17g\n", yolo_hyp_keys[i].key, *(double *)((char *)&h + yolo_hyp_keys[i].off));
}

static void run_cases(void) {
    char err[YOLO_ERR];
    printf("the attacker's cases (issue 17):\n");
    buf y = read_file("tests/golden/tiny-gelan/model.yaml");
    const char *row0 = "[-1, 1, Conv, [8, 3, 2]]";
    static const struct { const char *what, *find, *repl, *want; } mc[] = {
        { "negative Conv width", NULL, "[-1, 1, Conv, [-8, 3, 2]]", "argument 0 is -8" },
        { "negative RepNCSPELAN4 width", "RepNCSPELAN4, [16, 16, 8, 1]", "RepNCSPELAN4, [-16, 16, 8, 1]", "argument 0 is -16" },
        { "negative ADown width", "ADown, [24]", "ADown, [-24]", "argument 0 is -24" },
        { "negative SPPELAN width", "SPPELAN, [32, 16]", "SPPELAN, [-32, 16]", "argument 0 is -32" },
        { "width_multiple -1", "width_multiple: 1.0", "width_multiple: -1", "width_multiple" },
        { "width_multiple 0", "width_multiple: 1.0", "width_multiple: 0", "width_multiple" },
        { "depth_multiple nan", "depth_multiple: 1.0", "depth_multiple: nan", "depth_multiple" },
        { "Conv width 0", NULL, "[-1, 1, Conv, [0, 3, 2]]", "0 channels" },
        { "Conv stride 0", NULL, "[-1, 1, Conv, [8, 3, 0]]", "stride 0 is not a power of two" },
        { "Conv stride -1", NULL, "[-1, 1, Conv, [8, 3, -1]]", "argument 2 is -1" },
        { "Conv stride 64", NULL, "[-1, 1, Conv, [8, 3, 64]]", "stride 64, above" },
        { "Conv kernel 0", NULL, "[-1, 1, Conv, [8, 0, 2]]", "kernel 0 is not odd" },
        { "Conv kernel -3", NULL, "[-1, 1, Conv, [8, -3, 2]]", "argument 1 is -3" },
        { "Conv kernel 1001", NULL, "[-1, 1, Conv, [8, 1001, 2]]", "kernel 1001 is not odd" },
        { "Conv width 100000", NULL, "[-1, 1, Conv, [100000, 3, 2]]", "argument 0 is 100000" },
        { "Conv width 1e30", NULL, "[-1, 1, Conv, [1e30, 3, 2]]", "unsupported argument '1e30'" },
        { "Conv width nan", NULL, "[-1, 1, Conv, [nan, 3, 2]]", "unsupported argument 'nan'" },
        { "Conv width inf", NULL, "[-1, 1, Conv, [inf, 3, 2]]", "unsupported argument 'inf'" },
        { "'from' 1e30", NULL, "[1e30, 1, Conv, [8, 3, 2]]", "bad 'from'" },
        { "Concat of maps of different sizes", "[[-1, 6], 1, Concat, [1]]", "[[-1, 0], 1, Concat, [1]]", "Concat of maps of different sizes" },
        { "Silence where a layer is expected", "[-1, 1, SPPELAN, [32, 16]]", "[-1, 1, Silence, []]", "Silence only passes the image on" },
        { "a head fed from [15, 15, 15]", "[[15, 18, 21], 1, DDetect, [nc]]", "[[15, 15, 15], 1, DDetect, [nc]]", "not above the previous level" },
        { "ADown of the 3-channel image", NULL, "[-1, 1, ADown, [8]]", "ADown splits its input in halves" },
        { "Upsample of the full-resolution map", NULL, "[-1, 1, nn.Upsample, [None, 2, 'nearest']]", "Upsample of a full-resolution map" },
        { "RepNCSPELAN4 block width 1 (found by the fuzzer)", "RepNCSPELAN4, [24, 24, 12, 1]", "RepNCSPELAN4, [24, 24, 1]", "block width 1 is below 2" },
        { "the seed itself builds and runs", NULL, "[-1, 1, Conv, [8, 3, 2]]", NULL },
    };
    for (size_t i = 0; i < sizeof mc / sizeof mc[0]; i++) {
        char what[96];
        snprintf(what, sizeof what, "model yaml: %s", mc[i].what);
        expect(what, model_case(&y, mc[i].find ? mc[i].find : row0, mc[i].repl, err), err, mc[i].want);
    }
    free(y.p);

    /* safetensors: layout, nesting, sizes */
    char *deep = (char *)malloc(1000100);
    strcpy(deep, "{\"a\":");
    memset(deep + 5, '[', 1000000);
    strcpy(deep + 1000005, "}");
    expect("safetensors: a header of 1e6 nested '['", st_case(deep, 0, 0, err), err, "malformed");
    free(deep);
    expect("safetensors: a shape of 2^62", st_case("{\"a\":{\"dtype\":\"F32\",\"shape\":[4611686018427387904],\"data_offsets\":[0,16]}}", 16, 0, err), err, "shape larger than");
    expect("safetensors: a shape of 2^31 x 2^31 x 4", st_case("{\"a\":{\"dtype\":\"F32\",\"shape\":[2147483648,2147483648,4],\"data_offsets\":[0,16]}}", 16, 0, err), err, "shape larger than");
    expect("safetensors: a negative dimension", st_case("{\"a\":{\"dtype\":\"F32\",\"shape\":[-4],\"data_offsets\":[0,16]}}", 16, 0, err), err, "negative dimension");
    expect("safetensors: a duplicate name", st_case("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}", 16, 0, err), err, "appears twice");
    expect("safetensors: overlapping ranges", st_case("{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]},\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}", 16, 0, err), err, "overlaps");
    expect("safetensors: two tensors at offset 0", st_case("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 16, 0, err), err, "overlaps");
    expect("safetensors: bytes after the last tensor", st_case("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 12, 0, err), err, "after the last tensor");
    expect("safetensors: text after the header's '}'", st_case("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}} x", 8, 0, err), err, "text after its closing");
    expect("safetensors: a header length one byte short", st_case("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}    ", 8, -1, err), err, "after the last tensor");
    expect("safetensors: a well-formed file is read", st_case("{\"__metadata__\":{\"k\":\"v\"},\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, 0, err), err, NULL);
    {   /* a NaN bias in real weights */
        buf w = read_file("tests/golden/tiny-gelan/weights.safetensors");
        yolo_safetensors st;
        yolo_st_read(&st, "tests/golden/tiny-gelan/weights.safetensors", err);
        const yolo_st_entry *e = yolo_st_find(&st, "model.22.cv3.0.2.bias");
        size_t hl = 0;
        for (int i = 7; i >= 0; i--) hl = (hl << 8) | w.p[i];
        float nan = NAN;
        memcpy(w.p + 8 + hl + e->begin + 4, &nan, 4);
        yolo_st_free(&st);
        char path[1200];
        put("nan.safetensors", &w, path, sizeof path);
        free(w.p);
        int rc = yolo_load_weights(&g_tiny, path, err);
        expect("safetensors: a NaN bias is refused with the tensor's name", rc, err, "model.22.cv3.0.2.bias holds nan at element 1");
    }

    /* labels and the label cache */
    expect("labels.cache: a larger image count", cache_case(" 2\n", " 7\n", 0, "does not hash", err), err, NULL);
    expect("labels.cache: a cached class of 500", cache_case("\n2 0.5", "\n500 0.5", 0, "does not hash", err), err, NULL);
    expect("labels.cache: a cached box count of -1", cache_case(" 1 |", " -1 |", 0, "does not hash", err), err, NULL);
    expect("labels.cache: a name that is no scanned image", cache_case("/a.jpg", "/zz.jpg", 0, "does not hash", err), err, NULL);
    expect("labels.cache: its hash right, a picture listed twice", cache_case("/b.png", "/a.jpg", 1, "listed twice", err), err, NULL);
    expect("labels.cache: its hash right, a cached class of 500", cache_case("\n2 0.5", "\n500 0.5", 1, "500", err), err, NULL);
    static const char *big_class[] = { "1e30", "inf", "2147483648" };
    for (int i = 0; i < 3; i++) {
        char path[1200], what[96], text[96];
        snprintf(path, sizeof path, "%s/labels/a.txt", g_labels_root);
        snprintf(text, sizeof text, "%s 0.5 0.5 0.2 0.2\n", big_class[i]);
        write_file(path, text, strlen(text));
        snprintf(what, sizeof what, "labels: class %s", big_class[i]);
        snprintf(path, sizeof path, "%s/labels.cache", g_labels_root);
        remove(path);
        yolo_dataset ds;
        int rc = yolo_dataset_open(&ds, g_labels_root, "images", 3, 0, err);
        if (!rc) yolo_dataset_free(&ds);
        expect(what, rc, err, "is not below nc 3");
    }
    {   /* a label path that is a folder */
        char path[1200];
        snprintf(path, sizeof path, "%s/labels/a.txt", g_labels_root);
        remove(path);
        mkdir(path, 0755);
        yolo_dataset ds;
        int rc = yolo_dataset_open(&ds, g_labels_root, "images", 3, 0, err);
        if (!rc) yolo_dataset_free(&ds);
        expect("labels: a label path that is a folder", rc, err, "a.txt: label file is not a regular file");
        rmdir(path);
    }
    {   /* two links to '.' inside images/, a FIFO and a dangling link named like pictures */
        char p[1200], q[1200];
        int made = 0;
        snprintf(p, sizeof p, "%s/images/loop1", g_labels_root); made += symlink(".", p);
        snprintf(p, sizeof p, "%s/images/loop2", g_labels_root); made += symlink(".", p);
        snprintf(p, sizeof p, "%s/images/fifo.jpg", g_labels_root); made += mkfifo(p, 0644);
        snprintf(q, sizeof q, "%s/images/gone.jpg", g_labels_root); made += symlink("nothing-here.jpg", q);
        if (made) printf("fuzz: cannot make the links and the FIFO\n");
        yolo_dataset ds;
        int rc = yolo_dataset_open(&ds, g_labels_root, "images", 3, 0, err);
        if (!rc && ds.n != 2) rc = -1, snprintf(err, YOLO_ERR, "%d images found instead of 2", ds.n);
        if (!rc) yolo_dataset_free(&ds);
        expect("folder scan: link loops, a FIFO, a dangling link", rc, err, NULL);
        yolo_image im;
        rc = yolo_image_load(&im, p, err);
        expect("image: a FIFO named x.jpg is refused, not waited on", rc, err, "fifo.jpg: image is not a regular file");
        remove(p); remove(q);
        snprintf(p, sizeof p, "%s/images/loop1", g_labels_root); remove(p);
        snprintf(p, sizeof p, "%s/images/loop2", g_labels_root); remove(p);
    }
    {   /* a PNG claiming 100000 x 100000 */
        static const unsigned char png[] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R',
                                             0, 1, 0x86, 0xa0, 0, 1, 0x86, 0xa0, 8, 2, 0, 0, 0, 0, 0, 0, 0 };
        char path[1200];
        snprintf(path, sizeof path, "%s/huge.png", g_dir);
        write_file(path, png, sizeof png);
        yolo_image im;
        expect("image: a PNG claiming 100000x100000", yolo_image_load(&im, path, err), err, "100000x100000 pixels");
        static const int heights[2] = { 14811146, 100000 };   /* found by the fuzzer: 10 s to decode 414 bytes */
        for (int k = 0; k < 2; k++) {
            unsigned char bmp[414] = { 'B', 'M', 158, 1, 0, 0, 0, 0, 0, 0, 54, 0, 0, 0, 40, 0, 0, 0, 12, 0, 0, 0 };
            for (int i = 0; i < 4; i++) bmp[22 + i] = (unsigned char)(heights[k] >> (8 * i));
            bmp[26] = 1; bmp[28] = 24;
            snprintf(path, sizeof path, "%s/tall.bmp", g_dir);
            write_file(path, bmp, sizeof bmp);
            char what[96];
            snprintf(what, sizeof what, "image: a 414-byte BMP claiming 12x%d", heights[k]);
            expect(what, yolo_image_load(&im, path, err), err, k ? "truncated BMP" : "pixels, more than");
        }
    }

    /* dataset yaml */
    expect("data yaml: nc 1000000000", text_case("d.yaml", "train: a\nval: a\nnc: 1000000000\n", err, read_data), err, "nc '1000000000' is not an integer");
    expect("data yaml: the official layout (block names, a flow list over lines, download: |)", text_case("d.yaml", official_layout, err, read_data), err, NULL);
    struct stat st;
    if (!stat("/work/official/data/coco.yaml", &st))   /* the official file itself, where it is at hand */
        expect("data yaml: /work/official/data/coco.yaml", read_data("/work/official/data/coco.yaml", err), err, NULL);
    expect("data yaml: a list not closed", text_case("d.yaml", "train: a\nval: a\nnames: [a, b,\n  c\n", err, read_data), err, "not closed by ']'");
    {   /* found by a ten-minute fuzz: a flow list open over 179,000 blank lines took
           10 s (each line searched the whole list gathered so far for its ']') */
        size_t blank = 400000, n = 0;
        char *text = (char *)malloc(blank + 64);
        n += sprintf(text, "train: a\nval: a\nnc: 2\nnames: [a,\n");
        memset(text + n, '\n', blank); n += blank;
        strcpy(text + n, "  b]\n");
        clock_t t0 = clock();
        int rc = text_case("d.yaml", text, err, read_data);
        double cpu = (double)(clock() - t0) / CLOCKS_PER_SEC;
        free(text);
        if (!rc && cpu > 1) { rc = -1; snprintf(err, YOLO_ERR, "d.yaml: parsed in %.1f s of CPU, not linear", cpu); }
        expect("data yaml: a list open over 400,000 lines, in linear time", rc, err, NULL);
    }
    expect("data yaml: names keys out of order", text_case("d.yaml", "train: a\nval: a\nnames:\n  0: a\n  2: b\n", err, read_data), err, "key '2' where 1 was expected");

    {   /* path: from the working directory as the official, else beside the yaml; ../ stripped as its fallback */
        char dir[1200], path[1300];
        snprintf(dir, sizeof dir, "%s/beside/images", g_dir); yolo_mkdirs(dir);
        snprintf(path, sizeof path, "%s/beside/d.yaml", g_dir);
        static const char *yaml[2] = { "path: tests/data/coco8\ntrain: images/train2017\nval: images/train2017\nnc: 80\n",
                                       "path: .\ntrain: images\nval: images\nnc: 3\n" };
        char want[2][1300];
        snprintf(want[0], sizeof want[0], "tests/data/coco8");
        snprintf(want[1], sizeof want[1], "%s/beside/.", g_dir);
        for (int k = 0; k < 2; k++) {
            write_file(path, yaml[k], strlen(yaml[k]));
            yolo_data_cfg d;
            int rc = yolo_data_read(&d, path, err);
            if (!rc && strcmp(d.root, want[k])) rc = -1, snprintf(err, YOLO_ERR, "root %s, not %s", d.root, want[k]);
            if (!rc) yolo_data_free(&d);
            expect(k ? "data yaml: path . with the images beside the yaml" : "data yaml: a relative path from the working directory", rc, err, NULL);
        }
        yolo_dataset ds;
        int rc = yolo_dataset_open(&ds, "tests/data/coco8", "../images/train2017", 80, 0, err);
        if (!rc && ds.n != 8) rc = -1, snprintf(err, YOLO_ERR, "%d images, not 8", ds.n);
        if (!rc) yolo_dataset_free(&ds);
        expect("data yaml: ../images/train2017 falls back to images/train2017", rc, err, NULL);
    }

    /* hyperparameters */
    static const char *hkeys[] = { "perspective", "shear", "translate", "scale", "degrees", "hsv_h", "warmup_epochs", "lr0" };
    buf hyp = read_file("tests/data/hyp-noaug.yaml");
    for (int i = 0; i < 8; i++)
        for (int v = 0; v < 2; v++) {
            char find[64], repl[64], what[96];
            buf b = buf_of(hyp.p, hyp.n);
            const char *line = strstr((char *)b.p, hkeys[i]);
            snprintf(find, sizeof find, "%.*s", (int)strcspn(line, "\n"), line);
            snprintf(repl, sizeof repl, "%s: %s", hkeys[i], v ? "1e30" : "nan");
            buf_replace(&b, find, repl);
            b.p[b.n] = 0;
            snprintf(what, sizeof what, "hyp yaml: %s", repl);
            expect(what, text_case("h.yaml", (char *)b.p, err, read_hyp), err, "is not a number in [");
            free(b.p);
        }
    {   /* the loss gains: fixed as the official's, so a different one is refused and none is needed */
        buf b = buf_of(hyp.p, hyp.n);
        buf_replace(&b, "box: 7.5", "box: 0.05");
        b.p[b.n] = 0;
        expect("hyp yaml: box 0.05 (the gain is fixed)", text_case("h.yaml", (char *)b.p, err, read_hyp), err,
               "box 0.05: the loss gain is fixed at 7.5");
        free(b.p);
        b = buf_of(hyp.p, hyp.n);
        buf_replace(&b, "box: 7.5", "");
        buf_replace(&b, "cls: 0.5", "");
        buf_replace(&b, "dfl: 1.5", "");
        b.p[b.n] = 0;
        yolo_hyp h;
        memset(&h, 0, sizeof h);
        char path[1200];
        put("h.yaml", &b, path, sizeof path);
        int rc = yolo_hyp_read(&h, path, err);
        if (!rc && (h.box != YOLO_GAIN_BOX || h.cls != YOLO_GAIN_CLS || h.dfl != YOLO_GAIN_DFL))
            rc = -1, snprintf(err, YOLO_ERR, "gains %g %g %g, not the fixed ones", h.box, h.cls, h.dfl);
        expect("hyp yaml: no box, cls, dfl: the fixed gains", rc, err, NULL);
        free(b.p);
    }
    {
        char *text = (char *)malloc(hyp.n + 3000);
        memset(text, '#', 2000);
        memcpy(text + 2000, "\n", 1);
        memcpy(text + 2001, hyp.p, hyp.n + 1);
        expect("hyp yaml: a line of 2000 characters", text_case("h.yaml", text, err, read_hyp), err, "h.yaml:1: line longer than");
        free(text);
    }
    free(hyp.p);
    char dh[2048];
    defaults_hyp(dh, sizeof dh);
    expect("hyp yaml: the official hyp.scratch-high values", text_case("h.yaml", dh, err, read_hyp), err, NULL);
    if (!stat("/work/official/data/hyps/hyp.scratch-high.yaml", &st))
        expect("hyp yaml: /work/official/data/hyps/hyp.scratch-high.yaml", read_hyp("/work/official/data/hyps/hyp.scratch-high.yaml", err), err, NULL);

    {   /* the stale .tmp of a killed save goes on the next save */
        char dir[1200], tmp[1300], path[1300];
        snprintf(dir, sizeof dir, "%s/weights", g_dir);
        mkdir(dir, 0755);
        snprintf(tmp, sizeof tmp, "%s/best.safetensors.tmp", dir);
        write_file(tmp, "half", 4);
        struct utimbuf old = { time(NULL) - 3600, time(NULL) - 3600 };   /* killed an hour ago */
        utime(tmp, &old);
        snprintf(path, sizeof path, "%s/last.safetensors", dir);
        int rc = yolo_save_weights(&g_tiny, path, NULL, NULL, 0, err);
        struct stat st;
        if (!rc && !stat(tmp, &st)) rc = -1, snprintf(err, YOLO_ERR, "%s is still there", tmp);
        expect("a killed save's best.safetensors.tmp goes on the next save", rc, err, NULL);
    }
}

/* ---- main ----------------------------------------------------------------- */

static void make_dataset(const char *root) {
    char p[1300];
    snprintf(p, sizeof p, "%s/images", root); yolo_mkdirs(p);
    snprintf(p, sizeof p, "%s/labels", root); yolo_mkdirs(p);
    unsigned char rgb[40 * 30 * 3];
    for (int i = 0; i < 40 * 30 * 3; i++) rgb[i] = (unsigned char)(i * 31 % 251);
    snprintf(p, sizeof p, "%s/images/a.jpg", root); stbi_write_jpg(p, 40, 30, 3, rgb, 90);
    snprintf(p, sizeof p, "%s/images/b.png", root); stbi_write_png(p, 30, 40, 3, rgb, 30 * 3);
    snprintf(p, sizeof p, "%s/labels/a.txt", root); write_file(p, "0 0.5 0.5 0.2 0.3\n1 0.25 0.5 0.1 0.1\n", 37);
    snprintf(p, sizeof p, "%s/labels/b.txt", root); write_file(p, "2 0.5 0.4 0.5 0.5\n", 18);
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: fuzz DIR [--seed S] [--inputs N | --seconds T] [--programs DIR] [surface ...]\n"); return 1; }
    g_dir = argv[1];
    snprintf(g_current, sizeof g_current, "%s/current.bin", g_dir);
    g_programs = ".";
    uint64_t seed = 1;
    long inputs = 300;
    double seconds = 0;
    const char *only[16];
    int nonly = 0;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--seed") && i + 1 < argc) seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--inputs") && i + 1 < argc) inputs = atol(argv[++i]);
        else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--programs") && i + 1 < argc) g_programs = argv[++i];
        else if (nonly < 16) only[nonly++] = argv[i];
    }
    signal(SIGPROF, on_alarm);
    char err[YOLO_ERR];
    if (yolo_model_from_yaml(&g_tiny, "tests/golden/tiny-gelan/model.yaml", 0, err)) { printf("%s\n", err); return 1; }
    snprintf(g_labels_root, sizeof g_labels_root, "%s/labels-ds", g_dir); make_dataset(g_labels_root);
    snprintf(g_cache_root, sizeof g_cache_root, "%s/cache-ds", g_dir); make_dataset(g_cache_root);
    snprintf(g_cache_path, sizeof g_cache_path, "%s/labels.cache", g_cache_root);
    if (yolo_dataset_open(&g_samples, g_cache_root, "images", 3, 0, err)) { printf("%s\n", err); return 1; }   /* writes the cache */

    cpu_limit(120);
    if (!nonly) run_cases();
    cpu_limit(0);

    /* the mutated files; then those made from scratch each time (generate), and those that run the
       programs (only when named) */
    static const struct { const char *name, *seeds[3]; int (*generate)(yolo_rng *r); int named; } surfaces[] = {
        { "st", { "tests/golden/tiny-gelan/weights.safetensors", "tests/golden/tiny-cb/weights.safetensors" }, NULL, 0 },
        { "model", { "tests/golden/tiny-gelan/model.yaml", "tests/golden/tiny-dual/model.yaml", "tests/golden/tiny-cb/model.yaml" }, NULL, 0 },
        { "data", { "tests/data/coco8/coco8.yaml" }, NULL, 0 },
        { "labels", { NULL }, NULL, 0 },
        { "cache", { NULL }, NULL, 0 },
        { "hyp", { "tests/data/hyp-noaug.yaml" }, NULL, 0 },
        { "image", { NULL }, NULL, 0 },
        { "meaning", { NULL }, run_meaning, 0 },
        { "cli", { NULL }, run_cli, 1 },
        { "ckpt", { NULL }, run_ckpt, 1 },
    };
    const char *path = g_current;
    for (size_t s = 0; s < sizeof surfaces / sizeof surfaces[0]; s++) {
        int want = !nonly && !surfaces[s].named;
        for (int k = 0; k < nonly; k++) want |= !strcmp(only[k], surfaces[s].name);
        if (!want) continue;
        g_surface = surfaces[s].name;
        if (surfaces[s].generate) {
            yolo_rng r = { seed * 0x9E3779B97F4A7C15ull + s };
            long accepted = 0, n = 0;
            double t0 = yolo_now();
            for (g_input = 0; (seconds > 0 ? yolo_now() - t0 < seconds : g_input < inputs) && !g_failures; g_input++, n++) {
                if (!surfaces[s].named) cpu_limit(INPUT_SECONDS);   /* (a program runs under its own wall-clock limit) */
                accepted += surfaces[s].generate(&r) == 0;
                cpu_limit(0);
            }
            printf("fuzz: %-6s seed %llu: %ld inputs in %.1f s, %ld accepted, %ld refused with one clear line%s\n", g_surface,
                   (unsigned long long)seed, n, yolo_now() - t0, accepted, n - accepted, g_failures ? ", FAILED" : "");
            if (g_failures) break;
            continue;
        }
        buf seeds[3];
        int nseeds = 0;
        for (int k = 0; k < 3 && surfaces[s].seeds[k]; k++) {
            struct stat st;
            if (!stat(surfaces[s].seeds[k], &st)) seeds[nseeds++] = read_file(surfaces[s].seeds[k]);
        }
        const char *ext[3] = { "jpg", "png", "bmp" };
        if (!strcmp(g_surface, "data")) seeds[nseeds++] = buf_of(official_layout, strlen(official_layout));
        if (!strcmp(g_surface, "hyp")) { char dh[2048]; defaults_hyp(dh, sizeof dh); seeds[nseeds++] = buf_of(dh, strlen(dh)); }
        if (!strcmp(g_surface, "labels")) { seeds[0] = buf_of("0 0.5 0.5 0.2 0.3\n1 0.25 0.5 0.1 0.1\n2 0.1 0.9 0.05 0.05\n", 56); nseeds = 1; }
        if (!strcmp(g_surface, "cache")) { seeds[0] = read_file(g_cache_path); nseeds = 1; }
        if (!strcmp(g_surface, "image")) {
            char p[1300];
            snprintf(p, sizeof p, "%s/images/a.jpg", g_cache_root); seeds[0] = read_file(p);
            snprintf(p, sizeof p, "%s/images/b.png", g_cache_root); seeds[1] = read_file(p);
            unsigned char rgb[12 * 10 * 3];
            for (int i = 0; i < 12 * 10 * 3; i++) rgb[i] = (unsigned char)(i * 13);
            snprintf(p, sizeof p, "%s/seed.bmp", g_dir); stbi_write_bmp(p, 12, 10, 3, rgb);
            seeds[2] = read_file(p);
            nseeds = 3;
        }
        if (!nseeds) { printf("fuzz: %s: no seed file\n", g_surface); return 1; }
        yolo_rng r = { seed * 0x9E3779B97F4A7C15ull + s };
        long accepted = 0, n = 0;
        double t0 = yolo_now();
        for (g_input = 0; seconds > 0 ? yolo_now() - t0 < seconds : g_input < inputs; g_input++, n++) {
            int which = (int)pick(&r, nseeds);
            buf *sd = &seeds[which];
            size_t hi = sd->n;
            if (!strcmp(g_surface, "st") && pick(&r, 10)) {   /* mostly the header: 8 + its length */
                uint64_t hl = 0;
                for (int i = 7; i >= 0; i--) hl = (hl << 8) | sd->p[i];
                hi = 8 + hl;
            }
            buf b = mutant(sd, &r, 0, hi);
            write_file(path, b.p, b.n);
            cpu_limit(INPUT_SECONDS);
            int rc = !strcmp(g_surface, "st") ? run_st(&b) : !strcmp(g_surface, "model") ? run_model(&b)
                   : !strcmp(g_surface, "data") ? run_data(&b) : !strcmp(g_surface, "labels") ? run_labels(&b)
                   : !strcmp(g_surface, "cache") ? run_cache(&b) : !strcmp(g_surface, "hyp") ? run_hyp(&b, &r)
                   : run_image(&b, ext[which]);
            cpu_limit(0);
            accepted += rc == 0;
            free(b.p);
            if (g_failures) break;
        }
        printf("fuzz: %-6s seed %llu: %ld inputs in %.1f s, %ld accepted, %ld refused with one clear line%s\n", g_surface,
               (unsigned long long)seed, n, yolo_now() - t0, accepted, n - accepted, g_failures ? ", FAILED" : "");
        for (int k = 0; k < nseeds; k++) free(seeds[k].p);
        if (g_failures) break;
    }
    if (!nonly) printf("cases: %d passed, %d failed\n", g_cases - g_case_failures, g_case_failures);
    yolo_model_free(&g_tiny);
    yolo_dataset_free(&g_samples);
    return g_failures || g_case_failures ? 1 : 0;
}
