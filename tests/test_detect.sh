#!/bin/sh
# detect on the CPU with the tiny golden network: every kind of --source,
# drawn pictures and labels written, --classes and --max-det respected,
# --half computing in float32 on the CPU, bad sources refused, and no invalid memory access under AddressSanitizer.
# Run from the repository root.
. tests/common.sh
IMG=tests/data/coco8/images/train2017
D="./detect --cfg tests/golden/tiny-gelan/model.yaml --weights tests/golden/tiny-gelan/weights.safetensors --img 64 --device cpu --conf-thres 0.01 --project $T"

ls $IMG/*.jpg | head -n 3 > "$T/list.txt"
for src in "$IMG/000000000030.jpg:1" "$IMG:8" "$IMG/*0.jpg:1" "$T/list.txt:3"; do
    s=${src%:*}; n=${src##*:}
    out=$($D --source "$s" --name src --exist-ok 2>&1) || { bad "--source $s failed: $out"; continue; }
    lines=$(echo "$out" | grep -c "^image ")
    if [ "$lines" = "$n" ]; then ok "--source $s: $n pictures, one line each"; else bad "--source $s: $lines lines, $n expected"; fi
done
$D --source $IMG --name run --save-txt --save-conf --classes 0,2 --max-det 4 > "$T/out" 2>&1 || bad "detect failed"
pics=$(ls "$T/run"/*.jpg 2>/dev/null | wc -l); txts=$(ls "$T/run/labels"/*.txt 2>/dev/null | wc -l)
if [ "$pics" = 8 ] && [ "$txts" = 8 ]; then ok "8 pictures drawn, 8 label files"; else bad "$pics pictures, $txts label files"; fi
rows=$(cat "$T/run/labels"/*.txt | wc -l)
if [ "$rows" -gt 0 ] && cat "$T/run/labels"/*.txt | awk 'NF != 6 || ($1 != 0 && $1 != 2) || $6 < 0.01 { bad = 1 } END { exit bad }'; then
    ok "--classes 0,2, --save-conf, --conf-thres hold in all $rows rows"; else bad "no rows, or a row breaks --classes/--save-conf/--conf-thres"; fi
most=$(wc -l "$T/run/labels"/*.txt | grep -v total | awk '$1 > m { m = $1 } END { print m + 0 }')
if [ "$most" -le 4 ]; then ok "--max-det 4 holds (at most $most per picture)"; else bad "--max-det 4 exceeded: $most"; fi
# --half on the CPU: as the official code, it computes in float32, says so, and finds the same boxes
$D --source $IMG --name half --save-txt --save-conf --classes 0,2 --max-det 4 --half > "$T/out" 2> "$T/err" || bad "detect --half failed"
if grep -q "no half-precision path, computing in float32" "$T/err" && diff -r "$T/run/labels" "$T/half/labels" > /dev/null; then
    ok "--half on the CPU: says it computes in float32, the same labels"; else bad "--half on the CPU: $(head -n 1 "$T/err")"; fi
if $D --source "$T/nothing.gif" > /dev/null 2> "$T/err"; then bad "a bad source exits 0"; else ok "bad source: $(head -n 1 "$T/err")"; fi
if ASAN_OPTIONS=detect_leaks=0 tests/asan_detect ${D#./detect} --source $IMG --name asan > "$T/out" 2>&1; then ok "detect under AddressSanitizer: 8 pictures, no invalid access"
else bad "detect under AddressSanitizer: $(grep -m 1 -E 'ERROR|rror' "$T/out")"; fi
echo "test_detect: $fail failed"
[ $fail = 0 ]
