#!/bin/sh
# The official README's commands, copied as they stand there, run here with
# only the data made small (data/coco.yaml is coco8, data/images/horses.jpg
# one of its pictures), --img 640 made 64 and --epochs 500 made 1 (and
# --device 0 made DEVICE, cpu by default: on a machine with a GPU run with
# DEVICE=0); then each behaviour of issue 40's table, checked. Run from the
# repository root.
. tests/common.sh
ROOT=$(pwd)
BIN=$ROOT
DEVICE=${DEVICE:-cpu}
IMG=$ROOT/tests/data/coco8/images/train2017
TINY=$ROOT/tests/golden/tiny-gelan
VMINI="--cfg $TINY/model.yaml --device cpu --workers 1 --img 64"   # val's
MINI="$VMINI --epochs 1"

# the official README (WongKinYiu/yolov9 at 5b1ea9a), word for word
TRAIN_README="python train_dual.py --workers 8 --device 0 --batch 16 --data data/coco.yaml --img 640 --cfg models/detect/yolov9-c.yaml --weights '' --name yolov9-c --hyp hyp.scratch-high.yaml --min-items 0 --epochs 500 --close-mosaic 15"
VAL_README="python val.py --data data/coco.yaml --img 640 --batch 32 --conf 0.001 --iou 0.7 --device 0 --weights './yolov9-c-converted.pt' --save-json --name yolov9_c_c_640_val"
DETECT_README="python detect.py --source './data/images/horses.jpg' --img 640 --device 0 --weights './yolov9-c-converted.pt' --name yolov9_c_c_640_detect"
DDP_README="python -m torch.distributed.launch --nproc_per_node 8 --master_port 9527 train_dual.py --workers 8 --device 0,1,2,3,4,5,6,7 --sync-bn --batch 128 --data data/coco.yaml --img 640 --cfg models/detect/yolov9-c.yaml --weights '' --name yolov9-c --hyp hyp.scratch-high.yaml --min-items 0 --epochs 500 --close-mosaic 15"
# ours for theirs: the program, the size, the epochs, the device
ours() {
    echo "$1" | sed -e "s#^python -m torch.distributed.launch --nproc_per_node [0-9]* --master_port [0-9]* train_dual.py#$BIN/train#" \
        -e "s#^python train_dual.py#$BIN/train#" -e "s#^python val.py#$BIN/val#" -e "s#^python detect.py#$BIN/detect#" \
        -e 's#--img 640#--img 64#' -e 's#--epochs 500#--epochs 1#' -e "s#--device 0 #--device $DEVICE #"
}

# a folder as the official's: data/coco.yaml (coco8 here), data/images/horses.jpg
W=$T/w
mkdir -p "$W/data/images"
sed "s#^path: .*#path: $ROOT/tests/data/coco8#" tests/data/coco8/coco8.yaml > "$W/data/coco.yaml"
cp $IMG/000000000030.jpg "$W/data/images/horses.jpg"

# 1. the README's three commands, as pasted
cd "$W"
if eval "$(ours "$TRAIN_README")" > "$T/train.log" 2>&1 && [ -f runs/train/yolov9-c/weights/best.safetensors ]; then
    ok "README train: $(grep -c '' "$T/train.log") lines, runs/train/yolov9-c/weights/best.safetensors"
else bad "README train failed: $(tail -n 3 "$T/train.log")"; fi
grep -q "^hyperparameters: hyp.scratch-high.yaml is not here; the official's numbers" "$T/train.log" &&
    grep -q "^models/detect/yolov9-c.yaml: no such file here; the built-in yolov9-c" "$T/train.log" &&
    ok "--hyp hyp.scratch-high.yaml and --cfg models/detect/yolov9-c.yaml, not here: the built-in numbers and model, said" ||
    bad "the built-in hyp or model not said: $(head -n 3 "$T/train.log")"
# the weights the README validates: its .pt stands for the conversion beside it
cp runs/train/yolov9-c/weights/best.safetensors yolov9-c-converted.safetensors
if eval "$(ours "$VAL_README")" > "$T/val.log" 2>&1 && [ -s runs/val/yolov9_c_c_640_val/yolov9-c-converted_predictions.json ] &&
   grep -q "^ *all  *8 " "$T/val.log" && grep -q "^./yolov9-c-converted.pt: ./yolov9-c-converted.safetensors, its conversion, read" "$T/val.log"
then ok "README val: $(grep '^ *all ' "$T/val.log" | tr -s ' '), the .json written"
else bad "README val failed: $(tail -n 3 "$T/val.log")"; fi
if eval "$(ours "$DETECT_README")" > "$T/detect.log" 2>&1 && [ -f runs/detect/yolov9_c_c_640_detect/horses.jpg ]; then
    ok "README detect: $(grep '^image' "$T/detect.log" | cut -c1-90)"
else bad "README detect failed: $(tail -n 3 "$T/detect.log")"; fi
cd "$ROOT"

# 2. flags as argparse reads them: prefixes (--conf, --iou above); an ambiguous one names the candidates
./val --s --data x 2> "$T/err"; rc=$?
grep -q "ambiguous flag --s could match --single-cls, --save-txt, --save-hybrid, --save-conf, --save-json" "$T/err" && [ $rc = 2 ] &&
    ok "val --s: $(head -n 1 "$T/err")" || bad "an ambiguous prefix: rc $rc, $(head -n 1 "$T/err")"
./detect --im 64 --cfg yolov9-t --info > /dev/null 2>&1 && ok "--im: a prefix of --imgsz, --img and --img-size, one flag" ||
    bad "--im refused"
# a prefix's value is read as the flag's own: --conf is --conf-thres, its range [0, 1]
./val --conf 5 --data x 2> "$T/err"; rc=$?
grep -q "^val: --conf '5' is not a number in \[0, 1\]" "$T/err" && [ $rc = 2 ] && ok "val --conf 5: $(head -n 1 "$T/err")" ||
    bad "val --conf 5: rc $rc, $(head -n 1 "$T/err")"
./train --batch 0 $MINI --data tests/data/coco8/coco8.yaml --dry-run > /dev/null 2> "$T/err"; rc=$?
grep -q "^train: --batch '0' is not an integer in \[1, [0-9]*\], or -1" "$T/err" && [ $rc = 2 ] &&
    ok "train --batch 0: $(head -n 1 "$T/err")" || bad "train --batch 0: rc $rc, $(head -n 1 "$T/err")"

# 3. bare names found as check_file finds them: under data/, models/, utils/ at any depth; several: refused
mkdir -p "$W/data/hyps" "$W/models/detect" "$W/utils/x"
sed 's/^lr0: .*/lr0: 0.02/' tests/data/hyp-noaug.yaml > "$W/data/hyps/hyp.scratch-high.yaml"
cp $TINY/model.yaml "$W/models/detect/tiny.yaml"
cd "$W"
$BIN/train --cfg tiny.yaml --data coco.yaml --hyp hyp.scratch-high.yaml --device cpu --workers 1 --img 64 --epochs 1 --name found \
    > "$T/found.log" 2>&1
grep -q "^lr0: 0.02" runs/train/found/hyp.yaml 2>/dev/null && grep -q "^data: coco.yaml" runs/train/found/opt.yaml &&
    ok "--hyp, --cfg and --data by bare name: data/hyps/, models/detect/, data/ found (lr0 0.02 from the file)" ||
    bad "bare names not found: $(tail -n 2 "$T/found.log")"
cp "$W/data/coco.yaml" "$W/utils/x/coco.yaml"
$BIN/val --data coco.yaml --cfg tiny.yaml --device cpu --img 64 > /dev/null 2> "$T/err"
grep -q "coco.yaml: 2 files match under data/, models/ and utils/, give one: data/coco.yaml, utils/x/coco.yaml" "$T/err" &&
    ok "two matches refused, named" || bad "two matches: $(cat "$T/err")"
rm -r "$W/utils/x"
$BIN/train --cfg tiny.yaml --data coco.yaml --hyp hyp.other.yaml --device cpu --dry-run > /dev/null 2> "$T/err"
grep -q "^hyp.other.yaml: hyperparameter file not found" "$T/err" && ok "an unknown --hyp: $(cat "$T/err")" || bad "unknown --hyp: $(cat "$T/err")"
cd "$ROOT"

# 4. --weights '' is no weights; fine-tuning from a file without --cfg names the model, not "(null)"
./train --weights '' $MINI --data tests/data/coco8/coco8.yaml --dry-run > "$T/out" 2>&1 && ok "--weights '': no weights" ||
    bad "--weights '': $(tail -n 1 "$T/out")"
FOUND=$W/runs/train/found/weights/best.safetensors   # section 3's, which carries its model
./train --weights $FOUND --data tests/data/coco8/coco8.yaml --device cpu --workers 1 --img 64 \
    --epochs 1 --batch 8 --project "$T" --name fine --noval --noplots > "$T/fine.log" 2>&1
if grep -q "^the model of $FOUND on cpu" "$T/fine.log" && ! grep -q null "$T/fine.log" &&
   grep -q "^cfg: ''  # the model of $FOUND" "$T/fine/opt.yaml"; then
    ok "fine-tuning without --cfg: $(grep '^the model of' "$T/fine.log" | cut -c1-80)..."
else bad "fine-tuning without --cfg: $(grep ' on cpu' "$T/fine.log"); $(grep '^cfg' "$T/fine/opt.yaml")"; fi

# 5. --task test validates the yaml's test: split; a yaml without one is refused
printf 'path: %s\ntrain: images/train2017\nval: images/train2017\ntest: [images/train2017/000000000030.jpg, images/train2017/000000000143.jpg]\nnc: 80\n' \
    "$ROOT/tests/data/coco8" > "$T/test.yaml"
./val --data "$T/test.yaml" $VMINI --task test --noplots --project "$T" > "$T/out" 2>&1
grep -q "^ *all  *2 " "$T/out" && ok "--task test: the test: split's 2 pictures" || bad "--task test: $(grep -m1 'all\|val' "$T/out")"
./val --data tests/data/coco8/coco8.yaml $VMINI --task test --project "$T" > /dev/null 2> "$T/err"
grep -q "has no 'test:' split" "$T/err" && ok "--task test without a test: split: $(cat "$T/err")" || bad "--task test, none: $(cat "$T/err")"

# 6. --batch -1, AutoBatch: the CPU takes the official's default; on a device, the largest batch whose plan fits
#    80% of its free memory (YOLO_FREE_MEMORY stands for the device's figure): that batch fits 80% of 0.3 GB as
#    --mem-budget judges it, the next one does not (it would need --ckpt)
./train --batch -1 $MINI --data tests/data/coco8/coco8.yaml --dry-run > "$T/out" 2>&1
grep -q "^AutoBatch: no device memory to measure on the cpu, using the default batch-size 16" "$T/out" &&
    ok "--batch -1 on the CPU: $(grep AutoBatch "$T/out")" || bad "--batch -1 on the CPU: $(tail -n 1 "$T/out")"
YOLO_FREE_MEMORY=0.3G ./train --batch -1 $MINI --data tests/data/coco8/coco8.yaml --dry-run > "$T/out" 2>&1
b=$(sed -n 's/^AutoBatch: batch-size \([0-9]*\) for .*/\1/p' "$T/out")
fits() { ./train --batch $1 $MINI --data tests/data/coco8/coco8.yaml --mem-budget 0.24G --dry-run 2>&1 | grep -q "^memory budget 0.24 GB: batch $1\$"; }
if [ -n "$b" ] && fits $b && ! fits $((b + 1)); then ok "--batch -1, 0.3 GB free: $(grep AutoBatch "$T/out")"
else bad "AutoBatch at 0.3 GB: '$(grep -m1 'AutoBatch\|train:' "$T/out")'; batch $b fits 0.24 GB: $(fits ${b:-1} && echo yes || echo no)"; fi

# 7. --device 0,1: train starts itself under mpirun, one process a GPU, saying the command (here the processes
#    find no GPU); --evolve is refused before anything runs
cd "$W"
if grep -q MPI_Init "$BIN/train"; then
    eval "$(ours "$DDP_README" | sed -e 's/--device [0-9,]*/--device 0,1/' -e 's/--batch 128/--batch 4/')" --dry-run > "$T/ddp.log" 2>&1
    grep -q "^train: --device 0,1: 2 processes, one a GPU: mpirun .*-np 2 $BIN/train --workers 8 --device 0,1 --sync-bn --batch 4" "$T/ddp.log" &&
        ok "--device 0,1: $(grep -m1 '^train: --device' "$T/ddp.log" | cut -c1-110)..." || bad "--device 0,1: $(head -n 3 "$T/ddp.log")"
else ok "--device 0,1: this build has no MPI (skipped)"; fi
$BIN/train --cfg tiny.yaml --data coco.yaml --evolve --name evolved > /dev/null 2> "$T/err"; rc=$?
[ $rc = 2 ] && [ ! -d runs/train/evolved ] && grep -q "^train: --evolve .* is not implemented" "$T/err" &&
    ok "--evolve refused up front: $(cut -c1-90 "$T/err")..." || bad "--evolve: rc $rc, $(cat "$T/err")"
cd "$ROOT"

# 8. a training set without labels is refused naming the folder searched; polygon rows become their boxes as the
#    official segments2boxes (a file with any row of more than 6 numbers is polygons throughout)
mkdir -p "$T/nolab/images/x" "$T/poly/images/x" "$T/poly/labels/x"
cp $IMG/000000000030.jpg $IMG/000000000143.jpg "$T/nolab/images/x/"
printf 'path: %s\ntrain: images/x\nval: images/x\nnc: 80\n' "$T/nolab" > "$T/nolab.yaml"
./train $MINI --data "$T/nolab.yaml" --project "$T/runs" > /dev/null 2> "$T/err"; rc=$?
grep -q "^train: no labels found in $T/nolab/labels/x " "$T/err" && [ $rc = 1 ] && [ ! -d "$T/runs" ] && [ "$(wc -l < "$T/err")" = 1 ] &&
    ok "no labels: $(cut -c1-100 "$T/err")..." || bad "no labels: rc $rc, $(cat "$T/err")"
cp $IMG/000000000030.jpg $IMG/000000000143.jpg "$T/poly/images/x/"
echo "3 0.1 0.2 0.4 0.25 0.3 0.6 0.05 0.5" > "$T/poly/labels/x/000000000030.txt"
printf '1 0.5 0.5 0.2 0.2\n2 0.9 0.1 0.7 0.3 0.8 0.2 0.75 0.05\n' > "$T/poly/labels/x/000000000143.txt"
printf 'path: %s\ntrain: images/x\nval: images/x\nnc: 80\n' "$T/poly" > "$T/poly.yaml"
./train $MINI --data "$T/poly.yaml" --dry-run > "$T/out" 2>&1
if python3 - "$T/poly/labels/x.cache" <<'PY'
import sys
def box(c, pts):   # segments2boxes: (min x, min y, max x, max y) -> cx cy w h
    xs, ys = pts[0::2], pts[1::2]
    return [c, (min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2, max(xs) - min(xs), max(ys) - min(ys)]
want = {"000000000030.jpg": [box(3, [0.1, 0.2, 0.4, 0.25, 0.3, 0.6, 0.05, 0.5])],
        "000000000143.jpg": [box(1, [0.5, 0.5, 0.2, 0.2]), box(2, [0.9, 0.1, 0.7, 0.3, 0.8, 0.2, 0.75, 0.05])]}
lines = open(sys.argv[1]).read().split("\n")[1:]
got = {}
for i, l in enumerate(lines):
    if "|" in l:
        n = int(l.split()[2]); v = list(map(float, lines[i + 1].split())) if n else []
        got[l.split("|")[1].split("/")[-1]] = [v[k * 5:k * 5 + 5] for k in range(n)]
ok = all(len(got.get(k, [])) == len(b) and all(abs(x - y) < 1e-6 for g, w in zip(got[k], b) for x, y in zip(g, w)) for k, b in want.items())
print("  boxes", got)
sys.exit(0 if ok else 1)
PY
then ok "polygon rows as segments2boxes makes them (a 5-number row among polygons: a polygon of two points)"
else bad "polygon rows: $(head -n 3 "$T/out")"; fi

# 9. honest endings: an unwritable --project fails at once, naming the folder; a file that cannot be
#    written makes the exit status non-zero, names it, and no "Results saved"; a missing --source makes
#    no run folder
for p in train val detect; do
    case $p in
        train) args="$MINI --data tests/data/coco8/coco8.yaml";;
        val) args="$VMINI --data tests/data/coco8/coco8.yaml --weights $FOUND";;
        detect) args="--cfg $TINY/model.yaml --weights $TINY/weights.safetensors --source $IMG --device cpu --img 64";;
    esac
    ./$p $args --project /proc > "$T/out" 2> "$T/err"; rc=$?
    [ $rc != 0 ] && grep -q "/proc/exp: cannot create the run's folder" "$T/err" && ! grep -q "Results saved" "$T/out" &&
        ok "$p --project /proc: rc $rc, $(cat "$T/err")" || bad "$p --project /proc: rc $rc, $(cat "$T/out" "$T/err" | tail -n 2)"
done
mkdir -p "$T/full/d/000000000143.jpg" "$T/full/v/v_predictions.json" "$T/full/t/results.png"
cp $FOUND "$T/v.safetensors"
./detect --cfg $TINY/model.yaml --weights $TINY/weights.safetensors --source $IMG --device cpu --img 64 --project "$T/full" \
    --name d --exist-ok > "$T/out" 2> "$T/err"; rc=$?
[ $rc = 1 ] && grep -q "^$T/full/d/000000000143.jpg: cannot write" "$T/err" && ! grep -q "Results saved" "$T/out" &&
    ok "detect, a picture not written: rc 1, $(grep -m1 'cannot write' "$T/err")" || bad "detect, a picture not written: rc $rc"
./val $VMINI --data tests/data/coco8/coco8.yaml --weights "$T/v.safetensors" --save-json --project "$T/full" --name v --exist-ok \
    > "$T/out" 2> "$T/err"; rc=$?
[ $rc = 1 ] && grep -q "v_predictions.json: cannot write" "$T/err" && ! grep -q "Results saved" "$T/out" &&
    ok "val, the .json not written: rc 1, $(grep -m1 'cannot write' "$T/err")" || bad "val, the .json not written: rc $rc, $(cat "$T/err")"
./train $MINI --data tests/data/coco8/coco8.yaml --project "$T/full" --name t --exist-ok > "$T/out" 2> "$T/err"; rc=$?
[ $rc = 1 ] && grep -q "^$T/full/t/results.png: cannot write" "$T/err" && ! grep -q "Results saved" "$T/out" &&
    ok "train, results.png not written: rc 1, $(grep -m1 'cannot write' "$T/err")" || bad "train, results.png not written: rc $rc"
./detect --cfg $TINY/model.yaml --weights $TINY/weights.safetensors --source "$T/missing.jpg" --device cpu --project "$T/ms" \
    > "$T/out" 2> "$T/err"; rc=$?
[ $rc = 1 ] && [ ! -d "$T/ms" ] && ! grep -q "Results saved" "$T/out" && ok "a missing --source: no run folder, $(cat "$T/err")" ||
    bad "a missing --source: rc $rc, folder $(ls "$T/ms" 2>&1)"

# 10. the final line lists the files that exist, every one of them (no PR curves where nothing was found right)
line=$(grep "^Results saved to " "$T/train.log")
dir=$(echo "$line" | sed 's/^Results saved to \([^:]*\): .*/\1/')
listed=$(echo "$line" | sed 's/^[^:]*: //' | tr -d ' ' | tr ',' '\n' | sort)
there=$(cd "$W/$dir" 2>/dev/null && find . -type f | sed 's#^\./##' | sort)
[ -n "$listed" ] && [ "$listed" = "$there" ] && ok "train's last line names the $(echo "$listed" | wc -l) files of $dir, no others" ||
    bad "the last line: '$line'; there: $(echo $there)"

# 11. detect as the official prints and saves: height x width, the Speed: line, no .txt without detections
./detect --cfg $TINY/model.yaml --weights $TINY/weights.safetensors --source $IMG --device cpu --img 64 --save-txt --nosave \
    --conf-thres 0.99 --project "$T" --name none > "$T/out" 2>&1
grep -q "000000000472.jpg: 32x64 (no detections)" "$T/out" && ok "sizes as the official's: 000000000472.jpg (wide) 32x64, height first" ||
    bad "sizes: $(grep 472 "$T/out")"
grep -q "^Speed: [0-9.]*ms pre-process, [0-9.]*ms inference, [0-9.]*ms NMS per image at shape (1, 3, 64, 64)$" "$T/out" &&
    ok "$(grep ^Speed "$T/out")" || bad "no Speed: line"
[ -d "$T/none/labels" ] && [ -z "$(ls "$T/none/labels")" ] && grep -q "^0 labels saved to" "$T/out" &&
    ok "no detections: no .txt, 0 labels saved" || bad "no detections: $(ls "$T/none/labels")"

# 12. the converter's hint is right from any folder: the path it gives to weights/convert.py exists from there
for d in "$ROOT" "$T"; do
    (cd "$d" && $BIN/val --weights $ROOT/tests/data/tiny-gelan-1epoch-unstripped.pt --data $ROOT/tests/data/coco8/coco8.yaml) \
        > /dev/null 2> "$T/err"
    tool=$(sed -n 's/.*convert it first: python3 \([^ ]*\) .*/\1/p' "$T/err")
    [ -n "$tool" ] && (cd "$d" && [ -f "$tool" ]) && ok "from $d: python3 $tool ..." || bad "from $d: $(cat "$T/err")"
done

[ $fail = 0 ] && echo "test_official_commands: 0 failed" || echo "test_official_commands: $fail failed"
[ $fail = 0 ]
