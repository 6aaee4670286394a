#!/bin/sh
# On the GPU machine: build with nvcc, check every kernel against the CPU,
# run the golden cases on the GPU, memcheck, and time a training step.
# usage: sh tests/gpu_check.sh [golden dirs...]     (prints a summary last)
#   MEMCHECK=0 skips compute-sanitizer, SM80=0 the sm_80 path's checks;
#   BENCH="models" picks what to time (BENCH= times nothing), BATCH and
#   STEPS its batch and steps, PRECISIONS the training precisions it
#   times (fp32 bf16); INFER and VAL: the inference and --half checks
#   below.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi -L
make -s -j16 tests/test_cuda tests/golden_check tests/bench_train 2>&1 | tail -5
cp tests/yolov9_kernels.ptxas.txt "$OUT/" 2>/dev/null
fail=0
# the bf16 and half convs must run on the tensor cores: HMMA in the machine code (mma.sync), no spills; and in
# a build with the Hopper path (conv_wg_kernel, YOLO_WGMMA) HGMMA (wgmma) too
hmma=$(cuobjdump --dump-sass tests/yolov9_kernels.o | grep -c HMMA)
hgmma=$(cuobjdump --dump-sass tests/yolov9_kernels.o | grep -c HGMMA)
wg=$(grep -c "conv_wg_kernel" tests/yolov9_kernels.ptxas.txt)
spills=$(grep -c "[1-9][0-9]* bytes spill" tests/yolov9_kernels.ptxas.txt)
echo "SASS: $hmma HMMA, $hgmma HGMMA instructions; $spills kernels spill"
[ "$hmma" -gt 0 ] && [ "$spills" = 0 ] && { [ "$wg" = 0 ] || [ "$hgmma" -gt 0 ]; } || fail=1
./tests/test_cuda > "$OUT/test_cuda.txt" 2>&1 || fail=1
tail -3 "$OUT/test_cuda.txt"; grep FAIL "$OUT/test_cuda.txt" | head
for p in fp32 bf16 half; do
    ./tests/golden_check --device cuda --precision $p tests/golden/tiny-gelan tests/golden/tiny-dual tests/golden/tiny-cb "$@" \
        > "$OUT/golden_cuda_$p.txt" 2>&1 || fail=1
    grep -E "golden case|FAIL|passed" "$OUT/golden_cuda_$p.txt"
done
# the copy engine's tensor maps and boxes (the Hopper path's Tma loaders), bit for bit against a gather on
# the CPU (tests/probe_tma.cu)
if [ "$wg" != 0 ]; then
    make -s tests/probe_tma 2>&1 | tail -3
    ./tests/probe_tma > "$OUT/probe_tma.txt" 2>&1 || fail=1
    grep -E "FAIL|cases" "$OUT/probe_tma.txt"
fi
# the sm_80 path (mma.sync alone: make WGMMA=0) on this GPU, built in a copy of the tree: its kernels
# against their twins and the golden cases in bf16, within the same tolerances as the Hopper path's (SM80=0
# skips it; nothing to do in a build without the Hopper path)
if [ "${SM80:-1}" = 1 ] && [ "$wg" != 0 ]; then
    rm -rf /tmp/sm80 && mkdir -p /tmp/sm80 && cp -r Makefile yolov9.h yolov9_kernels.cu tests /tmp/sm80/ &&
        rm -f /tmp/sm80/tests/yolov9_kernels.o && make -C /tmp/sm80 -s -j16 WGMMA=0 tests/test_cuda tests/golden_check 2>&1 | tail -5
    (cd /tmp/sm80 && ./tests/test_cuda > "$OUT/test_cuda_sm80.txt" 2>&1 &&
        ./tests/golden_check --device cuda --precision bf16 tests/golden/tiny-gelan tests/golden/tiny-dual tests/golden/tiny-cb \
            > "$OUT/golden_cuda_bf16_sm80.txt" 2>&1) || fail=1
    echo "the sm_80 path (WGMMA=0): $(tail -1 "$OUT/test_cuda_sm80.txt")"; grep -E "golden case|FAIL|passed" "$OUT/golden_cuda_bf16_sm80.txt"
fi
if [ "${MEMCHECK:-1}" = 1 ] && command -v compute-sanitizer >/dev/null; then
    compute-sanitizer --tool memcheck --print-limit 5 ./tests/test_cuda > "$OUT/memcheck_test_cuda.txt" 2>&1; echo "memcheck test_cuda rc=$?"
    compute-sanitizer --tool memcheck --print-limit 5 ./tests/golden_check --device cuda tests/golden/tiny-cb > "$OUT/memcheck_golden.txt" 2>&1; echo "memcheck golden_check rc=$?"
    grep -h "ERROR SUMMARY" "$OUT/memcheck_test_cuda.txt" "$OUT/memcheck_golden.txt"
fi
# data parallel through NCCL (a build with mpicc; yolov9.h section 16): one
# process under mpirun, its gradient summed by NCCL in buckets on NCCL's
# own stream while the backward runs (10 buckets of the tiny network), and
# with --sync-bn every BatchNorm's sums through NCCL too, against the same
# steps without mpirun: equal to the last bit (tests/test_dp on the GPU).
# First the control: two runs without mpirun must agree to the last bit
# too; the first also checks, on the GPU, that the backward tells a
# layer's gradients final only when they are.
if command -v mpicc >/dev/null && command -v mpirun >/dev/null; then
    make -s -j16 tests/test_dp 2>&1 | tail -5
    DEVICE=cuda ./tests/test_dp --reference 1 "$OUT/dp_one_a.bin" > "$OUT/dp_one_a.txt" 2>&1 || fail=1
    cat "$OUT/dp_one_a.txt"
    DEVICE=cuda ./tests/test_dp --reference 1 "$OUT/dp_one_b.bin" > /dev/null 2>&1 &&
        DEVICE=cuda mpirun --allow-run-as-root -np 1 ./tests/test_dp "$OUT/dp_nccl.bin" > "$OUT/dp_nccl.txt" 2>&1 &&
        DEVICE=cuda mpirun --allow-run-as-root -np 1 ./tests/test_dp --sync-bn "$OUT/dp_sync.bin" > "$OUT/dp_sync.txt" 2>&1 ||
        { fail=1; cat "$OUT/dp_nccl.txt" "$OUT/dp_sync.txt"; }
    echo "data parallel: the control (two runs without mpirun), then NCCL with one process against them, overlapped, and with --sync-bn:"
    ./tests/test_dp --compare "$OUT/dp_one_a.bin" "$OUT/dp_one_b.bin" 0 || fail=1
    ./tests/test_dp --compare "$OUT/dp_nccl.bin" "$OUT/dp_one_a.bin" 0 || fail=1
    ./tests/test_dp --compare "$OUT/dp_sync.bin" "$OUT/dp_one_a.bin" 0 || fail=1
else echo "data parallel: SKIPPED, no mpicc/mpirun on this machine (the NCCL test needs them)"; fi
for cfg in ${BENCH-yolov9-s yolov9-c}; do
    for p in ${PRECISIONS-fp32 bf16}; do
        timeout 240 ./tests/bench_train --cfg $cfg --batch ${BATCH:-32} --img 640 --steps ${STEPS:-3} --precision $p \
            > "$OUT/bench_${cfg}_$p.txt" 2>&1
        echo "bench $cfg $p rc=$?"; tail -16 "$OUT/bench_${cfg}_$p.txt"
    done
done
# --half: the inference forward timed in float32, with --half and in bf16,
# one run each model (INFER= times nothing).
for cfg in ${INFER-yolov9-s yolov9-c}; do
    timeout 120 ./tests/bench_train --cfg $cfg --infer --batch ${BATCH:-32} --img 640 --steps ${STEPS:-5} > "$OUT/infer_$cfg.txt" 2>&1
    echo "infer $cfg rc=$?"; head -5 "$OUT/infer_$cfg.txt"
done
# val against the official val.py's detections on the GPU (tests/test_val.sh).
# Then val in float32 and with --half on VAL="CFG WEIGHTS DATA PICTURES IMG"
# (by default the same tiny model and pictures): mAP50 and mAP50-95 may
# move by at most 0.005, and detect --half must run.
make -s -j16 val detect 2>&1 | tail -5
VAL_FLAGS="--device cuda" sh tests/test_val.sh > "$OUT/test_val.txt" 2>&1 || fail=1
grep -E "ok|FAIL" "$OUT/test_val.txt"
set -- ${VAL:-tests/golden/tiny-gelan/model.yaml tests/golden/val-tiny/weights.safetensors tests/data/coco8/coco8.yaml tests/data/coco8/images/train2017 128}
for h in "" --half; do
    ./val --cfg $1 --weights $2 --data $3 --batch 32 --img $5 --device cuda $h > "$OUT/val$h.txt" 2>&1 || fail=1
    grep -E "^ +all|Speed" "$OUT/val$h.txt"
done
maps=$(awk '$1 == "all" { printf "%s %s ", $6, $7 }' "$OUT/val.txt" "$OUT/val--half.txt")
if echo "$maps" | awk 'function a(x) { return x < 0 ? -x : x } { exit !(NF == 4 && a($1 - $3) <= 0.005 && a($2 - $4) <= 0.005) }'
then echo "val --half: mAP50, mAP50-95 float32 then half: $maps ok"; else echo "val --half: $maps FAIL"; fail=1; fi
./detect --cfg $1 --weights $2 --data $3 --source "$4" --img $5 --device cuda --half --nosave --project /tmp/det > "$OUT/detect_half.txt" 2>&1 \
    || { fail=1; tail -3 "$OUT/detect_half.txt"; }
echo "detect --half: $(grep -c "^image " "$OUT/detect_half.txt") pictures"
echo "gpu_check: $fail failures"
exit $fail
