#!/bin/sh
# On the GPU machine: build with nvcc, check every kernel against the CPU,
# run the golden cases on the GPU, memcheck, and time a training step.
# usage: sh tests/gpu_check.sh [golden dirs...]     (prints a summary last)
#   MEMCHECK=0 skips compute-sanitizer; BENCH="models" picks what to time
#   (BENCH= times nothing), BATCH and STEPS its batch and steps.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi -L
make -s -j16 tests/test_cuda tests/golden_check tests/bench_train 2>&1 | tail -5
cp yolov9_kernels.ptxas.txt "$OUT/" 2>/dev/null
fail=0
./tests/test_cuda > "$OUT/test_cuda.txt" 2>&1 || fail=1
tail -3 "$OUT/test_cuda.txt"; grep FAIL "$OUT/test_cuda.txt" | head
./tests/golden_check --device cuda tests/golden/tiny-gelan tests/golden/tiny-dual tests/golden/tiny-cb "$@" > "$OUT/golden_cuda.txt" 2>&1 || fail=1
grep -E "golden case|FAIL|passed" "$OUT/golden_cuda.txt"
if [ "${MEMCHECK:-1}" = 1 ] && command -v compute-sanitizer >/dev/null; then
    compute-sanitizer --tool memcheck --print-limit 5 ./tests/test_cuda > "$OUT/memcheck_test_cuda.txt" 2>&1; echo "memcheck test_cuda rc=$?"
    compute-sanitizer --tool memcheck --print-limit 5 ./tests/golden_check --device cuda tests/golden/tiny-cb > "$OUT/memcheck_golden.txt" 2>&1; echo "memcheck golden_check rc=$?"
    grep -h "ERROR SUMMARY" "$OUT/memcheck_test_cuda.txt" "$OUT/memcheck_golden.txt"
fi
for cfg in ${BENCH-yolov9-s yolov9-c}; do
    timeout 240 ./tests/bench_train --cfg $cfg --batch ${BATCH:-32} --img 640 --steps ${STEPS:-3} > "$OUT/bench_$cfg.txt" 2>&1
    echo "bench $cfg rc=$?"; tail -16 "$OUT/bench_$cfg.txt"
done
echo "gpu_check: $fail failures"
exit $fail
