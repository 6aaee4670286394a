#!/bin/sh
# The memory table of the README: for yolov9-s and yolov9-c, batch 16/32/64,
# image 416/512/640, --ckpt off and on, the planned peak, the peak the run
# held and img/s (tests/bench_train, float32, SGD + EMA, 3 timed steps).
# On a machine without a GPU (or with DRY=1) only the plans, which need
# no device. Run from the repository root after make.
set -u
DRY=${DRY:-0}
nvidia-smi -L > /dev/null 2>&1 || DRY=1
echo "| model | batch | img | --ckpt | planned GB | held GB | img/s |"
echo "|---|---|---|---|---|---|---|"
for cfg in ${MODELS:-yolov9-s yolov9-c}; do
  for b in ${BATCHES:-16 32 64}; do
    for img in ${SIZES:-416 512 640}; do
      for ck in "" --ckpt; do
        if [ "$DRY" = 1 ]; then
          out=$(./tests/bench_train --cfg $cfg --batch $b --img $img $ck --dry-run 2>&1)
        else
          out=$(timeout 300 ./tests/bench_train --cfg $cfg --batch $b --img $img $ck --steps 3 2>&1)
        fi
        plan=$(echo "$out" | sed -n 's/.*= \([0-9.]*\) GB$/\1/p' | head -n 1)
        held=$(echo "$out" | sed -n 's/.*held at peak \([0-9.]*\) GB.*/\1/p')
        ips=$(echo "$out" | sed -n 's/.*ms *\([0-9.]*\) img\/s.*/\1/p')
        echo "| $cfg | $b | $img | $([ -n "$ck" ] && echo on || echo off) | ${plan:-?} | ${held:--} | ${ips:--} |"
      done
    done
  done
done
