#!/bin/sh
# On a machine with several GPUs (nvidia-h200-x2, -x4): data-parallel
# training of yolov9-s at 640, 64 pictures a GPU, on 1, 2 (and 4) GPUs
# under mpirun, on coco128 copied 32 times (4,096 pictures an epoch, no
# validation until the last epoch): each run's img/s over its second
# epoch, the peak memory of every GPU (nvidia-smi, and the plan and
# GPU_mem that process 0 prints), the scaling against one GPU (the goal:
# 1.9x on 2, 3.7x on 4). Then the first epoch's losses of N GPUs beside one
# GPU at the same total batch (close, not equal: each GPU's loss and
# BatchNorm see only its share, as in the official DDP), and tests/test_dp
# on N GPUs (NCCL) against one process summing the N shares on one GPU:
# equal to 1e-6 on 2 GPUs (NCCL's sum of two is the reference's), reported
# on 4 (NCCL's ring adds four in another order).
#   usage: sh tests/bench_dp.sh COCO128 ["1 2 4"] [WORKERS 12]
# Needs mpicc and mpirun on the machine (make builds train with them, and
# with NCCL from PyTorch's nvidia-nccl package); NVLink multicast stays off
# (NCCL_NVLS_ENABLE=0, as the machine sets it).
set -u
cd "$(dirname "$0")/.."
C=$1 GPUS=${2:-1 2 4} W=${3:-12}
D=/tmp/coco128x32 OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0
command -v mpicc >/dev/null && command -v mpirun >/dev/null || { echo "bench_dp: no mpicc/mpirun on this machine"; exit 1; }
make -s -j16 train tests/test_dp 2>&1 | tail -5
nm tests/yolov9_kernels.o | grep -q ncclAllReduce || { echo "bench_dp: the CUDA backend was built without NCCL (make NCCL_HOME=...)"; exit 1; }
rm -rf $D /tmp/dp; mkdir -p $D/images/train2017 $D/labels/train2017
for k in $(seq 32); do
    for f in "$C"/images/train2017/*.jpg; do n=$(basename "$f" .jpg); ln -s "$(realpath "$f")" $D/images/train2017/${k}_$n.jpg
        [ -f "$C/labels/train2017/$n.txt" ] && cp "$C/labels/train2017/$n.txt" $D/labels/train2017/${k}_$n.txt; done
done
sed "s#^path:.*#path: $D#" "$C/coco128.yaml" > $D/data.yaml
echo "pictures: $(ls $D/images/train2017 | wc -l)"
# one run: N processes, total batch B; prints img/s of epoch 1, the peak memory of each GPU
run() {   # NAME N B
    nvidia-smi --query-gpu=index,memory.used --format=csv,noheader,nounits -lms 500 > "$OUT/dp_$1_smi.txt" &
    smi=$!
    mpirun --allow-run-as-root -np $2 ./train --cfg yolov9-s --data $D/data.yaml --batch $3 --img 640 --epochs 2 --noval --noplots --workers $W \
        --device cuda --project /tmp/dp --name $1 > "$OUT/dp_$1.txt" 2>&1
    rc=$?
    kill $smi; wait $smi 2>/dev/null
    line=$(tr '\r' '\n' < "$OUT/dp_$1.txt" | grep -E '^ +1/1 ' | tail -1)
    ips=$(echo "$line" | grep -o '[0-9.]* img/s' | cut -d' ' -f1)
    mem=$(awk -F', ' '{ if ($2 > m[$1]) m[$1] = $2 } END { for (g in m) printf "GPU%s %.2f GB  ", g, m[g] / 1024 }' "$OUT/dp_$1_smi.txt")
    echo "$1: rc=$rc, $2 GPU(s), batch $3: ${ips:-?} img/s; peak (nvidia-smi) $mem"
    grep -m1 "memory plan" "$OUT/dp_$1.txt"
    echo "$line" | sed 's/^/    /'
    eval "ips_$1=${ips:-0}"
}
for n in $GPUS; do run n$n $n $((64 * n)); done
one=$(eval echo \$ips_n1)
for n in $GPUS; do
    awk -v n=$n -v a="$(eval echo \$ips_n$n)" -v b="$one" 'BEGIN { if (b > 0) printf "scaling on %d GPU(s): %.2fx one GPU (%.1f against %.1f img/s)\n", n, a / b, a, b }'
done
# the first epoch's mean losses (process 0's share), N GPUs beside one GPU at the same total batch
for n in $GPUS; do
    [ $n = 1 ] && continue
    ./train --cfg yolov9-s --data $D/data.yaml --batch $((64 * n)) --img 640 --epochs 1 --noval --noplots --workers $W \
        --device cuda --project /tmp/dp --name one$n > "$OUT/dp_one$n.txt" 2>&1
    echo "epoch 0 losses box, cls, dfl: $n GPUs $(awk -F, 'NR == 2 { print $2, $3, $4 }' /tmp/dp/n$n/results.csv);" \
         "one GPU, batch $((64 * n)): $(awk -F, 'NR == 2 { print $2, $3, $4 }' /tmp/dp/one$n/results.csv)"
done
# the exact check: N GPUs through NCCL against one process summing the N shares
for n in $GPUS; do
    [ $n = 1 ] && continue
    DEVICE=cuda mpirun --allow-run-as-root -np $n ./tests/test_dp "$OUT/dp_test_n$n.bin" > "$OUT/dp_test_n$n.txt" 2>&1 || cat "$OUT/dp_test_n$n.txt"
    DEVICE=cuda ./tests/test_dp --reference $n "$OUT/dp_test_ref$n.bin" > /dev/null 2>&1
    ./tests/test_dp --compare "$OUT/dp_test_n$n.bin" "$OUT/dp_test_ref$n.bin" $([ $n = 2 ] && echo 1e-6 || echo 1)
    # --sync-bn on N GPUs against one GPU running the N shares as one batch (1e-5 on the CPU's two processes)
    DEVICE=cuda mpirun --allow-run-as-root -np $n ./tests/test_dp --sync-bn "$OUT/dp_sync_n$n.bin" > "$OUT/dp_sync_n$n.txt" 2>&1 || cat "$OUT/dp_sync_n$n.txt"
    DEVICE=cuda ./tests/test_dp --whole $n "$OUT/dp_whole$n.bin" > /dev/null 2>&1
    ./tests/test_dp --compare "$OUT/dp_sync_n$n.bin" "$OUT/dp_whole$n.bin" 1e-5
done
