#!/bin/sh
# On the GPU machine, one command: our training step and inference forward
# beside the official PyTorch YOLOv9's, in the same call. Each case runs in a
# process of its own under a time limit (one slow case cannot eat the call),
# its figures are printed as it ends, and tables of the ratios (ours img/s /
# official img/s) come last, in markdown.
#   training: tests/bench_train in each of PRECISIONS (SGD + EMA) against
#     tests/bench_official.py --step (train_dual.py's step: AMP, its loss,
#     optimizer, clipping, EMA), the same synthetic batch;
#   inference: tests/bench_train --infer (float32, --half, bf16, and
#     detect's path: --half with the picture handed over as uint8 each
#     time) against the official fused gelan forward in float32 and half
#     (its input already on the GPU); ratios to half. At batch 1 this is
#     the latency of one picture.
# Builds nothing: make tests/bench_train first.
#   usage: sh tests/bench_compare.sh OFFICIAL_REPO
#   TRAIN="yolov9-s:16 yolov9-c:16 yolov9-e:16 yolov9-s:64 yolov9-c:32"
#   (model:batch), PRECISIONS="bf16 fp32",
#   INFER="yolov9-s:gelan-s:1 yolov9-c:gelan-c:1 yolov9-s:gelan-s:32
#   yolov9-c:gelan-c:32" (ours:official:batch), IMG=640, STEPS=5 (timed
#   steps), DEVICE=cuda, LIMIT=150 (seconds a run), PYTHON=python3; every
#   run's whole output goes to $OUT/bench_compare_runs.txt.
# Exits 1 when a run failed or ran over its limit (its row then shows "-").
set -u
cd "$(dirname "$0")/.."
R=${1:?usage: sh tests/bench_compare.sh OFFICIAL_REPO}
TRAIN=${TRAIN-yolov9-s:16 yolov9-c:16 yolov9-e:16 yolov9-s:64 yolov9-c:32} PRECISIONS=${PRECISIONS:-bf16 fp32}
INFER=${INFER-yolov9-s:gelan-s:1 yolov9-c:gelan-c:1 yolov9-s:gelan-s:32 yolov9-c:gelan-c:32}
IMG=${IMG:-640} STEPS=${STEPS:-5} DEVICE=${DEVICE:-cuda} LIMIT=${LIMIT:-150} PYTHON=${PYTHON:-python3}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
[ -x tests/bench_train ] || { echo "bench_compare: tests/bench_train is not built (make tests/bench_train)"; exit 2; }
[ -f "$R/models/detect/yolov9-s.yaml" ] || { echo "bench_compare: $R is no checkout of the official yolov9 (no models/detect/yolov9-s.yaml)"; exit 2; }
export PYTHONUNBUFFERED=1
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
LOG=$OUT/bench_compare_runs.txt; : > "$LOG"
echo "bench_compare: commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(date -u '+%Y-%m-%d %H:%M UTC'), $IMG px, $STEPS timed steps, device $DEVICE"
command -v nvidia-smi > /dev/null && nvidia-smi -L

# run NAME COMMAND...: under the limit, its output in $W/NAME and the log;
# a failed run says so with its last lines
run() {
    n=$1; shift
    timeout -k 10 "$LIMIT" "$@" > "$W/$n" 2>&1; rc=$?
    { echo "==== $n: $* (rc $rc)"; cat "$W/$n"; } >> "$LOG"
    [ $rc = 0 ] || { failed=$((failed + 1)); echo "  $n FAILED rc $rc$([ $rc = 124 ] && echo ", over ${LIMIT} s"):"; tail -3 "$W/$n" | sed 's/^/    /'; }
}
# figures read back from a run's output, "-" where it has none: ms img/s [GB]
ours_step() { awk '$1 == "step" && $5 == "img/s" { print $2, $4, $11; f = 1 } END { if (!f) print "- - -" }' "$W/$1"; }
ours_infer() { awk -v p="$2" '$1 == "inference" && $2 == p { print $3, $(NF - 1); f = 1 } END { if (!f) print "- -" }' "$W/$1"; }
official() { sed -n "s/^official .*$2.*: \([0-9.]*\) ms, \([0-9.]*\) img\/s.*/\1 \2/p" "$W/$1" | tail -1 | grep . || echo "- -"; }
official_mem() { sed -n 's/^official .*allocated \([0-9.]*\) GB, reserved \([0-9.]*\) GB.*/\1 \2/p' "$W/$1" | grep . || echo "- -"; }
# ours img/s / official img/s at the same batch = official ms / ours ms
ratio() { awk -v ours="$1" -v off="$2" 'BEGIN { if (ours + 0 > 0 && off + 0 > 0) printf "%.2f", off / ours; else printf "-" }'; }

ROWS_T='' ROWS_I='' failed=0
for c in $TRAIN; do
    cfg=${c%:*} b=${c#*:} id=$(echo "$c" | tr : _)
    echo "training step $cfg, batch $b, $IMG:"
    ms_bf16=- ips_bf16=- held_bf16=- ms_fp32=- ips_fp32=- held_fp32=-
    for p in $PRECISIONS; do
        run "ours_${id}_$p" ./tests/bench_train --cfg "$cfg" --batch "$b" --img "$IMG" --steps "$STEPS" --device "$DEVICE" --precision $p
        set -- $(ours_step "ours_${id}_$p")
        echo "  ours $p: $1 ms, $2 img/s, device memory held at peak $3 GB"
        eval "ms_$p=$1 ips_$p=$2 held_$p=$3"
    done
    run "official_$id" "$PYTHON" tests/bench_official.py "$R" --step "$cfg" --batch "$b" --img "$IMG" --steps "$STEPS" --device "$DEVICE"
    grep "^official $cfg step" "$W/official_$id" | sed 's/^/  /'
    set -- $(official "official_$id" step) $(official_mem "official_$id")
    ROWS_T="$ROWS_T
| $cfg, batch $b | $ips_bf16 | $ips_fp32 | $2 | $(ratio "$ms_bf16" "$1") | $(ratio "$ms_fp32" "$1") | $held_bf16 / $held_fp32 | $3 / $4 |"
done
for c in $INFER; do
    cfg=${c%%:*} rest=${c#*:}; gel=${rest%:*} b=${rest#*:} id=$(echo "$c" | tr : _)
    echo "inference forward $cfg against the official $gel, batch $b, $IMG:"
    run "ours_$id" ./tests/bench_train --cfg "$cfg" --infer --batch "$b" --img "$IMG" --steps "$STEPS" --device "$DEVICE"
    set -- $(ours_infer "ours_$id" float32) $(ours_infer "ours_$id" --half) $(ours_infer "ours_$id" bf16) \
           $(ours_infer "ours_$id" detect)
    ms_f32=$1 ips_f32=$2 ms_half=$3 ips_half=$4 ms_bf16=$5 ips_bf16=$6 ms_det=$7 ips_det=$8
    echo "  ours: float32 $ms_f32 ms, $ips_f32 img/s; --half $ms_half ms, $ips_half img/s; bf16 $ms_bf16 ms, $ips_bf16 img/s;" \
         "detect's path $ms_det ms, $ips_det img/s"
    run "official_$id" "$PYTHON" tests/bench_official.py "$R" "$gel" --batch "$b" --img "$IMG" --steps "$STEPS" --device "$DEVICE"
    grep "^official $gel fused" "$W/official_$id" | sed 's/^/  /'
    set -- $(official "official_$id" float32) $(official "official_$id" half)
    ROWS_I="$ROWS_I
| $cfg (official $gel), batch $b | $ms_half | $ms_det | $3 | $ips_f32 | $ips_half | $ips_bf16 | $ips_det | $2 | $(ratio "$ms_half" "$3") | $(ratio "$ms_bf16" "$3") | $(ratio "$ms_det" "$3") |"
done

[ -n "$ROWS_T" ] && { echo
echo "training step at $IMG, img/s (ratio: ours / official AMP; memory: ours held at peak, official allocated / reserved)"
echo
echo "| case | ours bf16 | ours fp32 | official AMP | ratio bf16 | ratio fp32 | ours GB bf16 / fp32 | official GB |"
echo "|---|---|---|---|---|---|---|---|$ROWS_T"; }
[ -n "$ROWS_I" ] && { echo
echo "inference forward at $IMG: ms a batch, img/s (ratio: official half ms / ours ms; detect: ours --half with the picture"
echo "handed over as uint8 each time, the official's input already on the GPU)"
echo
echo "| case | ours --half ms | ours detect ms | official half ms | ours float32 | ours --half | ours bf16 | ours detect |" \
     "official float32 | ratio --half | ratio bf16 | ratio detect |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|$ROWS_I"; }
[ $failed = 0 ] || { echo "bench_compare: $failed runs failed (their output: $LOG)"; exit 1; }
