#!/bin/sh
# On the GPU machine: yolov9-s trained from scratch on coco128 (train = val)
# by ours and by the official train_dual.py, several seeds at once on the
# one GPU, for the comparison of issue 15 (and the bf16 run of issue 13).
# Each run's results.csv and log land in one archive, $OUT/seeds.tgz, as
# ours_seedN.csv / official_seedN.csv and .log (a device call brings back
# 8 files at most: one a run would lose runs); the last line of each
# results.csv is printed at the end.
#   usage: sh tests/train_seeds.sh COCO128 OFFICIAL_REPO
#   SEEDS="0 1 2" (ours), OSEEDS="0 1 2" (official; empty: none), EPOCHS=100,
#   BATCH=16, WORKERS=4, LIMIT=560 (seconds before every run is stopped),
#   FLAGS (more flags for ours, e.g. "--precision fp32"), OFLAGS (for the
#   official, e.g. "--noval": validating each epoch changes no training
#   draw, so epoch 99 is the same run); KEEP="ours0 official2" brings
#   back those runs' final weights (the official's last.pt converted by
#   weights/convert.py) as safetensors in 15 MB pieces, $OUT/NAME.st.partaa,
#   ab, ... (cat them; a device call brings back 8 files of 16 MB at most);
#   OAMP=0 runs the official with AMP off (a copy of train_dual.py whose
#   check_amp is replaced by False, written beside it as train_dual_noamp.py).
#   LIMIT counts from the runs' start: a device call that builds ./train
#   first must leave the build's time, and the copies', inside its limit.
set -u
C=$1 R=$2 OUT=${OUT:-/tmp/out}
E=${EPOCHS:-100} B=${BATCH:-16} W=${WORKERS:-4} T=${LIMIT:-560}
mkdir -p "$OUT"
D=/tmp/seeds; rm -rf $D; mkdir -p $D $D/kept
K=$D/kept   # what the archive takes
sed "s#^path:.*#path: $(cd "$C" && pwd)#" "$C/coco128.yaml" > $D/data.yaml
for s in ${SEEDS-0 1 2}; do
    timeout $T ./train --cfg yolov9-s --data $D/data.yaml --batch $B --img 640 --epochs $E --workers $W --seed $s \
        --noplots --device cuda ${FLAGS:-} --project $D --name ours$s > "$K/ours_seed$s.log" 2>&1 &
done
# the official's stand-ins: no IPython on the GPU machine, no network for its font
S=/tmp/seeds_standins; mkdir -p $S/IPython $S/config; touch $S/config/Arial.ttf
python3 -c 'import IPython' 2> /dev/null || { printf 'def get_ipython():\n    return None\n' > $S/IPython/__init__.py
    printf 'def display(*a, **k):\n    pass\n' > $S/IPython/display.py; }
# numpy 2 renamed trapz (the official's compute_ap calls it once a class has a detection)
printf 'import numpy\nif not hasattr(numpy, "trapz"):\n    numpy.trapz = numpy.trapezoid\n' > $S/sitecustomize.py
export PYTHONPATH=$S${PYTHONPATH:+:$PYTHONPATH}
SCRIPT=train_dual.py
if [ "${OAMP:-1}" = 0 ]; then SCRIPT=train_dual_noamp.py
    sed 's/^    amp = check_amp(model).*/    amp = False/' "$R/train_dual.py" > "$R/$SCRIPT"
    grep -q '^    amp = False$' "$R/$SCRIPT" || { echo "train_seeds: no check_amp line in $R/train_dual.py"; exit 1; }
fi
for s in ${OSEEDS-0 1 2}; do
    (cd "$R" && PYTHONUNBUFFERED=1 YOLOV5_CONFIG_DIR=$S/config timeout $T python3 $SCRIPT --cfg models/detect/yolov9-s.yaml \
        --data $D/data.yaml --hyp data/hyps/hyp.scratch-high.yaml --batch-size $B --img 640 --epochs $E --workers $W \
        --seed $s --noplots --device 0 ${OFLAGS:-} --project $D --name official$s > "$K/official_seed$s.log" 2>&1) &
done
wait
for s in ${SEEDS-0 1 2}; do cp $D/ours$s/results.csv "$K/ours_seed$s.csv" 2>/dev/null; done
for s in ${OSEEDS-0 1 2}; do cp $D/official$s/results.csv "$K/official_seed$s.csv" 2>/dev/null; done
tar czf "$OUT/seeds.tgz" -C $K .
for k in ${KEEP:-}; do
    case $k in
        ours*) st=$D/$k/weights/last.safetensors ;;
        *) st=$D/$k.safetensors; python3 weights/convert.py $D/$k/weights/last.pt $st > /dev/null ;;
    esac
    split -b 15M $st "$OUT/$k.st.part" || echo "train_seeds: no weights for $k"
done
for f in "$K"/*_seed*.csv; do [ -f "$f" ] || continue; echo "$(basename $f): $(tail -1 $f | tr -s ' ')"; done
