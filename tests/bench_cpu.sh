#!/bin/sh
# On the CPU, one command: our training step and inference forward beside
# the official PyTorch YOLOv9's, on the same number of threads, in one run,
# alternating (ours, official, ours, official ...), each figure printed with
# the machine's load (uptime) as it ends, then the ratios (official ms / ours
# ms: above 1, ours is faster), at THREADS threads and then at 1.
#   training: tests/bench_train --device cpu --precision fp32 (SGD + EMA)
#     against tests/bench_official.py --step --device cpu (train_dual.py's
#     step: float32 on the CPU, its loss, optimizer, clipping, EMA), the same
#     synthetic batch;
#   inference: tests/bench_train --infer (the folded model, float32) against
#     the official fused forward of the same gelan model.
# Builds nothing: make tests/bench_train first.
#   usage: sh tests/bench_cpu.sh OFFICIAL_REPO
#   TRAIN="yolov9-t:8 yolov9-s:4" (model:batch, at TRAIN_IMG=320),
#   INFER="gelan-t:1 gelan-s:1" (model:batch, at INFER_IMG=640),
#   THREADS=2 (then 1), ROUNDS=2 (alternations a case), STEPS=3 (timed steps
#   a run; the median), PYTHON=/usr/bin/python3 (with torch), LIMIT=900 (s a run).
# Exits 1 when a run failed.
set -u
cd "$(dirname "$0")/.."
R=${1:?usage: sh tests/bench_cpu.sh OFFICIAL_REPO}
TRAIN=${TRAIN-yolov9-t:8 yolov9-s:4} INFER=${INFER-gelan-t:1 gelan-s:1}
TRAIN_IMG=${TRAIN_IMG:-320} INFER_IMG=${INFER_IMG:-640} THREADS=${THREADS:-2} ROUNDS=${ROUNDS:-2} STEPS=${STEPS:-3}
PYTHON=${PYTHON:-/usr/bin/python3} LIMIT=${LIMIT:-900}
[ -x tests/bench_train ] || { echo "bench_cpu: tests/bench_train is not built (make tests/bench_train)"; exit 2; }
[ -f "$R/models/detect/yolov9-s.yaml" ] || { echo "bench_cpu: $R is no checkout of the official yolov9"; exit 2; }
export PYTHONUNBUFFERED=1
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
echo "bench_cpu: commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores:" \
     "$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)"
failed=0

# run FILE COMMAND...: under the limit; prints the last lines of a failed run
run() {
    f=$1; shift
    timeout -k 10 "$LIMIT" "$@" > "$f" 2>&1 || { failed=$((failed + 1)); echo "  FAILED: $*"; tail -3 "$f" | sed 's/^/    /'; }
}
load() { uptime | sed 's/.*load average: //'; }
# milliseconds read back from a run's output ("-" where it has none)
ours_ms() { awk '($1 == "step" && $5 == "img/s") || ($1 == "inference" && $2 == "float32") { print ($1 == "step" ? $2 : $3); f = 1 } END { if (!f) print "-" }' "$1"; }
official_ms() { sed -n 's/^official .*: \([0-9.]*\) ms, .*/\1/p' "$1" | tail -1 | grep . || echo "-"; }
ratio() { awk -v o="$1" -v t="$2" 'BEGIN { if (o + 0 > 0 && t + 0 > 0) printf "%.2f", t / o; else printf "-" }'; }

# case KIND MODEL BATCH IMG: ROUNDS alternations; appends "label ours official ratio" to $W/rows
case_run() {
    kind=$1 cfg=$2 b=$3 img=$4
    if [ "$kind" = train ]; then
        ours="./tests/bench_train --cfg $cfg --batch $b --img $img --steps $STEPS --device cpu --precision fp32"
        theirs="$PYTHON tests/bench_official.py $R --step $cfg --batch $b --img $img --steps $STEPS --device cpu"
        label="training step $cfg, batch $b, $img"
    else   # the official's gelan against ours of the same name, folded
        ours="./tests/bench_train --cfg $cfg --infer --batch $b --img $img --steps $((STEPS + 2)) --device cpu"
        theirs="$PYTHON tests/bench_official.py $R $cfg --batch $b --img $img --steps $((STEPS + 2)) --device cpu"
        label="inference $cfg, batch $b, $img"
    fi
    echo "$label, $OMP_NUM_THREADS thread(s):"
    for i in $(seq "$ROUNDS"); do
        run "$W/o" $ours; o=$(ours_ms "$W/o"); echo "  ours     $o ms   (load $(load))"
        run "$W/t" $theirs; t=$(official_ms "$W/t"); echo "  official $t ms   (load $(load))"
        echo "$label|$OMP_NUM_THREADS|$o|$t|$(ratio "$o" "$t")" >> "$W/rows"
    done
}

for threads in $THREADS 1; do
    export OMP_NUM_THREADS=$threads
    for c in $TRAIN; do case_run train "${c%:*}" "${c#*:}" "$TRAIN_IMG"; done
    for c in $INFER; do case_run infer "${c%:*}" "${c#*:}" "$INFER_IMG"; done
    [ "$THREADS" = 1 ] && break
done

echo
echo "| case | threads | ours ms | official ms | ratio (official / ours) |"
echo "|---|---|---|---|---|"
awk -F'|' '{ printf "| %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5 }' "$W/rows"
[ $failed = 0 ]
