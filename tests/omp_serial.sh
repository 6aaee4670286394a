#!/bin/sh
# What of a step runs outside OpenMP's threads, at one thread: runs a
# benchmark twice under tests/omp_regions.so (built here if missing), with
# --steps 3 and --steps 9, and prints the difference over the six extra
# steps (so that start-up and warm-ups cancel): a step's CPU time, the part
# in regions that run on threads, in regions that stay on one thread
# (below their thresholds), and outside every region; then the regions,
# the most expensive first.
#   usage: sh tests/omp_serial.sh tests/bench_train --cfg yolov9-t --batch 8 --img 320 --device cpu --precision fp32
set -eu
cd "$(dirname "$0")/.."
[ -f tests/omp_regions.so ] || cc -O2 -shared -fPIC -o tests/omp_regions.so tests/omp_regions.c -ldl
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
for s in 3 9; do
    OMP_REGIONS_OUT=$W/$s LD_PRELOAD=$PWD/tests/omp_regions.so OMP_NUM_THREADS=1 "$@" --steps $s > "$W/log$s" 2>&1 ||
        { echo "omp_serial: $* --steps $s failed:"; tail -3 "$W/log$s"; exit 1; }
done
awk -v steps=6 '
    FNR == 1 { f++; for (i = 2; i <= NF; i += 2) sum[f, $(i - 1)] = $i; next }
    { key = $2 " " $3; if (f == 1) { c0[key] = $4; t0[key] = $5 } else { c[key] = $4 - c0[key]; t[key] = $5 - t0[key] } }
    END {
        d = 1000 / steps
        tot = (sum[2, "total"] - sum[1, "total"]) * d; thr = (sum[2, "threaded"] - sum[1, "threaded"]) * d
        one = (sum[2, "unthreaded"] - sum[1, "unthreaded"]) * d
        printf "a step, one thread: %.1f ms CPU; in threaded regions %.1f ms, in one-thread regions %.1f ms, outside regions %.1f ms\n", tot, thr, one, tot - thr - one
        printf "serial (not in threaded regions): %.1f ms, %.1f%% of the step\n", tot - thr, 100 * (tot - thr) / tot
        for (k in t) if (t[k] * d >= 0.5) printf "%9.1f ms %8.1f calls  %s\n", t[k] * d, c[k] / steps, k | "sort -rn"
    }' "$W/3" "$W/9"
