/* test_decode: pictures decoded by yolo_image_load, each written as a
   binary PPM (P6, RGB8) into OUT/0.ppm, OUT/1.ppm, ... in the order given,
   for tests/test_decode.sh to compare with cv2.imread bit for bit. A
   picture that cannot be decoded prints its one-line error and the run
   goes on; the exit status is then 1.

     ./tests/test_decode OUT PICTURE... */
#define YOLOV9_IMPLEMENTATION
#include "../yolov9.h"

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: test_decode OUT PICTURE...\n"); return 2; }
    int bad = 0;
    for (int i = 2; i < argc; i++) {
        char err[YOLO_ERR], path[4096];
        yolo_image im;
        if (yolo_image_load(&im, argv[i], err)) { fprintf(stderr, "%s\n", err); bad = 1; continue; }
        snprintf(path, sizeof path, "%s/%d.ppm", argv[1], i - 2);
        FILE *f = fopen(path, "wb");
        size_t n = (size_t)im.w * im.h * 3;
        if (!f || fprintf(f, "P6\n%d %d\n255\n", im.w, im.h) < 0 || fwrite(im.rgb, 1, n, f) != n || fclose(f)) {
            fprintf(stderr, "%s: cannot write\n", path);
            return 1;
        }
        yolo_image_free(&im);
    }
    return bad;
}
