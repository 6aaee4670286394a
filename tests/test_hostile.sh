#!/bin/sh
# Issue 41's table, row by row: each hostile input is refused with one line
# (naming the flag, or the file and key, and the range), or handled as the
# official handles it; never a crash, a hang, a silent default or a file
# made worse. The fuzzer (tests/fuzz.c: cli, ckpt, meaning, cache) tries
# the same families at random; tests/test_checkpoints.sh kills, corrupts
# and poisons runs. Rows tested there, not here: a checkpoint's
# ema_updates of -99999999999, its epoch past the run's end or -5, --workers
# -1 in its args, a step that makes the weights non-finite
# (test_checkpoints.sh); a label cache whose hashes match but that lists a
# picture twice (tests/fuzz.c's cases); a .pt of 3e8 values refused before
# it is read (tests/fuzz_convert.py). Run from the repository root.
. tests/common.sh
CFG=tests/golden/tiny-gelan/model.yaml
W=tests/golden/tiny-gelan/weights.safetensors
IMG=tests/data/coco8/images/train2017/000000000030.jpg
TRAIN="./train --cfg $CFG --data tests/data/coco8/coco8.yaml --hyp tests/data/hyp-noaug.yaml --img 64 --batch 8 --epochs 1
       --device cpu --workers 1 --noplots --noval --project $T --exist-ok"
VAL="./val --cfg $CFG --weights tests/golden/val-tiny/weights.safetensors --data tests/data/coco8/coco8.yaml --img 64
     --device cpu --workers 1 --noplots --project $T --exist-ok"
DETECT="./detect --cfg $CFG --weights $W --source $IMG --img 64 --device cpu --nosave --project $T --exist-ok"

# refused NAME PATTERN COMMAND...: a non-zero exit within 120 s, one line on stderr holding PATTERN
refused() {
    name=$1 pat=$2; shift 2
    timeout 120 "$@" > "$T/out" 2> "$T/err"; rc=$?
    if [ $rc = 0 ]; then bad "$name: accepted"
    elif [ $rc -ge 124 ]; then bad "$name: exit $rc (a hang or a crash)"
    elif [ "$(wc -l < "$T/err")" = 1 ] && grep -q -- "$pat" "$T/err"; then ok "$name: $(cat "$T/err")"
    else bad "$name: $(head -c 400 "$T/err")"; fi
}
# accepted NAME PATTERN COMMAND...: exit 0 within 120 s, stdout and stderr holding PATTERN
accepted() {
    name=$1 pat=$2; shift 2
    if timeout 120 "$@" > "$T/out" 2>&1 && grep -q -- "$pat" "$T/out"; then ok "$name: $(grep -m 1 -- "$pat" "$T/out")"
    else bad "$name: $(tail -c 400 "$T/out")"; fi
}

# a crash, undefined behaviour: sizes and integers past int
refused "detect --img 2147483647" "--img '2147483647' is not an integer in \[1, 8192\]" $DETECT --img 2147483647
refused "val --img 2147483647" "--img '2147483647' is not an integer in \[1, 8192\]" $VAL --img 2147483647
refused "train --img 2147483647" "--img '2147483647' is not an integer in \[1, 8192\]" $TRAIN --img 2147483647
refused "train --batch 4294967296" "--batch '4294967296' is not an integer" $TRAIN --batch 4294967296
refused "val --max-det 1e30" "--max-det '1e30' is not an integer" $VAL --max-det 1e30
# hangs
refused "train --workers -1" "--workers '-1' is not an integer in \[0," $TRAIN --workers -1
refused "val --workers -1" "--workers '-1' is not an integer in \[0," $VAL --workers -1
# silently accepted: 0 is a value, never "the default"
refused "train --batch 0" "--batch '0' is not an integer in \[1," $TRAIN --batch 0
refused "train --epochs 0" "--epochs '0' is not an integer in \[1," $TRAIN --epochs 0
refused "val --conf-thres nan" "--conf-thres 'nan' is not a number in \[0, 1\]" $VAL --conf-thres nan
refused "val --iou-thres -1" "--iou-thres '-1' is not a number in \[0, 1\]" $VAL --iou-thres -1
refused "val --max-det 0" "--max-det '0' is not an integer in \[1, 30000\]" $VAL --max-det 0
refused "detect --classes -1 500" "--classes '-1' is not an integer" $DETECT --classes -1 500
refused "detect --classes 500 (of 3)" "--classes 500: the model has 3 classes (0 to 2)" $DETECT --classes 500
refused "detect --nc 0" "--nc '0' is not an integer in \[1, 100000\]" $DETECT --nc 0
accepted "train --workers 1000: at most the CPUs, said in a line" "workers 1000: [0-9]* CPUs, so [0-9]* loader threads" $TRAIN --workers 1000 --dry-run
long=$(printf 'p%.0s' $(seq 1100))
refused "a --project path of 1,100 characters" "is a path longer than 1023 characters" $DETECT --project "$T/$long"
# unhelpful messages, now one line that says what
refused "detect --max-det -5" "--max-det '-5' is not an integer in \[1, 30000\]" $DETECT --max-det -5
printf 'train: /etc\nval: /etc\nnc: 2\n' > "$T/etc.yaml"
refused "train: /etc (no pictures there)" "^/etc: no images found" ./train --cfg $CFG --data "$T/etc.yaml" --device cpu --project $T

# dataset meaning: names with a tab, a control character, quotes, a quoted comma, in a flow list
{ printf 'path: %s/tests/data/coco8\ntrain: images/train2017\nval: images/train2017\nnc: 80\n' "$PWD"
  printf "names: ['a, b', \"tab\there\", 'bell\a', \"say \\\\\"hi\\\\\"\", 'it''s'"
  for i in $(seq 5 79); do printf ", c%d" $i; done; printf ']\n'; } > "$T/names.yaml"
if $TRAIN --data "$T/names.yaml" --name names --save-period 1 > "$T/out" 2>&1 && python3 - "$T/names/weights/epoch0.safetensors" <<'PY'
import json, struct, sys
b = open(sys.argv[1], "rb").read()
names = json.loads(b[8:8 + struct.unpack("<Q", b[:8])[0]].decode())["__metadata__"]["names"].split("\n")
want = ["a, b", "tab\there", "bell\a", 'say "hi"', "it's"] + ["c%d" % i for i in range(5, 80)]
sys.exit(0 if names == want else "names %r" % names[:6])
PY
then ok "names with a quoted comma, a tab, a control character, quotes: a checkpoint Python's json reads, the names kept"
else bad "names: $(tail -c 300 "$T/out")"; fi
# a source list longer than the reader holds
{ printf 'train: ['; for i in $(seq 300); do printf "'images/some/long/folder/name/%03d', " $i; done; printf "'x']\nval: x\nnc: 1\n"; } > "$T/long.yaml"
refused "5,000 characters of sources" "long.yaml:1: the sources are longer than 4095 characters" ./train --cfg $CFG --data "$T/long.yaml" --device cpu

# checkpoint metadata (more in tests/test_checkpoints.sh): a 2-epoch run's first epoch, its fields made hostile
$TRAIN --epochs 2 --save-period 1 --name c > "$T/c.log" 2>&1 || { bad "the run to resume failed"; cat "$T/c.log"; }
meta() {   # KEY VALUE: epoch0 of that run with the metadata KEY set, as last.safetensors of run r
    mkdir -p "$T/r/weights"
    python3 - "$T/c/weights/epoch0.safetensors" "$T/r/weights/last.safetensors" "$1" "$2" <<'PY'
import json, struct, sys
src, dst, key, value = sys.argv[1:]
b = open(src, "rb").read()
n = struct.unpack("<Q", b[:8])[0]
head = json.loads(b[8:8 + n])
head["__metadata__"][key] = value
text = json.dumps(head, separators=(",", ":")).encode()
text += b" " * (-len(text) % 8)
open(dst, "wb").write(struct.pack("<Q", len(text)) + text + b[8 + n:])
PY
}
L="$T/r/weights/last.safetensors"
meta epoch 2147483647; refused "epoch 2147483647" "last.safetensors: metadata 'epoch' '2147483647' is not an integer in \[0, 1\]" ./train --resume "$L"
meta epoch abc;        refused "epoch abc" "metadata 'epoch' 'abc' is not an integer in \[0, 1\]" ./train --resume "$L"
meta args "$(python3 -c "
import json, struct, sys; b = open(sys.argv[1], 'rb').read()
print(json.loads(b[8:8 + struct.unpack('<Q', b[:8])[0]])['__metadata__']['args'] + '|--batch|0')" "$T/c/weights/epoch0.safetensors")"
refused "--batch 0 in a checkpoint's args" "metadata 'args': --batch '0' is not an integer" ./train --resume "$L"
meta args "--cfg|$CFG|--frobnicate"
refused "an unknown flag in a checkpoint's args" "last.safetensors: metadata 'args': unknown flag --frobnicate" ./train --resume "$L"
meta nc 99999999999;   refused "weights metadata nc 99999999999" "metadata 'nc' '99999999999' is not an integer in \[1, 100000\]" ./detect --weights "$L" --info --device cpu

# pictures: what the official's verify_image_label refuses is refused; a top-down BMP is a picture
python3 - "$T" "$IMG" <<'PY'
import struct, sys, zlib
d, jpg = sys.argv[1], sys.argv[2]
def chunk(kind, data, crc=None):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) if crc is None else crc)
raw = b"".join(b"\0" + bytes(range(12)) for _ in range(4))   # 4 rows of 4 RGB pixels
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 4, 4, 8, 2, 0, 0, 0))
open(d + "/bad-crc.png", "wb").write(png + chunk(b"IDAT", zlib.compress(raw), 1234) + chunk(b"IEND", b""))
open(d + "/good.png", "wb").write(png + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
open(d + "/pnm.png", "wb").write(b"P6\n8000 8000\n255\n" + bytes(100))   # 117 bytes of a PNM named .png
row = bytes(range(12))
bmp = b"BM" + struct.pack("<IHHI", 54 + 48, 0, 0, 54) + struct.pack("<iiiHHIIiiII", 40, 4, -4, 1, 24, 0, 48, 0, 0, 0, 0) + row * 4
open(d + "/top-down.bmp", "wb").write(bmp)
open(d + "/truncated.jpg", "wb").write(open(jpg, "rb").read()[:3000])
PY
refused "a PNG whose CRC fails" "bad-crc.png: corrupt PNG: chunk IDAT fails its CRC check" ./detect --cfg $CFG --weights $W --source "$T/bad-crc.png" --img 64 --device cpu --nosave --project $T --exist-ok
refused "117 bytes of a PNM named .png" "pnm.png: not a JPEG, PNG or BMP picture" ./detect --cfg $CFG --weights $W --source "$T/pnm.png" --img 64 --device cpu --nosave --project $T --exist-ok
accepted "the same PNG with its CRC right" "good.png: 64x64" ./detect --cfg $CFG --weights $W --source "$T/good.png" --img 64 --device cpu --nosave --project $T --exist-ok
accepted "a top-down BMP (height -4)" "top-down.bmp: 64x64" ./detect --cfg $CFG --weights $W --source "$T/top-down.bmp" --img 64 --device cpu --nosave --project $T --exist-ok
./detect --cfg $CFG --weights $W --source "$T/truncated.jpg" --img 64 --device cpu --nosave --project $T --exist-ok > "$T/out" 2> "$T/err"
if [ "$(wc -l < "$T/err")" = 1 ] && grep -q "truncated.jpg: Premature end of JPEG file" "$T/err" && grep -q "^image 1/1" "$T/out"
then ok "a truncated JPEG: decoded as cv2.imread decodes it, one line: $(cat "$T/err")"; else bad "a truncated JPEG: $(cat "$T/err")"; fi

echo "test_hostile: $fail failed"
[ $fail = 0 ]
