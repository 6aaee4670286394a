#!/bin/sh
# On the GPU machine, one command: what issue 40's behaviours need a GPU for,
# beside the official code where it has the same behaviour. Builds train,
# val and detect (with nvcc), then
#   1. AutoBatch: train --batch -1 takes the largest batch whose memory plan
#      fits 80% of the GPU's free memory (cudaMemGetInfo), in one line; a
#      run at that batch reserves its plan and trains an epoch; the next
#      batch's plan is over 80% of the free memory. Beside it the official
#      AutoBatch (utils/autobatch.py's check_train_batch_size, as
#      train_dual.py calls it with --batch -1) on the same model and size:
#      its batch and the memory it predicts are printed, not compared (it
#      fits a line through the memory of batches 1 to 16, ours sums the plan);
#   2. the official README's commands with --device 0 as pasted
#      (tests/test_official_commands.sh with DEVICE=0);
#   3. on a machine of two GPUs or more: --device 0,1 starts two processes
#      under mpirun, one a GPU, and they train.
# usage: sh tests/gpu_official.sh OFFICIAL_REPO    (a checkout of WongKinYiu/yolov9;
#        logs in $OUT, a summary last; CFG=yolov9-s IMG=640 PYTHON=python3)
set -u
cd "$(dirname "$0")/.."
R=${1:?usage: sh tests/gpu_official.sh OFFICIAL_REPO}
[ -f "$R/utils/autobatch.py" ] || { echo "gpu_official: $R is no checkout of the official yolov9 (no utils/autobatch.py)"; exit 2; }
R=$(cd "$R" && pwd)
CFG=${CFG:-yolov9-s} IMG=${IMG:-640} PYTHON=${PYTHON:-python3}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
echo "gpu_official: commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(date -u '+%Y-%m-%d %H:%M UTC'), $CFG at $IMG"
nvidia-smi -L
make -s -j16 NVCC_JOBS=16 train val detect > "$OUT/build.txt" 2>&1 || { tail -n 20 "$OUT/build.txt"; echo "gpu_official: the build FAILED"; exit 1; }
fail=0
D=tests/data/coco8/coco8.yaml

# 1. AutoBatch on the GPU
./train --cfg $CFG --data $D --img $IMG --batch -1 --epochs 1 --workers 8 --project "$W" --name ab \
    > "$OUT/autobatch.txt" 2>&1 || fail=1
line=$(grep -m1 "^AutoBatch" "$OUT/autobatch.txt")
echo "ours:     $line"
b=$(echo "$line" | sed -n 's/^AutoBatch: batch-size \([0-9]*\) for cuda: .*/\1/p')
[ -n "$b" ] && grep -q "^Results saved to" "$OUT/autobatch.txt" || { fail=1; echo "  the AutoBatch run FAILED:"; tail -n 5 "$OUT/autobatch.txt"; }
free=$(echo "$line" | sed -n 's/.* of the \([0-9.]*\) GB free.*/\1/p')
next=$(./train --cfg $CFG --data $D --img $IMG --batch $((${b:-1} + 1)) --dry-run 2>&1 | sed -n 's/^memory plan: \([0-9.]*\) GB.*/\1/p')
echo "          batch $((${b:-1} + 1)) would plan $next GB; 80% of $free GB free: $(awk "BEGIN { print 0.8 * ${free:-0} }") GB"
awk "BEGIN { exit !(${next:-0} > 0.8 * ${free:-0} - 0.01) }" || { fail=1; echo "  the next batch fits too: AutoBatch FAILED"; }
CFG=$CFG IMG=$IMG "$PYTHON" - "$R" > "$OUT/official_autobatch.txt" 2>&1 <<'PY' || echo "  the official AutoBatch did not run: $(tail -n 1 "$OUT/official_autobatch.txt")"
import os, sys, warnings
sys.path.insert(0, 'tests')
import official_env
official_env.use(sys.argv[1], keep=('yaml',))
warnings.filterwarnings('ignore')
import torch
from models.yolo import Model
from utils.autobatch import check_train_batch_size
cfg, img = os.environ['CFG'], int(os.environ['IMG'])
model = Model(os.path.join(sys.argv[1], 'models/detect', cfg + '.yaml'), ch=3, nc=80).to('cuda' if torch.cuda.is_available() else 'cpu')
b = check_train_batch_size(model, img, True)   # train_dual.py's call for --batch -1 (amp on)
print(f'official AutoBatch: batch-size {b} for {cfg} at {img}', flush=True)
PY
grep -E "^official AutoBatch|Using batch-size|G free|CUDA not detected|WARNING" "$OUT/official_autobatch.txt" | sed 's/^/official: /'

# 2. the official README's commands, --device 0 as they stand
DEVICE=0 sh tests/test_official_commands.sh > "$OUT/official_commands.txt" 2>&1 || fail=1
grep -E "README|FAIL|failed" "$OUT/official_commands.txt"

# 3. --device 0,1 on two GPUs: train under mpirun, one process a GPU
if [ "$(nvidia-smi -L | wc -l)" -ge 2 ] && command -v mpirun > /dev/null && grep -q MPI_Init train; then
    ./train --cfg yolov9-t --data $D --img 160 --batch 8 --epochs 2 --device 0,1 --project "$W" --name dp \
        > "$OUT/device01.txt" 2>&1 || fail=1
    grep -E "^train: --device|memory plan of each process|Results saved" "$OUT/device01.txt" || { fail=1; tail -n 5 "$OUT/device01.txt"; }
else echo "--device 0,1: skipped (one GPU, or no mpirun, or train built without MPI)"; fi
echo "gpu_official: $([ $fail = 0 ] && echo passed || echo FAILED)"
[ $fail = 0 ]
