#!/bin/sh
# On the GPU machine: training end to end (loader, step, optimizer; no
# validation until the last epoch) on coco128 copied 8 times (1,024
# pictures an epoch), ours and the official train_dual.py on the same
# pictures and flags, one after the other, and bench_train's step alone.
# Prints each one's img/s over its second epoch and our data wait.
#   usage: sh tests/bench_e2e.sh COCO128 OFFICIAL_REPO [BATCH 64] [WORKERS 12]
set -u
C=$1 R=$2 B=${3:-64} W=${4:-12}
D=/tmp/coco128x8 OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
rm -rf $D /tmp/e2e; mkdir -p $D/images/train2017 $D/labels/train2017
for k in 1 2 3 4 5 6 7 8; do
    for f in "$C"/images/train2017/*.jpg; do n=$(basename "$f" .jpg); cp "$f" $D/images/train2017/${k}_$n.jpg
        [ -f "$C/labels/train2017/$n.txt" ] && cp "$C/labels/train2017/$n.txt" $D/labels/train2017/${k}_$n.txt; done
done
sed "s#^path:.*#path: $D#" "$C/coco128.yaml" > $D/data.yaml
echo "pictures: $(ls $D/images/train2017 | wc -l)"
./train --cfg yolov9-s --data $D/data.yaml --batch $B --img 640 --epochs 2 --noval --noplots --workers $W \
        --device cuda --project /tmp/e2e --name ours > "$OUT/e2e_ours.txt" 2>&1
echo "ours rc=$?: $(tr '\r' '\n' < "$OUT/e2e_ours.txt" | grep -E '^ +1/1 .*16/16' | tail -1)"
./tests/bench_train --cfg yolov9-s --batch $B --img 640 --steps 5 > "$OUT/e2e_step.txt" 2>&1
echo "step alone: $(grep -i 'img/s' "$OUT/e2e_step.txt" | tail -1)"
# the official imports IPython and fetches a font at start: where IPython is
# missing an empty one stands in, and the font dir is a temporary one holding
# an empty file (--noplots never reads it; the GPU machine has no network)
S=/tmp/e2e_standins; mkdir -p $S/IPython $S/config; touch $S/config/Arial.ttf
python3 -c 'import IPython' 2> /dev/null || { printf 'def get_ipython():\n    return None\n' > $S/IPython/__init__.py
    printf 'def display(*a, **k):\n    pass\n' > $S/IPython/display.py; export PYTHONPATH=$S${PYTHONPATH:+:$PYTHONPATH}; }
(cd "$R" && PYTHONUNBUFFERED=1 YOLOV5_CONFIG_DIR=$S/config timeout 400 python3 train_dual.py --cfg models/detect/yolov9-s.yaml --data $D/data.yaml \
    --hyp data/hyps/hyp.scratch-high.yaml --batch-size $B --img 640 --epochs 2 --noval --noplots --workers $W --device 0 \
    --project /tmp/e2e --name official > "$OUT/e2e_official.txt" 2>&1)
echo "official rc=$?: $(tr '\r' '\n' < "$OUT/e2e_official.txt" | grep -E '^ +1/1 .*16/16' | tail -1)"
