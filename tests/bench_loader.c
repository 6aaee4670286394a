/* bench_loader: the training loader alone, timed. It makes finished
   training batches exactly as train gets them on the GPU (mosaic, random
   perspective, mixup, HSV, flips, labels, collate into uint8 pixels
   [B, 3, S, S], which the GPU divides by 255; the official hands over
   uint8 batches too), epoch
   after epoch of the shuffled training split, and reports samples per
   second over --batches batches after the first one (which also pays for
   starting the threads). tests/official_loader_bench.py times the
   official loader the same way.

     ./tests/bench_loader --data DATA.yaml [--img 640] [--batch 16] [--workers 2]
                          [--batches 64] [--cache ram|disk] [--hyp FILE] [--seed 0] [--sum] [--boxes FILE]

   --sum prints, instead of timing, a checksum of every batch (its images
   in [0, 1] and targets, bit for bit) and of all of them: tests/test_loader.sh holds
   the sums that the loader must keep whatever its threads and cache.
   --boxes FILE writes every training sample's boxes, a line a sample:
   the count, then class cx cy w h (normalised) of each box; the same
   lines tests/official_loader_bench.py --boxes writes of the official
   loader's samples, which tests/loader_stats.py compares. */
#define YOLOV9_IMPLEMENTATION
#include "../yolov9.h"

/* FNV-1a over bytes */
static uint64_t fnv(uint64_t h, const void *p, size_t n) {
    const unsigned char *c = (const unsigned char *)p;
    for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 1099511628211ull;
    return h;
}

/* one line a sample: its box count, then class cx cy w h of each */
static void write_boxes(FILE *f, const yolo_batch *bt) {
    for (int j = 0, t = 0; j < bt->B; j++) {
        int n = 0;
        while (t + n < bt->nt && (int)bt->targets[(t + n) * 6] == j) n++;
        fprintf(f, "%d", n);
        for (; n > 0; n--, t++) {
            const yolo_real *r = bt->targets + (size_t)t * 6;
            fprintf(f, " %d %.6f %.6f %.6f %.6f", (int)r[1], r[2], r[3], r[4], r[5]);
        }
        fputc('\n', f);
    }
}

static void usage(const char *why) {
    fprintf(stderr, "bench_loader: %s\nusage: bench_loader --data DATA.yaml [--img 640] [--batch 16] [--workers 2] [--batches 64]\n"
                    "                    [--cache ram|disk] [--hyp FILE] [--seed 0] [--sum] [--boxes FILE]\n", why);
    exit(2);
}

int main(int argc, char **argv) {
    const char *data = NULL, *hyp_path = NULL, *cache = NULL, *boxes_path = NULL;
    int S = 640, B = 16, workers = 2, batches = 64, seed = 0, sum = 0;
    for (int i = 1; i < argc; i++) {
        const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(k, "--sum")) { sum = 1; continue; }
        if (!v) usage("a flag needs a value");
        if (!strcmp(k, "--data")) data = v;
        else if (!strcmp(k, "--hyp")) hyp_path = v;
        else if (!strcmp(k, "--cache")) cache = v;
        else if (!strcmp(k, "--boxes")) boxes_path = v;
        else if (!strcmp(k, "--img")) S = atoi(v);
        else if (!strcmp(k, "--batch")) B = atoi(v);
        else if (!strcmp(k, "--workers")) workers = atoi(v);
        else if (!strcmp(k, "--batches")) batches = atoi(v);
        else if (!strcmp(k, "--seed")) seed = atoi(v);
        else usage("unknown flag");
        i++;
    }
    if (!data) usage("--data is required");
    if (S < 32 || S % 32 || B < 1 || workers < 0 || batches < 1) usage("--img a multiple of 32; --batch, --batches positive");
    char err[YOLO_ERR];
    yolo_hyp hyp;
    yolo_hyp_default(&hyp);
    if (hyp_path && yolo_hyp_read(&hyp, hyp_path, err)) { fprintf(stderr, "%s\n", err); return 1; }
    yolo_data_cfg dc;
    yolo_dataset ds;
    if (yolo_data_read(&dc, data, err) || yolo_dataset_open(&ds, dc.root, dc.train, dc.nc, 0, err)) { fprintf(stderr, "%s\n", err); return 1; }
    double t0 = yolo_now();
    if (cache) {
        yolo_cache_kind kind = !strcmp(cache, "ram") ? YOLO_CACHE_RAM : !strcmp(cache, "disk") ? YOLO_CACHE_DISK : YOLO_CACHE_NONE;
        if (kind == YOLO_CACHE_NONE) usage("--cache wants ram or disk");
        if (yolo_dataset_cache(&ds, kind, S, 1, err)) { fprintf(stderr, "%s\n", err); return 1; }
        printf("--cache %s: %d pictures in %.2f s\n", cache, ds.n, yolo_now() - t0);
    }
    FILE *boxes = boxes_path ? fopen(boxes_path, "w") : NULL;
    if (boxes_path && !boxes) { fprintf(stderr, "bench_loader: cannot write %s\n", boxes_path); return 1; }
    yolo_loader ld;
    yolo_loader_init(&ld, &ds, &hyp, B, S, YOLO_LOADER_TRAIN | YOLO_LOADER_UINT8, workers);
    uint64_t all = 1469598103934665603ull;
    long samples = 0;
    double start = 0;
    for (int epoch = 0, k = 0; k <= batches; epoch++) {
        yolo_loader_start(&ld, epoch, (uint64_t)seed);
        for (yolo_batch *bt; k <= batches && (bt = yolo_loader_next(&ld)); k++) {
            if (sum) {
                uint64_t h = fnv(fnv(1469598103934665603ull, yolo_batch_images(bt), (size_t)bt->B * 3 * bt->H * bt->W * sizeof(yolo_real)),
                                 bt->targets, (size_t)bt->nt * 6 * sizeof(yolo_real));
                all = fnv(all, &h, sizeof h);
                printf("epoch %d batch %d: %d pictures, %d targets, sum %016llx\n", epoch, bt->index, bt->B, bt->nt, (unsigned long long)h);
            }
            if (boxes) write_boxes(boxes, bt);
            if (k == 0) start = yolo_now();
            else samples += bt->B;
        }
        if (yolo_loader_error(&ld)) { fprintf(stderr, "%s\n", yolo_loader_error(&ld)); return 1; }
        yolo_loader_stop(&ld);
    }
    double dt = yolo_now() - start;
    if (boxes && fclose(boxes)) { fprintf(stderr, "bench_loader: cannot write %s\n", boxes_path); return 1; }
    if (sum) {   /* and the validation batches: rectangles, letterboxed */
        yolo_dataset vs;
        if (yolo_dataset_open(&vs, dc.root, dc.val, dc.nc, 0, err)) { fprintf(stderr, "%s\n", err); return 1; }
        if (cache && yolo_dataset_cache(&vs, !strcmp(cache, "ram") ? YOLO_CACHE_RAM : YOLO_CACHE_DISK, S, 0, err)) { fprintf(stderr, "%s\n", err); return 1; }
        yolo_loader vl;
        yolo_loader_init(&vl, &vs, &hyp, B, S, 0, workers);
        yolo_loader_start(&vl, 0, 0);
        for (yolo_batch *bt; (bt = yolo_loader_next(&vl));) {
            uint64_t h = fnv(fnv(1469598103934665603ull, bt->images, (size_t)bt->B * 3 * bt->H * bt->W * sizeof(yolo_real)),
                             bt->targets, (size_t)bt->nt * 6 * sizeof(yolo_real));
            for (int j = 0; j < bt->B; j++) {
                h = fnv(h, &bt->gain[j], sizeof(double)); h = fnv(h, &bt->padx[j], sizeof(double)); h = fnv(h, &bt->pady[j], sizeof(double));
            }
            all = fnv(all, &h, sizeof h);
            printf("val batch %d: %d pictures %dx%d, %d targets, sum %016llx\n", bt->index, bt->B, bt->W, bt->H, bt->nt, (unsigned long long)h);
        }
        if (yolo_loader_error(&vl)) { fprintf(stderr, "%s\n", yolo_loader_error(&vl)); return 1; }
        yolo_loader_free(&vl);
        yolo_dataset_free(&vs);
        printf("all %016llx\n", (unsigned long long)all);
    }
    else {
        printf("%s: %d images, batch %d, img %d, %d workers%s%s: %ld samples in %.2f s\n", data, ds.n, B, S, workers,
               cache ? ", --cache " : "", cache ? cache : "", samples, dt);
        printf("samples/s %.1f\n", samples / dt);
    }
    yolo_loader_free(&ld);
    yolo_dataset_free(&ds);
    yolo_data_free(&dc);
    return 0;
}
