#!/bin/sh
# What a user of the official YOLOv9 reaches for: the official flags with
# their arity, weights that describe themselves (no --cfg), a .pt refused
# with the converter's command, fine-tuning from a checkpoint of other
# classes, --freeze. Run from the repository root.
. tests/common.sh
IMG=tests/data/coco8/images/train2017
DATA=tests/data/coco8/coco8.yaml
CFG=tests/golden/tiny-gelan/model.yaml
W=tests/golden/tiny-gelan/weights.safetensors
DET="./detect --device cpu --img 64 --project $T --exist-ok"
# a 3-class dataset of two pictures
mkdir -p "$T/d/images/x" "$T/d/labels/x"
cp $IMG/000000000030.jpg "$T/d/images/x/a.jpg"; cp $IMG/000000000143.jpg "$T/d/images/x/b.jpg"
echo "0 0.5 0.5 0.4 0.4" > "$T/d/labels/x/a.txt"; echo "2 0.4 0.5 0.3 0.6" > "$T/d/labels/x/b.txt"
printf 'path: .\ntrain: images/x\nval: images/x\nnc: 3\nnames: [cat, dog, bird]\n' > "$T/d/three.yaml"

# 1. --help and -h: the flag table on stdout, exit 0
for p in train val detect; do
    if ./$p --help > "$T/help" 2>&1 && ./$p -h > /dev/null 2>&1 && grep -q -- "--imgsz" "$T/help"; then ok "$p --help: $(grep -c '^  --' "$T/help") flags listed"
    else bad "$p --help"; fi
done

# 2. every official flag is accepted with its official arity (booleans bare, --classes 0 2, --cache alone, --resume alone);
#    --evolve is refused up front (tests/test_official_commands.sh)
OFFICIAL_TRAIN="--rect --nosave --noval --noautoanchor --noplots --cache --image-weights --multi-scale --single-cls --sync-bn --exist-ok
  --quad --cos-lr --flat-cos-lr --fixed-lr --label-smoothing 0.1 --patience 5 --freeze 2 --save-period 3 --seed 1 --local_rank -1
  --min-items 0 --close-mosaic 1 --entity x --upload_dataset --bbox_interval -1 --artifact_alias latest --bucket x
  --optimizer LION --workers 1 --project $T --name flags --epochs 1 --batch-size 4 --imgsz 64"
if ./train --cfg $CFG --data $DATA --device cpu --dry-run $OFFICIAL_TRAIN > "$T/out" 2> "$T/err"; then
    ok "train takes every official flag ($(wc -l < "$T/err") lines say what does not apply)"
else bad "train refuses an official flag: $(head -n 1 "$T/err")"; fi
if ./train --cfg $CFG --data $DATA --device cpu --dry-run --cache disk > /dev/null 2>&1 && ./train --cfg $CFG --data $DATA --device cpu --dry-run --cache ram --imgsz 64 > /dev/null 2>&1
then ok "train --cache ram|disk"; else bad "train --cache ram|disk"; fi
if ./val --cfg $CFG --data $DATA --device cpu --dry-run --batch-size 2 --imgsz 64 --conf-thres 0.1 --iou-thres 0.6 --max-det 10 --task speed \
        --workers 1 --single-cls --augment --verbose --save-txt --save-hybrid --save-conf --save-json --project $T --name v --exist-ok \
        --half --dnn --min-items 0 > /dev/null 2> "$T/err"; then ok "val takes every official flag"
else bad "val refuses an official flag: $(head -n 1 "$T/err")"; fi
if $DET --cfg $CFG --weights $W --source $IMG/000000000030.jpg --data "$T/d/three.yaml" --conf-thres 0.2 --iou-thres 0.4 --max-det 5 --view-img \
        --save-txt --save-conf --save-crop --nosave --classes 0 2 --agnostic-nms --augment --visualize --update --name d \
        --line-thickness 2 --hide-labels --hide-conf --half --dnn --vid-stride 1 > /dev/null 2> "$T/err"; then ok "detect takes every official flag"
else bad "detect refuses an official flag: $(head -n 1 "$T/err")"; fi

# 3. --classes 0 2 is --classes 0,2; --imgsz H W letterboxes into H x W
$DET --cfg $CFG --weights $W --source $IMG --conf-thres 0.01 --save-txt --nosave --name c1 --classes 0 2 > /dev/null 2>&1
$DET --cfg $CFG --weights $W --source $IMG --conf-thres 0.01 --save-txt --nosave --name c2 --classes 0,2 > /dev/null 2>&1
if [ -n "$(cat "$T/c1/labels"/*.txt)" ] && diff -r "$T/c1/labels" "$T/c2/labels" > /dev/null; then ok "--classes 0 2 equals --classes 0,2"
else bad "--classes 0 2 differs from --classes 0,2"; fi
# 000000000030.jpg is 640x427: at --imgsz 64 128 (h w) it scales by 0.15 to 96 wide, 64 high, already multiples of 32,
# printed height x width as the official
line=$(./detect --cfg $CFG --weights $W --source $IMG/000000000030.jpg --imgsz 64 128 --device cpu --project $T --name hw --nosave 2>&1 | grep '^image')
case "$line" in *": 64x96 "*) ok "--imgsz 64 128: ${line%%,*}";; *) bad "--imgsz 64 128: '$line', expected 64x96";; esac

# 3b. --save-crop as the official save_one_box: one crop per detection, the box grown by
#     2% and 10 pixels, clipped to the picture (sizes checked against the --save-txt rows)
$DET --cfg $CFG --weights $W --source $IMG/000000000030.jpg --conf-thres 0.02 --save-txt --save-crop --name crop > /dev/null 2>&1
if python3 - "$T/crop" 640 427 <<'PY'
import glob, os, struct, sys
d, W, H = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def jpeg_size(p):
    b = open(p, "rb").read(); i = 2
    while i < len(b):
        m, n = b[i + 1], struct.unpack(">H", b[i + 2:i + 4])[0]
        if m in (0xC0, 0xC1, 0xC2): return struct.unpack(">HH", b[i + 5:i + 9])[::-1]
        i += 2 + n
rows = [list(map(float, l.split())) for l in open(glob.glob(d + "/labels/*.txt")[0])]
want = []
for c, x, y, w, h in rows:
    cx, cy, bw, bh = x * W, y * H, w * W * 1.02 + 10, h * H * 1.02 + 10
    x1, x2 = (min(max(int(v), 0), W) for v in (cx - bw / 2, cx + bw / 2)); y1, y2 = (min(max(int(v), 0), H) for v in (cy - bh / 2, cy + bh / 2))
    want.append((x2 - x1, y2 - y1))
got = [jpeg_size(p) for p in glob.glob(d + "/crops/*/*.jpg")]
close = all(any(abs(g[0] - w[0]) <= 1 and abs(g[1] - w[1]) <= 1 for g in got) for w in want)
print("  %d detections, %d crops, sizes as save_one_box: %s" % (len(rows), len(got), close))
sys.exit(0 if rows and len(got) == len(rows) and close else 1)
PY
then ok "--save-crop: one crop per detection, sized as the official save_one_box"; else bad "--save-crop"; fi
if ./train --cfg $CFG --data "$T/d/three.yaml" --device cpu --dry-run --single-cls 2>&1 | grep -q "; 1 classes"; then ok "--single-cls: 3 classes train as 1"
else bad "--single-cls"; fi

# 4. --img 650 rounds up to 672 with the official warning; train's floor is 64
if ./val --cfg $CFG --data $DATA --device cpu --dry-run --img 650 2>&1 | grep -q "updating to 672" &&
   ./train --cfg $CFG --data $DATA --device cpu --dry-run --img 40 2>&1 | grep -q "updating to 64"; then ok "--img 650 -> 672 and train --img 40 -> 64, with a warning"
else bad "--img not rounded up to a multiple of 32"; fi

# 5. detect without --source, a .pt: one line each, non-zero exit
if $DET --weights $W > "$T/out" 2> "$T/err"; then bad "detect without --source exits 0"
elif [ "$(wc -l < "$T/err")" = 1 ]; then ok "no --source: $(cat "$T/err")"; else bad "no --source: $(wc -l < "$T/err") lines"; fi
PT=tests/data/tiny-gelan-1epoch-unstripped.pt
for p in "./detect --source $IMG" "./val --data $DATA" "./train --data $DATA --device cpu --dry-run"; do
    if $p --weights $PT > "$T/out" 2> "$T/err"; then bad "${p%% *} takes a .pt"
    elif [ "$(wc -l < "$T/err")" = 1 ] && grep -q "python3 weights/convert.py $PT" "$T/err"; then ok "${p%% *} with a .pt: $(cat "$T/err")"
    else bad "${p%% *} with a .pt: $(head -n 1 "$T/err")"; fi
done

# 6. self-describing weights: a converted 1-class .pt detects with no --cfg and no --nc, naming its class 'item'
python3 weights/convert.py $PT "$T/item.safetensors" > /dev/null || bad "convert failed"
if $DET --weights "$T/item.safetensors" --source $IMG --conf-thres 0.001 --name item --save-txt > "$T/out" 2> "$T/err" &&
   grep -q " items\?, " "$T/out" && ! grep -q "class0" "$T/out"; then ok "converted 1-class .pt, no --cfg: $(grep -m 1 '^image' "$T/out")"
else bad "converted .pt without --cfg: $(head -n 1 "$T/err")"; fi

# 7. fine-tuning: an 80-class checkpoint starts a 3-class run; every tensor but the
#    class convs' weights and biases (3 levels) transfers, as the official intersect_dicts
./train --cfg $CFG --data $DATA --img 64 --batch 8 --epochs 1 --device cpu --workers 1 --project $T --name c80 --noval > /dev/null 2>&1 ||
    bad "the 80-class run failed"
C80="$T/c80/weights/last.safetensors"
FT="./train --data $T/d/three.yaml --weights $C80 --img 64 --batch 2 --epochs 2 --device cpu --workers 1 --project $T --noval"
$FT --name ft > "$T/ft.log" 2>&1 || { bad "fine-tuning run failed"; cat "$T/ft.log"; }
got=$(sed -n 's/^Transferred \([0-9]*\/[0-9]*\) items.*/\1/p' "$T/ft.log")
want=$(python3 - "$C80" "$T/ft/weights/last.safetensors" <<'PY'
import json, struct, sys
def head(p):
    with open(p, "rb") as f:
        h = json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))
    return {k: v["shape"] for k, v in h.items() if k != "__metadata__" and not k.startswith("train.")}
a, b = head(sys.argv[1]), head(sys.argv[2])
print("%d/%d" % (sum(1 for k in b if k in a and a[k] == b[k]), len(b)))
PY
)
if [ -n "$got" ] && [ "$got" = "$want" ]; then ok "80-class checkpoint into a 3-class model: transferred $got items (name and shape intersection: $want)"
else bad "transferred '$got', the intersection is '$want'"; fi
# ... and the fine-tuned file names its classes: detect draws 'cat', 'dog' or 'bird' with no --cfg, --nc or --data
if $DET --weights "$T/ft/weights/last.safetensors" --source $IMG --conf-thres 0.00001 --name ftd > "$T/out" 2>&1 &&
   grep -q -E " (cat|dog|bird)s?, " "$T/out"; then ok "our checkpoint, no --cfg: $(grep -m 1 '^image' "$T/out")"
else bad "our checkpoint without --cfg: $(grep -m 1 -v '^image' "$T/out")"; fi

# 8. --freeze 3: layers 0-2 keep their transferred weights (the EMA of a constant), layer 3 on moves
$FT --name fz --freeze 3 > "$T/fz.log" 2>&1 || { bad "--freeze run failed"; cat "$T/fz.log"; }
if python3 - "$C80" "$T/fz/weights/last.safetensors" <<'PY'
import json, struct, sys
def load(p):
    with open(p, "rb") as f:
        h = json.loads(f.read(struct.unpack("<Q", f.read(8))[0])); d = f.read()
    fmt = {"F32": ("f", 4), "F16": ("e", 2)}   # a stripped checkpoint is F16, as the official's
    return {k: struct.unpack("<%d%s" % ((v["data_offsets"][1] - v["data_offsets"][0]) // fmt[v["dtype"]][1], fmt[v["dtype"]][0]),
                             d[v["data_offsets"][0]:v["data_offsets"][1]])
            for k, v in h.items() if k != "__metadata__" and not k.startswith("train.")}
a, b = load(sys.argv[1]), load(sys.argv[2])
def half(x): return struct.unpack("<e", struct.pack("<e", x))[0]   # a fresh run starts from model.half().float()
def moved(k): return max(abs(half(x) - y) for x, y in zip(a[k], b[k]))
trained = [k for k in b if k.endswith((".conv.weight", ".bn.weight", ".bn.bias"))]
frozen = [k for k in trained if int(k.split(".")[1]) < 3]
free = [k for k in trained if int(k.split(".")[1]) >= 3 and ".cv3." not in k]
worst_frozen, most_free = max(moved(k) for k in frozen), max(moved(k) for k in free)
print("  frozen layers 0-2 (%d tensors) moved at most %.1e; layers 3+ up to %.1e" % (len(frozen), worst_frozen, most_free))
sys.exit(0 if worst_frozen < 1e-6 and most_free > 1e-4 else 1)
PY
then ok "--freeze 3: $(grep '^freezing' "$T/fz.log")"; else bad "--freeze 3 does not hold layers 0-2"; fi

# 9. a run as the official's: a progress line per epoch into a log, --save-period, the final
#    checkpoints stripped to the EMA weights, opt.yaml and hyp.yaml, the summary; resuming
#    the finished run refuses, --resume keeps the run's own --epochs and says so
RUN="./train --cfg $CFG --data $T/d/three.yaml --hyp tests/data/hyp-noaug.yaml --img 64 --batch 2 --epochs 3 --device cpu --workers 1 --project $T"
$RUN --name run --save-period 2 --noval > "$T/run.log" 2>&1 || { bad "the run failed"; cat "$T/run.log"; }
bars=$(grep -c "100% |##########| 1/1 \[.*img/s, data wait" "$T/run.log")
if [ "$bars" = 3 ] && grep -q "^3 epochs completed in" "$T/run.log" && grep -q "^Best epoch" "$T/run.log"; then
    ok "progress into a log: one line per epoch ($(grep -m 1 '100%' "$T/run.log" | sed 's/  */ /g')); the summary"
else bad "progress lines ($bars) or summary missing"; fi
if python3 - "$T/run/weights" <<'PY'
import json, os, struct, sys
def head(p):
    with open(p, "rb") as f:
        return json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))
d = sys.argv[1]
full, last, best = (head(os.path.join(d, f)) for f in ("epoch0.safetensors", "last.safetensors", "best.safetensors"))
sizes = [os.path.getsize(os.path.join(d, f)) for f in ("epoch0.safetensors", "last.safetensors")]
train = [k for k in last if k.startswith("train.")] + [k for k in best if k.startswith("train.")]
print("  epoch0 (a full checkpoint) %.1f MB, last stripped %.1f MB; stripped files hold %d train.* tensors" % (sizes[0] / 1e6, sizes[1] / 1e6, len(train)))
ok = not train and any(k.startswith("train.") for k in full) and sizes[1] < sizes[0] / 2 and "yaml" in last["__metadata__"]
sys.exit(0 if ok and os.path.exists(os.path.join(d, "epoch2.safetensors")) and not os.path.exists(os.path.join(d, "epoch1.safetensors")) else 1)
PY
then ok "--save-period 2: epoch0 and epoch2; last and best stripped to the EMA weights"; else bad "checkpoints: not stripped, or --save-period wrong"; fi
lr0=$(sed -n 's/^lr0: //p' "$T/run/hyp.yaml"); want=$(sed -n 's/^lr0: *//p' tests/data/hyp-noaug.yaml)
if [ -n "$lr0" ] && awk "BEGIN { exit !($lr0 == $want) }" && grep -q "^epochs: 3$" "$T/run/opt.yaml" && grep -q "^save_period: 2$" "$T/run/opt.yaml"
then ok "opt.yaml and hyp.yaml in the run folder (lr0 $lr0, epochs 3)"; else bad "opt.yaml/hyp.yaml missing or wrong"; fi
if ./train --resume "$T/run/weights/last.safetensors" > "$T/out" 2> "$T/err"; then bad "resuming a finished run exits 0"
elif grep -q "is finished, nothing to resume" "$T/err"; then ok "resuming the finished run: $(head -n 1 "$T/err")"; else bad "resume finished: $(cat "$T/err")"; fi
if ./train --resume "$T/run/weights/epoch0.safetensors" --epochs 6 > "$T/out" 2> "$T/err" && grep -q "^2 epochs completed" "$T/out" &&
   grep -q "epochs 6 ignored" "$T/err"; then ok "--resume --epochs 6 from epoch 0 of 3: epochs 1-2 run; $(head -n 1 "$T/err")"
else bad "--resume --epochs: $(head -n 1 "$T/err")"; fi


# 10. the loader's and optimizer's official flags in a run (each held to the official in
#     test_augment and golden_check): two epochs each, with finite losses
for flags in "--rect --multi-scale --optimizer LION" "--quad --image-weights --multi-scale"; do
    n=$(echo "$flags" | tr -d ' -'); TR="./train --cfg $CFG --data $DATA --device cpu --img 64 --batch-size 4 --workers 2 --noplots"
    if $TR --epochs 2 $flags --project $T --name $n > "$T/$n.log" 2>&1 && [ "$(grep -c '^ *[0-9]' "$T/$n/results.csv")" = 2 ] &&
       awk -F, 'NR > 1 { for (k = 2; k <= 4; k++) if ($k + 0 != $k + 0 || $k + 0 <= 0 || $k + 0 > 1e6) exit 1 }' "$T/$n/results.csv"
    then ok "train $flags: 2 epochs, losses $(tail -n 1 "$T/$n/results.csv" | cut -d, -f2-4 | tr -s ' ')"
    else bad "train $flags: $(grep -v '^ ' "$T/$n.log" | tail -n 2)"; fi
done

echo "test_official: $fail failed"
[ $fail = 0 ]
