#!/bin/sh
# train on the CPU: a tiny network learns the 8 bundled pictures (the loss
# falls), its checkpoint loads back into val, a run killed mid-way resumes
# to exactly the numbers of an uninterrupted one, and bad input gets one
# clear line and a non-zero exit. Run from the repository root.
. tests/common.sh
CFG=tests/golden/tiny-gelan/model.yaml
DATA=tests/data/coco8/coco8.yaml
RUN="./train --cfg $CFG --data $DATA --hyp tests/data/hyp-noaug.yaml --img 96 --batch 8 --epochs 16 --device cpu --workers 2 --project $T"

# 1. it learns: the summed loss of the last epoch below 95% of the first
$RUN --name a > "$T/a.log" 2>&1 || { bad "training run failed"; cat "$T/a.log"; }
first=$(awk -F, 'NR == 2 { print $2 + $3 + $4 }' "$T/a/results.csv")
last=$(awk -F, 'END { print $2 + $3 + $4 }' "$T/a/results.csv")
if awk "BEGIN { exit !($last < 0.95 * $first) }"; then ok "loss falls: $first -> $last over 16 epochs"; else bad "loss does not fall: $first -> $last"; fi

# 2. the checkpoint loads back (val reads the EMA weights under the official names)
if ./val --cfg $CFG --weights "$T/a/weights/last.safetensors" --data $DATA --img 96 --batch 4 --device cpu --project $T > "$T/val.log" 2>&1 &&
   grep -q "^ *all " "$T/val.log"; then ok "val loads the checkpoint"; else bad "val cannot use the checkpoint"; cat "$T/val.log"; fi

# 2b. training validates at twice its batch, as the official val_loader (batch_size * 2): a
#     batch's rectangle depends on its pictures. Weights that find something (val-tiny's),
#     learning rate 0 (only BatchNorm's statistics move): the epoch's P, R, mAP50, mAP50-95
#     are val's at batch 4, not at batch 2 (where coco8's rectangles differ)
sed -e 's/^lr0: .*/lr0: 0.0/' -e 's/^warmup_bias_lr: .*/warmup_bias_lr: 0.0/' tests/data/hyp-noaug.yaml > "$T/hyp-lr0.yaml"
./train --cfg $CFG --weights tests/golden/val-tiny/weights.safetensors --data $DATA --hyp "$T/hyp-lr0.yaml" --img 128 \
        --batch 2 --epochs 1 --device cpu --workers 2 --project $T --name vb --save-period 1 > "$T/vb.log" 2>&1 || bad "the lr 0 run failed"
ours=$(awk -F, 'END { printf "%.3g %.3g %.3g %.3g", $5, $6, $7, $8 }' "$T/vb/results.csv")
for vb in 4 2; do
    ./val --cfg $CFG --weights "$T/vb/weights/epoch0.safetensors" --data $DATA --img 128 --batch $vb --device cpu --project $T \
        2>&1 | awk '$1 == "all" { print $4, $5, $6, $7 }' > "$T/val$vb"
done
if [ "$ours" = "$(cat "$T/val4")" ] && [ "$ours" != "$(cat "$T/val2")" ]; then
    ok "training validates at twice its batch: P R mAP50 mAP50-95 $ours (val at batch 2: $(cat "$T/val2"))"
else bad "training's validation $ours, val at batch 4: $(cat "$T/val4"), at batch 2: $(cat "$T/val2")"; fi

# 3. killed after epoch 6, resumed: the same last epoch as the uninterrupted run, in float32 and in
#    half (--precision half, the official's AMP: its first steps overflow and halve the loss scale,
#    which the checkpoint keeps)
resumed_equal() {   # NAME of the uninterrupted run, then the flags of both runs
    name=$1; shift
    $RUN "$@" --name $name-k > "$T/$name-k.log" 2>&1 &
    pid=$!
    while kill -0 $pid 2>/dev/null && [ "$(cat "$T/$name-k/results.csv" 2>/dev/null | grep -c '^ *[0-9]')" -lt 7 ]; do sleep 0.2; done
    kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
    ./train --resume "$T/$name-k/weights/last.safetensors" > "$T/$name-r.log" 2>&1 || { bad "resume failed"; cat "$T/$name-r.log"; }
    ea=$(tail -n 1 "$T/$name/results.csv" | cut -d, -f1-8); eb=$(tail -n 1 "$T/$name-k/results.csv" | cut -d, -f1-8)
    rows=$(grep -c '^ *[0-9]' "$T/$name-k/results.csv")
    if [ "$ea" = "$eb" ] && [ "$rows" = 16 ]; then ok "killed and resumed${*:+ ($*)}: last epoch equal to the uninterrupted run ($eb)"
    else bad "resume${*:+ ($*)} differs: '$ea' vs '$eb' ($rows rows)"; fi
}
resumed_equal a
$RUN --precision half --name h > "$T/h.log" 2>&1 || bad "the half run failed"
first=$(awk -F, 'NR == 2 { print $2 + $3 + $4 }' "$T/h/results.csv"); last=$(awk -F, 'END { print $2 + $3 + $4 }' "$T/h/results.csv")
if awk "BEGIN { exit !($last < 0.95 * $first) }"; then ok "half: the loss falls behind the loss scaler: $first -> $last"; else bad "half: the loss does not fall: $first -> $last"; fi
resumed_equal h --precision half

# 3b. it learns like the official: the same network, weights, pictures and recipe
#     as the official train_dual.py run of tests/golden/train-tiny. The first four
#     epochs (the loss before any step and after each of the first three) equal
#     to 2e-4; later ones, where float32 differences in the gradients compound,
#     within 5%.
G=tests/golden/train-tiny
./train --cfg tests/golden/tiny-dual/model.yaml --weights tests/golden/tiny-dual/weights.safetensors --data $G/data.yaml \
        --hyp $G/hyp.yaml --img 128 --batch 8 --epochs 12 --device cpu --workers 2 --noval \
        --project $T --name official > "$T/official.log" 2>&1 || bad "the official-recipe run failed"
if awk -F, 'NR == FNR { if (FNR > 1) for (i = 2; i <= 4; i++) o[$1 + 0, i] = $i; next }
            FNR > 1 { for (i = 2; i <= 4; i++) { r = ($i - o[$1 + 0, i]) / o[$1 + 0, i]; if (r < 0) r = -r
                      tol = $1 < 4 ? 2e-4 : 0.05; if (r > tol) { printf "epoch %d column %d: ours %s official %s\n", $1, i, $i, o[$1 + 0, i]; bad = 1 }
                      if (r > worst[$1 < 4]) worst[$1 < 4] = r } }
            END { printf "worst relative difference: epochs 0-3 %.1e, epochs 4-11 %.1e\n", worst[1], worst[0] > "/dev/stderr"; exit bad }' \
       $G/official.csv "$T/official/results.csv" 2> "$T/worst"; then
    ok "losses follow the official train_dual.py: $(cat "$T/worst")"
else bad "losses leave the official train_dual.py's: $(cat "$T/worst")"; fi

# 3c. a bf16 run validates its EMA in half and leaves it rounded to half, as the official
#     mixed-precision run does (its val turns ema.ema to half and back): every EMA value of
#     the checkpoint written after the last validation is a half (a run that validated in
#     bf16 keeps float32 values: 586 of 755,560 were halves)
./train --cfg $CFG --data $DATA --hyp tests/data/hyp-noaug.yaml --img 96 --batch 4 --epochs 2 --device cpu --workers 2 \
        --project $T --name bf16 --precision bf16 --save-period 1 > "$T/bf16.log" 2>&1 || bad "the bf16 run failed"
python3 - "$T/bf16/weights/epoch1.safetensors" > "$T/halves" <<'EOF'
import json, struct, sys
b = open(sys.argv[1], 'rb').read()
n = struct.unpack('<Q', b[:8])[0]
off, total, halves = 8 + n, 0, 0
for name, e in json.loads(b[8:off]).items():
    if name == '__metadata__' or name.startswith('train.'): continue
    s, t = e['data_offsets']
    for v in struct.unpack('<%df' % ((t - s) // 4), b[off + s:off + t]):
        total += 1; halves += struct.unpack('<e', struct.pack('<e', v))[0] == v
print(halves, total)
EOF
read halves total < "$T/halves"
if [ "${total:-0}" -gt 0 ] && [ "$halves" = "$total" ]; then ok "bf16 run: the EMA after validation is in half precision ($total values)"
else bad "bf16 run: ${halves:-?} of ${total:-?} EMA values are halves after validation"; fi

# 4. --ckpt: two epochs with every block recomputed give the very same numbers
SHORT="./train --cfg $CFG --data $DATA --hyp tests/data/hyp-noaug.yaml --img 96 --batch 4 --epochs 2 --device cpu --workers 2 --project $T --noval"
$SHORT --name plain > /dev/null 2>&1 && $SHORT --name ckpt --ckpt > "$T/ckpt.log" 2>&1 || bad "--ckpt run failed"
if [ -s "$T/plain/results.csv" ] && [ "$(cut -d, -f1-4 "$T/plain/results.csv")" = "$(cut -d, -f1-4 "$T/ckpt/results.csv")" ] &&
   grep -q "(--ckpt)" "$T/ckpt.log"; then ok "--ckpt: losses equal to the last digit over 2 epochs"; else bad "--ckpt changes the losses"; fi
# 4b. a graph no official file has: a Concat that reads the picture (through Silence) beside a map, and a head
#     that reads Conv outputs, made again for it under --ckpt (both crashed once); with and without --ckpt alike
ODD="./train --cfg tests/data/odd-graph.yaml --data $DATA --hyp tests/data/hyp-noaug.yaml --img 64 --batch 4 --epochs 2 --device cpu --workers 2 --project $T --noval"
$ODD --name odd > "$T/odd.log" 2>&1 && $ODD --name oddckpt --ckpt > "$T/oddckpt.log" 2>&1 || bad "the odd graph's runs failed"
if [ -s "$T/odd/results.csv" ] && [ "$(cut -d, -f1-4 "$T/odd/results.csv")" = "$(cut -d, -f1-4 "$T/oddckpt/results.csv")" ]; then
    ok "an odd graph (the picture in a Concat, a head on Conv outputs) trains, --ckpt equal to the last digit"
else bad "the odd graph: runs failed or --ckpt changes its losses"; fi

# 5. --mem-budget: picks recompute, or the batch; refuses what cannot fit, saying what would
#    (budgets of 0.08, 0.075 and 0.0706 GB plus the 128 MiB, 0.1342 GB, of
#    the staged convs' buffer in YOLO_BACKEND_SCRATCH_BYTES, which every
#    plan counts, on the CPU too)
B="./train --cfg $CFG --data $DATA --img 96 --device cpu --dry-run"
if $B --batch 8 --mem-budget 0.2142G 2>&1 | grep -q "batch 8 with --ckpt"; then ok "--mem-budget 0.2142G at batch 8: --ckpt chosen"; else bad "--mem-budget did not choose --ckpt"; fi
if $B --mem-budget 0.2092G 2>&1 | grep -q "memory budget 0.21 GB: batch [0-9]"; then ok "--mem-budget 0.2092G: $($B --mem-budget 0.2092G 2>&1 | grep 'memory budget')"; else bad "--mem-budget did not choose a batch"; fi
if $B --batch 8 --mem-budget 0.2048G > /dev/null 2> "$T/err"; then bad "an impossible budget exits 0"
elif grep -q "would fit" "$T/err"; then ok "budget too small for batch 8: $(tail -n 1 "$T/err")"; else bad "no 'would fit' advice"; cat "$T/err"; fi

# 6. bad input: one clear line, non-zero exit
expect_error() {   # name, pattern the message must hold, command...
    name=$1; pat=$2; shift 2
    if "$@" > "$T/out" 2> "$T/err"; then bad "$name: exit 0"; return; fi
    if grep -q -- "$pat" "$T/err"; then ok "$name: $(head -n 1 "$T/err")"; else bad "$name: message lacks '$pat'"; cat "$T/err"; fi
}
mkdir -p "$T/d/images/x" "$T/d/labels/x"
cp tests/data/coco8/images/train2017/000000000030.jpg "$T/d/images/x/a.jpg"
echo "0 0.5 0.5 0.2 0.2" > "$T/d/labels/x/a.txt"
printf 'path: .\ntrain: images/x\nval: images/x\nnc: 3\n' > "$T/d/ok.yaml"
printf 'path: .\ntrain: images/missing\nval: images/x\nnc: 3\n' > "$T/d/missing.yaml"
TINY="./train --cfg $CFG --img 64 --batch 2 --epochs 1 --device cpu --workers 0 --project $T --noval"
expect_error "missing dataset path" "images/missing: no such file" $TINY --data "$T/d/missing.yaml"
expect_error "unknown optimizer" "unknown optimizer 'Lion2'" $TINY --data "$T/d/ok.yaml" --optimizer Lion2
grep -v '^mixup' tests/data/hyp-noaug.yaml > "$T/d/hyp.yaml"
expect_error "hyp without a key" "hyp.yaml: missing key 'mixup'" $TINY --data "$T/d/ok.yaml" --hyp "$T/d/hyp.yaml"
echo "7 0.5 0.5 0.2 0.2" > "$T/d/labels/x/a.txt"
expect_error "label class >= nc" "a.txt:1: class 7 is not below nc 3" $TINY --data "$T/d/ok.yaml"
echo "0 0.5 0.5 0.2 0.2" > "$T/d/labels/x/a.txt"
echo "not a picture" > "$T/d/images/x/b.jpg"
# a picture that cannot be read is left out with a line, as the official's verify_image_label leaves it out
if $TINY --data "$T/d/ok.yaml" > "$T/out" 2> "$T/err" && grep -q "b.jpg: not a JPEG, PNG or BMP picture.*left out" "$T/err"
then ok "unreadable image left out, the run goes on: $(grep b.jpg "$T/err")"; else bad "unreadable image"; cat "$T/err"; fi
rm "$T/d/images/x/b.jpg"
# a malformed row skips its picture with a warning naming file:line; the run goes on
cp "$T/d/images/x/a.jpg" "$T/d/images/x/c.jpg"
printf '0 0.5 0.5 0.2 0.2\n1 0.5 0.5\n' > "$T/d/labels/x/c.txt"
if $TINY --data "$T/d/ok.yaml" --name skip > "$T/out" 2> "$T/err" && grep -q "c.txt:2: expected 5 numbers" "$T/err" &&
   grep -q "train: 1 images" "$T/out"; then ok "bad row: picture skipped, run goes on: $(head -n 1 "$T/err")"
else bad "bad row not handled"; cat "$T/err" "$T/out"; fi

# 7. a loss that is not finite stops the run with one line and writes no checkpoint:
#    a first conv of 3e38 (finite, so the weights load) overflows the forward
python3 - tests/golden/tiny-dual/weights.safetensors "$T/huge.safetensors" <<'EOF'
import json, struct, sys
b = open(sys.argv[1], 'rb').read()
n = struct.unpack('<Q', b[:8])[0]
s, t = json.loads(b[8:8 + n])['model.0.conv.weight']['data_offsets']
body = bytearray(b[8 + n:])
body[s:t] = struct.pack('<%df' % ((t - s) // 4), *[3e38] * ((t - s) // 4))
open(sys.argv[2], 'wb').write(b[:8 + n] + bytes(body))
EOF
if ./train --cfg tests/golden/tiny-dual/model.yaml --weights "$T/huge.safetensors" --data $G/data.yaml --hyp $G/hyp.yaml \
       --img 128 --batch 8 --epochs 2 --device cpu --workers 0 --noplots --project $T --name diverged > "$T/out" 2> "$T/err"; then
    bad "a non-finite loss: exit 0"
elif [ "$(grep -c . "$T/err")" = 1 ] && grep -q "the loss is" "$T/err" && ! ls "$T/diverged/weights/"*.safetensors > /dev/null 2>&1
then ok "a non-finite loss stops the run, nothing saved: $(cat "$T/err")"
else bad "a non-finite loss: $(cat "$T/err"; ls "$T/diverged/weights" 2>&1)"; fi

echo "test_train: $fail failed"
[ $fail = 0 ]
