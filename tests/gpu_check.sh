#!/bin/sh
# On the GPU machine: the GPU backend's tiers (yolov9_kernels.cu), each
# built for this GPU, checked, then timed beside the official code and
# beside the kernel file as it was before the tiers.
#   portable  the core alone (make TIER=portable): no tensor cores
#   sm75      the Turing tier forced (its fp16 mma.sync m16n8k8, no cp.async)
#   sm80      the Ampere tier forced (mma.sync m16n8k16, cp.async)
#   top       this GPU's own tier (Hopper's wgmma and copy engine on an
#             H100 or H200), built in the tree itself as make builds it
#   base      (bench only) BASE, a tree of the commit before the tiers, built
#             as its own Makefile builds it: the top tier's speed before
#
# usage: sh tests/gpu_check.sh check|bench|all [OFFICIAL_REPO [BASE]]
#   check  (about 6 minutes on an H100's 16 cores) builds the tiers at once,
#          each in a copy of the tree under TIERDIR (tests/tiers, ignored by
#          git); then per tier, all at once: the machine code (the tier's
#          tensor-core instructions and no others, no spills), test_cuda
#          (every kernel against its CPU twin), the golden cases in fp32,
#          bf16 and half; beside them compute-sanitizer's memcheck of
#          test_cuda --quick on MEMCHECK ("portable top"), tests/build_matrix.sh
#          (every architecture's build; MATRIX=0 leaves it out), and on the
#          top tier the copy engine's maps (probe_tma), data parallel
#          through NCCL (with mpirun), val and detect --half.
#   bench  (about 5 minutes; builds first what is not built, about 2 more)
#          one run at a time, nothing else running: the official's training
#          step (yolov9-s, BATCH 64, 640, AMP) and inference forward (gelan-s,
#          batch 32) from OFFICIAL_REPO (tests/bench_official.py), then per
#          tier ours (the tier's default training precision; inference in
#          float32, --half and bf16), then ROUNDS times the top tier and
#          BASE alternately; the table of ratios to the official, and the top
#          tier's ratio to BASE (within 3%: ok). BASE defaults to
#          BASE_COMMIT's tree (git archive) where git has it.
#   all    check, then bench (over 10 minutes: two calls are safer).
#   TIERS="portable sm75 sm80 top" chooses the tiers; CUDA_ARCH (sm_XY of
#   nvidia-smi's compute capability by default) the GPU they are built for.
# Prints a summary; every log goes into $OUT/gpu_check_logs.tgz (one file).
# Exits non-zero on any failure.
set -u
cd "$(dirname "$0")/.."
ROOT=$(pwd)
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
PART=${1:-all} OFFICIAL=${2:-} BASE=${3:-}
BASE_COMMIT=${BASE_COMMIT:-c4b24a5}
TIERS=${TIERS-portable sm75 sm80 top}
TIERDIR=${TIERDIR:-$ROOT/tests/tiers}
MEMCHECK=${MEMCHECK-portable top}
MEMCHECK=$(for t in $MEMCHECK; do case " $TIERS " in *" $t "*) echo "$t";; esac; done)   # (of the tiers built)
MATRIX=${MATRIX:-1}
BATCH=${BATCH:-64} STEPS=${STEPS:-5} ROUNDS=${ROUNDS:-2}
GOLDEN="tests/golden/tiny-gelan tests/golden/tiny-dual tests/golden/tiny-cb"
LOGS=$TIERDIR/logs; mkdir -p "$LOGS"
case $PART in check|bench|all) ;; *) echo "usage: sh tests/gpu_check.sh check|bench|all [OFFICIAL_REPO [BASE]]"; exit 2;; esac
nvidia-smi -L
CUDA_ARCH=${CUDA_ARCH:-sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d ' .')}
echo "gpu_check $PART: $(git rev-parse --short HEAD 2>/dev/null || echo 'commit unknown'), $(date -u '+%Y-%m-%d %H:%M UTC'), $CUDA_ARCH, $(nproc) cores, $(nvcc --version | tail -1)"
fail=0

# where tier t is built, and its make flags
dir_of() { if [ "$1" = top ]; then echo "$ROOT"; else echo "$TIERDIR/$1"; fi; }
flags_of() { case $1 in top|base) echo "CUDA_ARCH=$CUDA_ARCH";; *) echo "CUDA_ARCH=$CUDA_ARCH TIER=$1";; esac; }

# the tree before the tiers, in TIERDIR/base: BASE's files, else BASE_COMMIT's from git
base_tree() {
    d=$TIERDIR/base
    mkdir -p "$d/tests"
    if [ -n "$BASE" ]; then
        cp -p "$BASE/Makefile" "$BASE/yolov9.h" "$BASE/yolov9_kernels.cu" "$d/" && cp -p "$BASE/tests/bench_train.c" "$d/tests/"
    else
        git archive "$BASE_COMMIT" Makefile yolov9.h yolov9_kernels.cu tests/bench_train.c 2>/dev/null | tar -x -C "$d"
    fi
    [ -f "$d/yolov9_kernels.cu" ] && [ -f "$d/tests/bench_train.c" ] ||
        { echo "  base: no tree (give BASE, a tree of $BASE_COMMIT, or run where git has that commit)"; return 1; }
}

# the tiers (and the base) at once; each nvcc splits its work over NVCC_JOBS threads
build() {
    builds="$TIERS"
    if [ "$PART" != check ] && base_tree; then builds="$builds base"; fi
    n=$(echo $builds | wc -w)
    jobs=${NVCC_JOBS:-$(( $(nproc) / n > 0 ? $(nproc) / n : 1 ))}
    echo "building $builds for $CUDA_ARCH, $jobs nvcc threads each"
    for t in $builds; do
        d=$(dir_of "$t") what="tests/test_cuda tests/golden_check tests/bench_train"
        case $t in
        top) ;;
        base) what=tests/bench_train;;
        *) mkdir -p "$d/tests" &&
               cp -p Makefile yolov9.h yolov9_kernels.cu "$d/" &&
               cp -p tests/*.c tests/*.cu tests/*.inc "$d/tests/";;   # (cp -p: make rebuilds only what changed)
        esac
        ( s=$(date +%s)
          make -C "$d" -s -j4 $(flags_of "$t") NVCC_JOBS="$jobs" $what > "$LOGS/build_$t.txt" 2>&1
          echo "rc=$? $(( $(date +%s) - s )) s" >> "$LOGS/build_$t.txt" ) &
    done
    wait
    for t in $builds; do
        r=$(tail -1 "$LOGS/build_$t.txt")
        echo "  build $t: $r"
        case "$r" in rc=0*) ;; *) fail=1; tail -5 "$LOGS/build_$t.txt";; esac
    done
}

# the machine code of tier t: the tensor-core instructions it must have (HMMA: mma.sync, .1688 Turing's
# m16n8k8; LDGSTS: cp.async; HGMMA: wgmma) and must not, and no kernel that spills
sass() {
    t=$1 d=$(dir_of "$1")
    cuobjdump --dump-sass "$d/tests/yolov9_kernels.o" > "$LOGS/sass_$t.txt" 2>&1
    hmma=$(grep -c 'HMMA' "$LOGS/sass_$t.txt") k8=$(grep -c 'HMMA\.1688' "$LOGS/sass_$t.txt")
    ldgsts=$(grep -c 'LDGSTS' "$LOGS/sass_$t.txt") hgmma=$(grep -c 'HGMMA' "$LOGS/sass_$t.txt")
    spills=$(grep -c "[1-9][0-9]* bytes spill" "$d/tests/yolov9_kernels.ptxas.txt")
    case $t in
    portable) want=$([ "$hmma$ldgsts$hgmma" = 000 ] && echo ok);;
    sm75) want=$([ "$k8" -gt 0 ] && [ "$k8" = "$hmma" ] && [ "$ldgsts$hgmma" = 00 ] && echo ok);;
    sm80) want=$([ "$hmma" -gt 0 ] && [ "$k8" = 0 ] && [ "$ldgsts" -gt 0 ] && [ "$hgmma" = 0 ] && echo ok);;
    *) want=$([ "$hmma" -gt 0 ] && echo ok);;
    esac
    [ "$spills" = 0 ] || want=
    echo "  $t machine code: $hmma HMMA ($k8 of them m16n8k8), $ldgsts LDGSTS (cp.async), $hgmma HGMMA; $spills kernels spill  ${want:-FAIL}"
    [ -n "$want" ] || fail=1
}

# tier t's kernels against their twins and the golden cases, each within TEST_LIMIT seconds (360), its
# logs in $LOGS
check_tier() {
    t=$1 d=$(dir_of "$1") f=0 lim=${TEST_LIMIT:-360}
    timeout -k 10 "$lim" "$d/tests/test_cuda" > "$LOGS/test_cuda_$t.txt" 2>&1 || f=1
    for p in fp32 bf16 half; do
        timeout -k 10 "$lim" "$d/tests/golden_check" --device cuda --precision $p $GOLDEN > "$LOGS/golden_${t}_$p.txt" 2>&1 || f=1
    done
    echo $f > "$LOGS/check_$t.rc"
}

# compute-sanitizer's memcheck of tier t's test_cuda --quick, within MEMCHECK_LIMIT seconds (300)
memcheck() {
    t=$1 d=$(dir_of "$1") lim=${MEMCHECK_LIMIT:-300}
    timeout -k 10 "$lim" compute-sanitizer --tool memcheck --print-limit 5 "$d/tests/test_cuda" --quick \
        > "$LOGS/memcheck_$t.txt" 2>&1 || [ $? != 124 ] || echo "(over $lim s)" >> "$LOGS/memcheck_$t.txt"
}

check() {
    for t in $TIERS; do sass "$t"; done
    # the tiers at once, their CPU twins sharing half the cores; memcheck, the build matrix and the top
    # tier's own checks beside them
    ntiers=$(echo $TIERS | wc -w)
    cores=$(( $(nproc) / 2 / (ntiers > 0 ? ntiers : 1) > 0 ? $(nproc) / 2 / (ntiers > 0 ? ntiers : 1) : 1 ))
    if command -v compute-sanitizer > /dev/null; then
        for t in $MEMCHECK; do memcheck "$t" & done
    else echo "  memcheck: SKIPPED, no compute-sanitizer"; MEMCHECK=; fi
    if [ "$MATRIX" = 1 ]; then
        JOBS=$(( $(nproc) / 4 > 0 ? $(nproc) / 4 : 1 )) NVCC_JOBS=2 sh tests/build_matrix.sh > "$LOGS/build_matrix.txt" 2>&1 &
    fi
    for t in $TIERS; do OMP_NUM_THREADS=$cores check_tier "$t" & done
    case " $TIERS " in *" top "*) top_extras > "$LOGS/top_extras.txt" 2>&1 & ;; esac
    wait
    for t in $TIERS; do
        echo "  $t: test_cuda $(tail -1 "$LOGS/test_cuda_$t.txt" | grep passed || echo "did not finish: $(tail -1 "$LOGS/test_cuda_$t.txt")")"
        grep -h FAIL "$LOGS/test_cuda_$t.txt" | head -5
        for p in fp32 bf16 half; do echo "  $t: golden $p: $(grep -E '^[0-9]+ passed' "$LOGS/golden_${t}_$p.txt" || echo 'did not finish')"; done
        [ "$(cat "$LOGS/check_$t.rc")" = 0 ] || fail=1
    done
    for t in $MEMCHECK; do
        s=$(grep -h "ERROR SUMMARY\|^(over" "$LOGS/memcheck_$t.txt")
        echo "  $t memcheck test_cuda --quick: ${s:-no summary}"
        case "$s" in *" 0 errors"*) ;; *) fail=1;; esac
    done
    if [ -f "$LOGS/top_extras.txt" ]; then
        cat "$LOGS/top_extras.txt"
        grep -q '^top_extras: 0 failures' "$LOGS/top_extras.txt" || fail=1
    fi
    if [ "$MATRIX" = 1 ]; then
        echo "tests/build_matrix.sh:"
        sed -n '/^build_matrix/,$p' "$LOGS/build_matrix.txt"
        grep -q '| FAILED |' "$LOGS/build_matrix.txt" && fail=1
    fi
}

# the top tier's own checks: the copy engine's tensor maps (a Hopper build), data parallel through NCCL,
# val and detect --half; the last line counts its failures
top_extras() {
    f=0
    if grep -q conv_wg_kernel tests/yolov9_kernels.ptxas.txt; then
        make -s $(flags_of top) tests/probe_tma 2>&1 | tail -3
        ./tests/probe_tma > "$LOGS/probe_tma.txt" 2>&1 || f=1
        echo "  probe_tma: $(grep -E 'FAIL|cases' "$LOGS/probe_tma.txt")"
    fi
    # one process under mpirun, its gradient summed by NCCL in buckets on NCCL's own stream while the
    # backward runs, and with --sync-bn every BatchNorm's sums through NCCL too, against the same steps
    # without mpirun (two of them first: the control): equal to the last bit
    if command -v mpicc > /dev/null && command -v mpirun > /dev/null; then
        make -s -j4 $(flags_of top) tests/test_dp 2>&1 | tail -5
        DEVICE=cuda ./tests/test_dp --reference 1 "$LOGS/dp_one_a.bin" > "$LOGS/dp_one_a.txt" 2>&1 || f=1
        DEVICE=cuda ./tests/test_dp --reference 1 "$LOGS/dp_one_b.bin" > /dev/null 2>&1 &&
            DEVICE=cuda mpirun --allow-run-as-root -np 1 ./tests/test_dp "$LOGS/dp_nccl.bin" > "$LOGS/dp_nccl.txt" 2>&1 &&
            DEVICE=cuda mpirun --allow-run-as-root -np 1 ./tests/test_dp --sync-bn "$LOGS/dp_sync.bin" > "$LOGS/dp_sync.txt" 2>&1 ||
            { f=1; tail -n 3 "$LOGS/dp_nccl.txt" "$LOGS/dp_sync.txt"; }
        for pair in "dp_one_a dp_one_b" "dp_nccl dp_one_a" "dp_sync dp_one_a"; do
            set -- $pair
            r=$(./tests/test_dp --compare "$LOGS/$1.bin" "$LOGS/$2.bin" 0 2>&1) || f=1
            echo "  data parallel, $1 against $2: $(echo "$r" | tail -1)"
        done
        rm -f "$LOGS"/dp_*.bin
    else echo "  data parallel: SKIPPED, no mpicc/mpirun"; fi
    # val in float32 and with --half on the tiny model and coco8: mAP50 and mAP50-95 move by at most 0.005;
    # detect --half runs
    make -s -j4 $(flags_of top) val detect 2>&1 | tail -5
    VAL_FLAGS="--device cuda" sh tests/test_val.sh > "$LOGS/test_val.txt" 2>&1 || f=1
    echo "  test_val: $(grep -c ok "$LOGS/test_val.txt") ok, $(grep -c FAIL "$LOGS/test_val.txt") FAIL"
    set -- tests/golden/tiny-gelan/model.yaml tests/golden/val-tiny/weights.safetensors tests/data/coco8/coco8.yaml \
        tests/data/coco8/images/train2017 128
    for h in "" --half; do
        ./val --cfg $1 --weights $2 --data $3 --batch 32 --img $5 --device cuda $h > "$LOGS/val$h.txt" 2>&1 || f=1
    done
    maps=$(awk '$1 == "all" { printf "%s %s ", $6, $7 }' "$LOGS/val.txt" "$LOGS/val--half.txt")
    if echo "$maps" | awk 'function a(x) { return x < 0 ? -x : x } { exit !(NF == 4 && a($1 - $3) <= 0.005 && a($2 - $4) <= 0.005) }'
    then echo "  val --half: mAP50, mAP50-95 float32 then half: $maps ok"; else echo "  val --half: $maps FAIL"; f=1; fi
    ./detect --cfg $1 --weights $2 --data $3 --source "$4" --img $5 --device cuda --half --nosave --project /tmp/det \
        > "$LOGS/detect_half.txt" 2>&1 || { f=1; tail -3 "$LOGS/detect_half.txt"; }
    echo "  detect --half: $(grep -c "^image " "$LOGS/detect_half.txt") pictures"
    echo "top_extras: $f failures"
}

# the timings, one run at a time, each under a time limit
run() {
    run_name=$1; shift
    timeout -k 10 "${LIMIT:-150}" "$@" > "$LOGS/$run_name.txt" 2>&1 ||
        { fail=1; echo "  $run_name FAILED:"; tail -3 "$LOGS/$run_name.txt"; }
}
# the ms of case c (train: a training step; float32, --half, bf16: an inference forward) of runs NAME_*
time_of() {
    if [ "$2" = train ]; then awk '$1 == "step" && $5 == "img/s" { print $2; f = 1 } END { if (!f) print "-" }' "$LOGS/$1_train.txt"
    else awk -v p="$2" '$1 == "inference" && $2 == p { print $3; f = 1 } END { if (!f) print "-" }' "$LOGS/$1_infer.txt"; fi
}
official_of() { sed -n "s/^official .*$2.*: \([0-9.]*\) ms, \([0-9.]*\) img\/s.*/\1/p" "$LOGS/$1.txt" | tail -1 | grep . || echo -; }
# b over a: the speed of what took a ms in units of the speed of what took b ms
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.3f", b / a; else printf "-" }'; }
# the tier's default training precision: bf16 with bf16 tensor cores, half on Turing's, else float32
precision_of() { case $1 in portable) echo fp32;; sm75) echo half;; *) echo bf16;; esac; }
img_s() { awk -v ms="$1" -v b="$2" 'BEGIN { if (ms + 0 > 0) printf "%.1f", b * 1000 / ms; else printf "-" }'; }

# tier t's training step and inference forward, as run NAME_train_P and NAME_infer
# (--no-profile: no profiled step after the timed ones; the base's bench_train predates the flag)
bench_tier() {
    np=$([ "$1" = base ] || echo --no-profile)
    run "$2_train" "$(dir_of "$1")/tests/bench_train" --cfg yolov9-s --batch "$BATCH" --img 640 --steps "$STEPS" \
        --precision $(precision_of "$1") $np
    run "$2_infer" "$(dir_of "$1")/tests/bench_train" --cfg yolov9-s --infer --batch 32 --img 640 --steps "$STEPS" $np
}

bench() {
    echo "bench: yolov9-s training step at batch $BATCH, inference at batch 32, 640, $STEPS timed steps (medians)"
    if [ -n "$OFFICIAL" ]; then
        run official_step ${PYTHON:-python3} tests/bench_official.py "$OFFICIAL" --step yolov9-s --batch "$BATCH" --img 640 \
            --steps "$STEPS" --device cuda
        run official_infer ${PYTHON:-python3} tests/bench_official.py "$OFFICIAL" gelan-s --batch 32 --img 640 --steps "$STEPS" \
            --device cuda
        off_step=$(official_of official_step step) off_half=$(official_of official_infer half)
        off_f32=$(official_of official_infer float32)
    else off_step=- off_half=- off_f32=-; echo "  (no OFFICIAL_REPO: ours alone)"; fi
    for t in $TIERS; do bench_tier "$t" "$t"; done
    # the top tier against the tree before the tiers, alternately, the first pair's order swapped each round
    rounds=
    if [ -x "$TIERDIR/base/tests/bench_train" ] && case " $TIERS " in *" top "*) true;; *) false;; esac; then
        i=1
        while [ $i -le "$ROUNDS" ]; do
            if [ $((i % 2)) = 1 ]; then bench_tier base "base$i"; bench_tier top "top$i"
            else bench_tier top "top$i"; bench_tier base "base$i"; fi
            rounds="$rounds $i" i=$((i + 1))
        done
    fi
    echo
    echo "official: training step (AMP) $off_step ms; inference gelan-s float32 $off_f32 ms, half $off_half ms"
    echo "ratio: the official's time over ours (ours' speed in units of the official's; inference: float32"
    echo "against its float32, --half and bf16 against its half)"
    echo
    echo "| tier | case | ms | img/s | ratio |"
    echo "|---|---|---|---|---|"
    for t in $TIERS; do
        ms=$(time_of "$t" train)
        echo "| $t | train $(precision_of "$t") | $ms | $(img_s "$ms" "$BATCH") | $(ratio "$ms" "$off_step") |"
        for p in float32 --half bf16; do
            ms=$(time_of "$t" $p)
            echo "| $t | inference $p | $ms | $(img_s "$ms" 32) | $(ratio "$ms" "$([ $p = float32 ] && echo "$off_f32" || echo "$off_half")") |"
        done
    done
    [ -n "$rounds" ] || { echo "(no base: the top tier not compared with the tree before the tiers)"; return; }
    echo
    echo "the top tier against the tree before the tiers (BASE: ${BASE:-$BASE_COMMIT}), each round's times; speed"
    echo "ratio = base ms / top ms (1 is unchanged; ok within 3%):"
    echo
    echo "| case | base ms | top ms | speed ratio |"
    echo "|---|---|---|---|"
    for c in train float32 --half bf16; do
        name=$([ $c = train ] && echo "train bf16" || echo "inference $c") sb=0 st=0
        for i in $rounds; do
            b=$(time_of "base$i" $c) tt=$(time_of "top$i" $c)
            echo "| $name, round $i | $b | $tt | $(ratio "$tt" "$b") |"
            sb=$(awk -v s="$sb" -v x="$b" 'BEGIN { print s + x }') st=$(awk -v s="$st" -v x="$tt" 'BEGIN { print s + x }')
        done
        r=$(ratio "$st" "$sb")
        v=$(awk -v r="$r" 'BEGIN { print (r + 0 >= 0.97) ? "ok" : "SLOWER" }')
        echo "| $name, all rounds | $sb | $st | $r $v |"
        [ "$v" = ok ] || fail=1
    done
}

[ "$PART" = bench ] && [ -z "$OFFICIAL" ] && echo "(bench without OFFICIAL_REPO: no ratios to the official)"
build
case $PART in
check) check;;
bench) bench;;
all) check; bench;;
esac
cp tests/yolov9_kernels.ptxas.txt "$LOGS/" 2>/dev/null
tar -czf "$OUT/gpu_check_logs.tgz" -C "$TIERDIR" logs
echo "gpu_check $PART: $fail failures (logs: \$OUT/gpu_check_logs.tgz)"
exit $fail
