#!/bin/sh
# the loader's batches, bit for bit: checksums of finished training batches
# (mosaic, perspective, mixup, letterbox, HSV, flips, targets) and of the
# validation rectangles from the bundled coco8 pictures, as the loader made
# them at 0ddd4e9 (before it was made faster) but for each training
# sample's random stream, hashed since (yolo_sample_rng), the JPEG
# pictures, decoded as cv2.imread decodes them since (libjpeg-turbo, not
# stb_image; tests/test_decode.sh), and the warps, the resize and the HSV
# jitter, computed in OpenCV's fixed point since (equal to the official's
# pixels: tests/test_augment). The first sums take the default recipe
# (scale and shift only: the separable warp), the others rotation, shear
# and perspective (the general warp). The same seed must give the same
# batches whatever the number of threads, with or without --cache.
# Run from the repository root (BIN=tests/ubsan: the sanitized build).
. tests/common.sh
D=tests/data/coco8/coco8.yaml
H=tests/data/hyp-loader.yaml
# cp -r: --cache disk writes its .npy files beside the pictures
cp -r tests/data/coco8 "$T/coco8"
check() {   # want, then bench_loader's flags
    want=$1; shift
    for w in 0 1 3; do
        for c in "" "--cache ram" "--cache disk"; do
            d=$D; [ "$c" = "--cache disk" ] && d=$T/coco8/coco8.yaml
            got=$("${BIN:-tests}"/bench_loader --data $d "$@" --workers $w $c --sum 2> "$T/err" | tail -n 1)
            if [ "$got" = "all $want" ]; then ok "$* --workers $w $c: $want"
            else bad "$* --workers $w $c: '$got' ($(cat "$T/err")), want $want"; fi
        done
    done
}
check 2d85654344b970ee --img 640 --batch 4 --batches 3
check 0862cfffad1dd0ae --img 256 --batch 3 --batches 5 --hyp $H
check 2518adbcca69f723 --img 800 --batch 2 --batches 3 --hyp $H --seed 3
[ $fail = 0 ]
