#!/bin/sh
# The single-GPU user's table: which model and batch fit on my card.
#
#   sh tests/memory_table.sh [plans]   for each model of MODELS at IMG px in
#       bf16 (the GPU's training precision), without and with --ckpt, the
#       largest batch whose memory plan fits in each of BUDGETS GB (1 GB =
#       1e9 bytes), and that plan. From tests/bench_train --dry-run: the
#       CUDA backend's plan, computed without a GPU (where one answers,
#       bench_train checks it against the backend's own). The batch is
#       bench_train's: six boxes an image, training steps alone (train
#       also plans a validation pass and its densest batch: its --dry-run
#       says what it will take).
#   CELLS="yolov9-s:57 yolov9-e:20:ckpt ..." sh tests/memory_table.sh cells
#       on the GPU machine: each cell (model:batch, :ckpt for --ckpt) runs
#       bench_train, STEPS timed steps: its plan, the peak the run held,
#       img/s; with OFFICIAL=REPO (a checkout of the official yolov9) the
#       official AMP step at the same batch beside it
#       (tests/bench_official.py --step, one process a model: peak memory
#       allocated / reserved, img/s, or OOM where it ran out of memory).
#       Each process runs under LIMIT seconds (240); none starts after
#       DEADLINE (seconds since the epoch, `date +%s`): those cells say
#       "not run".
#   SIZES="416 512 640" BATCHES="16 32 64" MODELS="yolov9-s yolov9-c"
#   PRECISION=fp32 sh tests/memory_table.sh grid: the older table, every
#       size and batch planned (held and img/s too on a GPU).
# DEVICE (cuda): where cells run (cpu: the script itself checked on the CPU).
# Run from the repository root after make tests/bench_train (without a GPU,
# make NVCC= tests/bench_train: the plans need no CUDA backend).
set -u
cd "$(dirname "$0")/.."
MODE=${1:-plans}
if [ "$MODE" = grid ]; then MODELS=${MODELS:-yolov9-s yolov9-c}; else MODELS=${MODELS:-yolov9-t yolov9-s yolov9-m yolov9-c yolov9-e}; fi
BUDGETS=${BUDGETS:-8 12 16 24 40 80}
IMG=${IMG:-640} STEPS=${STEPS:-3} PRECISION=${PRECISION:-bf16} PYTHON=${PYTHON:-python3} DEVICE=${DEVICE:-cuda}
[ -x tests/bench_train ] || { echo "memory_table: tests/bench_train is not built (make tests/bench_train)"; exit 2; }
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
touch "$W/plans"

# plan MODEL BATCH [--ckpt]: the plan in bytes (remembered)
plan() {
    key="$1 $2 ${3:-}"
    got=$(grep -F "$key=" "$W/plans" | head -n 1)
    if [ -z "$got" ]; then
        got="$key=$(./tests/bench_train --cfg "$1" --batch "$2" --img "$IMG" --precision "$PRECISION" ${3:-} --dry-run |
                    sed -n 's/^memory plan in bytes: //p')"
        echo "$got" >> "$W/plans"
    fi
    echo "${got#*=}"
}
gb() { awk -v b="$1" 'BEGIN { printf "%.2f", b / 1e9 }'; }

# largest MODEL BYTES [--ckpt]: the largest batch whose plan fits (0: not even 1); the plan grows about
# linearly with the batch, so a line through batch 1 and 32 guesses it and a step or two settle it
largest() {
    p1=$(plan "$1" 1 ${3:-})
    [ "$p1" -gt "$2" ] && { echo 0; return; }
    p32=$(plan "$1" 32 ${3:-})
    b=$(( 1 + ($2 - p1) * 31 / (p32 - p1) ))
    while [ "$b" -gt 1 ] && [ "$(plan "$1" "$b" ${3:-})" -gt "$2" ]; do b=$((b - 1)); done
    while [ "$(plan "$1" $((b + 1)) ${3:-})" -le "$2" ]; do b=$((b + 1)); done
    echo "$b"
}

plans() {
    echo "largest batch whose plan fits (the plan in GB), $IMG px, $PRECISION, bench_train's batch (six boxes an image)"
    echo
    printf '| model | --ckpt |'; for g in $BUDGETS; do printf ' %s GB |' "$g"; done; echo
    printf '|---|---|'; for g in $BUDGETS; do printf -- '---|'; done; echo
    for cfg in $MODELS; do
        for ck in "" --ckpt; do
            printf '| %s | %s |' "$cfg" "$([ -n "$ck" ] && echo on || echo off)"
            for g in $BUDGETS; do
                b=$(largest "$cfg" $((g * 1000000000)) $ck)
                if [ "$b" = 0 ]; then printf ' none |'; else printf ' %s (%s) |' "$b" "$(gb "$(plan "$cfg" "$b" $ck)")"; fi
            done
            echo
        done
    done
}

cells() {
    OFFICIAL=${OFFICIAL:-} DEADLINE=${DEADLINE:-0} LIMIT=${LIMIT:-240}
    echo "cells at $IMG px, $PRECISION, $STEPS timed steps: ours planned / held GB and img/s; the official AMP step at the same batch"
    echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(date -u '+%Y-%m-%d %H:%M UTC')"
    nvidia-smi -L 2> /dev/null
    # ours, a process a cell
    for c in ${CELLS:?CELLS=model:batch[:ckpt] ...}; do
        id=$(echo "$c" | tr : _) cfg=${c%%:*} rest=${c#*:}; b=${rest%%:*}; ck=; [ "$rest" != "$b" ] && ck=--ckpt
        if [ "$DEADLINE" -gt 0 ] && [ "$(date +%s)" -ge "$DEADLINE" ]; then continue; fi
        timeout -k 10 "$LIMIT" ./tests/bench_train --cfg "$cfg" --batch "$b" --img "$IMG" --precision "$PRECISION" $ck \
            --steps "$STEPS" --device "$DEVICE" --no-profile > "$W/ours_$id" 2>&1 || { echo "ours $c failed:"; tail -3 "$W/ours_$id" | sed 's/^/    /'; }
        grep -E '^memory plan|held at peak' "$W/ours_$id" | sed "s/^/ours $c: /"
    done
    # the official, a process a model, its batches in increasing order; it has no --ckpt: each cell's batch
    # is run without it
    if [ -n "$OFFICIAL" ]; then
        for cfg in $(for c in $CELLS; do echo "${c%%:*}"; done | awk '!seen[$0]++'); do
            bs=$(for c in $CELLS; do r=${c#*:}; [ "${c%%:*}" = "$cfg" ] && echo "${r%%:*}"; done | sort -n -u | paste -sd, -)
            if [ "$DEADLINE" -gt 0 ] && [ "$(date +%s)" -ge "$DEADLINE" ]; then continue; fi
            timeout -k 10 "$LIMIT" "$PYTHON" tests/bench_official.py "$OFFICIAL" --step "$cfg" --batch "$bs" --img "$IMG" \
                --steps "$STEPS" --device "$DEVICE" > "$W/official_$cfg" 2>&1 || { echo "official $cfg (batches $bs) failed:"; tail -3 "$W/official_$cfg" | sed 's/^/    /'; }
            grep "^official $cfg step, batch" "$W/official_$cfg"
        done
    fi
    echo
    echo "| model | batch | --ckpt | ours planned GB | ours held GB | ours img/s | official GB allocated / reserved | official img/s | ratio |"
    echo "|---|---|---|---|---|---|---|---|---|"
    for c in $CELLS; do
        id=$(echo "$c" | tr : _) cfg=${c%%:*} rest=${c#*:}; b=${rest%%:*}; ck=off; [ "$rest" != "$b" ] && ck=on
        f=$W/ours_$id planned=- held=- ips=- ms=-
        if [ -f "$f" ]; then
            planned=$(sed -n 's/^memory plan:.*= \([0-9.]*\) GB$/\1/p' "$f" | head -n 1)
            set -- $(awk '$1 == "step" && $5 == "img/s" { print $2, $4, $11 }' "$f")
            ms=${1:--} ips=${2:--} held=${3:--}
        else held="not run (no time left)"; fi
        offgb=- offips=- ratio=-
        line=$(grep -h "^official $cfg step, batch $b " "$W/official_$cfg" 2> /dev/null | tail -n 1)
        case "$line" in
            *OOM*) offgb=OOM ;;
            "") [ -n "$OFFICIAL" ] && offgb="not run" ;;
            *)
                offgb=$(echo "$line" | sed -n 's/.*allocated \([0-9.]*\) GB, reserved \([0-9.]*\) GB.*/\1 \/ \2/p')
                offips=$(echo "$line" | sed -n 's/.*ms, \([0-9.]*\) img\/s.*/\1/p')
                offms=$(echo "$line" | sed -n 's/.*: \([0-9.]*\) ms,.*/\1/p')
                ratio=$(awk -v o="$offms" -v u="$ms" 'BEGIN { if (o > 0 && u > 0) printf "%.2f", o / u; else printf "-" }') ;;
        esac
        echo "| $cfg | $b | $ck | ${planned:--} | $held | $ips | ${offgb:--} | $offips | $ratio |"
    done
}

grid() {
    nvidia-smi -L > /dev/null 2>&1 && gpu=1 || gpu=0
    echo "| model | batch | img | --ckpt | planned GB | held GB | img/s |"
    echo "|---|---|---|---|---|---|---|"
    for cfg in ${MODELS}; do
        for b in ${BATCHES:-16 32 64}; do
            for img in ${SIZES:-416 512 640}; do
                for ck in "" --ckpt; do
                    if [ "$gpu" = 0 ]; then
                        out=$(./tests/bench_train --cfg $cfg --batch $b --img $img --precision "$PRECISION" $ck --dry-run 2>&1)
                    else
                        out=$(timeout 300 ./tests/bench_train --cfg $cfg --batch $b --img $img --precision "$PRECISION" $ck \
                              --steps 3 --no-profile 2>&1)
                    fi
                    planned=$(echo "$out" | sed -n 's/.*= \([0-9.]*\) GB$/\1/p' | head -n 1)
                    held=$(echo "$out" | sed -n 's/.*held at peak \([0-9.]*\) GB.*/\1/p')
                    ips=$(echo "$out" | sed -n 's/.*ms *\([0-9.]*\) img\/s.*/\1/p')
                    echo "| $cfg | $b | $img | $([ -n "$ck" ] && echo on || echo off) | ${planned:-?} | ${held:--} | ${ips:--} |"
                done
            done
        done
    done
}

case $MODE in
    plans) plans ;;
    cells) cells ;;
    grid) grid ;;
    *) echo "memory_table: plans, cells or grid"; exit 2 ;;
esac
