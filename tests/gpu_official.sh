#!/bin/sh
# On the GPU machine: what issue 40's behaviours need a GPU for. Builds
# train, val and detect with nvcc, then
#   1. AutoBatch: train --batch -1 takes the largest batch whose memory plan
#      fits 80% of the GPU's free memory (cudaMemGetInfo), in one line; a
#      run at that batch reserves its plan and trains an epoch;
#   2. the official README's commands with --device 0 as pasted
#      (tests/test_official_commands.sh with DEVICE=0);
#   3. on a machine of two GPUs or more: --device 0,1 starts two processes
#      under mpirun, one a GPU, and they train.
# usage: sh tests/gpu_official.sh        (logs in $OUT; prints a summary last)
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi -L
make -s -j16 NVCC_JOBS=16 train val detect 2>&1 | tail -5
fail=0
D=tests/data/coco8/coco8.yaml

# 1. AutoBatch on the GPU, yolov9-s at 640
./train --cfg yolov9-s --data $D --img 640 --batch -1 --epochs 1 --workers 8 --project /tmp/gpu_official --name ab \
    > "$OUT/autobatch.txt" 2>&1 || fail=1
line=$(grep -m1 "^AutoBatch" "$OUT/autobatch.txt")
echo "$line"
b=$(echo "$line" | sed -n 's/^AutoBatch: batch-size \([0-9]*\) for cuda: .*/\1/p')
[ -n "$b" ] && grep -q "^Results saved to" "$OUT/autobatch.txt" || { fail=1; tail -n 5 "$OUT/autobatch.txt"; }
# the next batch would not fit: its dry run's plan is above 80% of the free memory the line gave
free=$(echo "$line" | sed -n 's/.* of the \([0-9.]*\) GB free.*/\1/p')
next=$(./train --cfg yolov9-s --data $D --img 640 --batch $((${b:-1} + 1)) --dry-run 2>&1 | sed -n 's/^memory plan: \([0-9.]*\) GB.*/\1/p')
echo "batch $((${b:-1} + 1)) would plan $next GB; 80% of $free GB free: $(awk "BEGIN { print 0.8 * ${free:-0} }") GB"
awk "BEGIN { exit !(${next:-0} > 0.8 * ${free:-0} - 0.01) }" || fail=1

# 2. the official README's commands, --device 0 as they stand
DEVICE=0 sh tests/test_official_commands.sh > "$OUT/official_commands.txt" 2>&1 || fail=1
grep -E "README|FAIL|failed" "$OUT/official_commands.txt"

# 3. --device 0,1 on two GPUs: train under mpirun, one process a GPU
if [ "$(nvidia-smi -L | wc -l)" -ge 2 ] && command -v mpirun > /dev/null && grep -q MPI_Init train; then
    ./train --cfg yolov9-t --data $D --img 160 --batch 8 --epochs 2 --device 0,1 --project /tmp/gpu_official --name dp \
        > "$OUT/device01.txt" 2>&1 || fail=1
    grep -E "^train: --device|memory plan of each process|Results saved" "$OUT/device01.txt" || { fail=1; tail -n 5 "$OUT/device01.txt"; }
fi
echo "gpu_official: $([ $fail = 0 ] && echo passed || echo FAILED)"
[ $fail = 0 ]
