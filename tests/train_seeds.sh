#!/bin/sh
# On the GPU machine: a model trained from scratch by ours and by the
# official train_dual.py, several seeds at once on the one GPU, each
# validated by its own validator (issue 15: coco128, trained and validated
# on the same pictures; issue 43: raccoon, validated on its held-out test
# split). Each run's results.csv and log land in one archive,
# $OUT/seeds.tgz, as ours_seedN.csv / official_seedN.csv and .log, with
# final.txt: each run's last row (epoch, box, cls, dfl, P, R, mAP50,
# mAP50-95) and tests/seeds_table.py's means of the finished runs (a
# device call brings back 8 files at most: one a run would lose runs);
# final.txt is printed at the end.
#   usage: sh tests/train_seeds.sh DATA OFFICIAL_REPO
#   DATA: a dataset yaml; a folder holding coco128.yaml; or a VOC-format
#   dataset folder (annotations/ or Annotations/ of XML files beside
#   images/ or JPEGImages/, as the raccoon dataset), imported first by
#   weights/voc2yolo.py with the splits VOC_SPLITS names (default raccoon's:
#   "train=data/train_labels.csv val=data/test_labels.csv").
#   SEEDS="0 1 2" (ours), OSEEDS="0 1 2" (official; empty: none),
#   CFG=yolov9-s, IMG=640, EPOCHS=100, BATCH=16, WORKERS=4, DEVICE=cuda
#   (cpu: a check of the script on a machine without a GPU), LIMIT=560
#   (seconds before every run is stopped), FLAGS (more flags for ours, e.g.
#   "--precision fp32 --cache ram"), OFLAGS (for the official, e.g.
#   "--noval": validating each epoch changes no training draw, so the last
#   epoch is the same run); KEEP="ours0 official2" brings back those runs'
#   final weights (the official's last.pt converted by weights/convert.py)
#   as safetensors in 15 MB pieces, $OUT/NAME.st.partaa, ab, ... (cat
#   them; a device call brings back 8 files of 16 MB at most). The official
#   runs from a copy of train_dual.py written beside it, train_dual_seeds.py:
#   each seed with a data stream of its own (below; ODATA=0: the official's
#   one stream for every seed), and with OAMP=0 AMP off (check_amp replaced
#   by False).
#   RUNS=/tmp/seeds: where the runs are made, emptied first; RESUME=1 keeps
#   it and resumes each run found there unfinished (--resume from its
#   last checkpoint; a finished one is left as it is), so that a training
#   longer than a device call goes on in the next call: put RUNS in the
#   repository's git-ignored tests/device/, which the device machine keeps
#   between calls while it stays warm (an official run stopped while it
#   writes last.pt loses that file: it starts again).
#   LIMIT counts from the runs' start: a device call that builds ./train
#   first must leave the build's time, and the copies', inside its limit.
set -u
C=$1 R=$(cd "$2" && pwd) OUT=${OUT:-/tmp/out}
E=${EPOCHS:-100} B=${BATCH:-16} W=${WORKERS:-4} T=${LIMIT:-560} M=${CFG:-yolov9-s} S=${IMG:-640}
case ${DEVICE:-cuda} in cpu) DEV=cpu ODEV=cpu ;; *) DEV=cuda ODEV=0 ;; esac
mkdir -p "$OUT"
D=${RUNS:-/tmp/seeds}
[ "${RESUME:-0}" = 1 ] || rm -rf "$D"
mkdir -p "$D"; D=$(cd "$D" && pwd); K=$D/kept   # what the archive takes
rm -rf "$K"; mkdir -p "$K"
# the dataset: a yaml whose path is absolute (the official reads a relative one against its own folder)
if [ -f "$C" ]; then p=$(sed -n 's/^path: *//p' "$C")
    case $p in /*) ;; *) p=$(cd "$(dirname "$C")/${p:-.}" && pwd) ;; esac
    sed "s#^path:.*#path: $p#" "$C" > "$D/data.yaml"
elif [ -f "$C/coco128.yaml" ]; then sed "s#^path:.*#path: $(cd "$C" && pwd)#" "$C/coco128.yaml" > "$D/data.yaml"
elif [ -d "$C/annotations" ] || [ -d "$C/Annotations" ]; then
    [ -f "$D/voc/data.yaml" ] || { splits=; for s in ${VOC_SPLITS:-train=data/train_labels.csv val=data/test_labels.csv}; do splits="$splits --split $s"; done
        python3 weights/voc2yolo.py "$C" "$D/voc" $splits || exit 1; }
    cp "$D/voc/data.yaml" "$D/data.yaml"
else echo "train_seeds: $C is no dataset yaml, no folder with coco128.yaml and no VOC folder (annotations/)"; exit 1; fi
done_epochs() { n=$(grep -c '^ *[0-9]' "$1/results.csv" 2> /dev/null); echo ${n:-0}; }   # rows of a run's results.csv
for s in ${SEEDS-0 1 2}; do
    r=$D/ours$s
    if [ "$(done_epochs $r)" -ge "$E" ]; then continue
    elif [ -f $r/weights/last.safetensors ]; then set -- ./train --resume $r/weights/last.safetensors
    else set -- ./train --cfg $M --data $D/data.yaml --batch $B --img $S --epochs $E --workers $W --seed $s \
        --noplots --device $DEV ${FLAGS:-} --project $D --name ours$s --exist-ok; fi
    timeout $T "$@" >> "$D/ours_seed$s.log" 2>&1 &
done
# the official's stand-ins: every optional package the machine lacks (tests/official_env.py: IPython on the
# GPU machine; for a check on a CPU machine also tqdm, seaborn, TensorBoard and torchvision, given an NMS),
# a font (no network) and numpy 2's trapz (its compute_ap calls it once a class has a detection)
P=$D/standins; mkdir -p $P/config; touch $P/config/Arial.ttf
cat > $P/sitecustomize.py <<EOF
import sys, types
import numpy
if not hasattr(numpy, "trapz"):
    numpy.trapz = numpy.trapezoid
sys.path.insert(0, "$(pwd)/tests")
import official_env
missing = official_env.use("$R")
if "tensorboard" in missing:   # torch's own module checks the version of the stand-in: a writer that writes nothing
    class SummaryWriter:
        def __init__(self, *a, **k): pass
        def __getattr__(self, name): return lambda *a, **k: None
    sys.modules["torch.utils.tensorboard"] = types.ModuleType("torch.utils.tensorboard")
    sys.modules["torch.utils.tensorboard"].SummaryWriter = SummaryWriter
if "torchvision" in missing:   # the official's NMS: greedy, highest score first, as torchvision.ops.nms
    import torch, torchvision
    def nms(boxes, scores, iou):
        order, keep = scores.argsort(descending=True), []
        area = lambda b: (b[..., 2] - b[..., 0]) * (b[..., 3] - b[..., 1])
        while order.numel():
            i, rest = order[0], order[1:]
            keep.append(i)
            wh = (torch.min(boxes[i, 2:], boxes[rest, 2:]) - torch.max(boxes[i, :2], boxes[rest, :2])).clamp(min=0)
            inter = wh.prod(1)
            order = rest[inter / (area(boxes[i]) + area(boxes[rest]) - inter) <= iou]
        return torch.stack(keep) if keep else torch.zeros(0, dtype=torch.long)
    torchvision.ops.nms = nms
EOF
export PYTHONPATH=$P${PYTHONPATH:+:$PYTHONPATH}
# The official's data stream does not follow --seed: its loader's generator is seeded with a constant
# (create_dataloader), and that seeds the order and every worker's augmentation, so that two seeds with
# the same --workers train on the same batches (their losses' epoch-to-epoch wobble correlates at 0.83-0.90,
# tests/results/README.md). Unless ODATA=0, seed s runs a copy of train_dual.py whose loaders' generators
# are seeded s past the official's constant (seed 0: the official's own stream).
cat > $P/official_data_seed.py <<'EOF'
import os
import utils.dataloaders as loaders
class SeededLoader(loaders.InfiniteDataLoader):
    def __init__(self, *args, generator=None, **kwargs):
        if generator is not None:
            generator.manual_seed(generator.initial_seed() + int(os.environ.get("OFFICIAL_DATA_SEED", "0")))
        super().__init__(*args, generator=generator, **kwargs)
loaders.InfiniteDataLoader = SeededLoader
EOF
SCRIPT=train_dual_seeds.py
sed -e "s/^    amp = check_amp(model).*/    amp = $([ "${OAMP:-1}" = 0 ] && echo False || echo 'check_amp(model)  # check AMP')/" \
    -e "s/^from utils.dataloaders import create_dataloader$/&$([ "${ODATA:-1}" = 0 ] || echo '; import official_data_seed')/" \
    "$R/train_dual.py" > "$R/$SCRIPT"
[ "${OAMP:-1}" = 1 ] || grep -q '^    amp = False$' "$R/$SCRIPT" || { echo "train_seeds: no check_amp line in $R/train_dual.py"; exit 1; }
[ "${ODATA:-1}" = 0 ] || grep -q 'import official_data_seed$' "$R/$SCRIPT" || { echo "train_seeds: no create_dataloader import in $R/train_dual.py"; exit 1; }
for s in ${OSEEDS-0 1 2}; do
    r=$D/official$s
    if [ "$(done_epochs $r)" -ge "$E" ]; then continue
    elif [ -f $r/weights/last.pt ] && python3 -c "import torch; torch.load('$r/weights/last.pt', map_location='cpu')" 2> /dev/null; then
        set -- $SCRIPT --resume $r/weights/last.pt
    else rm -rf $r; set -- $SCRIPT --cfg models/detect/$M.yaml --data $D/data.yaml --hyp data/hyps/hyp.scratch-high.yaml \
        --batch-size $B --img $S --epochs $E --workers $W --seed $s --noplots --device $ODEV ${OFLAGS:-} --project $D --name official$s; fi
    (cd "$R" && PYTHONUNBUFFERED=1 YOLOV5_CONFIG_DIR=$P/config OFFICIAL_DATA_SEED=$s timeout $T python3 "$@" >> "$D/official_seed$s.log" 2>&1) &
done
wait
for r in "$D"/ours[0-9]* "$D"/official[0-9]*; do   # every run in RUNS, this call's and (RESUME=1) earlier calls'
    [ -f "$r/results.csv" ] || continue
    n=$(basename "$r"); side=${n%%[0-9]*}; cp "$r/results.csv" "$K/${side}_seed${n#$side}.csv"
done
cp "$D"/*_seed*.log "$K/" 2> /dev/null
{
    echo "epoch, box, cls, dfl, P, R, mAP50, mAP50-95 of each run's last row ($E epochs asked):"
    for f in "$K"/*_seed*.csv; do [ -f "$f" ] || continue; echo "$(basename $f): $(tail -1 $f | cut -d, -f1-8 | tr -d ' ')"; done
    ls "$K"/ours_seed*.csv > /dev/null 2>&1 && ls "$K"/official_seed*.csv > /dev/null 2>&1 &&
        EPOCH=$((E - 1)) env -u PYTHONPATH python3 tests/seeds_table.py "$K"/ours_seed*.csv -- "$K"/official_seed*.csv
} > "$K/final.txt" 2>&1
tar czf "$OUT/seeds.tgz" -C $K .
for k in ${KEEP:-}; do
    case $k in
        ours*) st=$D/$k/weights/last.safetensors ;;
        *) st=$D/$k.safetensors; python3 weights/convert.py $D/$k/weights/last.pt $st > /dev/null ;;
    esac
    split -b 15M $st "$OUT/$k.st.part" || echo "train_seeds: no weights for $k"
done
cat "$K/final.txt"
