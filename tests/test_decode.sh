#!/bin/sh
# Our pixels are the official's: every picture decoded by yolo_image_load
# equals cv2.imread's (BGR turned to RGB), bit for bit. The pictures: the
# bundled coco8 and its neighbours, some PNGs, tests/data/jpeg (made with
# Pillow 9.4 from a 77x53 crop of 000000000009.jpg, partial blocks on both
# sides: 4:4:4 and 4:2:2 chroma, progressive, greyscale, Adobe CMYK, EXIF
# orientations 2..8 in Intel and Motorola byte order, restart markers
# written by OpenCV, a file cut at two thirds), and coco128's 128 pictures
# when shared/coco128 is beside or inside the checkout (or at $COCO128).
# Needs python3 with OpenCV and numpy; without them it says so and skips.
# Run from the repository root (BIN=tests/ubsan: the sanitized build).
. tests/common.sh
PY=
for p in python3 /usr/bin/python3; do
    if $p -c 'import cv2, numpy' 2> /dev/null; then PY=$p; break; fi
done
if [ -z "$PY" ]; then echo "  skip  no python3 with cv2 and numpy (Debian: python3-opencv): decoding not compared"; exit 0; fi
set -- tests/data/*.jpg tests/data/coco8/images/*/*.jpg tests/data/jpeg/*.jpg tests/golden/train-tiny/images/*.png
for d in "${COCO128:-}" shared/coco128 ../shared/coco128; do
    if [ -n "$d" ] && [ -d "$d/images" ]; then set -- "$@" $(find "$d/images" -name '*.jpg' | sort); C=$d; break; fi
done
[ -n "${C:-}" ] || echo "  note  coco128 not found (shared/coco128, ../shared/coco128 or \$COCO128): the bundled pictures only"
"${BIN:-tests}"/test_decode "$T" "$@" 2> "$T/err" || bad "test_decode: $(cat "$T/err")"
if $PY - "$T" "$@" 2> "$T/pyerr" <<'PY'
import sys, cv2, numpy as np
out, files, bad = sys.argv[1], sys.argv[2:], 0
for i, f in enumerate(files):
    want = cv2.imread(f)
    got = cv2.imread('%s/%d.ppm' % (out, i))
    if want is None or got is None or want.shape != got.shape:
        print('  FAIL  %s: shape %s, cv2.imread %s' % (f, None if got is None else got.shape, None if want is None else want.shape))
        bad += 1
    elif not np.array_equal(want, got):   # both BGR: cv2 reads the PPM's RGB as BGR
        d = np.abs(want.astype(int) - got.astype(int))
        print('  FAIL  %s: %d of %d values differ, by up to %d' % (f, (d > 0).sum(), d.size, d.max()))
        bad += 1
print('  %-4s  %d pictures decoded as cv2.imread %s decodes them, bit for bit%s' %
      ('ok' if not bad else 'FAIL', len(files) - bad, cv2.__version__, '' if not bad else ' (%d differ)' % bad))
sys.exit(1 if bad else 0)
PY
then :; else sed "s/^/  /" "$T/pyerr"; fail=$((fail + 1)); fi
grep -q "^warning: tests/data/jpeg/truncated.jpg: Premature end of JPEG file" "$T/err" && ok "truncated.jpg: libjpeg's warning printed with its path" || bad "truncated.jpg: no warning ($(cat "$T/err"))"
[ $fail = 0 ]
