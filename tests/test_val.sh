#!/bin/sh
# val against the official val.py on the same weights and pictures
# (tests/golden/val-tiny): every official detection of confidence >= 0.005
# found (same class, coordinates within 0.002 of the picture, confidence
# within 1e-4), 90% of all of them (down to 0.001, where near-ties among
# near-duplicate boxes part the lists), and mAP50, mAP50-95 within 0.005;
# the same with --single-cls (mAP within 0.0005).
# Run from the repository root; VAL_FLAGS replaces --device cpu (the GPU
# check runs it with --device cuda).
. tests/common.sh
G=tests/golden/val-tiny
# check NAME OFFICIAL_DIR OFFICIAL_JSON MAP_TOL [VAL FLAGS]: val with those flags against the official's
check() {
    name=$1 theirs_dir=$2 theirs_json=$3 tol=$4; shift 4
    ./val --cfg tests/golden/tiny-gelan/model.yaml --weights $G/weights.safetensors --data tests/data/coco8/coco8.yaml \
          --img 128 --batch 32 ${VAL_FLAGS:---device cpu} --save-txt --save-conf --project "$T" --name $name "$@" > "$T/$name.log" 2>&1 ||
        { cat "$T/$name.log"; bad "$name: val failed"; return; }
    rm -f "$T/counts"
    for f in $theirs_dir/labels/*.txt; do
        awk -v OURS="$T/$name/labels/$(basename "$f")" '
            BEGIN { n = 0; while ((getline line < OURS) > 0) { split(line, r, " "); n++; for (i = 1; i <= 6; i++) o[n, i] = r[i] } }
            {
                all++; hit = 0
                for (k = 1; k <= n && !hit; k++) {
                    if (used[k] || o[k, 1] != $1) continue
                    d = 0; for (i = 2; i <= 5; i++) { x = o[k, i] - $i; if (x < 0) x = -x; if (x > d) d = x }
                    c = o[k, 6] - $6; if (c < 0) c = -c
                    if (d <= 0.002 && c <= 1e-4) { used[k] = 1; hit = 1 }
                }
                if ($6 >= 0.005) { total++; if (!hit) { missed++; print "  missing: " FILENAME ": " $0 } }
                found += hit
            }
            END { printf "%d %d %d %d\n", total, missed + 0, all, found > "/dev/stderr" }' "$f" 2>> "$T/counts"
    done
    total=$(awk '{ t += $1 } END { print t }' "$T/counts"); missed=$(awk '{ m += $2 } END { print m }' "$T/counts")
    all=$(awk '{ t += $3 } END { print t }' "$T/counts"); found=$(awk '{ t += $4 } END { print t }' "$T/counts")
    if [ "$missed" = 0 ] && [ "$total" -gt 0 ]; then ok "$name: all $total official detections (conf >= 0.005) found, boxes within 0.002, confidences within 1e-4"
    else bad "$name: $missed of $total official detections missing"; fi
    if [ $((found * 10)) -ge $((all * 9)) ]; then ok "$name: $found of all $all official detections (conf >= 0.001) found"
    else bad "$name: only $found of all $all official detections found"; fi
    ours=$(awk '$1 == "all" { print $6, $7 }' "$T/$name.log")
    theirs=$(sed 's/.*"map50": \([^,]*\), "map": \([^}]*\)}/\1 \2/' $theirs_json)
    if echo "$ours $theirs $tol" | awk '{ d1 = $1 - $3; d2 = $2 - $4; exit !(d1 < $5 && -d1 < $5 && d2 < $5 && -d2 < $5) }'; then
        ok "$name: mAP50, mAP50-95: ours $ours, official $theirs"
    else bad "$name: mAP50, mAP50-95: ours $ours, official $theirs (tolerance $tol)"; fi
}
check v $G/official $G/official.json 0.005
# --single-cls (official.json's mAP50 5e-5 becomes 6e-3: one NMS over the classes, every box class 0)
check single-cls $G/official-single-cls $G/official-single-cls.json 0.0005 --single-cls
echo "test_val: $fail failed"
[ $fail = 0 ]
