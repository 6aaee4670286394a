#!/bin/sh
# build_matrix.sh: the GPU backend (yolov9_kernels.cu) compiled for every GPU
# it serves, each in the tier the Makefile gives it, with nvcc and, where it
# is installed, hipcc; per target the result, the seconds, nvcc's warnings,
# the kernels and the ones that spill registers, the CUDA headers the build
# reads (the portable core and the tiers below Hopper must not need cuda.h,
# the driver API): a markdown table, then the spilling kernels by name.
# Compiles only: no GPU needed.
#   usage: sh tests/build_matrix.sh [TARGET ...]
#   targets: sm_60 (the core alone: a GPU older than any tier) sm_75 sm_80
#   sm_86 sm_89 sm_90 (Hopper, sm_90a) sm_120 portable (the core alone for
#   sm_90: what TIER=portable builds) hip-gfx90a hip-gfx1100; all by default.
#   JOBS=2 targets at a time (each nvcc one thread, NVCC_JOBS=n splits it).
# Exits 1 when a target that should build does not.
set -u
cd "$(dirname "$0")/.."
TARGETS=${*:-sm_60 sm_75 sm_80 sm_86 sm_89 sm_90 sm_120 portable hip-gfx90a hip-gfx1100}
JOBS=${JOBS:-2}
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
NVCC=${NVCC:-$(command -v nvcc)}
HIPCC=${HIPCC:-$(command -v hipcc)}
echo "build_matrix: $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores"
[ -n "$NVCC" ] && echo "  nvcc: $("$NVCC" --version | tail -1)"
[ -n "$HIPCC" ] && echo "  hipcc: $("$HIPCC" --version 2>/dev/null | grep -m1 -i 'clang version')"

# the make flags of a target (the Makefile's CUDA block decides the tier and the nvcc flags)
make_flags() {
    case $1 in
    portable) echo "CUDA_ARCH=sm_90 TIER=portable";;
    hip-*) echo "HIP=1 HIP_ARCH=${1#hip-}";;
    *) echo "CUDA_ARCH=$1";;
    esac
}
# one target: the object built by the Makefile's own rule, in a copy of the tree
build() {
    t=$1 d=$W/$1
    mkdir -p "$d/tests" && cp Makefile yolov9.h yolov9_kernels.cu "$d/"
    case $t in hip-*) [ -n "$HIPCC" ] || { echo "skipped: no hipcc" > "$d/result"; return; };;
               *) [ -n "$NVCC" ] || { echo "skipped: no nvcc" > "$d/result"; return; }
                  case $t in sm_*) "$NVCC" --list-gpu-code | grep -qx "$t" ||
                      { echo "skipped: this nvcc has no $t (CUDA 13 dropped sm_50 to sm_72)" > "$d/result"; return; };; esac;;
    esac
    s=$(date +%s)
    make -C "$d" -s $(make_flags "$t") NVCC_JOBS="${NVCC_JOBS:-}" tests/yolov9_kernels.o > "$d/make.txt" 2>&1
    rc=$?
    echo "$(( $(date +%s) - s ))" > "$d/seconds"
    if [ $rc = 0 ]; then echo ok > "$d/result"
    elif [ "$t" = hip-gfx1100 ] && grep -q "cannot find ROCm device library for gfx1100" "$d/make.txt"; then
        # the toolchain compiles for gfx1100, but this ROCm's device library (oclc_isa_version_1100.bc)
        # is missing: the device code alone, to assembly, without it
        if "$HIPCC" -x hip -std=c++17 -O3 --offload-arch=gfx1100 -nogpulib --cuda-device-only -S -DYOLO_TIER=0 \
            -o "$d/gfx1100.s" yolov9_kernels.cu >> "$d/make.txt" 2>&1
        then echo "device code only: no gfx1100 device library in this ROCm" > "$d/result"
        else echo FAILED > "$d/result"; fi
    else echo FAILED > "$d/result"; fi
    # the driver API's headers the build reads (nvcc -M, with the tier's flags)
    case $t in hip-*) echo "-" > "$d/headers";;
    *) set -- $(make -s -C "$d" $(make_flags "$t") cuda-flags)
       tier=$1; shift
       (cd "$d" && "$NVCC" -M -DYOLO_TIER=$tier "$@" yolov9_kernels.cu 2>/dev/null) | tr ' \\' '\n\n' |
           grep -o 'cuda\.h$\|cudaTypedefs\.h$' | sort -u | tr '\n' ' ' > "$d/headers";;
    esac
}
n=0
for t in $TARGETS; do
    build "$t" &
    n=$((n + 1))
    [ $((n % JOBS)) = 0 ] && wait
done
wait

bad=0
echo
echo "| target | tier | result | s | warnings | kernels | spilling | driver-API headers |"
echo "|---|---|---|---|---|---|---|---|"
for t in $TARGETS; do
    d=$W/$t
    r=$(cat "$d/result")
    case $r in ok|skipped*|"device code only"*) ;; *) bad=1;; esac
    tier=$(make -s -C "$d" $(make_flags "$t") cuda-flags | cut -d' ' -f1)
    case $t in hip-*) tier=0;; esac
    rep=$d/tests/yolov9_kernels.ptxas.txt
    warn=$(cat "$d/make.txt" "$rep" 2>/dev/null | grep -c -i 'warning')
    kern=$(grep -c 'Compiling entry function' "$rep" 2>/dev/null)
    spill=$(grep -c '[1-9][0-9]* bytes spill' "$rep" 2>/dev/null)
    hdr=$(cat "$d/headers" 2>/dev/null)
    echo "| $t | ${tier:--} | $r | $(cat "$d/seconds" 2>/dev/null || echo -) | $warn | ${kern:--} | ${spill:--} | ${hdr:-none} |"
    if [ "$r" = FAILED ]; then grep -m5 -i 'error' "$d/make.txt" | sed 's/^/    /'; fi
done
# the kernels that spill, by target (ptxas -v: a function's properties, then its spill line)
for t in $TARGETS; do
    rep=$W/$t/tests/yolov9_kernels.ptxas.txt
    [ -f "$rep" ] && awk -v t="$t" '/Function properties for/ { f = $NF } /bytes spill stores/ && $5 + 0 > 0 { print t, f, $5, "bytes" }' "$rep" |
        { command -v c++filt > /dev/null && c++filt || cat; } | sed 's/^/  spills: /'
done
exit $bad
